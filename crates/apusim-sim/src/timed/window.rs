//! The figures of a window of a timed run (the measured window, or one interval) and the
//! counter snapshots they are computed from: every counter is monotonic, so a window is the
//! difference of two snapshots. Per core: instructions, cycles, IPC, MPKI per level and the
//! LLC round trip ([`CoreResult`]); system-wide: the LLC's timing, DRAM traffic per source,
//! the streams and the network ([`SystemWindow`]). The engine loop reads its measured window
//! and the interval recorder its intervals with the same functions (`core_window`,
//! `system_window`).

use super::memory::{AgentLatency, DramCounts, DramQueues, LlcTiming, TimedMemory};
use super::ratio::ratio;
use super::streams::{self, StreamResult, StreamTable};
use crate::config::SystemConfig;
use crate::stats::RunStats;
use apusim_cache::Policy;
use apusim_timing::{CoreStats, Domain, LinkCount, Tick};
use apusim_trace::Agent;
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
    /// The source's figures by name (the rows of the CSV, `dram.NAME`, and of the results
    /// database).
    pub fn figures(&self) -> [(&'static str, f64); 5] {
        [
            ("reads", self.reads as f64),
            ("writes", self.writes as f64),
            ("bandwidth_gbps", self.bandwidth_gbps),
            ("read_latency_cycles", self.read_latency_cycles),
            ("row_hit_rate", self.row_hit_rate),
        ]
    }

    fn new(agent: String, c: &DramCounts, seconds: f64) -> DramSource {
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
            row_hit_rate: c.rows.hit_rate(),
        }
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
    /// Times the DRAM controllers switched into write-drain mode (all channels).
    #[serde(default)]
    pub dram_write_drains: u64,
    /// Mean requests in the DRAM controllers' read queues and in their write queues over the
    /// window (summed over channels; gem5's `avgRdQLen` and `avgWrQLen`).
    #[serde(default)]
    pub dram_read_queue_mean: f64,
    #[serde(default)]
    pub dram_write_queue_mean: f64,
    /// Mean reads and write-backs waiting for a slot in a full controller queue over the
    /// window (`timed/backlog.rs`; the write-backs are the LLC's write-back buffer, which
    /// holds the GPU when it is full).
    #[serde(default)]
    pub dram_reads_waiting_mean: f64,
    #[serde(default)]
    pub dram_writes_waiting_mean: f64,
    /// Per stream with traffic: LLC round trips and misses, DRAM traffic and latency.
    pub streams: Vec<StreamResult>,
    /// Network messages and the cycles they waited for a link.
    pub network_messages: u64,
    pub network_wait_cycles: f64,
    /// Each directed ring link that carried messages in the window (none on the fixed
    /// network).
    #[serde(default)]
    pub network_links: Vec<NetworkLink>,
}

/// What one directed ring link carried in a window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetworkLink {
    /// The stops it joins: `cpuN`, `gpu`, `llcN` (an LLC bank) or `mcN` (a memory
    /// controller).
    pub from: String,
    pub to: String,
    pub messages: u64,
    /// Network cycles its messages waited for it, in all.
    pub wait_cycles: f64,
}

impl SystemWindow {
    /// The window's scalar figures by name (the rows of the CSV and of the results database).
    pub fn figures(&self) -> [(&'static str, f64); 12] {
        [
            ("window_cycles", self.window_cycles as f64),
            ("llc_misses", self.llc_misses as f64),
            ("llc_miss_cycles", self.llc_miss_cycles),
            ("dram_bandwidth_gbps", self.dram_bandwidth_gbps),
            ("dram_row_hit_rate", self.dram_row_hit_rate),
            ("dram_read_latency_cycles", self.dram_read_latency_cycles),
            ("network_messages", self.network_messages as f64),
            ("network_wait_cycles", self.network_wait_cycles),
            ("dram_read_queue_mean", self.dram_read_queue_mean),
            ("dram_write_queue_mean", self.dram_write_queue_mean),
            ("dram_reads_waiting_mean", self.dram_reads_waiting_mean),
            ("dram_writes_waiting_mean", self.dram_writes_waiting_mean),
        ]
    }
}

/// A snapshot of one core's counters.
#[derive(Clone)]
pub(crate) struct Snapshot {
    pub(crate) core: CoreStats,
    pub(crate) functional: RunStats,
    pub(crate) latency: AgentLatency,
}

impl Snapshot {
    /// Instructions the core's program had advanced by then: retired, and taken by warming.
    pub(crate) fn progress(&self) -> u64 {
        self.core.instructions + self.core.warmed
    }
}

/// The system-wide counters at one moment.
pub(crate) struct SystemSnapshot {
    pub(crate) tick: Tick,
    llc: LlcTiming,
    dram: Vec<DramCounts>,
    dram_write_drains: u64,
    dram_queues: DramQueues,
    network: (u64, Tick),
    links: Vec<LinkCount>,
    /// The first stop of the LLC banks and of the memory controllers.
    stops: (usize, usize),
    streams: StreamTable,
}

impl SystemSnapshot {
    pub(crate) fn take<P: Policy>(tick: Tick, mem: &TimedMemory<P>) -> SystemSnapshot {
        SystemSnapshot {
            tick,
            llc: mem.llc_timing,
            dram: mem.dram_counts(),
            dram_write_drains: mem.dram_write_drains(),
            dram_queues: mem.dram_queues(tick),
            network: mem.net.counters(),
            links: mem.net.links(),
            stops: mem.stop_layout(),
            streams: mem.stream_counts(),
        }
    }
}

/// One core's figures between snapshots `start` and `end` (`reached_target` and `restarts`
/// are left for the caller).
pub(crate) fn core_window(
    agent: Agent,
    start: &Snapshot,
    end: &Snapshot,
    level_names: &[String],
    cpu: Domain,
) -> CoreResult {
    let core = end.core.since(&start.core);
    // A sampled run's warmed instructions count (their accesses are in the functional
    // counters too).
    let instructions = core.instructions + core.warmed;
    let kilo = instructions as f64 / 1000.0;
    let levels = level_names
        .iter()
        .enumerate()
        .map(|(li, name)| {
            let c = end.functional.levels[li]
                .counts
                .agent_total(agent)
                .since(&start.functional.levels[li].counts.agent_total(agent));
            let misses = c.read_misses + c.write_misses + c.prefetch_misses;
            LevelWindow {
                level: name.clone(),
                accesses: c.reads + c.writes + c.prefetches,
                misses,
                mpki: if kilo > 0.0 {
                    misses as f64 / kilo
                } else {
                    0.0
                },
            }
        })
        .collect();
    let llc_requests = end.latency.llc_requests - start.latency.llc_requests;
    let llc_ticks = end.latency.llc_request_ticks - start.latency.llc_request_ticks;
    CoreResult {
        agent: agent.to_string(),
        instructions,
        cycles: core.cycles,
        ipc: ratio(core.instructions, core.cycles),
        reached_target: false,
        restarts: 0,
        core,
        levels,
        llc_requests,
        llc_request_cycles: ratio(llc_ticks, llc_requests) / cpu.period as f64,
        merges: end.latency.merges - start.latency.merges,
    }
}

/// The system's figures between readings `start` and `end`.
pub(crate) fn system_window(
    start: &SystemSnapshot,
    end: &SystemSnapshot,
    cfg: &SystemConfig,
    cpu: Domain,
    uncore: Domain,
) -> SystemWindow {
    let window_cycles = (end.tick - start.tick) / cpu.period;
    let seconds = window_cycles as f64 / (f64::from(cfg.cpu_clock_mhz) * 1e6);
    let llc = end.llc.since(&start.llc);
    let mut dram = Vec::new();
    let mut total = DramCounts::default();
    for (a, (e, s)) in end.dram.iter().zip(&start.dram).enumerate() {
        let c = e.since(s);
        if c == DramCounts::default() {
            continue;
        }
        total.add(&c);
        let agent = if a == cfg.cpus {
            Agent::GPU
        } else {
            Agent::cpu(a as u8)
        };
        dram.push(DramSource::new(agent.to_string(), &c, seconds));
    }
    let all = DramSource::new("all".into(), &total, seconds);
    let [read_queue, write_queue, reads_waiting, writes_waiting] =
        end.dram_queues.means_since(&start.dram_queues);
    SystemWindow {
        window_cycles,
        llc_misses: llc.misses,
        llc_miss_cycles: ratio(llc.miss_ticks, llc.misses) / uncore.period as f64,
        llc,
        dram,
        dram_bandwidth_gbps: all.bandwidth_gbps,
        dram_row_hit_rate: all.row_hit_rate,
        dram_read_latency_cycles: all.read_latency_cycles,
        dram_write_drains: end.dram_write_drains - start.dram_write_drains,
        dram_read_queue_mean: read_queue,
        dram_write_queue_mean: write_queue,
        dram_reads_waiting_mean: reads_waiting,
        dram_writes_waiting_mean: writes_waiting,
        streams: streams::window(&end.streams, &start.streams, uncore.period),
        network_messages: end.network.0 - start.network.0,
        network_wait_cycles: (end.network.1 - start.network.1) as f64 / uncore.period as f64,
        network_links: end
            .links
            .iter()
            .zip(&start.links)
            .filter(|(e, s)| e.messages > s.messages)
            .map(|(e, s)| NetworkLink {
                from: stop_name(e.from, cfg.cpus, end.stops),
                to: stop_name(e.to, cfg.cpus, end.stops),
                messages: e.messages - s.messages,
                wait_cycles: (e.wait - s.wait) as f64 / uncore.period as f64,
            })
            .collect(),
    }
}

/// The name of network stop `s` of a system of `cpus` cores whose LLC banks and memory
/// controllers start at the stops `(banks, mcs)`.
fn stop_name(s: usize, cpus: usize, (banks, mcs): (usize, usize)) -> String {
    if s < cpus {
        format!("cpu{s}")
    } else if s < banks {
        "gpu".into()
    } else if s < mcs {
        format!("llc{}", s - banks)
    } else {
        format!("mc{}", s - mcs)
    }
}

#[cfg(test)]
mod tests {
    use super::stop_name;

    #[test]
    fn stops_are_named_cores_gpu_banks_then_controllers() {
        // Two cores, the GPU, four LLC banks (stops 3-6), two memory controllers (7, 8).
        let names: Vec<String> = (0..9).map(|s| stop_name(s, 2, (3, 7))).collect();
        assert_eq!(
            names,
            ["cpu0", "cpu1", "gpu", "llc0", "llc1", "llc2", "llc3", "mc0", "mc1"]
        );
    }
}
