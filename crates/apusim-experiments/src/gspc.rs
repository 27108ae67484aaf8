//! gspc-graphics-stream-llc.txt §5, Figs. 11–14, on frames of the built-in render scenes.
//!
//! The paper replays captured frames of twelve DirectX titles through its discrete GPU (§4:
//! the render caches, an 8 MB or 16 MB 16-way LLC) and compares LLC policies by the misses
//! they take. apusim renders each scene of [`Options::scenes`] with the software pipeline of
//! `apusim-render`, filters it once through preset `gspc`'s render caches (the GPU-only LLC is
//! not inclusive, so the stream reaching the LLC does not depend on the LLC policy or size)
//! and replays that LLC stream offline under every policy and LLC size of the figure, exactly
//! as `apusim oracle` does ([`crate::replay`]). A scene's trace of several frames plays the
//! role of one of the paper's applications; averages are arithmetic means over scenes, as the
//! paper's. Every replay goes through [`Options::runs`], so `--db` keeps them and
//! `--print-spec` lists them as a sweep's `mode = "replay"` points (preset `gspc` with the
//! LLC size, and GSPZTC's `t`, as overrides).
//!
//! "LLC misses" counts every line reference that misses (reads, writes and write-backs from
//! the render caches; for the +UCD policies the bypassed display writes included), the
//! paper's LLC miss count. Fig. 13's render-target hit rate is the hit rate of colour *reads*
//! (the blending reads the paper names), the Z hit rate that of every depth reference, the
//! texture hit rate that of texture-sampler reads, and the consumption rate the share of
//! render-target blocks that a texture read consumed from the LLC (`apusim reuse`'s
//! inter-stream statistics, gspc §2.3). SHiP-mem is `ship-mem-bank`, one 16K-entry table per
//! LLC bank as gspc §5.1 configures it.

use crate::jobs::{alone_job_inputs, load_system, JobInputs, TraceDir};
use crate::replay::{self, Replayed};
use crate::runs::{PlannedInput, PlannedMode, PlannedRun, ReplayRun, Runs};
use crate::{with_means, Mean, Record, StudyOutput};
use anyhow::{bail, Context, Result};
use apusim_sim::SystemConfig;
use apusim_trace::Stream;
use apusim_workloads::mixes::Alone;
use std::path::PathBuf;
use std::sync::Mutex;

/// The figures of gspc §5 this module reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Fig. 11: GSPZTC's LLC misses for t = 2, 4, 8 relative to t = 16.
    Fig11,
    /// Fig. 12: LLC misses of eight policies normalized to 2-bit DRRIP.
    Fig12,
    /// Fig. 13: texture hit rate, RT → texture consumption, RT and Z hit rates.
    Fig13,
    /// Fig. 14: iso-overhead policies normalized to 2-bit DRRIP.
    Fig14,
}

/// One bar of a figure: a label, a registered policy and GSPC's threshold `t` if set.
#[derive(Clone, Copy, Debug)]
struct Bar {
    label: &'static str,
    policy: &'static str,
    t: Option<u32>,
}

const fn bar(label: &'static str, policy: &'static str) -> Bar {
    Bar {
        label,
        policy,
        t: None,
    }
}

const DRRIP: Bar = bar("DRRIP", "drrip");

impl Figure {
    pub fn name(self) -> &'static str {
        match self {
            Figure::Fig11 => "gspc-fig11",
            Figure::Fig12 => "gspc-fig12",
            Figure::Fig13 => "gspc-fig13",
            Figure::Fig14 => "gspc-fig14",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Figure::Fig11 => "sensitivity of GSPZTC to t: % change in LLC misses relative to t = 16 (gspc Fig. 11)",
            Figure::Fig12 => "LLC misses normalized to 2-bit DRRIP (gspc Fig. 12)",
            Figure::Fig13 => "texture hit rate, render-target -> texture consumption, render-target (blending read) and Z hit rates (gspc Fig. 13)",
            Figure::Fig14 => "iso-overhead policies: LLC misses normalized to 2-bit DRRIP (gspc Fig. 14)",
        }
    }

    fn paper(self) -> &'static str {
        match self {
            Figure::Fig11 => "on average t = 2, 4, 8 within ~1% of t = 16; a few titles +1-2% at t = 2/4; t = 8 chosen as the most robust",
            Figure::Fig12 => "averages vs DRRIP: NRU +6.2%, SHiP-mem ~0%, GS-DRRIP -2.9%, GSPC -11.8% (8 MB)",
            Figure::Fig13 => "texture hit rate and RT consumption rise from DRRIP through GSPZTC and GSPZTC+TSE, dip slightly with GSPC, recover with GSPC+UCD; RT hit rate rises through GSPZTC+TSE and GSPC",
            Figure::Fig14 => "averages vs 2-bit DRRIP: LRU +7.2%, 4-bit DRRIP -0.4%, 4-bit GS-DRRIP -1.7%, GSPC -11.8%",
        }
    }

    /// The bars, the normalization base first.
    fn bars(self) -> Vec<Bar> {
        let t = |label, t| Bar {
            label,
            policy: "gspztc",
            t: Some(t),
        };
        match self {
            Figure::Fig11 => vec![t("t=16", 16), t("t=2", 2), t("t=4", 4), t("t=8", 8)],
            Figure::Fig12 => vec![
                DRRIP,
                bar("NRU", "nru"),
                bar("SHiP-mem", "ship-mem-bank"),
                bar("GS-DRRIP", "gs-drrip"),
                bar("GSPZTC", "gspztc"),
                bar("GSPZTC+TSE", "gspztc-tse"),
                bar("GSPC", "gspc"),
                bar("GSPC+UCD", "gspc-ucd"),
                bar("DRRIP+UCD", "drrip-ucd"),
            ],
            Figure::Fig13 => vec![
                DRRIP,
                bar("GS-DRRIP", "gs-drrip"),
                bar("GSPZTC", "gspztc"),
                bar("GSPZTC+TSE", "gspztc-tse"),
                bar("GSPC", "gspc"),
                bar("GSPC+UCD", "gspc-ucd"),
            ],
            Figure::Fig14 => vec![
                DRRIP,
                bar("LRU", "lru"),
                bar("4-bit DRRIP", "drrip4"),
                bar("4-bit GS-DRRIP", "gs-drrip4"),
                bar("GSPC", "gspc"),
            ],
        }
    }
}

/// What to run the figures on.
#[derive(Clone, Debug)]
pub struct Options {
    /// Built-in scene names.
    pub scenes: Vec<String>,
    pub width: u32,
    pub height: u32,
    pub frames: u32,
    pub seed: u64,
    /// LLC capacities (`8M`, `16M`), 16-way with 64-byte lines as in gspc §4.
    pub llc_sizes: Vec<String>,
    /// `--set KEY=VALUE` overrides of preset `gspc` (its render caches, LLC banks; the LLC
    /// size is [`Options::llc_sizes`]).
    pub overrides: Vec<String>,
    /// Trace cache; `None` keeps the rendered traces in a temporary directory for the run.
    pub cache: Option<PathBuf>,
    /// How the replays are made: replayed, through a results database, or only listed.
    pub runs: Runs,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            scenes: apusim_render::builtin::names()
                .into_iter()
                .map(String::from)
                .collect(),
            width: 1280,
            height: 1024,
            frames: 3,
            seed: 1,
            llc_sizes: vec!["8M".into(), "16M".into()],
            overrides: Vec::new(),
            cache: None,
            runs: Runs::default(),
        }
    }
}

/// The scenes of [`Options::scenes`] as they run behind preset `gspc`'s render caches: each
/// one's inputs, and its LLC stream, made once when a replay first needs it.
pub(crate) struct SceneStreams {
    pub inputs: Vec<JobInputs>,
    streams: Vec<Mutex<Option<PathBuf>>>,
    /// Keeps a temporary trace directory alive while the streams are replayed.
    pub traces: TraceDir,
}

impl SceneStreams {
    /// Check `o`'s scenes and LLC sizes and name every scene's inputs (nothing is rendered
    /// yet). `study` names the study in the errors.
    pub(crate) fn new(study: &str, o: &Options) -> Result<SceneStreams> {
        if o.scenes.is_empty() || o.llc_sizes.is_empty() {
            bail!("{study}: give at least one scene and one LLC size");
        }
        for size in &o.llc_sizes {
            apusim_sim::config::parse_geometry(&format!("{size},16,64"))
                .with_context(|| format!("LLC size `{size}`"))?;
        }
        let traces = TraceDir::new(o.cache.as_deref())?;
        let dir = traces.path().to_path_buf();
        let inputs: Vec<JobInputs> = o
            .scenes
            .iter()
            .map(|s| {
                let r = (o.width, o.height);
                alone_job_inputs(
                    Alone::Scene(s),
                    r,
                    o.frames.into(),
                    None,
                    o.seed,
                    Some(dir.clone()),
                )
            })
            .collect::<Result<_>>()?;
        Ok(SceneStreams {
            streams: inputs.iter().map(|_| Mutex::new(None)).collect(),
            inputs,
            traces,
        })
    }

    /// Scene `s`'s LLC stream behind `cfg`'s render caches, rendered and filtered on first
    /// use (one thread makes it while the others wait for it).
    pub(crate) fn stream(&self, s: usize, cfg: &SystemConfig) -> Result<PathBuf> {
        let mut slot = self.streams[s].lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = &*slot {
            return Ok(p.clone());
        }
        let p = replay::llc_stream(self.traces.path(), &self.inputs[s], cfg)?;
        *slot = Some(p.clone());
        Ok(p)
    }
}

/// The overrides of a replay at LLC size `size` (and GSPZTC's `t`): the study's, then the
/// bar's.
pub(crate) fn replay_set(o: &Options, size: &str, t: Option<u32>) -> Vec<String> {
    let mut set = o.overrides.clone();
    set.push(format!("llc={size},16,64"));
    if let Some(t) = t {
        set.push(format!("llc.params.gspc_t={t}"));
    }
    set
}

/// The system of a replay: preset `gspc` with `set`, the scene alone on no CPU core.
pub(crate) fn replay_config(o: &Options, set: &[String]) -> Result<SystemConfig> {
    load_system(
        "gspc",
        None,
        set,
        Some(o.seed),
        None,
        Some(Alone::Scene("")),
    )
}

/// A replay as a sweep point states it.
pub(crate) fn planned(
    o: &Options,
    scene: &str,
    set: Vec<String>,
    policy: &str,
) -> Result<PlannedRun> {
    let cfg = replay_config(o, &set)?;
    let input = PlannedInput::Scene {
        name: scene.into(),
        width: o.width,
        height: o.height,
    };
    Ok(PlannedRun::alone(
        "gspc",
        set,
        &cfg,
        policy,
        input,
        (o.frames.into(), o.seed),
    ))
}

/// Run one figure.
pub fn run(fig: Figure, o: &Options) -> Result<StudyOutput> {
    let streams = SceneStreams::new(fig.name(), o)?;
    let bars = fig.bars();
    let mut cases: Vec<(usize, &String, Bar)> = Vec::new();
    for s in 0..o.scenes.len() {
        for z in &o.llc_sizes {
            cases.extend(bars.iter().map(|b| (s, z, *b)));
        }
    }
    let consumption = fig == Figure::Fig13;
    o.runs.plan_as(PlannedMode::Replay { consumption }, || {
        cases
            .iter()
            .map(|&(s, size, b)| planned(o, &o.scenes[s], replay_set(o, size, b.t), b.policy))
            .collect()
    })?;
    let replays: Vec<Replayed> = crate::par_counted(&cases, "policy replays", |&(s, size, b)| {
        let cfg = replay_config(o, &replay_set(o, size, b.t))?;
        let run = ReplayRun {
            cfg: &cfg,
            policy: b.policy,
            inputs: &streams.inputs[s],
            consumption,
        };
        o.runs
            .replay(&run, || streams.stream(s, &cfg))
            .with_context(|| format!("{} on scene {} at {size}", b.label, o.scenes[s]))
    })?;
    let mut records = Vec::new();
    let per_case = bars.len();
    for (chunk, group) in replays.chunks(per_case).zip(cases.chunks(per_case)) {
        let (s, size, _) = group[0];
        let config = format!("{size}B");
        let workload = &o.scenes[s];
        let base = chunk[0].result.total.misses();
        for (r, &(_, _, b)) in chunk.iter().zip(group) {
            for (metric, value) in metrics(fig, r, base) {
                records.push(Record::new(&config, workload, b.label, metric, value));
            }
        }
    }
    Ok(StudyOutput {
        study: fig.name().into(),
        title: format!(
            "{}; scenes at {}x{}, {} frame(s), seed {}{}",
            fig.title(),
            o.width,
            o.height,
            o.frames,
            o.seed,
            crate::overrides_note(&o.overrides)
        ),
        paper: fig.paper().into(),
        records: with_means(records, Mean::Arithmetic),
    })
}

/// The numbers one replay contributes to `fig`; `base` is the misses of the figure's first bar.
fn metrics(fig: Figure, r: &Replayed, base: u64) -> Vec<(&'static str, f64)> {
    let misses = r.result.total.misses();
    let norm = if base == 0 {
        f64::NAN
    } else {
        misses as f64 / base as f64
    };
    match fig {
        Figure::Fig11 => vec![("misses_change_pct_vs_t16", 100.0 * (norm - 1.0))],
        Figure::Fig12 | Figure::Fig14 => vec![("misses_norm", norm)],
        Figure::Fig13 => {
            let res = &r.result;
            let mut tex = res.stream(Stream::StaticTexture);
            tex.add(&res.stream(Stream::DynamicTexture));
            let rate = |c: Option<f64>| c.unwrap_or(f64::NAN);
            vec![
                ("texture_hit_rate", rate(tex.read_hit_rate())),
                ("rt_consumed_share", rate(r.consumed_share)),
                (
                    "rt_read_hit_rate",
                    rate(res.stream(Stream::Color).read_hit_rate()),
                ),
                ("z_hit_rate", rate(res.stream(Stream::Depth).hit_rate())),
            ]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(scenes: &[&str]) -> Options {
        Options {
            scenes: scenes.iter().map(|s| s.to_string()).collect(),
            width: 160,
            height: 100,
            frames: 1,
            seed: 1,
            llc_sizes: vec!["256K".into()],
            overrides: Vec::new(),
            cache: None,
            runs: Runs::default(),
        }
    }

    #[test]
    fn fig12_normalizes_to_drrip_and_averages_scenes() {
        let out = run(Figure::Fig12, &small(&["lake", "deferred"])).unwrap();
        let get = |w: &str, p: &str| {
            out.records
                .iter()
                .find(|r| r.workload == w && r.policy == p)
                .unwrap()
                .value
        };
        for w in ["lake", "deferred", "mean"] {
            assert_eq!(get(w, "DRRIP"), 1.0, "{w}");
        }
        for p in ["NRU", "GSPC", "GSPC+UCD", "SHiP-mem"] {
            let (a, b) = (get("lake", p), get("deferred", p));
            assert!(a > 0.3 && a < 3.0, "{p} {a}");
            assert!((get("mean", p) - (a + b) / 2.0).abs() < 1e-12);
        }
        // The bars are different policies: at least two must differ on a real stream.
        assert!(get("lake", "NRU") != get("lake", "GSPC") || get("lake", "GSPC") != 1.0);
        assert_eq!(out.records.len(), 3 * 9);
        assert!(out.to_csv().starts_with("study,config,workload"));
    }

    #[test]
    fn fig13_reports_rates_in_range_and_unknown_scenes_fail() {
        let out = run(Figure::Fig13, &small(&["courtyard"])).unwrap();
        let metrics: Vec<&str> = out.records.iter().map(|r| r.metric.as_str()).collect();
        for m in [
            "texture_hit_rate",
            "rt_consumed_share",
            "rt_read_hit_rate",
            "z_hit_rate",
        ] {
            assert!(metrics.contains(&m), "{m}");
        }
        for r in &out.records {
            assert!((0.0..=1.0).contains(&r.value), "{r:?}");
        }
        let err = run(Figure::Fig13, &small(&["atlantis"])).unwrap_err();
        assert!(
            err.to_string().contains("unknown scene `atlantis`"),
            "{err}"
        );
    }
}
