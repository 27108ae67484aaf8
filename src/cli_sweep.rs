//! `apusim sweep` (a grid of runs on every core, recorded into a results database) and
//! `apusim results` (list, filter, export and pivot what a database holds).

use super::CacheArgs;
use anyhow::{Context, Result};
use apusim_sim::report::write_atomic;
use apusim_sweep::plot::{self, PlotKind};
use apusim_sweep::results::{self, MetricFilter, RunFilter};
use apusim_sweep::{job::ResolveOptions, runner, Spec, Store, SweepOptions};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct SweepArgs {
    /// The sweep specification (TOML): shared settings, `[grid]` axes, `[[point]]`s.
    spec: PathBuf,
    /// The results database (SQLite; created when missing). Runs it already holds are
    /// skipped, so a stopped sweep continues where it stopped.
    #[arg(long, default_value = "results.sqlite")]
    db: PathBuf,
    /// Runs at once (default: every core).
    #[arg(short = 'j', long = "jobs", value_parser = crate::at_least_one)]
    jobs: Option<usize>,
    /// Print the points the spec expands to (with their keys and whether the database holds
    /// them) and run nothing.
    #[arg(long)]
    print_spec: bool,
    #[command(flatten)]
    cache: CacheArgs,
}

pub fn sweep(a: SweepArgs) -> Result<()> {
    let spec = Spec::load(&a.spec)?;
    let resolve = ResolveOptions {
        cache_dir: a.cache.dir(),
    };
    // Every point is resolved (and a bad one refused) before the database is touched.
    let jobs = runner::resolve_all(&spec, &resolve)?;
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
    runner::check(&s, &a.db)
}

#[derive(Args)]
pub struct ResultsArgs {
    /// The results database.
    db: PathBuf,
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
    let store = Store::open_existing(&a.db)?;
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
            plot::write(path, &p, kind, &what)?;
            eprintln!("wrote {}", path.display());
        }
        if let Some(path) = &a.csv {
            write_atomic(path, p.to_csv().as_bytes())?;
            eprintln!("wrote {}", path.display());
        }
        if let Some(path) = &a.json {
            write_atomic(path, results::to_json(&runs, &rows)?.as_bytes())?;
            eprintln!("wrote {}", path.display());
        }
        return Ok(());
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
    println!("{} runs in {}", runs.len(), a.db.display());
    if let Some(path) = &a.csv {
        write_atomic(path, results::to_csv(&runs, &rows).as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = &a.json {
        write_atomic(path, results::to_json(&runs, &rows)?.as_bytes())?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
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
        opts.limit,
        &opts.study,
        results,
        std::time::SystemTime::now(),
    )?;
    eprintln!(
        "recorded {} runs in {}",
        results.len(),
        store.path().display()
    );
    Ok(())
}

/// Record `apusim sim`'s results when `--db` was given; `extra` are the options beyond
/// warm-up, instructions and the study switches that shaped them.
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
        &opts.study,
        extra,
        results,
        std::time::SystemTime::now(),
    )?;
    eprintln!(
        "recorded {} runs in {}",
        results.len(),
        store.path().display()
    );
    Ok(())
}
