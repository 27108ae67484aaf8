//! Dense matrix multiplication C = A·B of n×n row-major matrices, two ways:
//!
//! - [`new`]: 16×16 scratchpad tiles, as the CUDA SDK `matrixMul` kernel: tap-tlp-aware-llc.txt
//!   Table 6 *mm* (type B).
//! - [`new_nospm`]: no scratchpad, one thread per element of C reading its row of A and its
//!   column of B straight from global memory (the plain OpenCL/CUDA kernel in 16×16
//!   work-groups): the stand-in for adaptive-gpu-l1-bypassing.txt Table 2 *matrixmul*.
//!
//! Why the second for Table 2: it gives matrixmul a memory intensity of 395.6 global memory
//! accesses per 1000 instructions, the highest of the thirteen, and §5.2 has it gain from
//! bypassing because "most of the data that should be reused are replaced due to cache
//! pollution". The tiled kernel issues 34 global accesses per 1000 warp instructions here and
//! re-reads nothing through the L1 (each block reads each datum once); only a kernel whose
//! reuse goes through the L1 has both properties. In the global one a warp (two rows of a
//! work-group) re-reads the line of A it holds for sixteen consecutive `k`, while every `k`
//! brings a line of B that the work-group does not touch again: the streaming blocks that
//! evict reusable ones. Its instruction accounting per `k`, as in the other kernels of this
//! module: the two loads and three ALU instructions (the multiply-add and the loop's
//! increment and compare-branch; the addresses advance by constant strides folded into the
//! loads' offsets).

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch, WARP};

const T: usize = 16;

/// C = A·B for n×n row-major matrices.
pub struct MatrixMul {
    /// Tiles staged in the scratchpad ([`new`]) or every operand read from global memory
    /// ([`new_nospm`]).
    pub tiled: bool,
    pub n: usize,
    pub a: Buf<f32>,
    pub b: Buf<f32>,
    pub c: Buf<f32>,
    step: Step,
    mem: u64,
}

/// The CUDA SDK kernel, with scratchpad tiles.
pub fn new(p: &GpgpuParams) -> MatrixMul {
    operands(p, true)
}

/// The kernel without scratchpad.
pub fn new_nospm(p: &GpgpuParams) -> MatrixMul {
    operands(p, false)
}

fn operands(p: &GpgpuParams, tiled: bool) -> MatrixMul {
    let n = p.size_or(512).div_ceil(T).max(1) * T;
    let mut inp = Input::new(p.seed, 1);
    let mut al = Alloc::default();
    let a = al.buf((0..n * n).map(|_| inp.range(-1.0, 1.0)).collect());
    let b = al.buf((0..n * n).map(|_| inp.range(-1.0, 1.0)).collect());
    let c = al.buf(vec![0.0; n * n]);
    MatrixMul {
        tiled,
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
    /// The two 16×16 float tiles `sa` and `sb` of the tiled kernel.
    fn shared_bytes(&self) -> u32 {
        if self.tiled {
            (2 * T * T * std::mem::size_of::<f32>()) as u32
        } else {
            0
        }
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        if self.tiled {
            self.block_tiled(blk)
        } else {
            self.block_global(blk)
        }
    }
    fn footprint(&self) -> u64 {
        self.mem
    }
}

impl MatrixMul {
    fn block_tiled(&mut self, blk: &mut Block<'_>) {
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

    fn block_global(&mut self, blk: &mut Block<'_>) {
        let n = self.n;
        let (bx, by) = (blk.idx % (n / T), blk.idx / (n / T));
        let (a, b, c) = (&self.a, &self.b, &mut self.c);
        blk.phase(|w| {
            // Lane l is thread (ty, tx) = (local / T, local % T) of the work-group.
            let l0 = w.first_local();
            let row: [usize; WARP] = std::array::from_fn(|l| by * T + (l0 + l) / T);
            let col: [usize; WARP] = std::array::from_fn(|l| bx * T + (l0 + l) % T);
            let mut acc = [0f32; WARP];
            for k in 0..n {
                let ia = std::array::from_fn(|l| row[l] * n + k);
                let ib = std::array::from_fn(|l| k * n + col[l]);
                let va = w.load_idx(0x00, a, &ia, u32::MAX);
                let vb = w.load_idx(0x08, b, &ib, u32::MAX);
                for l in 0..WARP {
                    acc[l] += va[l] * vb[l];
                }
                w.compute(3);
            }
            w.store(0x10, c, |t| {
                let l = t.lane;
                Some((row[l] * n + col[l], acc[l]))
            });
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;

    /// C holds A·B.
    fn assert_product(k: &super::MatrixMul) {
        let n = k.n;
        for i in 0..n {
            for j in 0..n {
                let r: f32 = (0..n)
                    .map(|l| k.a.data[i * n + l] * k.b.data[l * n + j])
                    .sum();
                assert!(close(k.c.data[i * n + j], r, 1e-4));
            }
        }
    }

    #[test]
    fn computes_the_product() {
        let (k, recs) = run(super::new(&params(48)));
        assert_product(&k);
        let n = k.n;
        // Each 16-wide row segment of a tile is one 64-byte transaction.
        assert!(recs.iter().all(|a| a.size == 64));
        assert_eq!(recs.len(), (n / 16) * (n / 16) * 8 * ((n / 16) * 2 * 2 + 2));
    }

    #[test]
    fn the_global_kernel_computes_the_product_reading_every_operand_from_memory() {
        let (k, recs) = run(super::new_nospm(&params(32)));
        assert_product(&k);
        let n = k.n;
        // Two loads per k per warp (n/16 × n/16 work-groups of 8 warps, n iterations each):
        // a load of A touches the warp's two rows' lines, a load of B one line (16
        // consecutive floats, the same for both rows); one store of two lines per warp.
        let warps = (n / 16) * (n / 16) * 8;
        let reads = recs.iter().filter(|r| r.op.is_read()).count();
        assert_eq!(
            reads,
            warps * n * 3,
            "A: two lines, B: one line, per k per warp"
        );
        let writes = recs.iter().filter(|r| r.op.is_write()).count();
        assert_eq!(writes, warps * 2, "a line of C per row of the warp's two");
    }
}
