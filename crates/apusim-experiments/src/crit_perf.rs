//! gpu-access-criticality-dram-scheduling.txt §3 on the timed machine: which GPU streams the
//! frame rate of a 3D job depends on. Fig. 2 (the GPU's DRAM reads by stream), Fig. 3 (the
//! frame-rate speedup when one stream is made ideal) and Fig. 4 (sets of streams made ideal
//! together, against the sum of their individual speedups).
//!
//! The workloads are the fourteen 3D titles, each run beside its three four-way CPU mixes of
//! §5 (`Hn`, `Ln`, `HLn`) on the criticality paper's system (Table 1: drp §3's CMP with a
//! two-bit SRRIP LLC, preset `crit`). A stream is ideal as §3 defines it: its
//! non-compulsory LLC misses are charged the hit latency and not sent to DRAM, while the LLC
//! policy runs as usual. A title's speedup is the geometric mean over its three mixes (§5:
//! "we report the performance averaged (geometric mean) over the three mixes containing that
//! GPU workload"), and the mean over titles is geometric too.
//!
//! Streams as Fig. 2 groups them: color (C), texture sampler (T: static and dynamic textures),
//! depth (Z: depth and stencil, one buffer in Attila), blitter (B), and everything else of the
//! GPU (O: vertices and indices, HiZ, shader instructions and data, display).

use crate::timed::{bar, crit_mixes, ideal, per_title, title_fps_speedup, Bar};
use crate::{with_means, Mean, StudyOutput};
use anyhow::Result;
use apusim_sim::timed::SimResult;
use apusim_trace::{Agent, Stream};
use std::collections::BTreeMap;

pub use crate::timed::Options;

/// The figures this module reproduces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    /// Fig. 2: the GPU's DRAM reads by stream (fractions).
    Fig2,
    /// Fig. 3: frame-rate speedup with one stream ideal.
    Fig3,
    /// Fig. 4: frame-rate speedup with CT, CTZ, CTZB, CTZBO ideal together ("combined") and
    /// the sum of their streams' individual speedups ("individual").
    Fig4,
}

/// The LLC policy of the criticality paper's baseline (Table 1: two-bit SRRIP).
const BASELINE: &str = "srrip";

/// The stream groups of Fig. 2, as `--ideal` lists (the groups of [`group`]).
pub(crate) const STREAMS: [(&str, &str); 5] = [
    ("C", "color"),
    ("T", "texture"),
    ("Z", "depth,stencil"),
    ("B", "blitter"),
    (
        "O",
        "vertex,vertex-index,hiz,shader-instr,shader-data,display,other",
    ),
];

/// Fig. 4's sets, each a prefix of C, T, Z, B, O.
const SETS: [&str; 4] = ["CT", "CTZ", "CTZB", "CTZBO"];

impl Figure {
    pub fn name(self) -> &'static str {
        match self {
            Figure::Fig2 => "crit-fig2",
            Figure::Fig3 => "crit-fig3",
            Figure::Fig4 => "crit-fig4",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Figure::Fig2 => "the GPU's DRAM reads by stream: color (C), texture (T), depth (Z), blitter (B), other (O) (gpu-access-criticality Fig. 2)",
            Figure::Fig3 => "frame-rate speedup with one stream's non-compulsory LLC misses charged as hits (gpu-access-criticality Fig. 3)",
            Figure::Fig4 => "frame-rate speedup with sets of streams ideal together (combined) and the sum of their individual speedups (individual) (gpu-access-criticality Fig. 4)",
        }
    }

    fn paper(self) -> &'static str {
        match self {
            Figure::Fig2 => "color, texture and depth take the larger share of the GPU's DRAM reads; the distribution varies widely across titles",
            Figure::Fig3 => "each stream's sensitivity differs by title and is not in proportion to its DRAM reads (COD2: color over depth; L4D: color; NFS: texture over depth)",
            Figure::Fig4 => "combined speedup much higher than the accumulated individual speedups in several titles (3DMark06 GT1/GT2, COD2, Crysis, L4D, NFS, COR, UT3)",
        }
    }

    /// Hn, Ln, HLn for the fourteen 3D titles.
    pub fn default_mixes(self) -> Vec<String> {
        crit_mixes(1..=14)
    }

    fn bars(self) -> Vec<Bar> {
        let mut bars = vec![bar("Baseline", BASELINE)];
        if self != Figure::Fig2 {
            bars.extend(STREAMS.iter().map(|(l, s)| ideal(l, BASELINE, s)));
        }
        if self == Figure::Fig4 {
            for set in SETS {
                let streams: Vec<&str> = STREAMS[..set.len()].iter().map(|s| s.1).collect();
                bars.push(ideal(set, BASELINE, &streams.join(",")));
            }
        }
        bars
    }
}

/// The GPU's DRAM reads of a whole run (the GPU's job and any repeats of it while cores ran
/// on; the measured window follows the CPU cores' targets) in Fig. 2's groups (C, T, Z, B,
/// O).
fn reads_by_group(r: &SimResult) -> [u64; 5] {
    let mut out = [0; 5];
    for s in Stream::ALL.iter().filter(|s| !s.is_cpu()) {
        out[group(*s)] += r.functional.memory.get(Agent::GPU, *s).reads;
    }
    out
}

/// The index in [`STREAMS`] of Fig. 2's group of GPU stream `s`: C, T, Z, B, else O.
pub(crate) fn group(s: Stream) -> usize {
    match s {
        Stream::Color => 0,
        Stream::StaticTexture | Stream::DynamicTexture => 1,
        Stream::Depth | Stream::Stencil => 2,
        Stream::Blitter => 3,
        _ => 4,
    }
}

/// Run one figure.
pub fn run(fig: Figure, o: &Options) -> Result<StudyOutput> {
    let names = o.mixes.clone().unwrap_or_else(|| fig.default_mixes());
    let hint = "§3's stream figures are about rendering; use H1-H14, L1-L14, HL1-HL14";
    let bars = fig.bars();
    let records = per_title(fig.name(), names, hint, "crit", o, &bars, |mine, push| {
        if fig == Figure::Fig2 {
            // The reads of the title's mixes together, as fractions of the GPU's DRAM reads.
            let mut reads = [0u64; 5];
            for r in mine {
                for (t, x) in reads.iter_mut().zip(reads_by_group(&r[0])) {
                    *t += x;
                }
            }
            let total: u64 = reads.iter().sum();
            for ((label, _), x) in STREAMS.iter().zip(reads) {
                let share = if total > 0 {
                    x as f64 / total as f64
                } else {
                    f64::NAN
                };
                push(label, "dram_read_share", share);
            }
            return Ok(());
        }
        // Each bar's speedup over the baseline bar, per mix, then the title's geometric mean.
        let speedup: BTreeMap<&str, f64> = bars
            .iter()
            .enumerate()
            .skip(1)
            .map(|(b, bar)| (bar.label.as_str(), title_fps_speedup(mine, b)))
            .collect();
        match fig {
            Figure::Fig3 => {
                for (label, _) in STREAMS {
                    push(label, "fps_speedup", speedup[label]);
                }
            }
            Figure::Fig4 => {
                for set in SETS {
                    push(set, "combined_speedup", speedup[set]);
                    let individual = 1.0
                        + STREAMS[..set.len()]
                            .iter()
                            .map(|(l, _)| speedup[l] - 1.0)
                            .sum::<f64>();
                    push(set, "individual_speedup", individual);
                }
            }
            Figure::Fig2 => unreachable!("handled above"),
        }
        Ok(())
    })?;
    let mean = if fig == Figure::Fig2 {
        Mean::Arithmetic
    } else {
        Mean::Geometric
    };
    Ok(StudyOutput {
        study: fig.name().into(),
        title: format!("{}{}", fig.title(), o.note()),
        paper: fig.paper().into(),
        records: with_means(records, mean),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(mixes: &[&str]) -> Options {
        Options {
            mixes: Some(mixes.iter().map(|m| m.to_string()).collect()),
            instructions: Some(2_000),
            ..Options::default()
        }
    }

    #[test]
    fn fig4_sets_are_prefixes_of_the_streams_and_cuda_mixes_are_refused() {
        let bars = Figure::Fig4.bars();
        let labels: Vec<&str> = bars.iter().map(|b| b.label.as_str()).collect();
        assert_eq!(
            labels,
            ["Baseline", "C", "T", "Z", "B", "O", "CT", "CTZ", "CTZB", "CTZBO"]
        );
        // CTZBO makes every GPU stream ideal, and no CPU stream.
        let all = &bars.last().unwrap().llc_switches.ideal;
        assert!(all.iter().all(|s| !s.is_cpu()));
        assert_eq!(
            all.len(),
            apusim_trace::Stream::ALL
                .iter()
                .filter(|s| !s.is_cpu())
                .count()
        );
        let e = run(Figure::Fig3, &small(&["H15"])).unwrap_err();
        assert!(format!("{e:#}").contains("not a 3D title"), "{e:#}");
    }

    #[test]
    fn fig2_splits_the_gpu_s_dram_reads_by_stream() {
        let out = run(Figure::Fig2, &small(&["H3"])).unwrap();
        let shares: Vec<(&str, f64)> = out
            .records
            .iter()
            .filter(|r| r.workload == "3DMark06 HDR1")
            .map(|r| (r.policy.as_str(), r.value))
            .collect();
        assert_eq!(shares.len(), 5, "{shares:?}");
        let total: f64 = shares.iter().map(|s| s.1).sum();
        assert!((total - 1.0).abs() < 1e-9, "{shares:?}");
        // A lit, textured, depth-tested scene reads color, texture and depth from DRAM.
        for (label, share) in &shares[..3] {
            assert!(*share > 0.01, "{label}: {share}");
        }
    }
}
