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

use apusim_trace::{Access, Agent, Op, Stream};

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

/// Buffers accesses, counts them, and hands them to a sink in batches.
pub struct Emitter<'a> {
    buf: Vec<Access>,
    sink: &'a mut dyn AccessSink,
    pub time: u64,
    pub stats: Stats,
    error: Option<String>,
}

impl<'a> Emitter<'a> {
    const FLUSH: usize = 1 << 14;

    pub fn new(sink: &'a mut dyn AccessSink) -> Self {
        Emitter {
            buf: Vec::with_capacity(Self::FLUSH),
            sink,
            time: 0,
            stats: Stats::default(),
            error: None,
        }
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
        if self.error.is_none() && !self.buf.is_empty() {
            if let Err(e) = self.sink.put(&self.buf) {
                self.error = Some(e);
            }
        }
        self.buf.clear();
    }

    /// Flush and report the first sink error.
    pub fn finish(mut self) -> Result<Stats, String> {
        self.flush();
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(std::mem::take(&mut self.stats)),
        }
    }
}
