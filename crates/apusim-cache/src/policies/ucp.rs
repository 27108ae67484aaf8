//! Utility-based cache partitioning (UCP, Qureshi and Patt, MICRO 2006) and its TLP-aware
//! forms TAP-UCP and TAP-UCP-S, tap-tlp-aware-llc.txt §2.3.1, §3.1.1, §3.3, §5.3 and
//! Appendix A (Algorithm 1).
//!
//! Applications are the agents: each CPU core and the GPU. Every line has a true-LRU stack
//! position ([`super::umon::LruStack`]); fills go to the MRU position and hits move the line
//! there. A [`super::umon::Umon`] watches every agent's demand accesses on 32 sampled sets per
//! 1024. At the end of each period ([`super::core_sampling::Epoch`]) the look-ahead algorithm
//! ([`super::umon::Utility`]) computes each agent's way target and the hit counters are
//! halved; replacement then follows the targets ([`StackLru`]): a requester
//! below its target evicts the LRU line of an agent above its own, otherwise its own LRU line.
//! Before the first period ends the cache is unpartitioned (global LRU).
//!
//! TAP-UCP (`TAP = true`) adds, per Algorithm 1:
//! - core sampling (§3.1.1): read and write misses of GPU core `pol1_core` bypass the LLC
//!   (Core-POL1), core `pol2_core` inserts at MRU like everyone else (Core-POL2); at the end of
//!   a period the CSC ([`super::core_sampling::CoreSampler`]) sets UCP-Mask when their retired
//!   instructions differ by no more than `threshold_alpha` (5%), and a set UCP-Mask leaves the
//!   GPU out of the look-ahead (it keeps its one way, lines 8–11);
//! - lifetime normalization (§3.2): the GPU's hit counters are divided by XSRATIO before the
//!   look-ahead when XSRATIO > 1 (lines 3–5).
//!
//! TAP-UCP-S (`S = true`, §5.3) also leaves every CPU core that streamed in the last period
//! ([`super::core_sampling::StreamDetector`]) out of the look-ahead, so it gets one way.
//!
//! Choices where the paper is silent: the UMON, XSRATIO and the stream detector count demand
//! accesses (reads and writes) only; Core-POL1's accesses still train the GPU's UMON (the UMON
//! models the application alone); the masked GPU's hit counters are still kept; parameters
//! `period_cycles`, `period_accesses`, `pol1_core`, `pol2_core`, `threshold_alpha`, `t_xs`,
//! `stream_min_misses`, `stream_miss_rate` (see [`super::core_sampling`]).

use super::core_sampling::{self, CoreSampler, Role, TapWatch};
use super::stack_lru::{StackLru, StackRule};
use super::umon::{LruStack, QuotaScratch, Umon, Utility};
use crate::params::ParamList;
use crate::{CacheError, Feedback, MissAction, PolicyContext, PolicyStat};
use apusim_trace::Access;

/// UCP (`TAP = false`), TAP-UCP (`TAP = true`), with TAP-S streaming detection when `S`:
/// [`StackLru`] with the utility partition.
pub type Ucp<const TAP: bool, const S: bool> = StackLru<UcpPartition<TAP, S>>;

/// The utility partition of [`Ucp`]: one class per agent, its targets from the look-ahead.
pub struct UcpPartition<const TAP: bool, const S: bool> {
    n_cpus: usize,
    utility: Utility,
    targets: Vec<usize>,
    partitioned: bool,
    scratch: QuotaScratch,
    tap: TapWatch<TAP, S>,
    ucp_mask: bool,
    bypasses: u64,
}

/// Plain UCP.
pub type PlainUcp = Ucp<false, false>;
/// TAP-UCP.
pub type TapUcp = Ucp<true, false>;
/// TAP-UCP with the streaming-CPU extension.
pub type TapUcpS = Ucp<true, true>;

impl<const TAP: bool, const S: bool> UcpPartition<TAP, S> {
    /// Way targets of the current partition (CPU cores, then the GPU), if partitioned.
    pub fn targets(&self) -> Option<&[usize]> {
        self.partitioned.then_some(&self.targets[..])
    }
    pub fn ucp_mask(&self) -> bool {
        self.ucp_mask
    }
    pub fn xsratio(&self) -> u32 {
        self.tap.xs.value()
    }
    /// The core-sampling controller (TAP-UCP's current sampled cores and decision).
    pub fn sampler(&self) -> &CoreSampler {
        &self.tap.sampler
    }
    pub fn umon(&self) -> &Umon {
        self.utility.umon()
    }

    #[inline]
    fn observe(&mut self, set: usize, req: &Access, hit: bool) {
        self.utility.observe(set, req);
        if self.tap.observe(req, hit) {
            self.end_period();
        }
    }

    /// Repartition (Algorithm 1).
    pub fn end_period(&mut self) {
        let mut eligible = vec![true; self.n_cpus + 1];
        let mut hits = self.utility.curves();
        if TAP {
            let xs = self.tap.xs.end_period();
            if let Some(friendly) = self.tap.sampler.end_period() {
                self.ucp_mask = !friendly;
            }
            if xs > 1 {
                for h in hits[self.n_cpus].iter_mut() {
                    *h /= xs as u64;
                }
            }
            eligible[self.n_cpus] = !self.ucp_mask;
        }
        if S {
            self.tap.stream.end_period();
            for (i, e) in eligible[..self.n_cpus].iter_mut().enumerate() {
                *e = !self.tap.stream.streaming(i);
            }
        }
        self.targets = self.utility.allocate(&hits, &eligible);
        self.partitioned = true;
    }
}

impl<const TAP: bool, const S: bool> StackRule for UcpPartition<TAP, S> {
    fn params(list: &mut ParamList) {
        core_sampling::declare(list, TAP, S);
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        if ctx.ways > LruStack::MAX_WAYS || ctx.agents() > 256 {
            return Err(CacheError::Config(format!(
                "UCP serves at most {} ways and 255 CPU cores",
                LruStack::MAX_WAYS
            )));
        }
        Ok(UcpPartition {
            n_cpus: ctx.n_cpus,
            utility: Utility::from_ctx(ctx),
            targets: vec![0; ctx.agents()],
            partitioned: false,
            scratch: QuotaScratch::by_agent(ctx.n_cpus, ctx.ways),
            tap: TapWatch::from_ctx(ctx)?,
            ucp_mask: false,
            bypasses: 0,
        })
    }
    #[inline]
    fn on_hit(&mut self, set: usize, req: &Access) {
        self.observe(set, req, true);
    }
    #[inline]
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        self.observe(set, req, false);
        if TAP && self.tap.sampler.role(req) == Role::Pol1 {
            self.bypasses += 1;
            return MissAction::Bypass;
        }
        MissAction::Allocate
    }
    #[inline]
    fn quota(&mut self) -> Option<(&[usize], &mut QuotaScratch)> {
        if !self.partitioned {
            return None;
        }
        Some((&self.targets, &mut self.scratch))
    }
    fn on_feedback(&mut self, fb: &Feedback) {
        if self.tap.on_feedback(fb) {
            self.end_period();
        }
    }
    fn stats(&self) -> Vec<PolicyStat> {
        let mut s = Vec::new();
        self.utility.push_ways(&self.targets, &mut s);
        s.push(("periods".into(), self.tap.epoch.periods as f64));
        if TAP {
            s.push(("ucp_mask".into(), self.ucp_mask as u8 as f64));
            s.push(("xsratio".into(), self.tap.xs.value() as f64));
            s.push(("pol1_bypasses".into(), self.bypasses as f64));
        }
        self.tap.push_stats(&mut s);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::util::test_support::*;
    use super::*;
    use crate::Policy;
    use apusim_trace::{Agent, Op, Stream};

    fn cpu(core: u8, line: u64) -> Access {
        Access::new(Agent::cpu(core), Stream::CpuData, Op::Read, line * LINE, 8)
    }
    fn gpu_core(unit: u16, line: u64) -> Access {
        Access::new(Agent::GPU, Stream::ShaderData, Op::Read, line * LINE, 64).with_unit(unit)
    }
    /// One set of `ways`, one CPU and the GPU, long periods (ended by hand).
    fn one_set<const T: bool, const S: bool>(ways: usize) -> crate::Cache<Ucp<T, S>> {
        let mut c = ctx(1, ways);
        c.params.insert("period_accesses".into(), 1e9);
        cache(1, ways, Ucp::<T, S>::build(&c).unwrap())
    }

    /// UCP on one 4-way set: the CPU re-reads 3 lines (hits at stack positions 0..2 of its
    /// UMON), the GPU streams (no hits). Look-ahead: one way each, then the CPU's curve
    /// [0, 3, 3, 3] (after the warm-up: hits at positions 2) gives it the other two.
    #[test]
    fn ucp_partitions_by_utility_and_enforces_targets() {
        let mut c = one_set::<false, false>(4);
        for _ in 0..3 {
            for l in 0..3 {
                run(&mut c, &cpu(0, l));
            }
        }
        for l in 100..104 {
            run(&mut c, &gpu_core(5, l));
        }
        // UMON of the CPU: 6 hits, all at stack position 2.
        assert_eq!(c.policy().umon().hits(0), &[0, 0, 6, 0]);
        assert_eq!(c.policy().umon().hits(1), &[0, 0, 0, 0]);
        assert_eq!(c.policy().targets(), None);
        c.policy_mut().end_period();
        assert_eq!(c.policy().targets(), Some(&[3, 1][..]));
        assert_eq!(c.policy().umon().hits(0), &[0, 0, 3, 0], "halved");
        // The set now holds GPU 100..103 (global LRU let the GPU take it all). CPU misses
        // evict GPU lines (the GPU is over its target) until the CPU holds 3.
        assert_eq!(run(&mut c, &cpu(0, 0)), Did::Fill(Some(100)));
        assert_eq!(run(&mut c, &cpu(0, 1)), Did::Fill(Some(101)));
        assert_eq!(run(&mut c, &cpu(0, 2)), Did::Fill(Some(102)));
        // CPU at its target: it now replaces its own LRU line (0), not the GPU's 103.
        assert_eq!(run(&mut c, &cpu(0, 3)), Did::Fill(Some(0)));
        // GPU at its target (1): replaces its own line.
        assert_eq!(run(&mut c, &gpu_core(5, 200)), Did::Fill(Some(103)));
        assert_eq!(run(&mut c, &gpu_core(5, 201)), Did::Fill(Some(200)));
        assert_eq!(run(&mut c, &cpu(0, 1)), Did::Hit);
    }

    fn feed(c: &mut crate::Cache<impl Policy>, pol1: u64, pol2: u64) {
        c.feedback(&Feedback::GpuCoreInstructions {
            core: 0,
            count: pol1,
        });
        c.feedback(&Feedback::GpuCoreInstructions {
            core: 1,
            count: pol2,
        });
    }

    /// TAP-UCP: Core-POL1 (unit 0) bypasses. Both caches see: POL1 line 50 (bypassed, but
    /// in the GPU's UMON), follower core 2 re-reading 3 lines 3 times (6 UMON hits at stack
    /// position 2), the CPU re-reading 3 lines twice (3 hits at position 2). XSRATIO stays 1
    /// (10 GPU vs 6 CPU accesses). Look-ahead (one way each, balance 2): CPU mu 3/2, GPU 6/2:
    /// the GPU gets 2 more ways. With < 5% between the sampled cores, UCP-Mask leaves the GPU
    /// out and the CPU takes them.
    #[test]
    fn tap_ucp_core_sampling_masks_the_gpu() {
        let mut masked = one_set::<true, false>(4);
        let mut friendly = one_set::<true, false>(4);
        for c in [&mut masked, &mut friendly] {
            assert_eq!(run(c, &gpu_core(0, 50)), Did::Bypass);
            assert!(!c.probe(50 * LINE));
            assert_eq!(run(c, &gpu_core(1, 51)), Did::Fill(None), "POL2 allocates");
            for _ in 0..3 {
                for l in 10..13 {
                    run(c, &gpu_core(2, l));
                }
            }
            for _ in 0..2 {
                for l in 0..3 {
                    run(c, &cpu(0, l));
                }
            }
            assert_eq!(c.policy().umon().hits(1), &[0, 0, 6, 0]);
            assert_eq!(c.policy().umon().hits(0), &[0, 0, 3, 0]);
        }
        // 10% apart: cache-friendly: plain look-ahead.
        feed(&mut friendly, 1000, 1100);
        friendly.policy_mut().end_period();
        assert!(!friendly.policy().ucp_mask());
        assert_eq!(friendly.policy().xsratio(), 1);
        assert_eq!(friendly.policy().targets(), Some(&[1, 3][..]));
        // 2% apart: UCP-Mask.
        feed(&mut masked, 1020, 1000);
        masked.policy_mut().end_period();
        assert!(masked.policy().ucp_mask());
        assert_eq!(masked.policy().targets(), Some(&[3, 1][..]));
        let st = masked.policy().stats();
        assert!(st.contains(&("pol1_bypasses".to_string(), 1.0)));
        assert!(st.contains(&("ucp_mask".to_string(), 1.0)));
        // Periods without feedback keep the mask.
        masked.policy_mut().end_period();
        assert!(masked.policy().ucp_mask());
    }

    /// §3.1.4 on TAP-UCP: after a period the bypassing role moves from core 0 to core 1 and
    /// the MRU role to core 2 (three cores seen); core 0 allocates again.
    #[test]
    fn tap_ucp_rotates_the_bypassing_core() {
        let mut c = one_set::<true, false>(4);
        assert_eq!(run(&mut c, &gpu_core(0, 50)), Did::Bypass);
        assert_eq!(run(&mut c, &gpu_core(2, 51)), Did::Fill(None));
        c.policy_mut().end_period();
        assert_eq!(c.policy().sampler().sampled_cores(), (1, 2));
        assert_eq!(run(&mut c, &gpu_core(1, 52)), Did::Bypass);
        assert_eq!(run(&mut c, &gpu_core(0, 50)), Did::Fill(None));
        c.policy_mut().end_period();
        assert_eq!(
            c.policy().sampler().sampled_cores(),
            (2, 0),
            "wraps at 3 cores"
        );
        assert_eq!(run(&mut c, &gpu_core(2, 53)), Did::Bypass);
        let st = c.policy().stats();
        assert!(st.contains(&("pol1_bypasses".to_string(), 3.0)));
        assert!(st.contains(&("csc_rotations".to_string(), 2.0)));
    }

    /// XSRATIO: the CPU reads 0 1 0 1 (2 UMON hits at position 1, 4 accesses); the GPU
    /// re-reads 3 lines `reps` times (3 * reps accesses, 3 * (reps - 1) hits at position 2).
    /// reps = 20: ratio 60 / 4 = 15 > 10: GPU counters / 15 -> 3 at position 2. Look-ahead:
    /// CPU mu 2 (+1 way) beats GPU 3/2 (+2 ways): CPU 2 ways; then zeros tie: CPU. Plain UCP
    /// sees 57/2 for the GPU. reps = 13: ratio 39 / 4 = 9: no normalization.
    #[test]
    fn tap_ucp_normalizes_gpu_counters_by_xsratio() {
        fn play<const T: bool>(reps: usize) -> crate::Cache<Ucp<T, false>> {
            let mut c = one_set::<T, false>(4);
            for l in [0, 1, 0, 1] {
                run(&mut c, &cpu(0, l));
            }
            for _ in 0..reps {
                for l in 10..13 {
                    run(&mut c, &gpu_core(3, l));
                }
            }
            c.policy_mut().end_period();
            c
        }
        let tap = play::<true>(20);
        assert_eq!(tap.policy().xsratio(), 15);
        assert_eq!(tap.policy().targets(), Some(&[3, 1][..]));
        assert_eq!(play::<false>(20).policy().targets(), Some(&[1, 3][..]));
        let tap = play::<true>(13);
        assert_eq!(tap.policy().xsratio(), 1);
        assert_eq!(tap.policy().targets(), Some(&[1, 3][..]));
    }

    /// TAP-UCP-S: a streaming CPU gets one way even with the better curve.
    #[test]
    fn tap_ucp_s_gives_a_streaming_cpu_one_way() {
        let mut cx = ctx(1, 4);
        cx.params.insert("period_accesses".into(), 1e9);
        cx.params.insert("stream_min_misses".into(), 4.0);
        let mut s = cache(1, 4, TapUcpS::build(&cx).unwrap());
        let mut t = cache(1, 4, TapUcp::build(&cx).unwrap());
        // CPU: 4 distinct misses then 3 hits at position... re-read 1 2 3: hits at 2;
        // miss rate 4/7 >= 1/8, 4 misses >= 4: streaming.
        for l in [0, 1, 2, 3, 1, 2, 3] {
            run(&mut s, &cpu(0, l));
            run(&mut t, &cpu(0, l));
        }
        s.policy_mut().end_period();
        t.policy_mut().end_period();
        assert_eq!(t.policy().targets(), Some(&[3, 1][..]));
        assert_eq!(s.policy().targets(), Some(&[1, 3][..]));
    }

    /// One set of 4 ways, one CPU and the GPU, periods of `period` LLC accesses ended by the
    /// access count (as in a run), not by hand.
    fn counted<P: Policy>(period: f64, extra: &[(&str, f64)]) -> crate::Cache<P> {
        let mut c = ctx(1, 4);
        c.params.insert("period_accesses".into(), period);
        for (k, v) in extra {
            c.params.insert((*k).into(), *v);
        }
        cache(1, 4, P::build(&c).unwrap())
    }

    /// The `ucp` = `lru` twin of short runs: before its first period ends (every
    /// `period_accesses` LLC accesses) UCP is unpartitioned global LRU, so a run of fewer
    /// accesses than one period (mix S16: 623,266 LLC accesses, `periods` = 0) gives LRU's
    /// counters. Period 1 (16 accesses): the CPU re-reads 0 1 2 three times (6 UMON hits at
    /// stack position 2), the GPU streams 100..=106; the 16th access ends it and the
    /// look-ahead gives the CPU 3 ways, the GPU 1 (the 16th victim, GPU line 102, is LRU's
    /// too). Then the CPU reads 0 1 2 (taking GPU lines 103..=105, as LRU does) and 3: LRU
    /// evicts the GPU's 106, UCP the CPU's own LRU line 0 because the CPU is at its target.
    #[test]
    fn ucp_is_lru_until_its_first_period_ends() {
        use crate::policies::lru::Lru;
        let first: Vec<Access> = (0..9)
            .map(|i| cpu(0, i % 3))
            .chain((100..107).map(|l| gpu_core(5, l)))
            .collect();
        let mut u = counted::<PlainUcp>(16.0, &[]);
        let mut l = counted::<Lru>(16.0, &[]);
        for (i, a) in first.iter().enumerate() {
            if i == 15 {
                assert_eq!(u.policy().targets(), None, "unpartitioned before the 16th");
            }
            assert_eq!(run(&mut u, a), run(&mut l, a), "access {i}");
        }
        assert_eq!(u.policy().targets(), Some(&[3, 1][..]));
        assert!(u.policy().stats().contains(&("periods".to_string(), 1.0)));
        for line in 0..3 {
            assert_eq!(run(&mut u, &cpu(0, line)), run(&mut l, &cpu(0, line)));
        }
        assert_eq!(run(&mut l, &cpu(0, 3)), Did::Fill(Some(106)));
        assert_eq!(run(&mut u, &cpu(0, 3)), Did::Fill(Some(0)));
        assert_eq!(run(&mut l, &cpu(0, 0)), Did::Hit);
        assert_eq!(run(&mut u, &cpu(0, 0)), Did::Fill(Some(1)));
        // The same accesses in a run shorter than one period: LRU's outcome on every one.
        let mut u = counted::<PlainUcp>(1e9, &[]);
        let mut l = counted::<Lru>(1e9, &[]);
        let tail = [0, 1, 2, 3, 0].map(|line| cpu(0, line));
        for (i, a) in first.iter().chain(tail.iter()).enumerate() {
            assert_eq!(run(&mut u, a), run(&mut l, a), "access {i}");
        }
        assert_eq!(u.policy().targets(), None);
        assert!(u.policy().stats().contains(&("periods".to_string(), 0.0)));
    }

    /// The `tap-ucp-s` = `tap-ucp` twin: TAP-S only takes ways from a CPU core the stream
    /// detector (θm = `stream_min_misses`, here 4, θmr = 1/8) flagged in the last period
    /// (tap §5.3). Periods of 16 accesses, counted. Period 1: the CPU re-reads 1 2 3 three
    /// times (3 misses: not streaming), the GPU (follower core 5) streams 100..=106: both
    /// policies partition CPU 3 / GPU 1 and agree on every access. Period 2: the CPU streams
    /// 10..=25 (16 misses, miss rate 1): TAP-UCP keeps 3 / 1 (its halved UMON still favours
    /// the CPU); TAP-UCP-S leaves the streaming CPU out of the look-ahead: 1 / 3. Both sets
    /// now hold CPU 23 24 25 and GPU 106; a GPU miss evicts the GPU's own 106 under TAP-UCP
    /// (at its target) and the CPU's LRU 23 under TAP-UCP-S (GPU below its target).
    #[test]
    fn tap_ucp_s_differs_from_tap_ucp_only_after_a_cpu_streams() {
        let knobs = [("stream_min_misses", 4.0)];
        let mut t = counted::<TapUcp>(16.0, &knobs);
        let mut s = counted::<TapUcpS>(16.0, &knobs);
        let period1 = (0..9)
            .map(|i| cpu(0, 1 + i % 3))
            .chain((100..107).map(|l| gpu_core(5, l)));
        for (i, a) in period1.enumerate() {
            assert_eq!(run(&mut t, &a), run(&mut s, &a), "period 1 access {i}");
        }
        assert_eq!(t.policy().targets(), Some(&[3, 1][..]));
        assert_eq!(s.policy().targets(), Some(&[3, 1][..]));
        for line in 10..26 {
            let a = cpu(0, line);
            assert_eq!(run(&mut t, &a), run(&mut s, &a), "period 2 line {line}");
        }
        assert_eq!(t.policy().targets(), Some(&[3, 1][..]));
        assert_eq!(s.policy().targets(), Some(&[1, 3][..]));
        assert_eq!(run(&mut t, &gpu_core(5, 200)), Did::Fill(Some(106)));
        assert_eq!(run(&mut s, &gpu_core(5, 200)), Did::Fill(Some(23)));
    }
}
