//! Physical page placement for timed runs: where a program's virtual pages land in memory.
//!
//! Traces record virtual addresses. `identity` places every page at its own address (what
//! functional runs do). `random` gives each 4 KiB virtual page, on its first touch, a
//! physical frame drawn at random (seeded) among the frames not yet used, as ChampSim's
//! virtual memory does with page randomisation (ChampSim src/vmem.cc: a shuffled free list
//! of frames, popped on each first touch). Placement decides which LLC sets and which DRAM
//! banks and rows a program's lines share: a sequential sweep keeps DRAM rows open only
//! within a page once its pages are scattered.
//!
//! The timed memory side translates each core access's address as it enters the caches
//! (ChampSim's caches below the L1 see physical addresses; apusim's L1s are physically
//! indexed too, which ChampSim's VIPT L1D matches because its sets lie within a page).
//! Each agent has its own address space; one free list serves all of them.

use rustc_hash::{FxHashMap, FxHashSet};

/// Bits of the 4 KiB page offset.
pub const PAGE_BITS: u32 = 12;

/// Frames below 1 MiB are never handed out (ChampSim reserves them too).
const FIRST_FRAME: u64 = (1 << 20) >> PAGE_BITS;

/// The page placements apusim knows.
pub const PLACEMENTS: &[&str] = &["identity", "random"];

/// Random first-touch page placement over `frames` physical frames.
pub struct PageMap {
    map: FxHashMap<u64, u64>,
    used: FxHashSet<u64>,
    frames: u64,
    state: u64,
}

impl PageMap {
    /// Frames are drawn from the first `memory_bytes` of physical memory.
    pub fn random(memory_bytes: u64, seed: u64) -> PageMap {
        PageMap {
            map: FxHashMap::default(),
            used: FxHashSet::default(),
            frames: (memory_bytes >> PAGE_BITS).max(FIRST_FRAME + 1),
            state: seed ^ 0x5DEE_CE66_D1CE_5EED,
        }
    }

    fn next_random(&mut self) -> u64 {
        // SplitMix64 (Steele et al., "Fast splittable pseudorandom number generators").
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The physical address of agent `space`'s virtual address `vaddr`.
    pub fn translate(&mut self, space: u32, vaddr: u64) -> u64 {
        let vpage = (vaddr >> PAGE_BITS) | (u64::from(space) << 52);
        let offset = vaddr & ((1 << PAGE_BITS) - 1);
        if let Some(&f) = self.map.get(&vpage) {
            return (f << PAGE_BITS) | offset;
        }
        let span = self.frames - FIRST_FRAME;
        let frame = if (self.used.len() as u64) < span {
            loop {
                let f = FIRST_FRAME + ((self.next_random() as u128 * span as u128) >> 64) as u64;
                if self.used.insert(f) {
                    break f;
                }
            }
        } else {
            // Memory is exhausted: frames are reused, as ChampSim refills its free list.
            FIRST_FRAME + self.next_random() % span
        };
        self.map.insert(vpage, frame);
        (frame << PAGE_BITS) | offset
    }

    /// Pages placed so far.
    pub fn pages(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_placed_once_and_keep_their_offsets() {
        let mut m = PageMap::random(16 << 30, 1);
        let a = m.translate(0, 0x1000_0123);
        assert_eq!(a & 0xfff, 0x123);
        assert_eq!(
            m.translate(0, 0x1000_0fff),
            (a & !0xfff) | 0xfff,
            "same page, same frame"
        );
        let b = m.translate(0, 0x1000_1000);
        assert_ne!(a >> PAGE_BITS, b >> PAGE_BITS);
        assert!((1 << 20..16 << 30).contains(&a));
        assert_eq!(m.pages(), 2);
        let c = m.translate(1, 0x1000_0123);
        assert_ne!(
            c >> PAGE_BITS,
            a >> PAGE_BITS,
            "another agent's page is another page"
        );
    }

    #[test]
    fn placement_is_seeded_and_frames_are_distinct() {
        let frames = |seed| {
            let mut m = PageMap::random(64 << 20, seed);
            (0..4096u64)
                .map(|p| m.translate(0, p << PAGE_BITS) >> PAGE_BITS)
                .collect::<Vec<_>>()
        };
        let a = frames(1);
        assert_eq!(a, frames(1));
        assert_ne!(a, frames(2));
        let mut d = a.clone();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), a.len(), "no frame is handed out twice");
    }
}
