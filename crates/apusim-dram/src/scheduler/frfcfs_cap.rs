//! FR-FCFS with a row-hit cap (Mutlu & Moscibroda's FR-FCFS+Cap, MICRO 2007; DRAMsim3 uses a
//! cap of 4): row hits are prioritized only until `cap` column commands have been served
//! from the currently open row of a bank; after that the bank reverts to FCFS order (its hits
//! wait behind an older request for another row, which may now close the row). Bounds the
//! starvation plain FR-FCFS allows. The definition is [`super::frfcfs`]'s, with the cap.

use super::{frfcfs_heads, Candidate, SchedContext, Scheduler};

#[derive(Debug)]
pub struct FrFcfsCap {
    cap: u32,
    /// Scratch: the pick found with the last next decision.
    last: frfcfs_heads::LastPlan,
}

impl FrFcfsCap {
    /// Row hits lose priority after `cap` (at least 1) column commands to the open row.
    pub fn new(cap: u32) -> Self {
        FrFcfsCap {
            cap: cap.max(1),
            last: frfcfs_heads::LastPlan::default(),
        }
    }
}

impl Scheduler for FrFcfsCap {
    fn name(&self) -> &'static str {
        "frfcfs-cap"
    }
    fn pick(&mut self, ctx: &SchedContext, _cands: &[Candidate]) -> Option<usize> {
        self.last.pick(ctx, self.cap)
    }
    fn next_decision(&mut self, ctx: &SchedContext, _cands: &[Candidate]) -> Option<u64> {
        self.last.next(ctx, self.cap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::test_util::Scene;

    #[test]
    fn hits_lose_priority_after_cap() {
        let mut s = FrFcfsCap::new(4);
        for streak in 0..4 {
            let sc = Scene::new(8)
                .bank(0, Some(4), 0, 0, 0)
                .streak(0, streak)
                .cand(0, 9)
                .cand(0, 4);
            assert_eq!(s.pick(&sc.ctx(1), &sc.cands), Some(1), "streak {streak}");
        }
        let sc = Scene::new(8)
            .bank(0, Some(4), 0, 0, 0)
            .streak(0, 4)
            .cand(0, 9)
            .cand(0, 4);
        assert_eq!(s.pick(&sc.ctx(1), &sc.cands), Some(0));
    }

    #[test]
    fn capped_hit_still_served_by_age() {
        let mut s = FrFcfsCap::new(2);
        let sc = Scene::new(8)
            .bank(0, Some(0), 0, 0, 0)
            .streak(0, 7)
            .cand(0, 0)
            .cand(1, 5);
        assert_eq!(s.pick(&sc.ctx(1), &sc.cands), Some(0));
        let sc = Scene::new(8)
            .bank(0, Some(0), 0, 0, 0)
            .streak(0, 7)
            .cand(1, 5)
            .cand(0, 0);
        assert_eq!(s.pick(&sc.ctx(1), &sc.cands), Some(0));
    }

    #[test]
    fn capped_bank_waits_for_its_older_conflict() {
        // The conflict's PRE is not ready yet (tRTP); the capped hits must not overtake it.
        let mut s = FrFcfsCap::new(4);
        let sc = Scene::new(8)
            .bank(0, Some(4), 0, 9, 0)
            .streak(0, 4)
            .cand(0, 9)
            .cand(0, 4);
        assert_eq!(s.pick(&sc.ctx(5), &sc.cands), None);
        assert_eq!(s.next_decision(&sc.ctx(5), &sc.cands), Some(9));
        assert_eq!(s.pick(&sc.ctx(9), &sc.cands), Some(0));
    }
}
