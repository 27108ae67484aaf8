//! [`StackLru`]: the true-LRU stack that UCP (tap-tlp-aware-llc.txt §2.3.1, after Qureshi and
//! Patt, MICRO 2006), static CPU/GPU partitioning (tap §5.5), thrasher caging (tap §5.7,
//! after Xie and Loh, HiPEAC 2010), PIPP (tap §2.3.2, after Xie and Loh, ISCA 2009) and TADIP
//! (tap §5.7, after Jaleel et al., PACT 2008) all keep, with what they differ in left to a
//! [`StackRule`]: where a fill enters the stack (PIPP at its agent's allocation, TADIP at MRU
//! or by BIP), where a hit moves its line (PIPP one step up, by chance), and which line a miss
//! evicts (UCP, static partitioning and thrasher caging hold classes of agents to way
//! targets, [`quota_victim`]). `StackLru<R>` is the policy.
//!
//! Every line has a stack position ([`LruStack`], 0 MRU). By default a fill enters at MRU, a
//! hit moves its line to MRU and the victim is the set's LRU line; while the rule gives way
//! targets the victim is [`quota_victim`]'s (a class below its target evicts the LRU line of
//! a class above its own, otherwise its own LRU line). `StackLru<R>` dereferences to its
//! rule, so that a member's own accessors (its targets, its selectors) read as the policy's.

use super::umon::{quota_victim, LruStack, QuotaScratch};
use crate::params::ParamList;
use crate::{CacheError, Feedback, MissAction, Policy, PolicyContext, PolicyStat, SetView};
use apusim_trace::Access;

/// What a member of the LRU-stack family decides besides keeping the stack (see the module
/// doc). Each hook's default is true LRU's.
pub trait StackRule: Send + Sized + 'static {
    /// [`Policy::params`]: the parameters the rule reads.
    fn params(_list: &mut ParamList) {}
    /// [`Policy::build`].
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError>;
    /// Move the line a hit found in `way` of `set`: to MRU.
    #[inline]
    fn promote(&mut self, stack: &mut LruStack, set: usize, way: usize, _req: &Access) {
        stack.move_to(set, way, 0);
    }
    /// A hit in `set`, after its promotion.
    #[inline]
    fn on_hit(&mut self, _set: usize, _req: &Access) {}
    /// A miss in `set`, before the victim search.
    #[inline]
    fn on_miss(&mut self, _set: usize, _req: &Access) -> MissAction {
        MissAction::Allocate
    }
    /// The stack position a fill of `set` by `req` enters at: MRU (0).
    #[inline]
    fn insertion(&mut self, _set: usize, _req: &Access) -> usize {
        0
    }
    /// The way target of every class and the agents' classes, or `None` (the default) while
    /// the cache is not partitioned.
    #[inline]
    fn quota(&mut self) -> Option<(&[usize], &mut QuotaScratch)> {
        None
    }
    /// [`Policy::on_feedback`].
    fn on_feedback(&mut self, _fb: &Feedback) {}
    /// [`Policy::stats`].
    fn stats(&self) -> Vec<PolicyStat> {
        Vec::new()
    }
}

/// A true-LRU stack kept by the rule `R` (see the module doc).
pub struct StackLru<R> {
    stack: LruStack,
    rule: R,
}

impl<R> StackLru<R> {
    /// LRU stack position of a line (0 MRU), for tests and reports.
    pub fn stack_pos(&self, set: usize, way: usize) -> usize {
        self.stack.pos(set, way)
    }
    /// The stack itself, for tests that arrange positions by hand.
    #[cfg(test)]
    pub(super) fn stack_mut(&mut self) -> &mut LruStack {
        &mut self.stack
    }
}

impl<R> std::ops::Deref for StackLru<R> {
    type Target = R;
    fn deref(&self) -> &R {
        &self.rule
    }
}

impl<R> std::ops::DerefMut for StackLru<R> {
    fn deref_mut(&mut self) -> &mut R {
        &mut self.rule
    }
}

impl<R: StackRule> Policy for StackLru<R> {
    fn params(list: &mut ParamList) {
        R::params(list);
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        let rule = R::build(ctx)?;
        Ok(StackLru {
            stack: LruStack::new(ctx.sets, ctx.ways),
            rule,
        })
    }
    #[inline]
    fn prefetch_set(&self, set: usize) {
        self.stack.prefetch(set);
    }
    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, req: &Access) {
        self.rule.promote(&mut self.stack, set, way, req);
        self.rule.on_hit(set, req);
    }
    #[inline]
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        self.rule.on_miss(set, req)
    }
    #[inline]
    fn victim(&mut self, set: usize, req: &Access, view: &SetView<'_>) -> usize {
        match self.rule.quota() {
            None => self.stack.lru(set),
            Some((targets, scratch)) => {
                quota_victim(&self.stack, set, view, targets, req.agent, scratch)
            }
        }
    }
    #[inline]
    fn on_fill(&mut self, set: usize, way: usize, req: &Access) {
        let to = self.rule.insertion(set, req);
        self.stack.move_to(set, way, to);
    }
    fn on_feedback(&mut self, fb: &Feedback) {
        self.rule.on_feedback(fb);
    }
    fn stats(&self) -> Vec<PolicyStat> {
        self.rule.stats()
    }
}
