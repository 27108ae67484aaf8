//! drp-reuse-probability-shared-llc.txt §6, Figs. 13 and 14, on the S/D/Q mixes.
//!
//! Each (mix, policy) pair is a functional run of the 4C1G system (preset `4c1g`: the drp §3
//! hierarchy, 16 MB 16-way LLC inclusive of the CPU caches, the baseline's GPU write rules)
//! with as many CPU cores as the mix has CPU jobs (1C1G for Sn, 2C1G for Dn, 4C1G for Qn).
//! The LLC's read misses (demand reads; CPU and GPU separately) are normalized to the total
//! read misses of the baseline policy (`drp-baseline`) on the same mix, which is how Fig. 13
//! stacks its CPU and GPU bars; Fig. 14 averages those over the mixes of each configuration.
//! The LLC stream depends on the policy here (back-invalidations of CPU lines), so the runs
//! are full hierarchy runs rather than replays of one LLC stream.
//!
//! Every run goes through [`Runs::run`], so `apusim study drp-fig13 --db FILE` keeps each
//! (mix, policy) run under the key `apusim run --mix NAME --policy P --db FILE` gives it, and
//! `--print-spec` lists them as functional sweep points.

use crate::jobs::{prepare_all, JobInputs, TraceDir};
use crate::runs::{PlannedInput, PlannedMode, PlannedRun, Runs};
use crate::{overrides_note, with_means, Mean, Record, StudyOutput};
use anyhow::{bail, Context, Result};
use apusim_sim::{RunOptions, SystemConfig};
use apusim_workloads::mixes::{self, Frames};
use std::path::PathBuf;

/// The figures of drp §6 this module reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Fig. 13: per-mix LLC read misses of DRP, CPU and GPU parts, normalized to the baseline.
    Fig13,
    /// Fig. 14: baseline, SHiP-hybrid and the sub-policy ablation, averaged per configuration.
    Fig14,
}

impl Figure {
    pub fn name(self) -> &'static str {
        match self {
            Figure::Fig13 => "drp-fig13",
            Figure::Fig14 => "drp-fig14",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Figure::Fig13 => "LLC read misses normalized to the baseline's total, CPU and GPU parts, per mix (drp Fig. 13)",
            Figure::Fig14 => "average normalized LLC read misses of the baseline, SHiP-hybrid and DRP's sub-policies (drp Fig. 14)",
        }
    }

    fn paper(self) -> &'static str {
        match self {
            Figure::Fig13 => "DRP saves read misses across the board; CPU misses mostly unchanged in 1C1G/2C1G, lower in most 4C1G mixes (not Q3, Q5, Q16, Q18); many mixes save >= 10% in total",
            Figure::Fig14 => "DRP saves 13% / 12% / 13% of read misses (1C1G / 2C1G / 4C1G); SHiP-hybrid 7% / 8% / 11%; Read miss alone slightly better than SHiP-hybrid in 1C1G and 2C1G; every sub-policy contributes",
        }
    }

    /// (label, registered policy), the baseline first.
    fn bars(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Figure::Fig13 => &[("Baseline", "drp-baseline"), ("DRP", "drp")],
            Figure::Fig14 => &[
                ("Baseline", "drp-baseline"),
                ("SHiP-hybrid", "ship-hybrid"),
                ("Read miss", "drp-rm"),
                ("Read miss+Read hit", "drp-rm-rh"),
                ("DRP", "drp"),
            ],
        }
    }
}

/// What to run the figures on.
#[derive(Clone, Debug)]
pub struct Options {
    /// Mix names (default S1–S18, D1–D18, Q1–Q18).
    pub mixes: Vec<String>,
    /// Workload scale (`apusim run --mix --scale`).
    pub scale: u64,
    /// Instructions of each CPU job, with drp §3's method of running early finishers on
    /// (`apusim run --mix --instructions`); `None`: `scale ×` 5 M, each job once.
    pub instructions: Option<u64>,
    /// Frames of each mix's rendering job (`apusim run --mix --frames`; default `scale`).
    pub frames: Frames,
    pub seed: u64,
    /// Stop each run after this many trace accesses (`apusim run --limit`).
    pub limit: Option<u64>,
    /// `--set KEY=VALUE` overrides of preset `4c1g` (e.g. `llc.cpu_inclusive=false`).
    pub overrides: Vec<String>,
    /// Trace cache; `None` keeps the generated traces in a temporary directory for the run.
    pub cache: Option<PathBuf>,
    /// How the runs are made: simulated, through a results database, or only listed.
    pub runs: Runs,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mixes: ["S", "D", "Q"]
                .iter()
                .flat_map(|p| (1..=18).map(move |n| format!("{p}{n}")))
                .collect(),
            scale: 1,
            instructions: None,
            frames: Frames::Scale,
            seed: 1,
            limit: None,
            overrides: Vec::new(),
            cache: None,
            runs: Runs::default(),
        }
    }
}

/// The paper's configuration name of a mix with `cpus` CPU jobs.
fn config_name(cpus: usize) -> String {
    format!("{cpus}C1G")
}

/// LLC demand-read misses of one run: (CPU, GPU).
fn read_misses(r: &apusim_sim::RunResult) -> (u64, u64) {
    let llc = &r.stats.llc().counts;
    (
        llc.class_total(false).read_misses,
        llc.class_total(true).read_misses,
    )
}

/// Mix `mix` (of `inputs`) under `policy`, as the functional sweep point that is the same
/// run: preset `4c1g` with the figure's overrides, as many cores as the mix has CPU jobs.
fn planned(
    o: &Options,
    cfg: &SystemConfig,
    inputs: &JobInputs,
    mix: &str,
    policy: &str,
) -> PlannedRun {
    let mut set = o.overrides.clone();
    // The figure gives each mix its own core count whatever `--set cpus` says; a sweep
    // point honours `set.cpus`, so it states the mix's.
    if o.overrides
        .iter()
        .any(|kv| kv.split('=').next().is_some_and(|k| k.trim() == "cpus"))
    {
        set.push(format!("cpus={}", inputs.cpu_jobs()));
    }
    PlannedRun {
        preset: "4c1g".into(),
        set,
        dram_set: cfg.timing.dram_set.clone(),
        policy: policy.into(),
        input: PlannedInput::Mix(mixes::mix(mix).map_or_else(|| mix.into(), |m| m.name.clone())),
        scale: o.scale,
        frames: o.frames,
        seed: o.seed,
        warmup: 0,
        instructions: o.instructions,
        sample: false,
        ideal: String::new(),
        gpu_read_bypass: 0.0,
        ideal_critical: None,
    }
}

/// Run one figure.
pub fn run(fig: Figure, o: &Options) -> Result<StudyOutput> {
    if o.mixes.is_empty() {
        bail!("{}: give at least one mix", fig.name());
    }
    let traces = TraceDir::new(o.cache.as_deref())?;
    let dir = traces.path().to_path_buf();
    let inputs: Vec<JobInputs> = o
        .mixes
        .iter()
        .map(|m| {
            JobInputs::mix_at(
                m,
                o.scale,
                o.instructions,
                o.frames,
                o.seed,
                Some(dir.clone()),
            )
        })
        .collect::<Result<_>>()?;
    let base_cfg = SystemConfig::load_preset("4c1g", &o.overrides)?;
    let bars = fig.bars();
    let cases: Vec<(usize, &str)> = (0..inputs.len())
        .flat_map(|m| bars.iter().map(move |b| (m, b.1)))
        .collect();
    let mode = PlannedMode::Functional { limit: o.limit };
    o.runs.plan_as(mode, || {
        Ok(cases
            .iter()
            .map(|&(m, policy)| planned(o, &base_cfg, &inputs[m], &o.mixes[m], policy))
            .collect())
    })?;
    prepare_all(&dir, &inputs)?;
    let results: Vec<(u64, u64)> = crate::par_counted(&cases, "runs", |&(m, policy)| {
        let mut cfg = base_cfg.clone();
        cfg.cpus = inputs[m].cpu_jobs();
        cfg.seed = o.seed;
        let opts = RunOptions {
            limit: o.limit,
            continue_to_run: o.instructions.is_some(),
            ..RunOptions::default()
        };
        let r = o
            .runs
            .run(&cfg, policy, &inputs[m], &opts)
            .with_context(|| format!("mix {} under {policy}", o.mixes[m]))?;
        Ok(read_misses(&r))
    })?;
    let mut records = Vec::new();
    for (m, chunk) in results.chunks(bars.len()).enumerate() {
        let config = config_name(inputs[m].cpu_jobs());
        let workload =
            mixes::mix(&o.mixes[m]).map_or_else(|| o.mixes[m].clone(), |x| x.name.clone());
        let base = (chunk[0].0 + chunk[0].1) as f64;
        for (&(cpu, gpu), &(label, _)) in chunk.iter().zip(bars) {
            for (metric, v) in [
                ("cpu_read_misses_norm", cpu),
                ("gpu_read_misses_norm", gpu),
                ("read_misses_norm", cpu + gpu),
            ] {
                let value = if base > 0.0 {
                    v as f64 / base
                } else {
                    f64::NAN
                };
                records.push(Record::new(&config, &workload, label, metric, value));
            }
        }
    }
    // Configurations in the paper's order, whatever order the mixes were given in.
    records.sort_by_key(|r| r.config.trim_end_matches("C1G").parse::<u32>().unwrap_or(0));
    Ok(StudyOutput {
        study: fig.name().into(),
        title: format!(
            "{}; scale {}{}{}, seed {}{}",
            fig.title(),
            o.scale,
            match o.instructions {
                Some(n) =>
                    format!(", CPU jobs of {n} instructions, early finishers running on (drp §3)"),
                None => String::new(),
            },
            o.frames
                .label()
                .map_or_else(String::new, |f| format!(", frames {f}")),
            o.seed,
            overrides_note(&o.overrides)
        ),
        paper: fig.paper().into(),
        records: with_means(records, Mean::Arithmetic),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fig14_normalizes_each_mix_to_its_baseline() {
        let o = Options {
            mixes: vec!["D16".into(), "S17".into()],
            scale: 1,
            instructions: None,
            frames: Frames::Scale,
            seed: 3,
            limit: Some(600_000),
            overrides: Vec::new(),
            cache: None,
            runs: Runs::default(),
        };
        let out = run(Figure::Fig14, &o).unwrap();
        let get = |c: &str, w: &str, p: &str, m: &str| {
            out.records
                .iter()
                .find(|r| r.config == c && r.workload == w && r.policy == p && r.metric == m)
                .unwrap_or_else(|| panic!("{c} {w} {p} {m}"))
                .value
        };
        // S17 (1C1G) comes first although it was given second.
        assert_eq!(out.records[0].config, "1C1G");
        for (c, w) in [("1C1G", "S17"), ("2C1G", "D16")] {
            assert_eq!(get(c, w, "Baseline", "read_misses_norm"), 1.0);
            let parts =
                get(c, w, "DRP", "cpu_read_misses_norm") + get(c, w, "DRP", "gpu_read_misses_norm");
            assert!((parts - get(c, w, "DRP", "read_misses_norm")).abs() < 1e-12);
            assert!(
                get(c, w, "DRP", "cpu_read_misses_norm") > 0.0,
                "CPU jobs miss in the LLC"
            );
            assert_eq!(
                get(c, "mean", "DRP", "read_misses_norm"),
                get(c, w, "DRP", "read_misses_norm")
            );
        }
        // Five bars x three metrics per mix, plus the means.
        assert_eq!(out.records.len(), 2 * 2 * 5 * 3);
    }
}
