//! gpu-access-criticality §6.1.1–§6.1.2 on the timed machine: how good the render
//! pipeline's critical-access identification and frame-rate estimation are. Fig. 8 (the
//! frame-rate gain when the critical, or the non-critical, GPU accesses' non-compulsory LLC
//! misses are charged as hits), Fig. 9 (the GPU accesses by stream, critical and not) and
//! Fig. 10 (the frame-rate estimation error).
//!
//! The workloads are the fourteen 3D titles, each beside its three four-way CPU mixes of §5
//! (`Hn`, `Ln`, `HLn`), on preset `crit` (Table 1's system with the 3D GPU, two-bit SRRIP,
//! FR-FCFS). The built-in scenes render at hundreds of frames per second, far above the
//! paper's 40 FPS target, which would leave every access unmarked once a frame has been
//! learned; so these figures mark with no target (`timing.render.target_fps = 0`), i.e. as
//! if every title were below it (a `--set timing.render.target_fps=...` overrides it). A
//! title's speedup is the geometric mean over its three mixes (§5); its shares add its
//! mixes' accesses; its estimation error is the mean over the predicted frames of its mixes.

use crate::crit_perf::{group, STREAMS};
use crate::timed::{bar, crit_mixes, per_title, title_fps_speedup, Bar, Options};
use crate::{with_means, Mean, StudyOutput};
use anyhow::{bail, Result};
use apusim_sim::timed::SimResult;
use apusim_sim::LlcSwitches;
use apusim_trace::Stream;

/// The figures this module reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Fig. 8: frame-rate gain with the critical or the non-critical accesses ideal.
    Fig8,
    /// Fig. 9: the GPU's accesses by stream, critical (C, T, Z, B, O) and not (NC).
    Fig9,
    /// Fig. 10: the frame-rate estimation error.
    Fig10,
}

/// The LLC policy of the paper's baseline (Table 1: two-bit SRRIP).
const BASELINE: &str = "srrip";
/// The paper's system with its 3D GPU.
const PRESET: &str = "crit";
/// Mark critical accesses whatever the frame rate (see the module's text).
const NO_TARGET: &str = "timing.render.target_fps=0";

impl Figure {
    pub fn name(self) -> &'static str {
        match self {
            Figure::Fig8 => "crit-fig8",
            Figure::Fig9 => "crit-fig9",
            Figure::Fig10 => "crit-fig10",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Figure::Fig8 => "frame-rate gain with the non-compulsory LLC misses of the critical (or the non-critical) GPU accesses charged as hits (gpu-access-criticality Fig. 8)",
            Figure::Fig9 => "the GPU's accesses, critical color (C), texture (T), depth (Z), blitter (B), other (O), and non-critical (NC) (gpu-access-criticality Fig. 9)",
            Figure::Fig10 => "frame-rate estimation error of the predicted frames, projected over measured frame rate minus one (gpu-access-criticality Fig. 10)",
        }
    }

    fn paper(self) -> &'static str {
        match self {
            Figure::Fig8 => "critical ideal +48% FPS on average, non-critical ideal +13%; every title but L4D gains more with the critical accesses ideal; COR loses with the non-critical ones ideal",
            Figure::Fig9 => "62% of the accesses critical on average; the distribution varies widely across titles",
            Figure::Fig10 => "several titles at zero error; at most +6% (UT2004) and -4% (COR); below 1% on average",
        }
    }

    /// Hn, Ln, HLn for the fourteen 3D titles.
    pub fn default_mixes(self) -> Vec<String> {
        crit_mixes(1..=14)
    }

    fn bars(self) -> Vec<Bar> {
        let mut bars = vec![bar("Baseline", BASELINE)];
        if self == Figure::Fig8 {
            for (label, which) in [("Critical", true), ("Non-critical", false)] {
                bars.push(Bar {
                    llc_switches: LlcSwitches {
                        ideal_critical: Some(which),
                        ..LlcSwitches::default()
                    },
                    ..bar(label, BASELINE)
                });
            }
        }
        bars
    }
}

/// A run's GPU accesses: critical by group, and non-critical.
fn marked(r: &SimResult) -> Result<([u64; 5], u64)> {
    let Some(c) = r
        .gpu
        .as_ref()
        .and_then(|g| g.render.as_ref())
        .and_then(|x| x.criticality.as_ref())
    else {
        bail!("the run has no render pipeline report");
    };
    let mut crit = [0u64; 5];
    for s in Stream::ALL.iter().filter(|s| !s.is_cpu()) {
        crit[group(*s)] += c.counters.critical[s.to_byte() as usize & 15];
    }
    Ok((crit, c.counters.non_critical.iter().sum()))
}

/// A run's predicted frames' estimation errors.
fn errors(r: &SimResult) -> Vec<f64> {
    r.gpu
        .as_ref()
        .and_then(|g| g.render.as_ref())
        .and_then(|x| x.criticality.as_ref())
        .map(|c| c.estimates.iter().map(|e| e.error).collect())
        .unwrap_or_default()
}

/// Run one figure.
pub fn run(fig: Figure, o: &Options) -> Result<StudyOutput> {
    let names = o.mixes.clone().unwrap_or_else(|| fig.default_mixes());
    let hint = "§6.1 is about rendering; use H1-H14, L1-L14, HL1-HL14";
    let mut opts = o.clone();
    opts.overrides.insert(0, NO_TARGET.to_string());
    opts.instructions = opts
        .instructions
        .or(Some(crate::crit_sched::DEFAULT_INSTRUCTIONS));
    let bars = fig.bars();
    let records = per_title(
        fig.name(),
        names,
        hint,
        PRESET,
        &opts,
        &bars,
        |mine, push| {
            match fig {
                Figure::Fig8 => {
                    for (b, bar) in bars.iter().enumerate().skip(1) {
                        push(&bar.label, "fps_gain", title_fps_speedup(mine, b) - 1.0);
                    }
                }
                Figure::Fig9 => {
                    let (mut crit, mut non) = ([0u64; 5], 0u64);
                    for r in mine {
                        let (c, n) = marked(&r[0])?;
                        for (t, x) in crit.iter_mut().zip(c) {
                            *t += x;
                        }
                        non += n;
                    }
                    let total = (crit.iter().sum::<u64>() + non).max(1) as f64;
                    for ((label, _), x) in STREAMS.iter().zip(crit) {
                        push(label, "share", x as f64 / total);
                    }
                    push("NC", "share", non as f64 / total);
                }
                Figure::Fig10 => {
                    let e: Vec<f64> = mine.iter().flat_map(|r| errors(&r[0])).collect();
                    let mean = if e.is_empty() {
                        f64::NAN
                    } else {
                        e.iter().sum::<f64>() / e.len() as f64
                    };
                    push("Estimate", "error", mean);
                    push("Estimate", "frames", e.len() as f64);
                }
            }
            Ok(())
        },
    )?;
    Ok(StudyOutput {
        study: fig.name().into(),
        title: format!("{}{}", fig.title(), opts.note()),
        paper: fig.paper().into(),
        records: with_means(records, Mean::Arithmetic),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fig8_bars_and_cuda_mixes_are_refused() {
        let labels: Vec<String> = Figure::Fig8.bars().into_iter().map(|b| b.label).collect();
        assert_eq!(labels, ["Baseline", "Critical", "Non-critical"]);
        let o = Options {
            mixes: Some(vec!["H15".into()]),
            instructions: Some(2_000),
            ..Options::default()
        };
        let e = run(Figure::Fig9, &o).unwrap_err();
        assert!(format!("{e:#}").contains("not a 3D title"), "{e:#}");
    }

    #[test]
    fn streams_fall_into_fig9_groups() {
        assert_eq!(group(Stream::Color), 0);
        assert_eq!(group(Stream::DynamicTexture), 1);
        assert_eq!(group(Stream::StaticTexture), 1);
        assert_eq!(group(Stream::Stencil), 2);
        assert_eq!(group(Stream::Blitter), 3);
        assert_eq!(group(Stream::HiZ), 4);
        assert_eq!(group(Stream::ShaderInstr), 4);
    }
}
