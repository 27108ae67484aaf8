//! Render work: what a timed 3D render pipeline processes.
//!
//! A render trace fixes the order of a GPU's accesses; a timed render pipeline must choose it,
//! because its units work in parallel and wait on memory (a texture-bound draw's accesses
//! interleave differently when memory gets slower). It therefore needs the units' work, not a
//! merged access stream: a [`FrameSource`] hands out [`WorkItem`]s in submission order, each
//! with the accesses it makes, every access tagged with the pipeline unit that makes it
//! ([`Unit`], the five units of gpu-access-criticality Fig. 6: front end, depth/stencil, shader cores with
//! their samplers, colour write, blitter).
//!
//! The items of a frame: per draw, its command reads ([`WorkKind::Command`]); per triangle, its input assembly and vertex shading
//! ([`WorkKind::Triangle`]); per 8x8 screen tile it covers, the hierarchical-Z test
//! ([`WorkKind::Tile`]) and then each 2x2 quad that survived it ([`WorkKind::Quad`]: early
//! depth/stencil, shading with its texture samples, late depth, colour write) and the tile's
//! closing writes ([`WorkKind::TileEnd`]); blitter and fast-clear lines ([`WorkKind::Blit`]);
//! [`WorkKind::Sync`] where a draw or pass ends (drp §2: a fresh batch of polygons starts only
//! when the last one is done); and [`WorkKind::FrameEnd`].
//!
//! Concatenating every item's accesses gives exactly the render trace of the same scene and
//! options (`apusim gen render`), so the timed pipeline and the functional studies see the
//! same memory traffic.

use crate::{Access, Result, TraceHeader};

/// A unit of the render pipeline's queueing network (gpu-access-criticality Fig. 6), with
/// the depth/stencil unit's two positions (before and after shading) told apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Unit {
    /// Front end: command and constant reads, index and vertex fetch, vertex shader
    /// instruction fetch, hierarchical-Z reads.
    FrontEnd = 0,
    /// Depth/stencil test before shading (early Z) and its stencil and depth traffic.
    ZsEarly = 1,
    /// Shader core and its texture samplers: pixel shader instruction fetch, texture reads.
    Shader = 2,
    /// Depth/stencil test after shading (late Z: shaders that discard or write depth).
    ZsLate = 3,
    /// Colour blend and write, display writes, and a tile's closing depth/stencil/HiZ writes.
    ColorWrite = 4,
    /// Blitter copies, mip generation and fast-clear resolves.
    Blitter = 5,
}

impl Unit {
    /// Every unit, in pipeline order.
    pub const ALL: [Unit; 6] = [
        Unit::FrontEnd,
        Unit::ZsEarly,
        Unit::Shader,
        Unit::ZsLate,
        Unit::ColorWrite,
        Unit::Blitter,
    ];
    pub const COUNT: usize = 6;

    pub fn name(self) -> &'static str {
        match self {
            Unit::FrontEnd => "fe",
            Unit::ZsEarly => "zs-early",
            Unit::Shader => "sh",
            Unit::ZsLate => "zs-late",
            Unit::ColorWrite => "cw",
            Unit::Blitter => "bt",
        }
    }
}

/// What an item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkKind {
    /// A draw's command and constant reads by the front end.
    Command,
    /// A triangle's input assembly (index and vertex lines), the shading of its vertices not
    /// found in the post-transform cache (`vertices` of them, on shader core `core`, each
    /// `instructions` long), and, when `setup`, the setup of one screen triangle (none when
    /// culled or clipped away; near-plane clipping that splits a triangle gives its second
    /// half an item of its own, with no vertices).
    Triangle { vertices: u16, setup: bool },
    /// An 8x8 tile of the triangle before it on ROP `rop` and shader core `core`: the
    /// hierarchical-Z test (its read), and the tile's first stencil read and pixel shader
    /// instruction fetch, which its first quad (first shaded quad) waits for.
    Tile,
    /// A 2x2 quad of the tile before it, through ROP `rop` and shader core `core`; `shaded`
    /// when it survived early depth/stencil (then it runs `instructions` shader instructions
    /// and filters `texels[i]` texels on its core's sampler `i`); `late_z` when its depth
    /// test follows shading.
    Quad {
        shaded: bool,
        late_z: bool,
        texels: [u16; 2],
    },
    /// The tile's closing writes on its ROP (display lines held for the tile, stencil, HiZ).
    TileEnd,
    /// One blitter line (copy or fast-clear resolve): reads, then the write.
    Blit,
    /// A draw or pass ended: what follows starts when everything before it is done.
    Sync,
    /// Frame `frame` ended: its time is when everything before it is done.
    FrameEnd { frame: u32 },
}

/// One piece of pipeline work with its accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WorkItem {
    pub kind: WorkKind,
    /// Shader core (triangles' vertex shading, quads).
    pub core: u16,
    /// Render output pipeline (tiles, quads, tile ends).
    pub rop: u16,
    /// Shader instructions per thread (a vertex, or a quad).
    pub instructions: u16,
    /// The item's accesses: the next `accesses` of the batch after the previous item's.
    pub accesses: u32,
}

impl WorkItem {
    pub fn new(kind: WorkKind) -> WorkItem {
        WorkItem {
            kind,
            core: 0,
            rop: 0,
            instructions: 0,
            accesses: 0,
        }
    }
}

/// A batch of items and their accesses, in order: `accesses` is the render trace's order,
/// and `units[i]` is the unit that makes `accesses[i]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderBatch {
    pub items: Vec<WorkItem>,
    pub accesses: Vec<Access>,
    pub units: Vec<Unit>,
}

impl RenderBatch {
    pub fn clear(&mut self) {
        self.items.clear();
        self.accesses.clear();
        self.units.clear();
    }
}

/// A rendered scene as pipeline work, batch by batch.
pub trait FrameSource: Send {
    /// The scene's name and GPU clock (one GPU agent).
    fn header(&self) -> &TraceHeader;
    /// Append the next batch to `out`; false when the scene has ended.
    fn next_batch(&mut self, out: &mut RenderBatch) -> Result<bool>;
}

impl<S: FrameSource + ?Sized> FrameSource for Box<S> {
    fn header(&self) -> &TraceHeader {
        (**self).header()
    }
    fn next_batch(&mut self, out: &mut RenderBatch) -> Result<bool> {
        (**self).next_batch(out)
    }
}
