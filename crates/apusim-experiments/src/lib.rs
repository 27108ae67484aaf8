//! The papers' studies, each one function call (and one `apusim study` command):
//!
//! - [`gspc`]: gspc-graphics-stream-llc.txt §5 on frames of the built-in render scenes —
//!   Fig. 11 (sensitivity of GSPZTC to its threshold `t`), Fig. 12 (LLC misses of NRU,
//!   SHiP-mem, GS-DRRIP, GSPZTC, GSPZTC+TSE, GSPC, GSPC+UCD and DRRIP+UCD normalized to 2-bit
//!   DRRIP), Fig. 13 (texture hit rate, render-target → texture consumption, render-target and
//!   Z hit rates) and Fig. 14 (the iso-overhead comparators LRU, 4-bit DRRIP, 4-bit GS-DRRIP).
//!   Each scene is rendered once, filtered once through the discrete GPU's render caches
//!   (preset `gspc`), and the resulting LLC access stream is replayed under every policy and
//!   LLC size, as the paper compares policies on one captured stream.
//! - [`gspc_counters`]: gspc §3, Table 5 at work: GSPC's render-target insertion classes, the
//!   render-target blocks consumed or evicted unconsumed against GSPZTC+TSE, and each bank's
//!   PROD and CONS over the run, on the same LLC streams.
//! - [`drp`]: drp-reuse-probability-shared-llc.txt §6 on the S/D/Q mixes — Fig. 13 (LLC read
//!   misses of DRP per mix, CPU and GPU parts, normalized to the baseline) and Fig. 14 (the
//!   averages of the baseline, SHiP-hybrid and DRP's sub-policy ablation per configuration).
//!   Every (mix, policy) pair is a full run of the 4C1G hierarchy (preset `4c1g`, with as many
//!   cores as the mix has CPU jobs), since the inclusive LLC's back-invalidations make the
//!   LLC stream depend on the policy.
//!
//! - [`gspc_perf`]: gspc's frame-rate figures (Figs. 15-17) on the timed render pipeline of
//!   preset `gspc`, NRU, GS-DRRIP and GSPC normalized to DRRIP.
//! - [`tap_char`]: tap §2.2's characterization (Figs. 2 and 3: CPI and MPKI of each
//!   application alone against LLC ways, and its type A-E) and [`tap_perf`]: tap's speedup
//!   figures (Figs. 6-12) over LRU on the tap Table 4 system, timed.
//! - [`bypass_l1`]: adaptive-gpu-l1-bypassing's functional figures (Figs. 1, 6, 7, 8, 11 and
//!   §5.3.1's nw): each GPGPU kernel through the GPU memory side of its Table 1
//!   (`apusim_gpu`), under the L1 configurations a figure compares, counting misses, bypasses
//!   and energy.
//! - [`bypass_perf`]: adaptive-gpu-l1-bypassing's timing results (Figs. 2, 9, 10, 12 and
//!   Table 3's static energy): each GPGPU kernel alone on the timed SIMT GPU of its Table 1,
//!   under larger L1s and the bypass predictors.
//! - [`drp_perf`]: drp's figures stated in performance (Figs. 1, 3, 4, 11, 12, 15, Table 4)
//!   and [`crit_perf`]: gpu-access-criticality §3's stream figures (Figs. 2-4), each a timed
//!   run (`apusim sim`) per (mix, bar), where a bar is a policy plus the LLC switches.
//!
//! The central types:
//! - [`studies::Study`]: one entry of the registry [`studies::STUDIES`] — a study's name,
//!   help line, paper, the options it takes, its figure and the function that runs it. The
//!   command line, the Python binding and the plots are all built from it.
//! - [`jobs::JobInputs`]: generated workloads (a mix, a rendering job) as simulator inputs,
//!   backed by the on-disk trace cache, so a study generates each workload once.
//! - [`Record`]: one number of a study — (configuration, workload, policy, metric) → value.
//!   A study returns a [`StudyOutput`]: its records in a fixed order plus the figure's title
//!   and the paper's reference values. [`StudyOutput::tables`] pivots the records into one
//!   text table per metric (workloads down, policies across, an average row), and
//!   [`StudyOutput::to_csv`] / [`StudyOutput::to_json`] write the long format that plotting
//!   tools take directly.
//!
//! Runs are spread over the rayon pool; every run is deterministic and results are collected
//! in a fixed order, so the output does not depend on the number of threads.

pub mod bypass_l1;
pub mod bypass_perf;
pub mod crit_ident;
pub mod crit_perf;
pub mod crit_sched;
pub mod drp;
pub mod drp_perf;
pub mod gpu_l1;
pub mod gspc;
pub mod gspc_counters;
pub mod gspc_perf;
pub mod jobs;
pub mod replay;
pub mod runs;
pub mod studies;
pub mod tap_char;
pub mod tap_perf;
pub mod tap_share;
mod timed;

use apusim_sim::report::TextTable;
use serde::Serialize;
use std::fmt::Write as _;

/// One number of a study.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Record {
    /// The system variant, e.g. `8MB` or `4C1G`.
    pub config: String,
    /// The workload: a scene (`courtyard`) or a mix (`Q7`), or `mean` for averages.
    pub workload: String,
    /// The policy as the figure labels it (`GSPC+UCD`, `Read miss+Read hit`, `t=4`).
    pub policy: String,
    /// What is measured, e.g. `misses_norm` or `texture_hit_rate`.
    pub metric: String,
    pub value: f64,
}

impl Record {
    /// The `metric` of `policy` on `workload` in system variant `config`.
    pub fn new(config: &str, workload: &str, policy: &str, metric: &str, value: f64) -> Record {
        Record {
            config: config.into(),
            workload: workload.into(),
            policy: policy.into(),
            metric: metric.into(),
            value,
        }
    }
}

/// `run` on every case in parallel on the rayon pool, with a progress display counting the
/// finished `what`; the results in case order, whatever the number of threads. The first
/// error stops the cases not yet started.
pub(crate) fn par_counted<C: Sync, T: Send>(
    cases: &[C],
    what: &str,
    run: impl Fn(&C) -> anyhow::Result<T> + Sync,
) -> anyhow::Result<Vec<T>> {
    apusim_sim::progress::par_map_counted(cases, cases.len(), what, true, run)
}

/// A study's results.
#[derive(Clone, Debug, Serialize)]
pub struct StudyOutput {
    /// `gspc-fig12`, ...
    pub study: String,
    /// The figure's caption and what the numbers mean.
    pub title: String,
    /// The paper's values to compare with (averages quoted in its text).
    pub paper: String,
    pub records: Vec<Record>,
}

impl StudyOutput {
    /// Metrics in first-appearance order.
    fn metrics(&self) -> Vec<&str> {
        first_seen(self.records.iter().map(|r| r.metric.as_str()))
    }

    /// One table per metric: (config, workload) down, policies across.
    pub fn tables(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}: {}", self.study, self.title);
        for metric in self.metrics() {
            let recs: Vec<&Record> = self.records.iter().filter(|r| r.metric == metric).collect();
            let policies = first_seen(recs.iter().map(|r| r.policy.as_str()));
            let rows = first_seen(
                recs.iter()
                    .map(|r| (r.config.as_str(), r.workload.as_str())),
            );
            let mut t = TextTable::new(
                ["config".to_string(), "workload".to_string()]
                    .into_iter()
                    .chain(policies.iter().map(|p| p.to_string())),
            );
            for (c, w) in &rows {
                let mut cells = vec![c.to_string(), w.to_string()];
                for p in &policies {
                    let v = recs
                        .iter()
                        .find(|r| r.config == *c && r.workload == *w && r.policy == *p);
                    cells.push(v.map_or_else(|| "-".to_string(), |r| format!("{:.4}", r.value)));
                }
                t.row(cells);
            }
            let _ = writeln!(out, "\n{metric}");
            out.push_str(&t.render());
        }
        if !self.paper.is_empty() {
            let _ = writeln!(out, "\npaper: {}", self.paper);
        }
        out
    }

    /// Long-format CSV: `study,config,workload,policy,metric,value`.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("study,config,workload,policy,metric,value\n");
        for r in &self.records {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{}",
                self.study,
                csv_field(&r.config),
                csv_field(&r.workload),
                csv_field(&r.policy),
                r.metric,
                r.value
            );
        }
        s
    }

    /// The value of one record: (configuration, workload, policy, metric).
    pub fn value(&self, config: &str, workload: &str, policy: &str, metric: &str) -> Option<f64> {
        self.records
            .iter()
            .find(|r| {
                r.config == config
                    && r.workload == workload
                    && r.policy == policy
                    && r.metric == metric
            })
            .map(|r| r.value)
    }

    /// The value of one record in a test; panics naming the record when it is missing.
    #[cfg(test)]
    pub(crate) fn get(&self, config: &str, workload: &str, policy: &str, metric: &str) -> f64 {
        self.value(config, workload, policy, metric)
            .unwrap_or_else(|| panic!("no record {config} {workload} {policy} {metric}"))
    }

    pub fn to_json(&self) -> anyhow::Result<String> {
        Ok(serde_json::to_string_pretty(self)?)
    }
}

/// The distinct items of `items`, in first-appearance order.
fn first_seen<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut v = Vec::new();
    for x in items {
        if !v.contains(&x) {
            v.push(x);
        }
    }
    v
}

/// Quote a CSV field when it holds a comma or quote.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// How a study averages over its workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mean {
    /// The arithmetic mean (miss counts and rates: "on average").
    Arithmetic,
    /// The geometric mean (speedups: drp §6's "average (geometric mean) speedup").
    Geometric,
}

impl Mean {
    fn of(self, vals: &[f64]) -> f64 {
        if vals.is_empty() {
            return f64::NAN;
        }
        let n = vals.len() as f64;
        match self {
            Mean::Arithmetic => vals.iter().sum::<f64>() / n,
            Mean::Geometric => (vals.iter().map(|v| v.ln()).sum::<f64>() / n).exp(),
        }
    }
}

/// The suffix of a metric that is another's relative error (half its 99.7% interval over its
/// value) in a sampled study: `cpu_speedup_rel_error` goes with `cpu_speedup`.
pub const REL_ERROR: &str = "_rel_error";

/// Append one `mean` record per (config, policy, metric) of `records`: the `mean` over the
/// workloads. Undefined values (NaN: a rate of a stream a workload does not have, e.g.
/// blending reads in a scene without blending) are left out of the mean; a mean of none is
/// NaN.
pub fn with_means(records: Vec<Record>, mean: Mean) -> Vec<Record> {
    let keys = first_seen(
        records
            .iter()
            .map(|r| (r.config.clone(), r.policy.clone(), r.metric.clone())),
    );
    let means: Vec<Record> = keys
        .into_iter()
        .map(|(config, policy, metric)| {
            let vals: Vec<f64> = records
                .iter()
                .filter(|r| r.config == config && r.policy == policy && r.metric == metric)
                .map(|r| r.value)
                .filter(|v| !v.is_nan())
                .collect();
            // A sampled ratio's relative error: that of a geometric mean is at most the
            // arithmetic mean of its terms' (linear propagation of d ln x).
            let mean = if metric.ends_with(REL_ERROR) {
                Mean::Arithmetic
            } else {
                mean
            };
            Record {
                config,
                workload: "mean".into(),
                policy,
                metric,
                value: mean.of(&vals),
            }
        })
        .collect();
    // Each config's mean rows right after its workloads (a stable sort by config order).
    let configs = first_seen(records.iter().map(|r| r.config.clone()));
    let mut out: Vec<Record> = records.into_iter().chain(means).collect();
    out.sort_by_key(|r| configs.iter().position(|c| *c == r.config));
    out
}

/// The offline-replay setup (`apusim oracle`, `apusim reuse`, the gspc studies) of the LLC of
/// `cfg`: its geometry and inclusion as an [`apusim_oracle::OracleConfig`], and its policy
/// context.
pub fn oracle_setup(
    cfg: &apusim_sim::SystemConfig,
) -> anyhow::Result<(apusim_oracle::OracleConfig, apusim_cache::PolicyContext)> {
    let g = apusim_sim::config::parse_geometry(&cfg.llc.geometry)?;
    let mut ocfg = apusim_oracle::OracleConfig::new(g);
    ocfg.cpu_inclusive = cfg.llc.cpu_inclusive;
    Ok((ocfg, apusim_sim::run::policy_context(cfg)?))
}

/// `; with KEY=VALUE, ...` for a study title, or nothing without overrides.
pub(crate) fn overrides_note(overrides: &[String]) -> String {
    if overrides.is_empty() {
        String::new()
    } else {
        format!("; with {}", overrides.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(config: &str, workload: &str, policy: &str, value: f64) -> Record {
        Record::new(config, workload, policy, "m", value)
    }

    #[test]
    fn means_follow_each_config_and_average_its_workloads() {
        let r = with_means(
            vec![
                rec("8MB", "a", "P", 1.0),
                rec("8MB", "b", "P", 0.5),
                rec("8MB", "c", "P", f64::NAN),
                rec("16MB", "a", "P", 0.25),
            ],
            Mean::Arithmetic,
        );
        let names: Vec<(&str, &str, f64)> = r
            .iter()
            .filter(|r| !r.value.is_nan())
            .map(|r| (r.config.as_str(), r.workload.as_str(), r.value))
            .collect();
        assert_eq!(r.len(), 6);
        assert_eq!(
            names,
            [
                ("8MB", "a", 1.0),
                ("8MB", "b", 0.5),
                ("8MB", "mean", 0.75),
                ("16MB", "a", 0.25),
                ("16MB", "mean", 0.25)
            ]
        );
    }

    #[test]
    fn geometric_means_of_speedups() {
        let r = with_means(
            vec![rec("1C1G", "a", "P", 2.0), rec("1C1G", "b", "P", 0.5)],
            Mean::Geometric,
        );
        assert_eq!(r[2].workload, "mean");
        assert!((r[2].value - 1.0).abs() < 1e-12, "{}", r[2].value);
    }

    #[test]
    fn tables_pivot_policies_and_csv_quotes() {
        let out = StudyOutput {
            study: "s".into(),
            title: "t".into(),
            paper: "p".into(),
            records: vec![rec("c", "w", "A", 1.0), rec("c", "w", "B,C", 2.0)],
        };
        let t = out.tables();
        assert!(
            t.contains("1.0000") && t.contains("2.0000") && t.contains("B,C"),
            "{t}"
        );
        assert!(out.to_csv().contains("s,c,w,\"B,C\",m,2\n"));
    }
}
