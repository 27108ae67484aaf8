//! Speckle-reducing anisotropic diffusion, Rodinia `srad` (v2, the CUDA version): each
//! iteration runs two kernels over an n×n image with 16×16 thread blocks. The first reads each
//! pixel and its four (clamped) neighbours and writes the four directional derivatives and the
//! diffusion coefficient; the second reads the coefficients of the pixel and of its south and
//! east neighbours plus the derivatives and updates the image. The speckle scale `q0²` comes
//! from the statistics of a region of interest, computed on the host between iterations (not
//! traced). Named in adaptive-gpu-l1-bypassing.txt Table 2 and a streaming, little-reuse
//! stencil (tap-tlp-aware-llc.txt type B behaviour when the image exceeds the caches).

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch, Tid};

const T: usize = 16;
const LAMBDA: f32 = 0.5;
/// Side of the region of interest (rows and columns 0..ROI) used for `q0²`.
const ROI: usize = 32;

pub struct Srad {
    pub n: usize,
    /// The image, updated in place by the second kernel.
    pub j: Buf<f32>,
    pub dn: Buf<f32>,
    pub ds: Buf<f32>,
    pub dw: Buf<f32>,
    pub de: Buf<f32>,
    pub c: Buf<f32>,
    pub initial: Vec<f32>,
    pub iterations: usize,
    q0sqr: f32,
    step: Step,
    mem: u64,
}

pub fn new(p: &GpgpuParams) -> Srad {
    let n = p.size_or(512).div_ceil(T).max(1) * T;
    let mut inp = Input::new(p.seed, 11);
    let mut al = Alloc::default();
    // Rodinia feeds exp(image); a positive image keeps the coefficients finite.
    let initial: Vec<f32> = (0..n * n).map(|_| inp.range(0.0, 1.0).exp()).collect();
    let j = al.buf(initial.clone());
    let mut zero = || al.buf(vec![0f32; n * n]);
    let (dn, ds, dw, de, c) = (zero(), zero(), zero(), zero(), zero());
    Srad {
        n,
        j,
        dn,
        ds,
        dw,
        de,
        c,
        initial,
        iterations: 2,
        q0sqr: 0.0,
        step: Step::default(),
        mem: al.allocated(),
    }
}

/// `q0²` of the region of interest: its variance over its squared mean.
pub fn q0sqr(n: usize, img: &[f32]) -> f32 {
    let r = ROI.min(n);
    let (mut sum, mut sum2) = (0f32, 0f32);
    for y in 0..r {
        for x in 0..r {
            let v = img[y * n + x];
            sum += v;
            sum2 += v * v;
        }
    }
    let size = (r * r) as f32;
    let mean = sum / size;
    let var = sum2 / size - mean * mean;
    var / (mean * mean)
}

/// Kernel 1 for one pixel: the four derivatives and the clamped diffusion coefficient.
#[inline]
pub fn coefficient(jc: f32, jn: f32, js: f32, jw: f32, je: f32, q0sqr: f32) -> [f32; 5] {
    let (dn, ds, dw, de) = (jn - jc, js - jc, jw - jc, je - jc);
    let g2 = (dn * dn + ds * ds + dw * dw + de * de) / (jc * jc);
    let l = (dn + ds + dw + de) / jc;
    let num = 0.5 * g2 - (1.0 / 16.0) * (l * l);
    let den = 1.0 + 0.25 * l;
    let qsqr = num / (den * den);
    let den = (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr));
    let c = (1.0 / (1.0 + den)).clamp(0.0, 1.0);
    [dn, ds, dw, de, c]
}

/// Kernel 2 for one pixel: the image update from the coefficients and derivatives.
#[inline]
pub fn update(j: f32, c: f32, cs: f32, ce: f32, d: [f32; 4]) -> f32 {
    let div = c * d[0] + cs * d[1] + c * d[2] + ce * d[3];
    j + 0.25 * LAMBDA * div
}

/// One reference iteration (both kernels) on the host.
pub fn reference(n: usize, img: &mut [f32]) {
    let q0 = q0sqr(n, img);
    let at = |img: &[f32], y: usize, x: usize| img[y * n + x];
    let coef: Vec<[f32; 5]> = (0..n * n)
        .map(|i| {
            let (y, x) = (i / n, i % n);
            coefficient(
                at(img, y, x),
                at(img, y.saturating_sub(1), x),
                at(img, (y + 1).min(n - 1), x),
                at(img, y, x.saturating_sub(1)),
                at(img, y, (x + 1).min(n - 1)),
                q0,
            )
        })
        .collect();
    for i in 0..n * n {
        let (y, x) = (i / n, i % n);
        let [dn, ds, dw, de, c] = coef[i];
        let cs = coef[(y + 1).min(n - 1) * n + x][4];
        let ce = coef[y * n + (x + 1).min(n - 1)][4];
        img[i] = update(img[i], c, cs, ce, [dn, ds, dw, de]);
    }
}

impl Srad {
    /// Thread `t`'s pixel (row, column) in block `b`.
    fn pixel(&self, b: usize, t: Tid) -> (usize, usize) {
        let per_row = self.n / T;
        (
            (b / per_row) * T + t.local / T,
            (b % per_row) * T + t.local % T,
        )
    }

    fn kernel1(&mut self, blk: &mut Block<'_>) {
        let n = self.n;
        let b = blk.idx;
        let me = &*self;
        let pos = |t: Tid| me.pixel(b, t);
        let q0 = self.q0sqr;
        let mut out = [[0f32; 5]; T * T];
        blk.phase(|w| {
            let jc = w.load(0x00, &me.j, |t| Some(pos(t).0 * n + pos(t).1));
            let jn = w.load(0x08, &me.j, |t| {
                Some(pos(t).0.saturating_sub(1) * n + pos(t).1)
            });
            let js = w.load(0x10, &me.j, |t| {
                Some((pos(t).0 + 1).min(n - 1) * n + pos(t).1)
            });
            let jw = w.load(0x18, &me.j, |t| {
                Some(pos(t).0 * n + pos(t).1.saturating_sub(1))
            });
            let je = w.load(0x20, &me.j, |t| {
                Some(pos(t).0 * n + (pos(t).1 + 1).min(n - 1))
            });
            for t in w.tids() {
                let l = t.lane;
                out[t.local] = coefficient(jc[l], jn[l], js[l], jw[l], je[l], q0);
            }
            w.compute(30);
        });
        let mut outs = [
            &mut self.dn,
            &mut self.ds,
            &mut self.dw,
            &mut self.de,
            &mut self.c,
        ];
        let per_row = n / T;
        let at =
            move |t: Tid| ((b / per_row) * T + t.local / T) * n + (b % per_row) * T + t.local % T;
        blk.phase(|w| {
            for (k, buf) in outs.iter_mut().enumerate() {
                w.store(0x28 + 8 * k as u64, buf, |t| Some((at(t), out[t.local][k])));
            }
        });
    }

    fn kernel2(&mut self, blk: &mut Block<'_>) {
        let n = self.n;
        let b = blk.idx;
        let per_row = n / T;
        let pos = move |t: Tid| {
            (
                (b / per_row) * T + t.local / T,
                (b % per_row) * T + t.local % T,
            )
        };
        let (c, dn, ds, dw, de) = (&self.c, &self.dn, &self.ds, &self.dw, &self.de);
        let j = &mut self.j;
        blk.phase(|w| {
            let here = |t: Tid| Some(pos(t).0 * n + pos(t).1);
            let cc = w.load(0x50, c, here);
            let cs = w.load(0x58, c, |t| Some((pos(t).0 + 1).min(n - 1) * n + pos(t).1));
            let ce = w.load(0x60, c, |t| Some(pos(t).0 * n + (pos(t).1 + 1).min(n - 1)));
            let d = [
                w.load(0x68, dn, here),
                w.load(0x70, ds, here),
                w.load(0x78, dw, here),
                w.load(0x80, de, here),
            ];
            let jv = w.load(0x88, &*j, here);
            let mut out = [0f32; 32];
            for t in w.tids() {
                let l = t.lane;
                out[l] = update(
                    jv[l],
                    cc[l],
                    cs[l],
                    ce[l],
                    [d[0][l], d[1][l], d[2][l], d[3][l]],
                );
            }
            w.compute(10);
            w.store(0x90, j, |t| Some((pos(t).0 * n + pos(t).1, out[t.lane])));
        });
    }
}

impl Kernel for Srad {
    fn next_launch(&mut self) -> Option<Launch> {
        let k = self.step.next();
        if k >= 2 * self.iterations {
            return None;
        }
        if k.is_multiple_of(2) {
            // Host side, between iterations: the region of interest's statistics.
            self.q0sqr = q0sqr(self.n, &self.j.data);
        }
        Some(Launch {
            blocks: (self.n / T) * (self.n / T),
            threads: T * T,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        if self.step.cur().is_multiple_of(2) {
            self.kernel1(blk)
        } else {
            self.kernel2(blk)
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
    fn matches_the_reference_diffusion() {
        let (k, trace) = run(new(&params(48)));
        let mut r = k.initial.clone();
        for _ in 0..k.iterations {
            reference(k.n, &mut r);
        }
        assert_eq!(k.j.data, r);
        assert_ne!(r, k.initial, "the diffusion changed the image");
        // Kernel 1 reads five neighbours and writes five arrays; kernel 2 writes the image.
        let pcs: std::collections::BTreeSet<u64> = trace.iter().map(|a| a.pc).collect();
        assert_eq!(pcs.len(), 5 + 5 + 3 + 4 + 1 + 1);
    }
}
