//! Throughput of the GPU memory side (docs/PERFORMANCE.md, "GPU L1 bypassing"): line accesses
//! per second through Table 1's hierarchy (8 L1s, L2, L3) with each L1 predictor, fed the
//! records of two GPGPU kernels generated once up front.

use apusim_gpu::{GpuConfig, GpuHierarchy};
use apusim_trace::{Access, AccessSource};
use apusim_workloads::gpgpu::{self, GpgpuParams};
use apusim_workloads::simt::SimtConfig;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;

fn records(kernel: &str, size: usize, n: usize) -> Vec<Access> {
    let p = GpgpuParams {
        size,
        seed: 1,
        gpu: SimtConfig {
            sms: 8,
            clock_mhz: 1000,
            ..SimtConfig::default()
        },
    };
    let mut s = gpgpu::generate(kernel, &p).unwrap();
    let mut v = Vec::new();
    while v.len() < n && s.next_batch(&mut v).unwrap() {}
    v.truncate(n);
    v
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("gpu-l1");
    for (kernel, size) in [("spmv", 4096), ("matrixmul", 256)] {
        let recs = records(kernel, size, 400_000);
        g.throughput(Throughput::Elements(recs.len() as u64));
        for p in ["none", "pc", "counter"] {
            let cfg = GpuConfig::load_preset("table1", &[format!("predictor={p}")]).unwrap();
            g.bench_function(format!("{kernel}/{p}"), |b| {
                b.iter(|| {
                    let mut h = GpuHierarchy::new(&cfg, false).unwrap();
                    for r in &recs {
                        h.access(r).unwrap();
                    }
                    black_box(h.metrics().l1_misses)
                })
            });
        }
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
