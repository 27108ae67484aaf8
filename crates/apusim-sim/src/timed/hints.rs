//! What the DRAM schedulers are told about the rest of the system
//! ([`apusim_dram::SchedHints`]): IM-LLC's emergency applications, the GPGPU phases of GPU
//! priority (gpu-access-criticality §4.3, detected by [`super::interference`]) and the GPU's
//! current frame for the deadline-aware schedulers (DynPrio and DASH, which §6.1.4 lets use
//! the frame-rate estimator of §4.2).
//!
//! `HintsControl` is stepped by the engine loop; it reads the functional LLC's per-core
//! counters at each interference interval (1 M CPU cycles), the GPU's warp instructions at
//! each 100 K-GPU-cycle window (GPGPU programs), and the render pipeline's frame progress
//! every 4096 CPU cycles, and hands the memory system new hints when they change (a
//! scheduler that does not read hints ignores them).
//!
//! The frame hint's period is the target frame time when the render model has a target
//! (`timing.render.target_fps`); without one (target 0, as the criticality studies run the
//! built-in scenes, which are far above 40 FPS) the deadline is the learned frame's time: the
//! GPU is behind when it renders more slowly than the frame it learned.

use super::gpu::TimedGpu;
use super::interference::{LlcInterference, PhaseDetector};
use super::memory::TimedMemory;
use apusim_cache::Policy;
use apusim_dram::{FrameHint, SchedHints};
use apusim_timing::{Domain, Tick};
use apusim_trace::Agent;

/// CPU cycles of an IM-LLC interference interval.
pub const INTERFERENCE_CYCLES: u64 = 1_000_000;
/// GPU cycles of a GPGPU phase-detection window (§4.3).
pub const PHASE_WINDOW_CYCLES: u64 = 100_000;
/// A window of GPU priority is tried every this many windows.
pub const PHASE_PROBE_EVERY: u64 = 10;
/// How much better a priority window must be to keep the priority.
pub const PHASE_TOLERANCE: f64 = 0.01;
/// CPU cycles between updates of the frame hint.
const FRAME_UPDATE_CYCLES: u64 = 4096;

/// The hints' state, stepped by the engine.
pub(crate) struct HintsControl {
    cpus: usize,
    cpu: Domain,
    dram: Domain,
    llc: LlcInterference,
    next_llc: Tick,
    phase: PhaseDetector,
    next_window: Option<Tick>,
    last_gpu: (u64, u64),
    next_frame: Tick,
    hints: SchedHints,
}

impl HintsControl {
    pub(crate) fn new(cpus: usize, cpu: Domain, dram: Domain) -> HintsControl {
        HintsControl {
            cpus,
            cpu,
            dram,
            llc: LlcInterference::new(cpus),
            next_llc: cpu.cycles(INTERFERENCE_CYCLES),
            phase: PhaseDetector::new(PHASE_PROBE_EVERY, PHASE_TOLERANCE),
            next_window: None,
            last_gpu: (0, 0),
            next_frame: 0,
            hints: SchedHints::default(),
        }
    }

    /// Bring the hints up to `now` and hand them to DRAM if they changed.
    pub(crate) fn step<P: Policy>(
        &mut self,
        now: Tick,
        mem: &mut TimedMemory<P>,
        gpu: Option<&TimedGpu>,
    ) {
        let mut h = self.hints;
        if now >= self.next_llc {
            self.next_llc = now - now % self.cpu.cycles(INTERFERENCE_CYCLES)
                + self.cpu.cycles(INTERFERENCE_CYCLES);
            let counts = mem.h.llc_counts();
            let totals: Vec<(u64, u64)> = (0..self.cpus)
                .map(|c| {
                    let t = counts.agent_total(Agent::cpu(c as u8));
                    (
                        t.reads + t.writes + t.prefetches,
                        t.read_misses + t.write_misses + t.prefetch_misses,
                    )
                })
                .collect();
            h.emergency = self.llc.end_interval(&totals);
        }
        if let Some(g) = gpu {
            let d = g.domain();
            if g.runs_kernels() {
                let window = d.cycles(PHASE_WINDOW_CYCLES);
                let next = *self.next_window.get_or_insert(window);
                if now >= next {
                    self.next_window = Some(now - now % window + window);
                    let (instr, cycle) = (g.instructions(), d.cycle(now));
                    let (i0, c0) = std::mem::replace(&mut self.last_gpu, (instr, cycle));
                    let ipc = (instr - i0) as f64 / cycle.saturating_sub(c0).max(1) as f64;
                    h.gpu_all_priority = self.phase.end_window(ipc);
                }
            } else if now >= self.next_frame {
                self.next_frame = now + self.cpu.cycles(FRAME_UPDATE_CYCLES);
                h.frame = g.frame_progress().map(|f| {
                    let deadline = f.target.unwrap_or(f.learned).max(1.0);
                    let to_dram = d.period as f64 / self.dram.period as f64;
                    let start_tick = now.saturating_sub(d.cycles(f.elapsed));
                    FrameHint {
                        start: self.dram.cycle(start_tick),
                        period: (deadline * to_dram).round().max(1.0) as u64,
                        progress: f.progress,
                        estimated: f.projected / deadline,
                    }
                });
            }
        }
        if h != self.hints {
            self.hints = h;
            mem.dram.set_hints(h);
        }
    }

    /// Intervals with applications in emergency mode and windows of GPU priority.
    pub(crate) fn counters(&self) -> HintCounters {
        HintCounters {
            interference_intervals: self.llc.intervals,
            emergency_app_intervals: self.llc.emergency_intervals,
            phase_windows: self.phase.windows,
            gpu_priority_windows: self.phase.priority_windows,
        }
    }
}

/// What the detectors did in a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HintCounters {
    pub interference_intervals: u64,
    /// Application-intervals spent in IM-LLC emergency mode.
    pub emergency_app_intervals: u64,
    pub phase_windows: u64,
    pub gpu_priority_windows: u64,
}
