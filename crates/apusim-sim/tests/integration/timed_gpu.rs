//! The timed GPU in the engine: a GPGPU program's instructions and transactions are the
//! trace generator's, its shader cores hide latency with warps until DRAM bandwidth bounds
//! them (Little's law), it shares the machine with CPU cores and starts its program again
//! while they run, runs are deterministic, and bad GPU settings are refused by name.

use anyhow::Result;
use apusim_sim::run::{GpuProgram, Input, Inputs, Reopen};
use apusim_sim::timed::{sim_policy, SimOptions, SimResult};
use apusim_sim::SystemConfig;
use apusim_trace::{Access, Agent, BlockItem, BlockSource, Op, Stream, VecSource, WarpOp};
use apusim_workloads::gpgpu::{self, GpgpuParams};
use apusim_workloads::simt::{Alloc, Block, Buf, Kernel, Launch, SimtBlocks};

/// `y[i] = x[i] + y[i]` over `n` floats, one element per thread in blocks of one warp: a
/// streaming kernel with one compute instruction per three memory instructions.
struct Stream2 {
    x: Buf<f32>,
    y: Buf<f32>,
    launched: bool,
    mem: u64,
}

impl Kernel for Stream2 {
    fn next_launch(&mut self) -> Option<Launch> {
        (!std::mem::replace(&mut self.launched, true)).then_some(Launch {
            blocks: self.x.len().div_ceil(32),
            threads: 32,
        })
    }
    fn block(&mut self, blk: &mut Block<'_>) {
        let (x, y) = (&self.x, &mut self.y);
        let n = x.len();
        blk.phase(|w| {
            let s = w.first_global();
            let a = w.load_run(0, x, s, n);
            let b = w.load_run(8, y, s, n);
            w.compute(1);
            let v: [f32; 32] = std::array::from_fn(|l| a[l] + b[l]);
            w.store_run(16, y, s, n, &v);
        });
    }
    fn footprint(&self) -> u64 {
        self.mem
    }
}

fn stream2(n: usize) -> SimtBlocks<Stream2> {
    let mut al = Alloc::default();
    let x = al.buf(vec![1.0f32; n]);
    let y = al.buf(vec![2.0f32; n]);
    let k = Stream2 {
        x,
        y,
        launched: false,
        mem: al.allocated(),
    };
    SimtBlocks::new(k, "stream2", "test", 1500)
}

type MakeProgram = fn() -> Box<dyn BlockSource>;

/// Inputs: optional CPU traces (one per core) and a GPU program.
struct Mix {
    cpus: Vec<Vec<Access>>,
    gpu: Option<MakeProgram>,
}

impl Mix {
    fn gpu_input(make: MakeProgram) -> Input {
        let program = make();
        let header = program.header().clone();
        Input {
            name: "gpu test".into(),
            source: Box::new(VecSource::with_header(header, Vec::new())),
            remap: None,
            champsim: None,
            program: Some(GpuProgram::Kernels(program)),
        }
    }
}

impl Inputs for Mix {
    fn open(&self) -> Result<Vec<Input>> {
        let mut v: Vec<Input> = self
            .cpus
            .iter()
            .enumerate()
            .map(|(i, t)| Input {
                name: format!("cpu{i} test"),
                source: Box::new(VecSource::new(t.clone())),
                remap: Some(Agent::cpu(i as u8)),
                champsim: None,
                program: None,
            })
            .collect();
        if let Some(make) = self.gpu {
            v.push(Mix::gpu_input(make));
        }
        Ok(v)
    }
    fn describe(&self) -> String {
        "timed GPU test".into()
    }
    fn reopen(&self, index: usize) -> Option<Reopen> {
        let cpus = self.cpus.clone();
        let gpu = self.gpu;
        Some(Box::new(move || {
            let mut v = Mix {
                cpus: cpus.clone(),
                gpu,
            }
            .open()?;
            Ok(v.swap_remove(index))
        }))
    }
}

fn cuda(extra: &[&str]) -> SystemConfig {
    let set: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    SystemConfig::load_preset("4c1g-cuda", &set).unwrap()
}

fn run(cfg: &SystemConfig, mix: &Mix, instructions: Option<u64>) -> SimResult {
    let opts = SimOptions {
        instructions,
        ..SimOptions::default()
    };
    sim_policy(cfg, "lru", mix, &opts).unwrap()
}

/// A CPU core streaming over `span` bytes: misses all the way to DRAM.
fn cpu_stream(n: u64, span: u64) -> Vec<Access> {
    (0..n)
        .map(|i| {
            Access::new(
                Agent::cpu(0),
                Stream::CpuData,
                Op::Read,
                0x1000_0000 + (i * 64) % span,
                8,
            )
            .with_time(i * 4)
        })
        .collect()
}

#[test]
fn a_kernel_s_instructions_and_transactions_are_the_trace_generator_s() {
    let p = GpgpuParams {
        size: 1 << 16,
        ..GpgpuParams::default()
    };
    let make: MakeProgram = || {
        gpgpu::program(
            "reduction",
            &GpgpuParams {
                size: 1 << 16,
                ..GpgpuParams::default()
            },
        )
        .unwrap()
    };
    let r = run(
        &cuda(&[]),
        &Mix {
            cpus: vec![],
            gpu: Some(make),
        },
        None,
    );
    let g = r.gpu.as_ref().expect("a GPU result");
    // What the program holds, counted from its blocks.
    let (mut instrs, mut mem, mut txns, mut blocks) = (0u64, 0u64, 0u64, 0u64);
    let mut prog = make();
    while let Some(item) = prog.next_item().unwrap() {
        if let BlockItem::Block(b) = item {
            blocks += 1;
            for op in &b.ops {
                instrs += match *op {
                    WarpOp::Compute(n) | WarpOp::Shared(n) => u64::from(n),
                    WarpOp::Mem { count, .. } => {
                        mem += 1;
                        txns += u64::from(count);
                        1
                    }
                    WarpOp::Barrier => 1,
                };
            }
        }
    }
    assert_eq!(g.stats.warp_instructions, instrs);
    assert_eq!(g.stats.memory_instructions, mem);
    assert_eq!(g.stats.transactions, txns);
    assert_eq!(g.stats.blocks, blocks);
    // The trace of the same kernel holds the same transactions.
    let trace = apusim_trace::collect(&mut *gpgpu::generate("reduction", &p).unwrap()).unwrap();
    assert_eq!(txns, trace.len() as u64);
    // Every transaction entered a shader core's L1.
    let l1 = r
        .functional
        .levels
        .iter()
        .find(|l| l.name == "sm-l1d")
        .unwrap();
    let c = l1.counts.agent_total(Agent::GPU);
    assert_eq!(c.reads + c.writes, txns);
    // Every cycle of every core is accounted for.
    assert_eq!(
        g.stats.stalls.total(),
        6 * (g.cycles / 4) * 4,
        "{:?}",
        g.stats
    );
    assert_eq!(g.cores.len(), 6);
    let mut sum = apusim_timing::StallCycles::default();
    for c in &g.cores {
        assert_eq!(c.total(), (g.cycles / 4) * 4, "{c:?}");
        sum.add(c);
    }
    assert_eq!(sum, g.stats.stalls);
    assert!(g.cycles > 0 && g.ipc > 0.0 && g.ipc <= 6.0 * 0.5);
    assert_eq!(g.kernels.len() as u64, g.stats.launches);
    assert_eq!(g.restarts, 0);
}

#[test]
fn warps_hide_latency_until_dram_bandwidth_bounds_them() {
    // Bandwidth of a streaming kernel against resident warps per core. Little's law: with
    // few warps, bandwidth grows with them; with many, DRAM's peak bounds it.
    let peak = cuda(&[])
        .timing
        .dram_config()
        .unwrap()
        .spec
        .peak_bandwidth_gbps();
    let bw = |warps: &str| {
        let cfg = cuda(&[
            &format!("timing.gpu.warps_per_sm={warps}"),
            "timing.gpu.blocks_per_sm=64",
        ]);
        let make: MakeProgram = || Box::new(stream2(1 << 21));
        let r = run(
            &cfg,
            &Mix {
                cpus: vec![],
                gpu: Some(make),
            },
            None,
        );
        r.system.dram_bandwidth_gbps
    };
    let (b1, b2, b64) = (bw("1"), bw("2"), bw("64"));
    eprintln!("DRAM GB/s with 1, 2, 64 warps per core: {b1:.2} {b2:.2} {b64:.2} of {peak:.2}");
    assert!(b2 > 1.6 * b1, "{b1} {b2}");
    assert!(b64 >= 0.85 * peak, "{b64} GB/s of {peak} GB/s peak");
    assert!(b64 <= peak * 1.001);
}

#[test]
fn the_gpu_shares_the_machine_and_starts_again_while_cores_run() {
    let make: MakeProgram = || Box::new(stream2(1 << 14));
    let cpu = cpu_stream(200_000, 64 << 20);
    let mix = Mix {
        cpus: vec![cpu.clone()],
        gpu: Some(make),
    };
    let cfg = cuda(&["cpus=1"]);
    let shared = run(&cfg, &mix, Some(150_000));
    let g = shared.gpu.as_ref().unwrap();
    assert!(
        g.restarts > 0,
        "a short kernel starts again while the core runs"
    );
    // Its figures are those of its first run.
    assert_eq!(g.stats.programs, 1);
    let alone_gpu = run(
        &cfg,
        &Mix {
            cpus: vec![],
            gpu: Some(make),
        },
        Some(150_000),
    );
    let alone_cpu = run(
        &cfg,
        &Mix {
            cpus: vec![cpu],
            gpu: None,
        },
        Some(150_000),
    );
    let ga = alone_gpu.gpu.as_ref().unwrap();
    assert_eq!(ga.restarts, 0);
    assert!(g.cycles >= ga.cycles, "{} vs {}", g.cycles, ga.cycles);
    // The CPU's streaming misses queue behind the GPU's at DRAM.
    assert!(shared.cores[0].ipc < alone_cpu.cores[0].ipc);
    // Same inputs, same result, to the bit.
    let again = run(&cfg, &mix, Some(150_000));
    assert_eq!(
        serde_json::to_string(&again).unwrap(),
        serde_json::to_string(&shared).unwrap()
    );
}

#[test]
fn bad_gpu_settings_are_refused_by_name() {
    // 16×16-thread blocks (8 warps) with two 16×16 float tiles of scratchpad.
    let make: MakeProgram = || {
        gpgpu::program(
            "matrixmul",
            &GpgpuParams {
                size: 32,
                ..GpgpuParams::default()
            },
        )
        .unwrap()
    };
    let mix = Mix {
        cpus: vec![],
        gpu: Some(make),
    };
    // Refused when the configuration is read, or when the run starts.
    let err = |set: &[&str]| {
        let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
        match SystemConfig::load_preset("4c1g-cuda", &set) {
            Err(e) => format!("{e:#}"),
            Ok(cfg) => {
                let opts = SimOptions::default();
                format!("{:#}", sim_policy(&cfg, "lru", &mix, &opts).unwrap_err())
            }
        }
    };
    let m = err(&["timing.gpu.sms=8"]);
    assert!(m.contains("sm-l1d") && m.contains("8 shader cores"), "{m}");
    let m = err(&["timing.gpu.warps_per_sm=4"]);
    assert!(m.contains("launch 0 needs 8 warps"), "{m}");
    let m = err(&["timing.gpu.shared_bytes_per_sm=100"]);
    assert!(m.contains("2048 scratchpad bytes"), "{m}");
    let m = err(&["timing.gpu.warp_per_sm=4"]);
    assert!(m.contains("warps_per_sm"), "{m}");
    let m = err(&["timing.gpu.scheduler=\"fifo\""]);
    assert!(m.contains("lrr") && m.contains("gto"), "{m}");
}

#[test]
fn a_sampled_run_extrapolates_the_gpu_s_cycles() {
    // A reduction kernel alone on the GPU, detailed and sampled (short periods, so the
    // program spans many): the sampled execution cycles follow the detailed ones, and a
    // large share of the program is warmed rather than timed.
    let make: MakeProgram = || {
        gpgpu::program(
            "reduction",
            &GpgpuParams {
                size: 1 << 21,
                ..GpgpuParams::default()
            },
        )
        .unwrap()
    };
    let cfg = cuda(&[]);
    let mix = Mix {
        cpus: vec![],
        gpu: Some(make),
    };
    let detailed = run(&cfg, &mix, None);
    let opts = SimOptions {
        sample: Some(apusim_sim::timed::SampleSpec {
            period: 100_000,
            warmup: Some(10_000),
            unit: 2_000,
        }),
        ..SimOptions::default()
    };
    let sampled = sim_policy(&cfg, "lru", &mix, &opts).unwrap();
    let (d, s) = (detailed.gpu.unwrap(), sampled.gpu.unwrap());
    let err = s.cycles as f64 / d.cycles as f64 - 1.0;
    eprintln!(
        "reduction: detailed {} GPU cycles, sampled {} ({:+.1}%), {} of {} warp instructions warmed",
        d.cycles,
        s.cycles,
        100.0 * err,
        s.stats.warmed_instructions,
        s.stats.warmed_instructions + s.stats.warp_instructions
    );
    assert!(s.stats.warmed_instructions > 2 * s.stats.warp_instructions);
    assert_eq!(
        s.stats.warmed_instructions + s.stats.warp_instructions,
        d.stats.warp_instructions
    );
    assert!(err.abs() < 0.15, "{err}");
    // The windows' work rate with its interval: the detailed run has none; the sampled
    // one's rests on every window and, on this kernel, holds the detailed cycles.
    assert!(d.work_rate.is_none());
    let rate = s.work_rate.expect("a sampled GPU's work rate");
    eprintln!(
        "reduction: work per cycle {:.4} ± {:.4} ({} windows, ±{:.1}%)",
        rate.value,
        rate.half_width,
        rate.windows,
        100.0 * rate.relative_error()
    );
    assert!(rate.windows >= 2 && rate.half_width > 0.0);
    assert!(
        err.abs() <= rate.relative_error(),
        "detailed cycles {err:+.3} off, outside ±{:.3}",
        rate.relative_error()
    );
}

/// On a system whose GPU has no cache for the shader's data (preset `4c1g`, drp §3's 3D GPU),
/// the cores' transactions share one table of `timing.gpu_outstanding` entries. A core whose
/// transaction is refused because other cores fill that table resumes when any of them
/// completes, though it has nothing in flight of its own.
#[test]
fn cores_refused_by_a_shared_table_resume_on_other_cores_completions() {
    let cfg = SystemConfig::load_preset(
        "4c1g",
        &[
            "cpus=1".to_string(),
            "timing.gpu.sms=6".to_string(),
            "timing.gpu_outstanding=4".to_string(),
        ],
    )
    .unwrap();
    let make: MakeProgram = || Box::new(stream2(1 << 14));
    let r = run(
        &cfg,
        &Mix {
            cpus: vec![],
            gpu: Some(make),
        },
        None,
    );
    let g = r.gpu.expect("the GPU ran");
    assert!(g.cycles > 0);
    assert_eq!(
        g.stats.loads_done, g.stats.load_transactions,
        "every load returned"
    );
    assert!(
        g.stats.lsu_busy_cycles > 0,
        "the shared table refused transactions"
    );
}

/// gpu-access-criticality §4.1.2 on the timed GPU (`timing.gpu.criticality`): bottlenecked
/// cores mark the transactions of their stalling loads critical, non-critical ones that miss
/// the LLC go around it, runs are deterministic, and with the switch off nothing changes.
#[test]
fn shader_criticality_marks_and_bypasses_deterministically() {
    let make: MakeProgram = || Box::new(stream2(1 << 14));
    let mix = Mix {
        cpus: vec![],
        gpu: Some(make),
    };
    let on = cuda(&["timing.gpu.criticality=true", "timing.gpu.crit_period=1000"]);
    let r = run(&on, &mix, None);
    let g = r.gpu.as_ref().unwrap();
    let k = g
        .shader_criticality
        .as_ref()
        .expect("the hardware's counters");
    eprintln!("{k:?}");
    assert!(k.marks.evaluations > 0);
    assert!(k.marks.bottlenecked_core_periods > 0, "{k:?}");
    assert!(
        k.marks.critical() > 0 && k.marks.non_critical() > 0,
        "{k:?}"
    );
    assert!(!k.marks.critical_pcs.is_empty());
    assert!(k.llc_bypasses > 0, "{k:?}");
    // Every marked request missed its core's L1; the LLC counts the bypasses among its own.
    let level = |name: &str| {
        r.functional
            .levels
            .iter()
            .find(|l| l.name == name)
            .unwrap()
            .counts
            .agent_total(Agent::GPU)
    };
    let l1 = level("sm-l1d");
    assert!(k.marks.critical() + k.marks.non_critical() <= l1.reads + l1.writes);
    assert!(level("llc").bypasses >= k.llc_bypasses);
    // Same inputs, same result, to the bit.
    let again = run(&on, &mix, None);
    assert_eq!(
        serde_json::to_string(&again).unwrap(),
        serde_json::to_string(&r).unwrap()
    );
    // Off (by default or said so): no marks, no bypasses, the same run.
    let off = run(&cuda(&["timing.gpu.criticality=false"]), &mix, None);
    let plain = run(&cuda(&[]), &mix, None);
    assert!(off.gpu.as_ref().unwrap().shader_criticality.is_none());
    assert_eq!(level_bypasses(&off), 0);
    assert_eq!(
        serde_json::to_string(&off).unwrap(),
        serde_json::to_string(&plain).unwrap()
    );
}

fn level_bypasses(r: &SimResult) -> u64 {
    r.functional
        .levels
        .iter()
        .find(|l| l.name == "llc")
        .unwrap()
        .counts
        .agent_total(Agent::GPU)
        .bypasses
}

#[test]
fn tap_core_sampling_and_helm_hear_each_shader_core_s_progress() {
    // TAP's core-sampling controller compares the instructions of two sampled shader cores
    // per period (tap §3.1), HeLM its two bypass-rate cores and their ready warps: the engine
    // reports every core's progress, so with short periods both decide in a timed run.
    let make: MakeProgram = || Box::new(stream2(1 << 15));
    let mix = Mix {
        cpus: vec![cpu_stream(50_000, 64 << 20)],
        gpu: Some(make),
    };
    let cfg = cuda(&["cpus=1", "llc.params.period_cycles=20000"]);
    let opts = SimOptions {
        instructions: Some(40_000),
        ..SimOptions::default()
    };
    let tap = sim_policy(&cfg, "tap-ucp", &mix, &opts).unwrap();
    assert!(tap.policy_stat("periods").unwrap() >= 2.0);
    assert!(
        tap.policy_stat("csc_decisions").unwrap() >= 1.0,
        "core sampling never decided: {:?}",
        tap.policy_stats
    );
    let helm = sim_policy(&cfg, "helm", &mix, &opts).unwrap();
    assert!(
        helm.policy_stat("tolerance_decisions").unwrap() >= 1.0,
        "HeLM never judged the GPU's latency tolerance: {:?}",
        helm.policy_stats
    );
}
