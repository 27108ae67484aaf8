//! DynPrio, the dynamic priority scheduler of Jeong et al. ("A QoS-aware memory controller
//! for dynamically balancing GPU and CPU bandwidth use in an MPSoC", DAC 2012), as
//! gpu-access-criticality compares against it (§2, §6.1.4).
//!
//! The GPU's priority follows its progress through the current frame. gpu-access-criticality
//! §2: the scheduler "offers the GPU accesses equal priority as the CPU accesses if the GPU
//! lags behind the target frame rendering time. Also, during the last 10% of the left time to
//! render a frame, the GPU accesses are given higher priority than the CPU accesses"; the
//! baseline it improves on gives the CPU priority, so a GPU on track ranks below the CPU.
//! §6.1.4 lets DynPrio "use our frame rate estimation technique to compute the time left in a
//! frame", and explains its result by it offering "express bandwidth to the GPU application
//! only during the last 10% of a frame time". So, with the frame of [`SchedHints::frame`]:
//!
//! | GPU state at the decision cycle | GPU class | CPU class |
//! |---|---|---|
//! | last `express` share of the estimated frame time (elapsed ≥ (1 − express) × estimated) | 0 (express) | 1 |
//! | behind: progress below the elapsed fraction of the target period | 1 (equal) | 1 |
//! | on track, or no frame known | 2 | 1 |
//!
//! Classes come first, then row hits, then age (priority levels over FR-FCFS); a precharge
//! waits while its bank has a pending hit of its class or a better one (the shared
//! class-first ranking).
//! Jeong et al. track progress with tile counts of a tile-based renderer; here progress and
//! the estimate come from the system's frame-rate estimator through the hints. The class of
//! the GPU changes with time as the frame elapses, so the scheduler also wakes at the cycles
//! where it changes. Stateless otherwise; it ignores the critical flag.
//!
//! [`SchedHints::frame`]: super::SchedHints::frame

use super::ranked::{is_cpu, next_class_first, pick_class_first, HitClasses};
use super::{Candidate, SchedContext, Scheduler};
use apusim_registry::{ParamKind, ParamSpec, Params};

/// Parameters of `dynprio`.
pub const PARAMS: [ParamSpec; 1] = [ParamSpec {
    name: "express",
    kind: ParamKind::Float { min: 0.0, max: 1.0 },
    default: "0.1",
    unit: "",
    doc: "share at the end of the estimated frame time in which the GPU has express (highest) priority",
}];

#[derive(Debug)]
pub struct DynPrio {
    express: f64,
    hits: HitClasses,
}

impl DynPrio {
    pub fn new(p: &Params) -> Self {
        DynPrio {
            express: p.float("express"),
            hits: HitClasses::default(),
        }
    }

    /// The GPU's class at `ctx.now` (the CPU's is 1).
    fn gpu_class(&self, ctx: &SchedContext) -> u8 {
        match ctx.hints.frame {
            Some(f) if ctx.now >= f.estimated_at(1.0 - self.express) => 0,
            Some(f) if f.behind(ctx.now) => 1,
            _ => 2,
        }
    }

    /// The cycles after `ctx.now` at which the GPU's class changes, earliest first.
    fn next_change(&self, ctx: &SchedContext) -> u64 {
        ctx.hints.frame.map_or(u64::MAX, |f| {
            [f.estimated_at(1.0 - self.express), f.behind_at()]
                .into_iter()
                .filter(|&t| t > ctx.now)
                .min()
                .unwrap_or(u64::MAX)
        })
    }

    fn next_with(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Option<u64> {
        let gpu = self.gpu_class(ctx);
        let class = move |c: &Candidate| if is_cpu(c) { 1 } else { gpu };
        self.hits.fill(ctx, cands, &class);
        let t = next_class_first(ctx, cands, class, &self.hits).unwrap_or(u64::MAX);
        let t = t.min(self.next_change(ctx));
        (t != u64::MAX).then_some(t)
    }
}

impl Scheduler for DynPrio {
    fn name(&self) -> &'static str {
        "dynprio"
    }
    fn uses_hints(&self) -> bool {
        true
    }
    fn pick(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Option<usize> {
        let gpu = self.gpu_class(ctx);
        let class = move |c: &Candidate| if is_cpu(c) { 1 } else { gpu };
        self.hits.fill(ctx, cands, &class);
        pick_class_first(ctx, cands, class, &self.hits)
    }
    /// The earliest ready candidate the classes of `ctx.now` allow, or the next change of
    /// the GPU's class if that is sooner.
    fn next_decision(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Option<u64> {
        self.next_with(ctx, cands)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::test_util::Scene;
    use crate::scheduler::FrameHint;

    fn dynprio() -> DynPrio {
        let e = crate::scheduler::scheduler_entry("dynprio").unwrap();
        DynPrio::new(&e.params(&toml::Table::new()).unwrap())
    }

    /// An older GPU hit and a younger CPU hit in bank 0, with a frame of period 1000 from
    /// cycle 0 whose work is 50% done and estimated at 1.2 periods.
    fn scene() -> Scene {
        let mut s = Scene::new(8).bank(0, Some(4), 0, 0, 0).gpu(0, 4).cpu(0, 4);
        s.hints.frame = Some(FrameHint {
            start: 0,
            period: 1000,
            progress: 0.5,
            estimated: 1.2,
        });
        s
    }

    #[test]
    fn gpu_priority_follows_the_frame() {
        let mut d = dynprio();
        let s = scene();
        // On track (elapsed 0.3 < progress 0.5): the CPU first.
        assert_eq!(d.pick(&s.ctx(300), &s.cands), Some(1));
        // Behind (elapsed 0.6 > 0.5): equal priority, the older GPU hit first.
        assert_eq!(d.pick(&s.ctx(600), &s.cands), Some(0));
        // No frame: on track.
        let mut none = scene();
        none.hints.frame = None;
        assert_eq!(d.pick(&none.ctx(600), &none.cands), Some(1));
        // Express from 90% of the estimated 1.2 periods (cycle 1080), even on track.
        let mut ahead = scene();
        ahead.hints.frame.as_mut().unwrap().progress = 1.0;
        assert_eq!(d.pick(&ahead.ctx(1079), &ahead.cands), Some(1));
        let s = Scene::new(8)
            .bank(0, Some(4), 0, 0, 0)
            .bank(1, None, 0, 0, 0)
            .cpu(0, 4)
            .gpu(1, 7);
        let mut s = s;
        s.hints = ahead.hints;
        // Express beats a row hit: the GPU's ACT before the CPU's RD.
        assert_eq!(d.pick(&s.ctx(1080), &s.cands), Some(1));
        assert_eq!(d.pick(&s.ctx(1079), &s.cands), Some(0));
    }

    #[test]
    fn express_gpu_may_close_a_cpu_row() {
        // Bank 0: row 4 open with a CPU hit whose RD waits until 2000; the GPU needs row 7.
        let mut s = Scene::new(8)
            .bank(0, Some(4), 0, 0, 2000)
            .cpu(0, 4)
            .gpu(0, 7);
        s.hints = scene().hints;
        let mut d = dynprio();
        // On track at 300: the GPU's PRE waits for the CPU hit; the next decision is the
        // GPU's class change at cycle 501 (behind: equal class, still held back) ...
        assert_eq!(d.pick(&s.ctx(300), &s.cands), None);
        assert_eq!(
            crate::scheduler::test_util::plan(&mut d, &s.ctx(300), &s.cands),
            Some((501, None))
        );
        // ... then express at 1080, when the PRE may close the CPU's row.
        assert_eq!(
            crate::scheduler::test_util::plan(&mut d, &s.ctx(501), &s.cands),
            Some((1080, Some(1)))
        );
        assert_eq!(d.next_decision(&s.ctx(501), &s.cands), Some(1080));
    }
}
