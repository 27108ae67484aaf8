//! Tree pseudo-LRU: a binary tree of `ways - 1` bits per set points at the pseudo-least-recent
//! way (adaptive-gpu-l1-bypassing.txt §4.1: "All caches use a default Pseudo-LRU replacement
//! policy"; Table 1's 8-way L1s and 16-way L2/L3).
//!
//! Node `n` (1-based heap order: root 1, children `2n` and `2n + 1`) holds one bit; 0 means
//! "the pseudo-LRU way is in the left (lower) half", 1 "in the right half". An access to a way
//! sets every node on its path to point away from it; the victim is found by following the
//! bits from the root. The bits of one set live in one `u64`, so at most 64 ways. A way count
//! that is not a power of two gets the tree of the next power of two, and the victim walk never
//! enters a subtree holding only nonexistent ways (it takes the other child).

use crate::{CacheError, Policy, PolicyContext, SetView};
use apusim_trace::Access;

pub struct Plru {
    /// log2 of the ways rounded up to a power of two: the depth of the tree.
    levels: u32,
    ways: usize,
    /// Tree bits of each set; bit `n` is node `n` (bit 0 unused).
    tree: Vec<u64>,
}

impl Plru {
    /// Make `way` of `set` the most recently used: every node on its path points away from it.
    #[inline]
    pub fn touch(&mut self, set: usize, way: usize) {
        let mut bits = self.tree[set];
        let mut node = 1usize;
        for l in (0..self.levels).rev() {
            let right = (way >> l) & 1;
            // Point at the other half.
            if right == 1 {
                bits &= !(1u64 << node);
            } else {
                bits |= 1u64 << node;
            }
            node = 2 * node + right;
        }
        self.tree[set] = bits;
    }

    /// The way the tree of `set` points at.
    #[inline]
    pub fn pseudo_lru(&self, set: usize) -> usize {
        let bits = self.tree[set];
        let mut node = 1usize;
        let mut way = 0usize;
        for l in (0..self.levels).rev() {
            let mut b = ((bits >> node) & 1) as usize;
            // The right subtree starts at way (2 * way + 1) << l: skip it if it is all beyond
            // the real ways.
            if b == 1 && (2 * way + 1) << l >= self.ways {
                b = 0;
            }
            way = 2 * way + b;
            node = 2 * node + b;
        }
        way
    }
}

impl Policy for Plru {
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        if ctx.ways == 0 || ctx.ways > 64 {
            return Err(CacheError::Config(format!(
                "plru handles 1 to 64 ways, not {}",
                ctx.ways
            )));
        }
        Ok(Plru {
            levels: ctx.ways.next_power_of_two().trailing_zeros(),
            ways: ctx.ways,
            tree: vec![0; ctx.sets],
        })
    }
    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, _req: &Access) {
        self.touch(set, way);
    }
    #[inline]
    fn victim(&mut self, set: usize, _req: &Access, _view: &SetView<'_>) -> usize {
        self.pseudo_lru(set)
    }
    #[inline]
    fn on_fill(&mut self, set: usize, way: usize, _req: &Access) {
        self.touch(set, way);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cache, Geometry, Outcome, WritePolicy};
    use apusim_trace::{Agent, Op, Stream};

    fn plru(ways: usize) -> Plru {
        let g = Geometry::new(ways as u64 * 64, ways as u32, 64);
        Plru::build(&PolicyContext::for_geometry(&g)).unwrap()
    }

    #[test]
    fn tree_points_away_from_the_last_touched_ways() {
        let mut p = plru(8);
        // Fresh tree points at way 0; touching 0 sends it to the right half (way 4).
        assert_eq!(p.pseudo_lru(0), 0);
        p.touch(0, 0);
        assert_eq!(p.pseudo_lru(0), 4);
        p.touch(0, 4);
        assert_eq!(p.pseudo_lru(0), 2);
        p.touch(0, 2);
        assert_eq!(p.pseudo_lru(0), 6);
        p.touch(0, 6);
        assert_eq!(p.pseudo_lru(0), 1);
        // Touching all 8 ways in order 0..8 leaves way 0 as the pseudo-LRU way (as true LRU).
        let mut q = plru(8);
        for w in 0..8 {
            q.touch(0, w);
        }
        assert_eq!(q.pseudo_lru(0), 0);
    }

    #[test]
    fn a_re_touched_line_survives_a_scan_of_new_lines() {
        // 4-way set: A B C D, touch A, then E must not evict A (it evicts C: tree points to
        // the half without A, then to the less recent of C and D).
        let g = Geometry::new(4 * 64, 4, 64);
        let mut c = Cache::new(g, WritePolicy::default(), false, plru(4)).unwrap();
        let rd = |l: u64| Access::new(Agent::GPU, Stream::ShaderData, Op::Read, l * 64, 4);
        for l in [0, 1, 2, 3, 0] {
            c.access(&rd(l)).unwrap();
        }
        match c.access(&rd(4)).unwrap() {
            Outcome::Miss {
                evicted: Some(e), ..
            } => assert_eq!(e.line, 2),
            o => panic!("{o:?}"),
        }
        assert!(c.probe(0));
    }

    #[test]
    fn non_power_of_two_ways_never_pick_a_missing_way() {
        for ways in [3usize, 5, 6, 7] {
            let mut p = plru(ways);
            let mut seen = vec![false; ways];
            // Filling the victim each time (a streaming scan) cycles through every way.
            for _ in 0..4 * ways {
                let v = p.pseudo_lru(0);
                assert!(v < ways, "{ways} ways: victim {v}");
                seen[v] = true;
                p.touch(0, v);
            }
            assert!(seen.iter().all(|s| *s), "{ways} ways: {seen:?}");
        }
        let g = Geometry::new(128 * 64, 128, 64);
        assert!(Plru::build(&PolicyContext::for_geometry(&g)).is_err());
    }
}
