//! `apusim`: the command-line front end. Every subcommand is a thin layer over the library
//! crates: `apusim-trace` (formats), `apusim-cache` (engine, policies), `apusim-sim`
//! (configuration, functional runs, reports), `apusim-workloads` (generators) and
//! `apusim-dram` (DRAM timing).

mod cli_describe;
mod cli_dram;
mod cli_gpu;
mod cli_oracle;
mod cli_render;
mod cli_sim;
mod cli_study;
mod cli_sweep;
mod cli_workloads;
mod inputs;

use anyhow::{bail, Context, Result};
use apusim_sim::report::{self, CachegrindCounters};
use apusim_sim::{run_policies, RunOptions, RunResult, SystemConfig};
use apusim_trace::output::Outputs;
// The largest `--scale`, shared with the studies' `scale` option.
use apusim_workloads::MAX_SCALE;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
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
    /// The papers' LLC studies, one command each (gspc Figs. 11-14 on rendered frames, drp
    /// Figs. 13-14 on the S/D/Q mixes; drp Figs. 1, 3, 4, 11, 12, 15 and Table 4 timed).
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

#[derive(Args)]
struct SystemArgs {
    /// Built-in system preset (see `apusim presets`).
    #[arg(long, default_value = "4c1g")]
    preset: String,
    /// A TOML configuration file (instead of a preset).
    #[arg(long, conflicts_with = "preset")]
    config: Option<PathBuf>,
    /// Override any configuration key, e.g. `--set llc=16777216,16,64` or `--set cpus=2`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Seed of every random choice.
    #[arg(long)]
    seed: Option<u64>,
}

impl SystemArgs {
    fn load(&self) -> Result<SystemConfig> {
        let cfg = apusim_experiments::jobs::load_system(
            &self.preset,
            self.config.as_deref(),
            &self.set,
            self.seed,
            None,
            false,
        )?;
        warn_shrinking(&cfg);
        Ok(cfg)
    }

    /// The system for a run of `w` (`apusim_experiments::jobs::load_system`): as many CPU
    /// cores as a mix has CPU jobs, none for a scene or kernel alone, unless `--set cpus=N`.
    fn load_for(&self, w: &WorkloadArgs) -> Result<SystemConfig> {
        let cfg = apusim_experiments::jobs::load_system(
            &self.preset,
            self.config.as_deref(),
            &self.set,
            self.seed,
            w.mix.as_deref(),
            w.scene.is_some() || w.kernel.is_some(),
        )?;
        warn_shrinking(&cfg);
        Ok(cfg)
    }
}

/// Say so on stderr when a level is smaller than one it backs: it runs, but the numbers are
/// most likely not those of the machine meant.
fn warn_shrinking(cfg: &SystemConfig) {
    for w in cfg.shrinking_levels() {
        eprintln!("warning: {w}");
    }
}

/// A built-in workload instead of trace files: a named mix, a scene's frames or a GPGPU
/// kernel.
#[derive(Args)]
pub(crate) struct WorkloadArgs {
    /// Run a named mix of built-in workloads (see `apusim mixes`) instead of trace files, on
    /// as many CPU cores as the mix has CPU jobs (unless `--set cpus=N`).
    #[arg(long, conflicts_with_all = ["traces", "scene", "kernel"])]
    pub(crate) mix: Option<String>,
    /// Render a built-in scene's frames on the GPU alone (see `apusim render scenes`), on no
    /// CPU core (unless `--set cpus=N`): e.g. `--scene lake --preset gspc`.
    #[arg(long, conflicts_with_all = ["traces", "kernel"])]
    pub(crate) scene: Option<String>,
    /// Run a GPGPU kernel (see `apusim workloads`) on the GPU alone, on no CPU core (unless
    /// `--set cpus=N`): e.g. `--kernel bfs --preset bypass`.
    #[arg(long, conflicts_with = "traces")]
    pub(crate) kernel: Option<String>,
    /// Resolution of a --scene, `WIDTHxHEIGHT` (each side checked by the scenes' `width` and
    /// `height` parameters: `apusim describe lake`).
    #[arg(long, default_value = "1280x1024", value_parser = resolution)]
    pub(crate) resolution: (u32, u32),
    /// Size multiplier of a --mix, --scene or --kernel, 1 to 1000: CPU jobs retire `scale ×`
    /// 5 M instructions, GPGPU jobs process `scale ×` their default elements, rendering jobs
    /// render `scale` frames.
    #[arg(long, default_value_t = 1, value_parser = registry_int(&apusim_workloads::SCALE))]
    pub(crate) scale: u64,
}

/// Where `--mix` traces are cached.
#[derive(Args)]
struct CacheArgs {
    /// Directory of cached --mix traces and `sim` alone runs (default: $APUSIM_CACHE_DIR,
    /// $XDG_CACHE_HOME/apusim or ~/.cache/apusim).
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Generate --mix traces on the fly and simulate alone runs afresh; read and write no cache.
    #[arg(long, conflicts_with = "cache_dir")]
    no_cache: bool,
}

impl CacheArgs {
    /// The cache directory in use, `None` with `--no-cache`.
    fn dir(&self) -> Option<PathBuf> {
        if self.no_cache {
            None
        } else {
            self.cache_dir
                .clone()
                .or_else(apusim_experiments::jobs::default_cache_dir)
        }
    }
}

/// The inputs of `run` and `sim` (`apusim_experiments::jobs::run_inputs`): trace files (read
/// as `import` says), the jobs of a named mix, a scene's frames or a GPGPU kernel.
fn run_inputs(
    traces: &[String],
    import: &inputs::ImportArgs,
    w: &WorkloadArgs,
    instructions: Option<u64>,
    cache: &CacheArgs,
    seed: u64,
    timed: bool,
) -> Result<Box<dyn apusim_sim::Inputs>> {
    use apusim_experiments::jobs::GpuAlone;
    use apusim_workloads::mixes::{check_alone, Alone};
    let builtin = w.mix.is_some() || w.scene.is_some() || w.kernel.is_some();
    if builtin && !import.is_default() {
        bail!("--from and --lcs-params say how trace files are read; --mix, --scene and --kernel read none");
    }
    if !builtin {
        return import.trace_inputs(traces, timed);
    }
    let alone = match (&w.scene, &w.kernel) {
        (Some(s), _) => Some(GpuAlone::Scene(s)),
        (None, Some(k)) => Some(GpuAlone::Kernel(k)),
        (None, None) => None,
    };
    match alone {
        Some(GpuAlone::Scene(s)) => check_alone(Alone::Scene(s), w.resolution, w.scale, seed)?,
        Some(GpuAlone::Kernel(k)) => check_alone(Alone::Kernel(k), w.resolution, w.scale, seed)?,
        None => {}
    }
    apusim_experiments::jobs::run_inputs(
        traces,
        w.mix.as_deref(),
        alone,
        w.resolution,
        w.scale,
        instructions,
        seed,
        cache.dir(),
        timed,
    )
}

#[derive(Args)]
struct OutputArgs {
    /// Write every counter as JSON to this file.
    #[arg(long, value_name = "FILE", value_parser = writable_output)]
    json: Option<PathBuf>,
    /// Write every counter as CSV to this file.
    #[arg(long, value_name = "FILE", value_parser = writable_output)]
    csv: Option<PathBuf>,
}

/// An output path whose directory exists and takes new files, checked when the command line
/// is read (outputs are written atomically through a temporary file in that directory, so a
/// run must not find out at its end that it cannot write them).
fn writable_output(s: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(s);
    if path.is_dir() {
        return Err(format!("{s} is a directory; give a file name"));
    }
    apusim_trace::output::temp_beside(&path)
        .map(drop)
        .map_err(|e| {
            let dir = apusim_trace::output::dir_of(&path);
            format!("cannot write into {}: {e}", dir.display())
        })?;
    Ok(path)
}

/// The LLC study switches of functional and timed runs (drp-reuse-probability-shared-llc.txt
/// §4.2-4.3).
#[derive(Args)]
struct StudySwitches {
    /// Charge non-compulsory LLC misses of these streams as hits (e.g. `color,texture`, `gpu`).
    #[arg(long, value_name = "STREAMS")]
    ideal: Option<String>,
    /// Charge non-compulsory LLC misses of the GPU's critical (or non-critical) accesses as
    /// hits (gpu-access-criticality Fig. 8; the render model marks them with
    /// `timing.render.criticality = true`).
    #[arg(long, value_name = "WHICH")]
    ideal_gpu: Option<IdealGpu>,
    /// Force this fraction of GPU read misses around the LLC (seeded).
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    gpu_read_bypass: f64,
}

/// Which of the GPU's accesses `--ideal-gpu` idealizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum IdealGpu {
    Critical,
    NonCritical,
}

impl StudySwitches {
    fn options(&self) -> Result<apusim_sim::StudyOptions> {
        let o = apusim_sim::StudyOptions {
            ideal: match &self.ideal {
                Some(s) => apusim_sim::StudyOptions::parse_ideal(s)?,
                None => Vec::new(),
            },
            ideal_critical: self.ideal_gpu.map(|w| w == IdealGpu::Critical),
            gpu_read_bypass: self.gpu_read_bypass,
            dump_llc_trace: None,
        };
        o.validate()?;
        Ok(o)
    }
}

/// Study switches of a functional run: the LLC switches and the LLC stream's dump.
#[derive(Args)]
struct StudyArgs {
    #[command(flatten)]
    switches: StudySwitches,
    /// Write every access that reaches the LLC to this .apt file (single policy only).
    #[arg(long, value_name = "FILE", value_parser = writable_output)]
    dump_llc_trace: Option<PathBuf>,
}

impl StudyArgs {
    fn options(&self) -> Result<apusim_sim::StudyOptions> {
        Ok(apusim_sim::StudyOptions {
            dump_llc_trace: self.dump_llc_trace.clone(),
            ..self.switches.options()?
        })
    }
}

#[derive(Args)]
struct DemoArgs {
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
struct RunArgs {
    /// Trace files (.apt, lackey, ChampSim, CSV, libCacheSim `*.oracleGeneral[.zst]`,
    /// `*.oracleGeneralOpNS[.zst]`, and its csv and txt forms with `--from`).
    /// `FILE@cpu2` or `FILE@gpu` assigns a single-agent trace to an agent; single-agent CPU
    /// traces that would collide are given the next free core.
    #[arg(required_unless_present_any = ["mix", "scene", "kernel"])]
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
    /// is counted.
    #[arg(long, value_parser = registry_int(&apusim_workloads::cpu::INSTRUCTIONS))]
    instructions: Option<u64>,
    /// Print cachegrind's nine counters (use with --preset cachegrind).
    #[arg(long)]
    cachegrind: bool,
    /// Threads for multi-policy runs, 1 to 1024 (default: all cores).
    #[arg(long, value_parser = crate::thread_count)]
    threads: Option<usize>,
    #[command(flatten)]
    study: StudyArgs,
    #[command(flatten)]
    system: SystemArgs,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    db: cli_sweep::DbArgs,
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

/// Expand a `--policy` list (`apusim_cache::policies::expand_names`); without one, the
/// configured policy and then the baselines (the demo's comparison).
fn policy_list(given: Option<&[String]>, cfg: &SystemConfig) -> Vec<String> {
    match given {
        Some(list) => apusim_cache::policies::expand_names(list),
        None => apusim_cache::policies::expand_names(&[cfg.llc.policy.as_str(), "baselines"]),
    }
}

fn demo(a: DemoArgs) -> Result<()> {
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
        study: Default::default(),
    };
    let results = run_policies(&cfg, &names, &inputs, &opts)?;
    print_results(&cfg, &inputs, &results, &a.output, false, Outputs::new())
}

/// A `--policy` list with `all` and `baselines` expanded, or the configured policy.
fn policy_list_or_configured(given: Option<&[String]>, cfg: &SystemConfig) -> Vec<String> {
    match given {
        Some(_) => policy_list(given, cfg),
        None => vec![cfg.llc.policy.clone()],
    }
}

fn run(a: RunArgs) -> Result<()> {
    if a.instructions.is_some() && a.workload.mix.is_none() {
        bail!(
            "--instructions is the length of a --mix's CPU jobs; trace files, --scene and \
             --kernel have their own length (`apusim sim --instructions` replays a trace to a \
             target)"
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
    let mut study = a.study.options()?;
    // The LLC dump streams into a reserved temporary file while the run proceeds and is
    // renamed into place together with --json and --csv, or not at all.
    let mut staged = Outputs::new();
    if let Some(p) = study.dump_llc_trace.take() {
        study.dump_llc_trace = Some(staged.reserve(&p)?);
    }
    let opts = RunOptions {
        progress: true,
        limit: a.limit,
        // drp §3's method: CPU jobs of a given length, early finishers running on.
        continue_to_run: a.instructions.is_some(),
        study,
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

fn print_oracle(results: &[apusim_oracle::OracleResult], out: &OutputArgs) -> Result<()> {
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

/// Run `f` on a pool of `threads` workers (the global pool, every core, when unset).
fn in_pool<T: Send>(threads: Option<usize>, f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    match threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .context("building the thread pool")?
            .install(f),
        None => f(),
    }
}

/// Write `--json` and `--csv` files when asked for, committed together.
fn write_outputs(
    out: &OutputArgs,
    json: impl FnOnce() -> Result<String>,
    csv: impl FnOnce() -> String,
) -> Result<()> {
    commit_outputs(stage_outputs(out, json, csv)?)
}

/// `--json` and `--csv` written to their temporary files, for [`commit_outputs`] (other
/// outputs of the run may be staged beside them first).
fn stage_outputs(
    out: &OutputArgs,
    json: impl FnOnce() -> Result<String>,
    csv: impl FnOnce() -> String,
) -> Result<Outputs> {
    stage_outputs_into(Outputs::new(), out, json, csv)
}

/// [`stage_outputs`] beside the outputs already in `staged` (a run's reserved LLC dump).
fn stage_outputs_into(
    mut staged: Outputs,
    out: &OutputArgs,
    json: impl FnOnce() -> Result<String>,
    csv: impl FnOnce() -> String,
) -> Result<Outputs> {
    if let Some(p) = &out.json {
        staged.stage(p, json()?.as_bytes())?;
    }
    if let Some(p) = &out.csv {
        staged.stage(p, csv().as_bytes())?;
    }
    Ok(staged)
}

/// Rename a run's staged outputs into place together, once all were written (a run that
/// fails or is killed before leaves none of them new), and say which were written.
fn commit_outputs(staged: Outputs) -> Result<()> {
    for p in staged.commit()? {
        eprintln!("wrote {}", p.display());
    }
    Ok(())
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

/// Most worker threads `--threads` and `--jobs` accept: far more than any machine's cores,
/// few enough that spawning them cannot stall the run before it starts.
const MAX_THREADS: usize = 1024;

/// Parse a thread count, 1 to [`MAX_THREADS`], refusing anything else instead of replacing it.
fn thread_count(s: &str) -> Result<usize, String> {
    whole_number(1..=MAX_THREADS as u64)(s).map(|n| n as usize)
}

/// A parser of whole numbers in `range`. Every value it refuses, negative and unparsable
/// ones included, gets the range in its message (clap's ranged parser says only "invalid
/// digit found in string" for `-1`).
fn whole_number(
    range: std::ops::RangeInclusive<u64>,
) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |s| match s.parse::<u64>() {
        Ok(v) if range.contains(&v) => Ok(v),
        _ => Err(format!(
            "`{s}` is not a whole number from {} to {}",
            range.start(),
            range.end()
        )),
    }
}

/// A clap value parser derived from an integer parameter of a registry: the parameter's own
/// check and message (key, range), so the command line and the registry cannot drift apart.
fn registry_int(
    spec: &'static apusim_registry::ParamSpec,
) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |s| match spec.parse(s) {
        Ok(apusim_registry::Value::Int(v)) => Ok(v),
        Ok(v) => Err(format!("parameter `{}` = {v} is not an integer", spec.name)),
        Err(e) => Err(e.to_string()),
    }
}

/// Parse `--resolution` (`WIDTHxHEIGHT`) through the scenes' `width` and `height` parameters.
fn resolution(s: &str) -> Result<(u32, u32), String> {
    apusim_render::builtin::parse_resolution(s).map_err(|e| e.to_string())
}

/// Parse the name of one registered LLC policy, so that an unknown name is refused when the
/// command line is read, even where the run would not use it.
fn policy_name(s: &str) -> Result<String, String> {
    if apusim_cache::policies::info(s).is_some() {
        return Ok(s.to_string());
    }
    let known: Vec<&str> = apusim_cache::policies::REGISTRY
        .iter()
        .map(|p| p.name)
        .collect();
    Err(format!(
        "unknown policy `{s}`; known policies: {}",
        known.join(", ")
    ))
}

/// Parse a count that must be at least 1, refusing 0 instead of replacing it.
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{e} (expected a whole number of at least 1)")),
    }
}
