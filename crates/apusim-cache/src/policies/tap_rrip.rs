//! TAP-RRIP and TAP-RRIP-S, tap-tlp-aware-llc.txt §3.1, §3.2, §3.4 (Table 3) and §5.3.
//!
//! The base is the thread-aware DRRIP the paper evaluates (footnote 2, §5.2: 2-bit RRPVs,
//! one SRRIP/BRRIP duel per agent, [`super::util::AgentBimodalDuel`] as in
//! [`super::ta_drrip`]: 32+32 leader sets per 1K per agent, 10-bit selectors, BRRIP's long
//! insertion once in `brrip_throttle` = 32). TAP adds:
//!
//! - **Core sampling** (§3.1, §3.1.3): GPU accesses from core `pol1_core` (Core-POL1) insert
//!   at RRPV 3 (LRU insertion), from `pol2_core` (Core-POL2) at RRPV 0 (MRU insertion); every
//!   other core follows. At the end of each period the CSC compares the two cores' retired
//!   instructions ([`super::core_sampling::CoreSampler`], `threshold_alpha` = 5%).
//! - **RRIP-Mask** (§3.4): set when the CSC finds caching not beneficial (delta ≤ 5%) or when
//!   XSRATIO > 1 (the GPU made more than `t_xs` = 10 times the accesses of the busiest CPU
//!   core in the period, §3.2). Table 3, as replayed by the tests:
//!
//!   | RRIP's decision (GPU PSEL) | RRIP-Mask | final GPU policy |
//!   |---|---|---|
//!   | SRRIP | 0 | SRRIP |
//!   | BRRIP | 0 | BRRIP |
//!   | SRRIP | 1 | BRRIP |
//!   | BRRIP | 1 | BRRIP |
//!
//!   With the mask set, GPU hits do not promote ("the hitting GPGPU block will not be
//!   promoted").
//! - **GPU-first victims**: among the lines at RRPV 3 (after aging), the lowest-way GPU line is
//!   evicted before any CPU line; without a GPU line, the lowest way as in SRRIP.
//! - **TAP-S** (`S = true`, §5.3): if any CPU core streamed in the last period
//!   ([`super::core_sampling::StreamDetector`]), RRIP-Mask is reset to 0 so the GPU runs the
//!   base RRIP.
//!
//! Choices where the paper is silent: the sampled cores' hits always promote (they stand for
//! plain LRU and MRU insertion) and their misses do not train the GPU's selector (their
//! insertion is forced), while the no-promotion rule applies to follower cores; the GPU-first
//! tie-break is always on (the paper states it for TAP-RRIP without a condition); the
//! GPU's leader sets keep their fixed policy under the mask (so the duel keeps learning);
//! periods, XSRATIO and streaming detection are those of [`super::core_sampling`].

use super::core_sampling::{self, CoreSampler, Role, TapWatch};
use super::util::{AgentBimodalDuel, Bimodal, BRRIP_THROTTLE, PSEL_BITS, RRPV_LONG, RRPV_MAX};
use crate::params::ParamList;
use crate::{CacheError, Feedback, MissAction, Policy, PolicyContext, PolicyStat, SetView};
use apusim_trace::{Access, Agent};

/// TAP-RRIP, with the streaming-CPU extension when `S`.
pub struct TapRrip<const S: bool> {
    ways: usize,
    rrpv: Vec<u8>,
    duel: AgentBimodalDuel,
    tap: TapWatch<true, S>,
    mask: bool,
}

impl<const S: bool> TapRrip<S> {
    pub fn rrpv(&self, set: usize, way: usize) -> u8 {
        self.rrpv[set * self.ways + way]
    }
    /// The RRIP-Mask register.
    pub fn rrip_mask(&self) -> bool {
        self.mask
    }
    pub fn xsratio(&self) -> u32 {
        self.tap.xs.value()
    }
    /// The core-sampling controller (its current sampled cores and decision).
    pub fn sampler(&self) -> &CoreSampler {
        &self.tap.sampler
    }
    pub fn psel(&self, agent: Agent) -> u32 {
        self.duel.duel().psel(agent).value()
    }
    /// True if follower GPU cores insert like BRRIP in `set` now (Table 3).
    pub fn gpu_uses_brrip(&self, set: usize) -> bool {
        match self.duel.duel().leader(set, Agent::GPU) {
            Some(p) => p == 1,
            None => self.mask || self.duel.duel().policy(set, Agent::GPU) == 1,
        }
    }

    /// End of a period: CSC decision, XSRATIO, streaming detection, RRIP-Mask.
    pub fn end_period(&mut self) {
        self.tap.sampler.end_period();
        let xs = self.tap.xs.end_period();
        self.mask = !self.tap.sampler.cache_friendly() || xs > 1;
        if S {
            self.tap.stream.end_period();
            if self.tap.stream.any_cpu_streaming() {
                self.mask = false;
            }
        }
    }

    #[inline]
    fn observe(&mut self, req: &Access, hit: bool) {
        if self.tap.observe(req, hit) {
            self.end_period();
        }
    }
}

pub type TapRripBase = TapRrip<false>;
pub type TapRripS = TapRrip<true>;

impl<const S: bool> Policy for TapRrip<S> {
    fn params(list: &mut ParamList) {
        list.add(&[PSEL_BITS, BRRIP_THROTTLE]);
        core_sampling::declare(list, true, S);
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        if ctx.ways > 0x10000 {
            return Err(CacheError::Config(
                "TAP-RRIP serves at most 65536 ways".into(),
            ));
        }
        let b = Bimodal::from_ctx(ctx)?;
        Ok(TapRrip {
            ways: ctx.ways,
            rrpv: vec![RRPV_MAX; ctx.sets * ctx.ways],
            duel: AgentBimodalDuel::from_ctx(ctx, b)?,
            tap: TapWatch::from_ctx(ctx)?,
            mask: false,
        })
    }
    #[inline]
    fn prefetch_set(&self, set: usize) {
        super::util::prefetch(&self.rrpv, set * self.ways);
    }
    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, req: &Access) {
        let frozen =
            self.mask && req.agent.is_gpu() && self.tap.sampler.role(req) == Role::Follower;
        if !frozen {
            self.rrpv[set * self.ways + way] = 0;
        }
        self.observe(req, true);
    }
    #[inline]
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        if self.tap.sampler.role(req) == Role::Follower {
            self.duel.record_miss(set, req);
        }
        self.observe(req, false);
        MissAction::Allocate
    }
    #[inline]
    fn victim(&mut self, set: usize, _req: &Access, view: &SetView<'_>) -> usize {
        let base = set * self.ways;
        let s = &mut self.rrpv[base..base + self.ways];
        let max = s.iter().copied().max().unwrap_or(RRPV_MAX);
        if max < RRPV_MAX {
            let age = RRPV_MAX - max;
            for v in s.iter_mut() {
                *v += age;
            }
        }
        // Branch-free: the largest key is a GPU line at RRPV 3 in the lowest way, else the
        // lowest way at RRPV 3.
        let mut best = 0u32;
        for (w, &v) in s.iter().enumerate() {
            let key = ((v >= RRPV_MAX) as u32) << 17
                | (view.meta(w).agent.is_gpu() as u32) << 16
                | (0xFFFF - w as u32);
            best = best.max(key);
        }
        (0xFFFF - (best & 0xFFFF)) as usize
    }
    #[inline]
    fn on_fill(&mut self, set: usize, way: usize, req: &Access) {
        let v = match self.tap.sampler.role(req) {
            Role::Pol1 => RRPV_MAX,
            Role::Pol2 => 0,
            Role::Follower => {
                let brrip = if req.agent.is_gpu() {
                    self.gpu_uses_brrip(set)
                } else {
                    self.duel.duel().policy(set, req.agent) == 1
                };
                if !brrip || self.duel.bimodal_near(req.agent) {
                    RRPV_LONG
                } else {
                    RRPV_MAX
                }
            }
        };
        self.rrpv[set * self.ways + way] = v;
    }
    fn on_feedback(&mut self, fb: &Feedback) {
        if self.tap.on_feedback(fb) {
            self.end_period();
        }
    }
    fn stats(&self) -> Vec<PolicyStat> {
        let mut s = Vec::new();
        let duel = self.duel.duel();
        for i in 0..duel.agents() {
            let name = duel.agent_name(i);
            s.push((format!("psel.{name}"), duel.psel_at(i).value() as f64));
        }
        s.push(("rrip_mask".into(), self.mask as u8 as f64));
        s.push(("xsratio".into(), self.tap.xs.value() as f64));
        s.push((
            "gpu_cache_friendly".into(),
            self.tap.sampler.cache_friendly() as u8 as f64,
        ));
        s.push(("periods".into(), self.tap.epoch.periods as f64));
        // With `S`, `streaming_agents` counts the agents (CPU cores and the GPU) the stream
        // detector flagged in the last period; TAP-S acts on the CPU cores among them.
        self.tap.push_stats(&mut s);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::util::test_support::*;
    use super::*;
    use apusim_trace::{Op, Stream};

    // 64 sets x 2 ways, cpu0 and the GPU (see ta_drrip's tests): cpu0 SRRIP leader 0, BRRIP
    // leader 31; GPU SRRIP leader 30, BRRIP leader 29; set 5 follows.
    const GPU_SRRIP: u64 = 30;
    const FOLLOWER: u64 = 5;

    fn gpu_core(unit: u16, line: u64) -> Access {
        Access::new(Agent::GPU, Stream::ShaderData, Op::Read, line * LINE, 64).with_unit(unit)
    }
    /// Long periods ended by hand; the sampled cores stay 0 and 1 (rotation has its own
    /// test) so the Table 3 replay can name them.
    fn build<const S: bool>(sets: usize, ways: usize) -> crate::Cache<TapRrip<S>> {
        let mut c = ctx(sets, ways);
        c.params.insert("period_accesses".into(), 1e9);
        c.params.insert("rotate_periods".into(), 0.0);
        cache(sets, ways, TapRrip::<S>::build(&c).unwrap())
    }
    fn feed(c: &mut crate::Cache<impl Policy>, pol1: u64, pol2: u64) {
        for (core, count) in [(0, pol1), (1, pol2)] {
            c.feedback(&Feedback::GpuCoreInstructions { core, count });
        }
    }
    /// Four CPU accesses in follower set 20, so the period's XSRATIO stays 1.
    fn balance(c: &mut crate::Cache<impl Policy>) {
        for l in 0..4 {
            run(c, &cpu_read(20 + 64 * (100 + l)));
        }
    }

    #[test]
    fn sampled_cores_insert_lru_and_mru() {
        let mut c = build::<false>(64, 2);
        run(&mut c, &gpu_core(0, FOLLOWER));
        run(&mut c, &gpu_core(1, FOLLOWER + 64));
        assert_eq!(
            c.policy().rrpv(FOLLOWER as usize, 0),
            3,
            "POL1: LRU insertion"
        );
        assert_eq!(
            c.policy().rrpv(FOLLOWER as usize, 1),
            0,
            "POL2: MRU insertion"
        );
        run(&mut c, &gpu_core(2, 7));
        assert_eq!(c.policy().rrpv(7, 0), 2, "follower: SRRIP");
        // Sampled-core misses in the GPU's leader sets do not train its selector.
        run(&mut c, &gpu_core(0, GPU_SRRIP));
        assert_eq!(c.policy().psel(Agent::GPU), 511);
        run(&mut c, &gpu_core(4, GPU_SRRIP + 64));
        assert_eq!(c.policy().psel(Agent::GPU), 512);
    }

    /// Table 3, row by row: the GPU selector's decision against RRIP-Mask.
    #[test]
    fn replays_table_3() {
        let mut c = build::<false>(64, 2);
        let set = FOLLOWER as usize;
        // Row 1: PSEL says SRRIP, mask 0 -> SRRIP.
        assert!(!c.policy().rrip_mask());
        assert!(!c.policy().gpu_uses_brrip(set));
        // Row 3: the CSC finds < 5% difference -> mask 1 -> BRRIP.
        balance(&mut c);
        feed(&mut c, 1000, 1010);
        c.policy_mut().end_period();
        assert!(c.policy().rrip_mask());
        assert!(c.policy().gpu_uses_brrip(set));
        run(&mut c, &gpu_core(3, FOLLOWER));
        assert_eq!(c.policy().rrpv(set, 0), 3, "bimodal: distant");
        // Row 4: PSEL moves to BRRIP too (one GPU miss in its SRRIP leader) -> BRRIP.
        run(&mut c, &gpu_core(3, GPU_SRRIP));
        assert_eq!(c.policy().psel(Agent::GPU), 512);
        assert!(c.policy().gpu_uses_brrip(set));
        // Row 2: the CSC finds 20% difference -> mask 0, PSEL still BRRIP -> BRRIP.
        balance(&mut c);
        feed(&mut c, 1000, 1200);
        c.policy_mut().end_period();
        assert!(!c.policy().rrip_mask());
        assert!(c.policy().gpu_uses_brrip(set));
        // Back to row 1: a GPU miss in its BRRIP leader -> PSEL SRRIP.
        run(&mut c, &gpu_core(3, 29));
        assert!(!c.policy().gpu_uses_brrip(set));
        // The CPU never sees the mask.
        feed(&mut c, 1000, 1000);
        balance(&mut c);
        c.policy_mut().end_period();
        assert!(c.policy().rrip_mask());
        run(&mut c, &cpu_read(9));
        assert_eq!(c.policy().rrpv(9, 0), 2);
    }

    #[test]
    fn xsratio_alone_sets_the_mask_and_freezes_gpu_hits() {
        let mut c = build::<false>(64, 2);
        run(&mut c, &cpu_read(FOLLOWER + 64));
        for _ in 0..11 {
            run(&mut c, &gpu_core(3, FOLLOWER));
        }
        // 11 GPU accesses vs 1 CPU access: XSRATIO 11 > 10; no CSC decision (no feedback).
        c.policy_mut().end_period();
        assert_eq!(c.policy().xsratio(), 11);
        assert!(c.policy().rrip_mask());
        // A new GPU line inserts bimodally (3); a follower hit leaves it at 3.
        run(&mut c, &gpu_core(3, 11));
        assert_eq!(c.policy().rrpv(11, 0), 3);
        assert_eq!(run(&mut c, &gpu_core(3, 11)), Did::Hit);
        assert_eq!(c.policy().rrpv(11, 0), 3, "masked GPU hit: no promotion");
        // Sampled cores and the CPU still promote.
        assert_eq!(run(&mut c, &gpu_core(1, 11)), Did::Hit);
        assert_eq!(c.policy().rrpv(11, 0), 0);
        // With XSRATIO back to 1 (balanced period) and no CSC verdict, the mask clears.
        for _ in 0..2 {
            run(&mut c, &cpu_read(12));
            run(&mut c, &gpu_core(3, 13));
        }
        c.policy_mut().end_period();
        assert!(!c.policy().rrip_mask());
        run(&mut c, &gpu_core(3, 14));
        assert_eq!(c.policy().rrpv(14, 0), 2);
        assert_eq!(run(&mut c, &gpu_core(3, 14)), Did::Hit);
        assert_eq!(c.policy().rrpv(14, 0), 0);
    }

    /// Among equal RRPVs the GPU line goes first, even in a higher way; a GPU line below
    /// RRPV 3 is not preferred over a CPU line at 3.
    #[test]
    fn gpu_lines_are_evicted_first_among_equals() {
        let mut c = build::<false>(1, 4);
        run(&mut c, &cpu_read(0));
        run(&mut c, &cpu_read(1));
        run(&mut c, &gpu_core(3, 2));
        run(&mut c, &cpu_read(3));
        // All at RRPV 2: aging makes all 3; SRRIP would evict way 0 (a CPU line).
        assert_eq!(run(&mut c, &cpu_read(4)), Did::Fill(Some(2)));
        // Now [3, 3, 2 (new CPU line), 3]: no GPU line at 3: the lowest way.
        assert_eq!(run(&mut c, &cpu_read(5)), Did::Fill(Some(0)));
        let mut e = build::<false>(1, 2);
        run(&mut e, &cpu_read(0));
        run(&mut e, &gpu_core(3, 1));
        assert_eq!(run(&mut e, &gpu_core(3, 1)), Did::Hit); // [2 (CPU), 0 (GPU)]
        assert_eq!(run(&mut e, &cpu_read(2)), Did::Fill(Some(0)));
    }

    /// §3.1.4: after each period the LRU/MRU insertion roles move on by one GPU core (four
    /// seen here), and the next period's CSC compares the new pair.
    #[test]
    fn sampled_roles_rotate_over_the_gpu_cores() {
        let mut cx = ctx(64, 2);
        cx.params.insert("period_accesses".into(), 1e9);
        let mut c = cache(64, 2, TapRripBase::build(&cx).unwrap());
        run(&mut c, &gpu_core(3, 7)); // follower, SRRIP: 2; core ids 0..=3 seen
        assert_eq!(c.policy().rrpv(7, 0), 2);
        balance(&mut c);
        c.feedback(&Feedback::GpuCoreInstructions {
            core: 0,
            count: 1000,
        });
        c.feedback(&Feedback::GpuCoreInstructions {
            core: 1,
            count: 1010,
        });
        c.policy_mut().end_period();
        assert!(c.policy().rrip_mask(), "pair (0, 1) within 5%");
        let st = c.policy().stats();
        assert!(st.contains(&("pol1_core".to_string(), 1.0)));
        assert!(st.contains(&("pol2_core".to_string(), 2.0)));
        // Now core 1 inserts at 3 (POL1), core 2 at 0 (POL2), core 0 follows (masked: BRRIP
        // bimodal, its first insertion distant, so check a hit: masked followers do not
        // promote, sampled cores do).
        run(&mut c, &gpu_core(1, FOLLOWER));
        assert_eq!(c.policy().rrpv(FOLLOWER as usize, 0), 3);
        run(&mut c, &gpu_core(2, FOLLOWER + 64));
        assert_eq!(c.policy().rrpv(FOLLOWER as usize, 1), 0);
        run(&mut c, &gpu_core(0, 9));
        assert_eq!(run(&mut c, &gpu_core(0, 9)), Did::Hit);
        assert_eq!(c.policy().rrpv(9, 0), 3, "core 0 is a masked follower now");
        // Period 2 is judged on cores 1 and 2: 20% apart clears the mask; core 0's count
        // is ignored.
        balance(&mut c);
        for (core, count) in [(1, 1000), (2, 1200), (0, 1000)] {
            c.feedback(&Feedback::GpuCoreInstructions { core, count });
        }
        c.policy_mut().end_period();
        assert!(!c.policy().rrip_mask());
        assert_eq!(c.policy().sampler().sampled_cores(), (2, 3));
    }

    /// TAP-S: a streaming CPU core resets RRIP-Mask.
    #[test]
    fn tap_s_resets_the_mask_for_a_streaming_cpu() {
        let mut cx = ctx(64, 2);
        cx.params.insert("period_accesses".into(), 1e9);
        cx.params.insert("stream_min_misses".into(), 4.0);
        let mut s = cache(64, 2, TapRripS::build(&cx).unwrap());
        let mut t = cache(64, 2, TapRripBase::build(&cx).unwrap());
        // The CPU streams: 4 misses in 4 accesses; the CSC says "not beneficial".
        for l in 0..4 {
            run(&mut s, &cpu_read(FOLLOWER + 64 * l));
            run(&mut t, &cpu_read(FOLLOWER + 64 * l));
        }
        feed(&mut s, 1000, 1000);
        feed(&mut t, 1000, 1000);
        s.policy_mut().end_period();
        t.policy_mut().end_period();
        assert!(t.policy().rrip_mask());
        assert!(!s.policy().rrip_mask());
        // A non-streaming period restores it.
        run(&mut s, &cpu_read(1));
        feed(&mut s, 1000, 1000);
        s.policy_mut().end_period();
        assert!(s.policy().rrip_mask());
    }

    /// The `tap-rrip-s` = `tap-rrip` twin: TAP-S only resets RRIP-Mask (tap §5.3), so it
    /// changes nothing while the mask is clear. In functional runs no core-sampling decision
    /// is made (`csc_decisions` = 0) and the mask comes from XSRATIO alone: on mix TAP-S-E
    /// the GPU made 8 times the CPU's accesses, below `t_xs` = 10, so `rrip_mask` stayed 0
    /// with the CPU streaming. Here one period (ended by hand): the CPU streams 4 lines (θm =
    /// 4), follower GPU core 3 misses 8 lines, ratio 8 / 4 = 2. With `t_xs` = 10 neither
    /// policy masks and a follower GPU fill inserts at SRRIP's 2 in both; with `t_xs` = 1
    /// TAP-RRIP masks (bimodal insertion, distant 3; hits do not promote) and TAP-RRIP-S
    /// resets the mask for the streaming CPU (2, and a hit promotes to 0).
    #[test]
    fn tap_rrip_s_differs_from_tap_rrip_only_while_the_mask_is_set() {
        fn one_period<const S: bool>(t_xs: f64) -> crate::Cache<TapRrip<S>> {
            let mut cx = ctx(64, 2);
            cx.params.insert("period_accesses".into(), 1e9);
            cx.params.insert("rotate_periods".into(), 0.0);
            cx.params.insert("stream_min_misses".into(), 4.0);
            cx.params.insert("t_xs".into(), t_xs);
            let mut c = cache(64, 2, TapRrip::<S>::build(&cx).unwrap());
            for l in 0..4 {
                run(&mut c, &cpu_read(FOLLOWER + 64 * l));
            }
            for l in 0..8 {
                run(&mut c, &gpu_core(3, 9 + 64 * l));
            }
            c.policy_mut().end_period();
            c
        }
        let set = FOLLOWER as usize;
        let line = FOLLOWER + 64 * 100;
        for t_xs in [10.0, 1.0] {
            let mut t = one_period::<false>(t_xs);
            let mut s = one_period::<true>(t_xs);
            assert!(s
                .policy()
                .stats()
                .contains(&("streaming_agents".to_string(), 2.0)));
            assert!(!s.policy().rrip_mask(), "t_xs {t_xs}");
            assert_eq!(
                run(&mut s, &gpu_core(3, line)),
                Did::Fill(Some(FOLLOWER + 128))
            );
            assert_eq!(
                run(&mut t, &gpu_core(3, line)),
                Did::Fill(Some(FOLLOWER + 128))
            );
            assert_eq!(s.policy().rrpv(set, 0), 2, "t_xs {t_xs}");
            assert_eq!(run(&mut s, &gpu_core(3, line)), Did::Hit);
            assert_eq!(run(&mut t, &gpu_core(3, line)), Did::Hit);
            assert_eq!(s.policy().rrpv(set, 0), 0, "t_xs {t_xs}");
            if t_xs == 10.0 {
                assert_eq!(t.policy().xsratio(), 1);
                assert!(!t.policy().rrip_mask());
                assert_eq!(t.policy().rrpv(set, 0), 0);
            } else {
                assert_eq!(t.policy().xsratio(), 2);
                assert!(t.policy().rrip_mask());
                assert_eq!(t.policy().rrpv(set, 0), 3, "distant, and the hit froze it");
            }
        }
    }
}
