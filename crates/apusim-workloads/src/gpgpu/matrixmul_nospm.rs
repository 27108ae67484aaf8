//! Dense matrix multiplication without scratchpad: one thread per element of C, each reading
//! its row of A and its column of B straight from global memory (the plain OpenCL/CUDA
//! kernel `C[i][j] = Σ_k A[i][k]·B[k][j]` in 16×16 work-groups). This is the stand-in for
//! adaptive-gpu-l1-bypassing.txt Table 2 *matrixmul*.
//!
//! Why this kernel and not [`super::matrixmul`] (CUDA SDK tiles): Table 2 gives matrixmul a
//! memory intensity of 395.6 global memory accesses per 1000 instructions, the highest of the
//! thirteen, and §5.2 has it gain from bypassing because "most of the data that should be
//! reused are replaced due to cache pollution". A kernel that stages its tiles in the
//! scratchpad issues 34 global accesses per 1000 warp instructions here and re-reads nothing
//! through the L1 (each block reads each datum once); only a kernel whose reuse goes through
//! the L1 has both properties. In this one a warp (two rows of a work-group) re-reads the
//! line of A it holds for sixteen consecutive `k`, while every `k` brings a line of B that
//! the work-group does not touch again: the streaming blocks that evict reusable ones.
//!
//! Instruction accounting per `k`, as in the other kernels of this module: the two loads and
//! three ALU instructions (the multiply-add and the loop's increment and compare-branch; the
//! addresses advance by constant strides folded into the loads' offsets).

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch, WARP};

/// Work-group side: 16×16 threads, as `matrixmul`.
const T: usize = 16;

/// C = A·B for n×n row-major matrices, read from global memory only.
pub struct MatrixMulNoSpm {
    pub n: usize,
    pub a: Buf<f32>,
    pub b: Buf<f32>,
    pub c: Buf<f32>,
    step: Step,
    mem: u64,
}

pub fn new(p: &GpgpuParams) -> MatrixMulNoSpm {
    let n = p.size_or(512).div_ceil(T).max(1) * T;
    let mut inp = Input::new(p.seed, 1);
    let mut al = Alloc::default();
    let a = al.buf((0..n * n).map(|_| inp.range(-1.0, 1.0)).collect());
    let b = al.buf((0..n * n).map(|_| inp.range(-1.0, 1.0)).collect());
    let c = al.buf(vec![0.0; n * n]);
    MatrixMulNoSpm {
        n,
        a,
        b,
        c,
        step: Step::default(),
        mem: al.allocated(),
    }
}

impl Kernel for MatrixMulNoSpm {
    fn next_launch(&mut self) -> Option<Launch> {
        (self.step.next() == 0).then_some(Launch {
            blocks: (self.n / T) * (self.n / T),
            threads: T * T,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
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
    fn footprint(&self) -> u64 {
        self.mem
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;

    #[test]
    fn computes_the_product() {
        let (k, _) = run(super::new(&params(48)));
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
    fn reads_every_operand_from_global_memory() {
        // Two loads per k per warp: n/16 × n/16 work-groups of 8 warps, n iterations each,
        // plus one store per warp (two lines); each load of A touches the two rows' lines, each load of B
        // one line (16 consecutive floats of 64 bytes, shared by the warp's two rows).
        let (k, recs) = run(super::new(&params(32)));
        let n = k.n;
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
