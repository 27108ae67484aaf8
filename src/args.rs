//! Arguments several commands share (the system, a built-in workload, the trace cache,
//! outputs, the LLC switches) and the value parsers that check them when the command line
//! is read, among them `registry_values`, which parses the options of a built-in workload or scene
//! by its registry parameters.

use anyhow::{anyhow, Result};
use apusim_registry::{ParamSpec, Value};
use apusim_sim::SystemConfig;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub(super) struct SystemArgs {
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
    pub(super) fn load(&self) -> Result<SystemConfig> {
        let cfg = apusim_experiments::jobs::load_system(
            &self.preset,
            self.config.as_deref(),
            &self.set,
            self.seed,
            None,
            None,
        )?;
        warn_shrinking(&cfg);
        Ok(cfg)
    }

    /// The system for a run of `w` (`apusim_experiments::jobs::load_system`): as many CPU
    /// cores as a mix has CPU jobs, none for a scene or kernel alone, one for a CPU kernel
    /// alone, unless `--set cpus=N`.
    pub(super) fn load_for(&self, w: &WorkloadArgs) -> Result<SystemConfig> {
        let cfg = apusim_experiments::jobs::load_system(
            &self.preset,
            self.config.as_deref(),
            &self.set,
            self.seed,
            w.mix.as_deref(),
            w.alone(),
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

/// A built-in workload instead of trace files: a named mix, a scene's frames, a GPGPU kernel
/// or a CPU kernel.
#[derive(Args)]
pub(crate) struct WorkloadArgs {
    /// Run a named mix of built-in workloads (see `apusim mixes`) instead of trace files, on
    /// as many CPU cores as the mix has CPU jobs (unless `--set cpus=N`).
    #[arg(long, conflicts_with_all = ["traces", "scene", "kernel", "cpu"])]
    pub(crate) mix: Option<String>,
    /// Render a built-in scene's frames (see `apusim gen render --list`), or a scene file's,
    /// on the GPU alone, on no CPU core (unless `--set cpus=N`): e.g. `--scene lake --preset
    /// gspc`, `--scene my-scene.toml`.
    #[arg(long, conflicts_with_all = ["traces", "kernel", "cpu"])]
    pub(crate) scene: Option<String>,
    /// Run a GPGPU kernel (see `apusim workloads`) on the GPU alone, on no CPU core (unless
    /// `--set cpus=N`): e.g. `--kernel bfs --preset bypass`.
    #[arg(long, conflicts_with_all = ["traces", "cpu"])]
    pub(crate) kernel: Option<String>,
    /// Run a CPU kernel (see `apusim workloads`) alone on core 0 of a one-core system
    /// (unless `--set cpus=N`), as the first CPU job of a mix of it: `scale ×` 5 M
    /// instructions, or `run --instructions N`, or `sim`'s warm-up plus `--instructions`:
    /// e.g. `--cpu mcf --preset tap`.
    #[arg(long, conflicts_with = "traces")]
    pub(crate) cpu: Option<String>,
    /// Resolution of a --scene, `WIDTHxHEIGHT` (each side checked by the scenes' `width` and
    /// `height` parameters: `apusim describe lake`).
    #[arg(long, default_value = "1280x1024", value_parser = resolution)]
    pub(crate) resolution: (u32, u32),
    /// Size multiplier of a --mix, --scene, --kernel or --cpu, 1 to 1000: CPU jobs retire
    /// `scale ×` 5 M instructions, GPGPU jobs process `scale ×` their default elements,
    /// rendering jobs render `scale` frames.
    #[arg(long, default_value_t = 1, value_parser = registry_int(&apusim_workloads::SCALE))]
    pub(crate) scale: u64,
    /// Frames of a --mix's rendering job or a --scene, 1 to 1000, instead of `--scale`; or
    /// `paper` (a --mix only): the title's frame region in the table of the mix's paper (drp
    /// Table 1 for S/D/Q, gpu-access-criticality Table 2 for H/L/HL, e.g. 15 frames for
    /// DOOM3 in HL7). A timed run ends when every core has reached its instructions and the
    /// GPU has rendered them all, as the papers' runs end.
    #[arg(long, value_name = "N|paper", value_parser = frames_arg,
          conflicts_with_all = ["traces", "kernel", "cpu"])]
    pub(crate) frames: Option<apusim_workloads::mixes::Frames>,
}

/// `--frames`: a frame count or `paper`, checked by the scenes' `frames` parameter.
pub(crate) fn frames_arg(s: &str) -> Result<apusim_workloads::mixes::Frames, String> {
    apusim_workloads::mixes::Frames::parse(s).map_err(|e| e.to_string())
}

impl WorkloadArgs {
    /// The workload run alone, if one is.
    pub(crate) fn alone(&self) -> Option<apusim_workloads::mixes::Alone<'_>> {
        apusim_workloads::mixes::Alone::named(
            self.scene.as_deref(),
            self.kernel.as_deref(),
            self.cpu.as_deref(),
        )
    }
}

/// Where `--mix` traces are cached.
#[derive(Args)]
pub(super) struct CacheArgs {
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
    pub(super) fn dir(&self) -> Option<PathBuf> {
        if self.no_cache {
            None
        } else {
            self.cache_dir
                .clone()
                .or_else(apusim_experiments::jobs::default_cache_dir)
        }
    }
}

#[derive(Args)]
pub(super) struct OutputArgs {
    /// Write every counter as JSON to this file.
    #[arg(long, value_name = "FILE", value_parser = writable_output)]
    pub(super) json: Option<PathBuf>,
    /// Write every counter as CSV to this file.
    #[arg(long, value_name = "FILE", value_parser = writable_output)]
    pub(super) csv: Option<PathBuf>,
}

/// An output path whose directory exists and takes new files, checked when the command line
/// is read (outputs are written atomically through a temporary file in that directory, so a
/// run must not find out at its end that it cannot write them).
pub(super) fn writable_output(s: &str) -> Result<PathBuf, String> {
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

/// The LLC switches of functional and timed runs (drp-reuse-probability-shared-llc.txt
/// §4.2-4.3).
#[derive(Args)]
pub(super) struct LlcSwitchArgs {
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

impl LlcSwitchArgs {
    pub(super) fn options(&self) -> Result<apusim_sim::LlcSwitches> {
        let o = apusim_sim::LlcSwitches {
            ideal: match &self.ideal {
                Some(s) => apusim_sim::LlcSwitches::parse_ideal(s)?,
                None => Vec::new(),
            },
            ideal_critical: self.ideal_gpu.map(|w| w == IdealGpu::Critical),
            gpu_read_bypass: self.gpu_read_bypass,
            dump_llc_trace: None,
            dump_llc_name: None,
        };
        o.validate()?;
        Ok(o)
    }
}

/// The LLC switches of a functional run and the LLC stream's dump.
#[derive(Args)]
pub(super) struct LlcSwitchDumpArgs {
    #[command(flatten)]
    switches: LlcSwitchArgs,
    /// Write every access that reaches the LLC to this .apt file (single policy only).
    #[arg(long, value_name = "FILE", value_parser = writable_output)]
    dump_llc_trace: Option<PathBuf>,
}

impl LlcSwitchDumpArgs {
    pub(super) fn options(&self) -> Result<apusim_sim::LlcSwitches> {
        Ok(apusim_sim::LlcSwitches {
            dump_llc_trace: self.dump_llc_trace.clone(),
            ..self.switches.options()?
        })
    }
}

/// Expand a `--policy` list (`apusim_cache::policies::expand_names`); without one, the
/// configured policy and then the baselines (the demo's comparison).
pub(super) fn policy_list(given: Option<&[String]>, cfg: &SystemConfig) -> Vec<String> {
    match given {
        Some(list) => apusim_cache::policies::expand_names(list),
        None => apusim_cache::policies::expand_names(&[cfg.llc.policy.as_str(), "baselines"]),
    }
}

/// A `--policy` list with `all` and `baselines` expanded, or the configured policy.
pub(super) fn policy_list_or_configured(
    given: Option<&[String]>,
    cfg: &SystemConfig,
) -> Vec<String> {
    match given {
        Some(_) => policy_list(given, cfg),
        None => vec![cfg.llc.policy.clone()],
    }
}

/// Most worker threads `--threads` and `--jobs` accept: far more than any machine's cores,
/// few enough that spawning them cannot stall the run before it starts.
const MAX_THREADS: usize = 1024;

/// Parse a thread count, 1 to [`MAX_THREADS`], refusing anything else instead of replacing it.
pub(super) fn thread_count(s: &str) -> Result<usize, String> {
    whole_number(1..=MAX_THREADS as u64)(s).map(|n| n as usize)
}

/// A parser of whole numbers in `range`. Every value it refuses, negative and unparsable
/// ones included, gets the range in its message (clap's ranged parser says only "invalid
/// digit found in string" for `-1`).
pub(super) fn whole_number(
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
pub(super) fn registry_int(
    spec: &'static apusim_registry::ParamSpec,
) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |s| match spec.parse(s) {
        Ok(apusim_registry::Value::Int(v)) => Ok(v),
        Ok(v) => Err(format!("parameter `{}` = {v} is not an integer", spec.name)),
        Err(e) => Err(e.to_string()),
    }
}

/// Parse `--resolution` (`WIDTHxHEIGHT`) through the scenes' `width` and `height` parameters.
pub(super) fn resolution(s: &str) -> Result<(u32, u32), String> {
    apusim_render::builtin::parse_resolution(s).map_err(|e| e.to_string())
}

/// Parse the name of one registered LLC policy, so that an unknown name is refused when the
/// command line is read, even where the run would not use it.
pub(super) fn policy_name(s: &str) -> Result<String, String> {
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
pub(super) fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{e} (expected a whole number of at least 1)")),
    }
}

/// The options given on the command line (`--KEY VALUE`), each parsed by the registry
/// parameter `KEY` of `specs`, whose message (key, range) a bad value gets.
pub(super) fn registry_values<const N: usize>(
    specs: &'static [ParamSpec],
    options: [(&'static str, Option<String>); N],
) -> Result<Vec<(&'static str, Value)>> {
    let mut given = Vec::new();
    for (key, text) in options {
        if let Some(text) = text {
            let spec = specs
                .iter()
                .find(|p| p.name == key)
                .ok_or_else(|| anyhow!("--{key} is not a declared parameter"))?;
            given.push((key, spec.parse(&text).map_err(|e| anyhow!("--{key}: {e}"))?));
        }
    }
    Ok(given)
}
