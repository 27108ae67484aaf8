//! Cache engine throughput (docs/PERFORMANCE.md):
//! - `llc/<policy>`: a 16 MB 16-way LLC alone, fed the realistic mixed LLC stream that the demo
//!   mix's private caches let through, one `Cache::access` at a time as the hierarchy calls it
//!   (target ≥ 40 M accesses/s for srrip and drrip);
//! - `hierarchy/cpu-4c`: the whole 4-core CPU hierarchy (L1I, L1D, L2, LLC) of the 4c1g preset
//!   fed the CPU cores' raw accesses (target ≥ 10 M accesses/s);
//! - `hierarchy/4c1g-mix`: the full demo mix, GPU render caches included.

use apusim_cache::policies::{self, PolicyVisitor};
use apusim_cache::{Cache, Geometry, Policy, WritePolicy};
use apusim_sim::{Hierarchy, SystemConfig};
use apusim_trace::{Access, AccessSource, Op};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::hint::black_box;

/// Raw accesses of the demo mix, `per_agent` of each agent, interleaved round-robin.
fn demo_accesses(per_agent: usize, cpu_only: bool) -> Vec<Access> {
    let mut lanes: Vec<Vec<Access>> = apusim_workloads::demo_mix(4, 1, 1)
        .into_iter()
        .filter(|(_, s)| !cpu_only || s.header().agents[0].agent.is_cpu())
        .map(|(_, mut s)| {
            let mut v = Vec::new();
            while v.len() < per_agent && s.next_batch(&mut v).unwrap() {}
            v.truncate(per_agent);
            v
        })
        .collect();
    let mut out = Vec::with_capacity(per_agent * lanes.len());
    for i in 0..per_agent {
        for l in lanes.iter_mut() {
            if let Some(a) = l.get(i) {
                out.push(*a);
            }
        }
    }
    out
}

/// The stream that reaches the LLC: misses and dirty evictions of per-agent 256 KB caches.
fn llc_stream(n: usize) -> Vec<Access> {
    let raw = demo_accesses(n / 2, false);
    let g = Geometry::new(256 * 1024, 8, 64);
    let lru = |_: usize| {
        let ctx = apusim_cache::PolicyContext::for_geometry(&g);
        Cache::new(
            g,
            WritePolicy::default(),
            false,
            policies::lru::Lru::build(&ctx).unwrap(),
        )
        .unwrap()
    };
    let mut private: Vec<_> = (0..5).map(lru).collect();
    let mut out = Vec::with_capacity(n);
    for a in raw {
        let c = &mut private[a.agent.dense_index(4)];
        if let apusim_cache::Outcome::Miss { evicted, .. } = c.access(&a).unwrap() {
            out.push(Access {
                op: if a.op == Op::Write { Op::Read } else { a.op },
                ..a
            });
            if let Some(e) = evicted.filter(|e| e.meta.dirty()) {
                let wb = Access::new(
                    e.meta.agent,
                    e.meta.stream(),
                    Op::Writeback,
                    e.line << 6,
                    64,
                );
                out.push(wb);
            }
        }
        if out.len() >= n {
            break;
        }
    }
    out
}

struct LlcBench<'a> {
    c: &'a mut Criterion,
    name: String,
    stream: &'a [Access],
}

impl PolicyVisitor for LlcBench<'_> {
    type Output = ();
    fn visit<P: Policy>(self, _policy: P) {
        let g = Geometry::new(16 << 20, 16, 64);
        let mut ctx = apusim_cache::PolicyContext::for_geometry(&g);
        ctx.n_cpus = 4;
        let stream = self.stream;
        let mut group = self.c.benchmark_group("llc");
        group.throughput(Throughput::Elements(stream.len() as u64));
        group.sample_size(10);
        let fresh =
            || Cache::new(g, WritePolicy::default(), true, P::build(&ctx).unwrap()).unwrap();
        // One access at a time, no look-ahead: how the hierarchy that `apusim run` replays
        // traces through drives its LLC (`Cache::access`).
        group.bench_function(&self.name, |b| {
            b.iter_batched_ref(
                fresh,
                |cache| {
                    for a in stream {
                        black_box(cache.access(a).unwrap());
                    }
                },
                BatchSize::LargeInput,
            )
        });
        group.finish();
    }
}

fn llc(c: &mut Criterion) {
    let stream = llc_stream(4_000_000);
    let mut ctx = apusim_cache::PolicyContext::for_geometry(&Geometry::new(16 << 20, 16, 64));
    ctx.n_cpus = 4;
    for name in ["srrip", "drrip", "lru", "ship-hybrid", "drp-baseline"] {
        policies::build(
            name,
            &ctx,
            LlcBench {
                c,
                name: name.into(),
                stream: &stream,
            },
        )
        .unwrap();
    }
}

struct HierBench<'a> {
    c: &'a mut Criterion,
    cfg: &'a SystemConfig,
}

impl PolicyVisitor for HierBench<'_> {
    type Output = ();
    fn visit<P: Policy>(self, _policy: P) {
        let ctx = apusim_sim::run::policy_context(self.cfg).unwrap();
        let mut group = self.c.benchmark_group("hierarchy");
        group.sample_size(10);
        for (name, stream) in [
            ("cpu-4c", demo_accesses(1_000_000, true)),
            ("4c1g-mix", demo_accesses(800_000, false)),
        ] {
            group.throughput(Throughput::Elements(stream.len() as u64));
            group.bench_function(name, |b| {
                b.iter_batched_ref(
                    || Hierarchy::new(self.cfg, P::build(&ctx).unwrap()).unwrap(),
                    |h| {
                        for a in &stream {
                            h.access(a).unwrap();
                        }
                    },
                    BatchSize::LargeInput,
                )
            });
        }
        group.finish();
    }
}

fn hierarchy(c: &mut Criterion) {
    let cfg = SystemConfig::preset("4c1g").unwrap();
    let ctx = apusim_sim::run::policy_context(&cfg).unwrap();
    // The preset's own policy (drp-baseline): the registry adds no wrapper to it.
    policies::build(&cfg.llc.policy, &ctx, HierBench { c, cfg: &cfg }).unwrap();
}

criterion_group!(benches, llc, hierarchy);
criterion_main!(benches);
