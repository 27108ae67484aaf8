//! `run` (functional) and `sim` (timed): the options of `apusim run` and `apusim sim`, read
//! as the command line reads them, and each policy's results as long-format metric rows.

use crate::py_err;
use anyhow::{bail, Context, Result};
use apusim_sim::run::in_pool;
use apusim_sim::timed::{
    alone_runs, sim_policies, target_error, AloneOptions, SampleSpec, SimOptions,
};
use apusim_sim::{run_policies, Inputs, LlcSwitches, RunOptions, RunResult, SystemConfig};
use apusim_sweep::{Metric, Store};
use apusim_workloads::mixes::{check_alone, Alone, Frames};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};
use std::path::PathBuf;

/// The system of a run: a preset or a TOML file, `set` overrides and the seed.
pub(crate) struct System {
    pub preset: Option<String>,
    pub config: Option<PathBuf>,
    pub set: Vec<String>,
    pub seed: Option<u64>,
}

impl System {
    pub(crate) fn new(
        preset: Option<String>,
        config: Option<PathBuf>,
        set: Vec<String>,
        seed: Option<u64>,
    ) -> Self {
        System {
            preset,
            config,
            set,
            seed,
        }
    }

    /// The system for a run of `w` ([`System::load_for`]) and the LLC policies the run
    /// compares: `policy` ([`policy_list`]) or the configured one; oracles refused.
    fn policies_for(
        &self,
        w: &Workload,
        policy: Option<&[String]>,
    ) -> Result<(SystemConfig, Vec<String>)> {
        let cfg = self.load_for(w)?;
        let names = policy_list(policy, &cfg);
        refuse_oracles(&names)?;
        Ok((cfg, names))
    }

    /// The system for a run of `w` (`apusim_experiments::jobs::load_system`, as the command
    /// line loads it): as many CPU cores as a mix has CPU jobs, none for a scene or GPGPU
    /// kernel alone, one for a CPU kernel alone, unless `set` gives `cpus`.
    fn load_for(&self, w: &Workload) -> Result<SystemConfig> {
        if self.config.is_some() && self.preset.is_some() {
            bail!("give a preset or a config file, not both");
        }
        apusim_experiments::jobs::load_system(
            self.preset.as_deref().unwrap_or("4c1g"),
            self.config.as_deref(),
            &self.set,
            self.seed,
            w.mix.as_deref(),
            w.alone(),
        )
    }
}

/// What runs: trace files, a named mix, a built-in scene's frames, a GPGPU kernel or a CPU
/// kernel alone.
pub(crate) struct Workload {
    pub traces: Vec<String>,
    pub mix: Option<String>,
    pub scene: Option<String>,
    pub kernel: Option<String>,
    pub cpu: Option<String>,
    pub resolution: (u32, u32),
    pub scale: u64,
    /// A mix's rendering job's or a scene's frames (`apusim run|sim --frames`).
    pub frames: Frames,
    /// The trace cache; `None` generates mixes and scenes afresh.
    pub cache: Option<PathBuf>,
}

impl Workload {
    #[allow(clippy::too_many_arguments)]
    fn new(
        traces: Vec<String>,
        [mix, scene, kernel, cpu]: [Option<String>; 4],
        resolution: &str,
        (scale, frames): (u64, Frames),
        cache_dir: Option<PathBuf>,
        no_cache: bool,
    ) -> Result<Workload> {
        let given: Vec<&str> = [
            ("trace files", !traces.is_empty()),
            ("mix", mix.is_some()),
            ("scene", scene.is_some()),
            ("kernel", kernel.is_some()),
            ("cpu", cpu.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, on)| on.then_some(name))
        .collect();
        match given.as_slice() {
            [] => bail!("give trace files, a mix, a scene, a kernel or a cpu kernel to run"),
            [_] => {}
            _ => bail!("{} cannot run together: give one", given.join(", ")),
        }
        // The registries' declarations: the size multiplier's range here, a mix's and a
        // scene's names and parameters when the inputs open.
        apusim_workloads::SCALE.check_value(&apusim_registry::Value::Int(scale))?;
        if no_cache && cache_dir.is_some() {
            bail!("no_cache and cache_dir cannot be given together");
        }
        let cache = if no_cache {
            None
        } else {
            cache_dir.or_else(apusim_experiments::jobs::default_cache_dir)
        };
        Ok(Workload {
            traces,
            mix,
            scene,
            kernel,
            cpu,
            resolution: apusim_render::builtin::parse_resolution(resolution)?,
            scale,
            frames,
            cache,
        })
    }

    /// The workload run alone, if one is.
    fn alone(&self) -> Option<Alone<'_>> {
        Alone::named(
            self.scene.as_deref(),
            self.kernel.as_deref(),
            self.cpu.as_deref(),
        )
    }

    /// The inputs of a run, as `apusim run` and `apusim sim` open them; a mix's CPU jobs, or
    /// a CPU kernel alone, of `instructions` each when set (`apusim run --mix|--cpu
    /// --instructions`).
    fn inputs(&self, seed: u64, instructions: Option<u64>, timed: bool) -> Result<Box<dyn Inputs>> {
        if let Some(a) = self.alone() {
            check_alone(a, self.resolution, self.scale, seed)?;
        }
        apusim_experiments::jobs::run_inputs(
            &self.traces,
            self.mix.as_deref(),
            self.alone(),
            self.resolution,
            self.scale,
            instructions,
            self.frames,
            seed,
            self.cache.clone(),
            timed,
        )
    }
}

/// A policy list with `all` and `baselines` expanded, or the configured policy.
fn policy_list(given: Option<&[String]>, cfg: &SystemConfig) -> Vec<String> {
    match given.filter(|l| !l.is_empty()) {
        Some(list) => apusim_cache::policies::expand_names(list),
        None => vec![cfg.llc.policy.clone()],
    }
}

/// Oracle replays (`opt`, `POLICY-bypass`) run offline on an LLC stream, not as a run.
fn refuse_oracles(names: &[String]) -> Result<()> {
    if let Some(n) = names.iter().find(|n| *n == "opt" || n.ends_with("-bypass")) {
        bail!(
            "policy `{n}` is an oracle replay; apusim.run runs LLC policies only (replay \
             oracles with `apusim run` or `apusim oracle` on the command line)"
        );
    }
    Ok(())
}

/// The LLC switches (`--ideal`, `--ideal-gpu`, `--gpu-read-bypass`).
fn llc_switches(
    ideal: Option<&str>,
    ideal_gpu: Option<&str>,
    gpu_read_bypass: f64,
) -> Result<LlcSwitches> {
    let ideal_critical = match ideal_gpu {
        None => None,
        Some("critical") => Some(true),
        Some("non-critical") => Some(false),
        Some(other) => bail!(
            "invalid value '{other}' for '--ideal-gpu <WHICH>' (possible values: critical, \
             non-critical)"
        ),
    };
    let o = LlcSwitches {
        ideal: match ideal {
            Some(s) => LlcSwitches::parse_ideal(s)?,
            None => Vec::new(),
        },
        ideal_critical,
        gpu_read_bypass,
        dump_llc_trace: None,
        dump_llc_name: None,
    };
    o.validate()?;
    Ok(o)
}

/// Long-format rows of several runs, one `policy` per run, as Python columns.
fn metric_columns<'py>(
    py: Python<'py>,
    runs: &[(String, Vec<Metric>)],
) -> PyResult<Bound<'py, PyDict>> {
    let n: usize = runs.iter().map(|(_, m)| m.len()).sum();
    let mut policy = Vec::with_capacity(n);
    let (mut agent, mut level, mut stream, mut metric, mut value) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for (p, rows) in runs {
        for m in rows {
            policy.push(p.as_str());
            agent.push(m.agent.as_str());
            level.push(m.level.as_str());
            stream.push(m.stream.as_str());
            metric.push(m.metric.as_str());
            value.push(m.value);
        }
    }
    let d = PyDict::new(py);
    d.set_item("policy", policy)?;
    d.set_item("agent", agent)?;
    d.set_item("level", level)?;
    d.set_item("stream", stream)?;
    d.set_item("metric", metric)?;
    d.set_item("value", value)?;
    Ok(d)
}

/// A `frames` keyword (`apusim run|sim --frames`): a number of frames or `"paper"`; `None`
/// is `scale` frames.
pub(crate) fn frames_arg(v: Option<&Bound<'_, PyAny>>) -> Result<Frames> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(Frames::Scale);
    };
    if !v.is_instance_of::<PyBool>() {
        if let Ok(n) = v.extract::<i64>() {
            return Ok(Frames::signed_count(n)?);
        }
        if let Ok(s) = v.extract::<String>() {
            return Ok(Frames::parse(&s)?);
        }
    }
    bail!("frames takes a number of frames or \"paper\"")
}

/// Open the results database before a run, so one that cannot be written is refused before
/// anything runs.
fn open_db(db: Option<&PathBuf>) -> Result<Option<Store>> {
    db.map(|p| Store::open(p)).transpose()
}

/// A functional run (`apusim run`): every policy over the inputs, as long-format columns
/// `policy, agent, level, stream, metric, value` (the rows `apusim run --db` records).
#[pyfunction]
#[pyo3(signature = (
    traces = Vec::new(), *, mix = None, scene = None, kernel = None, cpu = None,
    resolution = "1280x1024".to_string(), scale = 1, frames = None, preset = None, config = None,
    set = Vec::new(), seed = None, policy = None, limit = None, instructions = None, threads = None, cache_dir = None, no_cache = false,
    ideal = None, ideal_gpu = None, gpu_read_bypass = 0.0, dump_llc_trace = None, db = None
))]
#[allow(clippy::too_many_arguments)]
pub fn run<'py>(
    py: Python<'py>,
    traces: Vec<String>,
    mix: Option<String>,
    scene: Option<String>,
    kernel: Option<String>,
    cpu: Option<String>,
    resolution: String,
    scale: u64,
    frames: Option<Bound<'py, PyAny>>,
    preset: Option<String>,
    config: Option<PathBuf>,
    set: Vec<String>,
    seed: Option<u64>,
    policy: Option<Vec<String>>,
    limit: Option<u64>,
    instructions: Option<u64>,
    threads: Option<usize>,
    cache_dir: Option<PathBuf>,
    no_cache: bool,
    ideal: Option<String>,
    ideal_gpu: Option<String>,
    gpu_read_bypass: f64,
    dump_llc_trace: Option<PathBuf>,
    db: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let frames = frames_arg(frames.as_ref()).map_err(py_err)?;
    let results = py
        .detach(|| -> Result<Vec<(String, Vec<Metric>)>> {
            let system = System::new(preset, config, set, seed);
            let w = Workload::new(
                traces,
                [mix, scene, kernel, cpu],
                &resolution,
                (scale, frames),
                cache_dir,
                no_cache,
            )?;
            let (cfg, names) = system.policies_for(&w, policy.as_deref())?;
            if limit == Some(0) {
                bail!("limit must be at least 1");
            }
            // drp §3's method, as `apusim run --mix --instructions` runs it; the mix's CPU
            // workloads check the length itself (`mixes::jobs_at`).
            if instructions.is_some() && w.mix.is_none() && w.cpu.is_none() {
                bail!("instructions is the length of a mix's or a cpu kernel's CPU jobs; give mix or cpu");
            }
            let inputs = w.inputs(cfg.seed, instructions, false)?;
            let inputs = &*inputs;
            let opts = RunOptions {
                progress: false,
                limit,
                continue_to_run: instructions.is_some(),
                llc_switches: LlcSwitches {
                    dump_llc_trace,
                    ..llc_switches(ideal.as_deref(), ideal_gpu.as_deref(), gpu_read_bypass)?
                },
            };
            let mut store = open_db(db.as_ref())?;
            let results: Vec<RunResult> =
                in_pool(threads, || run_policies(&cfg, &names, inputs, &opts))?;
            if let Some(store) = store.as_mut() {
                apusim_sweep::record_functional(
                    store,
                    &cfg,
                    inputs,
                    &opts,
                    &results,
                    std::time::SystemTime::now(),
                )?;
            }
            Ok(results
                .iter()
                .map(|r| (r.policy.clone(), apusim_sweep::metrics::functional(r)))
                .collect())
        })
        .map_err(py_err)?;
    metric_columns(py, &results)
}

/// A timed run (`apusim sim`): every policy over the inputs with the cores, caches, network
/// and DRAM on one clock, weighted speedup against alone runs when several jobs share the
/// machine, as long-format columns `policy, agent, level, stream, metric, value` (the rows
/// `apusim sim --db` records).
#[pyfunction]
#[pyo3(signature = (
    traces = Vec::new(), *, mix = None, scene = None, kernel = None, cpu = None,
    resolution = "1280x1024".to_string(), scale = 1, frames = None, preset = None, config = None,
    set = Vec::new(), seed = None, policy = None, warmup = 0, instructions = None, threads = None, alone_policy = "lru".to_string(),
    no_alone = false, sample = false, sample_period = None, sample_warmup = None,
    sample_unit = None, target_error = None, cache_dir = None, no_cache = false, ideal = None,
    ideal_gpu = None, gpu_read_bypass = 0.0, db = None
))]
#[allow(clippy::too_many_arguments)]
pub fn sim<'py>(
    py: Python<'py>,
    traces: Vec<String>,
    mix: Option<String>,
    scene: Option<String>,
    kernel: Option<String>,
    cpu: Option<String>,
    resolution: String,
    scale: u64,
    frames: Option<Bound<'py, PyAny>>,
    preset: Option<String>,
    config: Option<PathBuf>,
    set: Vec<String>,
    seed: Option<u64>,
    policy: Option<Vec<String>>,
    warmup: u64,
    instructions: Option<u64>,
    threads: Option<usize>,
    alone_policy: String,
    no_alone: bool,
    sample: bool,
    sample_period: Option<u64>,
    sample_warmup: Option<u64>,
    sample_unit: Option<u64>,
    target_error: Option<String>,
    cache_dir: Option<PathBuf>,
    no_cache: bool,
    ideal: Option<String>,
    ideal_gpu: Option<String>,
    gpu_read_bypass: f64,
    db: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let frames = frames_arg(frames.as_ref()).map_err(py_err)?;
    let results = py
        .detach(|| -> Result<Vec<(String, Vec<Metric>)>> {
            let system = System::new(preset, config, set, seed);
            let w = Workload::new(
                traces,
                [mix, scene, kernel, cpu],
                &resolution,
                (scale, frames),
                cache_dir,
                no_cache,
            )?;
            let (cfg, names) = system.policies_for(&w, policy.as_deref())?;
            if instructions == Some(0) {
                bail!("instructions must be at least 1");
            }
            let sampling_given =
                sample_period.is_some() || sample_warmup.is_some() || sample_unit.is_some();
            if !sample && (sampling_given || target_error.is_some()) {
                bail!(
                    "sample_period, sample_warmup, sample_unit and target_error need sample=True"
                );
            }
            let defaults = SampleSpec::default();
            let sample = sample
                .then_some(SampleSpec {
                    period: sample_period.unwrap_or(defaults.period),
                    warmup: sample_warmup,
                    unit: sample_unit.unwrap_or(defaults.unit),
                })
                .map(|s| s.check().map(|_| s))
                .transpose()
                .map_err(anyhow::Error::msg)?;
            let target = target_error
                .as_deref()
                .map(target_error::parse_target)
                .transpose()
                .map_err(anyhow::Error::msg)?;
            // A CPU kernel alone is generated to the run's length, as `apusim sim --cpu`.
            let cpu_length = w
                .cpu
                .as_ref()
                .and(instructions)
                .map(|n| warmup.saturating_add(n));
            let inputs = w.inputs(cfg.seed, cpu_length, true)?;
            let inputs = &*inputs;
            let sim_opts = SimOptions {
                warmup,
                instructions,
                progress: false,
                interval: None,
                sample,
                llc_switches: llc_switches(
                    ideal.as_deref(),
                    ideal_gpu.as_deref(),
                    gpu_read_bypass,
                )?,
            };
            let mut store = open_db(db.as_ref())?;
            // Jobs that share the machine are compared with each running alone.
            let alone = if inputs.open()?.len() > 1 && !no_alone {
                let opts = AloneOptions::new(&alone_policy, w.cache.clone());
                let runs = in_pool(threads, || alone_runs(&cfg, inputs, &sim_opts, &opts))
                    .context("alone runs for weighted speedup")?;
                Some((opts.policy, runs))
            } else {
                None
            };
            let results = in_pool(threads, || {
                sim_policies(
                    &cfg,
                    &names,
                    inputs,
                    &sim_opts,
                    target,
                    alone.as_ref().map(|(p, r)| (p.as_str(), r.as_slice())),
                )
            })?;
            if let Some(store) = store.as_mut() {
                let mut extra = Vec::new();
                if let Some((policy, _)) = &alone {
                    extra.push(("alone_policy", serde_json::json!(policy)));
                }
                if let Some(s) = &sample {
                    extra.push(("sample", serde_json::json!([s.period, s.warmup, s.unit])));
                }
                if let Some(e) = target {
                    extra.push(("target_error", serde_json::json!(e)));
                }
                apusim_sweep::record_timed(
                    store,
                    &cfg,
                    inputs,
                    sim_opts.warmup,
                    sim_opts.instructions,
                    &sim_opts.llc_switches,
                    &extra,
                    &results,
                    std::time::SystemTime::now(),
                )?;
            }
            Ok(results
                .iter()
                .map(|r| (r.policy.clone(), apusim_sweep::metrics::timed(r)))
                .collect())
        })
        .map_err(py_err)?;
    metric_columns(py, &results)
}
