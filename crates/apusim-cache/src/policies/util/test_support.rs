//! Helpers shared by the policies' unit tests: small caches and contexts, canonical accesses,
//! and what one access did.

use crate::{Cache, Geometry, Outcome, Policy, PolicyContext, WritePolicy};
use apusim_trace::{Access, Agent, Op, Stream};

pub const LINE: u64 = 64;

pub fn geometry(sets: usize, ways: usize) -> Geometry {
    Geometry::new((sets * ways) as u64 * LINE, ways as u32, LINE as u32)
}
pub fn ctx(sets: usize, ways: usize) -> PolicyContext {
    PolicyContext::for_geometry(&geometry(sets, ways))
}
/// A write-back, write-allocate cache of `sets` x `ways` 64-byte lines, not inclusive.
pub fn cache<P: Policy>(sets: usize, ways: usize, p: P) -> Cache<P> {
    Cache::new(geometry(sets, ways), WritePolicy::default(), false, p).unwrap()
}
/// Build `P` for `sets` x `ways` and put it in a cache.
pub fn cache_of<P: Policy>(sets: usize, ways: usize) -> Cache<P> {
    cache(sets, ways, P::build(&ctx(sets, ways)).unwrap())
}
pub fn cpu_read(line: u64) -> Access {
    Access::new(Agent::cpu(0), Stream::CpuData, Op::Read, line * LINE, 8)
}
pub fn gpu(stream: Stream, op: Op, line: u64) -> Access {
    Access::new(Agent::GPU, stream, op, line * LINE, 64)
}
/// What one access did: `Hit`, `Fill(None)`, `Fill(Some(evicted line))` or `Bypass`.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Did {
    Hit,
    Fill(Option<u64>),
    Bypass,
}
pub fn run<P: Policy>(c: &mut Cache<P>, a: &Access) -> Did {
    match c.access(a).unwrap() {
        Outcome::Hit { .. } => Did::Hit,
        Outcome::Miss {
            filled: true,
            evicted,
            ..
        } => Did::Fill(evicted.map(|e| e.line)),
        Outcome::Miss { .. } => Did::Bypass,
    }
}
