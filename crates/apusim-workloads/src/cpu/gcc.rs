//! gcc-like irregular compiler data structures (stand-in for SPEC CPU 2006 403.gcc, input
//! 166.i): an open-addressing identifier hash table and a binary search tree of declarations,
//! looked up and extended for every token of a generated token stream.

use super::{rng, CpuKernel, CpuParams, Heap, Tracer};
use crate::simt::Buf;

const TOKENS: usize = 4096;
const NIL: u32 = u32::MAX;

pub struct Gcc {
    /// Hash table of identifier hashes (0 = empty), twice the symbol capacity.
    pub table: Buf<u64>,
    /// Tree nodes: (key, left, right, uses).
    pub tree: Buf<(u64, u32, u32, u32)>,
    pub nodes: usize,
    pub symbols: usize,
    rng: crate::rng::SplitMix64,
}

pub fn new(p: &CpuParams, h: &mut Heap) -> Gcc {
    let s = p.size_or(1 << 17).max(16);
    Gcc {
        table: h.buf(vec![0; (2 * s).next_power_of_two()]),
        tree: h.buf(vec![(0, NIL, NIL, 0); s]),
        nodes: 0,
        symbols: s,
        rng: rng(p, 14),
    }
}

impl Gcc {
    /// Insert or find `key` in the hash table; true if it was new.
    fn intern(&mut self, t: &mut Tracer, key: u64) -> bool {
        let mask = self.table.len() - 1;
        let mut i = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) as usize & mask;
        loop {
            let k = t.load(0x00, &self.table, i);
            t.exec(0x08, 4);
            if k == key {
                return false;
            }
            if k == 0 {
                t.store(0x10, &mut self.table, i, key);
                return true;
            }
            i = (i + 1) & mask;
        }
    }
    /// Find or insert `key` in the tree and count a use.
    fn declare(&mut self, t: &mut Tracer, key: u64) {
        if self.nodes == 0 {
            t.store(0x20, &mut self.tree, 0, (key, NIL, NIL, 1));
            self.nodes = 1;
            return;
        }
        let mut cur = 0usize;
        loop {
            let (k, l, r, u) = t.load(0x28, &self.tree, cur);
            t.exec(0x30, 3);
            if k == key {
                t.store(0x38, &mut self.tree, cur, (k, l, r, u + 1));
                return;
            }
            let child = if key < k { l } else { r };
            if child == NIL {
                let n = self.nodes as u32;
                self.nodes += 1;
                t.store(0x40, &mut self.tree, n as usize, (key, NIL, NIL, 1));
                let upd = if key < k { (k, n, r, u) } else { (k, l, n, u) };
                t.store(0x48, &mut self.tree, cur, upd);
                return;
            }
            cur = child as usize;
        }
    }
}

impl CpuKernel for Gcc {
    fn step(&mut self, t: &mut Tracer) {
        for _ in 0..TOKENS {
            if self.nodes + 1 >= self.symbols {
                // A new translation unit: drop the scopes.
                self.table.data.iter_mut().for_each(|k| *k = 0);
                self.nodes = 0;
                t.exec(0x80, 64);
            }
            // Zipf-like identifier popularity: small ids are common.
            let u = self.rng.below(1 << 20);
            let id = (((u * u) >> 20) * (self.symbols as u64 / 2)) >> 20;
            let key = (id + 1).wrapping_mul(0xA076_1D64_78BD_642F) | 1;
            t.exec(0x60, 12);
            if self.intern(t, key) || self.rng.below(4) == 0 {
                self.declare(t, key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_is_ordered_and_table_holds_the_keys() {
        let p = CpuParams {
            size: 5000,
            ..CpuParams::default()
        };
        let mut k = new(&p, &mut Heap::new(0));
        k.step(&mut Tracer::collecting(0, u64::MAX));
        let mut keys = Vec::new();
        let mut stack = vec![(0u32, false)];
        while let Some((n, seen)) = stack.pop() {
            if n == NIL {
                continue;
            }
            let (key, l, r, _) = k.tree.data[n as usize];
            if seen {
                keys.push(key);
            } else {
                stack.extend([(r, false), (n, true), (l, false)]);
            }
        }
        assert_eq!(keys.len(), k.nodes);
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        for key in keys {
            assert!(k.table.data.contains(&key));
        }
    }
}
