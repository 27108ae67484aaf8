//! Fuzz target: arbitrary bytes as a DRAM request trace in the `ramulator` format, parsed and the
//! first requests simulated. Errors naming the file and a line are fine; panics, hangs and
//! unbounded memory use are bugs.
#![no_main]

mod dram_common;

use apusim_dram::TraceFormat;
use libfuzzer_sys::fuzz_target;

/// Arrival spacings tried (`--interval`): all at once, the default, a small gap, a gap that
/// exercises the idle-time jump, and the documented maximum (2^62).
const INTERVALS: [u64; 5] = [0, 1, 7, 1 << 40, apusim_dram::MAX_CYCLE];

fuzz_target!(|data: &[u8]| {
    // The first byte picks the interval; the rest is the trace, so it stays mutable as text.
    let Some((&pick, trace)) = data.split_first() else {
        return;
    };
    let interval = INTERVALS[pick as usize % INTERVALS.len()];
    dram_common::check(trace, TraceFormat::Ramulator, interval);
});
