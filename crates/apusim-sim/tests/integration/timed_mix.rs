//! Timed runs of several agents: requests waiting for an LLC MSHR are never lost, weighted
//! speedup against cached alone runs, and the bound on open-loop GPU traffic. One file, one
//! idea (several agents on one clock): its tests share the `Multi` input and its helpers, which
//! is why it runs past 800 lines.

use anyhow::Result;
use apusim_sim::run::{Input, Inputs, Reopen};
use apusim_sim::timed::{alone_runs, sim_policy, speedup, stored, AloneOptions, SimOptions};
use apusim_sim::SystemConfig;
use apusim_trace::{Access, Agent, Op, Stream, VecSource};

/// Several in-memory traces, one per agent, identified by `keys`.
struct Multi {
    traces: Vec<Vec<Access>>,
    keys: Vec<String>,
}

impl Inputs for Multi {
    fn open(&self) -> Result<Vec<Input>> {
        Ok(self
            .traces
            .iter()
            .enumerate()
            .map(|(i, t)| Input {
                name: format!("trace{i}"),
                source: Box::new(VecSource::new(t.clone())),
                remap: None,
                champsim: None,
                program: None,
            })
            .collect())
    }
    fn describe(&self) -> String {
        format!("{} in-memory traces", self.traces.len())
    }
    fn keys(&self) -> Option<Vec<String>> {
        Some(self.keys.clone())
    }
    fn reopen(&self, index: usize) -> Option<Reopen> {
        let t = self.traces.get(index)?.clone();
        Some(Box::new(move || {
            Ok(Input {
                name: format!("trace{index}"),
                source: Box::new(VecSource::new(t.clone())),
                remap: None,
                champsim: None,
                program: None,
            })
        }))
    }
}

fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed.max(1);
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// `n` loads of core `core`, one per instruction, at random lines of `span` bytes of the
/// core's own data.
fn loads(core: u8, n: u64, span: u64, seed: u64) -> Vec<Access> {
    let mut next = xorshift(seed);
    (0..n)
        .map(|i| {
            Access::new(
                Agent::cpu(core),
                Stream::CpuData,
                Op::Read,
                ((core as u64 + 1) << 28) + (next() % span) / 64 * 64,
                8,
            )
            .with_time(i)
        })
        .collect()
}

fn system(extra: &[&str]) -> SystemConfig {
    let mut set: Vec<String> = [
        "cpus=2",
        "l1i=4096,4,64",
        "l1d=4096,4,64",
        "l2=16384,8,64",
        "llc=262144,8,64",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    set.extend(extra.iter().map(|s| s.to_string()));
    SystemConfig::load_preset("4c1g", &set).unwrap()
}

fn opts() -> SimOptions {
    SimOptions {
        warmup: 2_000,
        instructions: Some(20_000),
        ..SimOptions::default()
    }
}

/// Two cores reading the same lines in the same order through a bank with one MSHR: most
/// requests wait for the MSHR, and a waiting request often finds its line filled by the
/// other core's miss meanwhile (a hit) or in flight (a merge), taking no MSHR. Every waiting
/// request must still be served.
#[test]
fn requests_waiting_for_an_llc_mshr_are_all_served() {
    let a = loads(0, 30_000, 1 << 20, 3);
    let b: Vec<Access> = a
        .iter()
        .map(|x| Access {
            agent: Agent::cpu(1),
            ..*x
        })
        .collect();
    let inputs = Multi {
        traces: vec![a, b],
        keys: vec!["a".into(), "b".into()],
    };
    let cfg = system(&["llc.mshrs=1"]);
    let r = sim_policy(&cfg, "lru", &inputs, &SimOptions::default()).unwrap();
    assert!(
        r.system.llc.mshr_waits > 1000,
        "the test must fill the MSHR"
    );
    for c in &r.cores {
        assert!(c.reached_target);
        assert_eq!(c.instructions, 30_000);
    }
}

fn two_jobs() -> Multi {
    Multi {
        traces: vec![
            loads(0, 40_000, 192 << 10, 5),
            loads(1, 40_000, 192 << 10, 6),
        ],
        keys: vec!["job0".into(), "job1".into()],
    }
}

fn alone_opts(dir: &std::path::Path) -> AloneOptions {
    AloneOptions {
        policy: "lru".into(),
        cache_dir: Some(dir.to_path_buf()),
        build_id: "test build".into(),
    }
}

#[test]
fn alone_runs_equal_single_input_runs_and_come_back_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = system(&[]);
    let inputs = two_jobs();
    let first = alone_runs(&cfg, &inputs, &opts(), &alone_opts(dir.path())).unwrap();
    assert_eq!(first.len(), 2);
    assert!(first.iter().all(|r| !r.cached));
    // Job 1 alone is the same as a run of its trace alone.
    let only = Multi {
        traces: vec![inputs.traces[1].clone()],
        keys: vec!["x".into()],
    };
    let solo = sim_policy(&cfg, "lru", &only, &opts()).unwrap();
    assert_eq!(first[1].agent, "cpu1");
    assert_eq!(first[1].cycles, solo.cores[0].cycles);
    assert_eq!(first[1].ipc, solo.cores[0].ipc);

    let again = alone_runs(&cfg, &inputs, &opts(), &alone_opts(dir.path())).unwrap();
    assert!(
        again.iter().all(|r| r.cached),
        "the second time from the cache"
    );
    for (a, b) in first.iter().zip(&again) {
        assert_eq!((a.cycles, a.ipc), (b.cycles, b.ipc));
    }

    // Anything that decides the result is part of the key: another configuration, target
    // or build is simulated afresh.
    let other_cfg = system(&["llc.latency=30"]);
    let r = alone_runs(&other_cfg, &inputs, &opts(), &alone_opts(dir.path())).unwrap();
    assert!(r.iter().all(|r| !r.cached));
    assert!(
        r[0].cycles > first[0].cycles,
        "a slower LLC must cost cycles"
    );
    let longer = SimOptions {
        instructions: Some(30_000),
        ..opts()
    };
    let r = alone_runs(&cfg, &inputs, &longer, &alone_opts(dir.path())).unwrap();
    assert!(r.iter().all(|r| !r.cached));
    let mut rebuilt = alone_opts(dir.path());
    rebuilt.build_id = "another build".into();
    let r = alone_runs(&cfg, &inputs, &opts(), &rebuilt).unwrap();
    assert!(r.iter().all(|r| !r.cached));

    // A damaged cache file is simulated again (and rewritten), never trusted.
    for e in std::fs::read_dir(dir.path().join("alone")).unwrap() {
        std::fs::write(e.unwrap().path(), b"{ not json").unwrap();
    }
    let r = alone_runs(&cfg, &inputs, &opts(), &alone_opts(dir.path())).unwrap();
    assert!(r.iter().all(|r| !r.cached));
    assert_eq!(r[0].cycles, first[0].cycles);
}

#[test]
fn weighted_speedup_of_two_jobs_sharing_the_llc_and_dram() {
    let dir = tempfile::tempdir().unwrap();
    // Each job's 192 KiB fits the 256 KiB LLC alone; together they do not.
    let cfg = system(&[]);
    let inputs = two_jobs();
    let alone = alone_runs(&cfg, &inputs, &opts(), &alone_opts(dir.path())).unwrap();
    let shared = sim_policy(&cfg, "lru", &inputs, &opts()).unwrap();
    let s = speedup(&shared, &alone, "lru").unwrap();
    assert_eq!(s.jobs.len(), 2);
    for j in &s.jobs {
        assert!(
            j.slowdown > 1.05,
            "{}: sharing the LLC must slow the job down ({j:?})",
            j.agent
        );
    }
    let ws: f64 = s.jobs.iter().map(|j| j.ipc / j.alone_ipc).sum();
    assert_eq!(s.weighted, ws);
    assert!(s.weighted < 2.0 && s.weighted > 0.0);
    let hs = 2.0 / s.jobs.iter().map(|j| j.alone_ipc / j.ipc).sum::<f64>();
    assert!((s.harmonic - hs).abs() < 1e-12);
    assert!(
        s.harmonic <= s.weighted / 2.0 + 1e-12,
        "harmonic <= arithmetic mean"
    );
    let max = s.jobs.iter().map(|j| j.slowdown).fold(0.0, f64::max);
    assert_eq!(s.max_slowdown, max);
    // A result with its speedups reads back whole, and bytes that are not one are refused.
    let mut shared = shared;
    shared.speedup = Some(s);
    let bytes = stored::encode(&shared).unwrap();
    let back = stored::decode(stored::FORMAT, &bytes).unwrap();
    assert_eq!(
        serde_json::to_string(&back).unwrap(),
        serde_json::to_string(&shared).unwrap()
    );
    assert!(stored::decode(stored::FORMAT, &bytes[..bytes.len() / 2]).is_err());
    assert!(stored::decode("json", &bytes).is_err());
}

/// A GPU trace far faster than DRAM: 8 new lines per GPU cycle.
fn gpu_flood(n: u64) -> Vec<Access> {
    let mut next = xorshift(99);
    (0..n)
        .map(|i| {
            let mut a = Access::new(
                Agent::GPU,
                Stream::StaticTexture,
                Op::Read,
                0x8000_0000 + (next() % (1 << 30)) / 64 * 64,
                64,
            );
            a.time = i / 8;
            a
        })
        .collect()
}

fn cpu_with_gpu(bound: u32) -> apusim_sim::timed::SimResult {
    let inputs = Multi {
        traces: vec![loads(0, 20_000, 8 << 20, 7), gpu_flood(400_000)],
        keys: vec!["cpu".into(), "gpu".into()],
    };
    let cfg = system(&[&format!("timing.gpu_outstanding={bound}")]);
    sim_policy(&cfg, "lru", &inputs, &SimOptions::default()).unwrap()
}

#[test]
fn open_loop_gpu_traffic_is_bounded() {
    let tight = cpu_with_gpu(4);
    let loose = cpu_with_gpu(65_536);
    let (t, l) = (&tight.cores[0], &loose.cores[0]);
    assert!(t.reached_target && l.reached_target);
    assert!(
        t.llc_request_cycles * 2.0 < l.llc_request_cycles,
        "with 4 GPU requests in flight the CPU's LLC round trip ({:.0}) must be far below \
         the unbounded replay's ({:.0})",
        t.llc_request_cycles,
        l.llc_request_cycles
    );
    assert!(t.ipc > l.ipc);
}

/// The LLC round trip's wait for a free MSHR, per stream: an unbounded GPU flood keeps the
/// bank's MSHRs full, so the CPU's misses queue behind the GPU's (in the sampled render mixes
/// this wait is what set the CPU's pace, docs/validation.md); with an MSHR for every request
/// in flight nobody waits for one, and the queue moves to DRAM's.
#[test]
fn a_gpu_flood_makes_cpu_requests_wait_for_llc_mshrs() {
    let run = |extra: &[&str]| {
        let inputs = Multi {
            traces: vec![loads(0, 20_000, 8 << 20, 7), gpu_flood(400_000)],
            keys: vec!["cpu".into(), "gpu".into()],
        };
        let mut set = vec!["timing.gpu_outstanding=65536"];
        set.extend_from_slice(extra);
        sim_policy(&system(&set), "lru", &inputs, &SimOptions::default()).unwrap()
    };
    let stream = |r: &apusim_sim::timed::SimResult, name: &str| {
        r.system
            .streams
            .iter()
            .find(|s| s.stream == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} stream"))
    };
    let flooded = run(&[]);
    let roomy = run(&["llc.mshrs=65536"]);
    let (cpu, tex) = (
        stream(&flooded, "cpu-data"),
        stream(&flooded, "static-texture"),
    );
    eprintln!(
        "64 MSHRs: cpu-data round trip {:.0}, of it waiting for an MSHR {:.0}; texture {:.0} of \
         {:.0}",
        cpu.llc_request_cycles,
        cpu.llc_mshr_wait_cycles,
        tex.llc_mshr_wait_cycles,
        tex.llc_request_cycles
    );
    assert!(
        flooded.system.llc.mshr_waits > 1000,
        "the flood must fill the MSHRs"
    );
    assert!(cpu.llc_mshr_wait_cycles > 0.5 * cpu.llc_request_cycles);
    assert!(tex.llc_mshr_wait_cycles > 0.0);
    for s in [&cpu, &tex] {
        assert!(s.llc_mshr_wait_cycles < s.llc_request_cycles);
    }
    let free = stream(&roomy, "cpu-data");
    assert_eq!(roomy.system.llc.mshr_waits, 0);
    assert!(roomy
        .system
        .streams
        .iter()
        .all(|s| s.llc_mshr_wait_cycles == 0.0));
    // The queue moves to DRAM: the round trip stays, its wait is now for a DRAM queue slot.
    eprintln!(
        "{} MSHRs: cpu-data round trip {:.0}; reads waiting for a DRAM queue slot {:.1} \
         against {:.1}",
        65_536,
        free.llc_request_cycles,
        roomy.system.dram_reads_waiting_mean,
        flooded.system.dram_reads_waiting_mean
    );
    assert!(roomy.system.dram_reads_waiting_mean > 10.0 * flooded.system.dram_reads_waiting_mean);
}

/// A GPU writing 8 color lines per GPU cycle over 128 KiB: four times its color caches, so
/// nearly every write sends a write-back, and half the LLC, which absorbs them (the stress is
/// on the ring and the LLC bank, not DRAM).
fn gpu_write_flood(n: u64) -> Vec<Access> {
    (0..n)
        .map(|i| {
            let mut a = Access::new(
                Agent::GPU,
                Stream::Color,
                Op::Write,
                0x8000_0000 + (i % 2048) * 64,
                64,
            );
            a.time = i / 8;
            a
        })
        .collect()
}

/// Write-backs count towards the bound until their LLC bank takes them.
#[test]
fn open_loop_write_backs_are_bounded() {
    let run = |bound: u32| {
        let inputs = Multi {
            traces: vec![loads(0, 20_000, 8 << 20, 7), gpu_write_flood(400_000)],
            keys: vec!["cpu".into(), "gpu".into()],
        };
        let cfg = system(&[&format!("timing.gpu_outstanding={bound}")]);
        sim_policy(&cfg, "lru", &inputs, &SimOptions::default()).unwrap()
    };
    let (tight, loose) = (run(4), run(65_536));
    let (t, l) = (&tight.cores[0], &loose.cores[0]);
    assert!(t.reached_target && l.reached_target);
    assert!(
        t.llc_request_cycles * 1.5 < l.llc_request_cycles,
        "with 4 GPU write-backs in flight the CPU's LLC round trip ({:.0}) must be far below \
         the unbounded replay's ({:.0})",
        t.llc_request_cycles,
        l.llc_request_cycles
    );
}

#[test]
fn a_zero_gpu_bound_is_refused() {
    let e =
        SystemConfig::load_preset("4c1g", &["timing.gpu_outstanding=0".to_string()]).unwrap_err();
    assert!(format!("{e:#}").contains("timing.gpu_outstanding"), "{e:#}");
}

/// System-wide figures (LLC misses, DRAM traffic, network) cover the measured window only.
#[test]
fn system_statistics_exclude_the_warm_up() {
    let a = Agent::cpu(0);
    let mut v: Vec<Access> = (0..20_000u64)
        .map(|i| Access::new(a, Stream::CpuData, Op::Read, 0x4000_0000 + i * 64, 8).with_time(i))
        .collect();
    v.extend((0..20_000u64).map(|i| {
        Access::new(a, Stream::CpuData, Op::Read, 0x5000_0000 + (i % 64) * 64, 8)
            .with_time(20_000 + i)
    }));
    let inputs = Multi {
        traces: vec![v],
        keys: vec!["t".into()],
    };
    let cfg = system(&["cpus=1"]);
    let o = SimOptions {
        warmup: 20_000,
        instructions: Some(19_000),
        ..SimOptions::default()
    };
    let r = sim_policy(&cfg, "lru", &inputs, &o).unwrap();
    let llc = r.functional.llc().counts.total();
    assert!(llc.misses() >= 20_000, "the warm-up misses");
    let reads: u64 = r.system.dram.iter().map(|d| d.reads).sum();
    assert!(reads <= 64, "window DRAM reads {reads}");
    assert!(
        r.system.llc_misses <= 64,
        "window LLC misses {}",
        r.system.llc_misses
    );
    assert!(
        r.system.window_cycles < r.cycles / 4,
        "{} of {}",
        r.system.window_cycles,
        r.cycles
    );
    assert_eq!(r.cores[0].cycles, r.system.window_cycles);
}

/// Per-stream figures account for every request: the CPU's data stream carries the core's
/// LLC requests, the GPU's texture stream its DRAM reads, and each stream's LLC misses
/// and DRAM traffic add up to the system's.
#[test]
fn stream_figures_add_up_to_agents_and_system() {
    let r = cpu_with_gpu(16);
    let by = |name: &str| {
        r.system
            .streams
            .iter()
            .find(|s| s.stream == name)
            .unwrap_or_else(|| panic!("no {name} in {:?}", r.system.streams))
    };
    let (data, tex) = (by("cpu-data"), by("static-texture"));
    assert!(data.llc_requests > 1_000 && tex.llc_requests > 1_000);
    assert!(data.llc_request_cycles > 0.0 && tex.dram_read_latency_cycles > 0.0);
    let gpu = r.system.dram.iter().find(|d| d.agent == "gpu").unwrap();
    assert_eq!(tex.dram_reads, gpu.reads);
    let reads: u64 = r.system.dram.iter().map(|d| d.reads).sum();
    let writes: u64 = r.system.dram.iter().map(|d| d.writes).sum();
    assert_eq!(
        r.system.streams.iter().map(|s| s.dram_reads).sum::<u64>(),
        reads
    );
    assert_eq!(
        r.system.streams.iter().map(|s| s.dram_writes).sum::<u64>(),
        writes
    );
    assert_eq!(
        r.system.streams.iter().map(|s| s.llc_misses).sum::<u64>(),
        r.system.llc_misses
    );
    // The DRAM's row outcomes, kept per stream, give the system's row-hit rate.
    let (hits, outcomes) = r.system.streams.iter().fold((0, 0), |(h, n), s| {
        let (rd, wr) = (&s.dram_read_rows, &s.dram_write_rows);
        (h + rd.hits + wr.hits, n + rd.total() + wr.total())
    });
    assert!(tex.dram_read_rows.total() > 0 && hits > 0);
    assert_eq!(hits as f64 / outcomes as f64, r.system.dram_row_hit_rate);
}

/// A trace shorter than the run is replayed from its start while any core still runs, so
/// it reaches its target and the other core sees its traffic to the end.
#[test]
fn a_short_trace_is_replayed_until_its_target() {
    let inputs = Multi {
        traces: vec![loads(0, 3_000, 64 << 10, 11), loads(1, 60_000, 4 << 20, 12)],
        keys: vec!["short".into(), "long".into()],
    };
    let cfg = system(&[]);
    let o = SimOptions {
        warmup: 1_000,
        instructions: Some(10_000),
        ..SimOptions::default()
    };
    let r = sim_policy(&cfg, "lru", &inputs, &o).unwrap();
    let short = &r.cores[0];
    assert!(short.reached_target);
    // The window opens and closes at retirement, several instructions a cycle.
    assert!(
        short.instructions.abs_diff(10_000) <= 8,
        "{}",
        short.instructions
    );
    assert!(short.restarts >= 3, "{} restarts", short.restarts);
    let long = &r.cores[1];
    assert!(long.reached_target);
    // Without a target every trace runs once.
    let once = sim_policy(&cfg, "lru", &inputs, &SimOptions::default()).unwrap();
    assert_eq!(once.cores[0].restarts, 0);
    assert_eq!(once.cores[0].instructions, 3_000);
    // An input that cannot be reopened ends before its target, marked as such.
    struct NoReopen(Multi);
    impl Inputs for NoReopen {
        fn open(&self) -> Result<Vec<Input>> {
            self.0.open()
        }
        fn describe(&self) -> String {
            self.0.describe()
        }
    }
    let r = sim_policy(&cfg, "lru", &NoReopen(inputs), &o).unwrap();
    assert!(!r.cores[0].reached_target);
    assert_eq!(r.cores[0].restarts, 0);
}

/// A GPU trace that ends while a core still runs is replayed too, its clock continuing after
/// the last access; without a target it runs once.
#[test]
fn a_short_open_loop_trace_is_replayed_while_cores_run() {
    let inputs = Multi {
        traces: vec![loads(0, 20_000, 8 << 20, 7), gpu_flood(2_000)],
        keys: vec!["cpu".into(), "gpu".into()],
    };
    let cfg = system(&[]);
    let o = SimOptions {
        warmup: 0,
        instructions: Some(20_000),
        ..SimOptions::default()
    };
    let r = sim_policy(&cfg, "lru", &inputs, &o).unwrap();
    assert!(r.open_loop_restarts >= 2, "{}", r.open_loop_restarts);
    // Every complete pass goes through the GPU's first texture cache.
    let tex = r
        .functional
        .levels
        .iter()
        .find(|l| l.name == "tex-l0")
        .unwrap();
    let reads = tex.counts.agent_total(Agent::GPU).reads;
    assert!(
        reads >= 2_000 * r.open_loop_restarts,
        "{reads} texture reads for {} restarts",
        r.open_loop_restarts
    );
    let once = sim_policy(&cfg, "lru", &inputs, &SimOptions::default()).unwrap();
    assert_eq!(once.open_loop_restarts, 0);
}

/// Interval statistics partition the run: with one core and no warm-up (the measured window
/// is the whole run), the intervals' instructions, LLC misses and DRAM reads add up to the
/// run's, cycle boundaries fall on multiples of the interval, and recording changes nothing.
#[test]
fn intervals_partition_the_run() {
    let inputs = Multi {
        traces: vec![loads(0, 30_000, 4 << 20, 21)],
        keys: vec!["one".into()],
    };
    let cfg = system(&["cpus=1"]);
    let plain = sim_policy(&cfg, "lru", &inputs, &SimOptions::default()).unwrap();
    let o = SimOptions {
        interval: Some("20000cycles".parse().unwrap()),
        ..SimOptions::default()
    };
    let r = sim_policy(&cfg, "lru", &inputs, &o).unwrap();
    assert_eq!(
        r.cores[0].core, plain.cores[0].core,
        "recording perturbs nothing"
    );
    assert_eq!(r.system.llc_misses, plain.system.llc_misses);
    let iv = &r.intervals;
    assert!(iv.len() >= 5, "{} intervals", iv.len());
    for (k, i) in iv.iter().enumerate() {
        assert_eq!(i.index, k as u64);
        assert_eq!(i.start_cycle, 20_000 * k as u64);
        if k + 1 < iv.len() {
            assert_eq!(i.end_cycle, 20_000 * (k as u64 + 1));
            assert_eq!(i.cores[0].cycles, 20_000);
        }
    }
    let sum = |f: &dyn Fn(&apusim_sim::timed::Interval) -> u64| iv.iter().map(f).sum::<u64>();
    assert_eq!(sum(&|i| i.cores[0].instructions), r.cores[0].instructions);
    assert_eq!(sum(&|i| i.system.llc_misses), r.system.llc_misses);
    let reads = |d: &[apusim_sim::timed::sim::DramSource]| d.iter().map(|x| x.reads).sum::<u64>();
    assert_eq!(sum(&|i| reads(&i.system.dram)), reads(&r.system.dram));
    assert_eq!(iv.last().unwrap().end_cycle, r.system.window_cycles);

    // Instruction boundaries: the k-th reading comes at the step that retires the k × N-th
    // instruction, so at most one step's retirement past it.
    let o = SimOptions {
        interval: Some("5000instr".parse().unwrap()),
        ..SimOptions::default()
    };
    let r = sim_policy(&cfg, "lru", &inputs, &o).unwrap();
    let iv = &r.intervals;
    assert!(iv.len() >= 5, "{} intervals", iv.len());
    let mut total = 0;
    for (k, i) in iv[..iv.len() - 1].iter().enumerate() {
        total += i.cores[0].instructions;
        let boundary = 5_000 * (k as u64 + 1);
        assert!(
            (boundary..boundary + 16).contains(&total),
            "reading {k}: {total} instructions"
        );
    }
    assert_eq!(
        iv.iter().map(|i| i.cores[0].instructions).sum::<u64>(),
        r.cores[0].instructions
    );
}

/// Without a render pipeline a sampled run's detailed warm-up defaults to [`CPU_WARMUP`],
/// and its report carries the value used.
#[test]
fn a_cpu_run_samples_after_the_cpu_warm_up() {
    use apusim_sim::timed::{SampleSpec, CPU_WARMUP};
    let inputs = Multi {
        keys: vec!["t0".into()],
        traces: vec![loads(0, 60_000, 32 << 10, 7)],
    };
    let opts = SimOptions {
        sample: Some(SampleSpec {
            period: 100_000,
            warmup: None,
            unit: 5_000,
        }),
        ..SimOptions::default()
    };
    let r = sim_policy(&system(&["cpus=1"]), "lru", &inputs, &opts).unwrap();
    assert_eq!(r.sampling.expect("sampled").spec.warmup, Some(CPU_WARMUP));
}

/// Sampled runs: each core's IPC interval holds the detailed run's IPC, the LLC MPKI is the
/// detailed run's (functional warming counts every access), and only a small part of the
/// run is simulated in detail. One core with phases (a cache-resident stretch, then misses
/// over 8 MiB), and two cores sharing the LLC and DRAM.
#[test]
fn sampled_estimates_hold_the_detailed_result() {
    let phased = |core: u8, seed: u64| -> Vec<Access> {
        let mut v = loads(core, 60_000, 32 << 10, seed);
        let far = loads(core, 60_000, 8 << 20, seed + 1);
        v.extend(far.into_iter().map(|a| a.with_time(a.time + 60_000)));
        v
    };
    let spec = apusim_sim::timed::SampleSpec {
        period: 20_000,
        warmup: Some(2_000),
        unit: 2_000,
    };
    for (traces, cpus) in [
        (vec![phased(0, 31)], "cpus=1"),
        (
            vec![phased(0, 41), loads(1, 120_000, 2 << 20, 43)],
            "cpus=2",
        ),
    ] {
        let inputs = Multi {
            keys: (0..traces.len()).map(|i| format!("t{i}")).collect(),
            traces,
        };
        let cfg = system(&[cpus]);
        let o = SimOptions {
            warmup: 5_000,
            instructions: Some(100_000),
            ..SimOptions::default()
        };
        let full = sim_policy(&cfg, "lru", &inputs, &o).unwrap();
        let sampled = sim_policy(
            &cfg,
            "lru",
            &inputs,
            &SimOptions {
                sample: Some(spec),
                ..o.clone()
            },
        )
        .unwrap();
        let s = sampled
            .sampling
            .as_ref()
            .expect("a sampled run reports estimates");
        assert!(s.detailed_fraction < 0.5, "{s:?}");
        for ((f, c), e) in full.cores.iter().zip(&sampled.cores).zip(&s.cores) {
            let ipc = e.ipc.expect("enough windows");
            assert!(e.windows >= 10, "{} windows", e.windows);
            assert!(
                ipc.contains(f.ipc),
                "{}: detailed IPC {} outside {} ± {}",
                f.agent,
                f.ipc,
                ipc.value,
                ipc.half_width
            );
            assert_eq!(c.ipc, ipc.value);
            let llc = |r: &apusim_sim::timed::CoreResult| r.levels.last().unwrap().mpki;
            assert!(
                (llc(c) - llc(f)).abs() <= 0.05 * llc(f) + 0.5,
                "{}: LLC MPKI {} sampled, {} detailed",
                f.agent,
                llc(c),
                llc(f)
            );
        }
    }
}

/// Sampled alone runs: the alone IPC is the sampled estimate of the job alone (not the
/// instructions over the cycles of a run whose clock jumped), it comes back from the cache
/// to the bit with its interval, a detailed run never takes a sampled one's cache entry,
/// and the weighted speedup of a sampled mix carries an interval.
#[test]
fn sampled_alone_runs_and_weighted_speedup() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = system(&[]);
    let inputs = two_jobs();
    let sampled = SimOptions {
        sample: Some(apusim_sim::timed::SampleSpec {
            period: 20_000,
            warmup: Some(2_000),
            unit: 2_000,
        }),
        ..opts()
    };
    let first = alone_runs(&cfg, &inputs, &sampled, &alone_opts(dir.path())).unwrap();
    let only = Multi {
        traces: vec![inputs.traces[1].clone()],
        keys: vec!["x".into()],
    };
    let solo = sim_policy(&cfg, "lru", &only, &sampled).unwrap();
    let est = solo.sampling.as_ref().unwrap().cores[0].ipc.unwrap();
    assert_eq!(first[1].ipc, est.value);
    assert_eq!(first[1].ipc_half_width, Some(est.half_width));
    let again = alone_runs(&cfg, &inputs, &sampled, &alone_opts(dir.path())).unwrap();
    for (a, b) in first.iter().zip(&again) {
        assert!(b.cached);
        assert_eq!((a.ipc, a.ipc_half_width), (b.ipc, b.ipc_half_width));
    }
    let detailed = alone_runs(&cfg, &inputs, &opts(), &alone_opts(dir.path())).unwrap();
    assert!(detailed
        .iter()
        .all(|r| !r.cached && r.ipc_half_width.is_none()));

    let mix = sim_policy(&cfg, "lru", &inputs, &sampled).unwrap();
    let s = speedup(&mix, &first, "lru").unwrap();
    let h = s
        .weighted_half_width
        .expect("a sampled mix's speedup has an interval");
    assert!(h > 0.0 && h.is_finite(), "{h}");
    let plain = sim_policy(&cfg, "lru", &inputs, &opts()).unwrap();
    assert!(speedup(&plain, &detailed, "lru")
        .unwrap()
        .weighted_half_width
        .is_none());
}

/// `--target-error`: further rounds with more windows until every core's interval is within
/// the target; a target the run cannot reach is refused naming the option.
#[test]
fn target_error_adds_windows_until_reached() {
    let inputs = Multi {
        traces: vec![loads(0, 120_000, 8 << 20, 51)],
        keys: vec!["one".into()],
    };
    let cfg = system(&["cpus=1"]);
    let o = SimOptions {
        warmup: 5_000,
        instructions: Some(100_000),
        sample: Some(apusim_sim::timed::SampleSpec {
            period: 400_000,
            warmup: Some(2_000),
            unit: 2_000,
        }),
        ..SimOptions::default()
    };
    let once = sim_policy(&cfg, "lru", &inputs, &o).unwrap();
    let first = once.sampling.unwrap().cores[0].ipc.unwrap();
    assert!(
        first.relative_error() > 0.05,
        "{first:?}: the test needs a wide start"
    );
    let r = apusim_sim::timed::target_error::sim_to_target(&cfg, "lru", &inputs, &o, 0.05).unwrap();
    let s = r.sampling.unwrap();
    assert!(s.rounds >= 2 && s.spec.period < 400_000, "{s:?}");
    let e = s.cores[0].ipc.unwrap();
    assert!(e.relative_error() <= 0.05, "{e:?}");
    assert_eq!(s.target_error, Some(0.05));
    let err =
        apusim_sim::timed::target_error::sim_to_target(&cfg, "lru", &inputs, &o, 1e-5).unwrap_err();
    assert!(format!("{err:#}").contains("--target-error"), "{err:#}");
}
