//! `apusim gpu-l1`: the GPU memory side of adaptive-gpu-l1-bypassing.txt (crate
//! `apusim-gpu`): per-SM L1 data caches with the PC-based or counter-based bypass predictor,
//! the shared L2 and the memory-side L3 of its Table 1. Its figures are studies
//! (`apusim study bypass-fig1`, ...).

use anyhow::{Context, Result};
use apusim_gpu::kernel;
use apusim_gpu::{GpuConfig, RunResult};
use apusim_sim::report::TextTable;
use apusim_trace::Agent;
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum GpuCommand {
    /// Run one GPGPU kernel (generated on the fly) or a trace through the GPU hierarchy.
    Run(Box<GpuRunArgs>),
    /// List the GPU presets, or show one as TOML (after any --set overrides).
    Presets {
        name: Option<String>,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
}

#[derive(Args)]
pub struct GpuConfigArgs {
    /// GPU preset (table1, table1-32k) or a TOML configuration file.
    #[arg(long, short, default_value = "table1")]
    preset: String,
    /// Override a setting: predictor=none|pc|counter, l1=16K,8,64, l2=..., l3=..., sms=8,
    /// l1.pc.threshold=8, l1.pc.entries=128, l1.pc.bypass_bit=false, energy.table_nj=...
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

impl GpuConfigArgs {
    fn load(&self) -> Result<GpuConfig> {
        GpuConfig::load(&self.preset, &self.set)
    }
}

#[derive(Args)]
pub struct GpuOutputArgs {
    /// Write every run as JSON to this file.
    #[arg(long, value_name = "FILE", value_parser = crate::writable_output)]
    json: Option<PathBuf>,
    /// Write every run as CSV to this file.
    #[arg(long, value_name = "FILE", value_parser = crate::writable_output)]
    csv: Option<PathBuf>,
}

impl GpuOutputArgs {
    fn write(&self, runs: &[RunResult]) -> Result<()> {
        // Committed together.
        let mut staged = apusim_trace::output::Outputs::new();
        if let Some(p) = &self.json {
            let doc = serde_json::json!({ "runs": runs });
            let text = serde_json::to_string_pretty(&doc).context("rendering JSON")?;
            staged.stage(p, text.as_bytes())?;
        }
        if let Some(p) = &self.csv {
            staged.stage(p, kernel::to_csv(runs).as_bytes())?;
        }
        crate::commit_outputs(staged)
    }
}

#[derive(Args)]
pub struct GpuRunArgs {
    #[command(flatten)]
    config: GpuConfigArgs,
    /// GPGPU kernel to generate (see `apusim workloads`).
    #[arg(
        long,
        short,
        required_unless_present = "trace",
        conflicts_with = "trace"
    )]
    kernel: Option<String>,
    /// Problem size of the kernel (0: its default; checked by its registry entry, `apusim
    /// describe KERNEL`).
    #[arg(long)]
    size: Option<String>,
    /// Seed of the kernel's input (default 1).
    #[arg(long)]
    seed: Option<String>,
    /// A trace of GPU accesses instead of a generated kernel: `.apt`, or any format `--from`
    /// names. Imported accesses are the GPU's; `shader-data` accesses go through the L1 of
    /// SM `unit` (a CSV trace's `stream` and `unit` columns), every other stream to the L2.
    #[arg(long)]
    trace: Option<PathBuf>,
    #[command(flatten)]
    import: crate::inputs::ImportArgs,
    #[command(flatten)]
    output: GpuOutputArgs,
}

pub fn run(cmd: GpuCommand) -> Result<()> {
    match cmd {
        GpuCommand::Run(a) => run_one(*a),
        GpuCommand::Presets { name, set } => presets(name, &set),
    }
}

fn run_one(a: GpuRunArgs) -> Result<()> {
    let cfg = a.config.load()?;
    if let (Some(k), false) = (&a.kernel, a.import.is_default()) {
        anyhow::bail!(
            "--from and --lcs-params say how to read a --trace; this run generates kernel {k}"
        );
    }
    let r = match (&a.kernel, &a.trace) {
        (Some(k), _) => {
            let (size, seed) = kernel_size_seed(k, a.size, a.seed)?;
            kernel::run_kernel(&cfg, k, size, seed, true)?
        }
        (None, Some(t)) => {
            let mut src =
                apusim_trace::import::open(t, a.import.from, &a.import.options_for(Agent::GPU))
                    .with_context(|| format!("opening {}", t.display()))?;
            apusim_gpu::run_source(&cfg, &t.display().to_string(), &mut src, true)?
        }
        (None, None) => unreachable!("clap requires --kernel or --trace"),
    };
    let s = &r.storage;
    emit(&format!(
        "{}predictor storage: {:.0} B per L1 ({} table bits + {} line bits), {:.0} B in the L2, {:.0} B in total\n",
        kernel::run_table(std::slice::from_ref(&r)),
        r.storage_bytes_per_l1, s.table_bits_per_l1, s.line_bits_per_l1, r.storage_bytes_l2,
        r.storage_bytes_total
    ))?;
    a.output.write(std::slice::from_ref(&r))
}

/// `--size` and `--seed` of kernel `k`, checked by its registry entry
/// (`apusim_workloads::gpgpu::params`).
fn kernel_size_seed(k: &str, size: Option<String>, seed: Option<String>) -> Result<(usize, u64)> {
    use apusim_workloads::gpgpu;
    let given =
        crate::args::registry_values(gpgpu::entry(k)?.params, [("size", size), ("seed", seed)])?;
    let (_, p) = gpgpu::params(k, &given)?;
    Ok((p.size, p.seed))
}

fn presets(name: Option<String>, set: &[String]) -> Result<()> {
    match name {
        Some(n) => {
            let cfg = GpuConfig::load(&n, set)?;
            emit(&cfg.to_toml()?)?;
        }
        None => {
            let mut t = TextTable::new(["preset", "description"]);
            for (n, _) in apusim_gpu::config::PRESETS {
                let c = GpuConfig::load_preset(n, &[])?;
                t.row(vec![n.to_string(), c.description]);
            }
            emit(&t.render())?;
        }
    }
    Ok(())
}

/// Print `text` to standard output; a reader that went away (`| head`) is not an error.
fn emit(text: &str) -> Result<()> {
    use std::io::Write as _;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.context("writing to standard output"),
    }
}
