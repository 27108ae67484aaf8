//! Bitonic sort, one global compare-and-exchange launch per (stage, pass) of the sorting
//! network (AMD APP SDK `BitonicSort`): adaptive-gpu-l1-bypassing.txt Table 2 *bitonic*
//! (131072 keys). Each pass reads and writes the whole array with a pass-dependent stride.

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch};

const THREADS: usize = 256;

pub struct Bitonic {
    pub keys: Buf<u32>,
    pub original: Vec<u32>,
    passes: Vec<(usize, usize)>,
    step: Step,
    mem: u64,
}

pub fn new(p: &GpgpuParams) -> Bitonic {
    let n = p.size_or(131072).max(2).next_power_of_two();
    let mut inp = Input::new(p.seed, 14);
    let original: Vec<u32> = (0..n).map(|_| inp.u32()).collect();
    let mut passes = Vec::new();
    let mut k = 2;
    while k <= n {
        let mut j = k / 2;
        while j > 0 {
            passes.push((k, j));
            j /= 2;
        }
        k *= 2;
    }
    let mut al = Alloc::default();
    let keys = al.buf(original.clone());
    Bitonic {
        keys,
        original,
        passes,
        step: Step::default(),
        mem: al.allocated(),
    }
}

impl Kernel for Bitonic {
    fn next_launch(&mut self) -> Option<Launch> {
        (self.step.next() < self.passes.len()).then(|| Launch {
            blocks: (self.keys.len() / 2).div_ceil(THREADS),
            threads: THREADS,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let (k, j) = self.passes[self.step.cur()];
        let half = self.keys.len() / 2;
        let b = blk.idx;
        let keys = &mut self.keys;
        blk.phase(|w| {
            // Thread p handles the pair (i, i + j), i = p with a zero inserted at bit log2(j).
            let lo = move |t: crate::simt::Tid| {
                let p = b * THREADS + t.local;
                (p < half).then(|| (p / j) * 2 * j + p % j)
            };
            let a = w.load(0x00, keys, lo);
            let c = w.load(0x08, keys, |t| lo(t).map(|i| i + j));
            let mut sw = [false; 32];
            for t in w.tids() {
                if let Some(i) = lo(t) {
                    let up = i & k == 0;
                    sw[t.lane] = (a[t.lane] > c[t.lane]) == up;
                }
            }
            w.compute(6);
            w.store(0x10, keys, |t| {
                lo(t).filter(|_| sw[t.lane]).map(|i| (i, c[t.lane]))
            });
            w.store(0x18, keys, |t| {
                lo(t).filter(|_| sw[t.lane]).map(|i| (i + j, a[t.lane]))
            });
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
    fn sorts() {
        let (k, _) = run(super::new(&params(4096)));
        let mut r = k.original.clone();
        r.sort_unstable();
        assert_eq!(k.keys.data, r);
    }
}
