//! Level-synchronous breadth-first search on a power-law graph, as Rodinia `bfs` (two kernels
//! per level: expand the frontier through the CSR edge list, then commit the next frontier):
//! adaptive-gpu-l1-bypassing.txt Table 2 *bfs*, gpu-access-criticality Table 3 *BFS* (512
//! threads per block), tap-tlp-aware-llc.txt Table 6 type E. The graph is an R-MAT-style
//! power-law graph (a few hubs with huge degree, a long tail), so neighbour gathers scatter.

use super::{GpgpuParams, Input, Step};
use crate::simt::{Alloc, Block, Buf, Kernel, Launch};

const THREADS: usize = 512;
const DEGREE: usize = 8;

pub struct Bfs {
    pub row: Buf<u32>,
    pub col: Buf<u32>,
    pub mask: Buf<u8>,
    pub updating: Buf<u8>,
    pub visited: Buf<u8>,
    pub cost: Buf<i32>,
    step: Step,
    stop: bool,
    mem: u64,
}

/// An R-MAT power-law graph with `n` nodes (rounded to a power of two) and `n·DEGREE`
/// directed edges, as CSR (row offsets, columns).
pub fn power_law_graph(n: usize, seed: u64) -> (Vec<u32>, Vec<u32>) {
    let bits = n.next_power_of_two().trailing_zeros();
    let mut inp = Input::new(seed, 6);
    // Edges as `u << 32 | v`: sorting the integers sorts by (source, destination).
    let mut edges: Vec<u64> = (0..n * DEGREE)
        .map(|_| {
            let (mut u, mut v) = (0u32, 0u32);
            for _ in 0..bits {
                // R-MAT quadrant probabilities a=0.57, b=0.19, c=0.19, d=0.05: r in 0..57
                // → (0, 0), 57..76 → (0, 1), 76..95 → (1, 0), 95..100 → (1, 1) (branch-free).
                let r = inp.below(100);
                let bu = u32::from(r >= 76);
                let bv = u32::from((57..76).contains(&r) || r >= 95);
                u = u << 1 | bu;
                v = v << 1 | bv;
            }
            // Scramble ids so hubs are spread over the arrays.
            let mix = |x: u32| (x.wrapping_mul(0x9E37_79B1) >> (32 - bits.max(1))) % n as u32;
            u64::from(mix(u)) << 32 | u64::from(mix(v))
        })
        .collect();
    edges.sort_unstable();
    let mut row = vec![0u32; n + 1];
    for &e in &edges {
        row[(e >> 32) as usize + 1] += 1;
    }
    for i in 0..n {
        row[i + 1] += row[i];
    }
    (row, edges.into_iter().map(|e| e as u32).collect())
}

/// Rodinia's own input graph (its `graphgen`, which made `graph1MW_6.txt`): every node links
/// to two to four nodes drawn uniformly, each link both ways (six neighbours on average), a
/// node's neighbours in the order its links were made. No hubs: a neighbour gather reaches a
/// random line of `visited`, which a 16 KB L1 sees again only by chance.
pub fn uniform_graph(n: usize, seed: u64) -> (Vec<u32>, Vec<u32>) {
    let mut inp = Input::new(seed, 6);
    let mut links: Vec<(u32, u32)> = Vec::with_capacity(n * 6);
    for u in 0..n as u32 {
        for _ in 0..2 + inp.below(3) {
            let v = inp.below(n as u64) as u32;
            links.push((u, v));
            links.push((v, u));
        }
    }
    // CSR by a stable counting sort on the source: each list keeps the links' order.
    let mut row = vec![0u32; n + 1];
    for &(u, _) in &links {
        row[u as usize + 1] += 1;
    }
    for i in 0..n {
        row[i + 1] += row[i];
    }
    let mut next = row.clone();
    let mut col = vec![0u32; links.len()];
    for (u, v) in links {
        col[next[u as usize] as usize] = v;
        next[u as usize] += 1;
    }
    (row, col)
}

pub fn new(p: &GpgpuParams) -> Bfs {
    let n = p.size_or(65536).max(2).next_power_of_two();
    let (row, col) = power_law_graph(n, p.seed);
    with_graph(row, col)
}

/// BFS over [`uniform_graph`] with Rodinia's default of one million nodes: adaptive-gpu-l1-
/// bypassing.txt Table 2's *bfs* ("1M").
pub fn new_uniform(p: &GpgpuParams) -> Bfs {
    let n = p.size_or(1_000_000).max(2);
    let (row, col) = uniform_graph(n, p.seed);
    with_graph(row, col)
}

/// The search from node 0 over the CSR graph (`row`, `col`).
fn with_graph(row: Vec<u32>, col: Vec<u32>) -> Bfs {
    let n = row.len() - 1;
    let mut al = Alloc::default();
    let row = al.buf(row);
    let col = al.buf(col);
    let mut m = vec![0u8; n];
    m[0] = 1;
    let mask = al.buf(m.clone());
    let updating = al.buf(vec![0u8; n]);
    let visited = al.buf(m);
    let mut c = vec![-1i32; n];
    c[0] = 0;
    let cost = al.buf(c);
    Bfs {
        row,
        col,
        mask,
        updating,
        visited,
        cost,
        step: Step::default(),
        stop: false,
        mem: al.allocated(),
    }
}

impl Kernel for Bfs {
    fn next_launch(&mut self) -> Option<Launch> {
        let n = self.cost.len();
        let i = self.step.next();
        if i.is_multiple_of(2) {
            // Host: stop when the previous level added nothing.
            if i > 0 && self.stop {
                return None;
            }
            self.stop = true;
        }
        Some(Launch {
            blocks: n.div_ceil(THREADS),
            threads: THREADS,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let n = self.cost.len();
        let b = blk.idx;
        let node = |t: crate::simt::Tid| {
            let v = b * THREADS + t.local;
            (v < n).then_some(v)
        };
        let s = &mut *self;
        if s.step.cur().is_multiple_of(2) {
            blk.phase(|w| {
                let m = w.load(0x00, &s.mask, node);
                let act = |t: crate::simt::Tid| node(t).filter(|_| m[t.lane] != 0);
                w.compute(2);
                w.store(0x08, &mut s.mask, |t| act(t).map(|v| (v, 0)));
                let start = w.load(0x10, &s.row, act);
                let end = w.load(0x18, &s.row, |t| act(t).map(|v| v + 1));
                let my = w.load(0x20, &s.cost, act);
                let longest = w
                    .tids()
                    .map(|t| (end[t.lane] - start[t.lane]) as usize)
                    .max();
                for e in 0..longest.unwrap_or(0) {
                    let has = |t: crate::simt::Tid| {
                        act(t)
                            .filter(|_| (start[t.lane] as usize + e) < end[t.lane] as usize)
                            .map(|_| start[t.lane] as usize + e)
                    };
                    let nb = w.load(0x28, &s.col, &has);
                    let live = |t: crate::simt::Tid| has(t).map(|_| nb[t.lane] as usize);
                    let vis = w.load(0x30, &s.visited, live);
                    let fresh = |t: crate::simt::Tid| live(t).filter(|_| vis[t.lane] == 0);
                    w.compute(4);
                    w.store(0x38, &mut s.cost, |t| fresh(t).map(|u| (u, my[t.lane] + 1)));
                    w.store(0x40, &mut s.updating, |t| fresh(t).map(|u| (u, 1)));
                }
            });
        } else {
            let mut any = false;
            blk.phase(|w| {
                let up = w.load(0x48, &s.updating, node);
                let act = |t: crate::simt::Tid| node(t).filter(|_| up[t.lane] != 0);
                any |= w.tids().any(|t| act(t).is_some());
                w.compute(2);
                w.store(0x50, &mut s.mask, |t| act(t).map(|v| (v, 1)));
                w.store(0x58, &mut s.visited, |t| act(t).map(|v| (v, 1)));
                w.store(0x60, &mut s.updating, |t| act(t).map(|v| (v, 0)));
            });
            if any {
                s.stop = false;
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

    /// Levels of a sequential BFS from node 0 over the kernel's graph.
    fn levels(k: &super::Bfs) -> Vec<i32> {
        let n = k.cost.len();
        let mut lvl = vec![-1i32; n];
        lvl[0] = 0;
        let mut q = std::collections::VecDeque::from([0usize]);
        while let Some(u) = q.pop_front() {
            for e in k.row.data[u]..k.row.data[u + 1] {
                let v = k.col.data[e as usize] as usize;
                if lvl[v] < 0 {
                    lvl[v] = lvl[u] + 1;
                    q.push_back(v);
                }
            }
        }
        lvl
    }

    #[test]
    fn levels_match_a_sequential_bfs() {
        let (k, _) = run(super::new(&params(4096)));
        let n = k.cost.len();
        let lvl = levels(&k);
        assert_eq!(k.cost.data, lvl);
        assert!(lvl.iter().filter(|&&l| l >= 0).count() > n / 4);
        // Power law: the largest out-degree is far above the mean.
        let max = (0..n)
            .map(|u| k.row.data[u + 1] - k.row.data[u])
            .max()
            .unwrap();
        assert!(max as usize > 10 * super::DEGREE);
    }

    #[test]
    fn rodinia_graph_has_two_to_four_links_each_way_and_the_levels_match() {
        let (k, _) = run(super::new_uniform(&params(3000)));
        let n = k.cost.len();
        assert_eq!(n, 3000, "Rodinia's size, not rounded");
        // Every node made 2–4 links and received some: at least 2 neighbours, 6 on average.
        let deg = |u: usize| (k.row.data[u + 1] - k.row.data[u]) as usize;
        assert!((0..n).all(|u| deg(u) >= 2));
        let mean = k.col.data.len() as f64 / n as f64;
        assert!((5.5..6.5).contains(&mean), "mean degree {mean}");
        // Each link both ways: u lists v as often as v lists u.
        let mut pairs: Vec<(u32, u32)> = (0..n)
            .flat_map(|u| {
                let r = k.row.data[u] as usize..k.row.data[u + 1] as usize;
                k.col.data[r].iter().map(move |&v| (u as u32, v))
            })
            .collect();
        let mut back: Vec<(u32, u32)> = pairs.iter().map(|&(u, v)| (v, u)).collect();
        pairs.sort_unstable();
        back.sort_unstable();
        assert_eq!(pairs, back);
        assert_eq!(k.cost.data, levels(&k));
        assert!(
            k.cost.data.iter().all(|&l| l >= 0),
            "a uniform graph this dense is connected"
        );
    }
}
