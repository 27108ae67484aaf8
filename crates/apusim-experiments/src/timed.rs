//! Timed runs of the papers' mixes under a figure's bars, shared by the timed studies
//! ([`crate::drp_perf`], [`crate::crit_perf`]).
//!
//! A [`Bar`] is what one bar of a figure changes: the LLC policy and the LLC switches
//! (idealized streams, forced GPU read bypass). [`TimedMixes`] holds the mixes of a figure,
//! their generated traces (in the trace cache, generated once) and the system each runs on,
//! a preset chosen by the mix's GPU job (the papers attach one of two GPU models by workload)
//! with as many CPU cores as the mix has CPU jobs; [`TimedMixes::run`] makes every
//! (mix, bar) run in parallel and returns the results mix by mix, bar by bar, whatever the
//! number of threads.

use crate::jobs::{prepare_all, JobInputs, TraceDir};
use crate::runs::{PlannedInput, PlannedRun, Runs};
use crate::{with_means, Mean, Record, StudyOutput};
use anyhow::{bail, Context, Result};
use apusim_sim::timed::{SampleSpec, SimOptions, SimResult};
use apusim_sim::{LlcSwitches, SystemConfig};
use apusim_workloads::mixes::{self, Frames, GpuJob};
use std::path::PathBuf;

/// One bar of a figure: its label, policy, LLC switches, `key=value` settings of its
/// DRAM (`timing.dram_set`, e.g. `scheduler=im`) and `--set` overrides of its system (after
/// the figure's own).
pub(crate) struct Bar {
    pub label: String,
    pub policy: &'static str,
    pub llc_switches: LlcSwitches,
    pub dram: Vec<String>,
    pub set: Vec<String>,
}

/// A bar that only names a policy.
pub(crate) fn bar(label: &str, policy: &'static str) -> Bar {
    Bar {
        label: label.into(),
        policy,
        llc_switches: LlcSwitches::default(),
        dram: Vec::new(),
        set: Vec::new(),
    }
}

/// A bar under `policy` whose `streams` (an `--ideal` list) are ideal.
pub(crate) fn ideal(label: &str, policy: &'static str, streams: &str) -> Bar {
    Bar {
        llc_switches: LlcSwitches {
            ideal: LlcSwitches::parse_ideal(streams).expect("built-in stream list"),
            ..LlcSwitches::default()
        },
        ..bar(label, policy)
    }
}

/// What to run a timed figure on.
#[derive(Clone, Debug)]
pub struct Options {
    /// Mix names (`None`: the figure's own).
    pub mixes: Option<Vec<String>>,
    /// Workload scale (`apusim sim --mix --scale`).
    pub scale: u64,
    /// Frames of each mix's rendering job (`apusim sim --mix --frames`; default `scale`).
    pub frames: Frames,
    pub seed: u64,
    /// Instructions each core retires before its statistics start.
    pub warmup: u64,
    /// Instructions each core retires after the warm-up (`None`: to the end of its trace).
    pub instructions: Option<u64>,
    /// `--set KEY=VALUE` overrides of the figure's presets.
    pub overrides: Vec<String>,
    /// Sample every run, the alone runs included (`apusim sim --sample` with its default
    /// windows): each IPC is an estimate from short detailed windows with functional warming
    /// between them.
    pub sample: bool,
    /// Trace cache (alone runs are cached beside the traces); `None` keeps the generated
    /// traces in a temporary directory for the run and simulates every alone run.
    pub cache: Option<PathBuf>,
    /// Where the runs are kept between invocations ([`crate::runs`]).
    pub runs: Runs,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mixes: None,
            scale: 1,
            frames: Frames::Scale,
            seed: 1,
            warmup: 0,
            instructions: None,
            overrides: Vec::new(),
            sample: false,
            cache: None,
            runs: Runs::default(),
        }
    }
}

impl Options {
    /// `; scale .., seed .., warm-up .., ...` for a study's title.
    pub(crate) fn note(&self) -> String {
        format!(
            "; scale {}{}, seed {}, warm-up {}, {}{}{}",
            self.scale,
            self.frames
                .label()
                .map_or_else(String::new, |f| format!(", frames {f}")),
            self.seed,
            self.warmup,
            self.instructions.map_or_else(
                || "traces to their end".to_string(),
                |n| format!("{n} instructions per core")
            ),
            if self.sample {
                "; sampled (SMARTS windows of `apusim sim --sample`; docs/validation.md gives \
                 their error)"
            } else {
                ""
            },
            crate::overrides_note(&self.overrides)
        )
    }
}

/// The mixes of a figure, ready for timed runs.
pub(crate) struct TimedMixes {
    pub names: Vec<String>,
    pub inputs: Vec<JobInputs>,
    pub configs: Vec<SystemConfig>,
    /// The preset each mix runs on.
    pub presets: Vec<&'static str>,
    /// The figure's `--set` overrides.
    overrides: Vec<String>,
    pub opts: SimOptions,
    /// The mixes' workload scale, frames and seed.
    scale: u64,
    frames: Frames,
    seed: u64,
    runs: Runs,
    _traces: TraceDir,
}

/// The GPU job of mix `name`.
pub(crate) fn gpu_job(name: &str) -> Result<&'static GpuJob> {
    Ok(&mixes::mix(name)
        .with_context(|| format!("unknown mix `{name}` (see `apusim mixes`)"))?
        .gpu)
}

impl TimedMixes {
    /// `names` on the presets `preset` picks by GPU job, traces generated into the cache.
    pub fn new(
        study: &str,
        names: Vec<String>,
        preset: impl Fn(&GpuJob) -> &'static str,
        o: &Options,
    ) -> Result<TimedMixes> {
        if names.is_empty() {
            bail!("{study}: give at least one mix");
        }
        let presets: Vec<&'static str> = names
            .iter()
            .map(|m| gpu_job(m).map(&preset))
            .collect::<Result<_>>()?;
        let traces = TraceDir::new(o.cache.as_deref())?;
        let dir = traces.path().to_path_buf();
        let inputs: Vec<JobInputs> = names
            .iter()
            .map(|m| JobInputs::mix_at(m, o.scale, None, o.frames, o.seed, Some(dir.clone())))
            .collect::<Result<_>>()?;
        // Planning lists runs without making them, so it generates no trace either.
        if !o.runs.is_planning() {
            prepare_all(&dir, &inputs)?;
        }
        let configs = inputs
            .iter()
            .zip(&presets)
            .map(|(i, p)| Self::config(p, &o.overrides, i, o.seed))
            .collect::<Result<_>>()?;
        Ok(TimedMixes {
            names,
            inputs,
            configs,
            presets,
            overrides: o.overrides.clone(),
            opts: SimOptions {
                warmup: o.warmup,
                instructions: o.instructions,
                sample: o.sample.then(SampleSpec::default),
                ..SimOptions::default()
            },
            scale: o.scale,
            frames: o.frames,
            seed: o.seed,
            runs: o.runs.clone(),
            _traces: traces,
        })
    }

    /// Preset `preset` with `overrides`, as many cores as `inputs` has CPU jobs, seed `seed`.
    fn config(
        preset: &str,
        overrides: &[String],
        inputs: &JobInputs,
        seed: u64,
    ) -> Result<SystemConfig> {
        let mut cfg = SystemConfig::load_preset(preset, overrides)?;
        cfg.cpus = inputs.cpu_jobs();
        cfg.seed = seed;
        Ok(cfg)
    }

    /// Mix `m`'s system under bar `b`.
    fn config_of(&self, m: usize, bar: &Bar) -> Result<SystemConfig> {
        let mut cfg = if bar.set.is_empty() {
            self.configs[m].clone()
        } else {
            let all: Vec<String> = self.overrides.iter().chain(&bar.set).cloned().collect();
            Self::config(self.presets[m], &all, &self.inputs[m], self.configs[m].seed)?
        };
        cfg.timing.dram_set.extend(bar.dram.iter().cloned());
        Ok(cfg)
    }

    /// Every (mix, bar) run, in parallel; mix by mix, bar by bar. In planning mode they are
    /// listed instead ([`Runs::planner`]).
    pub fn run(&self, bars: &[Bar]) -> Result<Vec<SimResult>> {
        let cases: Vec<(usize, usize)> = (0..self.inputs.len())
            .flat_map(|m| (0..bars.len()).map(move |b| (m, b)))
            .collect();
        self.runs.plan(|| {
            cases
                .iter()
                .map(|&(m, b)| self.planned(m, &bars[b]))
                .collect()
        })?;
        crate::par_counted(&cases, "timed runs", |&(m, b)| {
            let opts = SimOptions {
                llc_switches: bars[b].llc_switches.clone(),
                ..self.opts.clone()
            };
            let cfg = self.config_of(m, &bars[b])?;
            self.runs
                .sim(&cfg, bars[b].policy, &self.inputs[m], &opts)
                .with_context(|| format!("mix {} ({})", self.names[m], bars[b].label))
        })
    }

    /// Mix `m` under `bar`, as a sweep point.
    fn planned(&self, m: usize, bar: &Bar) -> Result<PlannedRun> {
        let cfg = self.config_of(m, bar)?;
        Ok(PlannedRun {
            preset: self.presets[m].to_string(),
            set: self.overrides.iter().chain(&bar.set).cloned().collect(),
            dram_set: cfg.timing.dram_set,
            policy: bar.policy.to_string(),
            input: PlannedInput::Mix(self.names[m].clone()),
            scale: self.scale,
            frames: self.frames,
            seed: self.seed,
            warmup: self.opts.warmup,
            instructions: self.opts.instructions,
            sample: self.opts.sample.is_some(),
            ideal: bar
                .llc_switches
                .ideal
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join(","),
            gpu_read_bypass: bar.llc_switches.gpu_read_bypass,
            ideal_critical: bar.llc_switches.ideal_critical,
        })
    }
}

/// The criticality paper's mixes (§5) of GPU workloads `numbers`: `Hn`, `Ln`, `HLn` each.
pub(crate) fn crit_mixes(numbers: impl IntoIterator<Item = u32>) -> Vec<String> {
    numbers
        .into_iter()
        .flat_map(|n| [format!("H{n}"), format!("L{n}"), format!("HL{n}")])
        .collect()
}

/// The workloads of the mixes `names` in first-appearance order, and each mix's: its 3D
/// title, or with `cuda` its CUDA kernel. A mix whose GPU job is of the other kind is refused,
/// naming figure `figure` and what to use instead (`hint`).
pub(crate) fn workloads(
    names: &[String],
    cuda: bool,
    figure: &str,
    hint: &str,
) -> Result<(Vec<String>, Vec<String>)> {
    let mut all: Vec<String> = Vec::new();
    let mut of = Vec::new();
    for m in names {
        let w = match (gpu_job(m)?, cuda) {
            (GpuJob::Render { title, .. }, false) => title.to_string(),
            (GpuJob::Gpgpu(k), true) => k.to_string(),
            (GpuJob::Gpgpu(k), false) => {
                bail!("{figure}: {m} runs the CUDA job {k}, not a 3D title ({hint})")
            }
            (GpuJob::Render { title, .. }, true) => {
                bail!("{figure}: {m} renders {title}, not a CUDA job ({hint})")
            }
        };
        if !all.contains(&w) {
            all.push(w.clone());
        }
        of.push(w);
    }
    Ok((all, of))
}

/// The runs (each mix's bars) of the mixes whose workload is `w`, given each mix's workload.
pub(crate) fn of_workload<'a, T>(
    runs: &[&'a [T]],
    workload_of: &[String],
    w: &str,
) -> Vec<&'a [T]> {
    runs.iter()
        .zip(workload_of)
        .filter(|(_, x)| *x == w)
        .map(|(r, _)| *r)
        .collect()
}

/// Runs `bars` (the baseline first) on the 3D titles' mixes `names` on preset `preset` and
/// gathers figure `figure`'s records title by title, in first-appearance order: `per_title`
/// gets a title's mixes' runs (one result per bar) and `push(label, metric, value)` for the
/// title's records. A mix of a CUDA job is refused, naming `hint`.
pub(crate) fn per_title(
    figure: &str,
    names: Vec<String>,
    hint: &str,
    preset: &'static str,
    o: &Options,
    bars: &[Bar],
    mut per_title: impl FnMut(&[&[SimResult]], &mut dyn FnMut(&str, &str, f64)) -> Result<()>,
) -> Result<Vec<Record>> {
    let (titles, title_of) = workloads(&names, false, figure, hint)?;
    let mixes = TimedMixes::new(figure, names, |_| preset, o)?;
    let results = mixes.run(bars)?;
    let runs: Vec<&[SimResult]> = results.chunks(bars.len()).collect();
    let mut records = Vec::new();
    for title in &titles {
        let mine = of_workload(&runs, &title_of, title);
        per_title(&mine, &mut |label, metric, value| {
            records.push(Record::new("4C1G", title, label, metric, value))
        })?;
    }
    Ok(records)
}

/// A timed figure's output: `records` with their geometric means per (configuration, bar,
/// metric), only the means when `averages_only`.
pub(crate) fn output(
    study: &str,
    title: String,
    paper: &str,
    records: Vec<Record>,
    averages_only: bool,
) -> StudyOutput {
    let mut records = with_means(records, Mean::Geometric);
    if averages_only {
        records.retain(|r| r.workload == "mean");
    }
    StudyOutput {
        study: study.into(),
        title,
        paper: paper.into(),
        records,
    }
}

/// The geometric mean of `v` (NaN if empty).
pub(crate) fn geomean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

/// `a / b` for speedups; NaN when either side is missing or not positive.
pub(crate) fn speedup_of(a: Option<f64>, b: Option<f64>) -> f64 {
    match (a, b) {
        (Some(a), Some(b)) if a > 0.0 && b > 0.0 => a / b,
        _ => f64::NAN,
    }
}

/// A sampled run's relative error of its cores' IPC sum (half the 99.7% interval over the
/// value): each core's interval added linearly, no independence assumed, as the weighted
/// speedup's interval is; `None` for a detailed run or a core without an interval.
pub(crate) fn ipc_sum_rel_error(r: &SimResult) -> Option<f64> {
    let e = ipc_estimates(r)?;
    let sum: f64 = e.iter().map(|e| e.value).sum();
    (sum > 0.0).then(|| e.iter().map(|e| e.half_width).sum::<f64>() / sum)
}

/// A sampled run's per-core IPC estimates, in core order; `None` for a detailed run or a core
/// without an interval.
pub(crate) fn ipc_estimates(r: &SimResult) -> Option<Vec<apusim_sim::timed::estimate::Estimate>> {
    r.sampling.as_ref()?.cores.iter().map(|c| c.ipc).collect()
}

/// A sampled run's relative error of the GPU's execution cycles and frame times (that of its
/// work rate over the windows, `GpuResult::work_rate`); `None` for a detailed run.
pub(crate) fn gpu_rel_error(r: &SimResult) -> Option<f64> {
    Some(r.gpu.as_ref()?.work_rate?.relative_error())
}

/// The relative error of `a / b` from those of `a` and `b` (linear, no independence assumed).
pub(crate) fn ratio_rel_error(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? + b?)
}

/// The GPU's cycles to run its job once (NaN-free: `None` without a timed GPU).
pub(crate) fn gpu_cycles(r: &SimResult) -> Option<f64> {
    r.gpu.as_ref().map(|g| g.cycles as f64)
}

/// A 3D job's frames per second.
pub(crate) fn fps(r: &SimResult) -> Option<f64> {
    r.gpu
        .as_ref()
        .and_then(|g| g.render.as_ref())
        .map(|x| x.fps)
}

/// A 3D title's frame-rate speedup under bar `b` over the baseline bar 0, from its mixes'
/// runs `mine`: the geometric mean over the mixes (gpu-access-criticality §5).
pub(crate) fn title_fps_speedup(mine: &[&[SimResult]], b: usize) -> f64 {
    let per_mix: Vec<f64> = mine
        .iter()
        .map(|r| speedup_of(fps(&r[b]), fps(&r[0])))
        .collect();
    geomean(&per_mix)
}

/// Options of a CI-sized timed study over `mixes`: 20 000 instructions per core.
#[cfg(test)]
pub(crate) fn small(mixes: &[&str]) -> Options {
    Options {
        mixes: Some(mixes.iter().map(|m| m.to_string()).collect()),
        instructions: Some(20_000),
        ..Options::default()
    }
}
