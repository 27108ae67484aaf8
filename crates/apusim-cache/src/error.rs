//! Errors of cache construction and operation.

use apusim_trace::Agent;

#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum CacheError {
    /// An impossible cache geometry.
    #[error("impossible cache geometry {0}")]
    Geometry(String),
    /// A bad policy name, parameter or configuration value.
    #[error("{0}")]
    Config(String),
    /// A policy asked to bypass a CPU line in a level that keeps CPU lines inclusive.
    #[error(
        "policy bypassed a CPU line (address {addr:#x}, {agent}) in a CPU-inclusive cache: \
         that would break inclusion; CPU misses must allocate"
    )]
    InclusionViolation { addr: u64, agent: Agent },
    /// An address whose line address exceeds what a cache can tag.
    #[error("address {addr:#x} is beyond the 2^48 lines a cache can hold")]
    AddressTooLarge { addr: u64 },
    /// A policy returned a way outside the set.
    #[error("policy chose victim way {way} in a {ways}-way set")]
    BadVictim { way: usize, ways: usize },
}
