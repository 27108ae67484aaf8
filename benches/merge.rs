//! `apusim results merge`: `apusim_sweep::merge::merge` folding the shard databases of a
//! SLURM sweep into one.
//!
//! Run with `cargo bench --bench merge`. Before timing, 100 shards are written through
//! `Store::record` (as a sweep's tasks write them): 20 runs of 500 metric rows each, 10,000
//! metric rows per shard, a million in all, every run under its own key. Then:
//!
//! - `shards/100x10000-into-new`: merge the 100 shards into a new database (every shard
//!   checked whole, then copied in one transaction);
//! - `shards/100x10000-again`: merge them again into the merged database (every shard checked,
//!   nothing added): the cost of an idempotent re-merge.
//!
//! docs/PERFORMANCE.md records the figures; the target is under 10 s for the first.

use apusim_sweep::{merge, Metric, RunRecord, Store};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

const SHARDS: usize = 100;
const RUNS: usize = 20;
const ROWS: usize = 500;

/// Write the shards into `dir`.
fn shards(dir: &Path) -> Vec<PathBuf> {
    let levels = ["l1d", "l2", "llc", "dram"];
    (0..SHARDS)
        .map(|s| {
            let path = dir.join(format!("shard-{s}.sqlite"));
            let mut store = Store::open(&path).unwrap();
            for r in 0..RUNS {
                let n = (s * RUNS + r) as u64;
                let key = format!("{:032x}", apusim_sweep::key::fnv1a128(&n.to_le_bytes()));
                let record = RunRecord::new(
                    key,
                    Some("bench".into()),
                    "sweep",
                    "functional",
                    serde_json::json!({"policy": "lru", "limit": n}),
                    serde_json::json!({"name": "4c1g"}),
                    vec![format!("job:{n}")],
                    (UNIX_EPOCH, UNIX_EPOCH + Duration::from_secs(1)),
                    Ok(()),
                );
                let metrics: Vec<Metric> = (0..ROWS)
                    .map(|i| Metric {
                        agent: format!("cpu{}", i % 4),
                        level: levels[i / 4 % 4].into(),
                        stream: "data".into(),
                        metric: format!("m{}", i / 16),
                        value: (n * 1_000 + i as u64) as f64 * 0.5,
                    })
                    .collect();
                store.record(&record, &metrics).unwrap();
            }
            path
        })
        .collect()
}

fn merge_into(db: &Path, shards: &[PathBuf]) -> merge::MergeReport {
    let mut store = Store::open(db).unwrap();
    let report = merge::merge(&mut store, shards, |_, _| {}).unwrap();
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    report
}

fn remove_db(db: &Path) {
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
    }
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let shards = shards(dir.path());
    let db = dir.path().join("merged.sqlite");
    let mut g = c.benchmark_group("shards");
    g.sample_size(10).measurement_time(Duration::from_secs(40));
    g.bench_function(format!("{SHARDS}x{}-into-new", RUNS * ROWS), |b| {
        b.iter_batched(
            || remove_db(&db),
            |_| {
                let r = merge_into(&db, &shards);
                assert_eq!(r.metric_rows(), SHARDS * RUNS * ROWS);
            },
            BatchSize::PerIteration,
        )
    });
    remove_db(&db);
    merge_into(&db, &shards);
    g.bench_function(format!("{SHARDS}x{}-again", RUNS * ROWS), |b| {
        b.iter(|| {
            let r = merge_into(&db, &shards);
            assert_eq!((r.added(), r.present()), (0, SHARDS * RUNS));
        })
    });
    g.finish();
}

criterion_group!(merge_benches, benches);
criterion_main!(merge_benches);
