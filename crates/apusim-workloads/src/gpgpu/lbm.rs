//! Lattice-Boltzmann fluid simulation on a D3Q19 lattice with BGK collision and pull-style
//! streaming, as Parboil `lbm` (structure-of-arrays distributions, one thread per cell, 19
//! loads from neighbouring cells and 19 stores per cell): gpu-access-criticality Table 3
//! *LBM*, tap-tlp-aware-llc.txt Table 6 type E *lbm*.

use super::{GpgpuParams, Input, Step};
use crate::simt::{first_lanes, Alloc, Block, Buf, Kernel, Launch};

const THREADS: usize = 128;
const Q: usize = 19;
const OMEGA: f32 = 1.2;
/// D3Q19 velocities.
pub const C: [(i32, i32, i32); Q] = [
    (0, 0, 0),
    (1, 0, 0),
    (-1, 0, 0),
    (0, 1, 0),
    (0, -1, 0),
    (0, 0, 1),
    (0, 0, -1),
    (1, 1, 0),
    (-1, -1, 0),
    (1, -1, 0),
    (-1, 1, 0),
    (1, 0, 1),
    (-1, 0, -1),
    (1, 0, -1),
    (-1, 0, 1),
    (0, 1, 1),
    (0, -1, -1),
    (0, 1, -1),
    (0, -1, 1),
];
/// D3Q19 weights.
pub fn weight(q: usize) -> f32 {
    match q {
        0 => 1.0 / 3.0,
        1..=6 => 1.0 / 18.0,
        _ => 1.0 / 36.0,
    }
}

pub struct Lbm {
    pub side: usize,
    /// Ping-pong distributions `Q × cells`.
    pub f: [Buf<f32>; 2],
    pub initial: Vec<f32>,
    pub steps: usize,
    step: Step,
    mem: u64,
}

pub fn new(p: &GpgpuParams) -> Lbm {
    let side = p.size_or(64).max(4);
    let cells = side * side * side;
    let mut inp = Input::new(p.seed, 16);
    let mut init = vec![0f32; Q * cells];
    for c in 0..cells {
        let rho = 1.0 + inp.range(-0.05, 0.05);
        for q in 0..Q {
            init[q * cells + c] = weight(q) * rho;
        }
    }
    let mut al = Alloc::default();
    let f = [al.buf(init.clone()), al.buf(vec![0.0; Q * cells])];
    Lbm {
        side,
        f,
        initial: init,
        steps: 2,
        step: Step::default(),
        mem: al.allocated(),
    }
}

/// Cell whose distribution `q` streams into cell `c` (periodic boundaries).
#[inline]
pub fn source(side: usize, c: usize, q: usize) -> usize {
    source_at(side, coords(side, c), q)
}

/// Lattice coordinates (x, y, z) of cell `c`.
#[inline]
pub fn coords(side: usize, c: usize) -> (i32, i32, i32) {
    (
        (c % side) as i32,
        (c / side % side) as i32,
        (c / side / side) as i32,
    )
}

/// [`source`] from the cell's coordinates: the periodic neighbour `(x, y, z) − C[q]` (one
/// step at most, so the wrap is a compare, not a division).
#[inline]
pub fn source_at(side: usize, (x, y, z): (i32, i32, i32), q: usize) -> usize {
    let s = side as i32;
    let (dx, dy, dz) = C[q];
    let w = |v: i32| {
        if v < 0 {
            v + s
        } else if v >= s {
            v - s
        } else {
            v
        }
    };
    ((w(z - dz) * s + w(y - dy)) * s + w(x - dx)) as usize
}

/// BGK collision of one cell's 19 pulled distributions.
pub fn collide(f: &mut [f32; Q]) {
    let mut lanes: [[f32; 1]; Q] = f.map(|v| [v]);
    collide_lanes(&mut lanes);
    *f = lanes.map(|[v]| v);
}

/// [`collide`] of `L` cells at once, distribution-major (`f[q][lane]`): the same operations
/// in the same order per cell, as loops over the lanes that vectorize.
#[allow(clippy::needless_range_loop)]
pub fn collide_lanes<const L: usize>(f: &mut [[f32; L]; Q]) {
    let mut rho = [0f32; L];
    let (mut ux, mut uy, mut uz) = ([0f32; L], [0f32; L], [0f32; L]);
    for q in 0..Q {
        let (cx, cy, cz) = (C[q].0 as f32, C[q].1 as f32, C[q].2 as f32);
        for l in 0..L {
            rho[l] += f[q][l];
            ux[l] += cx * f[q][l];
            uy[l] += cy * f[q][l];
            uz[l] += cz * f[q][l];
        }
    }
    let mut u2 = [0f32; L];
    for l in 0..L {
        (ux[l], uy[l], uz[l]) = (ux[l] / rho[l], uy[l] / rho[l], uz[l] / rho[l]);
        u2[l] = ux[l] * ux[l] + uy[l] * uy[l] + uz[l] * uz[l];
    }
    for q in 0..Q {
        let (cx, cy, cz) = (C[q].0 as f32, C[q].1 as f32, C[q].2 as f32);
        let wq = weight(q);
        for l in 0..L {
            let cu = cx * ux[l] + cy * uy[l] + cz * uz[l];
            let eq = wq * rho[l] * (1.0 + 3.0 * cu + 4.5 * cu * cu - 1.5 * u2[l]);
            f[q][l] += OMEGA * (eq - f[q][l]);
        }
    }
}

impl Kernel for Lbm {
    fn next_launch(&mut self) -> Option<Launch> {
        let cells = self.side.pow(3);
        (self.step.next() < self.steps).then_some(Launch {
            blocks: cells.div_ceil(THREADS),
            threads: THREADS,
        })
    }
    #[allow(clippy::needless_range_loop)] // lanes × distributions
    fn block(&mut self, blk: &mut Block<'_>) {
        let side = self.side;
        let cells = side.pow(3);
        let b = blk.idx;
        let [f0, f1] = &mut self.f;
        let (src, dst) = if self.step.cur().is_multiple_of(2) {
            (&*f0, f1)
        } else {
            (&*f1, f0)
        };
        blk.phase(|w| {
            // The warp's cells c0.. (lanes past the last cell inactive), their coordinates.
            let c0 = b * THREADS + w.first_local();
            let live = cells.saturating_sub(c0);
            let mask = first_lanes(live);
            // Per lane and step −1, 0, +1 along each axis: the periodic neighbour's offset
            // contribution (x, y·side, z·side²), so that a source index is three lookups.
            let xyz: [_; 32] = std::array::from_fn(|l| coords(side, c0 + l));
            let s = side as i32;
            let wrap = |v: i32| {
                (if v < 0 {
                    v + s
                } else if v >= s {
                    v - s
                } else {
                    v
                }) as usize
            };
            let axis = |k: usize, scale: usize| -> [[usize; 32]; 3] {
                std::array::from_fn(|d| {
                    std::array::from_fn(|l| {
                        let (x, y, z) = xyz[l];
                        wrap([x, y, z][k] - (d as i32 - 1)) * scale
                    })
                })
            };
            let (ox, oy, oz) = (axis(0, 1), axis(1, side), axis(2, side * side));
            let mut f = [[0f32; 32]; Q];
            for (q, f) in f.iter_mut().enumerate() {
                let (dx, dy, dz) = C[q];
                let (ox, oy, oz) = (
                    &ox[(dx + 1) as usize],
                    &oy[(dy + 1) as usize],
                    &oz[(dz + 1) as usize],
                );
                let mut idx = [q * cells; 32];
                for l in 0..32 {
                    idx[l] += oz[l] + oy[l] + ox[l];
                }
                *f = w.load_idx(8 * q as u64, src, &idx, mask);
            }
            collide_lanes(&mut f);
            w.compute(160);
            for q in 0..Q {
                let at = q * cells;
                w.store_run(0x100 + 8 * q as u64, dst, at + c0, at + cells, &f[q]);
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
    use super::*;

    #[test]
    fn streams_collides_and_conserves_mass() {
        let (k, _) = run(new(&params(8)));
        let cells = k.side.pow(3);
        let mut f = k.initial.clone();
        for _ in 0..k.steps {
            let mut g = vec![0f32; Q * cells];
            for c in 0..cells {
                let mut v: [f32; Q] = std::array::from_fn(|q| f[q * cells + source(k.side, c, q)]);
                collide(&mut v);
                for q in 0..Q {
                    g[q * cells + c] = v[q];
                }
            }
            f = g;
        }
        assert_eq!(k.f[k.steps % 2].data, f);
        let m0: f64 = k.initial.iter().map(|&x| x as f64).sum();
        let m1: f64 = f.iter().map(|&x| x as f64).sum();
        assert!((m0 - m1).abs() < 1e-3 * m0);
    }
}
