//! Fully-associative true-LRU cache with a hash index and an intrusive recency list: O(1) per
//! access whatever the number of ways. Every command reaches caches through the engine
//! ([`crate::Cache`], whose wide sets do the same); this standalone form is the reference a
//! property test holds the engine's wide `lru` sets to.

use crate::cache::{CacheCounters, Outcome, WritePolicy};
use crate::policy::{Evicted, LineMeta};
use crate::{CacheError, Geometry};
use apusim_trace::{Access, Op};
use rustc_hash::FxHashMap;

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Node {
    line: u64,
    meta: LineMeta,
    prev: u32,
    next: u32,
}

/// A fully-associative LRU cache. Same interface as [`crate::Cache`] for the hierarchy.
pub struct FaLru {
    geometry: Geometry,
    line_bits: u32,
    write: WritePolicy,
    index: FxHashMap<u64, u32>,
    nodes: Vec<Node>,
    free: Vec<u32>,
    /// Most recently used.
    head: u32,
    /// Least recently used.
    tail: u32,
    counters: CacheCounters,
}

impl FaLru {
    pub fn new(geometry: Geometry, write: WritePolicy) -> Result<FaLru, CacheError> {
        geometry.validate()?;
        if !geometry.is_fully_associative() {
            return Err(CacheError::Geometry(format!(
                "{geometry}: the hashed LRU cache is fully associative (ways x line must equal size)"
            )));
        }
        let n = geometry.ways as usize;
        Ok(FaLru {
            geometry,
            line_bits: geometry.line.trailing_zeros(),
            write,
            index: FxHashMap::with_capacity_and_hasher(n, Default::default()),
            nodes: Vec::with_capacity(n),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            counters: CacheCounters::default(),
        })
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }
    pub fn counters(&self) -> &CacheCounters {
        &self.counters
    }
    #[inline]
    pub fn line_of(&self, addr: u64) -> u64 {
        addr >> self.line_bits
    }
    pub fn probe(&self, addr: u64) -> bool {
        self.index.contains_key(&self.line_of(addr))
    }
    pub fn occupancy(&self) -> usize {
        self.index.len()
    }

    fn unlink(&mut self, i: u32) {
        let Node { prev, next, .. } = self.nodes[i as usize];
        if prev == NIL {
            self.head = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
    }

    fn push_front(&mut self, i: u32) {
        self.nodes[i as usize].prev = NIL;
        self.nodes[i as usize].next = self.head;
        if self.head != NIL {
            self.nodes[self.head as usize].prev = i;
        } else {
            self.tail = i;
        }
        self.head = i;
    }

    /// Access the line holding `req.addr`.
    pub fn access(&mut self, req: &Access) -> Result<Outcome, CacheError> {
        let line = self.line_of(req.addr);
        let is_write = req.dirties();
        let cpu = if req.agent.is_cpu() { LineMeta::CPU } else { 0 };
        if let Some(&i) = self.index.get(&line) {
            self.counters.hits += 1;
            let m = &mut self.nodes[i as usize].meta;
            m.flags |= LineMeta::REUSED | cpu;
            if is_write && self.write.write_back {
                m.flags |= LineMeta::DIRTY;
            }
            self.unlink(i);
            self.push_front(i);
            return Ok(Outcome::Hit {
                write_through: is_write && !self.write.write_back,
            });
        }
        self.counters.misses += 1;
        if req.op == Op::Write && !self.write.write_allocate {
            return Ok(Outcome::Miss {
                filled: false,
                bypassed: false,
                evicted: None,
            });
        }
        let mut evicted = None;
        let slot = if let Some(i) = self.free.pop() {
            i
        } else if self.nodes.len() < self.geometry.ways as usize {
            self.nodes.push(Node {
                line: 0,
                meta: LineMeta::default(),
                prev: NIL,
                next: NIL,
            });
            (self.nodes.len() - 1) as u32
        } else {
            let v = self.tail;
            self.unlink(v);
            let node = self.nodes[v as usize];
            self.index.remove(&node.line);
            self.counters.evictions += 1;
            if node.meta.dirty() {
                self.counters.dirty_evictions += 1;
            }
            evicted = Some(Evicted {
                line: node.line,
                meta: node.meta,
            });
            v
        };
        let dirty = if is_write && self.write.write_back {
            LineMeta::DIRTY
        } else {
            0
        };
        self.nodes[slot as usize].line = line;
        self.nodes[slot as usize].meta = LineMeta {
            agent: req.agent,
            stream: req.stream.to_byte(),
            flags: dirty | cpu,
        };
        self.push_front(slot);
        self.index.insert(line, slot);
        self.counters.fills += 1;
        Ok(Outcome::Miss {
            filled: true,
            bypassed: false,
            evicted,
        })
    }

    /// Remove the line holding `addr`; returns its metadata.
    pub fn invalidate(&mut self, addr: u64) -> Option<LineMeta> {
        let i = self.index.remove(&self.line_of(addr))?;
        self.unlink(i);
        self.free.push(i);
        self.counters.invalidations += 1;
        Some(self.nodes[i as usize].meta)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apusim_trace::{Agent, Stream};

    fn rd(addr: u64) -> Access {
        Access::new(Agent::cpu(0), Stream::CpuData, Op::Read, addr, 4)
    }

    #[test]
    fn evicts_least_recently_used() {
        let mut c = FaLru::new(
            Geometry::fully_associative(4 * 64, 64),
            WritePolicy::default(),
        )
        .unwrap();
        for a in [0, 64, 128, 192] {
            assert!(!c.access(&rd(a)).unwrap().is_hit());
        }
        assert!(c.access(&rd(0)).unwrap().is_hit()); // 0 becomes MRU; LRU is 64
        match c.access(&rd(256)).unwrap() {
            Outcome::Miss {
                evicted: Some(e), ..
            } => assert_eq!(e.line, 1),
            o => panic!("unexpected {o:?}"),
        }
        assert!(!c.probe(64));
        assert!(c.probe(0));
        assert_eq!(c.invalidate(128).map(|m| m.agent), Some(Agent::cpu(0)));
        // The freed slot is reused without an eviction.
        assert!(matches!(
            c.access(&rd(512)).unwrap(),
            Outcome::Miss { evicted: None, .. }
        ));
        assert_eq!(c.occupancy(), 4);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(16))]
        /// The engine's wide sets with `lru` and this cache are the same fully-associative LRU:
        /// every hit, fill and evicted line agree, with back-invalidations in the stream.
        #[test]
        fn equals_the_engine_with_wide_lru(
            steps in proptest::collection::vec((0u64..1500, 0u8..20), 1..6000),
            ways in 1u32..1100,
        ) {
            use crate::policies::lru::Lru;
            use crate::{Cache, Policy, PolicyContext};
            let g = Geometry::fully_associative(ways as u64 * 64, 64);
            let write = WritePolicy::default();
            let mut fa = FaLru::new(g, write).unwrap();
            let lru = Lru::build(&PolicyContext::for_geometry(&g)).unwrap();
            let mut c = Cache::with_layout(g, write, false, lru, crate::SetLayout::Wide).unwrap();
            for (line, kind) in steps {
                let a = line * 64;
                if kind == 0 {
                    proptest::prop_assert_eq!(fa.invalidate(a), c.invalidate(a));
                    continue;
                }
                let op = if kind < 5 { Op::Write } else { Op::Read };
                let req = Access::new(Agent::GPU, Stream::StaticTexture, op, a, 4);
                proptest::prop_assert_eq!(fa.access(&req).unwrap(), c.access(&req).unwrap());
            }
            proptest::prop_assert_eq!(fa.counters(), c.counters());
        }
    }
}
