//! mcf-like pointer chasing (stand-in for SPEC CPU 2006 429.mcf): label-correcting shortest
//! paths (SPFA) over a large random network stored as node and arc structs, as mcf's network
//! simplex walks node/arc structures with little locality.

use super::{rng, CpuKernel, CpuParams, Heap, Tracer};
use crate::simt::Buf;

const DEG: usize = 4;

pub struct Mcf {
    /// Node: (distance, first arc, in-queue flag).
    pub nodes: Buf<(i64, u32, u32)>,
    /// Arc: (head node, cost).
    pub arcs: Buf<(u32, i32)>,
    queue: Buf<u32>,
    rng: crate::rng::SplitMix64,
    pub last_source: usize,
}

pub fn new(p: &CpuParams, h: &mut Heap) -> Mcf {
    let n = p.size_or(1 << 20).max(2);
    let mut r = rng(p, 1);
    let nodes = h.buf((0..n).map(|i| (i64::MAX, (i * DEG) as u32, 0)).collect());
    let arcs = h.buf(
        (0..n * DEG)
            .map(|_| (r.below(n as u64) as u32, 1 + r.below(100) as i32))
            .collect(),
    );
    let queue = h.buf(vec![0u32; n + 1]);
    Mcf {
        nodes,
        arcs,
        queue,
        rng: r,
        last_source: 0,
    }
}

impl CpuKernel for Mcf {
    fn step(&mut self, t: &mut Tracer) {
        let n = self.nodes.len();
        for i in 0..n {
            self.nodes.data[i].0 = i64::MAX;
        }
        t.exec(0x000, 4 * n as u64 / 16);
        let s = self.rng.below(n as u64) as usize;
        self.last_source = s;
        self.nodes.data[s] = (0, self.nodes.data[s].1, 1);
        let (mut head, mut tail) = (0usize, 0usize);
        let q = n + 1;
        t.store(0x10, &mut self.queue, tail, s as u32);
        tail += 1;
        while head != tail {
            let u = t.load(0x20, &self.queue, head) as usize;
            head = (head + 1) % q;
            let (du, first, _) = t.load(0x28, &self.nodes, u);
            t.store(0x30, &mut self.nodes, u, (du, first, 0));
            for a in first as usize..first as usize + DEG {
                let (v, c) = t.load(0x40, &self.arcs, a);
                let (dv, fv, inq) = t.load(0x48, &self.nodes, v as usize);
                t.exec(0x50, 3);
                if du + (c as i64) < dv {
                    t.store(0x60, &mut self.nodes, v as usize, (du + c as i64, fv, 1));
                    if inq == 0 {
                        t.store(0x68, &mut self.queue, tail, v);
                        tail = (tail + 1) % q;
                    }
                }
            }
            t.exec(0x70, 2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_match_dijkstra() {
        let p = CpuParams {
            size: 3000,
            ..CpuParams::default()
        };
        let mut k = new(&p, &mut Heap::new(0));
        k.step(&mut Tracer::collecting(0, u64::MAX));
        let n = k.nodes.len();
        let mut d = vec![i64::MAX; n];
        d[k.last_source] = 0;
        let mut pq = std::collections::BinaryHeap::from([std::cmp::Reverse((0i64, k.last_source))]);
        while let Some(std::cmp::Reverse((du, u))) = pq.pop() {
            if du > d[u] {
                continue;
            }
            for a in u * DEG..(u + 1) * DEG {
                let (v, c) = k.arcs.data[a];
                if du + (c as i64) < d[v as usize] {
                    d[v as usize] = du + c as i64;
                    pq.push(std::cmp::Reverse((d[v as usize], v as usize)));
                }
            }
        }
        assert!(k.nodes.data.iter().map(|x| x.0).eq(d.iter().copied()));
    }
}
