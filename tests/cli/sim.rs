//! `apusim sim`: timed mixes with weighted speedup and cached alone runs, a GPGPU job on the
//! timed GPU, interval statistics and sampled runs.

use crate::common;
use crate::common::{fails, ok};
use std::path::Path;

#[test]
fn sim_reports_weighted_speedup_with_cached_alone_runs() {
    let dir = tempfile::tempdir().unwrap();
    let traces = common::small_traces(dir.path(), 60_000);
    let cache = dir.path().join("cache");
    let csv = dir.path().join("sim.csv");
    let args = |csv: &Path| -> Vec<String> {
        let mut v: Vec<String> = ["sim"].iter().map(|s| s.to_string()).collect();
        v.extend(traces.iter().map(|p| p.display().to_string()));
        v.extend(
            [
                "--set",
                "cpus=2",
                "--instructions",
                "5000",
                "--policy",
                "lru,srrip",
                "--cache-dir",
                cache.to_str().unwrap(),
                "--csv",
                csv.to_str().unwrap(),
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        v
    };
    let a = args(&csv);
    let out = ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        out.contains("alone runs (lru): 2 simulated, 0 from the cache"),
        "{out}"
    );
    assert!(out.contains("weighted speedup"), "{out}");
    let first = std::fs::read_to_string(&csv).unwrap();
    for m in ["weighted_speedup", "harmonic_speedup", "max_slowdown"] {
        assert!(first.contains(&format!("srrip,system,{m},")), "{first}");
    }
    assert!(first.contains("lru,cpu1,alone_ipc,"), "{first}");
    // Per-stream figures: a table after the DRAM one, and rows named by the stream.
    assert!(
        out.contains("stream ") && out.contains("DRAM read latency"),
        "{out}"
    );
    assert!(
        first.contains("lru,cpu-data,stream.llc_requests,")
            && first.contains("lru,cpu-data,stream.dram_read_row_hits,"),
        "{first}"
    );
    assert!(out.contains("rd row hit/conf"), "{out}");
    let csv2 = dir.path().join("again.csv");
    let a = args(&csv2);
    let out = ok(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.contains("0 simulated, 2 from the cache"), "{out}");
    assert_eq!(first, std::fs::read_to_string(&csv2).unwrap());
    // A lone job has nothing to be compared with.
    let out = ok(&[
        "sim",
        traces[0].to_str().unwrap(),
        "--instructions",
        "5000",
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    assert!(!out.contains("weighted speedup"), "{out}");
    let err = fails(&[
        "sim",
        traces[0].to_str().unwrap(),
        traces[1].to_str().unwrap(),
        "--set",
        "cpus=2",
        "--alone-policy",
        "lrru",
    ]);
    assert!(err.contains("lru"), "{err}");
}

#[test]
fn sim_runs_a_gpgpu_job_on_the_timed_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let csv = dir.path().join("s16.csv");
    let json = dir.path().join("s16.json");
    // Mix S16 (gcc beside blackscholes) on drp §3's CUDA system, to `instructions`.
    let s16 = |instructions: &str, extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = ["sim", "--mix", "S16", "--preset", "4c1g-cuda"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        v.extend(["--instructions".into(), instructions.into()]);
        v.extend(["--cache-dir".into(), cache.display().to_string()]);
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    fn args(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }
    let outputs = [
        "--csv",
        csv.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];
    let out = ok(&args(&s16("20000", &outputs)));
    // The GPU's own lines: execution cycles, its alone run, where its cycles went.
    assert!(
        out.contains("gpu blackscholes (simt model, 6 SMs at 1500 MHz)"),
        "{out}"
    );
    assert!(out.contains("GPU cycles to run its program"), "{out}");
    assert!(out.contains("slowdown"), "{out}");
    assert!(out.contains("GPU cycles per SM: issuing"), "{out}");
    let rows = std::fs::read_to_string(&csv).unwrap();
    for m in [
        "gpu.cycles",
        "gpu.alone_cycles",
        "gpu.slowdown",
        "gpu.stall.memory",
        "gpu.kernel0.cycles",
        "gpu.kernel1.cycles",
        "gpu.sm5.stall.memory",
    ] {
        assert!(
            rows.contains(&format!("drp-baseline,gpu,{m},")),
            "{m}: {rows}"
        );
    }
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let g = &j[0]["gpu"];
    assert_eq!(g["stats"]["launches"], 2);
    assert!(g["cycles"].as_u64().unwrap() > 0);
    assert!(j[0]["speedup"]["gpu"]["alone_cycles"].as_u64().unwrap() > 0);
    // Sampled: the GPU is frozen while memory drains and warmed functionally between
    // windows, like the cores.
    let out = ok(&args(&s16("1000000", &["--no-alone", "--sample"])));
    assert!(out.contains("sampled: IPC with 99.7% intervals"), "{out}");
    assert!(out.contains("GPU cycles to run its program"), "{out}");
    // A target too short for one window leaves the alone run without an IPC: said so.
    let err = fails(&args(&s16("20000", &["--sample"])));
    assert!(
        err.contains("ended before the first sampling window") && err.contains("--sample-period"),
        "{err}"
    );
}

#[test]
fn sim_records_intervals_and_refuses_bad_ones() {
    let dir = tempfile::tempdir().unwrap();
    let traces = common::small_traces(dir.path(), 60_000);
    let t0 = traces[0].to_str().unwrap();
    let csv = dir.path().join("iv.csv");
    let out = ok(&[
        "sim",
        t0,
        "--instructions",
        "4000",
        "--interval",
        "1000",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(out.contains("interval  end cycle  cpu0 IPC"), "{out}");
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(
        text.starts_with("policy,interval,start_cycle,end_cycle,agent,metric,value\n"),
        "{text}"
    );
    assert!(text.contains(",all,,,cpu0,ipc,"), "{text}");
    assert!(text.contains(",0,0,"), "{text}");
    for (arg, want) in [
        ("0", "at least 1"),
        ("10parsecs", "unknown unit"),
        ("lots", "expected a count"),
    ] {
        let err = fails(&["sim", t0, "--interval", arg]);
        assert!(
            err.contains("--interval") && err.contains(want),
            "{arg}: {err}"
        );
    }
    let err = fails(&["sim", t0, "--instructions", "4000", "--interval", "1G"]);
    assert!(err.contains("longer than the whole run"), "{err}");
}

#[test]
fn sim_samples_and_refuses_windows_that_cannot() {
    let dir = tempfile::tempdir().unwrap();
    let traces = common::small_traces(dir.path(), 60_000);
    let t0 = traces[0].to_str().unwrap();
    let out = ok(&[
        "sim",
        t0,
        "--sample",
        "--sample-period",
        "2000",
        "--sample-warmup",
        "200",
        "--sample-unit",
        "200",
    ]);
    assert!(
        out.contains("sampled: IPC with 99.7% intervals: cpu0 "),
        "{out}"
    );
    // A GPGPU kernel alone: its work rate with the interval, in the table and the CSV.
    let csv = dir.path().join("gpu.csv");
    let out = ok(&[
        "sim",
        "--preset",
        "4c1g-cuda",
        "--kernel",
        "reduction",
        "--sample",
        "--sample-period",
        "100000",
        "--sample-warmup",
        "10000",
        "--sample-unit",
        "2000",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(out.contains("sampled GPU: work per GPU cycle "), "{out}");
    assert!(!out.contains("sampled: IPC"), "no core to estimate: {out}");
    let rows = std::fs::read_to_string(&csv).unwrap();
    assert!(rows.contains(",gpu,sample.cycles_rel_error,"), "{rows}");
    assert!(!rows.contains("sample.detailed_fraction"), "{rows}");
    let err = fails(&["sim", t0, "--sample", "--sample-unit", "0"]);
    assert!(err.contains("--sample-unit"), "{err}");
    let err = fails(&["sim", t0, "--sample", "--sample-warmup", "999999"]);
    assert!(err.contains("use the detailed mode"), "{err}");
    let err = fails(&["sim", t0, "--sample-unit", "5"]);
    assert!(err.contains("--sample"), "{err}");
    let err = fails(&["sim", t0, "--target-error", "3%"]);
    assert!(err.contains("--sample"), "{err}");
    let err = fails(&["sim", t0, "--sample", "--target-error", "200%"]);
    assert!(
        err.contains("--target-error") && err.contains("between"),
        "{err}"
    );
}

/// With stderr not a terminal (a log, a pipe), a long run writes a plain status line at most
/// every `APUSIM_STATUS_SECONDS` (a status line starts after the work's first second), and
/// none with 0.
#[test]
fn a_long_run_in_a_log_writes_periodic_status_lines() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("chase.champsimtrace.xz");
    let t = trace.to_str().unwrap();
    ok(&[
        "gen",
        "champsim",
        "--kind",
        "chase",
        "--instructions",
        "4000000",
        "-o",
        t,
    ]);
    let args = ["sim", "--preset", "champsim", t];
    let o = common::apusim_env(&args, &[("APUSIM_STATUS_SECONDS", "0.2")]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("apusim: [") && l.contains(" instructions, cycle "))
        .collect();
    assert!(!lines.is_empty(), "status lines in: {err}");
    let o = common::apusim_env(&args, &[("APUSIM_STATUS_SECONDS", "0")]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("apusim: ["), "none with 0: {err}");
    // A run ends only once the GPU has done its job, so the line counts the frames done.
    let args = [
        "sim",
        "--scene",
        "lake",
        "--resolution",
        "320x256",
        "--frames",
        "2",
        "--no-cache",
    ];
    let o = common::apusim_env(&args, &[("APUSIM_STATUS_SECONDS", "0.1")]);
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let done: Vec<u32> = err
        .lines()
        .filter(|l| l.starts_with("apusim: ["))
        .filter_map(|l| {
            l.strip_suffix(" frame(s) done")?
                .rsplit(' ')
                .next()?
                .parse()
                .ok()
        })
        .collect();
    assert!(done.contains(&1), "frames counted in: {err}");
    assert!(
        done.windows(2).all(|w| w[0] <= w[1]) && done.iter().all(|&n| n < 2),
        "{err}"
    );
}

/// `--scene FILE` times the user's own scene on the render pipeline: a copy of a built-in
/// scene gives the built-in scene's run (its directory aside, the same text renders the
/// same work), cached under a key of its own; a malformed file is refused naming its line.
#[test]
fn sim_times_a_scene_file_as_the_built_in_scene_of_the_same_text() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("my-lake.toml");
    let lake = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/apusim-render/scenes/lake.toml");
    std::fs::copy(lake, &file).unwrap();
    let f = file.to_str().unwrap();
    let cache = d.join("cache");
    let c = cache.to_str().unwrap();
    let run = |scene: &str| {
        let out = ok(&[
            "sim",
            "--scene",
            scene,
            "--resolution",
            "160x128",
            "--cache-dir",
            c,
        ]);
        // The header names the input and the table the time taken; the rest must agree.
        out.lines()
            .filter(|l| !l.starts_with("apusim sim:") && !l.starts_with("policy "))
            .map(|l| l.replace("my-lake", "lake"))
            .collect::<Vec<_>>()
    };
    let (mine, builtin) = (run(f), run("lake"));
    assert!(
        mine.iter().any(|l| l.contains("frames per second")),
        "{mine:?}"
    );
    assert_eq!(mine, builtin);
    let cached: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        cached.iter().any(|n| n.contains("-render-file-my_lake-")),
        "{cached:?}"
    );
    std::fs::write(&file, "name = \"x\"\n\n[[mesh]\n").unwrap();
    let e = fails(&["sim", "--scene", f]);
    assert!(e.contains("my-lake.toml:3"), "{e}");
}
