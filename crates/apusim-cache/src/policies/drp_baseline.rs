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

    fn write(agent: Agent, stream: Stream, line: u64) -> Access {
        Access::new(agent, stream, Op::Write, line * LINE, 8)
    }

    /// The `srrip` = `drp-baseline` twin. drp §4.1's baseline is SRRIP for reads, read hits
    /// and replacement plus the write rules; with `llc.gpu_write_rules` (the 4c1g preset) the
    /// registry wraps `srrip` in those rules, so there `srrip` is the baseline under a second
    /// name. Plain SRRIP (`llc.gpu_write_rules = false`) differs from it exactly on writes:
    /// set 0 of 64 x 4 ways (a depth-duel follower), then a set of the always-bypass depth
    /// group.
    /// 1. CPU read A: both fill at 2.
    /// 2. GPU vertex write miss: the baseline bypasses, SRRIP allocates.
    /// 3. CPU write hit on A: the baseline leaves A at 2, SRRIP promotes it to 0.
    /// 4. GPU depth write miss in an always-bypass set: the baseline bypasses, SRRIP fills.
    /// 5. GPU color write miss: both allocate, like a read.
    ///
    /// A stream of reads only then gets the same outcome from both on every access.
    #[test]
    fn plain_srrip_differs_from_the_baseline_only_on_writes() {
        let mut b = cache_of::<DrpBaseline>(64, 4);
        let mut s = cache_of::<Srrip>(64, 4);
        let l = |i: u64| 64 * i;
        assert_eq!(run(&mut b, &cpu_read(l(0))), Did::Fill(None));
        assert_eq!(run(&mut s, &cpu_read(l(0))), Did::Fill(None));
        let vertex = gpu(Stream::Vertex, Op::Write, l(1));
        assert_eq!(run(&mut b, &vertex), Did::Bypass);
        assert_eq!(run(&mut s, &vertex), Did::Fill(None));
        let hit = write(Agent::cpu(0), Stream::CpuData, l(0));
        assert_eq!(run(&mut b, &hit), Did::Hit);
        assert_eq!(run(&mut s, &hit), Did::Hit);
        assert_eq!(b.policy().rrpv(0, 0), 2, "write hits leave the RRPV");
        assert_eq!(s.policy().rrpv(0, 0), 0, "SRRIP promotes every hit");
        let bypass_set = (0..64)
            .find(|&set| b.policy().rules().depth_leader(set) == Some(true))
            .unwrap() as u64;
        let depth = write(Agent::GPU, Stream::Depth, bypass_set);
        assert_eq!(run(&mut b, &depth), Did::Bypass);
        assert_eq!(run(&mut s, &depth), Did::Fill(None));
        let color = write(Agent::GPU, Stream::Color, l(2));
        assert_eq!(run(&mut b, &color), Did::Fill(None));
        assert_eq!(run(&mut s, &color), Did::Fill(None));
        let st = b.policy().stats();
        assert!(st.contains(&("gpu_write_bypasses".to_string(), 2.0)));
        assert!(st.contains(&("depth_write_bypasses".to_string(), 1.0)));
        assert!(st.contains(&("write_hits_ignored".to_string(), 1.0)));
        // Reads only (fresh caches): one outcome.
        let mut b = cache_of::<DrpBaseline>(64, 4);
        let mut s = cache_of::<Srrip>(64, 4);
        let mut rng = crate::policies::util::SplitMix64::new(11);
        for i in 0..5000 {
            let line = rng.below(1024) as u64;
            let a = if rng.below(2) == 0 {
                cpu_read(line)
            } else {
                gpu(Stream::ALL[rng.below(Stream::COUNT)], Op::Read, line)
            };
            assert_eq!(run(&mut b, &a), run(&mut s, &a), "read {i}");
        }
    }

    /// What the registry builds for `srrip` under `llc.gpu_write_rules` (SRRIP inside
    /// [`HeteroWrites`]) is `drp-baseline`, access for access and counter for counter, on a
    /// stream of every agent, stream and operation.
    #[test]
    fn srrip_with_the_write_rules_is_the_baseline() {
        let cx = ctx(64, 4);
        let wrapped = HeteroWrites::wrap(Srrip::build(&cx).unwrap(), &cx).unwrap();
        let mut w = cache(64, 4, wrapped);
        let mut b = cache_of::<DrpBaseline>(64, 4);
        let mut rng = crate::policies::util::SplitMix64::new(5);
        for i in 0..20000 {
            let line = rng.below(2048) as u64;
            let op = Op::ALL[rng.below(Op::COUNT)];
            let a = if rng.below(3) == 0 {
                Access::new(Agent::cpu(0), Stream::CpuData, op, line * LINE, 8)
            } else {
                gpu(Stream::ALL[rng.below(Stream::COUNT)], op, line)
            };
            assert_eq!(run(&mut w, &a), run(&mut b, &a), "access {i}");
        }
        assert_eq!(w.policy().stats(), b.policy().stats());
        assert!(b
            .policy()
            .stats()
            .iter()
            .any(|(k, v)| k == "depth_write_bypasses" && *v > 0.0));
    }
}
