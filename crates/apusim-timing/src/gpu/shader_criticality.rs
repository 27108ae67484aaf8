//! Critical-access identification for GPGPU workloads (gpu-access-criticality §4.1.2), the
//! hardware of the `simt` model's `criticality` switch.
//!
//! A two-level algorithm runs every `crit_period` GPU cycles:
//!
//! 1. **Bottlenecked cores.** Each shader core has two `w`-bit up/down saturating counters
//!    starting at `2^(w-1)` ([`SatCounter`]): `InputStall` counts up in a cycle whose front end
//!    dispatched no warp because of pending source operands, else down; `OutputStall` counts
//!    up in a cycle whose back end committed no instruction, else down. A core is
//!    bottlenecked when both are above `2^(w-1)` at the evaluation.
//! 2. **Critical PCs.** Each core has a fully associative LRU stall table ([`StallTable`],
//!    §3): a load that missed the core's private cache and held a dependent instruction at
//!    dispatch is inserted (or touched) and accumulates the stall cycles it caused. At the
//!    evaluation the top PCs covering `crit_cover` of the table's stall cycles form the core's
//!    critical set ([`cover_threshold`]).
//!
//! A transaction is then marked ([`Mark`]): from a bottlenecked core, critical if its PC is in
//! the core's critical set, or if its PC is not in the stall table and the GPU's LLC miss rate
//! over the last period is at most `llc_miss_limit`; every other GPU transaction is
//! non-critical, and a non-critical shader access that misses the LLC bypasses it.

use serde::{Deserialize, Serialize};

/// Fractions are compared exactly, in parts per million.
const PPM: u64 = 1_000_000;

/// A fraction in `[0, 1]` as parts per million.
pub fn ppm(fraction: f64) -> u64 {
    (fraction.clamp(0.0, 1.0) * PPM as f64).round() as u64
}

/// A `w`-bit up/down saturating counter initialised to its mid-point `2^(w-1)`
/// (gpu-access-criticality §4.1.2's `InputStall` and `OutputStall`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SatCounter {
    value: u32,
    max: u32,
}

impl SatCounter {
    /// A counter of `bits` bits (1 to 31) at its mid-point.
    pub fn new(bits: u32) -> SatCounter {
        assert!(
            (1..=31).contains(&bits),
            "counter width {bits} out of 1..=31"
        );
        SatCounter {
            value: 1 << (bits - 1),
            max: (1 << bits) - 1,
        }
    }
    /// `2^(w-1)`.
    pub fn mid(&self) -> u32 {
        (self.max >> 1) + 1
    }
    pub fn value(&self) -> u32 {
        self.value
    }
    /// One cycle's move: up, or down, saturating at `0` and `2^w - 1`.
    pub fn step(&mut self, up: bool) {
        self.bulk(up, 1);
    }
    /// `n` cycles' moves in one direction (cycles the model skipped): a clamp.
    pub fn bulk(&mut self, up: bool, n: u64) {
        self.value = if up {
            u64::from(self.value)
                .saturating_add(n)
                .min(u64::from(self.max)) as u32
        } else {
            u64::from(self.value).saturating_sub(n) as u32
        };
    }
    /// Above its mid-point (the §4.1.2 test).
    pub fn above_mid(&self) -> bool {
        self.value > self.mid()
    }
}

/// A fully associative stall table with LRU replacement (gpu-access-criticality §3, §5.1):
/// per entry a load's PC and the stall cycles it caused, saturating at 32 bits.
#[derive(Clone, Debug)]
pub struct StallTable {
    /// (PC, stall cycles), most recently used first.
    entries: Vec<(u64, u32)>,
    capacity: usize,
}

impl StallTable {
    pub fn new(capacity: usize) -> StallTable {
        StallTable {
            entries: Vec::with_capacity(capacity),
            capacity: capacity.max(1),
        }
    }

    /// The load at `pc` held a dependent instruction for `cycles`: insert it (replacing the
    /// least recently used entry of a full table) or touch it, and add the cycles.
    pub fn add(&mut self, pc: u64, cycles: u64) {
        let mut e = match self.entries.iter().position(|e| e.0 == pc) {
            Some(i) => self.entries.remove(i),
            None => {
                if self.entries.len() == self.capacity {
                    self.entries.pop();
                }
                (pc, 0)
            }
        };
        e.1 = u64::from(e.1)
            .saturating_add(cycles)
            .min(u64::from(u32::MAX)) as u32;
        self.entries.insert(0, e);
    }

    pub fn contains(&self, pc: u64) -> bool {
        self.entries.iter().any(|e| e.0 == pc)
    }

    /// The stall cycles of `pc`'s entry.
    pub fn stalls(&self, pc: u64) -> Option<u32> {
        self.entries.iter().find(|e| e.0 == pc).map(|e| e.1)
    }

    /// (PC, stall cycles), most recently used first.
    pub fn entries(&self) -> &[(u64, u32)] {
        &self.entries
    }

    /// The critical PCs: every entry with at least [`cover_threshold`]'s stall cycles, sorted.
    pub fn critical_set(&self, cover_ppm: u64) -> Vec<u64> {
        let counts: Vec<u32> = self.entries.iter().map(|e| e.1).collect();
        let mut set: Vec<u64> = match cover_threshold(&counts, cover_ppm) {
            Some(t) => self
                .entries
                .iter()
                .filter(|e| e.1 >= t)
                .map(|e| e.0)
                .collect(),
            None => Vec::new(),
        };
        set.sort_unstable();
        set
    }

    /// Age every entry's stall cycles: shift them right by `shift` (32 or more clears them).
    pub fn decay(&mut self, shift: u32) {
        for e in &mut self.entries {
            e.1 = e.1.checked_shr(shift).unwrap_or(0);
        }
    }
}

/// "The top few PC's covering up to 90% of the total stall cycles" (gpu-access-criticality
/// §4.1.2): sorted by stall cycles, largest first, the smallest prefix whose sum reaches at
/// least `cover_ppm` of the total; returns the stall cycles of its last entry. Every entry
/// with at least that many is critical, so PCs tied with the last one are all in (the set
/// does not depend on how ties are ordered). `None` when the table holds no stall cycles.
pub fn cover_threshold(counts: &[u32], cover_ppm: u64) -> Option<u32> {
    let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
    if total == 0 {
        return None;
    }
    let mut sorted = counts.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let need = u128::from(cover_ppm.min(PPM)) * u128::from(total);
    let mut sum = 0u64;
    for c in sorted {
        sum += u64::from(c);
        if u128::from(sum) * u128::from(PPM) >= need {
            return Some(c);
        }
    }
    unreachable!("the whole table covers any fraction up to one")
}

/// How a transaction was marked (gpu-access-criticality §4.1.2's rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// Critical: a bottlenecked core, a PC in its critical set.
    InSet,
    /// Critical: a bottlenecked core, a PC not in its stall table, the GPU's LLC miss rate
    /// at most the limit.
    Untracked,
    /// Non-critical: the core is not bottlenecked.
    NotBottlenecked,
    /// Non-critical: a bottlenecked core, a PC in its stall table but not critical.
    InTable,
    /// Non-critical: a bottlenecked core, a PC not in its stall table, the GPU's LLC miss rate
    /// above the limit.
    HighMissRate,
}

impl Mark {
    /// The rule: `bottlenecked` core, PC `in_set` of its critical PCs, PC `in_table`, and
    /// whether the GPU's LLC miss rate is at most the limit.
    pub fn of(bottlenecked: bool, in_set: bool, in_table: bool, miss_rate_ok: bool) -> Mark {
        if !bottlenecked {
            Mark::NotBottlenecked
        } else if in_set {
            Mark::InSet
        } else if in_table {
            Mark::InTable
        } else if miss_rate_ok {
            Mark::Untracked
        } else {
            Mark::HighMissRate
        }
    }
    pub fn critical(self) -> bool {
        matches!(self, Mark::InSet | Mark::Untracked)
    }
}

/// The algorithm's settings (the `simt` model's parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CritParams {
    /// Width `w` of `InputStall` and `OutputStall`.
    pub counter_bits: u32,
    /// Stall table entries per core.
    pub entries: usize,
    /// The critical PCs' share of the stall cycles, and the GPU's LLC miss-rate limit, in
    /// parts per million.
    pub cover_ppm: u64,
    pub miss_limit_ppm: u64,
    /// GPU cycles between evaluations.
    pub period: u64,
    /// Right shift applied to every stall-table count after each evaluation.
    pub decay: u32,
}

/// A critical PC at the last evaluation, over the cores whose critical set holds it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CriticalPc {
    pub pc: u64,
    /// Cores whose critical set holds it, and of those the bottlenecked ones.
    pub cores: u32,
    pub bottlenecked_cores: u32,
    /// Its stall cycles in those cores' tables, summed.
    pub stall_cycles: u64,
}

/// Counters of the criticality hardware (monotonic, but `llc_miss_rate` and `critical_pcs`,
/// which are those of the last evaluation).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CriticalityStats {
    /// GPU cycles between evaluations, and evaluations run.
    pub period: u64,
    pub evaluations: u64,
    /// Shader cores found bottlenecked, summed over evaluations.
    pub bottlenecked_core_periods: u64,
    /// Transactions that missed their core's private cache (went on towards the LLC), by the
    /// rule that marked them: critical ones ...
    pub critical_in_set: u64,
    pub critical_untracked: u64,
    /// ... and non-critical ones.
    pub non_critical_not_bottlenecked: u64,
    pub non_critical_in_table: u64,
    pub non_critical_miss_rate: u64,
    /// The GPU's LLC miss rate over the last period in which the GPU accessed the LLC.
    pub llc_miss_rate: f64,
    /// The critical PCs of every core's stall table at the last evaluation, by stall cycles.
    pub critical_pcs: Vec<CriticalPc>,
}

impl CriticalityStats {
    pub fn critical(&self) -> u64 {
        self.critical_in_set + self.critical_untracked
    }
    pub fn non_critical(&self) -> u64 {
        self.non_critical_not_bottlenecked
            + self.non_critical_in_table
            + self.non_critical_miss_rate
    }
    /// Count a transaction marked `m`.
    pub fn count(&mut self, m: Mark) {
        *match m {
            Mark::InSet => &mut self.critical_in_set,
            Mark::Untracked => &mut self.critical_untracked,
            Mark::NotBottlenecked => &mut self.non_critical_not_bottlenecked,
            Mark::InTable => &mut self.non_critical_in_table,
            Mark::HighMissRate => &mut self.non_critical_miss_rate,
        } += 1;
    }
}

/// One shader core's criticality hardware.
#[derive(Clone, Debug)]
struct Core {
    input: SatCounter,
    output: SatCounter,
    table: StallTable,
    bottlenecked: bool,
    /// The critical PCs at the last evaluation, sorted.
    critical: Vec<u64>,
}

/// The criticality hardware of a GPU's shader cores.
#[derive(Clone, Debug)]
pub struct Criticality {
    p: CritParams,
    cores: Vec<Core>,
    next_eval: u64,
    /// The GPU's LLC demand accesses and misses: the last cumulative counts fed, and those
    /// at the last evaluation.
    fed: (u64, u64),
    at_eval: (u64, u64),
    /// Misses and accesses of the last period in which the GPU accessed the LLC.
    rate: (u64, u64),
    stats: CriticalityStats,
}

impl Criticality {
    pub fn new(p: CritParams, cores: usize) -> Criticality {
        let core = Core {
            input: SatCounter::new(p.counter_bits),
            output: SatCounter::new(p.counter_bits),
            table: StallTable::new(p.entries),
            bottlenecked: false,
            critical: Vec::new(),
        };
        Criticality {
            cores: vec![core; cores],
            next_eval: p.period,
            fed: (0, 0),
            at_eval: (0, 0),
            rate: (0, 0),
            stats: CriticalityStats {
                period: p.period,
                ..CriticalityStats::default()
            },
            p,
        }
    }

    /// `cycles` cycles of core `core`: its front end dispatched nothing for pending operands
    /// in them (`input_stall`) or not, its back end committed nothing (`output_stall`) or not.
    pub fn account(&mut self, core: usize, input_stall: bool, output_stall: bool, cycles: u64) {
        let c = &mut self.cores[core];
        c.input.bulk(input_stall, cycles);
        c.output.bulk(output_stall, cycles);
    }

    /// A load at `pc` that missed core `core`'s private cache held a dependent instruction at
    /// dispatch for `cycles`.
    pub fn stall(&mut self, core: usize, pc: u64, cycles: u64) {
        self.cores[core].table.add(pc, cycles);
    }

    /// The GPU's LLC demand accesses and misses so far.
    pub fn feedback(&mut self, accesses: u64, misses: u64) {
        self.fed = (accesses, misses);
    }

    /// Whether the evaluation of GPU cycle `cycle`'s period is due.
    pub fn due(&self, cycle: u64) -> bool {
        cycle >= self.next_eval
    }

    /// The periodic evaluation at GPU cycle `cycle` (the caller has accounted every core's
    /// cycles before it): classify the cores, take each stall table's critical PCs and age
    /// the tables, take the GPU's LLC miss rate over the period.
    pub fn evaluate(&mut self, cycle: u64) {
        let cover = self.p.cover_ppm;
        for c in &mut self.cores {
            c.bottlenecked = c.input.above_mid() && c.output.above_mid();
            self.stats.bottlenecked_core_periods += u64::from(c.bottlenecked);
            c.critical = c.table.critical_set(cover);
        }
        self.stats.critical_pcs = self.critical_pcs();
        for c in &mut self.cores {
            c.table.decay(self.p.decay);
        }
        let accesses = self.fed.0.saturating_sub(self.at_eval.0);
        let misses = self.fed.1.saturating_sub(self.at_eval.1);
        if accesses > 0 {
            self.rate = (misses, accesses);
            self.stats.llc_miss_rate = misses as f64 / accesses as f64;
        }
        self.at_eval = self.fed;
        self.stats.evaluations += 1;
        self.next_eval = (cycle / self.p.period + 1) * self.p.period;
    }

    /// Whether the GPU's LLC miss rate is at most the limit (no LLC access yet: it is).
    fn miss_rate_ok(&self) -> bool {
        let (misses, accesses) = self.rate;
        u128::from(misses) * u128::from(PPM)
            <= u128::from(self.p.miss_limit_ppm) * u128::from(accesses)
    }

    /// How a transaction of the instruction at `pc` from core `core` is marked now.
    pub fn mark(&self, core: usize, pc: u64) -> Mark {
        let c = &self.cores[core];
        if !c.bottlenecked {
            return Mark::NotBottlenecked;
        }
        Mark::of(
            true,
            c.critical.binary_search(&pc).is_ok(),
            c.table.contains(pc),
            self.miss_rate_ok(),
        )
    }

    /// Count a transaction marked `m` that missed its core's private cache.
    pub fn count(&mut self, m: Mark) {
        self.stats.count(m);
    }

    pub fn stats(&self) -> &CriticalityStats {
        &self.stats
    }

    /// Core `core`'s counters (`InputStall`, `OutputStall`) and classification.
    pub fn core_state(&self, core: usize) -> (SatCounter, SatCounter, bool) {
        let c = &self.cores[core];
        (c.input, c.output, c.bottlenecked)
    }

    /// Core `core`'s stall table.
    pub fn table(&self, core: usize) -> &StallTable {
        &self.cores[core].table
    }

    /// Every core's critical PCs now, by stall cycles (largest first), then PC.
    fn critical_pcs(&self) -> Vec<CriticalPc> {
        let mut v: Vec<CriticalPc> = Vec::new();
        for c in &self.cores {
            for &pc in &c.critical {
                let i = match v.iter().position(|x| x.pc == pc) {
                    Some(i) => i,
                    None => {
                        v.push(CriticalPc {
                            pc,
                            ..CriticalPc::default()
                        });
                        v.len() - 1
                    }
                };
                let x = &mut v[i];
                x.cores += 1;
                x.bottlenecked_cores += u32::from(c.bottlenecked);
                x.stall_cycles += u64::from(c.table.stalls(pc).unwrap_or(0));
            }
        }
        v.sort_unstable_by(|a, b| b.stall_cycles.cmp(&a.stall_cycles).then(a.pc.cmp(&b.pc)));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bulk_move_equals_repeated_steps_and_clamps() {
        let mut a = SatCounter::new(8);
        assert_eq!((a.value(), a.mid()), (128, 128));
        assert!(!a.above_mid());
        a.step(true);
        assert!(a.above_mid());
        // Bulk and step agree for every run length, up and down, across both clamps.
        for (up, n) in [
            (true, 5),
            (true, 300),
            (false, 3),
            (false, 1000),
            (true, 129),
        ] {
            let mut b = a;
            let mut c = a;
            b.bulk(up, n);
            for _ in 0..n {
                c.step(up);
            }
            assert_eq!(b, c, "{up} {n}");
            a = b;
        }
        // 300 up from 129 clamps at 255, 1000 down at 0, 129 up from 0 is 129.
        assert_eq!(a.value(), 129);
        let mut top = SatCounter::new(8);
        top.bulk(true, u64::MAX);
        assert_eq!(top.value(), 255);
        top.step(true);
        assert_eq!(top.value(), 255);
        top.bulk(false, u64::MAX);
        assert_eq!(top.value(), 0);
        top.step(false);
        assert_eq!(top.value(), 0);
        // Width 3: mid-point 4, top 7.
        let mut w3 = SatCounter::new(3);
        w3.bulk(true, 10);
        assert_eq!((w3.value(), w3.mid()), (7, 4));
    }

    #[test]
    fn the_stall_table_replaces_its_least_recently_used_entry() {
        let mut t = StallTable::new(16);
        for pc in 0..16u64 {
            t.add(pc, 10 + pc);
        }
        assert_eq!(t.entries().len(), 16);
        // Touch PC 0, the oldest: PC 1 becomes the least recently used.
        t.add(0, 5);
        assert_eq!(t.stalls(0), Some(15));
        // A 17th PC replaces PC 1, not PC 0.
        t.add(100, 7);
        assert_eq!(t.entries().len(), 16);
        assert!(!t.contains(1));
        assert!(t.contains(0) && t.contains(100) && t.contains(2));
        assert_eq!(t.entries()[0], (100, 7));
        assert_eq!(t.entries()[1], (0, 15));
        // A replaced PC comes back with only its new stall cycles.
        t.add(1, 3);
        assert_eq!(t.stalls(1), Some(3));
        assert!(!t.contains(2));
        // Accumulation saturates at 32 bits.
        t.add(9, u64::MAX);
        assert_eq!(t.stalls(9), Some(u32::MAX));
        t.decay(1);
        assert_eq!(t.stalls(9), Some(u32::MAX >> 1));
        assert_eq!(t.stalls(1), Some(1));
        t.decay(32);
        assert!(t.entries().iter().all(|e| e.1 == 0));
        assert_eq!(t.critical_set(ppm(0.9)), Vec::<u64>::new());
    }

    #[test]
    fn the_top_pcs_cover_ninety_percent_with_ties_and_the_boundary() {
        let c90 = ppm(0.9);
        assert_eq!(c90, 900_000);
        // Exactly 90% at two entries: the boundary counts as covered.
        assert_eq!(cover_threshold(&[40, 50, 10], c90), Some(40));
        // 89% at two entries: the third is needed.
        assert_eq!(cover_threshold(&[50, 39, 11], c90), Some(11));
        // One PC over 90% alone.
        assert_eq!(cover_threshold(&[95, 3, 2], c90), Some(95));
        // Ties at the boundary all come in: 40+30+10 = 80% < 90%, the next 10 reaches 90%,
        // and the third 10 is tied with it.
        assert_eq!(cover_threshold(&[10, 40, 10, 30, 10], c90), Some(10));
        // Nothing stalled: no critical PC; zero entries never critical.
        assert_eq!(cover_threshold(&[0, 0], c90), None);
        assert_eq!(cover_threshold(&[], c90), None);
        assert_eq!(cover_threshold(&[100, 0, 0], c90), Some(100));
        // Cover 0: the top PC(s); cover 1: every PC that stalled.
        assert_eq!(cover_threshold(&[5, 9, 9], 0), Some(9));
        assert_eq!(cover_threshold(&[5, 9, 1, 0], PPM), Some(1));

        let mut t = StallTable::new(16);
        for (pc, s) in [
            (0xa, 10),
            (0xb, 40),
            (0xc, 10),
            (0xd, 30),
            (0xe, 10),
            (0xf, 0),
        ] {
            t.add(pc, s);
        }
        assert_eq!(t.critical_set(c90), vec![0xa, 0xb, 0xc, 0xd, 0xe]);
        let mut t = StallTable::new(16);
        for (pc, s) in [(1, 50), (2, 40), (3, 10)] {
            t.add(pc, s);
        }
        assert_eq!(t.critical_set(c90), vec![1, 2]);
        t.add(3, 1);
        // 50+40 = 89.1% of 101: PC 3 is needed now.
        assert_eq!(t.critical_set(c90), vec![1, 2, 3]);
    }

    #[test]
    fn every_marking_rule() {
        assert_eq!(Mark::of(false, true, true, true), Mark::NotBottlenecked);
        assert_eq!(Mark::of(true, true, true, false), Mark::InSet);
        assert_eq!(Mark::of(true, false, true, true), Mark::InTable);
        assert_eq!(Mark::of(true, false, false, true), Mark::Untracked);
        assert_eq!(Mark::of(true, false, false, false), Mark::HighMissRate);
        let crit: Vec<bool> = [
            Mark::InSet,
            Mark::Untracked,
            Mark::NotBottlenecked,
            Mark::InTable,
            Mark::HighMissRate,
        ]
        .iter()
        .map(|m| m.critical())
        .collect();
        assert_eq!(crit, [true, true, false, false, false]);
    }

    fn params() -> CritParams {
        CritParams {
            counter_bits: 8,
            entries: 16,
            cover_ppm: ppm(0.9),
            miss_limit_ppm: ppm(0.8),
            period: 1000,
            decay: 1,
        }
    }

    #[test]
    fn the_hardware_marks_by_bottleneck_stall_table_and_llc_miss_rate() {
        // Two cores: core 0 waits for operands and commits nothing, core 1 issues.
        let mut k = Criticality::new(params(), 2);
        // Before any evaluation no core is bottlenecked.
        assert_eq!(k.mark(0, 0x10), Mark::NotBottlenecked);
        k.account(0, true, true, 600);
        k.account(1, false, false, 600);
        // Core 0's load 0x10 caused 90 stall cycles, 0x20 ten.
        k.stall(0, 0x10, 90);
        k.stall(0, 0x20, 10);
        k.stall(1, 0x10, 50);
        // The GPU's LLC: 100 accesses, 80 misses: exactly the limit.
        k.feedback(100, 80);
        assert!(!k.due(999) && k.due(1000));
        k.evaluate(1003);
        assert!(!k.due(1999) && k.due(2000));
        assert!(k.core_state(0).2 && !k.core_state(1).2);
        assert_eq!(k.stats().bottlenecked_core_periods, 1);
        assert_eq!(k.mark(0, 0x10), Mark::InSet);
        assert_eq!(k.mark(0, 0x20), Mark::InTable);
        assert_eq!(k.mark(0, 0x30), Mark::Untracked);
        assert_eq!(k.mark(1, 0x10), Mark::NotBottlenecked);
        assert_eq!(k.stats().llc_miss_rate, 0.8);
        // The tables aged by half.
        assert_eq!(k.table(0).stalls(0x10), Some(45));
        // Critical PCs: 0x10 in both cores' sets (core 1's only PC), 0x20 in none.
        let pcs = &k.stats().critical_pcs;
        assert_eq!(pcs.len(), 1);
        assert_eq!(
            pcs[0],
            CriticalPc {
                pc: 0x10,
                cores: 2,
                bottlenecked_cores: 1,
                stall_cycles: 140
            }
        );
        // Next period: 100 more accesses, 81 more misses: above the limit.
        k.feedback(200, 161);
        k.evaluate(2000);
        assert_eq!(k.mark(0, 0x30), Mark::HighMissRate);
        // A period without LLC accesses keeps the last rate.
        k.evaluate(3000);
        assert_eq!(k.mark(0, 0x30), Mark::HighMissRate);
        assert_eq!(k.stats().evaluations, 3);
        // Core 0 starts issuing: its counters fall to the mid-point and below.
        k.account(0, false, false, 300);
        k.evaluate(4000);
        assert!(!k.core_state(0).2);
        assert_eq!(k.mark(0, 0x10), Mark::NotBottlenecked);
        for m in [Mark::InSet, Mark::Untracked, Mark::InTable] {
            k.count(m);
        }
        assert_eq!((k.stats().critical(), k.stats().non_critical()), (2, 1));
    }
}
