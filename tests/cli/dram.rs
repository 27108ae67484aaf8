//! `apusim dram`: traces of other simulators, bad lines named, limits on cycles and
//! intervals, and idle gaps jumped.

use crate::common::{fails, ok};

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
