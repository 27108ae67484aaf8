//! The sweep runner: resolve every point before anything runs, skip the keys the database
//! already holds, run the rest on a pool of threads, and record each run as it finishes.

use crate::job::{self, Job, JobSource, ResolveOptions};
use crate::spec::{Mode, Spec, SpecError};
use crate::store::{RunRecord, Store};
use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// How a sweep runs.
#[derive(Clone, Debug, Default)]
pub struct SweepOptions {
    /// Worker threads (`None`: every core).
    pub threads: Option<usize>,
    /// Show one progress bar for the whole sweep (on a terminal only).
    pub progress: bool,
    pub resolve: ResolveOptions,
}

/// What a sweep did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SweepSummary {
    pub points: usize,
    /// Points whose key the database already held as `ok`.
    pub skipped: usize,
    /// Points another sweep writing the same database was running (key, `host:pid`).
    pub elsewhere: Vec<(String, String)>,
    /// Points run now.
    pub ran: usize,
    /// Keys and errors of the runs that failed now.
    pub failed: Vec<(String, String)>,
    pub seconds: f64,
}

/// Resolve every point of `spec` into a job; refuses the whole spec on the first bad point
/// or on two points with the same key, naming their lines.
pub fn resolve_all(spec: &Spec, opts: &ResolveOptions) -> Result<Vec<Job>> {
    let points = spec.points()?;
    let jobs: Vec<Job> = points
        .par_iter()
        .map(|p| job::resolve(p, &spec.file, opts))
        .collect::<Result<Vec<_>>>()?;
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for j in &jobs {
        if let Some(first) = seen.insert(&j.key, j.point.line) {
            return Err(SpecError {
                file: spec.file.clone(),
                line: j.point.line,
                message: format!(
                    "duplicate point: the same run as the point of line {first} ({})",
                    describe(j)
                ),
            }
            .into());
        }
    }
    Ok(jobs)
}

/// A point in one line: its parameters.
pub fn describe(j: &Job) -> String {
    match &j.params {
        serde_json::Value::Object(m) => m
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    }
}

/// Run the sweep `spec` into `store`.
pub fn run(spec: &Spec, store: &mut Store, opts: &SweepOptions) -> Result<SweepSummary> {
    let jobs = resolve_all(spec, &opts.resolve)?;
    run_jobs(&spec.name, &jobs, store, opts)
}

/// Run the jobs of sweep `name` (from [`resolve_all`]) whose keys `store` does not hold as
/// `ok`, recording each as it finishes.
pub fn run_jobs(
    name: &str,
    jobs: &[Job],
    store: &mut Store,
    opts: &SweepOptions,
) -> Result<SweepSummary> {
    let start = Instant::now();
    let done = store.done_keys()?;
    let todo: Vec<&Job> = jobs.iter().filter(|j| !done.contains(&j.key)).collect();
    // Another sweep may be writing this database: run only the keys this one claims.
    let claimed = store.claim(todo.iter().map(|j| j.key.as_str()))?;
    let pending: Vec<&Job> = todo
        .into_iter()
        .filter(|j| claimed.mine.contains(&j.key))
        .collect();
    let mut summary = SweepSummary {
        points: jobs.len(),
        skipped: jobs.len() - pending.len() - claimed.elsewhere.len(),
        elsewhere: claimed.elsewhere,
        ..Default::default()
    };
    if pending.is_empty() {
        summary.seconds = start.elapsed().as_secs_f64();
        return Ok(summary);
    }
    // The claims are dropped whatever happens (a host program such as a Python session
    // lives on after an error, and its claims would hold the points from other sweeps).
    let ran = run_claimed(name, &pending, store, opts, &mut summary);
    let released = store.release();
    ran?;
    released?;
    summary.seconds = start.elapsed().as_secs_f64();
    Ok(summary)
}

/// Run `pending` (claimed by this process) into `store`, counting into `summary`.
fn run_claimed(
    name: &str,
    pending: &[&Job],
    store: &mut Store,
    opts: &SweepOptions,
    summary: &mut SweepSummary,
) -> Result<()> {
    // Generate each distinct mix trace once, before runs that share it start in parallel.
    if let Some(dir) = &opts.resolve.cache_dir {
        let mixes: Vec<apusim_experiments::jobs::JobInputs> = pending
            .iter()
            .filter_map(|j| match &j.source {
                JobSource::Mix(m) => Some(apusim_experiments::jobs::JobInputs::new(
                    m.jobs().to_vec(),
                    Some(dir.clone()),
                    String::new(),
                )),
                JobSource::Traces(_) | JobSource::GpuL1(_) => None,
            })
            .collect();
        if !mixes.is_empty() {
            apusim_experiments::jobs::prepare_all(dir, &mixes)
                .context("generating the mixes' traces")?;
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.unwrap_or(0))
        .build()
        .context("building the thread pool")?;
    prepare_alone_runs(pending, &pool);
    prepare_replay_streams(pending, &pool);
    let bar = progress_bar(pending.len(), opts.progress);
    let running = AtomicUsize::new(0);
    let failed = AtomicUsize::new(0);
    let set_message = |bar: &indicatif::ProgressBar| {
        bar.set_message(format!(
            "{} running, {} failed",
            running.load(Ordering::Relaxed),
            failed.load(Ordering::Relaxed)
        ));
    };
    let (tx, rx) = std::sync::mpsc::channel::<(RunRecord, job::Outcome)>();
    let sweep_name = name.to_string();
    let mut write_error: Option<anyhow::Error> = None;
    std::thread::scope(|s| {
        let workers = s.spawn(|| {
            pool.install(|| {
                pending.par_iter().for_each_with(tx, |tx, j| {
                    running.fetch_add(1, Ordering::Relaxed);
                    set_message(&bar);
                    let t0 = SystemTime::now();
                    let result = job::execute(j);
                    let t1 = SystemTime::now();
                    running.fetch_sub(1, Ordering::Relaxed);
                    let (status, outcome) = match result {
                        Ok(o) => (Ok(()), o),
                        Err(e) => {
                            failed.fetch_add(1, Ordering::Relaxed);
                            (Err(format!("{e:#}")), (Vec::new(), None))
                        }
                    };
                    let record = RunRecord::new(
                        j.key.clone(),
                        Some(sweep_name.clone()),
                        "sweep",
                        j.point.mode.name(),
                        j.params.clone(),
                        j.cfg.to_json().unwrap_or_default(),
                        j.input_ids.clone(),
                        (t0, t1),
                        status,
                    );
                    // The receiver stops only on a database error; the sweep then ends with it.
                    let _ = tx.send((record, outcome));
                })
            })
        });
        for (record, (metrics, result)) in rx {
            if write_error.is_some() {
                continue;
            }
            summary.ran += 1;
            if let Some(e) = &record.error {
                summary.failed.push((record.key.clone(), e.clone()));
                bar.suspend(|| eprintln!("run failed ({}): {e}", record.key));
            }
            let result = result.as_ref().map(|(f, b)| (*f, b.as_slice()));
            if let Err(e) = store.record_with(&record, &metrics, result) {
                write_error = Some(e);
            }
            bar.inc(1);
            set_message(&bar);
        }
        let _ = workers.join();
    });
    bar.finish_and_clear();
    match write_error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Make the alone runs that pending timed jobs share (every policy of a mix compares with the
/// same ones) once each, in parallel, into the cache the jobs then read them from. A failure
/// here is left for the job itself to report with its run.
fn prepare_alone_runs(pending: &[&Job], pool: &rayon::ThreadPool) {
    let shared = pending
        .iter()
        .filter(|j| j.alone.is_some() && j.alone_cache.is_some())
        .filter_map(|j| {
            let alone = j.alone.as_deref().unwrap_or_default();
            let simulated = apusim_sim::timed::alone_config(j.cfg.system().ok()?, alone);
            let group = serde_json::json!({
                "config": serde_json::to_value(&simulated).unwrap_or_default(),
                "options": j.options,
                "inputs": j.input_ids,
            });
            Some((group.to_string(), *j))
        });
    once_each(shared, pool, |j| {
        let _ = j.alone_runs();
    });
}

/// Make the LLC streams that pending replay jobs share (every policy and LLC size of a
/// scene replays one) once each, in parallel, into the trace cache the jobs then read them
/// from. A failure here is left for the job itself to report with its run.
fn prepare_replay_streams(pending: &[&Job], pool: &rayon::ThreadPool) {
    let shared = pending
        .iter()
        .filter(|j| j.point.mode == Mode::Replay && j.alone_cache.is_some())
        .filter_map(|j| match &j.source {
            JobSource::Mix(inputs) => {
                let name =
                    apusim_experiments::replay::stream_name(inputs, j.cfg.system().ok()?).ok()?;
                Some((name, *j))
            }
            JobSource::Traces(_) | JobSource::GpuL1(_) => None,
        });
    once_each(shared, pool, |j| {
        let _ = j.llc_stream();
    });
}

/// Run `make` on `pool` for the first job of each group of `jobs` (group name, job), the
/// groups in parallel.
fn once_each<'a>(
    jobs: impl Iterator<Item = (String, &'a Job)>,
    pool: &rayon::ThreadPool,
    make: impl Fn(&Job) + Sync,
) {
    let mut groups: BTreeMap<String, &Job> = BTreeMap::new();
    for (group, j) in jobs {
        groups.entry(group).or_insert(j);
    }
    if groups.is_empty() {
        return;
    }
    pool.install(|| {
        groups
            .values()
            .collect::<Vec<_>>()
            .par_iter()
            .for_each(|j| make(j));
    });
}

fn progress_bar(n: usize, show: bool) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !show || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(n as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {elapsed} [{bar:30}] {pos}/{len} done, {msg}, ETA {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

/// Refuse a sweep that ran runs which failed, naming how many.
pub fn check(summary: &SweepSummary, db: &std::path::Path) -> Result<()> {
    if !summary.failed.is_empty() {
        bail!(
            "{} of {} runs failed (their errors: apusim results {} --status failed)",
            summary.failed.len(),
            summary.ran,
            db.display()
        );
    }
    Ok(())
}
