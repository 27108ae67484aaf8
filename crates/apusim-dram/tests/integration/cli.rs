//! `apusim dram` as a library: trace files in each format, output files, error messages.

use apusim_dram::{presets, run_trace_file, DramCliArgs, DramConfig, TraceFormat};
use std::path::PathBuf;

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("apusim-dram-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn runs_each_format_and_writes_reports() {
    let dir = tmp_dir("formats");
    let text = dir.join("t.txt");
    std::fs::write(
        &text,
        "# addr op cycle source stream critical\n0x1000 R 0 gpu 2 1\n0x1040 W 10 cpu1\n0x2000 R 20\n",
    )
    .unwrap();
    let ram = dir.join("t.ramulator2.trace");
    std::fs::write(&ram, "LD 0x1000\nST 0x1040\nLD 0x2000\n").unwrap();
    let d3 = dir.join("t.dramsim3.trace");
    std::fs::write(&d3, "0x1000 READ 0\n0x1040 WRITE 10\n0x2000 READ 20\n").unwrap();

    let mut a = DramCliArgs::new("ddr3-1600-11-1ch", &text);
    a.json = Some(dir.join("out.json"));
    a.csv = Some(dir.join("out.csv"));
    let r = run_trace_file(&a).unwrap();
    assert_eq!(r.requests, 3);
    assert_eq!(r.format.as_deref(), Some("apusim-text"));
    assert_eq!(r.sources.len(), 3); // cpu0, cpu1, gpu
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out.json")).unwrap()).unwrap();
    assert_eq!(json["requests"], 3);
    assert_eq!(json["sources"]["gpu"]["reads"], 1);
    let csv = std::fs::read_to_string(dir.join("out.csv")).unwrap();
    assert!(csv.starts_with("scope,reads,writes"));
    assert!(r.to_table().contains("requests 3"));

    // Same requests in the other two formats (Ramulator: arrival = line × interval).
    let mut b = DramCliArgs::new("ddr3-1600-11-1ch", &d3);
    b.format = TraceFormat::Auto;
    let rb = run_trace_file(&b).unwrap();
    assert_eq!(rb.format.as_deref(), Some("dramsim3"));
    let mut c = DramCliArgs::new("ddr3-1600-11-1ch", &ram);
    c.overrides.push(("interval".into(), "10".into()));
    let rc = run_trace_file(&c).unwrap();
    assert_eq!(rc.format.as_deref(), Some("ramulator, interval 10"));
    assert_eq!(rb.total, rc.total);
    assert_eq!(rb.cycles, rc.cycles);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_trace_names_file_and_line() {
    let dir = tmp_dir("bad");
    let t = dir.join("bad.trace");
    std::fs::write(&t, "0x40 READ 1\n0x80 READ 2\n0x80 FETCH 3\n").unwrap();
    let mut a = DramCliArgs::new("reference", &t);
    a.format = TraceFormat::DramSim3;
    let e = run_trace_file(&a).unwrap_err().to_string();
    assert!(e.contains("bad.trace:3:") && e.contains("FETCH"), "{e}");
    let missing = DramCliArgs::new("reference", dir.join("nope.trace"));
    let e = run_trace_file(&missing).unwrap_err().to_string();
    assert!(e.contains("nope.trace"), "{e}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn toml_config_file_as_preset() {
    let dir = tmp_dir("toml");
    let cfg = dir.join("my.toml");
    let mut c: DramConfig = apusim_dram::presets::preset("tap").unwrap();
    c.spec.timing.cl = 10;
    std::fs::write(&cfg, c.to_toml()).unwrap();
    let t = dir.join("t.trace");
    std::fs::write(&t, "0x0 R 0\n").unwrap();
    let a = DramCliArgs::new(cfg.display().to_string(), &t);
    let (loaded, _) = a.config().unwrap();
    assert_eq!(loaded.spec.timing.cl, 10);
    assert_eq!(loaded.spec.org.channels, 4);
    // An impossible timing set in a file is refused at load.
    c.spec.timing.rc = 5;
    std::fs::write(&cfg, c.to_toml()).unwrap();
    let e = a.config().unwrap_err().to_string();
    assert!(e.contains("tRC (5)"), "{e}");
    assert!(presets().len() >= 5);
    let _ = std::fs::remove_dir_all(dir);
}
