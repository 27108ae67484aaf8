//! Parallel sum reduction, the CUDA SDK `reduction` kernel 6 (each thread first sums a
//! grid-stride loop of elements, then a scratchpad tree reduces the block; a second launch
//! reduces the per-block partial sums): drp-reuse-probability-shared-llc.txt Table 2
//! *reduction* (64 blocks × 256 threads), gpu-access-criticality Table 3, TAP Table 6 type D.

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch};

const THREADS: usize = 256;
const BLOCKS: usize = 64;

pub struct Reduction {
    pub input: Buf<f32>,
    pub partial: Buf<f32>,
    pub result: Buf<f32>,
    /// Times the whole input is reduced (the SDK benchmark loops the kernel).
    pub repeats: usize,
    step: Step,
    mem: u64,
}

pub fn new(p: &GpgpuParams) -> Reduction {
    let n = p.size_or(1 << 20).max(1);
    let mut inp = Input::new(p.seed, 2);
    let mut al = Alloc::default();
    let input = al.buf((0..n).map(|_| inp.range(0.0, 1.0)).collect());
    let partial = al.buf(vec![0.0; BLOCKS]);
    let result = al.buf(vec![0.0; 1]);
    Reduction {
        input,
        partial,
        result,
        repeats: 2,
        step: Step::default(),
        mem: al.allocated(),
    }
}

/// Scratchpad tree over `s` (THREADS values), counting the instructions on `w`.
fn tree(s: &mut [f32]) {
    let mut half = s.len() / 2;
    while half > 0 {
        for i in 0..half {
            s[i] += s[i + half];
        }
        half /= 2;
    }
}

impl Kernel for Reduction {
    fn next_launch(&mut self) -> Option<Launch> {
        let i = self.step.next();
        (i < 2 * self.repeats).then_some(Launch {
            blocks: if i.is_multiple_of(2) { BLOCKS } else { 1 },
            threads: THREADS,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let mut sdata = [0f32; THREADS];
        let first = self.step.cur().is_multiple_of(2);
        let (src, dst) = if first {
            (&self.input, &mut self.partial)
        } else {
            (&self.partial, &mut self.result)
        };
        let n = src.len();
        let stride = blk.grid * THREADS;
        let b = blk.idx;
        blk.phase(|w| {
            let mut i0 = b * THREADS;
            while i0 < n {
                let start = i0 + w.first_local();
                let v = w.load_run(0x00, src, start, n);
                let live = n.saturating_sub(start).min(v.len());
                let first = w.first_local();
                for (s, x) in sdata[first..first + live].iter_mut().zip(&v) {
                    *s += x;
                }
                w.compute(3);
                i0 += stride;
            }
            w.shared(1);
        });
        tree(&mut sdata);
        let levels = THREADS.trailing_zeros() as u64;
        for _ in 0..levels {
            blk.phase(|w| {
                w.shared(3);
                w.compute(2);
            });
        }
        blk.phase(|w| {
            w.shared(1);
            w.store(0x08, dst, |t| (t.local == 0).then_some((b, sdata[0])));
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
    fn sums_the_input() {
        let (k, _) = run(super::new(&params(100_000)));
        let r: f64 = k.input.data.iter().map(|&x| x as f64).sum();
        assert!(
            close(k.result.data[0], r as f32, 1e-4),
            "{} vs {r}",
            k.result.data[0]
        );
    }
}
