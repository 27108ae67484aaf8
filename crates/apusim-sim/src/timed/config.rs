//! The `[timing]` section of a system configuration, and each level's timing.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// A registered model and its parameters (`model = "ooo"` plus the model's own keys).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ModelConfig {
    /// The model's registered name; empty selects the default (`ooo` cores, `ring` network).
    #[serde(default)]
    pub model: String,
    #[serde(flatten)]
    pub params: toml::Table,
}

impl ModelConfig {
    fn named(model: &str) -> ModelConfig {
        ModelConfig {
            model: model.into(),
            params: toml::Table::new(),
        }
    }
}

/// How the timed machine is built (`apusim sim`); functional runs ignore it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TimingConfig {
    /// The CPU core model (`apusim_timing::core::REGISTRY`) and its parameters.
    #[serde(default = "default_core")]
    pub core: ModelConfig,
    /// The on-chip network (`apusim_timing::network::REGISTRY`) and its parameters.
    #[serde(default = "default_network")]
    pub network: ModelConfig,
    /// The GPU model (`apusim_timing::gpu::REGISTRY`) that executes GPGPU programs, and its
    /// parameters.
    #[serde(default = "default_gpu")]
    pub gpu: ModelConfig,
    /// The GPU model that renders 3D jobs (`pipeline`), and its parameters: the papers attach
    /// one of two GPU simulators depending on the workload (drp §3: Attila for rendering,
    /// MacSim for CUDA), so a system describes both. GPU inputs that are neither (access
    /// traces) are replayed open-loop.
    #[serde(default = "default_render")]
    pub render: ModelConfig,
    /// Register dependences for traces that carry none: `none` or `chain`
    /// (`apusim_timing::instr::DepModel`).
    #[serde(default = "default_deps")]
    pub deps: String,
    /// Clock of the network and the LLC in MHz; 0 runs them at the CPU clock.
    #[serde(default)]
    pub uncore_clock_mhz: u32,
    /// The DRAM behind the LLC: an `apusim dram --list-presets` name.
    #[serde(default = "default_dram")]
    pub dram: String,
    /// `key=value` overrides of the DRAM preset (as `apusim dram --set`).
    #[serde(default)]
    pub dram_set: Vec<String>,
    /// Physical page placement of CPU accesses (`apusim_timing::pages`): `identity` (every
    /// page at its virtual address) or `random` (each 4 KiB page on a random frame of DRAM at
    /// first touch, seeded by the configuration's seed, as ChampSim's virtual memory does).
    #[serde(default = "default_pages")]
    pub pages: String,
    /// No-progress watchdog, 1 to [`MAX_CYCLE`] CPU cycles: a run stops with an error naming
    /// the oldest outstanding request when no request completes for this many cycles while
    /// some are outstanding, and with each core's state (its input, instructions, what it
    /// waits for) and the cycle when no instruction retires and no data is delivered for this
    /// many cycles (a GPU program on the timed GPU counts as progress while it runs; the GPU
    /// models report their own deadlocks).
    #[serde(default = "default_watchdog")]
    pub watchdog_cycles: u64,
    /// Most requests an open-loop GPU trace has at the LLC at once (those that expect data
    /// back); at the bound the replay waits and its trace clock slips by the wait, so a GPU
    /// trace faster than the memory system is throttled instead of queueing without end.
    #[serde(default = "default_gpu_outstanding")]
    pub gpu_outstanding: u32,
}

fn default_core() -> ModelConfig {
    ModelConfig::named("ooo")
}
fn default_network() -> ModelConfig {
    ModelConfig::named("ring")
}
fn default_gpu() -> ModelConfig {
    ModelConfig::named("simt")
}
fn default_render() -> ModelConfig {
    ModelConfig::named("pipeline")
}
fn default_deps() -> String {
    "none".into()
}
fn default_dram() -> String {
    "ddr3-2133-14-2ch".into()
}
fn default_pages() -> String {
    "identity".into()
}
fn default_watchdog() -> u64 {
    10_000_000
}
/// The papers give no bound on the GPU's memory-level parallelism; 256 is eight 32-entry MSHR
/// files (ChampSim's L2 size), about one per GPU cache that talks to the LLC (docs/timing.md).
fn default_gpu_outstanding() -> u32 {
    256
}

impl Default for TimingConfig {
    fn default() -> Self {
        TimingConfig {
            core: default_core(),
            network: default_network(),
            gpu: default_gpu(),
            render: default_render(),
            deps: default_deps(),
            uncore_clock_mhz: 0,
            dram: default_dram(),
            dram_set: Vec::new(),
            pages: default_pages(),
            watchdog_cycles: default_watchdog(),
            gpu_outstanding: default_gpu_outstanding(),
        }
    }
}

/// Largest cycle or instruction count a timed run accepts: `--warmup`, `--instructions`,
/// `--interval`, `--sample-period`, `--sample-warmup`, `--sample-unit` and
/// `timing.watchdog_cycles` (2^62, as `apusim dram`'s arrival cycles). The sums the engine
/// forms of two such counts stay below 2^63, and a run whose clock passes this many CPU
/// cycles stops with an error.
pub const MAX_CYCLE: u64 = apusim_dram::MAX_CYCLE;

/// Largest latency accepted, in cycles (a latency beyond it is a typo, and would overflow
/// the tick arithmetic of long runs).
pub const MAX_LATENCY: u32 = 1_000_000;
/// Largest MSHR count accepted.
pub const MAX_MSHRS: u32 = 65_536;

/// Latency and MSHRs of one level, with the defaults of ChampSim's default configuration
/// where the configuration gives none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelTiming {
    pub latency: u32,
    pub mshrs: u32,
}

impl TimingConfig {
    /// The core model's name (`ooo` unless given).
    pub fn core_model(&self) -> &str {
        if self.core.model.is_empty() {
            "ooo"
        } else {
            &self.core.model
        }
    }
    /// The network's name (`ring` unless given).
    pub fn network_model(&self) -> &str {
        if self.network.model.is_empty() {
            "ring"
        } else {
            &self.network.model
        }
    }

    /// The GPU model's name (`simt` unless given).
    pub fn gpu_model(&self) -> &str {
        if self.gpu.model.is_empty() {
            "simt"
        } else {
            &self.gpu.model
        }
    }

    /// The render model's name (`pipeline` unless given).
    pub fn render_model(&self) -> &str {
        if self.render.model.is_empty() {
            "pipeline"
        } else {
            &self.render.model
        }
    }

    /// The DRAM configuration (preset plus overrides).
    pub fn dram_config(&self) -> Result<apusim_dram::DramConfig> {
        let mut d = apusim_dram::presets::preset(&self.dram)
            .with_context(|| format!("timing.dram = `{}`", self.dram))?;
        for o in &self.dram_set {
            let (k, v) = o
                .split_once('=')
                .with_context(|| format!("timing.dram_set: `{o}` is not key=value"))?;
            d.apply_override(k.trim(), v.trim())
                .with_context(|| format!("timing.dram_set: `{o}`"))?;
        }
        d.validate().context("timing.dram")?;
        Ok(d)
    }

    /// Check the `[timing]` section, naming the key (each level's `latency` and `mshrs` sit
    /// beside its geometry, and `SystemConfig::validate` checks them there).
    pub fn validate(&self) -> Result<()> {
        let core = apusim_registry::find(
            apusim_timing::core::REGISTRY,
            "core model",
            self.core_model(),
        )
        .context("timing.core.model")?;
        core.params(&self.core.params).context(
            "timing.core (to switch models, replace the table: --set 'timing.core={model=\"NAME\"}')",
        )?;
        let net = apusim_registry::find(
            apusim_timing::network::REGISTRY,
            "network",
            self.network_model(),
        )
        .context("timing.network.model")?;
        net.params(&self.network.params).context(
            "timing.network (to switch models, replace the table: --set 'timing.network={model=\"NAME\"}')",
        )?;
        let gpu =
            apusim_registry::find(apusim_timing::gpu::REGISTRY, "GPU model", self.gpu_model())
                .context("timing.gpu.model")?;
        gpu.params(&self.gpu.params).context(
            "timing.gpu (to switch models, replace the table: --set 'timing.gpu={model=\"NAME\"}')",
        )?;
        let render = apusim_registry::find(
            apusim_timing::gpu::REGISTRY,
            "GPU model",
            self.render_model(),
        )
        .context("timing.render.model")?;
        render.params(&self.render.params).context(
            "timing.render (to switch models, replace the table: --set 'timing.render={model=\"NAME\"}')",
        )?;
        if apusim_timing::DepModel::parse(&self.deps).is_none() {
            bail!(
                "timing.deps = `{}`: expected one of {}",
                self.deps,
                apusim_timing::DepModel::NAMES.join(", ")
            );
        }
        if !apusim_timing::pages::PLACEMENTS.contains(&self.pages.as_str()) {
            let near = apusim_registry::nearest(
                &self.pages,
                apusim_timing::pages::PLACEMENTS.iter().copied(),
            )
            .map(|n| format!("; did you mean `{n}`?"))
            .unwrap_or_default();
            bail!(
                "timing.pages = `{}`: expected one of {}{near}",
                self.pages,
                apusim_timing::pages::PLACEMENTS.join(", ")
            );
        }
        if self.watchdog_cycles == 0 || self.watchdog_cycles > MAX_CYCLE {
            bail!(
                "timing.watchdog_cycles = {}: expected 1..={MAX_CYCLE}",
                self.watchdog_cycles
            );
        }
        if self.gpu_outstanding == 0 || self.gpu_outstanding > MAX_MSHRS {
            bail!(
                "timing.gpu_outstanding = {}: expected 1..={MAX_MSHRS}",
                self.gpu_outstanding
            );
        }
        self.dram_config()?;
        Ok(())
    }
}

impl LevelTiming {
    /// The timing of a GPU cache: its latency in GPU cycles and MSHRs per instance, as
    /// configured. Defaults: adaptive-gpu-l1-bypassing Table 1's L1 (1 cycle of tag and 4 of
    /// data access: 5 cycles) and 32 MSHRs (GPGPU-Sim's Fermi L1D), as the papers give no more.
    pub fn gpu(latency: Option<u32>, mshrs: Option<u32>) -> LevelTiming {
        LevelTiming {
            latency: latency.unwrap_or(5),
            mshrs: mshrs.unwrap_or(32),
        }
    }

    /// The timing of CPU level `name` (`l1i`, `l1d`, `l2`) or `llc`, as configured, with
    /// ChampSim's defaults for what is not.
    pub fn cpu(name: &str, latency: Option<u32>, mshrs: Option<u32>) -> LevelTiming {
        let (d_lat, d_mshrs) = match name {
            "llc" => (20, 64),
            "l1i" => (4, 8),
            "l1d" => (5, 16),
            _ => (10, 32),
        };
        LevelTiming {
            latency: latency.unwrap_or(d_lat),
            mshrs: mshrs.unwrap_or(d_mshrs),
        }
    }
}

/// Check one level's `latency` and `mshrs` (`key` names the level).
pub(crate) fn check_level(key: &str, latency: Option<u32>, mshrs: Option<u32>) -> Result<()> {
    if let Some(l) = latency {
        if l > MAX_LATENCY {
            bail!("{key}.latency = {l}: above the maximum of {MAX_LATENCY} cycles");
        }
    }
    if let Some(m) = mshrs {
        if m == 0 || m > MAX_MSHRS {
            bail!("{key}.mshrs = {m}: expected 1..={MAX_MSHRS}");
        }
    }
    Ok(())
}
