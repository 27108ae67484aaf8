//! Dense matrix multiplication with 16×16 scratchpad tiles, as the CUDA SDK `matrixMul`
//! kernel: the stand-in for adaptive-gpu-l1-bypassing.txt Table 2 *matrixmul* (512×512, the
//! most memory-intensive benchmark there) and tap-tlp-aware-llc.txt Table 6 *mm* (type B).

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch, WARP};

const T: usize = 16;

/// C = A·B for n×n row-major matrices.
pub struct MatrixMul {
    pub n: usize,
    pub a: Buf<f32>,
    pub b: Buf<f32>,
    pub c: Buf<f32>,
    step: Step,
    mem: u64,
}

pub fn new(p: &GpgpuParams) -> MatrixMul {
    let n = p.size_or(512).div_ceil(T).max(1) * T;
    let mut inp = Input::new(p.seed, 1);
    let mut al = Alloc::default();
    let a = al.buf((0..n * n).map(|_| inp.range(-1.0, 1.0)).collect());
    let b = al.buf((0..n * n).map(|_| inp.range(-1.0, 1.0)).collect());
    let c = al.buf(vec![0.0; n * n]);
    MatrixMul {
        n,
        a,
        b,
        c,
        step: Step::default(),
        mem: al.allocated(),
    }
}

impl Kernel for MatrixMul {
    fn next_launch(&mut self) -> Option<Launch> {
        (self.step.next() == 0).then_some(Launch {
            blocks: (self.n / T) * (self.n / T),
            threads: T * T,
        })
    }
    /// The two 16×16 float tiles `sa` and `sb`.
    fn shared_bytes(&self) -> u32 {
        (2 * T * T * std::mem::size_of::<f32>()) as u32
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let n = self.n;
        let (bx, by) = (blk.idx % (n / T), blk.idx / (n / T));
        let mut sa = [0f32; T * T];
        let mut sb = [0f32; T * T];
        let mut acc = [0f32; T * T];
        let (a, b) = (&self.a, &self.b);
        for m in 0..n / T {
            blk.phase(|w| {
                // Lane l is thread (ty, tx) = (local / T, local % T) of the tile.
                let l0 = w.first_local();
                let ia =
                    std::array::from_fn(|l| (by * T + (l0 + l) / T) * n + m * T + (l0 + l) % T);
                let ib =
                    std::array::from_fn(|l| (m * T + (l0 + l) / T) * n + bx * T + (l0 + l) % T);
                let va = w.load_idx(0x00, a, &ia, u32::MAX);
                let vb = w.load_idx(0x08, b, &ib, u32::MAX);
                sa[l0..l0 + WARP].copy_from_slice(&va);
                sb[l0..l0 + WARP].copy_from_slice(&vb);
                w.shared(2);
                w.compute(4);
            });
            blk.phase(|w| {
                // Row by row over the warp's threads (a warp holds whole tile rows), k
                // ascending per thread as in the CUDA loop: the same sums, vectorizable.
                for row in w.locals().step_by(T) {
                    let ty = row / T;
                    let row = ty * T..ty * T + T;
                    let mut out: [f32; T] = acc[row.clone()].try_into().unwrap();
                    for k in 0..T {
                        let a = sa[ty * T + k];
                        let b: &[f32; T] = sb[k * T..k * T + T].try_into().unwrap();
                        for tx in 0..T {
                            out[tx] += a * b[tx];
                        }
                    }
                    acc[row].copy_from_slice(&out);
                }
                w.shared(2 * T as u64);
                w.compute(T as u64 + 2);
            });
        }
        let c = &mut self.c;
        blk.phase(|w| {
            w.store(0x10, c, |t| {
                Some((
                    (by * T + t.local / T) * n + bx * T + t.local % T,
                    acc[t.local],
                ))
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
    fn computes_the_product() {
        let (k, recs) = run(super::new(&params(48)));
        let n = k.n;
        for i in 0..n {
            for j in 0..n {
                let r: f32 = (0..n)
                    .map(|l| k.a.data[i * n + l] * k.b.data[l * n + j])
                    .sum();
                assert!(close(k.c.data[i * n + j], r, 1e-4));
            }
        }
        // Each 16-wide row segment of a tile is one 64-byte transaction.
        assert!(recs.iter().all(|a| a.size == 64));
        assert_eq!(recs.len(), (n / 16) * (n / 16) * 8 * ((n / 16) * 2 * 2 + 2));
    }
}
