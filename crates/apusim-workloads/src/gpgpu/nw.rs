//! Needleman-Wunsch global sequence alignment, Rodinia `nw`, in two versions
//! (adaptive-gpu-l1-bypassing.txt Table 2 *nw* 512×512 and the case study of §5.3.1):
//!
//! - [`new`] (*nw*): the score matrix is processed in 16×16 tiles along anti-diagonals (one
//!   launch per tile diagonal, one 16-thread block per tile); a block loads its tile's
//!   reference scores and the northern/western edges into scratchpad, computes the tile's
//!   31 inner anti-diagonals in scratchpad, and writes the tile through to global memory.
//! - [`new_nospm`] (*nw-noSPM*): the same wavefront without scratchpad: every cell reads its
//!   north, west and north-west neighbours and its reference score from global memory.
//!   (tap-tlp-aware-llc.txt Table 6 lists *needle* as type B.)

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch};

const B: usize = 16;
const PENALTY: i32 = 10;

/// BLOSUM62 diagonal-ish substitution scores for a 24-letter alphabet (a compact stand-in
/// for Rodinia's blosum62 table: +5 match, −1..−4 mismatch by distance).
fn blosum(a: u8, b: u8) -> i32 {
    if a == b {
        5
    } else {
        -1 - (a.abs_diff(b) % 4) as i32
    }
}

pub struct Nw {
    pub n: usize,
    /// Scratchpad version (true) or global-only (false).
    pub spm: bool,
    pub seq_a: Vec<u8>,
    pub seq_b: Vec<u8>,
    /// Substitution scores `(n+1)²`.
    pub reference: Buf<i32>,
    /// Score matrix `(n+1)²`.
    pub score: Buf<i32>,
    step: Step,
    mem: u64,
}

fn build(p: &GpgpuParams, spm: bool) -> Nw {
    let n = p.size_or(512).div_ceil(B).max(1) * B;
    let mut inp = Input::new(p.seed, 11);
    let seq_a: Vec<u8> = (0..n).map(|_| inp.below(24) as u8).collect();
    let seq_b: Vec<u8> = (0..n).map(|_| inp.below(24) as u8).collect();
    let m = n + 1;
    let mut refs = vec![0; m * m];
    let mut score = vec![0; m * m];
    for i in 1..m {
        for j in 1..m {
            refs[i * m + j] = blosum(seq_a[i - 1], seq_b[j - 1]);
        }
    }
    for i in 0..m {
        score[i * m] = -(i as i32) * PENALTY;
        score[i] = -(i as i32) * PENALTY;
    }
    let mut al = Alloc::default();
    let reference = al.buf(refs);
    let score = al.buf(score);
    Nw {
        n,
        spm,
        seq_a,
        seq_b,
        reference,
        score,
        step: Step::default(),
        mem: al.allocated(),
    }
}

/// The scratchpad version.
pub fn new(p: &GpgpuParams) -> Nw {
    build(p, true)
}

/// The version without scratchpad.
pub fn new_nospm(p: &GpgpuParams) -> Nw {
    build(p, false)
}

/// The whole score matrix computed sequentially.
pub fn reference_scores(a: &[u8], b: &[u8]) -> Vec<i32> {
    let m = a.len() + 1;
    let mut s = vec![0; m * m];
    for i in 0..m {
        s[i * m] = -(i as i32) * PENALTY;
        s[i] = -(i as i32) * PENALTY;
    }
    for i in 1..m {
        for j in 1..m {
            s[i * m + j] = (s[(i - 1) * m + j - 1] + blosum(a[i - 1], b[j - 1]))
                .max(s[(i - 1) * m + j] - PENALTY)
                .max(s[i * m + j - 1] - PENALTY);
        }
    }
    s
}

impl Nw {
    /// Tile (row, col) of block `b` of diagonal launch `d`.
    fn tile(&self, d: usize, b: usize) -> (usize, usize) {
        let tiles = self.n / B;
        let r0 = d.saturating_sub(tiles - 1);
        (r0 + b, d - r0 - b)
    }
}

impl Kernel for Nw {
    fn next_launch(&mut self) -> Option<Launch> {
        let tiles = self.n / B;
        let d = self.step.next();
        (d < 2 * tiles - 1).then(|| Launch {
            blocks: d.min(2 * tiles - 2 - d) + 1,
            threads: B,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let m = self.n + 1;
        let (tr, tc) = self.tile(self.step.cur(), blk.idx);
        let (y0, x0) = (tr * B, tc * B);
        let (refs, score) = (&self.reference, &mut self.score);
        if self.spm {
            let mut sref = [[0i32; B]; B];
            let mut tmp = [[0i32; B + 1]; B + 1];
            blk.phase(|w| {
                // Northwest corner and northern edge, western edge, reference tile.
                let nw = w.load(0x00, score, |t| (t.local == 0).then_some(y0 * m + x0));
                let north = w.load(0x08, score, |t| Some(y0 * m + x0 + 1 + t.local));
                let west = w.load(0x10, score, |t| Some((y0 + 1 + t.local) * m + x0));
                tmp[0][0] = nw[0];
                for t in w.tids() {
                    tmp[0][t.local + 1] = north[t.lane];
                    tmp[t.local + 1][0] = west[t.lane];
                }
                for (r, row) in sref.iter_mut().enumerate() {
                    let v = w.load(0x18, refs, |t| Some((y0 + 1 + r) * m + x0 + 1 + t.local));
                    for t in w.tids() {
                        row[t.local] = v[t.lane];
                    }
                    w.shared(1);
                }
                w.shared(3);
            });
            // 2B−1 anti-diagonals inside the tile, a barrier after each.
            for k in 0..2 * B - 1 {
                for i in 0..B {
                    if k >= i && k - i < B {
                        let j = k - i;
                        tmp[i + 1][j + 1] = (tmp[i][j] + sref[i][j])
                            .max(tmp[i][j + 1] - PENALTY)
                            .max(tmp[i + 1][j] - PENALTY);
                    }
                }
                blk.phase(|w| {
                    w.shared(4);
                    w.compute(6);
                });
            }
            for r in 0..B {
                blk.phase(|w| {
                    w.shared(1);
                    w.store(0x20, score, |t| {
                        Some(((y0 + 1 + r) * m + x0 + 1 + t.local, tmp[r + 1][t.local + 1]))
                    });
                });
            }
        } else {
            // Thread j walks the tile's anti-diagonals; cell (i, j) on diagonal i + j.
            for k in 0..2 * B - 1 {
                blk.phase(|w| {
                    let cell = |t: crate::simt::Tid| {
                        let j = t.local;
                        (k >= j && k - j < B).then(|| (y0 + 1 + k - j) * m + x0 + 1 + j)
                    };
                    let d = w.load(0x28, score, |t| cell(t).map(|c| c - m - 1));
                    let up = w.load(0x30, score, |t| cell(t).map(|c| c - m));
                    let left = w.load(0x38, score, |t| cell(t).map(|c| c - 1));
                    let r = w.load(0x40, refs, cell);
                    w.compute(8);
                    w.store(0x48, score, |t| {
                        let l = t.lane;
                        cell(t)
                            .map(|c| (c, (d[l] + r[l]).max(up[l] - PENALTY).max(left[l] - PENALTY)))
                    });
                });
            }
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
    fn both_versions_align_like_the_reference() {
        let (a, ra) = run(new(&params(64)));
        let (b, rb) = run(new_nospm(&params(64)));
        let r = reference_scores(&a.seq_a, &a.seq_b);
        assert_eq!(a.score.data, r);
        assert_eq!(b.score.data, r);
        // Without scratchpad the kernel issues far more global transactions.
        assert!(rb.len() > 2 * ra.len(), "{} vs {}", rb.len(), ra.len());
    }
}
