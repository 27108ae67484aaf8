//! SHiP-mem, drp-reuse-probability-shared-llc.txt §4.1 ("SHiP-mem"): SHiP whose signature is
//! the 16 KB memory region of the access, address bits \[27:14\], for every agent. The engine
//! (table, training, insertion) is [`super::ship::Ship`].
//!
//! Two registered variants:
//! - `ship-mem` ([`ShipMem`]): drp §4.1's one 16K-entry table T for the whole LLC.
//! - `ship-mem-bank` ([`ShipMemBank`]): SHiP-mem as gspc-graphics-stream-llc.txt §5.1
//!   evaluates it for Figure 12, "hashing a 14-bit region identifier (address bits \[27:14\])
//!   into a 16K-entry table (per LLC bank) of three-bit saturating counters": one table per
//!   LLC bank (`llc.banks`), a set's bank being `set % banks` as in the gspc policies. With one
//!   bank it is exactly `ship-mem`.

use super::ship::{mem_signature, Ship, Signature};
use apusim_trace::Access;

/// Region signature: address bits \[27:14\].
pub struct MemSig;

impl Signature for MemSig {
    #[inline]
    fn signature(req: &Access, _n_cpus: usize) -> u16 {
        mem_signature(req.addr)
    }
}

/// SHiP-mem (drp §4.1: one table).
pub type ShipMem = Ship<MemSig>;

/// SHiP-mem with one table per LLC bank (gspc §5.1).
pub type ShipMemBank = Ship<MemSig, true>;

#[cfg(test)]
mod tests {
    use super::super::ship::COUNTER_MAX;
    use super::super::util::test_support::*;
    use super::*;
    use crate::Policy;
    use apusim_trace::{Op, Stream};

    /// Line `l` lies in region `l >> 8` (64-byte lines, 16 KB regions).
    const R0: u16 = 0;
    const R1: u16 = 1;

    fn state(c: &crate::Cache<ShipMem>) -> ([u8; 2], [bool; 2]) {
        let p = c.policy();
        (
            [p.rrpv(0, 0), p.rrpv(0, 1)],
            [p.reused(0, 0), p.reused(0, 1)],
        )
    }

    /// One 2-way set. A is in region 0; B, C, D, E in region 1; F in region 0. Counters start
    /// at 1.
    /// 1. A fills way 0 at 2. 2. A hits: T[r0] = 2, RRPV 0.
    /// 3. B fills way 1 at 2. 4. C: age ([1,3]), evict B without reuse: T[r1] = 0; C fills at 3.
    /// 5. D evicts C (no reuse, T[r1] stays 0), fills at 3. 6. D hits: T[r1] = 1.
    /// 7. E: age by 2 ([3,2]), evict A (reused: T[r0] stays 2), E fills at 2 (T[r1] = 1).
    /// 8. F: age ([3,3]), evict E (no reuse: T[r1] = 0), F fills at 2 (T[r0] = 2).
    #[test]
    fn replays_hand_worked_sequence() {
        let mut c = cache_of::<ShipMem>(1, 2);
        let (a, b, cc, d, e, f) = (0u64, 256, 257, 258, 259, 1);
        type Step = (u64, Did, [u8; 2], [bool; 2], u8, u8);
        let steps: [Step; 8] = [
            (a, Did::Fill(None), [2, 3], [false, false], 1, 1),
            (a, Did::Hit, [0, 3], [true, false], 2, 1),
            (b, Did::Fill(None), [0, 2], [true, false], 2, 1),
            (cc, Did::Fill(Some(b)), [1, 3], [true, false], 2, 0),
            (d, Did::Fill(Some(cc)), [1, 3], [true, false], 2, 0),
            (d, Did::Hit, [1, 0], [true, true], 2, 1),
            (e, Did::Fill(Some(a)), [2, 2], [false, true], 2, 1),
            (f, Did::Fill(Some(e)), [2, 3], [false, true], 2, 0),
        ];
        for (i, (line, did, rrpv, reused, t0, t1)) in steps.iter().enumerate() {
            assert_eq!(run(&mut c, &cpu_read(*line)), *did, "step {}", i + 1);
            assert_eq!(state(&c), (*rrpv, *reused), "step {}", i + 1);
            assert_eq!(
                (c.policy().counter(R0), c.policy().counter(R1)),
                (*t0, *t1),
                "step {}",
                i + 1
            );
        }
        assert_eq!(c.policy().signature(0, 0), R0);
        assert_eq!(c.policy().signature(0, 1), R1);
    }

    #[test]
    fn counters_saturate_at_7_and_0() {
        let mut c = cache_of::<ShipMem>(1, 2);
        run(&mut c, &cpu_read(0));
        for _ in 0..10 {
            assert_eq!(run(&mut c, &cpu_read(0)), Did::Hit);
        }
        assert_eq!(c.policy().counter(R0), COUNTER_MAX);
        // Many dead lines of region 1 drive its counter to 0 and keep it there; they then
        // insert distant.
        for l in 256..300 {
            run(&mut c, &cpu_read(l));
        }
        assert_eq!(c.policy().counter(R1), 0);
        assert_eq!(c.policy().rrpv(0, 1), 3);
        assert_eq!(
            c.policy().counter(R0),
            COUNTER_MAX,
            "the reused line stayed"
        );
    }

    #[test]
    fn every_agent_uses_the_region() {
        let c = cache_of::<ShipMem>(1, 2);
        let a = gpu(Stream::Depth, Op::Write, 5 << 8).with_pc(0x1234);
        assert_eq!(c.policy().sign(&a), 5);
        let r = cpu_read(7 << 8).with_pc(0x1234);
        assert_eq!(c.policy().sign(&r), 7);
    }

    fn banked(sets: usize, ways: usize, banks: usize) -> crate::Cache<ShipMemBank> {
        let mut x = ctx(sets, ways);
        x.banks = banks;
        cache(sets, ways, ShipMemBank::build(&x).unwrap())
    }

    /// gspc §5.1's per-bank tables. Two sets of 2 ways, two banks: set 0 is bank 0, set 1
    /// bank 1 (line `l` is in set `l % 2`); lines 0..256 all lie in region 0. The same
    /// sequence runs through one-table `ship-mem`.
    /// 1. line 1 (bank 1) fills way 0 at 2. 2. line 3 fills way 1 at 2.
    /// 3. line 5: age to [3,3], evict line 1 unreused: T1[r0] = 0 (shared T[r0] = 0);
    ///    line 5 fills at 3.
    /// 4. line 0 (bank 0): T0[r0] is still 1, so it fills at 2; one-table SHiP reads the
    ///    trained 0 and fills at 3.
    /// 5. line 0 hits: T0[r0] = 2, T1[r0] stays 0 (shared T[r0] = 1).
    /// 6. line 7 (bank 1) evicts line 5 (lowest way at 3) unreused: T1[r0] stays 0, the
    ///    shared T[r0] drops back to 0; line 7 fills at 3 in both.
    #[test]
    fn per_bank_tables_train_and_read_their_own_bank() {
        let mut b = banked(2, 2, 2);
        let mut one = cache_of::<ShipMem>(2, 2);
        assert_eq!(b.policy().tables(), 2);
        assert_eq!(one.policy().tables(), 1);
        // (line, what happened, (set, way) of the filled/hit line, its RRPV banked / one
        // table, T0[r0], T1[r0] banked, T[r0] one table)
        type Step = (u64, Did, (usize, usize), u8, u8, u8, u8, u8);
        let steps: [Step; 6] = [
            (1, Did::Fill(None), (1, 0), 2, 2, 1, 1, 1),
            (3, Did::Fill(None), (1, 1), 2, 2, 1, 1, 1),
            (5, Did::Fill(Some(1)), (1, 0), 3, 3, 1, 0, 0),
            (0, Did::Fill(None), (0, 0), 2, 3, 1, 0, 0),
            (0, Did::Hit, (0, 0), 0, 0, 2, 0, 1),
            (7, Did::Fill(Some(5)), (1, 0), 3, 3, 2, 0, 0),
        ];
        for (i, &(line, did, (set, way), rb, r1, t0, t1, t)) in steps.iter().enumerate() {
            let n = i + 1;
            assert_eq!(run(&mut b, &cpu_read(line)), did, "banked step {n}");
            assert_eq!(run(&mut one, &cpu_read(line)), did, "one-table step {n}");
            assert_eq!(b.policy().rrpv(set, way), rb, "banked RRPV step {n}");
            assert_eq!(one.policy().rrpv(set, way), r1, "one-table RRPV step {n}");
            let p = b.policy();
            assert_eq!(
                (p.bank_counter(0, R0), p.bank_counter(1, R0)),
                (t0, t1),
                "step {n}"
            );
            assert_eq!(one.policy().counter(R0), t, "one-table counter step {n}");
        }
    }

    /// With one bank the banked engine is `ship-mem`, access for access.
    #[test]
    fn one_bank_is_ship_mem() {
        let mut b = banked(8, 4, 1);
        let mut one = cache_of::<ShipMem>(8, 4);
        let mut rng = crate::policies::util::SplitMix64::new(7);
        for i in 0..4000 {
            // 64 lines per region over 8 regions: mixed reuse and streaming.
            let line = (rng.next_u64() % 512) * 4 + (rng.next_u64() % 4);
            let a = cpu_read(line);
            assert_eq!(run(&mut b, &a), run(&mut one, &a), "access {i}");
        }
        for sig in 0..16 {
            assert_eq!(b.policy().counter(sig), one.policy().counter(sig));
        }
        assert_eq!(b.policy().stats(), one.policy().stats());
        let mut x = ctx(8, 4);
        x.banks = 0;
        assert!(ShipMemBank::build(&x).is_err());
    }

    #[test]
    fn initial_counter_is_a_parameter() {
        let mut ctx = ctx(1, 2);
        ctx.params.insert("ship_init".into(), 0.0);
        let mut c = cache(1, 2, ShipMem::build(&ctx).unwrap());
        run(&mut c, &cpu_read(0));
        assert_eq!(
            c.policy().rrpv(0, 0),
            3,
            "cold zero counter inserts distant"
        );
        ctx.params.insert("ship_init".into(), 8.0);
        assert!(ShipMem::build(&ctx).is_err());
    }
}
