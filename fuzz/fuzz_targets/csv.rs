//! Fuzz target: arbitrary bytes through the Csv parser. Errors are fine; panics, hangs and
//! unbounded memory use are bugs.
#![no_main]

use apusim_trace::import::{check_bytes, Format};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Bounded so that a small compressed input expanding to a huge trace cannot time out.
    let _ = check_bytes(data, Format::Csv, 1 << 20);
});
