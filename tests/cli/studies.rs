//! `apusim study`: the papers' figures as one command each, their options, CSV, and the same
//! numbers on any thread count.

use crate::common::{fails, ok};

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
