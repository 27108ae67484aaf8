//! The table of the backward next-use pass: line → index of its latest-seen reference
//! (walking backward, "latest seen" is the reference's *next* use; see [`crate::nextuse`]).
//!
//! The pass looks up one line per reference in a table of every distinct line seen so far
//! (about a million for a few million LLC references), so each lookup is a random access to a
//! table far larger than the host caches. [`LatestUse`] is built for exactly that:
//! - **open addressing, linear probing** over 16-byte slots (line, index): a lookup touches one
//!   host cache line in the common case, with no pointer to chase;
//! - **neighbouring lines share a host cache line**: the home slot of `line` is
//!   `hash(line / 4) * 4 + line % 4`, so the four lines of an aligned 256-byte region sit in
//!   one 64-byte block and the mostly sequential GPU streams hit the block their previous
//!   reference just brought in;
//! - **software prefetch**: [`LatestUse::prefetch`] lets the caller touch the home slot of a
//!   reference [`AHEAD`] references before it is looked up, so the table's cache misses overlap
//!   instead of being paid one after another (`apusim_cache::policies::util::prefetch`);
//! - **fixed hashing** (Fibonacci multiplicative hash of the group): the table's layout, and so
//!   everything derived from it, never depends on a random seed;
//! - the table doubles when it is more than three quarters full (probes mostly stay in the
//!   home block) and is at least 3/8 full after a growth, 16 bytes per slot: 21–43 bytes per
//!   distinct line, O(distinct lines). The backward pass sizes it for one chunk's worth of
//!   distinct lines up front, so short traces never grow it.

use apusim_cache::policies::util::prefetch;

/// Next use of a reference whose line is never referenced again: what the backward pass's
/// table answers for a line it has not seen yet.
pub const NEVER: u64 = u64::MAX;

/// Ask the kernel to back a large table with transparent huge pages (fewer page faults and TLB
/// misses for random lookups); a hint, ignored where unsupported.
fn huge_pages(slots: &[Slot]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let (start, end) = (slots.as_ptr() as usize, slots.as_ptr_range().end as usize);
        let from = start.next_multiple_of(HUGE);
        let to = end / HUGE * HUGE;
        if to > from {
            // SAFETY: madvise with MADV_HUGEPAGE changes no contents and the range lies inside
            // the live allocation `slots` borrows.
            unsafe {
                libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = slots;
}

/// How many references ahead of its lookup the backward pass prefetches a home slot.
pub(crate) const AHEAD: usize = 32;

/// Lines per 64-byte block of slots (neighbours share a host cache line).
const BLOCK: u64 = 4;
/// Smallest table, in slots (a power of two, a multiple of [`BLOCK`]).
const MIN_SLOTS: usize = 64;

/// One slot: `[line + 1, index of its latest-seen reference]`; all zero when empty (lines are
/// at most `apusim_cache::cache::MAX_LINE`, so `line + 1` is never zero). Zero-filled tables
/// come from the allocator already zeroed (no pass over the memory before use).
type Slot = [u64; 2];

/// Open-addressing map line → latest-seen reference index (see the module doc).
pub(crate) struct LatestUse {
    /// `slots.len() - BLOCK` usable slots from `base` on, `base` chosen so that every block
    /// of [`BLOCK`] slots is one aligned 64-byte host cache line.
    slots: Vec<Slot>,
    base: usize,
    /// Usable slots - 1 (their number is a power of two).
    mask: usize,
    /// `64 - log2(blocks)`: the hash's top bits pick the block.
    shift: u32,
    /// Occupied slots (= distinct lines seen).
    len: usize,
}

impl Default for LatestUse {
    fn default() -> Self {
        LatestUse::with_slots(MIN_SLOTS)
    }
}

impl LatestUse {
    /// An empty table with room for `lines` distinct lines before it first grows.
    pub(crate) fn with_capacity(lines: usize) -> LatestUse {
        LatestUse::with_slots((2 * lines).next_power_of_two().max(MIN_SLOTS))
    }

    fn with_slots(slots: usize) -> LatestUse {
        debug_assert!(slots.is_power_of_two() && slots >= MIN_SLOTS);
        let blocks = slots as u64 / BLOCK;
        let v: Vec<Slot> = vec![[0; 2]; slots + BLOCK as usize];
        let misalign = v.as_ptr() as usize % 64;
        let base = (64 - misalign) % 64 / std::mem::size_of::<Slot>();
        huge_pages(&v[base..base + slots]);
        LatestUse {
            slots: v,
            base,
            mask: slots - 1,
            shift: 64 - blocks.trailing_zeros(),
            len: 0,
        }
    }

    /// Distinct lines recorded.
    pub(crate) fn distinct(&self) -> u64 {
        self.len as u64
    }

    /// Home slot of `line`: its group's block, its place in the group.
    #[inline(always)]
    fn home(&self, line: u64) -> usize {
        let block = (line / BLOCK).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift;
        (block * BLOCK + line % BLOCK) as usize
    }

    /// Hint: `line` will be looked up soon.
    #[inline(always)]
    pub(crate) fn prefetch(&self, line: u64) {
        prefetch(&self.slots, self.base + self.home(line));
    }

    /// Record reference `idx` to `line`; returns the previously recorded index, or [`NEVER`]
    /// for a line not seen before.
    #[inline(always)]
    pub(crate) fn replace(&mut self, line: u64, idx: u64) -> u64 {
        let key = line + 1;
        let mut i = self.home(line);
        loop {
            let s = &mut self.slots[self.base + i];
            if s[0] == key {
                return std::mem::replace(&mut s[1], idx);
            }
            if s[0] == 0 {
                *s = [key, idx];
                self.len += 1;
                if self.len * 4 > (self.mask + 1) * 3 {
                    self.grow();
                }
                return NEVER;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Double the table and re-insert every line (in slot order, which is nearly the order of
    /// the new homes: the new block is the old one's index with one more hash bit).
    #[cold]
    fn grow(&mut self) {
        let old = std::mem::replace(self, LatestUse::with_slots((self.mask + 1) * 2));
        for s in old.slots[old.base..old.base + old.mask + 1]
            .iter()
            .filter(|s| s[0] != 0)
        {
            let mut i = self.home(s[0] - 1);
            while self.slots[self.base + i][0] != 0 {
                i = (i + 1) & self.mask;
            }
            self.slots[self.base + i] = *s;
        }
        self.len = old.len;
    }

    /// Give every reference of `lines` (references `start..start + lines.len()` of the trace)
    /// its next use in `out`, walking backward, with the lookups prefetched [`AHEAD`].
    pub(crate) fn walk_back(&mut self, lines: &[u64], start: u64, out: &mut [u64]) {
        let out = &mut out[..lines.len()];
        for &line in lines.iter().rev().take(AHEAD) {
            self.prefetch(line);
        }
        for k in (0..lines.len()).rev() {
            if let Some(k_ahead) = k.checked_sub(AHEAD) {
                self.prefetch(lines[k_ahead]);
            }
            out[k] = self.replace(lines[k], start + k as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// SplitMix64 (a self-contained reproducible sequence).
    fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    #[test]
    fn agrees_with_a_std_map_through_several_growths() {
        let mut t = LatestUse::default();
        let mut m: HashMap<u64, u64> = HashMap::new();
        for i in 0..200_000u64 {
            let r = mix(i);
            // Sequential runs, sparse random lines, and a small hot set, like an LLC stream.
            let line = match r % 3 {
                0 => i / 2,
                1 => (r >> 8) % (1 << 40),
                _ => (1 << 30) | ((r >> 8) % 64),
            };
            let want = m.insert(line, i).unwrap_or(NEVER);
            assert_eq!(t.replace(line, i), want, "reference {i}, line {line}");
        }
        assert_eq!(t.distinct(), m.len() as u64);
        let usable = t.mask + 1;
        assert!(4 * m.len() <= 3 * usable && 3 * usable <= 8 * m.len().max(MIN_SLOTS));
        assert_eq!(t.slots[t.base..].as_ptr() as usize % 64, 0);
    }

    #[test]
    fn walk_back_matches_single_replacements() {
        let lines: Vec<u64> = (0..1000u64).map(|i| mix(i) % 300).collect();
        let mut a = LatestUse::default();
        let mut out = vec![0; lines.len()];
        a.walk_back(&lines, 5000, &mut out);
        let mut b = LatestUse::default();
        for k in (0..lines.len()).rev() {
            assert_eq!(
                out[k],
                b.replace(lines[k], 5000 + k as u64),
                "reference {k}"
            );
        }
    }
}
