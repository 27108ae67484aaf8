//! The fast path of FR-FCFS(-cap): the same decision as the definition in
//! [`super::frfcfs`], taken over the per-bank heads of the queue view in O(banks) instead of
//! over the queue. It is exact because the order depends only on row-hit status and age: a
//! bank's oldest hit ([`BankView::oldest_hit`]) beats its younger hits, and all non-hits of a
//! bank need the same command at the same cycle, so its oldest non-hit
//! ([`BankView::oldest_other`]) stands for them. The proptest below checks it against the
//! definition. Kept because the definition costs 2.7× the run time of a saturated
//! `apusim dram` trace (docs/PERFORMANCE.md, DRAM section).
//!
//! One pass over the heads answers both questions of a decision ([`plan`]): the next
//! decision's cycle and the pick at it. [`LastPlan`] keeps that pick for the
//! [`Scheduler::pick`](super::Scheduler::pick) the controller asks for at that cycle with
//! nothing changed in between, so a decision costs one pass, not two.

use super::{BankView, SchedContext, NO_CANDIDATE};
use std::hint::select_unpredictable;

/// May a bank's hit head issue? It exists (is below [`NO_CANDIDATE`]) and, if the bank is
/// `capped` (it has served the row-hit cap's hits from its open row and reverts to FCFS
/// order), no older request of the bank needs another row.
#[inline(always)]
fn hit_may_issue(v: &BankView, capped: bool) -> bool {
    v.oldest_hit < select_unpredictable(capped, v.oldest_other, NO_CANDIDATE)
}

/// May a bank's non-hit head issue? It exists, and no queued request hits the bank's open
/// row (none does in a closed bank) or the bank is `capped`.
#[inline(always)]
fn other_may_issue(v: &BankView, capped: bool) -> bool {
    (v.oldest_other != NO_CANDIDATE) & ((v.oldest_hit == NO_CANDIDATE) | capped)
}

/// Distances from `now` at and beyond which a head's order key is not exact.
const FAR: u64 = 0xffff_fffe;

/// The order key of a head ready at `ready` with index `index` (below 2^31, as queues are
/// far shorter): its distance from `now` (0 if ready; at most [`FAR`]) in bits 32..64, then
/// whether it is `late` (bit 31: a capped hit or a non-hit, which wait for the uncapped hits
/// of the same cycle), then the index (age); `u64::MAX` if it may not issue (`ok` false).
#[inline(always)]
fn key(ok: bool, ready: u64, now: u64, late: bool, index: u32) -> u64 {
    let d = ready.saturating_sub(now).min(FAR);
    let k = (d << 32) | (u64::from(late) << 31) | u64::from(index);
    select_unpredictable(ok, k, u64::MAX)
}

/// [`super::frfcfs::next`] and [`super::frfcfs::pick`] at that cycle, over the heads: the
/// earliest cycle `T >= now` at which FR-FCFS under cap `cap` could pick a ready candidate,
/// and that pick (the least key: at `T`, the oldest uncapped hit, else the oldest other
/// head). `None` if no head may issue before a refresh. One pass of conditional moves over
/// the banks (the per-bank conditions are data-dependent and would mispredict as
/// branches); [`plan_far`] if the first head is [`FAR`] away.
#[inline(always)]
pub(crate) fn plan(ctx: &SchedContext, cap: u32) -> Option<(u64, usize)> {
    let now = ctx.now;
    let mut best = u64::MAX;
    ctx.for_candidate_banks(|v| {
        let capped = v.hit_streak >= cap;
        let h = key(
            hit_may_issue(v, capped),
            v.col_ready,
            now,
            capped,
            v.oldest_hit,
        );
        let o = key(
            other_may_issue(v, capped),
            v.other_ready,
            now,
            true,
            v.oldest_other,
        );
        best = select_unpredictable(h < best, h, best);
        best = select_unpredictable(o < best, o, best);
    });
    if best >> 32 >= FAR {
        return plan_far(ctx, cap);
    }
    Some((now + (best >> 32), (best & 0x7fff_ffff) as usize))
}

/// [`super::frfcfs::next`] over the heads, without the pick: for the schedulers that share
/// FR-FCFS's eligibility but pick otherwise ([`super::ranked`]).
#[inline]
pub(crate) fn next(ctx: &SchedContext, cap: u32) -> Option<u64> {
    let mut t = u64::MAX;
    ctx.for_candidate_banks(|v| {
        let capped = v.hit_streak >= cap;
        let hit = select_unpredictable(hit_may_issue(v, capped), v.col_ready, u64::MAX);
        let other = select_unpredictable(other_may_issue(v, capped), v.other_ready, u64::MAX);
        t = t.min(hit).min(other);
    });
    (t != u64::MAX).then(|| t.max(ctx.now))
}

/// [`plan`] with unpacked keys, for when the first head waits for a refresh (ready at
/// `u64::MAX`) or, under absurd timings, 2^32 cycles or more (and when no head may issue).
#[cold]
#[inline(never)]
fn plan_far(ctx: &SchedContext, cap: u32) -> Option<(u64, usize)> {
    let now = ctx.now;
    let mut best = (u64::MAX, true, NO_CANDIDATE);
    for v in ctx.occupied_banks().map(|b| &ctx.banks[b]) {
        let capped = v.hit_streak >= cap;
        if hit_may_issue(v, capped) {
            best = best.min((v.col_ready.max(now), capped, v.oldest_hit));
        }
        if other_may_issue(v, capped) {
            best = best.min((v.other_ready.max(now), true, v.oldest_other));
        }
    }
    (best.0 != u64::MAX).then_some((best.0, best.2 as usize))
}

/// The plan an FR-FCFS scheduler found at its last next decision, with the
/// [`SchedContext::version`] it was found for.
#[derive(Debug, Default)]
pub(crate) struct LastPlan {
    /// (version, cycle, pick).
    kept: Option<(u64, u64, usize)>,
}

impl LastPlan {
    /// [`super::frfcfs::next`] over the heads, keeping the pick at that cycle.
    #[inline]
    pub(crate) fn next(&mut self, ctx: &SchedContext, cap: u32) -> Option<u64> {
        let p = plan(ctx, cap);
        self.kept = p.map(|(t, i)| (ctx.version, t, i));
        p.map(|(t, _)| t)
    }

    /// [`super::frfcfs::pick`] over the heads: the kept pick if nothing changed since the
    /// next decision and this is its cycle (a plan made at an earlier cycle of the same
    /// version is still the plan at any cycle up to its own), else [`pick`]'s new pass.
    #[inline(always)]
    pub(crate) fn pick(&self, ctx: &SchedContext, cap: u32) -> Option<usize> {
        match self.kept {
            Some((v, t, i)) if v == ctx.version && t == ctx.now => {
                debug_assert_eq!(plan(ctx, cap), Some((t, i)));
                Some(i)
            }
            _ => pick(ctx, cap),
        }
    }
}

/// [`super::frfcfs::pick`] over the heads: the plan's pick if it is due now.
#[inline(never)]
fn pick(ctx: &SchedContext, cap: u32) -> Option<usize> {
    plan(ctx, cap)
        .filter(|&(t, _)| t == ctx.now)
        .map(|(_, i)| i)
}

#[cfg(test)]
mod tests {
    use super::super::frfcfs;
    use super::super::frfcfs::tests::scene_strategy;
    use super::LastPlan;
    use proptest::prelude::*;

    proptest! {
        /// The heads decide exactly as the definition, with and without a cap: the plan's
        /// cycle (and `next`) is the next decision, its pick the pick then, and the kept
        /// pick is the definition's at any cycle.
        #[test]
        fn heads_match_the_definition((s, now, cap) in scene_strategy()) {
            let x = s.ctx(now);
            for c in [u32::MAX, cap] {
                let p = super::plan(&x, c);
                prop_assert_eq!(p.map(|(t, _)| t), frfcfs::next(&x, &s.cands, c));
                prop_assert_eq!(super::next(&x, c), frfcfs::next(&x, &s.cands, c));
                let mut last = LastPlan::default();
                prop_assert_eq!(last.next(&x, c), frfcfs::next(&x, &s.cands, c));
                for t in now..now + 24 {
                    let at = s.ctx(t);
                    prop_assert_eq!(last.pick(&at, c), frfcfs::pick(&at, &s.cands, c), "{}", t);
                }
                if let Some((t, i)) = p {
                    prop_assert_eq!(Some(i), frfcfs::pick(&s.ctx(t), &s.cands, c));
                }
            }
        }
    }
}
