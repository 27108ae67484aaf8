//! The signature-based hit predictor (SHiP) engine shared by `ship-pc`, `ship-mem` and
//! `ship-hybrid`, exactly as drp-reuse-probability-shared-llc.txt §4.1 ("SHiP-mem",
//! "SHiP-hybrid") defines it, after Wu et al. (MICRO 2011). The three policies differ only in
//! the signature of an access ([`Signature`]); see [`super::ship_pc`], [`super::ship_mem`] and
//! [`super::ship_hybrid`].
//!
//! - One table T of 16K 3-bit saturating counters, indexed by a 14-bit signature.
//! - Each line stores the signature of the access that filled it and a reuse bit.
//! - Hit: the line's signature counter increments (saturating at 7), the reuse bit is set and
//!   the RRPV becomes 0.
//! - Eviction of a line without reuse: its signature counter decrements (saturating at 0).
//! - Fill: RRPV 3 if the filling access's signature counter is 0, else RRPV 2.
//! - Victim: SRRIP's (lowest way with RRPV 3, aging the set until there is one).
//!
//! Choices the paper leaves open: the counters start at 1 (parameter `ship_init`, 0..=7),
//! so a cold table inserts like SRRIP until a signature proves dead; the signature is taken
//! at fill time from the filling access (allocated write misses included) and kept for the
//! line's lifetime; back-invalidated lines (which the engine does not report) train nothing.
//!
//! # Per-bank tables (gspc-graphics-stream-llc.txt §5.1)
//!
//! gspc §5.1 evaluates SHiP-mem with "a 16K-entry table (per LLC bank)": with `BANKED = true`
//! the engine keeps one table T per LLC bank (`ctx.banks` of them), and every access, hit and
//! eviction in a set trains and reads only the table of that set's bank. The bank of a set is
//! `set % banks`, the rule the gspc policies use ([`super::gspc`]); the paper does not say how
//! sets map to banks. `BANKED = false` (the default) is drp §4.1's single table T, and with
//! one bank the two are identical.

use super::util::{sat_dec, sat_inc, RrpvTable, RRPV_LONG, RRPV_MAX};
use crate::params::{ParamKind, ParamList, ParamSpec};
use crate::{CacheError, Evicted, Policy, PolicyContext, PolicyStat, SetView};
use apusim_trace::Access;
use std::marker::PhantomData;

/// Number of counters in the table T (16K).
pub const TABLE_ENTRIES: usize = 1 << 14;
/// Mask of a 14-bit signature.
pub const SIG_MASK: u64 = (TABLE_ENTRIES - 1) as u64;
/// Largest value of a 3-bit counter.
pub const COUNTER_MAX: u8 = 7;

/// The initial value of every signature counter: 1, so a cold table inserts like SRRIP until a
/// signature proves dead (an apusim choice; drp §4.1 leaves it open).
pub const SHIP_INIT: ParamSpec = ParamSpec {
    name: "ship_init",
    kind: ParamKind::Int {
        min: 0,
        max: COUNTER_MAX as u64,
    },
    default: "1",
    unit: "",
    doc: "initial value of the 3-bit signature counters (1: a cold table inserts like SRRIP)",
};

/// How a SHiP variant signs an access.
pub trait Signature: 'static {
    /// The 14-bit signature of `req` (`n_cpus` is the system's core count, for hashing agents).
    fn signature(req: &Access, n_cpus: usize) -> u16;
}

/// SHiP-mem's signature: address bits \[27:14\], the 16 KB region identifier.
#[inline]
pub fn mem_signature(addr: u64) -> u16 {
    ((addr >> 14) & SIG_MASK) as u16
}

/// SHiP-PC's signature: the lower 14 bits of the PC XORed with the bit-reversed core id
/// (core-id bit `i` flips signature bit `13 - i`), so the same PC on different cores lands
/// on different counters while core 0 sees the plain PC bits.
#[inline]
pub fn pc_signature(pc: u64, core: usize) -> u16 {
    ((pc ^ ((core as u64).reverse_bits() >> 50)) & SIG_MASK) as u16
}

/// Bit of a line's stored signature word that holds its reuse bit (signatures use 14 bits).
const REUSED: u16 = 1 << 15;

/// The SHiP engine for signature kind `S`; `BANKED` keeps one table per LLC bank.
pub struct Ship<S, const BANKED: bool = false> {
    ways: usize,
    n_cpus: usize,
    /// LLC banks, each with its own table when `BANKED` (1 otherwise).
    banks: usize,
    rrpv: RrpvTable,
    /// Per line: the fill signature in bits 13:0, the reuse bit in bit 15 (one array, so a
    /// hit or an eviction touches one word).
    sig: Vec<u16>,
    /// `banks` tables of [`TABLE_ENTRIES`] counters, bank-major.
    table: Vec<u8>,
    _kind: PhantomData<fn() -> S>,
}

impl<S: Signature, const BANKED: bool> Ship<S, BANKED> {
    /// RRPV of a line (0 near .. 3 distant).
    pub fn rrpv(&self, set: usize, way: usize) -> u8 {
        self.rrpv.get(set, way)
    }
    /// Signature stored with a line.
    pub fn signature(&self, set: usize, way: usize) -> u16 {
        self.sig[set * self.ways + way] & SIG_MASK as u16
    }
    /// Reuse bit of a line.
    pub fn reused(&self, set: usize, way: usize) -> bool {
        self.sig[set * self.ways + way] & REUSED != 0
    }
    /// Counter of signature `sig` in the table T (bank 0's table when banked).
    pub fn counter(&self, sig: u16) -> u8 {
        self.bank_counter(0, sig)
    }
    /// Counter of signature `sig` in the table of LLC bank `bank`.
    pub fn bank_counter(&self, bank: usize, sig: u16) -> u8 {
        self.table[bank * TABLE_ENTRIES + (sig as usize & (TABLE_ENTRIES - 1))]
    }
    /// Number of tables: the LLC's banks when banked, else 1.
    pub fn tables(&self) -> usize {
        self.banks
    }
    /// Index in `table` of signature `sig` (14 bits) for an access to `set`.
    #[inline]
    fn slot(&self, set: usize, sig: u16) -> usize {
        let base = if BANKED {
            (set % self.banks) * TABLE_ENTRIES
        } else {
            0
        };
        base + sig as usize
    }
    /// The signature this policy gives `req`.
    pub fn sign(&self, req: &Access) -> u16 {
        S::signature(req, self.n_cpus) & SIG_MASK as u16
    }
}

impl<S: Signature, const BANKED: bool> Policy for Ship<S, BANKED> {
    #[inline]
    fn prefetch_set(&self, set: usize) {
        self.rrpv.prefetch(set);
    }
    fn params(list: &mut ParamList) {
        list.add(&[SHIP_INIT]);
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        let init = ctx.int(&SHIP_INIT)? as u8;
        let banks = if BANKED { ctx.banks } else { 1 };
        if banks == 0 {
            return Err(CacheError::Config(
                "ship-mem-bank: the LLC needs at least one bank".into(),
            ));
        }
        let n = ctx.sets * ctx.ways;
        Ok(Ship {
            ways: ctx.ways,
            n_cpus: ctx.n_cpus,
            banks,
            rrpv: RrpvTable::new(ctx),
            sig: vec![0; n],
            table: vec![init; TABLE_ENTRIES * banks],
            _kind: PhantomData,
        })
    }
    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, _req: &Access) {
        let i = set * self.ways + way;
        let s = self.sig[i];
        self.sig[i] = s | REUSED;
        self.rrpv.set(set, way, 0);
        let t = self.slot(set, s & !REUSED);
        sat_inc(&mut self.table[t], COUNTER_MAX);
    }
    #[inline]
    fn victim(&mut self, set: usize, _req: &Access, view: &SetView<'_>) -> usize {
        self.rrpv.victim_hinted(set, view)
    }
    #[inline]
    fn on_evict(&mut self, set: usize, way: usize, _victim: &Evicted) {
        let s = self.sig[set * self.ways + way];
        if s & REUSED == 0 {
            let t = self.slot(set, s);
            sat_dec(&mut self.table[t]);
        }
    }
    #[inline]
    fn on_fill(&mut self, set: usize, way: usize, req: &Access) {
        let i = set * self.ways + way;
        let s = self.sign(req);
        self.sig[i] = s;
        let rrpv = if self.table[self.slot(set, s)] == 0 {
            RRPV_MAX
        } else {
            RRPV_LONG
        };
        self.rrpv.set(set, way, rrpv);
    }
    fn stats(&self) -> Vec<PolicyStat> {
        let zeros = self.table.iter().filter(|&&c| c == 0).count();
        let sum: u64 = self.table.iter().map(|&c| c as u64).sum();
        vec![
            ("table_zero_counters".into(), zeros as f64),
            (
                "table_mean_counter".into(),
                sum as f64 / self.table.len() as f64,
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_take_the_documented_bits() {
        assert_eq!(mem_signature(0), 0);
        assert_eq!(mem_signature(0x3FFF), 0, "bits below 14 ignored");
        assert_eq!(mem_signature(1 << 14), 1);
        assert_eq!(mem_signature(0x0FFF_C000), 0x3FFF, "bits 27:14");
        assert_eq!(mem_signature(1 << 28), 0, "bit 28 ignored");
        assert_eq!(pc_signature(0x40_1234, 0), 0x1234);
        assert_eq!(pc_signature(0x1234, 1), 0x1234 ^ 0x2000);
        assert_eq!(pc_signature(0x1234, 2), 0x1234 ^ 0x1000);
        assert_eq!(pc_signature(0x1234, 3), 0x1234 ^ 0x3000);
        assert_eq!(pc_signature(0, 128), 1 << 6);
        let sigs: std::collections::BTreeSet<u16> =
            (0..16).map(|c| pc_signature(0x77, c)).collect();
        assert_eq!(sigs.len(), 16, "16 cores, 16 signatures for one PC");
    }
}
