//! DRAM model throughput (requests simulated per second) on traces shaped like the reference
//! traces of ../shared/reference/dram (70% reads; half one sequential 64 B stream, half
//! uniformly random lines in 1 GiB), at light load (one request every 16 DRAM cycles) and at
//! saturation (every 4 cycles), on the `ddr3-1600-11-1ch` preset with its FR-FCFS-cap and with
//! the `frfcfs`, `fcfs` and `gpu-favoring` schedulers. It drives [`run_requests`], the loop
//! `apusim dram` runs; the trace is generated in memory with a fixed seed, so parsing is not
//! measured (docs/PERFORMANCE.md, DRAM section, times the whole command).

use apusim_dram::{presets::preset, run_requests, MemorySystem, Request};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn trace(n: usize, interval: u64) -> Vec<Request> {
    let lines = (1u64 << 30) / 64;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut seq = rng.next() % lines;
    (0..n)
        .map(|i| {
            let line = if rng.unit() < 0.5 {
                seq = (seq + 1) % lines;
                seq
            } else {
                rng.next() % lines
            };
            let read = rng.unit() < 0.7;
            let r = Request::read(i as u64, line * 64, i as u64 * interval);
            Request {
                is_write: !read,
                ..r
            }
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let n = 200_000;
    let mut g = c.benchmark_group("dram");
    g.sample_size(10);
    g.throughput(Throughput::Elements(n as u64));
    for (name, interval) in [("light_interval16", 16u64), ("saturated_interval4", 4)] {
        let reqs = trace(n, interval);
        for sched in ["frfcfs-cap", "frfcfs", "fcfs", "gpu-favoring"] {
            let mut cfg = preset("ddr3-1600-11-1ch").unwrap();
            cfg.scheduler = sched.into();
            // The preset's own scheduler keeps the benchmark's original name.
            let id = if sched == "frfcfs-cap" {
                "ddr3-1600-11-1ch".to_string()
            } else {
                format!("ddr3-1600-11-1ch/{sched}")
            };
            g.bench_with_input(BenchmarkId::new(id, name), &reqs, |b, reqs| {
                b.iter(|| {
                    let mut mem = MemorySystem::new(cfg.clone()).unwrap();
                    mem.set_report_completions(false);
                    run_requests(&mut mem, reqs.iter().copied().map(Ok)).unwrap();
                    mem.report().cycles
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
