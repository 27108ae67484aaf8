//! The sweep specification: a TOML file of shared settings, `[grid]` axes and `[[point]]`s,
//! expanded into [`Point`]s before anything runs.
//!
//! ```toml
//! mode = "functional"            # or "timed"
//! preset = "4c1g"
//! mix = "S1"                     # or traces = ["a.apt", "b.apt@gpu"], or a GPU workload
//!                                # alone: kernel = "bfs", scene = "lake" or a scene file
//!                                # relative to the spec (resolution, frames)
//! frames = "paper"               # a mix's rendering job: a count, or its title's frame region
//!                                # in the table of the mix's paper (default: scale)
//! limit = 200000                 # functional runs: stop after this many accesses
//! [set]                          # --set overrides of every point
//! "llc.banks" = 4
//! [grid]                         # every combination of these lists
//! policy = ["lru", "srrip", "drp-baseline"]
//! [grid.set]
//! llc = ["4M,16,64", "8M,16,64"]
//! [[point]]                      # explicit points, each crossed with the grid
//! mix = "S1"
//! [[point]]
//! mix = "D2"
//! set = { "llc.gpu_write_rules" = true }
//! ```
//!
//! The points are every `[[point]]` (or the shared settings alone when there is none) crossed
//! with every combination of the `[grid]` axes, in file order, the last axis varying fastest.
//! A point's setting comes from the grid over the `[[point]]` over the shared settings. Every
//! error names the file and line, and an unknown key the nearest valid one.
//!
//! Timed points (`mode = "timed"`, with `warmup` and `instructions`) of more than one input
//! report weighted speedup, harmonic speedup and maximum slowdown as `apusim sim` does: each
//! job is also run alone under `alone_policy` (default `lru`), once per sweep and cached
//! beside the traces. `alone = false` skips the alone runs. `sample = true` samples a timed
//! point (and its alone runs) with `apusim sim --sample`'s default windows. A functional
//! point of a mix takes `instructions` as its CPU jobs' length, run by drp §3's method as
//! `apusim run --mix --instructions` runs it (a job that ends before the others starts again
//! until every job has ended once); `warmup` is for timed points only.
//!
//! A replay point (`mode = "replay"`, a `scene` or `kernel` alone on a system without CPU
//! cores) replays the workload's LLC access stream through the LLC under its policy, as
//! `apusim oracle` does and the gspc functional figures are made (`apusim_experiments::replay`):
//! the stream behind the configuration's upper caches is made once and cached beside the
//! workload's trace; `consumption = true` also reports the share of render-target blocks a
//! texture read consumed from the LLC (gspc Fig. 13). A replay point of one trace file
//! (`traces = ["llc.apt"]`) replays that recorded LLC stream as it is.
//!
//! A `gpu-l1` point (`mode = "gpu-l1"`) runs a GPGPU `kernel` (at problem size `size`, else
//! the kernel's default, from `seed`) or one `traces` file of GPU accesses through the GPU
//! memory side of adaptive-gpu-l1-bypassing's Table 1, as `apusim gpu-l1 run` does and the
//! functional bypass figures are made (`apusim_experiments::gpu_l1`): its `preset` (default
//! `table1`) or `config` is a GPU configuration (`apusim gpu-l1 presets`) and its `set` keys
//! are that configuration's (`predictor`, `l1`, `sms`, `l1.pc.threshold`, ...).
//!
//! `ideal = "color,texture"` and `gpu_read_bypass = 0.5` are drp §4's LLC switches, and
//! `ideal_gpu = "critical"` (or `"non-critical"`) gpu-access-criticality Fig. 8's, as
//! `apusim run|sim --ideal`, `--gpu-read-bypass` and `--ideal-gpu` set them (a point's key is
//! the key those commands record under).
//!
//! This file holds the spec's types and its expansion into points; `parse` reads the TOML
//! into settings and `point` type-checks one point's settings.

mod parse;
mod point;
#[cfg(test)]
mod tests;

use apusim_workloads::mixes::Frames;
use parse::Parser;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use toml_edit::ImDocument;

/// A `scene` point's frame size when it gives no `resolution` (as `apusim sim --scene`).
pub const DEFAULT_RESOLUTION: (u32, u32) = (1280, 1024);

/// The settings a point has, besides `set` (the configuration overrides).
pub const SETTINGS: &[&str] = &[
    "mode",
    "preset",
    "config",
    "policy",
    "mix",
    "traces",
    "kernel",
    "scene",
    "cpu",
    "resolution",
    "scale",
    "frames",
    "limit",
    "warmup",
    "instructions",
    "seed",
    "alone_policy",
    "alone",
    "sample",
    "ideal",
    "ideal_gpu",
    "gpu_read_bypass",
    "consumption",
    "size",
];

/// An error in a spec file, with the line it is on (0 when it concerns the whole file).
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError {
    pub file: PathBuf,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
        }
    }
}

impl std::error::Error for SpecError {}

/// Timed (`apusim sim`), functional (`apusim run`), a replay of an LLC stream (`apusim
/// oracle`'s, [`apusim_experiments::replay`]) or a kernel through the GPU hierarchy of
/// `apusim gpu-l1 run` ([`apusim_experiments::gpu_l1`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    Functional,
    Timed,
    Replay,
    GpuL1,
}

impl Mode {
    pub const NAMES: &'static [&'static str] = &["functional", "timed", "replay", "gpu-l1"];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Functional => "functional",
            Mode::Timed => "timed",
            Mode::Replay => "replay",
            Mode::GpuL1 => "gpu-l1",
        }
    }
}

/// What a point runs on.
#[derive(Clone, Debug, PartialEq)]
pub enum InputSpec {
    /// A named mix of built-in workloads (`apusim mixes`) at a size multiplier, its
    /// rendering job of `frames` (`apusim run|sim --mix --frames`).
    Mix {
        name: String,
        scale: u64,
        frames: Frames,
    },
    /// Trace files (`FILE@agent` as on the command line), relative to the spec's directory.
    Traces(Vec<String>),
    /// A GPGPU kernel alone on the GPU at a size multiplier (`apusim sim --kernel`).
    Kernel { name: String, scale: u64 },
    /// `frames` frames of a built-in scene alone on the GPU at `width`x`height`
    /// (`apusim sim --scene --frames FRAMES --resolution WxH`; a point's `frames`, else its
    /// `scale`).
    Scene {
        name: String,
        frames: u64,
        width: u32,
        height: u32,
    },
    /// A CPU kernel alone on core 0 (`apusim run|sim --cpu`): its job retires a functional
    /// point's `instructions`, a timed point's `warmup` + `instructions`, else `scale ×` 5 M.
    Cpu { name: String, scale: u64 },
}

/// One point of a sweep: everything one run needs, before the configuration is loaded.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The line the point comes from: its `[[point]]`, else the `[grid]`, else line 1.
    pub line: usize,
    pub mode: Mode,
    /// The preset, unless `config` names a configuration file (a GPU configuration's for a
    /// `gpu-l1` point).
    pub preset: String,
    pub config: Option<PathBuf>,
    /// `None`: the configuration's own LLC policy.
    pub policy: Option<String>,
    pub inputs: InputSpec,
    pub limit: Option<u64>,
    pub warmup: u64,
    pub instructions: Option<u64>,
    pub seed: Option<u64>,
    /// Timed points with more than one input: the LLC policy of the alone runs behind
    /// weighted speedup (`None`: `lru`, as `apusim sim --alone-policy`).
    pub alone_policy: Option<String>,
    /// Timed points with more than one input: make the alone runs and report speedups (false:
    /// as `apusim sim --no-alone`).
    pub alone: bool,
    /// Timed points: sample with `apusim sim --sample`'s default windows.
    pub sample: bool,
    /// drp §4's LLC switches, as `apusim run|sim --ideal` and `--gpu-read-bypass`: the
    /// streams whose non-compulsory LLC misses count as hits (a list as `--ideal` takes it)
    /// and the fraction of GPU read misses forced to bypass the LLC.
    pub ideal: Option<String>,
    pub gpu_read_bypass: Option<f64>,
    /// gpu-access-criticality Fig. 8: idealize the `critical` or `non-critical` GPU accesses.
    pub ideal_gpu: Option<String>,
    /// Replay points: also report the render-target consumption (gspc Fig. 13).
    pub consumption: bool,
    /// `gpu-l1` points: the kernel's problem size (`None`: its default).
    pub size: Option<u64>,
    /// Configuration overrides, key → TOML value, in key order.
    pub set: Vec<(String, toml::Value)>,
    /// The line of every setting, for errors found later (`set.KEY` for overrides).
    pub lines: BTreeMap<String, usize>,
}

impl Point {
    /// The line of setting `name`, or the point's own line.
    pub fn line_of(&self, name: &str) -> usize {
        self.lines.get(name).copied().unwrap_or(self.line)
    }

    /// The `--set KEY=VALUE` strings of the overrides (values as TOML literals).
    pub fn overrides(&self) -> Vec<String> {
        self.set.iter().map(|(k, v)| format!("{k}={v}")).collect()
    }
}

#[derive(Clone, Debug)]
struct Setting {
    value: toml::Value,
    line: usize,
}

type Settings = BTreeMap<String, Setting>;

#[derive(Clone, Debug)]
struct Axis {
    name: String,
    values: Vec<Setting>,
}

/// A parsed spec file.
#[derive(Clone, Debug)]
pub struct Spec {
    pub file: PathBuf,
    /// The sweep's name: the file's stem.
    pub name: String,
    base: Settings,
    explicit: Vec<(usize, Settings)>,
    grid: Vec<Axis>,
    grid_line: usize,
}

impl Spec {
    /// Read and parse a spec file.
    pub fn load(path: &Path) -> Result<Spec, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|e| SpecError {
            file: path.to_path_buf(),
            line: 0,
            message: format!("cannot read: {e}"),
        })?;
        Spec::parse(&text, path)
    }

    /// Parse spec text; `file` names it in errors and relative trace paths are relative to
    /// its directory.
    pub fn parse(text: &str, file: &Path) -> Result<Spec, SpecError> {
        let p = Parser {
            file: file.to_path_buf(),
            text,
        };
        let doc = ImDocument::parse(text.to_string()).map_err(|e| SpecError {
            file: file.to_path_buf(),
            line: e.span().map(|s| p.line(s.start)).unwrap_or(0),
            message: format!(
                "not valid TOML: {}",
                e.message().trim_end().replace('\n', " ")
            ),
        })?;
        let top = doc.as_table();
        let mut base = Settings::new();
        let mut explicit = Vec::new();
        let mut grid = Vec::new();
        let mut grid_line = 0;
        for (k, item) in top.iter() {
            let line = p.key_line(top, k);
            match k {
                "grid" => {
                    let t = item.as_table().ok_or_else(|| p.err(line, "`grid` must be a table of lists, e.g. [grid] policy = [\"lru\", \"srrip\"]"))?;
                    grid_line = p.span_line(t.span()).max(line);
                    grid = p.axes(t)?;
                }
                "point" => {
                    let arr = item.as_array_of_tables().ok_or_else(|| {
                        p.err(line, "`point` must be an array of tables: [[point]]")
                    })?;
                    for t in arr.iter() {
                        let l = p.span_line(t.span()).max(line);
                        explicit.push((l, p.settings(t, false)?));
                    }
                }
                _ => p.setting(k, item, line, &mut base, true)?,
            }
        }
        let name = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sweep".into());
        Ok(Spec {
            file: file.to_path_buf(),
            name,
            base,
            explicit,
            grid,
            grid_line,
        })
    }

    /// Every point, in order: each `[[point]]` crossed with the grid.
    pub fn points(&self) -> Result<Vec<Point>, SpecError> {
        let explicit: Vec<(usize, Settings)> = if self.explicit.is_empty() {
            vec![(0, Settings::new())]
        } else {
            self.explicit.clone()
        };
        let combos: usize = self.grid.iter().map(|a| a.values.len()).product();
        let mut out = Vec::with_capacity(explicit.len() * combos);
        for (pline, psettings) in &explicit {
            for i in 0..combos {
                let mut s = self.base.clone();
                s.extend(psettings.iter().map(|(k, v)| (k.clone(), v.clone())));
                let mut rest = i;
                for a in self.grid.iter().rev() {
                    let v = &a.values[rest % a.values.len()];
                    rest /= a.values.len();
                    s.insert(a.name.clone(), v.clone());
                }
                let line = if *pline > 0 {
                    *pline
                } else if self.grid_line > 0 {
                    self.grid_line
                } else {
                    1
                };
                out.push(self.point(line, s)?);
            }
        }
        Ok(out)
    }

    fn err(&self, line: usize, message: impl Into<String>) -> SpecError {
        SpecError {
            file: self.file.clone(),
            line,
            message: message.into(),
        }
    }
}

/// The kind of a TOML value, for type errors.
fn kind(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("the string \"{s}\""),
        toml::Value::Integer(n) => format!("the integer {n}"),
        toml::Value::Float(x) => format!("the number {x}"),
        toml::Value::Boolean(b) => format!("the boolean {b}"),
        toml::Value::Datetime(d) => format!("the date {d}"),
        toml::Value::Array(_) => "a list".into(),
        toml::Value::Table(_) => "a table".into(),
    }
}

/// "; did you mean `X`?" when a candidate is near `word`.
fn suggest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    match apusim_registry::nearest(word, candidates) {
        Some(n) => format!("; did you mean `{n}`?"),
        None => String::new(),
    }
}
