//! Trace files through the binary: `trace info` and `convert` round trips, and an imported
//! trace read by `gpu-l1 run` as its `.apt` conversion.

use crate::common::{fails, ok};
use std::path::Path;

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
