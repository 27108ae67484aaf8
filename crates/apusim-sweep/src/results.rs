//! Queries of the results database: runs filtered by their parameters, metric rows in long
//! format (CSV, JSON), and pivot tables normalized to a baseline with a geometric mean over
//! the rows, as the papers show them.

use crate::metrics::Metric;
use crate::store::{Store, StoredRun};
use anyhow::{bail, Result};
use apusim_sim::report::TextTable;
use std::collections::{BTreeMap, BTreeSet};

/// Which runs: by sweep, status and parameter values (`policy=lru`, `set.llc=8M,16,64`).
#[derive(Clone, Debug, Default)]
pub struct RunFilter {
    pub sweep: Option<String>,
    /// `ok`, `failed`, or `None` for both.
    pub status: Option<String>,
    pub params: Vec<(String, String)>,
}

/// Which metric rows: each given field must match exactly.
#[derive(Clone, Debug, Default)]
pub struct MetricFilter {
    pub metric: Option<String>,
    pub level: Option<String>,
    pub agent: Option<String>,
    pub stream: Option<String>,
}

impl MetricFilter {
    pub fn matches(&self, m: &Metric) -> bool {
        let eq = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        eq(&self.metric, &m.metric)
            && eq(&self.level, &m.level)
            && eq(&self.agent, &m.agent)
            && eq(&self.stream, &m.stream)
    }
}

/// A parameter of a run as text (`-` when the run does not have it).
pub fn param(run: &StoredRun, name: &str) -> String {
    match name {
        "key" => return run.run.key.clone(),
        "sweep" => return run.run.sweep.clone().unwrap_or_default(),
        "command" => return run.run.command.clone(),
        "status" => return run.run.status.clone(),
        _ => {}
    }
    match run.run.params.get(name) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => "-".into(),
    }
}

/// Parse `KEY=VALUE` filters.
pub fn parse_filters(list: &[String]) -> Result<Vec<(String, String)>> {
    list.iter()
        .map(|s| match s.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
            _ => bail!("--where {s}: expected PARAM=VALUE, e.g. --where policy=lru"),
        })
        .collect()
}

/// The runs that pass `f`. A parameter no run has is refused with the nearest one.
pub fn runs(store: &Store, f: &RunFilter) -> Result<Vec<StoredRun>> {
    let all = store.runs()?;
    let names = param_names(&all);
    for (k, _) in &f.params {
        if !names.contains(k) && !all.is_empty() {
            let near = apusim_registry::nearest(k, names.iter().map(String::as_str))
                .map(|n| format!("; did you mean `{n}`?"))
                .unwrap_or_default();
            bail!(
                "no run has a parameter `{k}`{near} (parameters: {})",
                names.iter().cloned().collect::<Vec<_>>().join(", ")
            );
        }
    }
    Ok(all
        .into_iter()
        .filter(|r| {
            f.sweep
                .as_ref()
                .is_none_or(|s| r.run.sweep.as_ref() == Some(s))
        })
        .filter(|r| f.status.as_ref().is_none_or(|s| &r.run.status == s))
        .filter(|r| f.params.iter().all(|(k, v)| &param(r, k) == v))
        .collect())
}

/// Every parameter name of the runs, with `key`, `sweep`, `command` and `status`.
pub fn param_names(runs: &[StoredRun]) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = ["key", "sweep", "command", "status"]
        .map(String::from)
        .into();
    for r in runs {
        if let serde_json::Value::Object(m) = &r.run.params {
            out.extend(m.keys().cloned());
        }
    }
    out
}

/// The parameters whose values differ between the runs (the swept ones), in name order.
pub fn varying(runs: &[StoredRun]) -> Vec<String> {
    param_names(runs)
        .into_iter()
        .filter(|n| n != "key" && n != "status" && n != "command")
        .filter(|n| {
            let vals: BTreeSet<String> = runs.iter().map(|r| param(r, n)).collect();
            vals.len() > 1
        })
        .collect()
}

/// A table of runs: short key, sweep, status, seconds and the swept parameters.
pub fn runs_table(runs: &[StoredRun]) -> String {
    let vary = varying(runs);
    let mut head = vec!["key".to_string(), "sweep".into(), "status".into()];
    head.extend(vary.iter().cloned());
    head.push("seconds".into());
    head.push("error".into());
    let mut t = TextTable::new(head);
    for r in runs {
        let mut row = vec![
            r.run.key[..12.min(r.run.key.len())].to_string(),
            r.run.sweep.clone().unwrap_or_else(|| r.run.command.clone()),
            r.run.status.clone(),
        ];
        row.extend(vary.iter().map(|n| param(r, n)));
        row.push(format!("{:.3}", r.run.seconds));
        row.push(r.run.error.clone().unwrap_or_default());
        t.row(row);
    }
    t.render()
}

/// Metric rows of the runs that pass `f`, each with its run.
pub fn rows<'a>(
    store: &Store,
    runs: &'a [StoredRun],
    f: &MetricFilter,
) -> Result<Vec<(&'a StoredRun, Metric)>> {
    let mut out = Vec::new();
    for r in runs {
        for m in store.metrics(r.id)? {
            if f.matches(&m) {
                out.push((r, m));
            }
        }
    }
    Ok(out)
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Long-format CSV: key, the runs' parameters, agent, level, stream, metric, value.
pub fn to_csv(runs: &[StoredRun], rows: &[(&StoredRun, Metric)]) -> String {
    let names: Vec<String> = param_names(runs)
        .into_iter()
        .filter(|n| n != "key")
        .collect();
    let mut s = String::from("key");
    for n in &names {
        s.push(',');
        s.push_str(&csv_field(n));
    }
    s.push_str(",agent,level,stream,metric,value\n");
    for (r, m) in rows {
        s.push_str(&r.run.key);
        for n in &names {
            s.push(',');
            s.push_str(&csv_field(&param(r, n)));
        }
        s.push_str(&format!(
            ",{},{},{},{},{}\n",
            csv_field(&m.agent),
            csv_field(&m.level),
            csv_field(&m.stream),
            csv_field(&m.metric),
            m.value
        ));
    }
    s
}

/// JSON: every run with its record and the metric rows that passed the filter.
pub fn to_json(runs: &[StoredRun], rows: &[(&StoredRun, Metric)]) -> Result<String> {
    let mut by_run: BTreeMap<i64, Vec<&Metric>> = BTreeMap::new();
    for (r, m) in rows {
        by_run.entry(r.id).or_default().push(m);
    }
    let list: Vec<serde_json::Value> = runs
        .iter()
        .map(|r| {
            let mut v = serde_json::to_value(r)?;
            v["metrics"] = serde_json::to_value(by_run.get(&r.id).cloned().unwrap_or_default())?;
            Ok(v)
        })
        .collect::<Result<_>>()?;
    Ok(serde_json::to_string_pretty(&list)?)
}

/// A pivot table: one value per (row, column), each the sum of a run's matching metric rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Pivot {
    pub row_param: String,
    pub col_param: String,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    /// `cells[row][col]`: `None` where no run has that pair.
    pub cells: Vec<Vec<Option<f64>>>,
    /// The column the cells are divided by, if any.
    pub baseline: Option<String>,
    /// Geometric mean of each column over the rows that have a value (with a baseline).
    pub geomean: Option<Vec<Option<f64>>>,
}

/// Pivot the metric rows: `row_param` × `col_param`, normalized to column `baseline` when
/// given. Two runs in one cell (another parameter varies too) are refused, naming it.
pub fn pivot(
    runs: &[StoredRun],
    rows: &[(&StoredRun, Metric)],
    row_param: &str,
    col_param: &str,
    baseline: Option<&str>,
) -> Result<Pivot> {
    if runs.is_empty() {
        bail!("no runs match");
    }
    let names = param_names(runs);
    for p in [row_param, col_param] {
        if !names.contains(p) {
            let near = apusim_registry::nearest(p, names.iter().map(String::as_str))
                .map(|n| format!("; did you mean `{n}`?"))
                .unwrap_or_default();
            bail!("no run has a parameter `{p}`{near}");
        }
    }
    let mut cell_run: BTreeMap<(String, String), &StoredRun> = BTreeMap::new();
    for r in runs.iter().filter(|r| r.run.status == "ok") {
        let k = (param(r, row_param), param(r, col_param));
        if let Some(other) = cell_run.insert(k.clone(), r) {
            let differ: Vec<String> = varying(&[other.clone(), r.clone()])
                .into_iter()
                .filter(|n| n != row_param && n != col_param && n != "sweep")
                .collect();
            bail!(
                "two runs for {row_param}={} {col_param}={}: they differ in {}; choose one \
                 with --where (e.g. --where {}={})",
                k.0,
                k.1,
                differ.join(", "),
                differ.first().map(String::as_str).unwrap_or("key"),
                differ
                    .first()
                    .map(|d| param(r, d))
                    .unwrap_or_else(|| r.run.key.clone())
            );
        }
    }
    let mut sums: BTreeMap<i64, f64> = BTreeMap::new();
    for (r, m) in rows {
        *sums.entry(r.id).or_default() += m.value;
    }
    let ordered = |f: &dyn Fn(&(String, String)) -> String| -> Vec<String> {
        let mut seen = Vec::new();
        for k in cell_run.keys() {
            let v = f(k);
            if !seen.contains(&v) {
                seen.push(v);
            }
        }
        seen
    };
    let mut row_names = ordered(&|k| k.0.clone());
    let mut col_names = ordered(&|k| k.1.clone());
    row_names.sort_by(|a, b| natural(a, b));
    col_names.sort_by(|a, b| natural(a, b));
    if let Some(b) = baseline {
        let Some(i) = col_names.iter().position(|c| c == b) else {
            bail!(
                "baseline `{b}` is not a value of `{col_param}` (values: {})",
                col_names.join(", ")
            );
        };
        let b = col_names.remove(i);
        col_names.insert(0, b);
    }
    let value = |row: &str, col: &str| -> Option<f64> {
        cell_run
            .get(&(row.to_string(), col.to_string()))
            .map(|r| sums.get(&r.id).copied().unwrap_or(0.0))
    };
    let cells: Vec<Vec<Option<f64>>> = row_names
        .iter()
        .map(|row| {
            let base = baseline.and_then(|b| value(row, b));
            col_names
                .iter()
                .map(|col| {
                    let v = value(row, col)?;
                    match (baseline, base) {
                        (None, _) => Some(v),
                        (Some(_), Some(b)) if b != 0.0 => Some(v / b),
                        (Some(_), _) => None,
                    }
                })
                .collect()
        })
        .collect();
    let geomean = baseline.map(|_| {
        (0..col_names.len())
            .map(|c| {
                let vals: Vec<f64> = cells.iter().filter_map(|r| r[c]).collect();
                geometric_mean(&vals)
            })
            .collect()
    });
    Ok(Pivot {
        row_param: row_param.into(),
        col_param: col_param.into(),
        rows: row_names,
        cols: col_names,
        cells,
        baseline: baseline.map(String::from),
        geomean,
    })
}

/// Order parameter values by their leading number when both have one (with a K, M or G
/// multiplier: `4M,16,64` before `16M,16,64`, `500` before `1000`), numbers before words,
/// words as text.
pub fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    fn lead(s: &str) -> Option<(f64, &str)> {
        let end = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len());
        let n: f64 = s[..end].parse().ok()?;
        let rest = &s[end..];
        let (m, rest) = match rest.chars().next() {
            Some('K' | 'k') => (1e3, &rest[1..]),
            Some('M' | 'm') => (1e6, &rest[1..]),
            Some('G' | 'g') => (1e9, &rest[1..]),
            _ => (1.0, rest),
        };
        Some((n * m, rest))
    }
    match (lead(a), lead(b)) {
        (Some((x, ra)), Some((y, rb))) => x
            .partial_cmp(&y)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| ra.cmp(rb)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// The geometric mean of positive values (`None` if there are none or one is not positive).
pub fn geometric_mean(vals: &[f64]) -> Option<f64> {
    if vals.is_empty() || !vals.iter().all(|v| v.is_finite() && *v > 0.0) {
        return None;
    }
    Some((vals.iter().map(|v| v.ln()).sum::<f64>() / vals.len() as f64).exp())
}

impl Pivot {
    fn fmt(v: Option<f64>, normalized: bool) -> String {
        match v {
            None => "-".into(),
            Some(x) if normalized => format!("{x:.4}"),
            Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{x:.0}"),
            Some(x) => format!("{x:.4}"),
        }
    }

    /// As an aligned text table (with a `geomean` row when normalized).
    pub fn render(&self) -> String {
        let mut head = vec![format!("{} \\ {}", self.row_param, self.col_param)];
        head.extend(self.cols.iter().cloned());
        let mut t = TextTable::new(head);
        let norm = self.baseline.is_some();
        for (name, row) in self.rows.iter().zip(&self.cells) {
            let mut cells = vec![name.clone()];
            cells.extend(row.iter().map(|v| Pivot::fmt(*v, norm)));
            t.row(cells);
        }
        if let Some(g) = &self.geomean {
            let mut cells = vec!["geomean".to_string()];
            cells.extend(g.iter().map(|v| Pivot::fmt(*v, true)));
            t.row(cells);
        }
        let mut s = t.render();
        if let Some(b) = &self.baseline {
            s.push_str(&format!("normalized to {} = {b}\n", self.col_param));
        }
        s
    }

    /// As CSV: the row parameter, then one column per column value; a `geomean` row last.
    pub fn to_csv(&self) -> String {
        let mut s = csv_field(&self.row_param);
        for c in &self.cols {
            s.push(',');
            s.push_str(&csv_field(c));
        }
        s.push('\n');
        let num = |v: &Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
        for (name, row) in self.rows.iter().zip(&self.cells) {
            s.push_str(&csv_field(name));
            for v in row {
                s.push(',');
                s.push_str(&num(v));
            }
            s.push('\n');
        }
        if let Some(g) = &self.geomean {
            s.push_str("geomean");
            for v in g {
                s.push(',');
                s.push_str(&num(v));
            }
            s.push('\n');
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::RunRecord;

    fn run(id: i64, mix: &str, policy: &str, llc: &str) -> StoredRun {
        StoredRun {
            id,
            run: RunRecord::new(
                format!("k{id}"),
                Some("s".into()),
                "sweep",
                "functional",
                serde_json::json!({"mix": mix, "policy": policy, "set.llc": llc}),
                serde_json::json!({}),
                vec![],
                (std::time::UNIX_EPOCH, std::time::UNIX_EPOCH),
                Ok(()),
            ),
        }
    }

    fn metric(v: f64) -> Metric {
        Metric {
            agent: "cpu0".into(),
            level: "llc".into(),
            stream: "data".into(),
            metric: "read_misses".into(),
            value: v,
        }
    }

    #[test]
    fn pivot_normalizes_to_the_baseline_with_a_geomean() {
        let runs = vec![
            run(1, "S1", "lru", "4M"),
            run(2, "S1", "srrip", "4M"),
            run(3, "D1", "lru", "4M"),
            run(4, "D1", "srrip", "4M"),
        ];
        let rows: Vec<(&StoredRun, Metric)> = vec![
            (&runs[0], metric(100.0)),
            (&runs[0], metric(100.0)),
            (&runs[1], metric(100.0)),
            (&runs[2], metric(50.0)),
            (&runs[3], metric(200.0)),
        ];
        let p = pivot(&runs, &rows, "mix", "policy", Some("srrip")).unwrap();
        assert_eq!(p.cols, vec!["srrip", "lru"]);
        assert_eq!(p.rows, vec!["D1", "S1"]);
        assert_eq!(p.cells[0], vec![Some(1.0), Some(0.25)]);
        assert_eq!(p.cells[1], vec![Some(1.0), Some(2.0)]);
        let g = p.geomean.as_ref().unwrap();
        assert_eq!(g[0], Some(1.0));
        assert!((g[1].unwrap() - (0.25f64 * 2.0).sqrt()).abs() < 1e-12);
        assert!(p.render().contains("geomean"));
        assert!(p.to_csv().starts_with("mix,srrip,lru\nD1,1,0.25\n"));
        let raw = pivot(&runs, &rows, "mix", "policy", None).unwrap();
        assert_eq!(raw.cells[1], vec![Some(200.0), Some(100.0)]);
        assert!(raw.geomean.is_none());
    }

    #[test]
    fn ambiguous_cells_and_unknown_names_are_refused() {
        let runs = vec![run(1, "S1", "lru", "4M"), run(2, "S1", "lru", "8M")];
        let e = pivot(&runs, &[], "mix", "policy", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("set.llc"), "{e}");
        let e = pivot(&runs, &[], "mix", "polcy", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `policy`"), "{e}");
        let e = pivot(&runs, &[], "mix", "set.llc", Some("2M"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("baseline"), "{e}");
    }

    #[test]
    fn values_order_by_their_leading_number() {
        let mut v = vec!["16M,16,64", "4M,16,64", "lru", "1000", "500", "8M,16,64"];
        v.sort_by(|a, b| natural(a, b));
        assert_eq!(
            v,
            ["500", "1000", "4M,16,64", "8M,16,64", "16M,16,64", "lru"]
        );
    }

    #[test]
    fn geometric_mean_needs_positive_values() {
        assert_eq!(geometric_mean(&[2.0, 8.0]), Some(4.0));
        assert_eq!(geometric_mean(&[]), None);
        assert_eq!(geometric_mean(&[1.0, 0.0]), None);
    }
}
