//! `apusim sweep` and `apusim results` as a user drives them: a grid recorded into a results
//! database whatever the thread count, specs refused before anything runs, a sweep killed
//! with SIGKILL and completed by the next start, `run --db` under a sweep's key, pivots.

mod common;

use apusim_sweep::Store;
use common::{apusim, fails, ok, small_traces};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TRACES: &str = "traces = [\"agent0.apt\", \"agent1.apt\", \"agent2.apt\"]\n";

/// Every `ok` run's metric rows by key.
type Metrics = BTreeMap<String, Vec<(String, String, String, String, u64)>>;

fn metrics(db: &Path) -> Metrics {
    let s = Store::open_existing(db).unwrap();
    s.runs()
        .unwrap()
        .into_iter()
        .filter(|r| r.run.status == "ok")
        .map(|r| {
            let rows = s
                .metrics(r.id)
                .unwrap()
                .into_iter()
                .map(|m| (m.agent, m.level, m.stream, m.metric, m.value.to_bits()))
                .collect();
            (r.run.key, rows)
        })
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}

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

/// stdout and stderr of a command that must succeed.
fn ok_both(args: &[&str]) -> (String, String) {
    let o = apusim(args);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(o.status.success(), "apusim {args:?}: {err}");
    (String::from_utf8(o.stdout).unwrap(), err)
}

/// A study stopped after its first run, then resumed: a sweep of the first point of its
/// printed `spec` (of `points` points) into `db`, then the study with `--db` reads that one
/// run back and simulates the rest, and once more reads all and simulates none, both times
/// printing `plain`, the study's own output; a sweep of the whole spec then finds every
/// point done, so the study's keys are the sweep's.
fn resumes_after_its_first_run(
    study: impl Fn(&[&str]) -> (String, String),
    plain: &str,
    spec: &str,
    points: usize,
    db: &str,
    d: &Path,
    cache: &str,
) {
    assert_eq!(spec.matches("[[point]]").count(), points, "{spec}");
    let cut = spec.match_indices("[[point]]").nth(1).unwrap().0;
    let part = write(d, "part.toml", &spec[..cut]);
    ok(&["sweep", &part, "--db", db, "--cache-dir", cache]);
    let (resumed, err) = study(&["--db", db]);
    assert!(err.contains("1 of the study's runs read"), "{err}");
    assert!(err.contains(&format!("{} simulated", points - 1)), "{err}");
    assert_eq!(
        resumed, plain,
        "runs read back give the study's own numbers"
    );
    let (again, err) = study(&["--db", db]);
    assert!(
        err.contains(&format!("{points} of the study's runs read")),
        "{err}"
    );
    assert!(err.contains("0 simulated"), "{err}");
    assert_eq!(again, plain);
    let whole = write(d, "whole.toml", spec);
    let out = ok(&["sweep", &whole, "--db", db, "--cache-dir", cache]);
    assert!(
        out.contains(&format!("{points} points, {points} already in")),
        "{out}"
    );
}

#[test]
fn a_study_is_a_sweep_of_its_printed_spec_and_resumes_from_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cache = path(d, "cache");
    let study = |extra: &[&str]| -> (String, String) {
        let mut args = vec![
            "study",
            "tap-fig6",
            "--quick",
            "--instructions",
            "2000",
            "--cache-dir",
            &cache,
            "--threads",
            "2",
        ];
        args.extend_from_slice(extra);
        ok_both(&args)
    };
    let (plain, _) = study(&[]);
    // The spec lists every timed run of the study: LRU, UCP and TAP-UCP on the quick mix.
    let (spec, _) = study(&["--print-spec"]);
    assert!(spec.contains("alone = false"), "{spec}");
    let db = path(d, "study.sqlite");
    resumes_after_its_first_run(study, &plain, &spec, 3, &db, d, &cache);
    let s = Store::open_existing(Path::new(&db)).unwrap();
    let runs = s.runs().unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(
        runs.iter().filter(|r| r.run.command == "study").count(),
        2,
        "the runs the study made are recorded as its own"
    );
}

#[test]
fn the_characterization_is_a_sweep_of_kernels_on_systems_of_their_own() {
    the_characterization_of("backprop", "kernel");
    // A CPU application alone on its core: `cpu` points, the job as long as the run.
    the_characterization_of("bzip2", "cpu");
}

/// tap-fig2 of `app` is a sweep of its printed spec, whose points run `app` as `input`
/// (`kernel` or `cpu`), and resumes from the database.
fn the_characterization_of(app: &str, input: &str) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cache = path(d, "cache");
    let study = |extra: &[&str]| -> (String, String) {
        let mut args = vec![
            "study",
            "tap-fig2",
            "--mixes",
            app,
            "--instructions",
            "2000",
            "--cache-dir",
            &cache,
            "--threads",
            "2",
        ];
        args.extend_from_slice(extra);
        ok_both(&args)
    };
    let (plain, _) = study(&[]);
    // One point per LLC size, 1 to 32 ways at 4096 sets, each on one core of preset `tap`.
    let (spec, _) = study(&["--print-spec"]);
    assert_eq!(spec.matches("[[point]]").count(), 6, "{spec}");
    assert!(spec.contains(&format!("{input} = \"{app}\"")), "{spec}");
    assert!(spec.contains("\"llc.geometry\" = \"256K,1,64\""), "{spec}");
    assert!(
        spec.contains("\"llc.geometry\" = \"8192K,32,64\""),
        "{spec}"
    );
    // One core: beside a GPGPU kernel it is said, a CPU application alone has it anyway.
    assert_eq!(spec.contains("\"cpus\" = 1"), input == "kernel", "{spec}");
    let db = path(d, "char.sqlite");
    resumes_after_its_first_run(study, &plain, &spec, 6, &db, d, &cache);
}

#[test]
fn the_gspc_figures_are_sweeps_of_replay_points_and_resume_from_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cache = path(d, "cache");
    let study = |name: &str, extra: &[&str]| -> (String, String) {
        let mut args = vec![
            "study",
            name,
            "--scenes",
            "lake,deferred",
            "--width",
            "160",
            "--height",
            "100",
            "--frames",
            "1",
            "--llc",
            "256K",
            "--cache-dir",
            &cache,
            "--threads",
            "2",
        ];
        args.extend_from_slice(extra);
        ok_both(&args)
    };
    // Fig. 11: GSPZTC at four thresholds `t` on two scenes, `t` an LLC parameter.
    let (plain, _) = study("gspc-fig11", &[]);
    let (spec, _) = study("gspc-fig11", &["--print-spec"]);
    assert!(spec.contains("mode = \"replay\""), "{spec}");
    assert!(spec.contains("preset = \"gspc\""), "{spec}");
    assert!(spec.contains("scene = \"deferred\""), "{spec}");
    assert!(spec.contains("resolution = \"160x100\""), "{spec}");
    assert!(spec.contains("\"llc.params.gspc_t\" = 2"), "{spec}");
    assert!(spec.contains("\"llc\" = \"256K,16,64\""), "{spec}");
    assert!(!spec.contains("consumption"), "{spec}");
    let db = path(d, "gspc.sqlite");
    let fig11 = |extra: &[&str]| study("gspc-fig11", extra);
    resumes_after_its_first_run(fig11, &plain, &spec, 8, &db, d, &cache);
    let s = Store::open_existing(Path::new(&db)).unwrap();
    let runs = s.runs().unwrap();
    assert_eq!(runs.len(), 8);
    assert!(runs.iter().all(|r| r.run.mode == "replay"));

    // Fig. 13 asks for the render-target consumption, so its replays are points of their own
    // (the consumption is part of the key); a sweep of its spec leaves the study nothing.
    let (plain13, _) = study("gspc-fig13", &[]);
    let (spec13, _) = study("gspc-fig13", &["--print-spec"]);
    assert!(spec13.contains("consumption = true"), "{spec13}");
    let spec13 = write(d, "fig13.toml", &spec13);
    let out = ok(&["sweep", &spec13, "--db", &db, "--cache-dir", &cache]);
    assert!(out.contains("12 points, 0 already in"), "{out}");
    let (read13, err) = study("gspc-fig13", &["--db", &db]);
    assert!(err.contains("12 of the study's runs read"), "{err}");
    assert!(err.contains("0 simulated"), "{err}");
    assert_eq!(read13, plain13);
    // A replay's rows: the LLC's counters per stream, and the consumption.
    let rows = metrics(Path::new(&db));
    let of = |metric: &str| {
        rows.values()
            .flatten()
            .filter(|(_, level, _, m, _)| level == "llc" && m == metric)
            .count()
    };
    assert_eq!(of("rt_consumed_share"), 12);
    assert!(of("misses") > 12);

    // gspc-counters' numbers are replays of GSPZTC+TSE and GSPC (Fig. 12's), its series one
    // more GSPC replay that records the counters: the replays resume from the database, and
    // the series is the same whether they were read back or made.
    let series = |name: &str| path(d, name);
    let (plain_c, _) = study("gspc-counters", &["--counters", &series("made.csv")]);
    let (spec_c, _) = study("gspc-counters", &["--print-spec"]);
    assert!(spec_c.contains("policy = \"gspztc-tse\""), "{spec_c}");
    let db_c = path(d, "counters.sqlite");
    let scratch = series("scratch.csv");
    let counters = |extra: &[&str]| {
        let mut args = vec!["--counters", scratch.as_str()];
        args.extend_from_slice(extra);
        study("gspc-counters", &args)
    };
    resumes_after_its_first_run(counters, &plain_c, &spec_c, 4, &db_c, d, &cache);
    study(
        "gspc-counters",
        &["--db", &db_c, "--counters", &series("read.csv")],
    );
    assert_eq!(
        std::fs::read_to_string(series("made.csv")).unwrap(),
        std::fs::read_to_string(series("read.csv")).unwrap()
    );

    // A recorded LLC stream replays as it is: lake's stream, which the points above made and
    // cached, gives a `traces` point the misses of the `scene` point under the same policy.
    let stream = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            name.starts_with("llc-") && name.contains("lake")
        })
        .expect("lake's LLC stream in the cache");
    let both = write(
        d,
        "both.toml",
        &format!(
            "mode = \"replay\"\npreset = \"gspc\"\npolicy = \"gspc\"\n\
             [set]\nllc = \"256K,16,64\"\n[[point]]\nscene = \"lake\"\n\
             resolution = \"160x100\"\n[[point]]\ntraces = [{:?}]\n",
            stream.display().to_string()
        ),
    );
    let db2 = path(d, "both.sqlite");
    let out = ok(&["sweep", &both, "--db", &db2, "--cache-dir", &cache]);
    assert!(out.contains("2 points, 0 already in"), "{out}");
    let misses: Vec<u64> = metrics(Path::new(&db2))
        .values()
        .map(|rows| {
            rows.iter()
                .filter(|(_, level, _, m, _)| level == "llc" && m == "misses")
                .map(|r| f64::from_bits(r.4) as u64)
                .sum()
        })
        .collect();
    assert_eq!(misses.len(), 2);
    assert!(misses[0] > 0 && misses[0] == misses[1], "{misses:?}");

    // A replay needs a GPU workload alone: a system with CPU cores is refused at its line.
    let bad = write(
        d,
        "bad.toml",
        "mode = \"replay\"\npreset = \"gspc\"\nscene = \"lake\"\n[set]\ncpus = 1\n",
    );
    let e = fails(&["sweep", &bad, "--db", &db, "--cache-dir", &cache]);
    assert!(
        e.contains("bad.toml:5") && e.contains("without CPU cores"),
        "{e}"
    );
}

#[test]
fn the_functional_bypass_figures_are_sweeps_of_gpu_l1_points() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cache = path(d, "cache");
    let study = |name: &str, extra: &[&str]| -> (String, String) {
        let mut args = vec![
            "study",
            name,
            "--kernels",
            "nw,spmv",
            "--size",
            "128",
            "--set",
            "l1.pc.threshold=6",
            "--threads",
            "2",
        ];
        args.extend_from_slice(extra);
        ok_both(&args)
    };
    // Fig. 8: four bars (the baseline, two predictors, a 32 KB L1) on two kernels.
    let (plain, _) = study("bypass-fig8", &[]);
    let (spec, _) = study("bypass-fig8", &["--print-spec"]);
    assert!(spec.contains("mode = \"gpu-l1\""), "{spec}");
    assert!(spec.contains("preset = \"table1\""), "{spec}");
    assert!(spec.contains("size = 128"), "{spec}");
    assert!(spec.contains("kernel = \"spmv\""), "{spec}");
    assert!(spec.contains("\"predictor\" = \"counter\""), "{spec}");
    assert!(spec.contains("\"l1\" = \"32K,8,64\""), "{spec}");
    assert!(spec.contains("\"l1.pc.threshold\" = 6"), "{spec}");
    assert!(!spec.contains("policy"), "{spec}");
    let db = path(d, "bypass.sqlite");
    let fig8 = |extra: &[&str]| study("bypass-fig8", extra);
    resumes_after_its_first_run(fig8, &plain, &spec, 8, &db, d, &cache);
    let s = Store::open_existing(Path::new(&db)).unwrap();
    let runs = s.runs().unwrap();
    assert_eq!(runs.len(), 8);
    assert!(runs.iter().all(|r| r.run.mode == "gpu-l1"));
    // A run's rows are `apusim gpu-l1 run --csv`'s columns, agent `gpu`.
    let rows = metrics(Path::new(&db));
    let of = |metric: &str| {
        rows.values()
            .flatten()
            .filter(|(agent, _, _, m, _)| agent == "gpu" && m == metric)
            .count()
    };
    for m in [
        "l1_misses",
        "bypass_ratio",
        "coverage",
        "storage_bytes_per_l1",
    ] {
        assert_eq!(of(m), 8, "{m}");
    }
    // Fig. 6 runs the PC-based bar only: the same runs as Fig. 8's, read back.
    let (_, err) = study("bypass-fig6", &["--db", &db]);
    assert!(err.contains("2 of the study's runs read"), "{err}");
    assert!(err.contains("0 simulated"), "{err}");

    // The runs CSV of a study that read its runs back equals one that ran them.
    let csv_read = path(d, "read.csv");
    let csv_ran = path(d, "ran.csv");
    study("bypass-fig8", &["--db", &db, "--runs", &csv_read]);
    study("bypass-fig8", &["--runs", &csv_ran]);
    assert_eq!(
        std::fs::read_to_string(&csv_read).unwrap(),
        std::fs::read_to_string(&csv_ran).unwrap()
    );

    // Bad GPU configurations and kernels are refused at their line, before anything runs.
    let bad = write(
        d,
        "bad.toml",
        "mode = \"gpu-l1\"\nkernel = \"nw\"\n[set]\n\"l1.pc.treshold\" = 4\n",
    );
    let e = fails(&["sweep", &bad, "--db", &db]);
    assert!(e.contains("bad.toml:4") && e.contains("treshold"), "{e}");
    let bad = write(d, "bad2.toml", "mode = \"gpu-l1\"\n\nkernel = \"nww\"\n");
    let e = fails(&["sweep", &bad, "--db", &db]);
    assert!(e.contains("bad2.toml:3") && e.contains("nww"), "{e}");
    let bad = write(
        d,
        "bad3.toml",
        "mode = \"gpu-l1\"\npreset = \"4c1g\"\nkernel = \"nw\"\n",
    );
    let e = fails(&["sweep", &bad, "--db", &db]);
    assert!(e.contains("bad3.toml:2") && e.contains("GPU preset"), "{e}");
}

#[test]
fn a_study_of_kernels_alone_is_a_sweep_of_kernel_points() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cache = path(d, "cache");
    let study = |extra: &[&str]| -> (String, String) {
        let mut args = vec!["study", "bypass-fig12", "--quick", "--cache-dir", &cache];
        args.extend_from_slice(extra);
        ok_both(&args)
    };
    let (plain, _) = study(&[]);
    let (spec, _) = study(&["--print-spec"]);
    assert!(spec.contains("kernel = \"nw-nospm\""), "{spec}");
    let spec = write(d, "b12.toml", &spec);
    let db = path(d, "b12.sqlite");
    let out = ok(&["sweep", &spec, "--db", &db, "--cache-dir", &cache]);
    assert!(out.contains("8 points, 0 already in"), "{out}");
    let (read, err) = study(&["--db", &db]);
    assert!(err.contains("8 of the study's runs read"), "{err}");
    assert!(err.contains("0 simulated"), "{err}");
    assert_eq!(read, plain);
}

#[test]
fn a_functional_study_is_a_sweep_of_its_printed_spec_and_resumes_from_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cache = path(d, "cache");
    // Two mixes (1C1G and 2C1G), CPU jobs of drp §3's method, each run cut short.
    let study = |name: &str, extra: &[&str]| -> (String, String) {
        let mut args = vec![
            "study",
            name,
            "--mixes",
            "S1,D2",
            "--instructions",
            "100000",
            "--limit",
            "300000",
            "--cache-dir",
            &cache,
            "--threads",
            "2",
        ];
        args.extend_from_slice(extra);
        ok_both(&args)
    };
    let (plain, _) = study("drp-fig13", &[]);
    // The spec lists every functional run of the figure: the baseline and DRP on each mix.
    let (spec, _) = study("drp-fig13", &["--print-spec"]);
    assert!(spec.contains("mode = \"functional\""), "{spec}");
    assert!(spec.contains("limit = 300000"), "{spec}");
    assert!(spec.contains("instructions = 100000"), "{spec}");
    assert!(
        !spec.contains("alone") && !spec.contains("warmup"),
        "{spec}"
    );
    let db = path(d, "drp.sqlite");
    let fig13 = |extra: &[&str]| study("drp-fig13", extra);
    resumes_after_its_first_run(fig13, &plain, &spec, 4, &db, d, &cache);
    let s = Store::open_existing(Path::new(&db)).unwrap();
    let runs = s.runs().unwrap();
    assert_eq!(runs.len(), 4);
    assert_eq!(runs.iter().filter(|r| r.run.command == "study").count(), 3);
    assert!(runs.iter().all(|r| r.run.mode == "functional"));
    let sweep_rows = metrics(Path::new(&db));

    // Fig. 14 shares the baseline and DRP runs: a sweep of its spec makes only the other
    // three policies, and the study then reads all ten back with its own numbers.
    let (plain14, _) = study("drp-fig14", &[]);
    let (spec14, _) = study("drp-fig14", &["--print-spec"]);
    assert_eq!(spec14.matches("[[point]]").count(), 10, "{spec14}");
    let spec14 = write(d, "fig14.toml", &spec14);
    let out = ok(&["sweep", &spec14, "--db", &db, "--cache-dir", &cache]);
    assert!(out.contains("10 points, 4 already in"), "{out}");
    let (read14, err) = study("drp-fig14", &["--db", &db]);
    assert!(err.contains("10 of the study's runs read"), "{err}");
    assert!(err.contains("0 simulated"), "{err}");
    assert_eq!(read14, plain14);

    // `apusim run --mix --db` records the same run under the same key, with the same rows,
    // and the study reads it back.
    let alone = path(d, "run.sqlite");
    ok(&[
        "run",
        "--mix",
        "D2",
        "--policy",
        "drp",
        "--instructions",
        "100000",
        "--limit",
        "300000",
        "--seed",
        "1",
        "--cache-dir",
        &cache,
        "--db",
        &alone,
    ]);
    let from_run = metrics(Path::new(&alone));
    let (key, rows) = from_run.iter().next().unwrap();
    assert_eq!(
        sweep_rows.get(key),
        Some(rows),
        "run --db and the study disagree"
    );
    let (_, err) = study("drp-fig13", &["--db", &alone]);
    assert!(err.contains("1 of the study's runs read"), "{err}");
    assert!(err.contains("3 simulated"), "{err}");
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
