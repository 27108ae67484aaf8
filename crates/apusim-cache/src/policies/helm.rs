//! HeLM (Mekkat et al., PACT 2013) as drp-reuse-probability-shared-llc.txt §2.2 and §6.1
//! describe it: "not allocating a fraction of the GPU data ... in the shared LLC if it is
//! estimated that the CPU workload is LLC-sensitive and the GPU workload can tolerate LLC miss
//! latency. The degree of latency tolerance of a GPU workload is determined by taking into
//! account the number of shader thread contexts ready to be scheduled ... estimated by
//! sampling two shader cores and letting them bypass their misses at two different rates (one
//! low and one high)"; §6.1: "aggressive bypassing of GPU read misses if the GPU application
//! shows latency-tolerance through the presence of a good number of ready shader thread
//! contexts".
//!
//! Replacement and insertion are the drp baseline's SRRIP (2-bit RRPVs, insert 2, hit 0); only
//! GPU read misses (op `read`) can bypass, so CPU lines stay inclusive. The pieces:
//!
//! - **Sampled shader cores**: GPU core `helm_low_core` (default 0; the core is the access's
//!   `unit`) bypasses its read misses at `helm_low_rate` (default 1/4), core `helm_high_core`
//!   (default 1) at `helm_high_rate` (default 1, every miss), all the time. Rates are
//!   deterministic (a miss bypasses each time a per-core accumulator of the rate crosses 1).
//! - **GPU latency tolerance**: per period ([`super::core_sampling::Epoch`]), the retired
//!   instructions of the two cores ([`Feedback::GpuCoreInstructions`]) are compared; the GPU is
//!   latency-tolerant if the high-rate core retired no more than `helm_alpha` (default 5%)
//!   fewer instructions than the low-rate core. The ready-context level that sufficed, the
//!   mean of the high-rate core's [`Feedback::ReadyWarps`] reports over that period (integer),
//!   becomes the TLP threshold.
//! - **CPU LLC sensitivity**: two groups of sampled sets (thread 0's leader sets of
//!   [`super::util::SetSampler`], 32 + 32 per 1K) where GPU read misses always allocate and
//!   always bypass. The CPU is LLC-sensitive for the next period if its demand misses in the
//!   always-allocate group exceed those in the always-bypass group by more than
//!   `helm_cpu_threshold` (default 5%) — i.e. GPU allocation costs the CPU misses.
//! - **Decision** for every other core's read miss in every other set: bypass (at the high
//!   rate) iff the CPU is LLC-sensitive, the GPU is latency-tolerant and the core's latest
//!   ready-warp count is at least the TLP threshold.
//!
//! Choices where the papers are silent: every number above (rates, thresholds, set groups,
//! the use of the mean ready count as the threshold); periods without instruction reports
//! from both sampled cores keep the previous tolerance verdict; before the first period HeLM
//! bypasses only in the sampled cores and the always-bypass sets; ready-warp counts are kept
//! for 256 GPU cores (core ids fold modulo 256).
//!
//! # What public sources say about the original (checked November 2026)
//!
//! The original paper (Mekkat, Holey, Yew, Zhai, "Managing shared last-level cache in a
//! heterogeneous multicore processor", PACT 2013) is not in `shared/papers`; its full text is
//! not publicly readable through the search tools, but several of its paragraphs are quoted on
//! public pages (www1.ilovetranslation.com/g15-avDdYhu=d, /t2aFv1yUg9D=d and
//! th4.ilovetranslation.com/xCq-JhIi0cZ=d), and the drp authors' own simulator (GitHub
//! `siddharthrai/Olinc`, `policy/helmdrrip.c`) holds an unfinished HeLM port. What they give:
//!
//! - HeLM bypasses GPU accesses "when i) the GPU cores exhibit sufficient TLP to tolerate
//!   memory access latency; or ii) when the GPU application is not sensitive to LLC
//!   performance", with TLP measured as ready threads — as here.
//! - Its "Figure 3" sweeps bypassing 100%, 75%, 50% and 25% of GPU requests and finds GPU
//!   applications "can sustain up to 75%"; the two sampled rates here (1/4 and 1) are the ends
//!   of that sweep. The original's sampled cores try two *TLP thresholds* (`LowThr`,
//!   `HighThr`; the Olinc port bisects them toward a measured `tlpthr` every 2^19 LLC
//!   accesses) rather than two fixed rates; apusim follows drp §2.2, its specification, which
//!   describes the samples as "two different rates (one low and one high)".
//! - Its threshold-selection algorithm picks the aggressive threshold whenever the CPU is
//!   cache-sensitive, the conservative one if only the GPU is, and weighs the off-chip DRAM
//!   access rate when neither is. apusim follows drp §2.2's condition instead ("CPU workload
//!   is LLC-sensitive *and* the GPU workload can tolerate LLC miss latency"); the DRAM-rate
//!   limit of the original is not modelled.
//! - The Olinc port samples CPU sensitivity in two groups of 16 sets per 1K (index bits 3:0
//!   equal, or complementary, to bits 9:6, with bits 5:4 = 3); apusim's groups are 32 + 32 per
//!   1K (thread 0's leader sets). Its threshold values (`lowthr`, `highthr`, `mthr`, `pthr`)
//!   are run-time parameters; no file giving their values was found.
//!
//! No numeric constant of the original could be confirmed, so none changed: `helm_low_rate`,
//! `helm_high_rate`, `helm_alpha` and `helm_cpu_threshold` remain apusim's choices.

use super::core_sampling::{Epoch, EPOCH_PARAMS};
use super::rrip::{Insertion, Rrip};
use super::util::{is_demand, SetSampler, RRPV_LONG};
use crate::params::{ParamKind, ParamList, ParamSpec};
use crate::{CacheError, Feedback, MissAction, PolicyContext, PolicyStat};
use apusim_trace::{Access, Op};

const READY_SLOTS: usize = 256;

/// HeLM: [`Rrip`] inserting long, with [`HelmBypass`] deciding which GPU read misses bypass.
pub type Helm = Rrip<HelmBypass>;

/// HeLM's bypass of GPU read misses (see the module doc); its fills insert long, as SRRIP's.
pub struct HelmBypass {
    sampler: SetSampler,
    epoch: Epoch,
    low_core: u32,
    high_core: u32,
    low_rate: f64,
    high_rate: f64,
    alpha: f64,
    cpu_threshold: f64,
    /// Rate accumulators: low core, high core, followers.
    acc: [f64; 3],
    ready: Vec<u32>,
    ready_sum: u64,
    ready_n: u64,
    /// Instructions of the low- and high-rate cores this period.
    inst: [u64; 2],
    /// CPU demand misses in the always-allocate and always-bypass groups this period.
    cpu_misses: [u64; 2],
    cpu_sensitive: bool,
    gpu_tolerant: bool,
    tlp_threshold: u32,
    /// Periods in which both sampled cores reported instructions (a tolerance verdict).
    tolerance_decisions: u64,
    bypasses: u64,
}

impl HelmBypass {
    pub fn cpu_sensitive(&self) -> bool {
        self.cpu_sensitive
    }
    pub fn gpu_tolerant(&self) -> bool {
        self.gpu_tolerant
    }
    pub fn tlp_threshold(&self) -> u32 {
        self.tlp_threshold
    }
    /// The sensitivity group of `set`: `Some(0)` GPU read misses always allocate,
    /// `Some(1)` always bypass.
    pub fn group(&self, set: usize) -> Option<u8> {
        self.sampler.leader(set, 0)
    }

    pub fn end_period(&mut self) {
        let [alloc, bypass] = std::mem::take(&mut self.cpu_misses);
        self.cpu_sensitive = alloc > 0 && alloc as f64 > (1.0 + self.cpu_threshold) * bypass as f64;
        let [low, high] = std::mem::take(&mut self.inst);
        if low > 0 && high > 0 {
            self.tolerance_decisions += 1;
            self.gpu_tolerant = (low.saturating_sub(high)) as f64 <= self.alpha * low as f64;
            if self.gpu_tolerant && self.ready_n > 0 {
                self.tlp_threshold = (self.ready_sum / self.ready_n) as u32;
            }
        }
        self.ready_sum = 0;
        self.ready_n = 0;
    }

    #[inline]
    fn draw(&mut self, which: usize, rate: f64) -> bool {
        self.acc[which] += rate;
        if self.acc[which] >= 1.0 {
            self.acc[which] -= 1.0;
            true
        } else {
            false
        }
    }

    #[inline]
    fn gpu_read_bypasses(&mut self, set: usize, req: &Access) -> bool {
        if let Some(g) = self.sampler.leader(set, 0) {
            return g == 1;
        }
        let unit = req.unit as u32;
        if unit == self.low_core {
            self.draw(0, self.low_rate)
        } else if unit == self.high_core {
            self.draw(1, self.high_rate)
        } else if self.cpu_sensitive
            && self.gpu_tolerant
            && self.ready[unit as usize % READY_SLOTS] >= self.tlp_threshold
        {
            self.draw(2, self.high_rate)
        } else {
            false
        }
    }
}

/// HeLM's sampled cores, bypass rates and thresholds (see the module doc for which are the
/// paper's and which apusim's).
const HELM_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "helm_low_core",
        kind: ParamKind::Int {
            min: 0,
            max: u16::MAX as u64,
        },
        default: "0",
        unit: "GPU core",
        doc: "the GPU core sampled at the low bypass rate",
    },
    ParamSpec {
        name: "helm_high_core",
        kind: ParamKind::Int {
            min: 0,
            max: u16::MAX as u64,
        },
        default: "1",
        unit: "GPU core",
        doc: "the GPU core sampled at the high bypass rate; must differ from helm_low_core",
    },
    ParamSpec {
        name: "helm_low_rate",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: "0.25",
        unit: "",
        doc: "fraction of the low-rate core's read misses that bypass",
    },
    ParamSpec {
        name: "helm_high_rate",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: "1.0",
        unit: "",
        doc: "fraction of the high-rate core's (and tolerant followers') read misses that bypass",
    },
    ParamSpec {
        name: "helm_alpha",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: "0.05",
        unit: "",
        doc: "relative instruction-count difference within which the GPU is latency-tolerant",
    },
    ParamSpec {
        name: "helm_cpu_threshold",
        kind: ParamKind::Float {
            min: 0.0,
            max: 100.0,
        },
        default: "0.05",
        unit: "",
        doc: "relative CPU miss increase above which the CPU is LLC-sensitive",
    },
];

impl Insertion for HelmBypass {
    fn params(list: &mut ParamList) {
        list.add(EPOCH_PARAMS).add(HELM_PARAMS);
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        let low_core = ctx.int(&HELM_PARAMS[0])? as u32;
        let high_core = ctx.int(&HELM_PARAMS[1])? as u32;
        if low_core == high_core {
            return Err(CacheError::Config(
                "policy parameters `helm_low_core` and `helm_high_core` must differ".into(),
            ));
        }
        Ok(HelmBypass {
            sampler: SetSampler::new(ctx.sets),
            epoch: Epoch::from_ctx(ctx)?,
            low_core,
            high_core,
            low_rate: ctx.float(&HELM_PARAMS[2])?,
            high_rate: ctx.float(&HELM_PARAMS[3])?,
            alpha: ctx.float(&HELM_PARAMS[4])?,
            cpu_threshold: ctx.float(&HELM_PARAMS[5])?,
            acc: [0.0; 3],
            ready: vec![0; READY_SLOTS],
            ready_sum: 0,
            ready_n: 0,
            inst: [0; 2],
            cpu_misses: [0; 2],
            cpu_sensitive: false,
            gpu_tolerant: false,
            tlp_threshold: 0,
            tolerance_decisions: 0,
            bypasses: 0,
        })
    }
    #[inline]
    fn on_hit(&mut self, _req: &Access) {
        if self.epoch.on_access() {
            self.end_period();
        }
    }
    #[inline]
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        if self.epoch.on_access() {
            self.end_period();
        }
        if req.agent.is_cpu() {
            if is_demand(req.op) {
                if let Some(g) = self.sampler.leader(set, 0) {
                    self.cpu_misses[g as usize] += 1;
                }
            }
        } else if req.op == Op::Read && self.gpu_read_bypasses(set, req) {
            self.bypasses += 1;
            return MissAction::Bypass;
        }
        MissAction::Allocate
    }
    #[inline]
    fn insertion(&mut self, _set: usize, _req: &Access) -> u8 {
        RRPV_LONG
    }
    fn on_feedback(&mut self, fb: &Feedback) {
        match *fb {
            Feedback::ReadyWarps { core, count } => {
                self.ready[core as usize % READY_SLOTS] = count;
                if core == self.high_core {
                    self.ready_sum += count as u64;
                    self.ready_n += 1;
                }
            }
            Feedback::GpuCoreInstructions { core, count } => {
                if core == self.low_core {
                    self.inst[0] += count;
                } else if core == self.high_core {
                    self.inst[1] += count;
                }
            }
            _ => {}
        }
        if self.epoch.on_feedback(fb) {
            self.end_period();
        }
    }
    fn stats(&self) -> Vec<PolicyStat> {
        vec![
            ("gpu_read_bypasses".into(), self.bypasses as f64),
            ("cpu_llc_sensitive".into(), self.cpu_sensitive as u8 as f64),
            (
                "gpu_latency_tolerant".into(),
                self.gpu_tolerant as u8 as f64,
            ),
            ("tlp_threshold".into(), self.tlp_threshold as f64),
            ("periods".into(), self.epoch.periods as f64),
            (
                "tolerance_decisions".into(),
                self.tolerance_decisions as f64,
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::super::util::test_support::*;
    use super::*;
    use crate::Policy;
    use apusim_trace::{Agent, Stream};

    // 64 sets: thread 0's leaders: always-allocate sets 0 and 33, always-bypass 31 and 32.
    const ALLOC: u64 = 0;
    const BYPASS: u64 = 31;

    fn helm() -> crate::Cache<Helm> {
        let mut c = ctx(64, 2);
        c.params.insert("period_accesses".into(), 1e9);
        cache(64, 2, Helm::build(&c).unwrap())
    }
    fn core_read(unit: u16, line: u64) -> Access {
        Access::new(Agent::GPU, Stream::ShaderData, Op::Read, line * LINE, 64).with_unit(unit)
    }
    fn insts(c: &mut crate::Cache<Helm>, low: u64, high: u64) {
        for (core, count) in [(0, low), (1, high)] {
            c.feedback(&Feedback::GpuCoreInstructions { core, count });
        }
    }
    fn ready(c: &mut crate::Cache<Helm>, core: u32, count: u32) {
        c.feedback(&Feedback::ReadyWarps { core, count });
    }

    #[test]
    fn the_two_sampled_cores_bypass_at_low_and_high_rates() {
        let mut c = helm();
        assert_eq!(
            (c.policy().group(0), c.policy().group(31)),
            (Some(0), Some(1))
        );
        // Low-rate core 0: every 4th read miss bypasses; high-rate core 1: all of them.
        let low: Vec<Did> = (0..8)
            .map(|i| run(&mut c, &core_read(0, 5 + 64 * i)))
            .collect();
        let bypassed = low.iter().filter(|d| **d == Did::Bypass).count();
        assert_eq!(bypassed, 2);
        assert_eq!(low[3], Did::Bypass);
        for i in 0..4 {
            assert_eq!(run(&mut c, &core_read(1, 6 + 64 * i)), Did::Bypass);
        }
        // A follower core allocates (nothing decided yet).
        assert!(matches!(run(&mut c, &core_read(7, 7)), Did::Fill(_)));
        // GPU writes never bypass here; sensitivity groups override the sampled cores.
        let w = Access::new(Agent::GPU, Stream::ShaderData, Op::Write, 8 * LINE, 64).with_unit(1);
        assert!(matches!(run(&mut c, &w), Did::Fill(_)));
        assert!(matches!(run(&mut c, &core_read(1, ALLOC)), Did::Fill(_)));
        assert_eq!(run(&mut c, &core_read(7, BYPASS)), Did::Bypass);
    }

    /// Three CPU misses (fresh lines for each `round`) in the always-allocate group, one in
    /// the always-bypass group.
    fn make_cpu_sensitive(c: &mut crate::Cache<Helm>, round: u64) {
        for i in 0..3 {
            assert!(matches!(
                run(c, &cpu_read(ALLOC + 64 * (100 * round + i))),
                Did::Fill(_)
            ));
        }
        assert!(matches!(
            run(c, &cpu_read(BYPASS + 64 * 100 * round)),
            Did::Fill(_)
        ));
    }

    /// The decision for follower cores, period by period, with scripted feedback.
    #[test]
    fn followers_bypass_only_when_cpu_sensitive_and_gpu_tolerant_with_enough_ready_warps() {
        let mut c = helm();
        // Period 1: CPU sensitive (3 vs 1 misses); the high-rate core retired 4% fewer
        // instructions (tolerant); its ready warps averaged (10 + 13) / 2 = 11.
        make_cpu_sensitive(&mut c, 1);
        insts(&mut c, 1000, 960);
        ready(&mut c, 1, 10);
        ready(&mut c, 1, 13);
        ready(&mut c, 4, 11);
        ready(&mut c, 5, 10);
        c.policy_mut().end_period();
        assert!(c.policy().cpu_sensitive() && c.policy().gpu_tolerant());
        assert_eq!(c.policy().tlp_threshold(), 11);
        // Core 4 has 11 ready warps: bypass; core 5 has 10: allocate.
        assert_eq!(run(&mut c, &core_read(4, 9)), Did::Bypass);
        assert!(matches!(run(&mut c, &core_read(5, 10)), Did::Fill(_)));
        // CPU misses never bypass.
        assert!(matches!(run(&mut c, &cpu_read(11)), Did::Fill(_)));
        // Period 2: the high-rate core is 10% slower: not tolerant; CPU still sensitive.
        make_cpu_sensitive(&mut c, 2);
        insts(&mut c, 1000, 900);
        c.policy_mut().end_period();
        assert!(c.policy().cpu_sensitive() && !c.policy().gpu_tolerant());
        assert!(matches!(run(&mut c, &core_read(4, 12)), Did::Fill(_)));
        // Period 3: tolerant again, but the CPU misses as much with GPU data bypassed
        // (2 vs 2): not sensitive, so no follower bypass.
        for i in 0..2 {
            run(&mut c, &cpu_read(ALLOC + 64 * (20 + i)));
            run(&mut c, &cpu_read(BYPASS + 64 * (20 + i)));
        }
        insts(&mut c, 1000, 1000);
        c.policy_mut().end_period();
        assert!(!c.policy().cpu_sensitive() && c.policy().gpu_tolerant());
        assert!(matches!(run(&mut c, &core_read(4, 13)), Did::Fill(_)));
        // No instruction reports: the tolerance verdict stays.
        make_cpu_sensitive(&mut c, 3);
        c.policy_mut().end_period();
        assert!(c.policy().gpu_tolerant());
        assert_eq!(run(&mut c, &core_read(4, 14)), Did::Bypass);
        assert!(c
            .policy()
            .stats()
            .iter()
            .any(|(k, v)| k == "gpu_read_bypasses" && *v >= 2.0));
    }

    #[test]
    fn periods_follow_the_clock() {
        let mut cx = ctx(64, 2);
        cx.params.insert("period_cycles".into(), 1000.0);
        let mut c = cache(64, 2, Helm::build(&cx).unwrap());
        make_cpu_sensitive(&mut c, 1);
        c.feedback(&Feedback::Tick { cycle: 0 });
        assert!(!c.policy().cpu_sensitive());
        c.feedback(&Feedback::Tick { cycle: 1000 });
        assert!(c.policy().cpu_sensitive());
    }
}
