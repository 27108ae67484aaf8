//! The native half of the `apusim` Python package (`apusim._native`).
//!
//! Every function here calls the same library entry points as the command line, so a Python
//! run gives the numbers `apusim run`, `apusim sim`, `apusim sweep`, `apusim study` and
//! `apusim results` give:
//!
//! - [`run()`] and [`sim()`] load a [`apusim_sim::SystemConfig`] from a preset or TOML file with
//!   `set` overrides, open the inputs (trace files, a named mix or a rendered scene, as
//!   [`apusim_sim::Inputs`]) and call [`apusim_sim::run_policies`] or
//!   [`apusim_sim::timed::sim_policy`]; their results become long-format
//!   [`apusim_sweep::Metric`] rows through [`apusim_sweep::metrics`], the rows a sweep stores.
//! - [`sweep()`] resolves a [`apusim_sweep::Spec`] and runs it into a
//!   [`apusim_sweep::Store`]; [`results()`] reads a store back through
//!   [`apusim_sweep::results`], each metric row joined with its run's parameters.
//! - [`study()`] runs one of the papers' figures by its command-line name and returns the
//!   [`apusim_experiments::StudyOutput`] records.
//! - [`TraceReader`] and [`TraceWriter`] stream [`apusim_trace::Access`] records to and from
//!   packed little-endian bytes whose layout is [`RECORD_FIELDS`], which the Python layer
//!   views as a numpy structured array without copying.
//!
//! Tables cross into Python as columns: a dict of column name to list, which the pure-Python
//! layer (`python/apusim/__init__.py`) turns into pandas DataFrames, so this crate needs
//! neither pandas nor numpy. Simulations release the GIL. Every error becomes
//! `apusim.ApusimError` (a `ValueError`) carrying the message the command line prints after
//! `error: `; a panic becomes pyo3's `PanicException`, never an abort.

mod figures;
mod runs;
mod store;
mod trace;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

pub use figures::{studies, study};
pub use runs::{run, sim};
pub use store::{results, sweep};
pub use trace::{TraceReader, TraceWriter, RECORD_FIELDS};

create_exception!(
    _native,
    ApusimError,
    PyValueError,
    "An apusim error: bad input, a configuration the simulator refuses, or a failed run. Its \
     message is the one the command line prints."
);

/// An anyhow error as a Python exception, with its whole chain of causes (`{:#}`, as the
/// command line prints it).
pub(crate) fn py_err(e: anyhow::Error) -> PyErr {
    ApusimError::new_err(format!("{e:#}"))
}

/// Name the simulator build after the extension module file at `path` (its length and
/// modification time), so cached alone runs of another build of the package are not reused:
/// the running executable, which identifies the build for the command line, is the Python
/// interpreter here.
#[pyfunction]
fn _set_build_id(path: &str) -> PyResult<()> {
    let m = std::fs::metadata(path).map_err(|e| ApusimError::new_err(format!("{path}: {e}")))?;
    let mtime = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    apusim_sim::timed::speedup::set_build_id(format!(
        "{} python:{}:{mtime}",
        env!("CARGO_PKG_VERSION"),
        m.len()
    ));
    Ok(())
}

/// The LLC policies: (name, description, source) per registered policy.
#[pyfunction]
fn policies() -> Vec<(String, String, String)> {
    apusim_cache::policies::REGISTRY
        .iter()
        .map(|p| (p.name.into(), p.description.into(), p.paper.into()))
        .collect()
}

/// The built-in system presets: (name, description).
#[pyfunction]
fn presets() -> PyResult<Vec<(String, String)>> {
    apusim_sim::config::PRESETS
        .iter()
        .map(|(n, _)| {
            let cfg = apusim_sim::SystemConfig::preset(n).map_err(py_err)?;
            Ok((n.to_string(), cfg.description))
        })
        .collect()
}

/// The workload mixes' names, in the order `apusim mixes` lists them.
#[pyfunction]
fn mixes() -> Vec<String> {
    apusim_workloads::mixes::MIXES
        .iter()
        .map(|m| m.name.clone())
        .collect()
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ApusimError", m.py().get_type::<ApusimError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("RECORD_FIELDS", RECORD_FIELDS.to_vec())?;
    m.add(
        "STREAMS",
        apusim_trace::Stream::ALL
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>(),
    )?;
    m.add(
        "OPS",
        apusim_trace::Op::ALL
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>(),
    )?;
    m.add_function(wrap_pyfunction!(_set_build_id, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(mixes, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(sim, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(results, m)?)?;
    m.add_function(wrap_pyfunction!(study, m)?)?;
    m.add_function(wrap_pyfunction!(studies, m)?)?;
    m.add_class::<TraceReader>()?;
    m.add_class::<TraceWriter>()?;
    Ok(())
}
