//! soplex-like simplex pricing (stand-in for SPEC CPU 2006 450.soplex, pds-50 input): per
//! iteration a sparse product y = A·x of a large CSR constraint matrix, a ratio test over the
//! rows (min b_i / y_i over y_i > 0) and an update of the entering column's entries.

use super::{rng, CpuKernel, CpuParams, Heap, Tracer};
use crate::simt::Buf;

pub struct Soplex {
    pub row: Buf<u32>,
    pub col: Buf<u32>,
    pub val: Buf<f64>,
    pub x: Buf<f64>,
    pub y: Buf<f64>,
    pub b: Buf<f64>,
    /// Result of the last ratio test: (row, ratio).
    pub leaving: (usize, f64),
    iter: usize,
}

pub fn new(p: &CpuParams, h: &mut Heap) -> Soplex {
    let rows = p.size_or(1 << 16).max(2);
    let mut r = rng(p, 10);
    let mut row = vec![0u32];
    let mut col = Vec::new();
    for i in 0..rows {
        let mut cs: Vec<u32> = (0..6 + r.below(8))
            .map(|_| {
                if r.below(3) == 0 {
                    i as u32
                } else {
                    r.below(rows as u64) as u32
                }
            })
            .collect();
        cs.sort_unstable();
        cs.dedup();
        col.extend(cs);
        row.push(col.len() as u32);
    }
    let val: Vec<f64> = (0..col.len())
        .map(|_| r.below(2000) as f64 / 1000.0 - 0.7)
        .collect();
    let x = (0..rows).map(|_| r.below(1000) as f64 / 1000.0).collect();
    let b = (0..rows).map(|_| 1.0 + r.below(1000) as f64).collect();
    Soplex {
        row: h.buf(row),
        col: h.buf(col),
        val: h.buf(val),
        x: h.buf(x),
        y: h.buf(vec![0.0; rows]),
        b: h.buf(b),
        leaving: (0, 0.0),
        iter: 0,
    }
}

/// Ratio test on plain slices (the reference).
pub fn ratio_test(y: &[f64], b: &[f64]) -> (usize, f64) {
    let mut best = (usize::MAX, f64::INFINITY);
    for i in 0..y.len() {
        if y[i] > 1e-9 && b[i] / y[i] < best.1 {
            best = (i, b[i] / y[i]);
        }
    }
    best
}

impl CpuKernel for Soplex {
    fn step(&mut self, t: &mut Tracer) {
        let rows = self.y.len();
        for i in 0..rows {
            let (s, e) = (t.load(0x00, &self.row, i), t.load(0x08, &self.row, i + 1));
            let mut acc = 0.0;
            for k in s as usize..e as usize {
                let c = t.load(0x10, &self.col, k);
                let v = t.load(0x18, &self.val, k);
                acc += v * t.load(0x20, &self.x, c as usize);
                t.exec(0x28, 2);
            }
            t.store(0x30, &mut self.y, i, acc);
        }
        let mut best = (usize::MAX, f64::INFINITY);
        for i in 0..rows {
            let y = t.load(0x40, &self.y, i);
            t.exec(0x48, 3);
            if y > 1e-9 {
                let b = t.load(0x50, &self.b, i);
                t.exec(0x58, 4);
                if b / y < best.1 {
                    best = (i, b / y);
                }
            }
        }
        self.leaving = best;
        // Pivot: perturb x along the leaving row's pattern.
        if best.0 < rows {
            let (s, e) = (
                self.row.data[best.0] as usize,
                self.row.data[best.0 + 1] as usize,
            );
            for k in s..e {
                let c = t.load(0x60, &self.col, k) as usize;
                let iter = self.iter;
                t.modify(0x68, &mut self.x, c, |v| v * 0.5 + (iter % 7) as f64 * 0.01);
            }
        }
        self.iter += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_and_ratio_tests() {
        let p = CpuParams {
            size: 2000,
            ..CpuParams::default()
        };
        let mut k = new(&p, &mut Heap::new(0));
        let x = k.x.data.clone();
        k.step(&mut Tracer::collecting(0, u64::MAX));
        let y: Vec<f64> = (0..2000)
            .map(|i| {
                (k.row.data[i] as usize..k.row.data[i + 1] as usize)
                    .map(|e| k.val.data[e] * x[k.col.data[e] as usize])
                    .sum()
            })
            .collect();
        assert_eq!(k.y.data, y);
        assert_eq!(k.leaving, ratio_test(&y, &k.b.data));
    }
}
