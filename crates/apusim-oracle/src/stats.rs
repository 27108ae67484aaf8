//! Counters of an oracle run: per (agent, stream) reads, writes, writebacks and prefetches with
//! their misses, bypasses and evictions — the same breakdown the rest of apusim reports, here
//! per *line reference* (an access that straddles a line boundary counts once per line).

use apusim_cache::{Geometry, Outcome, PolicyStat};
use apusim_trace::{Access, Agent, Op, Stream};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

pub use apusim_cache::Counts;

/// Number of agent slots: every agent byte (CPU cores 0..=127 and the GPU, 128).
const AGENTS: usize = Agent::GPU_ID as usize + 1;

/// The counters of one (agent, stream) in the hot loop: references and misses per op, indexed
/// by the op's number (no branch on it: ops are mixed at random in an LLC stream), then the
/// counts every op shares.
#[derive(Clone, Copy, Default)]
struct Cell {
    /// `[references, misses]` of `Op::Read`, `Op::Write`, `Op::Writeback`, `Op::Prefetch`.
    by_op: [[u64; 2]; 4],
    bypasses: u64,
    evictions: u64,
    dirty_evictions: u64,
}

impl Cell {
    fn counts(&self) -> Counts {
        let op = |o: Op| self.by_op[o as usize];
        let ([reads, read_misses], [writes, write_misses]) = (op(Op::Read), op(Op::Write));
        let ([writebacks, writeback_misses], [prefetches, prefetch_misses]) =
            (op(Op::Writeback), op(Op::Prefetch));
        Counts {
            reads,
            read_misses,
            writes,
            write_misses,
            writebacks,
            writeback_misses,
            prefetches,
            prefetch_misses,
            bypasses: self.bypasses,
            evictions: self.evictions,
            dirty_evictions: self.dirty_evictions,
            ..Counts::default()
        }
    }
}

/// Dense per (agent, stream) counters, filled in the hot loop.
#[derive(Clone)]
pub(crate) struct Table {
    cells: Vec<Cell>,
}

impl Table {
    pub(crate) fn new() -> Table {
        Table {
            cells: vec![Cell::default(); AGENTS * Stream::COUNT],
        }
    }
    #[inline]
    fn cell(&mut self, agent: Agent, stream: Stream) -> &mut Cell {
        &mut self.cells[agent.to_byte() as usize * Stream::COUNT + stream as usize]
    }
    /// Count one line reference and what it did.
    #[inline]
    pub(crate) fn record(&mut self, req: &Access, o: &Outcome) {
        let (miss, bypassed, evicted) = match o {
            Outcome::Hit { .. } => (false, false, &None),
            Outcome::Miss {
                bypassed, evicted, ..
            } => (true, *bypassed, evicted),
        };
        let c = self.cell(req.agent, req.stream);
        let by_op = &mut c.by_op[req.op as usize];
        by_op[0] += 1;
        by_op[1] += u64::from(miss);
        c.bypasses += u64::from(bypassed);
        if let Some(e) = evicted {
            let c = self.cell(e.meta.agent, e.meta.stream());
            c.evictions += 1;
            c.dirty_evictions += u64::from(e.meta.dirty());
        }
    }
    pub(crate) fn entries(&self) -> Vec<AgentStream> {
        let mut v = Vec::new();
        for (i, c) in self.cells.iter().enumerate() {
            let c = &c.counts();
            if c.accesses() == 0 && c.evictions == 0 {
                continue;
            }
            let (a, s) = (i / Stream::COUNT, i % Stream::COUNT);
            if let (Some(agent), Some(stream)) =
                (Agent::from_byte(a as u8), Stream::from_byte(s as u8))
            {
                v.push(AgentStream {
                    agent,
                    stream,
                    counts: *c,
                });
            }
        }
        v
    }
}

/// Counters of one (agent, stream).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentStream {
    pub agent: Agent,
    pub stream: Stream,
    #[serde(flatten)]
    pub counts: Counts,
}

/// The result of running one policy (OPT, OPT+Bypass, a registered policy with or without the
/// oracle bypass) over a trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OracleResult {
    /// The policy's name as given (`opt`, `opt-bypass`, `srrip-bypass`, ...).
    pub policy: String,
    pub geometry: Geometry,
    /// Accesses read from the trace.
    pub accesses: u64,
    /// Line references simulated (accesses split at line boundaries).
    pub references: u64,
    /// Per (agent, stream), in agent then stream order; only pairs that occur.
    pub by_agent_stream: Vec<AgentStream>,
    /// Sum over all CPU agents.
    pub cpu: Counts,
    /// The GPU's counters.
    pub gpu: Counts,
    pub total: Counts,
    /// Statistics of the registered policy, plus `oracle_bypasses` for bypass variants.
    pub policy_stats: Vec<PolicyStat>,
}

impl OracleResult {
    pub(crate) fn from_table(
        policy: &str,
        geometry: Geometry,
        accesses: u64,
        references: u64,
        table: &Table,
        policy_stats: Vec<PolicyStat>,
    ) -> OracleResult {
        let by = table.entries();
        let (mut cpu, mut gpu, mut total) =
            (Counts::default(), Counts::default(), Counts::default());
        for e in &by {
            if e.agent.is_gpu() {
                gpu.add(&e.counts);
            } else {
                cpu.add(&e.counts);
            }
            total.add(&e.counts);
        }
        OracleResult {
            policy: policy.to_string(),
            geometry,
            accesses,
            references,
            by_agent_stream: by,
            cpu,
            gpu,
            total,
            policy_stats,
        }
    }

    /// Counters summed over agents for one stream.
    pub fn stream(&self, stream: Stream) -> Counts {
        let mut c = Counts::default();
        for e in self.by_agent_stream.iter().filter(|e| e.stream == stream) {
            c.add(&e.counts);
        }
        c
    }

    /// Aligned text table: one row per (agent, stream), then CPU, GPU and total rows.
    pub fn to_table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "policy {}  LLC {}  ({} accesses, {} line references)",
            self.policy, self.geometry, self.accesses, self.references
        );
        let _ = writeln!(
            s,
            "{:<6} {:<16} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>10} {:>10} {:>8}",
            "agent",
            "stream",
            "reads",
            "read_miss",
            "writes",
            "write_miss",
            "wbacks",
            "wback_miss",
            "bypasses",
            "evictions",
            "rd_hit%"
        );
        let row = |s: &mut String, agent: &str, stream: &str, c: &Counts| {
            let rate = c
                .read_hit_rate()
                .map_or_else(|| "-".to_string(), |r| format!("{:.2}", 100.0 * r));
            let _ = writeln!(
                s,
                "{:<6} {:<16} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>10} {:>10} {:>8}",
                agent,
                stream,
                c.reads + c.prefetches,
                c.read_misses + c.prefetch_misses,
                c.writes,
                c.write_misses,
                c.writebacks,
                c.writeback_misses,
                c.bypasses,
                c.evictions,
                rate
            );
        };
        for e in &self.by_agent_stream {
            row(&mut s, &e.agent.to_string(), e.stream.name(), &e.counts);
        }
        row(&mut s, "cpu", "*", &self.cpu);
        row(&mut s, "gpu", "*", &self.gpu);
        row(&mut s, "all", "*", &self.total);
        for (k, v) in &self.policy_stats {
            let _ = writeln!(s, "  {k} = {v}");
        }
        s
    }

    /// CSV with a header row: one row per (agent, stream) plus `cpu`, `gpu`, `all` rows.
    pub fn to_csv(&self) -> String {
        let mut s = format!("policy,agent,stream,{}\n", Counts::CSV_COLUMNS);
        let row = |s: &mut String, agent: &str, stream: &str, c: &Counts| {
            let _ = writeln!(
                s,
                "{},{},{},{}",
                csv_field(&self.policy),
                agent,
                stream,
                c.csv()
            );
        };
        for e in &self.by_agent_stream {
            row(&mut s, &e.agent.to_string(), e.stream.name(), &e.counts);
        }
        row(&mut s, "cpu", "*", &self.cpu);
        row(&mut s, "gpu", "*", &self.gpu);
        row(&mut s, "all", "*", &self.total);
        s
    }

    /// JSON (pretty-printed).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

/// Quote a CSV field if it needs it.
pub(crate) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
