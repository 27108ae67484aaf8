//! adaptive-gpu-l1-bypassing.txt's functional figures (§2.2, §5.1, §5.3): every listed GPGPU
//! kernel through the GPU memory side of its Table 1 (`apusim_gpu`, preset `table1`: eight
//! SMs with 16 KB 8-way L1Ds, 256 KB L2, 4 MB memory-side L3, tree pseudo-LRU) under each L1
//! configuration a figure compares, counting accesses rather than cycles (the timed figures
//! are [`crate::bypass_perf`]'s).
//!
//! | study | figure | configurations | metrics |
//! |---|---|---|---|
//! | `bypass-fig1` | Fig. 1 | Baseline | `zero_reuse_fraction`, `once_fraction`, `l1_evictions` |
//! | `bypass-fig6` | Fig. 6 | PC-based | `bypass_ratio` (bypasses per read miss), `l1_read_misses`, `bypasses` |
//! | `bypass-fig7` | Fig. 7 | Baseline, PC-based | `l1_dynamic_energy_norm`, `l1_dynamic_energy_nj` |
//! | `bypass-fig8` | Fig. 8 | Baseline, PC-based, Counter-based, 32KB | `l1_misses_norm`, `l1_misses` |
//! | `bypass-fig11` | Fig. 11 | PC-based | `coverage`, `fp_rate_paper` and `fp_rate_sdbp` (§5.3's two definitions), `predictions`, `corrected`, `table_entries_per_l1` |
//! | `bypass-nw` | §5.3.1 | nw and nw-nospm × Baseline, PC-based, 32KB, 64KB | `l1_misses_norm` (to the first kernel, nw, on the Baseline), `l1_misses`, `l1_hit_rate`, `bypass_ratio` |
//!
//! The configurations are `apusim gpu-l1`'s: `--set` overrides apply to preset `table1`
//! first (its keys: `predictor`, `l1`, `sms`, `l1.pc.threshold`, ...), then each bar sets its
//! predictor and scales the L1's size at the same ways (more sets), as the paper's "different
//! cache sizes" of one design. The mean over the kernels is arithmetic, as the paper's "on
//! average" figures; `bypass-nw` has none (two different programs). Every (kernel,
//! configuration) is a run of its own ([`crate::gpu_l1`], through [`Runs::gpu_l1`], so `--db`
//! keeps it and `--print-spec` lists it as a sweep's `gpu-l1` point: preset `table1`, the
//! overrides, then the bar's `l1` and `predictor`) on the rayon pool, each generating its
//! kernel afresh, so results do not depend on the number of threads.

use crate::gpu_l1::{GpuL1Input, GpuL1Run};
use crate::runs::{PlannedMode, PlannedRun, Runs};
use crate::{par_counted, with_means, Mean, Record, StudyOutput};
use anyhow::{bail, Context, Result};
use apusim_gpu::config::{GpuConfig, PredictorKind};
use apusim_gpu::kernel::to_csv;
use apusim_gpu::RunResult;
use apusim_workloads::gpgpu;
use std::path::PathBuf;

/// The GPU preset every figure starts from.
pub const PRESET: &str = "table1";

/// One functional figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    Fig1,
    Fig6,
    Fig7,
    Fig8,
    Fig11,
    Nw,
}

/// What a figure runs on.
#[derive(Clone, Debug)]
pub struct Options {
    /// Kernels (`None`: the figure's own, [`Figure::default_kernels`]).
    pub kernels: Option<Vec<String>>,
    /// Problem size of every kernel (`None`: each kernel's default), checked by each kernel's
    /// registry entry.
    pub size: Option<u64>,
    pub seed: u64,
    /// `--set` overrides of preset [`PRESET`].
    pub overrides: Vec<String>,
    /// Where to write every run's counters (the columns of `apusim gpu-l1 run --csv`).
    pub runs_csv: Option<PathBuf>,
    /// How the runs are made: run, kept in a results database, or only listed.
    pub runs: Runs,
}

/// One bar: its label, the L1 size as a multiple of the base's, and the predictor.
#[derive(Clone, Copy, Debug)]
struct Bar {
    label: &'static str,
    l1_scale: u64,
    predictor: PredictorKind,
}

const BASELINE: Bar = Bar {
    label: "Baseline",
    l1_scale: 1,
    predictor: PredictorKind::None,
};
const PC: Bar = Bar {
    label: "PC-based",
    l1_scale: 1,
    predictor: PredictorKind::Pc,
};
const COUNTER: Bar = Bar {
    label: "Counter-based",
    l1_scale: 1,
    predictor: PredictorKind::Counter,
};
const X2: Bar = Bar {
    label: "32KB",
    l1_scale: 2,
    predictor: PredictorKind::None,
};
const X4: Bar = Bar {
    label: "64KB",
    l1_scale: 4,
    predictor: PredictorKind::None,
};

impl Figure {
    /// The study's name (`apusim study NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Figure::Fig1 => "bypass-fig1",
            Figure::Fig6 => "bypass-fig6",
            Figure::Fig7 => "bypass-fig7",
            Figure::Fig8 => "bypass-fig8",
            Figure::Fig11 => "bypass-fig11",
            Figure::Nw => "bypass-nw",
        }
    }

    fn bars(self) -> &'static [Bar] {
        match self {
            Figure::Fig1 => &[BASELINE],
            Figure::Fig6 | Figure::Fig11 => &[PC],
            Figure::Fig7 => &[BASELINE, PC],
            Figure::Fig8 => &[BASELINE, PC, COUNTER, X2],
            Figure::Nw => &[BASELINE, PC, X2, X4],
        }
    }

    /// The kernels of the figure when none are named: Table 2's thirteen, or nw and
    /// nw-nospm.
    pub fn default_kernels(self) -> Vec<String> {
        let k: &[&str] = match self {
            Figure::Nw => &["nw", "nw-nospm"],
            _ => gpgpu::BYPASS_TABLE2,
        };
        k.iter().map(|s| s.to_string()).collect()
    }

    fn title(self) -> &'static str {
        match self {
            Figure::Fig1 => "share of L1 evictions of lines never reused, and of lines accessed once (adaptive-gpu-l1-bypassing Fig. 1)",
            Figure::Fig6 => "read misses bypassed by the PC-based predictor (adaptive-gpu-l1-bypassing Fig. 6)",
            Figure::Fig7 => "L1 dynamic energy, relative to the baseline (adaptive-gpu-l1-bypassing Fig. 7)",
            Figure::Fig8 => "L1 misses relative to the 16 KB baseline (adaptive-gpu-l1-bypassing Fig. 8)",
            Figure::Fig11 => "the PC-based predictor's coverage and false positives (adaptive-gpu-l1-bypassing Fig. 11)",
            Figure::Nw => "nw and nw-nospm: L1 misses relative to nw on the baseline (adaptive-gpu-l1-bypassing §5.3.1)",
        }
    }

    fn paper(self) -> &'static str {
        match self {
            Figure::Fig1 => "Fig. 1 (16 KB, pseudo-LRU): zero-reuse average 46%, maximum 84%",
            Figure::Fig6 => "Fig. 6, §5.1: 58% of fills prevented on average; nw more than 95%",
            Figure::Fig7 => "Fig. 7, §5.1: energy reduced by 25% on average (0.75), up to 49%; dynamic energy only here",
            Figure::Fig8 => "Fig. 8: the text gives no averages (speedups: PC 16K > 32K > counter; `apusim study bypass-fig9` times them)",
            Figure::Fig11 => "Fig. 11, §5.3: coverage 58.6%, false positives 12% (paper definition), 1% (SDBP definition)",
            Figure::Nw => "§5.3.1, Fig. 12: nw-noSPM runs 7x longer than nw; bypassing closes 30% of the gap and beats a 64 KB L1 (times: `apusim study bypass-fig12`)",
        }
    }
}

/// The overrides of `bar`'s configuration: the study's, then the bar's L1 size (the base's
/// times the bar's scale, at the same ways) and predictor.
fn bar_overrides(base: &GpuConfig, overrides: &[String], bar: Bar) -> Result<Vec<String>> {
    let g = base.l1_geometry()?;
    let mut set = overrides.to_vec();
    if bar.l1_scale != 1 {
        let bytes = g.size * bar.l1_scale;
        let size = if bytes.is_multiple_of(1024) {
            format!("{}K", bytes / 1024)
        } else {
            bytes.to_string()
        };
        set.push(format!("l1={size},{},{}", g.ways, g.line));
    }
    set.push(format!("predictor={}", bar.predictor.name()));
    Ok(set)
}

/// Run `fig`.
pub fn run(fig: Figure, o: &Options) -> Result<StudyOutput> {
    let name = fig.name();
    if let Some(path) = &o.runs_csv {
        // Refuse an unwritable file before the runs, not after.
        apusim_trace::output::temp_beside(path)
            .with_context(|| format!("{name}: runs file {}", path.display()))?;
    }
    let kernels = o.kernels.clone().unwrap_or_else(|| fig.default_kernels());
    if kernels.is_empty() {
        bail!("{name}: no kernels");
    }
    let base = GpuConfig::load(PRESET, &o.overrides).with_context(|| format!("{name}: --set"))?;
    let sets = fig
        .bars()
        .iter()
        .map(|b| bar_overrides(&base, &o.overrides, *b))
        .collect::<Result<Vec<_>>>()?;
    let configs = sets
        .iter()
        .map(|set| GpuConfig::load(PRESET, set))
        .collect::<Result<Vec<_>>>()
        .with_context(|| format!("{name}: a bar's configuration"))?;
    let inputs = kernels
        .iter()
        .map(|k| GpuL1Input::kernel(k, o.size, o.seed))
        .collect::<Result<Vec<_>>>()?;
    o.runs.plan_as(PlannedMode::GpuL1 { size: o.size }, || {
        Ok(inputs
            .iter()
            .flat_map(|input| {
                sets.iter().map(move |set| {
                    PlannedRun::gpu_l1(PRESET, set.clone(), &input.describe(), o.seed)
                })
            })
            .collect())
    })?;
    let mut jobs = Vec::new();
    for input in &inputs {
        for cfg in &configs {
            jobs.push(GpuL1Run { cfg, input });
        }
    }
    let runs = par_counted(&jobs, "runs", |run| o.runs.gpu_l1(run))?;
    if let Some(path) = &o.runs_csv {
        let mut out = apusim_trace::output::Outputs::new();
        out.stage(path, to_csv(&runs).as_bytes())?;
        out.commit()?;
    }
    let bars = fig.bars();
    let config = base.label();
    let per_kernel: Vec<&[RunResult]> = runs.chunks(bars.len()).collect();
    let mut records = Vec::new();
    let nw_base = per_kernel
        .first()
        .map_or(0.0, |r| r[0].metrics.l1_misses as f64);
    for r in &per_kernel {
        let w = r[0].workload.as_str();
        let base_misses = r[0].metrics.l1_misses as f64;
        let base_energy = r[0].derived.l1_dynamic_energy_nj;
        for (bar, x) in bars.iter().zip(r.iter()) {
            let (m, d) = (&x.metrics, &x.derived);
            let mut rec = |metric: &str, value: f64| {
                records.push(Record::new(&config, w, bar.label, metric, value))
            };
            match fig {
                Figure::Fig1 => {
                    rec("zero_reuse_fraction", d.zero_reuse_fraction);
                    rec("once_fraction", d.once_fraction);
                    rec("l1_evictions", m.l1_evictions as f64);
                }
                Figure::Fig6 => {
                    rec("bypass_ratio", d.bypass_ratio);
                    rec("l1_read_misses", m.l1_read_misses as f64);
                    rec("bypasses", m.bypasses as f64);
                }
                Figure::Fig7 => {
                    rec(
                        "l1_dynamic_energy_norm",
                        ratio(d.l1_dynamic_energy_nj, base_energy),
                    );
                    rec("l1_dynamic_energy_nj", d.l1_dynamic_energy_nj);
                }
                Figure::Fig8 => {
                    rec("l1_misses_norm", ratio(m.l1_misses as f64, base_misses));
                    rec("l1_misses", m.l1_misses as f64);
                }
                Figure::Fig11 => {
                    rec("coverage", d.coverage);
                    rec("fp_rate_paper", d.fp_rate_paper);
                    rec("fp_rate_sdbp", d.fp_rate_sdbp);
                    rec("predictions", m.predictions as f64);
                    rec("corrected", m.corrected as f64);
                    rec(
                        "table_entries_per_l1",
                        m.table_entries_used as f64 / x.sms as f64,
                    );
                }
                Figure::Nw => {
                    rec("l1_misses_norm", ratio(m.l1_misses as f64, nw_base));
                    rec("l1_misses", m.l1_misses as f64);
                    rec("l1_hit_rate", d.l1_hit_rate);
                    if bar.predictor == PredictorKind::Pc {
                        rec("bypass_ratio", d.bypass_ratio);
                    }
                }
            }
        }
    }
    if fig != Figure::Nw {
        records = with_means(records, Mean::Arithmetic);
    }
    let size = o.size.map_or_else(
        || "each kernel's default size".to_string(),
        |s| format!("size {s}"),
    );
    Ok(StudyOutput {
        study: name.into(),
        title: format!(
            "{}; GPU preset {PRESET} ({}), {size}, seed {}",
            fig.title(),
            base.description,
            o.seed
        ),
        paper: fig.paper().into(),
        records,
    })
}

/// `x / base`, 1 where the base is zero (nothing to be relative to).
fn ratio(x: f64, base: f64) -> f64 {
    if base == 0.0 {
        1.0
    } else {
        x / base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(kernels: &[&str]) -> Options {
        Options {
            kernels: Some(kernels.iter().map(|s| s.to_string()).collect()),
            size: Some(128),
            seed: 1,
            overrides: Vec::new(),
            runs_csv: None,
            runs: Runs::default(),
        }
    }

    #[test]
    fn fig8_has_every_kernel_and_bar_and_an_arithmetic_mean() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("runs.csv");
        let o = Options {
            runs_csv: Some(csv.clone()),
            ..options(&["spmv", "nw"])
        };
        let out = run(Figure::Fig8, &o).unwrap();
        let get = |w: &str, p: &str, m: &str| out.get("16K", w, p, m);
        for w in ["spmv", "nw"] {
            assert_eq!(get(w, "Baseline", "l1_misses_norm"), 1.0);
            let (b, x) = (get(w, "Baseline", "l1_misses"), get(w, "32KB", "l1_misses"));
            assert!(b > 0.0 && x <= b, "{w}: {b} {x}");
            assert_eq!(get(w, "32KB", "l1_misses_norm"), x / b);
        }
        let pc = |w| get(w, "PC-based", "l1_misses_norm");
        assert_eq!(
            get("mean", "PC-based", "l1_misses_norm"),
            (pc("spmv") + pc("nw")) / 2.0
        );
        let t = out.tables();
        for s in ["Counter-based", "l1_misses_norm", "paper:"] {
            assert!(t.contains(s), "{t}");
        }
        // One CSV row per (kernel, bar), kernel-major, in the bars' order.
        let rows = std::fs::read_to_string(&csv).unwrap();
        let configs: Vec<&str> = rows
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(1).unwrap())
            .collect();
        assert_eq!(
            configs,
            [
                "16K",
                "16K+pc",
                "16K+counter",
                "32K",
                "16K",
                "16K+pc",
                "16K+counter",
                "32K"
            ]
        );
    }

    #[test]
    fn nw_is_relative_to_nw_on_the_baseline_and_has_no_mean() {
        let out = run(Figure::Nw, &options(&["nw", "nw-nospm"])).unwrap();
        assert_eq!(out.get("16K", "nw", "Baseline", "l1_misses_norm"), 1.0);
        let nospm = out.get("16K", "nw-nospm", "Baseline", "l1_misses_norm");
        assert!(
            nospm > 1.0,
            "nw-nospm keeps its tiles in global memory: {nospm}"
        );
        assert!(out.value("16K", "mean", "Baseline", "l1_misses").is_none());
        assert!(out.value("16K", "nw", "Baseline", "bypass_ratio").is_none());
        assert!(out.value("16K", "nw", "PC-based", "bypass_ratio").is_some());
    }

    #[test]
    fn the_overrides_change_the_base_and_bad_input_is_refused() {
        let o = Options {
            overrides: vec!["l1=32K,8,64".into()],
            ..options(&["nw"])
        };
        let out = run(Figure::Fig8, &o).unwrap();
        assert!(out.value("32K", "nw", "32KB", "l1_misses").is_some());
        assert!(out.title.contains("size 128"), "{}", out.title);
        let e = |o: &Options| format!("{:#}", run(Figure::Fig1, o).unwrap_err());
        assert!(e(&options(&["nosuch"])).contains("nosuch"));
        let typo = Options {
            overrides: vec!["l1.pc.treshold=4".into()],
            ..options(&["nw"])
        };
        assert!(e(&typo).contains("treshold"), "{}", e(&typo));
        let empty = Options {
            kernels: Some(Vec::new()),
            ..options(&[])
        };
        assert!(e(&empty).contains("no kernels"));
    }
}
