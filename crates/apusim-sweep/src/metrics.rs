//! A run's results in long format: one [`Metric`] row per (agent, level, stream, metric).
//! Empty strings stand for "not per agent", "not per level", "not per stream".

use apusim_cache::Counts;
use apusim_experiments::replay::Replayed;
use apusim_sim::stats::RunStats;
use apusim_sim::timed::SimResult;
use apusim_sim::RunResult;

/// One value of a run.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Metric {
    pub agent: String,
    pub level: String,
    pub stream: String,
    pub metric: String,
    pub value: f64,
}

fn m(agent: &str, level: &str, stream: &str, metric: &str, value: f64) -> Metric {
    Metric {
        agent: agent.to_string(),
        level: level.to_string(),
        stream: stream.to_string(),
        metric: metric.to_string(),
        value,
    }
}

/// Every counter of every level (and memory) per agent and stream, the instructions per
/// core, the trace's accesses and the LLC policy's own statistics.
pub fn functional(r: &RunResult) -> Vec<Metric> {
    let mut out = Vec::new();
    counters(&r.stats, &mut out);
    out
}

fn counters(s: &RunStats, out: &mut Vec<Metric>) {
    let levels = s.levels.iter().map(|l| (l.name.as_str(), &l.counts));
    for (level, table) in levels.chain(std::iter::once(("memory", &s.memory))) {
        for (a, st, c) in table.cells() {
            count_rows(&a.to_string(), level, &st.to_string(), c, out);
        }
    }
    for (i, n) in s.instructions.iter().enumerate() {
        out.push(m(&format!("cpu{i}"), "", "", "instructions", *n as f64));
    }
    out.push(m("", "", "", "trace_accesses", s.trace_accesses as f64));
    for (name, v) in &s.policy_stats {
        out.push(m("", "llc", "", &format!("policy.{name}"), *v));
    }
}

/// One (agent, level, stream)'s counters as rows.
fn count_rows(agent: &str, level: &str, stream: &str, c: &Counts, out: &mut Vec<Metric>) {
    for (name, v) in [
        ("reads", c.reads),
        ("read_misses", c.read_misses),
        ("writes", c.writes),
        ("write_misses", c.write_misses),
        ("writebacks", c.writebacks),
        ("writeback_misses", c.writeback_misses),
        ("prefetches", c.prefetches),
        ("prefetch_misses", c.prefetch_misses),
        ("bypasses", c.bypasses),
        ("evictions", c.evictions),
        ("dirty_evictions", c.dirty_evictions),
        ("back_invalidations", c.back_invalidations),
        ("idealized", c.idealized),
        ("accesses", c.accesses()),
        ("misses", c.misses()),
    ] {
        out.push(m(agent, level, stream, name, v as f64));
    }
}

/// A replay's rows: the LLC's counters per agent and stream (level `llc`, as a functional
/// run's), the stream's accesses and line references, the policy's own statistics, and with
/// the consumption the share of render-target blocks a texture read consumed.
pub fn replay(r: &Replayed) -> Vec<Metric> {
    let mut out = Vec::new();
    let res = &r.result;
    for c in &res.by_agent_stream {
        count_rows(
            &c.agent.to_string(),
            "llc",
            &c.stream.to_string(),
            &c.counts,
            &mut out,
        );
    }
    out.push(m("", "", "", "trace_accesses", res.accesses as f64));
    out.push(m("", "llc", "", "references", res.references as f64));
    for (name, v) in &res.policy_stats {
        out.push(m("", "llc", "", &format!("policy.{name}"), *v));
    }
    if let Some(share) = r.consumed_share {
        out.push(m("", "llc", "", "rt_consumed_share", share));
    }
    out
}

/// A `gpu-l1` run's rows, agent `gpu`, named as `apusim gpu-l1 run --csv`'s columns: every
/// counter (`l1_accesses`, `l1_misses`, `bypasses`, ..., `mem_writes`), every derived figure
/// (`l1_hit_rate`, `bypass_ratio`, `coverage`, ..., `l1_dynamic_energy_nj`) and the
/// predictor's storage (`storage_bytes_per_l1`, `storage_bytes_l2`, `storage_bytes_total`).
pub fn gpu_l1(r: &apusim_gpu::RunResult) -> Vec<Metric> {
    let mut out = Vec::new();
    for part in [
        serde_json::to_value(r.metrics),
        serde_json::to_value(r.derived),
    ] {
        if let Ok(serde_json::Value::Object(fields)) = part {
            for (name, v) in fields {
                if let Some(v) = v.as_f64() {
                    out.push(m("gpu", "", "", &name, v));
                }
            }
        }
    }
    for (name, v) in [
        ("storage_bytes_per_l1", r.storage_bytes_per_l1),
        ("storage_bytes_l2", r.storage_bytes_l2),
        ("storage_bytes_total", r.storage_bytes_total),
    ] {
        out.push(m("gpu", "", "", name, v));
    }
    out
}

/// The timed run's measured window: per core (instructions, cycles, IPC, each level's misses
/// and MPKI), per DRAM source, per stream (with its DRAM row-buffer outcomes) and the
/// system's figures, the GPU's cycles and IPC (a rendering GPU's frame rate and frames
/// rendered), and the functional counters of the whole run
/// under level names prefixed `functional.`.
pub fn timed(r: &SimResult) -> Vec<Metric> {
    let mut out = Vec::new();
    for c in &r.cores {
        let a = c.agent.as_str();
        out.push(m(a, "", "", "instructions", c.instructions as f64));
        out.push(m(a, "", "", "cycles", c.cycles as f64));
        out.push(m(a, "", "", "ipc", c.ipc));
        out.push(m(a, "", "", "restarts", c.restarts as f64));
        out.push(m(a, "llc", "", "request_cycles", c.llc_request_cycles));
        out.push(m(a, "llc", "", "requests", c.llc_requests as f64));
        for l in &c.levels {
            out.push(m(a, &l.level, "", "accesses", l.accesses as f64));
            out.push(m(a, &l.level, "", "misses", l.misses as f64));
            out.push(m(a, &l.level, "", "mpki", l.mpki));
        }
    }
    let sys = &r.system;
    for x in &sys.dram {
        for (name, v) in x.figures() {
            out.push(m(&x.agent, "dram", "", name, v));
        }
    }
    for x in &sys.streams {
        for (level, name, v) in x.figures() {
            out.push(m("", level, &x.stream, name, v));
        }
    }
    out.push(m("system", "", "", "cycles", r.cycles as f64));
    for (name, v) in sys.figures() {
        out.push(m("system", "", "", name, v));
    }
    if let Some(g) = &r.gpu {
        out.push(m(&g.agent, "", "", "cycles", g.cycles as f64));
        out.push(m(&g.agent, "", "", "ipc", g.ipc));
        out.push(m(
            &g.agent,
            "",
            "",
            "warp_instructions",
            g.stats.warp_instructions as f64,
        ));
        out.push(m(
            &g.agent,
            "",
            "",
            "load_latency_cycles",
            g.load_latency_cycles,
        ));
        if let Some(rr) = &g.render {
            out.push(m(&g.agent, "", "", "fps", rr.fps));
            out.push(m(&g.agent, "", "", "frames", rr.frames.len() as f64));
        }
        if let Some(e) = g.work_rate {
            out.push(m(&g.agent, "", "", "cycles_rel_error", e.relative_error()));
        }
    }
    if let Some(sp) = &r.speedup {
        for (name, v) in [
            ("weighted_speedup", sp.weighted),
            ("harmonic_speedup", sp.harmonic),
            ("max_slowdown", sp.max_slowdown),
        ] {
            out.push(m("system", "", "", name, v));
        }
        for j in &sp.jobs {
            out.push(m(&j.agent, "", "", "alone_ipc", j.alone_ipc));
            out.push(m(&j.agent, "", "", "slowdown", j.slowdown));
        }
    }
    for (name, v) in &r.policy_stats {
        out.push(m("", "llc", "", &format!("policy.{name}"), *v));
    }
    for x in &r.llc_occupancy {
        out.push(m(&x.agent, "llc", "", "occupancy_lines", x.lines));
        out.push(m(&x.agent, "llc", "", "occupancy_share", x.share));
    }
    let mut functional = Vec::new();
    counters(&r.functional, &mut functional);
    for mut f in functional {
        if !f.level.is_empty() {
            f.level = format!("functional.{}", f.level);
        } else {
            f.metric = format!("functional.{}", f.metric);
        }
        out.push(f);
    }
    out
}
