//! Jobs: a point with its configuration loaded, its inputs identified and its key computed;
//! and the one call that runs a job through the library entry points of `apusim run`,
//! `apusim sim`, the replays of `apusim_experiments::replay` and `apusim gpu-l1 run`'s runs
//! (`apusim_experiments::gpu_l1`).

use crate::key::{
    functional_options, gpu_l1_key, ideal_gpu_name, input_ids, replay_options, run_key,
    sample_option, timed_options, with_llc_switches,
};
use crate::metrics::{self, Metric};
use crate::spec::DEFAULT_RESOLUTION;
use crate::spec::{InputSpec, Mode, Point, SpecError};
use anyhow::{Context, Result};
use apusim_experiments::gpu_l1::{self, GpuL1Input, GpuL1Run};
use apusim_experiments::jobs::{alone_job_inputs, JobInputs, TraceDir};
use apusim_experiments::replay;
use apusim_gpu::config::GpuConfig;
use apusim_sim::inputs::TraceInputs;
use apusim_sim::timed::{
    alone_runs, sim_policy, speedup, stored, AloneOptions, SampleSpec, SimOptions,
};
use apusim_sim::{run_policy, Inputs, LlcSwitches, RunOptions, SystemConfig};
use apusim_workloads::mixes::{check_alone, Alone};
use serde_json::{json, Value};
use std::path::PathBuf;

/// A job's inputs: a generated mix (through the trace cache) or trace files of a system, or
/// a `gpu-l1` point's kernel or trace.
pub enum JobSource {
    Mix(JobInputs),
    Traces(TraceInputs),
    GpuL1(GpuL1Input),
}

impl JobSource {
    /// The inputs of a system's run; a `gpu-l1` point's input is none.
    pub fn inputs(&self) -> Result<&dyn Inputs> {
        match self {
            JobSource::Mix(m) => Ok(m),
            JobSource::Traces(t) => Ok(t),
            JobSource::GpuL1(i) => {
                anyhow::bail!("{} runs on the GPU hierarchy, not a system", i.describe())
            }
        }
    }
}

/// A job's resolved configuration: a CPU-GPU system's (`apusim run|sim|oracle`), or the GPU
/// memory side of adaptive-gpu-l1-bypassing's Table 1 (`apusim gpu-l1 run`).
#[derive(Clone, Debug)]
pub enum JobConfig {
    System(Box<SystemConfig>),
    Gpu(Box<GpuConfig>),
}

impl JobConfig {
    /// The system's configuration; a `gpu-l1` job has none.
    pub fn system(&self) -> Result<&SystemConfig> {
        match self {
            JobConfig::System(c) => Ok(c.as_ref()),
            JobConfig::Gpu(c) => anyhow::bail!("GPU configuration {} is not a system's", c.name),
        }
    }

    /// The configuration as the runs table records it.
    pub fn to_json(&self) -> Result<Value> {
        Ok(match self {
            JobConfig::System(c) => serde_json::to_value(c)?,
            JobConfig::Gpu(c) => serde_json::to_value(c)?,
        })
    }
}

/// One run of a sweep, ready to execute.
pub struct Job {
    pub point: Point,
    /// The resolved configuration (a system's LLC policy is the job's policy).
    pub cfg: JobConfig,
    /// The LLC policy (empty for a `gpu-l1` job, whose hierarchy has none to choose).
    pub policy: String,
    pub source: JobSource,
    /// What the run is, as recorded: the settings that define the point.
    pub params: Value,
    /// The identities of the inputs (see [`input_ids`]).
    pub input_ids: Vec<String>,
    /// The run options that shape its results (access limit, or warm-up and instructions,
    /// and the alone runs' policy).
    pub options: Value,
    pub key: String,
    /// A timed job of several inputs: the LLC policy of the alone runs behind its speedups.
    pub alone: Option<String>,
    /// Where alone runs are cached (the trace cache), shared by every job of the sweep.
    pub alone_cache: Option<PathBuf>,
    /// The LLC switches (`ideal`, `gpu_read_bypass`).
    pub llc_switches: LlcSwitches,
}

impl Job {
    /// The alone runs behind this job's speedups, from the cache where possible.
    pub fn alone_runs(&self) -> Result<Option<(&str, Vec<apusim_sim::timed::AloneRun>)>> {
        let Some(policy) = &self.alone else {
            return Ok(None);
        };
        let opts = AloneOptions::new(policy, self.alone_cache.clone());
        let (cfg, inputs) = (self.cfg.system()?, self.source.inputs()?);
        let runs = alone_runs(cfg, inputs, &self.sim_options(), &opts)
            .context("alone runs for weighted speedup")?;
        Ok(Some((policy, runs)))
    }

    /// A replay job's LLC stream: its trace file, or its workload's stream made in the trace
    /// cache (or, without one, in a temporary directory that lives as long as the returned
    /// guard) unless already there.
    pub fn llc_stream(&self) -> Result<(PathBuf, Option<TraceDir>)> {
        match &self.source {
            JobSource::Traces(_) => match &self.point.inputs {
                InputSpec::Traces(t) if t.len() == 1 => Ok((PathBuf::from(&t[0]), None)),
                _ => anyhow::bail!("a replay point replays one LLC stream file"),
            },
            JobSource::Mix(inputs) => {
                let dir = TraceDir::new(self.alone_cache.as_deref())?;
                let path = replay::llc_stream(dir.path(), inputs, self.cfg.system()?)?;
                Ok((path, Some(dir)))
            }
            JobSource::GpuL1(_) => anyhow::bail!("a gpu-l1 point replays no LLC stream"),
        }
    }

    fn sim_options(&self) -> SimOptions {
        SimOptions {
            warmup: self.point.warmup,
            instructions: self.point.instructions,
            llc_switches: self.llc_switches.clone(),
            sample: self.point.sample.then(SampleSpec::default),
            ..SimOptions::default()
        }
    }
}

/// Where mixes' traces are cached while a sweep resolves its points.
#[derive(Clone, Debug, Default)]
pub struct ResolveOptions {
    /// The trace cache of `--mix` jobs; `None` generates every job's trace on the fly.
    pub cache_dir: Option<PathBuf>,
}

/// Load a point's configuration, check its policy and inputs, and compute its key. Errors
/// name the spec file and the line of the setting at fault.
pub fn resolve(point: &Point, file: &std::path::Path, opts: &ResolveOptions) -> Result<Job> {
    if point.mode == Mode::GpuL1 {
        return resolve_gpu_l1(point, file);
    }
    let err = |name: &str, message: String| -> anyhow::Error {
        SpecError {
            file: file.to_path_buf(),
            line: point.line_of(name),
            message,
        }
        .into()
    };
    let mut overrides = point.overrides();
    if let Some(s) = point.seed {
        overrides.push(format!("seed={s}"));
    }
    // As `apusim run|sim --mix` loads it: as many CPU cores as the mix has CPU jobs unless
    // `set.cpus` says otherwise, so a point and that command are the same run (same key).
    // A GPU workload alone runs without CPU cores, a CPU kernel alone on one, as `apusim
    // sim --kernel|--scene|--cpu` loads them.
    let (mix, alone) = match &point.inputs {
        InputSpec::Mix { name, .. } => (Some(name.as_str()), None),
        InputSpec::Traces(_) => (None, None),
        InputSpec::Kernel { name, .. } => (None, Some(Alone::Kernel(name))),
        InputSpec::Scene { name, .. } => (None, Some(Alone::Scene(name))),
        InputSpec::Cpu { name, .. } => (None, Some(Alone::Cpu(name))),
    };
    let loaded = apusim_experiments::jobs::load_system(
        &point.preset,
        point.config.as_deref(),
        &overrides,
        None,
        mix,
        alone,
    );
    let mut cfg = match loaded {
        Ok(c) => c,
        Err(e) => return Err(config_error(point, file, e)),
    };
    let policy = point
        .policy
        .clone()
        .unwrap_or_else(|| cfg.llc.policy.clone());
    if let Some(e) = unknown_policy(&policy, "") {
        return Err(err("policy", e));
    }
    cfg.llc.policy = policy.clone();
    // A point runs one policy: every `llc.params` key must be one it declares, in range.
    let rules = cfg.llc.gpu_write_rules;
    if let Err(e) = apusim_cache::policies::check_params(&[&policy], &cfg.llc.params, rules) {
        let message = e.to_string();
        let culprit = point.set.iter().map(|(k, _)| k).find(|k| {
            k.strip_prefix("llc.params.")
                .is_some_and(|key| message.contains(&format!("`{key}`")))
        });
        return Err(SpecError {
            file: file.to_path_buf(),
            line: culprit.map_or(point.line, |k| point.line_of(&format!("set.{k}"))),
            message,
        }
        .into());
    }
    // A workload's stream is made behind the upper caches, which must not depend on the LLC;
    // a recorded stream is replayed as it is.
    let made_stream = !matches!(point.inputs, InputSpec::Traces(_));
    if point.mode == Mode::Replay && made_stream {
        if let Err(e) = replay::check_replayable(&cfg) {
            let line = point.lines.get("set.cpus").copied().unwrap_or(point.line);
            return Err(SpecError {
                file: file.to_path_buf(),
                line,
                message: e.to_string(),
            }
            .into());
        }
    }
    let timed = point.mode == Mode::Timed;
    let mut params = serde_json::Map::new();
    params.insert("mode".into(), json!(point.mode.name()));
    match &point.config {
        Some(c) => params.insert("config".into(), json!(c.display().to_string())),
        None => params.insert("preset".into(), json!(point.preset)),
    };
    params.insert("policy".into(), json!(policy));
    let cache = || opts.cache_dir.clone();
    let source = match &point.inputs {
        InputSpec::Mix {
            name,
            scale,
            frames,
        } => {
            let Some(mix) = apusim_workloads::mixes::mix(name) else {
                let names = apusim_workloads::mixes::MIXES
                    .iter()
                    .map(|m| m.name.as_str());
                let near = apusim_registry::nearest(name, names)
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                return Err(err(
                    "mix",
                    format!("unknown mix `{name}` (see `apusim mixes`){near}"),
                ));
            };
            params.insert("mix".into(), json!(mix.name));
            params.insert("scale".into(), json!(scale));
            if let Some(f) = frames.label() {
                params.insert("frames".into(), json!(f));
            }
            // A functional point's `instructions` is its CPU jobs' length (drp §3's method,
            // as `apusim run --mix --instructions`); a timed point's is each core's target.
            let length = match point.mode {
                Mode::Functional => point.instructions,
                Mode::Timed | Mode::Replay | Mode::GpuL1 => None,
            };
            JobSource::Mix(
                JobInputs::mix_at(
                    &mix.name,
                    *scale,
                    length,
                    *frames,
                    cfg.seed,
                    opts.cache_dir.clone(),
                )
                .map_err(|e| err("mix", format!("{e:#}")))?,
            )
        }
        InputSpec::Kernel { name, scale } => {
            params.insert("kernel".into(), json!(name));
            params.insert("scale".into(), json!(scale));
            let which = Alone::Kernel(name);
            check_alone(which, DEFAULT_RESOLUTION, *scale, cfg.seed)
                .map_err(|e| err("kernel", e.to_string()))?;
            JobSource::Mix(
                alone_job_inputs(which, DEFAULT_RESOLUTION, *scale, None, cfg.seed, cache())
                    .map_err(|e| err("kernel", format!("{e:#}")))?,
            )
        }
        InputSpec::Cpu { name, scale } => {
            params.insert("cpu".into(), json!(name));
            params.insert("scale".into(), json!(scale));
            // The job's length: what the run retires, as `apusim run|sim --cpu` makes it.
            let length = match point.mode {
                Mode::Functional | Mode::Replay | Mode::GpuL1 => point.instructions,
                Mode::Timed => point.instructions.map(|n| point.warmup.saturating_add(n)),
            };
            let which = Alone::Cpu(name);
            check_alone(which, DEFAULT_RESOLUTION, *scale, cfg.seed)
                .map_err(|e| err("cpu", e.to_string()))?;
            JobSource::Mix(
                alone_job_inputs(which, DEFAULT_RESOLUTION, *scale, length, cfg.seed, cache())
                    .map_err(|e| err("cpu", format!("{e:#}")))?,
            )
        }
        InputSpec::Scene {
            name,
            frames,
            width,
            height,
        } => {
            params.insert("scene".into(), json!(name));
            params.insert("resolution".into(), json!(format!("{width}x{height}")));
            params.insert("scale".into(), json!(frames));
            let which = Alone::Scene(name);
            check_alone(which, (*width, *height), *frames, cfg.seed)
                .map_err(|e| err("scene", e.to_string()))?;
            JobSource::Mix(
                alone_job_inputs(which, (*width, *height), *frames, None, cfg.seed, cache())
                    .map_err(|e| err("scene", format!("{e:#}")))?,
            )
        }
        InputSpec::Traces(t) => {
            params.insert("traces".into(), json!(t.join(" ")));
            JobSource::Traces(
                TraceInputs::parse(t)
                    .map_err(|e| err("traces", format!("{e:#}")))?
                    .native_champsim(timed),
            )
        }
    };
    let mut options = match point.mode {
        Mode::Functional => functional_options(point.limit, point.instructions.is_some()),
        Mode::Timed => timed_options(point.warmup, point.instructions),
        Mode::Replay | Mode::GpuL1 => replay_options(point.consumption),
    };
    let llc_switches = LlcSwitches {
        ideal: match &point.ideal {
            Some(list) => {
                LlcSwitches::parse_ideal(list).map_err(|e| err("ideal", format!("{e:#}")))?
            }
            None => Vec::new(),
        },
        gpu_read_bypass: point.gpu_read_bypass.unwrap_or(0.0),
        ideal_critical: match point.ideal_gpu.as_deref() {
            None => None,
            Some(w) => Some(
                [true, false]
                    .into_iter()
                    .find(|&c| ideal_gpu_name(c) == w)
                    .ok_or_else(|| {
                        err(
                            "ideal_gpu",
                            format!("`ideal_gpu` is `critical` or `non-critical`, not `{w}`"),
                        )
                    })?,
            ),
        },
        ..LlcSwitches::default()
    };
    with_llc_switches(&mut options, &llc_switches);
    if point.sample {
        options["sample"] = sample_option(&SampleSpec::default());
    }
    if let Value::Object(o) = &options {
        for (k, v) in o {
            if !v.is_null() {
                params.insert(k.clone(), v.clone());
            }
        }
    }
    params.insert("seed".into(), json!(cfg.seed));
    for (k, v) in &point.set {
        params.insert(format!("set.{k}"), json!(plain(v)));
    }
    let input_ids = input_ids(source.inputs()?);
    // Jobs that share the machine are compared with each running alone, as `apusim sim`
    // does; the policy of those runs is part of the key, as `apusim sim --db` records it.
    let several = match &source {
        JobSource::Mix(m) => m.jobs().len() > 1,
        JobSource::Traces(_) | JobSource::GpuL1(_) => input_ids.len() > 1,
    };
    let alone = (timed && point.alone && several)
        .then(|| point.alone_policy.clone().unwrap_or_else(|| "lru".into()));
    if let Some(p) = &alone {
        if let Some(e) = unknown_policy(p, " for the alone runs") {
            return Err(err("alone_policy", e));
        }
        options["alone_policy"] = json!(p);
        params.insert("alone_policy".into(), json!(p));
    }
    let key = run_key(point.mode, &cfg, &policy, &options, &input_ids)?;
    Ok(Job {
        point: point.clone(),
        cfg: JobConfig::System(Box::new(cfg)),
        policy,
        source,
        params: Value::Object(params),
        input_ids,
        options,
        key,
        alone,
        alone_cache: opts.cache_dir.clone(),
        llc_switches,
    })
}

/// Resolve a `gpu-l1` point: its GPU configuration (a preset of `apusim gpu-l1 presets`, or a
/// TOML file) with the overrides, and its kernel (size and seed checked by the kernel's
/// registry entry) or trace file.
fn resolve_gpu_l1(point: &Point, file: &std::path::Path) -> Result<Job> {
    let spec_error = |line: usize, message: String| -> anyhow::Error {
        SpecError {
            file: file.to_path_buf(),
            line,
            message,
        }
        .into()
    };
    let preset = match &point.config {
        Some(c) => c.display().to_string(),
        None => point.preset.clone(),
    };
    let cfg = GpuConfig::load(&preset, &point.overrides()).map_err(|e| {
        let text = format!("{e:#}");
        let known = GpuConfig::load(&preset, &[])
            .ok()
            .and_then(|c| serde_json::to_value(c).ok())
            .map(|v| dotted_keys(&v))
            .unwrap_or_default();
        let (line, hint) = match culprit(point, &text, &known) {
            Some(k) => (point.line_of(&format!("set.{k}")), nearest_hint(&known, k)),
            None if known.is_empty() => (
                point.line_of(if point.config.is_some() {
                    "config"
                } else {
                    "preset"
                }),
                String::new(),
            ),
            None => (point.line, String::new()),
        };
        spec_error(line, format!("{text}{hint}"))
    })?;
    let seed = point
        .seed
        .unwrap_or(apusim_experiments::studies::DEFAULT_SEED);
    let mut params = serde_json::Map::new();
    params.insert("mode".into(), json!(point.mode.name()));
    match &point.config {
        Some(c) => params.insert("config".into(), json!(c.display().to_string())),
        None => params.insert("preset".into(), json!(point.preset)),
    };
    let input = match &point.inputs {
        InputSpec::Kernel { name, .. } => {
            params.insert("kernel".into(), json!(name));
            if let Some(size) = point.size {
                params.insert("size".into(), json!(size));
            }
            params.insert("seed".into(), json!(seed));
            GpuL1Input::kernel(name, point.size, seed)
                .map_err(|e| spec_error(point.line_of("kernel"), format!("{e:#}")))?
        }
        InputSpec::Traces(t) => {
            params.insert("traces".into(), json!(t.join(" ")));
            GpuL1Input::Trace(PathBuf::from(&t[0]))
        }
        _ => {
            return Err(spec_error(
                point.line,
                "a gpu-l1 point runs a `kernel` or one `traces` file".into(),
            ))
        }
    };
    for (k, v) in &point.set {
        params.insert(format!("set.{k}"), json!(plain(v)));
    }
    let input_ids = input
        .identity(&cfg)
        .map_err(|e| spec_error(point.line_of("traces"), format!("{e:#}")))?;
    let key = gpu_l1_key(&cfg, &input_ids)?;
    Ok(Job {
        point: point.clone(),
        cfg: JobConfig::Gpu(Box::new(cfg)),
        policy: String::new(),
        source: JobSource::GpuL1(input),
        params: Value::Object(params),
        input_ids,
        options: json!({}),
        key,
        alone: None,
        alone_cache: None,
        llc_switches: LlcSwitches::default(),
    })
}

/// The error for `name` when it is no registered LLC policy (`what` says what it is for),
/// with the nearest registered name.
fn unknown_policy(name: &str, what: &str) -> Option<String> {
    let registry = &*apusim_cache::policies::REGISTRY;
    if registry.iter().any(|p| p.name == name) {
        return None;
    }
    let near = apusim_registry::nearest(name, registry.iter().map(|p| p.name))
        .map(|n| format!("; did you mean `{n}`?"))
        .unwrap_or_default();
    Some(format!(
        "unknown LLC policy `{name}`{what} (see `apusim policies`){near}"
    ))
}

/// A TOML value as a user would type it after `--set KEY=` (strings unquoted).
fn plain(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A configuration error of a point, at the line of the override at fault when one is named
/// (an unknown key gets the nearest key of the configuration), else at the point's line.
fn config_error(point: &Point, file: &std::path::Path, e: anyhow::Error) -> anyhow::Error {
    let text = format!("{e:#}");
    let base = match &point.config {
        Some(p) => SystemConfig::load_file(p, &[]),
        None => SystemConfig::load_preset(&point.preset, &[]),
    };
    let Ok(base) = base else {
        let line = point.line_of(if point.config.is_some() {
            "config"
        } else {
            "preset"
        });
        return SpecError {
            file: file.to_path_buf(),
            line,
            message: text,
        }
        .into();
    };
    let known = config_keys(&base);
    let (line, hint) = match culprit(point, &text, &known) {
        Some(k) => (point.line_of(&format!("set.{k}")), nearest_hint(&known, k)),
        None => (point.line, String::new()),
    };
    SpecError {
        file: file.to_path_buf(),
        line,
        message: format!("{text}{hint}"),
    }
    .into()
}

/// The override of `point` at fault in configuration error `text`: one the error names, else
/// one that names no key of `known`.
fn culprit<'a>(point: &'a Point, text: &str, known: &[String]) -> Option<&'a String> {
    let keys = || point.set.iter().map(|(k, _)| k);
    keys()
        .find(|k| text.contains(&format!("--set {k}=")) && !text.contains("(after --set"))
        .or_else(|| {
            keys().find(|k| {
                let last = k.rsplit('.').next().unwrap_or(k);
                text.contains(&format!("`{last}`"))
                    || text.contains(&format!("unknown field `{last}`"))
            })
        })
        .or_else(|| keys().find(|k| !known_key(known, k)))
}

/// "; did you mean `K`?" for an override key that names no key of `known`.
fn nearest_hint(known: &[String], key: &str) -> String {
    if known_key(known, key) {
        return String::new();
    }
    apusim_registry::nearest(key, known.iter().map(String::as_str))
        .map(|n| format!("; did you mean `{n}`?"))
        .unwrap_or_default()
}

/// Whether `key` names a key of the configuration, a table of it, or a key under a table
/// whose keys are free (LLC policy parameters, timing model parameters).
fn known_key(known: &[String], key: &str) -> bool {
    known
        .iter()
        .any(|k| k == key || k.starts_with(&format!("{key}.")))
        || key.starts_with("llc.params.")
        || key.starts_with("timing.")
}

/// Every dotted key of a configuration, with the geometry shorthands of `--set`.
pub fn config_keys(cfg: &SystemConfig) -> Vec<String> {
    let mut out: Vec<String> = ["l1i", "l1d", "l2", "llc"].map(String::from).to_vec();
    if let Ok(v) = serde_json::to_value(cfg) {
        out.extend(dotted_keys(&v));
    }
    out
}

/// Every dotted key of a configuration as JSON, tables included.
fn dotted_keys(v: &Value) -> Vec<String> {
    fn walk(prefix: &str, v: &Value, out: &mut Vec<String>) {
        if let Value::Object(m) = v {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                walk(&key, v, out);
                out.push(key);
            }
        }
    }
    let mut out = Vec::new();
    walk("", v, &mut out);
    out
}

/// What a finished job leaves: its metric rows and its whole result as `(format, bytes)`
/// ([`stored`] for a timed run, `apusim_sim::stored` for a functional one,
/// [`replay::FORMAT`] for a replay, [`gpu_l1::FORMAT`] for a `gpu-l1` run).
pub type Outcome = (Vec<Metric>, Option<(&'static str, Vec<u8>)>);

/// Run a job and return its metric rows and stored result.
pub fn execute(job: &Job) -> Result<Outcome> {
    if let (JobConfig::Gpu(cfg), JobSource::GpuL1(input)) = (&job.cfg, &job.source) {
        let r = gpu_l1::run(&GpuL1Run { cfg, input })?;
        return Ok((
            metrics::gpu_l1(&r),
            Some((gpu_l1::FORMAT, gpu_l1::encode(&r)?)),
        ));
    }
    let (cfg, inputs) = (job.cfg.system()?, job.source.inputs()?);
    match job.point.mode {
        Mode::GpuL1 => anyhow::bail!("a gpu-l1 job without its GPU configuration"),
        Mode::Functional => {
            let opts = RunOptions {
                progress: false,
                limit: job.point.limit,
                // drp §3's method, as `apusim run --mix --instructions` runs it.
                continue_to_run: job.point.instructions.is_some(),
                llc_switches: job.llc_switches.clone(),
            };
            let r = run_policy(cfg, &job.policy, inputs, &opts)?;
            let whole = apusim_sim::stored::encode(&r)?;
            Ok((
                metrics::functional(&r),
                Some((apusim_sim::stored::FORMAT, whole)),
            ))
        }
        Mode::Replay => {
            let (stream, _dir) = job.llc_stream()?;
            let r = replay::replay(&stream, cfg, &job.policy, job.point.consumption)?;
            Ok((
                metrics::replay(&r),
                Some((replay::FORMAT, replay::encode(&r)?)),
            ))
        }
        Mode::Timed => {
            let mut r = sim_policy(cfg, &job.policy, inputs, &job.sim_options())?;
            if let Some((policy, runs)) = job.alone_runs()? {
                r.speedup = Some(speedup(&r, &runs, policy)?);
            }
            Ok((
                metrics::timed(&r),
                Some((stored::FORMAT, stored::encode(&r)?)),
            ))
        }
    }
}
