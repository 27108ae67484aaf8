//! Fast Walsh-Hadamard transform, the CUDA SDK `fastWalshTransform`: radix-4 butterfly
//! stages over global memory, two stride levels per launch, many arithmetic instructions per
//! element: drp-reuse-probability-shared-llc.txt Table 2 *fastwalsh*, gpu-access-criticality
//! Table 3, tap-tlp-aware-llc.txt Table 6 type A (compute bound).

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch};

const THREADS: usize = 256;

pub struct FastWalsh {
    pub data: Buf<f32>,
    /// The input, kept for checking.
    pub original: Vec<f32>,
    /// Strides still to process, largest first (each launch does a radix-4 stage: `s`, `s/2`).
    strides: Vec<usize>,
    step: Step,
    mem: u64,
}

pub fn new(p: &GpgpuParams) -> FastWalsh {
    let n = p.size_or(1 << 20).max(4).next_power_of_two();
    let mut inp = Input::new(p.seed, 4);
    let original: Vec<f32> = (0..n).map(|_| inp.range(-1.0, 1.0)).collect();
    let mut al = Alloc::default();
    let data = al.buf(original.clone());
    let mut strides = Vec::new();
    let mut s = n / 2;
    while s >= 1 {
        strides.push(s);
        s /= 4;
    }
    FastWalsh {
        data,
        original,
        strides,
        step: Step::default(),
        mem: al.allocated(),
    }
}

impl Kernel for FastWalsh {
    fn next_launch(&mut self) -> Option<Launch> {
        let i = self.step.next();
        let n = self.data.len();
        let per = |s: usize| if s >= 2 { n / 4 } else { n / 2 };
        (i < self.strides.len()).then(|| Launch {
            blocks: per(self.strides[i]).div_ceil(THREADS).max(1),
            threads: THREADS,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let s = self.strides[self.step.cur()];
        let radix4 = s >= 2;
        let n = self.data.len();
        let quads = if radix4 { n / 4 } else { n / 2 };
        let b = blk.idx;
        let d = &mut self.data;
        blk.phase(|w| {
            // Element index of the butterfly's first input for thread `p`.
            let base = |p: usize| {
                if radix4 {
                    let q = s / 2;
                    (p / q) * 2 * s + p % q
                } else {
                    2 * p
                }
            };
            let live = |t: crate::simt::Tid| {
                let p = b * THREADS + t.local;
                (p < quads).then_some(p)
            };
            if radix4 {
                let q = s / 2;
                let offs = [0, q, s, s + q];
                let mut v = [[0f32; 32]; 4];
                for (j, o) in offs.iter().enumerate() {
                    v[j] = w.load(8 * j as u64, d, |t| live(t).map(|p| base(p) + o));
                }
                let mut r = [[0f32; 32]; 4];
                for t in w.tids() {
                    let l = t.lane;
                    let (a0, a1) = (v[0][l] + v[2][l], v[0][l] - v[2][l]);
                    let (a2, a3) = (v[1][l] + v[3][l], v[1][l] - v[3][l]);
                    r[0][l] = a0 + a2;
                    r[1][l] = a0 - a2;
                    r[2][l] = a1 + a3;
                    r[3][l] = a1 - a3;
                }
                w.compute(24);
                for (j, o) in offs.iter().enumerate() {
                    w.store(0x20 + 8 * j as u64, d, |t| {
                        live(t).map(|p| (base(p) + o, r[j][t.lane]))
                    });
                }
            } else {
                let a = w.load(0x40, d, |t| live(t).map(base));
                let c = w.load(0x48, d, |t| live(t).map(|p| base(p) + 1));
                w.compute(8);
                w.store(0x50, d, |t| {
                    live(t).map(|p| (base(p), a[t.lane] + c[t.lane]))
                });
                w.store(0x58, d, |t| {
                    live(t).map(|p| (base(p) + 1, a[t.lane] - c[t.lane]))
                });
            }
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
    fn transforms_like_the_definition() {
        let (k, _) = run(super::new(&params(512)));
        let n = k.original.len();
        for i in 0..n {
            let r: f64 = (0..n)
                .map(|j| {
                    let sign = if (i & j).count_ones() % 2 == 0 {
                        1.0
                    } else {
                        -1.0
                    };
                    sign * k.original[j] as f64
                })
                .sum();
            assert!(close(k.data.data[i], r as f32, 1e-4), "{i}");
        }
    }
}
