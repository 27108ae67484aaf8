//! Streaming kernels over large arrays: stand-ins for SPEC CPU 2006 462.libquantum (gates
//! applied to every basis state of a quantum register), 410.bwaves (vector updates of an
//! implicit solver over five large arrays) and 433.milc (SU(3) matrix × colour-vector over
//! every link of a 4-D lattice). Each step sweeps the whole data set once.

use super::{rng, CpuKernel, CpuParams, Heap, Tracer};
use crate::simt::Buf;

/// libquantum-like: a register of (basis state, amplitude) pairs.
pub struct Libquantum {
    pub reg: Buf<(u64, f32)>,
    pub gates: u64,
    qubits: u32,
}

pub fn libquantum(p: &CpuParams, h: &mut Heap) -> Libquantum {
    let n = p.size_or(1 << 22).max(2);
    let mut r = rng(p, 3);
    let qubits = 40;
    let reg = h.buf(
        (0..n)
            .map(|_| (r.next_u64() & ((1 << qubits) - 1), 1.0 / (n as f32).sqrt()))
            .collect(),
    );
    Libquantum {
        reg,
        gates: 0,
        qubits,
    }
}

/// The gate of step `g`: (control 1, control 2 or none, target).
pub fn gate(g: u64, qubits: u32) -> (u32, Option<u32>, u32) {
    let q = qubits as u64;
    let c = (g * 7 % q) as u32;
    let tq = ((g * 7 + 3) % q) as u32;
    (c, (g % 2 == 1).then(|| ((g * 7 + 11) % q) as u32), tq)
}

impl CpuKernel for Libquantum {
    fn step(&mut self, t: &mut Tracer) {
        let (c1, c2, tq) = gate(self.gates, self.qubits);
        self.gates += 1;
        let mask = 1u64 << c1 | c2.map_or(0, |c| 1u64 << c);
        for i in 0..self.reg.len() {
            let (s, a) = t.load(0x00, &self.reg, i);
            t.exec(0x08, 4);
            if s & mask == mask {
                t.store(0x10, &mut self.reg, i, (s ^ 1 << tq, a));
            }
        }
    }
}

/// bwaves-like: x += α·p, r −= α·q, p = r + β·p over five arrays.
pub struct Bwaves {
    pub x: Buf<f64>,
    pub r: Buf<f64>,
    pub p: Buf<f64>,
    pub q: Buf<f64>,
    pub d: Buf<f64>,
}

pub fn bwaves(p: &CpuParams, h: &mut Heap) -> Bwaves {
    let n = p.size_or(1 << 21).max(1);
    let mut r = rng(p, 4);
    let mut v = || h.buf((0..n).map(|_| (r.below(1000) as f64) / 1000.0).collect());
    Bwaves {
        x: v(),
        r: v(),
        p: v(),
        q: v(),
        d: v(),
    }
}

/// One bwaves sweep on plain slices (the reference).
pub fn bwaves_sweep(x: &mut [f64], r: &mut [f64], p: &mut [f64], q: &mut [f64], d: &[f64]) {
    for i in 0..x.len() {
        x[i] += 0.5 * p[i];
        r[i] -= 0.5 * q[i];
        p[i] = r[i] + 0.25 * p[i];
        q[i] = d[i] * p[i];
    }
}

impl CpuKernel for Bwaves {
    fn step(&mut self, t: &mut Tracer) {
        for i in 0..self.x.len() {
            let p = t.load(0x00, &self.p, i);
            let q = t.load(0x08, &self.q, i);
            let x = t.load(0x10, &self.x, i);
            t.store(0x18, &mut self.x, i, x + 0.5 * p);
            let r = t.load(0x20, &self.r, i) - 0.5 * q;
            t.store(0x28, &mut self.r, i, r);
            let np = r + 0.25 * p;
            t.store(0x30, &mut self.p, i, np);
            let d = t.load(0x38, &self.d, i);
            t.store(0x40, &mut self.q, i, d * np);
            t.exec(0x48, 6);
        }
    }
}

/// milc-like: w = U·v for the 4 links of every site (complex 3×3 times complex 3-vector).
pub struct Milc {
    pub links: Buf<[f32; 18]>,
    pub src: Buf<[f32; 6]>,
    pub dst: Buf<[f32; 6]>,
}

pub fn milc(p: &CpuParams, h: &mut Heap) -> Milc {
    let n = p.size_or(1 << 17).max(1);
    let mut r = rng(p, 5);
    let mut f = || (r.below(2000) as f32) / 1000.0 - 1.0;
    let links = h.buf((0..4 * n).map(|_| std::array::from_fn(|_| f())).collect());
    let src = h.buf((0..n).map(|_| std::array::from_fn(|_| f())).collect());
    let dst = h.buf(vec![[0.0; 6]; n]);
    Milc { links, src, dst }
}

/// Complex 3×3 matrix times complex 3-vector (interleaved re, im).
pub fn su3_mul(u: &[f32; 18], v: &[f32; 6]) -> [f32; 6] {
    let mut w = [0f32; 6];
    for i in 0..3 {
        for k in 0..3 {
            let (a, b) = (u[6 * i + 2 * k], u[6 * i + 2 * k + 1]);
            let (c, d) = (v[2 * k], v[2 * k + 1]);
            w[2 * i] += a * c - b * d;
            w[2 * i + 1] += a * d + b * c;
        }
    }
    w
}

impl CpuKernel for Milc {
    fn step(&mut self, t: &mut Tracer) {
        let n = self.src.len();
        for s in 0..n {
            let mut acc = [0f32; 6];
            for dir in 0..4 {
                // Neighbour in direction `dir` on a lattice linearized with strides n^(dir/4).
                let nb = (s + [1, 16, 256, 4096][dir]) % n;
                let u = t.load(0x00, &self.links, 4 * s + dir);
                let v = t.load(0x08, &self.src, nb);
                let w = su3_mul(&u, &v);
                for i in 0..6 {
                    acc[i] += w[i];
                }
                t.exec(0x10, 40);
            }
            t.store(0x18, &mut self.dst, s, acc);
        }
        std::mem::swap(&mut self.src.data, &mut self.dst.data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libquantum_applies_its_gates() {
        let p = CpuParams {
            size: 1000,
            ..CpuParams::default()
        };
        let mut k = libquantum(&p, &mut Heap::new(0));
        let mut reg: Vec<u64> = k.reg.data.iter().map(|x| x.0).collect();
        let mut t = Tracer::collecting(0, u64::MAX);
        for g in 0..10 {
            k.step(&mut t);
            let (c1, c2, tq) = gate(g, 40);
            for s in &mut reg {
                if *s >> c1 & 1 == 1 && c2.is_none_or(|c| *s >> c & 1 == 1) {
                    *s ^= 1 << tq;
                }
            }
        }
        assert!(k.reg.data.iter().map(|x| x.0).eq(reg));
    }

    #[test]
    fn bwaves_and_milc_compute() {
        let p = CpuParams {
            size: 500,
            ..CpuParams::default()
        };
        let mut k = bwaves(&p, &mut Heap::new(0));
        let (mut x, mut r, mut pp, mut q) = (
            k.x.data.clone(),
            k.r.data.clone(),
            k.p.data.clone(),
            k.q.data.clone(),
        );
        k.step(&mut Tracer::collecting(0, u64::MAX));
        bwaves_sweep(&mut x, &mut r, &mut pp, &mut q, &k.d.data);
        assert_eq!((k.x.data, k.p.data, k.q.data), (x, pp, q));

        let mut m = milc(&p, &mut Heap::new(0));
        let src = m.src.data.clone();
        m.step(&mut Tracer::collecting(0, u64::MAX));
        let s = 7;
        let mut acc = [0f32; 6];
        for dir in 0..4 {
            let w = su3_mul(
                &m.links.data[4 * s + dir],
                &src[(s + [1, 16, 256, 4096][dir]) % 500],
            );
            for i in 0..6 {
                acc[i] += w[i];
            }
        }
        assert_eq!(m.src.data[s], acc);
    }
}
