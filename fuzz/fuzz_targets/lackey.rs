//! Fuzz target: arbitrary bytes through the Lackey importer. Errors naming the input are fine;
//! panics, hangs and unbounded memory use are bugs.
#![no_main]

mod trace_common;

use apusim_trace::import::{ImportOptions, LackeySource};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trace_common::drain(Ok(LackeySource::new(
        data,
        "<fuzz>",
        &ImportOptions::default(),
    )));
});
