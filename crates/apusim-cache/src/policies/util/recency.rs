//! True-LRU order of wide sets ([`crate::SetLayout`]) as a queue with lazy deletion: the
//! victim in O(1) amortized, a hit one store and one append, and every memory access either
//! sequential or known ahead, so it can be prefetched.
//!
//! Per set, a ring of way numbers in the order they were touched (oldest at the front), and
//! per way the queue position of its latest touch. A touch appends the way and records the
//! new position; the way's older entries stay in the ring but no longer match its position
//! (stale). The least recently used way is the first live entry from the front: the victim
//! search drops stale entries until it finds one. Because stale entries are only ever removed
//! and live ones keep their order, the live entries are exactly the LRU order a doubly-linked
//! recency list would hold, and the victim is the same way.
//!
//! A hit writes the way's position (one host line, prefetchable once the way is known) and
//! appends to the ring (sequential); it does not touch the recency neighbours that a linked
//! list must relink, which are random and cannot be known before the way's own node is read.
//! The victim search reads the ring in order, so it prefetches the positions and the tag words
//! of the entries a few places ahead of the front, and the hash index slots of their lines
//! ([`SetView::prefetch_way`], [`SetView::prefetch_eviction`]): by the time an entry reaches
//! the front its checks hit the host cache.
//!
//! When a set's ring is full (four times the ways, rounded up to a power of two), it is
//! compacted in place: live entries move forward in order and get their new positions. At
//! most `ways` entries are live, so a compaction leaves at least three quarters of the ring
//! free and costs O(1) per touch amortized.

use crate::SetView;

use super::prefetch;

/// How many queue entries ahead of the front the victim search prefetches a way's position
/// and tag word, and (half as far) its line's index slot.
const AHEAD: u64 = 16;

/// The recency queues of every set of a cache (see the module doc).
#[derive(Clone, Debug)]
pub struct RecencyQueue {
    ways: usize,
    /// Ring entries per set (a power of two, at least four times the ways).
    mask: u64,
    /// Per set, `mask + 1` way numbers.
    ring: Vec<u32>,
    /// Per set: queue positions of the oldest entry and one past the newest. Positions start
    /// at 1, so position 0 means "never touched".
    front: Vec<u64>,
    back: Vec<u64>,
    /// Per `set * ways + way`: the position of the way's live entry, 0 if never touched.
    pos: Vec<u64>,
}

impl RecencyQueue {
    /// Queues for `sets` sets of `ways` ways, every way untouched.
    pub fn new(sets: usize, ways: usize) -> RecencyQueue {
        let cap = (4 * ways).next_power_of_two();
        RecencyQueue {
            ways,
            mask: cap as u64 - 1,
            ring: vec![0; sets * cap],
            front: vec![1; sets],
            back: vec![1; sets],
            pos: vec![0; sets * ways],
        }
    }

    #[inline(always)]
    fn slot(&self, set: usize, p: u64) -> usize {
        set * (self.mask as usize + 1) + (p & self.mask) as usize
    }

    /// Queue position of the latest touch of `way` (larger is more recent within a set; 0 if
    /// never touched).
    #[inline]
    pub fn position(&self, set: usize, way: usize) -> u64 {
        self.pos[set * self.ways + way]
    }

    /// Hint: `way` of `set` will be touched soon.
    #[inline(always)]
    pub fn prefetch(&self, set: usize, way: usize) {
        prefetch(&self.pos, set * self.ways + way);
    }

    /// Make `way` the most recent of `set`.
    #[inline]
    pub fn touch(&mut self, set: usize, way: usize) {
        if self.back[set] - self.front[set] > self.mask {
            self.compact(set);
        }
        let p = self.back[set];
        let at = self.slot(set, p);
        self.ring[at] = way as u32;
        self.pos[set * self.ways + way] = p;
        self.back[set] = p + 1;
    }

    /// True if the entry at position `p` of `set` is live.
    #[inline(always)]
    fn live(&self, set: usize, p: u64) -> bool {
        let way = self.ring[self.slot(set, p)] as usize;
        self.pos[set * self.ways + way] == p
    }

    /// Hint for the entry `AHEAD` places behind position `p`, and for the one half as far:
    /// its position word and tag word, and its line's index slot.
    #[inline(always)]
    fn prefetch_ahead(&self, set: usize, p: u64, view: Option<&SetView<'_>>) {
        let back = self.back[set];
        if p + AHEAD < back {
            let way = self.ring[self.slot(set, p + AHEAD)] as usize;
            self.prefetch(set, way);
            if let Some(v) = view {
                v.prefetch_way(way);
            }
        }
        if let Some(v) = view {
            if p + AHEAD / 2 < back {
                v.prefetch_eviction(self.ring[self.slot(set, p + AHEAD / 2)] as usize);
            }
        }
    }

    /// The least recently touched way of `set`, which must have been touched at least once;
    /// drops the stale entries in front of it. `view`, if given, receives the hints for the
    /// victims to come.
    #[inline]
    pub fn least_recent(&mut self, set: usize, view: Option<&SetView<'_>>) -> usize {
        let mut p = self.front[set];
        debug_assert!(p < self.back[set], "the victim of an untouched set");
        loop {
            self.prefetch_ahead(set, p, view);
            if self.live(set, p) {
                break;
            }
            p += 1;
        }
        self.front[set] = p;
        self.ring[self.slot(set, p)] as usize
    }

    /// Drop every stale entry of `set`, keeping the live ones in order at new positions.
    #[cold]
    #[inline(never)]
    fn compact(&mut self, set: usize) {
        let (front, back) = (self.front[set], self.back[set]);
        let mut to = front;
        for p in front..back {
            if p + AHEAD < back {
                let way = self.ring[self.slot(set, p + AHEAD)] as usize;
                self.prefetch(set, way);
            }
            let way = self.ring[self.slot(set, p)];
            let i = set * self.ways + way as usize;
            if self.pos[i] == p {
                let at = self.slot(set, to);
                self.ring[at] = way;
                self.pos[i] = to;
                to += 1;
            }
        }
        self.back[set] = to;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The queue's victim is the least recently touched way, through several compactions.
        #[test]
        fn victim_is_least_recently_touched(
            sets in 1usize..4,
            ways in 1usize..40,
            touches in proptest::collection::vec((0usize..4, 0usize..40, proptest::bool::ANY), 1..3000),
        ) {
            let mut q = RecencyQueue::new(sets, ways);
            // Per set, ways from least to most recent.
            let mut order: Vec<Vec<usize>> = vec![Vec::new(); sets];
            for (set, way, ask) in touches {
                let (set, way) = (set % sets, way % ways);
                if ask && !order[set].is_empty() {
                    proptest::prop_assert_eq!(q.least_recent(set, None), order[set][0]);
                }
                order[set].retain(|&w| w != way);
                order[set].push(way);
                q.touch(set, way);
                let p: Vec<u64> = order[set].iter().map(|&w| q.position(set, w)).collect();
                proptest::prop_assert!(p.windows(2).all(|w| w[0] < w[1]), "{:?}", p);
            }
        }
    }

    #[test]
    fn compaction_keeps_the_ring_bounded() {
        let mut q = RecencyQueue::new(1, 3);
        for i in 0..1000 {
            q.touch(0, i % 2);
        }
        assert!(q.back[0] - q.front[0] <= q.mask + 1);
        assert_eq!(q.least_recent(0, None), 0);
        q.touch(0, 2);
        q.touch(0, 0);
        assert_eq!(q.least_recent(0, None), 1);
    }
}
