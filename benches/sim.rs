//! Timed-run throughput: `sim_policy`, the path `apusim sim` takes for every policy, in
//! simulated instructions per second of wall-clock time.
//!
//! Run with `cargo bench --bench sim`. Inputs are the built-in workloads, generated once into
//! memory before timing (decoding a cached `.apt` runs at tens of millions of records per
//! second, so it does not weigh on these figures):
//!
//! - `one_core/mcf`: one out-of-order core on the `mcf` stand-in (pointer-heavy, LLC-missing)
//!   on the 4c1g system with a single core;
//! - `one_core/libquantum`: a streaming job, many independent misses in flight;
//! - `mix/Q2`: the four CPU jobs of drp mix Q2 on 4c1g with the GPU's rendering trace
//!   replayed open-loop;
//! - `gpu/blackscholes`: drp mix S16's GPGPU job alone on the timed GPU of 4c1g-cuda (six
//!   shader cores executing its per-warp program), in memory transactions per second;
//! - `render/lake`: one 640x512 frame of the `lake` scene alone on the timed render pipeline
//!   of 4c1g (the renderer records its work on a thread of its own, as in `apusim sim
//!   --mix`), in GPU accesses per second.
//!
//! docs/PERFORMANCE.md records the figures and compares them with ChampSim on the same traces.

use anyhow::Result;
use apusim_sim::run::{GpuProgram, Input, Inputs};
use apusim_sim::timed::{sim_policy, SimOptions};
use apusim_sim::SystemConfig;
use apusim_trace::{Access, AccessSource, VecSource};
use apusim_workloads::gpgpu::{self, GpgpuParams};
use apusim_workloads::mixes;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

struct Memory(Vec<(String, Vec<Access>)>);

impl Inputs for Memory {
    fn open(&self) -> Result<Vec<Input>> {
        Ok(self
            .0
            .iter()
            .map(|(name, v)| Input {
                name: name.clone(),
                source: Box::new(VecSource::new(v.clone())),
                remap: None,
                champsim: None,
                program: None,
            })
            .collect())
    }
    fn describe(&self) -> String {
        "in-memory workloads".into()
    }
}

/// A GPGPU kernel at its default size as the only input: a per-warp program for the timed
/// GPU (generated as the GPU asks for blocks, as in `apusim sim --mix`).
struct Gpu(&'static str);

impl Inputs for Gpu {
    fn open(&self) -> Result<Vec<Input>> {
        let program = gpgpu::program(self.0, &GpgpuParams::default())?;
        let header = program.header().clone();
        Ok(vec![Input {
            name: format!("gpu {}", self.0),
            source: Box::new(VecSource::with_header(header, Vec::new())),
            remap: None,
            champsim: None,
            program: Some(GpuProgram::Kernels(program)),
        }])
    }
    fn describe(&self) -> String {
        format!("gpgpu {}", self.0)
    }
}

/// One frame of a built-in scene at 640x512 as render work for the timed pipeline.
struct Render(&'static str);

impl Inputs for Render {
    fn open(&self) -> Result<Vec<Input>> {
        let opt = apusim_render::Options {
            width: 640,
            height: 512,
            frames: Some(1),
            seed: 1,
        };
        let work = apusim_render::WorkSource::spawn(self.0, &opt)?;
        let header = apusim_trace::FrameSource::header(&work).clone();
        Ok(vec![Input {
            name: format!("gpu {}", self.0),
            source: Box::new(VecSource::with_header(header, Vec::new())),
            remap: None,
            champsim: None,
            program: Some(GpuProgram::Frames(Box::new(work))),
        }])
    }
    fn describe(&self) -> String {
        format!("render {}", self.0)
    }
}

/// The first `limit` accesses of each job of mix `name` whose label passes `keep`.
fn jobs(name: &str, limit: usize, keep: impl Fn(&str) -> bool) -> Memory {
    let mut out = Vec::new();
    for job in mixes::jobs(name, 1, 1).unwrap() {
        if !keep(&job.label) {
            continue;
        }
        let mut src: Box<dyn AccessSource> = job.open().unwrap();
        let mut v = Vec::new();
        while v.len() < limit && src.next_batch(&mut v).unwrap() {}
        v.truncate(limit);
        out.push((job.label.clone(), v));
    }
    Memory(out)
}

fn bench(c: &mut Criterion) {
    let one = SystemConfig::load_preset("4c1g", &["cpus=1".to_string()]).unwrap();
    let four = SystemConfig::load_preset("4c1g", &[]).unwrap();
    let opts = |n| SimOptions {
        warmup: 0,
        instructions: Some(n),
        progress: false,
        interval: None,
        sample: None,
        llc_switches: Default::default(),
    };
    let mut g = c.benchmark_group("one_core");
    g.sample_size(10);
    // S6's CPU job is mcf, D4's second is libquantum; both drive core 0 once remapped.
    for (mix, label, n) in [("S6", "mcf", 300_000), ("D4", "libquantum", 600_000)] {
        let mut m = jobs(mix, 4_000_000, |l| l.contains(label));
        for (_, v) in &mut m.0 {
            for a in v.iter_mut() {
                a.agent = apusim_trace::Agent::cpu(0);
            }
        }
        g.throughput(Throughput::Elements(n));
        g.bench_function(label, |b| {
            b.iter(|| sim_policy(&one, "lru", &m, &opts(n)).unwrap())
        });
    }
    g.finish();

    let mut g = c.benchmark_group("mix");
    g.sample_size(10);
    let n = 100_000;
    let q2 = jobs("Q2", 3_000_000, |_| true);
    g.throughput(Throughput::Elements(4 * n));
    g.bench_function("Q2", |b| {
        b.iter(|| sim_policy(&four, "drp-baseline", &q2, &opts(n)).unwrap())
    });
    g.finish();

    let mut g = c.benchmark_group("gpu");
    g.sample_size(10);
    let cuda = SystemConfig::load_preset("4c1g-cuda", &[]).unwrap();
    let bs = Gpu("blackscholes");
    let run = || sim_policy(&cuda, "drp-baseline", &bs, &SimOptions::default()).unwrap();
    let transactions = run().gpu.expect("a timed GPU").stats.transactions;
    g.throughput(Throughput::Elements(transactions));
    g.bench_function("blackscholes", |b| b.iter(run));
    g.finish();

    let mut g = c.benchmark_group("render");
    g.sample_size(10);
    let lake = Render("lake");
    let run = || sim_policy(&four, "drp-baseline", &lake, &SimOptions::default()).unwrap();
    let accesses = run().gpu.expect("a timed GPU").stats.transactions;
    g.throughput(Throughput::Elements(accesses));
    g.bench_function("lake", |b| b.iter(run));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
