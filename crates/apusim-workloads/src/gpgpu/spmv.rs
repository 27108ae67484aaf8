//! Sparse matrix-vector product y = A·x in CSR format, one thread per row (the scalar SpMV
//! kernel of SHOC/OpenDwarfs): adaptive-gpu-l1-bypassing.txt Table 2 *spmv*. Rows have a
//! skewed number of non-zeros clustered around the diagonal, so the `x` gathers have partial
//! locality and the row walks diverge.

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch, Tid};

const THREADS: usize = 128;

pub struct Spmv {
    pub rows: usize,
    pub row: Buf<u32>,
    pub col: Buf<u32>,
    pub val: Buf<f32>,
    pub x: Buf<f32>,
    pub y: Buf<f32>,
    pub iterations: usize,
    step: Step,
    mem: u64,
}

pub fn new(p: &GpgpuParams) -> Spmv {
    let rows = p.size_or(4096).max(1);
    let mut inp = Input::new(p.seed, 12);
    let mut row = vec![0u32];
    let mut col = Vec::new();
    for r in 0..rows {
        let nnz = 4 + inp.below(8) + if inp.below(16) == 0 { inp.below(64) } else { 0 };
        let mut cs: Vec<u32> = (0..nnz)
            .map(|_| {
                if inp.below(2) == 0 {
                    ((r as u64 + inp.below(64)).saturating_sub(32) % rows as u64) as u32
                } else {
                    inp.below(rows as u64) as u32
                }
            })
            .collect();
        cs.sort_unstable();
        cs.dedup();
        col.extend_from_slice(&cs);
        row.push(col.len() as u32);
    }
    let mut al = Alloc::default();
    let val = (0..col.len()).map(|_| inp.range(-1.0, 1.0)).collect();
    let xv = (0..rows).map(|_| inp.range(-1.0, 1.0)).collect();
    let row = al.buf(row);
    let col = al.buf(col);
    let val = al.buf(val);
    let x = al.buf(xv);
    let y = al.buf(vec![0.0; rows]);
    Spmv {
        rows,
        row,
        col,
        val,
        x,
        y,
        iterations: 2,
        step: Step::default(),
        mem: al.allocated(),
    }
}

impl Kernel for Spmv {
    fn next_launch(&mut self) -> Option<Launch> {
        (self.step.next() < self.iterations).then_some(Launch {
            blocks: self.rows.div_ceil(THREADS),
            threads: THREADS,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let (rows, b) = (self.rows, blk.idx);
        let s = &mut *self;
        blk.phase(|w| {
            let r = move |t: Tid| {
                let r = b * THREADS + t.local;
                (r < rows).then_some(r)
            };
            let start = w.load(0x00, &s.row, r);
            let end = w.load(0x08, &s.row, |t| r(t).map(|r| r + 1));
            let mut sum = [0f32; 32];
            let longest = w
                .tids()
                .map(|t| end[t.lane] - start[t.lane])
                .max()
                .unwrap_or(0);
            for k in 0..longest as usize {
                let e = |t: Tid| {
                    r(t).and_then(|_| {
                        let e = start[t.lane] as usize + k;
                        (e < end[t.lane] as usize).then_some(e)
                    })
                };
                let c = w.load(0x10, &s.col, e);
                let v = w.load(0x18, &s.val, e);
                let xv = w.load(0x20, &s.x, |t| e(t).map(|_| c[t.lane] as usize));
                for t in w.tids() {
                    if e(t).is_some() {
                        sum[t.lane] += v[t.lane] * xv[t.lane];
                    }
                }
                w.compute(3);
            }
            w.store(0x28, &mut s.y, |t| r(t).map(|r| (r, sum[t.lane])));
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
    fn multiplies() {
        let (k, _) = run(super::new(&params(1000)));
        for r in 0..k.rows {
            let (a, b) = (k.row.data[r] as usize, k.row.data[r + 1] as usize);
            let y: f32 = (a..b)
                .map(|e| k.val.data[e] * k.x.data[k.col.data[e] as usize])
                .sum();
            assert!(close(k.y.data[r], y, 1e-5));
        }
    }
}
