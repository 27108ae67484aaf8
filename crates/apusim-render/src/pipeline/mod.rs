//! The renderer: resolves a scene into GPU resources and runs its passes frame by frame
//! through the pipeline of gspc-graphics-stream-llc.txt §2.1 (Figures 2 and 3), emitting every
//! memory access the render caches see:
//!
//! input assembly (index fetch, vertex fetch through a 32-entry post-transform FIFO) →
//! vertex shading (transform, near-plane clipping) → triangle setup and rasterization into
//! 8x8 tiles of 2x2 quads → HiZ test per 8x4 block → stencil and early depth test per quad →
//! pixel shading with texture sampling → late depth test (shaders that write depth or
//! discard) → output merger (blending, up to [`MAX_RT`](crate::shader::MAX_RT) targets) →
//! display write; plus blitter copies/mip generation and fast clears.
//!
//! The stages share per-frame state, held here: `setup` builds the [`Renderer`] from a scene,
//! `frame` runs a frame's passes, blits, clears and draws, `geometry` assembles, shades and
//! clips vertices, and `quad` rasterizes tiles and runs their quads through the tests, the
//! pixel shader and the output merger.
//!
//! Choices where the papers are silent: fast clears cost no memory traffic except the HiZ
//! rewrite, and a cleared surface is resolved by the blitter (writing its still-cleared lines)
//! before it is first sampled, as real GPUs do; HiZ (Intel Gen7 layout, 8x4 blocks, see
//! [`crate::surface`]) is read once per 8x8 tile (both blocks share a line), rejects a block's
//! quads when the triangle's nearest vertex is behind the block's farthest depth, skips depth
//! reads when its farthest vertex is in front of the block's nearest depth, and is written
//! back per tile when a block's (min, max) changed; depth compares with LESS. The displayable colour
//! (gspc §2.1) bypasses the render caches, so the ROP holds each back-buffer line for its 8x8
//! tile: one read (when blending) and one write per line and tile, not one per quad. Shader cores, samplers and
//! ROPs are assigned by screen tile: core = (tx mod 8) + 8 (ty mod 8), sampler = 2 core +
//! (slot mod 2), ROP = (tx mod 4) + 4 (ty mod 4), matching the 64 cores x 2 samplers and 16
//! ROPs of drp §3 (the `units` of preset 4c1g).

// Quad code indexes several per-pixel arrays in step; index loops are clearer here.
#![allow(clippy::needless_range_loop)]

mod frame;
mod geometry;
mod quad;
mod setup;

pub use geometry::{clip_near, ClipVert};

use crate::emit::{Emitter, Tag};
use crate::math::M4;
use crate::raster::Cull;
use crate::scene::*;
use crate::shader::Uniforms;
use crate::surface::*;
use apusim_trace::Stream;
use std::collections::BTreeMap;

/// Render settings given on the command line.
#[derive(Clone, Debug)]
pub struct Options {
    pub width: u32,
    pub height: u32,
    /// Frames to render (None: the scene's count).
    pub frames: Option<u32>,
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            width: 640,
            height: 400,
            frames: None,
            seed: 1,
        }
    }
}

/// Largest supported resolution (the issue: up to 2560x1600).
pub const MAX_W: u32 = 2560;
pub const MAX_H: u32 = 1600;

struct GpuMesh {
    data: MeshData,
    vb: u64,
    ib: u64,
    /// 2 or 4 ([`index_bytes`]).
    index_bytes: u64,
}

struct Cam {
    desc: CameraDesc,
    mirror: Option<usize>,
}

#[derive(Clone, Copy)]
struct View {
    view: M4,
    vp: M4,
    flip: bool,
}

struct Draw {
    desc: DrawDesc,
    mesh: usize,
    textures: Vec<usize>,
    light: Option<usize>,
    view: Option<usize>,
}

struct Pass {
    kind: PassKind,
    color: Vec<usize>,
    depth: Option<usize>,
    camera: Option<usize>,
    clear_color: Option<[f32; 4]>,
    clear_depth: Option<f32>,
    clear_stencil: Option<u8>,
    src: Option<usize>,
    dst: Option<usize>,
    draws: Vec<Draw>,
}

/// Depth surface companions: its stencil plane and HiZ buffer.
struct DepthExtra {
    stencil: usize,
    hiz: HiZ,
}

/// A scene resolved into GPU memory, ready to render frames.
pub struct Renderer {
    pub name: String,
    pub frames: u32,
    width: u32,
    height: u32,
    mem: GpuMemory,
    surfaces: Vec<Surface>,
    depth_extra: BTreeMap<usize, DepthExtra>,
    meshes: Vec<GpuMesh>,
    cams: Vec<Cam>,
    passes: Vec<Pass>,
    backbuffer: usize,
    consts: u64,
    code: u64,
    cmds: u64,
    frame: u32,
}

impl Renderer {
    /// Bytes of GPU memory allocated.
    pub fn memory_used(&self) -> u64 {
        self.mem.used()
    }

    /// A surface by name (tests and tools).
    pub fn surface(&self, name: &str) -> Option<&Surface> {
        self.surfaces.iter().find(|s| s.name == name)
    }

    /// The displayed frame as RGBA8 rows.
    pub fn backbuffer_rgba(&self) -> (u32, u32, Vec<u8>) {
        let s = &self.surfaces[self.backbuffer];
        let mut out = Vec::with_capacity((s.width() * s.height() * 4) as usize);
        for &t in &s.mips[0].texels {
            let mut b = t.to_le_bytes();
            b[3] = 255;
            out.extend_from_slice(&b);
        }
        (s.width(), s.height(), out)
    }

    /// The displayed frame encoded as PNG.
    pub fn backbuffer_png(&self) -> Vec<u8> {
        let (w, h, px) = self.backbuffer_rgba();
        let mut out = Vec::new();
        {
            let mut enc = png::Encoder::new(&mut out, w, h);
            enc.set_color(png::ColorType::Rgba);
            enc.set_depth(png::BitDepth::Eight);
            let mut wr = enc.write_header().expect("PNG header to memory");
            wr.write_image_data(&px).expect("PNG data to memory");
        }
        out
    }
}

/// Per-draw rasterization state.
struct RasterCtx<'a, 'e> {
    em: &'a mut Emitter<'e>,
    tag: Tag,
    shader: ShaderKind,
    uni: &'a Uniforms,
    surfaces: &'a [Surface],
    textures: &'a [usize],
    tex_streams: &'a [Stream],
    targets: &'a mut Vec<Surface>,
    display: Vec<bool>,
    depth: Option<&'a mut Surface>,
    stencil: Option<&'a mut Surface>,
    hiz: Option<&'a mut HiZ>,
    desc: &'a DrawDesc,
    /// Face culling with the mirror flip applied.
    cull: Cull,
    code: u64,
    tw: u32,
    th: u32,
    wrote: bool,
    /// Some depth value was written (a depth-only pass renders its target too).
    wrote_depth: bool,
    /// Shader cores that fetched the pixel / vertex shader program in this draw.
    ps_cores: u64,
    vs_cores: u64,
    /// Display writes of the current tile, combined per line: (addr, rop, pc, warp).
    display_pending: Vec<(u64, u16, u64, u32)>,
}

impl RasterCtx<'_, '_> {
    fn core(tx: u32, ty: u32) -> u16 {
        ((tx % 8) + 8 * (ty % 8)) as u16
    }

    fn rop(tx: u32, ty: u32) -> u16 {
        ((tx % 4) + 4 * (ty % 4)) as u16
    }
}
