//! Errors of the oracle studies. Every variant says what is wrong with the input or the run.

use apusim_cache::CacheError;
use apusim_trace::TraceError;
use std::path::PathBuf;

pub type Result<T> = std::result::Result<T, OracleError>;

#[derive(Debug, thiserror::Error)]
pub enum OracleError {
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The cache could not be built or refused an access (bad geometry, unknown policy,
    /// address beyond the tag range, ...).
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// A temporary (spill) file could not be created, written or read.
    #[error("oracle spill file in {dir}: {source}")]
    Spill {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The trace holds no accesses at all.
    #[error("the trace holds no accesses: an oracle study needs at least one")]
    EmptyTrace,
    /// The study needs read accesses and the trace has none.
    #[error("the trace holds no read accesses: {0} needs reads (hit rates, texture consumption)")]
    NoReads(&'static str),
    /// The source handed out a different stream on the replay than on the next-use pass.
    #[error(
        "the trace changed between the next-use pass and the replay ({0}); \
         an oracle needs the same stream twice"
    )]
    TraceChanged(String),
    /// The next uses were computed for another line size than the cache's.
    #[error(
        "next uses were computed for {computed}-byte lines but the cache has {cache}-byte lines"
    )]
    LineSize { computed: u32, cache: u32 },
    /// A policy name that names no oracle policy and no registered policy.
    #[error("{0}")]
    Policy(String),
}
