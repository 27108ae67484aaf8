//! tap-tlp-aware-llc.txt's speedup figures on the timed machine (`apusim sim`): Fig. 6
//! (UCP and TAP-UCP per GPGPU type), Fig. 7 (RRIP and TAP-RRIP), Fig. 8 (the TAP-S
//! mechanisms on Stream-CPU workloads), Fig. 9 (two and four CPU applications), Fig. 10
//! (static partitioning), Fig. 11 (LLC size and associativity) and Fig. 12 (TADIP, PIPP and
//! TC beside UCP, RRIP and the TAP mechanisms), and Table 1 (which application UCP, RRIP
//! and TC favour; measured as each application's share of the LLC, see [`crate::tap_share`]).
//!
//! Every (mix, bar) pair is one timed run of the tap Table 4 system (preset `tap`: 3.5 GHz
//! 4-wide cores, six 1.5 GHz SIMT cores, an 8 MB 32-way LLC in four tiles behind a 20-cycle
//! NoC, DDR3-1333 on four channels) with as many CPU cores as the mix has CPU applications.
//! The mixes are the `TAP-*` mixes (`apusim mixes`): Table 7's 1-CPU, 2-CPU, 4-CPU and
//! Stream-CPU workloads with one GPGPU kernel of each type A–E. As tap §4.1 ("we repeat early
//! terminated applications until all other applications finish"), a run lasts until every
//! core has reached its target and the GPU has run its kernels once; each application's
//! figures are taken at its own end.
//!
//! The metric is tap §4.3's: a workload's speedup is the geometric mean over its
//! applications of `IPC_i / IPC_i^baseline` (Eq. 1, 2), with LRU as the baseline; the GPU
//! application's IPC is its warp instructions per GPU cycle over its run. Averages over
//! workloads are geometric means. Besides `speedup`, each bar reports `cpu_speedup` (the
//! geometric mean over the CPU applications) and `gpu_speedup`, the two halves of it.
//!
//! "RRIP" is the thread-aware DRRIP the paper evaluates (§5.2, footnote 2: `ta-drrip`).
//! Fig. 11's LLC configurations are not listed in the paper's text; apusim runs 4 MB and 8 MB
//! at 16 and 32 ways and 16 MB at 32 ways (the baseline is 8 MB, 32 ways), at the baseline's
//! 20-cycle tiles.

use crate::timed::{bar, geomean, gpu_job, Bar, TimedMixes};
use crate::{Record, StudyOutput};
use anyhow::{bail, Result};
use apusim_sim::timed::SimResult;
use apusim_workloads::mixes::GpuJob;

pub use crate::timed::Options;

/// The figures this module reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Fig. 6: UCP and TAP-UCP over LRU, 1-CPU workloads per GPGPU type.
    Fig6,
    /// Fig. 7: RRIP and TAP-RRIP over LRU, 1-CPU workloads per GPGPU type.
    Fig7,
    /// Fig. 8: the TAP and TAP-S mechanisms on Stream-CPU workloads.
    Fig8,
    /// Fig. 9: UCP, TAP-UCP, RRIP and TAP-RRIP with two and four CPU applications.
    Fig9,
    /// Fig. 10: static partitioning against TAP-UCP and TAP-RRIP, 1, 2 and 4 CPUs.
    Fig10,
    /// Fig. 11: UCP, TAP-UCP, RRIP and TAP-RRIP at other LLC sizes and associativities.
    Fig11,
    /// Fig. 12: TADIP, PIPP, TC, UCP, RRIP, TAP-UCP and TAP-RRIP over LRU.
    Fig12,
    /// Table 1: the application UCP, RRIP and TC favour, per GPGPU type.
    Table1,
}

/// tap §4.3's baseline.
const BASELINE: &str = "lru";

/// Fig. 11's LLC configurations: label and `llc.geometry`.
const FIG11_LLCS: [(&str, &str); 5] = [
    ("4MB-16w", "4M,16,64"),
    ("4MB-32w", "4M,32,64"),
    ("8MB-16w", "8M,16,64"),
    ("8MB-32w", "8M,32,64"),
    ("16MB-32w", "16M,32,64"),
];

impl Figure {
    pub fn name(self) -> &'static str {
        match self {
            Figure::Fig6 => "tap-fig6",
            Figure::Fig7 => "tap-fig7",
            Figure::Fig8 => "tap-fig8",
            Figure::Fig9 => "tap-fig9",
            Figure::Fig10 => "tap-fig10",
            Figure::Fig11 => "tap-fig11",
            Figure::Fig12 => "tap-fig12",
            Figure::Table1 => "tap-table1",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Figure::Fig6 => "speedup of UCP and TAP-UCP over LRU on 1-CPU workloads, per GPGPU type (tap Fig. 6)",
            Figure::Fig7 => "speedup of RRIP (thread-aware DRRIP) and TAP-RRIP over LRU on 1-CPU workloads, per GPGPU type (tap Fig. 7)",
            Figure::Fig8 => "speedup of the TAP and TAP-S mechanisms over LRU on Stream-CPU workloads (tap Fig. 8)",
            Figure::Fig9 => "speedup of UCP, TAP-UCP, RRIP and TAP-RRIP over LRU with two and four CPU applications (tap Fig. 9)",
            Figure::Fig10 => "speedup of static CPU/GPU partitioning (16 ways each), TAP-UCP and TAP-RRIP over LRU (tap Fig. 10)",
            Figure::Fig11 => "speedup of UCP, TAP-UCP, RRIP and TAP-RRIP over LRU at other LLC sizes and associativities, 1-CPU workloads (tap Fig. 11)",
            Figure::Fig12 => "speedup of TADIP, PIPP, TC, UCP, RRIP, TAP-UCP and TAP-RRIP over LRU on 1-CPU workloads (tap Fig. 12)",
            Figure::Table1 => "the LLC share of the CPU and the GPGPU application under LRU, UCP, RRIP and TC, and whom each policy favours over LRU (+1 CPU, -1 GPGPU, 0 neither; at least one way's worth), 1-CPU workloads per GPGPU type (tap Table 1)",
        }
    }

    fn paper(self) -> &'static str {
        match self {
            Figure::Fig6 => "UCP +6%, TAP-UCP +11% over LRU (152 workloads); per type UCP A 0%, B +15%, C +3%, D +5%, E +12%; TAP-UCP C +17%, D +10%",
            Figure::Fig7 => "RRIP +3%, TAP-RRIP +12% over LRU (152 workloads)",
            Figure::Fig8 => "TAP-UCP -3%, TAP-RRIP -4% over LRU on Stream-CPU; the TAP-S mechanisms about equal to LRU",
            Figure::Fig9 => "2-CPU: UCP +7.6%, TAP-UCP +12.5%, RRIP +4.5%, TAP-RRIP +14.1%; 4-CPU: UCP +6.1%, TAP-UCP +17.4%, RRIP +5.6%, TAP-RRIP +24.3%",
            Figure::Fig10 => "static +6.5% (1-CPU), +7% (2-, 4-CPU); TAP-UCP +11%, +12%, +19%; TAP-RRIP +12%, +15%, +24%",
            Figure::Fig11 => "TAP-UCP and TAP-RRIP outperform UCP and RRIP at every LLC configuration",
            Figure::Fig12 => "TADIP +3%, PIPP +4%, TC +6% over LRU; the TAP mechanisms ahead",
            Figure::Table1 => "favoured (UCP / RRIP / TC): A CPU / CPU / none; B CPU / about equal or GPGPU / CPU; C GPGPU / GPGPU / CPU; D GPGPU / GPGPU / CPU; E CPU / about equal or GPGPU / CPU",
        }
    }

    /// The mixes the figure shows by default.
    pub fn default_mixes(self) -> Vec<String> {
        let of = |prefix: &str| -> Vec<String> {
            ['A', 'B', 'C', 'D', 'E']
                .iter()
                .map(|t| format!("TAP-{prefix}-{t}"))
                .collect()
        };
        match self {
            Figure::Fig8 => of("S"),
            Figure::Fig9 => [of("2C"), of("4C")].concat(),
            Figure::Fig10 => [of("1C"), of("2C"), of("4C")].concat(),
            _ => of("1C"),
        }
    }

    /// The policies compared, after the LRU baseline: (label, policy).
    fn policies(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Figure::Fig6 => &[("UCP", "ucp"), ("TAP-UCP", "tap-ucp")],
            Figure::Fig7 => &[("RRIP", "ta-drrip"), ("TAP-RRIP", "tap-rrip")],
            Figure::Fig8 => &[
                ("UCP", "ucp"),
                ("TAP-UCP", "tap-ucp"),
                ("TAP-UCP-S", "tap-ucp-s"),
                ("RRIP", "ta-drrip"),
                ("TAP-RRIP", "tap-rrip"),
                ("TAP-RRIP-S", "tap-rrip-s"),
            ],
            Figure::Fig9 | Figure::Fig11 => &[
                ("UCP", "ucp"),
                ("TAP-UCP", "tap-ucp"),
                ("RRIP", "ta-drrip"),
                ("TAP-RRIP", "tap-rrip"),
            ],
            Figure::Fig10 => &[
                ("Static", "static-part"),
                ("TAP-UCP", "tap-ucp"),
                ("TAP-RRIP", "tap-rrip"),
            ],
            Figure::Table1 => &[("UCP", "ucp"), ("RRIP", "ta-drrip"), ("TC", "tc")],
            Figure::Fig12 => &[
                ("TADIP", "tadip"),
                ("PIPP", "pipp"),
                ("TC", "tc"),
                ("UCP", "ucp"),
                ("RRIP", "ta-drrip"),
                ("TAP-UCP", "tap-ucp"),
                ("TAP-RRIP", "tap-rrip"),
            ],
        }
    }

    /// The LLC configurations the bars run at: (label, `--set` overrides); one unnamed
    /// configuration (the preset's) except for Fig. 11.
    fn llcs(self) -> Vec<(String, Vec<String>)> {
        match self {
            Figure::Fig11 => FIG11_LLCS
                .iter()
                .map(|(l, g)| (l.to_string(), vec![format!("llc.geometry={g}")]))
                .collect(),
            _ => vec![(String::new(), Vec::new())],
        }
    }

    /// The bars, grouped by LLC configuration, each group's LRU baseline first.
    fn bars(self) -> Vec<Bar> {
        let mut v = Vec::new();
        for (_, set) in self.llcs() {
            let with = |label: &str, policy: &'static str| Bar {
                set: set.clone(),
                ..bar(label, policy)
            };
            v.push(with("LRU", BASELINE));
            for (label, policy) in self.policies() {
                v.push(with(label, policy));
            }
        }
        v
    }

    /// Whether the figure shows only averages (per configuration) rather than every mix.
    fn averages_only(self) -> bool {
        matches!(self, Figure::Fig9 | Figure::Fig10 | Figure::Fig11)
    }

    /// The LLC's associativity of a run's system (one way is the step of [`Figure::Table1`]).
    fn llc_ways(cfg: &apusim_sim::SystemConfig) -> Result<u32> {
        let g: apusim_cache::Geometry = cfg
            .llc
            .geometry
            .parse()
            .map_err(|e| anyhow::anyhow!("llc.geometry: {e}"))?;
        Ok(g.ways)
    }
}

/// The Table 7 group of a `TAP-*` mix and its GPGPU type: `TAP-2C-D` is ("2-CPU", 'D'),
/// `TAP-S-B` ("Stream-CPU", 'B'); other mixes are grouped by their CPU count and have no type.
fn group_of(mix: &str, cpus: usize) -> (String, Option<char>) {
    let upper = mix.to_ascii_uppercase();
    let parts: Vec<&str> = upper.split('-').collect();
    match parts.as_slice() {
        ["TAP", "S", t] if t.len() == 1 => ("Stream-CPU".into(), t.chars().next()),
        ["TAP", k, t] if k.ends_with('C') && t.len() == 1 => {
            (format!("{}-CPU", &k[..k.len() - 1]), t.chars().next())
        }
        _ => (format!("{cpus}-CPU"), None),
    }
}

/// Each application's IPC in a run: the cores', then the GPU's (warp instructions per GPU
/// cycle).
fn app_ipcs(r: &SimResult) -> Vec<f64> {
    let mut v: Vec<f64> = r.cores.iter().map(|c| c.ipc).collect();
    if let Some(g) = &r.gpu {
        v.push(g.ipc);
    }
    v
}

/// tap Eq. 1 and 2: the geometric mean of the applications' IPC ratios (`cpu`, `gpu`: which
/// applications count). NaN when an IPC is missing or not positive.
fn tap_speedup(r: &SimResult, base: &SimResult, cpu: bool, gpu: bool) -> f64 {
    let (a, b) = (app_ipcs(r), app_ipcs(base));
    if a.len() != b.len() {
        return f64::NAN;
    }
    let n_cpu = r.cores.len();
    let ratios: Vec<f64> = a
        .iter()
        .zip(&b)
        .enumerate()
        .filter(|(i, _)| if *i < n_cpu { cpu } else { gpu })
        .map(|(_, (x, y))| {
            if *x > 0.0 && *y > 0.0 {
                x / y
            } else {
                f64::NAN
            }
        })
        .collect();
    if ratios.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    geomean(&ratios)
}

/// A sampled run's relative error of `cpu_speedup` ([`tap_speedup`] over the CPU
/// applications): that of a geometric mean of ratios is at most the mean of the ratios',
/// each the sum of its two IPCs' (linear propagation). `None` for detailed runs.
fn cpu_speedup_rel_error(r: &SimResult, base: &SimResult) -> Option<f64> {
    let rels = |x: &SimResult| -> Option<Vec<f64>> {
        let e = crate::timed::ipc_estimates(x)?;
        Some(e.iter().map(|e| e.half_width / e.value).collect())
    };
    let (a, b) = (rels(r)?, rels(base)?);
    if a.is_empty() || a.len() != b.len() {
        return None;
    }
    Some(a.iter().zip(&b).map(|(x, y)| x + y).sum::<f64>() / a.len() as f64)
}

/// Order of the configurations in the output: LLC configuration, then 1-, 2-, 4-CPU and
/// Stream-CPU, each group's types before the group's average over all types.
fn config_order(fig: Figure, config: &str) -> (usize, usize, usize, String) {
    let llc = FIG11_LLCS
        .iter()
        .position(|(l, _)| config.starts_with(l))
        .filter(|_| fig == Figure::Fig11)
        .unwrap_or(0);
    let rest = config.rsplit(' ').next().unwrap_or(config);
    let group = ["1-CPU", "2-CPU", "4-CPU", "Stream-CPU"]
        .iter()
        .position(|g| rest.starts_with(g))
        .unwrap_or(4);
    // "1-CPU-A" (one type) before "1-CPU" (all types).
    let all_types = usize::from(rest.ends_with("CPU"));
    (llc, group, all_types, rest.to_string())
}

/// Run one figure.
pub fn run(fig: Figure, o: &Options) -> Result<StudyOutput> {
    let names = o.mixes.clone().unwrap_or_else(|| fig.default_mixes());
    for m in &names {
        if !matches!(gpu_job(m)?, GpuJob::Gpgpu(_)) {
            bail!(
                "{}: {m} has no GPGPU kernel (tap's workloads pair CPU applications with one \
                 GPGPU application; use the TAP-* mixes)",
                fig.name()
            );
        }
    }
    let mixes = TimedMixes::new(fig.name(), names, |_| "tap", o)?;
    let bars = fig.bars();
    let llcs = fig.llcs();
    let per_llc = bars.len() / llcs.len();
    let results = mixes.run(&bars)?;
    let mut records = Vec::new();
    for (m, runs) in results.chunks(bars.len()).enumerate() {
        let (group, ty) = group_of(&mixes.names[m], mixes.configs[m].cpus);
        for (l, (llc, _)) in llcs.iter().enumerate() {
            let runs = &runs[l * per_llc..(l + 1) * per_llc];
            let bars = &bars[l * per_llc..(l + 1) * per_llc];
            let prefix = if llc.is_empty() {
                String::new()
            } else {
                format!("{llc} ")
            };
            if fig == Figure::Table1 {
                let config = match ty {
                    Some(t) => format!("{group}-{t}"),
                    None => group.clone(),
                };
                let labels: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
                let ways = Figure::llc_ways(&mixes.configs[m])?;
                records.extend(crate::tap_share::records(
                    &config,
                    &mixes.names[m],
                    &labels,
                    runs,
                    ways,
                ));
                continue;
            }
            let mut configs = Vec::new();
            if let (Some(t), false) = (ty, fig.averages_only()) {
                configs.push(format!("{prefix}{group}-{t}"));
            }
            configs.push(format!("{prefix}{group}"));
            for (r, b) in runs.iter().zip(bars).skip(1) {
                for config in &configs {
                    for (metric, cpu, gpu) in [
                        ("speedup", true, true),
                        ("cpu_speedup", true, false),
                        ("gpu_speedup", false, true),
                    ] {
                        records.push(Record::new(
                            config,
                            &mixes.names[m],
                            &b.label,
                            metric,
                            tap_speedup(r, &runs[0], cpu, gpu),
                        ));
                    }
                    if let Some(e) = cpu_speedup_rel_error(r, &runs[0]) {
                        records.push(Record::new(
                            config,
                            &mixes.names[m],
                            &b.label,
                            "cpu_speedup_rel_error",
                            e,
                        ));
                    }
                }
            }
        }
    }
    records.sort_by_key(|r| config_order(fig, &r.config));
    if fig == Figure::Table1 {
        // One workload per type and shares that may fall: no geometric means.
        return Ok(StudyOutput {
            study: fig.name().into(),
            title: format!("{}{}", fig.title(), o.note()),
            paper: fig.paper().into(),
            records,
        });
    }
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
    use crate::timed::small;
    use apusim_sim::timed::{sim_policy, SimOptions};
    use apusim_sim::SystemConfig;

    fn direct(mix: &str, policy: &str) -> SimResult {
        let inputs = JobInputs::mix(mix, 1, 1, None).unwrap();
        let mut cfg = SystemConfig::load_preset("tap", &[]).unwrap();
        cfg.cpus = inputs.cpu_jobs();
        let opts = SimOptions {
            instructions: Some(20_000),
            ..SimOptions::default()
        };
        sim_policy(&cfg, policy, &inputs, &opts).unwrap()
    }

    #[test]
    fn speedup_is_the_geometric_mean_of_the_applications_ipc_ratios_over_lru() {
        // TAP-2C-C: the 2-CPU mix whose GPU kernel (sort) is the shortest to simulate.
        let out = run(Figure::Fig6, &small(&["TAP-2C-C"])).unwrap();
        let lru = direct("TAP-2C-C", "lru");
        let tap = direct("TAP-2C-C", "tap-ucp");
        let r = |i: usize| tap.cores[i].ipc / lru.cores[i].ipc;
        let g = tap.gpu.as_ref().unwrap().ipc / lru.gpu.as_ref().unwrap().ipc;
        let want = (r(0) * r(1) * g).powf(1.0 / 3.0);
        let got = out.get("2-CPU-C", "TAP-2C-C", "TAP-UCP", "speedup");
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        let cpu = out.get("2-CPU", "TAP-2C-C", "TAP-UCP", "cpu_speedup");
        assert!((cpu - (r(0) * r(1)).sqrt()).abs() < 1e-12);
        assert_eq!(out.get("2-CPU", "TAP-2C-C", "TAP-UCP", "gpu_speedup"), g);
        // The type's group and the all-types group hold the same workload, and the means.
        assert_eq!(out.get("2-CPU", "mean", "TAP-UCP", "speedup"), got);
        // A run against itself is a speedup of one for every metric.
        for (cpu, gpu) in [(true, true), (true, false), (false, true)] {
            assert_eq!(tap_speedup(&lru, &lru, cpu, gpu), 1.0);
        }
    }

    #[test]
    fn mixes_group_by_table7_and_configs_keep_the_paper_s_order() {
        assert_eq!(group_of("TAP-1C-C", 1), ("1-CPU".into(), Some('C')));
        assert_eq!(group_of("tap-4c-e", 4), ("4-CPU".into(), Some('E')));
        assert_eq!(group_of("TAP-S-B", 1), ("Stream-CPU".into(), Some('B')));
        assert_eq!(group_of("Q17", 4), ("4-CPU".into(), None));
        let mut configs = vec!["2-CPU", "1-CPU", "1-CPU-B", "Stream-CPU", "1-CPU-A"];
        configs.sort_by_key(|c| config_order(Figure::Fig6, c));
        assert_eq!(
            configs,
            ["1-CPU-A", "1-CPU-B", "1-CPU", "2-CPU", "Stream-CPU"]
        );
        let mut llcs = vec!["16MB-32w 1-CPU", "4MB-16w 1-CPU", "8MB-32w 1-CPU"];
        llcs.sort_by_key(|c| config_order(Figure::Fig11, c));
        assert_eq!(llcs, ["4MB-16w 1-CPU", "8MB-32w 1-CPU", "16MB-32w 1-CPU"]);
        // Fig. 11 runs every policy and LRU at each of its LLC configurations.
        let bars = Figure::Fig11.bars();
        assert_eq!(bars.len(), FIG11_LLCS.len() * 5);
        assert_eq!(bars[5].policy, "lru");
        assert_eq!(bars[5].set, ["llc.geometry=4M,32,64"]);
    }

    #[test]
    fn table1_reports_each_application_s_llc_share_and_whom_a_policy_favours() {
        let out = run(Figure::Table1, &small(&["TAP-1C-C"])).unwrap();
        let lru = direct("TAP-1C-C", "lru");
        let ucp = direct("TAP-1C-C", "ucp");
        let (lru_cpu, lru_gpu) = crate::tap_share::shares(&lru);
        assert!(lru_cpu > 0.0 && lru_gpu > 0.0, "{lru_cpu} {lru_gpu}");
        assert!(lru_cpu + lru_gpu <= 1.0 + 1e-12);
        assert_eq!(out.get("1-CPU-C", "TAP-1C-C", "LRU", "cpu_share"), lru_cpu);
        assert_eq!(out.get("1-CPU-C", "TAP-1C-C", "LRU", "gpu_share"), lru_gpu);
        let (ucp_cpu, _) = crate::tap_share::shares(&ucp);
        let gain = out.get("1-CPU-C", "TAP-1C-C", "UCP", "cpu_share_gain");
        assert_eq!(gain, ucp_cpu - lru_cpu);
        // The tap preset's LLC has 32 ways: one way is 1/32 of it.
        assert_eq!(
            out.get("1-CPU-C", "TAP-1C-C", "UCP", "favoured"),
            crate::tap_share::favoured(gain, 1.0 / 32.0)
        );
        // LRU is the reference: no gain or verdict of its own; three policies have both.
        assert!(out
            .records
            .iter()
            .all(|r| r.policy != "LRU" || !r.metric.starts_with("cpu_share_gain")));
        let verdicts = out.records.iter().filter(|r| r.metric == "favoured");
        assert_eq!(verdicts.count(), 3);
    }

    #[test]
    fn mixes_without_a_gpgpu_kernel_are_refused_by_name() {
        let e = run(Figure::Fig7, &small(&["S1"])).unwrap_err();
        assert!(format!("{e:#}").contains("S1 has no GPGPU kernel"), "{e:#}");
        let e = run(Figure::Fig7, &small(&["TAP-9C-A"])).unwrap_err();
        assert!(format!("{e:#}").contains("unknown mix"), "{e:#}");
    }
}
