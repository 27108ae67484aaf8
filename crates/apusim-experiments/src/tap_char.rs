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

use crate::jobs::{alone_inputs, TraceDir};
use crate::runs::{PlannedInput, PlannedRun};
use crate::timed::Options;
use crate::{Record, StudyOutput};
use anyhow::{bail, Context, Result};
use apusim_sim::timed::{SimOptions, SimResult};
use apusim_sim::SystemConfig;
use apusim_workloads::cpu;
use apusim_workloads::gpgpu::{self, Behaviour};
use apusim_workloads::mixes::{self, Job};

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

/// The applications characterized by default: every GPGPU kernel but adaptive-gpu-l1-
/// bypassing Table 2's own versions of kernels the pool already has ([`gpgpu::TABLE2_ONLY`]:
/// the same algorithms with that paper's implementation and input, which would only compete
/// with their originals for the TAP mixes' stand-ins).
pub fn default_workloads() -> Vec<String> {
    gpgpu::KERNELS
        .iter()
        .filter(|k| !gpgpu::TABLE2_ONLY.contains(&k.name))
        .map(|k| k.name.to_string())
        .collect()
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

/// The GPGPU kernel of each type A–E for the TAP mixes, from measured `(kernel, curves)`
/// in `apusim gpgpu` order (the rule `apusim_workloads::mixes`' `TAP-*` mixes follow): per
/// type, a kernel listed with that type (tap Table 6) that measures so, else the first one
/// measured as that type and not already taken; a type no kernel measures takes the kernel
/// closest to it among those not taken — for A, the lowest MPKI at the smallest LLC among
/// kernels whose CPI stays within 25% of the ideal at every size. `None` for a type with no
/// candidate.
pub fn tap_kernels(measured: &[(&str, Curves)]) -> Vec<(char, Option<String>)> {
    let typed: Vec<(&str, Behaviour, &Curves)> = measured
        .iter()
        .map(|(k, c)| (*k, classify(c, IDEAL_GPU_CPI), c))
        .collect();
    let listed = |k: &str| gpgpu::info(k).map(|i| i.behaviour);
    let mut taken: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    // Types that some kernel measures pick first, so a stand-in never takes their kernel.
    let mut order: Vec<Behaviour> = Behaviour::ALL.to_vec();
    order.sort_by_key(|t| !typed.iter().any(|(_, b, _)| b == t));
    for t in order {
        let of_type = || typed.iter().filter(|(_, b, _)| *b == t);
        let pick = of_type()
            .find(|(k, _, _)| listed(k) == Some(t) && !taken.contains(k))
            .or_else(|| of_type().find(|(k, _, _)| !taken.contains(k)))
            .map(|(k, _, _)| *k)
            .or_else(|| match t {
                Behaviour::A => typed
                    .iter()
                    .filter(|(k, _, c)| {
                        !taken.contains(k) && c.cpi.iter().all(|x| *x <= 1.25 * IDEAL_GPU_CPI)
                    })
                    .min_by(|a, b| a.2.mpki[0].total_cmp(&b.2.mpki[0]))
                    .map(|(k, _, _)| *k),
                _ => None,
            });
        if let Some(k) = pick {
            taken.push(k);
        }
        out.push((t.letter(), pick.map(str::to_string)));
    }
    out.sort();
    out
}

/// The job running application `name` (a GPGPU kernel, else a CPU kernel retiring
/// `instructions`) at `scale`.
fn job(name: &str, scale: u64, seed: u64, instructions: u64) -> Result<Job> {
    if gpgpu::info(name).is_some() {
        return crate::jobs::kernel_job(name, scale, seed);
    }
    if cpu::info(name).is_some() {
        return Ok(mixes::cpu_alone_job(name, scale, Some(instructions), seed)?);
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

/// The `--set` overrides of preset `tap` for a characterization LLC of `ways` ways at
/// [`SETS`] sets, and its size in KB.
fn llc_set(overrides: &[String], ways: u32) -> (Vec<String>, u64) {
    let kb = u64::from(SETS * ways) * 64 / 1024;
    let mut set = overrides.to_vec();
    set.push(format!("llc.geometry={kb}K,{ways},64"));
    (set, kb)
}

/// The one-core system of the characterization with `ways` LLC ways, and its LLC's size in
/// KB.
fn system(o: &Options, ways: u32) -> Result<(SystemConfig, u64)> {
    let (set, kb) = llc_set(&o.overrides, ways);
    let mut cfg = SystemConfig::load_preset("tap", &set)?;
    cfg.cpus = 1;
    cfg.seed = o.seed;
    Ok((cfg, kb))
}

/// Application `name` with `ways` LLC ways as the sweep point that is the same run, on
/// preset `tap` with the LLC's geometry and one core as `set` overrides: a GPGPU kernel
/// alone on the GPU (the core idle), or a CPU application alone on the core.
fn planned(o: &Options, name: &str, ways: u32, target: u64) -> Result<PlannedRun> {
    let (cfg, _) = system(o, ways)?;
    let (set, _) = llc_set(&o.overrides, ways);
    let input = if gpgpu::info(name).is_some() {
        PlannedInput::Kernel(name.to_string())
    } else {
        PlannedInput::Cpu(name.to_string())
    };
    let mut run = PlannedRun::alone("tap", set, &cfg, "lru", input, (o.scale, o.seed));
    run.warmup = o.warmup;
    run.instructions = Some(target);
    Ok(run)
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
    let cases: Vec<(usize, usize)> = (0..jobs.len())
        .flat_map(|a| (0..WAYS.len()).map(move |w| (a, w)))
        .collect();
    o.runs.plan(|| {
        cases
            .iter()
            .map(|&(a, w)| planned(o, &names[a], WAYS[w], target))
            .collect()
    })?;
    let traces = TraceDir::new(o.cache.as_deref())?;
    let dir = traces.path().to_path_buf();
    let inputs = alone_inputs(&dir, &jobs)?;
    let points: Vec<(f64, f64)> = crate::par_counted(&cases, "timed runs", |&(a, w)| {
        let (cfg, kb) = system(o, WAYS[w])?;
        let opts = SimOptions {
            warmup: o.warmup,
            instructions: Some(target),
            ..SimOptions::default()
        };
        let r = o
            .runs
            .sim(&cfg, "lru", &inputs[a], &opts)
            .with_context(|| format!("{} with a {kb} KB LLC", names[a]))?;
        point(&r)
    })?;
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
                records.push(Record::new(&config, name, &size, metric, v));
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

    /// `apusim study tap-fig2 --instructions 500000` (seed 1, scale 1): every GPGPU kernel's
    /// measured type and curves, in `apusim gpgpu` order (docs/results.md).
    const MEASURED: &[(&str, char, [f64; 6], [f64; 6])] = &[
        (
            "matrixmul",
            'D',
            [2.0044, 2.0158, 2.0157, 2.0164, 2.0041, 2.0041],
            [25.1991, 24.8177, 11.58, 3.1217, 3.1217, 3.1217],
        ),
        (
            "spmv",
            'C',
            [10.0168, 8.9115, 8.9115, 8.9115, 8.9115, 8.9115],
            [371.765, 85.5789, 85.5789, 85.5789, 85.5789, 85.5789],
        ),
        (
            "bfs",
            'D',
            [3.3472, 3.1085, 3.063, 3.0878, 3.0763, 3.0763],
            [83.1974, 34.6614, 24.3191, 18.9825, 17.9253, 17.9253],
        ),
        (
            "nn",
            'C',
            [11.3111, 10.9417, 10.813, 9.8309, 8.4277, 8.4277],
            [599.764, 599.764, 599.764, 599.764, 599.764, 599.764],
        ),
        (
            "kmeans",
            'C',
            [5.5909, 5.6392, 5.5758, 3.7685, 3.1166, 3.1166],
            [394.463, 394.437, 394.402, 236.339, 26.921, 26.921],
        ),
        (
            "backprop",
            'C',
            [3.8012, 3.5807, 2.6244, 2.4673, 2.4673, 2.4673],
            [144.158, 143.05, 103.096, 95.5166, 95.5166, 95.5166],
        ),
        (
            "hotspot",
            'C',
            [5.1416, 4.0788, 4.1946, 3.9488, 2.3115, 2.3115],
            [280.091, 206.026, 205.027, 204.346, 51.2664, 51.2664],
        ),
        (
            "srad",
            'C',
            [10.9919, 10.5355, 10.3702, 10.3478, 10.1965, 3.9403],
            [406.585, 398.065, 392.981, 385.916, 384.791, 96.2396],
        ),
        (
            "lud",
            'D',
            [2.1934, 2.1571, 2.1038, 2.1038, 2.1038, 2.1038],
            [32.5818, 20.7801, 2.3804, 2.3804, 2.3804, 2.3804],
        ),
        (
            "nw",
            'C',
            [9.6417, 8.6273, 6.9072, 5.5212, 5.5212, 5.5212],
            [173.395, 149.841, 112.113, 69.32, 69.32, 69.32],
        ),
        (
            "nw-nospm",
            'C',
            [76.6328, 50.11, 17.9508, 11.9005, 11.8641, 11.8641],
            [985.759, 592.965, 216.498, 63.7758, 63.8501, 63.8501],
        ),
        (
            "lbm",
            'B',
            [24.4127, 24.1419, 23.5209, 21.5818, 19.1041, 22.3542],
            [384.735, 384.026, 383.199, 382.147, 381.661, 381.122],
        ),
        (
            "cfd",
            'C',
            [7.407, 7.0739, 6.577, 5.6804, 4.1789, 2.7005],
            [382.843, 363.926, 337.695, 290.162, 191.736, 53.3404],
        ),
        (
            "reduction",
            'C',
            [5.9662, 5.9743, 6.0925, 6.0945, 4.3118, 4.2362],
            [414.275, 414.281, 414.275, 414.278, 207.395, 207.142],
        ),
        (
            "blackscholes",
            'B',
            [3.302, 3.3282, 3.3135, 3.3778, 3.3237, 3.2003],
            [153.708, 153.707, 153.708, 153.707, 153.707, 153.707],
        ),
        (
            "dct",
            'E',
            [2.0407, 2.1733, 2.1757, 2.1562, 2.1503, 2.1399],
            [73.4887, 72.7294, 72.7278, 72.7278, 72.7278, 72.7278],
        ),
        (
            "fastwalsh",
            'C',
            [7.6866, 8.0906, 7.9584, 7.8387, 2.6565, 2.6565],
            [269.681, 262.644, 242.44, 240.868, 24.2424, 24.2424],
        ),
        (
            "histogram",
            'E',
            [2.1642, 2.1838, 2.1655, 2.1655, 2.1655, 2.1655],
            [149.941, 149.85, 149.832, 149.832, 149.832, 149.832],
        ),
        (
            "sort",
            'C',
            [4.8706, 3.0016, 3.0891, 3.0891, 3.0891, 3.0891],
            [135.273, 25.8566, 24.5061, 24.5061, 24.5061, 24.5061],
        ),
        (
            "bitonic",
            'C',
            [9.6088, 3.0115, 3.0115, 3.0115, 3.0115, 3.0115],
            [360.123, 2.4597, 2.4597, 2.4597, 2.4597, 2.4597],
        ),
        (
            "sobolqrng",
            'B',
            [7.4062, 7.4677, 7.5705, 7.6327, 7.7369, 7.7566],
            [244.541, 244.508, 244.494, 244.485, 244.486, 244.485],
        ),
    ];

    #[test]
    fn the_tap_mixes_take_the_kernels_the_measured_types_give() {
        let measured: Vec<(&str, Curves)> = MEASURED
            .iter()
            .map(|(k, t, cpi, mpki)| {
                let c = Curves {
                    cpi: cpi.to_vec(),
                    mpki: mpki.to_vec(),
                };
                assert_eq!(classify(&c, IDEAL_GPU_CPI).letter(), *t, "{k}");
                (*k, c)
            })
            .collect();
        assert_eq!(measured.len(), default_workloads().len());
        assert!(measured
            .iter()
            .map(|(k, _)| k.to_string())
            .eq(default_workloads()));
        for (t, kernel) in tap_kernels(&measured) {
            let mix = apusim_workloads::mixes::mix(&format!("TAP-1C-{t}")).unwrap();
            let want = kernel.unwrap_or_else(|| panic!("no kernel for type {t}"));
            assert_eq!(
                mix.gpu,
                apusim_workloads::mixes::GpuJob::Gpgpu(gpgpu::info(&want).unwrap().name),
                "type {t}"
            );
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
