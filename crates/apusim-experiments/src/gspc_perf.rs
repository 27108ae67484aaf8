//! gspc-graphics-stream-llc.txt's performance figures on the timed render pipeline: Fig. 15
//! (frame rate of NRU, GS-DRRIP and GSPC relative to two-bit DRRIP on the 8 MB 16-way LLC),
//! Fig. 16 (the same on 16 MB 16-way) and Fig. 17 (NRU and GSPC with a DDR3-1867 10-10-10
//! DRAM system, and on a less aggressive GPU of 512 thread contexts).
//!
//! Every (scene, bar) pair is one timed run (`apusim sim`) of the scene's frames alone on
//! preset `gspc`, gspc §4's discrete GPU: 768 thread contexts at 1.6 GHz (64 cores of 12;
//! the paper's 96 of 8), its render caches, a non-inclusive LLC at 4 GHz with a 20-cycle bank latency, and
//! dual-channel DDR3-1600 15-15-15 (the preset documents where apusim's pipeline differs).
//! The metric is the paper's, frames per second (gspc §5.3: "the number of frames rendered
//! per second"), normalized to DRRIP's on the same scene and system; averages over scenes are
//! geometric means. Each bar also reports the GPU's LLC demand misses normalized to DRRIP's
//! (`llc_misses_norm`), the quantity of gspc Figs. 12 and 14, to show how much of a policy's
//! miss savings turns into frame rate. Fig. 17's lower panel has "eight texture samplers" against the baseline's
//! twelve; apusim's samplers come two per shader core, so its lower panel has 64 cores' 128.

use crate::jobs::{alone_inputs, TraceDir};
use crate::runs::{PlannedInput, PlannedRun};
use crate::timed::geomean;
use crate::{Record, StudyOutput};
use anyhow::{bail, Context, Result};
use apusim_sim::timed::SimOptions;
use apusim_sim::SystemConfig;
use apusim_workloads::mixes::Job;

/// The figures this module reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Fig. 15: NRU, GS-DRRIP and GSPC relative to DRRIP, 8 MB 16-way LLC.
    Fig15,
    /// Fig. 16: the same on a 16 MB 16-way LLC.
    Fig16,
    /// Fig. 17: NRU and GSPC relative to DRRIP with DDR3-1867 10-10-10 (upper panel) and
    /// on a GPU of 512 thread contexts (lower panel), 8 MB LLC.
    Fig17,
}

/// What to run a figure on.
#[derive(Clone, Debug)]
pub struct Options {
    /// Built-in scenes.
    pub scenes: Vec<String>,
    pub width: u32,
    pub height: u32,
    /// Frames rendered per scene.
    pub frames: u32,
    pub seed: u64,
    /// `--set KEY=VALUE` overrides of preset `gspc`.
    pub overrides: Vec<String>,
    /// Trace cache (`None`: a temporary directory for the study).
    pub cache: Option<std::path::PathBuf>,
    /// Where the runs are kept between invocations ([`crate::runs`]).
    pub runs: crate::runs::Runs,
}

/// gspc's baseline: two-bit DRRIP.
const BASELINE: &str = "drrip";

/// One system variant of a figure: its label and `--set` overrides of preset `gspc`.
struct System {
    label: &'static str,
    set: &'static [&'static str],
}

impl Figure {
    pub fn name(self) -> &'static str {
        match self {
            Figure::Fig15 => "gspc-fig15",
            Figure::Fig16 => "gspc-fig16",
            Figure::Fig17 => "gspc-fig17",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Figure::Fig15 => "frame rate of NRU, GS-DRRIP and GSPC relative to two-bit DRRIP, 8 MB 16-way LLC (gspc Fig. 15)",
            Figure::Fig16 => "frame rate of NRU, GS-DRRIP and GSPC relative to two-bit DRRIP, 16 MB 16-way LLC (gspc Fig. 16)",
            Figure::Fig17 => "frame rate of NRU and GSPC relative to two-bit DRRIP with DDR3-1867 10-10-10, and on a GPU of 512 thread contexts, 8 MB LLC (gspc Fig. 17)",
        }
    }

    fn paper(self) -> &'static str {
        match self {
            Figure::Fig15 => {
                "NRU -7%, GS-DRRIP +0.8%, GSPC +8% (1.8% to 18.2%); GSPC averages 26.1 FPS"
            }
            Figure::Fig16 => "NRU -3%, GS-DRRIP +4%, GSPC +11.8%; GSPC averages 32.4 FPS",
            Figure::Fig17 => {
                "DDR3-1867: NRU -7%, GSPC +7.1%; less aggressive GPU: NRU -5.3%, GSPC +5.9%"
            }
        }
    }

    fn systems(self) -> Vec<System> {
        match self {
            Figure::Fig15 => vec![System {
                label: "8MB",
                set: &[],
            }],
            Figure::Fig16 => vec![System {
                label: "16MB",
                set: &["llc.geometry=16M,16,64"],
            }],
            Figure::Fig17 => vec![
                System {
                    label: "DDR3-1867",
                    set: &["timing.dram=gspc-ddr3-1867"],
                },
                System {
                    label: "512-context GPU",
                    set: &["timing.render.threads_per_core=8"],
                },
            ],
        }
    }

    /// The policies after the DRRIP baseline: (label, policy).
    fn policies(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Figure::Fig17 => &[("NRU", "nru"), ("GSPC", "gspc")],
            _ => &[("NRU", "nru"), ("GS-DRRIP", "gs-drrip"), ("GSPC", "gspc")],
        }
    }
}

/// Run one figure.
pub fn run(fig: Figure, o: &Options) -> Result<StudyOutput> {
    if o.scenes.is_empty() {
        bail!("{}: give at least one scene", fig.name());
    }
    if o.frames == 0 {
        bail!("{}: --frames must be at least 1", fig.name());
    }
    let jobs: Vec<Job> = o
        .scenes
        .iter()
        .map(|s| crate::jobs::scene_job(s, o.width, o.height, o.frames, o.seed))
        .collect::<Result<_>>()?;
    let systems = fig.systems();
    let bars: Vec<(&str, &str)> = std::iter::once(("DRRIP", BASELINE))
        .chain(fig.policies().iter().copied())
        .collect();
    let configs: Vec<SystemConfig> = systems
        .iter()
        .map(|s| {
            let set: Vec<String> = o
                .overrides
                .iter()
                .cloned()
                .chain(s.set.iter().map(|x| x.to_string()))
                .collect();
            let mut cfg = SystemConfig::load_preset("gspc", &set)?;
            cfg.seed = o.seed;
            Ok(cfg)
        })
        .collect::<Result<_>>()?;
    let (n_sys, n_bars) = (systems.len(), bars.len());
    let cases: Vec<(usize, usize, usize)> = (0..jobs.len())
        .flat_map(|j| (0..n_sys).flat_map(move |s| (0..n_bars).map(move |b| (j, s, b))))
        .collect();
    o.runs.plan(|| {
        let plan = |&(j, s, b): &(usize, usize, usize)| {
            let set = o
                .overrides
                .iter()
                .cloned()
                .chain(systems[s].set.iter().map(|x| x.to_string()));
            let scene = PlannedInput::Scene {
                name: o.scenes[j].clone(),
                width: o.width,
                height: o.height,
            };
            let scale = (u64::from(o.frames), o.seed);
            PlannedRun::alone("gspc", set.collect(), &configs[s], bars[b].1, scene, scale)
        };
        Ok(cases.iter().map(plan).collect())
    })?;
    let traces = TraceDir::new(o.cache.as_deref())?;
    let dir = traces.path().to_path_buf();
    let inputs = alone_inputs(&dir, &jobs)?;
    // Each run's frame rate and the GPU's LLC demand misses.
    let runs: Vec<(f64, f64)> = crate::par_counted(&cases, "timed runs", |&(j, s, b)| {
        let r = o
            .runs
            .sim(&configs[s], bars[b].1, &inputs[j], &SimOptions::default())
            .with_context(|| format!("{} ({}, {})", o.scenes[j], systems[s].label, bars[b].0))?;
        let fps = r
            .gpu
            .as_ref()
            .and_then(|g| g.render.as_ref())
            .map(|x| x.fps)
            .with_context(|| format!("{}: the run reported no frame rate", o.scenes[j]))?;
        let c = r.functional.llc().counts.class_total(true);
        Ok((fps, (c.read_misses + c.write_misses) as f64))
    })?;
    let at = |j: usize, s: usize, b: usize| runs[(j * systems.len() + s) * bars.len() + b].0;
    let misses = |j: usize, s: usize, b: usize| runs[(j * systems.len() + s) * bars.len() + b].1;
    let mut records = Vec::new();
    for (s, sys) in systems.iter().enumerate() {
        for (b, (label, _)) in bars.iter().enumerate() {
            let (mut norm, mut miss_norm) = (Vec::new(), Vec::new());
            for (j, scene) in o.scenes.iter().enumerate() {
                let v = at(j, s, b) / at(j, s, 0);
                let m = misses(j, s, b) / misses(j, s, 0);
                norm.push(v);
                miss_norm.push(m);
                for (metric, value) in [
                    ("fps_norm", v),
                    ("fps", at(j, s, b)),
                    ("llc_misses_norm", m),
                ] {
                    records.push(Record::new(sys.label, scene, label, metric, value));
                }
            }
            let raw: Vec<f64> = (0..o.scenes.len()).map(|j| at(j, s, b)).collect();
            for (metric, value) in [
                ("fps_norm", geomean(&norm)),
                ("fps", geomean(&raw)),
                ("llc_misses_norm", geomean(&miss_norm)),
            ] {
                records.push(Record::new(sys.label, "mean", label, metric, value));
            }
        }
    }
    Ok(StudyOutput {
        study: fig.name().into(),
        title: format!(
            "{}; {} frame(s) of each scene at {}x{}, seed {}{}",
            fig.title(),
            o.frames,
            o.width,
            o.height,
            o.seed,
            crate::overrides_note(&o.overrides)
        ),
        paper: fig.paper().into(),
        records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(scenes: &[&str]) -> Options {
        Options {
            scenes: scenes.iter().map(|s| s.to_string()).collect(),
            width: 160,
            height: 128,
            frames: 1,
            seed: 1,
            overrides: Vec::new(),
            cache: None,
            runs: crate::runs::Runs::default(),
        }
    }

    #[test]
    fn frame_rates_are_normalized_to_drrip_on_the_same_scene_and_system() {
        let out = run(Figure::Fig17, &small(&["lake"])).unwrap();
        for sys in ["DDR3-1867", "512-context GPU"] {
            assert_eq!(out.get(sys, "lake", "DRRIP", "fps_norm"), 1.0);
            let drrip = out.get(sys, "lake", "DRRIP", "fps");
            let gspc = out.get(sys, "lake", "GSPC", "fps");
            assert!(drrip > 0.0 && gspc > 0.0);
            assert_eq!(out.get(sys, "lake", "GSPC", "fps_norm"), gspc / drrip);
            assert_eq!(out.get(sys, "mean", "GSPC", "fps_norm"), gspc / drrip);
        }
        // The two panels are different systems.
        assert_ne!(
            out.get("512-context GPU", "lake", "DRRIP", "fps"),
            out.get("DDR3-1867", "lake", "DRRIP", "fps")
        );
    }

    #[test]
    fn unknown_scenes_and_zero_frames_are_refused() {
        let e = run(Figure::Fig15, &small(&["castle"])).unwrap_err();
        assert!(format!("{e:#}").contains("unknown scene `castle`"), "{e:#}");
        let mut o = small(&["lake"]);
        o.frames = 0;
        assert!(run(Figure::Fig15, &o).is_err());
    }
}
