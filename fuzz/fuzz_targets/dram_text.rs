//! Fuzz target: arbitrary bytes as a DRAM request trace in the `text` format, parsed and the
//! first requests simulated. Errors naming the file and a line are fine; panics, hangs and
//! unbounded memory use are bugs.
#![no_main]

mod dram_common;

use apusim_dram::TraceFormat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    dram_common::check(data, TraceFormat::ApusimText, 1);
});
