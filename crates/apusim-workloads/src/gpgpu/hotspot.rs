//! Thermal simulation, Rodinia `hotspot`: each iteration updates every cell of a temperature
//! grid from its four neighbours and the power grid (one 16×16 block per tile; loads of the
//! tile and its halo, one store): tap-tlp-aware-llc.txt Table 6 type B *hotspot*.

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch};

const T: usize = 16;
const CAP: f32 = 0.5;
const RX: f32 = 0.1;
const RY: f32 = 0.1;
const RZ: f32 = 0.05;
const AMB: f32 = 80.0;

pub struct Hotspot {
    pub n: usize,
    pub power: Buf<f32>,
    /// Ping-pong temperature grids.
    pub temp: [Buf<f32>; 2],
    pub initial: Vec<f32>,
    pub iterations: usize,
    step: Step,
    mem: u64,
}

pub fn new(p: &GpgpuParams) -> Hotspot {
    let n = p.size_or(512).div_ceil(T).max(1) * T;
    let mut inp = Input::new(p.seed, 10);
    let mut al = Alloc::default();
    let power = al.buf((0..n * n).map(|_| inp.range(0.0, 1.0)).collect());
    let initial: Vec<f32> = (0..n * n).map(|_| inp.range(60.0, 90.0)).collect();
    let temp = [al.buf(initial.clone()), al.buf(vec![0.0; n * n])];
    Hotspot {
        n,
        power,
        temp,
        initial,
        iterations: 4,
        step: Step::default(),
        mem: al.allocated(),
    }
}

/// New temperature of a cell from itself, its (clamped) neighbours and its power.
#[inline]
pub fn update(c: f32, nn: f32, s: f32, e: f32, w: f32, p: f32) -> f32 {
    c + CAP * (p + (s + nn - 2.0 * c) * RY + (e + w - 2.0 * c) * RX + (AMB - c) * RZ)
}

/// One reference iteration.
pub fn reference(n: usize, t: &[f32], p: &[f32]) -> Vec<f32> {
    let at = |y: usize, x: usize| t[y * n + x];
    (0..n * n)
        .map(|i| {
            let (y, x) = (i / n, i % n);
            update(
                at(y, x),
                at(y.saturating_sub(1), x),
                at((y + 1).min(n - 1), x),
                at(y, (x + 1).min(n - 1)),
                at(y, x.saturating_sub(1)),
                p[i],
            )
        })
        .collect()
}

impl Kernel for Hotspot {
    fn next_launch(&mut self) -> Option<Launch> {
        (self.step.next() < self.iterations).then_some(Launch {
            blocks: (self.n / T) * (self.n / T),
            threads: T * T,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let n = self.n;
        let (bx, by) = (blk.idx % (n / T), blk.idx / (n / T));
        let src = self.step.cur() % 2;
        let [t0, t1] = &mut self.temp;
        let (tin, tout) = if src == 0 { (&*t0, t1) } else { (&*t1, t0) };
        let power = &self.power;
        let pos = move |t: crate::simt::Tid| (by * T + t.local / T, bx * T + t.local % T);
        let mut tile = [0f32; T * T];
        let mut pw = [0f32; T * T];
        blk.phase(|w| {
            let c = w.load(0x00, tin, |t| {
                let (y, x) = pos(t);
                Some(y * n + x)
            });
            let p = w.load(0x08, power, |t| {
                let (y, x) = pos(t);
                Some(y * n + x)
            });
            for t in w.tids() {
                tile[t.local] = c[t.lane];
                pw[t.local] = p[t.lane];
            }
            w.shared(2);
        });
        // Halo: the rows above/below and columns left/right of the tile (clamped).
        let mut halo = [[0f32; T]; 4];
        blk.phase(|w| {
            let hidx = move |t: crate::simt::Tid| -> Option<usize> {
                let (side, k) = (t.local / T, t.local % T);
                let (y, x) = match side {
                    0 => ((by * T).saturating_sub(1), bx * T + k),
                    1 => ((by * T + T).min(n - 1), bx * T + k),
                    2 => (by * T + k, (bx * T).saturating_sub(1)),
                    3 => (by * T + k, (bx * T + T).min(n - 1)),
                    _ => return None,
                };
                Some(y * n + x)
            };
            let v = w.load(0x10, tin, hidx);
            for t in w.tids() {
                if t.local < 4 * T {
                    halo[t.local / T][t.local % T] = v[t.lane];
                }
            }
            w.shared(1);
        });
        blk.phase(|w| {
            let mut out = [0f32; 32];
            for t in w.tids() {
                let (ty, tx) = (t.local / T, t.local % T);
                let c = tile[t.local];
                let nn = if ty > 0 {
                    tile[t.local - T]
                } else {
                    halo[0][tx]
                };
                let s = if ty + 1 < T {
                    tile[t.local + T]
                } else {
                    halo[1][tx]
                };
                let wv = if tx > 0 {
                    tile[t.local - 1]
                } else {
                    halo[2][ty]
                };
                let e = if tx + 1 < T {
                    tile[t.local + 1]
                } else {
                    halo[3][ty]
                };
                out[t.lane] = update(c, nn, s, e, wv, pw[t.local]);
            }
            w.shared(6);
            w.compute(14);
            w.store(0x18, tout, |t| {
                let (y, x) = pos(t);
                Some((y * n + x, out[t.lane]))
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
    fn matches_the_reference_stencil() {
        let (k, _) = run(new(&params(48)));
        let mut r = k.initial.clone();
        for _ in 0..k.iterations {
            r = reference(k.n, &r, &k.power.data);
        }
        assert_eq!(k.temp[k.iterations % 2].data, r);
    }
}
