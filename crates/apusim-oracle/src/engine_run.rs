//! The replay of a registered LLC policy, whatever type the registry builds for it: plain `lru`
//! on a fully-associative cache (with or without the GPU write rules) runs on
//! [`QueueLru`], which gives the engine's outcomes faster; every other policy runs through the
//! engine [`Cache`] with the oracle bypass ([`OracleBypass`]) around it, on or off.
//!
//! It sits above both replays ([`crate::falru`] and [`crate::sim`]) because it chooses between
//! them.

use crate::error::Result;
use crate::falru::{serves, NoRules, QueueLru, Touch};
use crate::nextuse::NextUses;
use crate::sim::{drive, EngineSim, Observer, OracleBypass, RefSim};
use crate::stats::OracleResult;
use apusim_cache::policies::hetero_writes::HeteroWrites;
use apusim_cache::policies::wrapper::Wrapper;
use apusim_cache::policies::PolicyVisitor;
use apusim_cache::{Cache, Geometry, Policy, PolicyContext, WritePolicy};
use apusim_trace::AccessSource;

/// Runs the replay for whatever policy type the registry builds.
pub(crate) struct EngineRun<'a, O> {
    pub name: &'a str,
    /// The context the registry built the policy from.
    pub ctx: &'a PolicyContext,
    pub geometry: Geometry,
    pub cpu_inclusive: bool,
    pub bypass: bool,
    pub next_uses: Option<&'a NextUses>,
    pub source: &'a mut dyn AccessSource,
    pub observer: &'a mut O,
}

impl<O: Observer> EngineRun<'_, O> {
    /// Replay on [`QueueLru`] with `rules` around its recency queue.
    fn queue<R: Wrapper<Inner = Touch>>(self, rules: R) -> Result<OracleResult> {
        let g = self.geometry;
        let mut sim = QueueLru::new(&g, rules, self.cpu_inclusive)?;
        self.replay(&mut sim)
    }

    /// Replay the stream on `sim`, whichever replay was chosen.
    fn replay<S: RefSim>(self, sim: &mut S) -> Result<OracleResult> {
        drive(
            sim,
            self.name,
            self.geometry,
            self.next_uses,
            self.source,
            self.observer,
        )
    }
}

impl<O: Observer> PolicyVisitor for EngineRun<'_, O> {
    type Output = Result<OracleResult>;
    fn visit<P: Policy>(self, policy: P) -> Self::Output {
        let g = self.geometry;
        let fast = if self.bypass { None } else { serves::<P>(&g) };
        match fast {
            Some(false) => {
                let rules = NoRules(Touch::build(self.ctx)?);
                return self.queue(rules);
            }
            Some(true) => {
                let rules = HeteroWrites::wrap(Touch::build(self.ctx)?, self.ctx)?;
                return self.queue(rules);
            }
            None => {}
        }
        let wrapped = OracleBypass::wrap(policy, g.sets() as usize, g.ways as usize, self.bypass);
        let cache = Cache::new(g, WritePolicy::default(), self.cpu_inclusive, wrapped)?;
        self.replay(&mut EngineSim { cache })
    }
}
