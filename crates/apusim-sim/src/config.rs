//! System configuration: TOML files, built-in presets, and `--set KEY=VALUE` overrides.
//!
//! A configuration is read as a TOML value tree, overrides are applied to the tree by dotted
//! path, and only then is it checked and turned into a [`SystemConfig`]; so every key can be
//! overridden and every error names the key. Cache geometries use cachegrind's notation
//! `size,ways,line`; the shorthands `l1i`, `l1d`, `l2` and `llc` set a geometry directly
//! (`--set llc=16777216,16,64`), as cachegrind's `--I1`, `--D1` and `--LL` do.

use crate::timed::config::{check_level, LevelTiming};
use anyhow::{anyhow, bail, Context, Result};
use apusim_cache::{Geometry, WritePolicy};
use apusim_trace::Stream;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The built-in presets: (name, TOML text).
pub const PRESETS: &[(&str, &str)] = &[
    ("4c1g", include_str!("../presets/4c1g.toml")),
    ("4c1g-cuda", include_str!("../presets/4c1g-cuda.toml")),
    ("crit", include_str!("../presets/crit.toml")),
    ("crit-cuda", include_str!("../presets/crit-cuda.toml")),
    ("tap", include_str!("../presets/tap.toml")),
    ("gspc", include_str!("../presets/gspc.toml")),
    ("cachegrind", include_str!("../presets/cachegrind.toml")),
    ("champsim", include_str!("../presets/champsim.toml")),
    ("bypass", include_str!("../presets/bypass.toml")),
];

/// One private cache level.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LevelConfig {
    /// `size,ways,line` in cachegrind's notation.
    pub geometry: String,
    #[serde(default = "yes")]
    pub write_back: bool,
    #[serde(default = "yes")]
    pub write_allocate: bool,
    /// On a write miss, fetch the line from below before writing it (a CPU's read-for-ownership).
    /// Render caches that overwrite whole lines (color, depth) do not.
    #[serde(default = "yes")]
    pub fetch_on_write: bool,
    /// Lookup latency in cycles of the agent's clock (timed runs; see [`crate::timed::LevelTiming`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<u32>,
    /// Miss-status holding registers per instance (timed runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mshrs: Option<u32>,
}

fn yes() -> bool {
    true
}
fn one() -> usize {
    1
}

/// The per-core private caches; a missing level is absent from the hierarchy.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CpuConfig {
    pub l1i: Option<LevelConfig>,
    pub l1d: Option<LevelConfig>,
    pub l2: Option<LevelConfig>,
}

/// One GPU-side cache: which streams enter it, how many private instances (selected by the
/// access's unit modulo `units`), and which named cache it misses into (the LLC if none).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GpuCacheConfig {
    pub name: String,
    /// Streams whose accesses enter the GPU hierarchy at this cache.
    #[serde(default)]
    pub streams: Vec<Stream>,
    pub geometry: String,
    #[serde(default = "one")]
    pub units: usize,
    pub next: Option<String>,
    #[serde(default = "yes")]
    pub write_back: bool,
    #[serde(default = "yes")]
    pub write_allocate: bool,
    #[serde(default = "yes")]
    pub fetch_on_write: bool,
    /// An L1 bypass predictor of adaptive-gpu-l1-bypassing.txt beside every instance: `pc`
    /// (Listing 1: 128 4-bit counters, threshold 8, bypassBit) or `counter` (§3.3); the cache
    /// then uses tree pseudo-LRU instead of LRU. See `apusim_cache::policies::l1_bypass`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bypass_predictor: Option<String>,
    /// Replacement policy of every instance: `lru` (the default) or `plru`, tree pseudo-LRU
    /// (adaptive-gpu-l1-bypassing §4.1: "All caches use a default Pseudo-LRU replacement
    /// policy"), at most 64 ways. A cache with a bypass predictor is always tree pseudo-LRU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement: Option<String>,
    /// Lookup latency in cycles of the GPU's clock (timed runs; see
    /// [`GpuCacheConfig::timing`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<u32>,
    /// Miss-status holding registers per instance (timed runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mshrs: Option<u32>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GpuConfig {
    #[serde(default)]
    pub caches: Vec<GpuCacheConfig>,
}

/// The shared last-level cache.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LlcConfig {
    pub geometry: String,
    pub policy: String,
    /// CPU lines are inclusive: an LLC eviction back-invalidates the cores' private copies,
    /// and CPU misses may not bypass (drp-reuse-probability-shared-llc.txt §3).
    #[serde(default = "yes")]
    pub cpu_inclusive: bool,
    /// Tell the LLC's policy of every hit in a core's L2, as a hit on its line (temporal
    /// locality hints, Jaleel et al., MICRO 2010): an inclusive LLC's policy then sees the
    /// reuse that the private caches filter out. In timed runs each hint travels the network
    /// to its line's bank and takes the bank's tag port for a cycle; nobody waits for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub l2_hit_hints: bool,
    /// Query based selection (Jaleel et al., MICRO 2010) for CPU-inclusive LLCs: before it
    /// evicts a CPU line that a core's private cache still holds, the LLC tells its policy of
    /// a hit on it and picks another victim, up to this many times per miss (0: off; the last
    /// victim is evicted regardless).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub qbs_queries: u32,
    /// Apply the heterogeneous baseline's GPU write-miss/write-hit rules (drp §4.1) to the
    /// chosen policy.
    #[serde(default)]
    pub gpu_write_rules: bool,
    #[serde(default = "one")]
    pub banks: usize,
    /// Named numeric policy parameters.
    #[serde(default)]
    pub params: BTreeMap<String, f64>,
    /// Lookup latency in cycles of the uncore clock (timed runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<u32>,
    /// Miss-status holding registers per bank (timed runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mshrs: Option<u32>,
}

/// A whole system.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SystemConfig {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub cpus: usize,
    pub cpu_clock_mhz: u32,
    pub gpu_clock_mhz: u32,
    /// Seed of every random choice in the run.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// cachegrind semantics (see the `cachegrind` preset): no write-back traffic, whole
    /// accesses forwarded on a miss, data sizes clamped to the smallest line.
    #[serde(default)]
    pub cachegrind: bool,
    #[serde(default)]
    pub cpu: CpuConfig,
    #[serde(default)]
    pub gpu: GpuConfig,
    pub llc: LlcConfig,
    /// The timed machine (`apusim sim`): core model, network, DRAM.
    #[serde(default)]
    pub timing: crate::timed::TimingConfig,
}

fn default_seed() -> u64 {
    1
}

/// The TOML text of the built-in preset `name` in a `(name, text)` table, or an error that
/// names the `kind` of preset and lists the known ones.
pub fn preset_text(
    presets: &[(&str, &'static str)],
    name: &str,
    kind: &str,
) -> Result<&'static str> {
    presets
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let names: Vec<&str> = presets.iter().map(|(n, _)| *n).collect();
            anyhow!("unknown {kind} `{name}`; presets: {}", names.join(", "))
        })
}

impl SystemConfig {
    /// A built-in preset by name.
    pub fn preset(name: &str) -> Result<SystemConfig> {
        SystemConfig::load_preset(name, &[])
    }

    /// A preset with overrides applied.
    pub fn load_preset(name: &str, overrides: &[String]) -> Result<SystemConfig> {
        let text = preset_text(PRESETS, name, "preset")?;
        SystemConfig::from_toml(text, &format!("preset {name}"), overrides)
    }

    /// A configuration file with overrides applied.
    pub fn load_file(path: &Path, overrides: &[String]) -> Result<SystemConfig> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading configuration {}", path.display()))?;
        SystemConfig::from_toml(&text, &path.display().to_string(), overrides)
    }

    /// Parse TOML text (named `origin` in errors), apply `KEY=VALUE` overrides, validate.
    pub fn from_toml(text: &str, origin: &str, overrides: &[String]) -> Result<SystemConfig> {
        let mut tree: toml::Value =
            toml::from_str(text).with_context(|| format!("{origin}: not valid TOML"))?;
        for o in overrides {
            apply_override(&mut tree, o).with_context(|| format!("--set {o}"))?;
        }
        // Deserialize from text so errors quote the offending line and key: the file's own
        // text when nothing was overridden, else the overridden tree rendered back to TOML.
        let text = if overrides.is_empty() {
            text.to_string()
        } else {
            toml::to_string(&tree).context("rendering the overridden configuration")?
        };
        let cfg: SystemConfig = toml::from_str(&text).map_err(|e| {
            let with = if overrides.is_empty() {
                String::new()
            } else {
                format!(" (after --set {})", overrides.join(" --set "))
            };
            anyhow!("{origin}{with}: {e}")
        })?;
        cfg.validate().with_context(|| origin.to_string())?;
        Ok(cfg)
    }

    /// Check everything that deserialization cannot: geometries, cache names, clocks.
    pub fn validate(&self) -> Result<()> {
        if self.cpus >= apusim_trace::Agent::MAX_CPUS {
            bail!(
                "cpus = {} exceeds the {} cores an agent id can name",
                self.cpus,
                apusim_trace::Agent::MAX_CPUS - 1
            );
        }
        if self.cpu_clock_mhz == 0 || self.gpu_clock_mhz == 0 {
            bail!("cpu_clock_mhz and gpu_clock_mhz must be positive");
        }
        for (name, level) in self.cpu_levels() {
            parse_geometry(&level.geometry).with_context(|| format!("cpu.{name}.geometry"))?;
        }
        parse_geometry(&self.llc.geometry).context("llc.geometry")?;
        if self.llc.banks == 0 {
            bail!("llc.banks must be at least 1");
        }
        if self.llc.qbs_queries > 0 && !self.llc.cpu_inclusive {
            bail!(
                "llc.qbs_queries: query based selection spares inclusion victims; this LLC is \
                 not inclusive (llc.cpu_inclusive = false)"
            );
        }
        let names: Vec<&str> = self.gpu.caches.iter().map(|c| c.name.as_str()).collect();
        for (i, c) in self.gpu.caches.iter().enumerate() {
            parse_geometry(&c.geometry)
                .with_context(|| format!("gpu cache `{}` geometry", c.name))?;
            if c.units == 0 {
                bail!("gpu cache `{}`: units must be at least 1", c.name);
            }
            if let Some(p) = &c.bypass_predictor {
                use apusim_cache::policies::l1_bypass::PREDICTORS;
                if let Err(e) = apusim_registry::find(PREDICTORS, "L1 bypass predictor", p) {
                    bail!("gpu cache `{}`: bypass_predictor: {e}", c.name);
                }
            }
            c.check_replacement()?;
            if names[..i].contains(&c.name.as_str()) {
                bail!("gpu cache `{}` is defined twice", c.name);
            }
            if let Some(n) = &c.next {
                if !names.contains(&n.as_str()) {
                    bail!(
                        "gpu cache `{}`: next = `{n}` names no gpu cache (known: {})",
                        c.name,
                        names.join(", ")
                    );
                }
            }
        }
        for s in Stream::ALL {
            let owners: Vec<&str> = self
                .gpu
                .caches
                .iter()
                .filter(|c| c.streams.contains(s))
                .map(|c| c.name.as_str())
                .collect();
            if owners.len() > 1 {
                bail!(
                    "stream `{s}` enters the GPU hierarchy at more than one cache: {}",
                    owners.join(", ")
                );
            }
        }
        self.check_gpu_chains_acyclic()?;
        self.check_memory(available_memory())?;
        self.timing.validate()?;
        for (name, l) in self.cpu_levels() {
            check_level(&format!("cpu.{name}"), l.latency, l.mshrs)?;
        }
        check_level("llc", self.llc.latency, self.llc.mshrs)?;
        for c in &self.gpu.caches {
            check_level(&format!("gpu.caches.{}", c.name), c.latency, c.mshrs)?;
        }
        Ok(())
    }

    /// The timing of CPU level `name` (`l1i`, `l1d`, `l2`) or `llc`: its configured latency
    /// and MSHRs, with [`LevelTiming::cpu`]'s defaults.
    pub fn level_timing(&self, name: &str) -> LevelTiming {
        let (latency, mshrs) = match name {
            "llc" => (self.llc.latency, self.llc.mshrs),
            n => {
                let l = self
                    .cpu_levels()
                    .into_iter()
                    .find(|(x, _)| *x == n)
                    .map(|x| x.1);
                (l.and_then(|l| l.latency), l.and_then(|l| l.mshrs))
            }
        };
        LevelTiming::cpu(name, latency, mshrs)
    }

    /// Warnings about levels smaller than a level they back (an L2 smaller than an L1, an LLC
    /// smaller than a core's private level): legal, but most likely a mistyped geometry.
    /// Geometries must have been validated.
    pub fn shrinking_levels(&self) -> Vec<String> {
        let size = |g: &str| parse_geometry(g).map_or(0, |g| g.size);
        let private: Vec<(&str, u64)> = self
            .cpu_levels()
            .into_iter()
            .map(|(n, l)| (n, size(&l.geometry)))
            .collect();
        let mut out = Vec::new();
        if let Some(&(_, l2)) = private.iter().find(|(n, _)| *n == "l2") {
            for &(n, s) in private.iter().filter(|(n, _)| *n != "l2") {
                if l2 < s {
                    out.push(format!(
                        "cpu.l2 ({l2} bytes) is smaller than cpu.{n} ({s} bytes) above it"
                    ));
                }
            }
        }
        let llc = size(&self.llc.geometry);
        if self.cpus > 0 {
            if let Some(&(n, s)) = private.iter().max_by_key(|(_, s)| *s) {
                if llc < s {
                    out.push(format!(
                        "the LLC ({llc} bytes) is smaller than one core's cpu.{n} ({s} bytes)"
                    ));
                }
            }
        }
        out
    }

    /// Bytes of the caches' tag arrays, 8 per line of every cache instance (the private CPU
    /// levels once per core, a GPU cache once per unit): a lower bound of what building the
    /// hierarchy allocates. Also the key of the largest contributor. Geometries must have
    /// been validated.
    pub fn tag_array_bytes(&self) -> (u64, String) {
        let lines = |g: &str| parse_geometry(g).map_or(0, |g| g.lines());
        let mut parts: Vec<(u64, String)> = self
            .cpu_levels()
            .into_iter()
            .map(|(name, l)| {
                let bytes = lines(&l.geometry).saturating_mul(8 * self.cpus as u64);
                (bytes, format!("cpu.{name}.geometry"))
            })
            .collect();
        parts.push((
            lines(&self.llc.geometry).saturating_mul(8),
            "llc.geometry".into(),
        ));
        for c in &self.gpu.caches {
            let bytes = lines(&c.geometry).saturating_mul(8 * c.units as u64);
            parts.push((bytes, format!("gpu cache `{}` geometry", c.name)));
        }
        let total = parts.iter().fold(0u64, |t, (b, _)| t.saturating_add(*b));
        let key = parts.into_iter().max_by_key(|(b, _)| *b).map(|(_, k)| k);
        (total, key.unwrap_or_default())
    }

    /// Refuse a configuration whose tag arrays alone exceed `available` bytes of memory
    /// (`None`: unknown, nothing refused), before anything is allocated: an allocation that
    /// large would abort the process.
    fn check_memory(&self, available: Option<u64>) -> Result<()> {
        let (need, key) = self.tag_array_bytes();
        match available {
            Some(avail) if need > avail => bail!(
                "{key}: the caches' tag arrays alone need {:.1} GiB (8 bytes per cache line), \
                 more than the {:.1} GiB of memory available",
                need as f64 / (1u64 << 30) as f64,
                avail as f64 / (1u64 << 30) as f64
            ),
            _ => Ok(()),
        }
    }

    fn check_gpu_chains_acyclic(&self) -> Result<()> {
        for c in &self.gpu.caches {
            let mut at = c;
            for _ in 0..=self.gpu.caches.len() {
                match &at.next {
                    None => break,
                    Some(n) => {
                        at = self
                            .gpu
                            .caches
                            .iter()
                            .find(|x| &x.name == n)
                            .expect("validated")
                    }
                }
                if at.name == c.name {
                    bail!(
                        "gpu cache `{}`: the `next` chain loops back to itself",
                        c.name
                    );
                }
            }
        }
        Ok(())
    }

    /// The configuration policy `name` of a multi-policy run is built with: `llc.params`
    /// reduced to the keys `name` declares, once the run's policies together accepted them
    /// all (`apusim_cache::policies::check_params`).
    pub fn for_policy(&self, name: &str) -> SystemConfig {
        let mut cfg = self.clone();
        cfg.llc.params =
            apusim_cache::policies::params_for(name, &self.llc.params, self.llc.gpu_write_rules);
        cfg
    }

    /// The configured private CPU levels, in lookup order, with their names.
    pub fn cpu_levels(&self) -> Vec<(&'static str, &LevelConfig)> {
        [
            ("l1i", &self.cpu.l1i),
            ("l1d", &self.cpu.l1d),
            ("l2", &self.cpu.l2),
        ]
        .into_iter()
        .filter_map(|(n, l)| l.as_ref().map(|l| (n, l)))
        .collect()
    }

    /// The configuration as TOML (for `apusim config show` and for run provenance).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_else(|e| format!("# cannot render: {e}"))
    }
}

impl LevelConfig {
    pub fn write_policy(&self) -> WritePolicy {
        WritePolicy {
            write_back: self.write_back,
            write_allocate: self.write_allocate,
        }
    }
}

/// Replacement policies a GPU cache may name (`gpu.caches.NAME.replacement`).
pub const GPU_REPLACEMENTS: &[&str] = &["lru", "plru"];

impl GpuCacheConfig {
    /// Its timing: latency in GPU cycles and MSHRs per instance ([`LevelTiming::gpu`]).
    pub fn timing(&self) -> LevelTiming {
        LevelTiming::gpu(self.latency, self.mshrs)
    }

    /// Tree pseudo-LRU instead of LRU (`replacement = "plru"`, or a bypass predictor).
    pub fn pseudo_lru(&self) -> bool {
        self.replacement.as_deref() == Some("plru") || self.bypass_predictor.is_some()
    }

    fn check_replacement(&self) -> Result<()> {
        let Some(r) = self.replacement.as_deref() else {
            return Ok(());
        };
        let key = format!("gpu.caches.{}.replacement", self.name);
        if !GPU_REPLACEMENTS.contains(&r) {
            bail!(
                "{key} = `{r}`; expected one of: {}",
                GPU_REPLACEMENTS.join(", ")
            );
        }
        if r == "lru" && self.bypass_predictor.is_some() {
            bail!(
                "{key} = `lru` with a bypass_predictor: the predictor's cache is tree \
                 pseudo-LRU (adaptive-gpu-l1-bypassing §4.1); set plru or leave it out"
            );
        }
        let ways = parse_geometry(&self.geometry)?.ways;
        if r == "plru" && ways > 64 {
            bail!("{key} = `plru` holds at most 64 ways; this cache has {ways}");
        }
        Ok(())
    }

    pub fn level(&self) -> LevelConfig {
        LevelConfig {
            geometry: self.geometry.clone(),
            write_back: self.write_back,
            write_allocate: self.write_allocate,
            fetch_on_write: self.fetch_on_write,
            latency: None,
            mshrs: None,
        }
    }
}

/// Memory available to a new allocation in bytes (`MemAvailable` of `/proc/meminfo`), or
/// `None` where that is not known.
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// Parse `size,ways,line`.
pub fn parse_geometry(s: &str) -> Result<Geometry> {
    s.parse::<Geometry>().map_err(|e| anyhow!("{e}"))
}

/// Dot-separated parts a `--set` key may have (the deepest real key has four or five).
const MAX_KEY_PARTS: usize = 16;

/// Apply one `KEY=VALUE` override to a TOML tree. `VALUE` is read as a TOML literal if it is
/// one (numbers, booleans, arrays, quoted strings) and as a bare string otherwise.
pub fn apply_override(tree: &mut toml::Value, spec: &str) -> Result<()> {
    let (key, value) = spec.split_once('=').ok_or_else(|| {
        anyhow!("expected KEY=VALUE, e.g. llc.policy=srrip or llc=16777216,16,64")
    })?;
    let key = key.trim();
    if key.is_empty() {
        bail!("empty key");
    }
    let path: Vec<&str> = match key {
        "l1i" | "l1d" | "l2" => vec!["cpu", key, "geometry"],
        "llc" => vec!["llc", "geometry"],
        k => k.split('.').collect(),
    };
    // No key of the configuration is nearly this deep; a deeper one would build tables nested
    // deeper than the TOML reader accepts from a file, and rendering them would exhaust the
    // stack.
    if path.len() > MAX_KEY_PARTS {
        bail!(
            "`{}…` has {} dot-separated parts; configuration keys have at most {MAX_KEY_PARTS}",
            key.chars().take(40).collect::<String>(),
            path.len()
        );
    }
    let value = parse_value(value.trim());
    let mut node = tree;
    for (i, part) in path.iter().enumerate() {
        // An array of named tables (`[[gpu.caches]]`) is entered by an entry's name.
        if let toml::Value::Array(entries) = node {
            let at = path[..i].join(".");
            let names: Vec<String> = entries
                .iter()
                .filter_map(|e| e.get("name")?.as_str().map(str::to_string))
                .collect();
            let Some(entry) = entries
                .iter_mut()
                .find(|e| e.get("name").and_then(|n| n.as_str()) == Some(part))
            else {
                bail!(
                    "`{at}` has no entry named `{part}`{} (entries: {})",
                    apusim_registry::nearest(part, names.iter().map(String::as_str))
                        .map_or_else(String::new, |n| format!(" (did you mean `{n}`?)")),
                    names.join(", ")
                );
            };
            if i + 1 == path.len() {
                bail!("`{key}` names a whole entry of `{at}`; set one of its keys, e.g. `{key}.geometry=...`");
            }
            node = entry;
            continue;
        }
        let table = node
            .as_table_mut()
            .ok_or_else(|| anyhow!("`{}` is not a table", path[..i].join(".")))?;
        if i + 1 == path.len() {
            table.insert(part.to_string(), value);
            return Ok(());
        }
        node = table
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(Default::default()));
    }
    unreachable!("path has at least one element")
}

fn parse_value(v: &str) -> toml::Value {
    let probe = format!("v = {v}");
    match toml::from_str::<toml::Table>(&probe) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(v.to_string())),
        Err(_) => toml::Value::String(v.to_string()),
    }
}

/// For `skip_serializing_if`: a zero count is left out, so configurations without it keep
/// their serialized form (and run keys).
fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_named_gpu_cache_is_set_by_its_name() {
        let cfg = SystemConfig::load_preset(
            "bypass",
            &[
                "gpu.caches.cu-l1d.geometry=32K,8,64".into(),
                "gpu.caches.cu-l1d.bypass_predictor=pc".into(),
            ],
        )
        .unwrap();
        let l1 = cfg.gpu.caches.iter().find(|c| c.name == "cu-l1d").unwrap();
        assert_eq!(l1.geometry, "32K,8,64");
        assert_eq!(l1.bypass_predictor.as_deref(), Some("pc"));
        assert!(l1.pseudo_lru());
        let e =
            SystemConfig::load_preset("bypass", &["gpu.caches.cu-l1x.geometry=32K,8,64".into()])
                .unwrap_err();
        let e = format!("{e:#}");
        assert!(
            e.contains("no entry named `cu-l1x`") && e.contains("did you mean `cu-l1"),
            "{e}"
        );
        let e = SystemConfig::load_preset("bypass", &["gpu.caches.cu-l1d=1".into()]).unwrap_err();
        assert!(format!("{e:#}").contains("names a whole entry"), "{e:#}");
    }

    #[test]
    fn gpu_cache_replacement_is_checked_naming_the_key() {
        let refused = |set: &[&str]| {
            let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
            format!(
                "{:#}",
                SystemConfig::load_preset("bypass", &set).unwrap_err()
            )
        };
        let e = refused(&["gpu.caches.gpu-l2.replacement=mru"]);
        assert!(
            e.contains("gpu.caches.gpu-l2.replacement = `mru`") && e.contains("lru, plru"),
            "{e}"
        );
        let e = refused(&[
            "gpu.caches.cu-l1d.replacement=lru",
            "gpu.caches.cu-l1d.bypass_predictor=pc",
        ]);
        assert!(e.contains("tree pseudo-LRU"), "{e}");
        let e = refused(&["gpu.caches.gpu-l2.geometry=256K,128,64"]);
        assert!(e.contains("at most 64 ways"), "{e}");
        let ok = SystemConfig::load_preset("bypass", &["gpu.caches.gpu-l2.replacement=lru".into()])
            .unwrap();
        assert!(!ok
            .gpu
            .caches
            .iter()
            .any(|c| c.name == "gpu-l2" && c.pseudo_lru()));
    }

    use super::*;

    #[test]
    fn every_preset_loads() {
        for (name, _) in PRESETS {
            let c = SystemConfig::preset(name).unwrap();
            assert_eq!(&c.name, name);
        }
    }

    #[test]
    fn overrides_reach_any_key() {
        let c = SystemConfig::load_preset(
            "4c1g",
            &[
                "llc=8388608,32,64".into(),
                "llc.policy=srrip".into(),
                "cpus=2".into(),
                "llc.params.threshold=4".into(),
            ],
        )
        .unwrap();
        assert_eq!(c.llc.geometry, "8388608,32,64");
        assert_eq!(c.llc.policy, "srrip");
        assert_eq!(c.cpus, 2);
        assert_eq!(c.llc.params["threshold"], 4.0);
        let c = SystemConfig::load_preset("cachegrind", &["l1d=65536,2,64".into()]).unwrap();
        assert_eq!(c.cpu.l1d.unwrap().geometry, "65536,2,64");
    }

    #[test]
    fn bad_configs_name_the_problem() {
        let err = |o: &str| {
            format!(
                "{:#}",
                SystemConfig::load_preset("4c1g", &[o.into()]).unwrap_err()
            )
        };
        assert!(
            err("llc=1000,3,64").contains("llc.geometry"),
            "{}",
            err("llc=1000,3,64")
        );
        assert!(err("cpus=x").contains("cpus"));
        assert!(err("nonsense=1").contains("nonsense"));
        assert!(err("llc.banks=0").contains("banks"));
        assert!(err("noequals").contains("KEY=VALUE"));
        assert!(format!("{:#}", SystemConfig::preset("nope").unwrap_err()).contains("4c1g"));
    }

    /// Tag arrays larger than the memory available are refused naming the largest cache,
    /// before anything is allocated (1024G,16,64 used to abort in the allocator).
    #[test]
    fn caches_larger_than_memory_are_refused_before_allocation() {
        let c = SystemConfig::preset("4c1g").unwrap();
        let (need, _) = c.tag_array_bytes();
        assert!(c.check_memory(Some(need)).is_ok());
        assert!(c.check_memory(None).is_ok());
        let err = format!("{:#}", c.check_memory(Some(need - 1)).unwrap_err());
        assert!(err.contains("llc.geometry") && err.contains("GiB"), "{err}");
        let mut big = c.clone();
        big.llc.geometry = "1024G,16,64".into();
        assert_eq!(
            big.tag_array_bytes().0 - need,
            (1u64 << 34) * 8 - (16u64 << 20) / 8
        );
        let err = format!("{:#}", big.check_memory(Some(1 << 36)).unwrap_err());
        assert!(
            err.contains("llc.geometry") && err.contains("128.0 GiB") && err.contains("64.0 GiB"),
            "{err}"
        );
        assert!(c.shrinking_levels().is_empty());
        let mut small = c.clone();
        small.llc.geometry = "16K,16,64".into();
        small.cpu.l2.as_mut().unwrap().geometry = "16K,8,64".into();
        let w = small.shrinking_levels();
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("cpu.l2 (16384 bytes)") && w[0].contains("cpu.l1i"));
        assert!(
            w[2].contains("LLC (16384 bytes)") && w[2].contains("cpu.l1"),
            "{w:?}"
        );
        // Per-core levels count once per core.
        let mut cores = c.clone();
        cores.cpus *= 2;
        let per_core: u64 = c
            .cpu_levels()
            .iter()
            .map(|(_, l)| parse_geometry(&l.geometry).unwrap().lines())
            .sum();
        assert!(per_core > 0);
        assert_eq!(
            cores.tag_array_bytes().0 - need,
            per_core * 8 * c.cpus as u64
        );
    }
}
