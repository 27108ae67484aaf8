//! The GPU-favoring policy (gpu-access-criticality §4.3): FR-FCFS in which critical GPU
//! accesses go first at both of its levels. "Among the requests to the currently open row in
//! a bank, the critical GPU accesses are served before considering the rest. When a new row
//! needs to be activated in a bank, the oldest critical GPU access is given priority over the
//! global oldest access."
//!
//! So the order is row hit first, then critical GPU access first, then oldest, over the
//! candidates whose next command is ready; a precharge still waits while its bank has pending
//! hits, as in `frfcfs`, to which this scheduler reduces when no request is critical (the
//! criticality flag is set by the GPU's critical-access identification, gpu-access-criticality
//! §4.1, and only when the estimated frame rate misses its target). A CPU request's critical
//! flag is ignored. Stateless; decided by a scan of the queue (the shared
//! row-hit-first ranking of the private `ranked` module).

use super::ranked::{is_critical_gpu, next_hit_first, pick_hit_first};
use super::{Candidate, SchedContext, Scheduler};

#[derive(Debug, Default)]
pub struct GpuFavoring;

impl Scheduler for GpuFavoring {
    fn name(&self) -> &'static str {
        "gpu-favoring"
    }
    fn pick(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Option<usize> {
        pick_hit_first(ctx, cands, |c| u8::from(!is_critical_gpu(c)))
    }
    /// FR-FCFS's: the same candidates may issue, only their order differs.
    fn next_decision(&mut self, ctx: &SchedContext, _cands: &[Candidate]) -> Option<u64> {
        next_hit_first(ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::frfcfs::tests::scene_strategy;
    use crate::scheduler::test_util::Scene;
    use crate::scheduler::RowStatus;
    use proptest::prelude::*;

    fn pick(s: &Scene, now: u64) -> Option<usize> {
        GpuFavoring.pick(&s.ctx(now), &s.cands)
    }

    #[test]
    fn critical_gpu_hits_go_first_among_hits() {
        // Bank 0 has row 4 open: an older CPU hit, an older non-critical GPU hit, a younger
        // critical GPU hit. The critical one goes first; without it, the oldest hit.
        let s = Scene::new(8)
            .bank(0, Some(4), 0, 0, 0)
            .cpu(0, 4)
            .gpu(0, 4)
            .crit(0, 4);
        assert_eq!(pick(&s, 1), Some(2));
        let s = Scene::new(8).bank(0, Some(4), 0, 0, 0).cpu(0, 4).gpu(0, 4);
        assert_eq!(pick(&s, 1), Some(0));
    }

    #[test]
    fn row_hits_still_beat_critical_misses() {
        let s = Scene::new(8)
            .bank(1, Some(4), 0, 0, 0)
            .crit(0, 2) // miss in bank 0
            .cpu(1, 4); // hit in bank 1
        assert_eq!(pick(&s, 1), Some(1));
    }

    #[test]
    fn oldest_critical_access_activates_before_the_global_oldest() {
        // No hits: misses in banks 0, 1, 2 and a conflict in bank 3 (no pending hits there).
        let s = Scene::new(8)
            .bank(3, Some(1), 0, 0, 0)
            .cpu(0, 2)
            .gpu(1, 2)
            .crit(3, 5)
            .crit(2, 2);
        assert_eq!(pick(&s, 1), Some(2), "the oldest critical access (a PRE)");
        // Not ready yet: the global oldest ready request goes instead (work-conserving).
        let s = Scene::new(8).bank(2, None, 30, 0, 0).cpu(0, 2).crit(2, 2);
        assert_eq!(pick(&s, 1), Some(0));
        assert_eq!(pick(&s, 30), Some(1));
    }

    #[test]
    fn critical_precharge_waits_for_pending_hits() {
        // The critical conflict would close row 4, which a CPU request still hits (RD at 20).
        let s = Scene::new(8)
            .bank(0, Some(4), 0, 0, 20)
            .crit(0, 9)
            .cpu(0, 4);
        let x = s.ctx(5);
        assert_eq!(GpuFavoring.pick(&x, &s.cands), None);
        assert_eq!(GpuFavoring.next_decision(&x, &s.cands), Some(20));
        assert_eq!(pick(&s, 20), Some(1));
    }

    /// The paper's words as an O(queue) definition: the ready requests FR-FCFS may issue;
    /// if some hit, the oldest critical GPU hit, else the oldest hit; otherwise the oldest
    /// critical GPU access, else the oldest.
    fn reference(x: &SchedContext, cands: &[Candidate]) -> Option<usize> {
        let ok: Vec<usize> = (0..cands.len())
            .filter(|&i| {
                let c = &cands[i];
                x.ready(c) && (x.status(c) != RowStatus::Conflict || x.bank(c).pending_hits == 0)
            })
            .collect();
        let hits: Vec<usize> = ok
            .iter()
            .copied()
            .filter(|&i| x.status(&cands[i]) == RowStatus::Hit)
            .collect();
        let pool = if hits.is_empty() { ok } else { hits };
        let crit = pool.iter().copied().find(|&i| cands[i].req.critical);
        crit.or(pool.first().copied())
    }

    proptest! {
        #[test]
        fn matches_the_rule_and_is_frfcfs_without_critical_requests(
            (s, now, _cap) in scene_strategy(),
            flags in prop::collection::vec((any::<bool>(), any::<bool>()), 24),
        ) {
            let x = s.ctx(now);
            prop_assert_eq!(GpuFavoring.pick(&x, &s.cands), crate::scheduler::frfcfs::pick(&x, &s.cands, u32::MAX));
            let mut s = s;
            for (c, (gpu, crit)) in s.cands.iter_mut().zip(flags) {
                c.req.source = if gpu { crate::GPU_SOURCE } else { 1 };
                c.req.critical = gpu && crit;
            }
            let x = s.ctx(now);
            prop_assert_eq!(GpuFavoring.pick(&x, &s.cands), reference(&x, &s.cands));
        }
    }
}
