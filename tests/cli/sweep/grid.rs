//! Sweeps of grids as a user drives them: the same rows whatever the thread count, specs
//! refused before anything runs, a sweep killed with SIGKILL and completed by the next start,
//! failed runs tried again, two sweeps sharing one database, `run --db` and `sim --db` under a
//! sweep's key, timed sweeps with weighted speedup, shards and merges.

use super::{metrics, path, write, TRACES};
use crate::common::{apusim, fails, ok, small_traces};
use apusim_sweep::Store;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn sweeps_record_the_same_rows_for_any_thread_count_and_skip_what_is_done() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    small_traces(d, 20_000);
    let spec = write(
        d,
        "grid.toml",
        &format!(
            "{TRACES}limit = 30000\n[grid]\npolicy = [\"lru\", \"srrip\", \"drrip\"]\n\
             [grid.set]\nllc = [\"1048576,16,64\", \"2097152,16,64\"]\n"
        ),
    );
    let (db1, db2) = (path(d, "one.sqlite"), path(d, "two.sqlite"));
    let out = ok(&["sweep", &spec, "--db", &db1, "-j", "1"]);
    assert!(out.contains("6 points, 0 already"), "{out}");
    ok(&["sweep", &spec, "--db", &db2, "-j", "2"]);
    let (m1, m2) = (metrics(db1.as_ref()), metrics(db2.as_ref()));
    assert_eq!(m1.len(), 6);
    assert!(m1.values().all(|rows| rows.len() > 50));
    assert_eq!(m1, m2, "the rows depend on the thread count");
    let out = ok(&["sweep", &spec, "--db", &db2, "-j", "2"]);
    assert!(
        out.contains("6 already") && out.contains("0 run now"),
        "{out}"
    );
    assert_eq!(metrics(db2.as_ref()), m1);
    let printed = ok(&["sweep", &spec, "--db", &db2, "--print-spec"]);
    assert!(
        printed.contains("6 points") && printed.contains("yes"),
        "{printed}"
    );

    // The pivot: LLC read misses per LLC size and policy, normalized to LRU.
    let p = ok(&[
        "results",
        &db1,
        "--pivot",
        "--metric",
        "read_misses",
        "--level",
        "llc",
        "--rows",
        "set.llc",
        "--cols",
        "policy",
        "--baseline",
        "lru",
    ]);
    assert!(
        p.contains("geomean") && p.contains("normalized to policy = lru"),
        "{p}"
    );
    let lines: Vec<&str> = p.lines().collect();
    assert!(lines[0].contains("lru") && lines[0].find("lru") < lines[0].find("srrip"));
    assert!(
        lines.iter().filter(|l| l.contains("1.0000")).count() >= 3,
        "{p}"
    );
    let svg = path(d, "llc.svg");
    let pivot = |extra: &[&str]| {
        let mut a = vec![
            "results",
            &db1,
            "--pivot",
            "--metric",
            "read_misses",
            "--level",
            "llc",
            "--rows",
            "set.llc",
            "--cols",
            "policy",
        ];
        a.extend(extra);
        ok(&a)
    };
    pivot(&["--baseline", "lru", "--plot", &svg]);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("geomean") && text.contains("drrip") && text.contains("</svg>"));
    pivot(&["--plot", &svg, "--lines"]);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("<polyline") && !text.contains("geomean"));
    let csv = path(d, "pivot.csv");
    ok(&[
        "results",
        &db1,
        "--pivot",
        "--metric",
        "read_misses",
        "--level",
        "llc",
        "--rows",
        "set.llc",
        "--cols",
        "policy",
        "--csv",
        &csv,
    ]);
    let text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
    let e = fails(&[
        "results",
        &db1,
        "--pivot",
        "--metric",
        "read_misses",
        "--rows",
        "mix",
    ]);
    assert!(e.contains("mix"), "{e}");

    // Listing, filtering, long export.
    let list = ok(&["results", &db1, "--where", "policy=srrip"]);
    assert!(list.contains("2 runs"), "{list}");
    let long = path(d, "long.csv");
    ok(&[
        "results",
        &db1,
        "--metric",
        "read_misses",
        "--level",
        "llc",
        "--csv",
        &long,
    ]);
    let text = std::fs::read_to_string(&long).unwrap();
    assert!(text.starts_with("key,"), "{text}");
    assert!(text
        .lines()
        .skip(1)
        .all(|l| l.contains(",llc,") && l.contains("read_misses")));
    let e = fails(&["results", &db1, "--where", "polcy=lru"]);
    assert!(e.contains("did you mean `policy`"), "{e}");
}

#[test]
fn bad_specs_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    small_traces(d, 2_000);
    let db = path(d, "r.sqlite");
    let cases: &[(&str, &str, &str)] = &[
        ("unknown.toml", "polcy = \"lru\"\n", ":2: unknown key `polcy`; did you mean `policy`?"),
        ("empty.toml", "[grid]\npolicy = []\n", ":3: grid axis `policy` is empty"),
        ("type.toml", "limit = \"lots\"\n", ":2: `limit` must be a whole number"),
        (
            "dup.toml",
            "[[point]]\npolicy = \"lru\"\n[[point]]\npolicy = \"srrip\"\n[[point]]\npolicy = \"lru\"\n",
            ":6: duplicate point: the same run as the point of line 2",
        ),
        (
            "setkey.toml",
            "[set]\n\"llc.bnks\" = 4\n",
            ":3: ",
        ),
        ("policy.toml", "policy = \"srip\"\n", "did you mean `srrip`?"),
        (
            "param.toml",
            "policy = \"gspc\"\n[set]\n\"llc.params.gspc_tt\" = 4\n",
            ":4: unknown parameter `gspc_tt` of `gspc` (did you mean `gspc_t`?)",
        ),
        (
            "range.toml",
            "policy = \"gspc\"\n[set]\n\"llc.params.gspc_t\" = 0\n",
            ":4: policy gspc: parameter `gspc_t` = 0: out of range 1..=65536",
        ),
        (
            "ideal.toml",
            "ideal = \"colr\"\n",
            ":2: --ideal: ",
        ),
        (
            "bypass.toml",
            "gpu_read_bypass = 1.5\n",
            ":2: `gpu_read_bypass` must be a fraction from 0 to 1, not the number 1.5",
        ),
        (
            "alonefn.toml",
            "alone_policy = \"srrip\"\n",
            ":2: `alone_policy` is for timed points; this point is functional",
        ),
        (
            "samplefn.toml",
            "sample = true\n",
            ":2: `sample` is for timed points; this point is functional",
        ),
        (
            "warmupfn.toml",
            "warmup = 1000\n",
            ":2: `warmup` is for timed points; this point is functional",
        ),
        (
            "instrfn.toml",
            "instructions = 1000\n",
            ":2: `instructions` of a functional point is the length of its CPU jobs",
        ),
        (
            "twoinputs.toml",
            "kernel = \"bfs\"\n",
            "a point has one of `mix`, `traces`, `kernel`, `scene` and `cpu`, not traces and kernel",
        ),
        (
            "resmix.toml",
            "resolution = \"640x512\"\n",
            ":2: `resolution` is for `scene` points",
        ),
        (
            "idealgpu.toml",
            "ideal_gpu = \"critcal\"\n",
            ":2: `ideal_gpu` is `critical` or `non-critical`, not `critcal`",
        ),
        (
            "alonetype.toml",
            "mode = \"timed\"\nalone = 1\n",
            ":3: `alone` must be true or false, not the integer 1",
        ),
        (
            "alonename.toml",
            "mode = \"timed\"\nalone_policy = \"lur\"\n",
            ":3: unknown LLC policy `lur` for the alone runs (see `apusim policies`); did you mean `lru`?",
        ),
    ];
    for (name, body, want) in cases {
        let spec = write(d, name, &format!("{TRACES}{body}"));
        let e = fails(&["sweep", &spec, "--db", &db]);
        assert!(e.contains(want), "{name}: {e}");
        assert!(e.contains(name), "{name}: {e}");
    }
    let spec = write(
        d,
        "setkey.toml",
        &format!("{TRACES}[set]\n\"llc.bnks\" = 4\n"),
    );
    let e = fails(&["sweep", &spec, "--db", &db]);
    assert!(e.contains("did you mean `llc.banks`"), "{e}");
    assert!(
        !Path::new(&db).exists(),
        "a refused spec created the database"
    );

    // A database of a newer schema is refused with a clear message.
    let spec = write(d, "fine.toml", &format!("{TRACES}limit = 1000\n"));
    ok(&["sweep", &spec, "--db", &db]);
    rusqlite::Connection::open(&db)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let e = fails(&["sweep", &spec, "--db", &db]);
    assert!(e.contains("newer apusim"), "{e}");
    let e = fails(&["results", &db]);
    assert!(e.contains("newer apusim"), "{e}");
}

#[test]
fn a_sweep_killed_mid_run_is_completed_by_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    small_traces(d, 60_000);
    let spec = write(
        d,
        "kill.toml",
        &format!(
            "{TRACES}[grid]\nlimit = [150000, 160000, 170000, 180000, 190000]\n\
             policy = [\"lru\", \"srrip\", \"drrip\", \"nru\", \"ship-pc\", \"brrip\"]\n\
             [grid.set]\nllc = [\"1048576,16,64\", \"2097152,16,64\"]\n"
        ),
    );
    let points = 5 * 6 * 2;
    let (db, reference) = (path(d, "killed.sqlite"), path(d, "whole.sqlite"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_apusim"))
        .args(["sweep", &spec, "--db", &db, "-j", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut seen = 0;
    while seen < 4 {
        std::thread::sleep(Duration::from_millis(5));
        if Path::new(&db).exists() {
            if let Ok(s) = Store::open_existing(Path::new(&db)) {
                seen = s.done_keys().map(|k| k.len()).unwrap_or(0);
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no run recorded in 2 minutes"
        );
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the sweep ended ({status}) before it could be killed; make its runs longer");
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = Store::open_existing(Path::new(&db))
        .unwrap()
        .runs()
        .unwrap();
    let done = before.len();
    assert!(
        done >= 4 && done < points,
        "{done} of {points} runs recorded"
    );
    assert!(before.iter().all(|r| r.run.status == "ok"));

    let out = ok(&["sweep", &spec, "--db", &db, "-j", "2"]);
    let want = format!(
        "{points} points, {done} already in {db}, {} run now (0 failed)",
        points - done
    );
    assert!(out.contains(&want), "{out}\nwanted: {want}");
    let after = Store::open_existing(Path::new(&db))
        .unwrap()
        .runs()
        .unwrap();
    assert_eq!(after.len(), points);
    for r in &before {
        let again = after.iter().find(|a| a.run.key == r.run.key).unwrap();
        assert_eq!(again.run.started, r.run.started, "a finished run ran again");
    }
    ok(&["sweep", &spec, "--db", &reference, "-j", "1"]);
    assert_eq!(metrics(db.as_ref()), metrics(reference.as_ref()));
}

#[test]
fn run_and_sim_record_under_the_key_a_sweep_gives_the_same_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let traces = small_traces(d, 20_000);
    let t: Vec<&str> = traces.iter().map(|p| p.to_str().unwrap()).collect();
    let db = path(d, "r.sqlite");
    let mut args = vec!["run"];
    args.extend(&t);
    args.extend(["--policy", "lru,srrip", "--limit", "30000", "--db", &db]);
    ok(&args);
    let from_run = metrics(db.as_ref());
    assert_eq!(from_run.len(), 2);
    let spec = write(
        d,
        "same.toml",
        &format!("{TRACES}limit = 30000\n[grid]\npolicy = [\"lru\", \"srrip\", \"drrip\"]\n"),
    );
    let out = ok(&["sweep", &spec, "--db", &db]);
    assert!(out.contains("3 points, 2 already"), "{out}");
    let other = path(d, "sweep-only.sqlite");
    ok(&["sweep", &spec, "--db", &other]);
    let swept = metrics(other.as_ref());
    for (k, rows) in &from_run {
        assert_eq!(swept.get(k), Some(rows), "run --db and the sweep disagree");
    }

    // The LLC switches: the same key as `run --ideal --gpu-read-bypass --db`.
    let mut args = vec!["run"];
    args.extend(&t);
    args.extend([
        "--policy",
        "srrip",
        "--limit",
        "30000",
        "--ideal",
        "color,texture",
        "--gpu-read-bypass",
        "0.5",
        "--db",
        &db,
    ]);
    ok(&args);
    let spec = write(
        d,
        "switches.toml",
        &format!(
            "{TRACES}limit = 30000\npolicy = \"srrip\"\nideal = \"texture,color\"\n\
             gpu_read_bypass = 0.5\n"
        ),
    );
    let out = ok(&["sweep", &spec, "--db", &db]);
    assert!(out.contains("1 points, 1 already"), "{out}");
    let alone = path(d, "switches.sqlite");
    ok(&["sweep", &spec, "--db", &alone]);
    let with = metrics(alone.as_ref());
    let (key, rows) = with.iter().next().unwrap();
    assert_eq!(metrics(db.as_ref()).get(key), Some(rows));
    let plain = write(
        d,
        "plain.toml",
        &format!("{TRACES}limit = 30000\npolicy = \"srrip\"\n"),
    );
    let without = path(d, "plain.sqlite");
    ok(&["sweep", &plain, "--db", &without]);
    let without = metrics(without.as_ref());
    let (plain_key, plain_rows) = without.iter().next().unwrap();
    assert_ne!(plain_key, key);
    assert_ne!(plain_rows, rows, "the switches change the counters");

    let mut args = vec!["sim", t[0]];
    args.extend([
        "--set",
        "cpus=1",
        "--instructions",
        "5000",
        "--policy",
        "lru",
        "--db",
        &db,
    ]);
    ok(&args);
    let s = Store::open_existing(Path::new(&db)).unwrap();
    let sim = s
        .runs()
        .unwrap()
        .into_iter()
        .find(|r| r.run.command == "sim")
        .expect("the sim run is recorded");
    assert_eq!(sim.run.mode, "timed");
    let rows = s.metrics(sim.id).unwrap();
    assert!(rows.iter().any(|m| m.metric == "ipc" && m.value > 0.0));
    // Per stream, the DRAM's row-buffer outcomes: one per read that reached a column or
    // row command.
    let data = |metric: &str| {
        rows.iter()
            .find(|m| m.stream == "cpu-data" && m.level == "dram" && m.metric == metric)
            .unwrap_or_else(|| panic!("no cpu-data dram {metric} in {rows:?}"))
            .value
    };
    let outcomes = data("read_row_hits") + data("read_row_misses") + data("read_row_conflicts");
    assert!(outcomes > 0.0 && outcomes <= data("reads"), "{outcomes}");
}

#[test]
fn a_failed_run_is_recorded_with_its_error_and_tried_again() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    small_traces(d, 2_000);
    write(d, "junk.txt", "hello\n");
    let spec = write(
        d,
        "fail.toml",
        "limit = 1000\n[grid]\ntraces = [[\"agent0.apt\"], [\"junk.txt\"]]\n",
    );
    let db = path(d, "r.sqlite");
    let o = apusim(&["sweep", &spec, "--db", &db]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("1 of 2 runs failed") && err.contains("junk.txt"),
        "{err}"
    );
    let failed = ok(&["results", &db, "--status", "failed"]);
    assert!(
        failed.contains("1 runs") && failed.contains("junk.txt:1"),
        "{failed}"
    );
    assert_eq!(metrics(db.as_ref()).len(), 1);
    let o = apusim(&["sweep", &spec, "--db", &db]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("1 already") && out.contains("1 run now (1 failed)"),
        "{out}"
    );
    let runs = Store::open_existing(Path::new(&db))
        .unwrap()
        .runs()
        .unwrap();
    assert_eq!(runs.len(), 2, "a retried run replaces its earlier attempt");
}

#[test]
fn timed_sweeps_report_weighted_speedup_with_each_alone_run_made_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let traces = small_traces(d, 20_000);
    let cache = path(d, "cache");
    let spec = write(
        d,
        "ws.toml",
        "mode = \"timed\"\ntraces = [\"agent0.apt\", \"agent1.apt\"]\ninstructions = 3000\n\
         [grid]\npolicy = [\"lru\", \"srrip\"]\n",
    );
    let db = path(d, "ws.sqlite");
    ok(&["sweep", &spec, "--db", &db, "--cache-dir", &cache]);
    // One alone run per input, shared by both policies.
    let alone = std::fs::read_dir(d.join("cache").join("alone"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "json")
        })
        .count();
    assert_eq!(alone, 2, "alone runs in the cache");
    let swept = metrics(db.as_ref());
    assert_eq!(swept.len(), 2);
    for rows in swept.values() {
        let ws = rows
            .iter()
            .find(|r| r.3 == "weighted_speedup")
            .expect("a weighted speedup row");
        let v = f64::from_bits(ws.4);
        assert!(v > 0.0 && v <= 2.0 + 1e-9, "weighted speedup {v}");
        assert_eq!(rows.iter().filter(|r| r.3 == "alone_ipc").count(), 2);
    }

    // `apusim sim` on the same inputs reads those alone runs and records the same run under
    // the same key.
    let t: Vec<&str> = traces[..2].iter().map(|p| p.to_str().unwrap()).collect();
    let one = path(d, "sim.sqlite");
    let out = ok(&[
        "sim",
        t[0],
        t[1],
        "--instructions",
        "3000",
        "--policy",
        "srrip",
        "--db",
        &one,
        "--cache-dir",
        &cache,
    ]);
    assert!(
        out.contains("alone runs (lru): 0 simulated, 2 from the cache"),
        "{out}"
    );
    let from_sim = metrics(one.as_ref());
    assert_eq!(from_sim.len(), 1);
    for (k, rows) in &from_sim {
        assert_eq!(swept.get(k), Some(rows), "sim --db and the sweep disagree");
    }

    // `alone = false`: no alone runs, no speedup rows, and another key.
    let spec = write(
        d,
        "noalone.toml",
        "mode = \"timed\"\ntraces = [\"agent0.apt\", \"agent1.apt\"]\ninstructions = 3000\n\
         policy = \"lru\"\nalone = false\n",
    );
    let out = ok(&["sweep", &spec, "--db", &db, "--cache-dir", &cache]);
    assert!(out.contains("1 points, 0 already"), "{out}");
    let all = metrics(db.as_ref());
    let plain: Vec<_> = all
        .iter()
        .filter(|(k, _)| !swept.contains_key(*k))
        .collect();
    assert_eq!(plain.len(), 1);
    assert!(plain[0].1.iter().all(|r| r.3 != "weighted_speedup"));
}

#[test]
fn two_sweeps_writing_one_database_at_once_never_run_a_point_twice() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    small_traces(d, 60_000);
    let spec = write(
        d,
        "both.toml",
        &format!(
            "{TRACES}[grid]\nlimit = [100000, 110000, 120000, 130000]\n\
             policy = [\"lru\", \"srrip\", \"drrip\"]\n"
        ),
    );
    let db = path(d, "both.sqlite");
    let start = || {
        Command::new(env!("CARGO_BIN_EXE_apusim"))
            .args(["sweep", &spec, "--db", &db, "-j", "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (start(), start());
    let ran = |c: std::process::Child| -> usize {
        let out = c.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text.split(" run now")
            .next()
            .and_then(|s| s.rsplit(", ").next())
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no run count in {text}"))
    };
    let (ra, rb) = (ran(a), ran(b));
    // Every point ran exactly once between the two, whatever their interleaving.
    assert_eq!(ra + rb, 12, "{ra} + {rb}");
    assert_eq!(metrics(db.as_ref()).len(), 12);
    let again = ok(&["sweep", &spec, "--db", &db]);
    assert!(again.contains("12 points, 12 already"), "{again}");
}

#[test]
fn mix_points_run_on_the_system_run_and_sim_give_the_mix() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cache = path(d, "cache");
    let db = path(d, "mix.sqlite");
    // D18: two CPU jobs and a GPGPU job, so two cores (not the preset's four).
    ok(&[
        "run",
        "--mix",
        "D18",
        "--limit",
        "20000",
        "--policy",
        "lru",
        "--db",
        &db,
        "--cache-dir",
        &cache,
    ]);
    ok(&[
        "sim",
        "--mix",
        "D18",
        "--instructions",
        "5000",
        "--policy",
        "srrip",
        "--db",
        &db,
        "--cache-dir",
        &cache,
    ]);
    let spec = write(
        d,
        "mix.toml",
        "mix = \"D18\"\n[[point]]\nlimit = 20000\npolicy = \"lru\"\n\
         [[point]]\nmode = \"timed\"\ninstructions = 5000\npolicy = \"srrip\"\n",
    );
    let out = ok(&["sweep", &spec, "--db", &db, "--cache-dir", &cache]);
    assert!(out.contains("2 points, 2 already"), "{out}");
    let s = Store::open_existing(Path::new(&db)).unwrap();
    for r in s.runs().unwrap() {
        assert_eq!(r.run.config["cpus"], 2, "{}", r.run.command);
    }
}

/// Every stored whole result by key.
fn stored_results(db: &str) -> BTreeMap<String, (String, Vec<u8>)> {
    let s = Store::open_existing(Path::new(db)).unwrap();
    s.runs()
        .unwrap()
        .into_iter()
        .filter_map(|r| s.result(&r.run.key).unwrap().map(|x| (r.run.key, x)))
        .collect()
}

#[test]
fn timed_runs_keep_their_whole_result_through_shards_and_merges() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    small_traces(d, 20_000);
    let spec = write(
        d,
        "t.toml",
        "mode = \"timed\"\ntraces = [\"agent0.apt\", \"agent1.apt\"]\ninstructions = 2000\n\
         alone = false\n[grid]\npolicy = [\"lru\", \"srrip\", \"nru\"]\n",
    );
    let local = path(d, "local.sqlite");
    ok(&["sweep", &spec, "--db", &local, "-j", "2"]);
    let whole = stored_results(&local);
    assert_eq!(whole.len(), 3, "every timed run keeps its result");
    for (format, bytes) in whole.values() {
        let r = apusim_sim::timed::stored::decode(format, bytes).unwrap();
        assert!(r.cores.iter().all(|c| c.instructions >= 2000));
    }
    let shards = d.join("shards");
    std::fs::create_dir(&shards).unwrap();
    for i in 0..2 {
        let db = path(&shards, &format!("s{i}.sqlite"));
        ok(&["sweep", &spec, "--db", &db, "--shard", &format!("{i}/2")]);
    }
    let merged = path(d, "merged.sqlite");
    ok(&["results", "merge", &merged, shards.to_str().unwrap()]);
    assert_eq!(
        stored_results(&merged),
        whole,
        "results travel with their runs"
    );
}
