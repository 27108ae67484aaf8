//! DASH, the deadline-aware memory scheduler for heterogeneous systems of Usui et al. ("DASH:
//! Deadline-Aware High-Performance Memory Scheduler for Heterogeneous Systems with Hardware
//! Accelerators", TACO 2016), as gpu-access-criticality compares against it (§2, §6.1.4), with
//! the GPU as its one hardware accelerator.
//!
//! DASH's three ideas, as gpu-access-criticality §2 sums them up: "(i) always offering higher
//! priority to a GPU application that lags behind the target, (ii) offering the highest
//! priority to short-deadline applications, and (iii) distinguishing between latency-sensitive
//! and bandwidth-sensitive CPU workloads". Its priority order, classes first, then row hits,
//! then age:
//!
//! | class | requests |
//! |---|---|
//! | 0 | the GPU while urgent: behind its target (progress below the elapsed fraction of the target period), or in the last `1 − emergent` of its estimated frame time |
//! | 1 | memory-non-intensive CPU sources |
//! | 2 | the GPU while not urgent (no frame known: never urgent) |
//! | 3 | memory-intensive CPU sources |
//!
//! A precharge waits while its bank has a pending hit of its class or a better one. A GPU
//! that misses its frame target is behind most of the frame, so "DASH prioritizes the GPU
//! accesses throughout the execution" (gpu-access-criticality §6.1.4).
//!
//! Simplifications (the paper's mechanisms that a single 3D GPU next to CPU cores does not
//! need, or that the DRAM model cannot see):
//! * Progress comes from the system's frame-rate estimator through [`SchedHints::frame`]
//!   (gpu-access-criticality §6.1.4: "We let DynPrio and DASH use our frame rate estimation
//!   technique to compute the time left in a frame"), not from DASH's count of the
//!   accelerator's memory requests against a profiled total.
//! * There is one accelerator, a long-deadline one: no short-deadline class, no worst-case
//!   access-time estimates.
//! * CPU intensity: every `interval` DRAM cycles (default 100,000) the CPU sources are ranked
//!   by the requests of theirs the scheduler served in the last interval, fewest first, and
//!   the least intensive ones whose requests add up to at most `cluster` (default 0.2) of all
//!   CPU requests served form the non-intensive cluster (the clustering of TCM, which DASH
//!   uses, with served requests standing in for MPKI and bandwidth). Sources without requests
//!   in the last interval are non-intensive.
//! * No probabilistic switching between non-urgent GPU and intensive CPU requests and no
//!   shuffling among the intensive CPU sources: the order above is fixed.
//!
//! The GPU's class changes with time as the frame elapses, and the clusters at interval
//! boundaries, so the scheduler also wakes at those cycles.
//!
//! [`SchedHints::frame`]: super::SchedHints::frame

use super::intervals::{interval_param, ServedCounts};
use super::ranked::{is_cpu, next_class_first, pick_class_first, HitClasses};
use super::{Candidate, RowStatus, SchedContext, Scheduler};
use apusim_registry::{ParamKind, ParamSpec, Params};

/// Parameters of `dash`.
pub const PARAMS: [ParamSpec; 3] = [
    ParamSpec {
        name: "emergent",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: "0.9",
        unit: "",
        doc: "fraction of the estimated frame time after which the GPU is urgent even if on track",
    },
    ParamSpec {
        name: "cluster",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: "0.2",
        unit: "",
        doc: "share of the CPU requests served by the non-intensive cluster at most",
    },
    interval_param("length of the intervals over which CPU intensity is measured"),
];

/// The memory-intensive CPU sources (bit `n` for source `n`) of per-source served counts:
/// all but the least intensive ones whose counts add up to at most `cluster` of the total.
pub(crate) fn intensive_mask(counts: &[u32], cluster: f64) -> u128 {
    let mut cpus: Vec<(u32, u8)> = (0..0x80u8)
        .map(|s| (counts[s as usize], s))
        .filter(|&(n, _)| n > 0)
        .collect();
    let total: u64 = cpus.iter().map(|&(n, _)| u64::from(n)).sum();
    cpus.sort_unstable();
    let budget = cluster * total as f64;
    let mut sum = 0u64;
    let mut mask = 0u128;
    for (n, s) in cpus {
        sum += u64::from(n);
        if sum as f64 > budget {
            mask |= 1 << s;
        }
    }
    mask
}

#[derive(Debug)]
pub struct Dash {
    emergent: f64,
    cluster: f64,
    counts: ServedCounts,
    /// The intensive CPU sources of the interval of `counts` (from the one before it).
    intensive_cur: u128,
    hits: HitClasses,
}

impl Dash {
    pub fn new(p: &Params) -> Self {
        Dash {
            emergent: p.float("emergent"),
            cluster: p.float("cluster"),
            counts: ServedCounts::new(p.int("interval")),
            intensive_cur: 0,
            hits: HitClasses::default(),
        }
    }

    /// The memory-intensive CPU sources at cycle `now`.
    pub fn intensive_at(&self, now: u64) -> u128 {
        match self.counts.history_at(now) {
            Some((_, true)) => self.intensive_cur,
            Some((counts, false)) => intensive_mask(counts, self.cluster),
            None => 0,
        }
    }

    /// Is the GPU urgent at `ctx.now`?
    fn urgent(&self, ctx: &SchedContext) -> bool {
        ctx.hints
            .frame
            .is_some_and(|f| f.behind(ctx.now) || ctx.now >= f.estimated_at(self.emergent))
    }

    /// The class function of the decision at `ctx.now`.
    fn classes(&self, ctx: &SchedContext) -> impl Fn(&Candidate) -> u8 {
        let gpu = if self.urgent(ctx) { 0 } else { 2 };
        let intensive = self.intensive_at(ctx.now);
        move |c: &Candidate| {
            if is_cpu(c) {
                1 + 2 * ((intensive >> c.req.source) & 1) as u8
            } else {
                gpu
            }
        }
    }

    /// The next cycle after `ctx.now` at which a class may change.
    fn next_change(&self, ctx: &SchedContext) -> u64 {
        let frame = ctx.hints.frame.map_or(u64::MAX, |f| {
            [f.estimated_at(self.emergent), f.behind_at()]
                .into_iter()
                .filter(|&t| t > ctx.now)
                .min()
                .unwrap_or(u64::MAX)
        });
        frame.min(self.counts.next_boundary(ctx.now))
    }

    fn next_with(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Option<u64> {
        let class = self.classes(ctx);
        self.hits.fill(ctx, cands, &class);
        let t = next_class_first(ctx, cands, class, &self.hits).unwrap_or(u64::MAX);
        let t = t.min(self.next_change(ctx));
        (t != u64::MAX).then_some(t)
    }
}

impl Scheduler for Dash {
    fn name(&self) -> &'static str {
        "dash"
    }
    fn uses_hints(&self) -> bool {
        true
    }
    fn pick(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Option<usize> {
        let class = self.classes(ctx);
        self.hits.fill(ctx, cands, &class);
        pick_class_first(ctx, cands, class, &self.hits)
    }
    /// The earliest ready candidate the classes of `ctx.now` allow, or the next change of a
    /// class if that is sooner.
    fn next_decision(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Option<u64> {
        self.next_with(ctx, cands)
    }
    /// Counts the requests served per source (column commands) for the CPU clusters.
    fn on_issue(&mut self, ctx: &SchedContext, cands: &[Candidate], picked: usize) {
        if self.counts.roll(ctx.now) {
            self.intensive_cur = match self.counts.history_at(ctx.now) {
                Some((counts, _)) => intensive_mask(counts, self.cluster),
                None => 0,
            };
        }
        let c = &cands[picked];
        if ctx.status(c) == RowStatus::Hit {
            self.counts.record(c.req.source);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::test_util::Scene;
    use crate::scheduler::FrameHint;

    fn dash(interval: u64) -> Dash {
        let e = crate::scheduler::scheduler_entry("dash").unwrap();
        let mut t = toml::Table::new();
        t.insert("interval".into(), (interval as i64).into());
        Dash::new(&e.params(&t).unwrap())
    }

    /// A frame from cycle 1000 with a period of 1000 cycles, estimated on target.
    fn frame(progress: f64) -> Option<FrameHint> {
        Some(FrameHint {
            start: 1000,
            period: 1000,
            progress,
            estimated: 1.0,
        })
    }

    #[test]
    fn clusters_put_the_lightest_sources_under_the_share() {
        let mut counts = vec![0u32; 256];
        // 100 requests in all: sources 1 (5), 2 (10), 3 (25), 4 (60), GPU ignored.
        for (s, n) in [(1, 5), (2, 10), (3, 25), (4, 60), (0x80, 500)] {
            counts[s] = n;
        }
        // 20% of 100: sources 1 and 2 (15) fit, 3 would bring 40.
        assert_eq!(intensive_mask(&counts, 0.2), (1 << 3) | (1 << 4));
        assert_eq!(intensive_mask(&counts, 0.0), 0b11110);
        assert_eq!(intensive_mask(&counts, 1.0), 0);
        assert_eq!(intensive_mask(&[0; 256], 0.2), 0);
    }

    /// A GPU hit, a hit of CPU source 1 and one of source 2, oldest first, in bank 0.
    fn scene(progress: f64) -> Scene {
        let mut s = Scene::new(8)
            .bank(0, Some(4), 0, 0, 0)
            .gpu(0, 4)
            .req(0, 4, 1, false)
            .req(0, 4, 2, false);
        s.hints.frame = frame(progress);
        s
    }

    #[test]
    fn urgent_gpu_first_then_light_cpu_then_gpu_then_heavy_cpu() {
        let mut d = dash(1000);
        // Make source 1 intensive: it had 9 of the 10 CPU requests of interval 0.
        let busy = Scene::new(8)
            .bank(0, Some(4), 0, 0, 0)
            .req(0, 4, 1, false)
            .req(0, 4, 2, false);
        for t in 0..9 {
            d.on_issue(&busy.ctx(t), &busy.cands, 0);
        }
        d.on_issue(&busy.ctx(9), &busy.cands, 1);
        assert_eq!(d.intensive_at(500), 0, "interval 0 has no history");
        assert_eq!(d.intensive_at(1500), 1 << 1);
        // Behind at 1500 (elapsed 0.5 > progress 0.25): the urgent GPU first.
        let s = scene(0.25);
        assert_eq!(d.pick(&s.ctx(1500), &s.cands), Some(0));
        // On track (progress 1): non-intensive source 2 first, then the GPU, then source 1.
        let s = scene(1.0);
        assert_eq!(d.pick(&s.ctx(1500), &s.cands), Some(2));
        let s = Scene::new(8)
            .bank(0, Some(4), 0, 0, 0)
            .gpu(0, 4)
            .req(0, 4, 1, false);
        let mut s = s;
        s.hints.frame = frame(1.0);
        assert_eq!(d.pick(&s.ctx(1500), &s.cands), Some(0));
        // No frame: the GPU is not urgent.
        let mut s = scene(0.5);
        s.hints.frame = None;
        assert_eq!(d.pick(&s.ctx(1500), &s.cands), Some(2));
    }

    #[test]
    fn urgent_near_the_end_of_the_estimated_frame() {
        let d = dash(100_000);
        let s = scene(1.0);
        // On track but past 90% of the estimated frame time (cycle 1900).
        assert!(!d.urgent(&s.ctx(1899)) && d.urgent(&s.ctx(1900)));
        let mut d = d;
        assert_eq!(d.pick(&s.ctx(1899), &s.cands), Some(1));
        assert_eq!(d.pick(&s.ctx(1900), &s.cands), Some(0));
        // The plan wakes at the change even with nothing ready before it.
        let mut late = Scene::new(8)
            .bank(0, Some(4), 0, 0, 0)
            .bank(1, Some(3), 0, 0, 5000)
            .req(1, 3, 1, false)
            .gpu(0, 7);
        late.hints.frame = frame(1.0);
        // The GPU's PRE (class 2) may close row 4 (no pending hit there) at once.
        assert_eq!(
            crate::scheduler::test_util::plan(&mut d, &late.ctx(1010), &late.cands),
            Some((1010, Some(1)))
        );
        let mut held = Scene::new(8)
            .bank(0, Some(4), 0, 0, 5000)
            .req(0, 4, 1, false)
            .gpu(0, 7);
        held.hints.frame = frame(1.0);
        // Not urgent: the GPU PRE waits for the non-intensive CPU hit (class 1) ... until
        // the GPU turns urgent at 1900.
        assert_eq!(
            crate::scheduler::test_util::plan(&mut d, &held.ctx(1010), &held.cands),
            Some((1900, Some(1)))
        );
        assert_eq!(d.next_decision(&held.ctx(1010), &held.cands), Some(1900));
    }
}
