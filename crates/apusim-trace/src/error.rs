//! Errors of trace reading and writing. Every variant names where the problem is.

use std::path::PathBuf;

pub type Result<T> = std::result::Result<T, TraceError>;

#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The operating system refused a read or write.
    #[error("{path}: {err}")]
    Io {
        path: PathBuf,
        /// Shown in the message itself, so not chained as a source (no doubled text).
        err: std::io::Error,
    },
    /// A binary file is malformed at a byte offset.
    #[error("{path}: byte offset {offset}: {msg}")]
    Format {
        path: PathBuf,
        offset: u64,
        msg: String,
    },
    /// A text file is malformed on a line (1-based).
    #[error("{path}:{line}: {msg}")]
    Parse {
        path: PathBuf,
        line: u64,
        msg: String,
    },
    /// Anything else, e.g. an external program that failed.
    #[error("{0}")]
    Other(String),
}

impl TraceError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> TraceError {
        TraceError::Io {
            path: path.into(),
            err: source,
        }
    }
    pub fn format(path: impl Into<PathBuf>, offset: u64, msg: impl Into<String>) -> TraceError {
        TraceError::Format {
            path: path.into(),
            offset,
            msg: msg.into(),
        }
    }
    pub fn parse(path: impl Into<PathBuf>, line: u64, msg: impl Into<String>) -> TraceError {
        TraceError::Parse {
            path: path.into(),
            line,
            msg: msg.into(),
        }
    }
}
