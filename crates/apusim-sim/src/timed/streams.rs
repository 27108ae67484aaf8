//! Timing counters per stream: what each kind of traffic (CPU instructions and data, and the
//! GPU's vertex, depth, color, texture, … streams of drp §5.1 and gspc §2) costs at the LLC
//! and in DRAM. The papers' GPU arguments are per stream (gspc: texture and render-target
//! reuse; the criticality paper: which stream's latency the frame feels), so the timed run
//! reports these beside the per-core and per-agent figures.

use super::ratio::ratio;
use apusim_dram::RowOutcomes;
use apusim_trace::Stream;
use serde::{Deserialize, Serialize};

/// Monotonic counters of one stream (a window is the difference of two readings).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamCounts {
    /// Demand requests that left their agent's private caches for the LLC and came back,
    /// and their total time from leaving to the data's return to the agent's stop (ticks).
    pub llc_requests: u64,
    pub llc_request_ticks: u64,
    /// Of that time, what its requests spent in an LLC bank waiting for a free MSHR (ticks).
    pub llc_mshr_wait_ticks: u64,
    /// Demand requests the LLC sent to memory, counted when the line is filled (merges into
    /// a line already on its way are not counted).
    pub llc_misses: u64,
    /// DRAM requests, and the sum over reads of cycles from arrival at the controller to
    /// data (DRAM cycles).
    pub dram_reads: u64,
    pub dram_writes: u64,
    pub dram_read_cycles: u64,
    /// Row-buffer outcomes of the stream's DRAM reads and writes (each request's first
    /// command), read from the DRAM model.
    pub dram_read_rows: RowOutcomes,
    pub dram_write_rows: RowOutcomes,
}

impl StreamCounts {
    pub fn since(&self, e: &StreamCounts) -> StreamCounts {
        StreamCounts {
            llc_requests: self.llc_requests - e.llc_requests,
            llc_request_ticks: self.llc_request_ticks - e.llc_request_ticks,
            llc_mshr_wait_ticks: self.llc_mshr_wait_ticks - e.llc_mshr_wait_ticks,
            llc_misses: self.llc_misses - e.llc_misses,
            dram_reads: self.dram_reads - e.dram_reads,
            dram_writes: self.dram_writes - e.dram_writes,
            dram_read_cycles: self.dram_read_cycles - e.dram_read_cycles,
            dram_read_rows: self.dram_read_rows.since(&e.dram_read_rows),
            dram_write_rows: self.dram_write_rows.since(&e.dram_write_rows),
        }
    }
}

/// Counters of every stream, indexed by the stream's byte.
pub type StreamTable = [StreamCounts; Stream::COUNT];

/// One stream's figures over a window.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct StreamResult {
    pub stream: String,
    pub llc_requests: u64,
    /// Mean LLC round trip (leaving the agent's private caches to data back at its stop),
    /// in uncore cycles.
    pub llc_request_cycles: f64,
    /// Of that round trip, the mean time waiting in an LLC bank for a free MSHR (over all its
    /// LLC requests, so the two compare directly), in uncore cycles (gem5's
    /// `blocked_cycles::no_mshrs`, per stream).
    #[serde(default)]
    pub llc_mshr_wait_cycles: f64,
    pub llc_misses: u64,
    pub dram_reads: u64,
    pub dram_writes: u64,
    /// Mean DRAM read latency (arrival at the controller to data), in DRAM cycles.
    pub dram_read_latency_cycles: f64,
    /// Row-buffer outcomes of the stream's DRAM reads and writes in the window.
    #[serde(default)]
    pub dram_read_rows: RowOutcomes,
    #[serde(default)]
    pub dram_write_rows: RowOutcomes,
}

impl StreamResult {
    /// The stream's figures by level and name (the rows of the CSV, `stream.LEVEL_NAME`, and
    /// of the results database).
    pub fn figures(&self) -> [(&'static str, &'static str, f64); 13] {
        let (r, w) = (&self.dram_read_rows, &self.dram_write_rows);
        [
            ("llc", "requests", self.llc_requests as f64),
            ("llc", "request_cycles", self.llc_request_cycles),
            ("llc", "mshr_wait_cycles", self.llc_mshr_wait_cycles),
            ("llc", "misses", self.llc_misses as f64),
            ("dram", "reads", self.dram_reads as f64),
            ("dram", "writes", self.dram_writes as f64),
            ("dram", "read_latency_cycles", self.dram_read_latency_cycles),
            ("dram", "read_row_hits", r.hits as f64),
            ("dram", "read_row_misses", r.misses as f64),
            ("dram", "read_row_conflicts", r.conflicts as f64),
            ("dram", "write_row_hits", w.hits as f64),
            ("dram", "write_row_misses", w.misses as f64),
            ("dram", "write_row_conflicts", w.conflicts as f64),
        ]
    }
}

/// The figures of every stream with traffic between readings `start` and `end`; `uncore`
/// is the uncore clock's period in ticks.
pub fn window(end: &StreamTable, start: &StreamTable, uncore: u64) -> Vec<StreamResult> {
    Stream::ALL
        .iter()
        .filter_map(|&s| {
            let i = s.to_byte() as usize;
            let c = end[i].since(&start[i]);
            (c != StreamCounts::default()).then(|| StreamResult {
                stream: s.name().to_string(),
                llc_requests: c.llc_requests,
                llc_request_cycles: ratio(c.llc_request_ticks, c.llc_requests) / uncore as f64,
                llc_mshr_wait_cycles: ratio(c.llc_mshr_wait_ticks, c.llc_requests) / uncore as f64,
                llc_misses: c.llc_misses,
                dram_reads: c.dram_reads,
                dram_writes: c.dram_writes,
                dram_read_latency_cycles: ratio(c.dram_read_cycles, c.dram_reads),
                dram_read_rows: c.dram_read_rows,
                dram_write_rows: c.dram_write_rows,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_lists_streams_with_traffic_and_their_means() {
        let mut start = [StreamCounts::default(); Stream::COUNT];
        let tex = Stream::StaticTexture.to_byte() as usize;
        start[tex].llc_requests = 5;
        start[tex].llc_request_ticks = 5_000;
        let mut end = start;
        end[tex].llc_requests = 15;
        end[tex].llc_request_ticks = 5_000 + 10 * 2_000;
        end[tex].llc_mshr_wait_ticks = 3 * 1_000;
        end[tex].dram_reads = 4;
        end[tex].dram_read_cycles = 400;
        end[tex].dram_read_rows = RowOutcomes {
            hits: 3,
            misses: 0,
            conflicts: 1,
        };
        let w = window(&end, &start, 500);
        assert_eq!(
            w.len(),
            1,
            "streams without traffic in the window are left out"
        );
        assert_eq!(w[0].stream, "static-texture");
        assert_eq!(w[0].llc_requests, 10);
        assert_eq!(w[0].llc_request_cycles, 4.0);
        assert_eq!(w[0].llc_mshr_wait_cycles, 0.6);
        assert_eq!(w[0].dram_read_latency_cycles, 100.0);
        assert_eq!(w[0].dram_read_rows.hit_rate(), 0.75);
        assert_eq!(w[0].dram_write_rows, RowOutcomes::default());
    }
}
