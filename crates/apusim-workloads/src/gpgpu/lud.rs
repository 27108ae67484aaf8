//! LU decomposition, Rodinia `lud` (CUDA): blocked right-looking LU without pivoting on an
//! n×n matrix in 16×16 tiles. For each diagonal tile step three kernels run: `diagonal` (one
//! block factors the diagonal tile in scratchpad), `perimeter` (one block per remaining tile
//! column: solves the row tile with L and the column tile with U) and `internal` (one block per
//! remaining tile: subtracts the product of its column and row tiles). Every tile is loaded
//! into scratchpad, worked on there and stored back, so global traffic is tile loads and
//! stores. Named in adaptive-gpu-l1-bypassing.txt Table 2 (*lud*), a reuse-heavy kernel.

// Index loops mirror the matrix algebra (row i, column x, pivot k) more clearly than iterators.
#![allow(clippy::needless_range_loop)]

use super::{GpgpuParams, Input};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch, Tid};

const T: usize = 16;
type Tile = [[f32; T]; T];

/// The kernel a launch runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Diagonal,
    Perimeter,
    Internal,
}

pub struct Lud {
    pub n: usize,
    pub a: Buf<f32>,
    pub initial: Vec<f32>,
    /// The tile step being factored and the kernel of the current launch.
    step: usize,
    stage: Option<Stage>,
    mem: u64,
}

pub fn new(p: &GpgpuParams) -> Lud {
    let n = p.size_or(512).div_ceil(T).max(1) * T;
    let mut inp = Input::new(p.seed, 12);
    let mut al = Alloc::default();
    // Diagonally dominant, so LU without pivoting is stable.
    let initial: Vec<f32> = (0..n * n)
        .map(|i| {
            let v = inp.range(-1.0, 1.0);
            if i / n == i % n {
                v + n as f32
            } else {
                v
            }
        })
        .collect();
    Lud {
        n,
        a: al.buf(initial.clone()),
        initial,
        step: 0,
        stage: None,
        mem: al.allocated(),
    }
}

/// Plain (unblocked) LU without pivoting, in place: L below the diagonal (unit diagonal), U
/// on and above it.
pub fn reference(n: usize, a: &mut [f32]) {
    for k in 0..n {
        for i in k + 1..n {
            a[i * n + k] /= a[k * n + k];
            for j in k + 1..n {
                a[i * n + j] -= a[i * n + k] * a[k * n + j];
            }
        }
    }
}

fn factor(t: &mut Tile) {
    for k in 0..T {
        for i in k + 1..T {
            t[i][k] /= t[k][k];
            for j in k + 1..T {
                t[i][j] -= t[i][k] * t[k][j];
            }
        }
    }
}

impl Lud {
    fn tiles(&self) -> usize {
        self.n / T
    }

    /// Load tile (tile row `r`, tile column `c`) into scratchpad with one 256-thread pass.
    fn load_tile(&self, blk: &mut Block<'_>, pc: u64, r: usize, c: usize) -> Tile {
        let n = self.n;
        let mut tile = [[0f32; T]; T];
        let at = move |t: Tid| (r * T + t.local / T) * n + c * T + t.local % T;
        blk.phase(|w| {
            let v = w.load(pc, &self.a, |t| Some(at(t)));
            for t in w.tids() {
                tile[t.local / T][t.local % T] = v[t.lane];
            }
            w.shared(1);
        });
        tile
    }

    fn store_tile(&mut self, blk: &mut Block<'_>, pc: u64, r: usize, c: usize, tile: &Tile) {
        let n = self.n;
        let at = move |t: Tid| (r * T + t.local / T) * n + c * T + t.local % T;
        let a = &mut self.a;
        blk.phase(|w| {
            w.shared(1);
            w.store(pc, a, |t| Some((at(t), tile[t.local / T][t.local % T])));
        });
    }

    /// Count the scratchpad work of a tile computation, spread over the block's warps.
    fn work(blk: &mut Block<'_>, shared: u64, compute: u64) {
        blk.phase(|w| {
            w.shared(shared);
            w.compute(compute);
        });
    }

    fn diagonal(&mut self, blk: &mut Block<'_>) {
        let s = self.step;
        let mut d = self.load_tile(blk, 0x00, s, s);
        factor(&mut d);
        Self::work(blk, 2 * T as u64, 3 * T as u64);
        self.store_tile(blk, 0x08, s, s, &d);
    }

    fn perimeter(&mut self, blk: &mut Block<'_>) {
        let s = self.step;
        let j = s + 1 + blk.idx;
        let d = self.load_tile(blk, 0x10, s, s);
        let mut row = self.load_tile(blk, 0x18, s, j);
        let mut col = self.load_tile(blk, 0x20, j, s);
        // Row tile: U = L⁻¹·A (unit lower triangular L of the diagonal tile).
        for i in 0..T {
            for k in 0..i {
                for x in 0..T {
                    row[i][x] -= d[i][k] * row[k][x];
                }
            }
        }
        // Column tile: L = A·U⁻¹ (upper triangular U of the diagonal tile).
        for y in 0..T {
            for x in 0..T {
                for k in 0..x {
                    col[y][x] -= col[y][k] * d[k][x];
                }
                col[y][x] /= d[x][x];
            }
        }
        Self::work(blk, 4 * T as u64, 2 * T as u64);
        self.store_tile(blk, 0x28, s, j, &row);
        self.store_tile(blk, 0x30, j, s, &col);
    }

    fn internal(&mut self, blk: &mut Block<'_>) {
        let s = self.step;
        let m = self.tiles() - s - 1;
        let (i, j) = (s + 1 + blk.idx / m, s + 1 + blk.idx % m);
        let row = self.load_tile(blk, 0x38, s, j);
        let col = self.load_tile(blk, 0x40, i, s);
        let mut own = self.load_tile(blk, 0x48, i, j);
        for y in 0..T {
            for x in 0..T {
                let mut sum = 0f32;
                for k in 0..T {
                    sum += col[y][k] * row[k][x];
                }
                own[y][x] -= sum;
            }
        }
        Self::work(blk, 2 * T as u64, 2 * T as u64);
        self.store_tile(blk, 0x50, i, j, &own);
    }
}

impl Kernel for Lud {
    fn next_launch(&mut self) -> Option<Launch> {
        let tiles = self.tiles();
        let next = match self.stage {
            None => Some((0, Stage::Diagonal)),
            Some(Stage::Diagonal) if self.step + 1 < tiles => Some((self.step, Stage::Perimeter)),
            Some(Stage::Diagonal) => None,
            Some(Stage::Perimeter) => Some((self.step, Stage::Internal)),
            Some(Stage::Internal) => Some((self.step + 1, Stage::Diagonal)),
        };
        let (step, stage) = next?;
        self.step = step;
        self.stage = Some(stage);
        let m = tiles - step - 1;
        let blocks = match stage {
            Stage::Diagonal => 1,
            Stage::Perimeter => m,
            Stage::Internal => m * m,
        };
        Some(Launch {
            blocks,
            threads: T * T,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        match self.stage {
            Some(Stage::Diagonal) => self.diagonal(blk),
            Some(Stage::Perimeter) => self.perimeter(blk),
            Some(Stage::Internal) => self.internal(blk),
            None => {}
        }
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
    fn matches_the_unblocked_decomposition() {
        let (k, trace) = run(new(&params(64)));
        let mut r = k.initial.clone();
        reference(k.n, &mut r);
        for (i, (got, want)) in k.a.data.iter().zip(&r).enumerate() {
            let tol = 1e-4 * want.abs().max(1.0);
            assert!((got - want).abs() <= tol, "element {i}: {got} vs {want}");
        }
        // L·U reproduces the input.
        let n = k.n;
        let lu = |i: usize, j: usize| -> f32 {
            (0..=i.min(j))
                .map(|m| {
                    let l = if m == i { 1.0 } else { k.a.data[i * n + m] };
                    l * k.a.data[m * n + j]
                })
                .sum()
        };
        for (i, j) in [(0, 0), (5, 40), (63, 2), (31, 31)] {
            let want = k.initial[i * n + j];
            assert!((lu(i, j) - want).abs() <= 1e-3 * want.abs().max(1.0));
        }
        // 4 tile steps store 4 diagonal, 2·(3+2+1) perimeter and 9+4+1 internal tiles: 30
        // tiles of 16 rows, each row one aligned 64-byte transaction.
        let tile_stores = trace
            .iter()
            .filter(|a| a.op == apusim_trace::Op::Write)
            .count();
        assert_eq!(tile_stores, 30 * 16);
    }
}
