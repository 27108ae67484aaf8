//! Compact and wide sets give the same results: every registered policy replays random streams
//! (reads, writes, writebacks, prefetches of CPU cores and the GPU, with back-invalidations)
//! through a cache of compact sets and through one of wide sets, and every outcome — hit,
//! bypass, fill, the evicted line and its metadata — must be the same, at associativities from
//! direct-mapped to fully associative.

use super::util::{RrpvTable, SplitMix64};
use super::{build, PolicyVisitor, REGISTRY};
use crate::{Cache, Geometry, Outcome, Policy, PolicyContext, SetLayout, WritePolicy};
use apusim_trace::{Access, Agent, Op, Stream};
use proptest::prelude::*;

/// One step of a replay: an access, or the back-invalidation of a line.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Step {
    Access(Access),
    Invalidate(u64),
}

/// What one step did, comparable across layouts.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Did {
    Access(Result<Outcome, crate::CacheError>),
    Invalidate(Option<crate::LineMeta>),
}

/// Replays `steps` through a cache of `geometry` with the visited policy, sets laid out as
/// `layout`; returns every step's result, the counters and the policy's statistics.
struct Replay<'a> {
    geometry: Geometry,
    layout: SetLayout,
    steps: &'a [Step],
}

type Trace = (Vec<Did>, crate::CacheCounters, Vec<crate::PolicyStat>);

impl PolicyVisitor for Replay<'_> {
    type Output = Trace;
    fn visit<P: Policy>(self, p: P) -> Trace {
        let mut c =
            Cache::with_layout(self.geometry, WritePolicy::default(), false, p, self.layout)
                .unwrap();
        assert_eq!(c.is_wide(), self.layout == SetLayout::Wide);
        let did = replay(&mut c, self.steps);
        (did, *c.counters(), c.policy().stats())
    }
}

/// What each of `steps` did to `c`.
pub(crate) fn replay<P: Policy>(c: &mut Cache<P>, steps: &[Step]) -> Vec<Did> {
    steps
        .iter()
        .map(|s| match s {
            Step::Access(a) => Did::Access(c.access(a)),
            Step::Invalidate(addr) => Did::Invalidate(c.invalidate(*addr)),
        })
        .collect()
}

/// A random stream over `lines` distinct lines (about 1.5 times the cache, so that sets fill,
/// evict and hit), with one back-invalidation in `invalidate_one_in` steps.
pub(crate) fn steps(seed: u64, n: usize, lines: u64, invalidate_one_in: u64) -> Vec<Step> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            let r = rng.next_u64();
            // Half the references go to a hot eighth of the lines, so lines get reused.
            let line = if r & 1 == 0 {
                rng.next_u64() % lines.div_ceil(8)
            } else {
                rng.next_u64() % lines
            };
            let addr = line * 64 + (r >> 8) % 64;
            if (r >> 16).is_multiple_of(invalidate_one_in) {
                return Step::Invalidate(addr);
            }
            let agent = match (r >> 24) % 6 {
                5 => Agent::GPU,
                c => Agent::cpu(c as u8),
            };
            let stream = if agent.is_cpu() {
                [Stream::CpuData, Stream::CpuInstr][(r >> 32) as usize % 2]
            } else {
                Stream::ALL[(r >> 32) as usize % Stream::COUNT]
            };
            let op = Op::ALL[(r >> 40) as usize % Op::COUNT];
            Step::Access(Access::new(agent, stream, op, addr, 8).with_pc((r >> 48) % 64 * 4))
        })
        .collect()
}

fn compare_every_policy(sets: u64, ways: u32, seed: u64, n: usize, rules: bool) {
    let geometry = Geometry::new(sets * ways as u64 * 64, ways, 64);
    let stream = steps(seed, n, sets * ways as u64 * 3 / 2 + 2, 97);
    for info in REGISTRY.iter() {
        let run = |layout| {
            let mut ctx = PolicyContext::for_geometry(&geometry);
            ctx.n_cpus = 5;
            ctx.seed = seed;
            ctx.gpu_write_rules = rules;
            ctx.layout = layout;
            build(
                info.name,
                &ctx,
                Replay {
                    geometry,
                    layout,
                    steps: &stream,
                },
            )
        };
        // A policy that refuses the geometry (plru above 64 ways) refuses it in both layouts.
        let (compact, wide) = match (run(SetLayout::Compact), run(SetLayout::Wide)) {
            (Ok(c), Ok(w)) => (c, w),
            (Err(c), Err(w)) if c == w => continue,
            (c, w) => panic!("{}: compact {:?}, wide {:?}", info.name, c.err(), w.err()),
        };
        if let Some(i) = (0..stream.len()).find(|&i| compact.0[i] != wide.0[i]) {
            panic!(
                "{} ({sets} x {ways}, seed {seed}, rules {rules}): step {i} {:?}: compact {:?}, wide {:?}",
                info.name, stream[i], compact.0[i], wide.0[i]
            );
        }
        assert_eq!(compact.1, wide.1, "{} counters", info.name);
        assert_eq!(compact.2, wide.2, "{} statistics", info.name);
        assert!(
            compact.1.evictions > 0,
            "{}: the stream must evict",
            info.name
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    #[test]
    fn direct_mapped_and_two_way(seed in any::<u64>(), rules in any::<bool>()) {
        compare_every_policy(64, 1, seed, 3000, rules);
        compare_every_policy(64, 2, seed, 3000, rules);
    }

    #[test]
    fn sixteen_and_sixty_four_ways(seed in any::<u64>(), rules in any::<bool>()) {
        compare_every_policy(32, 16, seed, 5000, rules);
        compare_every_policy(4, 64, seed, 5000, rules);
    }

    #[test]
    fn a_thousand_ways(seed in any::<u64>(), rules in any::<bool>()) {
        compare_every_policy(2, 1024, seed, 12_000, rules);
        // A set count that is not a power of two (sets by modulo).
        compare_every_policy(3, 1000, seed, 12_000, rules);
    }

    #[test]
    fn fully_associative(seed in any::<u64>(), rules in any::<bool>()) {
        compare_every_policy(1, 4096, seed, 30_000, rules);
    }

    /// The bucketed RRPVs equal the flat ones after every operation, for 2- and 4-bit RRPVs.
    #[test]
    fn rrpv_buckets_match_the_flat_table(
        ways in 1usize..300,
        wide_bits in any::<bool>(),
        ops in prop::collection::vec((0u8..3, 0usize..4, 0usize..300, 0u8..16), 1..400),
    ) {
        let distant = if wide_bits { 15 } else { 3 };
        let mut ctx = PolicyContext::for_geometry(&Geometry::new(4 * ways as u64 * 64, ways as u32, 64));
        ctx.layout = SetLayout::Compact;
        let mut flat = RrpvTable::with_distant(&ctx, distant);
        ctx.layout = SetLayout::Wide;
        let mut buckets = RrpvTable::with_distant(&ctx, distant);
        prop_assert!(buckets.is_wide() && !flat.is_wide());
        for (op, set, way, v) in ops {
            let way = way % ways;
            if op == 0 {
                prop_assert_eq!(flat.victim(set), buckets.victim(set));
            } else {
                flat.set(set, way, v.min(distant));
                buckets.set(set, way, v.min(distant));
            }
            for w in 0..ways {
                prop_assert_eq!(flat.get(set, w), buckets.get(set, w));
            }
        }
    }
}

/// The representation follows the associativity unless a test forces it.
#[test]
fn auto_layout_goes_wide_above_the_crossover() {
    let g = |ways: u32| Geometry::new(16 * ways as u64 * 64, ways, 64);
    for (ways, wide) in [
        (16, false),
        (SetLayout::WIDE_ABOVE_WAYS as u32, false),
        (SetLayout::WIDE_ABOVE_WAYS as u32 * 2, true),
    ] {
        let ctx = PolicyContext::for_geometry(&g(ways));
        assert_eq!(ctx.wide_sets(), wide, "{ways} ways");
        let lru = super::lru::Lru::build(&ctx).unwrap();
        assert_eq!(lru.is_wide(), wide);
        let c = Cache::new(g(ways), WritePolicy::default(), false, lru).unwrap();
        assert_eq!(c.is_wide(), wide);
        assert_eq!(RrpvTable::new(&ctx).is_wide(), wide);
    }
}
