//! Sobol quasi-random sequence generation, the CUDA SDK `SobolQRNG` kernel: each block reads
//! its dimension's 32 direction numbers into scratchpad (a small table reused by every thread:
//! the cache-friendly behaviour) and writes a grid-stride run of points by Gray-code
//! recurrence: tap-tlp-aware-llc.txt Table 6 type C *sobolqrng*.

use super::{GpgpuParams, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch};

const THREADS: usize = 64;
const DIMS: usize = 100;
const BLOCKS_PER_DIM: usize = 32;

pub struct Sobol {
    pub points: usize,
    /// Direction numbers `DIMS × 32`.
    pub directions: Buf<u32>,
    /// Output `DIMS × points`, dimension-major, as floats in [0, 1).
    pub output: Buf<f32>,
    step: Step,
    mem: u64,
}

/// Direction numbers of dimension `d` (primitive-polynomial-free variant: dimension 0 is the
/// van der Corput sequence, the others scramble it with a per-dimension odd multiplier, which
/// keeps every dimension a (0,1)-sequence in base 2 up to its bit permutation).
pub fn directions(d: usize) -> [u32; 32] {
    std::array::from_fn(|i| {
        let v = 1u32 << (31 - i);
        if d == 0 {
            v
        } else {
            let m = (2 * d as u32 + 1).wrapping_mul(0x9E37_79B9) | 1;
            // Upper-triangular scrambling: v_i gets bits only at or below its leading bit.
            v | m.checked_shr(i as u32 + 1).unwrap_or(0) & v.wrapping_sub(1)
        }
    })
}

/// Point `i` of dimension `d`, sequentially: XOR of the direction numbers of the set bits of
/// the Gray code of `i`.
pub fn point(dirs: &[u32; 32], i: u32) -> u32 {
    flip(dirs, i ^ (i >> 1))
}

/// XOR of the direction numbers of the set bits of `g`: the change of the point between two
/// indices whose Gray codes differ in `g` (the Gray-code recurrence of the SDK kernel).
#[inline]
pub fn flip(dirs: &[u32; 32], mut g: u32) -> u32 {
    let mut x = 0;
    while g != 0 {
        x ^= dirs[g.trailing_zeros() as usize];
        g &= g - 1;
    }
    x
}

pub fn new(p: &GpgpuParams) -> Sobol {
    let points = p.size_or(1 << 20).max(1);
    let mut al = Alloc::default();
    let directions = al.buf((0..DIMS).flat_map(directions).collect());
    let output = al.buf(vec![0.0; DIMS * points]);
    Sobol {
        points,
        directions,
        output,
        step: Step::default(),
        mem: al.allocated(),
    }
}

impl Kernel for Sobol {
    fn next_launch(&mut self) -> Option<Launch> {
        (self.step.next() == 0).then_some(Launch {
            blocks: DIMS * BLOCKS_PER_DIM,
            threads: THREADS,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let (d, part) = (blk.idx / BLOCKS_PER_DIM, blk.idx % BLOCKS_PER_DIM);
        let n = self.points;
        let mut v = [0u32; 32];
        let dirs = &self.directions;
        blk.phase(|w| {
            let x = w.load(0x00, dirs, |t| (t.local < 32).then(|| d * 32 + t.local));
            for t in w.tids() {
                if t.local < 32 {
                    v[t.local] = x[t.lane];
                }
            }
            w.shared(1);
        });
        let out = &mut self.output;
        let stride = BLOCKS_PER_DIM * THREADS;
        blk.phase(|w| {
            let mut i0 = part * THREADS;
            // The lanes' points, and the index of lane 0 at the previous step.
            let mut x = [0u32; 32];
            let mut prev: Option<usize> = None;
            while i0 < n {
                // The first point is computed from scratch, later ones by Gray-code steps
                // (one scratchpad read of a direction number each).
                w.shared(if prev.is_none() { 32 } else { 1 });
                w.compute(if prev.is_none() { 64 } else { 6 });
                let start = i0 + w.first_local();
                match prev {
                    None => {
                        for (l, x) in x.iter_mut().enumerate() {
                            let i = start + l;
                            *x = flip(&v, (i ^ (i >> 1)) as u32);
                        }
                    }
                    Some(p) => {
                        // Every lane's index moved by the same multiple of the stride (a
                        // multiple of the block size, so lane bits are untouched): the Gray
                        // codes changed by the same bits, one flip for the whole warp.
                        let moved = start ^ p;
                        let f = flip(&v, (moved ^ (moved >> 1)) as u32);
                        x.iter_mut().for_each(|x| *x ^= f);
                    }
                }
                prev = Some(start);
                let vals = x.map(|x| x as f32 / 4_294_967_296.0);
                w.store_run(0x08, out, d * n + start, d * n + n, &vals);
                i0 += stride;
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
    fn generates_a_low_discrepancy_sequence() {
        let (k, _) = run(new(&params(4096)));
        let n = k.points;
        for d in [0, 1, 57, 99] {
            let dirs = directions(d);
            let pts = &k.output.data[d * n..(d + 1) * n];
            for (i, &x) in pts.iter().enumerate() {
                assert_eq!(x, point(&dirs, i as u32) as f32 / 4_294_967_296.0);
            }
            // Stratification: each of 64 equal intervals holds exactly n/64 of the points.
            let mut bins = [0; 64];
            for &x in pts {
                bins[(x * 64.0) as usize] += 1;
            }
            assert!(bins.iter().all(|&b| b == n / 64), "dim {d}: {bins:?}");
        }
    }
}
