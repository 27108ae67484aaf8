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

/// Occupancy integrals of the DRAM side at one DRAM cycle: sums over DRAM cycles of the
/// requests in the controllers' read and write queues, and of the reads and write-backs
/// waiting for a slot in them, over all channels. Two readings give a window's mean
/// occupancies (gem5's `avgRdQLen`/`avgWrQLen`, summed over channels).
#[derive(Clone, Copy, Debug, Default)]
pub struct DramQueues {
    pub cycle: u64,
    pub read_queue: u128,
    pub write_queue: u128,
    pub reads_waiting: u128,
    pub writes_waiting: u128,
}

impl DramQueues {
    /// The mean occupancies from `start` to `self`: read queue, write queue, reads waiting,
    /// write-backs waiting (zeros over an empty stretch).
    pub fn means_since(&self, start: &DramQueues) -> [f64; 4] {
        let cycles = self.cycle.saturating_sub(start.cycle);
        let mean = |e: u128, s: u128| {
            if cycles == 0 {
                0.0
            } else {
                e.saturating_sub(s) as f64 / cycles as f64
            }
        };
        [
            mean(self.read_queue, start.read_queue),
            mean(self.write_queue, start.write_queue),
            mean(self.reads_waiting, start.reads_waiting),
            mean(self.writes_waiting, start.writes_waiting),
        ]
    }
}
