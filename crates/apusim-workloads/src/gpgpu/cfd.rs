//! Unstructured-grid Euler solver in the manner of Rodinia `cfd` (euler3d): per cell, gather the
//! conserved variables of its four neighbours through an index list, compute the fluxes, and
//! advance the cell (a `compute_flux` and a `time_step` kernel per iteration, structure-of-
//! arrays layout, 128 threads per block): drp-reuse-probability-shared-llc.txt Table 2 *cfd*,
//! gpu-access-criticality Table 3 *CFD*, tap-tlp-aware-llc.txt Table 6 type E.
//!
//! The physics is reduced to a scalar conservation law per variable (5 variables: density,
//! 3 momentum components, energy) with a Rusanov-style flux; the memory behaviour — gathers of
//! 5 arrays through a 4-neighbour index list, normals per face — is euler3d's.

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch, Tid};

const THREADS: usize = 128;
const NB: usize = 4;
const VARS: usize = 5;
const DT: f32 = 0.05;

pub struct Cfd {
    pub n: usize,
    /// Neighbour of cell `i` across face `f` at `f * n + i` (−1: boundary).
    pub neighbours: Buf<i32>,
    /// Face normal weight at `f * n + i`.
    pub normals: Buf<f32>,
    /// Variables at `v * n + i`.
    pub vars: Buf<f32>,
    pub fluxes: Buf<f32>,
    pub initial: Vec<f32>,
    pub iterations: usize,
    step: Step,
    mem: u64,
}

/// The mesh: a shuffled 2-D grid, so neighbours are near in the mesh but scattered in memory
/// except for a locality-preserving renumbering of runs of 64 cells (as euler3d's input).
pub fn mesh(n: usize, seed: u64) -> Vec<i32> {
    let side = (n as f64).sqrt().ceil() as usize;
    let mut inp = Input::new(seed, 7);
    let runs = n.div_ceil(64);
    let mut perm: Vec<usize> = (0..runs).collect();
    for i in (1..runs).rev() {
        perm.swap(i, inp.below(i as u64 + 1) as usize);
    }
    let id = |c: usize| perm[c / 64] * 64 + c % 64;
    let mut nb = vec![-1i32; NB * n];
    for c in 0..n {
        let (x, y) = (c % side, c / side);
        let cand = [
            (x > 0).then(|| c - 1),
            (x + 1 < side).then(|| c + 1),
            (y > 0).then(|| c - side),
            Some(c + side),
        ];
        let me = id(c);
        if me >= n {
            continue;
        }
        for (f, o) in cand.iter().enumerate() {
            if let Some(o) = o.filter(|&o| o < n && id(o) < n) {
                nb[f * n + me] = id(o) as i32;
            }
        }
    }
    nb
}

pub fn new(p: &GpgpuParams) -> Cfd {
    let n = p.size_or(97152).max(64);
    let mut inp = Input::new(p.seed, 8);
    let mut al = Alloc::default();
    let neighbours = al.buf(mesh(n, p.seed));
    let normals = al.buf((0..NB * n).map(|_| inp.range(0.5, 1.0)).collect());
    let initial: Vec<f32> = (0..VARS * n).map(|_| inp.range(0.5, 2.0)).collect();
    let vars = al.buf(initial.clone());
    let fluxes = al.buf(vec![0.0; VARS * n]);
    Cfd {
        n,
        neighbours,
        normals,
        vars,
        fluxes,
        initial,
        iterations: 3,
        step: Step::default(),
        mem: al.allocated(),
    }
}

/// Flux of one variable across one face.
#[inline]
pub fn face_flux(me: f32, other: f32, normal: f32) -> f32 {
    0.5 * normal * (other - me) - 0.01 * normal * (me + other)
}

/// A reference of one `compute_flux` + `time_step` iteration.
pub fn reference_step(n: usize, nb: &[i32], normals: &[f32], vars: &mut [f32]) {
    let mut flux = vec![0f32; VARS * n];
    for i in 0..n {
        for v in 0..VARS {
            let me = vars[v * n + i];
            let mut f = 0.0;
            for k in 0..NB {
                let o = nb[k * n + i];
                if o >= 0 {
                    f += face_flux(me, vars[v * n + o as usize], normals[k * n + i]);
                }
            }
            flux[v * n + i] = f;
        }
    }
    for (x, f) in vars.iter_mut().zip(&flux) {
        *x += DT * f;
    }
}

impl Kernel for Cfd {
    fn next_launch(&mut self) -> Option<Launch> {
        (self.step.next() < 2 * self.iterations).then_some(Launch {
            blocks: self.n.div_ceil(THREADS),
            threads: THREADS,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let n = self.n;
        let b = blk.idx;
        let cell = move |t: Tid| {
            let i = b * THREADS + t.local;
            (i < n).then_some(i)
        };
        let s = &mut *self;
        if s.step.cur().is_multiple_of(2) {
            blk.phase(|w| {
                let mut me = [[0f32; 32]; VARS];
                for (v, m) in me.iter_mut().enumerate() {
                    *m = w.load(8 * v as u64, &s.vars, |t| cell(t).map(|i| v * n + i));
                }
                let mut flux = [[0f32; 32]; VARS];
                for k in 0..NB {
                    let o = w.load(0x30, &s.neighbours, |t| cell(t).map(|i| k * n + i));
                    let nr = w.load(0x38, &s.normals, |t| cell(t).map(|i| k * n + i));
                    let has = |t: Tid| cell(t).filter(|_| o[t.lane] >= 0);
                    for v in 0..VARS {
                        let other = w.load(0x40 + 8 * v as u64, &s.vars, |t| {
                            has(t).map(|_| v * n + o[t.lane] as usize)
                        });
                        for t in w.tids() {
                            if has(t).is_some() {
                                let l = t.lane;
                                flux[v][l] += face_flux(me[v][l], other[l], nr[l]);
                            }
                        }
                    }
                    // Pressure, speed of sound and the flux Jacobian: euler3d's face work.
                    w.compute(40);
                }
                for (v, f) in flux.iter().enumerate() {
                    w.store(0x70 + 8 * v as u64, &mut s.fluxes, |t| {
                        cell(t).map(|i| (v * n + i, f[t.lane]))
                    });
                }
            });
        } else {
            blk.phase(|w| {
                for v in 0..VARS {
                    let x = w.load(0xA0 + 8 * v as u64, &s.vars, |t| cell(t).map(|i| v * n + i));
                    let f = w.load(0xD0 + 8 * v as u64, &s.fluxes, |t| {
                        cell(t).map(|i| v * n + i)
                    });
                    w.compute(2);
                    w.store(0x100 + 8 * v as u64, &mut s.vars, |t| {
                        cell(t).map(|i| (v * n + i, x[t.lane] + DT * f[t.lane]))
                    });
                }
            });
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
    fn matches_the_sequential_solver() {
        let (k, _) = run(new(&params(3000)));
        let mut r = k.initial.clone();
        for _ in 0..k.iterations {
            reference_step(k.n, &k.neighbours.data, &k.normals.data, &mut r);
        }
        for (a, b) in k.vars.data.iter().zip(&r) {
            assert!(close(*a, *b, 1e-5));
        }
        assert!(k.neighbours.data.iter().filter(|&&x| x >= 0).count() > 3 * k.n);
    }
}
