//! Sets of ways of one cache set with constant-time "lowest member": the building block of the
//! wide-set representations (docs/ARCHITECTURE.md, "Wide sets"), which must answer "the lowest
//! invalid way" and "the lowest way with RRPV 3" without scanning hundreds of thousands of ways.
//!
//! A [`WayBits`] layout describes one bit set over `n` ways as a small tree of 64-bit words:
//! level 0 has one bit per way, every higher level one bit per non-empty word of the level
//! below, and the top level is a single word. Inserting, removing and finding the lowest member
//! touch one word per level (three levels for 262,144 ways). The words of many such sets (one
//! per cache set, or per cache set and RRPV value) live side by side in one `Vec<u64>`, each
//! [`WayBits::stride`] words long; the layout itself is shared.

/// Most levels a layout can have: 64^6 exceeds any `u32` way count.
const MAX_LEVELS: usize = 6;

/// The shape of one hierarchical bit set over `n` ways (see the module doc).
#[derive(Clone, Copy, Debug)]
pub struct WayBits {
    /// Start of each level inside a set's words, level 0 first.
    offsets: [usize; MAX_LEVELS],
    levels: usize,
    stride: usize,
    n: usize,
}

impl WayBits {
    /// The layout of a set over ways `0..n` (`n` ≥ 1).
    pub fn new(n: usize) -> WayBits {
        let mut offsets = [0; MAX_LEVELS];
        let (mut levels, mut words, mut at) = (0, n.max(1).div_ceil(64), 0);
        loop {
            offsets[levels] = at;
            levels += 1;
            at += words;
            if words == 1 {
                break;
            }
            words = words.div_ceil(64);
        }
        WayBits {
            offsets,
            levels,
            stride: at,
            n,
        }
    }

    /// Words one set occupies.
    #[inline]
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// Number of ways the set ranges over.
    pub fn ways(&self) -> usize {
        self.n
    }

    /// Make `words` (one set, [`WayBits::stride`] long) hold every way `0..n`.
    pub fn fill(&self, words: &mut [u64]) {
        words[..self.stride].fill(0);
        let mut members = self.n;
        for l in 0..self.levels {
            let level = &mut words[self.offsets[l]..];
            for (i, w) in level.iter_mut().take(members.div_ceil(64)).enumerate() {
                let bits = (members - 64 * i).min(64);
                *w = if bits == 64 {
                    u64::MAX
                } else {
                    (1 << bits) - 1
                };
            }
            members = members.div_ceil(64);
        }
    }

    /// Add `way` (no effect if present).
    #[inline]
    pub fn insert(&self, words: &mut [u64], way: usize) {
        let mut i = way;
        for &off in &self.offsets[..self.levels] {
            let w = &mut words[off + i / 64];
            let was = *w;
            *w = was | 1 << (i % 64);
            if was != 0 {
                return;
            }
            i /= 64;
        }
    }

    /// Remove `way` (no effect if absent).
    #[inline]
    pub fn remove(&self, words: &mut [u64], way: usize) {
        let mut i = way;
        for &off in &self.offsets[..self.levels] {
            let w = &mut words[off + i / 64];
            *w &= !(1 << (i % 64));
            if *w != 0 {
                return;
            }
            i /= 64;
        }
    }

    /// True if `way` is a member.
    #[inline]
    pub fn contains(&self, words: &[u64], way: usize) -> bool {
        words[way / 64] >> (way % 64) & 1 != 0
    }

    /// True if the set has no member.
    #[inline]
    pub fn is_empty(&self, words: &[u64]) -> bool {
        words[self.offsets[self.levels - 1]] == 0
    }

    /// The `n`-th member above `way` (`n` ≥ 1) if it lies within the few level-0 words from
    /// `way`'s on (a look-ahead for hints: `None` also when the members are sparse there).
    #[inline]
    pub fn nth_after(&self, words: &[u64], way: usize, n: u32) -> Option<usize> {
        const WORDS: usize = 4;
        let mut left = n;
        let first = way / 64;
        let end = (first + WORDS).min(self.n.div_ceil(64));
        let mut bits = words[first] & (u64::MAX << (way % 64)) << 1;
        let mut i = first;
        loop {
            let c = bits.count_ones();
            if c >= left {
                for _ in 1..left {
                    bits &= bits - 1;
                }
                return Some(i * 64 + bits.trailing_zeros() as usize);
            }
            left -= c;
            i += 1;
            if i >= end {
                return None;
            }
            bits = words[i];
        }
    }

    /// The lowest member.
    #[inline]
    pub fn first(&self, words: &[u64]) -> Option<usize> {
        let top = words[self.offsets[self.levels - 1]];
        if top == 0 {
            return None;
        }
        let mut i = top.trailing_zeros() as usize;
        for &off in self.offsets[..self.levels - 1].iter().rev() {
            i = i * 64 + words[off + i].trailing_zeros() as usize;
        }
        Some(i)
    }
}

/// How a cache and its policy keep per-way state, chosen once per cache.
///
/// Compact sets are flat per-way arrays searched by scanning the set (branch-free SIMD for 8
/// and 16 ways): the fastest form while a set spans a few host cache lines. Wide sets keep
/// structures whose cost per access does not grow with the ways: the engine looks lines up in
/// a hash index and finds invalid ways in a [`WayBits`], LRU keeps a recency queue per set, the
/// RRIP family one bucket per RRPV value. Both give the same victims (property tests replay
/// random streams through both and compare every eviction).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SetLayout {
    /// Compact up to [`SetLayout::WIDE_ABOVE_WAYS`] ways, wide above.
    #[default]
    Auto,
    Compact,
    Wide,
}

impl SetLayout {
    /// The associativity above which `Auto` chooses wide sets (docs/PERFORMANCE.md, "Wide
    /// sets": the measured crossover).
    pub const WIDE_ABOVE_WAYS: usize = 64;

    /// True if a cache of `ways` ways uses wide sets.
    #[inline]
    pub fn is_wide(self, ways: usize) -> bool {
        match self {
            SetLayout::Auto => ways > Self::WIDE_ABOVE_WAYS,
            SetLayout::Compact => false,
            SetLayout::Wide => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn layouts_have_one_top_word() {
        for (n, levels, stride) in [
            (1, 1, 1),
            (64, 1, 1),
            (65, 2, 3),
            (4096, 2, 65),
            (4097, 3, 65 + 2 + 1),
            (262_144, 3, 4096 + 64 + 1),
        ] {
            let l = WayBits::new(n);
            assert_eq!((l.levels, l.stride()), (levels, stride), "{n} ways");
        }
    }

    proptest::proptest! {
        /// Every operation agrees with an ordered set of the members.
        #[test]
        fn matches_an_ordered_set(
            n in 1usize..10_000,
            ops in proptest::collection::vec((0u8..3, 0usize..10_000), 1..600),
            full in proptest::bool::ANY,
        ) {
            let l = WayBits::new(n);
            let mut words = vec![0u64; l.stride()];
            let mut want = BTreeSet::new();
            if full {
                l.fill(&mut words);
                want.extend(0..n);
            }
            for (op, way) in ops {
                let way = way % n;
                match op {
                    0 => { l.insert(&mut words, way); want.insert(way); }
                    1 => { l.remove(&mut words, way); want.remove(&way); }
                    _ => {}
                }
                proptest::prop_assert_eq!(l.first(&words), want.first().copied());
                proptest::prop_assert_eq!(l.is_empty(&words), want.is_empty());
                proptest::prop_assert_eq!(l.contains(&words, way), want.contains(&way));
                for n in 1..4u32 {
                    let got = l.nth_after(&words, way, n);
                    let exact = want.range(way + 1..).nth(n as usize - 1).copied();
                    // Exact when found; absent only when the member lies beyond the window.
                    match got {
                        Some(g) => proptest::prop_assert_eq!(Some(g), exact),
                        None => proptest::prop_assert!(exact.is_none_or(|e| e / 64 >= way / 64 + 4)),
                    }
                }
            }
        }
    }
}
