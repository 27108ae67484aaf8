//! SHiP-hybrid, drp-reuse-probability-shared-llc.txt §4.1 ("SHiP-hybrid"): SHiP-PC for CPU
//! accesses, SHiP-mem for GPU accesses, both indexing the same 16K-entry table T.
//!
//! CPU signature: [`super::ship::pc_signature`] of the PC and the core id; GPU signature:
//! [`super::ship::mem_signature`], address bits \[27:14\]. The engine is [`super::ship::Ship`].

use super::ship::{mem_signature, pc_signature, Ship, Signature};
use apusim_trace::Access;

/// PC signature for CPU cores, region signature for the GPU.
pub struct HybridSig;

impl Signature for HybridSig {
    #[inline]
    fn signature(req: &Access, _n_cpus: usize) -> u16 {
        match req.agent.cpu_index() {
            Some(core) => pc_signature(req.pc, core),
            None => mem_signature(req.addr),
        }
    }
}

/// SHiP-hybrid.
pub type ShipHybrid = Ship<HybridSig>;

#[cfg(test)]
mod tests {
    use super::super::util::test_support::*;
    use super::*;
    use apusim_trace::{Agent, Op, Stream};

    fn cpu(core: u8, pc: u64, line: u64) -> Access {
        Access::new(Agent::cpu(core), Stream::CpuData, Op::Read, line * LINE, 8).with_pc(pc)
    }
    fn gpu_read(line: u64) -> Access {
        gpu(Stream::StaticTexture, Op::Read, line).with_pc(0x999)
    }

    /// One 2-way set. Region 5 (lines 0x500..) and CPU PC 5 on core 0 share table entry 5.
    /// The GPU fills two region-5 lines that die, driving T[5] to 0; a CPU fill by PC 5 then
    /// inserts distant, a CPU fill by another PC at 2; the stored signatures are the PC for
    /// the CPU line and the region for the GPU line.
    #[test]
    fn cpu_uses_pc_gpu_uses_region_same_table() {
        let mut c = cache_of::<ShipHybrid>(1, 2);
        let rr = |c: &crate::Cache<ShipHybrid>| [c.policy().rrpv(0, 0), c.policy().rrpv(0, 1)];
        assert_eq!(c.policy().sign(&gpu_read(0x500)), 5);
        assert_eq!(c.policy().sign(&cpu(0, 5, 0x900)), 5);
        assert_eq!(c.policy().sign(&cpu(1, 5, 0x900)), 5 ^ 0x2000);
        assert_eq!(run(&mut c, &gpu_read(0x500)), Did::Fill(None));
        assert_eq!(run(&mut c, &gpu_read(0x501)), Did::Fill(None));
        assert_eq!(c.policy().signature(0, 0), 5);
        // CPU PC 0x77 (line in region 9): evicts 0x500 unused, T[5] = 0, inserts at 2.
        assert_eq!(run(&mut c, &cpu(0, 0x77, 0x900)), Did::Fill(Some(0x500)));
        assert_eq!((rr(&c), c.policy().counter(5)), ([2, 3], 0));
        assert_eq!(
            c.policy().signature(0, 0),
            0x77,
            "CPU line signed by PC, not region 9"
        );
        assert_eq!(c.policy().counter(9), 1, "region 9 untouched");
        // CPU PC 5: evicts 0x501 (unused, T[5] stays 0) and inserts distant.
        assert_eq!(run(&mut c, &cpu(0, 5, 0x901)), Did::Fill(Some(0x501)));
        assert_eq!((rr(&c), c.policy().signature(0, 1)), ([2, 3], 5));
        // A GPU hit... on the CPU line trains the CPU line's (PC) signature.
        assert_eq!(run(&mut c, &gpu_read(0x901)), Did::Hit);
        assert_eq!(c.policy().counter(5), 1);
        // A new GPU region-5 line now inserts at 2 again.
        assert_eq!(run(&mut c, &gpu_read(0x502)), Did::Fill(Some(0x900)));
        assert_eq!(c.policy().counter(0x77), 0, "0x900 died unused");
        assert_eq!(rr(&c), [2, 1], "way 1 aged once");
    }
}
