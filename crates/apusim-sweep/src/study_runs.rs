//! A study's timed runs kept in the results database: the [`RunStore`] behind
//! `apusim study NAME --db FILE`.
//!
//! A run is looked up under the key a sweep, `apusim sim --db` and this store all compute for
//! it ([`job::run_key`] of its configuration, policy, inputs and the options that shape its
//! result: warm-up, instructions, the LLC study switches, sampling). It is read back when the
//! database holds it as `ok` with a whole result this build can decode; otherwise the study
//! simulates it, and it is recorded at once — run, metric rows and whole result in one
//! transaction — under `sweep` = `study NAME`, so `apusim results --sweep "study NAME"` lists
//! them. The database is shared by the study's worker threads behind a lock; a transaction
//! per finished run costs microseconds against runs of seconds.

use crate::job;
use crate::spec::Mode;
use crate::{record_one, Made, Store};
use anyhow::{bail, Result};
use apusim_experiments::runs::{PlannedInput, PlannedRun, RunStore, Runs, TimedRun};
use apusim_experiments::studies::{Study, StudyArgs};
use apusim_sim::timed::{stored, SimResult};
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
/// through it; a functional study is refused (its runs are trace replays, not kept).
pub fn attach(study: &Study, args: &mut StudyArgs, path: &Path) -> Result<Arc<StudyRuns>> {
    timed_only(study, "--db")?;
    let runs = Arc::new(StudyRuns::open(path, study.name)?);
    args.runs = Runs::new(runs.clone());
    Ok(runs)
}

/// Refuse `what` (`--db`, `--print-spec`) on a functional study.
pub fn timed_only(study: &Study, what: &str) -> Result<()> {
    if !study.family.is_timed() {
        bail!(
            "{}: a functional study; {what} is for the timed studies, whose runs are timed \
             simulations",
            study.name
        );
    }
    Ok(())
}

/// The options of `run` that shape its result, as its key holds them.
pub fn run_options(run: &TimedRun<'_>) -> Result<Value> {
    if run.opts.interval.is_some() {
        bail!("a study's stored runs do not keep per-interval counters");
    }
    let mut options = job::timed_options(run.opts.warmup, run.opts.instructions);
    job::with_study(&mut options, &run.opts.study);
    if let Some(s) = &run.opts.sample {
        options["sample"] = job::sample_option(s);
    }
    Ok(options)
}

fn key(run: &TimedRun<'_>) -> Result<String> {
    let ids = job::input_ids(run.inputs);
    job::run_key(Mode::Timed, run.cfg, run.policy, &run_options(run)?, &ids)
}

impl RunStore for StudyRuns {
    fn load(&self, run: &TimedRun<'_>) -> Result<Option<SimResult>> {
        let key = key(run)?;
        let Some((format, bytes)) = self.store().result(&key)? else {
            return Ok(None);
        };
        // A result this build cannot decode (another format, or written by an apusim whose
        // result type differs) is simulated again rather than trusted.
        match stored::decode(&format, &bytes) {
            Ok(r) => {
                self.read.fetch_add(1, Ordering::Relaxed);
                Ok(Some(r))
            }
            Err(_) => Ok(None),
        }
    }

    fn save(&self, run: &TimedRun<'_>, result: &SimResult) -> Result<()> {
        let options = run_options(run)?;
        let finished = SystemTime::now();
        let started = finished - Duration::from_secs_f64(result.seconds.max(0.0));
        let made = Made {
            command: "study",
            study: Some(&self.study),
            mode: Mode::Timed,
            policy: run.policy,
        };
        let metrics = crate::metrics::timed(result);
        record_one(
            &mut self.store(),
            made,
            run.cfg,
            run.inputs,
            &options,
            (started, finished),
            &metrics,
            Some(result),
        )?;
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
/// study's order. Each point is keyed as the study keys its run (no alone runs:
/// `alone = false`), so `apusim sweep` of it into a database leaves the study nothing to
/// simulate with `--db`.
pub fn spec_of(study: &str, runs: &[PlannedRun]) -> Result<String> {
    let points: Vec<Vec<(&str, String)>> = runs
        .iter()
        .map(|r| settings(study, r))
        .collect::<Result<_>>()?;
    let Some(first) = points.first() else {
        bail!("{study}: the study plans no runs");
    };
    let shared: Vec<&(&str, String)> = first
        .iter()
        .filter(|s| points.iter().all(|p| p.contains(s)))
        .collect();
    let mut out = format!(
        "# The timed runs of `apusim study {study}`, one point each. Run them with\n\
         # `apusim sweep THIS.toml --db FILE` (or `--slurm`), then `apusim study {study} --db FILE`\n\
         # with the same options reads them back. The alone runs behind slowdowns are not\n\
         # points: the study makes them itself, cached beside its traces.\n\
         mode = \"timed\"\nalone = false\n"
    );
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

/// A planned run's settings as `(key, TOML value)`, in spec order.
fn settings<'a>(study: &str, r: &PlannedRun) -> Result<Vec<(&'a str, String)>> {
    let quote = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut out = vec![("preset", quote(&r.preset))];
    match &r.input {
        PlannedInput::Mix(m) => out.push(("mix", quote(m))),
        PlannedInput::Kernel(k) => out.push(("kernel", quote(k))),
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
    out.push(("seed", r.seed.to_string()));
    out.push(("warmup", r.warmup.to_string()));
    if let Some(n) = r.instructions {
        out.push(("instructions", n.to_string()));
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
        out.push(("ideal_gpu", quote(job::ideal_gpu_name(c))));
    }
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
    Ok(out)
}
