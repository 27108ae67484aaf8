//! FR-FCFS (frfcfs: Rixner et al., ISCA 2000): first the ready row hits, oldest first; then
//! the oldest request whose next command is ready. A precharge that would close a row other
//! queued requests still hit is held back until those hits are served (as DRAMsim3's FR-FCFS
//! does; `frfcfs-cap` bounds this with a row-hit cap, stfm).
//!
//! [`pick`] and [`next`] are the definition, over the queue view (O(queue) per decision, like
//! Ramulator 2's `get_best_request`); the row-hit cap is a parameter so that `frfcfs-cap` is
//! the same code. The schedulers decide with the same functions over the per-bank heads
//! (O(banks), the private `frfcfs_heads` module), which a proptest checks against these.

use super::{frfcfs_heads, Candidate, RowStatus, SchedContext, Scheduler};

#[derive(Debug, Default)]
pub struct FrFcfs {
    /// Scratch: the pick found with the last next decision.
    last: frfcfs_heads::LastPlan,
}

/// May FR-FCFS with row-hit cap `cap` (`u32::MAX`: none) issue `cands[i]`'s next command
/// once it is ready? A row hit, unless its bank has served `cap` hits from the open row and
/// an older request of the bank needs another row (the bank is back in FCFS order); an
/// activate always; a precharge only if it closes no row other requests still hit, or the
/// bank is capped.
#[inline]
pub fn may_issue(ctx: &SchedContext, cands: &[Candidate], i: usize, cap: u32) -> bool {
    let c = &cands[i];
    let bank = ctx.bank(c);
    let capped = bank.hit_streak >= cap;
    match ctx.status(c) {
        RowStatus::Hit => !capped || bank.oldest_other > i as u32,
        RowStatus::Conflict => capped || bank.pending_hits == 0,
        RowStatus::Miss => true,
    }
}

/// The FR-FCFS pick under row-hit cap `cap`: the oldest ready uncapped row hit, else the
/// oldest ready request it may issue.
pub fn pick(ctx: &SchedContext, cands: &[Candidate], cap: u32) -> Option<usize> {
    let mut oldest = None;
    for (i, c) in cands.iter().enumerate() {
        if !ctx.ready(c) || !may_issue(ctx, cands, i, cap) {
            continue;
        }
        if ctx.status(c) == RowStatus::Hit && ctx.hit_streak(c) < cap {
            return Some(i);
        }
        oldest.get_or_insert(i);
    }
    oldest
}

/// The earliest cycle the FR-FCFS pick under cap `cap` could return something: a precharge
/// held back for pending hits cannot be picked before one of those hits is served, which is
/// a decision of its own, so its ready cycle is skipped.
pub fn next(ctx: &SchedContext, cands: &[Candidate], cap: u32) -> Option<u64> {
    (0..cands.len())
        .filter(|&i| may_issue(ctx, cands, i, cap))
        .map(|i| ctx.ready_at(&cands[i]).max(ctx.now))
        .min()
}

impl Scheduler for FrFcfs {
    fn name(&self) -> &'static str {
        "frfcfs"
    }
    fn pick(&mut self, ctx: &SchedContext, _cands: &[Candidate]) -> Option<usize> {
        self.last.pick(ctx, u32::MAX)
    }
    fn next_decision(&mut self, ctx: &SchedContext, _cands: &[Candidate]) -> Option<u64> {
        self.last.next(ctx, u32::MAX)
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

    /// The definition of FR-FCFS(-cap) from the candidates alone (no bank-view heads), to
    /// check the implementation: the oldest ready uncapped hit, else the oldest ready
    /// eligible request.
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
        assert_eq!(FrFcfs::default().pick(&s.ctx(5), &s.cands), Some(2));
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
        assert_eq!(FrFcfs::default().pick(&s.ctx(5), c), Some(1));
        assert_eq!(FrFcfs::default().pick(&s.ctx(8), c), Some(2));
        assert_eq!(FrFcfs::default().pick(&s.ctx(2), c), Some(3));
        let s3 = Scene::new(8)
            .bank(0, None, 9, 0, 0)
            .bank(1, Some(7), 0, 3, 0)
            .bank(2, Some(3), 0, 0, 8)
            .cand(0, 1)
            .cand(1, 1)
            .cand(2, 3);
        assert_eq!(FrFcfs::default().pick(&s3.ctx(2), &s3.cands), None);
        assert_eq!(
            FrFcfs::default().next_decision(&s3.ctx(2), &s3.cands),
            Some(3)
        );
    }

    #[test]
    fn does_not_close_a_row_with_pending_hits() {
        let s = Scene::new(8)
            .bank(0, Some(4), 0, 0, 10)
            .cand(0, 9) // conflict: PRE ready, but would close row 4
            .cand(0, 4) // hit, RD at 10
            .cand(1, 2); // miss in bank 1, ready
        assert_eq!(FrFcfs::default().pick(&s.ctx(5), &s.cands), Some(2));
        let s2 = Scene::new(8)
            .bank(0, Some(4), 0, 0, 10)
            .cand(0, 9)
            .cand(0, 4);
        assert_eq!(FrFcfs::default().pick(&s2.ctx(5), &s2.cands), None);
        // The blocked precharge does not wake the controller; the pending hit does.
        assert_eq!(
            FrFcfs::default().next_decision(&s2.ctx(5), &s2.cands),
            Some(10)
        );
    }

    /// Random bank states and queues (and a row-hit cap).
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
        /// The pick over the queue view equals the literal definition.
        #[test]
        fn matches_reference((s, now, cap) in scene_strategy()) {
            let x = s.ctx(now);
            for c in [u32::MAX, cap] {
                prop_assert_eq!(pick(&x, &s.cands, c), reference_pick(&x, &s.cands, c));
                prop_assert_eq!(next(&x, &s.cands, c), reference_next(&x, &s.cands, c));
            }
        }
    }
}
