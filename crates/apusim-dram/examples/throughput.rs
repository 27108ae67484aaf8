//! Simulation throughput on one trace file: parses it once, then runs it `--reps` times
//! through a preset and prints requests per second of simulation (parsing excluded) and the
//! end-to-end rate of `run_trace_file` (parsing included).
//!
//! ```text
//! cargo run --release -p apusim-dram --example throughput -- TRACE [--preset NAME] [--scheduler NAME] [--reps N] [--interval N] [--sim-only]
//! ```

use apusim_dram::{
    open_trace, presets::preset, run_requests, run_trace_file, DramCliArgs, MemorySystem,
    TraceFormat,
};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut trace = None;
    let mut name = "ddr3-1600-11-1ch".to_string();
    let mut scheduler = None;
    let mut reps = 3;
    let mut interval = 1;
    let mut e2e_run = true;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--preset" => name = it.next().expect("--preset NAME").clone(),
            "--scheduler" => scheduler = Some(it.next().expect("--scheduler NAME").clone()),
            "--reps" => reps = it.next().and_then(|v| v.parse().ok()).expect("--reps N"),
            "--sim-only" => e2e_run = false,
            "--interval" => {
                interval = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .expect("--interval N")
            }
            _ => trace = Some(std::path::PathBuf::from(a)),
        }
    }
    let trace = trace.expect("usage: throughput TRACE [--preset NAME] [--reps N]");
    let reqs: Vec<_> = open_trace(&trace, TraceFormat::Auto, interval)
        .expect("open")
        .collect::<Result<Vec<_>, _>>()
        .expect("parse");
    let n = reqs.len() as f64;
    let mut best = f64::INFINITY;
    let mut cfg = preset(&name).unwrap();
    if let Some(s) = &scheduler {
        cfg.scheduler = s.clone();
    }
    for _ in 0..reps {
        let mut mem = MemorySystem::new(cfg.clone()).unwrap();
        mem.set_report_completions(false);
        let t = Instant::now();
        run_requests(&mut mem, reqs.iter().copied().map(Ok)).unwrap();
        best = best.min(t.elapsed().as_secs_f64());
    }
    if !e2e_run {
        println!(
            "{}: {} requests, simulation {:.3} s = {:.2} M req/s (best of {reps})",
            trace.display(),
            n,
            best,
            n / best / 1e6
        );
        return;
    }
    let mut args = DramCliArgs::new(name, &trace);
    args.overrides
        .push(("interval".into(), interval.to_string()));
    if let Some(s) = scheduler {
        args.overrides.push(("scheduler".into(), s));
    }
    let t = Instant::now();
    let rep = run_trace_file(&args).unwrap();
    let e2e = t.elapsed().as_secs_f64();
    println!(
        "{}: {} requests, simulation {:.3} s = {:.2} M req/s (best of {reps}); end-to-end with parsing {:.3} s = {:.2} M req/s; bandwidth {:.3} GB/s",
        trace.display(),
        n,
        best,
        n / best / 1e6,
        e2e,
        n / e2e / 1e6,
        rep.bandwidth_gbps()
    );
}
