//! The sweep path: `apusim_sweep::runner::run` (resolve every point, skip done keys, run on a
//! rayon pool, record each run with its metrics into SQLite), the path `apusim sweep` takes.
//!
//! Run with `cargo bench --bench sweep`. The points are short functional runs of three small
//! `.apt` traces (the demo's two CPU cores and its GPU, 2,000 accesses each) on preset 4c1g,
//! over every policy in a grid with access limits, written once before timing:
//!
//! - `overhead/direct`: the 200 jobs of a sweep executed one after the other by
//!   `apusim_sweep::job::execute`, with no database (the simulation's own cost);
//! - `overhead/sweep-j1`: the same 200 points through the whole sweep path on one thread,
//!   into a new database; the difference per point is the sweep's overhead per job;
//! - `scaling/j1`, `scaling/j2`: 1,000 such points on one and on two threads.
//!
//! docs/PERFORMANCE.md records the figures.

use apusim_sweep::job::{self, ResolveOptions};
use apusim_sweep::{runner, Spec, Store, SweepOptions};
use apusim_trace::apt::AptWriter;
use apusim_trace::AccessSource;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use std::path::Path;
use std::time::Duration;

/// Write the demo mix's agents (2 CPU cores and the GPU), `n` accesses each.
fn traces(dir: &Path, n: usize) {
    for (i, (_, mut src)) in apusim_workloads::demo_mix(2, 1, 3).into_iter().enumerate() {
        let header = src.header().clone();
        let mut w = AptWriter::create(dir.join(format!("agent{i}.apt")), &header).unwrap();
        let mut buf = Vec::new();
        while buf.len() < n && src.next_batch(&mut buf).unwrap() {}
        buf.truncate(n);
        w.write_all(&buf).unwrap();
        w.finish().unwrap();
    }
}

/// A spec of `limits × policies` points (every registered policy) in `dir`.
fn spec(dir: &Path, points: usize) -> Spec {
    let policies: Vec<&str> = apusim_cache::policies::REGISTRY
        .iter()
        .map(|p| p.name)
        .collect();
    let n_limits = points.div_ceil(policies.len());
    let limits: Vec<String> = (0..n_limits).map(|i| (5_000 + i).to_string()).collect();
    let text = format!(
        "traces = [\"agent0.apt\", \"agent1.apt\", \"agent2.apt\"]\n[grid]\nlimit = [{}]\n\
         policy = [{}]\n",
        limits.join(", "),
        policies
            .iter()
            .map(|p| format!("\"{p}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let path = dir.join(format!("bench{points}.toml"));
    std::fs::write(&path, &text).unwrap();
    let s = Spec::load(&path).unwrap();
    assert!(s.points().unwrap().len() >= points);
    s
}

fn sweep_into_new_db(dir: &Path, spec: &Spec, threads: usize, points: usize) {
    let db = tempfile::Builder::new()
        .suffix(".sqlite")
        .tempfile_in(dir)
        .unwrap();
    let path = db.path().to_path_buf();
    drop(db);
    let mut store = Store::open(&path).unwrap();
    let opts = SweepOptions {
        threads: Some(threads),
        progress: false,
        resolve: ResolveOptions::default(),
    };
    let s = runner::run(spec, &mut store, &opts).unwrap();
    assert!(s.ran >= points && s.failed.is_empty());
    drop(store);
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", path.display()));
    }
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    traces(dir.path(), 2_000);
    let small = spec(dir.path(), 200);
    let n_small = small.points().unwrap().len();
    let mut g = c.benchmark_group("overhead");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("direct", |b| {
        let jobs = runner::resolve_all(&small, &ResolveOptions::default()).unwrap();
        b.iter(|| {
            for j in &jobs {
                job::execute(j).unwrap();
            }
        })
    });
    g.bench_function("sweep-j1", |b| {
        b.iter_batched(
            || (),
            |_| sweep_into_new_db(dir.path(), &small, 1, n_small),
            BatchSize::PerIteration,
        )
    });
    g.finish();
    let big = spec(dir.path(), 1_000);
    let n_big = big.points().unwrap().len();
    let mut g = c.benchmark_group("scaling");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for threads in [1, 2] {
        g.bench_function(format!("j{threads}"), |b| {
            b.iter(|| sweep_into_new_db(dir.path(), &big, threads, n_big))
        });
    }
    g.finish();
    eprintln!("points: overhead {n_small}, scaling {n_big}");
}

criterion_group!(sweep, benches);
criterion_main!(sweep);
