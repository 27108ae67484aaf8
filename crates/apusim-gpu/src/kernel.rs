//! One GPGPU kernel through the GPU hierarchy, and the counters of runs as a table or CSV:
//! what `apusim gpu-l1 run` prints and writes, and what adaptive-gpu-l1-bypassing's
//! functional figures (`apusim study bypass-fig1`, ..., crate `apusim-experiments`) run per
//! kernel and L1 configuration.

use crate::config::GpuConfig;
use crate::hierarchy::{run_source, RunResult};
use anyhow::{Context, Result};
use apusim_sim::report::TextTable;
use apusim_workloads::gpgpu::{self, GpgpuParams};
use apusim_workloads::simt::SimtConfig;
use std::fmt::Write as _;

/// Run one GPGPU kernel on `cfg`.
pub fn run_kernel(
    cfg: &GpuConfig,
    kernel: &str,
    size: usize,
    seed: u64,
    track_footprint: bool,
) -> Result<RunResult> {
    let mut src = gpgpu::generate(kernel, &kernel_params(cfg, size, seed))?;
    run_source(cfg, kernel, &mut src, track_footprint)
        .with_context(|| format!("kernel {kernel} on {}", cfg.label()))
}

/// The parameters kernel generation takes on `cfg`: its problem size and seed, and the
/// GPU's SMs and clock (the warps per SM are the generator's default).
pub fn kernel_params(cfg: &GpuConfig, size: usize, seed: u64) -> GpgpuParams {
    GpgpuParams {
        size,
        seed,
        gpu: SimtConfig {
            sms: cfg.sms as u16,
            clock_mhz: cfg.clock_mhz,
            ..SimtConfig::default()
        },
    }
}

/// Every run as CSV, one row per (kernel, configuration).
pub fn to_csv(runs: &[RunResult]) -> String {
    let mut out = String::from(
        "workload,config,predictor,l1_geometry,sms,l1_accesses,l1_hits,l1_misses,l1_read_misses,\
predictions,predicted_bypasses,corrected,bypasses,l1_fills,l1_evictions,zero_reuse_evictions,\
fp_paper,fp_sdbp,l2_accesses,l2_misses,l3_accesses,l3_misses,mem_reads,mem_writes,\
l1_hit_rate,bypass_ratio,coverage,fp_rate_paper,fp_rate_sdbp,zero_reuse_fraction,once_fraction,\
l1_dynamic_energy_nj,storage_bytes_per_l1,storage_bytes_l2\n",
    );
    for r in runs {
        let (m, d) = (&r.metrics, &r.derived);
        let _ = writeln!(
            out,
            "{},{},{},\"{}\",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6},{:.3},{},{}",
            r.workload, r.config, r.predictor.name(), r.l1_geometry, r.sms,
            m.l1_accesses, m.l1_hits, m.l1_misses, m.l1_read_misses, m.predictions,
            m.predicted_bypasses, m.corrected, m.bypasses, m.l1_fills, m.l1_evictions,
            m.zero_reuse_evictions, m.fp_paper, m.fp_sdbp, m.l2_accesses, m.l2_misses,
            m.l3_accesses, m.l3_misses, m.mem_reads, m.mem_writes,
            d.l1_hit_rate, d.bypass_ratio, d.coverage, d.fp_rate_paper, d.fp_rate_sdbp,
            d.zero_reuse_fraction, d.once_fraction, d.l1_dynamic_energy_nj,
            r.storage_bytes_per_l1, r.storage_bytes_l2,
        );
    }
    out
}

/// One line per run: the main counters and §5 figures.
pub fn run_table(runs: &[RunResult]) -> String {
    let mut t = TextTable::new([
        "workload",
        "config",
        "L1 accesses",
        "L1 misses",
        "hit rate",
        "bypass ratio",
        "coverage",
        "fp (§5.3)",
        "fp (SDBP)",
        "zero-reuse",
        "L2 misses",
        "L3 misses",
        "L1 energy nJ",
        "storage B/L1",
    ]);
    for r in runs {
        let (m, d) = (&r.metrics, &r.derived);
        t.row(vec![
            r.workload.clone(),
            r.config.clone(),
            m.l1_accesses.to_string(),
            m.l1_misses.to_string(),
            pct(d.l1_hit_rate),
            pct(d.bypass_ratio),
            pct(d.coverage),
            pct(d.fp_rate_paper),
            pct(d.fp_rate_sdbp),
            pct(d.zero_reuse_fraction),
            m.l2_misses.to_string(),
            m.l3_misses.to_string(),
            format!("{:.0}", d.l1_dynamic_energy_nj),
            format!("{:.0}", r.storage_bytes_per_l1),
        ]);
    }
    t.render()
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}
