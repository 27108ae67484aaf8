//! Errors of the timing engine.

use apusim_registry::RegistryError;

#[derive(Debug, thiserror::Error)]
pub enum TimingError {
    /// A configuration value that cannot work (names the key where it can).
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Trace(#[from] apusim_trace::TraceError),
    /// No component can make progress while requests are outstanding.
    #[error("deadlock: {0}")]
    Deadlock(String),
}
