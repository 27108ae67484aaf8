//! gpu-access-criticality §6.1.3–§6.2 on the timed machine: the DRAM schedulers that use
//! the GPU's critical accesses, against the baseline and the related proposals. Fig. 11
//! (GPU-favoring and IM, with IM-LLC and IM-SCHED alone: normalized frame rate and CPU
//! weighted speedup), Fig. 12 (IM with a random quarter, half, three quarters or all of the
//! identified critical accesses marked, and with the marks drawn at random at each stream's
//! share of critical accesses), Fig. 13 (SMS-0.9, SMS-0, DynPrio, DASH, HeLM and IM, with the
//! equal-weight metric), Fig. 14 (IM with an 8 MB LLC) and Fig. 15 (the CUDA mixes: SMS-0.9,
//! SMS-0, HeLM and IM).
//!
//! The 3D figures run the paper's eight titles below 40 FPS (Table 2: 3DMark06 GT1, GT2,
//! HDR1, HDR2, COD2, Crysis, L4D, UT3), each beside its H, L and HL CPU mixes, on preset
//! `crit` (Table 1, two-bit SRRIP, FR-FCFS in the baseline). The built-in scenes render at
//! hundreds of frames per second, so these figures mark critical accesses with no frame-rate
//! target (`timing.render.target_fps = 0`: as if every title missed it) and give the
//! deadline-aware schedulers the learned frame time as their frame period (DynPrio and DASH
//! use the frame-rate estimator, §6.1.4); a `--set` overrides either. Fig. 15 runs the six
//! CUDA applications (H15–H20, L15–L20, HL15–HL20) on preset `crit-cuda`; its IM bar turns
//! the shader cores' critical-access identification on (§4.1.2, with its LLC bypass of
//! non-critical misses), the other bars run without it.
//!
//! Metrics per mix, then the geometric mean over a workload's three mixes (§5) and over
//! workloads: the frame rate (3D) or execution cycles (CUDA) against the baseline, the CPU
//! mix's weighted speedup against the baseline's (alone runs under the baseline, cached),
//! and the equal-weight metric, the geometric mean of the two (§6.1.4).

use crate::timed::{
    bar, crit_mixes, fps, geomean, gpu_cycles, ratio_rel_error, speedup_of, workloads, Bar,
    Options, TimedMixes,
};
use crate::{with_means, Mean, Record, StudyOutput};
use anyhow::{Context, Result};
use apusim_sim::timed::{alone_runs, speedup, AloneOptions, SimResult};

/// The figures this module reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Fig. 11: GPU-favoring, IM-LLC, IM-SCHED and IM.
    Fig11,
    /// Fig. 12: IM with quarters of the critical set marked, and with random marking.
    Fig12,
    /// Fig. 13: SMS-0.9, SMS-0, DynPrio, DASH, HeLM and IM.
    Fig13,
    /// Fig. 14: IM with an 8 MB LLC.
    Fig14,
    /// Fig. 15: the CUDA mixes under SMS-0.9, SMS-0, HeLM and IM.
    Fig15,
}

/// The LLC policy of the paper's baseline (Table 1: two-bit SRRIP).
const BASELINE: &str = "srrip";
/// Mark critical accesses whatever the frame rate (see the module's text).
const NO_TARGET: &str = "timing.render.target_fps=0";
/// The SIMT model's critical-access identification (§4.1.2).
const GPGPU_CRITICALITY: &str = "timing.gpu.criticality=true";
/// Instructions per core when none are given: each run still lasts until the GPU has run
/// its job once (a frame, or the kernels), and a figure over its default mixes then takes
/// well under an hour on two cores (docs/PERFORMANCE.md).
pub const DEFAULT_INSTRUCTIONS: u64 = 200_000;
/// Table 2's titles below 40 FPS, as numbers of the H/L/HL mixes.
const BELOW_TARGET: [u32; 8] = [1, 2, 3, 4, 5, 6, 9, 14];

/// A bar under DRAM scheduler `scheduler` and LLC policy `policy`.
fn sched(label: &str, policy: &'static str, scheduler: &str) -> Bar {
    Bar {
        dram: vec![format!("scheduler={scheduler}")],
        ..bar(label, policy)
    }
}

impl Figure {
    pub fn name(self) -> &'static str {
        match self {
            Figure::Fig11 => "crit-fig11",
            Figure::Fig12 => "crit-fig12",
            Figure::Fig13 => "crit-fig13",
            Figure::Fig14 => "crit-fig14",
            Figure::Fig15 => "crit-fig15",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Figure::Fig11 => "frame rate and CPU weighted speedup over the baseline (FR-FCFS) of GPU-favoring, IM-LLC, IM-SCHED and IM (gpu-access-criticality Fig. 11)",
            Figure::Fig12 => "frame rate over the baseline of IM with 25/50/75/100% of the identified critical accesses marked at random, and of random marking at each stream's critical share (Random) over the algorithm's (gpu-access-criticality Fig. 12, HL mixes)",
            Figure::Fig13 => "frame rate, CPU weighted speedup and equal-weight metric over the baseline of SMS-0.9, SMS-0, DynPrio, DASH, HeLM and IM (gpu-access-criticality Fig. 13)",
            Figure::Fig14 => "frame rate and CPU weighted speedup over the baseline of IM with an 8 MB LLC (gpu-access-criticality Fig. 14)",
            Figure::Fig15 => "GPU speedup, CPU weighted speedup and equal-weight metric over the baseline of SMS-0.9, SMS-0, HeLM and IM on the CUDA mixes (gpu-access-criticality Fig. 15)",
        }
    }

    fn paper(self) -> &'static str {
        match self {
            Figure::Fig11 => "GPU-favoring +18% FPS, -8% CPU; IM +15% FPS, CPU within 3%; against GPU-favoring, IM-LLC alone gives back 3% CPU for 2% GPU, IM-SCHED 2% CPU for 1% GPU",
            Figure::Fig12 => "every quarter of the critical set adds about equally to the FPS gain; random sampling with the same per-stream counts is 5% worse than the algorithm",
            Figure::Fig13 => "FPS: SMS large losses, DynPrio none, DASH and IM +14%, HeLM -5%; CPU: DASH -10%, IM within 3%, SMS +8%, HeLM +6%; equal weight: IM +5%, DASH and HeLM +1%, DynPrio 0, SMS -9%",
            Figure::Fig14 => "8 MB LLC: IM +17% FPS, CPU within 4% of the baseline",
            Figure::Fig15 => "GPU: SMS -4%, HeLM +6%, IM +1%; CPU: SMS-0.9 +7%, SMS-0 +8%, HeLM +7%, IM +14%; equal weight: SMS +2%, HeLM +6%, IM +7%",
        }
    }

    /// The titles below 40 FPS (3D figures) or the CUDA applications (Fig. 15), each with
    /// its H, L and HL mix.
    pub fn default_mixes(self) -> Vec<String> {
        let numbers: Vec<u32> = match self {
            Figure::Fig15 => (15..=20).collect(),
            _ => BELOW_TARGET.to_vec(),
        };
        if self == Figure::Fig12 {
            // §6.1.3: "with the HL mixes containing the GPU applications with lower than 40
            // FPS".
            return numbers.iter().map(|n| format!("HL{n}")).collect();
        }
        crit_mixes(numbers)
    }

    fn bars(self) -> Vec<Bar> {
        let base = sched("Baseline", BASELINE, "frfcfs");
        match self {
            Figure::Fig11 => vec![
                base,
                sched("GPU-favoring", BASELINE, "gpu-favoring"),
                sched("IM-LLC", BASELINE, "im-llc"),
                sched("IM-SCHED", BASELINE, "im-sched"),
                sched("IM", BASELINE, "im"),
            ],
            Figure::Fig12 => {
                let mut v = vec![base];
                for q in [25, 50, 75, 100] {
                    v.push(Bar {
                        set: vec![format!(
                            "timing.render.critical_fraction={}",
                            f64::from(q) / 100.0
                        )],
                        ..sched(&format!("{q}%"), BASELINE, "im")
                    });
                }
                v.push(Bar {
                    set: vec!["timing.render.random_marking=true".into()],
                    ..sched("Random", BASELINE, "im")
                });
                v
            }
            Figure::Fig13 => vec![
                base,
                sched("SMS-0.9", BASELINE, "sms-0.9"),
                sched("SMS-0", BASELINE, "sms-0"),
                sched("DynPrio", BASELINE, "dynprio"),
                sched("DASH", BASELINE, "dash"),
                sched("HeLM", "helm", "frfcfs"),
                sched("IM", BASELINE, "im"),
            ],
            Figure::Fig14 => vec![base, sched("IM", BASELINE, "im")],
            // The shader cores' identification (and its LLC bypass of non-critical misses)
            // is part of the proposal, not of the baseline or the other bars.
            Figure::Fig15 => vec![
                base,
                sched("SMS-0.9", BASELINE, "sms-0.9"),
                sched("SMS-0", BASELINE, "sms-0"),
                sched("HeLM", "helm", "frfcfs"),
                Bar {
                    set: vec![GPGPU_CRITICALITY.to_string()],
                    ..sched("IM", BASELINE, "im")
                },
            ],
        }
    }

    fn cuda(self) -> bool {
        self == Figure::Fig15
    }

    /// Settings of the figure's system before the user's `--set`s.
    fn settings(self) -> Vec<String> {
        match self {
            Figure::Fig15 => Vec::new(),
            Figure::Fig14 => vec![NO_TARGET.to_string(), "llc=8M,16,64".to_string()],
            _ => vec![NO_TARGET.to_string()],
        }
    }
}

/// Run one figure.
pub fn run(fig: Figure, o: &Options) -> Result<StudyOutput> {
    let names = o.mixes.clone().unwrap_or_else(|| fig.default_mixes());
    let hint = if fig.cuda() {
        "Fig. 15 is about the CUDA mixes H15-H20, L15-L20, HL15-HL20"
    } else {
        "use the H, L and HL mixes of titles 1-14; Fig. 15 covers the CUDA mixes"
    };
    let (all, workload_of) = workloads(&names, fig.cuda(), fig.name(), hint)?;
    let mut opts = o.clone();
    opts.overrides.splice(0..0, fig.settings());
    opts.instructions = opts.instructions.or(Some(DEFAULT_INSTRUCTIONS));
    let preset = if fig.cuda() { "crit-cuda" } else { "crit" };
    let mixes = TimedMixes::new(fig.name(), names, |_| preset, &opts)?;
    let bars = fig.bars();
    let results = mixes.run(&bars)?;
    // Each mix's weighted speedup under every bar, against its jobs' alone runs.
    let alone = AloneOptions::new(BASELINE, o.cache.clone());
    // Per bar: GPU metric, CPU weighted speedup over the baseline, and that ratio's relative
    // error when sampled.
    let mut rows: Vec<Vec<(f64, f64, Option<f64>)>> = Vec::new();
    for (m, runs) in results.chunks(bars.len()).enumerate() {
        let solo = alone_runs(&mixes.configs[m], &mixes.inputs[m], &mixes.opts, &alone)
            .with_context(|| format!("mix {} alone", mixes.names[m]))?;
        // Weighted speedup and, sampled, its relative error.
        let ws = |r: &SimResult| -> Result<(f64, Option<f64>)> {
            let s = speedup(r, &solo, BASELINE)?;
            let rel = s.weighted_half_width.map(|h| h / s.weighted);
            Ok((s.weighted, rel))
        };
        let (base_ws, base_rel) = ws(&runs[0])?;
        let mut row = Vec::new();
        for r in runs {
            let gpu = if fig.cuda() {
                speedup_of(gpu_cycles(&runs[0]), gpu_cycles(r))
            } else {
                speedup_of(fps(r), fps(&runs[0]))
            };
            let (w, rel) = ws(r)?;
            let cpu = speedup_of(Some(w), Some(base_ws));
            row.push((gpu, cpu, ratio_rel_error(rel, base_rel)));
        }
        rows.push(row);
    }
    let mut records = Vec::new();
    let gpu_metric = if fig.cuda() {
        "gpu_speedup"
    } else {
        "fps_norm"
    };
    for w in &all {
        let mine: Vec<&Vec<(f64, f64, Option<f64>)>> = rows
            .iter()
            .zip(&workload_of)
            .filter(|(_, x)| *x == w)
            .map(|(r, _)| r)
            .collect();
        for (b, bar) in bars.iter().enumerate().skip(1) {
            let gpu = geomean(&mine.iter().map(|r| r[b].0).collect::<Vec<_>>());
            let cpu = geomean(&mine.iter().map(|r| r[b].1).collect::<Vec<_>>());
            let mut push = |metric: &str, value: f64| {
                records.push(Record::new("4C1G", w, &bar.label, metric, value))
            };
            push(gpu_metric, gpu);
            push("cpu_ws_norm", cpu);
            // The geometric mean's relative error is at most the mean of its terms'.
            let rels: Option<Vec<f64>> = mine.iter().map(|r| r[b].2).collect();
            if let Some(rels) = rels.filter(|v| !v.is_empty()) {
                push(
                    "cpu_ws_norm_rel_error",
                    rels.iter().sum::<f64>() / rels.len() as f64,
                );
            }
            if matches!(fig, Figure::Fig13 | Figure::Fig15) {
                push("equal_weight", (gpu * cpu).sqrt());
            }
        }
        if fig == Figure::Fig12 {
            // Random marking over the algorithm's full marking (the 100% bar).
            let full = bars
                .iter()
                .position(|b| b.label == "100%")
                .expect("a 100% bar");
            let random = bars.len() - 1;
            let ratio: Vec<f64> = mine.iter().map(|r| r[random].0 / r[full].0).collect();
            records.push(Record::new(
                "4C1G",
                w,
                "Random",
                "fps_vs_algorithm",
                geomean(&ratio),
            ));
        }
    }
    Ok(StudyOutput {
        study: fig.name().into(),
        title: format!("{}{}", fig.title(), opts.note()),
        paper: fig.paper().into(),
        records: with_means(records, Mean::Geometric),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_name_registered_schedulers_and_default_mixes_are_the_papers() {
        for fig in [
            Figure::Fig11,
            Figure::Fig12,
            Figure::Fig13,
            Figure::Fig14,
            Figure::Fig15,
        ] {
            let preset = if fig.cuda() { "crit-cuda" } else { "crit" };
            for b in fig.bars() {
                let all: Vec<String> = fig.settings().into_iter().chain(b.set).collect();
                let mut cfg = apusim_sim::SystemConfig::load_preset(preset, &all)
                    .unwrap_or_else(|e| panic!("{} {}: {e:#}", fig.name(), b.label));
                cfg.timing.dram_set.extend(b.dram.iter().cloned());
                cfg.timing
                    .dram_config()
                    .unwrap_or_else(|e| panic!("{} {}: {e:#}", fig.name(), b.label));
                assert!(
                    apusim_cache::policies::info(b.policy).is_some(),
                    "{}",
                    b.policy
                );
            }
        }
        let m = Figure::Fig11.default_mixes();
        assert_eq!(m.len(), 24);
        assert_eq!(&m[..3], ["H1", "L1", "HL1"]);
        assert!(m.contains(&"HL14".to_string()) && !m.contains(&"H7".to_string()));
        assert_eq!(Figure::Fig15.default_mixes()[0], "H15");
        // Only the proposal's bar identifies (and bypasses) on the shader cores.
        let with: Vec<String> = Figure::Fig15
            .bars()
            .into_iter()
            .filter(|b| b.set.iter().any(|s| s == GPGPU_CRITICALITY))
            .map(|b| b.label)
            .collect();
        assert_eq!(with, ["IM"]);
        assert!(Figure::Fig15.settings().is_empty());
    }

    #[test]
    fn mixes_of_the_wrong_kind_are_refused() {
        let o = |m: &str| Options {
            mixes: Some(vec![m.into()]),
            instructions: Some(2_000),
            ..Options::default()
        };
        let e = run(Figure::Fig11, &o("H15")).unwrap_err();
        assert!(format!("{e:#}").contains("not a 3D title"), "{e:#}");
        let e = run(Figure::Fig15, &o("H3")).unwrap_err();
        assert!(format!("{e:#}").contains("CUDA mixes"), "{e:#}");
    }
}
