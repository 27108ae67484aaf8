//! `apusim sweep` (a grid of runs on every core, recorded into a results database) and
//! `apusim results` (list, filter, export and pivot what a database holds); `apusim sweep
//! --slurm` (the sweep as a SLURM job array of shards) and `apusim results merge`.

use super::CacheArgs;
use anyhow::{bail, Context, Result};
use apusim_sim::report::write_atomic;
use apusim_sweep::plot::{self, PlotKind};
use apusim_sweep::results::{self, MetricFilter, RunFilter};
use apusim_sweep::slurm::{self, BatchJob, Shard};
use apusim_sweep::{job::ResolveOptions, merge, runner, Spec, Store, SweepOptions};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct SweepArgs {
    /// The sweep specification (TOML): shared settings, `[grid]` axes, `[[point]]`s.
    spec: PathBuf,
    /// The results database (SQLite; created when missing). Runs it already holds are
    /// skipped, so a stopped sweep continues where it stopped.
    #[arg(long, default_value = "results.sqlite")]
    db: PathBuf,
    /// Runs at once, 1 to 1024 (default: every core).
    #[arg(short = 'j', long = "jobs", value_parser = crate::thread_count)]
    jobs: Option<usize>,
    /// Print the points the spec expands to (with their keys and whether the database holds
    /// them) and run nothing.
    #[arg(long, conflicts_with = "slurm")]
    print_spec: bool,
    /// Run only slice I of N of the sweep's points: their keys sorted, every N-th from the
    /// I-th (0 <= I < N). The N slices partition the sweep; each task of a --slurm job array
    /// runs one into its own database.
    #[arg(long, value_name = "I/N", value_parser = Shard::parse, conflicts_with = "slurm")]
    shard: Option<Shard>,
    /// Submit the sweep to SLURM (`sbatch --array`) as a job array: task I runs slice I/N of
    /// the points (see --shard) into the shard database SHARD_DIR/shard-I.sqlite; with
    /// --wait, the shards are then merged into --db (else merge them with `apusim results
    /// merge DB SHARD_DIR`). -j is each task's threads (default 1). Every point is resolved,
    /// and a bad spec refused, before anything is submitted.
    #[arg(long)]
    slurm: bool,
    /// Array tasks of --slurm (default: one per point, at most 100; never more than points).
    #[arg(long, visible_alias = "array-size", value_name = "N", requires = "slurm",
          value_parser = crate::at_least_one)]
    tasks: Option<usize>,
    /// SLURM partition of the job array.
    #[arg(long, requires = "slurm")]
    partition: Option<String>,
    /// Time limit of each array task, as `sbatch --time` takes it (e.g. 2:00:00).
    #[arg(long, requires = "slurm")]
    time: Option<String>,
    /// Where the shard databases, the batch script and the tasks' output go (default: the
    /// database's path with `.shards` appended). It must be on a file system the compute nodes
    /// share.
    #[arg(long, value_name = "DIR", requires = "slurm")]
    shard_dir: Option<PathBuf>,
    /// Print the batch script and submit nothing.
    #[arg(long, requires = "slurm")]
    dry_run: bool,
    /// Wait for every array task to end (`sbatch --wait`), then merge the shards into --db.
    #[arg(long, requires = "slurm", conflicts_with = "dry_run")]
    wait: bool,
    #[command(flatten)]
    cache: CacheArgs,
}

pub fn sweep(a: SweepArgs) -> Result<()> {
    let spec = Spec::load(&a.spec)?;
    let resolve = ResolveOptions {
        cache_dir: a.cache.dir(),
    };
    // Every point is resolved (and a bad one refused) before the database is touched.
    let mut jobs = runner::resolve_all(&spec, &resolve)?;
    if a.slurm {
        return submit(&a, &spec, jobs.len());
    }
    if let Some(shard) = a.shard {
        jobs = shard.select(jobs);
    }
    if a.print_spec {
        let done = if a.db.exists() {
            Store::open_existing(&a.db)?.done_keys()?
        } else {
            Default::default()
        };
        let mut t = apusim_sim::report::TextTable::new(["line", "key", "done", "point"]);
        for j in &jobs {
            t.row(vec![
                j.point.line.to_string(),
                j.key[..12].to_string(),
                if done.contains(&j.key) { "yes" } else { "no" }.into(),
                runner::describe(j),
            ]);
        }
        print!("{}", t.render());
        println!(
            "{} points in {}, {} in {}",
            jobs.len(),
            a.spec.display(),
            jobs.iter().filter(|j| done.contains(&j.key)).count(),
            a.db.display()
        );
        return Ok(());
    }
    let mut store = Store::open(&a.db)?;
    let opts = SweepOptions {
        threads: a.jobs,
        progress: true,
        resolve,
    };
    let s = runner::run_jobs(&spec.name, &jobs, &mut store, &opts)?;
    println!(
        "sweep {}: {} points, {} already in {}, {} run now ({} failed) in {:.2} s",
        spec.name,
        s.points,
        s.skipped,
        a.db.display(),
        s.ran,
        s.failed.len(),
        s.seconds
    );
    if let Some((_, holder)) = s.elsewhere.first() {
        println!(
            "{} points left to another sweep writing {} (process {holder}); run this sweep \
             again once it ends to pick up any it did not finish",
            s.elsewhere.len(),
            a.db.display()
        );
    }
    runner::check(&s, &a.db)
}

/// `apusim sweep --slurm`: write the batch script, and print or submit it.
fn submit(a: &SweepArgs, spec: &Spec, points: usize) -> Result<()> {
    let absolute = |p: &Path| {
        std::path::absolute(p).with_context(|| format!("making {} absolute", p.display()))
    };
    let tasks = a.tasks.unwrap_or(points.min(100)).min(points).max(1);
    let threads = a.jobs.unwrap_or(1);
    let shard_dir = match &a.shard_dir {
        Some(d) => absolute(d)?,
        None => absolute(&PathBuf::from(format!("{}.shards", a.db.display())))?,
    };
    let extra = match a.cache.dir() {
        Some(d) => vec![
            "--cache-dir".to_string(),
            absolute(&d)?.display().to_string(),
        ],
        None => vec!["--no-cache".to_string()],
    };
    let job = BatchJob {
        name: format!("apusim-{}", spec.name),
        exe: std::env::current_exe().context("finding the apusim executable")?,
        spec: std::fs::canonicalize(&a.spec)
            .with_context(|| format!("finding {}", a.spec.display()))?,
        tasks,
        threads,
        shard_dir: shard_dir.clone(),
        partition: a.partition.clone(),
        time: a.time.clone(),
        extra,
    };
    let script = job.script()?;
    if a.dry_run {
        print!("{script}");
        return Ok(());
    }
    // The database merged into is checked before anything is submitted.
    if a.wait {
        Store::open(&a.db)?;
    }
    std::fs::create_dir_all(&shard_dir)
        .with_context(|| format!("creating the shard directory {}", shard_dir.display()))?;
    let path = shard_dir.join("sweep.sbatch");
    write_atomic(&path, script.as_bytes())?;
    let done = slurm::submit(&path, a.wait)?;
    println!(
        "submitted job {} ({} points in {tasks} array tasks); shards in {}",
        done.job_id,
        points,
        shard_dir.display()
    );
    if !a.wait {
        println!(
            "merge them when the job has ended: apusim results merge {} {}",
            a.db.display(),
            shard_dir.display()
        );
        return Ok(());
    }
    let merged = merge_into(&a.db, &job.shards());
    if !done.all_ok {
        bail!(
            "array tasks of job {} failed (their output: {}); the shards they wrote are \
             merged, and submitting the sweep again runs what is missing",
            done.job_id,
            shard_dir
                .join(format!("slurm-{}_*.out", done.job_id))
                .display()
        );
    }
    merged
}

/// Merge shards into `db`, naming each skipped shard on stderr; an error when any was skipped.
fn merge_into(db: &Path, shards: &[PathBuf]) -> Result<()> {
    let mut store = Store::open(db)?;
    let report = merge::merge(&mut store, shards, |path, outcome| {
        if let Err(e) = outcome {
            eprintln!("skipped shard {}: {e}", path.display());
        }
    })?;
    println!(
        "merged {} of {} shards into {}: {} runs added ({} metric rows), {} already there",
        report.merged.len(),
        shards.len(),
        db.display(),
        report.added(),
        report.metric_rows(),
        report.present()
    );
    if !report.skipped.is_empty() {
        bail!(
            "{} of {} shards skipped (named above); the others are merged",
            report.skipped.len(),
            shards.len()
        );
    }
    Ok(())
}

/// `apusim results` subcommands.
#[derive(Subcommand)]
pub enum ResultsCommand {
    /// Fold results databases (the shards of `apusim sweep --slurm`) into one.
    ///
    /// A run whose key the database holds is skipped, so merging twice changes nothing; each shard is merged
    /// in one transaction, whole or not at all. A shard that is not an apusim database, is of
    /// a newer schema, or is corrupt (SQLite's integrity check fails, or its rows are
    /// inconsistent) is named on stderr and skipped; the command then exits non-zero, after
    /// merging the good shards.
    Merge(MergeArgs),
}

#[derive(Args)]
pub struct MergeArgs {
    /// The database merged into (created when missing).
    db: PathBuf,
    /// Shard databases, or directories of them (their *.sqlite files).
    #[arg(required = true, value_name = "SHARD")]
    shards: Vec<PathBuf>,
}

pub fn results_merge(a: MergeArgs) -> Result<()> {
    let shards = merge::shard_files(&a.shards)?;
    merge_into(&a.db, &shards)
}

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ResultsArgs {
    #[command(subcommand)]
    command: Option<ResultsCommand>,
    /// The results database.
    #[arg(required = true)]
    db: Option<PathBuf>,
    /// Only the runs of this sweep (its spec file's name without `.toml`).
    #[arg(long)]
    sweep: Option<String>,
    /// Only runs whose parameter has this value, e.g. `--where policy=lru --where mix=S1`.
    #[arg(long = "where", value_name = "PARAM=VALUE")]
    filter: Vec<String>,
    /// Only runs that ended so: ok, failed (default: both when listing, ok for metrics).
    #[arg(long, value_parser = ["ok", "failed"])]
    status: Option<String>,
    /// Metric rows of this metric (e.g. `read_misses`, `ipc`); with --level, --agent,
    /// --stream to narrow them. Without any, the runs are listed.
    #[arg(long)]
    metric: Option<String>,
    /// Metric rows of this level (`l1d`, `l2`, `llc`, `memory`, `dram`, ...).
    #[arg(long)]
    level: Option<String>,
    /// Metric rows of this agent (`cpu0`, `gpu`, `system`).
    #[arg(long)]
    agent: Option<String>,
    /// Metric rows of this stream (`data`, `texture`, ...).
    #[arg(long)]
    stream: Option<String>,
    /// Pivot table of the matching metric rows (summed per run): rows × columns of two
    /// parameters.
    #[arg(long)]
    pivot: bool,
    /// The parameter of the pivot's rows.
    #[arg(long, default_value = "mix", requires = "pivot")]
    rows: String,
    /// The parameter of the pivot's columns.
    #[arg(long, default_value = "policy", requires = "pivot")]
    cols: String,
    /// Divide every row by its value in this column, and add the geometric mean over rows.
    #[arg(long, requires = "pivot")]
    baseline: Option<String>,
    /// Plot the pivot into this file, SVG or PNG by the extension: grouped bars (with the
    /// geomean when normalized).
    #[arg(long, value_name = "FILE.svg|FILE.png", requires = "pivot", value_parser = crate::cli_study::plot_output)]
    plot: Option<PathBuf>,
    /// Plot lines over the rows' parameter (one line per column) instead of bars.
    #[arg(long, requires = "plot")]
    lines: bool,
    /// Write the runs (or metric rows, or the pivot) as CSV to this file.
    #[arg(long, value_parser = crate::writable_output)]
    csv: Option<PathBuf>,
    /// Write the runs with their metric rows as JSON to this file.
    #[arg(long, value_parser = crate::writable_output)]
    json: Option<PathBuf>,
}

pub fn results(a: ResultsArgs) -> Result<()> {
    if let Some(ResultsCommand::Merge(m)) = a.command {
        return results_merge(m);
    }
    let Some(db) = a.db.clone() else {
        bail!("give a results database (or `apusim results merge DB SHARD...`)")
    };
    let store = Store::open_existing(&db)?;
    let mf = MetricFilter {
        metric: a.metric.clone(),
        level: a.level.clone(),
        agent: a.agent.clone(),
        stream: a.stream.clone(),
    };
    let metric_query = a.metric.is_some()
        || a.level.is_some()
        || a.agent.is_some()
        || a.stream.is_some()
        || a.pivot;
    let status = match (&a.status, metric_query) {
        (Some(s), _) => Some(s.clone()),
        (None, true) => Some("ok".to_string()),
        (None, false) => None,
    };
    let filter = RunFilter {
        sweep: a.sweep.clone(),
        status,
        params: results::parse_filters(&a.filter)?,
    };
    let runs = results::runs(&store, &filter)?;
    if a.pivot {
        if a.metric.is_none() {
            anyhow::bail!("--pivot needs --metric (and --level, --agent, --stream to narrow it)");
        }
        let rows = results::rows(&store, &runs, &mf)?;
        let p = results::pivot(&runs, &rows, &a.rows, &a.cols, a.baseline.as_deref())?;
        print!("{}", p.render());
        // The plot, CSV and JSON are committed together.
        let mut staged = apusim_trace::output::Outputs::new();
        if let Some(path) = &a.plot {
            let kind = if a.lines {
                PlotKind::Lines
            } else {
                PlotKind::Bars
            };
            let what = [&a.level, &a.agent, &a.stream]
                .iter()
                .filter_map(|x| x.as_deref())
                .fold(a.metric.clone().unwrap_or_default(), |acc, x| {
                    format!("{acc} {x}")
                });
            staged.stage(path, &plot::render_pivot(path, &p, kind, &what)?)?;
        }
        if let Some(path) = &a.csv {
            staged.stage(path, p.to_csv().as_bytes())?;
        }
        if let Some(path) = &a.json {
            staged.stage(path, results::to_json(&runs, &rows)?.as_bytes())?;
        }
        return crate::commit_outputs(staged);
    }
    let rows = if metric_query || a.csv.is_some() || a.json.is_some() {
        results::rows(&store, &runs, &mf)?
    } else {
        Vec::new()
    };
    if metric_query {
        let mut t = apusim_sim::report::TextTable::new([
            "key", "agent", "level", "stream", "metric", "value",
        ]);
        for (r, m) in &rows {
            t.row(vec![
                r.run.key[..12.min(r.run.key.len())].to_string(),
                m.agent.clone(),
                m.level.clone(),
                m.stream.clone(),
                m.metric.clone(),
                m.value.to_string(),
            ]);
        }
        print!("{}", t.render());
    } else {
        print!("{}", results::runs_table(&runs));
    }
    println!("{} runs in {}", runs.len(), db.display());
    // Committed together.
    let mut staged = apusim_trace::output::Outputs::new();
    if let Some(path) = &a.csv {
        staged.stage(path, results::to_csv(&runs, &rows).as_bytes())?;
    }
    if let Some(path) = &a.json {
        staged.stage(path, results::to_json(&runs, &rows)?.as_bytes())?;
    }
    crate::commit_outputs(staged)
}

/// `--db FILE` of `apusim run` and `apusim sim`.
#[derive(Args)]
pub struct DbArgs {
    /// Record every policy's run into this results database (SQLite; created when missing),
    /// under the key a sweep gives the same run.
    #[arg(long, value_name = "FILE")]
    db: Option<PathBuf>,
}

impl DbArgs {
    /// Open the database before the run, so one that cannot be written is refused before
    /// anything runs; `oracles` refuses it for runs that replay oracles (not recorded).
    pub fn open(&self, oracles: bool) -> Result<Option<Store>> {
        match &self.db {
            Some(_) if oracles => anyhow::bail!(
                "--db records LLC policy runs; oracle replays (opt, *-bypass) are not recorded"
            ),
            Some(p) => Ok(Some(Store::open(p)?)),
            None => Ok(None),
        }
    }
}

/// Record `apusim run`'s results when `--db` was given.
pub fn record_run(
    db: Option<&mut Store>,
    cfg: &apusim_sim::SystemConfig,
    inputs: &dyn apusim_sim::Inputs,
    opts: &apusim_sim::RunOptions,
    results: &[apusim_sim::RunResult],
) -> Result<()> {
    let Some(store) = db else { return Ok(()) };
    apusim_sweep::record_functional(
        store,
        cfg,
        inputs,
        opts,
        results,
        std::time::SystemTime::now(),
    )?;
    announce_recorded(store, results.len());
    Ok(())
}

/// Say on stderr that `n` runs went into `store`.
fn announce_recorded(store: &Store, n: usize) {
    eprintln!("recorded {n} runs in {}", store.path().display());
}

/// Record `apusim sim`'s results when `--db` was given; `extra` are the options beyond
/// warm-up, instructions and the LLC switches that shaped them.
pub fn record_sim(
    db: Option<&mut Store>,
    cfg: &apusim_sim::SystemConfig,
    inputs: &dyn apusim_sim::Inputs,
    opts: &apusim_sim::timed::SimOptions,
    extra: &[(&str, serde_json::Value)],
    results: &[apusim_sim::timed::SimResult],
) -> Result<()> {
    let Some(store) = db else { return Ok(()) };
    apusim_sweep::record_timed(
        store,
        cfg,
        inputs,
        opts.warmup,
        opts.instructions,
        &opts.llc_switches,
        extra,
        results,
        std::time::SystemTime::now(),
    )?;
    announce_recorded(store, results.len());
    Ok(())
}
