//! Black-Scholes option pricing, the CUDA SDK `BlackScholes` kernel (grid-stride loop over the
//! options, five streamed arrays, much arithmetic per element): drp-reuse-probability-shared-
//! llc.txt Table 2 *blackscholes* (480 blocks × 128 threads), gpu-access-criticality Table 3,
//! tap-tlp-aware-llc.txt Table 6 type D.

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch};

const BLOCKS: usize = 480;
const THREADS: usize = 128;
const R: f32 = 0.02;
const V: f32 = 0.30;

pub struct BlackScholes {
    pub price: Buf<f32>,
    pub strike: Buf<f32>,
    pub years: Buf<f32>,
    pub call: Buf<f32>,
    pub put: Buf<f32>,
    /// Kernel iterations (the SDK sample prices the same options repeatedly).
    pub iterations: usize,
    step: Step,
    mem: u64,
}

pub fn new(p: &GpgpuParams) -> BlackScholes {
    let n = p.size_or(1 << 20).max(1);
    let mut inp = Input::new(p.seed, 3);
    let mut al = Alloc::default();
    let price = al.buf((0..n).map(|_| inp.range(5.0, 30.0)).collect());
    let strike = al.buf((0..n).map(|_| inp.range(1.0, 100.0)).collect());
    let years = al.buf((0..n).map(|_| inp.range(0.25, 10.0)).collect());
    let call = al.buf(vec![0.0; n]);
    let put = al.buf(vec![0.0; n]);
    BlackScholes {
        price,
        strike,
        years,
        call,
        put,
        iterations: 2,
        step: Step::default(),
        mem: al.allocated(),
    }
}

/// Polynomial approximation of the cumulative normal distribution (as in the SDK).
pub fn cnd(d: f32) -> f32 {
    const A1: f32 = 0.319_381_53;
    const A2: f32 = -0.356_563_78;
    const A3: f32 = 1.781_477_9;
    const A4: f32 = -1.821_256;
    const A5: f32 = 1.330_274_5;
    const RSQRT2PI: f32 = 0.398_942_3;
    let k = 1.0 / (1.0 + 0.231_641_9 * d.abs());
    let c = RSQRT2PI * (-0.5 * d * d).exp() * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
    if d > 0.0 {
        1.0 - c
    } else {
        c
    }
}

/// (call, put) of one option.
pub fn price(s: f32, x: f32, t: f32) -> (f32, f32) {
    let sqrt_t = t.sqrt();
    let d1 = ((s / x).ln() + (R + 0.5 * V * V) * t) / (V * sqrt_t);
    let d2 = d1 - V * sqrt_t;
    let e = (-R * t).exp();
    let (c1, c2) = (cnd(d1), cnd(d2));
    let call = s * c1 - x * e * c2;
    let put = x * e * (1.0 - c2) - s * (1.0 - c1);
    (call, put)
}

impl Kernel for BlackScholes {
    fn next_launch(&mut self) -> Option<Launch> {
        (self.step.next() < self.iterations).then_some(Launch {
            blocks: BLOCKS,
            threads: THREADS,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let n = self.price.len();
        let stride = blk.grid * THREADS;
        let b = blk.idx;
        let s = self;
        blk.phase(|w| {
            let mut i0 = b * THREADS;
            while i0 < n {
                let at = |t: crate::simt::Tid| (i0 + t.local < n).then_some(i0 + t.local);
                let ps = w.load(0x00, &s.price, at);
                let xs = w.load(0x08, &s.strike, at);
                let ts = w.load(0x10, &s.years, at);
                let mut out = [(0f32, 0f32); 32];
                for t in w.tids() {
                    out[t.lane] = price(ps[t.lane], xs[t.lane], ts[t.lane]);
                }
                // Two CND evaluations, logs, exps, square root: ~60 instructions.
                w.compute(60);
                w.store(0x18, &mut s.call, |t| at(t).map(|i| (i, out[t.lane].0)));
                w.store(0x20, &mut s.put, |t| at(t).map(|i| (i, out[t.lane].1)));
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
    fn prices_every_option() {
        let (k, _) = run(new(&params(70_000)));
        for i in 0..k.price.len() {
            let (c, p) = price(k.price.data[i], k.strike.data[i], k.years.data[i]);
            assert_eq!((k.call.data[i], k.put.data[i]), (c, p));
            // Put-call parity: C − P = S − X·e^(−rT).
            let parity = k.price.data[i] - k.strike.data[i] * (-R * k.years.data[i]).exp();
            assert!((c - p - parity).abs() < 1e-2 * (1.0 + parity.abs()));
        }
    }
}
