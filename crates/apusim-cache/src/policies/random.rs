//! Random replacement: the victim is a uniformly random way of the set, drawn from a
//! SplitMix64 generator seeded with [`PolicyContext::seed`], so runs are reproducible.
//! Hits and fills keep no state. The classic lower bound among replacement policies
//! (drp-reuse-probability-shared-llc.txt §2.1 surveys the policies it is compared with).

use super::util::SplitMix64;
use crate::{CacheError, Policy, PolicyContext, SetView};
use apusim_trace::Access;

pub struct Random {
    rng: SplitMix64,
}

impl Policy for Random {
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        Ok(Random {
            rng: SplitMix64::from_ctx(ctx),
        })
    }
    #[inline]
    fn on_hit(&mut self, _set: usize, _way: usize, _req: &Access) {}
    #[inline]
    fn victim(&mut self, _set: usize, _req: &Access, view: &SetView<'_>) -> usize {
        self.rng.below(view.ways())
    }
    #[inline]
    fn on_fill(&mut self, _set: usize, _way: usize, _req: &Access) {}
}

#[cfg(test)]
mod tests {
    use super::super::util::test_support::*;
    use super::*;

    /// One 4-way set filled with lines 0..4, then misses 4, 5, ...: every victim is the way
    /// an independent SplitMix64 with the same seed picks (`(x * 4) >> 64`), and the
    /// evicted line is whatever that way held.
    #[test]
    fn victims_follow_the_seeded_generator() {
        for seed in [1u64, 42, 0xDEAD_BEEF] {
            let mut ctx = ctx(1, 4);
            ctx.seed = seed;
            let mut c = cache(1, 4, Random::build(&ctx).unwrap());
            let mut held: Vec<u64> = (0..4).collect();
            for l in 0..4 {
                assert_eq!(run(&mut c, &cpu_read(l)), Did::Fill(None));
            }
            let mut reference = SplitMix64::new(seed);
            let mut ways_seen = [false; 4];
            for l in 4..200 {
                let way = ((reference.next_u64() as u128 * 4) >> 64) as usize;
                ways_seen[way] = true;
                assert_eq!(
                    run(&mut c, &cpu_read(l)),
                    Did::Fill(Some(held[way])),
                    "line {l}"
                );
                held[way] = l;
                // Hits do not disturb the sequence.
                assert_eq!(run(&mut c, &cpu_read(held[(way + 1) % 4])), Did::Hit);
            }
            assert!(
                ways_seen.iter().all(|&s| s),
                "seed {seed}: some way never chosen"
            );
        }
    }

    #[test]
    fn different_seeds_give_different_victims() {
        let victims = |seed: u64| {
            let mut ctx = ctx(1, 8);
            ctx.seed = seed;
            let mut c = cache(1, 8, Random::build(&ctx).unwrap());
            (0..100)
                .map(|l| run(&mut c, &cpu_read(l)))
                .collect::<Vec<_>>()
        };
        assert_eq!(victims(3), victims(3));
        assert_ne!(victims(3), victims(4));
    }
}
