//! Fuzz target: arbitrary bytes through the Csv importer. Errors naming the input are fine;
//! panics, hangs and unbounded memory use are bugs.
#![no_main]

mod trace_common;

use apusim_trace::import::{CsvSource, ImportOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trace_common::drain(Ok(CsvSource::new(
        data,
        "<fuzz>",
        &ImportOptions::default(),
    )));
});
