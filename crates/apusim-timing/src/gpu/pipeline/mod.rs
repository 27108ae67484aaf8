//! The timed 3D render pipeline: gpu-access-criticality Fig. 6's queueing network of front
//! end (FE), depth/stencil units (ZS), shader cores with their texture samplers (SH), colour
//! writers (CW) and blitter (BT), with drp §3's unit rates, processing a scene's render work
//! ([`apusim_trace::FrameSource`]).
//!
//! One file, one model: the queueing network's units hand the same jobs, tiles and queues to
//! each other, so they stay in one place.
//!
//! - **Front end.** Items enter a window of `fe_window` in submission order; the front end
//!   sends the index and vertex reads of the triangles and draw commands in it ahead (one item
//!   per cycle). At the window's head, one action per cycle: a triangle whose reads are back
//!   hands its new vertices to its shader core as one vertex thread (unified shaders, drp §3),
//!   waits for it, and is set up; a tile is rasterized: its hierarchical-Z read is sent and
//!   the tile, with its quads, waits in a FIFO of `hiz_tiles` for the result, then its quads
//!   enter their ROP's depth/stencil queue; a blitter line goes to the blitter; a draw or pass
//!   boundary ([`WorkKind::Sync`]) waits until everything before it is done (drp §2: a fresh
//!   batch starts only when the last one has completed), and so does a frame's end.
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

mod criticality;
mod frame_rate;
mod job;

pub use criticality::{find_bottlenecks, CritCounters, CritUnit, Marking, SatCounter, UnitBits};
pub use frame_rate::{FrameEstimate, FrameRateEstimator, Learned, RtpEntry};

use super::{GpuModel, GpuProgram, GpuStats, KernelSpan, StallCycles};
use crate::{Domain, MemPort, Tick, TimingError, Token, Wake, WarmPort};
use apusim_registry::Params;
use apusim_trace::{FrameSource, RenderBatch, Stream, WorkItem, WorkKind};
use criticality::Criticality;
use job::{IssueCounts, Job, Part, Thread};
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
    /// Shader instructions a sampled run's warming owes: warming stops short at a frame's
    /// end still waiting in the window, and the next warming makes up for it.
    warm_debt: u64,
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
            started: false,
            work: 0,
        }
    }

    fn job(&self, id: u32) -> &Job {
        self.jobs[id as usize].as_ref().expect("live job")
    }
    fn job_mut(&mut self, id: u32) -> &mut Job {
        self.jobs[id as usize].as_mut().expect("live job")
    }

    fn free(&mut self, id: u32) {
        if let Some(j) = self.jobs[id as usize].take() {
            self.pool.push(j.acc);
        }
        self.free_jobs.push(id);
    }

    /// The next item of the source as a job, or `None` at the end.
    fn next_job(&mut self) -> Result<Option<u32>, TimingError> {
        let Some((item, first)) = self.next_item()? else {
            return Ok(None);
        };
        self.work += self.item_work(&item);
        let end = self.next_acc;
        let acc = self.pool.pop().unwrap_or_default();
        let job = Job::new(
            item,
            &self.batch.accesses[first..end],
            &self.batch.units[first..end],
            acc,
        );
        let id = match self.free_jobs.pop() {
            Some(id) => {
                self.jobs[id as usize] = Some(job);
                id
            }
            None => {
                self.jobs.push(Some(job));
                self.issued_at.push(0);
                (self.jobs.len() - 1) as u32
            }
        };
        Ok(Some(id))
    }

    /// An item's work as the cycles its busiest unit kind needs for it with every instance
    /// sharing the load (×[`WORK_SCALE`]): one front-end cycle for a command, a triangle's
    /// setup or a tile's rasterization; a quad's depth test and colour write on one of the
    /// ROPs, its program on one of the shader cores and its texels on one of the samplers;
    /// a triangle's vertex programs on the shader cores; a blitter line. Syncs and frame
    /// ends are free. The instruction count alone would make texture-bound, depth-only and
    /// blit passes free, so a sampled run's warming, which goes on at the pace its windows
    /// measured, would race through them.
    fn item_work(&self, item: &WorkItem) -> u64 {
        let cores = self.cfg.cores as u64;
        let rops = self.cfg.rops as u64;
        let samplers = self.cfg.samplers as u64 * self.cfg.texels_per_cycle;
        let shader = |instructions: u64| WORK_SCALE * instructions / cores;
        match item.kind {
            WorkKind::Command | WorkKind::Tile | WorkKind::Blit => WORK_SCALE,
            WorkKind::Triangle { vertices, .. } => {
                WORK_SCALE.max(shader(u64::from(item.instructions) * u64::from(vertices)))
            }
            WorkKind::Quad { shaded, texels, .. } => {
                let rop = WORK_SCALE / rops;
                if shaded {
                    let tex = WORK_SCALE * (u64::from(texels[0]) + u64::from(texels[1])) / samplers;
                    rop.max(shader(u64::from(item.instructions))).max(tex)
                } else {
                    rop
                }
            }
            WorkKind::TileEnd | WorkKind::Sync | WorkKind::FrameEnd { .. } => 0,
        }
    }

    /// Make sure `batch` holds the next item; false at the source's end.
    fn fill(&mut self) -> Result<bool, TimingError> {
        while self.next_item >= self.batch.items.len() {
            if self.source_done {
                return Ok(false);
            }
            self.batch.clear();
            self.next_item = 0;
            self.next_acc = 0;
            if !self.source.next_batch(&mut self.batch)? {
                self.source_done = true;
                return Ok(false);
            }
            if self.batch.units.len() != self.batch.accesses.len() {
                return Err(TimingError::Config(format!(
                    "{}: render work with {} accesses but {} unit tags",
                    self.source.header().source,
                    self.batch.accesses.len(),
                    self.batch.units.len()
                )));
            }
        }
        Ok(true)
    }

    /// The next item of the source and the index of its first access in `batch` (its
    /// accesses end at `next_acc`), or `None` at the end.
    fn next_item(&mut self) -> Result<Option<(WorkItem, usize)>, TimingError> {
        if !self.fill()? {
            return Ok(None);
        }
        let item = self.batch.items[self.next_item];
        self.next_item += 1;
        let n = item.accesses as usize;
        let first = self.next_acc;
        let end = first + n;
        if end > self.batch.accesses.len() {
            return Err(TimingError::Config(format!(
                "{}: a render work item claims {n} accesses past the batch's end",
                self.source.header().source
            )));
        }
        self.next_acc = end;
        Ok(Some((item, first)))
    }

    /// Issue job `id`'s part `p` at `now`, its wait started first unless `fresh` is false (a
    /// second part joining the wait) or a refused access is being retried. True when the
    /// whole part went; else it is retried later.
    fn issue(&mut self, id: u32, p: Part, now: Tick, fresh: bool, port: &mut dyn MemPort) -> bool {
        self.issue_as(id, p, now, fresh, port, None)
    }

    /// [`Pipeline::issue`], the accesses carrying unit `unit` when given (a shared
    /// sampler's texture reads).
    fn issue_as(
        &mut self,
        id: u32,
        p: Part,
        now: Tick,
        fresh: bool,
        port: &mut dyn MemPort,
        unit: Option<u16>,
    ) -> bool {
        let ideal = self.cfg.ideal;
        let mark = match &self.crit {
            Some(c) => {
                let below = self.below_target(now);
                Some((below && c.critical(p.unit()), !below))
            }
            None => None,
        };
        let j = self.jobs[id as usize].as_mut().expect("live job");
        if fresh && !j.issuing {
            j.start_wait(now);
        }
        j.issuing = true;
        let crit = self.crit.as_mut().zip(mark);
        match j.issue(
            p,
            now,
            Token::from(id),
            port,
            ideal,
            &mut self.sent,
            crit,
            unit,
        ) {
            Ok(()) => {
                j.issuing = false;
                self.issued_at[id as usize] = now;
                self.progress = true;
                true
            }
            Err(t) => {
                if let Some(t) = t {
                    self.retry_at = Some(self.retry_at.map_or(t, |r| r.min(t)));
                }
                false
            }
        }
    }

    /// Nothing more will join job `id`'s wait: it is over when its reads are back.
    fn arm(&mut self, id: u32, now: Tick) {
        let j = self.job(id);
        if j.left == 0 && j.open == 0 {
            if j.ready <= now {
                self.wake(id);
            } else {
                self.timers.push(Reverse((j.ready, id)));
            }
        }
    }

    fn wake(&mut self, id: u32) {
        let j = self.job_mut(id);
        j.done = true;
        if matches!(j.thread, Thread::Fetch | Thread::Texture) {
            self.woken.push(id);
        }
        self.progress = true;
    }

    fn core_of(&self, id: u32) -> usize {
        self.job(id).item.core as usize % self.cfg.cores
    }
    fn rop_of(&self, id: u32) -> usize {
        self.job(id).item.rop as usize % self.cfg.rops
    }

    /// Instructions of a thread: a quad's program, or a triangle's new vertices'.
    fn thread_instructions(j: &Job) -> u32 {
        let n = u32::from(j.item.instructions);
        match j.item.kind {
            WorkKind::Triangle { vertices, .. } => n * u32::from(vertices),
            _ => n,
        }
    }

    fn samples(j: &Job) -> [u64; 2] {
        match j.item.kind {
            WorkKind::Quad { texels, .. } => [
                u64::from(texels[0]).max(j.count(Part::Tex0).min(1) as u64),
                u64::from(texels[1]).max(j.count(Part::Tex1).min(1) as u64),
            ],
            _ => [0; 2],
        }
    }

    /// Make thread `id` ready on core `c`.
    fn ready(&mut self, c: usize, id: u32) {
        let core = &mut self.cores[c];
        if matches!(
            self.jobs[id as usize].as_ref().map(|j| j.item.kind),
            Some(WorkKind::Triangle { .. })
        ) {
            core.ready_vertices.push_back(id);
        } else {
            core.ready.push_back(id);
        }
    }

    /// Move thread `id` on from the phase that just ended.
    fn advance(&mut self, id: u32, now: Tick) {
        let c = self.core_of(id);
        loop {
            let j = self.job_mut(id);
            let total = Self::thread_instructions(j);
            let tex = Self::samples(j);
            let texturing = tex[0] + tex[1] > 0;
            let before = if texturing { total.div_ceil(2) } else { total };
            match j.thread {
                Thread::Fetch => {
                    j.thread = Thread::Before;
                    j.instr_left = before;
                    if before > 0 {
                        self.ready(c, id);
                        return;
                    }
                }
                Thread::Before if texturing => {
                    j.thread = Thread::Texture;
                    j.start_wait(now);
                    j.open = tex.iter().filter(|&&t| t > 0).count() as u32;
                    for (s, &t) in tex.iter().enumerate() {
                        if t > 0 {
                            let k = sampler_of(&self.cfg, c, s);
                            self.samplers[k].queue.push_back((id, s as u8));
                            self.pending[Kind::Tex as usize] += 1;
                        }
                    }
                    return;
                }
                Thread::Before | Thread::Texture => {
                    j.thread = Thread::After;
                    j.instr_left = total - before;
                    if j.instr_left > 0 {
                        self.ready(c, id);
                        return;
                    }
                }
                Thread::After => {
                    j.thread = Thread::Out;
                    self.cores[c].out.push_back(id);
                    return;
                }
                Thread::None | Thread::Out => return,
            }
        }
    }

    /// Quad `id` is finished.
    fn quad_done(&mut self, id: u32) {
        let t = self.job(id).tile as usize;
        self.free(id);
        self.busy -= 1;
        self.render.quads += 1;
        self.stats.blocks += 1;
        let rec = self.tiles[t].as_mut().expect("live tile");
        rec.left -= 1;
        if rec.left == 0 {
            match rec.end {
                Some(e) => {
                    let r = self.rop_of(e);
                    self.rops[r].ends.push_back(e);
                    self.pending[Kind::Cw as usize] += 1;
                }
                None => self.tile_done(t),
            }
        }
    }

    /// Tile `t`'s last write is done: it has updated its render-target tile.
    fn tile_done(&mut self, t: usize) {
        if let Some(line) = self.tiles[t].take().and_then(|r| r.rtt) {
            self.estimator.update(line, self.now_cycle);
        }
        self.free_tiles.push(t as u32);
    }

    /// The front end: send the reads of items entering the window, then one action at its
    /// head.
    fn front_end(&mut self, now: Tick, port: &mut dyn MemPort) -> Result<(), TimingError> {
        let cycle = self.domain.cycle(now);
        while self.window.len() < self.cfg.fe_window {
            match self.next_job()? {
                Some(id) => {
                    self.window.push_back(id);
                    self.entered += 1;
                    self.pending[Kind::Fe as usize] += 1;
                }
                None => break,
            }
        }
        // Send ahead: the next command or triangle's reads (one item per cycle).
        let head_seq = self.entered - self.window.len() as u64;
        self.fe_next = self.fe_next.max(head_seq);
        while self.fe_next < self.entered {
            let id = self.window[(self.fe_next - head_seq) as usize];
            let kind = self.job(id).item.kind;
            if matches!(kind, WorkKind::Command | WorkKind::Triangle { .. }) {
                if self.issue(id, Part::Fe, now, true, port) {
                    self.arm(id, now);
                    self.fe_next += 1;
                    if matches!(kind, WorkKind::Triangle { vertices: 1.., .. }) {
                        self.to_shade.push_back(id);
                    }
                }
                break;
            }
            self.fe_next += 1;
        }
        // Vertices are shaded as soon as they are fetched, ahead of rasterization.
        while let Some(&id) = self.to_shade.front() {
            if !self.job(id).done {
                break;
            }
            let c = self.core_of(id);
            self.cores[c].vertices.push_back(id);
            self.pending[Kind::Sh as usize] += 1;
            self.job_mut(id).submitted = true;
            self.to_shade.pop_front();
            self.progress = true;
        }
        let Some(&id) = self.window.front() else {
            return Ok(());
        };
        let head_sent = self.fe_next > head_seq;
        let j = self.job(id);
        match j.item.kind {
            WorkKind::Command if head_sent && j.done => self.pop_head(),
            WorkKind::Triangle { vertices, setup } if head_sent && j.done => {
                if vertices > 0 && !j.vertices_done {
                    self.render.fe_vertex_cycles += 1;
                } else {
                    // Setup (and culling) takes the cycle.
                    if setup {
                        self.render.triangles += 1;
                    }
                    self.render.vertices += u64::from(vertices);
                    self.render.fe.busy_cycles += 1;
                    self.pop_head();
                }
            }
            WorkKind::Tile => self.rasterize(id, now, port)?,
            WorkKind::Blit if self.bt_queue.len() < self.cfg.bt_inflight => {
                self.window.pop_front();
                self.pending[Kind::Fe as usize] -= 1;
                self.bt_queue.push_back(id);
                self.pending[Kind::Bt as usize] += 1;
                self.busy += 1;
                self.fe_done = true;
                self.progress = true;
            }
            WorkKind::Sync if self.busy == 0 => self.pop_head(),
            WorkKind::Command | WorkKind::Triangle { .. } if !(head_sent && j.done) => {
                self.render.fe_read_cycles += 1
            }
            WorkKind::FrameEnd { frame } if self.busy == 0 => {
                if self.first_pass {
                    self.frames.push(FrameSpan {
                        frame,
                        start: self.frame_start,
                        end: cycle,
                    });
                    self.stats.launches += 1;
                }
                self.estimator.frame_end(frame, cycle);
                self.frame_start = cycle;
                self.pop_head();
            }
            WorkKind::Sync | WorkKind::FrameEnd { .. } => self.render.fe_sync_cycles += 1,
            WorkKind::Quad { .. } | WorkKind::TileEnd => {
                return Err(TimingError::Config(format!(
                    "{}: render work has a quad or tile end outside a tile",
                    self.source.header().source
                )))
            }
            _ => {}
        }
        Ok(())
    }

    fn pop_head(&mut self) {
        if let Some(id) = self.window.pop_front() {
            self.pending[Kind::Fe as usize] -= 1;
            self.render.fe.completed += 1;
            self.fe_done = true;
            self.free(id);
            self.progress = true;
        }
    }

    /// The tile at the window's head: once its quads and end are in the window, send its
    /// hierarchical-Z read and move it to the HiZ FIFO.
    fn rasterize(&mut self, id: u32, now: Tick, port: &mut dyn MemPort) -> Result<(), TimingError> {
        if self.hiz.len() >= self.cfg.hiz_tiles {
            self.render.fe_hiz_full_cycles += 1;
            return Ok(());
        }
        let mut quads = 0;
        let mut end = None;
        loop {
            match self.window.get(1 + quads) {
                Some(&q) => match self.job(q).item.kind {
                    WorkKind::Quad { .. } => quads += 1,
                    WorkKind::TileEnd => {
                        end = Some(q);
                        break;
                    }
                    _ => break,
                },
                // The tile continues beyond the window: wait for it to fill (a tile has at
                // most 16 quads, far fewer than the window holds).
                None if !self.source_done && self.window.len() >= self.cfg.fe_window => {
                    return Err(TimingError::Config(format!(
                        "timing.render.fe_window = {} is too small for a tile's quads",
                        self.cfg.fe_window
                    )))
                }
                None if !self.source_done => return Ok(()),
                None => break,
            }
        }
        if !self.issue(id, Part::Fe, now, true, port) {
            return Ok(());
        }
        self.arm(id, now);
        let rtt = self
            .job(id)
            .first_address(Part::Fe, Stream::HiZ)
            .map(|a| a >> 6);
        self.fe_done = true;
        self.window.pop_front();
        let mut rec = TileRec {
            quads: Vec::with_capacity(quads),
            end,
            left: quads as u32,
            rtt,
        };
        for _ in 0..quads {
            rec.quads
                .push(self.window.pop_front().expect("counted above"));
        }
        if end.is_some() {
            self.window.pop_front();
        }
        self.pending[Kind::Fe as usize] -= 1 + quads as u64 + u64::from(end.is_some());
        let t = match self.free_tiles.pop() {
            Some(t) => {
                self.tiles[t as usize] = Some(rec);
                t
            }
            None => {
                self.tiles.push(Some(rec));
                (self.tiles.len() - 1) as u32
            }
        };
        self.job_mut(id).tile = t;
        self.hiz.push_back(id);
        self.busy += 1 + quads as u64 + u64::from(end.is_some());
        self.render.tiles += 1;
        self.render.fe.busy_cycles += 1;
        Ok(())
    }

    /// The HiZ FIFO's head: when its read is back and its ROP has room, its quads enter the
    /// depth/stencil queue.
    fn dispatch_tile(&mut self) {
        let Some(&id) = self.hiz.front() else { return };
        if !self.job(id).done {
            return;
        }
        let t = self.job(id).tile as usize;
        let r = self.rop_of(id);
        let n = self.tiles[t].as_ref().expect("live tile").quads.len();
        if n > 0 && self.rops[r].early.len() + n > self.cfg.rop_queue.max(n) {
            self.render.hiz_rop_full_cycles += 1;
            return;
        }
        self.hiz.pop_front();
        let rec = self.tiles[t].as_mut().expect("live tile");
        let quads = std::mem::take(&mut rec.quads);
        let end = rec.end;
        // The tile's stencil read goes with its first quad, its pixel shader's instruction
        // fetch with its first shaded quad (or, if none is shaded, its closing writes).
        let tile = self.jobs[id as usize].take().expect("live job");
        if let Some(&q) = quads.first() {
            self.job_mut(q).absorb(&tile, Part::ZsEarly, Part::ZsEarly);
        }
        let shaded = quads
            .iter()
            .copied()
            .find(|&q| matches!(self.job(q).item.kind, WorkKind::Quad { shaded: true, .. }));
        match (shaded, end) {
            (Some(q), _) => self.job_mut(q).absorb(&tile, Part::ShInstr, Part::ShInstr),
            (None, Some(e)) => {
                self.job_mut(e).absorb(&tile, Part::ShInstr, Part::Cw);
                self.job_mut(e).absorb(&tile, Part::ZsEarly, Part::Cw);
            }
            (None, None) => {}
        }
        self.jobs[id as usize] = Some(tile);
        self.free(id);
        self.busy -= 1;
        for &q in &quads {
            self.job_mut(q).tile = t as u32;
            self.rops[r].early.push_back(q);
        }
        if let Some(e) = end {
            self.job_mut(e).tile = t as u32;
        }
        self.pending[Kind::Zs as usize] += n as u64;
        if n == 0 {
            self.tile_done(t);
        }
        self.progress = true;
    }

    /// Depth/stencil and colour-write units of every ROP.
    fn rops(&mut self, now: Tick, port: &mut dyn MemPort) {
        for r in 0..self.rops.len() {
            self.zs(r, now, port);
            self.cw(r, now, port);
        }
    }

    /// Depth/stencil unit `r`: quads leave each of its two in-flight FIFOs (early and late
    /// tests) in order as their accesses return; one quad starts per cycle, a late one first.
    /// The late test has its own FIFO so that quads coming back from shading never wait
    /// behind quads going to shading (which wait for the same shader contexts: a cycle).
    fn zs(&mut self, r: usize, now: Tick, port: &mut dyn MemPort) {
        while let Some(&id) = self.rops[r].late_flight.front() {
            if !self.job(id).done || self.rops[r].cw.len() >= self.cfg.rop_queue {
                break;
            }
            self.rops[r].late_flight.pop_front();
            self.rops[r].cw.push_back(id);
            self.pending[Kind::Cw as usize] += 1;
            self.zs_leave(r);
        }
        while let Some(&id) = self.rops[r].zs_flight.front() {
            let j = self.job(id);
            if !j.done {
                break;
            }
            if matches!(j.item.kind, WorkKind::Quad { shaded: true, .. }) {
                let c = self.core_of(id);
                if self.cores[c].input.len() >= self.cfg.sh_queue {
                    break;
                }
                self.cores[c].input.push_back(id);
                self.pending[Kind::Sh as usize] += 1;
                self.render.shaded_quads += 1;
                self.rops[r].zs_flight.pop_front();
            } else {
                self.rops[r].zs_flight.pop_front();
                self.quad_done(id);
            }
            self.zs_leave(r);
        }
        let rop = &self.rops[r];
        let (late, id) = match (rop.late.front(), rop.early.front()) {
            (Some(&id), _) if rop.late_flight.len() < self.cfg.rop_inflight => (true, id),
            (_, Some(&id)) if rop.zs_flight.len() < self.cfg.rop_inflight => (false, id),
            _ => return,
        };
        let part = if late { Part::ZsLate } else { Part::ZsEarly };
        if !self.issue(id, part, now, true, port) {
            return;
        }
        if let Some(c) = &mut self.crit {
            c.depth_test(late);
        }
        self.arm(id, now);
        let rop = &mut self.rops[r];
        if late {
            rop.late.pop_front();
            rop.late_flight.push_back(id);
        } else {
            rop.early.pop_front();
            rop.zs_flight.push_back(id);
        }
        self.render.zs.busy_cycles += 1;
    }

    /// A quad left a depth/stencil unit.
    fn zs_leave(&mut self, r: usize) {
        self.rops[r].zs_done = true;
        self.pending[Kind::Zs as usize] -= 1;
        self.render.zs.completed += 1;
        self.progress = true;
    }

    fn cw(&mut self, r: usize, now: Tick, port: &mut dyn MemPort) {
        while let Some(&id) = self.rops[r].cw_flight.front() {
            if !self.job(id).done {
                break;
            }
            self.rops[r].cw_flight.pop_front();
            self.rops[r].cw_done = true;
            self.pending[Kind::Cw as usize] -= 1;
            self.render.cw.completed += 1;
            self.progress = true;
            if matches!(self.job(id).item.kind, WorkKind::TileEnd) {
                let t = self.job(id).tile as usize;
                self.free(id);
                self.busy -= 1;
                self.tile_done(t);
            } else {
                self.quad_done(id);
            }
        }
        if self.rops[r].cw_flight.len() >= self.cfg.rop_inflight {
            return;
        }
        let (end, id) = match (self.rops[r].ends.front(), self.rops[r].cw.front()) {
            (Some(&id), _) => (true, id),
            (None, Some(&id)) => (false, id),
            (None, None) => return,
        };
        if !self.issue(id, Part::Cw, now, true, port) {
            return;
        }
        self.arm(id, now);
        let rop = &mut self.rops[r];
        if end {
            rop.ends.pop_front();
        } else {
            rop.cw.pop_front();
        }
        rop.cw_flight.push_back(id);
        self.render.cw.busy_cycles += 1;
    }

    /// Every shader core: admit a thread, run the samplers, issue one instruction, and pass
    /// finished threads on.
    fn shaders(&mut self, now: Tick, port: &mut dyn MemPort) {
        for id in std::mem::take(&mut self.woken) {
            if self.jobs[id as usize].is_some() {
                self.advance(id, now);
            }
        }
        let cycle = self.domain.cycle(now);
        for c in 0..self.cores.len() {
            let core = &self.cores[c];
            if core.resident == 0 && core.input.is_empty() && core.vertices.is_empty() {
                // An idle core's shared samplers still serve the other cores.
                self.samplers(c, now, port);
                self.account_core(c, cycle, StallClass::Idle);
                continue;
            }
            // Admit one thread, vertices first: it fetches its program.
            let vertex = !self.cores[c].vertices.is_empty();
            let next = if vertex {
                self.cores[c].vertices.front()
            } else {
                self.cores[c].input.front()
            };
            if let Some(&id) = next {
                if self.cores[c].resident < self.cfg.threads
                    && self.issue(id, Part::ShInstr, now, true, port)
                {
                    if vertex {
                        self.cores[c].vertices.pop_front();
                    } else {
                        self.cores[c].input.pop_front();
                    }
                    self.cores[c].resident += 1;
                    self.job_mut(id).thread = Thread::Fetch;
                    self.arm(id, now);
                }
            }
            self.samplers(c, now, port);
            // Issue one instruction of the next ready thread.
            let core = &mut self.cores[c];
            let next = core
                .ready_vertices
                .pop_front()
                .or_else(|| core.ready.pop_front());
            let class = if let Some(id) = next {
                let j = self.job_mut(id);
                let unit = usize::from(j.item.core);
                j.instr_left -= 1;
                if j.instr_left == 0 {
                    self.advance(id, now);
                } else {
                    self.ready(c, id);
                }
                self.stats.warp_instructions += 1;
                if unit >= self.unit_instructions.len() {
                    self.unit_instructions.resize(unit + 1, 0);
                }
                self.unit_instructions[unit] += 1;
                self.render.sh.busy_cycles += 1;
                self.sh_issued[c] = true;
                self.progress = true;
                StallClass::Issued
            } else if !self.cores[c].out.is_empty() {
                StallClass::Output
            } else if self.cores[c].resident > 0 {
                StallClass::Memory
            } else {
                StallClass::Idle
            };
            self.account_core(c, cycle, class);
            // Finished threads leave for their next unit.
            while let Some(&id) = self.cores[c].out.front() {
                let j = self.job(id);
                if let WorkKind::Triangle { .. } = j.item.kind {
                    // The vertices are shaded: the front end sets the triangle up.
                    self.job_mut(id).vertices_done = true;
                } else {
                    let r = self.rop_of(id);
                    let late = matches!(j.item.kind, WorkKind::Quad { late_z: true, .. });
                    let q = if late {
                        &mut self.rops[r].late
                    } else {
                        &mut self.rops[r].cw
                    };
                    if q.len() >= self.cfg.rop_queue {
                        break;
                    }
                    q.push_back(id);
                    self.pending[if late { Kind::Zs } else { Kind::Cw } as usize] += 1;
                }
                let core = &mut self.cores[c];
                core.out.pop_front();
                core.resident -= 1;
                self.pending[Kind::Sh as usize] -= 1;
                self.render.sh.completed += 1;
                self.job_mut(id).thread = Thread::None;
                self.progress = true;
            }
        }
    }

    /// The samplers core `c` hosts: each starts its next request when free, sending its
    /// texture lines and filtering its texels at the sampler's rate.
    fn samplers(&mut self, c: usize, now: Tick, port: &mut dyn MemPort) {
        for h in 0..self.cores[c].hosts.len() {
            let k = self.cores[c].hosts[h];
            let sm = &self.samplers[k];
            let Some(&(id, s)) = sm.queue.front() else {
                continue;
            };
            if sm.free_at > now {
                self.retry_at = Some(self.retry_at.map_or(sm.free_at, |r| r.min(sm.free_at)));
                continue;
            }
            let part = if s == 0 { Part::Tex0 } else { Part::Tex1 };
            let unit = self.cfg.shared_samplers.then_some(k as u16);
            if !self.issue_as(id, part, now, false, port, unit) {
                continue;
            }
            let texels = Self::samples(self.job(id))[usize::from(s)];
            let filter = texels.div_ceil(self.cfg.texels_per_cycle).max(1);
            let free_at = now + self.domain.cycles(filter);
            self.samplers[k].queue.pop_front();
            self.samplers[k].free_at = free_at;
            self.pending[Kind::Tex as usize] -= 1;
            self.render.tex.busy_cycles += filter;
            self.render.tex.completed += 1;
            self.render.texels += texels;
            let j = self.job_mut(id);
            j.ready = j.ready.max(free_at);
            j.open -= 1;
            self.arm(id, now);
        }
    }

    /// Charge core `c`'s cycles since it last ran to the class it was in, and this one to
    /// `class`.
    fn account_core(&mut self, c: usize, cycle: u64, class: StallClass) {
        let gap = self.last_cycle.map_or(0, |l| cycle.saturating_sub(l + 1));
        let st = &mut self.core_stalls[c];
        let add = |st: &mut StallCycles, k: StallClass, n: u64| match k {
            StallClass::Idle => st.idle += n,
            StallClass::Issued => st.issued += n,
            StallClass::Memory => st.memory += n,
            StallClass::Output => st.issue += n,
        };
        // A core that slept was waiting: for memory if it had threads, else idle.
        let slept = match self.cores[c].last {
            StallClass::Issued | StallClass::Memory | StallClass::Output => StallClass::Memory,
            StallClass::Idle => StallClass::Idle,
        };
        add(st, slept, gap);
        add(st, class, 1);
        add(&mut self.stats.stalls, slept, gap);
        add(&mut self.stats.stalls, class, 1);
        self.cores[c].last = class;
    }

    /// The blitter: lines leave in order once their reads are back, writing as they go; one
    /// new line starts per cycle.
    fn blitter(&mut self, now: Tick, port: &mut dyn MemPort) {
        while let Some(&id) = self.bt_flight.front() {
            if !self.job(id).done {
                break;
            }
            if !self.issue(id, Part::BtWrite, now, false, port) {
                break;
            }
            self.bt_flight.pop_front();
            self.bt_done = true;
            self.pending[Kind::Bt as usize] -= 1;
            self.render.bt.completed += 1;
            self.free(id);
            self.busy -= 1;
        }
        if self.bt_flight.len() >= self.cfg.bt_inflight {
            return;
        }
        let Some(&id) = self.bt_queue.front() else {
            return;
        };
        if !self.issue(id, Part::BtRead, now, true, port) {
            return;
        }
        self.arm(id, now);
        self.bt_queue.pop_front();
        self.bt_flight.push_back(id);
        self.render.bt.busy_cycles += 1;
    }

    /// Where the pipeline is stuck, for a deadlock report.
    fn stuck(&self) -> String {
        let head = self.window.front().map(|&id| {
            let j = self.job(id);
            format!(
                "{:?} (done {}, left {}, open {})",
                j.item.kind, j.done, j.left, j.open
            )
        });
        format!(
            "render pipeline: window head {}, {} job(s) in flight, {} tile(s) at HiZ, {} read(s) outstanding",
            head.unwrap_or_else(|| "empty".into()),
            self.busy,
            self.hiz.len(),
            self.sent.outstanding
        )
    }

    fn finished(&self) -> bool {
        self.source_done && self.window.is_empty() && self.busy == 0
    }

    /// Is the projected frame rate below the target (or unknown, or no target set)? Accesses
    /// are marked critical only then (gpu-access-criticality §4.2).
    fn below_target(&self, now: Tick) -> bool {
        match self.target_cycles() {
            None => true,
            Some(target) => self
                .estimator
                .projected(self.domain.cycle(now))
                .is_none_or(|f| f > target),
        }
    }

    /// The target frame time in GPU cycles.
    fn target_cycles(&self) -> Option<f64> {
        (self.cfg.target_fps > 0.0).then(|| self.hz / self.cfg.target_fps)
    }

    /// Hand this cycle's per-instance conditions to the criticality counters and clear the
    /// completion flags.
    fn observe_units(&mut self, cycle: u64) {
        let Some(crit) = &mut self.crit else { return };
        let sig = &mut self.signals;
        sig[CritUnit::Fe as usize][0] = (self.window.len() > 1, self.fe_done);
        for (r, rop) in self.rops.iter_mut().enumerate() {
            let zs = rop.early.len() + rop.late.len() + rop.zs_flight.len() + rop.late_flight.len();
            let cw = rop.cw.len() + rop.ends.len() + rop.cw_flight.len();
            sig[CritUnit::Zs as usize][r] = (zs > 1, rop.zs_done);
            sig[CritUnit::Cw as usize][r] = (cw > 1, rop.cw_done);
            rop.zs_done = false;
            rop.cw_done = false;
        }
        for (c, core) in self.cores.iter().enumerate() {
            let work = core.resident > 0 || !core.input.is_empty() || !core.vertices.is_empty();
            sig[CritUnit::Sh as usize][c] = (work, self.sh_issued[c]);
            self.sh_issued[c] = false;
        }
        let bt = self.bt_queue.len() + self.bt_flight.len();
        sig[CritUnit::Bt as usize][0] = (bt > 1, self.bt_done);
        self.fe_done = false;
        self.bt_done = false;
        crit.observe(cycle, sig);
    }

    /// Unit occupancy since the last cycle.
    fn account_occupancy(&mut self, cycle: u64) {
        let n = self
            .last_cycle
            .map_or(1, |l| cycle.saturating_sub(l))
            .max(1);
        let counters = [
            &mut self.render.fe,
            &mut self.render.zs,
            &mut self.render.sh,
            &mut self.render.tex,
            &mut self.render.cw,
            &mut self.render.bt,
        ];
        for (c, &p) in counters.into_iter().zip(&self.pending) {
            c.occupancy += p * n;
        }
    }
}

impl GpuModel for Pipeline {
    fn cycle(&mut self, now: Tick, port: &mut dyn MemPort) -> Result<Wake, TimingError> {
        let cycle = self.domain.cycle(now);
        self.now_cycle = cycle;
        self.progress = false;
        self.retry_at = None;
        while let Some(&Reverse((t, id))) = self.timers.peek() {
            if t > now {
                break;
            }
            self.timers.pop();
            if self.jobs[id as usize].is_some() {
                self.wake(id);
            }
        }
        if !self.started && !self.frozen {
            // The first frame begins when the pipeline first runs (a sampled run starts it
            // after its first functional warming).
            self.started = true;
            self.frame_start = cycle;
            self.estimator.begin(cycle);
        }
        self.account_occupancy(cycle);
        if !self.frozen {
            self.front_end(now, port)?;
            self.dispatch_tile();
            self.rops(now, port);
            self.shaders(now, port);
            self.blitter(now, port);
        }
        self.observe_units(cycle);
        if cycle >= self.next_sample {
            self.estimator.sample(cycle);
            self.next_sample = cycle + self.cfg.crit_period;
        }
        self.last_cycle = Some(cycle);
        self.stats.cycles = cycle;
        self.stats.transactions = self.sent.reads + self.sent.writes;
        self.stats.memory_instructions = self.stats.transactions;
        self.stats.load_transactions = self.sent.reads;
        self.stats.store_transactions = self.sent.writes;
        if self.finished() {
            if !self.ended {
                self.ended = true;
                self.stats.programs += 1;
                self.first_pass = false;
            }
            return Ok(Wake::Finished);
        }
        if self.progress || !self.woken.is_empty() {
            return Ok(Wake::At(now + self.domain.period));
        }
        let timer = self.timers.peek().map(|r| r.0 .0);
        match super::min_tick(timer, self.retry_at) {
            Some(t) => Ok(Wake::At(self.domain.edge_at_or_after(t.max(now + 1)))),
            None if self.sent.outstanding > 0 || self.frozen => Ok(Wake::OnCompletion),
            None => Err(TimingError::Deadlock(self.stuck())),
        }
    }

    fn complete(&mut self, token: Token, at: Tick) {
        if token == job::POSTED {
            return;
        }
        let id = token as u32;
        self.sent.outstanding = self.sent.outstanding.saturating_sub(1);
        let issued = self.issued_at.get(id as usize).copied().unwrap_or(at);
        self.stats.loads_done += 1;
        self.stats.load_ticks += at.saturating_sub(issued);
        if let Some(j) = self.jobs.get_mut(id as usize).and_then(|j| j.as_mut()) {
            j.left = j.left.saturating_sub(1);
            j.ready = j.ready.max(at);
            if j.left == 0 && j.open == 0 && !j.issuing {
                self.timers.push(Reverse((j.ready, id)));
            }
        }
    }

    fn stats(&self) -> GpuStats {
        self.stats
    }

    fn domain(&self) -> Domain {
        self.domain
    }

    fn units(&self) -> u16 {
        (2 * self.cfg.cores).max(self.cfg.rops) as u16
    }

    fn restart(&mut self, program: GpuProgram) -> Result<(), TimingError> {
        let GpuProgram::Frames(source) = program else {
            return Err(TimingError::Config(
                "the `pipeline` GPU model was restarted with a GPGPU program".into(),
            ));
        };
        self.source = source;
        self.batch.clear();
        self.next_item = 0;
        self.next_acc = 0;
        self.source_done = false;
        self.ended = false;
        Ok(())
    }

    fn set_frozen(&mut self, frozen: bool) {
        self.frozen = frozen;
    }

    fn drained(&self) -> bool {
        self.sent.outstanding == 0
    }

    /// The work of the items taken so far (`Pipeline::item_work`).
    fn progress(&self) -> u64 {
        self.work
    }

    /// Functional warming of render work: the items after those already in the pipeline
    /// are taken from the source in order and their accesses sent to `port` in the render
    /// trace's order, until their work (`Pipeline::item_work`) reaches `n` (plus what an
    /// earlier warming owed); their shader instructions count as warmed instructions.
    /// The items in the pipeline when it froze go on after the thaw, so their remaining
    /// accesses come after the warmed ones'. Each frame end among the warmed items ends its
    /// frame at its share of the `over` cycles, and each tile updates the frame-rate
    /// estimator there as its last write would; the unit counters ([`RenderStats`]) and the
    /// access counts stay those of the detailed cycles, and warmed accesses carry no
    /// criticality marks. Warming ends at a tile's end, not inside a tile. A frame end still
    /// in the window is taken in detail first: warming stops there and the next warming
    /// makes up the difference.
    fn warm(&mut self, n: u64, over: u64, port: &mut dyn WarmPort) -> Result<u64, TimingError> {
        let c = self.stats.cycles;
        let n = n + std::mem::take(&mut self.warm_debt);
        let at = |taken: u64| {
            c + (u128::from(over) * u128::from(taken.min(n)) / u128::from(n.max(1))) as u64
        };
        let frame_waiting = self
            .window
            .iter()
            .any(|&id| matches!(self.job(id).item.kind, WorkKind::FrameEnd { .. }));
        let mut taken = 0;
        // The frozen stretch is not occupancy: the units resume where they stopped.
        self.last_cycle = Some(c + over);
        if frame_waiting {
            self.warm_debt = n;
            return Ok(0);
        }
        loop {
            // Never stop inside a tile: its quads and closing writes go with it, as the front
            // end hands a tile on only with them.
            if taken >= n
                && !(self.fill()?
                    && matches!(
                        self.batch.items[self.next_item].kind,
                        WorkKind::Quad { .. } | WorkKind::TileEnd
                    ))
            {
                break;
            }
            let Some((item, first)) = self.next_item()? else {
                break;
            };
            let accesses = first..self.next_acc;
            if !self.cfg.ideal {
                let core = usize::from(item.core) % self.cfg.cores;
                let units = &self.batch.units[accesses.clone()];
                for (a, &u) in self.batch.accesses[accesses.clone()].iter().zip(units) {
                    // A shared sampler's reads carry its index, as in detailed runs.
                    let part = Part::of(a, u);
                    if self.cfg.shared_samplers && matches!(part, Part::Tex0 | Part::Tex1) {
                        let s = usize::from(part == Part::Tex1);
                        let unit = sampler_of(&self.cfg, core, s) as u16;
                        port.warm(&apusim_trace::Access { unit, ..*a })?;
                    } else {
                        port.warm(a)?;
                    }
                }
            }
            let instructions = match item.kind {
                WorkKind::Triangle { vertices, .. } => {
                    u64::from(item.instructions) * u64::from(vertices)
                }
                WorkKind::Quad { shaded: true, .. } => u64::from(item.instructions),
                WorkKind::Tile => {
                    let hiz = self.batch.accesses[accesses]
                        .iter()
                        .find(|a| a.stream == Stream::HiZ);
                    if let Some(a) = hiz {
                        self.estimator.update(a.addr >> 6, at(taken));
                    }
                    0
                }
                WorkKind::FrameEnd { frame } => {
                    let end = at(taken);
                    if self.first_pass {
                        self.frames.push(FrameSpan {
                            frame,
                            start: self.frame_start,
                            end,
                        });
                        self.stats.launches += 1;
                    }
                    self.estimator.frame_end(frame, end);
                    self.frame_start = end;
                    0
                }
                _ => 0,
            };
            if instructions > 0 {
                let unit = usize::from(item.core);
                if unit >= self.unit_instructions.len() {
                    self.unit_instructions.resize(unit + 1, 0);
                }
                self.unit_instructions[unit] += instructions;
            }
            self.stats.warmed_instructions += instructions;
            let w = self.item_work(&item);
            self.work += w;
            taken += w;
        }
        if !self.source_done {
            self.warm_debt = n.saturating_sub(taken);
        }
        Ok(taken)
    }

    fn core_stalls(&self) -> Vec<StallCycles> {
        self.core_stalls.clone()
    }

    /// Instructions issued per shader core, indexed by the `unit` of its instruction fetches:
    /// the shader-core id its work carries (`WorkItem::core`, the renderer's
    /// `(tx % 8) + 8 (ty % 8)` for a tile's quads, `n % 64` for the n-th vertex batch), which
    /// is core `c`'s index `c` with the renderer's 64 cores (`shader_cores` = 64); with fewer
    /// cores, core `c` runs the work of every id `k` with `k % shader_cores = c` and entry `k`
    /// counts the instructions issued for that work. Ids no work carries stay 0.
    ///
    /// A core's texture reads carry its samplers' units instead, `2c` and `2c + 1` (with
    /// shared samplers, the sampler's index), which are other cores' ids (and ROP ids below
    /// 16; unit 0 is also the front end's and the blitter's). A core is still reported under one unit only, its own id: under both of
    /// its sampler units the default sampled pair (0, 1) would be core 0 twice, whose equal
    /// counts make TAP's CPI delta 0 and its verdict "caching not beneficial" whatever the
    /// policies did (tap §3.1); under its even sampler unit alone every odd id (`pol2_core` =
    /// `helm_high_core` = 1, and one of each rotated pair, tap §3.1.4) would never report and
    /// neither policy would decide. The cost: on 3D work the sampled policies reach a sampled
    /// core's instruction fetches and whatever else carries its id (sampler `c`'s reads, which
    /// are core `c / 2`'s), not its own texture reads, so the comparison is coarser than on
    /// GPGPU work, where every access of a core carries the core's id.
    fn core_instructions(&self) -> Vec<u64> {
        self.unit_instructions.clone()
    }

    /// Threads ready to issue (vertex threads and quads), indexed like
    /// [`GpuModel::core_instructions`]: by the shader-core id of their work, the core's own
    /// index with 64 cores. HeLM reads it per access by `unit` (drp §2.2), so a texture read
    /// of core `c` is judged by the ready threads of core `2c` or `2c + 1`, for the reason
    /// given there.
    fn ready_warps(&self) -> Vec<u32> {
        let mut ready = vec![0u32; self.unit_instructions.len()];
        for core in &self.cores {
            for &id in core.ready_vertices.iter().chain(&core.ready) {
                let Some(j) = self.jobs[id as usize].as_ref() else {
                    continue;
                };
                let unit = usize::from(j.item.core);
                if unit >= ready.len() {
                    ready.resize(unit + 1, 0);
                }
                ready[unit] += 1;
            }
        }
        ready
    }

    fn kernels(&self) -> &[KernelSpan] {
        &[]
    }

    fn pc_stalls(&self) -> Vec<(u64, u64)> {
        Vec::new()
    }

    fn frames(&self) -> &[FrameSpan] {
        &self.frames
    }

    fn render_stats(&self) -> Option<RenderStats> {
        Some(self.render)
    }

    fn set_frequency(&mut self, hz: f64) {
        self.hz = hz;
    }

    fn criticality(&self) -> Option<CriticalityReport> {
        Some(CriticalityReport {
            counters: self.crit.as_ref().map(|c| c.counters).unwrap_or_default(),
            estimates: self.estimator.estimates().to_vec(),
            learned: self.estimator.learned().cloned(),
            relearned: self.estimator.relearned(),
            bottlenecks: self.crit.as_ref().map_or_else(Vec::new, |c| {
                CritUnit::ALL
                    .into_iter()
                    .filter(|&u| c.bottlenecks()[u as usize])
                    .map(|u| u.name().to_string())
                    .collect()
            }),
        })
    }

    fn frame_progress(&self) -> Option<FrameProgress> {
        let cycle = self.last_cycle?;
        Some(FrameProgress {
            elapsed: self.estimator.elapsed(cycle),
            projected: self.estimator.projected(cycle)?,
            progress: self.estimator.progress()?,
            learned: self.estimator.learned()?.cycles as f64,
            target: self.target_cycles(),
        })
    }
}
