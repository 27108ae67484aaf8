//! Fuzz target: arbitrary bytes through the ChampSim importer, raw, gzip or xz (sniffed from
//! the first bytes). Errors naming the input are fine; panics, hangs and unbounded memory use
//! are bugs.
#![no_main]

mod trace_common;

use apusim_trace::import::{ChampSimSource, ImportOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let input = std::io::Cursor::new(data.to_vec());
    trace_common::drain(ChampSimSource::new(
        input,
        "<fuzz>",
        &ImportOptions::default(),
    ));
});
