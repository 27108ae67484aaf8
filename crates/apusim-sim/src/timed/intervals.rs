//! Interval statistics: every counter of a timed run read at regular boundaries, as a time
//! series (`apusim sim --interval N[instr|cycles]`).
//!
//! Counters are monotonic, so an interval is the difference of the readings at its two
//! boundaries, computed by the same functions as the measured window (`core_window`,
//! `system_window`): per core (instructions, cycles, IPC, MPKI per level, LLC round trip),
//! per DRAM source and per stream, the LLC's timing and the network; the policy's own
//! statistics are its reading at the interval's end. Reading costs nothing between
//! boundaries: the engine compares one number per step.
//!
//! Boundaries in cycles fall exactly on multiples of N CPU cycles (the machine's state is
//! constant between engine steps, so the reading before the first step past a boundary is
//! the state at the boundary). Boundaries in instructions count the instructions retired by
//! all cores together and are read at the end of the step that crosses them (a core retires
//! several instructions a cycle, so an interval may hold a few more than N). Intervals cover
//! the whole run from cycle 0, warm-up included; the last one ends where the run ends.
//!
//! A timed GPU adds its own series ([`GpuInterval`]): its clock's cycles, the work it took
//! ([`apusim_timing::gpu::GpuModel::progress`], the unit sampled runs pace its warming by),
//! its issued and warmed instructions, its memory transactions and, for the render
//! pipeline, how far the current frame stands: the figures that show a frame's phases and
//! what sampling's windows see of them.

use super::gpu::{GpuReading, TimedGpu};
use super::memory::TimedMemory;
use super::ratio::ratio;
use super::window::{
    core_window, system_window, CoreResult, Snapshot, SystemSnapshot, SystemWindow,
};
use crate::config::SystemConfig;
use anyhow::{bail, Result};
use apusim_cache::Policy;
use apusim_timing::{CoreModel, Domain, Tick};
use apusim_trace::Agent;
use serde::{Deserialize, Serialize};
use std::str::FromStr;

/// What an interval's length counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IntervalUnit {
    /// Instructions retired by all cores together.
    Instructions,
    /// CPU cycles.
    Cycles,
}

/// `--interval`: the length of one interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct IntervalSpec {
    pub every: u64,
    pub unit: IntervalUnit,
}

impl FromStr for IntervalSpec {
    type Err = String;
    /// `N`, `N instr` or `N cycles`, N with an optional `K`, `M` or `G` (10³, 10⁶, 10⁹):
    /// `1M`, `500Kcycles`, `250000instr`.
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().to_ascii_lowercase();
        let digits = t
            .find(|c: char| !c.is_ascii_digit() && c != '_')
            .unwrap_or(t.len());
        let (num, rest) = t.split_at(digits);
        let num: u64 = num.replace('_', "").parse().map_err(|_| {
            format!("`{s}`: expected a count such as 1000000, 1M, 500Kcycles or 2Minstr")
        })?;
        let rest = rest.trim_start();
        let (mult, unit) = match rest.chars().next() {
            Some('k') => (1_000, &rest[1..]),
            Some('m') => (1_000_000, &rest[1..]),
            Some('g') => (1_000_000_000, &rest[1..]),
            _ => (1, rest),
        };
        let unit = match unit.trim() {
            "" | "i" | "instr" | "instrs" | "instructions" => IntervalUnit::Instructions,
            "c" | "cycle" | "cycles" => IntervalUnit::Cycles,
            other => {
                return Err(format!(
                    "`{s}`: unknown unit `{other}` (expected `instr` or `cycles`)"
                ))
            }
        };
        let every = num
            .checked_mul(mult)
            .ok_or_else(|| format!("`{s}`: too large (at most {})", super::config::MAX_CYCLE))?;
        if every == 0 {
            return Err(format!("`{s}`: an interval must be at least 1"));
        }
        if every > super::config::MAX_CYCLE {
            return Err(format!(
                "`{s}`: an interval is at most {} (2^62)",
                super::config::MAX_CYCLE
            ));
        }
        Ok(IntervalSpec { every, unit })
    }
}

/// One interval's figures.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Interval {
    /// 0, 1, … in order.
    pub index: u64,
    /// CPU cycles at the interval's start and end readings.
    pub start_cycle: u64,
    pub end_cycle: u64,
    /// Every core's figures over the interval, whether it is warming up, measured or past its
    /// target (`cycles` is the interval's length for every core; `reached_target` and
    /// `restarts` belong to the whole run and are left false and 0 here).
    pub cores: Vec<CoreResult>,
    /// The system's figures over the interval (in JSON, at the interval's top level).
    #[serde(flatten)]
    pub system: SystemWindow,
    /// The LLC policy's statistics at the interval's end.
    pub policy_stats: Vec<(String, f64)>,
    /// The timed GPU's figures over the interval (runs with a timed GPU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuInterval>,
}

/// A timed GPU's figures over one interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuInterval {
    /// The interval's length in the GPU's clock.
    pub cycles: u64,
    /// Work taken, timed or warmed ([`apusim_timing::gpu::GpuModel::progress`]: warp
    /// instructions, or the render pipeline's unit-cycles ×256).
    pub work: u64,
    /// Work per GPU cycle.
    pub work_per_cycle: f64,
    /// Warp (shader) instructions issued on the clock, and taken by functional warming.
    pub instructions: u64,
    pub warmed_instructions: u64,
    /// Memory transactions sent on the clock.
    pub transactions: u64,
    /// The render pipeline's share of the current frame done at the interval's end (its
    /// frame-rate estimator's `λ`, once it predicts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_progress: Option<f64>,
}

impl GpuInterval {
    fn between(a: &GpuReading, b: &GpuReading) -> GpuInterval {
        let cycles = b.cycle.saturating_sub(a.cycle);
        let work = b.work.saturating_sub(a.work);
        GpuInterval {
            cycles,
            work,
            work_per_cycle: ratio(work, cycles),
            instructions: b.instructions.saturating_sub(a.instructions),
            warmed_instructions: b.warmed_instructions.saturating_sub(a.warmed_instructions),
            transactions: b.transactions.saturating_sub(a.transactions),
            frame_progress: b.frame_progress,
        }
    }
}

/// Reads the counters at each boundary and keeps the intervals.
pub(crate) struct Recorder {
    spec: IntervalSpec,
    /// The next boundary: a tick (cycles) or a total of retired instructions.
    next: u64,
    cores: Vec<Snapshot>,
    system: SystemSnapshot,
    gpu: Option<GpuReading>,
    pub(crate) intervals: Vec<Interval>,
}

/// What an interval reading needs to know about the run.
pub(crate) struct Context<'a> {
    pub cfg: &'a SystemConfig,
    pub agents: &'a [Agent],
    pub slots: &'a [u32],
    pub level_names: &'a [String],
    pub cpu: Domain,
    pub uncore: Domain,
}

impl Recorder {
    pub(crate) fn new<P: Policy>(
        spec: IntervalSpec,
        mem: &TimedMemory<P>,
        cores: &[Box<dyn CoreModel>],
        gpu: Option<&TimedGpu>,
        ctx: &Context,
    ) -> Recorder {
        let next = match spec.unit {
            IntervalUnit::Cycles => ctx.cpu.cycles(spec.every),
            IntervalUnit::Instructions => spec.every,
        };
        Recorder {
            spec,
            next,
            cores: read_cores(mem, cores, ctx),
            system: SystemSnapshot::take(0, mem),
            gpu: gpu.map(|g| g.reading(0)),
            intervals: Vec::new(),
        }
    }

    /// Before the engine step at `now`: record every cycle boundary at or before it.
    pub(crate) fn before_step<P: Policy>(
        &mut self,
        now: Tick,
        mem: &TimedMemory<P>,
        cores: &[Box<dyn CoreModel>],
        gpu: Option<&TimedGpu>,
        ctx: &Context,
    ) {
        if self.spec.unit != IntervalUnit::Cycles {
            return;
        }
        while self.next <= now {
            let at = self.next;
            self.record(at, mem, cores, gpu, ctx);
            self.next = self.next.saturating_add(ctx.cpu.cycles(self.spec.every));
        }
    }

    /// Whether boundaries count instructions (the engine then sums the cores' retired
    /// instructions after each step).
    pub(crate) fn counts_instructions(&self) -> bool {
        self.spec.unit == IntervalUnit::Instructions
    }

    /// After the engine step at `now`, with `retired` instructions retired by all cores so
    /// far: record an instruction boundary if it was crossed.
    pub(crate) fn after_step<P: Policy>(
        &mut self,
        now: Tick,
        retired: u64,
        mem: &TimedMemory<P>,
        cores: &[Box<dyn CoreModel>],
        gpu: Option<&TimedGpu>,
        ctx: &Context,
    ) {
        if retired < self.next {
            return;
        }
        self.record(now, mem, cores, gpu, ctx);
        while self.next <= retired {
            self.next += self.spec.every;
        }
    }

    /// The last, partial interval, up to the end of the run at `now`.
    pub(crate) fn finish<P: Policy>(
        &mut self,
        now: Tick,
        mem: &TimedMemory<P>,
        cores: &[Box<dyn CoreModel>],
        gpu: Option<&TimedGpu>,
        ctx: &Context,
    ) {
        if now > self.system.tick || self.intervals.is_empty() {
            self.record(now, mem, cores, gpu, ctx);
        }
    }

    fn record<P: Policy>(
        &mut self,
        at: Tick,
        mem: &TimedMemory<P>,
        cores: &[Box<dyn CoreModel>],
        gpu: Option<&TimedGpu>,
        ctx: &Context,
    ) {
        let now_cores = read_cores(mem, cores, ctx);
        let now_gpu = gpu.map(|g| g.reading(at));
        let now_system = SystemSnapshot::take(at, mem);
        let mut core_results: Vec<CoreResult> = self
            .cores
            .iter()
            .zip(&now_cores)
            .zip(ctx.agents)
            .map(|((s, e), &a)| core_window(a, s, e, ctx.level_names, ctx.cpu))
            .collect();
        // A core's own cycle counter stops while it sleeps; over an interval every core
        // spans the interval's cycles.
        let cycles = (at - self.system.tick) / ctx.cpu.period;
        for c in &mut core_results {
            c.cycles = cycles;
            c.ipc = ratio(c.instructions, cycles);
        }
        self.intervals.push(Interval {
            index: self.intervals.len() as u64,
            start_cycle: self.system.tick / ctx.cpu.period,
            end_cycle: at / ctx.cpu.period,
            cores: core_results,
            system: system_window(&self.system, &now_system, ctx.cfg, ctx.cpu, ctx.uncore),
            policy_stats: mem.h.llc().policy().stats(),
            gpu: self
                .gpu
                .as_ref()
                .zip(now_gpu.as_ref())
                .map(|(a, b)| GpuInterval::between(a, b)),
        });
        self.cores = now_cores;
        self.system = now_system;
        self.gpu = now_gpu;
    }
}

fn read_cores<P: Policy>(
    mem: &TimedMemory<P>,
    cores: &[Box<dyn CoreModel>],
    ctx: &Context,
) -> Vec<Snapshot> {
    let functional = mem.h.stats();
    cores
        .iter()
        .zip(ctx.slots)
        .map(|(c, &slot)| Snapshot {
            core: c.stats(),
            functional: functional.clone(),
            latency: mem.latency[slot as usize],
        })
        .collect()
}

/// Refuse an interval that cannot give a series: longer than the whole run.
pub fn check(
    spec: &IntervalSpec,
    warmup: u64,
    instructions: Option<u64>,
    cores: usize,
) -> Result<()> {
    if spec.unit == IntervalUnit::Instructions {
        if let Some(target) = instructions {
            let total = warmup
                .saturating_add(target)
                .saturating_mul(cores.max(1) as u64);
            if spec.every > total {
                bail!(
                    "--interval {} instructions is longer than the whole run ({} cores × {} \
                     instructions)",
                    spec.every,
                    cores.max(1),
                    warmup.saturating_add(target)
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_lengths_parse_with_suffixes_and_units() {
        let p = |s: &str| s.parse::<IntervalSpec>();
        assert_eq!(
            p("1M").unwrap(),
            IntervalSpec {
                every: 1_000_000,
                unit: IntervalUnit::Instructions
            }
        );
        assert_eq!(
            p("500Kcycles").unwrap(),
            IntervalSpec {
                every: 500_000,
                unit: IntervalUnit::Cycles
            }
        );
        assert_eq!(p("250_000 instr").unwrap().every, 250_000);
        assert_eq!(p("3c").unwrap().unit, IntervalUnit::Cycles);
        assert!(p("0").unwrap_err().contains("at least 1"));
        assert!(p("10 parsecs").unwrap_err().contains("unknown unit"));
        assert!(p("cycles").unwrap_err().contains("expected a count"));
        assert!(p("99999999999G").unwrap_err().contains("too large"));
        // At most MAX_CYCLE (2^62), so that boundaries never overflow the tick arithmetic.
        assert_eq!(p("4611686018427387904c").unwrap().every, 1 << 62);
        assert!(p("4611686018427387905c")
            .unwrap_err()
            .contains("at most 4611686018427387904"));
    }
}
