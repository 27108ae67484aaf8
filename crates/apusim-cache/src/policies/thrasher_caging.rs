//! Thrasher Caging (TC, Xie and Loh, HiPEAC 2010), the comparator of tap-tlp-aware-llc.txt
//! §2.3.1 and §5.7: "TC identifies thrashing applications by monitoring cache access frequency
//! and the number of misses and then enforces streaming/thrashing applications to use a
//! limited number of cache ways, called the cage."
//!
//! Every period ([`super::core_sampling::Epoch`]) the stream detector
//! ([`super::core_sampling::StreamDetector`]: at least `stream_min_misses` = 4095 misses at a
//! miss rate of at least `stream_miss_rate` = 1/8) classifies each agent. The thrashers of the
//! last period share a cage of `cage_ways` (default 1) ways per thrasher, at most `ways − 1`;
//! everyone else shares the rest. Replacement enforces the two classes as
//! [`StackLru`] does (a class below its share evicts the other class's LRU
//! line, otherwise its own LRU line); lines are ordered by true LRU, fills and hits at MRU.
//!
//! Choices where the papers are silent: the cage grows by `cage_ways` per thrasher; with no
//! thrasher, or when every agent thrashes, nothing is caged (plain LRU); a line's class is
//! that of its filling agent now (a reclassified agent's old lines move with it).
//!
//! # Where the constants come from
//!
//! The original paper (Xie and Loh, "Scalable shared-cache management by containing thrashing
//! workloads", HiPEAC 2010, LNCS 5952, pp. 262-276) is not in `shared/papers`. A search of
//! public sources (November 2026) found only its abstract (e.g. sciweavers.org, node 57100):
//! "major performance problems only arise when one or more 'thrashing' applications exist ...
//! Thrasher Caging (TC) ... specifically targets these thrashing applications". Neither the
//! cage size nor the thrasher-classification thresholds are public, and no implementation was
//! found. The classification therefore reuses PIPP's streaming test (same authors, one year
//! earlier: θm = 4095, θmr = 1/8, see [`super::pipp`]) and the cage is one way per thrasher
//! (`cage_ways`), both unverified choices.

use super::core_sampling::{self, Epoch, StreamDetector};
use super::stack_lru::{StackLru, StackRule};
use super::umon::{LruStack, QuotaScratch};
use super::util::{agent_slot, is_demand};
use crate::params::{ParamKind, ParamList, ParamSpec};
use crate::{CacheError, Feedback, MissAction, PolicyContext, PolicyStat};
use apusim_trace::{Access, Agent};

/// Thrasher caging: [`StackLru`] with the cage.
pub type ThrasherCaging = StackLru<Cage>;

/// The cage: the thrashers of the last period (class 1) and everyone else (class 0), and
/// their ways.
pub struct Cage {
    ways: usize,
    n_cpus: usize,
    epoch: Epoch,
    stream: StreamDetector,
    cage_per: usize,
    /// Ways of the cage (0: nothing caged); targets are `[ways - cage, cage]`.
    targets: [usize; 2],
    scratch: QuotaScratch,
}

impl Cage {
    /// Ways of the cage now (0 when nothing is caged).
    pub fn cage(&self) -> usize {
        self.targets[1]
    }
    pub fn end_period(&mut self) {
        self.stream.end_period();
        let n = self.stream.count_streaming();
        let cage = if n == 0 || n == self.n_cpus + 1 {
            0
        } else {
            (n * self.cage_per).min(self.ways - 1)
        };
        self.targets = [self.ways - cage, cage];
        for b in 0..=Agent::GPU_ID {
            let a = Agent::from_byte(b).unwrap_or_default();
            let thrasher = self.stream.streaming(agent_slot(a, self.n_cpus));
            self.scratch.set_class(a, thrasher as usize);
        }
    }
    #[inline]
    fn observe(&mut self, req: &Access, hit: bool) {
        if is_demand(req.op) {
            self.stream.record(req.agent, hit);
        }
        if self.epoch.on_access() {
            self.end_period();
        }
    }
}

/// Ways of the cage per thrashing agent: one (tap §5.7's TC, after Xie and Loh HiPEAC 2010).
const CAGE_WAYS: ParamSpec = ParamSpec {
    name: "cage_ways",
    kind: ParamKind::Int {
        min: 1,
        max: LruStack::MAX_WAYS as u64,
    },
    default: "1",
    unit: "ways",
    doc: "ways the shared cage grows by per thrashing agent (tap §5.7)",
};

impl StackRule for Cage {
    fn params(list: &mut ParamList) {
        core_sampling::declare(list, false, true);
        list.add(&[CAGE_WAYS]);
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        if ctx.ways > LruStack::MAX_WAYS {
            return Err(CacheError::Config(format!(
                "thrasher caging serves at most {} ways",
                LruStack::MAX_WAYS
            )));
        }
        Ok(Cage {
            ways: ctx.ways,
            n_cpus: ctx.n_cpus,
            epoch: Epoch::from_ctx(ctx)?,
            stream: StreamDetector::from_ctx(ctx)?,
            cage_per: ctx.int(&CAGE_WAYS)? as usize,
            targets: [ctx.ways, 0],
            scratch: QuotaScratch::new(2, ctx.ways),
        })
    }
    #[inline]
    fn on_hit(&mut self, _set: usize, req: &Access) {
        self.observe(req, true);
    }
    #[inline]
    fn on_miss(&mut self, _set: usize, req: &Access) -> MissAction {
        self.observe(req, false);
        MissAction::Allocate
    }
    #[inline]
    fn quota(&mut self) -> Option<(&[usize], &mut QuotaScratch)> {
        if self.targets[1] == 0 {
            return None;
        }
        Some((&self.targets, &mut self.scratch))
    }
    fn on_feedback(&mut self, fb: &Feedback) {
        if self.epoch.on_feedback(fb) {
            self.end_period();
        }
    }
    fn stats(&self) -> Vec<PolicyStat> {
        vec![
            ("cage_ways".into(), self.targets[1] as f64),
            (
                "thrashing_agents".into(),
                self.stream.count_streaming() as f64,
            ),
            ("periods".into(), self.epoch.periods as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::super::util::test_support::*;
    use super::*;
    use crate::Policy;
    use apusim_trace::{Op, Stream};

    fn gpu_read(l: u64) -> Access {
        gpu(Stream::ShaderData, Op::Read, l)
    }

    /// 4 ways, one CPU and the GPU. The GPU streams (8 misses) while the CPU reuses 2 lines:
    /// the GPU is caged in one way. Afterwards GPU misses replace GPU lines only, and CPU
    /// misses take GPU lines until the CPU holds 3.
    #[test]
    fn a_thrashing_gpu_is_caged_in_one_way() {
        let mut cx = ctx(1, 4);
        cx.params.insert("period_accesses".into(), 1e9);
        cx.params.insert("stream_min_misses".into(), 8.0);
        let mut c = cache(1, 4, ThrasherCaging::build(&cx).unwrap());
        for l in [0, 1, 0, 1] {
            run(&mut c, &cpu_read(l));
        }
        for l in 100..108 {
            run(&mut c, &gpu_read(l));
        }
        assert_eq!(c.policy().cage(), 0, "no period yet: plain LRU");
        c.policy_mut().end_period();
        assert_eq!(c.policy().cage(), 1);
        // The set holds GPU 104..107. A CPU miss evicts the GPU's LRU (104), and so on.
        assert_eq!(run(&mut c, &cpu_read(0)), Did::Fill(Some(104)));
        assert_eq!(run(&mut c, &cpu_read(1)), Did::Fill(Some(105)));
        assert_eq!(run(&mut c, &cpu_read(2)), Did::Fill(Some(106)));
        // The GPU is at its cage: its misses cycle through its one way.
        assert_eq!(run(&mut c, &gpu_read(200)), Did::Fill(Some(107)));
        assert_eq!(run(&mut c, &gpu_read(201)), Did::Fill(Some(200)));
        // The CPU at its share (3) replaces its own LRU line, not the newer GPU line.
        assert_eq!(run(&mut c, &cpu_read(3)), Did::Fill(Some(0)));
        // A quiet period releases the cage.
        c.policy_mut().end_period();
        assert_eq!(c.policy().cage(), 0);
    }

    #[test]
    fn cage_grows_per_thrasher_and_everyone_thrashing_cages_nobody() {
        let mut cx = ctx(1, 8);
        cx.n_cpus = 2;
        cx.params.insert("period_accesses".into(), 1e9);
        cx.params.insert("stream_min_misses".into(), 2.0);
        cx.params.insert("cage_ways".into(), 2.0);
        let mut c = cache(1, 8, ThrasherCaging::build(&cx).unwrap());
        let core1 = |l: u64| {
            Access::new(
                apusim_trace::Agent::cpu(1),
                Stream::CpuData,
                Op::Read,
                l * LINE,
                8,
            )
        };
        for l in 0..2 {
            run(&mut c, &gpu_read(100 + l));
            run(&mut c, &core1(200 + l));
        }
        c.policy_mut().end_period();
        assert_eq!(c.policy().cage(), 4, "two thrashers, two ways each");
        for l in 0..2 {
            run(&mut c, &gpu_read(300 + l));
            run(&mut c, &core1(400 + l));
            run(&mut c, &cpu_read(500 + l));
        }
        c.policy_mut().end_period();
        assert_eq!(c.policy().cage(), 0, "all three thrash");
    }

    /// One set of 4 ways, one CPU and the GPU, 16-access periods ended by the access count,
    /// θm = 4 misses.
    fn counted() -> crate::Cache<ThrasherCaging> {
        let mut cx = ctx(1, 4);
        cx.params.insert("period_accesses".into(), 16.0);
        cx.params.insert("stream_min_misses".into(), 4.0);
        cache(1, 4, ThrasherCaging::build(&cx).unwrap())
    }

    /// The `tc` = `lru` twins. TC is LRU until a period ends (a run shorter than
    /// `period_accesses` has `periods` = 0), and after it whenever nobody or every agent
    /// thrashes (mix S16 at scale 2, one CPU and the GPU: `thrashing_agents` = 2, `cage_ways`
    /// = 0). Period 1 (16 accesses): the GPU streams 100..=109; the CPU re-reads 0 1 (2
    /// misses: not a thrasher) or streams 0..=5 (6 misses: a thrasher too). Caged (only the
    /// GPU thrashes): after CPU 0 1 2 and GPU 200, which match LRU, GPU 201 replaces the
    /// GPU's own 200 (the cage is full) where LRU evicts the CPU's 0, which then hits under TC
    /// only. Both thrashing: no cage, LRU's outcome on every access.
    #[test]
    fn tc_differs_from_lru_only_with_a_period_and_a_thrasher_to_cage() {
        use crate::policies::lru::Lru;
        let gpu_stream = (100..110).map(gpu_read);
        let after: Vec<Access> = [0, 1, 2]
            .map(cpu_read)
            .into_iter()
            .chain([200, 201].map(gpu_read))
            .chain([cpu_read(0)])
            .collect();
        // Only the GPU thrashes.
        let mut t = counted();
        let mut l = cache_of::<Lru>(1, 4);
        let period: Vec<Access> = [0, 1, 0, 1, 0, 1]
            .map(cpu_read)
            .into_iter()
            .chain(gpu_stream.clone())
            .collect();
        for (i, a) in period.iter().enumerate() {
            if i == 15 {
                assert_eq!(t.policy().cage(), 0, "LRU until the period ends");
            }
            assert_eq!(run(&mut t, a), run(&mut l, a), "access {i}");
        }
        assert_eq!(t.policy().cage(), 1);
        for a in &after[..4] {
            assert_eq!(run(&mut t, a), run(&mut l, a));
        }
        assert_eq!(run(&mut l, &after[4]), Did::Fill(Some(0)));
        assert_eq!(run(&mut t, &after[4]), Did::Fill(Some(200)));
        // The caged GPU left the CPU's 0 in place.
        assert_eq!(run(&mut l, &after[5]), Did::Fill(Some(1)));
        assert_eq!(run(&mut t, &after[5]), Did::Hit);
        // Both thrash: nothing to protect, nothing caged.
        let mut t = counted();
        let mut l = cache_of::<Lru>(1, 4);
        let period = (0..6).map(cpu_read).chain(gpu_stream);
        for (i, a) in period.chain(after).enumerate() {
            assert_eq!(run(&mut t, &a), run(&mut l, &a), "access {i}");
        }
        let st = t.policy().stats();
        assert!(st.contains(&("thrashing_agents".to_string(), 2.0)));
        assert!(st.contains(&("cage_ways".to_string(), 0.0)));
        assert!(st.contains(&("periods".to_string(), 1.0)));
    }
}
