//! `apusim sim` against ChampSim: the generated ChampSim traces (stream, chase, loop) run on
//! the `champsim` preset must give ChampSim's IPC within 10% and LLC MPKI within 5%.
//!
//! The reference numbers (tests/data/champsim/reference.json) are ChampSim's own, measured
//! by scripts/champsim/side_by_side.sh on the same traces (same generator, seed and counts;
//! docs/validation.md, "ChampSim side by side"). ChampSim's srrip, drrip and ship modules
//! never update their state on fills (see apusim_cache::policies::champsim_rrip), so their
//! numbers are compared with apusim's `champsim-rrip`, which behaves as they run.
//!
//! Where a reference LLC MPKI is below [`MPKI_FLOOR`], a relative error means nothing (a
//! handful of misses in a million instructions); the bound is then absolute.

use anyhow::Result;
use apusim_sim::config::SystemConfig;
use apusim_sim::run::{Input, Inputs};
use apusim_sim::timed::{sim_policy, SimOptions};
use apusim_trace::import::{ChampSimSource, ChampSimWriter, ImportOptions};
use apusim_workloads::champsim::{Generator, Kind, Params};
use std::path::{Path, PathBuf};

/// IPC target: within 10% of ChampSim's.
const IPC_TOLERANCE: f64 = 0.10;
/// LLC MPKI target: within 5% of ChampSim's …
const MPKI_TOLERANCE: f64 = 0.05;
/// … or within this many MPKI when ChampSim's is below it.
const MPKI_FLOOR: f64 = 0.1;

struct ChampSimFile(PathBuf);

impl Inputs for ChampSimFile {
    fn open(&self) -> Result<Vec<Input>> {
        Ok(vec![Input {
            name: self.0.display().to_string(),
            source: Box::new(ChampSimSource::open(&self.0, &ImportOptions::default())?),
            remap: None,
            champsim: Some(self.0.clone()),
            program: None,
        }])
    }
    fn describe(&self) -> String {
        self.0.display().to_string()
    }
}

fn reference() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/champsim/reference.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The apusim policy that behaves as ChampSim's module `p` does.
fn as_champsim(p: &str) -> &'static str {
    match p {
        "lru" => "lru",
        _ => "champsim-rrip",
    }
}

fn check(kind: &str) {
    let r = reference();
    let k = &r[kind];
    let warm = k["warmup"].as_u64().unwrap();
    let sim = k["instructions"].as_u64().unwrap();
    let seed = k["seed"].as_u64().unwrap();
    let kind_v = Kind::parse(kind).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{kind}.champsimtrace"));
    let mut w = ChampSimWriter::create(&path).unwrap();
    let g = Generator::new(Params {
        kind: kind_v,
        bytes: kind_v.default_bytes(),
        instructions: warm + sim + 100_000,
        seed,
    })
    .unwrap();
    for rec in g {
        w.write(&rec).unwrap();
    }
    w.finish().unwrap();
    let cfg = SystemConfig::preset("champsim").unwrap();
    let opts = SimOptions {
        warmup: warm,
        instructions: Some(sim),
        progress: false,
        interval: None,
        sample: None,
        llc_switches: Default::default(),
    };
    let input = ChampSimFile(path);
    let mut failures = Vec::new();
    let mut results = std::collections::BTreeMap::new();
    for (p, want) in k["policies"].as_object().unwrap() {
        let ap = as_champsim(p);
        let got = results.entry(ap).or_insert_with(|| {
            let res = sim_policy(&cfg, ap, &input, &opts).unwrap();
            let c = &res.cores[0];
            assert!(c.reached_target, "{kind}: the trace ended early");
            let llc = c.levels.iter().find(|l| l.level == "llc").unwrap();
            (c.ipc, llc.mpki)
        });
        let (ipc, mpki) = *got;
        let (cs_ipc, cs_mpki) = (
            want["ipc"].as_f64().unwrap(),
            want["llc_mpki"].as_f64().unwrap(),
        );
        let ipc_err = (ipc - cs_ipc).abs() / cs_ipc;
        let mpki_ok = if cs_mpki < MPKI_FLOOR {
            (mpki - cs_mpki).abs() <= MPKI_FLOOR
        } else {
            (mpki - cs_mpki).abs() / cs_mpki <= MPKI_TOLERANCE
        };
        let line = format!(
            "{kind} {p} (apusim {ap}): IPC {ipc:.4} vs ChampSim {cs_ipc:.4} ({:+.1}%), \
             LLC MPKI {mpki:.3} vs {cs_mpki:.3}",
            100.0 * (ipc - cs_ipc) / cs_ipc
        );
        eprintln!("{line}");
        if ipc_err > IPC_TOLERANCE || !mpki_ok {
            failures.push(line);
        }
    }
    assert!(
        failures.is_empty(),
        "outside the targets:\n{}",
        failures.join("\n")
    );
}

#[test]
fn stream_matches_champsim() {
    check("stream");
}

#[test]
fn pointer_chase_matches_champsim() {
    check("chase");
}

#[test]
fn cache_friendly_loop_matches_champsim() {
    check("loop");
}
