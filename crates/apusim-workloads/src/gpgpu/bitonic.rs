//! Bitonic sort, one global compare-and-exchange launch per (stage, pass) of the sorting
//! network (AMD APP SDK `BitonicSort`): adaptive-gpu-l1-bypassing.txt Table 2 *bitonic*
//! (131072 keys). Each pass reads and writes the whole array with a pass-dependent stride.

use super::{GpgpuParams, Input, Step};
use crate::simt::{first_lanes, Alloc, Block, Buf, Kernel, Launch};

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
            // Thread p handles the pair (i, i + j), i = p with a zero inserted at bit log2(j)
            // (j is a power of two); lanes past the last pair are inactive.
            let p0 = b * THREADS + w.first_local();
            let live = half.saturating_sub(p0);
            let mask = first_lanes(live);
            let sh = j.trailing_zeros();
            let lo: [usize; 32] = std::array::from_fn(|l| {
                let p = p0 + l;
                (p >> sh << (sh + 1)) | (p & (j - 1))
            });
            let hi = lo.map(|i| i + j);
            let a = w.load_idx(0x00, keys, &lo, mask);
            let c = w.load_idx(0x08, keys, &hi, mask);
            let mut sw = 0u32;
            for l in 0..32 {
                let up = lo[l] & k == 0;
                sw |= u32::from((a[l] > c[l]) == up) << l;
            }
            let sw = sw & mask;
            w.compute(6);
            w.store_idx(0x10, keys, &lo, &c, sw);
            w.store_idx(0x18, keys, &hi, &a, sw);
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
