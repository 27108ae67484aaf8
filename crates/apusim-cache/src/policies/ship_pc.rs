//! SHiP-PC, drp-reuse-probability-shared-llc.txt §4.1 ("SHiP-hybrid" describes its CPU half:
//! "the lower fourteen bits of the program counter (hashed with the CPU core id)"), after Wu
//! et al. (MICRO 2011): SHiP whose signature is the PC of the access, for every agent.
//!
//! Signature: [`super::ship::pc_signature`] — PC bits \[13:0\] XOR the bit-reversed agent index
//! ([`apusim_trace::Agent::dense_index`]: the core id for CPU cores, `n_cpus` for the GPU).
//! GPU fixed-function accesses carry PC 0, so they all share one signature: that is why the
//! paper builds SHiP-hybrid. The engine is [`super::ship::Ship`].

use super::ship::{pc_signature, Ship, Signature};
use apusim_trace::Access;

/// PC signature hashed with the agent.
pub struct PcSig;

impl Signature for PcSig {
    #[inline]
    fn signature(req: &Access, n_cpus: usize) -> u16 {
        pc_signature(req.pc, req.agent.dense_index(n_cpus))
    }
}

/// SHiP-PC.
pub type ShipPc = Ship<PcSig>;

#[cfg(test)]
mod tests {
    use super::super::util::test_support::*;
    use super::*;
    use crate::Policy;
    use apusim_trace::{Agent, Op, Stream};

    const P: u64 = 0x40_1234;
    const Q: u64 = 0x40_0040;

    fn read(core: u8, pc: u64, line: u64) -> Access {
        Access::new(Agent::cpu(core), Stream::CpuData, Op::Read, line * LINE, 8).with_pc(pc)
    }

    /// One 2-way set, two cores, counters start at 1. Core 0's PC P fills two lines that die
    /// unused, driving T[sig(P, 0)] to 0; core 0's next P fill goes in distant, while core 1
    /// running the same PC has its own counter and inserts at 2.
    #[test]
    fn replays_hand_worked_sequence() {
        let mut ctx = ctx(1, 2);
        ctx.n_cpus = 2;
        let mut c = cache(1, 2, ShipPc::build(&ctx).unwrap());
        let s0 = pc_signature(P, 0);
        let s1 = pc_signature(P, 1);
        let sq = pc_signature(Q, 0);
        assert_eq!((s0, s1, sq), (0x1234, 0x3234, 0x0040));
        let rr = |c: &crate::Cache<ShipPc>| [c.policy().rrpv(0, 0), c.policy().rrpv(0, 1)];
        let t = |c: &crate::Cache<ShipPc>, s| c.policy().counter(s);

        assert_eq!(run(&mut c, &read(0, P, 0)), Did::Fill(None));
        assert_eq!(run(&mut c, &read(0, P, 1)), Did::Fill(None));
        assert_eq!((rr(&c), t(&c, s0)), ([2, 2], 1));
        // Q's fill ages the set and evicts line 0 (unused): T[s0] = 0.
        assert_eq!(run(&mut c, &read(0, Q, 2)), Did::Fill(Some(0)));
        assert_eq!((rr(&c), t(&c, s0), t(&c, sq)), ([2, 3], 0, 1));
        assert_eq!(c.policy().signature(0, 0), sq);
        // P on core 0 now inserts distant; it evicts line 1 (unused, T[s0] stays 0).
        assert_eq!(run(&mut c, &read(0, P, 3)), Did::Fill(Some(1)));
        assert_eq!((rr(&c), t(&c, s0)), ([2, 3], 0));
        // P on core 1: its own counter (1), inserts at 2, evicting line 3.
        assert_eq!(run(&mut c, &read(1, P, 4)), Did::Fill(Some(3)));
        assert_eq!((rr(&c), t(&c, s0), t(&c, s1)), ([2, 2], 0, 1));
        assert_eq!(c.policy().signature(0, 1), s1);
        // A hit trains the line's fill signature, whatever PC hits it.
        assert_eq!(run(&mut c, &read(0, Q, 4)), Did::Hit);
        assert_eq!((rr(&c), t(&c, s1), t(&c, sq)), ([2, 0], 2, 1));
        assert!(c.policy().reused(0, 1));
    }

    #[test]
    fn gpu_accesses_use_their_pc_and_the_gpu_index() {
        let mut ctx = ctx(1, 2);
        ctx.n_cpus = 4;
        let c = cache(1, 2, ShipPc::build(&ctx).unwrap());
        let g = gpu(Stream::StaticTexture, Op::Read, 99);
        assert_eq!(c.policy().sign(&g), pc_signature(0, 4));
        assert_eq!(c.policy().sign(&g.with_pc(0x55)), pc_signature(0x55, 4));
        assert_ne!(c.policy().sign(&g), c.policy().sign(&read(0, 0, 99)));
    }
}
