//! Critical-access identification for 3D rendering (gpu-access-criticality §4.1.1).
//!
//! Every instance of the five units of the queueing network (Fig. 6: front end FE, one
//! depth/stencil unit ZS and one colour writer CW per ROP, the shader cores SH, the blitter
//! BT) has two `w`-bit up/down saturating counters that start at the mid-point `2^(w-1)`:
//! `C_in`, moved up at the end of a cycle in which the instance has more pending requests
//! than `th_in` and down otherwise, and `C_out`, moved up when it completed at least
//! `th_out` requests in the cycle and down otherwise. [`Criticality`] keeps them; the
//! pipeline reports each instance's two conditions once per cycle it runs
//! ([`Criticality::observe`]), and cycles the pipeline sleeps through (nothing completes,
//! nothing enters) move the counters in bulk.
//!
//! Every `period` cycles the counters become three bits per unit ([`UnitBits`]):
//! `IOccupancy` (some instance's `C_in` above the mid-point), `AOccupancy` (every
//! instance's) and `Throughput` (every instance's `C_out`), and Algorithm 1 with its
//! Algorithm 2 ([`find_bottlenecks`]) walks the pipeline from back to front to find the
//! bottlenecked units. Until the next evaluation every access that originates from a
//! bottlenecked unit is critical ([`Criticality::critical`]).
//!
//! Thresholds (the paper: the peak input and output bandwidths of FE, ROP and BT, and for SH
//! its peak input bandwidth divided by the cycles its program takes per fragment):
//! - FE, ZS, CW and BT take and finish at most one item (command, triangle, tile, quad,
//!   line) per cycle, so `th_in = th_out = 1`. "More pending than one" is `pending > 1`.
//!   "Completed more than one" can never hold for a unit that finishes at most one item
//!   per cycle, so `C_out` moves up when the instance completed an item, i.e. ran at its
//!   peak in that cycle: the counter then climbs when the unit runs at peak in more than
//!   half of the recent cycles.
//! - SH: a core at its peak finishes `1/P` threads per cycle for programs of `P`
//!   instructions, one instruction per cycle. Measured in instructions (`1/P` of a thread),
//!   `C_out` moves up when the core issued an instruction in the cycle, and `C_in` moves up
//!   when it had any thread (resident or waiting for a context): more than `1/P` of one.
//!
//! Fig. 12's two experiments change what is marked, not what is identified: `fraction`
//! marks a random share of the identified accesses (the quarters of the critical set), and
//! `random` marks every access at random with its stream's share of identified accesses so
//! far, so each stream keeps about the algorithm's count of critical accesses while the
//! choice of which is uniform. Both draw from a fixed-seed generator: runs stay
//! deterministic.
//!
//! Choices where the paper is silent, written down in docs/timing.md: the period (default
//! 1024 GPU cycles, four times the 256 states of an 8-bit counter), and "early-Z enabled",
//! which is a draw's state in hardware and here holds when, in the last period, no more quads
//! took the late depth test than the early one.

/// A unit of gpu-access-criticality Fig. 6.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CritUnit {
    Fe = 0,
    Zs = 1,
    Sh = 2,
    Cw = 3,
    Bt = 4,
}

impl CritUnit {
    pub const ALL: [CritUnit; 5] = [
        CritUnit::Fe,
        CritUnit::Zs,
        CritUnit::Sh,
        CritUnit::Cw,
        CritUnit::Bt,
    ];
    pub fn name(self) -> &'static str {
        match self {
            CritUnit::Fe => "fe",
            CritUnit::Zs => "zs",
            CritUnit::Sh => "sh",
            CritUnit::Cw => "cw",
            CritUnit::Bt => "bt",
        }
    }
}

/// A `w`-bit up/down saturating counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SatCounter {
    value: u16,
    max: u16,
}

impl SatCounter {
    /// A `w`-bit counter (`1 <= w <= 15`) at its mid-point `2^(w-1)`.
    pub fn new(w: u32) -> SatCounter {
        debug_assert!((1..=15).contains(&w));
        SatCounter {
            value: 1 << (w - 1),
            max: (1 << w) - 1,
        }
    }
    /// Move `n` steps up or down, saturating.
    pub fn step(&mut self, up: bool, n: u64) {
        let n = n.min(u64::from(self.max)) as u16;
        self.value = if up {
            self.value.saturating_add(n).min(self.max)
        } else {
            self.value.saturating_sub(n)
        };
    }
    /// Above the mid-point `2^(w-1)`.
    pub fn high(&self) -> bool {
        self.value > self.max.div_ceil(2)
    }
    pub fn value(&self) -> u16 {
        self.value
    }
}

/// `IOccupancy`, `AOccupancy` and `Throughput` of one unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UnitBits {
    /// Some instance's `C_in` is above the mid-point.
    pub io: bool,
    /// Every instance's `C_in` is.
    pub ao: bool,
    /// Every instance's `C_out` is.
    pub th: bool,
}

impl UnitBits {
    /// A unit whose instances do not all have work ("underloaded", §4.1.1).
    fn underloaded(&self) -> bool {
        !self.ao
    }
    /// Low throughput with some instance occupied: FE, ZS, CW and BT are bottlenecked so.
    fn stalled_any(&self) -> bool {
        !self.th && self.io
    }
    /// Low throughput with every instance occupied: SH is bottlenecked so.
    fn stalled_all(&self) -> bool {
        !self.th && self.ao
    }
}

/// Which units are bottlenecked, by [`CritUnit`] index.
pub type Bottlenecks = [bool; 5];

/// Algorithm 1 (with Algorithm 2) of gpu-access-criticality §4.1.1: the bottlenecked units
/// from each unit's bits, walking FE-ZS-SH-CW (early Z) or FE-SH-ZS-CW (late Z) from back
/// to front.
pub fn find_bottlenecks(b: &[UnitBits; 5], early_z: bool) -> Bottlenecks {
    use CritUnit::*;
    let u = |x: CritUnit| b[x as usize];
    let mut out = [false; 5];
    if u(Cw).stalled_any() {
        out[Cw as usize] = true;
    }
    if u(Bt).stalled_any() {
        out[Bt as usize] = true;
    }
    // Algorithm 2: is the front end why the units behind it are underloaded?
    let check_fe = |out: &mut Bottlenecks| {
        if u(Fe).stalled_any() {
            out[Fe as usize] = true;
            out[Sh as usize] = true;
            out[Zs as usize] = true;
        }
    };
    if u(Cw).underloaded() {
        if early_z {
            if u(Sh).stalled_all() {
                out[Sh as usize] = true;
            }
            if u(Sh).underloaded() {
                if u(Zs).stalled_any() {
                    out[Zs as usize] = true;
                }
                if u(Zs).underloaded() {
                    check_fe(&mut out);
                }
            }
        } else {
            if u(Zs).stalled_any() {
                out[Zs as usize] = true;
            }
            if u(Zs).underloaded() {
                if u(Sh).stalled_all() {
                    out[Sh as usize] = true;
                }
                if u(Sh).underloaded() {
                    check_fe(&mut out);
                }
            }
        }
    }
    out
}

/// One unit instance's counters and its last cycle's occupancy condition.
#[derive(Clone, Copy, Debug)]
struct Instance {
    c_in: SatCounter,
    c_out: SatCounter,
    last_in: bool,
}

/// What the identification did, for reports (gpu-access-criticality Fig. 9).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CritCounters {
    /// Evaluations of Algorithm 1.
    pub evaluations: u64,
    /// Evaluations that found each unit bottlenecked (FE, ZS, SH, CW, BT).
    pub bottlenecked: [u64; 5],
    /// Evaluations made with early Z enabled.
    pub early_z: u64,
    /// Accesses sent marked critical and not, by stream (index: the stream's byte).
    pub critical: [u64; 16],
    pub non_critical: [u64; 16],
    /// Accesses left unmarked because the projected frame rate met the target.
    pub on_target: u64,
}

/// What is marked of the identified accesses (gpu-access-criticality Fig. 12).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Marking {
    /// This fraction of the identified accesses, chosen at random (1: all of them).
    Fraction(f64),
    /// Every access at random with its stream's share of identified accesses so far.
    Random,
}

/// The per-unit counters and the periodic bottleneck search.
#[derive(Clone, Debug)]
pub struct Criticality {
    marking: Marking,
    rng: u64,
    /// Per stream byte: accesses seen and identified as critical.
    seen: [u64; 16],
    identified: [u64; 16],
    period: u64,
    next_eval: u64,
    last_cycle: Option<u64>,
    units: [Vec<Instance>; 5],
    bottleneck: Bottlenecks,
    early_quads: u64,
    late_quads: u64,
    pub counters: CritCounters,
}

impl Criticality {
    /// Counters of `w` bits for `instances[u]` instances of each unit, evaluated every
    /// `period` cycles.
    pub fn new(w: u32, period: u64, instances: [usize; 5], marking: Marking) -> Criticality {
        let inst = Instance {
            c_in: SatCounter::new(w),
            c_out: SatCounter::new(w),
            last_in: false,
        };
        Criticality {
            marking,
            rng: 0x6372_6974_6963_616c,
            seen: [0; 16],
            identified: [0; 16],
            period: period.max(1),
            next_eval: period.max(1),
            last_cycle: None,
            units: instances.map(|n| vec![inst; n.max(1)]),
            bottleneck: [false; 5],
            early_quads: 0,
            late_quads: 0,
            counters: CritCounters::default(),
        }
    }

    /// Quads that took the early (`late` false) or late depth test, for "early-Z enabled".
    pub fn depth_test(&mut self, late: bool) {
        if late {
            self.late_quads += 1;
        } else {
            self.early_quads += 1;
        }
    }

    /// The end of GPU cycle `cycle`: `signals[u][i]` is instance `i` of unit `u`'s (more
    /// pending than `th_in`, completed at least `th_out`). Cycles since the last call, which
    /// the pipeline slept through, count as cycles with the occupancy condition unchanged and
    /// nothing completed. Runs Algorithm 1 when a period has passed.
    pub fn observe(&mut self, cycle: u64, signals: &[Vec<(bool, bool)>; 5]) {
        let gap = self.last_cycle.map_or(0, |l| cycle.saturating_sub(l + 1));
        for (insts, sig) in self.units.iter_mut().zip(signals) {
            for (inst, &(pending, completed)) in insts.iter_mut().zip(sig) {
                if gap > 0 {
                    inst.c_in.step(inst.last_in, gap);
                    inst.c_out.step(false, gap);
                }
                inst.c_in.step(pending, 1);
                inst.c_out.step(completed, 1);
                inst.last_in = pending;
            }
        }
        self.last_cycle = Some(cycle);
        if cycle >= self.next_eval {
            self.evaluate();
            self.next_eval = cycle + self.period;
        }
    }

    /// The three bits of every unit now.
    pub fn bits(&self) -> [UnitBits; 5] {
        self.units.each_ref().map(|insts| UnitBits {
            io: insts.iter().any(|i| i.c_in.high()),
            ao: insts.iter().all(|i| i.c_in.high()),
            th: insts.iter().all(|i| i.c_out.high()),
        })
    }

    fn evaluate(&mut self) {
        let early_z = self.late_quads <= self.early_quads;
        self.bottleneck = find_bottlenecks(&self.bits(), early_z);
        self.counters.evaluations += 1;
        self.counters.early_z += u64::from(early_z);
        for (n, &b) in self.counters.bottlenecked.iter_mut().zip(&self.bottleneck) {
            *n += u64::from(b);
        }
        self.early_quads = 0;
        self.late_quads = 0;
    }

    /// Is unit `u` bottlenecked (its accesses critical) since the last evaluation?
    pub fn critical(&self, u: CritUnit) -> bool {
        self.bottleneck[u as usize]
    }

    /// The bottlenecks found at the last evaluation.
    pub fn bottlenecks(&self) -> Bottlenecks {
        self.bottleneck
    }

    /// A uniform draw in `[0, 1)` (SplitMix64).
    fn draw(&mut self) -> f64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Decide whether an access of stream byte `stream` that the algorithm `identified` as
    /// critical leaves marked, and count it (`on_target`: unmarked because the frame rate met
    /// its target).
    pub fn mark(&mut self, stream: u8, identified: bool, on_target: bool) -> bool {
        let s = usize::from(stream) & 15;
        self.seen[s] += 1;
        self.identified[s] += u64::from(identified);
        let critical = match self.marking {
            Marking::Fraction(f) if f >= 1.0 => identified,
            Marking::Fraction(f) => identified && self.draw() < f,
            Marking::Random => {
                !on_target && self.draw() < self.identified[s] as f64 / self.seen[s] as f64
            }
        };
        self.count(stream, critical, on_target);
        critical
    }

    /// Count an access sent with stream byte `stream`: critical, not, or unmarked because the
    /// frame rate met its target.
    fn count(&mut self, stream: u8, critical: bool, on_target: bool) {
        let s = usize::from(stream) & 15;
        if critical {
            self.counters.critical[s] += 1;
        } else {
            self.counters.non_critical[s] += 1;
        }
        self.counters.on_target += u64::from(on_target);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CritUnit::*;

    fn bits(io: bool, ao: bool, th: bool) -> UnitBits {
        UnitBits { io, ao, th }
    }
    /// Busy at peak, occupied everywhere.
    const OK: UnitBits = UnitBits {
        io: true,
        ao: true,
        th: true,
    };
    /// Underloaded: some instances idle, throughput low, no instance occupied.
    const IDLE: UnitBits = UnitBits {
        io: false,
        ao: false,
        th: false,
    };
    /// Some instance occupied, not all, throughput low.
    const SOME: UnitBits = UnitBits {
        io: true,
        ao: false,
        th: false,
    };
    /// Every instance occupied, throughput low.
    const ALL: UnitBits = UnitBits {
        io: true,
        ao: true,
        th: false,
    };

    fn state(
        fe: UnitBits,
        zs: UnitBits,
        sh: UnitBits,
        cw: UnitBits,
        bt: UnitBits,
    ) -> [UnitBits; 5] {
        [fe, zs, sh, cw, bt]
    }
    fn set(units: &[CritUnit]) -> Bottlenecks {
        let mut b = [false; 5];
        for &u in units {
            b[u as usize] = true;
        }
        b
    }

    #[test]
    fn counters_start_at_the_midpoint_and_saturate() {
        let mut c = SatCounter::new(8);
        assert_eq!(c.value(), 128);
        assert!(!c.high(), "the mid-point is not above itself");
        c.step(true, 1);
        assert!(c.high());
        c.step(true, 1000);
        assert_eq!(c.value(), 255);
        c.step(false, 3);
        assert_eq!(c.value(), 252);
        c.step(false, 1 << 40);
        assert_eq!(c.value(), 0);
        // A bulk step is the same as single steps.
        let (mut a, mut b) = (SatCounter::new(4), SatCounter::new(4));
        a.step(true, 5);
        for _ in 0..5 {
            b.step(true, 1);
        }
        assert_eq!((a.value(), b.value()), (13, 13));
        a.step(true, 5);
        assert_eq!(a.value(), 15, "a 4-bit counter saturates at 15");
    }

    #[test]
    fn colour_writer_and_blitter_are_checked_first() {
        // CW stalled with work: bottlenecked, and not underloaded (all occupied), so the walk
        // stops there.
        let b = find_bottlenecks(&state(ALL, ALL, ALL, ALL, OK), true);
        assert_eq!(b, set(&[Cw]));
        let b = find_bottlenecks(&state(OK, OK, OK, OK, SOME), true);
        assert_eq!(b, set(&[Bt]));
        // CW stalled but only some instances occupied: bottlenecked and underloaded, so the
        // walk continues to SH.
        let b = find_bottlenecks(&state(OK, OK, ALL, SOME, IDLE), true);
        assert_eq!(b, set(&[Cw, Sh]));
        // A blitter at full throughput is not a bottleneck even when occupied.
        let b = find_bottlenecks(&state(OK, OK, OK, OK, OK), true);
        assert_eq!(b, set(&[]));
    }

    #[test]
    fn early_z_path_walks_cw_sh_zs_fe() {
        // SH needs every core occupied: a stalled SH with idle cores is not bottlenecked, and
        // is underloaded, so ZS is examined.
        assert_eq!(
            find_bottlenecks(&state(OK, OK, SOME, IDLE, IDLE), true),
            set(&[])
        );
        assert_eq!(
            find_bottlenecks(&state(OK, SOME, SOME, IDLE, IDLE), true),
            set(&[Zs])
        );
        // SH occupied everywhere: the walk stops at SH (not underloaded).
        assert_eq!(
            find_bottlenecks(&state(SOME, SOME, ALL, IDLE, IDLE), true),
            set(&[Sh])
        );
        // ZS underloaded too: Algorithm 2 blames the front end and marks FE, SH and ZS.
        assert_eq!(
            find_bottlenecks(&state(SOME, IDLE, IDLE, IDLE, IDLE), true),
            set(&[Fe, Sh, Zs])
        );
        // A front end at full throughput is not blamed.
        assert_eq!(
            find_bottlenecks(&state(bits(true, true, true), IDLE, IDLE, IDLE, IDLE), true),
            set(&[])
        );
        // ZS occupied everywhere but fast: not a bottleneck, not underloaded, FE not checked.
        assert_eq!(
            find_bottlenecks(&state(SOME, OK, IDLE, IDLE, IDLE), true),
            set(&[])
        );
    }

    #[test]
    fn late_z_path_walks_cw_zs_sh_fe() {
        assert_eq!(
            find_bottlenecks(&state(OK, SOME, OK, IDLE, IDLE), false),
            set(&[Zs])
        );
        // ZS underloaded, SH stalled with every core occupied.
        assert_eq!(
            find_bottlenecks(&state(OK, IDLE, ALL, IDLE, IDLE), false),
            set(&[Sh])
        );
        // ZS fully occupied: the walk stops before SH even if SH is stalled.
        assert_eq!(
            find_bottlenecks(&state(SOME, ALL, ALL, IDLE, IDLE), false),
            set(&[Zs])
        );
        // Both underloaded: the front end.
        assert_eq!(
            find_bottlenecks(&state(SOME, SOME, SOME, IDLE, IDLE), false),
            set(&[Zs, Fe, Sh])
        );
        // On the early-Z path SH is examined first (not every core occupied, so not SH by
        // itself), then ZS, then the front end, which marks SH too.
        assert_eq!(
            find_bottlenecks(&state(SOME, SOME, SOME, IDLE, IDLE), true),
            set(&[Zs, Fe, Sh])
        );
    }

    #[test]
    fn a_fully_occupied_colour_writer_hides_the_front() {
        // CW fully occupied and fast: not underloaded, so nothing in front is examined.
        assert_eq!(
            find_bottlenecks(&state(SOME, SOME, ALL, OK, IDLE), true),
            set(&[])
        );
    }

    #[test]
    fn observations_drive_the_bits_and_sleeping_cycles_count() {
        // One FE, two ZS, two SH, two CW, one BT.
        let mut c = Criticality::new(8, 1000, [1, 2, 2, 2, 1], Marking::Fraction(1.0));
        let mut sig: [Vec<(bool, bool)>; 5] = [1, 2, 2, 2, 1].map(|n| vec![(false, false); n]);
        // ZS instance 0 occupied and never completing; instance 1 idle.
        sig[1][0] = (true, false);
        // Every SH core occupied and stalled.
        sig[2] = vec![(true, false); 2];
        c.observe(0, &sig);
        let b = c.bits();
        assert!(b[1].io && !b[1].ao && !b[1].th);
        assert!(b[2].io && b[2].ao && !b[2].th);
        // A long sleep moves the counters in bulk: occupancy as last seen, nothing completed.
        sig[2] = vec![(false, false); 2];
        c.observe(500, &sig);
        // 499 slept cycles occupied, then one not: still occupied.
        assert!(c.bits()[2].ao);
        // 199 slept cycles unoccupied (as last seen): no longer.
        sig[2] = vec![(true, false); 2];
        c.observe(700, &sig);
        assert!(!c.bits()[2].io);
        assert_eq!(c.counters.evaluations, 0);
        // The period passes at cycle 1000: Algorithm 1 runs on the state then (SH occupied
        // again for 300 cycles, never issuing; the colour writers idle).
        c.observe(1000, &sig);
        assert_eq!(c.counters.evaluations, 1);
        assert!(c.critical(CritUnit::Sh), "{:?}", c.bottlenecks());
        assert!(!c.critical(CritUnit::Cw));
    }

    #[test]
    fn fractions_and_random_marking_keep_the_counts() {
        let n = 20_000u64;
        // A quarter of the identified accesses.
        let mut q = Criticality::new(8, 1000, [1; 5], Marking::Fraction(0.25));
        let marked = (0..n).filter(|_| q.mark(7, true, false)).count() as f64;
        assert!((marked / n as f64 - 0.25).abs() < 0.02, "{marked}");
        assert!(
            !q.mark(7, false, false),
            "an access not identified is never marked"
        );
        // Random marking: stream 7 identified 30% of the time, stream 8 never; the marks
        // follow each stream's share, not the identification.
        let mut r = Criticality::new(8, 1000, [1; 5], Marking::Random);
        let (mut agree, mut marked7) = (0u64, 0u64);
        for i in 0..n {
            let id = i % 10 < 3;
            let m = r.mark(7, id, false);
            marked7 += u64::from(m);
            agree += u64::from(m == id);
            assert!(!r.mark(8, false, false));
        }
        let share = marked7 as f64 / n as f64;
        assert!((share - 0.3).abs() < 0.02, "{share}");
        // Uniform choice: agreement with the algorithm is what chance gives (0.3² + 0.7²).
        assert!((agree as f64 / n as f64 - 0.58).abs() < 0.03);
        assert_eq!(r.counters.critical[7], marked7);
        // Deterministic.
        let mut a = Criticality::new(8, 1000, [1; 5], Marking::Random);
        let mut b = Criticality::new(8, 1000, [1; 5], Marking::Random);
        assert!((0..1000).all(|i| a.mark(7, i % 2 == 0, false) == b.mark(7, i % 2 == 0, false)));
    }
}
