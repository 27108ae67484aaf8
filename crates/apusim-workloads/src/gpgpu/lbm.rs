//! Lattice-Boltzmann fluid simulation on a D3Q19 lattice with BGK collision and pull-style
//! streaming, as Parboil `lbm` (structure-of-arrays distributions, one thread per cell, 19
//! loads from neighbouring cells and 19 stores per cell): gpu-access-criticality Table 3
//! *LBM*, tap-tlp-aware-llc.txt Table 6 type E *lbm*.

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch};

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
#[allow(clippy::needless_range_loop)]
pub fn collide(f: &mut [f32; Q]) {
    let rho: f32 = f.iter().sum();
    let (mut ux, mut uy, mut uz) = (0f32, 0f32, 0f32);
    for q in 0..Q {
        ux += C[q].0 as f32 * f[q];
        uy += C[q].1 as f32 * f[q];
        uz += C[q].2 as f32 * f[q];
    }
    let (ux, uy, uz) = (ux / rho, uy / rho, uz / rho);
    let u2 = ux * ux + uy * uy + uz * uz;
    for q in 0..Q {
        let cu = C[q].0 as f32 * ux + C[q].1 as f32 * uy + C[q].2 as f32 * uz;
        let eq = weight(q) * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - 1.5 * u2);
        f[q] += OMEGA * (eq - f[q]);
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
            let cell = move |t: crate::simt::Tid| {
                let c = b * THREADS + t.local;
                (c < cells).then_some(c)
            };
            let mut f = [[0f32; Q]; 32];
            let mut xyz = [(0, 0, 0); 32];
            for t in w.tids() {
                if let Some(c) = cell(t) {
                    xyz[t.lane] = coords(side, c);
                }
            }
            for q in 0..Q {
                let v = w.load(8 * q as u64, src, |t| {
                    cell(t).map(|_| q * cells + source_at(side, xyz[t.lane], q))
                });
                for t in w.tids() {
                    f[t.lane][q] = v[t.lane];
                }
            }
            for t in w.tids() {
                collide(&mut f[t.lane]);
            }
            w.compute(160);
            for q in 0..Q {
                w.store(0x100 + 8 * q as u64, dst, |t| {
                    cell(t).map(|c| (q * cells + c, f[t.lane][q]))
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
