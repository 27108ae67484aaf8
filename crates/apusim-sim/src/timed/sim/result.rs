//! What a timed run reports: the result of one policy's run ([`SimResult`]), its measured
//! window's figures (of [`super::super::window`]) and the other parts it collects, among them
//! the multiprogram metrics against the jobs' alone runs ([`Speedup`], computed by
//! [`mod@super::super::speedup`]).

use super::super::gpu::GpuResult;
use super::super::hints::HintCounters;
use super::super::intervals::Interval;
use super::super::occupancy::AgentOccupancy;
use super::super::sampling::Sampled;
use super::super::window::{CoreResult, SystemWindow};
use crate::stats::RunStats;
use serde::{Deserialize, Serialize};

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
    pub speedup: Option<Speedup>,
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

/// The multiprogram metrics of one policy's run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Speedup {
    /// The LLC policy of the alone runs.
    pub alone_policy: String,
    /// Per CPU job: agent, IPC in the mix, IPC alone, slowdown (alone / mix).
    pub jobs: Vec<JobSpeedup>,
    pub weighted: f64,
    /// A sampled run's weighted speedup interval (half its width): each job's term
    /// `s_i / a_i` varies by its relative errors in the mix and alone together (linear
    /// propagation, no independence assumed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weighted_half_width: Option<f64>,
    pub harmonic: f64,
    pub max_slowdown: f64,
    /// The timed GPU's execution cycles in the mix and alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<GpuSpeedup>,
}

/// The timed GPU's program in the mix and alone.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct GpuSpeedup {
    pub agent: String,
    /// GPU cycles to run the program once, in the mix and alone.
    pub cycles: u64,
    pub alone_cycles: u64,
    /// `cycles / alone_cycles`.
    pub slowdown: f64,
}

/// One CPU job's IPC in the mix and alone.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct JobSpeedup {
    pub agent: String,
    pub ipc: f64,
    pub alone_ipc: f64,
    pub slowdown: f64,
}
