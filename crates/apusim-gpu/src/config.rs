//! Configuration of the GPU memory side: TOML presets, files and `--set KEY=VALUE` overrides
//! (same notation as `apusim_sim::config`: cachegrind's `size,ways,line` geometries, dotted
//! keys, and the shorthands `l1`, `l2`, `l3` for a level's geometry).
//!
//! Defaults follow adaptive-gpu-l1-bypassing.txt: Table 1 for the hierarchy, §3.1/§4.1 for
//! the PC-based predictor (128 entries of 4-bit counters, 7-bit hashed PC per line), §4.1 for
//! the counter-based one (128×128 table of 5-bit entries), Table 3 for the energies.

use anyhow::{anyhow, bail, Context, Result};
use apusim_cache::policies::l1_bypass::PREDICTORS;
use apusim_cache::Geometry;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The built-in presets: (name, TOML text).
pub const PRESETS: &[(&str, &str)] = &[
    ("table1", include_str!("../presets/table1.toml")),
    ("table1-32k", include_str!("../presets/table1-32k.toml")),
];

/// Which bypass predictor sits beside each L1 data cache. Read from a name of the predictor
/// registry (or `none`) through [`std::str::FromStr`], so a misspelt name in a preset or a
/// `--set` gets the nearest registered one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case", try_from = "String")]
pub enum PredictorKind {
    /// No predictor: every read miss fills (the paper's Baseline).
    None,
    /// The PC-based predictor of §3.1-3.2 (Listing 1).
    Pc,
    /// The counter-based predictor of §3.3 (Kharbutli and Solihin's live-time predictor).
    Counter,
}

impl PredictorKind {
    pub fn name(self) -> &'static str {
        match self {
            PredictorKind::None => "none",
            PredictorKind::Pc => "pc",
            PredictorKind::Counter => "counter",
        }
    }
}

impl TryFrom<String> for PredictorKind {
    type Error = anyhow::Error;
    fn try_from(s: String) -> Result<Self> {
        s.parse()
    }
}

impl std::str::FromStr for PredictorKind {
    type Err = anyhow::Error;
    /// `none` (or `baseline`), or a name of the predictor registry
    /// (`apusim_cache::policies::l1_bypass::PREDICTORS`).
    fn from_str(s: &str) -> Result<Self> {
        if matches!(s, "none" | "baseline") {
            return Ok(PredictorKind::None);
        }
        let e = apusim_registry::find(PREDICTORS, "predictor", s)
            .map_err(|e| anyhow!("{e}; or none for no predictor"))?;
        match e.name {
            "pc" => Ok(PredictorKind::Pc),
            "counter" => Ok(PredictorKind::Counter),
            other => bail!("predictor `{other}` has no configuration section in apusim-gpu"),
        }
    }
}

/// Parameters of the PC-based predictor (§3.1, Listing 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcConfig {
    /// Prediction-table entries (a power of two; the hashed PC stored per line has
    /// log2(entries) bits: 7 for the paper's 128).
    #[serde(default = "default_entries")]
    pub entries: usize,
    /// Bypass when the 4-bit counter is at least this (1..=15). The paper gives no value;
    /// 8, the middle of the counter's range, is our choice.
    #[serde(default = "default_threshold")]
    pub threshold: u8,
    /// Use the L2's bypassBit to correct mispredictions (§3.1). Off only for ablations.
    #[serde(default = "yes")]
    pub bypass_bit: bool,
}

/// Parameters of the counter-based predictor (§3.3, §4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CounterConfig {
    /// Rows of the prediction table (indexed by the hashed PC).
    #[serde(default = "default_entries")]
    pub pc_entries: usize,
    /// Columns of the prediction table (indexed by the hashed block address).
    #[serde(default = "default_entries")]
    pub addr_entries: usize,
}

fn default_entries() -> usize {
    128
}
fn default_threshold() -> u8 {
    8
}
fn yes() -> bool {
    true
}

impl Default for PcConfig {
    fn default() -> Self {
        PcConfig {
            entries: default_entries(),
            threshold: default_threshold(),
            bypass_bit: true,
        }
    }
}

impl Default for CounterConfig {
    fn default() -> Self {
        CounterConfig {
            pc_entries: default_entries(),
            addr_entries: default_entries(),
        }
    }
}

/// The L1 data caches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L1Config {
    pub geometry: String,
    #[serde(default = "default_predictor")]
    pub predictor: PredictorKind,
    #[serde(default)]
    pub pc: PcConfig,
    #[serde(default)]
    pub counter: CounterConfig,
}

impl L1Config {
    /// The parameters of the selected predictor, as its registry entry takes them.
    pub fn predictor_params(&self) -> toml::Table {
        let mut t = toml::Table::new();
        let int = |v: usize| toml::Value::Integer(v as i64);
        match self.predictor {
            PredictorKind::None => {}
            PredictorKind::Pc => {
                t.insert("entries".into(), int(self.pc.entries));
                t.insert("threshold".into(), int(self.pc.threshold.into()));
                t.insert(
                    "bypass_bit".into(),
                    toml::Value::Boolean(self.pc.bypass_bit),
                );
            }
            PredictorKind::Counter => {
                t.insert("pc_entries".into(), int(self.counter.pc_entries));
                t.insert("addr_entries".into(), int(self.counter.addr_entries));
            }
        }
        t
    }
}

fn default_predictor() -> PredictorKind {
    PredictorKind::None
}

/// A shared level (L2 or L3).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelConfig {
    pub geometry: String,
}

/// Per-access energies and static power of the L1 data cache, from CACTI 6.5
/// (adaptive-gpu-l1-bypassing.txt Table 3). The `bypass_*` energies apply when the L1 carries
/// a predictor (its tag entries are 8 bits wider, footnote 1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnergyConfig {
    #[serde(default = "e_base_tag")]
    pub base_tag_nj: f64,
    #[serde(default = "e_data")]
    pub base_data_nj: f64,
    #[serde(default = "e_bp_tag")]
    pub bypass_tag_nj: f64,
    #[serde(default = "e_data")]
    pub bypass_data_nj: f64,
    #[serde(default = "e_pt")]
    pub table_nj: f64,
    #[serde(default = "p_base_static")]
    pub base_static_mw: f64,
    #[serde(default = "p_bp_static")]
    pub bypass_static_mw: f64,
}

fn e_base_tag() -> f64 {
    0.00134096
}
fn e_data() -> f64 {
    0.106434
}
fn e_bp_tag() -> f64 {
    0.0017867
}
fn e_pt() -> f64 {
    0.000126232
}
fn p_base_static() -> f64 {
    7.538627
}
fn p_bp_static() -> f64 {
    7.72904
}

impl Default for EnergyConfig {
    fn default() -> Self {
        EnergyConfig {
            base_tag_nj: e_base_tag(),
            base_data_nj: e_data(),
            bypass_tag_nj: e_bp_tag(),
            bypass_data_nj: e_data(),
            table_nj: e_pt(),
            base_static_mw: p_base_static(),
            bypass_static_mw: p_bp_static(),
        }
    }
}

/// The GPU memory side: `sms` compute units with private L1 data caches, a shared L2 and a
/// memory-side L3.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuConfig {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Compute units (SMs), each with one L1 data cache; at most 32.
    pub sms: usize,
    pub clock_mhz: u32,
    pub l1: L1Config,
    pub l2: LevelConfig,
    pub l3: LevelConfig,
    #[serde(default)]
    pub energy: EnergyConfig,
}

impl GpuConfig {
    /// A built-in preset with overrides applied.
    pub fn load_preset(name: &str, overrides: &[String]) -> Result<GpuConfig> {
        let text = apusim_sim::config::preset_text(PRESETS, name, "GPU preset")?;
        GpuConfig::from_toml(text, &format!("GPU preset {name}"), overrides)
    }

    /// A preset name or a TOML file, with overrides applied.
    pub fn load(preset_or_file: &str, overrides: &[String]) -> Result<GpuConfig> {
        if PRESETS.iter().any(|(n, _)| *n == preset_or_file) {
            return GpuConfig::load_preset(preset_or_file, overrides);
        }
        let path = Path::new(preset_or_file);
        if !path.exists() {
            return GpuConfig::load_preset(preset_or_file, overrides);
        }
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading GPU configuration {}", path.display()))?;
        GpuConfig::from_toml(&text, &path.display().to_string(), overrides)
    }

    /// Parse TOML text (named `origin` in errors), apply overrides, validate.
    pub fn from_toml(text: &str, origin: &str, overrides: &[String]) -> Result<GpuConfig> {
        let mut tree: toml::Value =
            toml::from_str(text).with_context(|| format!("{origin}: not valid TOML"))?;
        for o in overrides {
            let spec = expand_shorthand(o);
            apusim_sim::config::apply_override(&mut tree, &spec)
                .with_context(|| format!("--set {o}"))?;
        }
        let text = if overrides.is_empty() {
            text.to_string()
        } else {
            toml::to_string(&tree).context("rendering the overridden configuration")?
        };
        let cfg: GpuConfig = toml::from_str(&text).map_err(|e| anyhow!("{origin}: {e}"))?;
        cfg.validate().with_context(|| origin.to_string())?;
        Ok(cfg)
    }

    /// Check what deserialization cannot.
    pub fn validate(&self) -> Result<()> {
        if self.sms == 0 || self.sms > 32 {
            bail!("sms = {} must be in 1..=32", self.sms);
        }
        if self.clock_mhz == 0 {
            bail!("clock_mhz must be positive");
        }
        let l1 = self.l1_geometry().context("l1.geometry")?;
        let l2 = self.l2_geometry().context("l2.geometry")?;
        let l3 = self.l3_geometry().context("l3.geometry")?;
        for (name, g) in [("l1", l1), ("l2", l2), ("l3", l3)] {
            if !g.ways.is_power_of_two() || g.ways > 64 {
                bail!(
                    "{name}.geometry: pseudo-LRU needs power-of-two ways up to 64, not {}",
                    g.ways
                );
            }
        }
        if l1.line != l2.line || l2.line != l3.line {
            bail!(
                "all levels must share one line size (l1 {}, l2 {}, l3 {})",
                l1.line,
                l2.line,
                l3.line
            );
        }
        let pc = &self.l1.pc;
        if !pc.entries.is_power_of_two() || pc.entries < 2 || pc.entries > 1 << 16 {
            bail!(
                "l1.pc.entries = {} must be a power of two in 2..=65536",
                pc.entries
            );
        }
        if !(1..=15).contains(&pc.threshold) {
            bail!(
                "l1.pc.threshold = {} must be in 1..=15 (4-bit counters)",
                pc.threshold
            );
        }
        let c = &self.l1.counter;
        for (k, v) in [
            ("pc_entries", c.pc_entries),
            ("addr_entries", c.addr_entries),
        ] {
            if !v.is_power_of_two() || !(2..=4096).contains(&v) {
                bail!("l1.counter.{k} = {v} must be a power of two in 2..=4096");
            }
        }
        Ok(())
    }

    /// The configuration as TOML.
    pub fn to_toml(&self) -> Result<String> {
        toml::to_string(self).context("rendering the GPU configuration as TOML")
    }

    pub fn l1_geometry(&self) -> Result<Geometry> {
        apusim_sim::config::parse_geometry(&self.l1.geometry)
    }
    pub fn l2_geometry(&self) -> Result<Geometry> {
        apusim_sim::config::parse_geometry(&self.l2.geometry)
    }
    pub fn l3_geometry(&self) -> Result<Geometry> {
        apusim_sim::config::parse_geometry(&self.l3.geometry)
    }

    /// A short label: L1 size and predictor, e.g. `16K+pc`.
    pub fn label(&self) -> String {
        let size = self
            .l1_geometry()
            .map(|g| format!("{}K", g.size / 1024))
            .unwrap_or_else(|_| self.l1.geometry.clone());
        match self.l1.predictor {
            PredictorKind::None => size,
            p => format!("{size}+{}", p.name()),
        }
    }
}

/// `l1=…`, `l2=…`, `l3=…` set that level's geometry; `predictor=…` the L1's predictor.
fn expand_shorthand(spec: &str) -> String {
    match spec.split_once('=') {
        Some((k, v)) if matches!(k.trim(), "l1" | "l2" | "l3") => {
            format!("{}.geometry={}", k.trim(), v)
        }
        Some((k, v)) if k.trim() == "predictor" => format!("l1.predictor={v}"),
        _ => spec.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table1_preset_matches_the_paper() {
        let c = GpuConfig::load_preset("table1", &[]).unwrap();
        assert_eq!(c.sms, 8);
        assert_eq!(c.clock_mhz, 1000);
        let (l1, l2, l3) = (
            c.l1_geometry().unwrap(),
            c.l2_geometry().unwrap(),
            c.l3_geometry().unwrap(),
        );
        assert_eq!((l1.size, l1.ways, l1.line), (16 << 10, 8, 64));
        assert_eq!((l2.size, l2.ways, l2.line), (256 << 10, 16, 64));
        assert_eq!((l3.size, l3.ways, l3.line), (4 << 20, 16, 64));
        assert_eq!(c.l1.pc, PcConfig::default());
        assert_eq!(c.energy.bypass_tag_nj, 0.0017867);
        let big = GpuConfig::load_preset("table1-32k", &[]).unwrap();
        assert_eq!(big.l1_geometry().unwrap().size, 32 << 10);
    }

    #[test]
    fn overrides_and_bad_values() {
        let c = GpuConfig::load_preset(
            "table1",
            &[
                "predictor=pc".into(),
                "l1=32K,8,64".into(),
                "l1.pc.threshold=4".into(),
            ],
        )
        .unwrap();
        assert_eq!(c.l1.predictor, PredictorKind::Pc);
        assert_eq!(c.l1.pc.threshold, 4);
        assert_eq!(c.label(), "32K+pc");
        for bad in [
            "l1.pc.threshold=16",
            "l1.pc.entries=100",
            "sms=0",
            "l1=16K,6,64",
            "predictor=magic",
            "l1.bogus=1",
        ] {
            let e = GpuConfig::load_preset("table1", &[bad.into()]);
            assert!(e.is_err(), "{bad} accepted");
        }
        let e = GpuConfig::load_preset("table1", &["predictor=pcc".into()]).unwrap_err();
        assert!(format!("{e:#}").contains("did you mean `pc`"), "{e:#}");
    }
}
