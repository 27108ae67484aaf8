//! adaptive-gpu-l1-bypassing.txt's timing results: each GPGPU kernel alone on the timed SIMT
//! GPU of the paper's Table 1 (preset `bypass`: eight 1 GHz compute units, 16 KB 8-way L1D,
//! 256 KB L2, 4 MB memory-side L3, tree pseudo-LRU everywhere, oldest-first warp scheduling),
//! under the L1 configurations a figure compares, with execution cycles as the paper's
//! performance ("the execution time of benchmarks on the baseline system divided by the
//! execution time on the evaluated system", §5.2).
//!
//! | study | figure | bars | reported |
//! |---|---|---|---|
//! | `bypass-fig2` | Fig. 2 | 16 KB (baseline), 32, 64, 128, 256 KB L1D | speedup over 16 KB, L1 misses relative |
//! | `bypass-fig9` | Figs. 8, 9 and Table 3 | baseline, PC-based, counter-based, 32 KB | speedup, L1 misses relative, L1 static energy |
//! | `bypass-fig10` | Fig. 10 | baseline | L1 hit rate; Table 2's memory intensity and the share of cycles waiting for memory, which say how much an L1 can matter |
//! | `bypass-fig12` | Fig. 12 | nw and nw-nospm × baseline, PC-based, 32 KB, 64 KB | execution time relative to nw on the baseline |
//!
//! The larger L1s keep eight ways (more sets), as the paper's "different cache sizes" of one
//! design. The predictors are those of `apusim gpu-l1` (`bypass_predictor` on the L1D: 128
//! 4-bit counters, threshold 8, the L2's bypassBits; the counter-based one with its 128 × 128
//! table), on the same pseudo-LRU L1.
//!
//! **Static energy** (Table 3): each L1's static power times the run time, summed over the
//! eight L1s: 7.538627 mW without and 7.72904 mW with the PC-based predictor. Table 3 gives
//! no power for the other bars, so only those two carry the metric.
//!
//! **Means** are geometric over the kernels for speedups and relative counts, arithmetic for
//! hit rates (the paper's "on average" figures do not say which mean).

use crate::jobs::{alone_inputs, kernel_job, TraceDir};
use crate::runs::{PlannedInput, PlannedRun};
use crate::timed::Options;
use crate::{with_means, Mean, Record, StudyOutput};
use anyhow::{bail, Context, Result};
use apusim_sim::timed::{SimOptions, SimResult};
use apusim_sim::SystemConfig;

/// The system of every figure.
pub const PRESET: &str = "bypass";

/// The L1 data cache of preset [`PRESET`] (its `gpu.caches` entry).
const L1D: &str = "cu-l1d";

/// Table 2's thirteen benchmarks, in its order (by memory intensity).
pub const PAPER_KERNELS: &[&str] = apusim_workloads::gpgpu::BYPASS_TABLE2;

/// One figure of the paper's timing results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    Fig2,
    Fig9,
    Fig10,
    Fig12,
}

/// One bar: its label and the `--set` overrides of the L1D it makes.
struct Bar {
    label: &'static str,
    set: &'static [&'static str],
    /// The L1s carry the PC-based predictor (Table 3's "bypassing" static power).
    pc_predictor: bool,
}

const BASELINE: Bar = Bar {
    label: "Baseline",
    set: &[],
    pc_predictor: false,
};
const PC: Bar = Bar {
    label: "PC-based",
    set: &["gpu.caches.cu-l1d.bypass_predictor=pc"],
    pc_predictor: true,
};
const COUNTER: Bar = Bar {
    label: "Counter-based",
    set: &["gpu.caches.cu-l1d.bypass_predictor=counter"],
    pc_predictor: false,
};

/// A baseline L1D of `kb` KB (eight ways).
const fn size(label: &'static str, set: &'static [&'static str]) -> Bar {
    Bar {
        label,
        set,
        pc_predictor: false,
    }
}

const KB32: Bar = size("32KB", &["gpu.caches.cu-l1d.geometry=32K,8,64"]);
const KB64: Bar = size("64KB", &["gpu.caches.cu-l1d.geometry=64K,8,64"]);
const KB128: Bar = size("128KB", &["gpu.caches.cu-l1d.geometry=128K,8,64"]);
const KB256: Bar = size("256KB", &["gpu.caches.cu-l1d.geometry=256K,8,64"]);

/// Table 3's static power of one L1 (mW): the 16 KB baseline and with the PC-based predictor,
/// as `apusim gpu-l1` configures them.
fn static_mw() -> (f64, f64) {
    let e = apusim_gpu::config::EnergyConfig::default();
    (e.base_static_mw, e.bypass_static_mw)
}

impl Figure {
    /// The study's name (`apusim study NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Figure::Fig2 => "bypass-fig2",
            Figure::Fig9 => "bypass-fig9",
            Figure::Fig10 => "bypass-fig10",
            Figure::Fig12 => "bypass-fig12",
        }
    }

    /// The kernels run when none are named: Table 2's, or nw with and without its
    /// scratchpad for Fig. 12.
    pub fn default_kernels(self) -> Vec<String> {
        let k: &[&str] = match self {
            Figure::Fig12 => &["nw", "nw-nospm"],
            _ => PAPER_KERNELS,
        };
        k.iter().map(|s| s.to_string()).collect()
    }

    /// The kernels of a `--quick` check: the first default one (nw and nw-nospm for
    /// Fig. 12, which needs both).
    pub fn quick_kernels(self) -> Vec<String> {
        let keep = if self == Figure::Fig12 { 2 } else { 1 };
        self.default_kernels().into_iter().take(keep).collect()
    }

    fn bars(self) -> &'static [Bar] {
        match self {
            Figure::Fig2 => &[BASELINE, KB32, KB64, KB128, KB256],
            Figure::Fig9 => &[BASELINE, PC, COUNTER, KB32],
            Figure::Fig10 => &[BASELINE],
            Figure::Fig12 => &[BASELINE, PC, KB32, KB64],
        }
    }

    fn title(self) -> &'static str {
        match self {
            Figure::Fig2 => {
                "Speedup of larger L1 data caches over the 16 KB baseline, and their L1 misses \
                 relative to it (adaptive-gpu-l1-bypassing Fig. 2)"
            }
            Figure::Fig9 => {
                "Speedup of the PC-based and counter-based bypass predictors and of a 32 KB L1 \
                 over the 16 KB baseline, their L1 misses relative to it (Fig. 8, timed), and \
                 the L1s' static energy from run time (Table 3) (adaptive-gpu-l1-bypassing \
                 Fig. 9)"
            }
            Figure::Fig10 => {
                "L1 data cache hit rate of each benchmark on the 16 KB baseline \
                 (adaptive-gpu-l1-bypassing Fig. 10), with its memory intensity (global \
                 memory instructions per 1000 warp instructions, Table 2's MI) and the share \
                 of shader-core cycles waiting for memory"
            }
            Figure::Fig12 => {
                "Execution time of nw and nw-nospm on the baseline, with the PC-based \
                 predictor and with 32 KB and 64 KB L1s, relative to nw on the baseline \
                 (adaptive-gpu-l1-bypassing Fig. 12)"
            }
        }
    }

    fn paper(self) -> &'static str {
        match self {
            Figure::Fig2 => {
                "larger L1s speed the benchmarks up on average (\"more powerful caching \
                 systems have the capability to increase the GPU's performance\")"
            }
            Figure::Fig9 => {
                "PC-based: bfs 1.13, spmv 1.09, matrixmul 1.06, backprop 1.043, srad 1.04; \
                 sort, dct, lud about 1.03 with every technique; kmeans, histogram, bitonic, \
                 nw about 1; PC-based beats counter-based by 2.3% and the 32 KB L1 on \
                 average; static power +2.5% with the predictor"
            }
            Figure::Fig10 => {
                "matrixmul, bfs, spmv: intermediate or low hit rates; backprop and srad \
                 intermediate to low; Table 2's MI from 395.6 (matrixmul) to 14.2 (lud)"
            }
            Figure::Fig12 => {
                "nw-nospm takes 7 times as long as nw; bypassing closes 30% of the gap, more \
                 than a 64 KB L1; nw changes little with any configuration"
            }
        }
    }
}

/// What one run gives a figure.
#[derive(Clone, Copy, Debug)]
struct Point {
    cycles: f64,
    l1_misses: f64,
    l1_hit_rate: f64,
    /// Global memory instructions per thousand warp instructions (Table 2's MI).
    memory_intensity: f64,
    /// Shader-core cycles spent waiting for memory (all warps on loads, or the load/store
    /// unit full) over all shader-core cycles.
    memory_stall_share: f64,
}

/// The execution cycles and L1D counts of a run of a kernel alone.
fn point(r: &SimResult) -> Result<Point> {
    let g = r.gpu.as_ref().context("a run without a timed GPU")?;
    let l1 = r
        .functional
        .level(L1D)
        .with_context(|| format!("no GPU cache `{L1D}` in the run"))?
        .counts
        .class_total(true);
    let accesses = l1.reads + l1.writes;
    let st = &g.stats.stalls;
    let all = st.issued + st.memory + st.issue + st.barrier + st.idle;
    Ok(Point {
        memory_intensity: g.stats.memory_instructions as f64 * 1000.0
            / g.stats.warp_instructions.max(1) as f64,
        memory_stall_share: (st.memory + st.issue) as f64 / all.max(1) as f64,
        cycles: g.cycles as f64,
        l1_misses: (l1.read_misses + l1.write_misses) as f64,
        l1_hit_rate: if accesses == 0 {
            f64::NAN
        } else {
            (accesses - l1.read_misses - l1.write_misses) as f64 / accesses as f64
        },
    })
}

/// Static energy of the system's L1s over `cycles` GPU cycles, in µJ: Table 3's power of one
/// L1 (with or without the predictor) times the L1 count times the run time.
fn static_energy_uj(cfg: &SystemConfig, cycles: f64, pc_predictor: bool) -> Result<f64> {
    let l1s = cfg
        .gpu
        .caches
        .iter()
        .find(|c| c.name == L1D)
        .with_context(|| format!("preset `{PRESET}` has no GPU cache `{L1D}`"))?
        .units as f64;
    let (base, bypass) = static_mw();
    let mw = if pc_predictor { bypass } else { base };
    let seconds = cycles / (f64::from(cfg.gpu_clock_mhz) * 1e6);
    // mW × s = mJ; × 1000 for µJ.
    Ok(mw * l1s * seconds * 1000.0)
}

/// Run figure `fig` over `o.mixes` (GPGPU kernel names; default [`Figure::default_kernels`]),
/// each at `o.scale` times its default elements. A kernel runs to its end, so
/// `o.instructions` and `o.warmup` are refused, and `o.frames` with them.
pub fn run(fig: Figure, o: &Options) -> Result<StudyOutput> {
    let name = fig.name();
    let kernels = o.mixes.clone().unwrap_or_else(|| fig.default_kernels());
    if kernels.is_empty() {
        bail!("{name}: give at least one GPGPU kernel");
    }
    if o.instructions.is_some() || o.warmup > 0 {
        bail!("{name}: each kernel runs to its end; --instructions and --warmup do not apply");
    }
    if o.sample {
        bail!("{name}: each kernel runs to its end in detail; --sample does not apply");
    }
    if o.frames != apusim_workloads::mixes::Frames::Scale {
        bail!("{name}: the kernels are sized by --scale; --frames is a rendering job's");
    }
    if fig == Figure::Fig12 && !kernels.iter().any(|k| k == "nw") {
        bail!("{name}: times are relative to nw on the baseline, so the kernels must include nw");
    }
    let jobs = kernels
        .iter()
        .map(|k| kernel_job(k, o.scale, o.seed).with_context(|| format!("{name}: --mixes")))
        .collect::<Result<Vec<_>>>()?;
    let bars = fig.bars();
    let configs: Vec<SystemConfig> = bars
        .iter()
        .map(|b| {
            let set: Vec<String> = o
                .overrides
                .iter()
                .cloned()
                .chain(b.set.iter().map(|s| s.to_string()))
                .collect();
            let mut cfg = SystemConfig::load_preset(PRESET, &set)
                .with_context(|| format!("{name}: bar {}", b.label))?;
            cfg.cpus = 0;
            cfg.seed = o.seed;
            Ok(cfg)
        })
        .collect::<Result<_>>()?;
    let cases: Vec<(usize, usize)> = (0..jobs.len())
        .flat_map(|k| (0..bars.len()).map(move |b| (k, b)))
        .collect();
    o.runs.plan(|| {
        let plan = |&(k, b): &(usize, usize)| {
            let set = o
                .overrides
                .iter()
                .cloned()
                .chain(bars[b].set.iter().map(|s| s.to_string()));
            PlannedRun::alone(
                PRESET,
                set.collect(),
                &configs[b],
                &configs[b].llc.policy,
                PlannedInput::Kernel(kernels[k].clone()),
                (o.scale, o.seed),
            )
        };
        Ok(cases.iter().map(plan).collect())
    })?;
    let traces = TraceDir::new(o.cache.as_deref())?;
    let inputs = alone_inputs(traces.path(), &jobs)?;
    let points: Vec<Point> = crate::par_counted(&cases, "timed runs", |&(k, b)| {
        let r = o
            .runs
            .sim(
                &configs[b],
                &configs[b].llc.policy,
                &inputs[k],
                &SimOptions::default(),
            )
            .with_context(|| format!("{name}: {} ({})", kernels[k], bars[b].label))?;
        point(&r)
    })?;
    let at = |k: usize, b: usize| points[k * bars.len() + b];
    let mut ratios = Vec::new();
    let mut rates = Vec::new();
    let rec = |workload: &str, policy: &str, metric: &str, value: f64| {
        Record::new(PRESET, workload, policy, metric, value)
    };
    let nw = kernels.iter().position(|k| k == "nw");
    for (k, kernel) in kernels.iter().enumerate() {
        let base = at(k, 0);
        for (b, bar) in bars.iter().enumerate() {
            let p = at(k, b);
            match fig {
                Figure::Fig10 => {
                    rates.push(rec(kernel, bar.label, "l1_hit_rate", p.l1_hit_rate));
                    rates.push(rec(
                        kernel,
                        bar.label,
                        "memory_intensity",
                        p.memory_intensity,
                    ));
                    rates.push(rec(
                        kernel,
                        bar.label,
                        "memory_stall_share",
                        p.memory_stall_share,
                    ));
                }
                Figure::Fig12 => {
                    let nw_base = at(nw.expect("checked above"), 0).cycles;
                    ratios.push(rec(kernel, bar.label, "time_norm", p.cycles / nw_base));
                    ratios.push(rec(kernel, bar.label, "cycles", p.cycles));
                }
                Figure::Fig2 | Figure::Fig9 => {
                    ratios.push(rec(kernel, bar.label, "speedup", base.cycles / p.cycles));
                    ratios.push(rec(
                        kernel,
                        bar.label,
                        "l1_misses_norm",
                        p.l1_misses / base.l1_misses,
                    ));
                    rates.push(rec(kernel, bar.label, "l1_hit_rate", p.l1_hit_rate));
                }
            }
            if fig == Figure::Fig9 && (b == 0 || bar.pc_predictor) {
                let e = static_energy_uj(&configs[b], p.cycles, bar.pc_predictor)?;
                let e0 = static_energy_uj(&configs[0], base.cycles, false)?;
                ratios.push(rec(kernel, bar.label, "l1_static_energy_norm", e / e0));
                rates.push(rec(kernel, bar.label, "l1_static_energy_uj", e));
            }
        }
    }
    let mut records = if fig == Figure::Fig12 {
        ratios
    } else {
        with_means(ratios, Mean::Geometric)
    };
    let rates = with_means(rates, Mean::Arithmetic);
    // Metrics in a fixed order whatever the mean each takes.
    records.extend(rates);
    let order: Vec<String> = crate::first_seen(records.iter().map(|r| r.metric.clone()));
    let key = |r: &Record| {
        (
            order.iter().position(|m| *m == r.metric),
            r.workload == "mean",
        )
    };
    records.sort_by_key(key);
    Ok(StudyOutput {
        study: name.into(),
        title: format!(
            "{}; preset {PRESET}; scale {}, seed {}; kernels run to their end{}",
            fig.title(),
            o.scale,
            o.seed,
            crate::overrides_note(&o.overrides)
        ),
        paper: fig.paper().into(),
        records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use apusim_sim::timed::sim_policy;

    fn options(kernels: &[&str]) -> Options {
        Options {
            mixes: Some(kernels.iter().map(|k| k.to_string()).collect()),
            ..Options::default()
        }
    }

    #[test]
    fn the_baseline_against_itself_is_exactly_one_and_the_points_are_the_direct_runs() {
        let out = run(Figure::Fig9, &options(&["spmv"])).unwrap();
        assert_eq!(out.get(PRESET, "spmv", "Baseline", "speedup"), 1.0);
        assert_eq!(out.get(PRESET, "spmv", "Baseline", "l1_misses_norm"), 1.0);
        assert_eq!(
            out.get(PRESET, "spmv", "Baseline", "l1_static_energy_norm"),
            1.0
        );
        // The PC bar equals a direct `apusim sim --kernel spmv --preset bypass` with the
        // predictor on.
        let dir = TraceDir::new(None).unwrap();
        let inputs = alone_inputs(dir.path(), &[kernel_job("spmv", 1, 1).unwrap()]).unwrap();
        let direct = |set: &[&str]| {
            let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
            let mut cfg = SystemConfig::load_preset(PRESET, &set).unwrap();
            cfg.cpus = 0;
            let r = sim_policy(&cfg, "plru", &inputs[0], &SimOptions::default()).unwrap();
            point(&r).unwrap()
        };
        let base = direct(&[]);
        let pc = direct(PC.set);
        let speedup = out.get(PRESET, "spmv", "PC-based", "speedup");
        assert_eq!(speedup, base.cycles / pc.cycles);
        assert_ne!(base.cycles, pc.cycles, "the predictor changed nothing");
        // Static energy: Table 3's powers over the measured times.
        let e = out.get(PRESET, "spmv", "PC-based", "l1_static_energy_norm");
        let want = (static_mw().1 * pc.cycles) / (static_mw().0 * base.cycles);
        assert!((e - want).abs() < 1e-12, "{e} against {want}");
        assert!(out
            .value(PRESET, "spmv", "32KB", "l1_static_energy_norm")
            .is_none());
    }

    /// adaptive-gpu-l1-bypassing §5.2's mechanism on Table 2's matrixmul: a warp re-reads its
    /// two rows of A for sixteen consecutive `k` while each `k` brings a line of B, so with
    /// enough warps resident the B lines evict A lines before their reuse; the PC-based
    /// predictor learns the zero-reuse loads and bypasses them, and the L1 misses less. With
    /// n = 192 (144 work-groups of 256 threads on eight CUs of 80 warp contexts) the L1
    /// thrashes; with one work-group per CU it does not, and the predictor has nothing to do.
    #[test]
    fn the_pc_predictor_cuts_matrixmuls_l1_misses_where_streaming_lines_evict_reused_ones() {
        use apusim_registry::Value;
        use apusim_workloads::{gpgpu, mixes};
        let dir = TraceDir::new(None).unwrap();
        let misses = |n: u64, set: &[&str]| {
            let (k, params) = gpgpu::params(
                "matrixmul-nospm",
                &[("size", Value::Int(n)), ("seed", Value::Int(1))],
            )
            .unwrap();
            let job = mixes::Job {
                label: format!("gpu {}", k.name),
                spec: mixes::JobSpec::Gpgpu {
                    kernel: k.name,
                    params,
                },
            };
            let inputs = alone_inputs(dir.path(), &[job]).unwrap();
            let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
            let mut cfg = SystemConfig::load_preset(PRESET, &set).unwrap();
            cfg.cpus = 0;
            let r = sim_policy(&cfg, "plru", &inputs[0], &SimOptions::default()).unwrap();
            let l1 = r.functional.level(L1D).unwrap().counts.class_total(true);
            (l1.read_misses, l1.bypasses)
        };
        let (base, _) = misses(192, &[]);
        let (pc, bypassed) = misses(192, PC.set);
        assert!(bypassed > 0, "nothing bypassed");
        assert!(
            (pc as f64) < 0.99 * base as f64,
            "PC-based: {pc} L1 read misses against the baseline's {base}"
        );
        // Nine work-groups on eight CUs: every line of A and B fits, nothing is evicted
        // before its reuse, and bypassing cannot remove a miss.
        let (base, _) = misses(16 * 3, &[]);
        let (pc, _) = misses(16 * 3, PC.set);
        assert!(
            pc >= base,
            "PC-based: {pc} against {base} on a fitting matrix"
        );
    }

    #[test]
    fn a_larger_l1_misses_less_and_nw_without_scratchpad_is_slower() {
        let out = run(Figure::Fig12, &options(&["nw", "nw-nospm"])).unwrap();
        assert_eq!(out.get(PRESET, "nw", "Baseline", "time_norm"), 1.0);
        let nospm = out.get(PRESET, "nw-nospm", "Baseline", "time_norm");
        assert!(nospm > 1.5, "nw-nospm at {nospm} of nw's time");
        // A 64 KB L1 holds more of nw-nospm's neighbouring tiles than a 16 KB one.
        let big = out.get(PRESET, "nw-nospm", "64KB", "time_norm");
        assert!(big < nospm, "64 KB: {big} against {nospm}");
        assert!(!out.records.iter().any(|r| r.workload == "mean"));
    }

    #[test]
    fn refusals_name_the_figure() {
        let e = run(Figure::Fig12, &options(&["nw-nospm"])).unwrap_err();
        assert!(format!("{e:#}").contains("must include nw"), "{e:#}");
        let e = run(Figure::Fig9, &options(&["matrixmull"])).unwrap_err();
        let e = format!("{e:#}");
        assert!(
            e.contains("bypass-fig9") && e.contains("did you mean `matrixmul`"),
            "{e}"
        );
        assert!(run(Figure::Fig2, &options(&[])).is_err());
        let e = run(
            Figure::Fig10,
            &Options {
                instructions: Some(1000),
                ..options(&["nw"])
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("--instructions"), "{e}");
    }
}
