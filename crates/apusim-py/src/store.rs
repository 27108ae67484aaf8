//! `sweep` (`apusim sweep`) and `results` (`apusim results`): the results database's metric
//! rows, each joined with its run's key and parameters.

use crate::py_err;
use anyhow::Result;
use apusim_sweep::results::{self as db_query, MetricFilter, RunFilter};
use apusim_sweep::{job::ResolveOptions, runner, Metric, Spec, Store, SweepOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::{Path, PathBuf};

/// The rows of a query: each metric row with its run's identity and parameters.
struct Rows {
    /// Parameter names of the runs, sorted (without `key`).
    params: Vec<String>,
    /// Per row: key, sweep, command, status, parameter values (JSON, `Null` when the run
    /// lacks one), the metric.
    rows: Vec<RowOf>,
}

struct RowOf {
    key: String,
    params: Vec<serde_json::Value>,
    metric: Metric,
}

/// A parameter of a run as JSON: `key`, `sweep`, `command` and `status` come from the run
/// record, the others from its parameters.
fn param_value(run: &apusim_sweep::store::StoredRun, name: &str) -> serde_json::Value {
    use serde_json::Value;
    match name {
        "sweep" => run.run.sweep.clone().map_or(Value::Null, Value::String),
        "command" => Value::String(run.run.command.clone()),
        "status" => Value::String(run.run.status.clone()),
        _ => run.run.params.get(name).cloned().unwrap_or(Value::Null),
    }
}

fn query(db: &Path, filter: &RunFilter, mf: &MetricFilter) -> Result<Rows> {
    let store = Store::open_existing(db)?;
    let runs = db_query::runs(&store, filter)?;
    let params: Vec<String> = db_query::param_names(&runs)
        .into_iter()
        .filter(|n| n != "key")
        .collect();
    let rows = db_query::rows(&store, &runs, mf)?
        .into_iter()
        .map(|(r, metric)| RowOf {
            key: r.run.key.clone(),
            params: params.iter().map(|n| param_value(r, n)).collect(),
            metric,
        })
        .collect();
    Ok(Rows { params, rows })
}

/// A JSON value as a Python object: numbers, strings, booleans and `None` as themselves;
/// lists and tables as their JSON text, so every cell of a column is a scalar.
fn py_value<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        other => other.to_string().into_pyobject(py)?.into_any(),
    })
}

fn columns<'py>(py: Python<'py>, r: &Rows) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item(
        "key",
        r.rows.iter().map(|x| x.key.as_str()).collect::<Vec<_>>(),
    )?;
    for (i, name) in r.params.iter().enumerate() {
        let col = PyList::empty(py);
        for x in &r.rows {
            col.append(py_value(py, &x.params[i])?)?;
        }
        d.set_item(name, col)?;
    }
    let m = |f: fn(&Metric) -> &str| r.rows.iter().map(|x| f(&x.metric)).collect::<Vec<_>>();
    d.set_item("agent", m(|x| &x.agent))?;
    d.set_item("level", m(|x| &x.level))?;
    d.set_item("stream", m(|x| &x.stream))?;
    d.set_item("metric", m(|x| &x.metric))?;
    d.set_item(
        "value",
        r.rows.iter().map(|x| x.metric.value).collect::<Vec<_>>(),
    )?;
    Ok(d)
}

/// The metric rows of a results database (`apusim results DB --csv`): columns `key`, every
/// parameter of the runs, then `agent, level, stream, metric, value`; filtered as `--sweep`,
/// `--where`, `--status`, `--metric`, `--level`, `--agent` and `--stream` filter them.
#[pyfunction]
#[pyo3(signature = (
    db, *, sweep = None, r#where = Vec::new(), status = None, metric = None, level = None,
    agent = None, stream = None
))]
#[allow(clippy::too_many_arguments)]
pub fn results<'py>(
    py: Python<'py>,
    db: PathBuf,
    sweep: Option<String>,
    r#where: Vec<String>,
    status: Option<String>,
    metric: Option<String>,
    level: Option<String>,
    agent: Option<String>,
    stream: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let rows = py
        .detach(|| -> Result<Rows> {
            if let Some(s) = status.as_deref().filter(|s| !["ok", "failed"].contains(s)) {
                anyhow::bail!(
                    "invalid value '{s}' for '--status <STATUS>' (possible values: ok, failed)"
                );
            }
            let filter = RunFilter {
                sweep,
                status,
                params: db_query::parse_filters(&r#where)?,
            };
            let mf = MetricFilter {
                metric,
                level,
                agent,
                stream,
            };
            query(&db, &filter, &mf)
        })
        .map_err(py_err)?;
    columns(py, &rows)
}

/// Run a sweep spec into a results database (`apusim sweep SPEC --db DB`), skipping the runs
/// it already holds, and return the sweep's metric rows as [`results()`] does. A sweep some of
/// whose runs failed raises after recording them (their errors: `results(db,
/// status="failed")`).
#[pyfunction]
#[pyo3(signature = (spec, *, db = PathBuf::from("results.sqlite"), jobs = None, cache_dir = None, no_cache = false))]
pub fn sweep<'py>(
    py: Python<'py>,
    spec: PathBuf,
    db: PathBuf,
    jobs: Option<usize>,
    cache_dir: Option<PathBuf>,
    no_cache: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let rows = py
        .detach(|| -> Result<Rows> {
            if jobs == Some(0) {
                anyhow::bail!("jobs must be at least 1");
            }
            if no_cache && cache_dir.is_some() {
                anyhow::bail!("no_cache and cache_dir cannot be given together");
            }
            let spec = Spec::load(&spec)?;
            let resolve = ResolveOptions {
                cache_dir: if no_cache {
                    None
                } else {
                    cache_dir.or_else(apusim_experiments::jobs::default_cache_dir)
                },
            };
            // Every point is resolved (and a bad one refused) before the database is touched.
            let resolved = runner::resolve_all(&spec, &resolve)?;
            let mut store = Store::open(&db)?;
            let opts = SweepOptions {
                threads: jobs,
                progress: false,
                resolve,
            };
            let s = runner::run_jobs(&spec.name, &resolved, &mut store, &opts)?;
            drop(store);
            runner::check(&s, &db)?;
            let filter = RunFilter {
                sweep: Some(spec.name.clone()),
                ..RunFilter::default()
            };
            query(&db, &filter, &MetricFilter::default())
        })
        .map_err(py_err)?;
    columns(py, &rows)
}
