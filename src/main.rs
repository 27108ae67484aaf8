//! `apusim`: the command-line front end. Every subcommand is a thin layer over the library
//! crates: `apusim-trace` (formats), `apusim-cache` (engine, policies), `apusim-sim`
//! (configuration, functional runs, reports), `apusim-workloads` (generators) and
//! `apusim-dram` (DRAM timing).
//!
//! This file holds the command line and its dispatch; `args` holds the arguments several
//! commands share, `outputs` writes their files, and each `cli_*` module one command.

mod args;
mod cli_describe;
mod cli_dram;
mod cli_gpu;
mod cli_oracle;
mod cli_render;
mod cli_run;
mod cli_sim;
mod cli_study;
mod cli_sweep;
mod cli_workloads;
mod inputs;
mod outputs;
mod progress;

use anyhow::Result;
use apusim_sim::report;
use apusim_sim::run::in_pool;
use apusim_sim::SystemConfig;
// The largest `--scale`, shared with the studies' `scale` option.
use apusim_workloads::MAX_SCALE;
use args::{
    at_least_one, policy_list_or_configured, policy_name, thread_count, whole_number,
    writable_output, CacheArgs, LlcSwitchArgs, OutputArgs, SystemArgs, WorkloadArgs,
};
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use cli_run::{demo, print_oracle, run, run_inputs, DemoArgs, RunArgs};
use outputs::{commit_outputs, stage_outputs, write_outputs};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "apusim",
    version,
    about = "Memory-system simulator for CPU-GPU heterogeneous processors",
    long_about = "apusim simulates the caches and memory of processors where CPU cores and a GPU \
                  share a last-level cache. Start with `apusim demo`."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a built-in CPU+GPU mix through the 4C1G system under every baseline policy.
    Demo(DemoArgs),
    /// Run traces through a configured hierarchy (functional, untimed).
    Run(RunArgs),
    /// Timed run: cores, caches, ring, LLC and DRAM on one clock; IPC per core.
    Sim(cli_sim::SimArgs),
    /// List the LLC policies.
    Policies,
    /// Describe one LLC policy, core model, network, GPU model or DRAM scheduler: what it is,
    /// its paper, and each parameter's default, range, unit and meaning.
    Describe {
        /// The registered name (`apusim policies` lists the LLC policies).
        name: String,
    },
    /// List the built-in system presets, or show one as TOML.
    Presets {
        /// Print this preset's full configuration (after any --set overrides).
        name: Option<String>,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Inspect, convert and record traces.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// Run a DRAM request trace through the DRAM timing model.
    Dram(cli_dram::DramArgs),
    /// Generate a built-in workload's trace.
    #[command(subcommand)]
    Gen(cli_workloads::GenCommand),
    /// List the built-in GPGPU and CPU workload generators.
    Workloads,
    /// List the papers' workload mixes (run one with `apusim run --mix NAME`).
    Mixes,
    /// Replay policies and oracles (opt, opt-bypass, POLICY-bypass) on an LLC access stream.
    Oracle(OracleArgs),
    /// Reuse characterization of an LLC access stream under one policy (OPT included).
    Reuse(ReuseArgs),
    /// GPU L1 data caches with adaptive bypassing (adaptive-gpu-l1-bypassing.txt): runs and studies.
    #[command(subcommand, name = "gpu-l1")]
    GpuL1(cli_gpu::GpuCommand),
    /// The papers' figures and tables, one command each, functional and timed: gspc (rendered
    /// frames), drp (the S/D/Q mixes), gpu-access-criticality (crit-*), adaptive GPU L1
    /// bypassing (bypass-*) and TLP-aware caching (tap-*).
    #[command(subcommand)]
    Study(cli_study::StudyCommand),
    /// Run a grid of runs (a sweep spec) on every core into a results database; skips the
    /// runs the database already holds.
    Sweep(cli_sweep::SweepArgs),
    /// List, filter and export a results database; pivot tables normalized to a baseline;
    /// `results merge` folds shard databases into one.
    Results(cli_sweep::ResultsArgs),
    /// Draw a study's figure (SVG or PNG) from the long CSV of `apusim study ... --csv`,
    /// without running the study again.
    Plot(cli_study::PlotCsvArgs),
}

#[derive(Args)]
struct OracleArgs {
    /// An LLC access stream: `.apt` (e.g. from `apusim run --dump-llc-trace`) or any trace
    /// the importers read, such as libCacheSim's `*.oracleGeneral[.zst]`.
    llc_trace: PathBuf,
    #[command(flatten)]
    import: inputs::ImportArgs,
    /// Policies, comma-separated: `opt`, `opt-bypass`, `POLICY-bypass`, or any LLC policy.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "drp-baseline,opt,opt-bypass,drp-baseline-bypass"
    )]
    policy: Vec<String>,
    #[command(flatten)]
    system: SystemArgs,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args)]
struct ReuseArgs {
    /// An LLC access stream: `.apt` (e.g. from `apusim run --dump-llc-trace`) or any trace
    /// the importers read, such as libCacheSim's `*.oracleGeneral[.zst]`.
    llc_trace: PathBuf,
    #[command(flatten)]
    import: inputs::ImportArgs,
    /// The replacement policy: `opt` or any LLC policy.
    #[arg(long, default_value = "opt")]
    policy: String,
    #[command(flatten)]
    system: SystemArgs,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Subcommand)]
enum TraceCommand {
    /// Print a trace's header and per-agent/per-stream counts.
    Info { file: PathBuf },
    /// Convert another tool's trace into .apt.
    Convert {
        #[command(flatten)]
        import: inputs::ImportArgs,
        input: PathBuf,
        #[arg(short, long, value_parser = writable_output)]
        output: PathBuf,
        /// Agent of the converted accesses (cpuN or gpu).
        #[arg(long, default_value = "cpu0")]
        agent: String,
    },
    /// Run a program under valgrind lackey and convert its accesses on the fly.
    Record {
        #[arg(short, long, value_parser = writable_output)]
        output: PathBuf,
        #[arg(long, default_value = "cpu0")]
        agent: String,
        /// The program and its arguments (after `--`).
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
}

fn main() {
    restore_sigpipe();
    // Progress spinners and bars on a terminal, periodic status lines in a log (the
    // simulation library only reports).
    let log_every = progress::log_interval().unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(1);
    });
    apusim_sim::progress::install(Box::new(progress::Stderr::new(log_every)));
    let mut cmd = negative_values(Cli::command());
    let mut matches = cmd.clone().get_matches();
    let cli = Cli::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| e.format(&mut cmd).exit());
    if let Err(e) = dispatch(cli) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

/// Give SIGPIPE back its default action, as every Unix filter has it: `apusim trace info T |
/// head` then ends quietly when `head` closes the pipe, instead of panicking in `println!`
/// (the Rust runtime ignores SIGPIPE, so a write to a closed pipe returns an error that the
/// printing macros turn into a panic). Files being staged for an atomic commit are left as
/// temporary files, as after any kill, and the next run sweeps them.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first in `main`, before any other thread exists; SIG_DFL is a valid
    // disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// `cmd` with every option that takes a value accepting one that starts with `-` and reads
/// as a number: `--scale -1` then reaches the option's own check, whose error names the
/// option and its range, instead of clap's "unexpected argument '-1'", which names neither.
/// Positional arguments keep clap's default (a lone `-1` is not taken for a file).
fn negative_values(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        if !a.is_positional() && a.get_action().takes_values() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    })
    .mut_subcommands(negative_values)
}

fn dispatch(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Demo(a) => demo(a),
        Command::Run(a) => run(a),
        Command::Sim(a) => cli_sim::run(a),
        Command::Policies => {
            print!("{}", policies_table());
            Ok(())
        }
        Command::Describe { name } => {
            print!("{}", cli_describe::describe(&name)?);
            Ok(())
        }
        Command::Presets { name, set } => presets(name, &set),
        Command::Trace(t) => inputs::trace_command(t),
        Command::Dram(a) => cli_dram::run(a),
        Command::GpuL1(c) => cli_gpu::run(c),
        Command::Study(c) => cli_study::run(c),
        Command::Sweep(a) => cli_sweep::sweep(a),
        Command::Results(a) => cli_sweep::results(a),
        Command::Plot(a) => cli_study::plot_csv(a),
        Command::Gen(g) => cli_workloads::gen(g),
        Command::Workloads => {
            print!("{}", cli_workloads::list_workloads());
            Ok(())
        }
        Command::Mixes => {
            print!("{}", cli_workloads::list_mixes());
            Ok(())
        }
        Command::Oracle(a) => {
            let cfg = a.system.load()?;
            let results = cli_oracle::offline(&cfg, &a.llc_trace, &a.import, &a.policy)?;
            print_oracle(&results, &a.output)
        }
        Command::Reuse(a) => {
            let cfg = a.system.load()?;
            let r = cli_oracle::reuse(&cfg, &a.llc_trace, &a.import, &a.policy)?;
            print!("{}", r.to_table());
            write_outputs(&a.output, || Ok(r.to_json()), || r.to_csv())
        }
    }
}

fn policies_table() -> String {
    let mut t = report::TextTable::new(["policy", "description", "params", "source"]);
    for p in apusim_cache::policies::REGISTRY.iter() {
        t.row(vec![
            p.name.into(),
            p.description.into(),
            p.params.len().to_string(),
            p.paper.into(),
        ]);
    }
    t.render()
}

fn presets(name: Option<String>, set: &[String]) -> Result<()> {
    match name {
        Some(n) => print!("{}", SystemConfig::load_preset(&n, set)?.to_toml()),
        None => {
            let mut t = report::TextTable::new(["preset", "description"]);
            for (n, _) in apusim_sim::config::PRESETS {
                t.row(vec![n.to_string(), SystemConfig::preset(n)?.description]);
            }
            print!("{}", t.render());
        }
    }
    Ok(())
}
