//! [`Wrapper`]: an LLC policy built around an inner policy that keeps serving every hook the
//! wrapper does not change. The wrappers — the heterogeneous write rules
//! ([`super::hetero_writes::HeteroWrites`], drp §4.1), uncached displayable color
//! ([`super::ucd::Ucd`], gspc §5.1) and `drp-baseline` ([`super::drp_baseline::DrpBaseline`])
//! — implement `Wrapper` and write only the hooks they change; every other hook, the
//! construction (inner policy first, for the same context), the parameter list (the inner
//! policy's, then the wrapper's own) and the statistics (the inner policy's, then the
//! wrapper's own) are forwarded here once, and the blanket `impl<W: Wrapper> Policy for W`
//! makes every wrapper a [`Policy`].

use crate::params::{ParamList, ParamSpec};
use crate::{
    CacheError, Evicted, Feedback, MissAction, Policy, PolicyContext, PolicyStat, SetView,
};
use apusim_trace::Access;

/// A policy around an inner policy: each hook defaults to the inner policy's.
pub trait Wrapper: Send + Sized + 'static {
    /// The policy it wraps.
    type Inner: Policy;

    /// The wrapped policy.
    fn inner(&self) -> &Self::Inner;
    /// The wrapped policy, mutably (the forwarded hooks call it).
    fn inner_mut(&mut self) -> &mut Self::Inner;

    /// Wrap `inner`, built for the same `ctx`.
    fn wrap(inner: Self::Inner, ctx: &PolicyContext) -> Result<Self, CacheError>;

    /// The parameters the wrapper reads itself, listed after the inner policy's.
    const PARAMS: &'static [ParamSpec] = &[];

    /// [`Policy::OWN_WRITE_RULES`]: by default the inner policy's.
    const OWN_WRITE_RULES: bool = <Self::Inner as Policy>::OWN_WRITE_RULES;

    /// [`Policy::on_hit`].
    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, req: &Access) {
        self.inner_mut().on_hit(set, way, req);
    }
    /// [`Policy::on_miss`].
    #[inline]
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        self.inner_mut().on_miss(set, req)
    }
    /// [`Policy::victim`].
    #[inline]
    fn victim(&mut self, set: usize, req: &Access, view: &SetView<'_>) -> usize {
        self.inner_mut().victim(set, req, view)
    }
    /// [`Policy::on_evict`].
    #[inline]
    fn on_evict(&mut self, set: usize, way: usize, victim: &Evicted) {
        self.inner_mut().on_evict(set, way, victim);
    }
    /// [`Policy::on_fill`].
    #[inline]
    fn on_fill(&mut self, set: usize, way: usize, req: &Access) {
        self.inner_mut().on_fill(set, way, req);
    }
    /// [`Policy::on_feedback`].
    fn on_feedback(&mut self, fb: &Feedback) {
        self.inner_mut().on_feedback(fb);
    }
    /// [`Policy::prefetch_set`].
    #[inline]
    fn prefetch_set(&self, set: usize) {
        self.inner().prefetch_set(set);
    }
    /// [`Policy::prefetch_way`].
    #[inline]
    fn prefetch_way(&self, set: usize, way: usize) {
        self.inner().prefetch_way(set, way);
    }
    /// Append the wrapper's own statistics to the inner policy's `stats`. Default: none.
    fn extra_stats(&self, _stats: &mut Vec<PolicyStat>) {}
}

impl<W: Wrapper> Policy for W {
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        W::wrap(W::Inner::build(ctx)?, ctx)
    }
    fn params(list: &mut ParamList) {
        W::Inner::params(list);
        list.add(W::PARAMS);
    }
    const OWN_WRITE_RULES: bool = <W as Wrapper>::OWN_WRITE_RULES;
    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, req: &Access) {
        <W as Wrapper>::on_hit(self, set, way, req);
    }
    #[inline]
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        <W as Wrapper>::on_miss(self, set, req)
    }
    #[inline]
    fn victim(&mut self, set: usize, req: &Access, view: &SetView<'_>) -> usize {
        <W as Wrapper>::victim(self, set, req, view)
    }
    #[inline]
    fn on_evict(&mut self, set: usize, way: usize, victim: &Evicted) {
        <W as Wrapper>::on_evict(self, set, way, victim);
    }
    #[inline]
    fn on_fill(&mut self, set: usize, way: usize, req: &Access) {
        <W as Wrapper>::on_fill(self, set, way, req);
    }
    fn on_feedback(&mut self, fb: &Feedback) {
        <W as Wrapper>::on_feedback(self, fb);
    }
    #[inline]
    fn prefetch_set(&self, set: usize) {
        <W as Wrapper>::prefetch_set(self, set);
    }
    #[inline]
    fn prefetch_way(&self, set: usize, way: usize) {
        <W as Wrapper>::prefetch_way(self, set, way);
    }
    fn stats(&self) -> Vec<PolicyStat> {
        let mut s = self.inner().stats();
        self.extra_stats(&mut s);
        s
    }
}
