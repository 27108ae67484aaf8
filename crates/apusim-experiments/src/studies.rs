//! The registry of studies: every `apusim study NAME`, Python's `apusim.study(NAME)` and the
//! figure `apusim plot` draws for it come from the one table [`STUDIES`].
//!
//! One file, one table: the study registry and the option families its entries take, kept
//! beside each other so an entry and its options read together; a sixth of it is tests.
//!
//! A [`Study`] is one entry: its name, a one-line description (the command's help), the
//! paper it reproduces (a `docs/papers.md` key followed by the figure, as
//! `apusim_registry::Entry::paper`), the [`Family`] of options it takes, the [`FigureSpec`]
//! of its figure (kind, baseline, x label, caption) and the function that runs it from the
//! resolved [`Options`].
//!
//! A family lists its options as [`OptionSpec`]s (name, [`OptionKind`] with its range,
//! default, help), from which the command line builds each study's arguments and Python
//! checks its keywords. A caller gathers what the user gave into a [`StudyArgs`];
//! [`Study::run`] refuses an option the study does not take (naming those it takes) or a
//! value out of range, fills in the defaults and runs the study. The family's builders
//! ([`Options::gspc`], [`Options::timed`], ...) turn the options into a study module's own
//! options, with the per-family meaning of `quick`.
//!
//! Adding a study is its module (a `run` returning a [`StudyOutput`]) plus one entry here.

use crate::runs::Runs;
use crate::{
    bypass_l1, bypass_perf, crit_ident, crit_perf, crit_sched, drp, drp_perf, gspc, gspc_counters,
    gspc_perf, jobs, tap_char, tap_perf, StudyOutput,
};
use anyhow::{bail, Result};
use apusim_registry::{ParamKind, ParamSpec, RegistryError};
use apusim_workloads::mixes::Frames;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The papers' figure types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FigureKind {
    /// Grouped bars normalized to the baseline, with the geometric mean.
    Bars,
    /// Per-mix sorted curves.
    SCurve,
    /// Lines over a swept parameter.
    Lines,
    /// Stacked bars of a breakdown.
    Stacked,
}

/// How a study's figure is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FigureSpec {
    pub kind: FigureKind,
    /// What normalized metrics are relative to, for the y labels.
    pub baseline: &'static str,
    /// What the x positions are: the workloads of bars, or the swept parameter of lines.
    pub x_label: &'static str,
    /// The paper's caption, the title of a figure redrawn from a CSV.
    pub caption: &'static str,
}

/// The kind and valid range of one study option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionKind {
    /// An unsigned integer in `min..=max`.
    Int { min: u64, max: u64 },
    /// A comma-separated list of names.
    List,
    /// A switch, off unless given.
    Flag,
    /// The path of a file the study writes.
    Path,
    /// A rendering job's frames: a count or `paper` ([`Frames`]).
    Frames,
}

/// One option a family of studies takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptionSpec {
    /// The keyword (Python) and, as `--name`, the flag (command line).
    pub name: &'static str,
    pub kind: OptionKind,
    /// The default as the command line would read it (`1280`, `S,D,Q`); `None`: not set.
    pub default: Option<&'static str>,
    /// The name shown for the value in the help (`MIXES`), clap's value name.
    pub value_name: &'static str,
    /// One line of help (empty: none).
    pub help: &'static str,
}

/// A value given for a study option.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionValue {
    Int(u64),
    List(Vec<String>),
    Flag(bool),
    Path(PathBuf),
    Frames(Frames),
}

/// The families of studies, by the options they take (beside the common seed, `--set`
/// overrides and trace cache of every study).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Functional gspc figures on rendered frames.
    Gspc,
    /// GSPC's render-target counters on rendered frames: the gspc options, the series'
    /// period and file.
    GspcCounters,
    /// Timed gspc frame-rate figures.
    GspcTimed,
    /// Functional drp figures on the mixes.
    Drp,
    /// Timed figures on mixes (drp, crit, tap): `quick` runs the figure's first mix for
    /// [`QUICK_INSTRUCTIONS`] per core.
    Timed,
    /// Timed adaptive-gpu-l1-bypassing figures, each kernel to its end: `quick` runs the
    /// figure's quick kernels.
    Bypass,
    /// Functional adaptive-gpu-l1-bypassing figures on `apusim gpu-l1`'s hierarchy (the
    /// `--set` overrides are its keys).
    GpuL1,
}

/// Instructions per core of a `quick` timed study.
pub const QUICK_INSTRUCTIONS: u64 = 20_000;

/// The seed of a study when none is given.
pub const DEFAULT_SEED: u64 = 1;

const U32: u64 = u32::MAX as u64;

const fn opt(
    name: &'static str,
    kind: OptionKind,
    default: Option<&'static str>,
    value_name: &'static str,
    help: &'static str,
) -> OptionSpec {
    OptionSpec {
        name,
        kind,
        default,
        value_name,
        help,
    }
}

/// The study option of an integer registry parameter: its name, range, default and doc.
const fn from_param(p: &'static ParamSpec, value_name: &'static str) -> OptionSpec {
    let ParamKind::Int { min, max } = p.kind else {
        panic!("only integer registry parameters are study options");
    };
    opt(
        p.name,
        OptionKind::Int { min, max },
        Some(p.default),
        value_name,
        p.doc,
    )
}

const SCENES: OptionSpec = opt(
    "scenes",
    OptionKind::List,
    Some(apusim_render::builtin::NAMES_CSV),
    "SCENES",
    "Built-in scenes (comma-separated; default: every built-in scene)",
);
const WIDTH: OptionSpec = opt(
    "width",
    OptionKind::Int { min: 0, max: U32 },
    Some("1280"),
    "WIDTH",
    "",
);
const HEIGHT: OptionSpec = opt(
    "height",
    OptionKind::Int { min: 0, max: U32 },
    Some("1024"),
    "HEIGHT",
    "",
);
/// The workload scale, as the workloads' registry declares it ([`apusim_workloads::SCALE`]:
/// its range, default and help), so that a change there changes every study that takes it.
const SCALE: OptionSpec = from_param(&apusim_workloads::SCALE, "SCALE");
const AT_LEAST_1: OptionKind = OptionKind::Int {
    min: 1,
    max: u64::MAX,
};

/// The options of [`Family::Gspc`].
const GSPC_OPTIONS: &[OptionSpec] = &[
    SCENES,
    WIDTH,
    HEIGHT,
    opt(
        "frames",
        OptionKind::Int { min: 1, max: U32 },
        Some("3"),
        "FRAMES",
        "Frames rendered per scene",
    ),
    opt(
        "llc",
        OptionKind::List,
        Some("8M,16M"),
        "LLC_SIZES",
        "LLC capacities, 16-way, 64-byte lines (comma-separated)",
    ),
];

/// The options of [`Family::GspcCounters`]: those of [`Family::Gspc`], then the series'.
const GSPC_COUNTERS_OPTIONS: &[OptionSpec] = &[
    GSPC_OPTIONS[0],
    GSPC_OPTIONS[1],
    GSPC_OPTIONS[2],
    GSPC_OPTIONS[3],
    GSPC_OPTIONS[4],
    opt(
        "every",
        AT_LEAST_1,
        Some("100000"),
        "N",
        "With --counters: record each bank's PROD and CONS every N LLC accesses (line \
         references), and at the end of each scene's stream",
    ),
    opt(
        "counters",
        OptionKind::Path,
        None,
        "FILE",
        "Write GSPC's per-bank PROD, CONS and the render-target insertion RRPV they select \
         over each run to this CSV (scene,size,access,bank,prod,cons,class)",
    ),
];

/// The options of [`Family::GspcTimed`].
const GSPC_TIMED_OPTIONS: &[OptionSpec] = &[
    SCENES,
    WIDTH,
    HEIGHT,
    opt(
        "frames",
        OptionKind::Int { min: 1, max: U32 },
        Some("2"),
        "FRAMES",
        "Frames rendered per scene (timed: the frame rate is over all of them)",
    ),
];

/// The frames of a mix's rendering job (a count or `paper`), for the families on mixes.
const FRAMES: OptionSpec = opt(
    "frames",
    OptionKind::Frames,
    None,
    "FRAMES|paper",
    "Frames of each mix's rendering job (default: scale; 1 to 1000), or `paper`: its title's \
     frame region in the table of the mix's paper (drp Table 1 for S/D/Q, \
     gpu-access-criticality Table 2 for H/L/HL, e.g. 15 frames for DOOM3 in HL7), rendered \
     whole while the cores run on, as the papers run them; GPGPU jobs keep their scale",
);

/// The options of [`Family::Drp`].
const DRP_OPTIONS: &[OptionSpec] = &[
    opt(
        "mixes",
        OptionKind::List,
        Some("S,D,Q"),
        "MIXES",
        "Mixes (comma-separated; `S`, `D` and `Q` stand for S1-S18, D1-D18, Q1-Q18)",
    ),
    SCALE,
    FRAMES,
    opt(
        "instructions",
        OptionKind::Int {
            min: 1,
            max: 1_000_000_000_000,
        },
        None,
        "INSTRUCTIONS",
        "Instructions of each CPU job (default: scale x 5000000; drp §3 runs 250000000), run \
         by drp §3's method as `apusim run --mix --instructions` runs them: a job that ends \
         before the others starts again until every job has ended once",
    ),
    opt(
        "limit",
        AT_LEAST_1,
        None,
        "LIMIT",
        "Stop each run after this many trace accesses",
    ),
];

/// The options of [`Family::Timed`] and [`Family::Bypass`] (a bypass figure refuses
/// `warmup` and `instructions` itself: its kernels run to their end).
const TIMED_OPTIONS: &[OptionSpec] = &[
    opt(
        "mixes",
        OptionKind::List,
        None,
        "MIXES",
        "Mixes (comma-separated; `S`, `D` and `Q` stand for S1-S18, D1-D18, Q1-Q18; default: \
         the figure's own, e.g. S1-S14 for drp Fig. 3, S15-S18 for drp Table 4, H1-H14, \
         L1-L14 and HL1-HL14 for the crit figures)",
    ),
    SCALE,
    FRAMES,
    opt(
        "warmup",
        OptionKind::Int {
            min: 0,
            max: u64::MAX,
        },
        Some("0"),
        "WARMUP",
        "Instructions each core retires before statistics start",
    ),
    opt(
        "instructions",
        AT_LEAST_1,
        None,
        "INSTRUCTIONS",
        "Instructions each core retires after the warm-up (default: to the end of its trace; \
         200000 for crit-fig8 to crit-fig15)",
    ),
    opt(
        "quick",
        OptionKind::Flag,
        None,
        "",
        "A CI-sized check: only the figure's first mix (unless --mixes is given) and 20000 \
         instructions per core (unless --instructions is given)",
    ),
    opt(
        "sample",
        OptionKind::Flag,
        None,
        "",
        "Sample every run and alone run with `apusim sim --sample`'s default windows (a \
         10000-cycle window after 50000 detailed cycles per 1000000): IPCs are estimates; \
         give at least a few million instructions per core (not for the bypass figures, \
         whose kernels run whole). The default from 10000000 instructions per core (warm-up \
         included) on",
    ),
    opt(
        "detailed",
        OptionKind::Flag,
        None,
        "",
        "Simulate every cycle in detail, also runs of 10000000 instructions per core or more, \
         which are sampled by default",
    ),
];

/// Warm-up plus instructions per core from which a timed study samples its runs unless
/// `detailed` is given: the length at which a figure's detailed runs no longer fit its time
/// budget (an hour on two cores). A 4-core mix of 4 x 100 M instructions takes 11 minutes in
/// detail (docs/PERFORMANCE.md), so one of 4 x 10 M about a minute, and a figure of 100-250
/// such runs with their alone runs one to three hours; sampled, its cores run at about the
/// functional mode's speed (docs/timing.md). Shorter runs stay detailed: a sampled estimate
/// needs a few million instructions per core to have windows enough.
pub const SAMPLE_FROM: u64 = 10_000_000;

/// The options of [`Family::GpuL1`].
const GPU_L1_OPTIONS: &[OptionSpec] = &[
    opt(
        "kernels",
        OptionKind::List,
        None,
        "KERNELS",
        "GPGPU kernels (comma-separated; default: adaptive-gpu-l1-bypassing Table 2's thirteen; \
         bypass-nw: nw,nw-nospm)",
    ),
    opt(
        "size",
        OptionKind::Int { min: 0, max: U32 },
        None,
        "SIZE",
        "Problem size of every kernel (default: each kernel's own; checked by each kernel's \
         registry entry, `apusim describe KERNEL`)",
    ),
    opt(
        "runs",
        OptionKind::Path,
        None,
        "FILE",
        "Write every run's counters as CSV to this file: one row per kernel and L1 \
         configuration, the columns of `apusim gpu-l1 run --csv`",
    ),
];

impl Family {
    /// Whether the family's studies are made of timed runs.
    pub fn is_timed(self) -> bool {
        !matches!(
            self,
            Family::Gspc | Family::GspcCounters | Family::Drp | Family::GpuL1
        )
    }

    /// The options the family takes, in the help's order.
    pub fn options(self) -> &'static [OptionSpec] {
        match self {
            Family::Gspc => GSPC_OPTIONS,
            Family::GspcCounters => GSPC_COUNTERS_OPTIONS,
            Family::GspcTimed => GSPC_TIMED_OPTIONS,
            Family::Drp => DRP_OPTIONS,
            Family::Timed | Family::Bypass => TIMED_OPTIONS,
            Family::GpuL1 => GPU_L1_OPTIONS,
        }
    }
}

/// The options every study takes, as Python names them (the command line's `--seed`,
/// `--set`, `--threads`, `--cache-dir`, `--no-cache`).
pub const COMMON_OPTIONS: &[&str] = &["seed", "set", "threads", "cache_dir", "no_cache"];

/// What a user gave a study: the common options and the family's options by name.
#[derive(Clone, Debug)]
pub struct StudyArgs {
    pub seed: u64,
    /// `--set KEY=VALUE` overrides of the study's presets.
    pub overrides: Vec<String>,
    /// Trace cache (see [`cache_dir`]).
    pub cache: Option<PathBuf>,
    /// The family's options given, by name.
    pub given: Vec<(String, OptionValue)>,
    /// Where the runs are kept between invocations (`--db`), or planning mode
    /// (`--print-spec`); see [`crate::runs`].
    pub runs: Runs,
}

impl Default for StudyArgs {
    fn default() -> Self {
        StudyArgs {
            seed: DEFAULT_SEED,
            overrides: Vec::new(),
            cache: None,
            given: Vec::new(),
            runs: Runs::default(),
        }
    }
}

/// The trace cache of a study: none with `no_cache`, else `dir` or the default cache.
pub fn cache_dir(dir: Option<PathBuf>, no_cache: bool) -> Option<PathBuf> {
    if no_cache {
        None
    } else {
        dir.or_else(jobs::default_cache_dir)
    }
}

/// A study's options, checked and with the family's defaults filled in.
#[derive(Clone, Debug)]
pub struct Options {
    pub seed: u64,
    pub overrides: Vec<String>,
    pub cache: Option<PathBuf>,
    pub runs: Runs,
    values: BTreeMap<&'static str, OptionValue>,
}

impl Options {
    /// An integer option (`None`: not given and without a default).
    pub fn int(&self, name: &str) -> Option<u64> {
        match self.values.get(name) {
            Some(OptionValue::Int(v)) => Some(*v),
            _ => None,
        }
    }

    /// A list option (`None`: not given and without a default).
    pub fn list(&self, name: &str) -> Option<Vec<String>> {
        match self.values.get(name) {
            Some(OptionValue::List(v)) => Some(v.clone()),
            _ => None,
        }
    }

    /// A file path (`None`: not given).
    pub fn path(&self, name: &str) -> Option<PathBuf> {
        match self.values.get(name) {
            Some(OptionValue::Path(p)) => Some(p.clone()),
            _ => None,
        }
    }

    /// The rendering jobs' frames (`frames`; `scale` of them when not given).
    pub fn frames(&self) -> Frames {
        match self.values.get("frames") {
            Some(OptionValue::Frames(f)) => *f,
            _ => Frames::Scale,
        }
    }

    /// A switch.
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.values.get(name), Some(OptionValue::Flag(true)))
    }

    /// An option with a default in the family's table. Panics when the family declares none
    /// (a registry error, caught by the registry's tests).
    fn int_set(&self, name: &str) -> u64 {
        self.int(name)
            .unwrap_or_else(|| panic!("study option `{name}` has no default"))
    }

    fn u32_set(&self, name: &str) -> u32 {
        u32::try_from(self.int_set(name)).expect("study options of u32 are checked to fit")
    }

    fn list_set(&self, name: &str) -> Vec<String> {
        self.list(name)
            .unwrap_or_else(|| panic!("study option `{name}` has no default"))
    }

    /// The options of a functional gspc figure ([`Family::Gspc`]).
    pub fn gspc(&self) -> gspc::Options {
        gspc::Options {
            scenes: self.list_set("scenes"),
            width: self.u32_set("width"),
            height: self.u32_set("height"),
            frames: self.u32_set("frames"),
            seed: self.seed,
            llc_sizes: self.list_set("llc"),
            overrides: self.overrides.clone(),
            cache: self.cache.clone(),
            runs: self.runs.clone(),
        }
    }

    /// The options of the gspc counters study ([`Family::GspcCounters`]).
    pub fn gspc_counters(&self) -> gspc_counters::Options {
        gspc_counters::Options {
            gspc: self.gspc(),
            every: self.int_set("every"),
            counters: self.path("counters"),
        }
    }

    /// The options of a timed gspc figure ([`Family::GspcTimed`]).
    pub fn gspc_timed(&self) -> gspc_perf::Options {
        gspc_perf::Options {
            scenes: self.list_set("scenes"),
            width: self.u32_set("width"),
            height: self.u32_set("height"),
            frames: self.u32_set("frames"),
            seed: self.seed,
            overrides: self.overrides.clone(),
            cache: self.cache.clone(),
            runs: self.runs.clone(),
        }
    }

    /// The options of a functional drp figure ([`Family::Drp`]).
    pub fn drp(&self) -> drp::Options {
        drp::Options {
            mixes: expand_mixes(&self.list_set("mixes")),
            scale: self.int_set("scale"),
            instructions: self.int("instructions"),
            frames: self.frames(),
            seed: self.seed,
            limit: self.int("limit"),
            overrides: self.overrides.clone(),
            cache: self.cache.clone(),
            runs: self.runs.clone(),
        }
    }

    /// The options of a timed figure on mixes, as given: sampled when `sample` says so, or
    /// when the runs are of [`SAMPLE_FROM`] instructions per core or more and `detailed`
    /// does not say otherwise.
    fn timed_as_given(&self) -> drp_perf::Options {
        let warmup = self.int_set("warmup");
        let instructions = self.int("instructions");
        let long = instructions.is_some_and(|n| warmup.saturating_add(n) >= SAMPLE_FROM);
        drp_perf::Options {
            mixes: self.list("mixes").as_deref().map(expand_mixes),
            scale: self.int_set("scale"),
            frames: self.frames(),
            seed: self.seed,
            warmup,
            instructions,
            overrides: self.overrides.clone(),
            sample: self.flag("sample") || (long && !self.flag("detailed")),
            cache: self.cache.clone(),
            runs: self.runs.clone(),
        }
    }

    /// The options of a timed figure on mixes ([`Family::Timed`]): `quick` narrows the
    /// figure's `defaults` to the first mix (unless mixes are given) and the run to
    /// [`QUICK_INSTRUCTIONS`] per core (unless `instructions` is given).
    pub fn timed(&self, defaults: Vec<String>) -> drp_perf::Options {
        let mut o = self.timed_as_given();
        if self.flag("quick") {
            if o.mixes.is_none() {
                o.mixes = Some(defaults.into_iter().take(1).collect());
            }
            o.instructions.get_or_insert(QUICK_INSTRUCTIONS);
        }
        o
    }

    /// The options of a functional bypass figure ([`Family::GpuL1`]).
    pub fn gpu_l1(&self) -> bypass_l1::Options {
        bypass_l1::Options {
            kernels: self.list("kernels"),
            size: self.int("size"),
            seed: self.seed,
            overrides: self.overrides.clone(),
            runs_csv: self.path("runs"),
            runs: self.runs.clone(),
        }
    }

    /// The options of a bypass figure ([`Family::Bypass`]): its kernels run to their end, so
    /// `quick` only narrows them to `quick_kernels` (unless mixes are given).
    pub fn bypass(&self, quick_kernels: Vec<String>) -> drp_perf::Options {
        let mut o = self.timed_as_given();
        if self.flag("quick") && o.mixes.is_none() {
            o.mixes = Some(quick_kernels);
        }
        o
    }
}

/// `S`, `D`, `Q` expand to their eighteen mixes; other names pass through.
pub fn expand_mixes(list: &[String]) -> Vec<String> {
    list.iter()
        .flat_map(|m| match m.as_str() {
            "S" | "D" | "Q" => (1..=18).map(|n| format!("{m}{n}")).collect(),
            _ => vec![m.clone()],
        })
        .collect()
}

/// One registered study.
#[derive(Clone, Copy, Debug)]
pub struct Study {
    /// The `apusim study` name.
    pub name: &'static str,
    /// One line: what it computes (the command's help).
    pub description: &'static str,
    /// The paper and figure it reproduces: a `docs/papers.md` key, then the figure.
    pub paper: &'static str,
    /// The options it takes.
    pub family: Family,
    pub figure: FigureSpec,
    /// Run it on checked options with the family's defaults.
    pub run: fn(&Options) -> Result<StudyOutput>,
}

impl Study {
    /// The options it takes, beside the common ones.
    pub fn options(&self) -> &'static [OptionSpec] {
        self.family.options()
    }

    /// Refuse the options named in `given` that the study does not take, naming those it
    /// takes.
    pub fn check_names<'a>(&self, given: impl IntoIterator<Item = &'a str>) -> Result<()> {
        let extra: Vec<&str> = given
            .into_iter()
            .filter(|g| !self.options().iter().any(|o| o.name == *g))
            .collect();
        if !extra.is_empty() {
            let takes: Vec<&str> = self
                .options()
                .iter()
                .map(|o| o.name)
                .chain(COMMON_OPTIONS.iter().copied())
                .collect();
            bail!(
                "study {} does not take {} (it takes {})",
                self.name,
                extra.join(", "),
                takes.join(", ")
            );
        }
        Ok(())
    }

    /// Check `args` against the study's options (names, kinds, ranges) and fill in the
    /// defaults.
    pub fn resolve(&self, args: &StudyArgs) -> Result<Options> {
        self.check_names(args.given.iter().map(|(n, _)| n.as_str()))?;
        let mut values = BTreeMap::new();
        for spec in self.options() {
            let given = args.given.iter().rev().find(|(n, _)| n == spec.name);
            let value = match given {
                Some((_, v)) => v.clone(),
                None => match default_value(spec) {
                    Some(v) => v,
                    None => continue,
                },
            };
            check_value(spec, &value)?;
            values.insert(spec.name, value);
        }
        let on = |name: &str| matches!(values.get(name), Some(OptionValue::Flag(true)));
        if on("sample") && on("detailed") {
            bail!("--sample and --detailed exclude each other");
        }
        Ok(Options {
            seed: args.seed,
            overrides: args.overrides.clone(),
            cache: args.cache.clone(),
            runs: args.runs.clone(),
            values,
        })
    }

    /// Run the study with what the user gave.
    pub fn run(&self, args: &StudyArgs) -> Result<StudyOutput> {
        (self.run)(&self.resolve(args)?)
    }
}

/// The declared default of `spec`, as a value (`None`: it has none).
fn default_value(spec: &OptionSpec) -> Option<OptionValue> {
    match spec.kind {
        OptionKind::Flag => Some(OptionValue::Flag(false)),
        OptionKind::Int { .. } => spec
            .default
            .map(|d| OptionValue::Int(d.parse().expect("declared integer defaults parse"))),
        OptionKind::List => spec
            .default
            .map(|d| OptionValue::List(d.split(',').map(String::from).collect())),
        OptionKind::Path => spec.default.map(|d| OptionValue::Path(PathBuf::from(d))),
        OptionKind::Frames => spec
            .default
            .map(|d| OptionValue::Frames(Frames::parse(d).expect("declared frames parse"))),
    }
}

/// Refuse a value of the wrong kind or out of range.
fn check_value(spec: &OptionSpec, v: &OptionValue) -> Result<()> {
    let n = spec.name;
    match (spec.kind, v) {
        (OptionKind::Int { min, max }, OptionValue::Int(x)) => {
            if *x < min {
                bail!("{n} must be at least {min}");
            }
            if *x > max {
                bail!("{n} must be at most {max}");
            }
        }
        (OptionKind::List, OptionValue::List(_))
        | (OptionKind::Flag, OptionValue::Flag(_))
        | (OptionKind::Path, OptionValue::Path(_)) => {}
        (OptionKind::Frames, OptionValue::Frames(f)) => {
            if let Frames::Count(c) = f {
                Frames::count(u64::from(*c)).map_err(|e| anyhow::anyhow!("{n}: {e}"))?;
            }
        }
        (kind, _) => bail!(
            "{n} takes {}",
            match kind {
                OptionKind::Int { .. } => "an integer",
                OptionKind::List => "a list of names",
                OptionKind::Flag => "true or false",
                OptionKind::Path => "a file path",
                OptionKind::Frames => "a number of frames or `paper`",
            }
        ),
    }
    Ok(())
}

/// The study named `name`.
pub fn get(name: &str) -> Option<&'static Study> {
    STUDIES.iter().find(|s| s.name == name)
}

/// The study named `name`, or an error naming the nearest study.
pub fn find(name: &str) -> Result<&'static Study, RegistryError> {
    get(name).ok_or_else(|| RegistryError::UnknownName {
        kind: "study".into(),
        name: name.into(),
        nearest: apusim_registry::nearest(name, STUDIES.iter().map(|s| s.name)).map(String::from),
        valid: STUDIES
            .iter()
            .map(|s| s.name)
            .collect::<Vec<_>>()
            .join(", "),
    })
}

const fn fig(
    kind: FigureKind,
    baseline: &'static str,
    x_label: &'static str,
    caption: &'static str,
) -> FigureSpec {
    FigureSpec {
        kind,
        baseline,
        x_label,
        caption,
    }
}

/// A timed figure on mixes (`run` of a study module whose `Figure` lists its default mixes),
/// with [`Options::timed`].
fn on_mixes<F: DefaultMixes>(
    run: fn(F, &drp_perf::Options) -> Result<StudyOutput>,
    fig: F,
    o: &Options,
) -> Result<StudyOutput> {
    run(fig, &o.timed(fig.default_mixes()))
}

/// A figure whose default mixes `quick` narrows to the first.
trait DefaultMixes: Copy {
    fn default_mixes(self) -> Vec<String>;
}

macro_rules! default_mixes {
    ($($m:ident),*) => {$(
        impl DefaultMixes for $m::Figure {
            fn default_mixes(self) -> Vec<String> {
                $m::Figure::default_mixes(self)
            }
        }
    )*};
}
default_mixes!(drp_perf, crit_perf, crit_ident, crit_sched, tap_perf);

/// A bypass figure with [`Options::bypass`].
fn kernels_alone(fig: bypass_perf::Figure, o: &Options) -> Result<StudyOutput> {
    bypass_perf::run(fig, &o.bypass(fig.quick_kernels()))
}

/// A functional bypass figure with [`Options::gpu_l1`].
fn kernels_l1(fig: bypass_l1::Figure, o: &Options) -> Result<StudyOutput> {
    bypass_l1::run(fig, &o.gpu_l1())
}

use Family::{Bypass, Drp, GpuL1, Gspc, GspcCounters, GspcTimed, Timed};
use FigureKind::{Bars, Lines, SCurve, Stacked};

const SCENE: &str = "scene";
const MIX: &str = "mix";
const TITLE: &str = "GPU workload (3D title or CUDA application)";
const TYPE: &str = "GPGPU application type";
const KERNEL: &str = "benchmark";

/// Every study, in `apusim study --help` order.
#[rustfmt::skip]
pub static STUDIES: &[Study] = &[
    Study { name: "gspc-fig11", family: Gspc, paper: "gspc Fig. 11",
        description: "gspc Fig. 11: GSPZTC's LLC misses for t = 2, 4, 8 relative to t = 16",
        figure: fig(Lines, "t = 16", "GSPZTC threshold t", "gspc Fig. 11: sensitivity to parameter t"),
        run: |o| gspc::run(gspc::Figure::Fig11, &o.gspc()) },
    Study { name: "gspc-fig12", family: Gspc, paper: "gspc Fig. 12",
        description: "gspc Fig. 12: LLC misses of NRU, SHiP-mem, GS-DRRIP, GSPZTC, GSPZTC+TSE, GSPC, GSPC+UCD and DRRIP+UCD normalized to 2-bit DRRIP",
        figure: fig(Bars, "2-bit DRRIP", SCENE, "gspc Fig. 12: LLC miss count normalized to DRRIP"),
        run: |o| gspc::run(gspc::Figure::Fig12, &o.gspc()) },
    Study { name: "gspc-fig13", family: Gspc, paper: "gspc Fig. 13",
        description: "gspc Fig. 13: texture hit rate, render-target -> texture consumption, render-target and Z hit rates per policy",
        figure: fig(Bars, "", SCENE, "gspc Fig. 13: texture sampler hit rate, render target production to texture consumption rate, render target hit rate and Z hit rate"),
        run: |o| gspc::run(gspc::Figure::Fig13, &o.gspc()) },
    Study { name: "gspc-fig14", family: Gspc, paper: "gspc Fig. 14",
        description: "gspc Fig. 14: iso-overhead policies (LRU, 4-bit DRRIP, 4-bit GS-DRRIP, GSPC) normalized to 2-bit DRRIP",
        figure: fig(Bars, "2-bit DRRIP", SCENE, "gspc Fig. 14: comparison between iso-overhead policies"),
        run: |o| gspc::run(gspc::Figure::Fig14, &o.gspc()) },
    Study { name: "gspc-counters", family: GspcCounters, paper: "gspc Table 5",
        description: "gspc Table 5: GSPC's render-target insertion classes and the render-target blocks consumed or evicted unconsumed, against GSPZTC+TSE; --counters writes each bank's PROD and CONS over the run",
        figure: fig(Bars, "", SCENE, "gspc Table 5: render-target insertion and consumption under GSPC and GSPZTC+TSE"),
        run: |o| gspc_counters::run(&o.gspc_counters()) },
    Study { name: "gspc-fig15", family: GspcTimed, paper: "gspc Fig. 15",
        description: "gspc Fig. 15 (timed): frame rate of NRU, GS-DRRIP and GSPC relative to DRRIP, 8 MB 16-way LLC",
        figure: fig(Bars, "DRRIP", SCENE, "gspc Fig. 15: normalized performance on an 8 MB 16-way LLC"),
        run: |o| gspc_perf::run(gspc_perf::Figure::Fig15, &o.gspc_timed()) },
    Study { name: "gspc-fig16", family: GspcTimed, paper: "gspc Fig. 16",
        description: "gspc Fig. 16 (timed): the same on a 16 MB 16-way LLC",
        figure: fig(Bars, "DRRIP", SCENE, "gspc Fig. 16: normalized performance on a 16 MB 16-way LLC"),
        run: |o| gspc_perf::run(gspc_perf::Figure::Fig16, &o.gspc_timed()) },
    Study { name: "gspc-fig17", family: GspcTimed, paper: "gspc Fig. 17",
        description: "gspc Fig. 17 (timed): NRU and GSPC relative to DRRIP with DDR3-1867 10-10-10, and on a GPU of 512 thread contexts",
        figure: fig(Bars, "DRRIP", SCENE, "gspc Fig. 17: performance normalized to DRRIP for a DDR3-1867 DRAM system and for a less aggressive GPU"),
        run: |o| gspc_perf::run(gspc_perf::Figure::Fig17, &o.gspc_timed()) },
    Study { name: "drp-fig13", family: Drp, paper: "drp Fig. 13",
        description: "drp Fig. 13: per-mix LLC read misses of DRP (CPU and GPU parts) normalized to the baseline",
        figure: fig(Bars, "the baseline", MIX, "drp Fig. 13: normalized read miss count of the mixes"),
        run: |o| drp::run(drp::Figure::Fig13, &o.drp()) },
    Study { name: "drp-fig14", family: Drp, paper: "drp Fig. 14",
        description: "drp Fig. 14: average normalized LLC read misses of the baseline, SHiP-hybrid and DRP's sub-policy ablation per configuration (1C1G, 2C1G, 4C1G)",
        figure: fig(Bars, "the baseline", MIX, "drp Fig. 14: normalized average read miss count"),
        run: |o| drp::run(drp::Figure::Fig14, &o.drp()) },
    Study { name: "drp-fig1", family: Timed, paper: "drp Fig. 1",
        description: "drp Fig. 1 (timed): speedup of standalone over heterogeneous execution, CPU and GPU, per mix (alone runs cached)",
        figure: fig(SCurve, "heterogeneous execution", MIX, "drp Fig. 1: speedup achieved by standalone execution over heterogeneous execution"),
        run: |o| on_mixes(drp_perf::run, drp_perf::Figure::Fig1, o) },
    Study { name: "drp-fig3", family: Timed, paper: "drp Fig. 3",
        description: "drp Fig. 3 (timed): frame-rate speedup with color, +texture, +depth, +blitter and all GPU streams ideal, on the 1C1G rendering mixes",
        figure: fig(Bars, "the baseline", MIX, "drp Fig. 3: potential improvement in frame rate"),
        run: |o| on_mixes(drp_perf::run, drp_perf::Figure::Fig3, o) },
    Study { name: "drp-table4", family: Timed, paper: "drp Table 4",
        description: "drp Table 4 (timed): GPU speedup of the CUDA mixes with an ideal LLC for the GPU",
        figure: fig(Bars, "the baseline", MIX, "drp Table 4: GPU speedup with an ideal LLC for the GPU"),
        run: |o| on_mixes(drp_perf::run, drp_perf::Figure::Table4, o) },
    Study { name: "drp-fig4", family: Timed, paper: "drp Fig. 4",
        description: "drp Fig. 4 (timed): average CPU and GPU speedup with 25-100% random GPU read-miss bypass",
        figure: fig(Lines, "the baseline", "share of the GPU's read misses bypassed", "drp Fig. 4: performance speedup with random GPU read miss bypass"),
        run: |o| on_mixes(drp_perf::run, drp_perf::Figure::Fig4, o) },
    Study { name: "drp-fig11", family: Timed, paper: "drp Fig. 11",
        description: "drp Fig. 11 (timed): average CPU and GPU speedup of SHiP-hybrid and DRP",
        figure: fig(Bars, "the baseline", MIX, "drp Fig. 11: average speedup comparison"),
        run: |o| on_mixes(drp_perf::run, drp_perf::Figure::Fig11, o) },
    Study { name: "drp-fig12", family: Timed, paper: "drp Fig. 12",
        description: "drp Fig. 12 (timed): DRP's CPU and GPU speedup per mix",
        figure: fig(SCurve, "the baseline", MIX, "drp Fig. 12: speedup achieved by the DRP-aware proposal for the mixes"),
        run: |o| on_mixes(drp_perf::run, drp_perf::Figure::Fig12, o) },
    Study { name: "drp-fig15", family: Timed, paper: "drp Fig. 15",
        description: "drp Fig. 15 (timed): average speedup of HeLM and DRP, all mixes and CUDA mixes",
        figure: fig(Bars, "the baseline", MIX, "drp Fig. 15: speedup of HeLM and DRP"),
        run: |o| on_mixes(drp_perf::run, drp_perf::Figure::Fig15, o) },
    Study { name: "crit-fig2", family: Timed, paper: "gpu-access-criticality Fig. 2",
        description: "gpu-access-criticality Fig. 2 (timed): the GPU's DRAM reads by stream per 3D title",
        figure: fig(Stacked, "", TITLE, "gpu-access-criticality Fig. 2: distribution of DRAM accesses from 3D scene rendering workloads"),
        run: |o| on_mixes(crit_perf::run, crit_perf::Figure::Fig2, o) },
    Study { name: "crit-fig3", family: Timed, paper: "gpu-access-criticality Fig. 3",
        description: "gpu-access-criticality Fig. 3 (timed): frame-rate speedup with one stream ideal",
        figure: fig(Bars, "the baseline", TITLE, "gpu-access-criticality Fig. 3: speedup when each individual stream behaves ideally"),
        run: |o| on_mixes(crit_perf::run, crit_perf::Figure::Fig3, o) },
    Study { name: "crit-fig8", family: Timed, paper: "gpu-access-criticality Fig. 8",
        description: "gpu-access-criticality Fig. 8 (timed): frame-rate gain with the critical, or the non-critical, GPU accesses ideal",
        figure: fig(Bars, "the baseline", TITLE, "gpu-access-criticality Fig. 8: FPS improvement when the LLC behaves ideally for critical and non-critical accesses"),
        run: |o| on_mixes(crit_ident::run, crit_ident::Figure::Fig8, o) },
    Study { name: "crit-fig9", family: Timed, paper: "gpu-access-criticality Fig. 9",
        description: "gpu-access-criticality Fig. 9 (timed): the GPU's accesses by stream, critical and not",
        figure: fig(Stacked, "", TITLE, "gpu-access-criticality Fig. 9: distribution of critical accesses"),
        run: |o| on_mixes(crit_ident::run, crit_ident::Figure::Fig9, o) },
    Study { name: "crit-fig10", family: Timed, paper: "gpu-access-criticality Fig. 10",
        description: "gpu-access-criticality Fig. 10 (timed): the frame-rate estimation error per title",
        figure: fig(Bars, "", TITLE, "gpu-access-criticality Fig. 10: error in frame rate estimation"),
        run: |o| on_mixes(crit_ident::run, crit_ident::Figure::Fig10, o) },
    Study { name: "crit-fig11", family: Timed, paper: "gpu-access-criticality Fig. 11",
        description: "gpu-access-criticality Fig. 11 (timed): GPU-favoring, IM-LLC, IM-SCHED and IM DRAM scheduling: frame rate and CPU weighted speedup over FR-FCFS",
        figure: fig(Bars, "FR-FCFS", TITLE, "gpu-access-criticality Fig. 11: normalized FPS and weighted CPU speedup"),
        run: |o| on_mixes(crit_sched::run, crit_sched::Figure::Fig11, o) },
    Study { name: "crit-fig12", family: Timed, paper: "gpu-access-criticality Fig. 12",
        description: "gpu-access-criticality Fig. 12 (timed): quarters of the critical set, and random marking at each stream's critical share, under IM",
        figure: fig(Bars, "FR-FCFS", TITLE, "gpu-access-criticality Fig. 12: quarters of the critical accesses, and random sampling"),
        run: |o| on_mixes(crit_sched::run, crit_sched::Figure::Fig12, o) },
    Study { name: "crit-fig13", family: Timed, paper: "gpu-access-criticality Fig. 13",
        description: "gpu-access-criticality Fig. 13 (timed): SMS-0.9, SMS-0, DynPrio, DASH, HeLM and IM",
        figure: fig(Bars, "FR-FCFS", TITLE, "gpu-access-criticality Fig. 13: FPS speedup and weighted CPU speedup over the baseline"),
        run: |o| on_mixes(crit_sched::run, crit_sched::Figure::Fig13, o) },
    Study { name: "crit-fig14", family: Timed, paper: "gpu-access-criticality Fig. 14",
        description: "gpu-access-criticality Fig. 14 (timed): IM with an 8 MB LLC",
        figure: fig(Bars, "FR-FCFS", TITLE, "gpu-access-criticality Fig. 14: IM with an 8 MB LLC"),
        run: |o| on_mixes(crit_sched::run, crit_sched::Figure::Fig14, o) },
    Study { name: "crit-fig15", family: Timed, paper: "gpu-access-criticality Fig. 15",
        description: "gpu-access-criticality Fig. 15 (timed): SMS-0.9, SMS-0, HeLM and IM on the CUDA mixes",
        figure: fig(Bars, "FR-FCFS", TITLE, "gpu-access-criticality Fig. 15: GPU application speedup and weighted CPU speedup"),
        run: |o| on_mixes(crit_sched::run, crit_sched::Figure::Fig15, o) },
    Study { name: "crit-fig4", family: Timed, paper: "gpu-access-criticality Fig. 4",
        description: "gpu-access-criticality Fig. 4 (timed): sets of streams ideal together against the sum of their individual speedups",
        figure: fig(Bars, "the baseline", TITLE, "gpu-access-criticality Fig. 4: speedup when a set of streams behaves ideally"),
        run: |o| on_mixes(crit_perf::run, crit_perf::Figure::Fig4, o) },
    Study { name: "bypass-fig1", family: GpuL1, paper: "adaptive-gpu-l1-bypassing Fig. 1",
        description: "adaptive-gpu-l1-bypassing Fig. 1 (functional, Table 1 hierarchy): share of L1 evictions of lines never reused, and of lines accessed once, per Table 2 kernel",
        figure: fig(Bars, "", KERNEL, "adaptive-gpu-l1-bypassing Fig. 1: fraction of evicted L1 lines with zero reuse"),
        run: |o| kernels_l1(bypass_l1::Figure::Fig1, o) },
    Study { name: "bypass-fig6", family: GpuL1, paper: "adaptive-gpu-l1-bypassing Fig. 6",
        description: "adaptive-gpu-l1-bypassing Fig. 6 (functional, Table 1 hierarchy): read misses bypassed by the PC-based predictor",
        figure: fig(Bars, "", KERNEL, "adaptive-gpu-l1-bypassing Fig. 6: bypass ratio of the PC-based predictor"),
        run: |o| kernels_l1(bypass_l1::Figure::Fig6, o) },
    Study { name: "bypass-fig7", family: GpuL1, paper: "adaptive-gpu-l1-bypassing Fig. 7",
        description: "adaptive-gpu-l1-bypassing Fig. 7 (functional, Table 1 hierarchy): L1 dynamic energy with the PC-based predictor relative to the baseline",
        figure: fig(Bars, "Baseline", KERNEL, "adaptive-gpu-l1-bypassing Fig. 7: L1 energy normalized to the baseline"),
        run: |o| kernels_l1(bypass_l1::Figure::Fig7, o) },
    Study { name: "bypass-fig8", family: GpuL1, paper: "adaptive-gpu-l1-bypassing Fig. 8",
        description: "adaptive-gpu-l1-bypassing Fig. 8 (functional, Table 1 hierarchy): L1 misses of the PC-based and counter-based predictors and a 32 KB L1 relative to the 16 KB baseline",
        figure: fig(Bars, "Baseline", KERNEL, "adaptive-gpu-l1-bypassing Fig. 8: L1 misses normalized to the 16KB baseline"),
        run: |o| kernels_l1(bypass_l1::Figure::Fig8, o) },
    Study { name: "bypass-fig11", family: GpuL1, paper: "adaptive-gpu-l1-bypassing Fig. 11",
        description: "adaptive-gpu-l1-bypassing Fig. 11 (functional, Table 1 hierarchy): coverage and false positives of the PC-based predictor (both of §5.3's definitions)",
        figure: fig(Bars, "", KERNEL, "adaptive-gpu-l1-bypassing Fig. 11: coverage and false positive rate of the PC-based predictor"),
        run: |o| kernels_l1(bypass_l1::Figure::Fig11, o) },
    Study { name: "bypass-nw", family: GpuL1, paper: "adaptive-gpu-l1-bypassing §5.3.1",
        description: "adaptive-gpu-l1-bypassing §5.3.1 (functional, Table 1 hierarchy): L1 misses of nw and nw-nospm with the PC-based predictor and 32 and 64 KB L1s, relative to nw on the baseline",
        figure: fig(Bars, "nw on the Baseline", KERNEL, "adaptive-gpu-l1-bypassing §5.3.1: nw with and without its scratchpad"),
        run: |o| kernels_l1(bypass_l1::Figure::Nw, o) },
    Study { name: "bypass-fig2", family: Bypass, paper: "adaptive-gpu-l1-bypassing Fig. 2",
        description: "adaptive-gpu-l1-bypassing Fig. 2 (timed): speedup of 32 to 256 KB L1 data caches over 16 KB, each Table 2 kernel alone on preset `bypass` (`--mixes` names kernels)",
        figure: fig(Bars, "Baseline", KERNEL, "adaptive-gpu-l1-bypassing Fig. 2: performance improvement normalized to a 16KB L1 cache with different cache sizes"),
        run: |o| kernels_alone(bypass_perf::Figure::Fig2, o) },
    Study { name: "bypass-fig9", family: Bypass, paper: "adaptive-gpu-l1-bypassing Figs. 8 and 9",
        description: "adaptive-gpu-l1-bypassing Figs. 8 and 9 (timed): speedup and L1 misses of the PC-based and counter-based bypass predictors and a 32 KB L1, and the L1s' static energy from run time (Table 3)",
        figure: fig(Bars, "Baseline", KERNEL, "adaptive-gpu-l1-bypassing Fig. 9: speedup over the baseline for different techniques"),
        run: |o| kernels_alone(bypass_perf::Figure::Fig9, o) },
    Study { name: "bypass-fig10", family: Bypass, paper: "adaptive-gpu-l1-bypassing Fig. 10",
        description: "adaptive-gpu-l1-bypassing Fig. 10 (timed): each kernel's L1 hit rate on the baseline",
        figure: fig(Bars, "", KERNEL, "adaptive-gpu-l1-bypassing Fig. 10: L1 cache hit rate of each benchmark in the baseline"),
        run: |o| kernels_alone(bypass_perf::Figure::Fig10, o) },
    Study { name: "bypass-fig12", family: Bypass, paper: "adaptive-gpu-l1-bypassing Fig. 12",
        description: "adaptive-gpu-l1-bypassing Fig. 12 (timed): execution time of nw and nw-nospm with the PC-based predictor and 32 and 64 KB L1s, relative to nw on the baseline",
        figure: fig(Bars, "Baseline", KERNEL, "adaptive-gpu-l1-bypassing Fig. 12: execution time of nw with different configurations"),
        run: |o| kernels_alone(bypass_perf::Figure::Fig12, o) },
    Study { name: "tap-fig2", family: Timed, paper: "tap Figs. 2 and 3",
        description: "tap Figs. 2 and 3 (timed): CPI and LLC MPKI of each application alone with 1 to 32 LLC ways at 4096 sets, and its type A-E (`--mixes` names GPGPU or CPU kernels; default: every GPGPU kernel but matrixmul-nospm and bfs-rodinia, adaptive-gpu-l1-bypassing Table 2's versions of matrixmul and bfs)",
        figure: fig(Lines, "", "LLC size at 4096 sets (256KB a way)", "tap Figs. 2 and 3: CPI and LLC MPKI against LLC ways"),
        run: |o| tap_char::run(&o.timed(tap_char::default_workloads())) },
    Study { name: "tap-fig6", family: Timed, paper: "tap Fig. 6",
        description: "tap Fig. 6 (timed): UCP and TAP-UCP over LRU on 1-CPU workloads per GPGPU type",
        figure: fig(SCurve, "LRU", MIX, "tap Fig. 6: TAP-UCP speedup results"),
        run: |o| on_mixes(tap_perf::run, tap_perf::Figure::Fig6, o) },
    Study { name: "tap-fig7", family: Timed, paper: "tap Fig. 7",
        description: "tap Fig. 7 (timed): RRIP and TAP-RRIP over LRU on 1-CPU workloads per GPGPU type",
        figure: fig(SCurve, "LRU", MIX, "tap Fig. 7: TAP-RRIP speedup results"),
        run: |o| on_mixes(tap_perf::run, tap_perf::Figure::Fig7, o) },
    Study { name: "tap-fig8", family: Timed, paper: "tap Fig. 8",
        description: "tap Fig. 8 (timed): TAP and TAP-S mechanisms over LRU on Stream-CPU workloads",
        figure: fig(Bars, "LRU", TYPE, "tap Fig. 8: enhanced TAP mechanism (TAP-S) results"),
        run: |o| on_mixes(tap_perf::run, tap_perf::Figure::Fig8, o) },
    Study { name: "tap-fig9", family: Timed, paper: "tap Fig. 9",
        description: "tap Fig. 9 (timed): UCP, TAP-UCP, RRIP and TAP-RRIP with two and four CPU applications",
        figure: fig(Bars, "LRU", TYPE, "tap Fig. 9: multiple CPU application results"),
        run: |o| on_mixes(tap_perf::run, tap_perf::Figure::Fig9, o) },
    Study { name: "tap-fig10", family: Timed, paper: "tap Fig. 10",
        description: "tap Fig. 10 (timed): static partitioning, TAP-UCP and TAP-RRIP over LRU",
        figure: fig(Bars, "LRU", TYPE, "tap Fig. 10: static partitioning results"),
        run: |o| on_mixes(tap_perf::run, tap_perf::Figure::Fig10, o) },
    Study { name: "tap-fig11", family: Timed, paper: "tap Fig. 11",
        description: "tap Fig. 11 (timed): UCP, TAP-UCP, RRIP and TAP-RRIP at other LLC sizes and associativities",
        figure: fig(Bars, "LRU", TYPE, "tap Fig. 11: cache sensitivity results (size-associativity)"),
        run: |o| on_mixes(tap_perf::run, tap_perf::Figure::Fig11, o) },
    Study { name: "tap-fig12", family: Timed, paper: "tap Fig. 12",
        description: "tap Fig. 12 (timed): TADIP, PIPP, TC, UCP, RRIP, TAP-UCP and TAP-RRIP over LRU",
        figure: fig(Bars, "LRU", TYPE, "tap Fig. 12: TAP comparison to other policies"),
        run: |o| on_mixes(tap_perf::run, tap_perf::Figure::Fig12, o) },
    Study { name: "tap-table1", family: Timed, paper: "tap Table 1",
        description: "tap Table 1 (timed): the LLC share of the CPU and the GPGPU application under LRU, UCP, RRIP and TC, and which one each policy favours, per GPGPU type",
        figure: fig(Bars, "", TYPE, "tap Table 1: LLC share of each application and the application each policy favours"),
        run: |o| on_mixes(tap_perf::run, tap_perf::Figure::Table1, o) },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found_with_the_nearest_name() {
        for (i, s) in STUDIES.iter().enumerate() {
            assert!(
                STUDIES[..i].iter().all(|t| t.name != s.name),
                "{} twice",
                s.name
            );
            assert_eq!(find(s.name).unwrap().name, s.name);
        }
        let e = find("gspc-fig1x").unwrap_err().to_string();
        assert!(e.contains("unknown study `gspc-fig1x`"), "{e}");
        assert!(e.contains("did you mean `gspc-fig11`"), "{e}");
    }

    #[test]
    fn every_paper_is_a_key_of_the_papers_list() {
        let papers =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/papers.md"))
                .unwrap();
        let keys: Vec<&str> = papers
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split('`').next())
            .collect();
        assert!(keys.contains(&"gspc") && keys.contains(&"tap"), "{keys:?}");
        for s in STUDIES {
            let key = s.paper.split_whitespace().next().unwrap_or("");
            assert!(
                keys.contains(&key),
                "{}: `{}` not in papers.md",
                s.name,
                key
            );
            assert!(s.paper.len() > key.len(), "{}: no figure", s.name);
            assert!(
                s.description.starts_with(key) || s.description.starts_with(s.paper),
                "{}: {}",
                s.name,
                s.description
            );
        }
    }

    #[test]
    fn every_study_has_a_one_line_description_and_a_figure() {
        for s in STUDIES {
            assert!(
                !s.description.is_empty()
                    && !s.description.contains('\n')
                    && !s.description.ends_with('.'),
                "{}",
                s.name
            );
            let f = s.figure;
            assert!(!f.caption.is_empty() && !f.x_label.is_empty(), "{}", s.name);
        }
    }

    #[test]
    fn declared_defaults_are_valid_values() {
        for family in [Gspc, GspcCounters, GspcTimed, Drp, Timed, Bypass, GpuL1] {
            for spec in family.options() {
                if let Some(v) = default_value(spec) {
                    check_value(spec, &v).unwrap_or_else(|e| panic!("{}: {e}", spec.name));
                }
                assert!(
                    spec.default.is_none() || spec.kind != OptionKind::Flag,
                    "{}: a switch is off by default",
                    spec.name
                );
            }
        }
    }

    #[test]
    fn scale_is_the_workloads_declaration() {
        let w = apusim_workloads::SCALE;
        for family in [Drp, Timed, Bypass] {
            let s = family.options().iter().find(|o| o.name == "scale").unwrap();
            let range = OptionKind::Int {
                min: 1,
                max: apusim_workloads::MAX_SCALE,
            };
            assert_eq!((s.kind, s.default, s.help), (range, Some(w.default), w.doc));
        }
    }

    #[test]
    fn options_are_checked_by_name_kind_and_range() {
        let s = find("gspc-fig12").unwrap();
        let with = |given: Vec<(&str, OptionValue)>| StudyArgs {
            given: given.into_iter().map(|(n, v)| (n.to_string(), v)).collect(),
            ..StudyArgs::default()
        };
        let e = s
            .resolve(&with(vec![("limit", OptionValue::Int(5))]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not take limit"), "{e}");
        assert!(
            e.contains("it takes scenes, width, height, frames, llc, seed"),
            "{e}"
        );
        let e = s
            .resolve(&with(vec![("frames", OptionValue::Int(0))]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("frames must be at least 1"), "{e}");
        let e = s
            .resolve(&with(vec![("width", OptionValue::Flag(true))]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("width takes an integer"), "{e}");
        let g = s.resolve(&with(vec![])).unwrap().gspc();
        assert_eq!((g.width, g.height, g.frames), (1280, 1024, 3));
        assert_eq!(g.scenes, apusim_render::builtin::names());
        assert_eq!(g.llc_sizes, ["8M", "16M"]);
        let t = find("gspc-fig15").unwrap().resolve(&with(vec![])).unwrap();
        assert_eq!(t.gspc_timed().frames, 2);
    }

    #[test]
    fn quick_is_per_family() {
        let quick = StudyArgs {
            given: vec![("quick".into(), OptionValue::Flag(true))],
            ..StudyArgs::default()
        };
        let o = find("drp-fig3").unwrap().resolve(&quick).unwrap();
        let t = o.timed(vec!["S1".into(), "S2".into()]);
        assert_eq!(t.mixes.as_deref(), Some(&["S1".to_string()][..]));
        assert_eq!(t.instructions, Some(QUICK_INSTRUCTIONS));
        let b = o.bypass(vec!["nw".into(), "bfs".into()]);
        assert_eq!(b.mixes.as_deref().map(<[String]>::len), Some(2));
        assert_eq!(b.instructions, None);
        let d = find("drp-fig13")
            .unwrap()
            .resolve(&StudyArgs::default())
            .unwrap()
            .drp();
        assert_eq!(d.mixes.len(), 54);
        assert_eq!((d.mixes[0].as_str(), d.mixes[53].as_str()), ("S1", "Q18"));
    }

    #[test]
    fn long_runs_are_sampled_unless_detailed_is_asked_for() {
        let args = |given: &[(&str, OptionValue)]| StudyArgs {
            given: given
                .iter()
                .map(|(n, v)| (n.to_string(), v.clone()))
                .collect(),
            ..StudyArgs::default()
        };
        let sampled = |given: &[(&str, OptionValue)]| {
            let o = find("drp-fig3").unwrap().resolve(&args(given)).unwrap();
            o.timed(vec!["S1".into()]).sample
        };
        let n = |x: u64| OptionValue::Int(x);
        let on = OptionValue::Flag(true);
        assert!(!sampled(&[]), "to the traces' end: detailed");
        assert!(!sampled(&[("instructions", n(SAMPLE_FROM - 1))]));
        assert!(sampled(&[("instructions", n(SAMPLE_FROM))]));
        assert!(sampled(&[
            ("warmup", n(1)),
            ("instructions", n(SAMPLE_FROM - 1))
        ]));
        assert!(sampled(&[
            ("instructions", n(1000)),
            ("sample", on.clone())
        ]));
        let long = ("instructions", n(250_000_000));
        assert!(!sampled(&[long.clone(), ("detailed", on.clone())]));
        let both = [long, ("detailed", on.clone()), ("sample", on)];
        let e = find("drp-fig3").unwrap().resolve(&args(&both)).unwrap_err();
        assert!(e.to_string().contains("exclude each other"), "{e}");
    }

    /// Every study runs from its own options: with every option it takes given (a name no
    /// workload has, so the study stops at its first lookup), the run reaches the study's
    /// own refusal rather than an option the registry does not supply.
    #[test]
    fn every_study_takes_its_options_to_its_run() {
        for s in STUDIES {
            let mut given = Vec::new();
            for o in s.options() {
                let v = match (o.name, o.kind) {
                    // bypass-fig12's times are relative to nw, so its kernels hold nw.
                    ("mixes", _) if s.family == Bypass => {
                        OptionValue::List(vec!["nw".into(), "no-such-name".into()])
                    }
                    ("scenes" | "mixes" | "kernels", _) => {
                        OptionValue::List(vec!["no-such-name".into()])
                    }
                    (_, OptionKind::List) => OptionValue::List(vec!["256K".into()]),
                    // A bypass figure refuses these itself (its kernels run to their end).
                    ("warmup" | "instructions" | "sample" | "frames", _) if s.family == Bypass => {
                        continue
                    }
                    // The two exclude each other; `sample` is given.
                    ("detailed", _) => continue,
                    (_, OptionKind::Frames) => OptionValue::Frames(Frames::Count(1)),
                    ("frames" | "scale" | "instructions" | "limit", _) => OptionValue::Int(1),
                    (_, OptionKind::Int { min, .. }) => OptionValue::Int(min.max(8)),
                    (_, OptionKind::Flag) => OptionValue::Flag(true),
                    (_, OptionKind::Path) => {
                        OptionValue::Path(std::env::temp_dir().join("apusim-unwritten.csv"))
                    }
                };
                given.push((o.name.to_string(), v));
            }
            let args = StudyArgs {
                given,
                ..StudyArgs::default()
            };
            let e = format!("{:#}", s.run(&args).expect_err(s.name));
            assert!(e.contains("no-such-name"), "{}: {e}", s.name);
        }
    }
}
