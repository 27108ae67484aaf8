//! The harness shared by the three DRAM request-trace targets: parse the bytes as one format,
//! then run the first requests through the DRAM model as `apusim dram` does.

use apusim_dram::{presets::preset, run_requests, MemorySystem, TraceFormat, TraceReader};

/// Requests parsed before giving up, so that a long input cannot time out.
const PARSE_LIMIT: usize = 1 << 16;

/// Requests simulated: enough to reach queueing, refresh and idle-gap jumps, few enough that
/// every execution is short (a simulated request costs far more than a parsed one).
const SIM_LIMIT: usize = 64;

/// Parse `data` as `format` with Ramulator interval `interval`; every error must name the
/// file and a line inside the input. Then simulate the first [`SIM_LIMIT`] requests.
pub fn check(data: &[u8], format: TraceFormat, interval: u64) {
    let lines = data.split(|&b| b == b'\n').count();
    let mut ok = Vec::new();
    for r in TraceReader::new(data, "<fuzz>", format, interval).take(PARSE_LIMIT) {
        match r {
            Ok(req) => ok.push(req),
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.contains("<fuzz>:"), "error without the file: {msg}");
                if let apusim_dram::DramError::Parse { line, .. } = e {
                    assert!(line >= 1 && line <= lines, "line {line} of {lines}: {msg}");
                }
                break;
            }
        }
    }
    let mut mem = MemorySystem::new(preset("ddr3-1600-11-1ch").expect("preset")).expect("system");
    mem.set_report_completions(false);
    ok.truncate(SIM_LIMIT);
    let n = ok.len() as u64;
    let done = run_requests(&mut mem, ok.into_iter().map(Ok)).expect("parsed requests run");
    assert_eq!(done, n);
    let report = mem.report();
    assert_eq!(report.requests, n, "requests lost");
}
