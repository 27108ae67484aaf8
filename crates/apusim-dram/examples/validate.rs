//! Reproduce the comparison of docs/dram-validation.md: generate the reference traces with
//! `../shared/reference/dram/gen_trace.py`, run them through the `ddr3-1600-11-1ch` preset at
//! `--interval 16` and `--interval 4`, and print our figures next to those of Ramulator 2.1,
//! DRAMsim3 and DRAMSim2 (from the README of the reference measurements).
//!
//! ```text
//! cargo run --release -p apusim-dram --example validate -- [--n 2000000] [--gen PATH] [--dir DIR] [--set KEY=VALUE]...
//! ```
//!
//! Exits non-zero if a figure falls outside the range the three simulators span, widened by
//! 10% (read latency, bandwidth and row-hit rate at light load; bandwidth and row-hit rate at
//! saturation).

use apusim_dram::{open_trace, presets::preset, run_requests, MemorySystem, TraceFormat};
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

/// (simulator, interval, cycles, avg read latency, GB/s, row-hit rate or NaN, M req/s)
const REFERENCE: &[(&str, u64, u64, f64, f64, f64, f64)] = &[
    ("Ramulator 2.1", 16, 31_999_984, 41.3, 3.200, 0.424, 1.12),
    ("DRAMsim3", 16, 32_000_000, 45.0, 3.200, 0.442, 0.44),
    ("DRAMSim2", 16, 32_010_000, 35.9, 3.199, f64::NAN, 0.45),
    ("Ramulator 2.1", 4, 12_498_560, 290.9, 8.193, 0.404, 0.38),
    ("DRAMsim3", 4, 11_810_000, 419.5, 8.671, 0.454, 0.31),
    ("DRAMSim2", 4, 13_150_000, 341.4, 7.787, f64::NAN, 0.29),
];

fn range(interval: u64, f: impl Fn(&(&str, u64, u64, f64, f64, f64, f64)) -> f64) -> (f64, f64) {
    let v: Vec<f64> = REFERENCE
        .iter()
        .filter(|r| r.1 == interval)
        .map(f)
        .filter(|x| !x.is_nan())
        .collect();
    let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    (lo * 0.9, hi * 1.1)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut n: u64 = 2_000_000;
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut gen = repo.join("../shared/reference/dram/gen_trace.py");
    let mut dir = std::env::temp_dir().join("apusim-dram-validate");
    let mut sets: Vec<(String, String)> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--set" => {
                let kv = it.next().expect("--set KEY=VALUE");
                let (k, v) = kv.split_once('=').expect("--set KEY=VALUE");
                sets.push((k.to_string(), v.to_string()));
            }
            "--n" => n = it.next().and_then(|v| v.parse().ok()).expect("--n N"),
            "--gen" => gen = PathBuf::from(it.next().expect("--gen PATH")),
            "--dir" => dir = PathBuf::from(it.next().expect("--dir DIR")),
            _ => panic!("unknown argument {a}"),
        }
    }
    std::fs::create_dir_all(&dir).expect("create trace dir");
    let mut ok = true;
    println!("| simulator | trace | DRAM cycles to finish | avg read latency (DRAM cycles) | bandwidth GB/s | row-hit rate | requests simulated per CPU second |");
    println!("|---|---|---|---|---|---|---|");
    for interval in [16u64, 4] {
        let prefix = format!("ref_i{interval}_n{n}");
        let d3 = dir.join(format!("{prefix}.dramsim3.trace"));
        if !d3.exists() {
            let st = Command::new("python3")
                .arg(&gen)
                .args([
                    "--n",
                    &n.to_string(),
                    "--interval",
                    &interval.to_string(),
                    "--prefix",
                    &prefix,
                ])
                .current_dir(&dir)
                .status()
                .expect("run python3 gen_trace.py");
            assert!(st.success(), "gen_trace.py failed");
        }
        // Parse once (timed separately), then simulate from memory.
        let t0 = Instant::now();
        let reqs: Vec<_> = open_trace(&d3, TraceFormat::DramSim3, 0)
            .expect("open trace")
            .collect::<Result<Vec<_>, _>>()
            .expect("parse trace");
        let parse_s = t0.elapsed().as_secs_f64();
        let config = || {
            let mut c = preset("ddr3-1600-11-1ch").unwrap();
            for (k, v) in &sets {
                c.apply_override(k, v).expect("override");
            }
            c
        };
        let mut mem = MemorySystem::new(config()).unwrap();
        mem.set_report_completions(false);
        let t1 = Instant::now();
        run_requests(&mut mem, reqs.into_iter().map(Ok)).unwrap();
        let sim_s = t1.elapsed().as_secs_f64();
        let rep = mem.report();
        // Cross-check: the Ramulator-format copy of the same trace gives the same result.
        let r2 = dir.join(format!("{prefix}.ramulator2.trace"));
        let mut mem2 = MemorySystem::new(config()).unwrap();
        mem2.set_report_completions(false);
        run_requests(
            &mut mem2,
            open_trace(&r2, TraceFormat::Ramulator, interval).unwrap(),
        )
        .unwrap();
        let same = mem2.report() == rep;
        for r in REFERENCE.iter().filter(|r| r.1 == interval) {
            let hit = if r.5.is_nan() {
                "n/a".to_string()
            } else {
                format!("{:.3}", r.5)
            };
            println!(
                "| {} | --interval {} | {} | {:.1} | {:.3} | {} | {:.2} M |",
                r.0, interval, r.2, r.3, r.4, hit, r.6
            );
        }
        println!(
            "| **apusim-dram** | --interval {} | {} | {:.1} | {:.3} | {:.3} | {:.2} M (+{:.2} s parse) |",
            interval,
            rep.cycles,
            rep.avg_read_latency(),
            rep.bandwidth_gbps(),
            rep.row_hit_rate(),
            n as f64 / sim_s / 1e6,
            parse_s
        );
        let checks: Vec<(&str, f64, (f64, f64))> = if interval == 16 {
            vec![
                ("read latency", rep.avg_read_latency(), range(16, |r| r.3)),
                ("bandwidth", rep.bandwidth_gbps(), range(16, |r| r.4)),
                ("row-hit rate", rep.row_hit_rate(), range(16, |r| r.5)),
            ]
        } else {
            vec![
                ("bandwidth", rep.bandwidth_gbps(), range(4, |r| r.4)),
                ("row-hit rate", rep.row_hit_rate(), range(4, |r| r.5)),
            ]
        };
        for (what, v, (lo, hi)) in checks {
            let inside = (lo..=hi).contains(&v);
            ok &= inside;
            eprintln!(
                "interval {interval}: {what} {v:.3} in [{lo:.3}, {hi:.3}]: {}",
                if inside { "ok" } else { "OUT OF RANGE" }
            );
        }
        eprintln!(
            "interval {interval}: ramulator-format run identical to dramsim3-format run: {same}"
        );
        ok &= same;
        let a = &rep.total;
        eprintln!(
            "interval {interval}: reads {} writes {} p50/p99 read latency {}/{} write latency {:.1} avg rq {:.1} wq {:.1} stall/req {:.1} drains {} ACT {} PRE {} REF {} PREA {}",
            a.access.reads,
            a.access.writes,
            a.access.read_latency.percentile(50.0),
            a.access.read_latency.percentile(99.0),
            a.access.write_latency.mean(),
            a.read_queue.mean(rep.cycles),
            a.write_queue.mean(rep.cycles),
            a.access.stall_cycles as f64 / n as f64,
            a.write_drains,
            a.commands.act,
            a.commands.pre,
            a.commands.refresh,
            a.commands.prea
        );
    }
    if !ok {
        std::process::exit(1);
    }
}
