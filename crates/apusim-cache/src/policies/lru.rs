//! True LRU: every access makes its line most recent; the victim is the least recent line.
//!
//! Recency is a per-line 64-bit stamp from a per-cache counter, so a hit costs one store and
//! a victim choice one scan of the set. Ties cannot occur (stamps are unique, and the victim
//! is asked for only when every way of the set has been filled).
//!
//! Wide sets ([`crate::SetLayout`]) also keep each set's ways in a doubly-linked recency list
//! (most recent first), so the victim is the list's tail instead of the end of a scan of
//! hundreds of thousands of stamps: the same way, since the list order is the stamp order.

use crate::{CacheError, Policy, PolicyContext, SetView};
use apusim_trace::Access;

/// "No way" in the recency lists.
const NIL: u32 = u32::MAX;

pub struct Lru {
    ways: usize,
    clock: u64,
    stamp: Vec<u64>,
    /// The recency lists of wide sets, `None` for compact ones.
    list: Option<Box<RecencyList>>,
}

/// One doubly-linked list of ways per set, most recent first; a way joins its set's list at
/// its first fill (stamp 0 means "never filled").
struct RecencyList {
    /// Per `set * ways + way`: the next more recent and the next less recent way.
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Per set: most and least recent way.
    head: Vec<u32>,
    tail: Vec<u32>,
}

impl RecencyList {
    fn new(sets: usize, ways: usize) -> RecencyList {
        RecencyList {
            prev: vec![NIL; sets * ways],
            next: vec![NIL; sets * ways],
            head: vec![NIL; sets],
            tail: vec![NIL; sets],
        }
    }

    /// Move `way` (listed iff `listed`) to the front of `set`'s list. Out of line, so that
    /// compact sets' inlined hooks keep their size.
    #[inline(never)]
    fn make_most_recent(&mut self, set: usize, ways: usize, way: usize, listed: bool) {
        let base = set * ways;
        let w = way as u32;
        if listed {
            if self.head[set] == w {
                return;
            }
            let (p, n) = (self.prev[base + way], self.next[base + way]);
            // `way` is not the head, so it has a more recent neighbour.
            self.next[base + p as usize] = n;
            if n == NIL {
                self.tail[set] = p;
            } else {
                self.prev[base + n as usize] = p;
            }
        }
        let h = self.head[set];
        self.prev[base + way] = NIL;
        self.next[base + way] = h;
        if h == NIL {
            self.tail[set] = w;
        } else {
            self.prev[base + h as usize] = w;
        }
        self.head[set] = w;
    }
}

impl Lru {
    #[inline]
    fn touch(&mut self, set: usize, way: usize) {
        self.clock += 1;
        let i = set * self.ways + way;
        if let Some(list) = self.list.as_deref_mut() {
            list.make_most_recent(set, self.ways, way, self.stamp[i] != 0);
        }
        self.stamp[i] = self.clock;
    }
    /// Recency stamp of a line (larger is more recent), for tests.
    pub fn stamp(&self, set: usize, way: usize) -> u64 {
        self.stamp[set * self.ways + way]
    }
    /// True if this instance keeps recency lists (wide sets).
    pub fn is_wide(&self) -> bool {
        self.list.is_some()
    }
}

impl Policy for Lru {
    #[inline]
    fn prefetch_set(&self, set: usize) {
        super::util::prefetch(&self.stamp, set * self.ways);
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        Ok(Lru {
            ways: ctx.ways,
            clock: 0,
            stamp: vec![0; ctx.sets * ctx.ways],
            list: ctx
                .wide_sets()
                .then(|| Box::new(RecencyList::new(ctx.sets, ctx.ways))),
        })
    }
    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, _req: &Access) {
        self.touch(set, way);
    }
    #[inline]
    fn victim(&mut self, set: usize, _req: &Access, _view: &SetView<'_>) -> usize {
        if let Some(list) = self.list.as_deref() {
            return list.tail[set] as usize;
        }
        let base = set * self.ways;
        let s = &self.stamp[base..base + self.ways];
        let mut best = 0;
        for (w, &t) in s.iter().enumerate() {
            if t < s[best] {
                best = w;
            }
        }
        best
    }
    #[inline]
    fn on_fill(&mut self, set: usize, way: usize, _req: &Access) {
        self.touch(set, way);
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cache, Geometry, Outcome, WritePolicy};
    use apusim_trace::{Agent, Op, Stream};

    /// One 4-way set; the hand-worked sequence A B C D A E: E evicts B (A was re-touched).
    #[test]
    fn replays_hand_worked_sequence() {
        let g = Geometry::new(4 * 64, 4, 64);
        let lru = Lru::build(&PolicyContext::for_geometry(&g)).unwrap();
        let mut c = Cache::new(g, WritePolicy::default(), false, lru).unwrap();
        let acc = |l: u64| Access::new(Agent::cpu(0), Stream::CpuData, Op::Read, l * 64, 8);
        let mut victims = Vec::new();
        for l in [0, 1, 2, 3, 0, 4, 1, 2] {
            if let Outcome::Miss {
                evicted: Some(e), ..
            } = c.access(&acc(l)).unwrap()
            {
                victims.push(e.line);
            }
        }
        // 4 evicts 1 (LRU after 0 re-touched); 1 evicts 2; 2 evicts 3.
        assert_eq!(victims, vec![1, 2, 3]);
        assert_eq!(c.counters().hits, 1);
        // Ways now hold 0, 4, 1, 2 (way 0 kept line 0); recency order 0 < 4 < 1 < 2.
        let p = c.policy();
        let s: Vec<u64> = (0..4).map(|w| p.stamp(0, w)).collect();
        assert!(s[0] < s[1] && s[1] < s[2] && s[2] < s[3], "{s:?}");
    }
}
