//! The timed 3D render pipeline: gpu-access-criticality Fig. 6's queueing network of front
//! end (FE), depth/stencil units (ZS), shader cores with their texture samplers (SH), colour
//! writers (CW) and blitter (BT), with drp §3's unit rates, processing a scene's render work
//! ([`apusim_trace::FrameSource`]).
//!
//! The units hand the same jobs, tiles and queues to each other; this file holds that shared
//! state and each unit's step is in a file of its own: `front_end`, `rop` (ZS and CW),
//! `shader` (SH and the samplers), `blitter`; `intake` makes jobs of the source's items,
//! `issue` sends their accesses, `observe` feeds the criticality counters, `flush` empties
//! the pipeline functionally before a sampled run's warming (`flush_warming`), and `model`
//! is the [`GpuModel`] cycle step that runs them all.
//!
//! - **Front end.** Items enter a window of `fe_window` in submission order; the front end
//!   sends the index and vertex reads of the triangles and draw commands in it ahead (one item
//!   per cycle). At the window's head, one action per cycle: a triangle whose reads are back
//!   hands its new vertices to its shader core as one vertex thread (unified shaders, drp §3),
//!   waits for it, and is set up; a tile is rasterized: its hierarchical-Z read is sent and
//!   the tile, with its quads, waits in a FIFO of `hiz_tiles` for the result, then its quads
//!   enter their ROP's depth/stencil queue; a blitter line goes to the blitter; a draw or pass
//!   boundary ([`WorkKind::Sync`](apusim_trace::WorkKind::Sync)) waits until everything
//!   before it is done (drp §2: a fresh batch starts only when the last one has completed),
//!   and so does a frame's end.
//! - **ZS** (one per ROP, one quad per cycle): the early depth/stencil test sends the quad's
//!   depth and stencil accesses and, up to `rop_inflight` quads in flight, passes quads on in
//!   order as their reads return: shaded ones to their shader core, the rest are done. Quads
//!   that come back from shading for the late test go first.
//! - **SH** (`shader_cores` cores, `threads_per_core` thread contexts each; a thread is a
//!   quad or a triangle's vertices): a thread takes a context, fetches its program (the
//!   instruction reads the functional pipeline charged to it) and runs its instructions, one
//!   per core per cycle, round robin among ready threads. A thread that samples textures
//!   blocks halfway through its program on the texture fetch (drp §3): each of the core's two
//!   samplers filters its texels at `texels_per_cycle` and sends the texture lines; the
//!   thread is ready again when both are done and the lines are back. With `samplers` set,
//!   the cores share that many samplers instead (gspc §4: twelve for 96 cores): the core's
//!   two sampler requests go to the shared samplers `(2c + s) × samplers / (2 × cores)`, and
//!   their texture reads carry the shared sampler's index as their unit, so each reaches that
//!   sampler's private texture cache. A finished quad goes to
//!   its ROP's late depth test or colour writer; when that queue is full it holds its context.
//! - **CW** (one per ROP, one quad per cycle): blends and writes the quad (reads wait, writes
//!   are posted); when a tile's last quad has been written, the tile's closing writes go.
//! - **BT**: one line per cycle, up to `bt_inflight` in flight: reads, then the write.
//!
//! Writes are posted everywhere (nobody waits for them); a refused access (no free MSHR) is
//! retried. `ideal_memory` answers every access at once without sending it: the pipeline's
//! own bound, for validation. A frame ends when everything submitted before its end is done.

mod blitter;
mod criticality;
mod flush;
mod frame_rate;
mod front_end;
mod intake;
mod issue;
mod job;
mod model;
mod observe;
mod phases;
mod rop;
mod shader;

pub use criticality::{find_bottlenecks, CritCounters, CritUnit, Marking, SatCounter, UnitBits};
pub use frame_rate::{FrameEstimate, FrameRateEstimator, Learned, RtpEntry};

use super::{GpuModel, GpuProgram, GpuStats, StallCycles};
use crate::{Domain, Tick, TimingError};
use apusim_registry::Params;
use apusim_trace::{FrameSource, RenderBatch};
use criticality::Criticality;
use job::{IssueCounts, Job};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// One frame's span in GPU cycles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameSpan {
    pub frame: u32,
    pub start: u64,
    pub end: u64,
}

/// Work a unit kind did, summed over its instances.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitCounters {
    /// Items it finished (quads, threads, tiles, lines).
    pub completed: u64,
    /// Instance-cycles it started an item (for SH: issued an instruction).
    pub busy_cycles: u64,
    /// Items waiting or in flight in it, summed per cycle (its occupancy).
    pub occupancy: u64,
}

/// What the pipeline did, per unit kind (gpu-access-criticality Fig. 6), and its work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenderStats {
    pub fe: UnitCounters,
    pub zs: UnitCounters,
    pub sh: UnitCounters,
    pub tex: UnitCounters,
    pub cw: UnitCounters,
    pub bt: UnitCounters,
    /// Work: screen triangles set up, tiles rasterized, quads (and those shaded), texels
    /// filtered, vertices shaded.
    pub triangles: u64,
    pub tiles: u64,
    pub quads: u64,
    pub shaded_quads: u64,
    pub texels: u64,
    pub vertices: u64,
    /// Cycles the front end's head waited: for a draw or frame boundary to drain, for a
    /// triangle's reads, for its vertices' shading, for room in the HiZ FIFO; and cycles the
    /// HiZ FIFO's head waited for room in its ROP's depth/stencil queue.
    pub fe_sync_cycles: u64,
    pub fe_read_cycles: u64,
    pub fe_vertex_cycles: u64,
    pub fe_hiz_full_cycles: u64,
    pub hiz_rop_full_cycles: u64,
    /// Instances of each multi-instance unit, for utilisations.
    pub rops: u64,
    pub shader_cores: u64,
    pub samplers: u64,
}

impl RenderStats {
    /// Each unit kind's busy fraction of `cycles` per instance, largest first: the
    /// bottleneck is the first.
    pub fn utilisation(&self, cycles: u64) -> Vec<(&'static str, f64)> {
        let c = cycles.max(1) as f64;
        let mut v = vec![
            ("fe", self.fe.busy_cycles as f64 / c),
            (
                "zs",
                self.zs.busy_cycles as f64 / (c * self.rops.max(1) as f64),
            ),
            (
                "sh",
                self.sh.busy_cycles as f64 / (c * self.shader_cores.max(1) as f64),
            ),
            (
                "tex",
                self.tex.busy_cycles as f64 / (c * self.samplers.max(1) as f64),
            ),
            (
                "cw",
                self.cw.busy_cycles as f64 / (c * self.rops.max(1) as f64),
            ),
            ("bt", self.bt.busy_cycles as f64 / c),
        ];
        v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        v
    }
}

/// Validated parameters.
#[derive(Clone, Copy, Debug)]
struct Cfg {
    cores: usize,
    threads: u32,
    rops: usize,
    texels_per_cycle: u64,
    /// Texture samplers in all (two per core unless `samplers` is set).
    samplers: usize,
    /// The cores share `samplers` samplers, whose index their texture reads carry as unit.
    shared_samplers: bool,
    fe_window: usize,
    hiz_tiles: usize,
    rop_queue: usize,
    rop_inflight: usize,
    sh_queue: usize,
    bt_inflight: usize,
    ideal: bool,
    /// A sampled run's warming first finishes the work in flight (`flush`).
    flush_warming: bool,
    /// Mark the accesses of bottlenecked units critical (gpu-access-criticality §4.1.1).
    criticality: bool,
    counter_bits: u32,
    crit_period: u64,
    /// Frames per second below which accesses are marked (0: always).
    target_fps: f64,
    relearn: f64,
    marking: criticality::Marking,
}

/// The sampler that takes sampler request `s` (0 or 1) of core `c`'s threads: the core's
/// own `2c + s` when every core has two, else the shared sampler `(2c + s) × samplers /
/// (2 × cores)`, so consecutive cores share one (gspc §4: one sampler for every eight cores).
fn sampler_of(cfg: &Cfg, c: usize, s: usize) -> usize {
    (2 * c + s) * cfg.samplers / (2 * cfg.cores)
}

/// The core that runs sampler `k` in its step of the cycle: the first core whose requests
/// go to it.
fn sampler_host(cfg: &Cfg, k: usize) -> usize {
    (0..cfg.cores)
        .find(|&c| sampler_of(cfg, c, 0) == k || sampler_of(cfg, c, 1) == k)
        .unwrap_or(0)
}

/// One render output pipeline: its depth/stencil and colour-write units.
#[derive(Default)]
struct Rop {
    /// Quads that left the depth/stencil unit and the colour writer in this cycle.
    zs_done: bool,
    cw_done: bool,
    early: VecDeque<u32>,
    late: VecDeque<u32>,
    zs_flight: VecDeque<u32>,
    late_flight: VecDeque<u32>,
    cw: VecDeque<u32>,
    ends: VecDeque<u32>,
    cw_flight: VecDeque<u32>,
}

/// A texture sampler: thread requests waiting for it (thread, which of the thread's two
/// sampler requests), and when it is free again.
#[derive(Default)]
struct Sampler {
    queue: VecDeque<(u32, u8)>,
    free_at: Tick,
}

#[derive(Default)]
struct Core {
    /// Vertex threads waiting for a context (they go first: rasterization waits for them).
    vertices: VecDeque<u32>,
    /// Quads waiting for a context.
    input: VecDeque<u32>,
    resident: u32,
    /// Ready threads: vertex threads issue before quads (the front end waits for them), round
    /// robin within each.
    ready_vertices: VecDeque<u32>,
    ready: VecDeque<u32>,
    out: VecDeque<u32>,
    /// The samplers this core runs in its step of the cycle: those whose first requester
    /// is this core (its own two when every core has two).
    hosts: Vec<usize>,
    /// Stall class of the last cycle it ran, for the cycles it then slept through.
    last: StallClass,
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum StallClass {
    #[default]
    Idle,
    Issued,
    Memory,
    Output,
}

/// A tile between rasterization and its last write.
struct TileRec {
    quads: Vec<u32>,
    end: Option<u32>,
    left: u32,
    /// The render-target tile it updates (its HiZ line), for frame-rate estimation.
    rtt: Option<u64>,
}

/// The timed render pipeline.
pub struct Pipeline {
    domain: Domain,
    cfg: Cfg,
    source: Box<dyn FrameSource>,
    batch: RenderBatch,
    next_item: usize,
    next_acc: usize,
    source_done: bool,
    jobs: Vec<Option<Job>>,
    free_jobs: Vec<u32>,
    pool: Vec<Vec<apusim_trace::Access>>,
    window: VecDeque<u32>,
    /// Triangles whose reads were sent, in order, until their vertices go to be shaded.
    to_shade: VecDeque<u32>,
    /// Items that entered the window, and the first whose front-end reads are not sent.
    entered: u64,
    fe_next: u64,
    hiz: VecDeque<u32>,
    tiles: Vec<Option<TileRec>>,
    free_tiles: Vec<u32>,
    rops: Vec<Rop>,
    cores: Vec<Core>,
    samplers: Vec<Sampler>,
    bt_queue: VecDeque<u32>,
    bt_flight: VecDeque<u32>,
    woken: Vec<u32>,
    timers: BinaryHeap<Reverse<(Tick, u32)>>,
    retry_at: Option<Tick>,
    /// Jobs out of the window and not finished.
    busy: u64,
    sent: IssueCounts,
    issued_at: Vec<Tick>,
    stats: GpuStats,
    render: RenderStats,
    pending: [u64; 6],
    core_stalls: Vec<StallCycles>,
    frames: Vec<FrameSpan>,
    frame_start: u64,
    first_pass: bool,
    ended: bool,
    frozen: bool,
    last_cycle: Option<u64>,
    progress: bool,
    /// Critical-access identification, when on.
    crit: Option<Criticality>,
    /// Per unit instance, this cycle's (pending above `th_in`, completed at `th_out`).
    signals: [Vec<(bool, bool)>; 5],
    /// The front end, shader cores and blitter finished an item (issued, for a core) in this
    /// cycle.
    fe_done: bool,
    sh_issued: Vec<bool>,
    bt_done: bool,
    /// Frame-rate estimation (gpu-access-criticality §4.2), sampled every `crit_period`.
    estimator: FrameRateEstimator,
    next_sample: u64,
    /// GPU clock frequency, for the target frame rate.
    hz: f64,
    /// The GPU cycle being run.
    now_cycle: u64,
    /// Instructions issued per shader-core id of the work (`WorkItem::core`), the `unit` the
    /// LLC sees on that core's instruction fetches ([`GpuModel::core_instructions`]).
    unit_instructions: Vec<u64>,
    /// GPU cycles a sampled run's warming owes: warming stops short at a frame's end still
    /// waiting in the window, and the next warming makes up for it.
    warm_debt: u64,
    /// Each phase of the frame's rate in the measured windows, which warming goes on at.
    pace: phases::PhasePace,
    /// The pipeline has run a cycle unfrozen.
    started: bool,
    /// The work of the items taken from the source so far (entered the window, or warmed),
    /// in [`WORK_SCALE`]ths of a cycle of its busiest unit ([`Pipeline::item_work`]): the
    /// pipeline's [`GpuModel::progress`].
    work: u64,
}

/// Fixed-point scale of [`Pipeline::item_work`]: 1/256 of a cycle.
const WORK_SCALE: u64 = 256;

/// Where the current frame stands, for deadline-aware DRAM schedulers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FrameProgress {
    /// GPU cycles since the frame began.
    pub elapsed: u64,
    /// The projected cycles of the whole frame (gpu-access-criticality §4.2 `F_i`).
    pub projected: f64,
    /// `λ`: the fraction of the frame's work done.
    pub progress: f64,
    /// The learned frame's cycles.
    pub learned: f64,
    /// The target frame time in GPU cycles, if a target is set.
    pub target: Option<f64>,
}

/// What critical-access identification and frame-rate estimation found.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CriticalityReport {
    pub counters: CritCounters,
    /// Each predicted frame's projection against its time (Fig. 10).
    pub estimates: Vec<FrameEstimate>,
    /// The learned frame: RTTs, RTPs, updates and cycles.
    pub learned: Option<Learned>,
    /// Times the estimator went back to learning.
    pub relearned: u64,
    /// The units found bottlenecked at the last evaluation.
    pub bottlenecks: Vec<String>,
}

/// Index of a unit kind in `pending` and the counters.
#[derive(Clone, Copy)]
enum Kind {
    Fe = 0,
    Zs = 1,
    Sh = 2,
    Tex = 3,
    Cw = 4,
    Bt = 5,
}

/// Build the model from validated parameters.
pub fn build(
    p: &Params,
    domain: Domain,
    program: GpuProgram,
) -> Result<Box<dyn GpuModel>, TimingError> {
    let GpuProgram::Frames(source) = program else {
        return Err(TimingError::Config(
            "the `pipeline` GPU model renders frames; a GPGPU program needs a SIMT model \
             ([timing.gpu])"
                .into(),
        ));
    };
    let cfg = Cfg {
        cores: p.int("shader_cores") as usize,
        threads: p.int("threads_per_core") as u32,
        rops: p.int("rops") as usize,
        texels_per_cycle: p.int("texels_per_cycle"),
        samplers: match p.int("samplers") as usize {
            0 => 2 * p.int("shader_cores") as usize,
            n => n,
        },
        shared_samplers: p.int("samplers") != 0,
        fe_window: p.int("fe_window") as usize,
        hiz_tiles: p.int("hiz_tiles") as usize,
        rop_queue: p.int("rop_queue") as usize,
        rop_inflight: p.int("rop_inflight") as usize,
        sh_queue: p.int("sh_queue") as usize,
        bt_inflight: p.int("bt_inflight") as usize,
        ideal: p.bool("ideal_memory"),
        flush_warming: p.bool("flush_warming"),
        criticality: p.bool("criticality"),
        counter_bits: p.int("counter_bits") as u32,
        crit_period: p.int("crit_period"),
        target_fps: p.float("target_fps"),
        relearn: p.float("relearn"),
        marking: if p.bool("random_marking") {
            criticality::Marking::Random
        } else {
            criticality::Marking::Fraction(p.float("critical_fraction"))
        },
    };
    if cfg.samplers > 2 * cfg.cores {
        return Err(TimingError::Config(format!(
            "timing.render.samplers = {}: at most two per shader core ({} with shader_cores = {})",
            cfg.samplers,
            2 * cfg.cores,
            cfg.cores
        )));
    }
    Ok(Box::new(Pipeline::new(cfg, domain, source)))
}

impl Pipeline {
    fn new(cfg: Cfg, domain: Domain, source: Box<dyn FrameSource>) -> Pipeline {
        Pipeline {
            domain,
            cfg,
            source,
            batch: RenderBatch::default(),
            next_item: 0,
            next_acc: 0,
            source_done: false,
            jobs: Vec::new(),
            free_jobs: Vec::new(),
            pool: Vec::new(),
            window: VecDeque::new(),
            to_shade: VecDeque::new(),
            entered: 0,
            fe_next: 0,
            hiz: VecDeque::new(),
            tiles: Vec::new(),
            free_tiles: Vec::new(),
            rops: (0..cfg.rops).map(|_| Rop::default()).collect(),
            cores: (0..cfg.cores)
                .map(|c| Core {
                    hosts: (0..cfg.samplers)
                        .filter(|&k| sampler_host(&cfg, k) == c)
                        .collect(),
                    ..Core::default()
                })
                .collect(),
            samplers: (0..cfg.samplers).map(|_| Sampler::default()).collect(),
            bt_queue: VecDeque::new(),
            bt_flight: VecDeque::new(),
            woken: Vec::new(),
            timers: BinaryHeap::new(),
            retry_at: None,
            busy: 0,
            sent: IssueCounts::default(),
            issued_at: Vec::new(),
            stats: GpuStats::default(),
            render: RenderStats {
                rops: cfg.rops as u64,
                shader_cores: cfg.cores as u64,
                samplers: cfg.samplers as u64,
                ..RenderStats::default()
            },
            pending: [0; 6],
            core_stalls: vec![StallCycles::default(); cfg.cores],
            frames: Vec::new(),
            frame_start: 0,
            first_pass: true,
            ended: false,
            frozen: false,
            last_cycle: None,
            progress: false,
            crit: cfg.criticality.then(|| {
                Criticality::new(
                    cfg.counter_bits,
                    cfg.crit_period,
                    [1, cfg.rops, cfg.cores, cfg.rops, 1],
                    cfg.marking,
                )
            }),
            signals: [1, cfg.rops, cfg.cores, cfg.rops, 1].map(|n| vec![(false, false); n]),
            fe_done: false,
            sh_issued: vec![false; cfg.cores],
            bt_done: false,
            estimator: FrameRateEstimator::new(cfg.relearn),
            next_sample: cfg.crit_period,
            hz: 1e9,
            now_cycle: 0,
            unit_instructions: vec![0; cfg.cores],
            warm_debt: 0,
            pace: phases::PhasePace::default(),
            started: false,
            work: 0,
        }
    }
}
