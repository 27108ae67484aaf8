//! Reports of functional runs: aligned tables, side-by-side policy comparisons, CSV, JSON,
//! cachegrind's counter line, and atomic file output.

use crate::run::RunResult;
use crate::stats::{Counts, LevelStats, RunStats};
use anyhow::{Context, Result};
use apusim_trace::{Agent, Stream};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// Write `bytes` to `path` atomically: a temporary file in the same directory, renamed over
/// the target, so a crash never leaves half a file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = apusim_trace::output::temp_beside(path).with_context(|| {
        format!(
            "creating a temporary file in {}",
            apusim_trace::output::dir_of(path).display()
        )
    })?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Temporary files are private (0600); a report gets a normal file's mode.
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

/// A simple aligned text table: first column left-aligned, the rest right-aligned.
pub struct TextTable {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Per column: right-align (every cell is a number); computed by `render`.
    numeric: Vec<bool>,
}

fn is_numeric(c: &str) -> bool {
    c == "-"
        || c.chars()
            .all(|ch| ch.is_ascii_digit() || ".,%-+e".contains(ch))
}

impl TextTable {
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> TextTable {
        TextTable {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
            numeric: Vec::new(),
        }
    }
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }
    pub fn render(&self) -> String {
        let n = self.header.len();
        let mut this = TextTable {
            header: self.header.clone(),
            rows: self.rows.clone(),
            numeric: vec![true; n],
        };
        for r in &self.rows {
            for (i, c) in r.iter().enumerate().take(n) {
                this.numeric[i] &= i > 0 && is_numeric(c);
            }
        }
        this.render_aligned()
    }

    fn render_aligned(&self) -> String {
        let n = self.header.len();
        let mut width = vec![0; n];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in r.iter().enumerate().take(n) {
                width[i] = width[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        for (k, r) in std::iter::once(&self.header).chain(&self.rows).enumerate() {
            let mut line = String::new();
            for (i, c) in r.iter().enumerate().take(n) {
                let sep = if i == 0 { "" } else { "  " };
                // Numbers right-aligned, text left-aligned (headers follow their column).
                let numeric = self.numeric[i];
                if numeric {
                    let _ = write!(line, "{sep}{c:>w$}", w = width[i]);
                } else {
                    let _ = write!(line, "{sep}{c:<w$}", w = width[i]);
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
            if k == 0 {
                out.push_str(&"-".repeat(width.iter().sum::<usize>() + 2 * (n - 1)));
                out.push('\n');
            }
        }
        out
    }
}

/// `num / den` as a percentage with two decimals, `-` when `den` is 0.
pub fn pct(num: u64, den: u64) -> String {
    if den == 0 {
        "-".into()
    } else {
        format!("{:.2}%", 100.0 * num as f64 / den as f64)
    }
}

fn mpki(misses: u64, instructions: u64) -> String {
    if instructions == 0 {
        "-".into()
    } else {
        format!("{:.3}", 1000.0 * misses as f64 / instructions as f64)
    }
}

/// Retired instructions of one agent (0 if unknown).
fn instructions_of(stats: &RunStats, a: Agent) -> u64 {
    let cpus = stats.instructions.len() - 1;
    stats.instructions[a.dense_index(cpus)]
}

/// The full report of one run: a per-level summary per agent, then the LLC per agent and
/// stream.
pub fn run_table(r: &RunResult) -> String {
    let s = &r.stats;
    let mut out = format!(
        "policy {}: {} trace accesses\n\n",
        r.policy, s.trace_accesses
    );
    let mut t = TextTable::new([
        "level/agent",
        "accesses",
        "hits",
        "misses",
        "miss rate",
        "MPKI",
        "writebacks in",
        "bypasses",
        "evictions",
        "dirty evict",
        "back-inval",
    ]);
    for level in &s.levels {
        for a in level.counts.agents() {
            let c = level.counts.agent_total(a);
            if c == Counts::default() {
                continue;
            }
            t.row(vec![
                format!("{} {a}", level.name),
                c.accesses().to_string(),
                c.hits().to_string(),
                c.misses().to_string(),
                pct(c.misses(), c.accesses()),
                mpki(c.read_misses + c.write_misses, instructions_of(s, a)),
                c.writebacks.to_string(),
                c.bypasses.to_string(),
                c.evictions.to_string(),
                c.dirty_evictions.to_string(),
                c.back_invalidations.to_string(),
            ]);
        }
    }
    out.push_str(&t.render());
    out.push('\n');
    out.push_str(&stream_table(s.llc(), s));
    let mem = s.memory.total();
    let _ = writeln!(
        out,
        "\nmemory: {} reads, {} writes",
        mem.reads + mem.prefetches,
        mem.writes + mem.writebacks
    );
    if !s.policy_stats.is_empty() {
        out.push_str("\npolicy statistics:\n");
        for (k, v) in &s.policy_stats {
            let _ = writeln!(out, "  {k} = {v}");
        }
    }
    out
}

/// Per agent and stream counters of one level.
pub fn stream_table(level: &LevelStats, s: &RunStats) -> String {
    let mut t = TextTable::new([
        format!("{} agent/stream", level.name).as_str(),
        "reads",
        "read hits",
        "read misses",
        "writes",
        "write hits",
        "write misses",
        "writebacks",
        "wb misses",
        "bypasses",
        "read MPKI",
    ]);
    for (a, st, c) in level.counts.cells() {
        t.row(vec![
            format!("{a} {st}"),
            c.reads.to_string(),
            (c.reads - c.read_misses).to_string(),
            c.read_misses.to_string(),
            c.writes.to_string(),
            (c.writes - c.write_misses).to_string(),
            c.write_misses.to_string(),
            c.writebacks.to_string(),
            c.writeback_misses.to_string(),
            c.bypasses.to_string(),
            mpki(c.read_misses, instructions_of(s, a)),
        ]);
    }
    t.render()
}

/// Several policies side by side: LLC read misses per agent class normalized to the first
/// policy (the layout of drp-reuse-probability-shared-llc.txt Fig. 2), plus hit rates.
pub fn comparison_table(results: &[RunResult]) -> String {
    let Some(first) = results.first() else {
        return String::new();
    };
    let base = |r: &RunResult| {
        let l = &r.stats.llc().counts;
        (
            l.class_total(false).read_misses,
            l.class_total(true).read_misses,
        )
    };
    let (b_cpu, b_gpu) = base(first);
    let ratio = |x: u64, b: u64| {
        if b == 0 {
            "-".to_string()
        } else {
            format!("{:.3}", x as f64 / b as f64)
        }
    };
    let mut t = TextTable::new([
        "policy",
        "LLC accesses",
        "LLC hit rate",
        "CPU read misses",
        "GPU read misses",
        "read misses",
        "CPU norm",
        "GPU norm",
        "total norm",
        "memory accesses",
    ]);
    for r in results {
        let l = &r.stats.llc().counts;
        let all = l.total();
        let (cpu, gpu) = base(r);
        let mem = r.stats.memory.total().accesses();
        t.row(vec![
            r.policy.clone(),
            all.accesses().to_string(),
            pct(all.hits(), all.accesses()),
            cpu.to_string(),
            gpu.to_string(),
            (cpu + gpu).to_string(),
            ratio(cpu, b_cpu),
            ratio(gpu, b_gpu),
            ratio(cpu + gpu, b_cpu + b_gpu),
            mem.to_string(),
        ]);
    }
    format!(
        "LLC read misses normalized to {} ({} trace accesses)\n{}",
        first.policy,
        first.stats.trace_accesses,
        t.render()
    )
}

/// One CSV row per (policy, level, agent, stream) with every counter.
pub fn to_csv(results: &[RunResult]) -> String {
    let mut out = format!(
        "policy,level,agent,stream,{},back_invalidations,idealized\n",
        Counts::CSV_COLUMNS
    );
    for r in results {
        let levels = r.stats.levels.iter().map(|l| (l.name.as_str(), &l.counts));
        let memory = std::iter::once(("memory", &r.stats.memory));
        for (name, table) in levels.chain(memory) {
            for (a, s, c) in table.cells() {
                let _ = writeln!(
                    out,
                    "{},{name},{a},{s},{},{},{}",
                    r.policy,
                    c.csv(),
                    c.back_invalidations,
                    c.idealized
                );
            }
        }
    }
    out
}

#[derive(Serialize)]
struct JsonReport<'a> {
    apusim_version: &'static str,
    config: &'a crate::config::SystemConfig,
    inputs: &'a str,
    results: &'a [RunResult],
}

/// The whole run as JSON: version, configuration, inputs and every counter.
pub fn to_json(
    cfg: &crate::config::SystemConfig,
    inputs: &str,
    results: &[RunResult],
) -> Result<String> {
    let r = JsonReport {
        apusim_version: env!("CARGO_PKG_VERSION"),
        config: cfg,
        inputs,
        results,
    };
    Ok(serde_json::to_string_pretty(&r)?)
}

/// cachegrind's nine counters of a run on the `cachegrind` preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize)]
pub struct CachegrindCounters {
    pub ir: u64,
    pub i1mr: u64,
    pub ilmr: u64,
    pub dr: u64,
    pub d1mr: u64,
    pub dlmr: u64,
    pub dw: u64,
    pub d1mw: u64,
    pub dlmw: u64,
}

impl CachegrindCounters {
    /// Read the counters off a run of one core: I1 is level `l1i`, D1 `l1d`, LL the LLC.
    pub fn from_stats(s: &RunStats) -> Result<CachegrindCounters> {
        let core = Agent::cpu(0);
        let get = |name: &str, st: Stream| -> Result<Counts> {
            let level = if name == "llc" {
                Some(s.llc())
            } else {
                s.level(name)
            };
            let level =
                level.with_context(|| format!("cachegrind output needs a `{name}` level"))?;
            Ok(*level.counts.get(core, st))
        };
        let i1 = get("l1i", Stream::CpuInstr)?;
        let il = get("llc", Stream::CpuInstr)?;
        let d1 = get("l1d", Stream::CpuData)?;
        let dl = get("llc", Stream::CpuData)?;
        Ok(CachegrindCounters {
            ir: i1.reads,
            i1mr: i1.read_misses,
            ilmr: il.read_misses,
            dr: d1.reads,
            d1mr: d1.read_misses,
            dlmr: dl.read_misses,
            dw: d1.writes,
            d1mw: d1.write_misses,
            dlmw: dl.write_misses,
        })
    }

    /// The two lines cachegrind writes in its output file.
    pub fn render(&self) -> String {
        format!(
            "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\nsummary: {} {} {} {} {} {} {} {} {}\n",
            self.ir,
            self.i1mr,
            self.ilmr,
            self.dr,
            self.d1mr,
            self.dlmr,
            self.dw,
            self.d1mw,
            self.dlmw
        )
    }
}
