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
    // Skewed byte values (image-like data): sum of two uniforms.
    let byte = |inp: &mut Input| ((inp.below(128) + inp.below(129)) & 0xFF) as u32;
    let data = (0..words)
        .map(|_| byte(&mut inp) | byte(&mut inp) << 8 | byte(&mut inp) << 16 | byte(&mut inp) << 24)
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
        let mut sub = [0u32; BINS];
        let n = self.input.len();
        let stride = blk.grid * THREADS;
        let b = blk.idx;
        let input = &self.input;
        blk.phase(|w| w.shared(1));
        blk.phase(|w| {
            let mut i0 = b * THREADS;
            while i0 < n {
                let v = w.load(0x00, input, |t| (i0 + t.local < n).then_some(i0 + t.local));
                for t in w.tids() {
                    if i0 + t.local < n {
                        for k in 0..4 {
                            sub[(v[t.lane] >> (8 * k) & 0xFF) as usize] += 1;
                        }
                    }
                }
                // Four shared-memory atomic increments and the byte extraction.
                w.shared(4);
                w.compute(8);
                i0 += stride;
            }
        });
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
