//! The figure of each `apusim study`: which of the papers' figure types it is, its baseline,
//! axis labels with units, and the long CSV (`--csv`) read back to redraw it.
//!
//! [`spec`] reads each study's figure from the registry of studies. [`figure`] turns a [`StudyOutput`] into a
//! [`Figure`] with one panel per metric (all metrics stacked, or the one asked for), and one
//! panel per configuration as well when the configurations share their workloads (the
//! paper's upper/lower panels, e.g. gspc Fig. 17's DDR3-1867 and 512-context GPU):
//!
//! - [`FigureKind::Bars`]: a group per workload (or per configuration when the study gives
//!   only averages), a bar per policy; normalized metrics get a `geomean` group over the
//!   groups shown and a reference line at 1.
//! - [`FigureKind::SCurve`]: per-mix values sorted ascending by the last policy (the proposal:
//!   tap §5.1 "we sort all results by the performance of the TAP mechanisms in ascending
//!   order"), one curve per policy over the mixes' ranks.
//! - [`FigureKind::Lines`]: the policies are the values of a swept parameter (LLC size, `t`,
//!   bypass share) along x, one line per workload.
//! - [`FigureKind::Stacked`]: a bar per workload with a segment per policy (the streams of a
//!   breakdown) and a `mean` bar.
//!
//! Rows of workload `mean` are the study's own averages: plotted only when the study has no
//! per-workload rows (its averages-only figures), since the plot computes its own mean group.

use super::{Figure, Panel, PanelKind};
use anyhow::{bail, Context, Result};
use apusim_experiments::{Record, StudyOutput};
use std::path::Path;

pub use apusim_experiments::studies::FigureKind;

/// How a study is drawn: its registry entry's figure ([`apusim_experiments::studies`]).
pub type Spec = apusim_experiments::studies::FigureSpec;

use FigureKind::{Bars, Lines, SCurve, Stacked};

/// Every study of `apusim study`, in its help's order.
pub fn studies() -> impl Iterator<Item = &'static str> {
    apusim_experiments::studies::STUDIES.iter().map(|s| s.name)
}

/// The figure of `study` (`None`: not a registered study).
pub fn spec(study: &str) -> Option<Spec> {
    apusim_experiments::studies::get(study).map(|s| s.figure)
}

/// The y label of `metric` (with its unit), and whether it is normalized to the baseline
/// (then bars get a geometric mean and a reference line at 1).
pub fn metric_label(metric: &str, baseline: &str) -> (String, bool) {
    let b = if baseline.is_empty() {
        "the baseline"
    } else {
        baseline
    };
    let (label, norm) = match metric {
        "misses_norm" | "llc_misses_norm" => (format!("LLC misses normalized to {b}"), true),
        "read_misses_norm" => (format!("LLC read misses normalized to {b}"), true),
        "cpu_read_misses_norm" => (format!("CPU LLC read misses normalized to {b}"), true),
        "gpu_read_misses_norm" => (format!("GPU LLC read misses normalized to {b}"), true),
        "misses_change_pct_vs_t16" => ("change in LLC misses relative to t = 16 (%)".into(), false),
        "texture_hit_rate" => ("texture sampler LLC hit rate (fraction)".into(), false),
        "rt_consumed_share" => (
            "render targets consumed as textures (fraction)".into(),
            false,
        ),
        "rt_read_hit_rate" => ("render-target read LLC hit rate (fraction)".into(), false),
        "z_hit_rate" => ("Z LLC hit rate (fraction)".into(), false),
        "fps_norm" => (format!("frame rate normalized to {b}"), true),
        "fps" => ("frame rate (frames/s)".into(), false),
        "fps_speedup" => (format!("frame-rate speedup over {b}"), true),
        "speedup" => (format!("speedup over {b}"), true),
        "l1_misses_norm" => (format!("L1 data cache misses normalized to {b}"), true),
        "l1_hit_rate" => ("L1 data cache hit rate (fraction)".into(), false),
        "zero_reuse_fraction" => (
            "L1 evictions of lines never reused (fraction)".into(),
            false,
        ),
        "once_fraction" => ("L1 lines accessed only once (fraction)".into(), false),
        "bypass_ratio" => ("L1 read misses bypassed (fraction)".into(), false),
        "coverage" => ("predictions that bypass (coverage, fraction)".into(), false),
        "fp_rate_paper" => (
            "false positives, §5.3's definition (fraction)".into(),
            false,
        ),
        "fp_rate_sdbp" => (
            "false positives, SDBP's definition (fraction)".into(),
            false,
        ),
        "l1_dynamic_energy_norm" => (format!("L1 dynamic energy normalized to {b}"), true),
        "l1_dynamic_energy_nj" => ("L1 dynamic energy (nJ)".into(), false),
        "l1_static_energy_norm" => (format!("L1 static energy normalized to {b}"), true),
        "l1_static_energy_uj" => ("L1 static energy (µJ)".into(), false),
        "time_norm" => (format!("execution time normalized to nw on {b}"), true),
        "cycles" => ("execution time (GPU cycles)".into(), false),
        "memory_intensity" => (
            "global memory instructions per 1000 warp instructions".into(),
            false,
        ),
        "memory_stall_share" => (
            "share of shader-core cycles waiting for memory".into(),
            false,
        ),
        "cpu_speedup" => (format!("CPU speedup over {b}"), true),
        "gpu_speedup" => (format!("GPU speedup over {b}"), true),
        "cpu_ws_norm" => (format!("CPU weighted speedup normalized to {b}"), true),
        "equal_weight" => (
            format!("equal-weight metric over {b} (geomean of GPU and CPU)"),
            true,
        ),
        "fps_vs_algorithm" => (
            "frame rate relative to the criticality estimate".into(),
            true,
        ),
        "combined_speedup" => (format!("frame-rate speedup over {b}, set ideal"), true),
        "individual_speedup" => (format!("1 + sum of individual speedups over {b}"), true),
        "dram_read_share" => ("share of the GPU's DRAM reads (fraction)".into(), false),
        "share" => ("share of the GPU's accesses (fraction)".into(), false),
        "fps_gain" => ("frame-rate gain with an ideal LLC (fraction)".into(), false),
        "error" => ("frame-rate estimation error (fraction)".into(), false),
        "frames" => ("predicted frames (count)".into(), false),
        "cpi" => ("CPI (cycles per instruction)".into(), false),
        "mpki" => ("LLC misses per kilo-instruction (MPKI)".into(), false),
        other => (other.replace('_', " "), false),
    };
    (label, norm)
}

/// The distinct items, in first-appearance order.
fn first_seen<T: PartialEq + Clone>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut v: Vec<T> = Vec::new();
    for x in items {
        if !v.contains(&x) {
            v.push(x);
        }
    }
    v
}

/// The geometric mean of positive finite values (`None` if any is not).
fn geomean(vals: &[f64]) -> Option<f64> {
    if vals.is_empty() || vals.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    Some((vals.iter().map(|v| v.ln()).sum::<f64>() / vals.len() as f64).exp())
}

/// The metrics of `out`, in first-appearance order.
pub fn metrics(out: &StudyOutput) -> Vec<String> {
    first_seen(out.records.iter().map(|r| r.metric.clone()))
}

/// The figure of `out`: one panel per metric (only `metric` when given) and, where the
/// configurations share workloads, per configuration.
pub fn figure(out: &StudyOutput, metric: Option<&str>) -> Result<Figure> {
    let spec = spec(&out.study).unwrap_or(Spec {
        kind: Bars,
        baseline: "",
        x_label: "workload",
        caption: "",
    });
    let all = metrics(out);
    if all.is_empty() {
        bail!("{}: the study has no records to plot", out.study);
    }
    let chosen: Vec<String> = match metric {
        Some(m) if all.iter().any(|x| x == m) => vec![m.to_string()],
        Some(m) => bail!(
            "{}: no metric `{m}`; the study has {}",
            out.study,
            all.join(", ")
        ),
        // A sampled study's relative errors go with their metrics; drawn when asked for.
        None => {
            let main: Vec<String> = all
                .iter()
                .filter(|m| !m.ends_with(apusim_experiments::REL_ERROR))
                .cloned()
                .collect();
            if main.is_empty() {
                all
            } else {
                main
            }
        }
    };
    let mut panels = Vec::new();
    for m in &chosen {
        let recs: Vec<&Record> = out.records.iter().filter(|r| &r.metric == m).collect();
        let per_workload: Vec<&Record> = recs
            .iter()
            .copied()
            .filter(|r| r.workload != "mean")
            .collect();
        let (label, normalized) = metric_label(m, spec.baseline);
        if per_workload.is_empty() {
            // Averages only: the configurations are the groups.
            panels.push(panel(spec, &recs, m, &label, normalized, "", true));
            continue;
        }
        // A configuration whose workloads another one holds all of, and more, is a part of
        // that aggregate (tap's per-type configurations beside `1-CPU`): only the aggregate
        // is drawn.
        let configs = first_seen(per_workload.iter().map(|r| r.config.as_str()));
        let workloads_of = |c: &str| {
            first_seen(
                per_workload
                    .iter()
                    .filter(|r| r.config == c)
                    .map(|r| r.workload.as_str()),
            )
        };
        let sets: Vec<Vec<&str>> = configs.iter().map(|c| workloads_of(c)).collect();
        let configs: Vec<&str> = configs
            .iter()
            .zip(&sets)
            .filter(|(_, mine)| {
                !sets
                    .iter()
                    .any(|other| other.len() > mine.len() && mine.iter().all(|w| other.contains(w)))
            })
            .map(|(c, _)| *c)
            .collect();
        let per_workload: Vec<&Record> = per_workload
            .into_iter()
            .filter(|r| configs.contains(&r.config.as_str()))
            .collect();
        let shared = configs.len() > 1 && {
            let pairs = first_seen(per_workload.iter().map(|r| (&r.config, &r.workload)));
            let names = first_seen(per_workload.iter().map(|r| &r.workload));
            names.len() < pairs.len()
        };
        if shared {
            for c in configs {
                let mine: Vec<&Record> = per_workload
                    .iter()
                    .copied()
                    .filter(|r| r.config == c)
                    .collect();
                panels.push(panel(spec, &mine, m, &label, normalized, c, false));
            }
        } else {
            panels.push(panel(spec, &per_workload, m, &label, normalized, "", false));
        }
    }
    // A metric without a finite value (e.g. a GPU speedup of CPU-only mixes) has no panel.
    panels.retain(|p| p.values.iter().flatten().flatten().any(|v| v.is_finite()));
    if panels.is_empty() {
        bail!("{}: no finite value to plot", out.study);
    }
    let title = if out.title.is_empty() {
        out.study.clone()
    } else {
        format!("{}: {}", out.study, out.title)
    };
    Ok(Figure { title, panels })
}

/// One panel of `recs` (one metric; one configuration when `config` is not empty).
fn panel(
    spec: Spec,
    recs: &[&Record],
    metric: &str,
    label: &str,
    normalized: bool,
    config: &str,
    by_config: bool,
) -> Panel {
    let policies = first_seen(recs.iter().map(|r| r.policy.clone()));
    // Rows: (config, workload); named by the workload, or by the configuration when the
    // rows are the study's averages.
    let rows = first_seen(recs.iter().map(|r| (r.config.clone(), r.workload.clone())));
    let names: Vec<String> = rows
        .iter()
        .map(|(c, w)| if by_config { c.clone() } else { w.clone() })
        .collect();
    let mut values: Vec<Vec<Option<f64>>> = rows
        .iter()
        .map(|(c, w)| {
            policies
                .iter()
                .map(|p| {
                    recs.iter()
                        .find(|r| &r.config == c && &r.workload == w && &r.policy == p)
                        .map(|r| r.value)
                })
                .collect()
        })
        .collect();
    let title = match (config.is_empty(), by_config) {
        (false, _) => format!("{metric}, {config}"),
        _ => metric.to_string(),
    };
    let x_group = if by_config {
        "configuration (the study's mean over its workloads)".to_string()
    } else {
        spec.x_label.to_string()
    };
    match spec.kind {
        Bars => {
            let mut groups = names;
            if normalized && !by_config && groups.len() > 1 {
                let means: Vec<Option<f64>> = (0..policies.len())
                    .map(|p| {
                        let col: Vec<f64> = values.iter().filter_map(|row| row[p]).collect();
                        geomean(&col)
                    })
                    .collect();
                if means.iter().any(Option::is_some) {
                    groups.push("geomean".into());
                    values.push(means);
                }
            }
            Panel {
                kind: PanelKind::Bars,
                title,
                x_label: x_group,
                y_label: label.to_string(),
                groups,
                series: policies,
                values,
                reference: normalized.then_some(1.0),
            }
        }
        Stacked => {
            let mut groups = names;
            if groups.len() > 1 {
                let n = values.len() as f64;
                let means: Vec<Option<f64>> = (0..policies.len())
                    .map(|p| {
                        let col: Vec<f64> = values.iter().filter_map(|row| row[p]).collect();
                        (!col.is_empty()).then(|| col.iter().sum::<f64>() / n)
                    })
                    .collect();
                groups.push("mean".into());
                values.push(means);
            }
            Panel {
                kind: PanelKind::Stacked,
                title,
                x_label: x_group,
                y_label: label.to_string(),
                groups,
                series: policies,
                values,
                reference: None,
            }
        }
        SCurve => {
            // Sort the mixes by the last policy's value, missing values last.
            let last = policies.len().saturating_sub(1);
            let mut order: Vec<usize> = (0..values.len()).collect();
            order.sort_by(|&a, &b| {
                let key = |i: usize| values[i].get(last).copied().flatten().unwrap_or(f64::MAX);
                key(a).total_cmp(&key(b))
            });
            let sorted_by = policies.last().cloned().unwrap_or_default();
            Panel {
                kind: PanelKind::Curves,
                title,
                x_label: format!("{x_group}, ranked by {sorted_by} (ascending)"),
                y_label: label.to_string(),
                groups: order.iter().map(|&i| names[i].clone()).collect(),
                series: policies,
                values: order.iter().map(|&i| values[i].clone()).collect(),
                reference: normalized.then_some(1.0),
            }
        }
        Lines => {
            // The policies are the swept values along x, in the order of the number in their
            // names (`t=16` after `t=8`; a name without one, such as `Baseline`, first); the
            // workloads are the lines.
            let mut order: Vec<usize> = (0..policies.len()).collect();
            order.sort_by(|&a, &b| {
                let (ka, kb) = (sweep_value(&policies[a]), sweep_value(&policies[b]));
                ka.partial_cmp(&kb).unwrap_or(std::cmp::Ordering::Equal)
            });
            let groups = order.iter().map(|&p| policies[p].clone()).collect();
            let series = names;
            let values = order
                .iter()
                .map(|&p| values.iter().map(|row| row[p]).collect())
                .collect();
            Panel {
                kind: PanelKind::Lines,
                title,
                x_label: spec.x_label.to_string(),
                y_label: label.to_string(),
                groups,
                series,
                values,
                reference: normalized.then_some(1.0),
            }
        }
    }
}

/// The first number in a swept value's name: `t=16` → 16, `256KB` → 256, `25%` → 25.
fn sweep_value(name: &str) -> Option<f64> {
    let start = name.find(|c: char| c.is_ascii_digit())?;
    let digits: String = name[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    digits.parse().ok()
}

/// Split one CSV line into fields (RFC 4180 quoting: `"a,b"`, `""` for a quote).
fn split_csv(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut at_start = true;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (false, '"') if at_start => {
                quoted = true;
                at_start = false;
            }
            (false, '"') => return Err("a quote inside an unquoted field".into()),
            (true, '"') => {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    field.push('"');
                } else {
                    quoted = false;
                    match chars.peek() {
                        None | Some(',') => {}
                        Some(_) => return Err("text after a closing quote".into()),
                    }
                }
            }
            (false, ',') => {
                fields.push(std::mem::take(&mut field));
                at_start = true;
            }
            (_, c) => {
                field.push(c);
                at_start = false;
            }
        }
    }
    if quoted {
        return Err("an unclosed quote".into());
    }
    fields.push(field);
    Ok(fields)
}

const HEADER: &str = "study,config,workload,policy,metric,value";

/// A study's long CSV (as `--csv` writes it: `study,config,workload,policy,metric,value`)
/// back as its output; `name` (the file) names the line of an error. The title is the
/// paper's caption of the study's figure, since the CSV does not hold the run's title.
pub fn parse_csv(text: &str, name: &str) -> Result<StudyOutput> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, h)) if h.trim_end() == HEADER => {}
        Some((_, h)) => bail!("{name}:1: expected the header `{HEADER}`, found `{h}`"),
        None => bail!("{name}: empty file; expected the header `{HEADER}`"),
    }
    let mut study: Option<String> = None;
    let mut records = Vec::new();
    for (i, line) in lines {
        let at = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let f = split_csv(line.trim_end_matches('\r'))
            .map_err(|e| anyhow::anyhow!("{name}:{at}: {e}"))?;
        if f.len() != 6 {
            bail!("{name}:{at}: {} fields; expected 6 ({HEADER})", f.len());
        }
        let value: f64 = f[5]
            .trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("{name}:{at}: value `{}` is not a number", f[5]))?;
        match &study {
            None => study = Some(f[0].clone()),
            Some(s) if *s != f[0] => {
                bail!(
                    "{name}:{at}: study `{}` after `{s}`; one study a file",
                    f[0]
                )
            }
            Some(_) => {}
        }
        if f[4].is_empty() {
            bail!("{name}:{at}: empty metric");
        }
        records.push(Record {
            config: f[1].clone(),
            workload: f[2].clone(),
            policy: f[3].clone(),
            metric: f[4].clone(),
            value,
        });
    }
    let Some(study) = study else {
        bail!("{name}: no records after the header");
    };
    let title = spec(&study).map_or_else(String::new, |s| s.caption.to_string());
    Ok(StudyOutput {
        study,
        title,
        paper: String::new(),
        records,
    })
}

/// [`parse_csv`] of a file.
pub fn read_csv(path: &Path) -> Result<StudyOutput> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    parse_csv(&text, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(c: &str, w: &str, p: &str, m: &str, v: f64) -> Record {
        Record::new(c, w, p, m, v)
    }

    #[test]
    fn every_study_has_a_figure_and_a_caption() {
        for st in studies() {
            let sp = spec(st).unwrap_or_else(|| panic!("{st}"));
            assert!(!sp.caption.is_empty() && !sp.x_label.is_empty(), "{st}");
        }
        assert!(spec("nope").is_none());
        assert_eq!(spec("tap-fig2").unwrap().kind, FigureKind::Lines);
        assert_eq!(spec("crit-fig2").unwrap().kind, FigureKind::Stacked);
        assert_eq!(spec("tap-fig6").unwrap().kind, FigureKind::SCurve);
        assert_eq!(spec("gspc-fig12").unwrap().kind, FigureKind::Bars);
    }

    #[test]
    fn shared_workloads_split_panels_and_means_are_left_to_the_plot() {
        let out = StudyOutput {
            study: "gspc-fig17".into(),
            title: "t".into(),
            paper: String::new(),
            records: vec![
                rec("DDR3", "a", "DRRIP", "fps_norm", 1.0),
                rec("DDR3", "a", "GSPC", "fps_norm", 1.1),
                rec("DDR3", "b", "DRRIP", "fps_norm", 1.0),
                rec("DDR3", "b", "GSPC", "fps_norm", 0.9),
                rec("DDR3", "mean", "GSPC", "fps_norm", 0.5),
                rec("GPU", "a", "DRRIP", "fps_norm", 1.0),
                rec("GPU", "a", "GSPC", "fps_norm", 1.2),
                rec("GPU", "c", "GSPC", "fps_norm", 1.3),
            ],
        };
        let f = figure(&out, None).unwrap();
        assert_eq!(f.panels.len(), 2);
        let p = &f.panels[0];
        assert_eq!(p.groups, ["a", "b", "geomean"]);
        let g = p.values[2][1].unwrap();
        assert!((g - (1.1f64 * 0.9).sqrt()).abs() < 1e-12, "{g}");
        assert!(p.y_label.contains("normalized to DRRIP"));
        // The second configuration's own workloads, the first's missing policy left empty.
        assert_eq!(f.panels[1].groups, ["a", "c", "geomean"]);
        assert_eq!(f.panels[1].values[1], [None, Some(1.3)]);
        let e = figure(&out, Some("ipc")).unwrap_err().to_string();
        assert!(e.contains("fps_norm"), "{e}");
        // A metric of NaNs alone is left out; nothing but NaNs is an error.
        let mut nan = out.clone();
        nan.records.push(rec("DDR3", "a", "GSPC", "fps", f64::NAN));
        assert_eq!(figure(&nan, None).unwrap().panels.len(), 2);
        nan.records.retain(|r| r.metric == "fps");
        let e = figure(&nan, None).unwrap_err().to_string();
        assert!(e.contains("no finite value"), "{e}");
    }

    #[test]
    fn configurations_inside_an_aggregate_are_left_out() {
        let out = StudyOutput {
            study: "tap-fig12".into(),
            title: String::new(),
            paper: String::new(),
            records: vec![
                rec("1-CPU-A", "TAP-1C-A", "UCP", "speedup", 1.1),
                rec("1-CPU-B", "TAP-1C-B", "UCP", "speedup", 0.9),
                rec("1-CPU", "TAP-1C-A", "UCP", "speedup", 1.1),
                rec("1-CPU", "TAP-1C-B", "UCP", "speedup", 0.9),
                rec("1-CPU", "mean", "UCP", "speedup", 1.0),
            ],
        };
        let f = figure(&out, None).unwrap();
        assert_eq!(f.panels.len(), 1);
        assert_eq!(f.panels[0].groups, ["TAP-1C-A", "TAP-1C-B", "geomean"]);
        assert!(f.panels[0].y_label.contains("over LRU"));
    }

    #[test]
    fn scurves_sort_by_the_last_policy_and_lines_turn_policies_into_x() {
        let out = StudyOutput {
            study: "drp-fig12".into(),
            title: String::new(),
            paper: String::new(),
            records: vec![
                rec("1C1G", "S1", "DRP", "cpu_speedup", 1.3),
                rec("1C1G", "S2", "DRP", "cpu_speedup", 0.9),
                rec("2C1G", "D1", "DRP", "cpu_speedup", 1.1),
            ],
        };
        let p = &figure(&out, None).unwrap().panels[0];
        assert_eq!(p.kind, PanelKind::Curves);
        assert_eq!(p.groups, ["S2", "D1", "S1"]);
        let out = StudyOutput {
            study: "tap-fig2".into(),
            records: vec![
                rec("type A", "lbm", "256KB", "cpi", 3.0),
                rec("type A", "lbm", "512KB", "cpi", 2.0),
                rec("type B", "bfs", "256KB", "cpi", 5.0),
            ],
            ..out
        };
        let p = &figure(&out, None).unwrap().panels[0];
        assert_eq!(p.groups, ["256KB", "512KB"]);
        assert_eq!(p.series, ["lbm", "bfs"]);
        assert_eq!(p.values[1], [Some(2.0), None]);
        let mut t = out.clone();
        t.records = ["t=16", "t=2", "t=8", "Baseline"]
            .iter()
            .map(|p| rec("8MB", "lake", p, "m", 1.0))
            .collect();
        let p = &figure(&t, None).unwrap().panels[0];
        assert_eq!(p.groups, ["Baseline", "t=2", "t=8", "t=16"]);
    }

    #[test]
    fn csv_fields_quote_commas_and_quotes() {
        assert_eq!(
            split_csv(r#"a,"b,c","d""e""#).unwrap(),
            ["a", "b,c", "d\"e"]
        );
        assert!(split_csv(r#"a,"b"#).is_err());
        assert!(split_csv(r#"a,b"c"#).is_err());
        assert!(split_csv(r#"a,"b"c"#).is_err());
        assert_eq!(split_csv("a,,").unwrap(), ["a", "", ""]);
    }
}
