//! Parameter sweeps of apusim runs on every core, and the results database they record into.
//!
//! A [`Spec`] is a TOML file: settings shared by every point (mode, preset, policy, mix or
//! traces, run lengths, `set` overrides), `[grid]` axes whose every combination is a point,
//! and `[[point]]`s crossed with the grid ([`spec`] has the format). [`Spec::points`] expands
//! it into [`Point`]s, and [`job::resolve`] turns each into a [`Job`]: the configuration
//! loaded with the overrides, the policy and inputs checked, and the run's key computed —
//! a 128-bit hash of the complete resolved configuration, the mode, the policy, the options
//! that shape the results and the identities of the inputs ([`key::run_key`]). Every point is
//! resolved, and duplicates refused, before anything runs; every error names the spec's line.
//!
//! [`runner::run`] runs the jobs whose keys the [`Store`] does not hold yet on a rayon pool,
//! calling the same library entry points as `apusim run` and `apusim sim`
//! (`apusim_sim::run_policy`, `apusim_sim::timed::sim_policy`), and records each run with its
//! [`Metric`] rows in one SQLite transaction as it finishes: a killed sweep loses only the runs
//! in flight, and running it again completes the rest. A run's metric rows depend only on its
//! job, so a sweep's database holds the same rows whatever the number of threads.
//!
//! [`results`] reads a database back: runs filtered by parameter, metric rows as CSV or JSON,
//! and [`results::Pivot`] tables normalized to a baseline with a geometric mean over the rows,
//! which [`plot`] draws as grouped bars or as lines over a swept parameter (SVG).
//! [`record_functional`] and [`record_timed`] record the runs of `apusim run --db` and
//! `apusim sim --db` under the same keys as a sweep's.
//!
//! On a cluster a sweep is a SLURM job array ([`slurm`]). A [`slurm::Shard`] `I/N` selects a
//! deterministic slice of the resolved jobs: their keys sorted, every `N`-th from the `I`-th,
//! so the `N` slices partition the sweep whatever order its points are listed in, and every
//! task computes its own slice from the spec with no list of keys passed around. A
//! [`slurm::BatchJob`] is the batch script (`#SBATCH --array=0-(N-1)`) whose task `I` runs the
//! same apusim executable on slice `I/N` into its own shard database: one writer per SQLite
//! file, so no database is shared between nodes (SQLite's locking and WAL do not work across
//! network file systems). A killed task's shard keeps its finished runs, and resubmitting runs
//! the rest. [`merge`] then folds shards into one database: each shard is checked whole first
//! (SQLite integrity, schema version, tables, consistent rows) and a bad one is reported by
//! name and skipped; a good one is copied in one transaction by `INSERT ... SELECT` over the
//! attached file, adding only the keys the database does not hold (or holds as failed), so
//! merging is idempotent and a merged database holds the same runs and metric rows as one
//! local sweep of the spec.

pub mod job;
pub mod key;
pub mod merge;
pub mod metrics;
pub mod plot;
pub mod results;
pub mod runner;
pub mod slurm;
pub mod spec;
pub mod store;
pub mod study_runs;

pub use job::Job;
pub use metrics::Metric;
pub use runner::{run, SweepOptions, SweepSummary};
pub use spec::{Mode, Point, Spec, SpecError};
pub use store::{RunRecord, Store};

use anyhow::Result;
use apusim_sim::timed::SimResult;
use apusim_sim::{Inputs, LlcSwitches, RunOptions, RunResult, SystemConfig};
use serde_json::{json, Value};
use std::time::SystemTime;

/// The parameters of a run from the command line (`apusim run`/`sim`), as a sweep records
/// them.
fn command_params(
    mode: Mode,
    cfg: &SystemConfig,
    policy: &str,
    inputs: &dyn Inputs,
    options: &Value,
) -> Value {
    let mut p = serde_json::Map::new();
    p.insert("mode".into(), json!(mode.name()));
    p.insert("preset".into(), json!(cfg.name));
    p.insert("policy".into(), json!(policy));
    p.insert("inputs".into(), json!(inputs.describe()));
    if let Value::Object(o) = options {
        for (k, v) in o {
            if !v.is_null() {
                p.insert(k.clone(), v.clone());
            }
        }
    }
    p.insert("seed".into(), json!(cfg.seed));
    Value::Object(p)
}

/// What one recorded run is: the command that made it (`run`, `sim`, `study`), the study it
/// belongs to, its mode and LLC policy.
pub(crate) struct Made<'a> {
    pub command: &'a str,
    pub study: Option<&'a str>,
    pub mode: Mode,
    pub policy: &'a str,
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn record_one(
    store: &mut Store,
    made: Made<'_>,
    cfg: &SystemConfig,
    inputs: &dyn Inputs,
    options: &Value,
    times: (SystemTime, SystemTime),
    metrics: &[Metric],
    result: Option<(&str, &[u8])>,
) -> Result<()> {
    let Made {
        command,
        study,
        mode,
        policy,
    } = made;
    let ids = key::input_ids(inputs);
    let key = key::run_key(mode, cfg, policy, options, &ids)?;
    let mut cfg = cfg.clone();
    cfg.llc.policy = policy.to_string();
    let record = RunRecord::new(
        key,
        study.map(|s| format!("study {s}")),
        command,
        mode.name(),
        command_params(mode, &cfg, policy, inputs, options),
        serde_json::to_value(&cfg)?,
        ids,
        times,
        Ok(()),
    );
    store.record_with(&record, metrics, result)
}

/// Record the functional runs of `apusim run` (one per policy), each with its whole result
/// (`apusim_sim::stored`): the key is a sweep's for the same configuration, policy, access
/// limit, drp §3 continuation and inputs; LLC switches are part of it.
pub fn record_functional(
    store: &mut Store,
    cfg: &SystemConfig,
    inputs: &dyn Inputs,
    opts: &RunOptions,
    results: &[RunResult],
    finished: SystemTime,
) -> Result<()> {
    let options = key::functional_run_options(opts);
    for r in results {
        let m = metrics::functional(r);
        let started = finished - std::time::Duration::from_secs_f64(r.seconds.max(0.0));
        let run = Made {
            command: "run",
            study: None,
            mode: Mode::Functional,
            policy: &r.policy,
        };
        let bytes = apusim_sim::stored::encode(r)?;
        let whole = Some((apusim_sim::stored::FORMAT, bytes.as_slice()));
        let times = (started, finished);
        record_one(store, run, cfg, inputs, &options, times, &m, whole)?;
    }
    Ok(())
}

/// Record the timed runs of `apusim sim` (one per policy). `extra` holds the options beyond
/// warm-up, instructions and the LLC switches that shape the results (sampling, target
/// error, the alone runs' policy); a sweep's key is the same when it is empty and the
/// switches are off.
#[allow(clippy::too_many_arguments)]
pub fn record_timed(
    store: &mut Store,
    cfg: &SystemConfig,
    inputs: &dyn Inputs,
    warmup: u64,
    instructions: Option<u64>,
    switches: &LlcSwitches,
    extra: &[(&str, Value)],
    results: &[SimResult],
    finished: SystemTime,
) -> Result<()> {
    let mut options = key::timed_options(warmup, instructions);
    key::with_llc_switches(&mut options, switches);
    for (k, v) in extra {
        options[*k] = v.clone();
    }
    for r in results {
        let m = metrics::timed(r);
        let started = finished - std::time::Duration::from_secs_f64(r.seconds.max(0.0));
        let run = Made {
            command: "sim",
            study: None,
            mode: Mode::Timed,
            policy: &r.policy,
        };
        let times = (started, finished);
        let bytes = apusim_sim::timed::stored::encode(r)?;
        let whole = Some((apusim_sim::timed::stored::FORMAT, bytes.as_slice()));
        record_one(store, run, cfg, inputs, &options, times, &m, whole)?;
    }
    Ok(())
}
