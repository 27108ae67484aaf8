//! Comparison with Ramulator 2.1, DRAMsim3 and DRAMSim2 on the traces and configuration of
//! ../shared/reference/dram/README.md (relative to the repository root).
//!
//! `short_reference_traces` runs 20,000-request versions of both traces (seconds in debug
//! builds) with bounds loose enough for the shorter run but tight enough to fail if the model
//! is wrong. `full_reference_traces` (ignored by default; run it in release:
//! `cargo test -p apusim-dram --release --test integration validation:: -- --ignored`) runs the full
//! 2,000,000-request traces and applies the criterion: light-load read latency,
//! bandwidth and row-hit rate, and saturated bandwidth and row-hit rate, inside the range the
//! three simulators span widened by 10%. Both skip (pass with a note) if the generator or
//! python3 is not available.

use apusim_dram::{
    open_trace, presets::preset, run_requests, DramReport, MemorySystem, TraceFormat,
};
use std::path::{Path, PathBuf};
use std::process::Command;

fn generator() -> Option<PathBuf> {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/dram/gen_trace.py");
    p.exists().then_some(p)
}

/// Generate the traces for `interval` with `n` requests; returns (dramsim3, ramulator) paths.
fn make_traces(gen: &Path, n: u64, interval: u64) -> Option<(PathBuf, PathBuf)> {
    let dir = std::env::temp_dir().join(format!("apusim-dram-validation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let prefix = format!("ref_i{interval}_n{n}");
    let status = Command::new("python3")
        .arg(gen)
        .args([
            "--n",
            &n.to_string(),
            "--interval",
            &interval.to_string(),
            "--prefix",
            &prefix,
        ])
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .status()
        .ok()?;
    status.success().then(|| {
        (
            dir.join(format!("{prefix}.dramsim3.trace")),
            dir.join(format!("{prefix}.ramulator2.trace")),
        )
    })
}

fn run(path: &Path, format: TraceFormat, interval: u64) -> DramReport {
    let mut mem = MemorySystem::new(preset("ddr3-1600-11-1ch").unwrap()).unwrap();
    mem.set_report_completions(false);
    run_requests(&mut mem, open_trace(path, format, interval).unwrap()).unwrap();
    mem.report()
}

fn within(what: &str, v: f64, lo: f64, hi: f64) {
    assert!(
        (lo..=hi).contains(&v),
        "{what} = {v:.3} outside [{lo:.3}, {hi:.3}]"
    );
}

/// (light, saturated) reports for `n`-request traces; `None` if the generator is missing.
fn both(n: u64) -> Option<(DramReport, DramReport)> {
    let Some(gen) = generator() else {
        eprintln!("skipped: ../shared/reference/dram/gen_trace.py not found");
        return None;
    };
    let mut out = Vec::new();
    for interval in [16, 4] {
        let Some((d3, r2)) = make_traces(&gen, n, interval) else {
            eprintln!("skipped: python3 could not run gen_trace.py");
            return None;
        };
        let a = run(&d3, TraceFormat::DramSim3, 0);
        // The same trace in Ramulator's time-less format, with the same arrival interval,
        // must give exactly the same result.
        let b = run(&r2, TraceFormat::Ramulator, interval);
        assert_eq!(a, b, "DRAMsim3- and Ramulator-format runs differ");
        let _ = std::fs::remove_file(&d3);
        let _ = std::fs::remove_file(&r2);
        out.push(a);
    }
    let s = out.pop()?;
    let l = out.pop()?;
    Some((l, s))
}

#[test]
fn short_reference_traces() {
    let Some((light, sat)) = both(20_000) else {
        return;
    };
    // Light load: the offered 3.2 GB/s is carried; latency is service time plus small queueing.
    within("light read latency", light.avg_read_latency(), 32.3, 49.5);
    within("light bandwidth", light.bandwidth_gbps(), 3.1, 3.3);
    within("light row-hit rate", light.row_hit_rate(), 0.36, 0.50);
    // Saturation: the channel, not the trace, sets the pace.
    within("saturated bandwidth", sat.bandwidth_gbps(), 7.0, 9.6);
    within("saturated row-hit rate", sat.row_hit_rate(), 0.34, 0.50);
    assert!(
        sat.avg_read_latency() > 150.0,
        "saturated latency {}",
        sat.avg_read_latency()
    );
    assert!(sat.total.read_queue.max == 32 && sat.total.access.stall_cycles > 0);
}

/// The acceptance criterion of the issue on the full traces (slow in debug builds).
#[test]
#[ignore]
fn full_reference_traces() {
    let Some((light, sat)) = both(2_000_000) else {
        return;
    };
    // [min, max] over Ramulator 2.1, DRAMsim3, DRAMSim2, widened by 10%.
    within(
        "light read latency",
        light.avg_read_latency(),
        35.9 * 0.9,
        45.0 * 1.1,
    );
    within(
        "light bandwidth",
        light.bandwidth_gbps(),
        3.199 * 0.9,
        3.200 * 1.1,
    );
    within(
        "light row-hit rate",
        light.row_hit_rate(),
        0.424 * 0.9,
        0.442 * 1.1,
    );
    within(
        "saturated bandwidth",
        sat.bandwidth_gbps(),
        7.787 * 0.9,
        8.671 * 1.1,
    );
    within(
        "saturated row-hit rate",
        sat.row_hit_rate(),
        0.404 * 0.9,
        0.454 * 1.1,
    );
}
