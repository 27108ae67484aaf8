//! A study's runs kept in the results database: the [`RunStore`] behind
//! `apusim study NAME --db FILE`.
//!
//! A run is looked up under the key a sweep, `apusim run|sim --db` and this store all compute
//! for it ([`run_key`] of its mode, configuration, policy, inputs and the options that
//! shape its result: a timed run's warm-up, instructions and sampling, a functional run's
//! access limit and drp §3 continuation, and the LLC switches of either). It is read
//! back when the database holds it as `ok` with a whole result this build can decode
//! (`apusim_sim::timed::stored` or `apusim_sim::stored`); otherwise the study simulates it,
//! and it is recorded at once — run, metric rows and whole result in one transaction — under
//! `sweep` = `study NAME`, so `apusim results --sweep "study NAME"` lists them. The database
//! is shared by the study's worker threads behind a lock; a transaction per finished run
//! costs microseconds against runs of seconds.

use crate::key::{
    functional_run_options, gpu_l1_key, ideal_gpu_name, input_ids, replay_options, run_key,
    sample_option, timed_options, with_llc_switches,
};
use crate::spec::Mode;
use crate::{record_one, Made, Store};
use anyhow::{bail, Result};
use apusim_experiments::gpu_l1::{self, GpuL1Run};
use apusim_experiments::replay::{self, Replayed};
use apusim_experiments::runs::{
    FunctionalRun, PlannedInput, PlannedMode, PlannedPoint, PlannedRun, ReplayRun, RunStore, Runs,
    TimedRun,
};
use apusim_experiments::studies::{Study, StudyArgs};
use apusim_sim::timed::{stored, SimResult};
use apusim_sim::RunResult;
use apusim_workloads::mixes::Frames;
use serde_json::Value;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// The results database as a study's [`RunStore`].
pub struct StudyRuns {
    store: Mutex<Store>,
    study: String,
    read: AtomicUsize,
    recorded: AtomicUsize,
}

impl StudyRuns {
    /// Open (or create) the database at `path` for study `study`.
    pub fn open(path: &Path, study: &str) -> Result<StudyRuns> {
        Ok(StudyRuns {
            store: Mutex::new(Store::open(path)?),
            study: study.to_string(),
            read: AtomicUsize::new(0),
            recorded: AtomicUsize::new(0),
        })
    }

    /// Runs read back from the database so far.
    pub fn read(&self) -> usize {
        self.read.load(Ordering::Relaxed)
    }

    /// Runs simulated and recorded so far.
    pub fn recorded(&self) -> usize {
        self.recorded.load(Ordering::Relaxed)
    }

    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        // A worker that panicked while holding the lock left no half transaction (SQLite rolls
        // it back), so the database is still usable.
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Open the database at `path` for study `study` and route the study's runs in `args`
/// through it.
pub fn attach(study: &Study, args: &mut StudyArgs, path: &Path) -> Result<Arc<StudyRuns>> {
    let runs = Arc::new(StudyRuns::open(path, study.name)?);
    args.runs = Runs::new(runs.clone());
    Ok(runs)
}

/// The options of `run` that shape its result, as its key holds them.
pub fn run_options(run: &TimedRun<'_>) -> Result<Value> {
    if run.opts.interval.is_some() {
        bail!("a study's stored runs do not keep per-interval counters");
    }
    let mut options = timed_options(run.opts.warmup, run.opts.instructions);
    with_llc_switches(&mut options, &run.opts.llc_switches);
    if let Some(s) = &run.opts.sample {
        options["sample"] = sample_option(s);
    }
    Ok(options)
}

fn key(run: &TimedRun<'_>) -> Result<String> {
    let ids = input_ids(run.inputs);
    run_key(Mode::Timed, run.cfg, run.policy, &run_options(run)?, &ids)
}

/// The options of functional `run` that shape its result, as its key holds them (those of
/// `apusim run --db`: [`crate::record_functional`]).
pub fn functional_options(run: &FunctionalRun<'_>) -> Result<Value> {
    if run.opts.llc_switches.dump_llc_trace.is_some() {
        bail!("a study's stored runs do not keep an LLC trace (--dump-llc-trace)");
    }
    Ok(functional_run_options(run.opts))
}

fn functional_key(run: &FunctionalRun<'_>) -> Result<String> {
    let ids = input_ids(run.inputs);
    let options = functional_options(run)?;
    run_key(Mode::Functional, run.cfg, run.policy, &options, &ids)
}

fn gpu_l1_run_key(run: &GpuL1Run<'_>) -> Result<String> {
    gpu_l1_key(run.cfg, &run.input.identity(run.cfg)?)
}

fn replay_key(run: &ReplayRun<'_>) -> Result<String> {
    let ids = input_ids(run.inputs);
    let options = replay_options(run.consumption);
    run_key(Mode::Replay, run.cfg, run.policy, &options, &ids)
}

impl StudyRuns {
    /// The stored result of `key` when the database holds one `decode` reads, counted as
    /// read back. A result this build cannot decode (another format, or written by an apusim
    /// whose result type differs) is simulated again rather than trusted.
    fn read_back<T>(&self, key: &str, decode: fn(&str, &[u8]) -> Result<T>) -> Result<Option<T>> {
        let Some((format, bytes)) = self.store().result(key)? else {
            return Ok(None);
        };
        match decode(&format, &bytes) {
            Ok(r) => {
                self.read.fetch_add(1, Ordering::Relaxed);
                Ok(Some(r))
            }
            Err(_) => Ok(None),
        }
    }

    /// Record a run just simulated, with its metric rows and its whole `result` as
    /// `(format, bytes)`.
    fn keep(
        &self,
        mode: Mode,
        (cfg, policy, inputs): (&apusim_sim::SystemConfig, &str, &dyn apusim_sim::Inputs),
        options: &Value,
        seconds: f64,
        metrics: &[crate::Metric],
        result: (&str, &[u8]),
    ) -> Result<()> {
        let finished = SystemTime::now();
        let started = finished - Duration::from_secs_f64(seconds.max(0.0));
        let made = Made {
            command: "study",
            study: Some(&self.study),
            mode,
            policy,
        };
        record_one(
            &mut self.store(),
            made,
            cfg,
            inputs,
            options,
            (started, finished),
            metrics,
            Some(result),
        )?;
        self.recorded.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

impl RunStore for StudyRuns {
    fn load(&self, run: &TimedRun<'_>) -> Result<Option<SimResult>> {
        self.read_back(&key(run)?, stored::decode)
    }

    fn save(&self, run: &TimedRun<'_>, result: &SimResult) -> Result<()> {
        let options = run_options(run)?;
        let bytes = stored::encode(result)?;
        self.keep(
            Mode::Timed,
            (run.cfg, run.policy, run.inputs),
            &options,
            result.seconds,
            &crate::metrics::timed(result),
            (stored::FORMAT, &bytes),
        )
    }

    fn load_functional(&self, run: &FunctionalRun<'_>) -> Result<Option<RunResult>> {
        self.read_back(&functional_key(run)?, apusim_sim::stored::decode)
    }

    fn save_functional(&self, run: &FunctionalRun<'_>, result: &RunResult) -> Result<()> {
        let options = functional_options(run)?;
        let bytes = apusim_sim::stored::encode(result)?;
        self.keep(
            Mode::Functional,
            (run.cfg, run.policy, run.inputs),
            &options,
            result.seconds,
            &crate::metrics::functional(result),
            (apusim_sim::stored::FORMAT, &bytes),
        )
    }

    fn load_replay(&self, run: &ReplayRun<'_>) -> Result<Option<Replayed>> {
        self.read_back(&replay_key(run)?, replay::decode)
    }

    fn save_replay(&self, run: &ReplayRun<'_>, result: &Replayed, seconds: f64) -> Result<()> {
        let bytes = replay::encode(result)?;
        self.keep(
            Mode::Replay,
            (run.cfg, run.policy, run.inputs),
            &replay_options(run.consumption),
            seconds,
            &crate::metrics::replay(result),
            (replay::FORMAT, &bytes),
        )
    }

    fn load_gpu_l1(&self, run: &GpuL1Run<'_>) -> Result<Option<apusim_gpu::RunResult>> {
        self.read_back(&gpu_l1_run_key(run)?, gpu_l1::decode)
    }

    fn save_gpu_l1(
        &self,
        run: &GpuL1Run<'_>,
        result: &apusim_gpu::RunResult,
        seconds: f64,
    ) -> Result<()> {
        let bytes = gpu_l1::encode(result)?;
        let ids = run.input.identity(run.cfg)?;
        let finished = SystemTime::now();
        let started = finished - Duration::from_secs_f64(seconds.max(0.0));
        let record = crate::RunRecord::new(
            gpu_l1_key(run.cfg, &ids)?,
            Some(format!("study {}", self.study)),
            "study",
            Mode::GpuL1.name(),
            serde_json::json!({
                "mode": Mode::GpuL1.name(),
                "preset": run.cfg.name,
                "inputs": run.input.describe(),
                "config_label": run.cfg.label(),
            }),
            serde_json::to_value(run.cfg)?,
            ids,
            (started, finished),
            Ok(()),
        );
        let metrics = crate::metrics::gpu_l1(result);
        self.store()
            .record_with(&record, &metrics, Some((gpu_l1::FORMAT, &bytes)))?;
        self.recorded.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// An override's value as a spec states it: as written when it reads as a TOML value (a
/// number, a switch, a list, a table), else as a string, the reading `--set` gives it.
fn toml_value(v: &str) -> String {
    match toml::from_str::<toml::Table>(&format!("v = {v}")) {
        Ok(_) => v.to_string(),
        Err(_) => toml::Value::String(v.to_string()).to_string(),
    }
}

/// The sweep spec of a study's planned runs ([`apusim_experiments::runs::Runs::planner`]):
/// the settings every run shares at the top, one `[[point]]` per run with the rest, in the
/// study's order. Each point is keyed as the study keys its run (a timed one without alone
/// runs: `alone = false`), so `apusim sweep` of it into a database leaves the study nothing
/// to simulate with `--db`.
pub fn spec_of(study: &str, runs: &[PlannedPoint]) -> Result<String> {
    let Some(first) = runs.first() else {
        bail!("{study}: the study plans no runs");
    };
    if runs
        .iter()
        .any(|r| std::mem::discriminant(&r.mode) != std::mem::discriminant(&first.mode))
    {
        bail!("{study}: the study plans runs of several modes, which one spec cannot hold");
    }
    let points: Vec<Vec<(&str, String)>> = runs
        .iter()
        .map(|r| settings(study, r))
        .collect::<Result<_>>()?;
    let shared: Vec<&(&str, String)> = points[0]
        .iter()
        .filter(|s| points.iter().all(|p| p.contains(s)))
        .collect();
    let mut out = match first.mode {
        PlannedMode::Timed => format!(
            "# The timed runs of `apusim study {study}`, one point each. Run them with\n\
             # `apusim sweep THIS.toml --db FILE` (or `--slurm`), then `apusim study {study} --db FILE`\n\
             # with the same options reads them back. The alone runs behind slowdowns are not\n\
             # points: the study makes them itself, cached beside its traces.\n\
             mode = \"timed\"\nalone = false\n"
        ),
        PlannedMode::Functional { .. } => format!(
            "# The functional runs of `apusim study {study}`, one point each (`apusim run --mix`'s).\n\
             # Run them with `apusim sweep THIS.toml --db FILE` (or `--slurm`), then\n\
             # `apusim study {study} --db FILE` with the same options reads them back.\n\
             mode = \"functional\"\n"
        ),
        PlannedMode::Replay { .. } => format!(
            "# The replays of `apusim study {study}`, one point each: a scene's LLC stream behind\n\
             # the preset's upper caches, replayed through the LLC under one policy and size.\n\
             # Run them with `apusim sweep THIS.toml --db FILE` (or `--slurm`), then\n\
             # `apusim study {study} --db FILE` with the same options reads them back.\n\
             mode = \"replay\"\n"
        ),
        PlannedMode::GpuL1 { .. } => format!(
            "# The runs of `apusim study {study}`, one point each: a kernel through the GPU\n\
             # hierarchy of `apusim gpu-l1 run` (preset and `set` keys of `apusim gpu-l1 presets`).\n\
             # Run them with `apusim sweep THIS.toml --db FILE` (or `--slurm`), then\n\
             # `apusim study {study} --db FILE` with the same options reads them back.\n\
             mode = \"gpu-l1\"\n"
        ),
    };
    for (k, v) in &shared {
        out.push_str(&format!("{k} = {v}\n"));
    }
    for p in &points {
        out.push_str("\n[[point]]\n");
        for s in p.iter().filter(|s| !shared.contains(s)) {
            out.push_str(&format!("{} = {}\n", s.0, s.1));
        }
    }
    Ok(out)
}

/// A planned point's settings as `(key, TOML value)`, in spec order; a functional point
/// has no warm-up and is never sampled.
fn settings<'a>(study: &str, p: &PlannedPoint) -> Result<Vec<(&'a str, String)>> {
    let r: &PlannedRun = &p.run;
    let timed = p.mode == PlannedMode::Timed;
    let quote = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut out = vec![("preset", quote(&r.preset))];
    if let PlannedMode::GpuL1 { size } = p.mode {
        // A kernel through the GPU hierarchy: its size and seed, and the GPU configuration's
        // overrides; no scale, policy or run lengths.
        let PlannedInput::Kernel(k) = &r.input else {
            bail!("{study}: a gpu-l1 run plans a kernel");
        };
        out.push(("kernel", quote(k)));
        if let Some(n) = size {
            out.push(("size", n.to_string()));
        }
        out.push(("seed", r.seed.to_string()));
        push_set(&mut out, study, r)?;
        return Ok(out);
    }
    match &r.input {
        PlannedInput::Mix(m) => out.push(("mix", quote(m))),
        PlannedInput::Kernel(k) => out.push(("kernel", quote(k))),
        PlannedInput::Cpu(k) => out.push(("cpu", quote(k))),
        PlannedInput::Scene {
            name,
            width,
            height,
        } => {
            out.push(("scene", quote(name)));
            out.push(("resolution", quote(&format!("{width}x{height}"))));
        }
    }
    out.push(("scale", r.scale.to_string()));
    match r.frames {
        Frames::Scale => {}
        Frames::Count(n) => out.push(("frames", n.to_string())),
        Frames::Paper => out.push(("frames", quote("paper"))),
    }
    out.push(("seed", r.seed.to_string()));
    if timed {
        out.push(("warmup", r.warmup.to_string()));
    } else if r.warmup != 0 || r.sample {
        bail!("{study}: a functional run or replay has no warm-up and is not sampled");
    }
    if let Some(n) = r.instructions {
        out.push(("instructions", n.to_string()));
    }
    if let PlannedMode::Functional { limit: Some(n) } = p.mode {
        out.push(("limit", n.to_string()));
    }
    if let PlannedMode::Replay { consumption: true } = p.mode {
        out.push(("consumption", "true".into()));
    }
    if r.sample {
        out.push(("sample", "true".into()));
    }
    out.push(("policy", quote(&r.policy)));
    if !r.ideal.is_empty() {
        out.push(("ideal", quote(&r.ideal)));
    }
    if r.gpu_read_bypass > 0.0 {
        out.push(("gpu_read_bypass", format!("{:?}", r.gpu_read_bypass)));
    }
    if let Some(c) = r.ideal_critical {
        out.push(("ideal_gpu", quote(ideal_gpu_name(c))));
    }
    push_set(&mut out, study, r)?;
    Ok(out)
}

/// Add `r`'s overrides (and its DRAM overrides) to `out` as one `set` table.
fn push_set(out: &mut Vec<(&str, String)>, study: &str, r: &PlannedRun) -> Result<()> {
    let quote = |s: &str| toml::Value::String(s.to_string()).to_string();
    // Later overrides of a key win, as on the command line; a TOML table holds a key once.
    let mut set: Vec<(String, String)> = Vec::new();
    let mut put = |k: &str, v: String| match set.iter_mut().find(|(key, _)| key == k) {
        Some(slot) => slot.1 = v,
        None => set.push((k.to_string(), v)),
    };
    for o in &r.set {
        let Some((k, v)) = o.split_once('=') else {
            bail!("{study}: override `{o}` is not KEY=VALUE");
        };
        put(k.trim(), toml_value(v.trim()));
    }
    if !r.dram_set.is_empty() {
        let list: Vec<String> = r.dram_set.iter().map(|d| quote(d)).collect();
        put("timing.dram_set", format!("[{}]", list.join(", ")));
    }
    if !set.is_empty() {
        let set: Vec<String> = set
            .iter()
            .map(|(k, v)| format!("{} = {v}", quote(k)))
            .collect();
        out.push(("set", format!("{{ {} }}", set.join(", "))));
    }
    Ok(())
}
