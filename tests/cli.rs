//! The `apusim` binary as a user drives it: runs, outputs, determinism, and errors.

mod common;

use apusim_trace::apt::AptWriter;
use apusim_trace::TraceHeader;
use common::{apusim_env, fails, ok};
use std::path::Path;

#[test]
fn results_are_identical_whatever_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let traces = common::small_traces(dir.path(), 60_000);
    let run = |threads: &str, name: &str| {
        let json = dir.path().join(name);
        let mut args: Vec<&str> = traces.iter().map(|p| p.to_str().unwrap()).collect();
        args.extend([
            "--set",
            "cpus=2",
            "--policy",
            "drp-baseline,srrip,drrip,ship-hybrid,random",
            "--threads",
            threads,
            "--json",
            json.to_str().unwrap(),
        ]);
        let mut full = vec!["run"];
        full.extend(args);
        ok(&full);
        std::fs::read(json).unwrap()
    };
    let one = run("1", "one.json");
    let two = run("2", "two.json");
    assert_eq!(one, two, "JSON differs between 1 and 2 threads");
    let text = String::from_utf8(one).unwrap();
    assert!(text.contains("\"policy\": \"ship-hybrid\""));
}

#[test]
fn run_prints_tables_and_writes_csv() {
    let dir = tempfile::tempdir().unwrap();
    let traces = common::small_traces(dir.path(), 60_000);
    let csv = dir.path().join("out.csv");
    let out = ok(&[
        "run",
        traces[0].to_str().unwrap(),
        traces[2].to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert!(out.contains("llc cpu0"), "{out}");
    assert!(out.contains("gpu static-texture"), "{out}");
    let csv = std::fs::read_to_string(csv).unwrap();
    assert!(csv.starts_with("policy,level,agent,stream,reads"));
    assert!(
        csv.lines()
            .any(|l| l.starts_with("drp-baseline,llc,gpu,color,")),
        "{csv}"
    );
}

#[test]
fn single_cpu_traces_on_the_same_core_get_distinct_cores() {
    let dir = tempfile::tempdir().unwrap();
    let traces = common::small_traces(dir.path(), 60_000);
    let t = traces[0].to_str().unwrap();
    let out = ok(&["run", t, t, "--set", "cpus=2"]);
    assert!(out.contains("llc cpu1"), "{out}");
    let pinned = format!("{t}@cpu1");
    let out = ok(&["run", &pinned, "--set", "cpus=2"]);
    assert!(
        out.contains("llc cpu1") && !out.contains("llc cpu0"),
        "{out}"
    );
}

#[test]
fn bad_input_gets_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let traces = common::small_traces(dir.path(), 60_000);
    let t = traces[0].to_str().unwrap();
    assert!(fails(&["run", t, "--policy", "lruu"]).contains("unknown policy `lruu`"));
    assert!(fails(&["run", t, "--set", "llc=1000,3,64"]).contains("llc.geometry"));
    assert!(fails(&["run", t, "--set", "l1d=32768,0,64"]).contains("associativity"));
    assert!(fails(&["run", t, "--set", "llc=32768,8,48"]).contains("power of two"));
    assert!(fails(&["run", "/no/such/file.apt"]).contains("no such trace file"));
    assert!(fails(&["run", t, "--preset", "nope"]).contains("unknown preset"));
    // A truncated .apt names the file and a byte offset.
    let bytes = std::fs::read(t).unwrap();
    let cut = dir.path().join("cut.apt");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let err = fails(&["run", cut.to_str().unwrap()]);
    assert!(err.contains("cut.apt") && err.contains("offset"), "{err}");
    // A malformed CSV names the line.
    let csv = dir.path().join("bad.csv");
    std::fs::write(&csv, "r,0x100\nw,0x200\nq,zz\n").unwrap();
    let err = fails(&["run", csv.to_str().unwrap()]);
    assert!(err.contains("bad.csv:3"), "{err}");
    // Counts that must be positive are refused naming the option, never replaced.
    for (cmd, opt) in [
        ("run", "--threads"),
        ("run", "--limit"),
        ("run", "--scale"),
        ("sim", "--threads"),
        ("sim", "--instructions"),
        ("sim", "--scale"),
    ] {
        let err = fails(&[cmd, t, opt, "0"]);
        assert!(err.contains(opt), "{cmd} {opt} 0: {err}");
    }
    let err = fails(&["demo", "--scale", "0"]);
    assert!(err.contains("--scale"), "{err}");
    let err = fails(&["gen", "gpgpu", "bfs", "-o", "x.apt", "--sms", "0"]);
    assert!(err.contains("--sms"), "{err}");
    for bad in ["abc", "-1", "100000"] {
        let o = apusim_env(&["run", t], &[("APUSIM_DECODE_THREADS", bad)]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && !err.contains("panicked"),
            "{bad}: {err}"
        );
        assert!(err.contains("APUSIM_DECODE_THREADS"), "{bad}: {err}");
    }
    // An empty trace is reported as such, not run as if it were a workload.
    let empty = dir.path().join("empty.apt");
    let header = TraceHeader::describing(&[], "empty");
    AptWriter::create(&empty, &header)
        .unwrap()
        .finish()
        .unwrap();
    let err = fails(&["run", empty.to_str().unwrap()]);
    assert!(
        err.contains("empty.apt") && err.contains("no accesses"),
        "{err}"
    );
    let err = fails(&["run", t, "--threads", "many"]);
    assert!(err.contains("--threads"), "{err}");
    // An output that cannot be written is refused before the run, naming the user's path.
    let o = apusim_env(
        &[
            "sim",
            t,
            "--instructions",
            "2000000000",
            "--csv",
            "/no/such/dir/out.csv",
        ],
        &[],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("/no/such/dir"), "{err}");
    assert!(err.contains("--csv"), "{err}");
    let err = fails(&["run", t, "--json", dir.path().to_str().unwrap()]);
    assert!(err.contains("is a directory"), "{err}");
    // --json to a directory that does not exist fails without leaving anything behind.
    let err = fails(&["run", t, "--json", "/no/such/dir/out.json"]);
    assert!(err.contains("/no/such/dir"), "{err}");
}

#[test]
fn policies_and_presets_are_listed() {
    let out = ok(&["policies"]);
    for p in [
        "lru",
        "nru",
        "srrip",
        "brrip",
        "drrip",
        "ta-drrip",
        "ship-pc",
        "ship-mem",
        "ship-hybrid",
        "drp-baseline",
        "random",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(&format!("{p} "))),
            "{p} missing:\n{out}"
        );
    }
    let out = ok(&["presets"]);
    for p in ["4c1g", "4c1g-cuda", "tap", "gspc", "cachegrind"] {
        assert!(out.contains(p), "{p} missing");
    }
    let toml = ok(&["presets", "tap", "--set", "llc.policy=srrip"]);
    assert!(toml.contains("policy = \"srrip\""), "{toml}");
}

/// A reader that closes the pipe early (`apusim mixes | head -1`) ends the command as it ends
/// `cat`, by SIGPIPE, with nothing on stderr; before, `println!` panicked with a backtrace.
#[cfg(unix)]
#[test]
fn a_closed_stdout_pipe_ends_the_command_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let (reader, writer) = std::io::pipe().unwrap();
    // Closed before the command starts, so its first write finds no reader.
    drop(reader);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_apusim"))
        .arg("mixes")
        .stdout(writer)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        o.status.signal(),
        Some(libc::SIGPIPE),
        "{:?}: {stderr}",
        o.status
    );
}
#[test]
fn policy_parameters_are_validated_and_described() {
    // `apusim run --mix S1 --policy POLICY --set llc.params.SET`, refused.
    let refused = |policy: &str, set: &str| {
        let set = format!("llc.params.{set}");
        fails(&["run", "--mix", "S1", "--policy", policy, "--set", &set])
    };
    let err = refused("gspc", "gspc_tt=4");
    assert!(
        err.contains("`gspc_tt`")
            && err.contains("`gspc`")
            && err.contains("did you mean `gspc_t`"),
        "{err}"
    );
    let err = refused("gspc", "gspc_t=0");
    assert!(err.contains("gspc_t") && err.contains("1..=65536"), "{err}");
    // A key of one policy of several is accepted; one of none is refused.
    let err = refused("lru,srrip", "gspc_t=4");
    assert!(err.contains("is a parameter of gspztc"), "{err}");
    ok(&[
        "run",
        "--mix",
        "S1",
        "--policy",
        "lru,gspc",
        "--set",
        "llc.params.gspc_t=4",
        "--limit",
        "2000",
    ]);
    let out = ok(&["describe", "gspc"]);
    assert!(out.starts_with("LLC policy gspc: "), "{out}");
    assert!(out.contains("gspc §3") || out.contains("gspc-graphics-stream-llc.txt §3"));
    assert!(out.contains("  gspc_t = 8  [1..=65536]"), "{out}");
    let out = ok(&["describe", "drrip"]);
    assert!(
        out.contains("with llc.gpu_write_rules = true, also:"),
        "{out}"
    );
    let out = ok(&["describe", "ooo"]);
    assert!(
        out.starts_with("core model ooo: ") && out.contains("  rob = "),
        "{out}"
    );
    let err = fails(&["describe", "nosuch"]);
    assert!(
        err.contains("unknown name `nosuch`") && err.contains("nearest registered name is"),
        "{err}"
    );
    let err = fails(&["describe", "gspcc"]);
    assert!(err.contains("did you mean `gspc`"), "{err}");
    let out = ok(&["policies"]);
    let gspc = out.lines().find(|l| l.starts_with("gspc ")).unwrap();
    assert!(gspc.contains("  3  "), "{gspc}");
}

#[test]
fn trace_info_convert_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    std::fs::write(
        &csv,
        "op,address,stream,agent\nr,0x1000,color,gpu\nw,4096,color,gpu\nr,0x2000,texture,gpu\n",
    )
    .unwrap();
    let apt = dir.path().join("t.apt");
    ok(&[
        "trace",
        "convert",
        "--from",
        "csv",
        csv.to_str().unwrap(),
        "-o",
        apt.to_str().unwrap(),
    ]);
    let info = ok(&["trace", "info", apt.to_str().unwrap()]);
    assert!(info.contains("records    3"), "{info}");
    assert!(info.contains("color"), "{info}");
    let out = ok(&["run", apt.to_str().unwrap(), "--preset", "gspc"]);
    assert!(out.contains("policy drrip: 3 trace accesses"), "{out}");
}

#[test]
fn dram_runs_traces_of_other_simulators_and_names_bad_lines() {
    let dir = tempfile::tempdir().unwrap();
    let ds3 = dir.path().join("t.trace");
    let ram = dir.path().join("t.ram");
    let mut a = String::new();
    let mut b = String::new();
    for i in 0..400u64 {
        let addr = (i * 64) % 8192 + (i % 7) * (1 << 20);
        let (op, ld) = if i % 3 == 0 {
            ("WRITE", "ST")
        } else {
            ("READ", "LD")
        };
        a.push_str(&format!("{addr:#x} {op} {}\n", i * 4));
        b.push_str(&format!("{ld} {addr:#x}\n"));
    }
    std::fs::write(&ds3, a).unwrap();
    std::fs::write(&ram, b).unwrap();
    let one = ok(&["dram", ds3.to_str().unwrap(), "--format", "dramsim3"]);
    let two = ok(&[
        "dram",
        ram.to_str().unwrap(),
        "--format",
        "ramulator",
        "--interval",
        "4",
    ]);
    let summary = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("requests"))
            .unwrap()
            .to_string()
    };
    assert_eq!(
        summary(&one),
        summary(&two),
        "same requests, same arrival times"
    );
    assert!(summary(&one).contains("requests 400"), "{one}");
    let bad = dir.path().join("bad.trace");
    std::fs::write(&bad, "0x40 READ 0\n0x80 JUMP 1\n").unwrap();
    let err = fails(&["dram", bad.to_str().unwrap(), "--format", "dramsim3"]);
    assert!(err.contains("bad.trace") && err.contains('2'), "{err}");
    assert!(fails(&["dram", ds3.to_str().unwrap(), "--set", "tRCD=0"]).contains("tRCD"));
}

/// `apusim dram` refuses arrival cycles and Ramulator intervals beyond the documented
/// maximum (2^62) before simulating them, naming the file and line or the option.
#[test]
fn dram_refuses_cycles_and_intervals_beyond_the_maximum() {
    const MAX: &str = "4611686018427387904";
    let dir = tempfile::tempdir().unwrap();
    let late = dir.path().join("late.trace");
    std::fs::write(&late, "0x40 R 0\n0x80 R 18446744073709551615\n").unwrap();
    let err = fails(&["dram", late.to_str().unwrap()]);
    assert!(
        err.contains("late.trace:2:") && err.contains("18446744073709551615") && err.contains(MAX),
        "{err}"
    );
    let ram = dir.path().join("t.ram");
    std::fs::write(&ram, "LD 0x40\nLD 0x80\n").unwrap();
    let ram = ram.to_str().unwrap();
    let err = fails(&[
        "dram",
        "--format",
        "ramulator",
        "--interval",
        "18446744073709551615",
        ram,
    ]);
    assert!(
        err.contains("interval=18446744073709551615") && err.contains(MAX),
        "{err}"
    );
    // The largest interval is accepted: the second request arrives at 2^62.
    let out = ok(&["dram", "--format", "ramulator", "--interval", MAX, ram]);
    assert!(out.contains("requests 2"), "{out}");
}

/// A trace with an idle gap of 10^15 cycles finishes (its refreshes computed, not stepped:
/// stepping 1.6·10^11 of them would take hours) with every refresh counted.
#[test]
fn dram_jumps_an_idle_gap_of_1e15_cycles() {
    let dir = tempfile::tempdir().unwrap();
    let gap = dir.path().join("gap.trace");
    std::fs::write(&gap, "0x40 R 0\n0x40 R 1000000000000000\n").unwrap();
    let json = dir.path().join("gap.json");
    ok(&[
        "dram",
        gap.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    // ddr3-1600-11-1ch: the second read misses (the first refresh closed the row), so it
    // ends tRCD + tCL + tBURST = 26 cycles after it arrives; one rank, a REF at every
    // multiple of tREFI = 6240 before that, the first preceded by a PREA.
    let end = 1_000_000_000_000_000u64 + 26;
    assert_eq!(r["cycles"], end);
    assert_eq!(r["requests"], 2);
    assert_eq!(r["total"]["commands"]["REF"], (end - 1) / 6240);
    assert_eq!(r["total"]["commands"]["PREA"], 1);
    assert_eq!(r["total"]["access"]["read_latency"]["max"], 26);
}

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
            apusim_workloads::mixes::jobs_at("S16", 1, Some(100_000), 1).unwrap()[0].key()
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
    assert!(ok(&["mixes"]).contains("HL20"));
    assert!(ok(&["workloads"]).contains("bfs"));
}

#[test]
fn studies_run_as_one_command_with_csv_and_deterministic_results() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("fig14.csv");
    let cache = dir.path().join("cache");
    let study = |threads: &str| {
        ok(&[
            "study",
            "gspc-fig14",
            "--scenes",
            "lake",
            "--width",
            "160",
            "--height",
            "100",
            "--frames",
            "1",
            "--llc",
            "256K",
            "--threads",
            threads,
            "--cache-dir",
            cache.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
        ])
    };
    let out = study("1");
    for p in [
        "DRRIP",
        "LRU",
        "4-bit DRRIP",
        "4-bit GS-DRRIP",
        "GSPC",
        "paper:",
    ] {
        assert!(out.contains(p), "{p}: {out}");
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("study,config,workload,policy,metric,value\n"));
    assert!(
        text.contains("gspc-fig14,256KB,lake,DRRIP,misses_norm,1\n"),
        "{text}"
    );
    assert!(
        text.contains("gspc-fig14,256KB,mean,GSPC,misses_norm,"),
        "{text}"
    );
    // Cached traces (the rendering and its LLC stream) are reused; two threads, same numbers.
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 2);
    assert_eq!(study("2"), out);
    let err = fails(&["study", "gspc-fig12", "--scenes", "atlantis", "--no-cache"]);
    assert!(err.contains("unknown scene `atlantis`"), "{err}");
    let err = fails(&["study", "drp-fig13", "--mixes", "Q99", "--no-cache"]);
    assert!(err.contains("Q99"), "{err}");
}

/// `apusim study gspc-counters --counters FILE --every N`: each bank's PROD and CONS under
/// GSPC every N LLC accesses and at the end of the stream (gspc §3, Table 5), in long CSV;
/// `--every 0` is refused by name.
#[test]
fn gspc_counters_writes_each_banks_prod_and_cons_and_refuses_every_zero() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("counters.csv");
    let err = fails(&["study", "gspc-counters", "--every", "0", "--no-cache"]);
    assert!(err.contains("--every"), "{err}");
    let out = ok(&[
        "study",
        "gspc-counters",
        "--scenes",
        "postfx",
        "--width",
        "160",
        "--height",
        "100",
        "--frames",
        "1",
        "--llc",
        "256K",
        "--every",
        "20000",
        "--counters",
        file.to_str().unwrap(),
        "--no-cache",
    ]);
    for word in [
        "GSPZTC+TSE",
        "GSPC",
        "rt_fill_rrpv3_share",
        "rt_evicted_unconsumed",
    ] {
        assert!(out.contains(word), "{word}: {out}");
    }
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("scene,size,access,bank,prod,cons,class"));
    let rows: Vec<Vec<u64>> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(&f[..2], ["postfx", "256KB"], "{l}");
            f[2..].iter().map(|v| v.parse().unwrap()).collect()
        })
        .collect();
    // Four banks per record; every record but the last at a multiple of 20000.
    assert!(
        rows.len() >= 8 && rows.len().is_multiple_of(4),
        "{}",
        rows.len()
    );
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r[1], (i % 4) as u64);
        assert!(
            r[2] <= 255 && r[3] <= 255 && [0, 2, 3].contains(&r[4]),
            "{r:?}"
        );
        if i + 4 < rows.len() {
            assert_eq!(r[0], 20000 * (i / 4 + 1) as u64);
        }
    }
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

#[test]
fn studies_take_their_registered_options_and_unknown_names_get_the_nearest() {
    use apusim_experiments::studies::{OptionKind, STUDIES};
    const COMMON: [&str; 11] = [
        "--seed",
        "--set",
        "--threads",
        "--cache-dir",
        "--no-cache",
        "--db",
        "--print-spec",
        "--json",
        "--csv",
        "--plot",
        "--plot-metric",
    ];
    for s in STUDIES {
        let help = ok(&["study", s.name, "--help"]);
        assert!(help.starts_with(s.description), "{}: {help}", s.name);
        let flags: Vec<&str> = help
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("--"))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        let want: Vec<String> = s
            .options()
            .iter()
            .map(|o| o.name.to_string())
            .chain(COMMON.iter().map(|c| c[2..].to_string()))
            .collect();
        assert_eq!(flags, want, "{}", s.name);
        for o in s.options() {
            if let (OptionKind::Int { .. } | OptionKind::List, Some(d)) = (o.kind, o.default) {
                assert!(
                    help.contains(&format!("[default: {d}]")),
                    "{} --{}",
                    s.name,
                    o.name
                );
            }
        }
    }
    let err = fails(&["study", "tap-tabel1"]);
    assert!(
        err.contains("unknown study `tap-tabel1` (did you mean `tap-table1`?)"),
        "{err}"
    );
    let err = fails(&["study", "gspc-fig12", "--limit", "5"]);
    assert!(err.contains("--limit"), "{err}");
}

#[test]
fn timed_drp_studies_run_with_csv_and_the_same_numbers_on_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("fig11.csv");
    let cache = dir.path().join("cache");
    let study = |threads: &str| {
        ok(&[
            "study",
            "drp-fig11",
            "--mixes",
            "S18,D18",
            "--instructions",
            "20000",
            "--threads",
            threads,
            "--cache-dir",
            cache.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
        ])
    };
    let out = study("1");
    for p in [
        "cpu_speedup",
        "gpu_speedup",
        "SHiP-hybrid",
        "DRP",
        "2C1G",
        "paper:",
    ] {
        assert!(out.contains(p), "{p}: {out}");
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(
        text.contains("drp-fig11,1C1G,mean,DRP,gpu_speedup,"),
        "{text}"
    );
    assert!(
        text.contains("drp-fig11,2C1G,mean,SHiP-hybrid,cpu_speedup,"),
        "{text}"
    );
    assert_eq!(study("2"), out);
    let err = fails(&["study", "drp-fig3", "--mixes", "S16", "--no-cache"]);
    assert!(err.contains("no 3D rendering job"), "{err}");
    let err = fails(&["sim", "--mix", "S18", "--ideal", "colour", "--no-alone"]);
    assert!(err.contains("colour"), "{err}");
}

#[test]
fn the_bypass_figures_run_kernels_alone_with_the_same_numbers_on_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("fig12.csv");
    let study = |threads: &str| {
        ok(&[
            "study",
            "bypass-fig12",
            "--quick",
            "--threads",
            threads,
            "--no-cache",
            "--csv",
            csv.to_str().unwrap(),
        ])
    };
    let out = study("1");
    for p in ["time_norm", "nw-nospm", "PC-based", "64KB", "paper:"] {
        assert!(out.contains(p), "{p}: {out}");
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(
        text.contains("bypass-fig12,bypass,nw,Baseline,time_norm,1\n"),
        "{text}"
    );
    assert_eq!(study("2"), out);
    let err = fails(&[
        "study",
        "bypass-fig9",
        "--instructions",
        "1000",
        "--no-cache",
    ]);
    assert!(err.contains("runs to its end"), "{err}");
}

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

/// Every command that writes a file checks its path when the command line is read, before
/// any work: a missing directory or a directory given as the file is refused naming the
/// option.
#[test]
fn output_paths_are_checked_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for args in [
        vec!["gen", "cpu", "mcf", "-o", "/nonexistent/x.apt"],
        vec!["gen", "gpgpu", "bfs", "-o", "/nonexistent/x.apt"],
        vec![
            "gen",
            "champsim",
            "--kind",
            "loop",
            "-o",
            "/nonexistent/x.xz",
        ],
        vec!["gen", "render", "courtyard", "-o", d],
        vec!["gpu-l1", "run", "--json", "/nonexistent/a.json"],
        vec!["gpu-l1", "run", "--csv", d],
        vec!["trace", "convert", "in.txt", "-o", "/nonexistent/x.apt"],
        vec!["run", "--dump-llc-trace", "/nonexistent/x.apt"],
    ] {
        let err = fails(&args);
        assert!(
            err.contains("invalid value")
                && (err.contains("cannot write") || err.contains("is a directory")),
            "{args:?}: {err}"
        );
    }
}

/// `gpu-l1 run --trace` reads any imported format as the GPU's accesses: a CSV trace of
/// shader-data accesses with SM numbers in `unit` gives exactly the counters of its `.apt`
/// conversion, through the L1s; `--from` beside a generated kernel is refused.
#[test]
fn gpu_l1_run_reads_an_imported_trace_as_its_apt_conversion() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("op,address,stream,unit,pc,size\n");
    let mut x: u64 = 5;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let sm = x % 8;
        let line = (x >> 8) % 2048;
        let op = if x.is_multiple_of(10) { "w" } else { "r" };
        let pc = 0x400 + (x >> 20) % 16 * 8;
        csv.push_str(&format!(
            "{op},{:#x},shader-data,{sm},{pc:#x},4\n",
            0x1000_0000 + line * 64
        ));
    }
    let t = dir.path().join("g.csv");
    std::fs::write(&t, csv).unwrap();
    let apt = dir.path().join("g.apt");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    ok(&["trace", "convert", &s(&t), "--agent", "gpu", "-o", &s(&apt)]);
    let run = |trace: &Path, from: &[&str]| {
        let json = dir.path().join("r.json");
        let mut args = vec!["gpu-l1", "run", "--set", "predictor=pc"];
        let (tr, js) = (s(trace), s(&json));
        args.extend(["--trace", &tr, "--json", &js]);
        args.extend(from);
        ok(&args);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        v["runs"][0]["metrics"].clone()
    };
    let from_csv = run(&t, &["--from", "csv"]);
    assert_eq!(from_csv, run(&t, &[]), "detected as CSV");
    assert_eq!(from_csv, run(&apt, &[]), "the same counters as the .apt");
    assert_eq!(from_csv["l1_accesses"], 20_000, "{from_csv}");
    assert!(from_csv["l1_hits"].as_u64().unwrap() > 1000, "{from_csv}");
    assert_eq!(from_csv["ignored"], 0, "{from_csv}");
    let err = fails(&["gpu-l1", "run", "--kernel", "bfs", "--from", "csv"]);
    assert!(
        err.contains("--from") && err.contains("kernel bfs"),
        "{err}"
    );
}
