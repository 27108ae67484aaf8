//! The sweep specification: a TOML file of shared settings, `[grid]` axes and `[[point]]`s,
//! expanded into [`Point`]s before anything runs.
//!
//! ```toml
//! mode = "functional"            # or "timed"
//! preset = "4c1g"
//! mix = "S1"                     # or traces = ["a.apt", "b.apt@gpu"], or a GPU workload
//!                                # alone: kernel = "bfs", scene = "lake" (resolution, frames
//!                                # as scale)
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
//! `ideal = "color,texture"` and `gpu_read_bypass = 0.5` are drp §4's LLC study switches, and
//! `ideal_gpu = "critical"` (or `"non-critical"`) gpu-access-criticality Fig. 8's, as
//! `apusim run|sim --ideal`, `--gpu-read-bypass` and `--ideal-gpu` set them (a point's key is
//! the key those commands record under).

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use toml_edit::{ImDocument, Item, Table};

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
    "resolution",
    "scale",
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

/// Timed (`apusim sim`) or functional (`apusim run`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    Functional,
    Timed,
}

impl Mode {
    pub const NAMES: &'static [&'static str] = &["functional", "timed"];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Functional => "functional",
            Mode::Timed => "timed",
        }
    }
}

/// What a point runs on.
#[derive(Clone, Debug, PartialEq)]
pub enum InputSpec {
    /// A named mix of built-in workloads (`apusim mixes`) at a size multiplier.
    Mix { name: String, scale: u64 },
    /// Trace files (`FILE@agent` as on the command line), relative to the spec's directory.
    Traces(Vec<String>),
    /// A GPGPU kernel alone on the GPU at a size multiplier (`apusim sim --kernel`).
    Kernel { name: String, scale: u64 },
    /// `frames` frames of a built-in scene alone on the GPU at `width`x`height`
    /// (`apusim sim --scene --scale FRAMES --resolution WxH`).
    Scene {
        name: String,
        frames: u64,
        width: u32,
        height: u32,
    },
}

/// One point of a sweep: everything one run needs, before the configuration is loaded.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// The line the point comes from: its `[[point]]`, else the `[grid]`, else line 1.
    pub line: usize,
    pub mode: Mode,
    /// The preset, unless `config` names a configuration file.
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
    /// drp §4's LLC study switches, as `apusim run|sim --ideal` and `--gpu-read-bypass`: the
    /// streams whose non-compulsory LLC misses count as hits (a list as `--ideal` takes it)
    /// and the fraction of GPU read misses forced to bypass the LLC.
    pub ideal: Option<String>,
    pub gpu_read_bypass: Option<f64>,
    /// gpu-access-criticality Fig. 8: idealize the `critical` or `non-critical` GPU accesses.
    pub ideal_gpu: Option<String>,
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

    /// Type-check one point's settings.
    fn point(&self, line: usize, s: Settings) -> Result<Point, SpecError> {
        let lines: BTreeMap<String, usize> = s.iter().map(|(k, v)| (k.clone(), v.line)).collect();
        let text = |name: &str| -> Result<Option<String>, SpecError> {
            match s.get(name) {
                None => Ok(None),
                Some(Setting {
                    value: toml::Value::String(v),
                    ..
                }) => Ok(Some(v.clone())),
                Some(Setting { value, line }) => Err(self.err(
                    *line,
                    format!("`{name}` must be a string, not {}", kind(value)),
                )),
            }
        };
        let count = |name: &str, min: i64| -> Result<Option<u64>, SpecError> {
            match s.get(name) {
                None => Ok(None),
                Some(Setting {
                    value: toml::Value::Integer(n),
                    ..
                }) if *n >= min => Ok(Some(*n as u64)),
                Some(Setting {
                    value: toml::Value::Integer(n),
                    line,
                }) => Err(self.err(*line, format!("`{name}` must be at least {min}, not {n}"))),
                Some(Setting { value, line }) => Err(self.err(
                    *line,
                    format!("`{name}` must be a whole number, not {}", kind(value)),
                )),
            }
        };
        let mode = match text("mode")? {
            None => Mode::Functional,
            Some(m) => match m.as_str() {
                "functional" => Mode::Functional,
                "timed" => Mode::Timed,
                other => {
                    return Err(self.err(
                        lines["mode"],
                        format!(
                            "unknown mode `{other}`; expected {}{}",
                            Mode::NAMES.join(" or "),
                            suggest(other, Mode::NAMES.iter().copied())
                        ),
                    ))
                }
            },
        };
        let dir = self.file.parent().unwrap_or(Path::new(""));
        let traces = match s.get("traces") {
            None => None,
            Some(Setting { value, line }) => {
                let list = value
                    .as_array()
                    .filter(|a| !a.is_empty())
                    .and_then(|a| {
                        a.iter()
                            .map(|v| v.as_str().map(|t| resolve_trace(dir, t)))
                            .collect::<Option<Vec<_>>>()
                    })
                    .ok_or_else(|| {
                        self.err(
                            *line,
                            format!(
                                "`traces` must be a non-empty list of file names, not {}",
                                kind(value)
                            ),
                        )
                    })?;
                Some(list)
            }
        };
        let scale = count("scale", 1)?.unwrap_or(1);
        let resolution = match s.get("resolution") {
            None => None,
            Some(Setting { value, line }) => {
                let r = value
                    .as_str()
                    .ok_or_else(|| format!("a resolution WIDTHxHEIGHT, not {}", kind(value)))
                    .and_then(apusim_experiments::jobs::parse_resolution)
                    .map_err(|e| self.err(*line, format!("`resolution`: {e}")))?;
                Some(r)
            }
        };
        let given: Vec<&str> = ["mix", "traces", "kernel", "scene"]
            .into_iter()
            .filter(|k| s.contains_key(*k))
            .collect();
        if given.len() > 1 {
            return Err(self.err(
                given.iter().map(|k| lines[*k]).max().unwrap_or(line),
                format!(
                    "a point has one of `mix`, `traces`, `kernel` and `scene`, not {}",
                    given.join(" and ")
                ),
            ));
        }
        if resolution.is_some() && given != ["scene"] {
            return Err(self.err(
                lines["resolution"],
                "`resolution` is for `scene` points (a frame's size)",
            ));
        }
        let inputs = if let Some(t) = traces {
            InputSpec::Traces(t)
        } else if let Some(name) = text("mix")? {
            InputSpec::Mix { name, scale }
        } else if let Some(name) = text("kernel")? {
            InputSpec::Kernel { name, scale }
        } else if let Some(name) = text("scene")? {
            let (width, height) = resolution.unwrap_or(DEFAULT_RESOLUTION);
            InputSpec::Scene {
                name,
                frames: scale,
                width,
                height,
            }
        } else {
            return Err(self.err(
                line,
                "this point has no inputs: give `mix = \"NAME\"`, `traces = [\"FILE\", ...]`, \
                 `kernel = \"NAME\"` or `scene = \"NAME\"`",
            ));
        };
        let preset = text("preset")?;
        let config = text("config")?.map(|c| dir.join(c));
        if preset.is_some() && config.is_some() {
            return Err(self.err(
                lines["config"].max(lines["preset"]),
                "a point has either `preset` or `config`, not both",
            ));
        }
        let switch = |name: &str, default: bool| match s.get(name) {
            None => Ok(default),
            Some(Setting {
                value: toml::Value::Boolean(b),
                ..
            }) => Ok(*b),
            Some(Setting { value, line }) => Err(self.err(
                *line,
                format!("`{name}` must be true or false, not {}", kind(value)),
            )),
        };
        let alone = switch("alone", true)?;
        let sample = switch("sample", false)?;
        let alone_policy = text("alone_policy")?;
        let gpu_read_bypass = match s.get("gpu_read_bypass") {
            None => None,
            Some(Setting { value, line }) => {
                let v = match value {
                    toml::Value::Float(x) => Some(*x),
                    toml::Value::Integer(n) => Some(*n as f64),
                    _ => None,
                };
                match v {
                    Some(x) if (0.0..=1.0).contains(&x) => Some(x),
                    _ => {
                        return Err(self.err(
                            *line,
                            format!(
                                "`gpu_read_bypass` must be a fraction from 0 to 1, not {}",
                                kind(value)
                            ),
                        ))
                    }
                }
            }
        };
        if mode == Mode::Functional {
            // A functional point's `instructions` is its mix's CPU job length (drp §3's
            // method); trace files and GPU workloads alone have no such length.
            if let (Some(l), false) = (
                lines.get("instructions"),
                matches!(inputs, InputSpec::Mix { .. }),
            ) {
                return Err(self.err(
                    *l,
                    "`instructions` of a functional point is the length of its mix's CPU jobs \
                     (`apusim run --mix --instructions`); this point runs no mix"
                        .to_string(),
                ));
            }
            if let Some(name) = ["alone", "alone_policy", "sample", "warmup"]
                .into_iter()
                .find(|k| s.contains_key(*k))
            {
                return Err(self.err(
                    lines[name],
                    format!(
                        "`{name}` is for timed points; this point is functional \
                         (set `mode = \"timed\"`)"
                    ),
                ));
            }
        }
        let set = s
            .iter()
            .filter_map(|(k, v)| {
                k.strip_prefix("set.")
                    .map(|k| (k.to_string(), v.value.clone()))
            })
            .collect();
        Ok(Point {
            line,
            mode,
            preset: preset.unwrap_or_else(|| "4c1g".into()),
            config,
            policy: text("policy")?,
            inputs,
            limit: count("limit", 1)?,
            warmup: count("warmup", 0)?.unwrap_or(0),
            instructions: count("instructions", 1)?,
            seed: count("seed", 0)?,
            alone_policy,
            alone,
            sample,
            ideal: text("ideal")?,
            ideal_gpu: text("ideal_gpu")?,
            gpu_read_bypass,
            set,
            lines,
        })
    }
}

fn resolve_trace(dir: &Path, t: &str) -> String {
    let (path, agent) = match t.rsplit_once('@') {
        Some((p, a)) if !p.is_empty() => (p, Some(a)),
        _ => (t, None),
    };
    let full = dir.join(path);
    match agent {
        Some(a) => format!("{}@{a}", full.display()),
        None => full.display().to_string(),
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

struct Parser<'t> {
    file: PathBuf,
    text: &'t str,
}

impl Parser<'_> {
    fn err(&self, line: usize, message: impl Into<String>) -> SpecError {
        SpecError {
            file: self.file.clone(),
            line,
            message: message.into(),
        }
    }

    /// The 1-based line of byte `offset`.
    fn line(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .bytes()
            .filter(|&b| b == b'\n')
            .count()
            + 1
    }

    fn span_line(&self, span: Option<std::ops::Range<usize>>) -> usize {
        span.map(|s| self.line(s.start)).unwrap_or(0)
    }

    fn key_line(&self, t: &Table, k: &str) -> usize {
        let key_span = t.get_key_value(k).and_then(|(key, _)| key.span());
        let item_span = t.get(k).and_then(|i| i.span());
        self.span_line(key_span.or(item_span))
    }

    /// The settings of a table (the top level's, or a `[[point]]`'s).
    fn settings(&self, t: &Table, top: bool) -> Result<Settings, SpecError> {
        let mut out = Settings::new();
        for (k, item) in t.iter() {
            let line = self.key_line(t, k);
            self.setting(k, item, line, &mut out, top)?;
        }
        Ok(out)
    }

    fn setting(
        &self,
        k: &str,
        item: &Item,
        line: usize,
        out: &mut Settings,
        top: bool,
    ) -> Result<(), SpecError> {
        if k == "set" {
            return self.overrides(item, line, out);
        }
        if !SETTINGS.contains(&k) {
            let valid = SETTINGS.iter().copied().chain(["set"]).chain(
                if top { &["grid", "point"][..] } else { &[][..] }
                    .iter()
                    .copied(),
            );
            return Err(self.err(line, format!("unknown key `{k}`{}", suggest(k, valid))));
        }
        let value = self.value(item, line, k)?;
        out.insert(k.to_string(), Setting { value, line });
        Ok(())
    }

    /// A `set` table: dotted keys (`llc.policy = ...`) become `set.llc.policy`.
    fn overrides(&self, item: &Item, line: usize, out: &mut Settings) -> Result<(), SpecError> {
        let mut flat = Vec::new();
        self.flatten(item, line, "", &mut flat)?;
        for (k, item, l) in flat {
            let value = self.value(&item, l, &k)?;
            out.insert(format!("set.{k}"), Setting { value, line: l });
        }
        Ok(())
    }

    /// The leaves of a table with their dotted keys; a table written inline as a value
    /// (`core = { model = "ooo" }`) is a leaf.
    fn flatten(
        &self,
        item: &Item,
        line: usize,
        prefix: &str,
        out: &mut Vec<(String, Item, usize)>,
    ) -> Result<(), SpecError> {
        let join = |k: &str| {
            if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            }
        };
        match item {
            Item::Table(t) => {
                for (k, i) in t.iter() {
                    self.flatten(i, self.key_line(t, k), &join(k), out)?;
                }
            }
            Item::Value(toml_edit::Value::InlineTable(t)) if prefix.is_empty() || t.is_dotted() => {
                for (k, v) in t.iter() {
                    let l = t
                        .get_key_value(k)
                        .and_then(|(key, _)| key.span())
                        .map(|s| self.line(s.start))
                        .unwrap_or(line);
                    self.flatten(&Item::Value(v.clone()), l, &join(k), out)?;
                }
            }
            Item::Value(_) if !prefix.is_empty() => out.push((prefix.to_string(), item.clone(), line)),
            _ => {
                return Err(self.err(
                    line,
                    "`set` must be a table of configuration keys, e.g. set = { \"llc.policy\" = \"srrip\" }",
                ))
            }
        }
        Ok(())
    }

    /// The grid's axes: settings and `set` keys, each a non-empty list.
    fn axes(&self, t: &Table) -> Result<Vec<Axis>, SpecError> {
        let mut flat: Vec<(String, Item, usize)> = Vec::new();
        for (k, item) in t.iter() {
            let line = self.key_line(t, k);
            if k == "set" {
                let mut sets = Vec::new();
                self.flatten(item, line, "", &mut sets)?;
                flat.extend(sets.into_iter().map(|(k, i, l)| (format!("set.{k}"), i, l)));
            } else if SETTINGS.contains(&k) {
                flat.push((k.to_string(), item.clone(), line));
            } else {
                let valid = SETTINGS.iter().copied().chain(["set"]);
                return Err(self.err(
                    line,
                    format!("unknown grid axis `{k}`{}", suggest(k, valid)),
                ));
            }
        }
        if flat.is_empty() {
            return Err(self.err(
                self.span_line(t.span()),
                "the grid has no axes: list values, e.g. policy = [\"lru\", \"srrip\"]",
            ));
        }
        let mut axes = Vec::new();
        for (name, item, line) in flat {
            let value = self.value(&item, line, &name)?;
            let toml::Value::Array(values) = value else {
                return Err(self.err(
                    line,
                    format!(
                        "grid axis `{name}` must be a list of values, not {}",
                        kind(&value)
                    ),
                ));
            };
            if values.is_empty() {
                return Err(self.err(
                    line,
                    format!("grid axis `{name}` is empty: the sweep would have no points"),
                ));
            }
            let mut seen: Vec<&toml::Value> = Vec::new();
            for v in &values {
                if seen.contains(&v) {
                    return Err(self.err(line, format!("grid axis `{name}` lists {v} twice")));
                }
                seen.push(v);
            }
            axes.push(Axis {
                name,
                values: values
                    .iter()
                    .map(|v| Setting {
                        value: v.clone(),
                        line,
                    })
                    .collect(),
            });
        }
        Ok(axes)
    }

    /// An item as a plain TOML value.
    fn value(&self, item: &Item, line: usize, key: &str) -> Result<toml::Value, SpecError> {
        let v = match item {
            Item::Value(v) => v,
            _ => {
                return Err(self.err(line, format!("`{key}` must be a value, not a table")));
            }
        };
        let mut v = v.clone();
        v.decor_mut().clear();
        let mut t: toml::Table = toml::from_str(&format!("v = {v}"))
            .map_err(|e| self.err(line, format!("`{key}`: {}", e.message())))?;
        t.remove("v")
            .ok_or_else(|| self.err(line, format!("`{key}` has no value")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Point>, SpecError> {
        Spec::parse(text, Path::new("/specs/s.toml"))?.points()
    }

    fn error(text: &str) -> SpecError {
        parse(text).expect_err("the spec should be refused")
    }

    #[test]
    fn grid_crosses_points_in_file_order() {
        let pts = parse(
            "mode = \"functional\"\nlimit = 1000\n[set]\n\"llc.banks\" = 4\n\
             [grid]\npolicy = [\"lru\", \"srrip\"]\n[grid.set]\nllc = [\"4M,16,64\", \"8M,16,64\", \"16M,16,64\"]\n\
             [[point]]\nmix = \"S1\"\n[[point]]\nmix = \"D2\"\nscale = 2\n",
        )
        .unwrap();
        assert_eq!(pts.len(), 2 * 2 * 3);
        assert_eq!(pts[0].policy.as_deref(), Some("lru"));
        assert_eq!(pts[0].set[0].0, "llc");
        assert_eq!(pts[1].set[0].1, toml::Value::String("8M,16,64".into()));
        assert_eq!(pts[3].policy.as_deref(), Some("srrip"));
        assert_eq!(
            pts[6].inputs,
            InputSpec::Mix {
                name: "D2".into(),
                scale: 2
            }
        );
        assert_eq!((pts[0].line, pts[6].line), (9, 11));
        assert_eq!(pts[0].limit, Some(1000));
        assert!(pts
            .iter()
            .all(|p| p.set.iter().any(|(k, _)| k == "llc.banks")));
        assert_eq!(pts[0].overrides(), vec!["llc=\"4M,16,64\"", "llc.banks=4"]);
    }

    #[test]
    fn traces_are_relative_to_the_spec() {
        let pts = parse("traces = [\"a.apt\", \"g.apt@gpu\"]\n").unwrap();
        assert_eq!(
            pts[0].inputs,
            InputSpec::Traces(vec!["/specs/a.apt".into(), "/specs/g.apt@gpu".into()])
        );
        let pts = parse("[grid]\ntraces = [[\"a.apt\"], [\"/t/b.apt\"]]\n").unwrap();
        assert_eq!(pts[1].inputs, InputSpec::Traces(vec!["/t/b.apt".into()]));
    }

    #[test]
    fn unknown_keys_name_the_line_and_the_nearest_key() {
        let e = error("mix = \"S1\"\npolcy = \"lru\"\n");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("did you mean `policy`"), "{e}");
        let e = error("mix = \"S1\"\n[grid]\nlimt = [1, 2]\n");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("`limit`"), "{e}");
        let e = error("[[point]]\nmix = \"S1\"\ngrid = 3\n");
        assert_eq!(e.line, 3);
        assert_eq!(e.to_string().split(':').next(), Some("/specs/s.toml"));
    }

    #[test]
    fn wrong_types_empty_grids_and_missing_inputs_are_refused() {
        let e = error("mix = \"S1\"\n\nlimit = \"many\"\n");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("whole number"), "{e}");
        let e = error("mix = 7\n");
        assert!(e.message.contains("string"), "{e}");
        let e = error("mix = \"S1\"\n[grid]\npolicy = []\n");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("empty"), "{e}");
        let e = error("mix = \"S1\"\n[grid]\n");
        assert!(e.message.contains("no axes"), "{e}");
        let e = error("mix = \"S1\"\n[grid]\npolicy = \"lru\"\n");
        assert!(e.message.contains("list"), "{e}");
        let e = error("limit = 5\n");
        assert!(e.message.contains("no inputs"), "{e}");
        let e = error("mix = \"S1\"\nmode = \"timd\"\n");
        assert!(e.message.contains("`timed`"), "{e}");
        assert_eq!(e.line, 2);
        let e = error("mix = \"S1\"\n[grid]\npolicy = [\"lru\", \"lru\"]\n");
        assert!(e.message.contains("twice"), "{e}");
        let e = error("mix = \"S1\"\nlimit = 0\n");
        assert!(e.message.contains("at least 1"), "{e}");
        let e = error("mix = [\n");
        assert!(e.message.contains("TOML"), "{e}");
    }
}
