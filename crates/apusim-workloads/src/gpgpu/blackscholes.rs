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

/// `e^x` in single precision, branch-free so that a loop over a warp's lanes vectorizes: the
/// Cephes `expf` (range reduction by `ln 2` split in two constants, a degree-6 polynomial on
/// `[−ln2/2, ln2/2]`, the power of two put into the exponent bits); within 2 ulp of the
/// correctly rounded value for `x` in `[−87, 88]`, clamped outside.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const ROUND: f32 = 12_582_912.0; // 1.5·2^23: adding it rounds to an integer
    let x = x.clamp(-87.0, 88.0);
    let t = x * std::f32::consts::LOG2_E + ROUND;
    let n = t - ROUND;
    // The integer n from the bits of t (its exponent is that of ROUND, the low mantissa
    // bits hold n): an integer operation that vectorizes, unlike a float-to-int cast.
    let ni = t.to_bits() as i32 - ROUND.to_bits() as i32;
    let r = (x - n * 0.693_359_4) - n * -2.121_944_4e-4;
    let z = r * r;
    let p = ((((1.987_569_1e-4 * r + 1.398_2e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
        + 1.666_666_5e-1)
        * r
        + 0.5;
    let y = p * z + r + 1.0;
    y * f32::from_bits(((ni + 127) as u32) << 23)
}

/// Natural logarithm of a positive normal `x` in single precision, branch-free (vectorizes):
/// the Cephes `logf` (mantissa in `[√½, √2)`, a degree-8 polynomial, the exponent times
/// `ln 2` split in two constants added back).
#[inline(always)]
pub fn ln(x: f32) -> f32 {
    const SQRTHF: f32 = std::f32::consts::FRAC_1_SQRT_2;
    let bits = x.to_bits();
    let e = ((bits >> 23) & 0xFF) as i32 - 126;
    let m = f32::from_bits((bits & 0x807F_FFFF) | 0x3F00_0000); // in [0.5, 1)
    let small = m < SQRTHF;
    let e = (e - i32::from(small)) as f32;
    let f = if small { m + m - 1.0 } else { m - 1.0 };
    let z = f * f;
    let p = (((((((7.037_683_6e-2 * f - 1.151_461e-1) * f + 1.167_699_9e-1) * f
        - 1.242_014_1e-1)
        * f
        + 1.424_932_3e-1)
        * f
        - 1.666_805_8e-1)
        * f
        + 2.000_071_4e-1)
        * f
        - 2.499_999_4e-1)
        * f
        + 3.333_333e-1;
    let y = p * f * z + e * -2.121_944_4e-4 - 0.5 * z;
    f + y + e * 0.693_359_4
}

/// Polynomial approximation of the cumulative normal distribution (as in the SDK).
#[inline(always)]
pub fn cnd(d: f32) -> f32 {
    const A1: f32 = 0.319_381_53;
    const A2: f32 = -0.356_563_78;
    const A3: f32 = 1.781_477_9;
    const A4: f32 = -1.821_256;
    const A5: f32 = 1.330_274_5;
    const RSQRT2PI: f32 = 0.398_942_3;
    let k = 1.0 / (1.0 + 0.231_641_9 * d.abs());
    let c = RSQRT2PI * exp(-0.5 * d * d) * (k * (A1 + k * (A2 + k * (A3 + k * (A4 + k * A5)))));
    if d > 0.0 {
        1.0 - c
    } else {
        c
    }
}

/// (call, put) of one option.
#[inline(always)]
pub fn price(s: f32, x: f32, t: f32) -> (f32, f32) {
    let sqrt_t = t.sqrt();
    let d1 = (ln(s / x) + (R + 0.5 * V * V) * t) / (V * sqrt_t);
    let d2 = d1 - V * sqrt_t;
    let e = exp(-R * t);
    let (c1, c2) = (cnd(d1), cnd(d2));
    let call = s * c1 - x * e * c2;
    let put = x * e * (1.0 - c2) - s * (1.0 - c1);
    (call, put)
}

/// [`price`] of a warp's 32 options (a branch-free loop over the lanes: it vectorizes).
pub fn price_lanes(s: &[f32; 32], x: &[f32; 32], t: &[f32; 32]) -> ([f32; 32], [f32; 32]) {
    let (mut call, mut put) = ([0f32; 32], [0f32; 32]);
    for l in 0..32 {
        (call[l], put[l]) = price(s[l], x[l], t[l]);
    }
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
                let i = i0 + w.first_local();
                let ps = w.load_run(0x00, &s.price, i, n);
                let xs = w.load_run(0x08, &s.strike, i, n);
                let ts = w.load_run(0x10, &s.years, i, n);
                let (call, put) = price_lanes(&ps, &xs, &ts);
                // Two CND evaluations, logs, exps, square root: ~60 instructions.
                w.compute(60);
                w.store_run(0x18, &mut s.call, i, n, &call);
                w.store_run(0x20, &mut s.put, i, n, &put);
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
    fn exp_and_ln_match_the_standard_library() {
        let mut worst = (0f32, 0f32);
        for i in 0..200_000 {
            let x = -80.0 + 160.0 * i as f32 / 200_000.0;
            let (e, r) = (exp(x), x.exp());
            worst.0 = worst.0.max(((e - r) / r).abs());
            let y = 1e-30 * 1.0007f32.powi(i / 2);
            let (l, r) = (ln(y), y.ln());
            worst.1 = worst.1.max((l - r).abs() / r.abs().max(1.0));
        }
        assert!(worst.0 < 3e-7 && worst.1 < 3e-7, "{worst:?}");
        assert_eq!((exp(0.0), ln(1.0)), (1.0, 0.0));
    }

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
