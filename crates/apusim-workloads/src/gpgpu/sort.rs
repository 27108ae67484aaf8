//! LSD radix sort of 32-bit keys, 4 bits per pass (the radix-sort microbenchmark with high
//! data reuse of adaptive-gpu-l1-bypassing.txt Table 2 *sort*, 65536 keys): per pass a
//! histogram kernel (each block counts its tile's digits in scratchpad and writes its 16
//! counts), a host exclusive scan over (digit, block), and a scatter kernel (each block ranks
//! its tile's keys stably and writes them to their global positions).

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch};

const THREADS: usize = 256;
/// Keys per block tile.
const TILE: usize = 1024;
const RADIX: usize = 16;

pub struct RadixSort {
    pub keys: [Buf<u32>; 2],
    pub original: Vec<u32>,
    /// Per (digit, block) counts, then offsets after the host scan.
    pub counts: Buf<u32>,
    step: Step,
    mem: u64,
}

pub fn new(p: &GpgpuParams) -> RadixSort {
    let n = p.size_or(65536).max(1);
    let mut inp = Input::new(p.seed, 13);
    let original: Vec<u32> = (0..n).map(|_| inp.u32()).collect();
    let mut al = Alloc::default();
    let keys = [al.buf(original.clone()), al.buf(vec![0; n])];
    let counts = al.buf(vec![0; RADIX * n.div_ceil(TILE)]);
    RadixSort {
        keys,
        original,
        counts,
        step: Step::default(),
        mem: al.allocated(),
    }
}

impl RadixSort {
    /// The sorted keys (valid once the source is exhausted).
    pub fn sorted(&self) -> &[u32] {
        &self.keys[0].data
    }
}

impl Kernel for RadixSort {
    fn next_launch(&mut self) -> Option<Launch> {
        let i = self.step.next();
        let blocks = self.original.len().div_ceil(TILE);
        if i % 2 == 1 {
            // Host: exclusive scan in (digit, block) order.
            let mut sum = 0;
            for c in self.counts.data.iter_mut() {
                sum += std::mem::replace(c, sum);
            }
        }
        (i < 16).then_some(Launch {
            blocks,
            threads: THREADS,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let i = self.step.cur();
        let shift = 4 * (i / 2) as u32;
        let (b, blocks) = (blk.idx, blk.grid);
        let [k0, k1] = &mut self.keys;
        let (src, dst) = if (i / 2).is_multiple_of(2) {
            (&*k0, k1)
        } else {
            (&*k1, k0)
        };
        let n = src.len();
        let lo = b * TILE;
        let hi = (lo + TILE).min(n);
        let mut tile = [0u32; TILE];
        blk.phase(|w| {
            for r in 0..TILE / THREADS {
                let v = w.load(0x40 * (i % 2) as u64, src, |t| {
                    let k = lo + r * THREADS + t.local;
                    (k < hi).then_some(k)
                });
                for t in w.tids() {
                    tile[r * THREADS + t.local] = v[t.lane];
                }
                w.shared(1);
                w.compute(2);
            }
        });
        let digit = |k: u32| ((k >> shift) & 15) as usize;
        let counts = &mut self.counts;
        if i.is_multiple_of(2) {
            let mut hist = [0u32; RADIX];
            for &k in &tile[..hi - lo] {
                hist[digit(k)] += 1;
            }
            blk.phase(|w| w.shared(2 * (TILE / THREADS) as u64));
            blk.phase(|w| {
                w.store(0x08, counts, |t| {
                    (t.local < RADIX).then(|| (t.local * blocks + b, hist[t.local]))
                });
            });
        } else {
            // Stable local ranks: a scratchpad prefix scan per digit.
            let mut seen = [0u32; RADIX];
            let mut pos = [0usize; TILE];
            let base = w_offsets(counts, blocks, b);
            for j in 0..hi - lo {
                let d = digit(tile[j]);
                pos[j] = base[d] as usize + seen[d] as usize;
                seen[d] += 1;
            }
            blk.phase(|w| {
                w.shared(12);
                w.compute(16);
                let _ = w.load(0x10, counts, |t| {
                    (t.local < RADIX).then(|| t.local * blocks + b)
                });
            });
            blk.phase(|w| {
                for r in 0..TILE / THREADS {
                    w.store(0x18, dst, |t| {
                        let j = r * THREADS + t.local;
                        (lo + j < hi).then(|| (pos[j], tile[j]))
                    });
                    w.shared(1);
                }
            });
        }
    }
    fn footprint(&self) -> u64 {
        self.mem
    }
}

/// The scanned offsets of block `b` for each digit.
fn w_offsets(counts: &Buf<u32>, blocks: usize, b: usize) -> [u32; RADIX] {
    std::array::from_fn(|d| counts.data[d * blocks + b])
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;

    #[test]
    fn sorts() {
        let (k, _) = run(super::new(&params(5000)));
        let mut r = k.original.clone();
        r.sort_unstable();
        assert_eq!(k.sorted(), &r[..]);
    }
}
