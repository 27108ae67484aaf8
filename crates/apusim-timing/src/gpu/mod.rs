//! GPU models: what turns a GPU program into memory requests over time.
//!
//! A GPU model implements [`GpuModel`], the GPU's counterpart of [`crate::CoreModel`]: the
//! engine calls [`GpuModel::cycle`] at edges of the GPU's clock, the model does one cycle of
//! work on every shader core, sends its accesses through the [`MemPort`] (each access names
//! its shader core in `unit`, so the memory side picks that core's private caches), and says
//! when it next has work. Data arriving is handed back with [`GpuModel::complete`].
//!
//! A GPU runs a [`GpuProgram`]: GPGPU kernels (per-warp programs,
//! [`apusim_trace::BlockSource`]) or rendered frames (render work,
//! [`apusim_trace::FrameSource`]). Models register in [`REGISTRY`] with their parameters (see
//! `apusim_registry`): `simt` ([`simt`]), shader cores executing per-warp programs, and
//! `pipeline` ([`pipeline`]), the 3D render pipeline.

pub mod pipeline;
pub mod shader_criticality;
pub mod simt;

use crate::{Domain, MemPort, Tick, TimingError, Token, Wake, WarmPort};
use apusim_registry::{Entry, ParamKind, ParamSpec, Params};
use apusim_trace::{BlockSource, FrameSource};
use pipeline::{CriticalityReport, FrameProgress, FrameSpan, RenderStats};
use serde::{Deserialize, Serialize};
use shader_criticality::CriticalityStats;

/// What a GPU runs.
pub enum GpuProgram {
    /// GPGPU kernels: launches and thread blocks of per-warp programs.
    Kernels(Box<dyn BlockSource>),
    /// 3D frames: a scene's render work.
    Frames(Box<dyn FrameSource>),
}

impl GpuProgram {
    /// The program's name (its header's source).
    pub fn source(&self) -> &str {
        match self {
            GpuProgram::Kernels(k) => &k.header().source,
            GpuProgram::Frames(f) => &f.header().source,
        }
    }
}

/// Where a shader core's cycles went (issue slots × cycles per slot), summed over cores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StallCycles {
    /// At least one warp instruction issued.
    pub issued: u64,
    /// Warps were resident but every one waited for a load's data (the scoreboard).
    pub memory: u64,
    /// A ready warp could not issue: its memory instruction found the load/store unit full.
    pub issue: u64,
    /// Every warp not waiting for memory waited at a barrier.
    pub barrier: u64,
    /// No warp was resident (between kernels, or waiting for blocks).
    pub idle: u64,
}

impl StallCycles {
    pub fn since(&self, e: &StallCycles) -> StallCycles {
        StallCycles {
            issued: self.issued - e.issued,
            memory: self.memory - e.memory,
            issue: self.issue - e.issue,
            barrier: self.barrier - e.barrier,
            idle: self.idle - e.idle,
        }
    }
    pub fn add(&mut self, o: &StallCycles) {
        self.issued += o.issued;
        self.memory += o.memory;
        self.issue += o.issue;
        self.barrier += o.barrier;
        self.idle += o.idle;
    }
    pub fn total(&self) -> u64 {
        self.issued + self.memory + self.issue + self.barrier + self.idle
    }
}

/// Counters of a GPU (monotonic; a window is the difference of two snapshots).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuStats {
    /// GPU cycles simulated (the clock at the last cycle the GPU ran).
    pub cycles: u64,
    /// Warp instructions issued (compute, scratchpad, memory and barrier).
    pub warp_instructions: u64,
    /// Global memory instructions and the transactions they became.
    pub memory_instructions: u64,
    pub transactions: u64,
    /// Transactions of loads (and atomics) and of stores.
    pub load_transactions: u64,
    pub store_transactions: u64,
    /// Load transactions answered, and their summed time from leaving the load/store unit
    /// to data (ticks).
    pub loads_done: u64,
    pub load_ticks: u64,
    /// Thread blocks and kernel launches completed, and programs run to their end.
    pub blocks: u64,
    pub launches: u64,
    pub programs: u64,
    /// Warp instructions and thread blocks taken by functional warming (sampled runs): not
    /// timed, their transactions sent to the caches at once.
    pub warmed_instructions: u64,
    pub warmed_blocks: u64,
    /// Cycles a load/store unit could not send for lack of a miss-status register.
    pub lsu_busy_cycles: u64,
    /// Per shader core per cycle, summed over cores.
    pub stalls: StallCycles,
}

/// One kernel launch's span, in GPU cycles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelSpan {
    /// The launch's index in its program.
    pub launch: u32,
    pub blocks: u32,
    pub threads: u32,
    /// GPU cycles at its first block's dispatch and at its last block's end.
    pub start: u64,
    pub end: u64,
}

/// A timed GPU.
pub trait GpuModel: Send {
    /// One cycle of work at `now` (an edge of the GPU's clock, never earlier than the last
    /// wake it asked for, nor than a completion it was given).
    fn cycle(&mut self, now: Tick, port: &mut dyn MemPort) -> Result<Wake, TimingError>;
    /// The data of the access `token` arrived at `at` (one call per part).
    fn complete(&mut self, token: Token, at: Tick);
    fn stats(&self) -> GpuStats;
    /// The GPU's clock.
    fn domain(&self) -> Domain;
    /// Shader cores (the `unit` values of its accesses are `0..units`).
    fn units(&self) -> u16;
    /// Run `program` from its start once the current one has ended ([`Wake::Finished`]): a
    /// mix keeps its GPU busy until every core has reached its target. A program of the
    /// other kind (frames for a SIMT model, kernels for a render pipeline) is refused.
    fn restart(&mut self, program: GpuProgram) -> Result<(), TimingError>;
    /// Freeze the GPU (no block dispatched, no instruction issued, no transaction sent; data
    /// still arrives) or thaw it. Sampled runs freeze it so memory drains before functional
    /// warming; resident warps go on where they stopped after the warming.
    fn set_frozen(&mut self, frozen: bool);
    /// Nothing of the GPU's is in flight in memory.
    fn drained(&self) -> bool;
    /// A sampled run's measured window opens (`open`) or closes at GPU cycle `cycle`. A
    /// model whose phases run at very different rates measures each phase's rate here and
    /// paces its [`GpuModel::warm`] by them (the render pipeline); the default ignores it.
    fn measure(&mut self, _cycle: u64, _open: bool) {}
    /// Work done so far, timed and warmed, in the unit [`GpuModel::warm`] takes: sampled
    /// runs measure it per GPU cycle in their windows and warm at that pace. Warp
    /// instructions unless the model says otherwise.
    fn progress(&self) -> u64 {
        let s = self.stats();
        s.warp_instructions + s.warmed_instructions
    }
    /// Functional warming: execute about `n` units of [`GpuModel::progress`] without
    /// timing, sending every transaction to `port` at once. A SIMT model's unit is the warp
    /// instruction: the resident warps go on where they stopped (in rounds, each warp a few
    /// instructions at a time), finished blocks make room for the next as the dispatcher
    /// would, and launches follow each other. The `n` units stand for the next `over` GPU
    /// cycles: a kernel ending among them ends at its share of them. Returns the units
    /// taken (fewer at the program's end). Called only when the GPU is frozen and
    /// [`GpuModel::drained`].
    fn warm(&mut self, n: u64, over: u64, port: &mut dyn WarmPort) -> Result<u64, TimingError>;
    /// Where each shader core's cycles went so far: the per-core signals of
    /// gpu-access-criticality §4.1.2 (`memory` is the cycles its front end dispatched nothing
    /// for pending operands, the `InputStall` condition).
    fn core_stalls(&self) -> Vec<StallCycles>;
    /// Warp instructions each shader core has issued so far (cumulative, indexed by the
    /// `unit` its accesses carry); empty when the model has no per-core instruction streams.
    /// The engine reports their growth to the LLC policy as `Feedback::GpuCoreInstructions`:
    /// TAP's core sampling compares two sampled cores' CPI with them (tap §3.1), HeLM its two
    /// bypass rates (drp §2.2).
    fn core_instructions(&self) -> Vec<u64> {
        Vec::new()
    }
    /// Warps (thread contexts) ready to issue on each shader core now, reported to the LLC
    /// policy as `Feedback::ReadyWarps` (HeLM's measure of thread-level parallelism); empty
    /// when the model has none.
    fn ready_warps(&self) -> Vec<u32> {
        Vec::new()
    }
    /// The kernels of the first program run so far.
    fn kernels(&self) -> &[KernelSpan];
    /// Cycles warps waited on each load instruction's data (its PC), summed over warps and
    /// cores, largest first: gpu-access-criticality §3's stall-table measure.
    fn pc_stalls(&self) -> Vec<(u64, u64)>;
    /// The frames of the first program run so far (render pipelines).
    fn frames(&self) -> &[FrameSpan] {
        &[]
    }
    /// The render pipeline's per-unit counters (render pipelines).
    fn render_stats(&self) -> Option<RenderStats> {
        None
    }
    /// The GPU's clock frequency in Hz, for models with a frame-rate target.
    fn set_frequency(&mut self, _hz: f64) {}
    /// What critical-access identification and frame-rate estimation found (render
    /// pipelines).
    fn criticality(&self) -> Option<CriticalityReport> {
        None
    }
    /// Where the current frame stands, once the frame-rate estimator predicts (render
    /// pipelines): deadline-aware DRAM schedulers read it.
    fn frame_progress(&self) -> Option<FrameProgress> {
        None
    }
    /// The GPU's demand accesses to the LLC and their misses so far (cumulative, read by the
    /// engine from the LLC): a model marking GPGPU access criticality
    /// (gpu-access-criticality §4.1.2) takes the GPU's LLC miss rate per period from them.
    /// Returns the model's criticality counters so far; `None` when it marks nothing, and the
    /// engine then stops calling.
    fn llc_feedback(
        &mut self,
        _gpu_llc_accesses: u64,
        _gpu_llc_misses: u64,
    ) -> Option<&CriticalityStats> {
        None
    }
}

/// The constructor of a registered GPU model: validated parameters, the GPU's clock, its
/// program (refused when the model does not run that kind).
pub type BuildGpu = fn(&Params, Domain, GpuProgram) -> Result<Box<dyn GpuModel>, TimingError>;

const fn int(
    name: &'static str,
    default: &'static str,
    min: u64,
    max: u64,
    unit: &'static str,
    doc: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Int { min, max },
        default,
        unit,
        doc,
    }
}

/// Parameters of the SIMT model; defaults drp §3's CUDA GPU (MacSim's shader cores).
pub const SIMT_PARAMS: &[ParamSpec] = &[
    int(
        "sms",
        "6",
        1,
        1024,
        "shader cores",
        "streaming multiprocessors (each an instance of the GPU's first-level caches)",
    ),
    int(
        "warps_per_sm",
        "80",
        1,
        simt::MAX_WARPS as u64,
        "warps",
        "warp contexts per shader core",
    ),
    int(
        "blocks_per_sm",
        "8",
        1,
        64,
        "blocks",
        "thread blocks resident per shader core",
    ),
    int(
        "shared_bytes_per_sm",
        "16384",
        0,
        1 << 24,
        "bytes",
        "scratchpad per shader core, divided among its resident blocks",
    ),
    int(
        "registers_per_sm",
        "32768",
        0,
        1 << 24,
        "registers",
        "register file per shader core (a launch that declares registers per thread is limited by it)",
    ),
    int(
        "issue_width",
        "2",
        1,
        64,
        "warps",
        "warps whose next instruction issues in one issue slot",
    ),
    int(
        "issue_cycles",
        "4",
        1,
        64,
        "cycles",
        "cycles between issue slots (drp §3: two ready warps every fourth cycle)",
    ),
    int(
        "lsu_entries",
        "64",
        1,
        65536,
        "transactions",
        "load/store unit queue: a memory instruction issues while fewer transactions wait",
    ),
    int(
        "lsu_width",
        "1",
        1,
        64,
        "transactions/cycle",
        "transactions the load/store unit sends to the first-level cache per cycle",
    ),
    ParamSpec {
        name: "scheduler",
        kind: ParamKind::Choice(&["lrr", "gto"]),
        default: "\"lrr\"",
        unit: "",
        doc: "warp scheduler: loose round robin among ready warps, or greedy-then-oldest",
    },
    ParamSpec {
        name: "criticality",
        kind: ParamKind::Bool,
        default: "false",
        unit: "",
        doc: "mark the transactions of bottlenecked cores' stalling loads critical and let non-critical LLC misses bypass the LLC (gpu-access-criticality §4.1.2)",
    },
    int(
        "counter_bits",
        "8",
        1,
        31,
        "bits",
        "width w of each core's InputStall and OutputStall saturating counters (gpu-access-criticality §4.1.2: 8)",
    ),
    int(
        "stall_table_entries",
        "16",
        1,
        4096,
        "entries",
        "entries of each core's fully associative LRU stall table (gpu-access-criticality §4.1.2: 16)",
    ),
    ParamSpec {
        name: "crit_cover",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: "0.9",
        unit: "fraction",
        doc: "share of a stall table's stall cycles its critical PCs cover (gpu-access-criticality §4.1.2: 90%)",
    },
    ParamSpec {
        name: "llc_miss_limit",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: "0.8",
        unit: "fraction",
        doc: "a bottlenecked core's PC missing from its stall table is critical while the GPU's LLC miss rate is at most this (gpu-access-criticality §4.1.2: 80%)",
    },
    int(
        "crit_period",
        "10000",
        1,
        1 << 40,
        "GPU cycles",
        "how often the cores are classified and the critical PCs taken (the paper: periodically)",
    ),
    int(
        "stall_decay",
        "1",
        0,
        32,
        "bits",
        "right shift of every stall-table count after each evaluation (0 never ages, 32 clears)",
    ),
];

/// Parameters of the render pipeline; defaults drp §3's 3D GPU (Attila: 64 shader cores,
/// 4096 thread contexts, two samplers per core at one texel per cycle, 16 ROPs of one quad
/// per cycle).
pub const PIPELINE_PARAMS: &[ParamSpec] = &[
    int(
        "shader_cores",
        "64",
        1,
        64,
        "shader cores",
        "unified shader cores (vertex and pixel threads), each with two texture samplers unless `samplers` is set; at most the renderer's 64, over whose ids it spreads the work (an 8x8 interleave of screen tiles)",
    ),
    int(
        "threads_per_core",
        "64",
        1,
        4096,
        "threads",
        "thread contexts per shader core (drp §3: 4096 in the GPU); a thread is a quad",
    ),
    int(
        "rops",
        "16",
        1,
        256,
        "ROPs",
        "render output pipelines, each a depth/stencil unit and a colour writer of one quad per cycle",
    ),
    int(
        "texels_per_cycle",
        "1",
        1,
        64,
        "texels/cycle",
        "texels a sampler filters per cycle (drp §3: one 32-bit texel)",
    ),
    int(
        "samplers",
        "0",
        0,
        128,
        "samplers",
        "texture samplers shared by all shader cores (gspc §4: twelve); 0 gives every core two of its own (drp §3)",
    ),
    int(
        "fe_window",
        "1024",
        32,
        65536,
        "items",
        "work items the front end holds ahead of rasterization (triangles' reads are sent as they enter)",
    ),
    int(
        "hiz_tiles",
        "64",
        1,
        4096,
        "tiles",
        "rasterized tiles waiting for their hierarchical-Z read",
    ),
    int(
        "rop_queue",
        "256",
        16,
        65536,
        "quads",
        "quads waiting at a depth/stencil unit or colour writer",
    ),
    int(
        "rop_inflight",
        "16",
        1,
        4096,
        "quads",
        "quads a depth/stencil unit or colour writer has waiting for memory",
    ),
    int(
        "sh_queue",
        "64",
        1,
        65536,
        "threads",
        "threads waiting for a context at a shader core",
    ),
    int(
        "bt_inflight",
        "16",
        1,
        4096,
        "lines",
        "blitter lines waiting for their reads",
    ),
    ParamSpec {
        name: "ideal_memory",
        kind: ParamKind::Bool,
        default: "false",
        unit: "",
        doc: "answer every access at once without sending it (the pipeline's own bound)",
    },
    ParamSpec {
        name: "flush_warming",
        kind: ParamKind::Bool,
        default: "false",
        unit: "",
        doc: "sampled runs: finish the work in the pipeline functionally when warming begins, so a thaw starts empty and refills in the detailed warm-up, as SMARTS drains a core (docs/validation.md: the render mixes' CPU bias 30% to 21% on average, frame times not better); off, the frozen work goes on after the thaw",
    },
    ParamSpec {
        name: "criticality",
        kind: ParamKind::Bool,
        default: "false",
        unit: "",
        doc: "mark the accesses of bottlenecked units critical (gpu-access-criticality §4.1.1: C_in/C_out counters, Algorithms 1 and 2)",
    },
    int(
        "counter_bits",
        "8",
        1,
        15,
        "bits",
        "width w of the C_in/C_out saturating counters (gpu-access-criticality §4.1.1: 8)",
    ),
    int(
        "crit_period",
        "1024",
        1,
        1 << 32,
        "GPU cycles",
        "how often Algorithm 1 runs and the frame-rate projection is sampled (the paper: periodically)",
    ),
    ParamSpec {
        name: "target_fps",
        kind: ParamKind::Float { min: 0.0, max: 1e6 },
        default: "40.0",
        unit: "frames/s",
        doc: "accesses are marked critical only while the projected frame rate is below this (gpu-access-criticality §4.2: 40); 0 marks always",
    },
    ParamSpec {
        name: "critical_fraction",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: "1.0",
        unit: "fraction",
        doc: "mark only this random share of the accesses identified as critical (gpu-access-criticality Fig. 12, left: the quarters of the critical set)",
    },
    ParamSpec {
        name: "random_marking",
        kind: ParamKind::Bool,
        default: "false",
        unit: "",
        doc: "mark accesses uniformly at random with each stream's share of identified critical accesses (gpu-access-criticality Fig. 12, right)",
    },
    ParamSpec {
        name: "relearn",
        kind: ParamKind::Float { min: 0.0, max: 100.0 },
        default: "0.1",
        unit: "fraction",
        doc: "frame-rate estimation goes back to learning when a frame's updates or render-target planes differ from the learned frame's by more than this",
    },
];

/// The registered GPU models.
pub const REGISTRY: &[Entry<BuildGpu>] = &[
    Entry {
        name: "simt",
        description: "SIMT shader cores: warp contexts, a warp scheduler (loose round robin or greedy-then-oldest), a scoreboard (a warp waits for its loads at the first instruction that is not a load), a load/store unit sending coalesced transactions through each core's L1, barriers, thread-block dispatch bounded by warps, blocks, scratchpad and registers, kernels in order",
        paper: "drp §3 (MacSim shader cores: 6 SMs at 1.5 GHz, 80 warps, two ready warps every fourth cycle), tap Table 4, adaptive-gpu-l1-bypassing Table 1",
        params: SIMT_PARAMS,
        build: simt::build,
    },
    Entry {
        name: "pipeline",
        description: "3D render pipeline: front end (vertex fetch, vertex shading on the unified shader cores, setup, rasterization, hierarchical Z), depth/stencil units, shader cores with thread contexts and two texture samplers each, colour writers, blitter, with bounded queues between them; draws in order",
        paper: "gpu-access-criticality Fig. 6 (the queueing network), drp §3 (Attila GPU: 64 shader cores at 1 GHz, 4096 threads, 2 samplers per core at 1 texel per cycle, 16 ROPs at 1 quad per cycle)",
        params: PIPELINE_PARAMS,
        build: pipeline::build,
    },
];

/// Build the GPU model `name` with user parameters `given`.
pub fn build(
    name: &str,
    given: &toml::Table,
    domain: Domain,
    program: GpuProgram,
) -> Result<Box<dyn GpuModel>, TimingError> {
    let e = apusim_registry::find(REGISTRY, "GPU model", name)?;
    let p = e.params(given)?;
    (e.build)(&p, domain, program)
}

/// The earlier of two optional ticks.
pub(crate) fn min_tick(a: Option<Tick>, b: Option<Tick>) -> Option<Tick> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_declared_default_is_valid() {
        for e in REGISTRY {
            e.params(&toml::Table::new())
                .unwrap_or_else(|err| panic!("{}: {err}", e.name));
        }
    }
}
