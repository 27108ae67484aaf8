//! Single-bit not-recently-used (NRU) replacement, exactly as drp-reuse-probability-shared-llc.txt
//! §4.1 ("NRU") defines it.
//!
//! Each line has one state bit. An access to a line (a hit, or the fill that installs it)
//! sets its bit; if that leaves every bit of the set at one, every bit except the accessed
//! way's is reset. The victim is the lowest way whose bit is reset.
//!
//! Writes: the paper's NRU uses the heterogeneous baseline's write rules ("the write misses
//! implement the same bypass policy as the baseline; the write misses that are allocated are
//! treated similarly as read misses; the write hits do not update replacement state"). Those
//! rules are exactly [`super::hetero_writes::HeteroWrites`], which the registry wraps around this
//! policy when `gpu_write_rules` is on, so the paper's NRU is `nru` with `gpu_write_rules`.
//! With the rules off, NRU is the classic single-bit NRU: every hit, read or write, counts
//! as an access (nothing in the paper defines NRU for a cache without them, and the classic
//! policy does not distinguish writes).

use crate::wayset::WayBits;
use crate::{CacheError, Policy, PolicyContext, SetView};
use apusim_trace::Access;

pub struct Nru {
    ways: usize,
    bits: Vec<u8>,
    /// Wide sets ([`crate::SetLayout`]): the ways whose bit is reset and the number of set
    /// bits of every set, so neither the victim nor the all-ones test scans the set (the
    /// reset itself rewrites the set, once per `ways - 1` first touches at least).
    wide: Option<Box<NruWide>>,
}

struct NruWide {
    zeros: WayBits,
    /// Per set, [`WayBits::stride`] words: the ways whose bit is 0.
    words: Vec<u64>,
    ones: Vec<u32>,
}

impl NruWide {
    #[inline]
    fn zeros_of(&mut self, set: usize) -> &mut [u64] {
        let s = self.zeros.stride();
        &mut self.words[set * s..(set + 1) * s]
    }
}

impl Nru {
    /// The NRU bit of a line (1: recently used), for tests and reports.
    pub fn bit(&self, set: usize, way: usize) -> u8 {
        self.bits[set * self.ways + way]
    }

    #[inline]
    fn touch(&mut self, set: usize, way: usize) {
        let base = set * self.ways;
        if let Some(w) = self.wide.as_deref_mut() {
            if self.bits[base + way] == 0 {
                self.bits[base + way] = 1;
                let zeros = w.zeros;
                zeros.remove(w.zeros_of(set), way);
                w.ones[set] += 1;
            }
            if w.ones[set] as usize == self.ways {
                self.bits[base..base + self.ways].fill(0);
                self.bits[base + way] = 1;
                let zeros = w.zeros;
                let z = w.zeros_of(set);
                zeros.fill(z);
                zeros.remove(z, way);
                w.ones[set] = 1;
            }
            return;
        }
        let s = &mut self.bits[base..base + self.ways];
        s[way] = 1;
        // Bits are 0 or 1: AND them without short-circuiting, so the check vectorises.
        if s.iter().fold(1u8, |all, &b| all & b) != 0 {
            s.fill(0);
            s[way] = 1;
        }
    }
}

impl Policy for Nru {
    #[inline]
    fn prefetch_set(&self, set: usize) {
        super::util::prefetch(&self.bits, set * self.ways);
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        let wide = ctx.wide_sets().then(|| {
            let zeros = WayBits::new(ctx.ways);
            let mut words = vec![0; ctx.sets * zeros.stride()];
            for set in words.chunks_exact_mut(zeros.stride()) {
                zeros.fill(set);
            }
            Box::new(NruWide {
                zeros,
                words,
                ones: vec![0; ctx.sets],
            })
        });
        Ok(Nru {
            ways: ctx.ways,
            bits: vec![0; ctx.sets * ctx.ways],
            wide,
        })
    }
    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, _req: &Access) {
        self.touch(set, way);
    }
    #[inline]
    fn victim(&mut self, set: usize, _req: &Access, _view: &SetView<'_>) -> usize {
        if let Some(w) = self.wide.as_deref_mut() {
            let zeros = w.zeros;
            return zeros.first(w.zeros_of(set)).unwrap_or(0);
        }
        let base = set * self.ways;
        // After every access at least one bit is reset (for more than one way), so the
        // fallback only serves one-way sets.
        self.bits[base..base + self.ways]
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(0)
    }
    #[inline]
    fn on_fill(&mut self, set: usize, way: usize, _req: &Access) {
        self.touch(set, way);
    }
}

#[cfg(test)]
mod tests {
    use super::super::hetero_writes::HeteroWrites;
    use super::super::util::test_support::*;
    use super::*;
    use apusim_trace::{Agent, Op, Stream};

    fn bits<P: AsNru>(c: &crate::Cache<P>) -> Vec<u8> {
        (0..4).map(|w| c.policy().nru().bit(0, w)).collect()
    }
    trait AsNru: Policy {
        fn nru(&self) -> &Nru;
    }
    impl AsNru for Nru {
        fn nru(&self) -> &Nru {
            self
        }
    }
    impl AsNru for HeteroWrites<Nru> {
        fn nru(&self) -> &Nru {
            self.inner()
        }
    }

    /// One 4-way set. Fills A B C D set bits one by one; D's fill makes them all one, so all
    /// but way 3 reset. Then: hit A; E evicts the lowest reset way (B, way 1); F evicts C
    /// (way 2) and the bits all become one again, so all but way 2 reset; G evicts A (way 0).
    #[test]
    fn replays_hand_worked_sequence() {
        let mut c = cache_of::<Nru>(1, 4);
        let (a, b, cc, d, e, f, g) = (0, 1, 2, 3, 4, 5, 6);
        let steps: [(u64, Did, [u8; 4]); 8] = [
            (a, Did::Fill(None), [1, 0, 0, 0]),
            (b, Did::Fill(None), [1, 1, 0, 0]),
            (cc, Did::Fill(None), [1, 1, 1, 0]),
            (d, Did::Fill(None), [0, 0, 0, 1]),
            (a, Did::Hit, [1, 0, 0, 1]),
            (e, Did::Fill(Some(b)), [1, 1, 0, 1]),
            (f, Did::Fill(Some(cc)), [0, 0, 1, 0]),
            (g, Did::Fill(Some(a)), [1, 0, 1, 0]),
        ];
        for (i, (line, did, want)) in steps.iter().enumerate() {
            assert_eq!(run(&mut c, &cpu_read(*line)), *did, "step {i}");
            assert_eq!(bits(&c), want.to_vec(), "step {i}");
        }
        // A hit on a way whose bit is already set changes nothing.
        assert_eq!(run(&mut c, &cpu_read(g)), Did::Hit);
        assert_eq!(bits(&c), vec![1, 0, 1, 0]);
    }

    #[test]
    fn write_hits_count_without_the_write_rules_and_not_with_them() {
        let write = |l: u64| Access::new(Agent::cpu(0), Stream::CpuData, Op::Write, l * LINE, 8);
        let mut plain = cache_of::<Nru>(1, 4);
        let mut rules = cache_of::<HeteroWrites<Nru>>(1, 4);
        for l in 0..3 {
            run(&mut plain, &cpu_read(l));
            run(&mut rules, &cpu_read(l));
        }
        run(&mut plain, &cpu_read(3));
        run(&mut rules, &cpu_read(3));
        assert_eq!(bits(&plain), vec![0, 0, 0, 1]);
        assert_eq!(run(&mut plain, &write(1)), Did::Hit);
        assert_eq!(run(&mut rules, &write(1)), Did::Hit);
        assert_eq!(bits(&plain), vec![0, 1, 0, 1]);
        assert_eq!(
            bits(&rules),
            vec![0, 0, 0, 1],
            "write hit updated NRU state"
        );
        // So the next victim differs: way 0 either way, then way 1 only under the rules.
        assert_eq!(run(&mut plain, &cpu_read(4)), Did::Fill(Some(0)));
        assert_eq!(run(&mut rules, &cpu_read(4)), Did::Fill(Some(0)));
        assert_eq!(run(&mut plain, &cpu_read(5)), Did::Fill(Some(2)));
        assert_eq!(run(&mut rules, &cpu_read(5)), Did::Fill(Some(1)));
        // Allocated GPU color write misses are treated like read misses.
        let mut r2 = cache_of::<HeteroWrites<Nru>>(1, 4);
        assert_eq!(
            run(&mut r2, &gpu(Stream::Color, Op::Write, 0)),
            Did::Fill(None)
        );
        assert_eq!(bits(&r2), vec![1, 0, 0, 0]);
    }

    #[test]
    fn one_way_sets_work() {
        let mut c = cache_of::<Nru>(2, 1);
        for l in 0..10 {
            assert!(matches!(run(&mut c, &cpu_read(l)), Did::Fill(_)));
            assert_eq!(c.policy().bit(c.set_of(l), 0), 1);
        }
    }
}
