//! Shared building blocks of the policies: saturating counters, a deterministic RNG, RRIP
//! victim selection, set sampling and set dueling (global and per agent). The heterogeneous
//! baseline's write rules built from them are [`super::hetero_writes::HeteroWrites`].
//!
//! One building block per file: `counters`, `rng` (SplitMix64), `rrip` (victim selection and
//! bimodal insertion), `dueling` (set sampling and selectors) and `recency` (the LRU order of
//! wide sets); all are re-exported here, as is [`prefetch`], the host prefetch hint the engine
//! and the policies share.

mod counters;
mod dueling;
mod recency;
mod rng;
mod rrip;
#[cfg(test)]
mod tests;

/// Helpers shared by the policies' unit tests.
#[cfg(test)]
pub(crate) mod test_support;

pub use crate::hostprefetch::prefetch;
pub use counters::{sat_dec, sat_inc, SatCounter};
pub use dueling::{
    agent_slot, is_demand, slot_name, AgentBimodalDuel, AgentDuel, Psel, SetDuel, SetSampler,
    PSEL_BITS,
};
pub use recency::RecencyQueue;
pub use rng::SplitMix64;
pub use rrip::{
    rrip_victim, rrip_victim_max, Bimodal, RrpvTable, BRRIP_THROTTLE, RRPV_LONG, RRPV_MAX,
};
