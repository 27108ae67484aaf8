//! The crate's error type. Every error that comes from input names where the input came from:
//! trace errors carry the file and the 1-based line number, configuration errors the key.

use std::path::PathBuf;

/// Everything that can go wrong when building a DRAM model or running a trace through it.
#[derive(Debug, thiserror::Error)]
pub enum DramError {
    /// A trace line could not be parsed (or breaks an ordering rule).
    #[error("{}:{line}: {msg}", file.display())]
    Parse {
        file: PathBuf,
        /// 1-based line number.
        line: usize,
        msg: String,
    },
    /// A request handed to [`crate::run_requests`] directly is out of range.
    #[error("request {id}: {msg}")]
    BadRequest { id: u64, msg: String },
    /// Reading or writing a file failed.
    #[error("{}: {err}", path.display())]
    Io {
        path: PathBuf,
        /// Shown in the message itself, so not chained as a source (no doubled text).
        err: std::io::Error,
    },
    /// The timing parameters are impossible (e.g. `tRC < tRAS + tRP`).
    #[error("invalid timing set for `{spec}`: {msg}")]
    InvalidTiming { spec: String, msg: String },
    /// The organization or controller configuration is unusable.
    #[error("invalid DRAM configuration: {0}")]
    InvalidConfig(String),
    /// `--preset NAME` names no preset.
    #[error("unknown DRAM preset `{name}` (known: {known})")]
    UnknownPreset { name: String, known: String },
    /// A scheduler name that is not registered (the message names the nearest one).
    #[error("{0}")]
    UnknownScheduler(Box<apusim_registry::RegistryError>),
    /// Scheduler parameters the scheduler does not take, of the wrong type or out of range.
    #[error("memory scheduler `{scheduler}`: {err}")]
    SchedulerParams {
        scheduler: String,
        err: Box<apusim_registry::RegistryError>,
    },
    /// An address-mapping name that is neither registered nor a field order (the message
    /// names the nearest registered one).
    #[error(
        "unknown address mapping `{name}`{} (known: {known})",
        suggest(nearest)
    )]
    UnknownMapping {
        name: String,
        nearest: Option<String>,
        known: String,
    },
    /// A `key=value` override that names no setting or carries a bad value.
    #[error("bad override `{key}={value}`: {msg}")]
    BadOverride {
        key: String,
        value: String,
        msg: String,
    },
    /// A trace file holds no request (only blank or comment lines, or nothing).
    #[error("{}: the trace holds no requests, so there is nothing to simulate", path.display())]
    EmptyTrace { path: PathBuf },
    /// A configuration file (TOML) could not be understood.
    #[error("{}: {msg}", path.display())]
    ConfigFile { path: PathBuf, msg: String },
}

impl DramError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        DramError::Io {
            path: path.into(),
            err: source,
        }
    }
}

/// ` (did you mean `NAME`?)` for a nearest name, nothing otherwise.
fn suggest(nearest: &Option<String>) -> String {
    match nearest {
        Some(n) => format!(" (did you mean `{n}`?)"),
        None => String::new(),
    }
}
