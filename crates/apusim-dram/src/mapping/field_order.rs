//! Plain bit-slicing mapper: the address (above the transaction offset) is cut into fields in a
//! fixed order. Names list fields from the most to the least significant, as Ramulator does:
//! `RoBaRaCoCh` puts the channel right above the 64 B offset, then column, rank, bank, row.

use super::{AddressMapper, DecodedAddr};
use crate::spec::Organization;

/// One address field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Row,
    Channel,
    Rank,
    BankGroup,
    /// The bank; when the order has no separate `Bg` field it carries the bank group too
    /// (bank group in the low bits, so consecutive banks alternate groups).
    Bank,
    Column,
}

/// Parse an order such as `robaracoch` or `row-bank-rank-column-channel` (lower case) into
/// fields, most significant first. Every one of Ro, Ch, Ra, Ba, Co must appear exactly once;
/// Bg at most once.
pub fn parse_order(name: &str) -> Option<Vec<Field>> {
    let s: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .replace("bankgroup", "bg")
        .replace("channel", "ch")
        .replace("column", "co")
        .replace("rank", "ra")
        .replace("bank", "ba")
        .replace("row", "ro");
    if !s.len().is_multiple_of(2) || s.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for i in (0..s.len()).step_by(2) {
        let f = match &s[i..i + 2] {
            "ro" => Field::Row,
            "ch" => Field::Channel,
            "ra" => Field::Rank,
            "bg" => Field::BankGroup,
            "ba" => Field::Bank,
            "co" => Field::Column,
            _ => return None,
        };
        if out.contains(&f) {
            return None;
        }
        out.push(f);
    }
    let required = [
        Field::Row,
        Field::Channel,
        Field::Rank,
        Field::Bank,
        Field::Column,
    ];
    if required.iter().all(|f| out.contains(f)) {
        Some(out)
    } else {
        None
    }
}

/// Bit-slicing mapper over a field order.
#[derive(Clone, Debug)]
pub struct FieldOrder {
    name: String,
    /// (field, bits), least significant first.
    fields: Vec<(Field, u32)>,
    offset_bits: u32,
    /// Bits of the bank group inside a combined bank field (0 when `Bg` is separate).
    bg_bits_in_bank: u32,
    /// (shift, mask) of row, channel, rank, bank group, bank, column in the address: the
    /// decode is six independent shift-and-masks.
    slices: [(u32, u64); 6],
}

fn log2(v: u32) -> u32 {
    v.trailing_zeros()
}

impl FieldOrder {
    /// `order` is most significant first (as parsed by [`parse_order`]).
    pub fn new(name: &str, order: &[Field], org: &Organization) -> Self {
        let separate_bg = order.contains(&Field::BankGroup);
        let bg_bits = log2(org.bank_groups);
        let fields = order
            .iter()
            .rev()
            .map(|&f| {
                let bits = match f {
                    Field::Row => log2(org.rows),
                    Field::Channel => log2(org.channels),
                    Field::Rank => log2(org.ranks),
                    Field::BankGroup => bg_bits,
                    Field::Bank => {
                        log2(org.banks_per_group) + if separate_bg { 0 } else { bg_bits }
                    }
                    Field::Column => log2(org.bursts_per_row()),
                };
                (f, bits)
            })
            .collect();
        let offset_bits = log2(org.transaction_bytes() as u32);
        let mut slices = [(0u32, 0u64); 6];
        let mut shift = offset_bits;
        for &(f, bits) in &fields {
            let slot = match f {
                Field::Row => 0,
                Field::Channel => 1,
                Field::Rank => 2,
                Field::BankGroup => 3,
                Field::Bank => 4,
                Field::Column => 5,
            };
            slices[slot] = (shift, (1u64 << bits) - 1);
            shift += bits;
        }
        FieldOrder {
            name: name.to_string(),
            fields,
            offset_bits,
            bg_bits_in_bank: if separate_bg { 0 } else { bg_bits },
            slices,
        }
    }
}

impl AddressMapper for FieldOrder {
    fn name(&self) -> &str {
        &self.name
    }

    #[inline]
    fn map(&self, addr: u64) -> DecodedAddr {
        let get = |i: usize| {
            let (shift, mask) = self.slices[i];
            ((addr >> shift) & mask) as u32
        };
        let bank = get(4);
        let (bank_group, bank) = if self.bg_bits_in_bank > 0 {
            (
                bank & ((1 << self.bg_bits_in_bank) - 1),
                bank >> self.bg_bits_in_bank,
            )
        } else {
            (get(3), bank)
        };
        DecodedAddr {
            channel: get(1),
            rank: get(2),
            bank_group,
            bank,
            row: get(0),
            column: get(5),
        }
    }

    fn unmap(&self, d: &DecodedAddr) -> u64 {
        let mut a = 0u64;
        let mut shift = 0;
        for &(f, bits) in &self.fields {
            let v = u64::from(match f {
                Field::Row => d.row,
                Field::Channel => d.channel,
                Field::Rank => d.rank,
                Field::BankGroup => d.bank_group,
                Field::Bank if self.bg_bits_in_bank > 0 => {
                    (d.bank << self.bg_bits_in_bank) | d.bank_group
                }
                Field::Bank => d.bank,
                Field::Column => d.column,
            });
            a |= (v & ((1u64 << bits) - 1)) << shift;
            shift += bits;
        }
        a << self.offset_bits
    }
}
