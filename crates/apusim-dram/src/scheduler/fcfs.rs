//! First-come first-served: always the oldest request; the controller waits until its next
//! command is legal, even if younger requests could proceed.

use super::{Candidate, SchedContext, Scheduler};

#[derive(Debug, Default)]
pub struct Fcfs;

impl Scheduler for Fcfs {
    fn name(&self) -> &'static str {
        "fcfs"
    }
    fn pick(&mut self, _ctx: &SchedContext, cands: &[Candidate]) -> Option<usize> {
        (!cands.is_empty()).then_some(0)
    }
    fn next_decision(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Option<u64> {
        cands.first().map(|c| ctx.ready_at(c).max(ctx.now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::test_util::Scene;

    #[test]
    fn picks_oldest_even_if_not_ready() {
        // Bank 0 has row 1 open (PRE legal at 50); bank 1 has row 0 open and ready.
        let s = Scene::new(8)
            .bank(0, Some(1), 0, 50, 0)
            .bank(1, Some(0), 0, 0, 0)
            .cand(0, 0)
            .cand(1, 0);
        let x = s.ctx(10);
        assert_eq!(Fcfs.pick(&x, &s.cands), Some(0));
        assert!(!x.ready(&s.cands[0]));
        assert_eq!(Fcfs.next_decision(&x, &s.cands), Some(50));
        assert_eq!(Fcfs.pick(&x, &[]), None);
    }
}
