//! Address mappers: physical address → (channel, rank, bank group, bank, row, column).
//!
//! The [`AddressMapper`] trait is the interface; implementations live one per file and the
//! named mappings are registered in [`REGISTRY`] (name, description, paper key, constructor),
//! which [`make_mapper`] builds from:
//!
//! * [`field_order::FieldOrder`] — plain bit slicing in any field order, named MSB→LSB the way
//!   Ramulator does: `RoBaRaCoCh` (row-bank-rank-column-channel, Ramulator 2's default),
//!   `RoChRaBaCo` (row-channel-rank-bank-column, DRAMsim3's `rochrababgco` for one bank group),
//!   `ChRaBaRoCo`, `RoRaBaChCo`, or any other permutation of `Ro`, `Ch`, `Ra`, `Bg`, `Ba`, `Co`
//!   (long forms such as `row-bank-rank-column-channel` are accepted too);
//! * [`permutation::Permutation`] — `RoBaRaCoCh-xor`: row-bank-rank-column-channel with the bank
//!   index XOR-ed with the low row bits (Zhang et al.'s permutation-based page interleaving),
//!   which spreads row conflicts of strided streams over banks.
//!
//! All mappers drop the transaction-offset bits (6 for 64 B), treat addresses modulo the
//! capacity, and are bijective over `[0, capacity)` at transaction granularity.

pub mod field_order;
pub mod permutation;

use crate::error::DramError;
use crate::spec::Organization;
use apusim_registry::Entry;

/// Where one transaction lives. `bank` is the bank within its bank group; `column` is the
/// burst index within the row (0 .. columns / burst_length).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DecodedAddr {
    pub channel: u32,
    pub rank: u32,
    pub bank_group: u32,
    pub bank: u32,
    pub row: u32,
    pub column: u32,
}

/// Maps physical addresses to DRAM coordinates.
pub trait AddressMapper: Send + Sync + std::fmt::Debug {
    /// Registered name.
    fn name(&self) -> &str;
    /// Decode a byte address.
    fn map(&self, addr: u64) -> DecodedAddr;
    /// Inverse of [`AddressMapper::map`] for in-range coordinates (offset bits zero).
    fn unmap(&self, d: &DecodedAddr) -> u64;
}

/// The constructor of a registered mapping: the name as the user wrote it (it names the
/// field order) and the organization.
pub type BuildMapper = fn(&str, &Organization) -> Result<Box<dyn AddressMapper>, DramError>;

/// Every named mapping; any other field order of `Ro Ch Ra Bg Ba Co` (with an optional `-xor`
/// suffix) is accepted too and built the same way.
pub const REGISTRY: &[Entry<BuildMapper>] = &[
    Entry {
        name: "RoBaRaCoCh",
        description: "row-bank-rank-column-channel: consecutive lines alternate channels, a row's columns stay together",
        paper: "ramulator2 (default address mapping)",
        params: &[],
        build: field_order_mapper,
    },
    Entry {
        name: "RoChRaBaCo",
        description: "row-channel-rank-bank-column: a whole row's columns are consecutive, then banks, ranks, channels",
        paper: "dramsim3 (rochrababgco with one bank group)",
        params: &[],
        build: field_order_mapper,
    },
    Entry {
        name: "ChRaBaRoCo",
        description: "channel-rank-bank-row-column: each channel, rank and bank holds one contiguous range",
        paper: "ramulator2 (field-order address mapping)",
        params: &[],
        build: field_order_mapper,
    },
    Entry {
        name: "RoRaBaChCo",
        description: "row-rank-bank-channel-column: a row's columns are consecutive, then channels, banks, ranks",
        paper: "ramulator2 (field-order address mapping)",
        params: &[],
        build: field_order_mapper,
    },
    Entry {
        name: "RoBaRaCoCh-xor",
        description: "RoBaRaCoCh with the bank index XOR-ed with the low row bits: strided rows spread over banks",
        paper: "permutation-interleaving (the XOR bank permutation)",
        params: &[],
        build: xor_mapper,
    },
];

/// Named mappers, for help texts: the names of [`REGISTRY`].
pub fn mapper_names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.name).collect()
}

/// Plain bit slicing in the field order `name` spells.
fn field_order_mapper(name: &str, org: &Organization) -> Result<Box<dyn AddressMapper>, DramError> {
    let order =
        field_order::parse_order(&name.to_ascii_lowercase()).ok_or_else(|| unknown(name))?;
    Ok(Box::new(field_order::FieldOrder::new(name, &order, org)))
}

/// The permutation-based variant of the field order `name` spells before its `-xor` suffix.
fn xor_mapper(name: &str, org: &Organization) -> Result<Box<dyn AddressMapper>, DramError> {
    let lower = name.to_ascii_lowercase();
    let base = lower
        .strip_suffix("-xor")
        .or_else(|| lower.strip_suffix("_xor"))
        .or_else(|| lower.strip_suffix("-permutation"))
        .ok_or_else(|| unknown(name))?;
    let order = field_order::parse_order(base).ok_or_else(|| unknown(name))?;
    Ok(Box::new(permutation::Permutation::new(name, &order, org)))
}

/// `name` is neither registered nor a field order: the error names the nearest registered
/// mapping.
fn unknown(name: &str) -> DramError {
    let nearest = match apusim_registry::find(REGISTRY, "address mapping", name) {
        Err(apusim_registry::RegistryError::UnknownName { nearest, .. }) => nearest,
        _ => None,
    };
    DramError::UnknownMapping {
        name: name.to_string(),
        nearest,
        known: format!(
            "{} or any order of Ro/Ch/Ra/Bg/Ba/Co",
            mapper_names().join(", ")
        ),
    }
}

/// Build the mapper called `name` for `org` (names are case-insensitive; any field order of
/// `Ro Ch Ra Bg Ba Co` works, with an optional `-xor` suffix for the permutation variant of
/// `RoBaRaCoCh`).
pub fn make_mapper(name: &str, org: &Organization) -> Result<Box<dyn AddressMapper>, DramError> {
    if let Some(e) = REGISTRY.iter().find(|e| e.name.eq_ignore_ascii_case(name)) {
        return (e.build)(name, org);
    }
    let lower = name.to_ascii_lowercase();
    if lower.ends_with("-xor") || lower.ends_with("_xor") || lower.ends_with("-permutation") {
        xor_mapper(name, org)
    } else {
        field_order_mapper(name, org)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::preset;
    use std::collections::HashSet;

    fn check_bijective(name: &str, org: &Organization) {
        let m = make_mapper(name, org).unwrap();
        let tx = org.transaction_bytes();
        let mut seen = HashSet::new();
        // 2^16 consecutive transactions from an arbitrary base, plus a strided sweep.
        let base = 0x1234_5000u64 % org.capacity_bytes();
        let addrs = (0..1u64 << 16)
            .map(|i| (base + i * tx) % org.capacity_bytes())
            .chain((0..4096u64).map(|i| (i * 0x10_0040) % org.capacity_bytes()));
        for a in addrs {
            let a = a / tx * tx;
            let d = m.map(a);
            assert!(d.channel < org.channels, "{name}: channel");
            assert!(d.rank < org.ranks, "{name}: rank");
            assert!(d.bank_group < org.bank_groups, "{name}: bank group");
            assert!(d.bank < org.banks_per_group, "{name}: bank");
            assert!(d.row < org.rows, "{name}: row");
            assert!(d.column < org.bursts_per_row(), "{name}: column");
            assert_eq!(m.unmap(&d), a, "{name}: unmap(map({a:#x}))");
            if !seen.insert((a, d)) {
                continue;
            }
        }
        let decoded: HashSet<_> = seen.iter().map(|(_, d)| *d).collect();
        assert_eq!(
            decoded.len(),
            seen.len(),
            "{name}: two addresses share coordinates"
        );
    }

    #[test]
    fn all_named_mappers_are_bijective() {
        for p in ["reference", "tap", "drp"] {
            let org = preset(p).unwrap().spec.org;
            for name in mapper_names() {
                check_bijective(name, &org);
            }
        }
        // A DDR4-like organization with bank groups.
        let mut org = preset("reference").unwrap().spec.org;
        org.bank_groups = 4;
        org.banks_per_group = 4;
        org.channels = 2;
        for name in mapper_names()
            .into_iter()
            .chain(["RoBgBaRaCoCh", "RoRaBgChBaCo"])
        {
            check_bijective(name, &org);
        }
    }

    #[test]
    fn robaracoch_layout() {
        let org = preset("ddr3-1600-11-2ch").unwrap().spec.org;
        let m = make_mapper("RoBaRaCoCh", &org).unwrap();
        // 64 B offset, then 1 channel bit, 7 column bits, 0 rank bits, 3 bank bits, row.
        assert_eq!(m.map(0x40).channel, 1);
        assert_eq!(m.map(0x80).column, 1);
        let d = m.map(0x80 << 7);
        assert_eq!((d.bank, d.column), (1, 0));
        assert_eq!(m.map(1 << (6 + 1 + 7 + 3)).row, 1);
        let m = make_mapper("row-channel-rank-bank-column", &org).unwrap();
        assert_eq!(m.map(0x40).column, 1);
        assert_eq!(m.map(0x40 << 7).bank, 1);
        assert_eq!(m.map(0x40 << 10).channel, 1);
    }

    #[test]
    fn xor_mapper_spreads_same_bank_rows() {
        let org = preset("reference").unwrap().spec.org;
        let plain = make_mapper("RoBaRaCoCh", &org).unwrap();
        let xor = make_mapper("RoBaRaCoCh-xor", &org).unwrap();
        let row_stride = org.row_bytes() * u64::from(org.banks_per_rank());
        let plain_banks: HashSet<_> = (0..8).map(|i| plain.map(i * row_stride).bank).collect();
        let xor_banks: HashSet<_> = (0..8).map(|i| xor.map(i * row_stride).bank).collect();
        assert_eq!(plain_banks.len(), 1);
        assert_eq!(xor_banks.len(), 8);
    }

    #[test]
    fn unknown_and_malformed_names_fail() {
        let org = preset("reference").unwrap().spec.org;
        for bad in ["", "RoBa", "RoBaRaCoChCh", "RoBaRaCoXx", "foo-xor"] {
            assert!(make_mapper(bad, &org).is_err(), "{bad}");
        }
        let e = make_mapper("RoBaRaCoCj", &org).unwrap_err().to_string();
        assert!(e.contains("did you mean `RoBaRaCoCh`"), "{e}");
        let e = make_mapper("RoBaRaCoCh-xr", &org).unwrap_err().to_string();
        assert!(e.contains("did you mean `RoBaRaCoCh-xor`"), "{e}");
    }
}
