//! True LRU: every access makes its line most recent; the victim is the least recent line.
//!
//! Recency is a per-line 64-bit stamp from a per-cache counter, so a hit costs one store and
//! a victim choice one scan of the set. Ties cannot occur (stamps are unique, and the victim
//! is asked for only when every way of the set has been filled).
//!
//! Wide sets ([`crate::SetLayout`]) keep the same order in a [`RecencyQueue`] per set instead
//! (each way's position in a queue of touches), so the victim is the queue's oldest live entry
//! instead of the end of a scan of hundreds of thousands of stamps.

use super::util::RecencyQueue;
use crate::{CacheError, Policy, PolicyContext, SetView};
use apusim_trace::Access;

pub struct Lru {
    ways: usize,
    clock: u64,
    /// Compact sets: the recency stamp of every way (empty for wide sets).
    stamp: Vec<u64>,
    /// The recency queues of wide sets, `None` for compact ones.
    queue: Option<Box<RecencyQueue>>,
}

impl Lru {
    #[inline]
    fn touch(&mut self, set: usize, way: usize) {
        match self.queue.as_deref_mut() {
            Some(q) => q.touch(set, way),
            None => {
                self.clock += 1;
                self.stamp[set * self.ways + way] = self.clock;
            }
        }
    }
    /// Recency stamp of a line (larger is more recent within a set), for tests.
    pub fn stamp(&self, set: usize, way: usize) -> u64 {
        match self.queue.as_deref() {
            Some(q) => q.position(set, way),
            None => self.stamp[set * self.ways + way],
        }
    }
    /// True if this instance keeps recency queues (wide sets).
    pub fn is_wide(&self) -> bool {
        self.queue.is_some()
    }
}

impl Policy for Lru {
    #[inline]
    fn prefetch_set(&self, set: usize) {
        if self.queue.is_none() {
            super::util::prefetch(&self.stamp, set * self.ways);
        }
    }
    #[inline]
    fn prefetch_way(&self, set: usize, way: usize) {
        if let Some(q) = self.queue.as_deref() {
            q.prefetch(set, way);
        }
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        let wide = ctx.wide_sets();
        Ok(Lru {
            ways: ctx.ways,
            clock: 0,
            stamp: if wide {
                Vec::new()
            } else {
                vec![0; ctx.sets * ctx.ways]
            },
            queue: wide.then(|| Box::new(RecencyQueue::new(ctx.sets, ctx.ways))),
        })
    }
    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, _req: &Access) {
        self.touch(set, way);
    }
    #[inline]
    fn victim(&mut self, set: usize, _req: &Access, view: &SetView<'_>) -> usize {
        if let Some(q) = self.queue.as_deref_mut() {
            return q.least_recent(set, Some(view));
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
