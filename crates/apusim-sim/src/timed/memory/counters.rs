//! Counters of the timed memory side: request latency per agent, the LLC's timing, and each
//! agent's DRAM traffic.

use apusim_dram::RowOutcomes;
use serde::{Deserialize, Serialize};

/// Time spent by requests, summed, per agent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AgentLatency {
    /// Accesses that missed the first level and hit the second (latency is fixed).
    pub second_level_hits: u64,
    /// Requests that went to the LLC, and their total time from issue to data (ticks).
    pub llc_requests: u64,
    pub llc_request_ticks: u64,
    /// Accesses merged into a line already on its way.
    pub merges: u64,
}

/// Counters of the LLC's timing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlcTiming {
    /// Misses sent to memory, and their total time from bank arrival to fill (ticks).
    pub misses: u64,
    pub miss_ticks: u64,
    /// Requests that merged into a line already on its way from memory.
    pub merges: u64,
    /// Requests that waited in a bank for a free MSHR.
    pub mshr_waits: u64,
}

/// DRAM requests as the timed system saw them (per source).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DramTraffic {
    pub reads: u64,
    pub writes: u64,
    /// Sum over reads of cycles from arrival at the controller to data (DRAM cycles).
    pub read_cycles: u64,
}

/// One source's DRAM counters so far; a window is the difference of two readings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DramCounts {
    pub traffic: DramTraffic,
    /// Bytes on the data bus.
    pub bytes: u64,
    /// The row-buffer outcome of each request's first command.
    pub rows: RowOutcomes,
}

impl DramCounts {
    pub fn since(&self, e: &DramCounts) -> DramCounts {
        DramCounts {
            traffic: DramTraffic {
                reads: self.traffic.reads - e.traffic.reads,
                writes: self.traffic.writes - e.traffic.writes,
                read_cycles: self.traffic.read_cycles - e.traffic.read_cycles,
            },
            bytes: self.bytes - e.bytes,
            rows: self.rows.since(&e.rows),
        }
    }
    pub fn add(&mut self, o: &DramCounts) {
        self.traffic.reads += o.traffic.reads;
        self.traffic.writes += o.traffic.writes;
        self.traffic.read_cycles += o.traffic.read_cycles;
        self.bytes += o.bytes;
        self.rows.merge(&o.rows);
    }
}

impl LlcTiming {
    pub fn since(&self, e: &LlcTiming) -> LlcTiming {
        LlcTiming {
            misses: self.misses - e.misses,
            miss_ticks: self.miss_ticks - e.miss_ticks,
            merges: self.merges - e.merges,
            mshr_waits: self.mshr_waits - e.mshr_waits,
        }
    }
}
