//! `apusim sim`: the timed run (cores, caches, network, LLC and DRAM on one clock).
//!
//! This file holds `apusim sim`'s arguments and its run; its two printed forms, the text
//! report (`text`) and the CSV rows (`csv`), show the same fields and change together.

mod csv;
mod text;

pub use csv::csv;
pub use text::table;

use super::{
    in_pool, policy_list_or_configured, run_inputs, write_outputs, CacheArgs, OutputArgs,
    SystemArgs,
};
use anyhow::{Context, Result};
use apusim_sim::timed::{
    alone_runs, intervals, sim_policies, target_error, AloneOptions, IntervalSpec, SampleSpec,
    SimOptions, MAX_CYCLE,
};
use clap::Args;

#[derive(Args)]
pub struct SimArgs {
    /// Trace files, one per CPU core (`FILE@cpu2` assigns a core), as for `apusim run`.
    /// ChampSim traces (`*.champsimtrace`, `.xz`, `.gz`) are read with their registers and
    /// branches.
    #[arg(required_unless_present_any = ["mix", "scene", "kernel", "cpu"])]
    traces: Vec<String>,
    #[command(flatten)]
    import: crate::inputs::ImportArgs,
    #[command(flatten)]
    workload: crate::WorkloadArgs,
    #[command(flatten)]
    cache: CacheArgs,
    /// LLC policy, or a comma-separated list run side by side in parallel.
    #[arg(long, value_delimiter = ',')]
    policy: Option<Vec<String>>,
    /// Instructions each core retires before statistics start (at most 2^62).
    #[arg(long, default_value_t = 0, value_parser = crate::whole_number(0..=MAX_CYCLE))]
    warmup: u64,
    /// Instructions each core retires after the warm-up, 1 to 2^62 (default: to the end of
    /// its trace). A shorter trace is replayed, at most 10,000 times: a target that would need
    /// more replays is refused at the end of the trace's first pass.
    #[arg(long, value_parser = crate::whole_number(1..=MAX_CYCLE))]
    instructions: Option<u64>,
    /// Threads for multi-policy runs and alone runs, 1 to 1024 (default: all cores).
    #[arg(long, value_parser = crate::thread_count)]
    threads: Option<usize>,
    /// LLC policy of the alone runs behind weighted speedup (one for every policy compared,
    /// so speedups of two policies can be divided).
    #[arg(long, default_value = "lru", value_parser = crate::policy_name)]
    alone_policy: String,
    /// Skip the alone runs (no weighted speedup) for runs with more than one input.
    #[arg(long)]
    no_alone: bool,
    /// Record every counter at boundaries of this length, as a time series in the JSON
    /// (`intervals`) and CSV: `N` or `Ninstr` instructions retired by all cores together, or
    /// `Ncycles` CPU cycles; N may end in K, M or G (`1M`, `500Kcycles`); at most 2^62.
    #[arg(long, value_parser = parse_interval)]
    interval: Option<IntervalSpec>,
    /// Sample: short detailed windows with functional warming between them (SMARTS); each
    /// core's IPC is reported with its 99.7% confidence interval.
    #[arg(long)]
    sample: bool,
    /// CPU cycles one sampling period stands for (its detailed windows and the functional
    /// warming after them).
    #[arg(long, requires = "sample", default_value_t = SampleSpec::default().period,
          value_parser = crate::whole_number(1..=MAX_CYCLE))]
    sample_period: u64,
    /// Detailed CPU cycles before each measured window [default: 50000, or 200000 when the
    /// GPU renders on the timed pipeline]
    #[arg(long, requires = "sample", value_parser = crate::whole_number(0..=MAX_CYCLE))]
    sample_warmup: Option<u64>,
    /// CPU cycles of each measured window.
    #[arg(long, requires = "sample", default_value_t = SampleSpec::default().unit,
          value_parser = crate::whole_number(1..=MAX_CYCLE))]
    sample_unit: u64,
    /// Sample again with more windows until every core's IPC interval is within this
    /// relative error (`3%` or `0.03`), or say why the run cannot reach it.
    #[arg(long, requires = "sample", value_parser = target_error::parse_target)]
    target_error: Option<f64>,
    /// Idealized streams and forced GPU read bypass at the LLC (alone runs are made without
    /// them).
    #[command(flatten)]
    llc_switches: super::LlcSwitchArgs,
    #[command(flatten)]
    system: SystemArgs,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    db: crate::cli_sweep::DbArgs,
}

fn parse_interval(s: &str) -> Result<IntervalSpec, String> {
    s.parse()
}

pub fn run(a: SimArgs) -> Result<()> {
    let cfg = a.system.load_for(&a.workload)?;
    let names = policy_list_or_configured(a.policy.as_deref(), &cfg);
    // A CPU kernel alone is generated to the run's length (warm-up and target); a mix's CPU
    // jobs keep theirs (`scale ×` 5 M), early finishers running on.
    let cpu_length = a
        .workload
        .cpu
        .as_ref()
        .and(a.instructions)
        .map(|n| a.warmup.saturating_add(n));
    let inputs = run_inputs(
        &a.traces,
        &a.import,
        &a.workload,
        cpu_length,
        &a.cache,
        cfg.seed,
        true,
    )?;
    let inputs = &*inputs;
    let sample = a
        .sample
        .then_some(SampleSpec {
            period: a.sample_period,
            warmup: a.sample_warmup,
            unit: a.sample_unit,
        })
        .map(|s| s.check().map(|_| s))
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let sim_opts = SimOptions {
        warmup: a.warmup,
        instructions: a.instructions,
        progress: names.len() == 1,
        interval: a.interval,
        sample,
        llc_switches: a.llc_switches.options()?,
    };
    let mut db = a.db.open(false)?;
    if let Some(spec) = &a.interval {
        intervals::check(spec, a.warmup, a.instructions, inputs.open()?.len())?;
    }
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
    // Jobs that share the machine are compared with each running alone.
    let alone = if inputs.open()?.len() > 1 && !a.no_alone {
        let opts = AloneOptions::new(&a.alone_policy, a.cache.dir());
        let runs = in_pool(a.threads, || alone_runs(&cfg, inputs, &sim_opts, &opts))
            .context("alone runs for weighted speedup")?;
        let cached = runs.iter().filter(|r| r.cached).count();
        println!(
            "alone runs ({}): {} simulated, {} from the cache\n",
            opts.policy,
            runs.len() - cached,
            cached
        );
        Some((opts.policy, runs))
    } else {
        None
    };
    let results = in_pool(a.threads, || {
        sim_policies(
            &cfg,
            &names,
            inputs,
            &sim_opts,
            a.target_error,
            alone.as_ref().map(|(p, r)| (p.as_str(), r.as_slice())),
        )
    })?;
    for r in &results {
        print!("{}", table(r));
    }
    let sampled_frames = results
        .iter()
        .any(|r| r.sampling.is_some() && r.gpu.as_ref().is_some_and(|g| g.render.is_some()));
    if sampled_frames {
        // docs/validation.md, "Sampled against detailed, rendered frames".
        eprintln!(
            "warning: sampled frame times of the render pipeline are estimates; their interval \
             (`sampled GPU`) is the windows' sampling error, not the bias of warming a frame \
             phase by phase: at the default windows eight 1280x1024 frames of four built-in \
             scenes came out 8-12% short, two frames 7-27% short (docs/validation.md); run \
             detailed where frame times matter"
        );
    }
    write_outputs(
        &a.output,
        || Ok(serde_json::to_string_pretty(&results)?),
        || csv(&results),
    )?;
    let mut extra = Vec::new();
    if let Some((policy, _)) = &alone {
        extra.push(("alone_policy", serde_json::json!(policy)));
    }
    if let Some(s) = &sample {
        extra.push(("sample", apusim_sweep::key::sample_option(s)));
    }
    if let Some(e) = a.target_error {
        extra.push(("target_error", serde_json::json!(e)));
    }
    if let Some(i) = &a.interval {
        extra.push(("interval", serde_json::json!(format!("{i:?}"))));
    }
    crate::cli_sweep::record_sim(db.as_mut(), &cfg, inputs, &sim_opts, &extra, &results)
}
