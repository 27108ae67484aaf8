//! `lru` on a fully-associative cache with wide sets (hundreds of thousands of ways), the
//! replay the registered policy gets when nothing wraps it: the same outcomes as the engine
//! ([`apusim_cache::Cache`] with [`apusim_cache::policies::lru::Lru`]), with about two host
//! cache lines touched per reference instead of five.
//!
//! A fully-associative cache needs no ways: the outcome of a reference names the evicted line,
//! never its way. So the hash index ([`LineIndex`]) is the whole cache: each slot holds the
//! line, its engine metadata (flags, stream, filling agent, in the engine's tag-word layout) and
//! its position in a queue of touches; a hit reads and writes that one slot. The recency order
//! is the queue with lazy deletion of [`apusim_cache::policies::util::RecencyQueue`], holding
//! line addresses instead of ways: the victim is the first queue entry whose line is resident
//! with that entry's position, and since the queue is read in order, the index slots of the
//! entries a few places ahead of its front are prefetched before they are checked. The index
//! slot of a reference itself is prefetched by the replay ([`RefSim::prefetch_early`], 16 references ahead).
//!
//! The engine keeps a tag array, a per-way recency position and the index, and the LRU queue of
//! ways; every hit there touches three random host lines and every miss about five.
//!
//! The heterogeneous baseline's GPU write rules (`llc.gpu_write_rules`, on in the `4c1g`
//! preset), which the registry wraps around `lru` as
//! [`apusim_cache::policies::hetero_writes::HeteroWrites`], keep deciding here: the cache asks
//! that same wrapper, around a [`Touch`] recorder instead of `lru`, whether a miss allocates
//! and whether a hit reaches the inner policy (promotes the line), so the rules and their
//! statistics are the wrapper's own code.

use crate::sim::RefSim;
use apusim_cache::policies::hetero_writes::HeteroWrites;
use apusim_cache::policies::lru::Lru;
use apusim_cache::policies::util::prefetch;
use apusim_cache::policies::wrapper::Wrapper;
use apusim_cache::{
    CacheError, Evicted, Geometry, LineIndex, LineMeta, MissAction, Outcome, Policy, PolicyContext,
    PolicyStat, SetLayout, SetView,
};
use apusim_trace::{Access, Agent};
use std::any::TypeId;

/// Engine metadata in the 16 high bits of a slot's first word: flags, stream, filling agent
/// (`apusim_cache::cache`'s tag word, shifted down by 48).
const STREAM_SHIFT: u32 = 4;
const AGENT_SHIFT: u32 = 8;

/// The key bits (line + 1) of a slot's first word.
const KEY: u64 = (1 << 48) - 1;

/// How many queue entries ahead of its front the victim search prefetches an index slot.
const AHEAD: u64 = 24;

const HIT: Outcome = Outcome::Hit {
    write_through: false,
};
const BYPASS: Outcome = Outcome::Miss {
    filled: false,
    bypassed: true,
    evicted: None,
};

/// Which rules around `lru` a replay of policy `P` on a cache of `g` may run [`QueueLru`]
/// with: `Some(false)` for `lru` itself, `Some(true)` for `lru` inside the heterogeneous
/// write rules, `None` for anything else or when `g` is not fully associative with wide sets.
pub(crate) fn serves<P: Policy>(g: &Geometry) -> Option<bool> {
    if g.sets() != 1 || !SetLayout::Auto.is_wide(g.ways as usize) {
        return None;
    }
    let p = TypeId::of::<P>();
    if p == TypeId::of::<Lru>() {
        Some(false)
    } else if p == TypeId::of::<HeteroWrites<Lru>>() {
        Some(true)
    } else {
        None
    }
}

/// The policy seat of [`QueueLru`]: it records whether its `on_hit` was called (a wrapper
/// around it passed the hit on, so `lru` would promote the line) and never bypasses; the
/// victims are the queue's.
pub struct Touch {
    touched: bool,
}

impl Policy for Touch {
    fn build(_ctx: &PolicyContext) -> Result<Self, CacheError> {
        Ok(Touch { touched: false })
    }
    #[inline]
    fn on_hit(&mut self, _set: usize, _way: usize, _req: &Access) {
        self.touched = true;
    }
    fn victim(&mut self, _set: usize, _req: &Access, _view: &SetView<'_>) -> usize {
        unreachable!("QueueLru chooses its victims itself")
    }
    #[inline]
    fn on_fill(&mut self, _set: usize, _way: usize, _req: &Access) {}
}

/// `lru` without rules around it: every hit promotes, every miss allocates.
pub struct NoRules(pub Touch);

impl Wrapper for NoRules {
    type Inner = Touch;
    fn inner(&self) -> &Touch {
        &self.0
    }
    fn inner_mut(&mut self) -> &mut Touch {
        &mut self.0
    }
    fn wrap(inner: Touch, _ctx: &PolicyContext) -> Result<Self, CacheError> {
        Ok(NoRules(inner))
    }
}

/// Fully-associative write-back, write-allocate LRU over a hash index, with the rules `R`
/// around it (see the module doc).
pub struct QueueLru<R> {
    rules: R,
    /// Refuse bypasses of CPU lines, as the engine's `cpu_inclusive`.
    cpu_inclusive: bool,
    index: LineIndex,
    capacity: usize,
    resident: usize,
    /// Line addresses in the order they were touched; `mask + 1` entries, four times the
    /// capacity rounded up to a power of two.
    ring: Vec<u64>,
    mask: u64,
    /// Queue positions of the oldest entry and one past the newest.
    front: u64,
    back: u64,
}

impl<R: Wrapper<Inner = Touch>> QueueLru<R> {
    /// A cache of `g`, which must be fully associative, with `rules` around `lru`.
    pub fn new(g: &Geometry, rules: R, cpu_inclusive: bool) -> Result<QueueLru<R>, CacheError> {
        g.validate()?;
        if g.sets() != 1 {
            return Err(CacheError::Geometry(format!(
                "{g}: the queue LRU is fully associative"
            )));
        }
        let capacity = g.ways as usize;
        let cap = (4 * capacity).next_power_of_two();
        Ok(QueueLru {
            rules,
            cpu_inclusive,
            index: LineIndex::with_capacity(capacity),
            capacity,
            resident: 0,
            ring: vec![0; cap],
            mask: cap as u64 - 1,
            front: 0,
            back: 0,
        })
    }

    /// Append `line` to the queue; returns its position.
    #[inline(always)]
    fn push(&mut self, line: u64) -> u64 {
        if self.back - self.front > self.mask {
            self.compact();
        }
        let p = self.back;
        self.ring[(p & self.mask) as usize] = line;
        self.back = p + 1;
        p
    }

    /// The index slot of the least recently used line, dropping the stale queue entries in
    /// front of it and its own.
    #[inline(always)]
    fn pop_victim(&mut self) -> usize {
        loop {
            let p = self.front;
            self.front = p + 1;
            if p + AHEAD < self.back {
                self.index
                    .prefetch(self.ring[((p + AHEAD) & self.mask) as usize]);
            }
            let line = self.ring[(p & self.mask) as usize];
            if let Some(i) = self.index.find(line) {
                if self.index.at(i)[1] == p {
                    return i;
                }
            }
        }
    }

    /// Drop every stale entry, keeping the live ones in order at new positions.
    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        let mut to = self.front;
        for p in self.front..self.back {
            if p + AHEAD < self.back {
                prefetch(&self.ring, ((p + AHEAD) & self.mask) as usize);
                self.index
                    .prefetch(self.ring[((p + AHEAD) & self.mask) as usize]);
            }
            let line = self.ring[(p & self.mask) as usize];
            if let Some(i) = self.index.find(line) {
                let s = self.index.at(i);
                if s[1] == p {
                    s[1] = to;
                    self.ring[(to & self.mask) as usize] = line;
                    to += 1;
                }
            }
        }
        self.back = to;
    }
}

/// The engine's line metadata bits of a fill by `req` (write-back: writes dirty the line).
#[inline]
fn fill_meta(req: &Access) -> u16 {
    let flags = (u8::from(req.dirties()) * LineMeta::DIRTY) | cpu_flag(req);
    flags as u16
        | ((req.stream.to_byte() & 0xF) as u16) << STREAM_SHIFT
        | (req.agent.to_byte() as u16) << AGENT_SHIFT
}

#[inline]
fn cpu_flag(req: &Access) -> u8 {
    u8::from(req.agent.is_cpu()) * LineMeta::CPU
}

/// What a hit by `req` adds to metadata `meta`: reused, CPU-touched, shared (a CPU other than
/// the filler), dirty, as the engine's hit does.
#[inline]
fn hit_bits(meta: u16, req: &Access) -> u16 {
    let other_cpu = req.agent.is_cpu() & ((meta >> AGENT_SHIFT) as u8 != req.agent.to_byte());
    let flags = LineMeta::REUSED
        | cpu_flag(req)
        | (u8::from(other_cpu) * LineMeta::SHARED)
        | (u8::from(req.dirties()) * LineMeta::DIRTY);
    flags as u16
}

#[inline]
fn unpack(line: u64, meta: u16) -> Evicted {
    Evicted {
        line,
        meta: LineMeta {
            agent: Agent::from_byte((meta >> AGENT_SHIFT) as u8).unwrap_or_default(),
            stream: (meta >> STREAM_SHIFT) as u8 & 0xF,
            flags: meta as u8 & 0xF,
        },
    }
}

impl<R: Wrapper<Inner = Touch>> RefSim for QueueLru<R> {
    #[inline(always)]
    fn access(&mut self, req: &Access, line: u64, _next: u64) -> Result<Outcome, CacheError> {
        if line > apusim_cache::cache::MAX_LINE {
            return Err(CacheError::AddressTooLarge { addr: req.addr });
        }
        if let Some(i) = self.index.find(line) {
            let meta = (self.index.at(i)[0] >> 48) as u16;
            let bits = hit_bits(meta, req);
            self.rules.inner_mut().touched = false;
            Policy::on_hit(&mut self.rules, 0, 0, req);
            if self.rules.inner().touched {
                let p = self.push(line);
                self.index.at(i)[1] = p;
            }
            self.index.at(i)[0] |= (bits as u64) << 48;
            return Ok(HIT);
        }
        if Policy::on_miss(&mut self.rules, 0, req) == MissAction::Bypass {
            if self.cpu_inclusive && req.agent.is_cpu() {
                return Err(CacheError::InclusionViolation {
                    addr: req.addr,
                    agent: req.agent,
                });
            }
            return Ok(BYPASS);
        }
        let evicted = if self.resident < self.capacity {
            self.resident += 1;
            None
        } else {
            let i = self.pop_victim();
            let [word, _] = *self.index.at(i);
            self.index.remove_at(i);
            let ev = unpack((word & KEY) - 1, (word >> 48) as u16);
            Policy::on_evict(&mut self.rules, 0, 0, &ev);
            Some(ev)
        };
        let p = self.push(line);
        self.index.insert(line, fill_meta(req), p);
        Policy::on_fill(&mut self.rules, 0, 0, req);
        Ok(Outcome::Miss {
            filled: true,
            bypassed: false,
            evicted,
        })
    }

    #[inline]
    fn prefetch_early(&self, _req: &Access, line: u64) {
        if line <= apusim_cache::cache::MAX_LINE {
            self.index.prefetch(line);
        }
    }

    fn policy_stats(&self) -> Vec<PolicyStat> {
        self.rules.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{EngineSim, OracleBypass};
    use apusim_cache::{Cache, WritePolicy};
    use apusim_trace::{Op, Stream};
    use proptest::prelude::*;

    fn engine<P: Policy>(g: &Geometry) -> EngineSim<P> {
        let p = P::build(&PolicyContext::for_geometry(g)).unwrap();
        let wrapped = OracleBypass::wrap(p, 1, g.ways as usize, false);
        let cache = Cache::new(*g, WritePolicy::default(), true, wrapped).unwrap();
        assert!(cache.is_wide());
        EngineSim { cache }
    }

    #[test]
    fn serves_lru_alone_or_in_the_write_rules_on_wide_fully_associative_caches_only() {
        let fa = Geometry::fully_associative(1024 * 64, 64);
        assert_eq!(serves::<Lru>(&fa), Some(false));
        assert_eq!(serves::<HeteroWrites<Lru>>(&fa), Some(true));
        assert_eq!(serves::<apusim_cache::policies::srrip::Srrip>(&fa), None);
        assert_eq!(serves::<OracleBypass<Lru>>(&fa), None);
        assert_eq!(
            serves::<Lru>(&Geometry::fully_associative(64 * 64, 64)),
            None
        );
        assert_eq!(serves::<Lru>(&Geometry::new(1024 * 64, 512, 64)), None);
    }

    /// Replays `refs` through `q` and the engine with policy `P`, comparing every outcome and,
    /// at the end, the policy statistics.
    fn same_as_engine<P: Policy, R: Wrapper<Inner = Touch>>(
        mut q: QueueLru<R>,
        g: &Geometry,
        refs: &[(u8, usize, usize, u64)],
        span: u64,
    ) -> Result<(), TestCaseError> {
        let mut e = engine::<P>(g);
        let ways = g.ways as u64;
        for &(agent, stream, op, x) in refs {
            let agent = if agent >= 3 {
                Agent::GPU
            } else {
                Agent::cpu(agent)
            };
            let stream = if agent.is_cpu() {
                Stream::CpuData
            } else {
                Stream::ALL[stream]
            };
            // A hot range of `ways` lines, sometimes wider (misses and evictions).
            let line = x % (ways * span / 2 + 1);
            let req = Access::new(agent, stream, Op::ALL[op], line * 64 + 8, 8);
            prop_assert_eq!(q.access(&req, line, 0), e.access(&req, line, 0));
        }
        prop_assert_eq!(q.policy_stats(), e.policy_stats());
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Every outcome (hit, fill, bypass, evicted line and its metadata) and the statistics
        /// equal the engine's with `lru` in wide sets, alone and inside the heterogeneous write
        /// rules, for mixed agents, streams and writes; long streams over few lines compact the
        /// queue many times.
        #[test]
        fn equals_the_engine_reference_by_reference(
            ways in 65u32..300,
            span in 1u64..5,
            refs in proptest::collection::vec((0u8..5, 0usize..Stream::COUNT, 0usize..Op::COUNT, 0u64..1000), 1..8000),
        ) {
            let g = Geometry::fully_associative(ways as u64 * 64, 64);
            let ctx = PolicyContext::for_geometry(&g);
            let plain = QueueLru::new(&g, NoRules(Touch::build(&ctx).unwrap()), true).unwrap();
            same_as_engine::<Lru, _>(plain, &g, &refs, span)?;
            let rules = HeteroWrites::wrap(Touch::build(&ctx).unwrap(), &ctx).unwrap();
            let hetero = QueueLru::new(&g, rules, true).unwrap();
            same_as_engine::<HeteroWrites<Lru>, _>(hetero, &g, &refs, span)?;
        }
    }

    #[test]
    fn evicts_the_least_recently_used_line() {
        let g = Geometry::fully_associative(100 * 64, 64);
        let ctx = PolicyContext::for_geometry(&g);
        let mut q = QueueLru::new(&g, NoRules(Touch::build(&ctx).unwrap()), true).unwrap();
        let rd = |l: u64| Access::new(Agent::cpu(0), Stream::CpuData, Op::Read, l * 64, 8);
        for l in 0..100 {
            assert!(!q.access(&rd(l), l, 0).unwrap().is_hit());
        }
        // Touch every even line many times (stale queue entries, compactions).
        for _ in 0..20 {
            for l in (0..100).step_by(2) {
                assert!(q.access(&rd(l), l, 0).unwrap().is_hit());
            }
        }
        // The odd lines are the oldest, lowest first.
        for (new, old) in (1000..1050).zip((1..100).step_by(2)) {
            match q.access(&rd(new), new, 0).unwrap() {
                Outcome::Miss {
                    evicted: Some(e), ..
                } => assert_eq!(e.line, old),
                o => panic!("{o:?}"),
            }
        }
        assert!(q.access(&rd(0), 0, 0).unwrap().is_hit());
    }
}
