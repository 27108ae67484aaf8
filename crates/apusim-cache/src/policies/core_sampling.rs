//! Period-driven controllers shared by the TLP-aware policies (tap-tlp-aware-llc.txt §3.1,
//! §3.2, §5.3) and HeLM: the period clock, TAP's core-sampling controller (CSC), cache-block
//! lifetime normalization (XSRATIO) and a streaming/thrashing detector.
//!
//! # Periods
//!
//! The papers say "periodically" without a length. [`Epoch`] ends a period every
//! `period_cycles` cycles (default 5,000,000, UCP's repartitioning interval) of the global
//! clock, as reported by [`Feedback::Tick`]. A functional run has no clock, so until the first
//! `Tick` arrives a period is instead `period_accesses` LLC accesses (default 1,048,576, the
//! same order as 5 M cycles at the access rates of tap §3.2's Figure 5); once ticks arrive the
//! access count no longer ends periods.
//!
//! # Core sampling (§3.1)
//!
//! [`CoreSampler`]: GPU core `pol1_core` (default 0, "Core-POL1") and `pol2_core` (default 1,
//! "Core-POL2") run the two sampled policies; a GPU access's core is its `unit`. The CSC adds
//! up each sampled core's retired instructions from [`Feedback::GpuCoreInstructions`] over a
//! period. At the period's end, with `I1`, `I2` the two counts, the CPI delta over the period is
//! `|CPI1 − CPI2| / min(CPI1, CPI2) = max(I1, I2) / min(I1, I2) − 1`; if it exceeds
//! `threshold_alpha` (default 0.05, §3.1.2) the application is cache-friendly (the UCP/RRIP
//! masks clear), otherwise caching is not beneficial (the masks are set). Choices: a period in
//! which either sampled core reported no instructions decides nothing (the previous decision
//! stays); before the first decision the application counts as cache-friendly, i.e. TAP starts
//! as its base policy.
//!
//! ## Rotation of the sampled cores (§3.1.4)
//!
//! §3.1.4 ("Worst-performing core and load imbalance") solves the slowdown and load imbalance
//! of a core stuck with the worse policy "by periodically rotating sampled cores instead of
//! fixing which cores to sample", and Table 2 budgets the two core ids as registers, i.e.
//! writable. The paper gives neither the schedule nor the order, so apusim's choices are:
//!
//! - **When**: at the end of every `rotate_periods`-th period (default 1, every period; 0
//!   keeps the cores fixed), *after* the CSC has compared the period's counts. A period is
//!   therefore always measured on one pair of cores, the Threshold_α comparison is unchanged,
//!   and counts never mix two pairs: instructions a core retires are credited to the role
//!   the core has in the period they are reported in.
//! - **Which**: both ids advance by one, modulo the number of GPU cores `n`:
//!   `POL1 ← (POL1 + 1) mod n`, `POL2 ← (POL2 + 1) mod n`. With the defaults (0, 1) core `k`
//!   is Core-POL2 in one period and Core-POL1 in the next, so over `n` periods every core
//!   spends exactly one period in each role and the cost is spread evenly.
//! - **n**: the parameter `gpu_cores` when set (> 0); otherwise the number of GPU cores seen
//!   so far, one more than the highest core id among GPU accesses' units and
//!   [`Feedback::GpuCoreInstructions`] reports, and never less than the two configured ids
//!   (so the pair stays distinct).
//!
//! The §3.1.4 paragraph on synchronization (turn core sampling off after a few periods on a
//! GPU with cross-core barriers) is not modelled: apusim's GPU cores do not synchronize.
//!
//! # XSRATIO (§3.2)
//!
//! [`XsRatio`] counts demand LLC accesses per agent over a period; at its end the ratio is the
//! GPU's count over the count of the CPU core with the most accesses (integer division, as a
//! hardware divider would). If the ratio exceeds `t_xs` (default 10) it is stored, saturated to
//! the 10-bit register (1023); otherwise XSRATIO is 1. A period with GPU accesses but no CPU
//! accesses stores 1023; one without GPU accesses stores 1.
//!
//! # Streaming detection (§5.3, after PIPP \[27\] and Thrasher Caging \[28\])
//!
//! [`StreamDetector`] counts each agent's demand LLC accesses and misses over a period; an
//! agent is streaming (thrashing) for the next period if it missed at least
//! `stream_min_misses` times (default 4095) with a miss rate of at least `stream_miss_rate`
//! (default 0.125), PIPP's θm and θmr. Choice: the counts are those of the shared LLC itself
//! (the "few counters" of §5.3), not of shadow tags.

use super::util::{agent_slot, is_demand};
use crate::params::{ParamKind, ParamList, ParamSpec};
use crate::{CacheError, Feedback, PolicyContext, PolicyStat};
use apusim_trace::{Access, Agent};

/// Period boundaries from the clock, or from LLC accesses while no clock is reported.
#[derive(Clone, Debug)]
pub struct Epoch {
    period_cycles: u64,
    period_accesses: u64,
    accesses: u64,
    next_cycle: Option<u64>,
    /// Periods ended so far.
    pub periods: u64,
}

/// The period parameters of [`Epoch`].
pub const EPOCH_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "period_cycles",
        kind: ParamKind::Int {
            min: 1,
            max: u32::MAX as u64,
        },
        default: "5000000",
        unit: "cycles",
        doc: "length of a decision period while a timing model reports the clock (tap §3.1)",
    },
    ParamSpec {
        name: "period_accesses",
        kind: ParamKind::Int {
            min: 1,
            max: u32::MAX as u64,
        },
        default: "1048576",
        unit: "accesses",
        doc: "length of a decision period in LLC accesses while no clock is reported",
    },
];

impl Epoch {
    pub fn from_ctx(ctx: &PolicyContext) -> Result<Epoch, CacheError> {
        Ok(Epoch {
            period_cycles: ctx.int(&EPOCH_PARAMS[0])?,
            period_accesses: ctx.int(&EPOCH_PARAMS[1])?,
            accesses: 0,
            next_cycle: None,
            periods: 0,
        })
    }
    /// One LLC access; true if it ends a period.
    #[inline]
    pub fn on_access(&mut self) -> bool {
        if self.next_cycle.is_some() {
            return false;
        }
        self.accesses += 1;
        if self.accesses >= self.period_accesses {
            self.accesses = 0;
            self.periods += 1;
            true
        } else {
            false
        }
    }
    /// The clock reached `cycle`; true if that ends a period.
    pub fn on_tick(&mut self, cycle: u64) -> bool {
        match self.next_cycle {
            None => {
                self.next_cycle = Some(cycle.saturating_add(self.period_cycles));
                false
            }
            Some(n) if cycle >= n => {
                self.next_cycle = Some(cycle.saturating_add(self.period_cycles));
                self.periods += 1;
                true
            }
            Some(_) => false,
        }
    }
    /// Convenience for `on_feedback`: true if `fb` is a tick that ends a period.
    pub fn on_feedback(&mut self, fb: &Feedback) -> bool {
        match *fb {
            Feedback::Tick { cycle } => self.on_tick(cycle),
            _ => false,
        }
    }
}

/// What core sampling makes a GPU core do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Core-POL1: LRU insertion (TAP-RRIP) or LLC bypass (TAP-UCP).
    Pol1,
    /// Core-POL2: MRU insertion.
    Pol2,
    /// Follows the CSC's decision.
    Follower,
}

/// The core-sampling controller of §3.1.
#[derive(Clone, Debug)]
pub struct CoreSampler {
    /// Current Core-POL1 and Core-POL2 ids.
    pol1: u32,
    pol2: u32,
    /// Rotate every this many periods (0: never).
    rotate_every: u64,
    /// Periods since the last rotation.
    since_rotation: u64,
    /// `gpu_cores` (0: learn `n` from the core ids seen).
    fixed_cores: u32,
    /// One more than the highest GPU core id seen, at least `max(pol1, pol2) + 1`.
    seen_cores: u32,
    alpha: f64,
    inst: [u64; 2],
    friendly: bool,
    /// Periods that produced a decision.
    pub decisions: u64,
    /// Rotations of the sampled cores so far.
    pub rotations: u64,
}

const POL1_CORE: ParamSpec = ParamSpec {
    name: "pol1_core",
    kind: ParamKind::Int {
        min: 0,
        max: u16::MAX as u64,
    },
    default: "0",
    unit: "GPU core",
    doc: "the GPU core sampled under POL1 (its LLC misses bypass or insert at LRU) (tap §3.1)",
};
const POL2_CORE: ParamSpec = ParamSpec {
    name: "pol2_core",
    kind: ParamKind::Int {
        min: 0,
        max: u16::MAX as u64,
    },
    default: "1",
    unit: "GPU core",
    doc: "the GPU core sampled under POL2 (MRU insertion); must differ from pol1_core (tap §3.1)",
};
const THRESHOLD_ALPHA: ParamSpec = ParamSpec {
    name: "threshold_alpha",
    kind: ParamKind::Float {
        min: 0.0,
        max: 10.0,
    },
    default: "0.05",
    unit: "",
    doc: "relative instruction-count difference above which the GPU is cache-sensitive (tap §3.1)",
};
const GPU_CORES: ParamSpec = ParamSpec {
    name: "gpu_cores",
    kind: ParamKind::Int {
        min: 0,
        max: u16::MAX as u64 + 1,
    },
    default: "0",
    unit: "cores",
    doc: "GPU cores the sampled pair rotates over; 0 learns them from the core ids seen",
};
const ROTATE_PERIODS: ParamSpec = ParamSpec {
    name: "rotate_periods",
    kind: ParamKind::Int {
        min: 0,
        max: u32::MAX as u64,
    },
    default: "1",
    unit: "periods",
    doc: "periods between rotations of the sampled cores; 0 never rotates",
};
const T_XS: ParamSpec = ParamSpec {
    name: "t_xs",
    kind: ParamKind::Int {
        min: 1,
        max: XsRatio::MAX as u64,
    },
    default: "10",
    unit: "",
    doc: "GPU-to-CPU access ratio above which GPU utility is divided by XSRATIO (tap §3.2)",
};

/// The parameters of [`CoreSampler`] and [`XsRatio`], the TLP-aware parts of TAP.
pub const CORE_SAMPLING_PARAMS: &[ParamSpec] = &[
    POL1_CORE,
    POL2_CORE,
    THRESHOLD_ALPHA,
    GPU_CORES,
    ROTATE_PERIODS,
    T_XS,
];

/// The parameters of [`StreamDetector`] (tap §5.3, PIPP's θm and θmr).
pub const STREAM_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "stream_miss_rate",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: "0.125",
        unit: "",
        doc: "LLC miss rate at or above which an agent with enough misses is streaming (θmr)",
    },
    ParamSpec {
        name: "stream_min_misses",
        kind: ParamKind::Int {
            min: 1,
            max: u32::MAX as u64,
        },
        default: "4095",
        unit: "misses",
        doc: "LLC misses per period at or above which an agent may be streaming (θm)",
    },
];

/// Add the TAP parameters a policy with the chosen parts reads: the epoch always, core
/// sampling and XSRATIO with `tap`, streaming detection with `stream`.
pub fn declare(list: &mut ParamList, tap: bool, stream: bool) {
    list.add(EPOCH_PARAMS);
    if tap {
        list.add(CORE_SAMPLING_PARAMS);
    }
    if stream {
        list.add(STREAM_PARAMS);
    }
}

impl CoreSampler {
    pub fn from_ctx(ctx: &PolicyContext) -> Result<CoreSampler, CacheError> {
        let pol1 = ctx.int(&POL1_CORE)? as u32;
        let pol2 = ctx.int(&POL2_CORE)? as u32;
        if pol1 == pol2 {
            return Err(CacheError::Config(
                "policy parameters `pol1_core` and `pol2_core` must differ".into(),
            ));
        }
        let alpha = ctx.float(&THRESHOLD_ALPHA)?;
        let fixed_cores = ctx.int(&GPU_CORES)? as u32;
        if fixed_cores != 0 && pol1.max(pol2) >= fixed_cores {
            return Err(CacheError::Config(format!(
                "policy parameters `pol1_core` ({pol1}) and `pol2_core` ({pol2}) must be below \
                 `gpu_cores` ({fixed_cores})"
            )));
        }
        Ok(CoreSampler {
            pol1,
            pol2,
            rotate_every: ctx.int(&ROTATE_PERIODS)?,
            since_rotation: 0,
            fixed_cores,
            seen_cores: pol1.max(pol2) + 1,
            alpha,
            inst: [0; 2],
            friendly: true,
            decisions: 0,
            rotations: 0,
        })
    }
    /// The role of the GPU core that issued `req` (CPU accesses are followers).
    #[inline]
    pub fn role(&self, req: &Access) -> Role {
        if !req.agent.is_gpu() {
            Role::Follower
        } else if req.unit as u32 == self.pol1 {
            Role::Pol1
        } else if req.unit as u32 == self.pol2 {
            Role::Pol2
        } else {
            Role::Follower
        }
    }
    /// Note the GPU core of an access (the core count for rotation, §3.1.4).
    #[inline]
    pub fn observe(&mut self, req: &Access) {
        if req.agent.is_gpu() {
            self.see_core(req.unit as u32);
        }
    }
    #[inline]
    fn see_core(&mut self, core: u32) {
        self.seen_cores = self.seen_cores.max(core.saturating_add(1));
    }
    /// Accumulate retired instructions of the sampled cores.
    pub fn on_feedback(&mut self, fb: &Feedback) {
        if let Feedback::GpuCoreInstructions { core, count } = *fb {
            self.see_core(core);
            if core == self.pol1 {
                self.inst[0] += count;
            } else if core == self.pol2 {
                self.inst[1] += count;
            }
        }
    }
    /// End of a period: decide, restart the counts and, every `rotate_periods` periods,
    /// rotate the sampled cores (§3.1.4). Returns the decision, if one was made.
    pub fn end_period(&mut self) -> Option<bool> {
        let decision = self.decide();
        self.since_rotation += 1;
        if self.rotate_every != 0 && self.since_rotation >= self.rotate_every {
            self.since_rotation = 0;
            self.rotate();
        }
        decision
    }
    fn decide(&mut self) -> Option<bool> {
        let [a, b] = std::mem::take(&mut self.inst);
        if a == 0 || b == 0 {
            return None;
        }
        // max / min - 1 > alpha, without the rounding of the division.
        let (hi, lo) = (a.max(b), a.min(b));
        self.friendly = (hi - lo) as f64 > self.alpha * lo as f64;
        self.decisions += 1;
        Some(self.friendly)
    }
    /// Advance both sampled cores by one, modulo the GPU core count.
    fn rotate(&mut self) {
        let n = self.cores();
        self.pol1 = (self.pol1 + 1) % n;
        self.pol2 = (self.pol2 + 1) % n;
        self.rotations += 1;
    }
    /// The GPU core count the rotation wraps at.
    pub fn cores(&self) -> u32 {
        if self.fixed_cores != 0 {
            self.fixed_cores
        } else {
            self.seen_cores
        }
    }
    /// The sampler's reportable state: current sampled cores and rotations.
    pub fn push_stats(&self, out: &mut Vec<PolicyStat>) {
        out.push(("pol1_core".into(), self.pol1 as f64));
        out.push(("pol2_core".into(), self.pol2 as f64));
        out.push(("csc_rotations".into(), self.rotations as f64));
        out.push(("csc_decisions".into(), self.decisions as f64));
    }
    /// Current (Core-POL1, Core-POL2) ids.
    pub fn sampled_cores(&self) -> (u32, u32) {
        (self.pol1, self.pol2)
    }
    /// The CSC's current verdict: more caching helps the GPU application.
    pub fn cache_friendly(&self) -> bool {
        self.friendly
    }
    /// Instructions counted so far this period for Core-POL1 and Core-POL2.
    pub fn counts(&self) -> [u64; 2] {
        self.inst
    }
}

/// Cache-block lifetime normalization (§3.2).
#[derive(Clone, Debug)]
pub struct XsRatio {
    t_xs: u64,
    n_cpus: usize,
    counts: Vec<u64>,
    value: u32,
}

impl XsRatio {
    /// Largest value of the 10-bit XSRATIO register.
    pub const MAX: u32 = 1023;

    pub fn from_ctx(ctx: &PolicyContext) -> Result<XsRatio, CacheError> {
        Ok(XsRatio {
            t_xs: ctx.int(&T_XS)?,
            n_cpus: ctx.n_cpus,
            counts: vec![0; ctx.agents()],
            value: 1,
        })
    }
    #[inline]
    pub fn count(&mut self, agent: Agent) {
        self.counts[agent_slot(agent, self.n_cpus)] += 1;
    }
    pub fn end_period(&mut self) -> u32 {
        let gpu = self.counts[self.n_cpus];
        let cpu = self.counts[..self.n_cpus]
            .iter()
            .copied()
            .max()
            .unwrap_or(0);
        let ratio = match (gpu, cpu) {
            (0, _) => 0,
            (_, 0) => u64::MAX,
            (g, c) => g / c,
        };
        self.value = if ratio > self.t_xs {
            ratio.min(Self::MAX as u64) as u32
        } else {
            1
        };
        self.counts.fill(0);
        self.value
    }
    /// The XSRATIO register (1 when the access rates are comparable).
    pub fn value(&self) -> u32 {
        self.value
    }
}

/// Per-agent streaming detection (§5.3, PIPP's θm and θmr).
#[derive(Clone, Debug)]
pub struct StreamDetector {
    n_cpus: usize,
    min_misses: u64,
    min_rate: f64,
    accesses: Vec<u64>,
    misses: Vec<u64>,
    streaming: Vec<bool>,
}

impl StreamDetector {
    pub fn from_ctx(ctx: &PolicyContext) -> Result<StreamDetector, CacheError> {
        Ok(StreamDetector {
            n_cpus: ctx.n_cpus,
            min_misses: ctx.int(&STREAM_PARAMS[1])?,
            min_rate: ctx.float(&STREAM_PARAMS[0])?,
            accesses: vec![0; ctx.agents()],
            misses: vec![0; ctx.agents()],
            streaming: vec![false; ctx.agents()],
        })
    }
    /// A demand access of `agent` that hit (`hit`) or missed.
    #[inline]
    pub fn record(&mut self, agent: Agent, hit: bool) {
        let s = agent_slot(agent, self.n_cpus);
        self.accesses[s] += 1;
        self.misses[s] += u64::from(!hit);
    }
    pub fn end_period(&mut self) {
        for i in 0..self.streaming.len() {
            let (a, m) = (self.accesses[i], self.misses[i]);
            self.streaming[i] = m >= self.min_misses && m as f64 >= self.min_rate * a as f64;
        }
        self.accesses.fill(0);
        self.misses.fill(0);
    }
    /// True if agent slot `slot` streamed in the last period.
    #[inline]
    pub fn streaming(&self, slot: usize) -> bool {
        self.streaming[slot]
    }
    /// True if any CPU core streamed in the last period.
    pub fn any_cpu_streaming(&self) -> bool {
        self.streaming[..self.n_cpus].iter().any(|&s| s)
    }
    pub fn count_streaming(&self) -> usize {
        self.streaming.iter().filter(|&&s| s).count()
    }
}

#[cfg(test)]
mod tests {
    use super::super::util::test_support::ctx;
    use super::*;
    use apusim_trace::{Op, Stream};

    fn gpu_unit(unit: u16) -> Access {
        Access::new(Agent::GPU, Stream::ShaderData, Op::Read, 0, 64).with_unit(unit)
    }

    #[test]
    fn csc_compares_retired_instructions_against_alpha() {
        let mut fixed = ctx(4, 4);
        fixed.params.insert("rotate_periods".into(), 0.0);
        let mut s = CoreSampler::from_ctx(&fixed).unwrap();
        assert_eq!(s.role(&gpu_unit(0)), Role::Pol1);
        assert_eq!(s.role(&gpu_unit(1)), Role::Pol2);
        assert_eq!(s.role(&gpu_unit(2)), Role::Follower);
        let cpu = Access::new(Agent::cpu(0), Stream::CpuData, Op::Read, 0, 8);
        assert_eq!(s.role(&cpu), Role::Follower);
        assert!(s.cache_friendly(), "starts as the base policy");
        let fb = |core, count| Feedback::GpuCoreInstructions { core, count };
        // 1000 vs 1040 instructions: delta 4% < 5%: caching not beneficial.
        for f in [fb(0, 600), fb(1, 1040), fb(0, 400), fb(2, 99_999)] {
            s.on_feedback(&f);
        }
        assert_eq!(s.counts(), [1000, 1040]);
        assert_eq!(s.end_period(), Some(false));
        assert!(!s.cache_friendly());
        assert_eq!(s.counts(), [0, 0], "a new period starts from zero");
        // 1000 vs 1060: 6% > 5%: cache-friendly (either direction).
        s.on_feedback(&fb(0, 1060));
        s.on_feedback(&fb(1, 1000));
        assert_eq!(s.end_period(), Some(true));
        // Exactly 5% is not "higher than" alpha.
        s.on_feedback(&fb(0, 1000));
        s.on_feedback(&fb(1, 1050));
        assert_eq!(s.end_period(), Some(false));
        // A silent sampled core decides nothing.
        s.on_feedback(&fb(0, 5000));
        assert_eq!(s.end_period(), None);
        assert!(!s.cache_friendly());
        assert_eq!(s.decisions, 3);
        assert_eq!(
            s.sampled_cores(),
            (0, 1),
            "rotate_periods = 0 keeps the cores"
        );
        assert_eq!(s.rotations, 0);
        let mut c = ctx(4, 4);
        c.params.insert("pol2_core".into(), 0.0);
        assert!(CoreSampler::from_ctx(&c).is_err());
    }

    fn fb(core: u32, count: u64) -> Feedback {
        Feedback::GpuCoreInstructions { core, count }
    }

    /// §3.1.4: the sampled pair advances by one core after every period's decision, wrapping
    /// at the number of GPU cores seen; each period is judged on the pair it ran with.
    #[test]
    fn sampled_cores_rotate_every_period_after_the_decision() {
        let mut s = CoreSampler::from_ctx(&ctx(4, 4)).unwrap();
        for unit in [0, 3, 1] {
            s.observe(&gpu_unit(unit));
        }
        s.observe(&Access::new(Agent::cpu(9), Stream::CpuData, Op::Read, 0, 8));
        assert_eq!(s.cores(), 4, "GPU units 0..=3 seen; CPU ids do not count");
        // Period 1 on (0, 1): 1000 vs 1100 (10%): cache-friendly. Core 2 is a follower.
        for f in [fb(0, 1000), fb(1, 1100), fb(2, 7)] {
            s.on_feedback(&f);
        }
        assert_eq!(s.end_period(), Some(true));
        assert_eq!(s.sampled_cores(), (1, 2));
        assert_eq!(s.role(&gpu_unit(0)), Role::Follower);
        assert_eq!(s.role(&gpu_unit(1)), Role::Pol1);
        assert_eq!(s.role(&gpu_unit(2)), Role::Pol2);
        // Period 2 on (1, 2): core 0's instructions no longer count; 1000 vs 1020 (2%).
        for f in [fb(0, 5000), fb(1, 1000), fb(2, 1020)] {
            s.on_feedback(&f);
        }
        assert_eq!(s.counts(), [1000, 1020]);
        assert_eq!(s.end_period(), Some(false));
        assert_eq!(s.sampled_cores(), (2, 3));
        // Period 3 on (2, 3) decides nothing (core 3 silent) but still rotates, wrapping.
        s.on_feedback(&fb(2, 900));
        assert_eq!(s.end_period(), None);
        assert!(!s.cache_friendly(), "the last decision stays");
        assert_eq!(s.sampled_cores(), (3, 0));
        // Period 4 on (3, 0): POL1 is core 3, POL2 core 0.
        s.on_feedback(&fb(3, 2000));
        s.on_feedback(&fb(0, 1000));
        assert_eq!(s.counts(), [2000, 1000]);
        assert_eq!(s.end_period(), Some(true));
        assert_eq!(
            s.sampled_cores(),
            (0, 1),
            "back to the start after n = 4 periods"
        );
        assert_eq!((s.rotations, s.decisions), (4, 3));
        // A report from a new core widens the ring.
        s.on_feedback(&fb(6, 1));
        assert_eq!(s.cores(), 7);
    }

    #[test]
    fn rotation_period_and_core_count_are_parameters() {
        let mut c = ctx(4, 4);
        c.params.insert("rotate_periods".into(), 2.0);
        c.params.insert("gpu_cores".into(), 3.0);
        c.params.insert("pol1_core".into(), 2.0);
        c.params.insert("pol2_core".into(), 0.0);
        let mut s = CoreSampler::from_ctx(&c).unwrap();
        s.observe(&gpu_unit(9)); // beyond gpu_cores: the parameter wins
        assert_eq!(s.cores(), 3);
        let mut pairs = Vec::new();
        for _ in 0..6 {
            s.end_period();
            pairs.push(s.sampled_cores());
        }
        assert_eq!(pairs, [(2, 0), (0, 1), (0, 1), (1, 2), (1, 2), (2, 0)]);
        // With no core seen beyond the configured ids, the ring is max(pol1, pol2) + 1.
        let mut d = ctx(4, 4);
        d.params.insert("pol2_core".into(), 2.0);
        let mut s = CoreSampler::from_ctx(&d).unwrap();
        assert_eq!(s.cores(), 3);
        s.end_period();
        assert_eq!(s.sampled_cores(), (1, 0));
        c.params.insert("gpu_cores".into(), 2.0);
        assert!(
            CoreSampler::from_ctx(&c).is_err(),
            "pol1_core 2 >= gpu_cores 2"
        );
    }

    #[test]
    fn xsratio_normalizes_only_beyond_t_xs() {
        let mut c = ctx(4, 4);
        c.n_cpus = 2;
        let mut x = XsRatio::from_ctx(&c).unwrap();
        let run = |x: &mut XsRatio, c0: u64, c1: u64, g: u64| {
            for _ in 0..c0 {
                x.count(Agent::cpu(0));
            }
            for _ in 0..c1 {
                x.count(Agent::cpu(1));
            }
            for _ in 0..g {
                x.count(Agent::GPU);
            }
            x.end_period()
        };
        // The busiest CPU (30) against the GPU (300): ratio 10, not above T_xs.
        assert_eq!(run(&mut x, 30, 5, 300), 1);
        // 331 / 30 = 11 > 10: stored.
        assert_eq!(run(&mut x, 30, 5, 331), 11);
        assert_eq!(x.value(), 11);
        // Saturates at the 10-bit maximum; no CPU accesses at all also saturates.
        assert_eq!(run(&mut x, 1, 0, 5000), 1023);
        assert_eq!(run(&mut x, 0, 0, 1), 1023);
        assert_eq!(run(&mut x, 3, 0, 0), 1);
    }

    #[test]
    fn epochs_count_accesses_until_the_clock_ticks() {
        let mut c = ctx(4, 4);
        c.params.insert("period_accesses".into(), 3.0);
        c.params.insert("period_cycles".into(), 100.0);
        let mut e = Epoch::from_ctx(&c).unwrap();
        let ends: Vec<bool> = (0..7).map(|_| e.on_access()).collect();
        assert_eq!(
            ends,
            [false, false, true, false, false, true, false].to_vec()
        );
        assert!(!e.on_tick(50), "the first tick starts a cycle period");
        assert!(!e.on_access() && !e.on_access() && !e.on_access());
        assert!(!e.on_tick(149));
        assert!(e.on_tick(150));
        assert!(!e.on_tick(200));
        assert!(e.on_feedback(&Feedback::Tick { cycle: 400 }));
        assert_eq!(e.periods, 4);
    }

    #[test]
    fn streaming_needs_both_misses_and_miss_rate() {
        let mut c = ctx(4, 4);
        c.n_cpus = 2;
        c.params.insert("stream_min_misses".into(), 10.0);
        let mut d = StreamDetector::from_ctx(&c).unwrap();
        // cpu0: 10 misses in 80 accesses (12.5%): streaming. cpu1: 10 in 81: not.
        // GPU: 9 misses out of 9: too few misses.
        for i in 0..80 {
            d.record(Agent::cpu(0), i >= 10);
        }
        for i in 0..81 {
            d.record(Agent::cpu(1), i >= 10);
        }
        for _ in 0..9 {
            d.record(Agent::GPU, false);
        }
        d.end_period();
        assert!(d.streaming(0) && !d.streaming(1) && !d.streaming(2));
        assert!(d.any_cpu_streaming());
        d.end_period();
        assert_eq!(d.count_streaming(), 0, "a quiet period clears it");
    }
}

/// What TAP watches beside its base policy (§3.1, §3.2, §5.3): core sampling and XSRATIO
/// with `TAP`, streaming agents with `S`, and the period clock that ends their periods.
/// TAP-UCP and TAP-RRIP each keep one; a part a variant does not use is built from its
/// defaults and never fed.
#[derive(Clone, Debug)]
pub struct TapWatch<const TAP: bool, const S: bool> {
    pub epoch: Epoch,
    pub sampler: CoreSampler,
    pub xs: XsRatio,
    pub stream: StreamDetector,
}

impl<const TAP: bool, const S: bool> TapWatch<TAP, S> {
    pub fn from_ctx(ctx: &PolicyContext) -> Result<Self, CacheError> {
        let unset = ctx.without_params();
        let tap = if TAP { ctx } else { &unset };
        Ok(TapWatch {
            epoch: Epoch::from_ctx(ctx)?,
            sampler: CoreSampler::from_ctx(tap)?,
            xs: XsRatio::from_ctx(tap)?,
            stream: StreamDetector::from_ctx(if S { ctx } else { &unset })?,
        })
    }
    /// An LLC access of `req`, a hit if `hit`: the sampled cores see every access, XSRATIO
    /// and the stream detector the demand ones. True if it ends a period.
    #[inline]
    pub fn observe(&mut self, req: &Access, hit: bool) -> bool {
        if TAP {
            self.sampler.observe(req);
        }
        if is_demand(req.op) {
            if TAP {
                self.xs.count(req.agent);
            }
            if S {
                self.stream.record(req.agent, hit);
            }
        }
        self.epoch.on_access()
    }
    /// Feedback (the sampled cores' instructions, the clock): true if it ends a period.
    pub fn on_feedback(&mut self, fb: &Feedback) -> bool {
        if TAP {
            self.sampler.on_feedback(fb);
        }
        self.epoch.on_feedback(fb)
    }
    /// The sampled cores' statistics with `TAP`, then `streaming_agents` with `S`.
    pub fn push_stats(&self, out: &mut Vec<PolicyStat>) {
        if TAP {
            self.sampler.push_stats(out);
        }
        if S {
            out.push((
                "streaming_agents".into(),
                self.stream.count_streaming() as f64,
            ));
        }
    }
}
