//! [`ratio`]: the quotient of two counters, 0 when the denominator is 0. Every figure of a
//! timed run that divides counters (IPC, mean latencies, rates, the figures of windows and
//! intervals, the GPU's and the alone runs') divides with it, so it sits below all of them.

/// `a / b`, or 0 when `b` is 0 (IPC, mean latencies, rates; the alone runs of weighted
/// speedup compute their IPC with it too, so a cached one is the same to the bit).
pub(crate) fn ratio(a: u64, b: u64) -> f64 {
    if b > 0 {
        a as f64 / b as f64
    } else {
        0.0
    }
}
