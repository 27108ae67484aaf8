//! Fuzz target: a TOML DRAM configuration (`apusim dram --preset FILE.toml`) and `--set
//! KEY=VALUE` overrides. The input is the TOML text, then optionally a NUL byte and one
//! override per line. Errors are fine; panics and hangs are bugs. A configuration that
//! validates is built and runs a few requests.
#![no_main]

mod config_common;

use apusim_dram::{run_requests, DramConfig, MemorySystem, Request};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

/// Banks (channels × ranks × banks per rank) of a model that is built: validation allows
/// 256 × 64 × 256, whose state takes seconds to set up, which would read as a timeout.
const MAX_BANKS: u64 = 4096;

fuzz_target!(|data: &[u8]| {
    let Some((text, overrides)) = config_common::split(data) else {
        return;
    };
    let Ok(mut cfg) = DramConfig::from_toml(text, Path::new("<fuzz>")) else {
        return;
    };
    for line in &overrides {
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        if cfg.apply_override(k.trim(), v.trim()).is_err() {
            return;
        }
    }
    if cfg.validate().is_err() {
        return;
    }
    let org = &cfg.spec.org;
    if u64::from(org.channels) * u64::from(org.ranks) * u64::from(org.banks_per_rank()) > MAX_BANKS
    {
        return;
    }
    let Ok(mut mem) = MemorySystem::new(cfg) else {
        return;
    };
    mem.set_report_completions(false);
    // Reads and writes spread over rows and banks, then an idle gap and one more read.
    let reqs = (0..16u64).map(|i| Request {
        id: i,
        addr: i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20,
        is_write: i % 3 == 0,
        source: 0,
        stream: 0,
        critical: false,
        arrival: if i == 15 { 1 << 40 } else { i },
    });
    run_requests(&mut mem, reqs.map(Ok)).expect("valid requests run");
    let _ = mem.report();
});
