//! `study`: one entry for every `apusim study NAME`, with the command's options and defaults,
//! returning the study's long-format records.

use crate::py_err;
use crate::runs::in_pool;
use anyhow::{bail, Result};
use apusim_experiments::{
    bypass_perf, crit_ident, crit_perf, crit_sched, drp, drp_perf, gspc, gspc_perf, jobs, tap_char,
    tap_perf, StudyOutput,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

/// The families of studies, by the options they take.
#[derive(Clone, Copy)]
enum Study {
    /// Functional gspc figures on rendered frames.
    Gspc(gspc::Figure),
    /// Timed gspc frame-rate figures.
    GspcTimed(gspc_perf::Figure),
    /// Functional drp figures on the mixes.
    Drp(drp::Figure),
    /// Timed figures on mixes: drp, crit and tap.
    Timed(Timed),
    /// Timed adaptive-gpu-l1-bypassing figures: GPGPU kernels alone, each to its end.
    Bypass(bypass_perf::Figure),
}

#[derive(Clone, Copy)]
enum Timed {
    Drp(drp_perf::Figure),
    Crit(crit_perf::Figure),
    Ident(crit_ident::Figure),
    Sched(crit_sched::Figure),
    Tap(tap_perf::Figure),
    TapChar,
}

/// Every study, under its `apusim study` name.
const STUDIES: &[(&str, Study)] = &[
    ("gspc-fig11", Study::Gspc(gspc::Figure::Fig11)),
    ("gspc-fig12", Study::Gspc(gspc::Figure::Fig12)),
    ("gspc-fig13", Study::Gspc(gspc::Figure::Fig13)),
    ("gspc-fig14", Study::Gspc(gspc::Figure::Fig14)),
    ("gspc-fig15", Study::GspcTimed(gspc_perf::Figure::Fig15)),
    ("gspc-fig16", Study::GspcTimed(gspc_perf::Figure::Fig16)),
    ("gspc-fig17", Study::GspcTimed(gspc_perf::Figure::Fig17)),
    ("drp-fig13", Study::Drp(drp::Figure::Fig13)),
    ("drp-fig14", Study::Drp(drp::Figure::Fig14)),
    ("drp-fig1", Study::Timed(Timed::Drp(drp_perf::Figure::Fig1))),
    ("drp-fig3", Study::Timed(Timed::Drp(drp_perf::Figure::Fig3))),
    (
        "drp-table4",
        Study::Timed(Timed::Drp(drp_perf::Figure::Table4)),
    ),
    ("drp-fig4", Study::Timed(Timed::Drp(drp_perf::Figure::Fig4))),
    (
        "drp-fig11",
        Study::Timed(Timed::Drp(drp_perf::Figure::Fig11)),
    ),
    (
        "drp-fig12",
        Study::Timed(Timed::Drp(drp_perf::Figure::Fig12)),
    ),
    (
        "drp-fig15",
        Study::Timed(Timed::Drp(drp_perf::Figure::Fig15)),
    ),
    (
        "crit-fig2",
        Study::Timed(Timed::Crit(crit_perf::Figure::Fig2)),
    ),
    (
        "crit-fig3",
        Study::Timed(Timed::Crit(crit_perf::Figure::Fig3)),
    ),
    (
        "crit-fig4",
        Study::Timed(Timed::Crit(crit_perf::Figure::Fig4)),
    ),
    (
        "crit-fig8",
        Study::Timed(Timed::Ident(crit_ident::Figure::Fig8)),
    ),
    (
        "crit-fig9",
        Study::Timed(Timed::Ident(crit_ident::Figure::Fig9)),
    ),
    (
        "crit-fig10",
        Study::Timed(Timed::Ident(crit_ident::Figure::Fig10)),
    ),
    (
        "crit-fig11",
        Study::Timed(Timed::Sched(crit_sched::Figure::Fig11)),
    ),
    (
        "crit-fig12",
        Study::Timed(Timed::Sched(crit_sched::Figure::Fig12)),
    ),
    (
        "crit-fig13",
        Study::Timed(Timed::Sched(crit_sched::Figure::Fig13)),
    ),
    (
        "crit-fig14",
        Study::Timed(Timed::Sched(crit_sched::Figure::Fig14)),
    ),
    (
        "crit-fig15",
        Study::Timed(Timed::Sched(crit_sched::Figure::Fig15)),
    ),
    ("bypass-fig2", Study::Bypass(bypass_perf::Figure::Fig2)),
    ("bypass-fig9", Study::Bypass(bypass_perf::Figure::Fig9)),
    ("bypass-fig10", Study::Bypass(bypass_perf::Figure::Fig10)),
    ("bypass-fig12", Study::Bypass(bypass_perf::Figure::Fig12)),
    ("tap-fig2", Study::Timed(Timed::TapChar)),
    ("tap-fig6", Study::Timed(Timed::Tap(tap_perf::Figure::Fig6))),
    ("tap-fig7", Study::Timed(Timed::Tap(tap_perf::Figure::Fig7))),
    ("tap-fig8", Study::Timed(Timed::Tap(tap_perf::Figure::Fig8))),
    ("tap-fig9", Study::Timed(Timed::Tap(tap_perf::Figure::Fig9))),
    (
        "tap-fig10",
        Study::Timed(Timed::Tap(tap_perf::Figure::Fig10)),
    ),
    (
        "tap-fig11",
        Study::Timed(Timed::Tap(tap_perf::Figure::Fig11)),
    ),
    (
        "tap-fig12",
        Study::Timed(Timed::Tap(tap_perf::Figure::Fig12)),
    ),
    (
        "tap-table1",
        Study::Timed(Timed::Tap(tap_perf::Figure::Table1)),
    ),
];

/// Instructions per core of a `quick` study (`apusim study ... --quick`).
const QUICK_INSTRUCTIONS: u64 = 20_000;

/// The options of every study; each family takes some of them.
#[derive(Default)]
struct Options {
    seed: Option<u64>,
    set: Vec<String>,
    threads: Option<usize>,
    cache_dir: Option<PathBuf>,
    no_cache: bool,
    scenes: Option<Vec<String>>,
    width: Option<u32>,
    height: Option<u32>,
    frames: Option<u32>,
    llc: Option<Vec<String>>,
    mixes: Option<Vec<String>>,
    scale: Option<u64>,
    limit: Option<u64>,
    warmup: Option<u64>,
    instructions: Option<u64>,
    quick: bool,
}

impl Options {
    /// The options given, by name, to name those a study does not take.
    fn given(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        let mut g = |yes: bool, n: &'static str| {
            if yes {
                v.push(n);
            }
        };
        g(self.scenes.is_some(), "scenes");
        g(self.width.is_some(), "width");
        g(self.height.is_some(), "height");
        g(self.frames.is_some(), "frames");
        g(self.llc.is_some(), "llc");
        g(self.mixes.is_some(), "mixes");
        g(self.scale.is_some(), "scale");
        g(self.limit.is_some(), "limit");
        g(self.warmup.is_some(), "warmup");
        g(self.instructions.is_some(), "instructions");
        g(self.quick, "quick");
        v
    }

    /// Refuse options outside `takes` (the common ones are always taken).
    fn check(&self, name: &str, takes: &[&str]) -> Result<()> {
        let extra: Vec<&str> = self
            .given()
            .into_iter()
            .filter(|o| !takes.contains(o))
            .collect();
        if !extra.is_empty() {
            bail!(
                "study {name} does not take {} (it takes {}, seed, set, threads, cache_dir, \
                 no_cache)",
                extra.join(", "),
                takes.join(", ")
            );
        }
        for (n, v) in [
            ("scale", self.scale),
            ("limit", self.limit),
            ("instructions", self.instructions),
            ("frames", self.frames.map(u64::from)),
        ] {
            if v == Some(0) {
                bail!("{n} must be at least 1");
            }
        }
        if self.no_cache && self.cache_dir.is_some() {
            bail!("no_cache and cache_dir cannot be given together");
        }
        Ok(())
    }

    fn seed(&self) -> u64 {
        self.seed.unwrap_or(1)
    }

    fn cache(&self) -> Option<PathBuf> {
        if self.no_cache {
            None
        } else {
            self.cache_dir.clone().or_else(jobs::default_cache_dir)
        }
    }

    fn scenes(&self) -> Vec<String> {
        self.scenes
            .clone()
            .unwrap_or_else(|| ["courtyard", "deferred", "lake"].map(String::from).to_vec())
    }

    /// The options of a timed study on mixes, `quick` narrowing the figure's `defaults` to
    /// the first mix and the run to [`QUICK_INSTRUCTIONS`] per core.
    fn timed(&self, defaults: Vec<String>) -> drp_perf::Options {
        let mut o = drp_perf::Options {
            mixes: self.mixes.as_deref().map(expand_mixes),
            scale: self.scale.unwrap_or(1),
            seed: self.seed(),
            warmup: self.warmup.unwrap_or(0),
            instructions: self.instructions,
            overrides: self.set.clone(),
            cache: self.cache(),
        };
        if self.quick {
            if o.mixes.is_none() {
                o.mixes = Some(defaults.into_iter().take(1).collect());
            }
            o.instructions.get_or_insert(QUICK_INSTRUCTIONS);
        }
        o
    }
}

/// `S`, `D`, `Q` expand to their eighteen mixes; other names pass through.
fn expand_mixes(list: &[String]) -> Vec<String> {
    list.iter()
        .flat_map(|m| match m.as_str() {
            "S" | "D" | "Q" => (1..=18).map(|n| format!("{m}{n}")).collect(),
            _ => vec![m.clone()],
        })
        .collect()
}

fn run_study(name: &str, o: &Options) -> Result<StudyOutput> {
    let Some(&(_, study)) = STUDIES.iter().find(|(n, _)| *n == name) else {
        let names: Vec<&str> = STUDIES.iter().map(|(n, _)| *n).collect();
        bail!("unknown study `{name}` (studies: {})", names.join(", "));
    };
    match study {
        Study::Gspc(fig) => {
            o.check(name, &["scenes", "width", "height", "frames", "llc"])?;
            let g = gspc::Options {
                scenes: o.scenes(),
                width: o.width.unwrap_or(1280),
                height: o.height.unwrap_or(1024),
                frames: o.frames.unwrap_or(3),
                seed: o.seed(),
                llc_sizes: o
                    .llc
                    .clone()
                    .unwrap_or_else(|| vec!["8M".into(), "16M".into()]),
                overrides: o.set.clone(),
                cache: o.cache(),
            };
            in_pool(o.threads, || gspc::run(fig, &g))
        }
        Study::GspcTimed(fig) => {
            o.check(name, &["scenes", "width", "height", "frames"])?;
            let g = gspc_perf::Options {
                scenes: o.scenes(),
                width: o.width.unwrap_or(1280),
                height: o.height.unwrap_or(1024),
                frames: o.frames.unwrap_or(2),
                seed: o.seed(),
                overrides: o.set.clone(),
                cache: o.cache(),
            };
            in_pool(o.threads, || gspc_perf::run(fig, &g))
        }
        Study::Drp(fig) => {
            o.check(name, &["mixes", "scale", "limit"])?;
            let d = drp::Options {
                mixes: expand_mixes(
                    &o.mixes
                        .clone()
                        .unwrap_or_else(|| ["S", "D", "Q"].map(String::from).to_vec()),
                ),
                scale: o.scale.unwrap_or(1),
                seed: o.seed(),
                limit: o.limit,
                overrides: o.set.clone(),
                cache: o.cache(),
            };
            in_pool(o.threads, || drp::run(fig, &d))
        }
        Study::Bypass(fig) => {
            o.check(name, &["mixes", "scale", "quick"])?;
            let mut t = drp_perf::Options {
                mixes: o.mixes.clone(),
                scale: o.scale.unwrap_or(1),
                seed: o.seed(),
                overrides: o.set.clone(),
                cache: o.cache(),
                ..drp_perf::Options::default()
            };
            if o.quick && t.mixes.is_none() {
                t.mixes = Some(fig.quick_kernels());
            }
            in_pool(o.threads, || bypass_perf::run(fig, &t))
        }
        Study::Timed(t) => {
            o.check(name, &["mixes", "scale", "warmup", "instructions", "quick"])?;
            match t {
                Timed::Drp(fig) => {
                    let t = o.timed(fig.default_mixes());
                    in_pool(o.threads, || drp_perf::run(fig, &t))
                }
                Timed::Crit(fig) => {
                    let t = o.timed(fig.default_mixes());
                    in_pool(o.threads, || crit_perf::run(fig, &t))
                }
                Timed::Ident(fig) => {
                    let t = o.timed(fig.default_mixes());
                    in_pool(o.threads, || crit_ident::run(fig, &t))
                }
                Timed::Sched(fig) => {
                    let t = o.timed(fig.default_mixes());
                    in_pool(o.threads, || crit_sched::run(fig, &t))
                }
                Timed::Tap(fig) => {
                    let t = o.timed(fig.default_mixes());
                    in_pool(o.threads, || tap_perf::run(fig, &t))
                }
                Timed::TapChar => {
                    let t = o.timed(tap_char::default_workloads());
                    in_pool(o.threads, || tap_char::run(&t))
                }
            }
        }
    }
}

/// Run the study `name` (`apusim study NAME`, e.g. `gspc-fig12`, `drp-fig13`, `drp-fig1`)
/// with the command's options; returns `(columns, title, paper)` where the columns are the
/// long format `study, config, workload, policy, metric, value` of `--csv`.
#[pyfunction]
#[pyo3(signature = (
    name, *, seed = None, set = Vec::new(), threads = None, cache_dir = None, no_cache = false,
    scenes = None, width = None, height = None, frames = None, llc = None, mixes = None,
    scale = None, limit = None, warmup = None, instructions = None, quick = false
))]
#[allow(clippy::too_many_arguments)]
pub fn study<'py>(
    py: Python<'py>,
    name: String,
    seed: Option<u64>,
    set: Vec<String>,
    threads: Option<usize>,
    cache_dir: Option<PathBuf>,
    no_cache: bool,
    scenes: Option<Vec<String>>,
    width: Option<u32>,
    height: Option<u32>,
    frames: Option<u32>,
    llc: Option<Vec<String>>,
    mixes: Option<Vec<String>>,
    scale: Option<u64>,
    limit: Option<u64>,
    warmup: Option<u64>,
    instructions: Option<u64>,
    quick: bool,
) -> PyResult<(Bound<'py, PyDict>, String, String)> {
    let o = Options {
        seed,
        set,
        threads,
        cache_dir,
        no_cache,
        scenes,
        width,
        height,
        frames,
        llc,
        mixes,
        scale,
        limit,
        warmup,
        instructions,
        quick,
    };
    let out = py.detach(|| run_study(&name, &o)).map_err(py_err)?;
    let d = PyDict::new(py);
    let col =
        |f: fn(&apusim_experiments::Record) -> &str| out.records.iter().map(f).collect::<Vec<_>>();
    d.set_item("study", vec![out.study.as_str(); out.records.len()])?;
    d.set_item("config", col(|r| &r.config))?;
    d.set_item("workload", col(|r| &r.workload))?;
    d.set_item("policy", col(|r| &r.policy))?;
    d.set_item("metric", col(|r| &r.metric))?;
    d.set_item(
        "value",
        out.records.iter().map(|r| r.value).collect::<Vec<_>>(),
    )?;
    Ok((d, out.title.clone(), out.paper.clone()))
}

/// The names of the studies, in `apusim study --help` order.
#[pyfunction]
pub fn studies() -> Vec<&'static str> {
    STUDIES.iter().map(|(n, _)| *n).collect()
}
