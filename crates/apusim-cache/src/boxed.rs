//! A policy behind a pointer: one concrete [`Policy`] type, [`BoxedPolicy`], that any policy
//! can be turned into.
//!
//! The functional hierarchy instantiates its access loop for each policy's own type so the
//! hooks inline into it ([`crate::policies::PolicyVisitor`]). The timed engine does not: its
//! cost per LLC access is the event machinery around the access (queues, MSHRs, the ring, the
//! DRAM controller), not the policy's hook, and instantiating that engine for each of the
//! registry's policies (and each again under the heterogeneous write rules) made its crate's
//! release build several minutes long. The timed engine therefore runs every policy as a
//! `BoxedPolicy`: one instantiation, one virtual call per hook.

use crate::policy::{Evicted, Feedback, MissAction, Policy, PolicyContext, PolicyStat, SetView};
use crate::CacheError;
use apusim_trace::Access;

/// The hooks of [`Policy`] that a running policy answers: everything but the constructor and
/// the static facts the registry reads before building one.
trait Hooks: Send {
    fn on_hit(&mut self, set: usize, way: usize, req: &Access);
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction;
    fn victim(&mut self, set: usize, req: &Access, view: &SetView<'_>) -> usize;
    fn on_evict(&mut self, set: usize, way: usize, victim: &Evicted);
    fn on_fill(&mut self, set: usize, way: usize, req: &Access);
    fn on_feedback(&mut self, fb: &Feedback);
    fn prefetch_set(&self, set: usize);
    fn prefetch_way(&self, set: usize, way: usize);
    fn stats(&self) -> Vec<PolicyStat>;
}

impl<P: Policy> Hooks for P {
    fn on_hit(&mut self, set: usize, way: usize, req: &Access) {
        Policy::on_hit(self, set, way, req)
    }
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        Policy::on_miss(self, set, req)
    }
    fn victim(&mut self, set: usize, req: &Access, view: &SetView<'_>) -> usize {
        Policy::victim(self, set, req, view)
    }
    fn on_evict(&mut self, set: usize, way: usize, victim: &Evicted) {
        Policy::on_evict(self, set, way, victim)
    }
    fn on_fill(&mut self, set: usize, way: usize, req: &Access) {
        Policy::on_fill(self, set, way, req)
    }
    fn on_feedback(&mut self, fb: &Feedback) {
        Policy::on_feedback(self, fb)
    }
    fn prefetch_set(&self, set: usize) {
        Policy::prefetch_set(self, set)
    }
    fn prefetch_way(&self, set: usize, way: usize) {
        Policy::prefetch_way(self, set, way)
    }
    fn stats(&self) -> Vec<PolicyStat> {
        Policy::stats(self)
    }
}

/// Any policy, built by the registry ([`crate::policies::build`]) and then boxed; it answers
/// every hook as the policy inside does.
pub struct BoxedPolicy(Box<dyn Hooks>);

impl BoxedPolicy {
    /// Box `policy` (already built, and wrapped in the heterogeneous write rules where the
    /// registry does that).
    pub fn new<P: Policy>(policy: P) -> Self {
        BoxedPolicy(Box::new(policy))
    }
}

impl Policy for BoxedPolicy {
    /// A boxed policy has no constructor of its own: the registry builds the policy inside.
    fn build(_ctx: &PolicyContext) -> Result<Self, CacheError> {
        Err(CacheError::Config(
            "a boxed policy is built by boxing a policy the registry built".into(),
        ))
    }

    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, req: &Access) {
        self.0.on_hit(set, way, req)
    }
    #[inline]
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        self.0.on_miss(set, req)
    }
    #[inline]
    fn victim(&mut self, set: usize, req: &Access, view: &SetView<'_>) -> usize {
        self.0.victim(set, req, view)
    }
    #[inline]
    fn on_evict(&mut self, set: usize, way: usize, victim: &Evicted) {
        self.0.on_evict(set, way, victim)
    }
    #[inline]
    fn on_fill(&mut self, set: usize, way: usize, req: &Access) {
        self.0.on_fill(set, way, req)
    }
    #[inline]
    fn on_feedback(&mut self, fb: &Feedback) {
        self.0.on_feedback(fb)
    }
    #[inline]
    fn prefetch_set(&self, set: usize) {
        self.0.prefetch_set(set)
    }
    #[inline]
    fn prefetch_way(&self, set: usize, way: usize) {
        self.0.prefetch_way(set, way)
    }
    fn stats(&self) -> Vec<PolicyStat> {
        self.0.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::layout_tests::{self, steps, Did, Step};
    use crate::policies::{build, PolicyVisitor, REGISTRY};
    use crate::{Cache, CacheCounters, Geometry, WritePolicy};

    type Run = (Vec<Did>, CacheCounters, Vec<PolicyStat>);

    /// Replays `steps` through a cache of the visited policy, boxed or as its own type.
    struct Replay<'a> {
        geometry: Geometry,
        steps: &'a [Step],
        boxed: bool,
    }

    impl PolicyVisitor for Replay<'_> {
        type Output = Run;
        fn visit<P: Policy>(self, p: P) -> Run {
            if self.boxed {
                replay(self.geometry, self.steps, BoxedPolicy::new(p))
            } else {
                replay(self.geometry, self.steps, p)
            }
        }
    }

    fn replay<P: Policy>(geometry: Geometry, steps: &[Step], p: P) -> Run {
        let mut c = Cache::new(geometry, WritePolicy::default(), false, p).unwrap();
        let did = layout_tests::replay(&mut c, steps);
        (did, *c.counters(), c.policy().stats())
    }

    /// Every policy, with and without the heterogeneous write rules, over the random reads,
    /// writes, prefetches and back-invalidations of four cores and the GPU that the layout
    /// tests replay.
    #[test]
    fn every_policy_boxed_decides_as_its_own_type() {
        let geometry = Geometry::new(64 * 8 * 64, 8, 64);
        let stream = steps(11, 6000, 64 * 8 * 2, 97);
        for rules in [false, true] {
            for info in REGISTRY.iter() {
                let run = |boxed| {
                    let mut ctx = PolicyContext::for_geometry(&geometry);
                    ctx.n_cpus = 5;
                    ctx.seed = 5;
                    ctx.gpu_write_rules = rules;
                    build(
                        info.name,
                        &ctx,
                        Replay {
                            geometry,
                            steps: &stream,
                            boxed,
                        },
                    )
                    .unwrap()
                };
                let (own, boxed) = (run(false), run(true));
                assert!(own.1.evictions > 0, "{}: the stream must evict", info.name);
                assert!(own == boxed, "{} (rules {rules}): boxed differs", info.name);
            }
        }
    }

    #[test]
    fn a_boxed_policy_has_no_constructor_of_its_own() {
        let ctx = PolicyContext::for_geometry(&Geometry::new(64 * 8 * 64, 8, 64));
        let e = BoxedPolicy::build(&ctx).err().expect("refused");
        assert!(e.to_string().contains("registry"), "{e}");
    }
}
