//! sphinx3-like acoustic scoring (stand-in for SPEC CPU 2006 482.sphinx3): for each speech
//! frame, the active senones' Gaussian mixtures (39-dimensional means and inverse variances)
//! are scored against the frame's feature vector; the table is large but reused every frame.

use super::{rng, CpuKernel, CpuParams, Heap, Tracer};
use crate::simt::Buf;

pub const DIM: usize = 39;
pub const MIX: usize = 8;

pub struct Sphinx3 {
    /// Means and inverse variances, `(senone · MIX + m) · DIM + d`.
    pub mean: Buf<f32>,
    pub ivar: Buf<f32>,
    pub scores: Buf<f32>,
    pub frame: [f32; DIM],
    pub active: Vec<usize>,
    rng: crate::rng::SplitMix64,
}

pub fn new(p: &CpuParams, h: &mut Heap) -> Sphinx3 {
    let senones = p.size_or(4096).max(1);
    let mut r = rng(p, 11);
    let mut f = |s: f32| (r.below(1000) as f32 / 1000.0) * s;
    let mean = h.buf((0..senones * MIX * DIM).map(|_| f(2.0)).collect());
    let ivar = h.buf((0..senones * MIX * DIM).map(|_| 0.5 + f(1.0)).collect());
    let scores = h.buf(vec![0.0; senones]);
    Sphinx3 {
        mean,
        ivar,
        scores,
        frame: [0.0; DIM],
        active: Vec::new(),
        rng: rng(p, 12),
    }
}

/// Score of senone `s`: best mixture log-density (up to constants).
pub fn score(mean: &[f32], ivar: &[f32], x: &[f32; DIM], s: usize) -> f32 {
    (0..MIX)
        .map(|m| {
            let o = (s * MIX + m) * DIM;
            -(0..DIM)
                .map(|d| (x[d] - mean[o + d]).powi(2) * ivar[o + d])
                .sum::<f32>()
        })
        .fold(f32::NEG_INFINITY, f32::max)
}

impl CpuKernel for Sphinx3 {
    fn step(&mut self, t: &mut Tracer) {
        let senones = self.scores.len();
        for d in 0..DIM {
            self.frame[d] = self.rng.below(2000) as f32 / 1000.0;
        }
        // About a third of the senones are active in a frame (beam pruning).
        self.active = (0..senones).filter(|_| self.rng.below(3) == 0).collect();
        for &s in &self.active {
            let mut best = f32::NEG_INFINITY;
            for m in 0..MIX {
                let o = (s * MIX + m) * DIM;
                let mut acc = 0f32;
                for d in 0..DIM {
                    let mu = t.load(0x00, &self.mean, o + d);
                    let iv = t.load(0x08, &self.ivar, o + d);
                    acc -= (self.frame[d] - mu).powi(2) * iv;
                    t.exec(0x10, 3);
                }
                best = best.max(acc);
                t.exec(0x20, 4);
            }
            t.store(0x28, &mut self.scores, s, best);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_active_senones() {
        let p = CpuParams {
            size: 300,
            ..CpuParams::default()
        };
        let mut k = new(&p, &mut Heap::new(0));
        k.step(&mut Tracer::collecting(0, u64::MAX));
        assert!(!k.active.is_empty());
        for &s in &k.active {
            assert_eq!(
                k.scores.data[s],
                score(&k.mean.data, &k.ivar.data, &k.frame, s)
            );
        }
    }
}
