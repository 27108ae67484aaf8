//! K-means clustering, Rodinia `kmeans`: the GPU kernel assigns every point to its nearest
//! centroid (features stored feature-major, so a warp's loads of one feature coalesce; the
//! centroids are a small table every thread reads), the host recomputes the centroids between
//! iterations: adaptive-gpu-l1-bypassing.txt Table 2 *kmeans* (16384 points).

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch, Tid};

const THREADS: usize = 256;
pub const FEATURES: usize = 34;
pub const K: usize = 5;

pub struct Kmeans {
    pub points: usize,
    /// Features `FEATURES × points` (feature-major).
    pub features: Buf<f32>,
    /// Centroids `K × FEATURES`.
    pub centroids: Buf<f32>,
    pub membership: Buf<u32>,
    pub iterations: usize,
    /// Centroids used by the last launch (for checking).
    pub last_centroids: Vec<f32>,
    step: Step,
    mem: u64,
}

pub fn new(p: &GpgpuParams) -> Kmeans {
    let n = p.size_or(16384).max(K);
    let mut inp = Input::new(p.seed, 15);
    // Points around K true centres.
    let centres: Vec<f32> = (0..K * FEATURES).map(|_| inp.range(0.0, 10.0)).collect();
    let mut f = vec![0f32; FEATURES * n];
    for i in 0..n {
        let c = inp.below(K as u64) as usize;
        for j in 0..FEATURES {
            f[j * n + i] = centres[c * FEATURES + j] + inp.range(-1.5, 1.5);
        }
    }
    let init: Vec<f32> = (0..K)
        .flat_map(|c| (0..FEATURES).map(move |j| (c, j)))
        .map(|(c, j)| f[j * n + c])
        .collect();
    let mut al = Alloc::default();
    let features = al.buf(f);
    let centroids = al.buf(init);
    let membership = al.buf(vec![0; n]);
    Kmeans {
        points: n,
        features,
        centroids,
        membership,
        iterations: 3,
        last_centroids: Vec::new(),
        step: Step::default(),
        mem: al.allocated(),
    }
}

/// Index of the centroid nearest to point `i`.
pub fn nearest(features: &[f32], n: usize, cent: &[f32], i: usize) -> u32 {
    let mut best = (f32::MAX, 0);
    for c in 0..K {
        let d: f32 = (0..FEATURES)
            .map(|j| {
                let x = features[j * n + i] - cent[c * FEATURES + j];
                x * x
            })
            .sum();
        if d < best.0 {
            best = (d, c as u32);
        }
    }
    best.1
}

impl Kernel for Kmeans {
    fn next_launch(&mut self) -> Option<Launch> {
        let i = self.step.next();
        if i >= self.iterations {
            return None;
        }
        if i > 0 {
            // Host: new centroids are the means of their members.
            let n = self.points;
            let mut sum = vec![0f64; K * FEATURES];
            let mut cnt = [0usize; K];
            for p in 0..n {
                let c = self.membership.data[p] as usize;
                cnt[c] += 1;
                for j in 0..FEATURES {
                    sum[c * FEATURES + j] += self.features.data[j * n + p] as f64;
                }
            }
            for c in 0..K {
                if cnt[c] > 0 {
                    for j in 0..FEATURES {
                        self.centroids.data[c * FEATURES + j] =
                            (sum[c * FEATURES + j] / cnt[c] as f64) as f32;
                    }
                }
            }
        }
        self.last_centroids = self.centroids.data.clone();
        Some(Launch {
            blocks: self.points.div_ceil(THREADS),
            threads: THREADS,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let (n, b) = (self.points, blk.idx);
        let s = &mut *self;
        blk.phase(|w| {
            let pt = move |t: Tid| {
                let i = b * THREADS + t.local;
                (i < n).then_some(i)
            };
            let mut best = [(f32::MAX, 0u32); 32];
            for c in 0..K {
                let mut dist = [0f32; 32];
                for j in 0..FEATURES {
                    let x = w.load(0x00, &s.features, |t| pt(t).map(|i| j * n + i));
                    let cv = w.load(0x08, &s.centroids, |t| pt(t).map(|_| c * FEATURES + j));
                    for t in w.tids() {
                        let d = x[t.lane] - cv[t.lane];
                        dist[t.lane] += d * d;
                    }
                    w.compute(3);
                }
                for t in w.tids() {
                    if dist[t.lane] < best[t.lane].0 {
                        best[t.lane] = (dist[t.lane], c as u32);
                    }
                }
                w.compute(3);
            }
            w.store(0x10, &mut s.membership, |t| {
                pt(t).map(|i| (i, best[t.lane].1))
            });
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
    fn assigns_nearest_centroids() {
        let (k, _) = run(new(&params(2000)));
        for i in 0..k.points {
            let r = nearest(&k.features.data, k.points, &k.last_centroids, i);
            assert_eq!(k.membership.data[i], r);
        }
        let used: std::collections::BTreeSet<u32> = k.membership.data.iter().copied().collect();
        assert!(used.len() >= 3);
    }
}
