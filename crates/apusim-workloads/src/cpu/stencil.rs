//! 3-D stencils over large grids: stand-ins for SPEC CPU 2006 470.lbm (D3Q19 lattice-Boltzmann
//! stream-and-collide, the same physics as [`crate::gpgpu::lbm`]), 437.leslie3d (7-point
//! finite differences over five flow variables), 434.zeusmp (advection sweeps over four
//! fields) and 481.wrf (column physics over six fields, swept in 2-D tiles of columns).
//! A step is one time step over the whole grid (two grids, ping-pong).

use super::{CpuKernel, CpuParams, Heap, Tracer};
use crate::gpgpu::lbm::{collide, source, weight};
use crate::simt::Buf;

/// A Jacobi-style 7-point stencil over `vars` fields of a side³ grid.
pub struct Stencil {
    pub side: usize,
    pub vars: usize,
    /// Ping-pong grids, `vars × side³` each.
    pub grid: [Buf<f32>; 2],
    pub steps: usize,
    /// Sweep in 4×4 column tiles with the vertical loop innermost (wrf) instead of x-fastest.
    pub columns: bool,
    site: u64,
}

fn stencil(
    p: &CpuParams,
    h: &mut Heap,
    def: usize,
    vars: usize,
    columns: bool,
    site: u64,
) -> Stencil {
    let side = p.size_or(def).max(3);
    let cells = side * side * side;
    let mut r = super::rng(p, 6 + vars as u64);
    let g0 = h.buf(
        (0..vars * cells)
            .map(|_| r.below(1000) as f32 / 100.0)
            .collect(),
    );
    let g1 = h.buf(vec![0.0; vars * cells]);
    Stencil {
        side,
        vars,
        grid: [g0, g1],
        steps: 0,
        columns,
        site,
    }
}

pub fn leslie3d(p: &CpuParams, h: &mut Heap) -> Stencil {
    stencil(p, h, 96, 5, false, 0x1000)
}
pub fn zeusmp(p: &CpuParams, h: &mut Heap) -> Stencil {
    stencil(p, h, 64, 4, false, 0x2000)
}
pub fn wrf(p: &CpuParams, h: &mut Heap) -> Stencil {
    stencil(p, h, 48, 6, true, 0x3000)
}

/// The new value of a cell from itself, its six neighbours (periodic) and the other fields.
pub fn update(g: &[f32], side: usize, vars: usize, v: usize, c: usize) -> f32 {
    let cells = side * side * side;
    let (x, y, z) = (c % side, c / side % side, c / (side * side));
    let at = |x: usize, y: usize, z: usize| g[v * cells + (z * side + y) * side + x];
    let l = |a: usize| (a + side - 1) % side;
    let r = |a: usize| (a + 1) % side;
    let lap = at(l(x), y, z)
        + at(r(x), y, z)
        + at(x, l(y), z)
        + at(x, r(y), z)
        + at(x, y, l(z))
        + at(x, y, r(z));
    let couple = g[((v + 1) % vars) * cells + c];
    0.4 * at(x, y, z) + 0.09 * lap + 0.06 * couple
}

impl CpuKernel for Stencil {
    fn step(&mut self, t: &mut Tracer) {
        let (side, vars) = (self.side, self.vars);
        let cells = side * side * side;
        let [g0, g1] = &mut self.grid;
        let (src, dst) = if self.steps.is_multiple_of(2) {
            (&*g0, g1)
        } else {
            (&*g1, g0)
        };
        let order = |k: usize| -> usize {
            if self.columns {
                // 4×4 tiles of columns, z innermost.
                let (tile, rest) = (k / (16 * side), k % (16 * side));
                let (col, z) = (rest / side, rest % side);
                let tiles_x = side.div_ceil(4);
                let (tx, ty) = (tile % tiles_x, tile / tiles_x);
                let (x, y) = (tx * 4 + col % 4, ty * 4 + col / 4);
                if x >= side || y >= side {
                    return usize::MAX;
                }
                (z * side + y) * side + x
            } else {
                k
            }
        };
        let total = if self.columns {
            side.div_ceil(4).pow(2) * 16 * side
        } else {
            cells
        };
        let base = self.site;
        for k in 0..total {
            let c = order(k);
            if c == usize::MAX {
                continue;
            }
            let (x, y, z) = (c % side, c / side % side, c / (side * side));
            let l = |a: usize| (a + side - 1) % side;
            let r = |a: usize| (a + 1) % side;
            let nbs = [
                (z * side + y) * side + l(x),
                (z * side + y) * side + r(x),
                (z * side + l(y)) * side + x,
                (z * side + r(y)) * side + x,
                (l(z) * side + y) * side + x,
                (r(z) * side + y) * side + x,
            ];
            for v in 0..vars {
                let s = base + 0x100 * v as u64;
                t.load(s, src, v * cells + c);
                for (j, nb) in nbs.iter().enumerate() {
                    t.load(s + 8 + 8 * j as u64, src, v * cells + nb);
                }
                t.load(s + 0x40, src, ((v + 1) % vars) * cells + c);
                t.exec(s + 0x48, 12);
                t.store(
                    s + 0x80,
                    dst,
                    v * cells + c,
                    update(&src.data, side, vars, v, c),
                );
            }
        }
        self.steps += 1;
    }
}

/// lbm-like: D3Q19 pull stream-and-collide.
pub struct Lbm {
    pub side: usize,
    pub f: [Buf<f32>; 2],
    pub steps: usize,
}

pub fn lbm(p: &CpuParams, h: &mut Heap) -> Lbm {
    let side = p.size_or(64).max(4);
    let cells = side.pow(3);
    let mut r = super::rng(p, 9);
    let mut init = vec![0f32; 19 * cells];
    for c in 0..cells {
        let rho = 1.0 + (r.below(100) as f32 - 50.0) / 1000.0;
        for q in 0..19 {
            init[q * cells + c] = weight(q) * rho;
        }
    }
    let f = [h.buf(init), h.buf(vec![0.0; 19 * cells])];
    Lbm { side, f, steps: 0 }
}

impl CpuKernel for Lbm {
    fn step(&mut self, t: &mut Tracer) {
        let side = self.side;
        let cells = side.pow(3);
        let [f0, f1] = &mut self.f;
        let (src, dst) = if self.steps.is_multiple_of(2) {
            (&*f0, f1)
        } else {
            (&*f1, f0)
        };
        for c in 0..cells {
            let mut f = [0f32; 19];
            for (q, v) in f.iter_mut().enumerate() {
                *v = t.load(0x4000 + 8 * q as u64, src, q * cells + source(side, c, q));
            }
            collide(&mut f);
            t.exec(0x4100, 180);
            for (q, v) in f.iter().enumerate() {
                t.store(0x4200 + 8 * q as u64, dst, q * cells + c, *v);
            }
        }
        self.steps += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stencils_match_the_reference() {
        for build in [leslie3d, zeusmp, wrf] {
            let p = CpuParams {
                size: 10,
                ..CpuParams::default()
            };
            let mut k = build(&p, &mut Heap::new(0));
            let g = k.grid[0].data.clone();
            k.step(&mut Tracer::collecting(0, u64::MAX));
            let cells = 1000;
            for v in 0..k.vars {
                for c in 0..cells {
                    assert_eq!(k.grid[1].data[v * cells + c], update(&g, 10, k.vars, v, c));
                }
            }
        }
    }

    #[test]
    fn lbm_conserves_mass() {
        let p = CpuParams {
            size: 6,
            ..CpuParams::default()
        };
        let mut k = lbm(&p, &mut Heap::new(0));
        let m0: f64 = k.f[0].data.iter().map(|&x| x as f64).sum();
        k.step(&mut Tracer::collecting(0, u64::MAX));
        let m1: f64 = k.f[1].data.iter().map(|&x| x as f64).sum();
        assert!((m0 - m1).abs() < 1e-3 * m0);
    }
}
