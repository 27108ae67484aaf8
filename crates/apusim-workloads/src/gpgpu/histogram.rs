//! 256-bin byte histogram: each block builds a sub-histogram in scratchpad from a grid-stride
//! walk over the input (4 bytes per load) and merges it into the global histogram with
//! atomics (CUDA SDK `histogram256`): adaptive-gpu-l1-bypassing.txt Table 2 *histogram*,
//! tap-tlp-aware-llc.txt Table 6 type D.

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch};

const THREADS: usize = 256;
const BLOCKS: usize = 240;
const BINS: usize = 256;

pub struct Histogram {
    /// Input bytes, packed four per word.
    pub input: Buf<u32>,
    pub bins: Buf<u32>,
    pub iterations: usize,
    step: Step,
    mem: u64,
}

pub fn new(p: &GpgpuParams) -> Histogram {
    let words = p.size_or(1 << 22).div_ceil(4).max(1);
    let mut inp = Input::new(p.seed, 5);
    // Skewed byte values (image-like data): each byte the sum of two uniform 7-bit values
    // (triangular on 0..=254), four bytes from one 64-bit draw with two masks and one add
    // (no carry crosses a byte: 127 + 127 < 256).
    let data = (0..words)
        .map(|_| {
            let u = inp.u64();
            (u as u32 & 0x7F7F_7F7F) + ((u >> 32) as u32 & 0x7F7F_7F7F)
        })
        .collect();
    let mut al = Alloc::default();
    let input = al.buf(data);
    let bins = al.buf(vec![0; BINS]);
    Histogram {
        input,
        bins,
        iterations: 1,
        step: Step::default(),
        mem: al.allocated(),
    }
}

impl Kernel for Histogram {
    fn next_launch(&mut self) -> Option<Launch> {
        (self.step.next() < self.iterations).then_some(Launch {
            blocks: BLOCKS,
            threads: THREADS,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        // Four sub-histograms, one per byte position (summed at the merge), so that runs of
        // equal bytes do not serialize on one counter.
        let mut sub = [[0u32; BINS]; 4];
        let n = self.input.len();
        let stride = blk.grid * THREADS;
        let b = blk.idx;
        let input = &self.input;
        blk.phase(|w| w.shared(1));
        blk.phase(|w| {
            let mut i0 = b * THREADS;
            while i0 < n {
                let start = i0 + w.first_local();
                let v = w.load_run(0x00, input, start, n);
                let live = n.saturating_sub(start).min(v.len());
                for &x in &v[..live] {
                    for (k, sub) in sub.iter_mut().enumerate() {
                        sub[(x >> (8 * k) & 0xFF) as usize] += 1;
                    }
                }
                // Four shared-memory atomic increments and the byte extraction.
                w.shared(4);
                w.compute(8);
                i0 += stride;
            }
        });
        let sub: [u32; BINS] = std::array::from_fn(|i| sub.iter().map(|s| s[i]).sum());
        let bins = &mut self.bins;
        blk.phase(|w| {
            w.shared(1);
            w.atomic(
                0x08,
                bins,
                |t| Some(t.local % BINS),
                |t, old| old + sub[t.local % BINS],
            );
        });
    }
    fn footprint(&self) -> u64 {
        self.mem
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;

    #[test]
    fn counts_every_byte() {
        let (k, recs) = run(super::new(&params(100_001)));
        let mut r = [0u32; 256];
        for w in &k.input.data {
            for b in w.to_le_bytes() {
                r[b as usize] += 1;
            }
        }
        assert_eq!(k.bins.data, r.to_vec());
        assert!(recs
            .iter()
            .any(|a| a.flags & apusim_trace::Access::MODIFY != 0));
    }
}
