//! Cost per access against associativity, on the path `apusim oracle` and `apusim reuse` take
//! (`apusim_oracle::run`: split into line references, next uses read in step, the engine or
//! OPT, counters per agent and stream), docs/PERFORMANCE.md "Wide sets":
//! - `oracle/16way/<policy>`: a 16 MiB 16-way cache of 64-byte blocks (compact sets);
//! - `oracle/fa/<policy>`: the same 16 MiB fully associative (262,144 ways, wide sets; `lru`
//!   replays on the oracle's `QueueLru`, `opt` on `HeapOpt`, as `apusim oracle` does);
//! - `crossover/<ways>/<layout>/<policy>`: LRU and SRRIP in a 1 MiB cache of 32 to 256 ways,
//!   compact against wide sets (what `SetLayout::WIDE_ABOVE_WAYS` was chosen from).
//!
//! The input is a block trace in memory: one read per request, a block id times 64 as the
//! address, 90% drawn from a power law over 2^20 blocks (64 MiB of data) and 10% a sequential
//! scan, so the cache both hits and thrashes. OPT's next uses are computed once, outside the
//! measurement (the replay is what depends on associativity).

use apusim_cache::policies::util::SplitMix64;
use apusim_cache::policies::{self, PolicyVisitor};
use apusim_cache::{Cache, Geometry, Policy, PolicyContext, SetLayout, WritePolicy};
use apusim_oracle::{NextUses, OracleConfig, OraclePolicy, SpillOptions};
use apusim_trace::{Access, Agent, Op, Stream, VecSource};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::hint::black_box;

/// `n` block requests (see the module doc).
fn block_trace(n: usize) -> Vec<Access> {
    const BLOCKS: u64 = 1 << 20;
    let mut rng = SplitMix64::new(42);
    (0..n as u64)
        .map(|i| {
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            let block = if u < 0.1 {
                i * 7 % BLOCKS
            } else {
                let v = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                (BLOCKS as f64 * v * v * v) as u64
            };
            Access::new(Agent::cpu(0), Stream::CpuData, Op::Read, block * 64, 64)
        })
        .collect()
}

fn oracle(c: &mut Criterion) {
    let trace = block_trace(2_000_000);
    let next = NextUses::compute(
        &mut VecSource::new(trace.clone()),
        64,
        &SpillOptions::default(),
    )
    .unwrap();
    for (label, g) in [
        ("16way", Geometry::new(16 << 20, 16, 64)),
        ("fa", Geometry::fully_associative(16 << 20, 64)),
    ] {
        let cfg = OracleConfig::new(g);
        let ctx = PolicyContext::for_geometry(&g);
        let mut group = c.benchmark_group(format!("oracle/{label}"));
        group.throughput(Throughput::Elements(trace.len() as u64));
        group.sample_size(10);
        for name in ["lru", "srrip", "drrip", "opt"] {
            let policy = OraclePolicy::parse(name).unwrap();
            group.bench_function(name, |b| {
                b.iter_batched(
                    || VecSource::new(trace.clone()),
                    |mut src| {
                        let r = apusim_oracle::run(&policy, &cfg, &ctx, Some(&next), &mut src);
                        black_box(r.unwrap().total.misses())
                    },
                    BatchSize::LargeInput,
                )
            });
        }
        group.finish();
    }
}

/// Replays a trace through a cache of the visited policy with a forced set layout.
struct Crossover<'a> {
    c: &'a mut Criterion,
    name: &'static str,
    geometry: Geometry,
    layout: SetLayout,
    trace: &'a [Access],
}

impl PolicyVisitor for Crossover<'_> {
    type Output = ();
    fn visit<P: Policy>(self, _: P) {
        let (g, layout) = (self.geometry, self.layout);
        let mut ctx = PolicyContext::for_geometry(&g);
        ctx.layout = layout;
        let trace = self.trace;
        let mut group = self.c.benchmark_group(format!("crossover/{}", g.ways));
        group.throughput(Throughput::Elements(trace.len() as u64));
        group.sample_size(10);
        let fresh = || {
            let p = P::build(&ctx).unwrap();
            Cache::with_layout(g, WritePolicy::default(), false, p, layout).unwrap()
        };
        group.bench_function(format!("{layout:?}/{}", self.name), |b| {
            b.iter_batched_ref(
                fresh,
                |cache| {
                    for a in trace {
                        black_box(cache.access(a).unwrap());
                    }
                },
                BatchSize::LargeInput,
            )
        });
        group.finish();
    }
}

fn crossover(c: &mut Criterion) {
    let trace: Vec<Access> = block_trace(1_000_000)
        .into_iter()
        // Into a 16 MiB footprint, so a 1 MiB cache hits about half the time.
        .map(|a| Access {
            addr: a.addr % (16 << 20),
            ..a
        })
        .collect();
    for ways in [32u32, 64, 128, 256] {
        let geometry = Geometry::new(1 << 20, ways, 64);
        for layout in [SetLayout::Compact, SetLayout::Wide] {
            for name in ["lru", "srrip"] {
                let mut ctx = PolicyContext::for_geometry(&geometry);
                ctx.layout = layout;
                policies::build(
                    name,
                    &ctx,
                    Crossover {
                        c,
                        name,
                        geometry,
                        layout,
                        trace: &trace,
                    },
                )
                .unwrap();
            }
        }
    }
}

criterion_group!(benches, oracle, crossover);
criterion_main!(benches);
