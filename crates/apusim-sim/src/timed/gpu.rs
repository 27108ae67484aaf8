//! The timed GPU as an agent of the engine: a GPGPU program on `timing.gpu`'s model.
//!
//! drp §3's method: "early-finishing applications continue to run until each CPU application
//! commits its representative set of dynamic instructions and the GPU completes ... the
//! portion of the CUDA application assigned to it", and the GPU's performance is "the
//! number of execution cycles to complete the job". So the run ends when every core has
//! reached its target and the GPU has run its program once; a GPU that finishes first
//! starts its program again (its figures stay those of the first run), as cores replay
//! their traces.

use super::estimate::{self, Estimate};
use super::memory::{CorePort, TimedMemory};
use super::ratio::ratio;
use crate::config::SystemConfig;
use crate::run::{Input, Reopen};
use anyhow::{Context, Result};
use apusim_cache::{Feedback, Policy};
use apusim_timing::gpu::pipeline::{CriticalityReport, FrameSpan, RenderStats};
use apusim_timing::gpu::shader_criticality::CriticalityStats;
use apusim_timing::gpu::{GpuModel, GpuProgram, GpuStats, KernelSpan, StallCycles};
use apusim_timing::{Domain, Tick, Token, Wake};
use serde::{Deserialize, Serialize};

/// How many load PCs the result lists with their stall cycles.
pub const TOP_PCS: usize = 16;

/// The timed GPU's figures for one run of its program.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GpuResult {
    /// The input's name.
    pub agent: String,
    pub model: String,
    pub clock_mhz: f64,
    pub sms: u16,
    /// GPU cycles from the start until the program ended (its execution cycles, drp §3).
    pub cycles: u64,
    /// Warp instructions per GPU cycle.
    pub ipc: f64,
    /// Every counter at the program's end.
    pub stats: GpuStats,
    /// Where each shader core's cycles went (`stats.stalls` is their sum).
    pub cores: Vec<StallCycles>,
    /// Each kernel launch's span.
    pub kernels: Vec<KernelSpan>,
    /// Mean GPU cycles from a load transaction leaving the load/store unit to its data.
    pub load_latency_cycles: f64,
    /// The load PCs warps waited on longest: (PC, stall cycles summed over warps).
    pub stall_pcs: Vec<(u64, u64)>,
    /// Times the program was started again to keep the GPU busy while cores ran on.
    pub restarts: u64,
    /// A render pipeline's frames and units (3D jobs).
    pub render: Option<RenderResult>,
    /// What the shader cores' criticality hardware marked (`timing.gpu.criticality`,
    /// gpu-access-criticality §4.1.2).
    pub shader_criticality: Option<ShaderCriticalityResult>,
    /// A sampled run's GPU work ([`GpuModel::progress`]) per GPU cycle over its measured
    /// windows, with the 99.7% interval of the ratio estimator (SMARTS §3): the rate its
    /// functional warming goes on at, so its relative error bounds that of the execution
    /// cycles and frame times the warming extrapolates (the detailed cycles carry none).
    /// The render pipeline paces its warming by the frame's phases, each weighed against
    /// this rate (docs/timing.md): for frames the interval is the windows' sampling error,
    /// not the pacing's bias. `None` for a detailed run or fewer than two windows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_rate: Option<Estimate>,
}

/// The criticality hardware's counters at the end of the program's first run, and what the
/// LLC did with the marks.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShaderCriticalityResult {
    #[serde(flatten)]
    pub marks: CriticalityStats,
    /// Non-critical shader accesses that missed the LLC and went around it.
    pub llc_bypasses: u64,
    /// Critical transactions over all marked ones (those that missed their core's L1).
    pub critical_fraction: f64,
}

impl ShaderCriticalityResult {
    fn new(marks: CriticalityStats, llc_bypasses: u64) -> Self {
        ShaderCriticalityResult {
            critical_fraction: ratio(marks.critical(), marks.critical() + marks.non_critical()),
            marks,
            llc_bypasses,
        }
    }
}

/// What a timed render pipeline did in its first run of the scene.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RenderResult {
    /// Each frame's span in GPU cycles.
    pub frames: Vec<FrameSpan>,
    /// Frames per second at the GPU clock: frames over the time they took.
    pub fps: f64,
    /// Per-unit counters and the work done.
    pub units: RenderStats,
    /// Each unit kind's busy fraction per instance, largest first (the first is the
    /// bottleneck).
    pub utilisation: Vec<(String, f64)>,
    /// Critical-access identification and frame-rate estimation (gpu-access-criticality
    /// §4.1.1, §4.2).
    pub criticality: Option<CriticalityReport>,
}

impl RenderResult {
    fn new(
        frames: Vec<FrameSpan>,
        units: RenderStats,
        cycles: u64,
        clock_mhz: f64,
        criticality: Option<CriticalityReport>,
    ) -> Self {
        let span = frames.last().map_or(cycles, |f| f.end);
        let seconds = span as f64 / (clock_mhz * 1e6);
        RenderResult {
            fps: if seconds > 0.0 {
                frames.len() as f64 / seconds
            } else {
                0.0
            },
            utilisation: units
                .utilisation(span)
                .into_iter()
                .map(|(k, u)| (k.to_string(), u))
                .collect(),
            frames,
            units,
            criticality,
        }
    }
}

/// What the first run of the program left: its last cycle, counters, per-core stall classes,
/// load-PC stalls and render counters.
type FirstRun = (
    u64,
    GpuStats,
    Vec<StallCycles>,
    Vec<(u64, u64)>,
    Option<RenderStats>,
);

/// A GPU model with its engine state.
pub(crate) struct TimedGpu {
    pub(crate) name: String,
    model: Box<dyn GpuModel>,
    model_name: String,
    clock_mhz: f64,
    /// When the model next runs (`None`: waiting for data, or done).
    pub(crate) wake: Option<Tick>,
    /// The first run's end.
    first: Option<FirstRun>,
    /// The model takes the GPU's LLC figures (it marks access criticality), and what it had
    /// marked at the first run's end.
    llc_feedback: bool,
    first_shader_crit: Option<ShaderCriticalityResult>,
    reopen: Option<Reopen>,
    restarts: u64,
    /// Sampled runs: the measured window's start and the work done by then,
    /// the GPU's rate over the last window, and whether it is frozen.
    window: Option<(Tick, u64)>,
    /// Work ([`GpuModel::progress`]) and GPU cycles of every measured window so far, in
    /// total and window by window.
    measured: (u64, u64),
    windows: Vec<(f64, f64)>,
    rate: Option<f64>,
    model_frozen: bool,
    /// Each shader core's issued instructions at the last report to the LLC policy.
    reported: Vec<u64>,
}

impl TimedGpu {
    pub(crate) fn new(
        cfg: &SystemConfig,
        mut input: Input,
        domain: Domain,
        clock_mhz: f64,
        reopen: Option<Reopen>,
    ) -> Result<TimedGpu> {
        let t = &cfg.timing;
        let program = input
            .program
            .take()
            .context("a GPU input without a program")?;
        let kernels = matches!(program, GpuProgram::Kernels(_));
        let (table, name, params) = if kernels {
            ("timing.gpu", t.gpu_model(), &t.gpu.params)
        } else {
            ("timing.render", t.render_model(), &t.render.params)
        };
        let mut model = apusim_timing::gpu::build(name, params, domain, program).context(table)?;
        model.set_frequency(clock_mhz * 1e6);
        let units = model.units() as usize;
        // Each shader core needs its own instance of the first-level cache.
        if let Some(c) = cfg
            .gpu
            .caches
            .iter()
            .filter(|_| kernels)
            .find(|c| c.streams.contains(&apusim_trace::Stream::ShaderData))
        {
            if c.units < units {
                anyhow::bail!(
                    "timing.gpu has {units} shader cores but gpu cache `{}` has {} instance(s) \
                     (set gpu.caches units or timing.gpu.sms to match)",
                    c.name,
                    c.units
                );
            }
        }
        Ok(TimedGpu {
            name: input.name,
            model,
            model_name: name.to_string(),
            clock_mhz,
            wake: Some(0),
            first: None,
            llc_feedback: true,
            first_shader_crit: None,
            reopen,
            restarts: 0,
            window: None,
            measured: (0, 0),
            windows: Vec::new(),
            rate: None,
            model_frozen: false,
            reported: Vec::new(),
        })
    }

    /// What the LLC policy hears of the shader cores since the last call: each core's
    /// instructions issued meanwhile (`GpuCoreInstructions`, for TAP's core sampling and
    /// HeLM's sampled cores; cores that issued nothing are not reported) and each core's
    /// ready warps now (`ReadyWarps`, HeLM's thread-level parallelism).
    pub(crate) fn core_feedback(&mut self, out: &mut Vec<Feedback>) {
        let now = self.model.core_instructions();
        self.reported.resize(now.len(), 0);
        for (core, (&n, last)) in now.iter().zip(&mut self.reported).enumerate() {
            // A model that counts afresh (a restarted program) reports from zero.
            let count = if n >= *last { n - *last } else { n };
            *last = n;
            if count > 0 {
                out.push(Feedback::GpuCoreInstructions {
                    core: core as u32,
                    count,
                });
            }
        }
        for (core, count) in self.model.ready_warps().into_iter().enumerate() {
            out.push(Feedback::ReadyWarps {
                core: core as u32,
                count,
            });
        }
    }

    /// The GPU's clock.
    pub(crate) fn domain(&self) -> Domain {
        self.model.domain()
    }

    /// Whether the GPU runs GPGPU kernels (not a render pipeline).
    pub(crate) fn runs_kernels(&self) -> bool {
        self.model.render_stats().is_none()
    }

    /// Warp instructions issued so far.
    pub(crate) fn instructions(&self) -> u64 {
        self.model.stats().warp_instructions
    }

    /// Where the current frame stands (render pipelines with a learned frame).
    pub(crate) fn frame_progress(&self) -> Option<apusim_timing::gpu::pipeline::FrameProgress> {
        self.model.frame_progress()
    }

    /// Whether the program has run to its end once.
    pub(crate) fn ran_once(&self) -> bool {
        self.first.is_some()
    }

    /// The status line's account of a program not yet run once (a run ends only when it
    /// has): how many of its frames or kernels are done.
    pub(crate) fn progress(&self) -> Option<String> {
        if self.ran_once() {
            return None;
        }
        let frames = self.model.frames().len();
        Some(if self.model.render_stats().is_some() {
            format!("GPU {frames} frame(s) done")
        } else {
            format!("GPU {} kernel(s) done", self.model.kernels().len())
        })
    }

    pub(crate) fn complete(&mut self, token: Token, at: Tick) {
        self.model.complete(token, at);
        let e = self.model.domain().edge_at_or_after(at);
        self.wake = Some(self.wake.map_or(e, |w| w.min(e)));
    }

    /// One GPU cycle at `now` through agent slot `slot`; a program that ends while cores
    /// still run (`cpus_running`) starts again.
    pub(crate) fn cycle<P: Policy>(
        &mut self,
        now: Tick,
        mem: &mut TimedMemory<P>,
        slot: u32,
        cpus_running: bool,
    ) -> Result<()> {
        if self.llc_feedback {
            let (accesses, misses) = mem.h.gpu_llc_demand();
            self.llc_feedback = self.model.llc_feedback(accesses, misses).is_some();
        }
        let mut port = CorePort { mem, agent: slot };
        let d = self.model.domain();
        let w = self
            .model
            .cycle(now, &mut port)
            .with_context(|| format!("{} at GPU cycle {}", self.name, d.cycle(now)))?;
        mem.take_error()
            .with_context(|| format!("{} at GPU cycle {}", self.name, d.cycle(now)))?;
        self.wake = match w {
            Wake::At(t) => Some(t.max(now + 1)),
            Wake::OnCompletion => None,
            Wake::Finished => {
                if self.first.is_none() {
                    // The program ended with its last kernel (in a sampled run, within the
                    // jump its warming stood for).
                    let last = self.model.kernels().last().map(|k| k.end).or(self
                        .model
                        .frames()
                        .last()
                        .map(|f| f.end));
                    let end = last.map_or(d.cycle(now), |e| e.min(d.cycle(now)));
                    self.first = Some((
                        end,
                        self.model.stats(),
                        self.model.core_stalls(),
                        self.model.pc_stalls(),
                        self.model.render_stats(),
                    ));
                    self.first_shader_crit = self.shader_criticality(mem);
                }
                match (&self.reopen, cpus_running) {
                    (Some(reopen), true) => {
                        let mut input =
                            reopen().with_context(|| format!("starting {} again", self.name))?;
                        let program = input.program.take().with_context(|| {
                            format!("{}: reopened without a program", self.name)
                        })?;
                        self.model
                            .restart(program)
                            .with_context(|| format!("starting {} again", self.name))?;
                        self.restarts += 1;
                        Some(now + d.period)
                    }
                    _ => None,
                }
            }
        };
        Ok(())
    }

    /// Work done so far, timed and warmed ([`GpuModel::progress`]).
    fn done(&self) -> u64 {
        self.model.progress()
    }

    /// The cumulative counters an interval boundary at `at` reads.
    pub(crate) fn reading(&self, at: Tick) -> GpuReading {
        let s = self.model.stats();
        GpuReading {
            cycle: self.model.domain().cycle(at),
            work: self.done(),
            instructions: s.warp_instructions,
            warmed_instructions: s.warmed_instructions,
            transactions: s.transactions,
            frame_progress: self.model.frame_progress().map(|f| f.progress),
        }
    }

    /// A sampled run's measured window began at `now`.
    pub(crate) fn window_started(&mut self, now: Tick) {
        if self.window.is_none() {
            self.window = Some((now, self.done()));
            self.model.measure(self.model.domain().cycle(now), true);
        }
    }

    /// Freeze the GPU so memory drains (a sampled run's measured window ended at `now`):
    /// its rate over the window is what the warming goes on at.
    pub(crate) fn freeze(&mut self, now: Tick) {
        if self.model_frozen {
            return;
        }
        self.model_frozen = true;
        self.model.set_frozen(true);
        if let Some((t0, i0)) = self.window.take() {
            let d = self.model.domain();
            self.model.measure(d.cycle(now), false);
            let (work, cycles) = (self.done() - i0, d.cycle(now).saturating_sub(d.cycle(t0)));
            self.measured.0 += work;
            self.measured.1 += cycles;
            self.windows.push((work as f64, cycles as f64));
            self.rate = Some(ratio(self.measured.0, self.measured.1));
        }
    }

    pub(crate) fn drained(&self) -> bool {
        self.model.drained()
    }

    /// A sampled run's functional warming from `now` to `resume`: the GPU takes as much work
    /// ([`GpuModel::progress`]: warp instructions, or the render pipeline's unit-cycles)
    /// functionally as it did per GPU cycle in the measured windows so far (none before the
    /// first), then goes on from `resume`. The windows' rate, not the whole segments': right
    /// after a thaw every warp whose loads returned meanwhile is ready at once, and the
    /// burst would overstate it. All windows together, not the last one: a kernel's phases
    /// (a memory-bound load phase, a compute-bound reduction tree) last longer than a
    /// window, and the last window's phase alone would carry the GPU through the others at
    /// its own pace (a reduction kernel came out 23% short that way; on rendered frames the
    /// last window, or the last four, gave larger frame-time errors than all of them,
    /// docs/validation.md).
    pub(crate) fn warm_and_resume<P: Policy>(
        &mut self,
        now: Tick,
        resume: Tick,
        mem: &mut TimedMemory<P>,
        slot: u32,
    ) -> Result<()> {
        let d = self.model.domain();
        if let Some(rate) = self.rate.take() {
            let jump = d.cycle(resume).saturating_sub(d.cycle(now));
            let n = (rate * jump as f64).round() as u64;
            if n > 0 {
                self.model
                    .warm(n, jump, &mut mem.warm_port(slot))
                    .with_context(|| format!("{} warming", self.name))?;
                mem.take_error()
                    .with_context(|| format!("{} warming", self.name))?;
            }
        }
        self.model.set_frozen(false);
        self.model_frozen = false;
        self.wake = Some(d.edge_at_or_after(resume));
        Ok(())
    }

    /// The criticality hardware's counters now (`None` without it).
    fn shader_criticality<P: Policy>(
        &mut self,
        mem: &TimedMemory<P>,
    ) -> Option<ShaderCriticalityResult> {
        if !self.llc_feedback {
            return None;
        }
        let (accesses, misses) = mem.h.gpu_llc_demand();
        let marks = self.model.llc_feedback(accesses, misses)?.clone();
        Some(ShaderCriticalityResult::new(
            marks,
            mem.h.llc_flag_bypasses(),
        ))
    }

    pub(crate) fn result<P: Policy>(&mut self, mem: &TimedMemory<P>) -> GpuResult {
        let shader_criticality = match &self.first {
            Some(_) => self.first_shader_crit.clone(),
            None => self.shader_criticality(mem),
        };
        let d = self.model.domain();
        let (cycles, stats, cores, pcs, render) = self.first.clone().unwrap_or_else(|| {
            (
                self.model.stats().cycles,
                self.model.stats(),
                self.model.core_stalls(),
                self.model.pc_stalls(),
                self.model.render_stats(),
            )
        });
        GpuResult {
            agent: self.name.clone(),
            model: self.model_name.clone(),
            clock_mhz: self.clock_mhz,
            sms: render.map_or(self.model.units(), |r| r.shader_cores as u16),
            cycles,
            ipc: ratio(stats.warp_instructions + stats.warmed_instructions, cycles),
            stats,
            cores,
            kernels: self.model.kernels().to_vec(),
            load_latency_cycles: ratio(stats.load_ticks, stats.loads_done) / d.period as f64,
            stall_pcs: pcs.into_iter().take(TOP_PCS).collect(),
            restarts: self.restarts,
            render: render.map(|r| {
                // Over the whole run: every frame the estimator saw, restarts included.
                let crit = self.model.criticality();
                RenderResult::new(
                    self.model.frames().to_vec(),
                    r,
                    cycles,
                    self.clock_mhz,
                    crit,
                )
            }),
            shader_criticality,
            work_rate: {
                let (work, cycles): (Vec<f64>, Vec<f64>) = self.windows.iter().copied().unzip();
                estimate::ratio(&work, &cycles, estimate::Z_997)
            },
        }
    }
}

/// The GPU's cumulative counters at one boundary.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct GpuReading {
    pub(crate) cycle: u64,
    pub(crate) work: u64,
    pub(crate) instructions: u64,
    pub(crate) warmed_instructions: u64,
    pub(crate) transactions: u64,
    pub(crate) frame_progress: Option<f64>,
}
