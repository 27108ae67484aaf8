//! drp-reuse-probability-shared-llc.txt's figures stated in performance, on the timed machine
//! (`apusim sim`): Fig. 1 (standalone over heterogeneous speedup), Fig. 3 (frame-rate gain
//! with streams made ideal), Table 4 (CUDA speedup with an ideal LLC), Fig. 4 (random GPU
//! read-miss bypass), Fig. 11 (average speedup of SHiP-hybrid and DRP), Fig. 12 (DRP's
//! speedup per mix) and Fig. 15 (HeLM and DRP).
//!
//! Every (mix, bar) pair is one timed run of the drp §3 system with as many CPU cores as the
//! mix has CPU jobs (1C1G, 2C1G, 4C1G): preset `4c1g` (the 3D GPU on the render pipeline) for
//! the rendering mixes and `4c1g-cuda` (six SIMT cores at 1.5 GHz) for the CUDA mixes, as drp
//! §3 attaches one of its two GPU models by workload. A run ends when every core has reached
//! its target (by default, the end of its trace) and the GPU has run its job once (drp §3).
//!
//! Speedups, as the figures show them:
//! - GPU: the baseline bar's GPU cycles over this bar's (for a 3D job, its frame-rate ratio).
//! - CPU: the mix's IPC throughput (its cores' IPCs summed) in this bar over the baseline
//!   bar's: drp §3 measures "the performance of the CPU mixes ... in terms of average
//!   instructions per cycle throughput".
//! - Fig. 1 compares each job alone (the others idle; drp §1) with the heterogeneous run:
//!   the CPU bar is the cores' IPCs alone, summed, over their IPCs in the mix, summed (each
//!   core alone, as drp §1 runs "CPU jobs standalone by keeping the GPU free"), the GPU bar
//!   the shared GPU cycles over the alone ones. Alone runs use the baseline policy and are
//!   cached.
//!
//! Fig. 3's depth bar (Z) makes the depth and stencil streams ideal together: both are the
//! depth/stencil unit's Z buffer (Attila keeps depth and stencil in one buffer; apusim's
//! renderer gives stencil its own stream).
//!
//! Averages over mixes are geometric means, as drp §6 states ("average (geometric mean)
//! speedup").

use crate::timed::{
    bar, fps, gpu_cycles, gpu_rel_error, ideal, ipc_sum_rel_error, ratio_rel_error, speedup_of,
    Bar, TimedMixes,
};
use crate::{Record, StudyOutput};
use anyhow::{bail, Context, Result};
use apusim_sim::timed::{alone_runs, speedup, AloneOptions};
use apusim_sim::LlcSwitches;
use apusim_workloads::mixes::GpuJob;

pub use crate::timed::Options;

/// The figures this module reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Fig. 1: speedup of standalone over heterogeneous execution, CPU and GPU, per mix.
    Fig1,
    /// Fig. 3: frame-rate speedup with color, +texture, +depth, +blitter, all GPU streams
    /// ideal (1C1G rendering mixes).
    Fig3,
    /// Table 4: GPU speedup of the CUDA mixes with every GPU stream ideal.
    Table4,
    /// Fig. 4: average CPU and GPU speedup with 25-100% of GPU read misses bypassing.
    Fig4,
    /// Fig. 11: average CPU and GPU speedup of SHiP-hybrid and DRP over the baseline.
    Fig11,
    /// Fig. 12: DRP's CPU and GPU speedup per mix.
    Fig12,
    /// Fig. 15: average speedup of HeLM and DRP, over all mixes and over the CUDA mixes.
    Fig15,
}

/// The baseline policy of drp §3 (two-bit SRRIP with the baseline's GPU write rules).
const BASELINE: &str = "drp-baseline";

impl Figure {
    pub fn name(self) -> &'static str {
        match self {
            Figure::Fig1 => "drp-fig1",
            Figure::Fig3 => "drp-fig3",
            Figure::Table4 => "drp-table4",
            Figure::Fig4 => "drp-fig4",
            Figure::Fig11 => "drp-fig11",
            Figure::Fig12 => "drp-fig12",
            Figure::Fig15 => "drp-fig15",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Figure::Fig1 => "speedup of standalone over heterogeneous execution, CPU and GPU, 16 MB LLC (drp Fig. 1)",
            Figure::Fig3 => "frame-rate speedup with non-compulsory LLC misses of color, +texture, +depth, +blitter, all GPU streams charged as hits, 1C1G (drp Fig. 3)",
            Figure::Table4 => "GPU speedup of the CUDA applications with every non-compulsory GPU LLC miss charged as a hit (drp Table 4)",
            Figure::Fig4 => "CPU and GPU speedup over the baseline with a random 25-100% of GPU LLC read misses bypassing (drp Fig. 4)",
            Figure::Fig11 => "CPU and GPU speedup of SHiP-hybrid and DRP over the baseline (drp Fig. 11)",
            Figure::Fig12 => "CPU and GPU speedup of DRP over the baseline per mix (drp Fig. 12)",
            Figure::Fig15 => "CPU and GPU speedup of HeLM and DRP over the baseline, all mixes and CUDA mixes (drp Fig. 15)",
        }
    }

    fn paper(self) -> &'static str {
        match self {
            Figure::Fig1 => "standalone GPU runs are faster than heterogeneous ones by up to ~2x in 4C1G; CPU jobs gain on average ~26% alone (4C1G), less in 1C1G",
            Figure::Fig3 => "15% (S4) to 145% (S10), 63% on average; most from texture and depth",
            Figure::Table4 => "ideal LLC speeds up the four CUDA applications significantly (Table 4)",
            Figure::Fig4 => "CPU gains only at 100% bypass: 5% (1C1G), 1% (2C1G, 4C1G); GPU loses 7%, 7%, 9% at 100%",
            Figure::Fig11 => "GPU: DRP 8% / 9% / 12%, SHiP-hybrid 3% / 5% / 7% (1C1G / 2C1G / 4C1G); CPU: DRP < 2% / 4% / 7%, SHiP-hybrid < 2% / 3% / 9%",
            Figure::Fig12 => "GPU gains across the board, up to 51% (Q9); CPU up to 19% (Q9), some 1C1G mixes lose",
            Figure::Fig15 => "HeLM ineffective on all mixes (4C1G: CPU +6%, GPU -2%); on CUDA mixes HeLM helps, DRP ahead except GPU in 1C1G (HeLM ~9%, DRP ~7%)",
        }
    }

    /// The mixes the figure shows by default.
    pub fn default_mixes(self) -> Vec<String> {
        let range = |p: &str, r: std::ops::RangeInclusive<u32>| {
            r.map(|n| format!("{p}{n}")).collect::<Vec<_>>()
        };
        match self {
            Figure::Fig3 => range("S", 1..=14),
            Figure::Table4 => range("S", 15..=18),
            _ => ["S", "D", "Q"]
                .iter()
                .flat_map(|p| range(p, 1..=18))
                .collect(),
        }
    }

    /// The bars, the baseline first.
    fn bars(self) -> Vec<Bar> {
        match self {
            Figure::Fig1 => vec![bar("Heterogeneous", BASELINE)],
            Figure::Fig3 => vec![
                bar("Baseline", BASELINE),
                ideal("C", BASELINE, "color"),
                ideal("C+T", BASELINE, "color,texture"),
                ideal("C+T+Z", BASELINE, "color,texture,depth,stencil"),
                ideal("C+T+Z+B", BASELINE, "color,texture,depth,stencil,blitter"),
                ideal("All", BASELINE, "gpu"),
            ],
            Figure::Table4 => vec![
                bar("Baseline", BASELINE),
                ideal("Ideal LLC", BASELINE, "gpu"),
            ],
            Figure::Fig4 => std::iter::once(bar("Baseline", BASELINE))
                .chain([25, 50, 75, 100].map(|p| Bar {
                    llc_switches: LlcSwitches {
                        gpu_read_bypass: p as f64 / 100.0,
                        ..LlcSwitches::default()
                    },
                    ..bar(&format!("{p}%"), BASELINE)
                }))
                .collect(),
            Figure::Fig11 => vec![
                bar("Baseline", BASELINE),
                bar("SHiP-hybrid", "ship-hybrid"),
                bar("DRP", "drp"),
            ],
            Figure::Fig12 => vec![bar("Baseline", BASELINE), bar("DRP", "drp")],
            Figure::Fig15 => vec![
                bar("Baseline", BASELINE),
                bar("HeLM", "helm"),
                bar("DRP", "drp"),
            ],
        }
    }

    /// Whether the figure shows only averages (per configuration) rather than every mix.
    fn averages_only(self) -> bool {
        matches!(self, Figure::Fig4 | Figure::Fig11 | Figure::Fig15)
    }
}

/// The preset of a mix's GPU job: drp §3's 3D GPU or its six-SM CUDA GPU.
fn preset(job: &GpuJob) -> &'static str {
    match job {
        GpuJob::Render { .. } => "4c1g",
        GpuJob::Gpgpu(_) => "4c1g-cuda",
    }
}

/// Each core's IPC in a run.
fn ipcs(r: &apusim_sim::timed::SimResult) -> Vec<f64> {
    r.cores.iter().map(|c| c.ipc).collect()
}

/// The IPC throughput of `num` over that of `den` (NaN without cores).
fn throughput_ratio(num: &[f64], den: &[f64]) -> f64 {
    let sum = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>());
    speedup_of(sum(num), sum(den))
}

/// Run one figure.
pub fn run(fig: Figure, o: &Options) -> Result<StudyOutput> {
    let names = o.mixes.clone().unwrap_or_else(|| fig.default_mixes());
    let mixes = TimedMixes::new(fig.name(), names, preset, o)?;
    if fig == Figure::Fig3 {
        if let Some(m) = mixes
            .names
            .iter()
            .zip(&mixes.presets)
            .find(|(_, p)| **p != "4c1g")
        {
            bail!(
                "{}: {} has no 3D rendering job (Fig. 3 measures frame rates; use S1-S14)",
                fig.name(),
                m.0
            );
        }
    }
    let bars = fig.bars();
    let results = mixes.run(&bars)?;
    let mut records = Vec::new();
    for (m, runs) in results.chunks(bars.len()).enumerate() {
        let config = format!("{}C1G", mixes.configs[m].cpus);
        let workload = mixes.names[m].clone();
        let mut push = |config: &str, label: &str, metric: &str, value: f64| {
            records.push(Record::new(config, &workload, label, metric, value))
        };
        if fig == Figure::Fig1 {
            let alone = AloneOptions::new(BASELINE, o.cache.clone());
            let solo = alone_runs(&mixes.configs[m], &mixes.inputs[m], &mixes.opts, &alone)
                .with_context(|| format!("mix {} alone", mixes.names[m]))?;
            let s = speedup(&runs[0], &solo, BASELINE)?;
            let alone_ipc: Vec<f64> = s.jobs.iter().map(|j| j.alone_ipc).collect();
            let shared_ipc: Vec<f64> = s.jobs.iter().map(|j| j.ipc).collect();
            let cpu = throughput_ratio(&alone_ipc, &shared_ipc);
            push(&config, "Standalone", "cpu_speedup", cpu);
            push(
                &config,
                "Standalone",
                "gpu_speedup",
                s.gpu.map_or(f64::NAN, |g| g.slowdown),
            );
            continue;
        }
        let base = &runs[0];
        let cuda = mixes.presets[m] == "4c1g-cuda";
        for (r, b) in runs.iter().zip(&bars).skip(1) {
            let gpu = speedup_of(gpu_cycles(base), gpu_cycles(r));
            // A sampled pair's GPU error: a frame rate is frames over the frames' cycles, so
            // its relative error is theirs.
            let gpu_error = ratio_rel_error(gpu_rel_error(r), gpu_rel_error(base));
            let cpu = throughput_ratio(&ipcs(r), &ipcs(base));
            let mut configs_of = vec![config.clone()];
            if fig == Figure::Fig15 && cuda {
                configs_of.push(format!("{config} CUDA"));
            }
            for c in &configs_of {
                match fig {
                    Figure::Fig3 => {
                        push(c, &b.label, "fps_speedup", speedup_of(fps(r), fps(base)));
                        if let Some(e) = gpu_error {
                            push(c, &b.label, "fps_speedup_rel_error", e);
                        }
                    }
                    Figure::Table4 => {
                        push(c, &b.label, "gpu_speedup", gpu);
                        if let Some(e) = gpu_error {
                            push(c, &b.label, "gpu_speedup_rel_error", e);
                        }
                    }
                    _ => {
                        push(c, &b.label, "cpu_speedup", cpu);
                        push(c, &b.label, "gpu_speedup", gpu);
                        let e = ratio_rel_error(ipc_sum_rel_error(r), ipc_sum_rel_error(base));
                        if let Some(e) = e {
                            push(c, &b.label, "cpu_speedup_rel_error", e);
                        }
                        if let Some(e) = gpu_error {
                            push(c, &b.label, "gpu_speedup_rel_error", e);
                        }
                    }
                }
            }
        }
    }
    // Configurations in the paper's order (1C1G, 2C1G, 4C1G, then the CUDA subsets).
    let order = |c: &str| {
        let n: u32 = c
            .split_once('C')
            .and_then(|(n, _)| n.parse().ok())
            .unwrap_or(0);
        (c.ends_with("CUDA") as u32, n)
    };
    records.sort_by_key(|r| order(&r.config));
    Ok(crate::timed::output(
        fig.name(),
        format!("{}{}", fig.title(), o.note()),
        fig.paper(),
        records,
        fig.averages_only(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::JobInputs;
    use crate::timed::gpu_job;
    use crate::timed::small;
    use apusim_sim::timed::{sim_policy, SimOptions, SimResult};
    use apusim_sim::SystemConfig;

    /// The same run made directly, on the preset the study picks for the mix.
    fn direct(mix: &str, policy: &str, llc_switches: LlcSwitches) -> SimResult {
        let opts = SimOptions {
            instructions: Some(20_000),
            llc_switches,
            ..SimOptions::default()
        };
        direct_with(mix, policy, &opts)
    }

    /// Mix `mix` under `policy` on its figure's system, as the study runs it.
    fn direct_with(mix: &str, policy: &str, opts: &SimOptions) -> SimResult {
        let inputs = JobInputs::mix(mix, 1, 1, None).unwrap();
        let mut cfg = SystemConfig::load_preset(preset(gpu_job(mix).unwrap()), &[]).unwrap();
        cfg.cpus = inputs.cpu_jobs();
        sim_policy(&cfg, policy, &inputs, opts).unwrap()
    }

    #[test]
    fn a_sampled_figure_samples_every_run() {
        let o = Options {
            mixes: Some(vec!["S16".into()]),
            instructions: Some(1_000_000),
            sample: true,
            ..Options::default()
        };
        let out = run(Figure::Fig12, &o).unwrap();
        assert!(out.title.contains("sampled"), "{}", out.title);
        let opts = SimOptions {
            instructions: Some(1_000_000),
            sample: Some(apusim_sim::timed::SampleSpec::default()),
            ..SimOptions::default()
        };
        let sampled = |policy: &str| direct_with("S16", policy, &opts);
        let (base, drp) = (sampled(BASELINE), sampled("drp"));
        assert!(base.sampling.is_some());
        let ipc = |r: &SimResult| r.cores.iter().map(|c| c.ipc).sum::<f64>();
        assert_eq!(
            out.get("1C1G", "S16", "DRP", "cpu_speedup"),
            ipc(&drp) / ipc(&base)
        );
        // The ratio's interval: both runs' relative errors added.
        let rel = |r: &SimResult| {
            let e = r.sampling.as_ref().unwrap().cores[0].ipc.unwrap();
            e.half_width / e.value
        };
        let e = out.get("1C1G", "S16", "DRP", "cpu_speedup_rel_error");
        assert!(e > 0.0 && e.is_finite(), "{e}");
        assert_eq!(e, rel(&drp) + rel(&base));
        // The GPU speedup's: the two runs' work-rate errors added.
        let gpu_rel = |r: &SimResult| r.gpu.as_ref().unwrap().work_rate.unwrap().relative_error();
        let g = out.get("1C1G", "S16", "DRP", "gpu_speedup_rel_error");
        assert!(g > 0.0 && g.is_finite(), "{g}");
        assert_eq!(g, gpu_rel(&drp) + gpu_rel(&base));
        assert_eq!(out.get("1C1G", "mean", "DRP", "cpu_speedup_rel_error"), e);
    }

    #[test]
    fn speedups_are_throughput_and_cycle_ratios_against_the_baseline_bar() {
        let out = run(Figure::Fig12, &small(&["S18", "D18"])).unwrap();
        // 1C1G first, each configuration with its geometric mean.
        assert_eq!(out.records[0].config, "1C1G");
        for (config, mix) in [("1C1G", "S18"), ("2C1G", "D18")] {
            let base = direct(mix, BASELINE, LlcSwitches::default());
            let drp = direct(mix, "drp", LlcSwitches::default());
            let ipc = |r: &SimResult| r.cores.iter().map(|c| c.ipc).sum::<f64>();
            assert_eq!(
                out.get(config, mix, "DRP", "cpu_speedup"),
                ipc(&drp) / ipc(&base)
            );
            let cycles = |r: &SimResult| r.gpu.as_ref().unwrap().cycles as f64;
            assert_eq!(
                out.get(config, mix, "DRP", "gpu_speedup"),
                cycles(&base) / cycles(&drp)
            );
            assert_eq!(
                out.get(config, "mean", "DRP", "gpu_speedup"),
                out.get(config, mix, "DRP", "gpu_speedup")
            );
        }
        // Two mixes x one bar x two metrics, and their means.
        assert_eq!(out.records.len(), 8);
    }

    #[test]
    fn a_bypass_bar_runs_with_its_switch_and_averages_only_are_kept() {
        let out = run(Figure::Fig4, &small(&["S18"])).unwrap();
        assert!(out.records.iter().all(|r| r.workload == "mean"));
        let base = direct("S18", BASELINE, LlcSwitches::default());
        let all = direct(
            "S18",
            BASELINE,
            LlcSwitches {
                gpu_read_bypass: 1.0,
                ..LlcSwitches::default()
            },
        );
        let cycles = |r: &SimResult| r.gpu.as_ref().unwrap().cycles as f64;
        assert_eq!(
            out.get("1C1G", "mean", "100%", "gpu_speedup"),
            cycles(&base) / cycles(&all)
        );
        let bypassed = all.functional.llc().counts.class_total(true).bypasses;
        assert!(bypassed > 0, "100% bypass bypassed nothing");
    }

    #[test]
    fn fig1_compares_jobs_alone_with_the_mix() {
        let out = run(Figure::Fig1, &small(&["S18"])).unwrap();
        let cpu = out.get("1C1G", "S18", "Standalone", "cpu_speedup");
        let gpu = out.get("1C1G", "S18", "Standalone", "gpu_speedup");
        // The GPU (reduction) and the CPU (libquantum) contend for DRAM: each is faster alone.
        assert!(cpu > 1.0, "CPU alone over shared {cpu}");
        assert!(gpu >= 1.0, "GPU alone over shared {gpu}");
    }

    #[test]
    fn fig3_refuses_mixes_without_a_rendering_job_and_unknown_mixes_are_named() {
        let e = run(Figure::Fig3, &small(&["S15"])).unwrap_err();
        assert!(
            format!("{e:#}").contains("S15 has no 3D rendering job"),
            "{e:#}"
        );
        let e = run(Figure::Fig11, &small(&["S99"])).unwrap_err();
        assert!(format!("{e:#}").contains("unknown mix `S99`"), "{e:#}");
        assert_eq!(Figure::Fig3.default_mixes().len(), 14);
        assert_eq!(Figure::Table4.default_mixes(), ["S15", "S16", "S17", "S18"]);
    }
}
