//! `apusim run` and `apusim demo`: functional runs of traces or built-in workloads under one or
//! more LLC policies, and their printed and written results.

use crate::args::{
    policy_list, policy_list_or_configured, registry_int, CacheArgs, LlcSwitchDumpArgs, OutputArgs,
    SystemArgs, WorkloadArgs,
};
use crate::outputs::{commit_outputs, stage_outputs_into, write_outputs};
use crate::{cli_oracle, cli_sweep, in_pool, inputs};
use anyhow::{bail, Result};
use apusim_sim::report::{self, CachegrindCounters};
use apusim_sim::{run_policies, RunOptions, RunResult, SystemConfig};
use apusim_trace::output::Outputs;
use clap::Args;

/// The inputs of `run` and `sim` (`apusim_experiments::jobs::run_inputs`): trace files (read
/// as `import` says), the jobs of a named mix, a scene's frames or a GPGPU kernel.
pub(super) fn run_inputs(
    traces: &[String],
    import: &inputs::ImportArgs,
    w: &WorkloadArgs,
    instructions: Option<u64>,
    cache: &CacheArgs,
    seed: u64,
    timed: bool,
) -> Result<Box<dyn apusim_sim::Inputs>> {
    use apusim_workloads::mixes::check_alone;
    let builtin = w.mix.is_some() || w.scene.is_some() || w.kernel.is_some() || w.cpu.is_some();
    if builtin && !import.is_default() {
        bail!(
            "--from and --lcs-params say how trace files are read; --mix, --scene, --kernel and \
             --cpu read none"
        );
    }
    if !builtin {
        return import.trace_inputs(traces, timed);
    }
    let alone = w.alone();
    if let Some(a) = alone {
        check_alone(a, w.resolution, w.scale, seed)?;
    }
    apusim_experiments::jobs::run_inputs(
        traces,
        w.mix.as_deref(),
        alone,
        w.resolution,
        w.scale,
        instructions,
        w.frames.unwrap_or_default(),
        seed,
        cache.dir(),
        timed,
    )
}

#[derive(Args)]
pub(super) struct DemoArgs {
    /// LLC policies to compare, comma-separated (`all`: every policy; default: the preset's
    /// policy and the baselines); the first is the reference of the comparison.
    #[arg(long, value_delimiter = ',')]
    policy: Option<Vec<String>>,
    /// Workload size multiplier, 1 to 1000 (1 is about ten million accesses).
    #[arg(long, default_value_t = 1, value_parser = crate::whole_number(1..=crate::MAX_SCALE))]
    scale: u64,
    #[command(flatten)]
    system: SystemArgs,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args)]
pub(super) struct RunArgs {
    /// Trace files (.apt, lackey, ChampSim, CSV, libCacheSim `*.oracleGeneral[.zst]`,
    /// `*.oracleGeneralOpNS[.zst]`, and its csv and txt forms with `--from`).
    /// `FILE@cpu2` or `FILE@gpu` assigns a single-agent trace to an agent; single-agent CPU
    /// traces that would collide are given the next free core.
    #[arg(required_unless_present_any = ["mix", "scene", "kernel", "cpu"])]
    traces: Vec<String>,
    #[command(flatten)]
    import: inputs::ImportArgs,
    #[command(flatten)]
    workload: WorkloadArgs,
    #[command(flatten)]
    cache: CacheArgs,
    /// LLC policy, or a comma-separated list to compare (run in parallel; `all` and
    /// `baselines` expand).
    #[arg(long, value_delimiter = ',')]
    policy: Option<Vec<String>>,
    /// Stop after this many accesses.
    #[arg(long, value_parser = crate::whole_number(1..=u64::MAX))]
    limit: Option<u64>,
    /// With --mix: each CPU job retires this many instructions (instead of `scale ×` 5 M;
    /// drp §3 runs 250000000), and the run follows drp §3's method: a job that ends before
    /// the others starts again, until every job, the GPU's too, has ended once. Every pass
    /// is counted. With --cpu: the kernel's length.
    #[arg(long, value_parser = registry_int(&apusim_workloads::cpu::INSTRUCTIONS))]
    instructions: Option<u64>,
    /// Print cachegrind's nine counters (use with --preset cachegrind).
    #[arg(long)]
    cachegrind: bool,
    /// Threads for multi-policy runs, 1 to 1024 (default: all cores).
    #[arg(long, value_parser = crate::thread_count)]
    threads: Option<usize>,
    #[command(flatten)]
    llc_switches: LlcSwitchDumpArgs,
    #[command(flatten)]
    system: SystemArgs,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    db: cli_sweep::DbArgs,
}

pub(super) fn demo(a: DemoArgs) -> Result<()> {
    let cfg = a.system.load()?;
    let names = policy_list(a.policy.as_deref(), &cfg);
    let inputs = inputs::DemoInputs {
        cpus: cfg.cpus.min(4) as u8,
        scale: a.scale,
        seed: cfg.seed,
    };
    println!(
        "apusim demo: {} on preset {} ({}), {} policies in parallel\n",
        apusim_sim::run::Inputs::describe(&inputs),
        cfg.name,
        cfg.llc.geometry,
        names.len()
    );
    let opts = RunOptions {
        progress: true,
        limit: None,
        continue_to_run: false,
        llc_switches: Default::default(),
    };
    let results = run_policies(&cfg, &names, &inputs, &opts)?;
    print_results(&cfg, &inputs, &results, &a.output, false, Outputs::new())
}

pub(super) fn run(a: RunArgs) -> Result<()> {
    if a.instructions.is_some() && a.workload.mix.is_none() && a.workload.cpu.is_none() {
        bail!(
            "--instructions is the length of a --mix's or a --cpu kernel's CPU jobs; trace \
             files, --scene and --kernel have their own length (`apusim sim --instructions` \
             replays a trace to a target)"
        );
    }
    let cfg = a.system.load_for(&a.workload)?;
    let names = policy_list_or_configured(a.policy.as_deref(), &cfg);
    if a.cachegrind && !cfg.cachegrind {
        bail!("--cachegrind output needs the cachegrind model: use --preset cachegrind");
    }
    let inputs = run_inputs(
        &a.traces,
        &a.import,
        &a.workload,
        a.instructions,
        &a.cache,
        cfg.seed,
        false,
    )?;
    let inputs = &*inputs;
    let mut switches = a.llc_switches.options()?;
    // The LLC dump streams into a reserved temporary file while the run proceeds and is
    // renamed into place together with --json and --csv, or not at all.
    let mut staged = Outputs::new();
    if let Some(p) = switches.dump_llc_trace.take() {
        switches.dump_llc_trace = Some(staged.reserve(&p)?);
        switches.dump_llc_name = Some(p);
    }
    let opts = RunOptions {
        progress: true,
        limit: a.limit,
        // drp §3's method: CPU jobs of a given length, early finishers running on.
        continue_to_run: a.instructions.is_some(),
        llc_switches: switches,
    };
    let mut db =
        a.db.open(names.iter().any(|n| cli_oracle::is_oracle_name(n)))?;
    if names.iter().any(|n| cli_oracle::is_oracle_name(n)) {
        let results = cli_oracle::run_with_oracles(&cfg, inputs, &names, &opts)?;
        return print_oracle(&results, &a.output);
    }
    let results = in_pool(a.threads, || run_policies(&cfg, &names, inputs, &opts))?;
    print_results(&cfg, inputs, &results, &a.output, a.cachegrind, staged)?;
    cli_sweep::record_run(db.as_mut(), &cfg, inputs, &opts, &results)
}

pub(super) fn print_oracle(
    results: &[apusim_oracle::OracleResult],
    out: &OutputArgs,
) -> Result<()> {
    print!("{}", cli_oracle::normalized_table(results));
    write_outputs(
        out,
        || Ok(serde_json::to_string_pretty(results)?),
        || {
            let mut csv = String::new();
            for (i, r) in results.iter().enumerate() {
                // One header line for all policies.
                for l in r.to_csv().lines().skip(if i == 0 { 0 } else { 1 }) {
                    csv.push_str(l);
                    csv.push('\n');
                }
            }
            csv
        },
    )
}

fn print_results(
    cfg: &SystemConfig,
    inputs: &dyn apusim_sim::Inputs,
    results: &[RunResult],
    out: &OutputArgs,
    cachegrind: bool,
    staged: Outputs,
) -> Result<()> {
    if cachegrind {
        for r in results {
            print!("{}", CachegrindCounters::from_stats(&r.stats)?.render());
        }
    } else if results.len() == 1 {
        print!("{}", report::run_table(&results[0]));
    } else {
        print!("{}", report::comparison_table(results));
    }
    // With the run's other outputs in `staged` (its LLC dump), committed together.
    commit_outputs(stage_outputs_into(
        staged,
        out,
        || report::to_json(cfg, &inputs.describe(), results),
        || report::to_csv(results),
    )?)?;
    let secs: f64 = results.iter().map(|r| r.seconds).sum();
    let accesses: u64 = results.iter().map(|r| r.stats.trace_accesses).sum();
    if secs > 0.0 {
        eprintln!(
            "simulated {accesses} accesses in {secs:.2} CPU-seconds ({:.1} M accesses/s per run)",
            accesses as f64 / secs / 1e6
        );
    }
    Ok(())
}
