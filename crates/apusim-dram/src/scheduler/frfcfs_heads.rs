//! The fast path of FR-FCFS(-cap): the same decision as the definition in
//! [`super::frfcfs`], taken over the per-bank heads of the queue view in O(banks) instead of
//! over the queue. It is exact because the order depends only on row-hit status and age: a
//! bank's oldest hit ([`BankView::oldest_hit`]) beats its younger hits, and all non-hits of a
//! bank need the same command at the same cycle, so its oldest non-hit
//! ([`BankView::oldest_other`]) stands for them. The proptest below checks both functions
//! against the definition. Kept because the definition costs 2.7× the run time of a
//! saturated `apusim dram` trace (docs/PERFORMANCE.md, DRAM section).

use super::{BankView, SchedContext, NO_CANDIDATE};
use std::hint::select_unpredictable;

/// May a bank's hits issue at all? Under the cap, a bank that has served `cap` hits from its
/// open row reverts to FCFS order: its hits wait while an older request of the bank needs
/// another row (an existing hit head is below `NO_CANDIDATE`, so a bank without non-hits
/// passes).
#[inline]
fn hits_eligible(v: &BankView, cap: u32) -> bool {
    (v.hit_streak < cap) | (v.oldest_hit < v.oldest_other)
}

/// May a bank's non-hits issue: the bank is closed, no queued request hits its open row, or
/// it is capped.
#[inline]
fn others_eligible(v: &BankView, cap: u32) -> bool {
    v.open_row.is_none() | (v.pending_hits == 0) | (v.hit_streak >= cap)
}

/// `x` if `cond`, else [`NO_CANDIDATE`] (a conditional move: the per-bank conditions are
/// data-dependent and would mispredict as branches).
#[inline]
fn keep(cond: bool, x: u32) -> u32 {
    select_unpredictable(cond, x, NO_CANDIDATE)
}

/// [`super::frfcfs::pick`] over the heads: the oldest ready uncapped hit head, else the
/// oldest ready eligible head.
#[inline]
pub(crate) fn pick(ctx: &SchedContext, cap: u32) -> Option<usize> {
    let now = ctx.now;
    let mut best_hit = NO_CANDIDATE;
    let mut best_other = NO_CANDIDATE;
    ctx.for_candidate_banks(|v| {
        let hit_ok = (v.col_ready <= now) & hits_eligible(v, cap);
        let uncapped = v.hit_streak < cap;
        best_hit = best_hit.min(keep(hit_ok & uncapped, v.oldest_hit));
        let capped_hit = keep(hit_ok & !uncapped, v.oldest_hit);
        let other = keep(
            others_eligible(v, cap) & (v.other_ready <= now),
            v.oldest_other,
        );
        best_other = best_other.min(capped_hit).min(other);
    });
    let best = if best_hit != NO_CANDIDATE {
        best_hit
    } else {
        best_other
    };
    (best != NO_CANDIDATE).then_some(best as usize)
}

/// [`super::frfcfs::next`] over the heads.
#[inline]
pub(crate) fn next(ctx: &SchedContext, cap: u32) -> Option<u64> {
    let mut t = u64::MAX;
    ctx.for_candidate_banks(|v| {
        let hit = (v.oldest_hit != NO_CANDIDATE) & hits_eligible(v, cap);
        let other = (v.oldest_other != NO_CANDIDATE) & others_eligible(v, cap);
        t = t
            .min(select_unpredictable(hit, v.col_ready, u64::MAX))
            .min(select_unpredictable(other, v.other_ready, u64::MAX));
    });
    (t != u64::MAX).then(|| t.max(ctx.now))
}

#[cfg(test)]
mod tests {
    use super::super::frfcfs;
    use super::super::frfcfs::tests::scene_strategy;
    use proptest::prelude::*;

    proptest! {
        /// The heads decide exactly as the definition, with and without a cap.
        #[test]
        fn heads_match_the_definition((s, now, cap) in scene_strategy()) {
            let x = s.ctx(now);
            for c in [u32::MAX, cap] {
                prop_assert_eq!(super::pick(&x, c), frfcfs::pick(&x, &s.cands, c));
                prop_assert_eq!(super::next(&x, c), frfcfs::next(&x, &s.cands, c));
            }
        }
    }
}
