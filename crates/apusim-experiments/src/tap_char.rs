//! tap-tlp-aware-llc.txt §2.2's application characterization (Figs. 2 and 3), timed: each
//! application alone on the tap Table 4 system (preset `tap`) with the LLC grown from one way
//! to 32 ways at a fixed 4096 sets (256 KB to 8 MB, LRU), its CPI and LLC MPKI at each size,
//! and the type A–E it falls in by §2.2's definitions.
//!
//! A GPGPU application runs on the six SIMT cores with no CPU application beside it; its CPI
//! is per shader core (the cores' count over the GPU's warp instructions per GPU cycle), so
//! the ideal is Table 4's "2-wide 8-SIMD" issue of two warp instructions every four cycles:
//! CPI 2, as Fig. 2's caption says. A CPU application runs alone on one core to its
//! instruction target. MPKI counts the application's LLC demand misses per thousand (warp)
//! instructions.
//!
//! # Classification
//!
//! §2.2 defines the types by the shape of the two curves; apusim turns the words into these
//! tests, in this order, with `CPI₁`, `MPKI₁` at one way and `CPI₃₂`, `MPKI₃₂` at 32 ways:
//!
//! - **C** (cache-friendly: "more caching improves the cache hit rate as well as
//!   performance"): `CPI₁ / CPI₃₂ ≥ 1.10`, a tenth faster with 32 times the cache.
//! - **A** ("very few memory instructions ... CPI close to the ideal CPI, and MPKI is also
//!   very low"): `MPKI₁ < 1`.
//! - **D** ("MPKI is reduced as the cache size increases, but there is little performance
//!   improvement"): `MPKI₃₂ ≤ MPKI₁ / 2`.
//! - **E** ("cache MPKI is very high ... the observed CPI is very close to the ideal CPI"):
//!   `CPI₃₂ ≤ 1.25 × ideal`.
//! - **B** otherwise (thrashing: "CPI is high and MPKI is extremely high").
//!
//! The thresholds (10%, 1 MPKI, a halving, 25% above ideal) are apusim's reading of "little",
//! "very low" and "very close"; the paper gives no numbers. The type a kernel is listed with
//! (`apusim gpgpu`, from tap Table 6 or its measured behaviour) is shown beside the measured
//! one.

use crate::jobs::{prepare_all, JobInputs, TraceDir};
use crate::timed::Options;
use crate::{Record, StudyOutput};
use anyhow::{bail, Context, Result};
use apusim_sim::timed::{sim_policy, SimOptions, SimResult};
use apusim_sim::SystemConfig;
use apusim_workloads::cpu::{self, CpuParams};
use apusim_workloads::gpgpu::{self, Behaviour, GpgpuParams};
use apusim_workloads::mixes::{Job, JobSpec};
use rayon::prelude::*;

/// LLC ways of Figs. 2 and 3 at 4096 sets of 64-byte lines: 256 KB to 8 MB.
pub const WAYS: [u32; 6] = [1, 2, 4, 8, 16, 32];

/// Sets of the characterization LLC (tap §2.2: "we fix the number of cache sets (4096 sets)").
const SETS: u32 = 4096;

/// Table 4's ideal CPI of a shader core (two warp instructions every four cycles).
pub const IDEAL_GPU_CPI: f64 = 2.0;

/// Instructions a CPU application retires when no target is given.
const CPU_INSTRUCTIONS: u64 = 1_000_000;

/// The study's name.
pub const NAME: &str = "tap-fig2";

/// The applications characterized by default: every GPGPU kernel.
pub fn default_workloads() -> Vec<String> {
    gpgpu::KERNELS.iter().map(|k| k.name.to_string()).collect()
}

/// One application's curves: CPI and MPKI at each of [`WAYS`].
#[derive(Clone, Debug, PartialEq)]
pub struct Curves {
    pub cpi: Vec<f64>,
    pub mpki: Vec<f64>,
}

/// §2.2's type of an application with `curves` (see the module documentation); `ideal` is
/// its ideal CPI.
pub fn classify(c: &Curves, ideal: f64) -> Behaviour {
    let (cpi1, cpi32) = (c.cpi[0], c.cpi[c.cpi.len() - 1]);
    let (mpki1, mpki32) = (c.mpki[0], c.mpki[c.mpki.len() - 1]);
    if cpi1 >= 1.10 * cpi32 {
        Behaviour::C
    } else if mpki1 < 1.0 {
        Behaviour::A
    } else if mpki32 <= mpki1 / 2.0 {
        Behaviour::D
    } else if cpi32 <= 1.25 * ideal {
        Behaviour::E
    } else {
        Behaviour::B
    }
}

/// The job running application `name` (a GPGPU kernel, else a CPU kernel) at `scale`.
fn job(name: &str, scale: u64, seed: u64, instructions: u64) -> Result<Job> {
    if let Some(k) = gpgpu::info(name) {
        return Ok(Job {
            label: format!("gpu {}", k.name),
            spec: JobSpec::Gpgpu {
                kernel: k.name,
                params: GpgpuParams {
                    size: if scale > 1 { k.scaled_size(scale) } else { 0 },
                    seed,
                    ..GpgpuParams::default()
                },
            },
        });
    }
    if let Some(k) = cpu::info(name) {
        return Ok(Job {
            label: format!("cpu0 {}", k.name),
            spec: JobSpec::Cpu {
                kernel: k.name,
                params: CpuParams {
                    core: 0,
                    instructions,
                    size: 0,
                    seed,
                },
            },
        });
    }
    bail!("{NAME}: `{name}` is neither a GPGPU kernel (`apusim gpgpu`) nor a CPU kernel")
}

/// CPI and LLC MPKI of the application of a run.
fn point(r: &SimResult) -> Result<(f64, f64)> {
    if let Some(g) = &r.gpu {
        let c = r.functional.llc().counts.class_total(true);
        let misses = c.read_misses + c.write_misses;
        let instr = g.stats.warp_instructions.max(1) as f64;
        return Ok((f64::from(g.sms) / g.ipc, misses as f64 * 1000.0 / instr));
    }
    let c = r.cores.first().context("a run without a core")?;
    let mpki = c.levels.last().map_or(0.0, |l| l.mpki);
    Ok((c.cycles as f64 / c.instructions.max(1) as f64, mpki))
}

/// Run the characterization.
pub fn run(o: &Options) -> Result<StudyOutput> {
    let names = o.mixes.clone().unwrap_or_else(default_workloads);
    if names.is_empty() {
        bail!("{NAME}: give at least one application");
    }
    let target = o.instructions.unwrap_or(CPU_INSTRUCTIONS);
    let jobs: Vec<Job> = names
        .iter()
        .map(|n| job(n, o.scale, o.seed, o.warmup + target))
        .collect::<Result<_>>()?;
    let traces = TraceDir::new(o.cache.as_deref())?;
    let dir = traces.path().to_path_buf();
    let inputs: Vec<JobInputs> = jobs
        .iter()
        .map(|j| {
            JobInputs::new(
                vec![j.clone()],
                Some(dir.clone()),
                format!("{} alone", j.label),
            )
        })
        .collect();
    prepare_all(&dir, &inputs)?;
    let cases: Vec<(usize, usize)> = (0..inputs.len())
        .flat_map(|a| (0..WAYS.len()).map(move |w| (a, w)))
        .collect();
    let progress = apusim_sim::run::count_bar(cases.len(), "timed runs");
    let points: Vec<(f64, f64)> = cases
        .par_iter()
        .map(|&(a, w)| {
            let ways = WAYS[w];
            let kb = u64::from(SETS * ways) * 64 / 1024;
            let mut set = o.overrides.clone();
            set.push(format!("llc.geometry={kb}K,{ways},64"));
            let mut cfg = SystemConfig::load_preset("tap", &set)?;
            cfg.cpus = 1;
            cfg.seed = o.seed;
            let opts = SimOptions {
                warmup: o.warmup,
                instructions: Some(target),
                ..SimOptions::default()
            };
            let r = sim_policy(&cfg, "lru", &inputs[a], &opts)
                .with_context(|| format!("{} with a {kb} KB LLC", names[a]))?;
            if let Some(p) = &progress {
                p.inc(1);
            }
            point(&r)
        })
        .collect::<Result<_>>()?;
    if let Some(p) = progress {
        p.finish_and_clear();
    }
    let mut records = Vec::new();
    for (a, name) in names.iter().enumerate() {
        let pts = &points[a * WAYS.len()..(a + 1) * WAYS.len()];
        let curves = Curves {
            cpi: pts.iter().map(|p| p.0).collect(),
            mpki: pts.iter().map(|p| p.1).collect(),
        };
        let gpu = gpgpu::info(name);
        let ideal = if gpu.is_some() {
            IDEAL_GPU_CPI
        } else {
            // A 4-wide core's ideal CPI.
            0.25
        };
        let measured = classify(&curves, ideal).letter();
        let config = match gpu {
            Some(k) => format!("type {measured} (listed {})", k.behaviour.letter()),
            None => format!("type {measured} (CPU)"),
        };
        for (w, ways) in WAYS.iter().enumerate() {
            let size = format!("{}KB", u64::from(SETS * ways) * 64 / 1024);
            for (metric, v) in [("cpi", curves.cpi[w]), ("mpki", curves.mpki[w])] {
                records.push(Record {
                    config: config.clone(),
                    workload: name.clone(),
                    policy: size.clone(),
                    metric: metric.into(),
                    value: v,
                });
            }
        }
    }
    // Types in order A-E, applications in the given order within a type.
    records.sort_by(|a, b| a.config[..6].cmp(&b.config[..6]));
    Ok(StudyOutput {
        study: NAME.into(),
        title: format!(
            "CPI and LLC MPKI of each application alone with 1 to 32 LLC ways at 4096 sets \
             (256 KB to 8 MB, LRU), and its type A-E (tap Figs. 2 and 3){}",
            o.note()
        ),
        paper: "A: CPI near ideal (2), MPKI very low; B: CPI and MPKI high, flat; C: both fall \
                with cache size; D: MPKI falls, CPI flat; E: MPKI high and flat, CPI near ideal"
            .into(),
        records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curves(cpi: [f64; 2], mpki: [f64; 2]) -> Curves {
        Curves {
            cpi: vec![cpi[0], cpi[0], cpi[0], cpi[1], cpi[1], cpi[1]],
            mpki: vec![mpki[0], mpki[0], mpki[0], mpki[1], mpki[1], mpki[1]],
        }
    }

    #[test]
    fn the_paper_s_five_shapes_get_their_types() {
        // Fig. 2: A flat near ideal with no misses; B high and flat; C both falling.
        assert_eq!(
            classify(&curves([2.05, 2.0], [0.2, 0.1]), 2.0),
            Behaviour::A
        );
        assert_eq!(
            classify(&curves([9.0, 8.8], [40.0, 38.0]), 2.0),
            Behaviour::B
        );
        assert_eq!(
            classify(&curves([6.0, 3.0], [30.0, 5.0]), 2.0),
            Behaviour::C
        );
        // Fig. 3: D's misses fall without its CPI; E misses a lot at near-ideal CPI.
        assert_eq!(
            classify(&curves([2.3, 2.2], [30.0, 4.0]), 2.0),
            Behaviour::D
        );
        assert_eq!(
            classify(&curves([2.2, 2.2], [30.0, 29.0]), 2.0),
            Behaviour::E
        );
    }
}
