//! The decision the priority schedulers share: among the candidates whose next command is
//! ready now and that may issue at all, the one with the smallest key, where the key ranks a
//! priority class, the row-hit status and age in one of two orders.
//!
//! * **Row hit first** (`gpu-favoring`, `im`; gpu-access-criticality §4.3: "among the
//!   requests to the currently open row in a bank, the critical GPU accesses are served
//!   before considering the rest. When a new row needs to be activated …, the oldest critical
//!   GPU access is given priority over the global oldest"): (not a hit, class, age). Which
//!   candidates may issue is FR-FCFS's rule (a precharge waits while its bank has pending
//!   hits), so the next decision is FR-FCFS's ([`super::frfcfs::next`]) and the
//!   schedulers reduce to `frfcfs` when every candidate is in one class.
//! * **Class first** (`dynprio`, `dash`: priority levels above FR-FCFS): (class, not a hit,
//!   age). A precharge waits only while its bank has a pending hit of the same or a better
//!   class; a better-class request may close a row that worse-class requests still hit.
//!
//! Both are work-conserving: a better candidate that is not ready never holds back a ready
//! one, as in FR-FCFS. Both scan the queue (O(queue) per decision, like Ramulator 2's
//! `get_best_request`).

use super::{Candidate, RowStatus, SchedContext};
use crate::request::GPU_SOURCE;

/// Is the candidate a CPU core's request (source below [`GPU_SOURCE`])? Every other source
/// (the GPU, other agents) is on the GPU side.
#[inline]
pub(crate) fn is_cpu(c: &Candidate) -> bool {
    c.req.source < GPU_SOURCE
}

/// Is the candidate a critical GPU access (a GPU-side request with the critical flag; the
/// flag of a CPU request is ignored)?
#[inline]
pub(crate) fn is_critical_gpu(c: &Candidate) -> bool {
    !is_cpu(c) && c.req.critical
}

/// A uniform draw in `[0, 1)` that is a pure function of `seed` and the decision counter `n`
/// (SplitMix64 of their mix): a scheduler whose `pick` may be called speculatively draws
/// the same number until it advances `n` in `on_issue`, and runs are bit-identical.
pub(crate) fn unit_draw(seed: u64, n: u64) -> f64 {
    let mut z = seed ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// May FR-FCFS issue candidate `c`, whose status is `s`? Hits and activates always; a
/// precharge only if it closes no row other requests hit.
#[inline]
pub(crate) fn fr_allowed(ctx: &SchedContext, c: &Candidate, s: RowStatus) -> bool {
    s != RowStatus::Conflict || ctx.bank(c).pending_hits == 0
}

/// Key of candidate `i`: `major` in bits 40.., `minor` in bits 32..40, the index below.
#[inline]
fn key(major: u8, minor: u8, i: usize) -> u64 {
    (u64::from(major) << 40) | (u64::from(minor) << 32) | i as u64
}

/// Row-hit-first pick at `ctx.now`: the ready FR-FCFS-eligible candidate with the smallest
/// (not a hit, `class`, index).
pub(crate) fn pick_hit_first(
    ctx: &SchedContext,
    cands: &[Candidate],
    class: impl Fn(&Candidate) -> u8,
) -> Option<usize> {
    let mut best = u64::MAX;
    for (i, c) in cands.iter().enumerate() {
        if !ctx.ready(c) {
            continue;
        }
        let s = ctx.status(c);
        if fr_allowed(ctx, c, s) {
            best = best.min(key(u8::from(s != RowStatus::Hit), class(c), i));
        }
    }
    (best != u64::MAX).then_some((best & 0xffff_ffff) as usize)
}

/// Earliest cycle a row-hit-first scheduler could pick something: FR-FCFS's, whose
/// eligibility it shares.
#[inline]
pub(crate) fn next_hit_first(ctx: &SchedContext) -> Option<u64> {
    super::frfcfs_heads::next(ctx, u32::MAX)
}

/// Per bank, the best (smallest) class among the candidates hitting its open row
/// (`u8::MAX`: none), for the class-first hold-back rule.
#[derive(Debug, Default)]
pub(crate) struct HitClasses(Vec<u8>);

impl HitClasses {
    /// Recompute for the candidates and classes of this decision.
    pub(crate) fn fill(
        &mut self,
        ctx: &SchedContext,
        cands: &[Candidate],
        class: &impl Fn(&Candidate) -> u8,
    ) {
        self.0.clear();
        self.0.resize(ctx.banks.len(), u8::MAX);
        for c in cands {
            if ctx.status(c) == RowStatus::Hit {
                let b = &mut self.0[c.bank as usize];
                *b = (*b).min(class(c));
            }
        }
    }

    /// May a candidate of class `k` and status `s` issue? A precharge waits while its bank
    /// has a pending hit of class `k` or better.
    #[inline]
    fn allowed(&self, c: &Candidate, s: RowStatus, k: u8) -> bool {
        s != RowStatus::Conflict || self.0[c.bank as usize] > k
    }
}

/// Class-first pick at `ctx.now`: the ready eligible candidate with the smallest (`class`,
/// not a hit, index); `hits` must have been filled for this decision with the same classes.
pub(crate) fn pick_class_first(
    ctx: &SchedContext,
    cands: &[Candidate],
    class: impl Fn(&Candidate) -> u8,
    hits: &HitClasses,
) -> Option<usize> {
    let mut best = u64::MAX;
    for (i, c) in cands.iter().enumerate() {
        if !ctx.ready(c) {
            continue;
        }
        let (s, k) = (ctx.status(c), class(c));
        if hits.allowed(c, s, k) {
            best = best.min(key(k, u8::from(s != RowStatus::Hit), i));
        }
    }
    (best != u64::MAX).then_some((best & 0xffff_ffff) as usize)
}

/// Earliest cycle `>= ctx.now` at which an eligible candidate is ready, with the classes of
/// `ctx.now` (`None` if none ever is, e.g. all wait for a refresh). A scheduler whose classes
/// change with time must also wake at those changes.
pub(crate) fn next_class_first(
    ctx: &SchedContext,
    cands: &[Candidate],
    class: impl Fn(&Candidate) -> u8,
    hits: &HitClasses,
) -> Option<u64> {
    let mut t = u64::MAX;
    for c in cands {
        if hits.allowed(c, ctx.status(c), class(c)) {
            t = t.min(ctx.ready_at(c));
        }
    }
    (t != u64::MAX).then(|| t.max(ctx.now))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::frfcfs::tests::{reference_next, scene_strategy};
    use crate::scheduler::test_util::Scene;
    use proptest::prelude::*;

    #[test]
    fn draws_are_uniform_and_reproducible() {
        let n = 20_000;
        let mean = (0..n).map(|i| unit_draw(7, i)).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
        assert!((0..n).all(|i| (0.0..1.0).contains(&unit_draw(7, i))));
        assert_eq!(unit_draw(7, 12), unit_draw(7, 12));
        assert_ne!(unit_draw(7, 12), unit_draw(8, 12));
    }

    proptest! {
        /// With one class for everyone, row-hit first is FR-FCFS, and so is class first.
        #[test]
        fn one_class_is_frfcfs((s, now, _cap) in scene_strategy()) {
            let x = s.ctx(now);
            let fr = crate::scheduler::frfcfs::pick(&x, &s.cands, u32::MAX);
            prop_assert_eq!(pick_hit_first(&x, &s.cands, |_| 3), fr);
            let mut h = HitClasses::default();
            h.fill(&x, &s.cands, &|_| 3);
            prop_assert_eq!(pick_class_first(&x, &s.cands, |_| 3, &h), fr);
            let next = reference_next(&x, &s.cands, u32::MAX);
            prop_assert_eq!(next_class_first(&x, &s.cands, |_| 3, &h), next);
            prop_assert_eq!(next_hit_first(&x), next);
        }
    }

    #[test]
    fn class_first_lets_a_better_class_close_a_worse_row() {
        // Bank 0 has row 4 open with a pending class-2 hit (not ready); the class-1
        // conflict may precharge, the class-2 conflict may not.
        let s = Scene::new(4)
            .bank(0, Some(4), 0, 0, 50)
            .cand(0, 4)
            .cand(0, 9)
            .cand(0, 7);
        let class = |c: &Candidate| if c.req.id == 1 { 1 } else { 2 };
        let mut h = HitClasses::default();
        let x = s.ctx(5);
        h.fill(&x, &s.cands, &class);
        assert_eq!(pick_class_first(&x, &s.cands, class, &h), Some(1));
        assert_eq!(next_class_first(&x, &s.cands, class, &h), Some(5));
        // All one class: the precharge waits for the hit at 50.
        h.fill(&x, &s.cands, &|_| 2);
        assert_eq!(pick_class_first(&x, &s.cands, |_| 2, &h), None);
        assert_eq!(next_class_first(&x, &s.cands, |_| 2, &h), Some(50));
    }
}
