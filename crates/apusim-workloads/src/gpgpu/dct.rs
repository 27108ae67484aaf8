//! 8×8 discrete cosine transform, AMD APP SDK `DCT`: one 64-thread work-group per 8×8 block
//! of a square image computes `D · X · Dᵀ` with the orthonormal DCT-II matrix `D`, which every
//! group reads from global memory (a small, heavily reused buffer), through a scratchpad
//! intermediate; each thread writes one coefficient. Named in adaptive-gpu-l1-bypassing.txt
//! Table 2 (*dct*, 2048×2048).

// Index loops mirror the matrix algebra more clearly than iterators.
#![allow(clippy::needless_range_loop)]

use super::{GpgpuParams, Input};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch, Tid};

const B: usize = 8;
type M8 = [[f32; B]; B];

pub struct Dct {
    pub n: usize,
    pub input: Buf<f32>,
    pub output: Buf<f32>,
    /// The DCT-II matrix, row-major.
    pub matrix: Buf<f32>,
    launched: bool,
    mem: u64,
}

/// The orthonormal 8-point DCT-II matrix.
pub fn dct_matrix() -> M8 {
    let mut d = [[0f32; B]; B];
    for (i, row) in d.iter_mut().enumerate() {
        let scale = if i == 0 {
            (1.0f32 / B as f32).sqrt()
        } else {
            (2.0f32 / B as f32).sqrt()
        };
        for (k, v) in row.iter_mut().enumerate() {
            *v = scale
                * ((2 * k + 1) as f32 * i as f32 * std::f32::consts::PI / (2 * B) as f32).cos();
        }
    }
    d
}

pub fn new(p: &GpgpuParams) -> Dct {
    let n = p.size_or(2048).div_ceil(B).max(1) * B;
    let mut inp = Input::new(p.seed, 14);
    let mut al = Alloc::default();
    let input = al.buf((0..n * n).map(|_| inp.range(0.0, 255.0)).collect());
    let output = al.buf(vec![0f32; n * n]);
    let matrix = al.buf(dct_matrix().iter().flatten().copied().collect());
    Dct {
        n,
        input,
        output,
        matrix,
        launched: false,
        mem: al.allocated(),
    }
}

/// `D · X · Dᵀ` for one block, in the kernel's order of operations.
pub fn transform(d: &M8, x: &M8) -> M8 {
    let mut tmp = [[0f32; B]; B];
    for i in 0..B {
        for j in 0..B {
            let mut s = 0f32;
            for k in 0..B {
                s += d[i][k] * x[k][j];
            }
            tmp[i][j] = s;
        }
    }
    let mut out = [[0f32; B]; B];
    for i in 0..B {
        for j in 0..B {
            let mut s = 0f32;
            for k in 0..B {
                s += tmp[i][k] * d[j][k];
            }
            out[i][j] = s;
        }
    }
    out
}

impl Kernel for Dct {
    fn next_launch(&mut self) -> Option<Launch> {
        if self.launched {
            return None;
        }
        self.launched = true;
        Some(Launch {
            blocks: (self.n / B) * (self.n / B),
            threads: B * B,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let n = self.n;
        let per_row = n / B;
        let (by, bx) = (blk.idx / per_row, blk.idx % per_row);
        let at = move |t: Tid| (by * B + t.local / B) * n + bx * B + t.local % B;
        let mut x = [[0f32; B]; B];
        let mut d = [[0f32; B]; B];
        let (input, matrix) = (&self.input, &self.matrix);
        blk.phase(|w| {
            let v = w.load(0x00, input, |t| Some(at(t)));
            let m = w.load(0x08, matrix, |t| Some(t.local));
            for t in w.tids() {
                x[t.local / B][t.local % B] = v[t.lane];
                d[t.local / B][t.local % B] = m[t.lane];
            }
            w.shared(2);
        });
        let out = transform(&d, &x);
        let output = &mut self.output;
        blk.phase(|w| {
            w.shared(2 * B as u64);
            w.compute(4 * B as u64);
            w.store(0x10, output, |t| {
                Some((at(t), out[t.local / B][t.local % B]))
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
    use super::*;

    #[test]
    fn transforms_every_block() {
        let (k, _) = run(new(&params(32)));
        let n = k.n;
        let d = dct_matrix();
        for (by, bx) in [(0, 0), (1, 3), (3, 2)] {
            let mut x = [[0f32; B]; B];
            for (r, row) in x.iter_mut().enumerate() {
                for (c, v) in row.iter_mut().enumerate() {
                    *v = k.input.data[(by * B + r) * n + bx * B + c];
                }
            }
            let want = transform(&d, &x);
            let got = |r: usize, c: usize| k.output.data[(by * B + r) * n + bx * B + c];
            for r in 0..B {
                for c in 0..B {
                    assert_eq!(got(r, c), want[r][c]);
                }
            }
            // The DC coefficient of an orthonormal 8×8 DCT is the block sum / 8.
            let sum: f32 = x.iter().flatten().sum();
            assert!(
                (got(0, 0) - sum / 8.0).abs() < 1e-2,
                "{} vs {}",
                got(0, 0),
                sum / 8.0
            );
        }
    }
}
