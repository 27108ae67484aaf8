//! FR-FCFS (Rixner et al., ISCA 2000): first ready row hits, oldest first; then the oldest
//! request whose next command is ready. A precharge that would close a row other queued
//! requests still hit is held back until those hits are served (as DRAMsim3's FR-FCFS does;
//! see `frfcfs-cap` for the variant that bounds this).
//!
//! Because this order depends only on row-hit status and age, and all non-hits of a bank need
//! the same command at the same cycle, the decision is taken over the per-bank heads
//! ([`BankView::oldest_hit`], [`BankView::oldest_other`]) in O(banks); the tests check it
//! against the O(queue) definition. The part of that decision that depends on one bank alone
//! — which of its heads may issue, and in which priority class — is the bank's
//! [`HeadKeys`] ([`head_keys`], the default [`Scheduler::head_keys`] hook), which the
//! controller caches in the views; the plan ([`plan_heads`]) combines those keys with the
//! heads' ready cycles and takes one minimum.

use super::{BankView, Candidate, HeadKeys, SchedContext, Scheduler, NO_CANDIDATE};
use std::hint::select_unpredictable;

#[derive(Debug, Default)]
pub struct FrFcfs;

/// Ready time of a bank's non-hit head and whether FR-FCFS may issue it (`cap`: row-hit cap,
/// `u32::MAX` for none).
#[inline]
pub(crate) fn other_head(v: &BankView, cap: u32) -> (u64, bool) {
    let allowed = v.open_row.is_none() | (v.pending_hits == 0) | (v.hit_streak >= cap);
    (v.non_hit_ready(), allowed)
}

/// May the hits of a bank be issued at all? Under the cap, a bank that has served `cap` hits
/// from its open row reverts to FCFS order: its hits wait while an older request of the bank
/// needs another row.
///
/// Callers also require the hit head to exist (`oldest_hit != NO_CANDIDATE`), so "the bank has
/// no non-hit" (`oldest_other == NO_CANDIDATE`, i.e. `u32::MAX`) needs no test of its own: an
/// existing hit head is then below it.
#[inline]
fn hits_eligible(v: &BankView, cap: u32) -> bool {
    (v.hit_streak < cap) | (v.oldest_hit < v.oldest_other)
}

/// `x` if `cond`, else [`NO_CANDIDATE`] (written to compile to a conditional move: the
/// per-bank conditions are data-dependent and would mispredict as branches).
#[inline]
fn keep(cond: bool, x: u32) -> u32 {
    select_unpredictable(cond, x, NO_CANDIDATE)
}

/// The FR-FCFS(-cap) pick over the heads of the banks that have candidates.
#[inline]
pub(crate) fn pick_heads(ctx: &SchedContext, cap: u32) -> Option<usize> {
    let now = ctx.now;
    let mut best_hit = NO_CANDIDATE;
    let mut best_other = NO_CANDIDATE;
    ctx.for_candidate_banks(|v| {
        let hit_ok = (v.col_ready <= now) & hits_eligible(v, cap);
        let uncapped = v.hit_streak < cap;
        best_hit = best_hit.min(keep(hit_ok & uncapped, v.oldest_hit));
        let (ready, allowed) = other_head(v, cap);
        let capped_hit = keep(hit_ok & !uncapped, v.oldest_hit);
        let other = keep(allowed & (ready <= now), v.oldest_other);
        best_other = best_other.min(capped_hit).min(other);
    });
    if best_hit != NO_CANDIDATE {
        Some(best_hit as usize)
    } else if best_other != NO_CANDIDATE {
        Some(best_other as usize)
    } else {
        None
    }
}

/// Earliest cycle the FR-FCFS(-cap) pick could return something.
#[inline]
pub(crate) fn next_heads(ctx: &SchedContext, cap: u32) -> Option<u64> {
    let mut t = u64::MAX;
    ctx.for_candidate_banks(|v| {
        let hit = (v.oldest_hit != NO_CANDIDATE) & hits_eligible(v, cap);
        let (ready, allowed) = other_head(v, cap);
        let other = (v.oldest_other != NO_CANDIDATE) & allowed;
        t = t
            .min(select_unpredictable(hit, v.col_ready, u64::MAX))
            .min(select_unpredictable(other, ready, u64::MAX));
    });
    (t != u64::MAX).then(|| t.max(ctx.now))
}

/// The FR-FCFS(-cap) plan keys of a bank's heads ([`Scheduler::head_keys`]): its oldest hit,
/// eligible if it exists and the bank's hits may issue, in class 0 while the bank is below the
/// cap and class 1 after; its oldest non-hit, eligible if it exists and FR-FCFS(-cap) allows
/// its command, in class 1.
#[inline]
pub fn head_keys(v: &BankView, cap: u32) -> HeadKeys {
    let hit_ok = (v.oldest_hit != NO_CANDIDATE) & hits_eligible(v, cap);
    let (_, allowed) = other_head(v, cap);
    let other_ok = (v.oldest_other != NO_CANDIDATE) & allowed;
    HeadKeys {
        hit: HeadKeys::key(hit_ok, u32::from(v.hit_streak >= cap), v.oldest_hit),
        other: HeadKeys::key(other_ok, 1, v.oldest_other),
    }
}

/// Call `f(ready, key)` for the two heads of every bank that has candidates (and possibly of
/// some that have none: their keys are ineligible).
#[inline(always)]
fn for_each_head(ctx: &SchedContext, mut f: impl FnMut(u64, u64)) {
    ctx.for_candidate_banks(|v| {
        f(v.col_ready, v.keys.hit);
        f(v.other_ready, v.keys.other);
    });
}

/// The FR-FCFS(-cap) plan ([`Scheduler::plan`]: the earliest cycle `T` anything could issue
/// and the pick at `T`) in one pass over the banks' cached [`HeadKeys`] (so the row-hit cap,
/// or any other eligibility rule, is whatever [`Scheduler::head_keys`] computed them with):
/// the pick at `T` is among the heads whose (clamped) ready cycle is `T`. A scheduler that
/// supplies its own key hook can use this as its plan.
///
/// The pass takes the lexicographic minimum of (ready cycle, class, index) over the eligible
/// heads, where class 0 is an uncapped hit and 1 anything else: the earliest cycle `T`, then
/// at `T` the oldest uncapped hit, else the oldest other head. The key is packed into one
/// `u64` — ready cycle relative to `now` in the high 32 bits, OR-ed onto the head's key
/// (class in bit 31, index in the low 31; queues hold at most 4096; an ineligible head has
/// all ones in the high half) — so each head costs a few conditional moves. The packing is
/// exact while every head's ready cycle is less than 2^32 cycles away (the pass ORs the
/// distances together to know); otherwise — some head waits for a refresh (ready =
/// `u64::MAX`) or a bank without candidates still carries such a cycle, absurd timing sets —
/// or when no head is eligible, the decision goes to the wide-key pass.
#[inline]
pub fn plan_heads(ctx: &SchedContext) -> Option<(u64, Option<usize>)> {
    let from = ctx.now;
    let mut best = u64::MAX;
    // OR of all deltas: a set high half means some delta did not fit the packed key.
    let mut far = 0u64;
    for_each_head(ctx, |ready, key| {
        let delta = ready.saturating_sub(from);
        far |= delta;
        let k = (delta << 32) | key;
        best = select_unpredictable(k < best, k, best);
    });
    if far >> 32 != 0 || best >= HeadKeys::INELIGIBLE {
        return plan_heads_wide(ctx);
    }
    Some((from + (best >> 32), Some((best & HeadKeys::INDEX) as usize)))
}

/// [`plan_heads`] with a (ready cycle, key) pair per head: exact for any ready cycle, and
/// about half as fast.
#[cold]
#[inline(never)]
fn plan_heads_wide(ctx: &SchedContext) -> Option<(u64, Option<usize>)> {
    let from = ctx.now;
    let mut t = u64::MAX;
    let mut best = u64::MAX;
    for_each_head(ctx, |ready, key| {
        let ok = key != HeadKeys::INELIGIBLE;
        let r = select_unpredictable(ok, ready.max(from), u64::MAX);
        let better = (r < t) | ((r == t) & (key < best));
        t = select_unpredictable(better, r, t);
        best = select_unpredictable(better, key, best);
    });
    if t == u64::MAX {
        return None;
    }
    Some((t, Some((best & HeadKeys::INDEX) as usize)))
}

impl Scheduler for FrFcfs {
    fn name(&self) -> &'static str {
        "frfcfs"
    }
    /// Stateless: it decides from the context alone.
    fn observes_issue(&self) -> bool {
        false
    }
    fn pick(&mut self, ctx: &SchedContext, _cands: &[Candidate]) -> Option<usize> {
        pick_heads(ctx, u32::MAX)
    }
    /// A precharge held back for pending hits cannot be picked before one of those hits is
    /// served, which is a decision of its own: its ready time is skipped.
    fn next_decision(&self, ctx: &SchedContext, _cands: &[Candidate]) -> Option<u64> {
        next_heads(ctx, u32::MAX)
    }
    /// Over the cached keys of the default [`Scheduler::head_keys`] (no cap).
    fn plan(&mut self, ctx: &SchedContext, _cands: &[Candidate]) -> Option<(u64, Option<usize>)> {
        plan_heads(ctx)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::scheduler::test_util::Scene;
    use crate::scheduler::RowStatus;
    use proptest::prelude::*;

    /// Is there a request older than `i` in `c`'s bank that is not a hit?
    fn older_non_hit(ctx: &SchedContext, cands: &[Candidate], i: usize) -> bool {
        let c = &cands[i];
        cands[..i]
            .iter()
            .any(|o| o.bank == c.bank && ctx.status(o) != RowStatus::Hit)
    }

    /// Eligibility of candidate `i` under FR-FCFS(-cap), by definition: uncapped hits always;
    /// capped hits only if no older request of their bank needs another row; precharges only
    /// if they close no row with pending hits (or the bank is capped); activates always.
    fn eligible(ctx: &SchedContext, cands: &[Candidate], i: usize, cap: u32) -> bool {
        let c = &cands[i];
        let capped = ctx.hit_streak(c) >= cap;
        match ctx.status(c) {
            RowStatus::Hit => !capped || !older_non_hit(ctx, cands, i),
            RowStatus::Conflict => capped || !ctx.closes_useful_row(c),
            RowStatus::Miss => true,
        }
    }

    /// The O(queue) definition of FR-FCFS(-cap), for checking the O(banks) implementation:
    /// the oldest ready uncapped hit, else the oldest ready eligible request.
    pub fn reference_pick(ctx: &SchedContext, cands: &[Candidate], cap: u32) -> Option<usize> {
        let mut first_ready = None;
        for (i, c) in cands.iter().enumerate() {
            if !ctx.ready(c) || !eligible(ctx, cands, i, cap) {
                continue;
            }
            if ctx.status(c) == RowStatus::Hit && ctx.hit_streak(c) < cap {
                return Some(i);
            }
            if first_ready.is_none() {
                first_ready = Some(i);
            }
        }
        first_ready
    }

    pub fn reference_next(ctx: &SchedContext, cands: &[Candidate], cap: u32) -> Option<u64> {
        (0..cands.len())
            .filter(|&i| eligible(ctx, cands, i, cap))
            .map(|i| ctx.ready_at(&cands[i]).max(ctx.now))
            .min()
    }

    #[test]
    fn row_hit_beats_older_miss() {
        let s = Scene::new(8)
            .bank(1, Some(7), 0, 0, 0)
            .bank(2, Some(3), 0, 0, 0)
            .cand(0, 1) // miss
            .cand(1, 1) // conflict
            .cand(2, 3); // hit
        assert_eq!(FrFcfs.pick(&s.ctx(5), &s.cands), Some(2));
    }

    #[test]
    fn oldest_ready_when_no_hit_is_ready() {
        let s = Scene::new(8)
            .bank(0, None, 9, 0, 0)
            .bank(1, Some(7), 0, 3, 0)
            .bank(2, Some(3), 0, 0, 8)
            .cand(0, 1) // miss, ACT at 9
            .cand(1, 1) // conflict, PRE at 3
            .cand(2, 3) // hit, RD at 8
            .cand(3, 5); // miss, ACT at 0
        let c = &s.cands;
        assert_eq!(FrFcfs.pick(&s.ctx(5), c), Some(1));
        assert_eq!(FrFcfs.pick(&s.ctx(8), c), Some(2));
        assert_eq!(FrFcfs.pick(&s.ctx(2), c), Some(3));
        let s3 = Scene::new(8)
            .bank(0, None, 9, 0, 0)
            .bank(1, Some(7), 0, 3, 0)
            .bank(2, Some(3), 0, 0, 8)
            .cand(0, 1)
            .cand(1, 1)
            .cand(2, 3);
        assert_eq!(FrFcfs.pick(&s3.ctx(2), &s3.cands), None);
        assert_eq!(FrFcfs.next_decision(&s3.ctx(2), &s3.cands), Some(3));
    }

    #[test]
    fn does_not_close_a_row_with_pending_hits() {
        let s = Scene::new(8)
            .bank(0, Some(4), 0, 0, 10)
            .cand(0, 9) // conflict: PRE ready, but would close row 4
            .cand(0, 4) // hit, RD at 10
            .cand(1, 2); // miss in bank 1, ready
        assert_eq!(FrFcfs.pick(&s.ctx(5), &s.cands), Some(2));
        let s2 = Scene::new(8)
            .bank(0, Some(4), 0, 0, 10)
            .cand(0, 9)
            .cand(0, 4);
        assert_eq!(FrFcfs.pick(&s2.ctx(5), &s2.cands), None);
        // The blocked precharge does not wake the controller; the pending hit does.
        assert_eq!(FrFcfs.next_decision(&s2.ctx(5), &s2.cands), Some(10));
    }

    #[test]
    fn plan_is_exact_for_far_ready_cycles() {
        // Bank 0's hit is 2^33 cycles away, bank 1's ACT 2^33 + 5: the packed key cannot hold
        // them, so the plan takes the wide pass, which must still order them correctly.
        let far = 1u64 << 33;
        let s = Scene::new(8)
            .bank(0, Some(4), 0, 0, far)
            .bank(1, None, far + 5, 0, 0)
            .cand(1, 2)
            .cand(0, 4);
        assert_eq!(plan_heads(&s.ctx(3)), Some((far, Some(1))));
        let s = Scene::new(8)
            .bank(0, Some(4), 0, 0, far + 5)
            .bank(1, None, far, 0, 0)
            .cand(1, 2)
            .cand(0, 4);
        assert_eq!(plan_heads(&s.ctx(3)), Some((far, Some(0))));
        // Heads waiting for a refresh are never planned.
        let s = Scene::new(8).bank(0, None, u64::MAX, 0, 0).cand(0, 1);
        assert_eq!(plan_heads(&s.ctx(3)), None);
        // A far cycle in a bank without candidates (stale timing) changes nothing.
        let s = Scene::new(8)
            .bank(0, Some(4), 0, 0, 7)
            .bank(1, Some(2), u64::MAX, u64::MAX, u64::MAX)
            .cand(0, 4);
        assert_eq!(plan_heads(&s.ctx(3)), Some((7, Some(0))));
        // No eligible head at all (not reachable from the controller: a bank with
        // candidates always has one) also takes the wide pass and plans nothing.
        let mut s = Scene::new(8).bank(0, None, 0, 0, 0).cand(0, 1);
        s.banks[0].keys = HeadKeys::NONE;
        assert_eq!(plan_heads(&s.ctx(3)), None);
    }

    /// Random bank states and queues: the O(banks) pick equals the O(queue) definition.
    pub fn scene_strategy() -> impl Strategy<Value = (Scene, u64, u32)> {
        (
            prop::collection::vec(
                (
                    prop::option::of(0u32..3),
                    0u64..20,
                    0u64..20,
                    0u64..20,
                    0u32..6,
                ),
                4,
            ),
            prop::collection::vec((0u32..4, 0u32..3), 0..24),
            0u64..20,
            1u32..5,
        )
            .prop_map(|(banks, cands, now, cap)| {
                let mut s = Scene::new(4);
                for (i, (open, a, p, c, streak)) in banks.into_iter().enumerate() {
                    s = s.bank(i, open, a, p, c).streak(i, streak);
                }
                for (b, r) in cands {
                    s = s.cand(b, r);
                }
                (s, now, cap)
            })
    }

    proptest! {
        #[test]
        fn heads_match_reference((s, now, cap) in scene_strategy()) {
            let x = s.ctx(now);
            prop_assert_eq!(pick_heads(&x, u32::MAX), reference_pick(&x, &s.cands, u32::MAX));
            prop_assert_eq!(next_heads(&x, u32::MAX), reference_next(&x, &s.cands, u32::MAX));
            prop_assert_eq!(pick_heads(&x, cap), reference_pick(&x, &s.cands, cap));
            prop_assert_eq!(next_heads(&x, cap), reference_next(&x, &s.cands, cap));
            // The fused plan equals next_decision followed by pick at that cycle.
            // The keyed scene's views carry the head keys of that cap.
            for c in [u32::MAX, cap] {
                let expect = reference_next(&x, &s.cands, c).map(|t| {
                    let at = SchedContext { now: t, ..x };
                    (t, reference_pick(&at, &s.cands, c))
                });
                let keyed = s.keyed(c);
                prop_assert_eq!(plan_heads(&keyed.ctx(now)), expect);
            }
        }
    }
}
