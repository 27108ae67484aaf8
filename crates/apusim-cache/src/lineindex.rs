//! The hash index of wide sets (docs/ARCHITECTURE.md, "Wide sets"): line address → a 64-bit
//! value (the engine: the way) for every resident line, built so that a lookup costs one host
//! cache line and can be prefetched before it is needed.
//!
//! - **Open addressing, linear probing** over 16-byte slots: the line + 1 in the low 48 bits
//!   of the first word (16 high bits free for the owner: the oracle's fully-associative LRU
//!   keeps the line's metadata there), the value in the second. A lookup reads the home slot
//!   and, rarely, its successors, with no pointer to chase; a hit's value comes in the same
//!   host line as its key.
//! - **Slot address computable ahead**: [`LineIndex::prefetch`] touches the home slot of a
//!   line some requests before it is looked up, so that the random reads of consecutive
//!   requests overlap instead of being paid one after another.
//! - **Neighbouring lines share a host cache line**: the home slot of `line` is
//!   `hash(line / 4) * 4 + line % 4`, so the four lines of an aligned 256-byte region sit in
//!   one 64-byte block (sequential streams hit the block their previous line brought in).
//! - **Fixed size, load at most one half**: the table has room for every way of the cache from
//!   the start (at least twice as many slots as lines), so it never grows and probe runs stay
//!   short.
//! - **Deletion by backward shift** (no tombstones): a removed slot is refilled by the next
//!   line of its run that may move there, so lookups never slow down with the number of
//!   replacements.
//! - **Fixed hashing** (Fibonacci multiplicative): the layout never depends on a seed.

use crate::hostprefetch::prefetch;

/// Lines per 64-byte block of slots.
const BLOCK: u64 = 4;
/// Smallest table, in slots.
const MIN_SLOTS: usize = 16;

/// One slot: `[line + 1 | high << 48, value]`, all zero when empty (`line + 1` is never zero:
/// lines are at most [`crate::cache::MAX_LINE`]).
pub type Slot = [u64; 2];

/// The key bits of a slot's first word.
const KEY: u64 = (1 << 48) - 1;

/// Open-addressing map line → value (see the module doc).
pub struct LineIndex {
    /// `mask + 1` usable slots from `base` on, `base` chosen so that every block of [`BLOCK`]
    /// slots is one aligned 64-byte host cache line.
    slots: Vec<Slot>,
    base: usize,
    mask: usize,
    /// `64 - log2(blocks)`: the hash's top bits pick the block.
    shift: u32,
}

impl LineIndex {
    /// An empty index for up to `lines` resident lines (lines at most
    /// [`crate::cache::MAX_LINE`]).
    pub fn with_capacity(lines: usize) -> LineIndex {
        let slots = (2 * lines).next_power_of_two().max(MIN_SLOTS);
        let v: Vec<Slot> = vec![[0; 2]; slots + BLOCK as usize];
        let misalign = v.as_ptr() as usize % 64;
        let base = (64 - misalign) % 64 / std::mem::size_of::<Slot>();
        LineIndex {
            slots: v,
            base,
            mask: slots - 1,
            shift: 64 - (slots as u64 / BLOCK).trailing_zeros(),
        }
    }

    /// Home slot of `line`: its group's block, its place in the group.
    #[inline(always)]
    fn home(&self, line: u64) -> usize {
        let block = (line / BLOCK).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift;
        (block * BLOCK + line % BLOCK) as usize
    }

    #[inline(always)]
    fn slot(&self, i: usize) -> &Slot {
        &self.slots[self.base + i]
    }

    /// Hint: `line` will be looked up, inserted or removed soon.
    #[inline(always)]
    pub fn prefetch(&self, line: u64) {
        prefetch(&self.slots, self.base + self.home(line));
    }

    /// The slot number of `line`, if present.
    #[inline(always)]
    pub fn find(&self, line: u64) -> Option<usize> {
        let key = line + 1;
        let mut i = self.home(line);
        loop {
            let k = self.slot(i)[0];
            if k & KEY == key {
                return Some(i);
            }
            if k == 0 {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Slot `i` (a number [`LineIndex::find`] returned, valid until the next insertion or
    /// removal); its high 16 bits and its value may be changed, its key may not.
    #[inline(always)]
    pub fn at(&mut self, i: usize) -> &mut Slot {
        &mut self.slots[self.base + i]
    }

    /// Every indexed line with its slot, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &Slot)> {
        self.slots[self.base..self.base + self.mask + 1]
            .iter()
            .filter(|s| s[0] != 0)
            .map(|s| ((s[0] & KEY) - 1, s))
    }

    /// The value of `line`.
    #[inline(always)]
    pub fn get(&self, line: u64) -> Option<u64> {
        self.find(line).map(|i| self.slot(i)[1])
    }

    /// Record `line` (not present) with `high` in the 16 high bits of its first word and
    /// `value`.
    #[inline]
    pub fn insert(&mut self, line: u64, high: u16, value: u64) {
        let mut i = self.home(line);
        while self.slot(i)[0] != 0 {
            debug_assert_ne!(
                self.slot(i)[0] & KEY,
                line + 1,
                "line {line} is already indexed"
            );
            i = (i + 1) & self.mask;
        }
        self.slots[self.base + i] = [(line + 1) | ((high as u64) << 48), value];
    }

    /// Forget `line` (present or not).
    #[inline]
    pub fn remove(&mut self, line: u64) {
        if let Some(i) = self.find(line) {
            self.remove_at(i);
        }
    }

    /// Empty slot `i` (a number [`LineIndex::find`] returned) by backward shift: later members
    /// of its run move into the hole when their home does not lie cyclically in
    /// (hole, their slot].
    #[inline]
    pub fn remove_at(&mut self, i: usize) {
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let s = *self.slot(j);
            if s[0] == 0 {
                break;
            }
            let home = self.home((s[0] & KEY) - 1);
            let stays = (j.wrapping_sub(home) & self.mask) < (j.wrapping_sub(hole) & self.mask);
            if !stays {
                self.slots[self.base + hole] = s;
                hole = j;
            }
        }
        self.slots[self.base + hole] = [0; 2];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    proptest::proptest! {
        /// Every lookup agrees with a std map through inserts and removals, with lines drawn
        /// from a small range (long probe runs, many shifts) and from sparse blocks.
        #[test]
        fn agrees_with_a_std_map(
            cap in 1usize..300,
            ops in proptest::collection::vec((0u8..3, 0u64..600, proptest::bool::ANY), 1..3000),
        ) {
            let mut t = LineIndex::with_capacity(cap);
            let mut m: HashMap<u64, usize> = HashMap::new();
            for (k, (op, x, sparse)) in ops.into_iter().enumerate() {
                let line = if sparse { (x << 20) ^ (x % 5) } else { x };
                match op {
                    0 if m.len() < cap && !m.contains_key(&line) => {
                        t.insert(line, k as u16, k as u64);
                        m.insert(line, k);
                    }
                    1 => {
                        t.remove(line);
                        m.remove(&line);
                    }
                    _ => {}
                }
                proptest::prop_assert_eq!(t.get(line), m.get(&line).map(|&k| k as u64));
            }
            for (&line, &k) in &m {
                let i = t.find(line).unwrap();
                proptest::prop_assert_eq!(*t.at(i), [(line + 1) | ((k as u16 as u64) << 48), k as u64]);
            }
            proptest::prop_assert_eq!(t.iter().count(), m.len());
            for (line, s) in t.iter() {
                proptest::prop_assert_eq!(Some(s[1]), m.get(&line).map(|&k| k as u64));
            }
        }
    }

    #[test]
    fn blocks_are_host_cache_lines() {
        let t = LineIndex::with_capacity(1000);
        assert_eq!(t.slots[t.base..].as_ptr() as usize % 64, 0);
        assert_eq!(t.mask + 1, 2048);
    }
}
