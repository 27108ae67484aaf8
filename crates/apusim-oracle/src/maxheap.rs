//! A max-heap of `(u64, u64)` pairs laid out for the host caches: four children per node, the
//! four children of a node in one 64-byte host cache line. Fully-associative OPT
//! ([`crate::HeapOpt`]) pops its farthest line from a heap of half a million entries; a binary
//! heap's pop walks 19 levels, the lower ones each a host cache miss, where this heap walks 10,
//! each level one host line.
//!
//! Layout: entry `k` is words `2k, 2k + 1` of a [`LineWords`] array (aligned to host lines);
//! the root is entry 3 and the children of entry `i` are entries `4i - 8 .. 4i - 4`, so every
//! group of children starts at a multiple of four entries, i.e. of 64 bytes. Entries 0–2 are
//! unused.

use apusim_cache::LineWords;

/// Entry of the root.
const ROOT: usize = 3;

/// Max-heap of pairs (ordered as tuples) with the layout of the module doc.
pub(crate) struct MaxHeap4 {
    words: LineWords,
    /// One past the last entry.
    end: usize,
}

impl Default for MaxHeap4 {
    fn default() -> Self {
        MaxHeap4 {
            words: LineWords::new(2 * 64, 0),
            end: ROOT,
        }
    }
}

impl MaxHeap4 {
    #[inline(always)]
    fn get(&self, k: usize) -> (u64, u64) {
        (self.words[2 * k], self.words[2 * k + 1])
    }
    #[inline(always)]
    fn put(&mut self, k: usize, e: (u64, u64)) {
        self.words[2 * k] = e.0;
        self.words[2 * k + 1] = e.1;
    }

    /// Number of entries.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.end - ROOT
    }

    /// The largest entry.
    #[inline]
    pub(crate) fn peek(&self) -> Option<(u64, u64)> {
        (self.end > ROOT).then(|| self.get(ROOT))
    }

    /// Add `e`.
    #[inline]
    pub(crate) fn push(&mut self, e: (u64, u64)) {
        if 2 * (self.end + 1) > self.words.len() {
            let mut grown = LineWords::new(2 * self.words.len(), 0);
            grown[..self.words.len()].copy_from_slice(&self.words);
            self.words = grown;
        }
        let mut k = self.end;
        self.end += 1;
        while k > ROOT {
            let parent = (k + 8) / 4;
            let p = self.get(parent);
            if p >= e {
                break;
            }
            self.put(k, p);
            k = parent;
        }
        self.put(k, e);
    }

    /// Remove the largest entry.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(u64, u64)> {
        let top = self.peek()?;
        self.end -= 1;
        if self.end > ROOT {
            let last = self.get(self.end);
            self.sift_down(ROOT, last);
        }
        Some(top)
    }

    /// Place `e` at `k` or below, moving larger children up.
    #[inline]
    fn sift_down(&mut self, mut k: usize, e: (u64, u64)) {
        loop {
            let first = 4 * k - 8;
            if first >= self.end {
                break;
            }
            let mut best = first;
            let mut b = self.get(first);
            for c in first + 1..(first + 4).min(self.end) {
                let v = self.get(c);
                if v > b {
                    (best, b) = (c, v);
                }
            }
            if b <= e {
                break;
            }
            self.put(k, b);
            k = best;
        }
        self.put(k, e);
    }

    /// Replace the contents with `entries`, in O(n).
    pub(crate) fn rebuild(&mut self, entries: impl ExactSizeIterator<Item = (u64, u64)>) {
        let n = entries.len();
        let mut words = LineWords::new(2 * (ROOT + n).next_power_of_two().max(64), 0);
        for (k, e) in (ROOT..).zip(entries) {
            words[2 * k] = e.0;
            words[2 * k + 1] = e.1;
        }
        self.words = words;
        self.end = ROOT + n;
        // Sift down every entry with children, last first.
        for k in (ROOT..self.end).rev() {
            if 4 * k - 8 < self.end {
                let e = self.get(k);
                self.sift_down(k, e);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BinaryHeap;

    proptest! {
        /// Pushes, pops and rebuilds agree with the standard binary heap.
        #[test]
        fn agrees_with_the_std_binary_heap(
            ops in proptest::collection::vec((0u8..8, 0u64..50, 0u64..4), 1..3000),
        ) {
            let mut h = MaxHeap4::default();
            let mut want = BinaryHeap::new();
            for (op, a, b) in ops {
                match op {
                    0..=3 => {
                        h.push((a, b));
                        want.push((a, b));
                    }
                    4..=6 => prop_assert_eq!(h.pop(), want.pop()),
                    _ => {
                        let v: Vec<(u64, u64)> = want.iter().copied().collect();
                        h.rebuild(v.into_iter());
                    }
                }
                prop_assert_eq!(h.peek(), want.peek().copied());
                prop_assert_eq!(h.len(), want.len());
            }
        }
    }

    #[test]
    fn children_groups_are_host_lines() {
        let h = MaxHeap4::default();
        for k in ROOT..200 {
            let first = 4 * k - 8;
            assert_eq!((h.words.as_ptr() as usize + 16 * first) % 64, 0);
            assert!((first..first + 4).all(|c| (c + 8) / 4 == k));
        }
    }
}
