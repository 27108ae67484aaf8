//! SHiP-mem, drp-reuse-probability-shared-llc.txt §4.1 ("SHiP-mem"): SHiP whose signature is
//! the 16 KB memory region of the access, address bits \[27:14\], for every agent. The engine
//! (table, training, insertion) is [`super::ship::Ship`].

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

/// SHiP-mem.
pub type ShipMem = Ship<MemSig>;

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
