//! Sampled timed runs (`apusim sim --sample`): systematic sampling with functional warming,
//! after SMARTS (Wunderlich et al., ISCA 2003).
//!
//! The run alternates two modes. In a *detailed segment* every core runs on the clock for
//! `warmup` cycles (detailed warming: the pipeline, MSHRs, queues and DRAM rows fill), then
//! for `unit` cycles in which each core's retired instructions are counted (one *window*).
//! Then fetch stops, the machine drains, and *functional warming* takes the next
//! instructions of each core without timing: their accesses update every cache level and
//! the LLC policy, and their branches train the predictor, so the next segment starts warm.
//! All cores are detailed in the same segments, so their contention is sampled together.
//!
//! Windows are spans of time, not of instructions, because the cores of a mix run at
//! different speeds: a window of so many instructions per core would hold a fast core in
//! detail for as long as the slowest takes (time-based sampling, as multi-threaded sampling
//! does, Carlson et al., ISPASS 2013). A segment stands for `period` cycles in all: after
//! the detailed part the clock jumps over the rest (`J` cycles), and warming gives each
//! core `ipc_i × J` instructions, `ipc_i` its IPC over the segment just run, so the cores
//! keep their relative progress and an open-loop GPU trace warms the accesses it would have
//! made meanwhile, its time stamps in step. The run's functional warm-up (`--warmup`) is
//! warming too, at one instruction per cycle.
//!
//! A timed GPU joins the segments too: it freezes while the machine drains and executes
//! functionally during the jump at the rate of its measured windows
//! ([`super::gpu`]'s `warm_and_resume`).
//!
//! Each core's IPC is estimated from its windows with the ratio estimator and a 99.7%
//! interval ([`super::estimate`]); MPKI per level is exact (warming counts every access).

use super::estimate::{self, Estimate};
use super::ratio::ratio;
use apusim_timing::{CoreModel, Domain, Tick};
use serde::{Deserialize, Serialize};

/// Detailed cycles before each measured window when the run has no timed render pipeline.
pub const CPU_WARMUP: u64 = 50_000;

/// Detailed cycles before each measured window when a timed render pipeline runs: the
/// memory system it congests takes this long to return to its detailed state after a thaw
/// (docs/validation.md, "Sampled frames and the detailed warm-up").
pub const RENDER_WARMUP: u64 = 200_000;

/// Window sizes of a sampled run, in CPU cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleSpec {
    /// Cycles one segment stands for (its detailed part and the jump after it).
    pub period: u64,
    /// Detailed cycles before each measured window; `None` until the run decides it by
    /// what runs ([`SampleSpec::resolved`]): [`CPU_WARMUP`], or [`RENDER_WARMUP`] beside a
    /// timed render pipeline. A run's report carries the value it used.
    pub warmup: Option<u64>,
    /// Cycles of each measured window.
    pub unit: u64,
}

impl Default for SampleSpec {
    /// A window of 10,000 cycles after 50,000 of detailed warming per 1,000,000: 6% of the
    /// run's time in detail. SMARTS measures 1,000 instructions after 2,000 of detailed
    /// warming on an 8-wide core with a 128-entry ROB; here the memory system's queues need
    /// longer: functional warming leaves DRAM's read and write queues empty, and a
    /// write-heavy memory-bound job (the `lbm` stand-in) read 12.8% fast after 10,000 cycles
    /// of detailed warming and 3.6% after 50,000 (scripts/sampling/validate.sh,
    /// docs/validation.md). A memory-bound core (IPC 0.05) still retires about 500
    /// instructions per window.
    ///
    /// A render pipeline needs longer ([`RENDER_WARMUP`]): in a detailed run its texture
    /// reads wait thousands of cycles for the LLC's MSHRs behind each other (12,000 in a
    /// `shooter` frame), a backlog that the drain before warming empties; 50,000 cycles
    /// after a thaw they wait a fifth of that, and eight frames of each of four scenes came
    /// out 3–46% short (8–12% short after 200,000).
    fn default() -> Self {
        SampleSpec {
            period: 1_000_000,
            warmup: None,
            unit: 10_000,
        }
    }
}

impl SampleSpec {
    /// This spec with its warm-up decided: the one asked for, or the default for a run with
    /// (`renders`) or without a timed render pipeline.
    pub fn resolved(mut self, renders: bool) -> SampleSpec {
        self.warmup
            .get_or_insert(if renders { RENDER_WARMUP } else { CPU_WARMUP });
        self
    }

    /// Detailed cycles before each measured window ([`CPU_WARMUP`] while undecided).
    pub fn warmup_cycles(&self) -> u64 {
        self.warmup.unwrap_or(CPU_WARMUP)
    }

    /// Refuse sizes that cannot sample, naming the option.
    pub fn check(&self) -> Result<(), String> {
        if self.unit == 0 {
            return Err("--sample-unit must be at least 1 cycle".into());
        }
        if self.period == 0 {
            return Err("--sample-period must be at least 1 cycle".into());
        }
        for (key, v) in [
            ("--sample-period", self.period),
            ("--sample-warmup", self.warmup_cycles()),
            ("--sample-unit", self.unit),
        ] {
            if v > super::config::MAX_CYCLE {
                return Err(format!(
                    "{key} {v} is above the maximum of {} (2^62)",
                    super::config::MAX_CYCLE
                ));
            }
        }
        if self.warmup_cycles() + self.unit > self.period {
            return Err(format!(
                "--sample-warmup {}{} + --sample-unit {} exceed --sample-period {}: the \
                 detailed windows would cover the whole run (give a shorter \
                 --sample-warmup, or use the detailed mode)",
                self.warmup_cycles(),
                match self.warmup {
                    Some(_) => "",
                    None => " (its default)",
                },
                self.unit,
                self.period
            ));
        }
        Ok(())
    }
}

/// One core's sampled estimate.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SampledCore {
    pub agent: String,
    /// IPC with its 99.7% interval (`None` with fewer than two windows).
    pub ipc: Option<Estimate>,
    pub windows: usize,
    /// Instructions and cycles of the windows together (the IPC estimate is their ratio).
    pub measured_instructions: u64,
    pub measured_cycles: u64,
    /// Instructions retired on the clock (detailed) and taken by functional warming.
    pub detailed_instructions: u64,
    pub warmed_instructions: u64,
}

/// A sampled run's estimates.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Sampled {
    pub spec: SampleSpec,
    pub cores: Vec<SampledCore>,
    /// Instructions simulated in detail over all instructions, all cores together.
    pub detailed_fraction: f64,
    /// `--target-error`: the relative error asked for, and the rounds of sampling it took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_error: Option<f64>,
    pub rounds: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Detailed,
    Draining,
}

/// The mode switches of a sampled run, driven by the engine loop.
pub(crate) struct Sampler {
    spec: SampleSpec,
    state: State,
    /// The run's functional warm-up is still to come.
    initial: bool,
    /// The segment's start, and each core's retired instructions then.
    seg_tick: Tick,
    seg_retired: Vec<u64>,
    /// The measured window's start, once reached, and each core's retired instructions then.
    mark: Option<(Tick, Vec<u64>)>,
    /// Per core: (instructions, cycles) of each window that counts.
    windows: Vec<Vec<(f64, f64)>>,
}

impl Sampler {
    pub(crate) fn new(spec: SampleSpec, cores: usize) -> Sampler {
        Sampler {
            spec,
            state: State::Draining,
            initial: true,
            seg_tick: 0,
            seg_retired: vec![0; cores],
            mark: None,
            windows: vec![Vec::new(); cores],
        }
    }

    /// Whether the machine is draining (open-loop inputs hold their requests meanwhile).
    pub(crate) fn draining(&self) -> bool {
        self.state == State::Draining
    }

    /// Whether the current segment's measured window has begun.
    pub(crate) fn in_window(&self) -> bool {
        self.state == State::Detailed && self.mark.is_some()
    }

    /// After an engine step at `now`: start the measured window once the detailed warm-up
    /// has passed, and end it (stopping fetch everywhere) once it has lasted `unit` cycles.
    /// `counts[i]` says whether core `i`'s windows count (it is past its warm-up and short
    /// of its target). The reading is taken at the step, so a window spans at least `unit`
    /// cycles (the cycles counted are the true span).
    pub(crate) fn after_step(
        &mut self,
        now: Tick,
        cpu: Domain,
        cores: &mut [Box<dyn CoreModel>],
        counts: &[bool],
    ) {
        if self.state != State::Detailed {
            return;
        }
        let retired = |cores: &[Box<dyn CoreModel>]| -> Vec<u64> {
            cores.iter().map(|c| c.stats().instructions).collect()
        };
        match &self.mark {
            None if now
                >= self
                    .seg_tick
                    .saturating_add(cpu.cycles(self.spec.warmup_cycles())) =>
            {
                self.mark = Some((now, retired(cores)));
            }
            Some((t0, r0)) if now >= t0.saturating_add(cpu.cycles(self.spec.unit)) => {
                let cycles = ((now - t0) / cpu.period) as f64;
                for (i, r) in retired(cores).into_iter().enumerate() {
                    if counts[i] {
                        self.windows[i].push(((r - r0[i]) as f64, cycles));
                    }
                }
                for c in cores.iter_mut() {
                    c.set_fetch(false);
                }
                self.state = State::Draining;
            }
            _ => {}
        }
    }

    /// When the machine has drained at `now` (every core drained, memory quiescent): the
    /// instructions each core warms and the cycles the clock jumps.
    pub(crate) fn warming(
        &mut self,
        now: Tick,
        cpu: Domain,
        cores: &[Box<dyn CoreModel>],
        run_warmup: u64,
    ) -> (Vec<u64>, u64) {
        let n = cores.len();
        if self.initial {
            self.initial = false;
            return (vec![run_warmup; n], run_warmup);
        }
        let detailed = (now - self.seg_tick) / cpu.period;
        let jump = self.spec.period.saturating_sub(detailed);
        let per_core = cores
            .iter()
            .zip(&self.seg_retired)
            .map(|(c, &r0)| {
                let ipc = ratio(c.stats().instructions - r0, detailed);
                (ipc * jump as f64).round() as u64
            })
            .collect();
        (per_core, jump)
    }

    /// Start the next detailed segment at `at`, fetch on everywhere.
    pub(crate) fn resume(&mut self, at: Tick, cores: &mut [Box<dyn CoreModel>]) {
        for (c, r) in cores.iter_mut().zip(&mut self.seg_retired) {
            c.set_fetch(true);
            *r = c.stats().instructions;
        }
        self.seg_tick = at;
        self.mark = None;
        self.state = State::Detailed;
    }

    /// The estimates, per core (`agents` names them).
    pub(crate) fn finish(&self, agents: &[String], cores: &[Box<dyn CoreModel>]) -> Sampled {
        let mut detailed = 0;
        let mut warmed = 0;
        let out = self
            .windows
            .iter()
            .zip(agents)
            .zip(cores)
            .map(|((w, agent), c)| {
                let (x, y): (Vec<f64>, Vec<f64>) = w.iter().copied().unzip();
                let s = c.stats();
                detailed += s.instructions;
                warmed += s.warmed;
                SampledCore {
                    agent: agent.clone(),
                    ipc: estimate::ratio(&x, &y, estimate::Z_997),
                    windows: w.len(),
                    measured_instructions: x.iter().sum::<f64>() as u64,
                    measured_cycles: y.iter().sum::<f64>() as u64,
                    detailed_instructions: s.instructions,
                    warmed_instructions: s.warmed,
                }
            })
            .collect();
        Sampled {
            spec: self.spec,
            cores: out,
            detailed_fraction: ratio(detailed, detailed + warmed),
            target_error: None,
            rounds: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_that_cannot_sample_are_refused() {
        assert!(SampleSpec::default().check().is_ok());
        let s = |period, warmup, unit| SampleSpec {
            period,
            warmup: Some(warmup),
            unit,
        };
        assert!(s(100, 10, 0).check().unwrap_err().contains("--sample-unit"));
        assert!(s(0, 0, 1).check().unwrap_err().contains("--sample-period"));
        assert!(s(100, 60, 50)
            .check()
            .unwrap_err()
            .contains("use the detailed mode"));
        // A default warm-up that does not fit is named as the default.
        let short = SampleSpec {
            period: 150_000,
            ..SampleSpec::default()
        };
        assert!(short.check().is_ok());
        let e = short.resolved(true).check().unwrap_err();
        assert!(e.contains("--sample-warmup 200000 + "), "{e}");
        assert!(short.resolved(false).check().is_ok());
        let e = SampleSpec {
            period: 50_000,
            ..SampleSpec::default()
        }
        .check()
        .unwrap_err();
        assert!(e.contains("--sample-warmup 50000 (its default)"), "{e}");
    }

    #[test]
    fn the_warm_up_is_the_one_asked_for_or_the_default_for_what_runs() {
        let auto = SampleSpec::default();
        assert_eq!(auto.resolved(false).warmup, Some(CPU_WARMUP));
        assert_eq!(auto.resolved(true).warmup, Some(RENDER_WARMUP));
        let asked = SampleSpec {
            warmup: Some(7),
            ..auto
        };
        assert_eq!(asked.resolved(true).warmup, Some(7));
        assert_eq!(asked.resolved(false).warmup_cycles(), 7);
    }
}
