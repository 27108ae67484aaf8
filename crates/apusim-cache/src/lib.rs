//! The cache engine of apusim and its replacement policies.
//!
//! A [`Cache`] is a set-associative array of lines (tags plus engine metadata: filling agent,
//! stream, dirty/reused/CPU-touched bits) that is generic over a [`Policy`]. The engine does
//! what every policy shares — lookup, invalid-way-first filling, write-back/write-through and
//! write-allocate rules, dirty tracking, CPU-inclusion enforcement, counters — and calls the
//! policy's hooks (hit, miss → allocate/bypass, victim, evict, fill, feedback) for everything
//! a policy decides. Because the engine is generic, the policy is chosen once per run:
//! [`policies::build`] maps a policy name to a concrete type and hands it to a
//! [`policies::PolicyVisitor`], which instantiates the caller's simulation loop for exactly that
//! type. [`BoxedPolicy`] is the other way: any built policy behind a pointer, one type for
//! callers whose cost per access lies elsewhere (the timed engine).
//!
//! The set searches are branch-free SIMD code in `simd.rs` ([`first_match`] for a tag,
//! [`max_way`] for the largest value of a set, used by the oracle's OPT victim), and arrays of
//! sets start on 64-byte host cache lines ([`LineWords`]) so that a prefetched set is whole.
//!
//! Sets with many ways ([`SetLayout`], chosen once per cache by associativity) keep
//! structures whose cost per access does not grow with the ways: the engine a hash index
//! line → way ([`LineIndex`], prefetchable a few requests ahead) and a bit set of invalid ways
//! ([`WayBits`]), LRU a recency queue per set, the RRIP family buckets per RRPV value with an
//! aging offset. [`FaLru`] is a separate
//! fully-associative true-LRU cache with a hash index and a recency list, kept as the
//! reference the engine's wide `lru` sets are tested against.
//!
//! Policies live one per file in [`policies`]; shared building blocks (saturating counters,
//! set sampling, set dueling) in [`policies::util`]. A [`PolicyContext`] carries the geometry,
//! the number of agents, the seed and named parameters into a policy's constructor; a
//! [`Feedback`] carries run-time signals from a timing model into a running policy.

mod aligned;
pub mod boxed;
pub mod cache;
mod counts;
mod error;
pub mod falru;
mod geometry;
mod hostprefetch;
pub mod lineindex;
pub mod params;
pub mod policies;
pub mod policy;
mod simd;
mod tagword;
pub mod wayset;

pub use aligned::LineWords;
pub use boxed::BoxedPolicy;
pub use cache::{Cache, CacheCounters, Outcome, WritePolicy};
pub use counts::Counts;
pub use error::CacheError;
pub use falru::FaLru;
pub use geometry::{parse_size, Geometry};
pub use lineindex::LineIndex;
pub use params::{ParamKind, ParamList, ParamSpec};
pub use policy::{
    Evicted, Feedback, LineMeta, MissAction, Policy, PolicyContext, PolicyStat, SetView,
};
pub use simd::{first_match, max_way};
pub use wayset::{SetLayout, WayBits};
