//! Back-propagation training of a two-layer perceptron, as Rodinia `backprop`: the
//! `layerforward` kernel (16×16 blocks: each block multiplies 16 input units by their 16×16
//! weight tile and reduces in scratchpad into per-block partial sums) and the
//! `adjust_weights` kernel (every weight updated from the hidden-layer deltas):
//! adaptive-gpu-l1-bypassing.txt Table 2 *backprop* (8192×16), tap-tlp-aware-llc.txt Table 6
//! type E.

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch};

/// Hidden units (and tile side).
pub const H: usize = 16;
const ETA: f32 = 0.3;
const MOMENTUM: f32 = 0.3;

pub struct Backprop {
    pub inputs: usize,
    /// Input unit values (index 0 is the bias unit, as in Rodinia).
    pub input: Buf<f32>,
    /// Weights `(inputs + 1) × (H + 1)`, row per input unit.
    pub weights: Buf<f32>,
    pub prev: Buf<f32>,
    /// Per-block partial sums `blocks × H`.
    pub partial: Buf<f32>,
    /// Hidden deltas (computed on the host between the kernels).
    pub delta: Buf<f32>,
    pub initial_weights: Vec<f32>,
    step: Step,
    mem: u64,
}

pub fn new(p: &GpgpuParams) -> Backprop {
    let inputs = p.size_or(8192).div_ceil(H).max(1) * H;
    let mut inp = Input::new(p.seed, 9);
    let mut al = Alloc::default();
    let input = al.buf((0..=inputs).map(|_| inp.f32()).collect());
    let initial_weights: Vec<f32> = (0..(inputs + 1) * (H + 1))
        .map(|_| inp.range(-0.5, 0.5))
        .collect();
    let weights = al.buf(initial_weights.clone());
    let prev = al.buf(vec![0.0; (inputs + 1) * (H + 1)]);
    let partial = al.buf(vec![0.0; inputs / H * H]);
    let delta = al.buf(vec![0.0; H + 1]);
    Backprop {
        inputs,
        input,
        weights,
        prev,
        partial,
        delta,
        initial_weights,
        step: Step::default(),
        mem: al.allocated(),
    }
}

/// Hidden-layer deltas from the hidden sums (host code between the kernels).
pub fn deltas(hidden_sum: &[f32]) -> Vec<f32> {
    let mut d = vec![0.0; H + 1];
    for j in 1..=H {
        let o = 1.0 / (1.0 + (-hidden_sum[j - 1]).exp());
        d[j] = o * (1.0 - o) * (0.5 - o);
    }
    d
}

impl Kernel for Backprop {
    fn next_launch(&mut self) -> Option<Launch> {
        let i = self.step.next();
        if i == 1 {
            let blocks = self.inputs / H;
            let sums: Vec<f32> = (0..H)
                .map(|j| (0..blocks).map(|b| self.partial.data[b * H + j]).sum())
                .collect();
            self.delta.data = deltas(&sums);
        }
        (i < 2).then_some(Launch {
            blocks: self.inputs / H,
            threads: H * H,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let b = blk.idx;
        let s = &mut *self;
        // Thread (ty, tx): input unit b·16 + ty + 1, hidden unit tx + 1.
        let unit = move |t: crate::simt::Tid| b * H + t.local / H + 1;
        let widx = move |t: crate::simt::Tid| unit(t) * (H + 1) + t.local % H + 1;
        if s.step.cur() == 0 {
            let mut node = [0f32; H];
            let mut m = [0f32; H * H];
            blk.phase(|w| {
                let v = w.load(0x00, &s.input, |t| (t.local % H == 0).then(|| unit(t)));
                for t in w.tids() {
                    if t.local % H == 0 {
                        node[t.local / H] = v[t.lane];
                    }
                }
                w.shared(1);
            });
            blk.phase(|w| {
                let wt = w.load(0x08, &s.weights, |t| Some(widx(t)));
                for t in w.tids() {
                    m[t.local] = wt[t.lane] * node[t.local / H];
                }
                w.shared(2);
                w.compute(2);
            });
            // Tree reduction over the 16 rows of the tile, one barrier per level.
            let mut half = H / 2;
            while half > 0 {
                for r in 0..half {
                    for c in 0..H {
                        m[r * H + c] += m[(r + half) * H + c];
                    }
                }
                blk.phase(|w| {
                    w.shared(3);
                    w.compute(2);
                });
                half /= 2;
            }
            blk.phase(|w| {
                w.store(0x10, &mut s.partial, |t| {
                    (t.local < H).then(|| (b * H + t.local, m[t.local]))
                });
            });
        } else {
            blk.phase(|w| {
                let d = w.load(0x18, &s.delta, |t| Some(t.local % H + 1));
                let x = w.load(0x20, &s.input, |t| Some(unit(t)));
                let pw = w.load(0x28, &s.prev, |t| Some(widx(t)));
                let wt = w.load(0x30, &s.weights, |t| Some(widx(t)));
                let mut nw = [(0f32, 0f32); 32];
                for t in w.tids() {
                    let l = t.lane;
                    let dw = ETA * d[l] * x[l] + MOMENTUM * pw[l];
                    nw[l] = (wt[l] + dw, dw);
                }
                w.compute(6);
                w.store(0x38, &mut s.weights, |t| Some((widx(t), nw[t.lane].0)));
                w.store(0x40, &mut s.prev, |t| Some((widx(t), nw[t.lane].1)));
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
    #[allow(clippy::needless_range_loop)]
    fn trains_like_the_sequential_code() {
        let (k, _) = run(new(&params(512)));
        let n = k.inputs;
        let w0 = &k.initial_weights;
        let sums: Vec<f32> = (1..=H)
            .map(|j| (1..=n).map(|i| w0[i * (H + 1) + j] * k.input.data[i]).sum())
            .collect();
        let d = deltas(&sums);
        for i in 1..=n {
            for j in 1..=H {
                let dw = ETA * d[j] * k.input.data[i];
                let idx = i * (H + 1) + j;
                assert!(close(k.weights.data[idx], w0[idx] + dw, 1e-3), "{i} {j}");
                assert!(close(k.delta.data[j], d[j], 1e-3));
            }
        }
    }
}
