//! Turning pipeline events into apusim [`Access`] records.
//!
//! The `Access` record is fixed (apusim-trace); the extra information the timing model of
//! gpu-access-criticality-dram-scheduling.txt §4.1-4.2 needs is carried in existing fields
//! (documented in docs/trace-format.md, "Render traces"):
//! - `pc` = `stage << 56 | pass << 48 | draw << 32 | frame << 16 | site`, where `site` is the
//!   texture slot, render-target index or vertex-buffer number;
//! - `warp` = the 2x2 quad served, `qy << 16 | qx` (quad coordinates: pixel / 2), so the
//!   8x8 screen tile and the render-target tile of §4.2 are `qx >> 2, qy >> 2` and so on;
//!   0xFFFF_FFFF for accesses serving no quad (front end, blits, clears);
//! - `unit` = the issuing instance: texture sampler 0..128, ROP 0..16, shader core 0..64;
//! - `time` = a GPU ordering counter (one tick per quad/vertex/line of fixed-function work).
//!
//! For a timed pipeline the emitter records render work instead ([`Emitter::for_work`]): the
//! renderer opens a [`WorkItem`] with [`Emitter::begin`] at each triangle, tile, quad, tile
//! end, blitter line, draw boundary and frame end, and every access joins the open item,
//! tagged with the pipeline [`Unit`] that makes it ([`unit_of`]).

use apusim_trace::{Access, Agent, Op, RenderBatch, Stream, Unit, WorkItem, WorkKind};

/// Pipeline stage of an access (bits 56..63 of `pc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Stage {
    /// Command streamer and draw constants.
    Command = 0,
    /// Input assembly: index fetch.
    IndexFetch = 1,
    /// Input assembly: vertex attribute fetch.
    VertexFetch = 2,
    /// Vertex shader (instruction fetch).
    VertexShader = 3,
    /// Hierarchical-Z test and update.
    HiZ = 4,
    /// Early depth test.
    EarlyDepth = 5,
    /// Stencil test.
    Stencil = 6,
    /// Pixel shader (instruction fetch).
    PixelShader = 7,
    /// Texture sampling.
    Texture = 8,
    /// Late depth test (shader writes depth or discards).
    LateDepth = 9,
    /// Output merger: blending and colour write.
    Color = 10,
    /// Blitter copies and resolves.
    Blit = 11,
    /// Display (final colour) write.
    Display = 12,
    /// Fast-clear bookkeeping (HiZ clears, fast-clear resolves).
    Clear = 13,
}

/// `warp` value of accesses that serve no quad.
pub const NO_QUAD: u32 = u32::MAX;

/// The fields that identify who an access is for.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tag {
    pub pass: u8,
    pub draw: u16,
    pub frame: u16,
}

impl Tag {
    #[inline]
    pub fn pc(&self, stage: Stage, site: u16) -> u64 {
        (stage as u64) << 56
            | (self.pass as u64) << 48
            | (self.draw as u64) << 32
            | (self.frame as u64) << 16
            | site as u64
    }
}

/// Decode the `pc` of a render access: (stage, pass, draw, frame, site).
pub fn decode_pc(pc: u64) -> (u8, u8, u16, u16, u16) {
    (
        (pc >> 56) as u8,
        (pc >> 48) as u8,
        (pc >> 32) as u16,
        (pc >> 16) as u16,
        pc as u16,
    )
}

/// Per-stream counts of what was emitted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub reads: [u64; Stream::COUNT],
    pub writes: [u64; Stream::COUNT],
    pub triangles: u64,
    pub quads: u64,
    pub pixels_shaded: u64,
    pub hiz_rejected_tiles: u64,
}

impl Stats {
    pub fn total(&self) -> u64 {
        self.reads.iter().sum::<u64>() + self.writes.iter().sum::<u64>()
    }
    /// A stable checksum of the counts (FNV-1a over the numbers), for golden tests.
    pub fn checksum(&self) -> u64 {
        use apusim_trace::hash::{fnv1a_extend, FNV_OFFSET};
        let nums = self.reads.iter().chain(&self.writes).chain([
            &self.triangles,
            &self.quads,
            &self.pixels_shaded,
            &self.hiz_rejected_tiles,
        ]);
        nums.fold(FNV_OFFSET, |h, n| fnv1a_extend(h, &n.to_le_bytes()))
    }
}

/// Where emitted accesses go: a trace writer, a vector, or a counter.
pub trait AccessSink {
    fn put(&mut self, batch: &[Access]) -> Result<(), String>;
}

impl AccessSink for Vec<Access> {
    fn put(&mut self, batch: &[Access]) -> Result<(), String> {
        self.extend_from_slice(batch);
        Ok(())
    }
}

/// Discards accesses (statistics only).
pub struct NullSink;
impl AccessSink for NullSink {
    fn put(&mut self, _: &[Access]) -> Result<(), String> {
        Ok(())
    }
}

impl<W: std::io::Write> AccessSink for apusim_trace::apt::AptWriter<W> {
    fn put(&mut self, batch: &[Access]) -> Result<(), String> {
        self.write_all(batch).map_err(|e| e.to_string())
    }
}

/// Where recorded render work goes, batch by batch (items whole within a batch).
pub trait WorkSink {
    /// Take the batch's contents (leave it empty for reuse).
    fn put(&mut self, batch: &mut RenderBatch) -> Result<(), String>;
}

impl WorkSink for Vec<RenderBatch> {
    fn put(&mut self, batch: &mut RenderBatch) -> Result<(), String> {
        self.push(std::mem::take(batch));
        Ok(())
    }
}

/// The unit that makes an access of pipeline stage `stage` within an item of kind `kind`:
/// by stage, except that a tile's closing writes are its ROP's colour-write unit's and every
/// access of a blitter line is the blitter's.
pub fn unit_of(kind: WorkKind, stage: u8) -> Unit {
    match kind {
        WorkKind::TileEnd => return Unit::ColorWrite,
        WorkKind::Blit => return Unit::Blitter,
        _ => {}
    }
    const CMD: u8 = Stage::Command as u8;
    const VS: u8 = Stage::VertexShader as u8;
    const HIZ: u8 = Stage::HiZ as u8;
    const EZ: u8 = Stage::EarlyDepth as u8;
    const ST: u8 = Stage::Stencil as u8;
    const PS: u8 = Stage::PixelShader as u8;
    const TEX: u8 = Stage::Texture as u8;
    const LZ: u8 = Stage::LateDepth as u8;
    const COL: u8 = Stage::Color as u8;
    const DISP: u8 = Stage::Display as u8;
    match stage {
        CMD..=VS | HIZ => Unit::FrontEnd,
        EZ | ST => Unit::ZsEarly,
        PS | TEX => Unit::Shader,
        LZ => Unit::ZsLate,
        COL | DISP => Unit::ColorWrite,
        _ => Unit::Blitter,
    }
}

/// Render work being recorded: the batch so far and the open item.
struct Work<'a> {
    batch: RenderBatch,
    open: Option<WorkItem>,
    sink: &'a mut dyn WorkSink,
}

/// Buffers accesses, counts them, and hands them to a sink in batches; or records them as
/// render work ([`Emitter::for_work`]).
pub struct Emitter<'a> {
    buf: Vec<Access>,
    sink: Option<&'a mut dyn AccessSink>,
    work: Option<Work<'a>>,
    pub time: u64,
    pub stats: Stats,
    error: Option<String>,
}

impl<'a> Emitter<'a> {
    const FLUSH: usize = 1 << 14;

    pub fn new(sink: &'a mut dyn AccessSink) -> Self {
        Emitter {
            buf: Vec::with_capacity(Self::FLUSH),
            sink: Some(sink),
            work: None,
            time: 0,
            stats: Stats::default(),
            error: None,
        }
    }

    /// An emitter that records render work for a timed pipeline into `sink`.
    pub fn for_work(sink: &'a mut dyn WorkSink) -> Self {
        Emitter {
            buf: Vec::new(),
            sink: None,
            work: Some(Work {
                batch: RenderBatch::default(),
                open: None,
                sink,
            }),
            time: 0,
            stats: Stats::default(),
            error: None,
        }
    }

    /// Close the open work item and open one of kind `kind` on shader core `core` and ROP
    /// `rop` (nothing when not recording work).
    #[inline]
    pub fn begin(&mut self, kind: WorkKind, core: u16, rop: u16) {
        let Some(w) = &mut self.work else { return };
        if let Some(done) = w.open.take() {
            w.batch.items.push(done);
        }
        if w.batch.accesses.len() >= Self::FLUSH || w.batch.items.len() >= Self::FLUSH {
            self.flush();
        }
        if let Some(w) = &mut self.work {
            w.open = Some(WorkItem {
                core,
                rop,
                ..WorkItem::new(kind)
            });
        }
    }

    /// The open work item, to complete it as the renderer learns more (nothing when not
    /// recording work).
    #[inline]
    pub fn item(&mut self) -> Option<&mut WorkItem> {
        self.work.as_mut().and_then(|w| w.open.as_mut())
    }

    /// Emit one 64-byte line access.
    #[inline]
    pub fn line(&mut self, stream: Stream, op: Op, addr: u64, unit: u16, pc: u64, warp: u32) {
        let a = Access {
            addr,
            pc,
            time: self.time,
            warp,
            unit,
            size: crate::surface::LINE as u16,
            agent: Agent::GPU,
            stream,
            op,
            flags: 0,
        };
        if op.is_write() {
            self.stats.writes[stream as usize] += 1;
        } else {
            self.stats.reads[stream as usize] += 1;
        }
        if let Some(w) = &mut self.work {
            // An access before any item is the front end's (draw commands are, anyway).
            let item = w.open.get_or_insert(WorkItem::new(WorkKind::Command));
            item.accesses += 1;
            w.batch.units.push(unit_of(item.kind, (pc >> 56) as u8));
            w.batch.accesses.push(a);
            return;
        }
        self.buf.push(a);
        if self.buf.len() >= Self::FLUSH {
            self.flush();
        }
    }

    /// Advance the ordering counter.
    #[inline]
    pub fn tick(&mut self, n: u64) {
        self.time += n;
    }

    pub fn flush(&mut self) {
        if let Some(w) = &mut self.work {
            if self.error.is_none() && !w.batch.items.is_empty() {
                if let Err(e) = w.sink.put(&mut w.batch) {
                    self.error = Some(e);
                }
            }
            w.batch.clear();
            return;
        }
        if let (None, Some(sink)) = (&self.error, &mut self.sink) {
            if !self.buf.is_empty() {
                if let Err(e) = sink.put(&self.buf) {
                    self.error = Some(e);
                }
            }
        }
        self.buf.clear();
    }

    /// Flush and report the first sink error.
    pub fn finish(mut self) -> Result<Stats, String> {
        if let Some(w) = &mut self.work {
            if let Some(done) = w.open.take() {
                w.batch.items.push(done);
            }
        }
        self.flush();
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(std::mem::take(&mut self.stats)),
        }
    }
}
