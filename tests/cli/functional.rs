//! Functional runs: oracles replaying the recorded LLC stream, built-in workloads and mixes
//! run without trace input, and a CPU kernel alone.

use crate::common;
use crate::common::{apusim_env, fails, ok};

/// The "total norm" column of a policy's row in a normalized table.
fn total_norm(table: &str, policy: &str) -> f64 {
    let row = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(policy))
        .unwrap_or_else(|| panic!("no row for {policy}:\n{table}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    cells[7].parse().unwrap()
}

#[test]
fn oracles_replay_the_recorded_llc_stream_and_reuse_characterizes_it() {
    let dir = tempfile::tempdir().unwrap();
    let traces = common::small_traces(dir.path(), 60_000);
    let mut args: Vec<&str> = vec!["run"];
    args.extend(traces.iter().map(|p| p.to_str().unwrap()));
    args.extend([
        "--set",
        "cpus=2",
        "--set",
        "llc=256K,16,64",
        "--policy",
        "srrip,opt,opt-bypass,srrip-bypass,lru",
    ]);
    let out = ok(&args);
    assert_eq!(total_norm(&out, "srrip"), 1.0);
    assert!(total_norm(&out, "opt") <= 1.0, "{out}");
    assert!(total_norm(&out, "opt") <= total_norm(&out, "lru"), "{out}");
    // The same through a dumped stream and `apusim oracle` / `apusim reuse`.
    let llc = dir.path().join("llc.apt");
    let mut dump: Vec<&str> = vec!["run"];
    dump.extend(traces.iter().map(|p| p.to_str().unwrap()));
    dump.extend([
        "--set",
        "cpus=2",
        "--set",
        "llc=256K,16,64",
        "--dump-llc-trace",
        llc.to_str().unwrap(),
    ]);
    ok(&dump);
    let offline = ok(&[
        "oracle",
        llc.to_str().unwrap(),
        "--set",
        "llc=256K,16,64",
        "--policy",
        "srrip,opt,opt-bypass,srrip-bypass,lru",
    ]);
    for p in ["srrip", "opt", "opt-bypass", "srrip-bypass", "lru"] {
        assert_eq!(
            total_norm(&out, p),
            total_norm(&offline, p),
            "{p}: run vs oracle"
        );
    }
    let reuse = ok(&["reuse", llc.to_str().unwrap(), "--set", "llc=256K,16,64"]);
    assert!(reuse.to_lowercase().contains("texture"), "{reuse}");
    assert!(fails(&["oracle", llc.to_str().unwrap(), "--policy", "optt"]).contains("optt"));
}

#[test]
fn built_in_workloads_generate_traces_and_mixes_run_without_input() {
    let dir = tempfile::tempdir().unwrap();
    let cpu = dir.path().join("mcf.apt");
    let gpu = dir.path().join("red.apt");
    ok(&[
        "gen",
        "cpu",
        "mcf",
        "-o",
        cpu.to_str().unwrap(),
        "--instructions",
        "200000",
    ]);
    ok(&[
        "gen",
        "gpgpu",
        "reduction",
        "-o",
        gpu.to_str().unwrap(),
        "--seed",
        "3",
    ]);
    let info = ok(&["trace", "info", gpu.to_str().unwrap()]);
    assert!(info.contains("shader-data"), "{info}");
    let out = ok(&[
        "run",
        cpu.to_str().unwrap(),
        gpu.to_str().unwrap(),
        "--preset",
        "4c1g-cuda",
    ]);
    assert!(out.contains("llc gpu") && out.contains("llc cpu0"), "{out}");
    // First run generates and caches the mix's traces, the second reads them back, the third
    // generates on the fly: identical results.
    let cache = dir.path().join("cache");
    let mix_run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--mix",
            "S16",
            "--limit",
            "300000",
            "--policy",
            "drp-baseline,srrip",
        ];
        args.extend_from_slice(extra);
        ok(&args)
    };
    let cached = ["--cache-dir", cache.to_str().unwrap()];
    // A temporary trace a killed run left behind (its writer's PID is not running) is
    // removed when the cache is next used.
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(
        cache.join(".v1-dead.apt.p4000000000.AbC123.tmp"),
        b"partial",
    )
    .unwrap();
    let mix = mix_run(&cached);
    assert!(mix.contains("300000 trace accesses"), "{mix}");
    let files: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files
        .iter()
        .all(|f| f.ends_with(".apt") && f.starts_with("v")));
    assert_eq!(mix_run(&cached), mix);
    assert_eq!(mix_run(&["--no-cache"]), mix);
    // drp §3's method: CPU jobs of a given length, and a job that ends first runs on until
    // every job has ended once. The core's 100 K-instruction job ends long before the GPU's
    // kernel, so it runs many passes; the GPU runs its kernel once, whole (S16's
    // blackscholes: 327,680 LLC accesses).
    let json = dir.path().join("instr.json");
    let long = ok(&[
        "run",
        "--mix",
        "S16",
        "--instructions",
        "100000",
        "--policy",
        "lru",
        "--cache-dir",
        cache.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let gpu_line = long.lines().find(|l| l.starts_with("llc gpu")).unwrap();
    assert_eq!(gpu_line.split_whitespace().nth(2), Some("327680"), "{long}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        v["inputs"],
        "mix S16 (scale 1, CPU jobs of 100000 instructions, seed 1)"
    );
    let retired = v["results"][0]["stats"]["instructions"][0]
        .as_u64()
        .unwrap();
    assert!(
        retired > 10 * 100_000,
        "{retired} instructions: the core ran on"
    );
    assert!(cache
        .join(format!(
            "{}.apt",
            apusim_workloads::mixes::jobs_at("S16", 1, Some(100_000), Default::default(), 1)
                .unwrap()[0]
                .key()
        ))
        .exists());
    let err = fails(&["run", "x.apt", "--instructions", "5"]);
    assert!(
        err.contains("--instructions is the length of a --mix's or a --cpu kernel's CPU jobs"),
        "{err}"
    );
    // A mix runs on as many CPU cores as it has CPU jobs (UCP partitions among those
    // agents), unless `--set cpus=N` asks for more.
    let ucp = |extra: &[&str]| {
        let mut args = vec!["run", "--mix", "S16", "--limit", "20000", "--policy", "ucp"];
        args.extend_from_slice(extra);
        args.push("--no-cache");
        ok(&args)
    };
    let fitted = ucp(&[]);
    assert!(
        fitted.contains("ways.cpu0") && !fitted.contains("ways.cpu1"),
        "{fitted}"
    );
    assert!(ucp(&["--set", "cpus=2"]).contains("ways.cpu1"));
    assert!(fails(&["run", "--mix", "Q99"]).contains("unknown mix"));
    // A scene's frames run on the GPU alone, timed or functional; bad names and
    // resolutions are refused.
    let scene = ok(&[
        "sim",
        "--scene",
        "lake",
        "--resolution",
        "96x64",
        "--preset",
        "gspc",
        "--no-cache",
    ]);
    assert!(
        scene.contains("scene lake (96x64, 1 frame(s)") && scene.contains("frames per second"),
        "{scene}"
    );
    assert!(!scene.contains("cpu0"), "{scene}");
    let functional = ok(&[
        "run",
        "--scene",
        "lake",
        "--resolution",
        "96x64",
        "--no-cache",
    ]);
    assert!(functional.contains("llc gpu"), "{functional}");
    // A sampled run of the render pipeline warms its frames, and warns that their times
    // are not validated at every resolution.
    let sampled = apusim_env(
        &[
            "sim",
            "--scene",
            "lake",
            "--resolution",
            "160x128",
            "--sample",
            "--sample-period",
            "20000",
            "--sample-warmup",
            "2000",
            "--sample-unit",
            "1000",
            "--no-cache",
        ],
        &[],
    );
    assert!(sampled.status.success());
    let err = String::from_utf8_lossy(&sampled.stderr);
    assert!(err.contains("warning: sampled frame times"), "{err}");
    assert!(fails(&["sim", "--scene", "castle"]).contains("unknown scene `castle`"));
    assert!(fails(&["sim", "--scene", "lake", "--resolution", "96"]).contains("WIDTHxHEIGHT"));
    assert!(fails(&["sim", "--scene", "lake", "--mix", "S1"]).contains("cannot be used with"));
    // A GPGPU kernel runs on the timed SIMT GPU alone; a mistyped name gets the nearest.
    let kernel = ok(&[
        "sim",
        "--kernel",
        "spmv",
        "--preset",
        "bypass",
        "--no-cache",
    ]);
    assert!(
        kernel.contains("kernel spmv (scale 1") && kernel.contains("gpu spmv (simt model, 8 SMs"),
        "{kernel}"
    );
    assert!(!kernel.contains("cpu0"), "{kernel}");
    assert!(fails(&["sim", "--kernel", "spmvv"]).contains("did you mean `spmv`"));
    assert!(fails(&["sim", "--kernel", "spmv", "--scene", "lake"]).contains("cannot be used with"));
    assert!(fails(&["gen", "gpgpu", "nosuch", "-o", "x.apt"]).contains("nosuch"));
    let mixes = ok(&["mixes"]);
    assert!(mixes.contains("HL20"));
    // DOOM3's frame regions: drp Table 1 (S7) and gpu-access-criticality Table 2 (HL7).
    let row = |m: &str| {
        mixes
            .lines()
            .find(|l| l.split_whitespace().next() == Some(m))
            .unwrap()
            .to_string()
    };
    assert!(row("S7").contains("300-304 (5)"), "{}", row("S7"));
    assert!(row("HL7").contains("300-314 (15)"), "{}", row("HL7"));
    assert!(!row("HL15").contains('('), "{}", row("HL15"));
    assert!(fails(&["run", "--mix", "HL15", "--frames", "3"]).contains("kernel lbm"));
    assert!(fails(&["run", "--scene", "lake", "--frames", "paper"]).contains("no frame region"));
    assert!(fails(&["run", "--cpu", "mcf", "--frames", "2"]).contains("cannot be used with"));
    assert!(ok(&["workloads"]).contains("bfs"));
}

/// `--cpu` runs a CPU kernel alone on a one-core system, as the trace `gen cpu` writes for
/// core 0 of that length: the same counts, access for access.
#[test]
fn a_cpu_kernel_alone_is_its_generated_trace_on_one_core() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("b.apt");
    let t = trace.to_str().unwrap();
    let n = "200000";
    ok(&["gen", "cpu", "bzip2", "--instructions", n, "-o", t]);
    let common = ["--policy", "lru", "--preset", "4c1g", "--no-cache"];
    let mut alone = vec!["run", "--cpu", "bzip2", "--instructions", n];
    alone.extend(common);
    let mut traced = vec!["run", t, "--set", "cpus=1"];
    traced.extend(common);
    let a = ok(&alone);
    assert!(a.contains("llc cpu0"), "{a}");
    let body = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(body(&a), body(&ok(&traced)));
    // The timed run retires its warm-up and target from a job of that length.
    let s = ok(&[
        "sim",
        "--cpu",
        "bzip2",
        "--warmup",
        "1000",
        "--instructions",
        "5000",
        "--no-cache",
        "--no-alone",
    ]);
    assert!(
        s.contains("CPU kernel bzip2 (6000 instructions, seed 1)"),
        "{s}"
    );
    let e = fails(&["run", "--cpu", "bzip2", "--mix", "S1"]);
    assert!(e.contains("--mix") && e.contains("--cpu"), "{e}");
}
