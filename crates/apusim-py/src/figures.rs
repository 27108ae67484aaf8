//! `study`: every `apusim study NAME`, through the registry of studies
//! (`apusim_experiments::studies`), with the command's options and defaults, returning the
//! study's long-format records.

use crate::py_err;
use anyhow::{bail, Result};
use apusim_experiments::studies::{self as registry, OptionKind, OptionValue, Study, StudyArgs};
use apusim_sim::run::in_pool;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};
use std::path::PathBuf;

/// The family options of `kwargs` for `study`, converted by their declared kinds;
/// `None` and `False` are options not given.
fn given(study: &Study, kwargs: Option<&Bound<'_, PyDict>>) -> Result<Vec<(String, OptionValue)>> {
    let mut given = Vec::new();
    let Some(kwargs) = kwargs else {
        return Ok(given);
    };
    let mut named = Vec::new();
    for (k, v) in kwargs.iter() {
        let k: String = k.extract().map_err(anyhow::Error::from)?;
        let unset = v.is_none() || (v.is_instance_of::<PyBool>() && !v.extract::<bool>()?);
        if !unset {
            named.push((k, v));
        }
    }
    study.check_names(named.iter().map(|(k, _)| k.as_str()))?;
    for (k, v) in named {
        let Some(spec) = study.options().iter().find(|o| o.name == k) else {
            continue;
        };
        let value = match spec.kind {
            OptionKind::Int { .. } => v.extract::<u64>().map(OptionValue::Int),
            OptionKind::List => v.extract::<Vec<String>>().map(OptionValue::List),
            OptionKind::Flag => v.extract::<bool>().map(OptionValue::Flag),
            OptionKind::Path => v.extract::<PathBuf>().map(OptionValue::Path),
            OptionKind::Frames => crate::runs::frames_arg(Some(&v))
                .map(OptionValue::Frames)
                .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string())),
        };
        match value {
            Ok(value) => given.push((k, value)),
            Err(e) => bail!("{k}: {e}"),
        }
    }
    Ok(given)
}

/// Run the study `name` (`apusim study NAME`, e.g. `gspc-fig12`, `drp-fig13`, `drp-fig1`)
/// with the command's options: the common `seed`, `set`, `threads`, `cache_dir`,
/// `no_cache`, `db` (a results database keeping the study's runs, as `--db`: a study run
/// again reads back what it holds), and by keyword the options of the study's family (gspc's `scenes`, `width`,
/// `height`, `frames`, `llc`, and `gspc-counters`' `every` and `counters`, a path; drp's functional `mixes`, `scale`, `limit`; the timed figures'
/// `mixes`, `scale`, `warmup`, `instructions`, `quick`). Returns `(columns, title, paper)`
/// where the columns are the long format `study, config, workload, policy, metric, value` of
/// `--csv`.
#[pyfunction]
#[pyo3(signature = (
    name, *, seed = None, set = Vec::new(), threads = None, cache_dir = None, no_cache = false,
    db = None, **options
))]
#[allow(clippy::too_many_arguments)]
pub fn study<'py>(
    py: Python<'py>,
    name: String,
    seed: Option<u64>,
    set: Vec<String>,
    threads: Option<usize>,
    cache_dir: Option<PathBuf>,
    no_cache: bool,
    db: Option<PathBuf>,
    options: Option<&Bound<'py, PyDict>>,
) -> PyResult<(Bound<'py, PyDict>, String, String)> {
    let study = registry::find(&name).map_err(|e| py_err(e.into()))?;
    if no_cache && cache_dir.is_some() {
        return Err(py_err(anyhow::anyhow!(
            "no_cache and cache_dir cannot be given together"
        )));
    }
    let mut args = StudyArgs {
        seed: seed.unwrap_or(registry::DEFAULT_SEED),
        overrides: set,
        cache: registry::cache_dir(cache_dir, no_cache),
        given: given(study, options).map_err(py_err)?,
        runs: Default::default(),
    };
    if let Some(path) = &db {
        apusim_sweep::study_runs::attach(study, &mut args, path).map_err(py_err)?;
    }
    let out = py
        .detach(|| in_pool(threads, || study.run(&args)))
        .map_err(py_err)?;
    let d = PyDict::new(py);
    let col =
        |f: fn(&apusim_experiments::Record) -> &str| out.records.iter().map(f).collect::<Vec<_>>();
    d.set_item("study", vec![out.study.as_str(); out.records.len()])?;
    d.set_item("config", col(|r| &r.config))?;
    d.set_item("workload", col(|r| &r.workload))?;
    d.set_item("policy", col(|r| &r.policy))?;
    d.set_item("metric", col(|r| &r.metric))?;
    d.set_item(
        "value",
        out.records.iter().map(|r| r.value).collect::<Vec<_>>(),
    )?;
    Ok((d, out.title.clone(), out.paper.clone()))
}

/// The names of the studies, in `apusim study --help` order.
#[pyfunction]
pub fn studies() -> Vec<&'static str> {
    registry::STUDIES.iter().map(|s| s.name).collect()
}
