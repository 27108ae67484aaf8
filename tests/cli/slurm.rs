//! `apusim sweep --slurm` and `apusim results merge`: the batch script of a job array, slices
//! of a sweep's keys that partition it, shards merged into what one local sweep writes (and
//! merged again with no change), bad shards named and skipped, and a sweep submitted for real
//! through a SLURM cluster (`scripts/slurm-local.sh start` runs one on this machine; under CI
//! the test fails without one).

use crate::common;

use apusim_sweep::Store;
use common::{fails_output as fails, ok, small_traces};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A spec of 8 short functional points (4 policies × 2 LLC sizes) over the small traces.
fn spec(dir: &Path) -> String {
    small_traces(dir, 5_000);
    let p = dir.join("grid.toml");
    std::fs::write(
        &p,
        "traces = [\"agent0.apt\", \"agent1.apt\", \"agent2.apt\"]\nlimit = 8000\n[grid]\n\
         policy = [\"lru\", \"srrip\", \"drrip\", \"nru\"]\n\
         [grid.set]\nllc = [\"1048576,16,64\", \"2097152,16,64\"]\n",
    )
    .unwrap();
    p.to_str().unwrap().to_string()
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().unwrap().to_string()
}

/// Every run's metric rows by key, in the database's stable order.
type Metrics = BTreeMap<String, Vec<(String, String, String, String, u64)>>;

fn metrics(db: &str) -> Metrics {
    let s = Store::open_existing(Path::new(db)).unwrap();
    s.runs()
        .unwrap()
        .into_iter()
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

/// Every run by key: what ran and how it ended (not when, where, or its row id).
fn runs(db: &str) -> BTreeMap<String, serde_json::Value> {
    let s = Store::open_existing(Path::new(db)).unwrap();
    s.runs()
        .unwrap()
        .into_iter()
        .map(|r| {
            let r = r.run;
            let v = serde_json::json!({
                "sweep": r.sweep, "command": r.command, "mode": r.mode, "params": r.params,
                "config": r.config, "inputs": r.inputs, "status": r.status, "error": r.error,
                "version": r.version, "git_commit": r.git_commit,
            });
            (r.key, v)
        })
        .collect()
}

fn keys(db: &str) -> BTreeSet<String> {
    runs(db).into_keys().collect()
}

#[test]
fn dry_run_prints_the_batch_script_and_submits_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spec = spec(d);
    let (db, shards) = (path(d, "r.sqlite"), path(d, "my shards"));
    let script = ok(&[
        "sweep",
        &spec,
        "--db",
        &db,
        "--slurm",
        "--dry-run",
        "--tasks",
        "3",
        "--partition",
        "short",
        "--time",
        "0:10:00",
        "--shard-dir",
        &shards,
        "-j",
        "2",
    ]);
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_apusim")).unwrap();
    let spec_abs = std::fs::canonicalize(&spec).unwrap();
    assert!(script.starts_with("#!/bin/bash\n"), "{script}");
    for want in [
        "#SBATCH --array=0-2\n".to_string(),
        "#SBATCH --partition=short\n".to_string(),
        "#SBATCH --time=0:10:00\n".to_string(),
        "#SBATCH --cpus-per-task=2\n".to_string(),
        "#SBATCH --job-name=apusim-grid\n".to_string(),
        format!("#SBATCH --output=\"{shards}/slurm-%A_%a.out\"\n"),
        format!("exec {} sweep {}", exe.display(), spec_abs.display()),
        "--shard \"$SLURM_ARRAY_TASK_ID/3\"".to_string(),
        format!("--db '{shards}/shard-'\"$SLURM_ARRAY_TASK_ID\".sqlite -j 2"),
    ] {
        assert!(script.contains(&want), "no `{want}` in\n{script}");
    }
    assert!(!Path::new(&shards).exists() && !Path::new(&db).exists());
    let (_, err) = fails(&[
        "sweep",
        &spec,
        "--db",
        &db,
        "--slurm",
        "--dry-run",
        "--partition",
        "a\"b",
    ]);
    assert!(
        err.contains("--partition") && err.contains("double quote"),
        "{err}"
    );

    // Never more tasks than points; the default shard directory is beside the database.
    let script = ok(&[
        "sweep",
        &spec,
        "--db",
        &db,
        "--slurm",
        "--dry-run",
        "--tasks",
        "50",
    ]);
    assert!(script.contains("#SBATCH --array=0-7\n"), "{script}");
    assert!(script.contains(&format!("{db}.shards/shard-")), "{script}");
    assert!(script.contains("\"$SLURM_ARRAY_TASK_ID/8\""), "{script}");

    // A bad spec is refused before anything is written or submitted.
    let bad = path(d, "bad.toml");
    std::fs::write(
        &bad,
        "traces = [\"agent0.apt\", \"agent1.apt\", \"agent2.apt\"]\npolicy = \"srip\"\n",
    )
    .unwrap();
    let (_, err) = fails(&[
        "sweep",
        &bad,
        "--db",
        &db,
        "--slurm",
        "--shard-dir",
        &shards,
    ]);
    assert!(
        err.contains("bad.toml") && err.contains("did you mean `srrip`"),
        "{err}"
    );
    assert!(!Path::new(&shards).exists());
    // Options of --slurm without it, and --shard with it, are refused.
    fails(&["sweep", &spec, "--db", &db, "--dry-run"]);
    fails(&["sweep", &spec, "--db", &db, "--slurm", "--shard", "0/2"]);
    let (_, err) = fails(&["sweep", &spec, "--db", &db, "--shard", "2/2"]);
    assert!(
        err.contains("--shard") && err.contains("0 <= I < N"),
        "{err}"
    );
}

#[test]
fn without_sbatch_the_error_says_how_to_get_a_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spec = spec(d);
    let db = path(d, "r.sqlite");
    let o = Command::new(env!("CARGO_BIN_EXE_apusim"))
        .args(["sweep", &spec, "--db", &db, "--slurm"])
        .env("PATH", d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("sbatch") && err.contains("not on PATH") && err.contains("slurm-local.sh"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn shards_partition_the_sweep_and_merge_into_what_a_local_sweep_writes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spec = spec(d);
    let local = path(d, "local.sqlite");
    ok(&["sweep", &spec, "--db", &local, "-j", "2"]);
    let all = keys(&local);
    assert_eq!(all.len(), 8);

    let shard_dir = d.join("shards");
    std::fs::create_dir(&shard_dir).unwrap();
    let mut union = BTreeSet::new();
    for i in 0..3 {
        let db = path(&shard_dir, &format!("shard-{i}.sqlite"));
        ok(&["sweep", &spec, "--db", &db, "--shard", &format!("{i}/3")]);
        let k = keys(&db);
        assert!(
            k.len() == 2 || k.len() == 3,
            "slice {i}/3 has {} keys",
            k.len()
        );
        for key in k {
            assert!(union.insert(key.clone()), "{key} in two slices");
        }
    }
    assert_eq!(union, all, "the slices do not cover the sweep");

    let merged = path(d, "merged.sqlite");
    let out = ok(&["results", "merge", &merged, shard_dir.to_str().unwrap()]);
    assert!(
        out.contains("merged 3 of 3 shards") && out.contains("8 runs added"),
        "{out}"
    );
    assert_eq!(metrics(&merged), metrics(&local));
    assert_eq!(runs(&merged), runs(&local));

    // Merging again, or merging what a database already holds, changes nothing.
    let before = metrics(&merged);
    let out = ok(&[
        "results",
        "merge",
        &merged,
        shard_dir.to_str().unwrap(),
        &local,
    ]);
    assert!(
        out.contains("0 runs added (0 metric rows), 16 already there"),
        "{out}"
    );
    assert_eq!(metrics(&merged), before);
    assert_eq!(runs(&merged), runs(&local));
    let listed = ok(&["results", &merged]);
    assert!(listed.contains("8 runs in"), "{listed}");

    // A run the database holds as failed is replaced by the shard's `ok` run.
    let retried = path(d, "retried.sqlite");
    std::fs::copy(&local, &retried).unwrap();
    let victim = all.iter().next().unwrap().clone();
    rusqlite::Connection::open(&retried)
        .unwrap()
        .execute_batch(&format!(
            "DELETE FROM metrics WHERE run = (SELECT id FROM runs WHERE key = '{victim}'); \
             UPDATE runs SET status = 'failed', error = 'killed' WHERE key = '{victim}';"
        ))
        .unwrap();
    assert_ne!(metrics(&retried), metrics(&local));
    let out = ok(&["results", "merge", &retried, shard_dir.to_str().unwrap()]);
    assert!(out.contains("1 runs added"), "{out}");
    assert_eq!(metrics(&retried), metrics(&local));
    assert_eq!(runs(&retried), runs(&local));
}

#[test]
fn bad_shards_are_named_and_skipped_and_the_good_ones_merged_whole() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spec = spec(d);
    let good = path(d, "good.sqlite");
    ok(&["sweep", &spec, "--db", &good, "--shard", "0/2"]);
    // Slice 1/2, then its pages after the first two overwritten: SQLite still opens it.
    let corrupt = path(d, "corrupt.sqlite");
    ok(&["sweep", &spec, "--db", &corrupt, "--shard", "1/2"]);
    let mut bytes = std::fs::read(&corrupt).unwrap();
    assert!(bytes.len() > 3 * 4096, "{} bytes", bytes.len());
    for (i, b) in bytes[2 * 4096..].iter_mut().enumerate() {
        *b = (i * 37 % 251) as u8;
    }
    std::fs::write(&corrupt, &bytes).unwrap();
    let garbage = path(d, "garbage.sqlite");
    std::fs::write(
        &garbage,
        b"these are not the bytes of a database\n".repeat(200),
    )
    .unwrap();
    let foreign = path(d, "foreign.sqlite");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE runs (x); INSERT INTO runs VALUES (1);")
        .unwrap();
    let newer = path(d, "newer.sqlite");
    std::fs::copy(&good, &newer).unwrap();
    rusqlite::Connection::open(&newer)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let orphan = path(d, "orphan.sqlite");
    ok(&["sweep", &spec, "--db", &orphan, "--shard", "1/2"]);
    rusqlite::Connection::open(&orphan)
        .unwrap()
        .execute_batch("PRAGMA foreign_keys = OFF; DELETE FROM runs WHERE id = 1;")
        .unwrap();
    let missing = path(d, "missing.sqlite");

    let merged = path(d, "merged.sqlite");
    let (out, err) = fails(&[
        "results", "merge", &merged, &garbage, &good, &foreign, &corrupt, &newer, &orphan, &missing,
    ]);
    for (shard, why) in [
        (&garbage, "not an SQLite database"),
        (&foreign, "not an apusim results database"),
        (&corrupt, "corrupt"),
        (&newer, "newer apusim"),
        (&orphan, "inconsistent: "),
        (&missing, "cannot open it"),
    ] {
        let line = err
            .lines()
            .find(|l| l.contains(&format!("skipped shard {shard}:")))
            .unwrap_or_else(|| panic!("{shard} not named:\n{err}"));
        assert!(line.contains(why), "{line}");
    }
    assert!(err.contains("6 of 7 shards skipped"), "{err}");
    assert!(out.contains("merged 1 of 7 shards"), "{out}");
    assert_eq!(keys(&merged), keys(&good), "a bad shard was merged in part");
    assert_eq!(metrics(&merged), metrics(&good));
    assert!(
        !Path::new(&missing).exists(),
        "merge created a missing shard"
    );
}

/// Whether a SLURM cluster answers (`sinfo` lists a node).
fn cluster_answers() -> bool {
    Command::new("sinfo")
        .args(["-h", "-o", "%T"])
        .output()
        .map(|o| o.status.success() && !o.stdout.is_empty())
        .unwrap_or(false)
}

#[test]
fn a_sweep_submitted_through_slurm_merges_into_what_a_local_sweep_writes() {
    if !cluster_answers() {
        let why = "no SLURM cluster answers `sinfo`; start one on this machine with \
                   `scripts/slurm-local.sh start` (as root)";
        if std::env::var_os("CI").is_some() {
            panic!("{why}");
        }
        eprintln!("skipped: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let spec = spec(d);
    let local = path(d, "local.sqlite");
    ok(&["sweep", &spec, "--db", &local, "-j", "2"]);
    // A shard directory with a space: the batch script quotes it for sbatch and for the shell.
    let (merged, shards) = (path(d, "merged.sqlite"), path(d, "slurm shards"));
    let t0 = std::time::Instant::now();
    let out = ok(&[
        "sweep",
        &spec,
        "--db",
        &merged,
        "--slurm",
        "--wait",
        "--tasks",
        "3",
        "--shard-dir",
        &shards,
        "--time",
        "0:10:00",
    ]);
    eprintln!(
        "8 points through SLURM in 3 array tasks: {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert!(
        out.contains("submitted job") && out.contains("merged 3 of 3 shards"),
        "{out}"
    );
    for i in 0..3 {
        assert!(Path::new(&shards)
            .join(format!("shard-{i}.sqlite"))
            .exists());
    }
    assert!(Path::new(&shards).join("sweep.sbatch").exists());
    assert_eq!(keys(&merged).len(), 8);
    assert_eq!(metrics(&merged), metrics(&local));
    assert_eq!(runs(&merged), runs(&local));
    let outputs: BTreeSet<PathBuf> = std::fs::read_dir(&shards)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".out"))
        .collect();
    assert_eq!(
        outputs.len(),
        3,
        "one output file per array task: {outputs:?}"
    );
}
