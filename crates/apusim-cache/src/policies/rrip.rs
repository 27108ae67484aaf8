//! [`Rrip`]: the replacement every member of the RRIP family shares
//! (drp-reuse-probability-shared-llc.txt §2.1, after Jaleel et al., ISCA 2010), with the one
//! thing the members differ in, the RRPV a fill inserts with, left to an [`Insertion`].
//!
//! Every line has a re-reference prediction value ([`RrpvTable`]); a hit predicts a near
//! re-reference (RRPV 0); the victim is the lowest way predicted distant, after aging the set
//! until one is. SRRIP inserts long ([`super::srrip`]), BRRIP bimodally ([`super::brrip`]),
//! DRRIP duels the two over the whole cache ([`super::drrip`]), TA-DRRIP per agent
//! ([`super::ta_drrip`]), GS-DRRIP per graphics stream class ([`super::gs_drrip`]); ChampSim's
//! modules insert distant ([`super::champsim_rrip`]); HeLM inserts long and bypasses some GPU
//! read misses ([`super::helm`]). Each of them writes only its [`Insertion`]; `Rrip<I>` is the
//! policy, and it dereferences to its insertion so that a member's own accessors (a
//! selector's value, a verdict) read as the policy's.

use super::util::{RrpvTable, RRPV_MAX};
use crate::params::ParamList;
use crate::{CacheError, Feedback, MissAction, Policy, PolicyContext, PolicyStat, SetView};
use apusim_trace::Access;

/// What a member of the RRIP family decides besides RRIP's replacement: the RRPV of a fill,
/// and whatever it learns from the accesses to choose it (see the module doc).
pub trait Insertion: Send + Sized + 'static {
    /// The distant (largest) RRPV, `2^n - 1` for n-bit RRPVs.
    const DISTANT: u8 = RRPV_MAX;

    /// [`Policy::params`]: the parameters the insertion reads.
    fn params(_list: &mut ParamList) {}
    /// [`Policy::build`].
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError>;
    /// A hit, after the line's promotion to RRPV 0.
    #[inline]
    fn on_hit(&mut self, _req: &Access) {}
    /// A miss in `set`, before the victim search: set duels train here, and a member that
    /// bypasses says so.
    #[inline]
    fn on_miss(&mut self, _set: usize, _req: &Access) -> MissAction {
        MissAction::Allocate
    }
    /// The RRPV a fill of `set` by `req` inserts with.
    fn insertion(&mut self, set: usize, req: &Access) -> u8;
    /// [`Policy::on_feedback`].
    fn on_feedback(&mut self, _fb: &Feedback) {}
    /// [`Policy::stats`].
    fn stats(&self) -> Vec<PolicyStat> {
        Vec::new()
    }
}

/// An RRIP policy: RRIP's replacement around the insertion `I` (see the module doc).
pub struct Rrip<I> {
    rrpv: RrpvTable,
    insertion: I,
}

impl<I> Rrip<I> {
    /// RRPV of a line (0 near .. distant), for tests and reports.
    pub fn rrpv(&self, set: usize, way: usize) -> u8 {
        self.rrpv.get(set, way)
    }
}

impl<I> std::ops::Deref for Rrip<I> {
    type Target = I;
    fn deref(&self) -> &I {
        &self.insertion
    }
}

impl<I> std::ops::DerefMut for Rrip<I> {
    fn deref_mut(&mut self) -> &mut I {
        &mut self.insertion
    }
}

impl<I: Insertion> Policy for Rrip<I> {
    fn params(list: &mut ParamList) {
        I::params(list);
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        let insertion = I::build(ctx)?;
        Ok(Rrip {
            rrpv: RrpvTable::with_distant(ctx, I::DISTANT),
            insertion,
        })
    }
    #[inline]
    fn prefetch_set(&self, set: usize) {
        self.rrpv.prefetch(set);
    }
    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, req: &Access) {
        self.rrpv.set(set, way, 0);
        self.insertion.on_hit(req);
    }
    #[inline]
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        self.insertion.on_miss(set, req)
    }
    #[inline]
    fn victim(&mut self, set: usize, _req: &Access, view: &SetView<'_>) -> usize {
        self.rrpv.victim_hinted(set, view)
    }
    #[inline]
    fn on_fill(&mut self, set: usize, way: usize, req: &Access) {
        let rrpv = self.insertion.insertion(set, req);
        self.rrpv.set(set, way, rrpv);
    }
    fn on_feedback(&mut self, fb: &Feedback) {
        self.insertion.on_feedback(fb);
    }
    fn stats(&self) -> Vec<PolicyStat> {
        self.insertion.stats()
    }
}
