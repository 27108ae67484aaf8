//! Oracle throughput (docs/oracles.md, to be merged into docs/PERFORMANCE.md), on a mixed
//! CPU + rendering-GPU LLC stream of 4 M line references (see [`llc_stream`]):
//! - `oracle/next-uses`: the streaming backward pass alone (spill, backward walk, spill);
//! - `oracle/opt-16m16w`: Belady OPT on a 16 MB 16-way LLC, next uses precomputed (the replay:
//!   reading the next-use file in step and simulating);
//! - `oracle/opt-16m16w-total`: next-use pass plus OPT, what one `--policy opt` run costs
//!   (target: ≥ 15 M references per second per core, docs/PERFORMANCE.md);
//! - `oracle/opt-bypass-16m16w`, `oracle/srrip-bypass-16m16w`: the bypass variants;
//! - `oracle/opt-fa-16m`: fully-associative 16 MB (262,144 ways), the heap-based OPT.
//!
//! Runs with `cargo bench -p apusim-oracle --bench oracle` (the crate's manifest points here).
//! Before criterion's wall-clock runs it prints every figure per CPU-second (thread on-CPU
//! time, best of 3), the per-core rate on a shared machine; `ORACLE_CPU_ONLY=LABEL` (e.g.
//! `opt-16m16w-total`) runs only that one, for profiling.

use apusim_cache::{Geometry, PolicyContext};
use apusim_oracle::{NextUses, OracleConfig, OraclePolicy, SpillOptions};
use apusim_trace::{Access, Agent, Op, Stream, VecSource};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::hint::black_box;

/// SplitMix64, for a self-contained, reproducible stream.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A mixed LLC stream of `n` line references, shaped like what private caches let through in
/// a 4C1G system: four CPU cores (a hot 1 MB set each, a 64 MB cold region, 10 % writebacks)
/// and a rendering GPU (720p color writes and depth read/write sweeps, texture reads with
/// spatial locality over 32 MB, dynamic-texture reads of the color surface). Self-contained so
/// that the bench does not depend on the workload generators.
fn llc_stream(n: usize) -> Vec<Access> {
    const SURFACE: u64 = 1280 * 720 * 4 / 64; // lines of one 720p 32-bit surface
    let mut rng = Rng(1);
    let mut out = Vec::with_capacity(n);
    let (mut color, mut depth) = (0u64, 0u64);
    let mut tex_run = (0u64, 0u64); // (next line, remaining lines of the run)
    while out.len() < n {
        let pick = rng.below(100);
        let a = if pick < 40 {
            let core = rng.below(4) as u8;
            let base = (core as u64 + 1) << 24; // per-core regions, line numbers
            let line = if rng.below(100) < 70 {
                base + rng.below(16 << 10)
            } else {
                base + rng.below(1 << 20)
            };
            let op = if rng.below(10) == 0 {
                Op::Writeback
            } else {
                Op::Read
            };
            Access::new(Agent::cpu(core), Stream::CpuData, op, line << 6, 64)
                .with_pc(0x400000 + rng.below(512) * 4)
        } else if pick < 55 {
            color = (color + 1) % SURFACE;
            Access::new(
                Agent::GPU,
                Stream::Color,
                Op::Write,
                (1 << 32) + (color << 6),
                64,
            )
        } else if pick < 67 {
            depth = (depth + 1) % SURFACE;
            let op = if rng.below(2) == 0 {
                Op::Read
            } else {
                Op::Write
            };
            Access::new(Agent::GPU, Stream::Depth, op, (2 << 32) + (depth << 6), 64)
        } else if pick < 92 {
            if tex_run.1 == 0 {
                tex_run = (rng.below(512 << 10), 1 + rng.below(16));
            }
            tex_run.1 -= 1;
            tex_run.0 += 1;
            Access::new(
                Agent::GPU,
                Stream::StaticTexture,
                Op::Read,
                (3 << 32) + (tex_run.0 << 6),
                64,
            )
        } else {
            let line = color.saturating_sub(rng.below(SURFACE / 2));
            Access::new(
                Agent::GPU,
                Stream::DynamicTexture,
                Op::Read,
                (1 << 32) + (line << 6),
                64,
            )
        };
        out.push(a);
    }
    out
}

/// On-CPU time of the calling thread (Linux `schedstat`, nanoseconds), so that throughput can
/// be stated per core even on a machine shared with other jobs; `None` elsewhere.
fn thread_cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Best of three runs of `run` (each on a fresh `setup()`, not timed), in million references
/// per CPU-second.
/// `ORACLE_CPU_ONLY=LABEL` runs only that CPU-time measurement (for profiling with perf or
/// callgrind); unset, all of them.
fn cpu_rate<T>(label: &str, refs: u64, mut setup: impl FnMut() -> T, mut run: impl FnMut(T)) {
    if std::env::var("ORACLE_CPU_ONLY").is_ok_and(|only| only != label) {
        return;
    }
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let input = setup();
        let Some(t0) = thread_cpu_ns() else {
            return;
        };
        run(input);
        let dt = thread_cpu_ns().unwrap_or(t0).saturating_sub(t0) as f64 * 1e-9;
        best = best.min(dt.max(1e-9));
    }
    eprintln!(
        "cpu-time  oracle/{label:<24} {:7.2} M references per CPU-second",
        refs as f64 / best / 1e6
    );
}

fn oracle(c: &mut Criterion) {
    let stream = llc_stream(4_000_000);
    let llc = Geometry::new(16 << 20, 16, 64);
    let fa = Geometry::fully_associative(16 << 20, 64);
    let spill = SpillOptions::default();
    let source = || VecSource::new(stream.clone());
    let next_uses = NextUses::compute(&mut source(), 64, &spill).unwrap();
    eprintln!(
        "LLC stream: {} references, {} distinct lines",
        next_uses.counts().references,
        next_uses.counts().distinct_lines
    );
    let mut ctx = PolicyContext::for_geometry(&llc);
    ctx.n_cpus = 4;
    let refs = next_uses.counts().references;
    cpu_rate("next-uses", refs, source, |mut s| {
        black_box(NextUses::compute(&mut s, 64, &spill).unwrap());
    });
    for (label, policy, g) in [
        ("opt-16m16w", "opt", llc),
        ("opt-bypass-16m16w", "opt-bypass", llc),
        ("srrip-bypass-16m16w", "srrip-bypass", llc),
        ("srrip-16m16w", "srrip", llc),
        ("opt-fa-16m", "opt", fa),
    ] {
        let p: OraclePolicy = policy.parse().unwrap();
        let cfg = OracleConfig::new(g);
        cpu_rate(label, refs, source, |mut s| {
            black_box(apusim_oracle::run(&p, &cfg, &ctx, Some(&next_uses), &mut s).unwrap());
        });
    }

    let opt = OraclePolicy::Opt { bypass: false };
    let opt_cfg = OracleConfig::new(llc);
    cpu_rate(
        "opt-16m16w-total",
        refs,
        || (source(), source()),
        |(mut s1, mut s2)| {
            let nu = NextUses::compute(&mut s1, 64, &spill).unwrap();
            black_box(apusim_oracle::run(&opt, &opt_cfg, &ctx, Some(&nu), &mut s2).unwrap());
        },
    );

    let mut group = c.benchmark_group("oracle");
    group.throughput(Throughput::Elements(stream.len() as u64));
    group.sample_size(10);
    group.bench_function("next-uses", |b| {
        b.iter_batched(
            source,
            |mut s| black_box(NextUses::compute(&mut s, 64, &spill).unwrap()),
            BatchSize::LargeInput,
        )
    });
    for (label, policy, g) in [
        ("opt-16m16w", "opt", llc),
        ("opt-bypass-16m16w", "opt-bypass", llc),
        ("srrip-bypass-16m16w", "srrip-bypass", llc),
        ("opt-fa-16m", "opt", fa),
    ] {
        let p: OraclePolicy = policy.parse().unwrap();
        let cfg = OracleConfig::new(g);
        group.bench_function(label, |b| {
            b.iter_batched(
                source,
                |mut s| {
                    black_box(apusim_oracle::run(&p, &cfg, &ctx, Some(&next_uses), &mut s).unwrap())
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.bench_function("opt-16m16w-total", |b| {
        b.iter_batched(
            || (source(), source()),
            |(mut s1, mut s2)| {
                let nu = NextUses::compute(&mut s1, 64, &spill).unwrap();
                black_box(apusim_oracle::run(&opt, &opt_cfg, &ctx, Some(&nu), &mut s2).unwrap())
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, oracle);
criterion_main!(benches);
