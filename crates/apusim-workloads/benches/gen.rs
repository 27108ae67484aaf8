//! Generation speed of the built-in workloads, in records per second (criterion
//! `Throughput::Elements`). Every GPGPU kernel runs at its default size (input generation
//! included, as a study pays it); the CPU kernels retire a fixed instruction count.
//! `cargo bench -p apusim-workloads --bench gen [-- NAME]`.

use apusim_workloads::{cpu, gpgpu};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;

/// Drain a source, returning its record count.
fn drain(mut src: Box<dyn apusim_trace::AccessSource>) -> u64 {
    let mut buf = Vec::with_capacity(apusim_trace::BATCH);
    let mut n = 0;
    while src.next_batch(&mut buf).unwrap() {
        n += buf.len() as u64;
        buf.clear();
    }
    n
}

fn gpgpu_kernels(c: &mut Criterion) {
    let mut g = c.benchmark_group("gpgpu");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for k in gpgpu::KERNELS {
        let p = gpgpu::GpgpuParams::default();
        let records = drain(gpgpu::generate(k.name, &p).unwrap());
        g.throughput(Throughput::Elements(records));
        g.bench_function(k.name, |b| {
            b.iter(|| drain(gpgpu::generate(k.name, &p).unwrap()))
        });
    }
    g.finish();
}

fn cpu_kernels(c: &mut Criterion) {
    let mut g = c.benchmark_group("cpu");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for k in cpu::KERNELS {
        let p = cpu::CpuParams {
            core: 0,
            instructions: 2_000_000,
            size: 0,
            seed: 1,
        };
        let records = drain(cpu::generate(k.name, &p).unwrap());
        g.throughput(Throughput::Elements(records));
        g.bench_function(k.name, |b| {
            b.iter(|| drain(cpu::generate(k.name, &p).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, gpgpu_kernels, cpu_kernels);
criterion_main!(benches);
