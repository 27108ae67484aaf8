//! Per-line reference counts saturating at two, for adaptive-gpu-l1-bypassing Fig. 1's
//! "accessed once" share: which lines of a run's footprint were referenced once, which more.
//!
//! Lines are kept in pages of [`PAGE_LINES`] lines with two bits each (seen, seen again), so a
//! reference is one lookup of its page, which the kernels' streaming and tiled accesses keep
//! in the host's cache, and a bit operation, rather than a hash entry per line.

use rustc_hash::FxHashMap;

/// Lines per page.
const PAGE_LINES: u64 = 4096;
const WORDS: usize = (PAGE_LINES / 64) as usize;

/// One page's bits: `seen` for every line referenced, `again` for those referenced twice or
/// more.
struct Page {
    seen: [u64; WORDS],
    again: [u64; WORDS],
}

/// The lines referenced so far and how often (once, or more).
#[derive(Default)]
pub(crate) struct Footprint {
    pages: FxHashMap<u64, Box<Page>>,
}

impl Footprint {
    /// Count a reference to `line` (a line address: byte address over the line size).
    #[inline]
    pub(crate) fn reference(&mut self, line: u64) {
        let page = self.pages.entry(line / PAGE_LINES).or_insert_with(|| {
            Box::new(Page {
                seen: [0; WORDS],
                again: [0; WORDS],
            })
        });
        let i = (line % PAGE_LINES) as usize;
        let (w, bit) = (i / 64, 1u64 << (i % 64));
        if page.seen[w] & bit != 0 {
            page.again[w] |= bit;
        } else {
            page.seen[w] |= bit;
        }
    }

    /// Distinct lines referenced.
    pub(crate) fn distinct(&self) -> u64 {
        self.count(|p, w| p.seen[w])
    }

    /// Lines referenced exactly once.
    pub(crate) fn once(&self) -> u64 {
        self.count(|p, w| p.seen[w] & !p.again[w])
    }

    fn count(&self, bits: impl Fn(&Page, usize) -> u64) -> u64 {
        self.pages
            .values()
            .map(|p| {
                (0..WORDS)
                    .map(|w| u64::from(bits(p, w).count_ones()))
                    .sum::<u64>()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The same counts as a map of saturating counters, over lines that share pages, words
    /// and neither.
    #[test]
    fn counts_equal_a_map_of_saturating_counters() {
        let mut f = Footprint::default();
        let mut map: HashMap<u64, u8> = HashMap::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for i in 0..100_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let line = match i % 3 {
                0 => x % 10_000,
                1 => (x % 64) + 63,
                _ => x >> 20,
            };
            f.reference(line);
            let c = map.entry(line).or_insert(0);
            *c = (*c + 1).min(2);
        }
        assert_eq!(f.distinct(), map.len() as u64);
        let once = map.values().filter(|c| **c == 1).count() as u64;
        assert_eq!(f.once(), once);
        assert!(once > 0 && once < map.len() as u64);
    }
}
