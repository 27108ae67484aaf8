//! The heterogeneous baseline of drp-reuse-probability-shared-llc.txt §4.1 ("Baseline"):
//! SRRIP ([`super::srrip`]) for read misses, read hits and replacements, plus the baseline's
//! write rules ([`super::hetero_writes::HeteroWrites`]): color, blitter and shader-data GPU write
//! misses allocate like read misses (RRPV 2), depth write misses follow the depth-write
//! bypass duel, all other GPU write misses bypass, CPU write misses allocate, and write hits
//! do not change the RRPV. The default LLC policy of the 4C1G preset.
//!
//! The write rules are built in (`OWN_WRITE_RULES`, the wrapped rules'), so this policy
//! behaves the same whether `gpu_write_rules` is set or not, and the registry never wraps it
//! twice. Every hook, its parameters (`depth_psel_bits`) and statistics are the wrapped
//! rules' ([`Wrapper`]).

use super::hetero_writes::HeteroWrites;
use super::srrip::Srrip;
use super::wrapper::Wrapper;
use crate::{CacheError, PolicyContext};
// The tests below reach these through `use super::*`.
#[cfg(test)]
use {crate::Policy, apusim_trace::Access};

pub struct DrpBaseline(HeteroWrites<Srrip>);

impl DrpBaseline {
    /// RRPV of a line (0 near .. 3 distant).
    pub fn rrpv(&self, set: usize, way: usize) -> u8 {
        self.0.inner().rrpv(set, way)
    }
    /// The write rules (depth duel state).
    pub fn rules(&self) -> &HeteroWrites<Srrip> {
        &self.0
    }
}

impl Wrapper for DrpBaseline {
    type Inner = HeteroWrites<Srrip>;
    fn inner(&self) -> &HeteroWrites<Srrip> {
        &self.0
    }
    fn inner_mut(&mut self) -> &mut HeteroWrites<Srrip> {
        &mut self.0
    }
    fn wrap(inner: HeteroWrites<Srrip>, _ctx: &PolicyContext) -> Result<Self, CacheError> {
        Ok(DrpBaseline(inner))
    }
}

#[cfg(test)]
mod tests {
    use super::super::util::test_support::*;
    use super::*;
    use apusim_trace::{Agent, Op, Stream};

    fn rrpvs(c: &crate::Cache<DrpBaseline>) -> Vec<u8> {
        (0..4).map(|w| c.policy().rrpv(0, w)).collect()
    }

    /// 64 sets x 4 ways, everything in set 0 (a follower of the depth duel). Hand-worked:
    /// CPU read A at 2; GPU color write B at 2 (allocated like a read); GPU vertex write
    /// bypasses; GPU depth write C at 2 (followers allocate initially); CPU write hit on A
    /// keeps 2; read hit on B -> 0; CPU write miss D at 2; E: age -> [3,1,3,3], evict A.
    #[test]
    fn replays_hand_worked_sequence() {
        let mut c = cache_of::<DrpBaseline>(64, 4);
        assert_eq!(c.policy().rules().depth_leader(0), None);
        let l = |i: u64| 64 * i;
        let cpu_write =
            |line: u64| Access::new(Agent::cpu(0), Stream::CpuData, Op::Write, line * LINE, 8);
        let steps: [(Access, Did, [u8; 4]); 8] = [
            (cpu_read(l(0)), Did::Fill(None), [2, 3, 3, 3]),
            (
                gpu(Stream::Color, Op::Write, l(1)),
                Did::Fill(None),
                [2, 2, 3, 3],
            ),
            (
                gpu(Stream::Vertex, Op::Write, l(9)),
                Did::Bypass,
                [2, 2, 3, 3],
            ),
            (
                gpu(Stream::Depth, Op::Writeback, l(2)),
                Did::Fill(None),
                [2, 2, 2, 3],
            ),
            (cpu_write(l(0)), Did::Hit, [2, 2, 2, 3]),
            (
                gpu(Stream::StaticTexture, Op::Read, l(1)),
                Did::Hit,
                [2, 0, 2, 3],
            ),
            (cpu_write(l(3)), Did::Fill(None), [2, 0, 2, 2]),
            (cpu_read(l(4)), Did::Fill(Some(l(0))), [2, 1, 3, 3]),
        ];
        for (i, (a, did, want)) in steps.iter().enumerate() {
            assert_eq!(run(&mut c, a), *did, "step {i}");
            assert_eq!(rrpvs(&c), want.to_vec(), "step {i}");
        }
        let st = c.policy().stats();
        assert!(st.contains(&("gpu_write_bypasses".to_string(), 1.0)));
        assert!(st.contains(&("write_hits_ignored".to_string(), 1.0)));
    }
}
