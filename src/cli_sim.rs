//! `apusim sim`: the timed run (cores, caches, network, LLC and DRAM on one clock).

use super::{
    in_pool, policy_list_or_configured, run_inputs, write_outputs, CacheArgs, OutputArgs,
    SystemArgs,
};
use anyhow::{bail, Context, Result};
use apusim_sim::report::TextTable;
use apusim_sim::timed::{sim_policy, SimOptions, SimResult};
use clap::Args;
use rayon::prelude::*;

#[derive(Args)]
pub struct SimArgs {
    /// Trace files, one per CPU core (`FILE@cpu2` assigns a core), as for `apusim run`.
    /// ChampSim traces (`*.champsimtrace`, `.xz`, `.gz`) are read with their registers and
    /// branches.
    #[arg(required_unless_present = "mix")]
    traces: Vec<String>,
    /// Run a named mix of built-in workloads (see `apusim mixes`) instead of trace files.
    #[arg(long, conflicts_with = "traces")]
    mix: Option<String>,
    /// Size multiplier of a --mix (as for `apusim run`).
    #[arg(long, default_value_t = 1)]
    scale: u64,
    #[command(flatten)]
    cache: CacheArgs,
    /// LLC policy, or a comma-separated list run side by side in parallel.
    #[arg(long, value_delimiter = ',')]
    policy: Option<Vec<String>>,
    /// Instructions each core retires before statistics start.
    #[arg(long, default_value_t = 0)]
    warmup: u64,
    /// Instructions each core retires after the warm-up (default: to the end of its trace).
    #[arg(long)]
    instructions: Option<u64>,
    /// Threads for multi-policy runs (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    #[command(flatten)]
    system: SystemArgs,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(a: SimArgs) -> Result<()> {
    if a.scale == 0 {
        bail!("--scale must be at least 1");
    }
    if a.instructions == Some(0) {
        bail!("--instructions must be at least 1 (omit it to run every trace to its end)");
    }
    if a.threads == Some(0) {
        bail!("--threads must be at least 1");
    }
    let cfg = a.system.load()?;
    let names = policy_list_or_configured(a.policy.as_deref(), &cfg);
    let inputs = run_inputs(
        &a.traces,
        a.mix.as_deref(),
        a.scale,
        &a.cache,
        cfg.seed,
        true,
    )?;
    let inputs = &*inputs;
    let opts = SimOptions {
        warmup: a.warmup,
        instructions: a.instructions,
        progress: names.len() == 1,
    };
    println!(
        "apusim sim: {} on preset {} (core {}, network {}, LLC {} {}, DRAM {})\n",
        inputs.describe(),
        cfg.name,
        cfg.timing.core_model(),
        cfg.timing.network_model(),
        cfg.llc.geometry,
        cfg.llc.policy,
        cfg.timing.dram
    );
    let results: Vec<SimResult> = in_pool(a.threads, || {
        names
            .par_iter()
            .map(|n| sim_policy(&cfg, n, inputs, &opts).with_context(|| format!("policy {n}")))
            .collect::<Result<Vec<_>>>()
    })?;
    for r in &results {
        print!("{}", table(r));
    }
    write_outputs(
        &a.output,
        || Ok(serde_json::to_string_pretty(&results)?),
        || csv(&results),
    )
}

/// One policy's result as a table per core plus a summary.
pub fn table(r: &SimResult) -> String {
    let mut t = TextTable::new([
        "agent",
        "instructions",
        "cycles",
        "IPC",
        "L1D MPKI",
        "L2 MPKI",
        "LLC MPKI",
        "LLC rt",
    ]);
    let mpki = |c: &apusim_sim::timed::CoreResult, name: &str| {
        c.levels
            .iter()
            .find(|l| l.level == name)
            .map(|l| format!("{:.2}", l.mpki))
            .unwrap_or_else(|| "-".into())
    };
    for c in &r.cores {
        t.row(vec![
            format!("{}{}", c.agent, if c.reached_target { "" } else { "*" }),
            c.instructions.to_string(),
            c.cycles.to_string(),
            format!("{:.4}", c.ipc),
            mpki(c, "l1d"),
            mpki(c, "l2"),
            mpki(c, "llc"),
            format!("{:.1}", c.llc_request_cycles),
        ]);
    }
    let mut s = format!("policy {} ({:.1} s)\n{}", r.policy, r.seconds, t.render());
    if r.cores.iter().any(|c| !c.reached_target) {
        s.push_str("* the trace ended before the instruction target\n");
    }
    s.push_str(&format!(
        "LLC rt: mean cycles from a core's request to the LLC until its data returned.\n\
         LLC misses {} (mean {:.1} uncore cycles to fill), DRAM {:.2} GB/s, row-hit rate {:.3}, \
         read latency {:.1} DRAM cycles; network {} messages, {:.0} cycles waited\n\n",
        r.llc_misses,
        r.llc_miss_cycles,
        r.dram_bandwidth_gbps,
        r.dram_row_hit_rate,
        r.dram_read_latency_cycles,
        r.network_messages,
        r.network_wait_cycles
    ));
    s
}

/// Long format: policy, agent, metric, value.
pub fn csv(results: &[SimResult]) -> String {
    let mut s = String::from("policy,agent,metric,value\n");
    for r in results {
        for c in &r.cores {
            let mut row = |m: &str, v: String| {
                s.push_str(&format!("{},{},{m},{v}\n", r.policy, c.agent));
            };
            row("instructions", c.instructions.to_string());
            row("cycles", c.cycles.to_string());
            row("ipc", c.ipc.to_string());
            row("llc_request_cycles", c.llc_request_cycles.to_string());
            for l in &c.levels {
                row(&format!("{}.mpki", l.level), l.mpki.to_string());
                row(&format!("{}.misses", l.level), l.misses.to_string());
            }
        }
        for (m, v) in [
            ("cycles", r.cycles as f64),
            ("llc_misses", r.llc_misses as f64),
            ("llc_miss_cycles", r.llc_miss_cycles),
            ("dram_bandwidth_gbps", r.dram_bandwidth_gbps),
            ("dram_row_hit_rate", r.dram_row_hit_rate),
            ("dram_read_latency_cycles", r.dram_read_latency_cycles),
        ] {
            s.push_str(&format!("{},system,{m},{v}\n", r.policy));
        }
    }
    s
}
