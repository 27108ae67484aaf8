//! What a timed run reports: per-core windows, DRAM traffic per source, the system-wide
//! figures, and the result of one policy's run.

use super::super::gpu::GpuResult;
use super::super::hints::HintCounters;
use super::super::intervals::Interval;
use super::super::memory::{DramCounts, LlcTiming};
use super::super::occupancy::AgentOccupancy;
use super::super::sampling::Sampled;
use super::super::streams::StreamResult;
use crate::stats::RunStats;
use apusim_timing::CoreStats;
use serde::{Deserialize, Serialize};

/// One level's demand traffic of one core in the measured window.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LevelWindow {
    pub level: String,
    pub accesses: u64,
    pub misses: u64,
    /// Demand misses (reads, writes, prefetches) per thousand instructions.
    pub mpki: f64,
}

/// One core's measured window.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CoreResult {
    pub agent: String,
    pub instructions: u64,
    pub cycles: u64,
    pub ipc: f64,
    /// False if the trace ended before the target.
    pub reached_target: bool,
    /// Times the core's trace was started again from its beginning (a trace shorter than
    /// the run is replayed while any core has not reached its target).
    pub restarts: u64,
    pub core: CoreStats,
    pub levels: Vec<LevelWindow>,
    /// Requests to the LLC and their mean round trip (issue to data) in core cycles.
    pub llc_requests: u64,
    pub llc_request_cycles: f64,
    pub merges: u64,
}

/// One source's DRAM traffic in the measured window.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DramSource {
    pub agent: String,
    pub reads: u64,
    pub writes: u64,
    pub bandwidth_gbps: f64,
    /// Mean time of a read from arrival at the controller (a wait for a queue slot
    /// included) to its data, in DRAM cycles.
    pub read_latency_cycles: f64,
    pub row_hit_rate: f64,
}

impl DramSource {
    pub(super) fn new(agent: String, c: &DramCounts, seconds: f64) -> DramSource {
        let t = &c.traffic;
        DramSource {
            agent,
            reads: t.reads,
            writes: t.writes,
            bandwidth_gbps: if seconds > 0.0 {
                c.bytes as f64 / seconds / 1e9
            } else {
                0.0
            },
            read_latency_cycles: ratio(t.read_cycles, t.reads),
            row_hit_rate: ratio(c.row_hits, c.row_accesses),
        }
    }
}

/// `a / b`, or 0 when `b` is 0 (IPC, mean latencies, rates; the alone runs of weighted
/// speedup compute their IPC with it too, so a cached one is the same to the bit).
pub(crate) fn ratio(a: u64, b: u64) -> f64 {
    if b > 0 {
        a as f64 / b as f64
    } else {
        0.0
    }
}

/// The result of one policy's timed run. System-wide figures cover the measured window:
/// from the moment the last core finished its warm-up to the moment the last core reached its
/// target.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SimResult {
    pub policy: String,
    pub cores: Vec<CoreResult>,
    /// CPU cycles until the last core reached its target (warm-up included).
    pub cycles: u64,
    /// The system's figures over the measured window (in JSON, at the top level).
    #[serde(flatten)]
    pub system: SystemWindow,
    /// Times the open-loop (GPU) traces were replayed from their start.
    pub open_loop_restarts: u64,
    /// The timed GPU's run of its program (a GPGPU input on `timing.gpu`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuResult>,
    pub policy_stats: Vec<(String, f64)>,
    /// Each agent's mean part of the LLC over the measured window ([`super::super::occupancy`]).
    pub llc_occupancy: Vec<AgentOccupancy>,
    /// A sampled run's estimates (`--sample`): each core's IPC with its interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Sampled>,
    /// Every counter per interval, with `--interval` (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<Interval>,
    /// Weighted and harmonic speedup and maximum slowdown against the jobs' alone runs
    /// (filled by the caller that made them; see [`mod@super::super::speedup`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speedup: Option<super::super::speedup::Speedup>,
    /// What the DRAM schedulers were told: IM-LLC emergency intervals and GPGPU priority
    /// windows (gpu-access-criticality §4.3).
    pub hints: HintCounters,
    /// The DRAM scheduler's own counters over the run, summed over channels (e.g. IM-SCHED's
    /// intervals at its probability cap).
    pub dram_scheduler: Vec<(String, f64)>,
    /// The functional counters of the whole run (warm-up included).
    pub functional: RunStats,
    #[serde(skip)]
    pub seconds: f64,
}

impl SimResult {
    /// The value of the LLC policy's statistic `name` at the end of the run (`None` when the
    /// policy reports no such statistic).
    pub fn policy_stat(&self, name: &str) -> Option<f64> {
        self.policy_stats
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| *v)
    }
}

/// The system-wide figures between two readings (the measured window, or one interval).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SystemWindow {
    /// CPU cycles of the window.
    pub window_cycles: u64,
    /// LLC misses and their mean time from bank arrival to fill, in uncore cycles.
    pub llc_misses: u64,
    pub llc_miss_cycles: f64,
    pub llc: LlcTiming,
    /// DRAM traffic per agent, and of all agents together.
    pub dram: Vec<DramSource>,
    pub dram_bandwidth_gbps: f64,
    pub dram_row_hit_rate: f64,
    pub dram_read_latency_cycles: f64,
    /// Per stream with traffic: LLC round trips and misses, DRAM traffic and latency.
    pub streams: Vec<StreamResult>,
    /// Network messages and the cycles they waited for a link.
    pub network_messages: u64,
    pub network_wait_cycles: f64,
}

impl SystemWindow {
    /// The window's scalar figures by name (the rows of the CSV and of the results database).
    pub fn figures(&self) -> [(&'static str, f64); 8] {
        [
            ("window_cycles", self.window_cycles as f64),
            ("llc_misses", self.llc_misses as f64),
            ("llc_miss_cycles", self.llc_miss_cycles),
            ("dram_bandwidth_gbps", self.dram_bandwidth_gbps),
            ("dram_row_hit_rate", self.dram_row_hit_rate),
            ("dram_read_latency_cycles", self.dram_read_latency_cycles),
            ("network_messages", self.network_messages as f64),
            ("network_wait_cycles", self.network_wait_cycles),
        ]
    }
}
