//! Every study is a sweep: its printed spec swept and read back from the database gives the
//! study's table, and a study stopped halfway resumes where it stopped.

use super::{metrics, path, write};
use crate::common::{apusim, fails, ok};
use apusim_sweep::Store;
use std::path::Path;

/// stdout and stderr of a command that must succeed.
fn ok_both(args: &[&str]) -> (String, String) {
    let o = apusim(args);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(o.status.success(), "apusim {args:?}: {err}");
    (String::from_utf8(o.stdout).unwrap(), err)
}

/// stdout and stderr of `apusim study ARGS...` on two threads with trace cache `cache`,
/// then `extra`.
fn study_in(cache: &str, args: &[&str], extra: &[&str]) -> (String, String) {
    let mut all = vec!["study"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--cache-dir", cache, "--threads", "2"]);
    all.extend_from_slice(extra);
    ok_both(&all)
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
    // One 1-CPU mix with a short GPU kernel (TAP-1C-C: sort).
    let args = ["tap-fig6", "--mixes", "TAP-1C-C", "--instructions", "2000"];
    let study = |extra: &[&str]| study_in(&cache, &args, extra);
    let (plain, _) = study(&[]);
    // The spec lists every timed run of the study: LRU, UCP and TAP-UCP on the mix.
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

/// `--frames paper` gives a mix's rendering job its title's frame region (drp Table 1: HDR1,
/// frames 600–601) in the study, its printed spec and the sweep of that spec alike: the
/// sweep finds the study's runs under its own keys.
#[test]
fn a_studys_frames_reach_its_spec_and_its_keys() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cache = path(d, "cache");
    let args = [
        "drp-fig13",
        "--mixes",
        "S3",
        "--frames",
        "paper",
        "--instructions",
        "20000",
        "--limit",
        "100000",
    ];
    let study = |extra: &[&str]| study_in(&cache, &args, extra);
    let db = path(d, "frames.sqlite");
    let (plain, _) = study(&["--db", &db]);
    assert!(plain.contains("frames paper"), "{plain}");
    let (spec, _) = study(&["--print-spec"]);
    assert_eq!(spec.matches("frames = \"paper\"").count(), 1, "{spec}");
    let spec = write(d, "frames.toml", &spec);
    let out = ok(&["sweep", &spec, "--db", &db, "--cache-dir", &cache]);
    assert!(out.contains("2 points, 2 already in"), "{out}");
    // The two frames are in the trace the runs read, and only there.
    let traces: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("-render-"))
        .collect();
    assert_eq!(traces.len(), 1, "{traces:?}");
    assert!(traces[0].contains("-frames2-"), "{traces:?}");
}
