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
//! [`Paged`] applies a placement to any [`InstrSource`]: every access's address is
//! translated (its `pc` stays virtual, as branch prediction uses the virtual ip).

use crate::instr::{Instr, InstrSource};
use apusim_trace::TraceError;
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

    /// The physical address of virtual address `vaddr`.
    pub fn translate(&mut self, vaddr: u64) -> u64 {
        let vpage = vaddr >> PAGE_BITS;
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

/// An instruction source whose accesses are placed by a [`PageMap`].
pub struct Paged {
    inner: Box<dyn InstrSource>,
    map: PageMap,
}

impl Paged {
    pub fn new(inner: Box<dyn InstrSource>, map: PageMap) -> Self {
        Paged { inner, map }
    }
}

impl InstrSource for Paged {
    fn next_instr(&mut self) -> Result<Option<Instr>, TraceError> {
        let Some(mut ins) = self.inner.next_instr()? else {
            return Ok(None);
        };
        let n = ins.n_ops as usize;
        for a in &mut ins.ops[..n] {
            a.addr = self.map.translate(a.addr);
        }
        Ok(Some(ins))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_placed_once_and_keep_their_offsets() {
        let mut m = PageMap::random(16 << 30, 1);
        let a = m.translate(0x1000_0123);
        assert_eq!(a & 0xfff, 0x123);
        assert_eq!(m.translate(0x1000_0fff), (a & !0xfff) | 0xfff, "same page, same frame");
        let b = m.translate(0x1000_1000);
        assert_ne!(a >> PAGE_BITS, b >> PAGE_BITS);
        assert!(a >= 1 << 20 && a < 16 << 30);
        assert_eq!(m.pages(), 2);
    }

    #[test]
    fn placement_is_seeded_and_frames_are_distinct() {
        let frames = |seed| {
            let mut m = PageMap::random(64 << 20, seed);
            (0..4096u64)
                .map(|p| m.translate(p << PAGE_BITS) >> PAGE_BITS)
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
