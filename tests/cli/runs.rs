//! `apusim run` as a user drives it: tables, CSV and JSON, the same results on any thread
//! count, listings, policy parameters, and errors for bad options and outputs.

use crate::common;
use crate::common::{apusim_env, fails, ok};
use apusim_trace::apt::AptWriter;
use apusim_trace::TraceHeader;

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
