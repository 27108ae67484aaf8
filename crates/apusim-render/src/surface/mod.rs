//! GPU memory: one physical address space in which every surface and buffer is allocated, the
//! tiled layouts of textures, render targets, depth, stencil and HiZ, and the texel data.
//!
//! This file holds where every texel of every surface lives: the address space, the tiled
//! layouts and the texel store, which share the layout arithmetic. `sampling` reads
//! textures through those layouts and `noise` holds the procedural noise of generated data.
//!
//! Layout (the item 2; the papers are silent on the exact tiling, so this follows what
//! Intel Gen7 "Y-tiling" and the ATTILA simulator do at cache-line granularity). A Y-tile is
//! 128 B x 32 rows, an 8x8 Y-major grid of cache lines, and "each 64B cache line within the
//! tile is laid out as 4 rows of 16B each" (Mesa, `docs/isl/tiling.rst`), so one line is
//! **16 bytes x 4 rows** of the surface whatever the texel size:
//! - 32-bit surfaces (RGBA8 colour, R32F, depth) store **4x4 texel tiles in one 64 B line**.
//! - 64-bit surfaces (RGBA16F: four IEEE 754 binary16 channels, DXGI
//!   `R16G16B16A16_FLOAT` / D3D9 `A16B16G16R16F`, the HDR scene-colour format of the DX9/DX10
//!   era's games) store **2x4 texel tiles (2 wide, 4 high) in one 64 B line**: the same
//!   16 B x 4-row Y-tile column segment holding two 8-byte texels per row. A 2x2 quad at even
//!   coordinates still lies in one line; an 8x8 raster tile covers 8 lines instead of 4.
//!   (AMD's micro-tiling would put 4x2 texels of a 64-bit format in a line — addrlib's
//!   `ComputePixelIndexWithinMicroTile` takes the low pixel-index bits of a 64 bpp thin micro
//!   tile from x0, y0, x1 —; the footprint per 2x2 quad and per 8x8 tile is the same.)
//! - Lines are in row-major tile order; each mip level is its own tile grid after the previous
//!   one.
//! - Stencil (8 bit) stores **8x8 texel tiles per 64 B line**, so one line serves one 8x8
//!   screen tile.
//! - HiZ follows Intel Gen7 (the GPU family gspc §4 models its shader cores on): one 16-byte
//!   entry per **8x4 pixel block** (Mesa's `ISL_FORMAT_HIZ`, "an 8x4 128bpb format", in a
//!   Y-tile-shaped HiZ tiling with two HiZ columns per 16-byte Y column), so a 64 B line holds
//!   2x2 blocks = **16x8 pixels**, one line per two 8x8 raster tiles. The entry keeps the
//!   block's (min, max) depth as f32; the other 8 bytes are the format's (unmodelled) rest.
//!   An earlier layout packed (min, max) of eight 8x8 tiles per line (32x16 pixels), a quarter
//!   of the real HiZ buffer's footprint, which let the 12 KB HiZ cache of gspc §4 catch most
//!   HiZ traffic (HiZ was 2-3% of LLC accesses instead of the paper's ~7%).
//! - Linear buffers (vertex, index, constants, shader code, commands) are byte-addressed.
//!
//! Texel values are stored as 32-bit words, one per texel of a 32-bit (or smaller) format and
//! two (low word first) per texel of RGBA16F; [`Surface::texel`] returns the texel's bits as a
//! `u64` and [`Format::decode`] turns them into four f32 channels, so filtering and blending
//! always work on the decoded (float) values.
//!
//! Every allocation is 4 KiB aligned, starting at [`GPU_BASE`].

// Quad code indexes several per-pixel arrays in step; index loops are clearer here.
#![allow(clippy::needless_range_loop)]

mod noise;
mod sampling;
#[cfg(test)]
mod tests;

pub use noise::{hash01, lambert, value_noise, ValueNoise};
pub use sampling::{quad_lod, Filter, LineSet, Wrap};

/// Cache-line size the render caches and the LLC see.
pub const LINE: u64 = 64;
/// Start of the GPU's physical allocations (above a 64 GiB boundary, far from CPU traces).
pub const GPU_BASE: u64 = 0x10_0000_0000;

/// Texel formats. All 32-bit formats share the 4x4-per-line tiling, RGBA16F uses 2x4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// 8-bit RGBA, unorm.
    Rgba8,
    /// 16-bit float RGBA (IEEE 754 binary16 per channel, 8 bytes per texel): HDR colour.
    Rgba16f,
    /// One 32-bit float channel (shadow maps, linear depth).
    R32f,
    /// 32-bit float depth buffer.
    Depth32,
    /// 8-bit stencil.
    Stencil8,
}

impl Format {
    /// Texels per tile row in one 64 B line (16 bytes of a Y-tile column; stencil 8).
    pub const fn tile_w(self) -> u32 {
        match self {
            Format::Stencil8 => 8,
            Format::Rgba16f => 2,
            _ => 4,
        }
    }
    /// Texel rows per 64 B line.
    pub const fn tile_h(self) -> u32 {
        match self {
            Format::Stencil8 => 8,
            _ => 4,
        }
    }
    /// 32-bit storage words per texel.
    pub const fn words(self) -> usize {
        match self {
            Format::Rgba16f => 2,
            _ => 1,
        }
    }
    #[inline(always)]
    pub fn decode(self, t: u64) -> [f32; 4] {
        match self {
            Format::Rgba8 => {
                let b = (t as u32).to_le_bytes();
                [
                    b[0] as f32 / 255.0,
                    b[1] as f32 / 255.0,
                    b[2] as f32 / 255.0,
                    b[3] as f32 / 255.0,
                ]
            }
            Format::Rgba16f => {
                std::array::from_fn(|k| half::f16::from_bits((t >> (16 * k)) as u16).to_f32())
            }
            Format::R32f | Format::Depth32 => {
                let v = f32::from_bits(t as u32);
                [v, v, v, 1.0]
            }
            Format::Stencil8 => [(t & 0xff) as f32 / 255.0, 0.0, 0.0, 1.0],
        }
    }
    /// The texel bits of colour `c` (RGBA16F: round to nearest even, out of range to
    /// infinity, as a GPU's float render-target write does).
    #[inline(always)]
    pub fn encode(self, c: [f32; 4]) -> u64 {
        match self {
            Format::Rgba8 => {
                let q = |v: f32| (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8;
                u32::from_le_bytes([q(c[0]), q(c[1]), q(c[2]), q(c[3])]) as u64
            }
            Format::Rgba16f => {
                let h = |k: usize| (half::f16::from_f32(c[k]).to_bits() as u64) << (16 * k);
                h(0) | h(1) | h(2) | h(3)
            }
            Format::R32f | Format::Depth32 => c[0].to_bits() as u64,
            Format::Stencil8 => (c[0].clamp(0.0, 1.0) * 255.0 + 0.5) as u64,
        }
    }
}

/// One mip level: its size and where its tile grid starts.
#[derive(Clone, Debug)]
pub struct Mip {
    pub width: u32,
    pub height: u32,
    pub tiles_x: u32,
    pub offset: u64,
    /// Texel bits, [`Format::words`] 32-bit words per texel, row-major (not in tile order:
    /// the tiling only decides addresses).
    pub texels: Vec<u32>,
}

/// What a surface is used for (decides its stream when written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Usage {
    /// A texture loaded/generated before rendering (static unless re-rendered).
    Texture,
    /// A colour render target.
    Target,
    /// A depth buffer (has a stencil plane and a HiZ buffer).
    Depth,
    /// The displayable back buffer.
    Display,
    Stencil,
}

/// A tiled surface with a mip chain, allocated in GPU memory.
#[derive(Clone, Debug)]
pub struct Surface {
    pub name: String,
    pub format: Format,
    pub usage: Usage,
    pub base: u64,
    pub mips: Vec<Mip>,
    /// Frame number in which the surface was last written by the GPU (colour, depth, blit),
    /// `None` if never: texture reads of a surface written in the current frame are
    /// `dynamic-texture` (gspc §2.3).
    pub written_in: Option<u32>,
    /// Per line of mip 0: still holds the fast-clear value (no memory copy yet).
    pub cleared: Vec<bool>,
    pub clear_value: u64,
}

impl Surface {
    pub fn width(&self) -> u32 {
        self.mips[0].width
    }
    pub fn height(&self) -> u32 {
        self.mips[0].height
    }
    /// Bytes the surface occupies.
    pub fn bytes(&self) -> u64 {
        let last = self.mips.last().expect("surface has mip 0");
        last.offset + lines_of(last.width, last.height, self.format) * LINE
    }
    /// Index of the line holding texel (x, y) of `mip` within the surface.
    #[inline]
    pub fn line_index(&self, mip: usize, x: u32, y: u32) -> u64 {
        let m = &self.mips[mip];
        let f = self.format;
        m.offset / LINE + (y / f.tile_h()) as u64 * m.tiles_x as u64 + (x / f.tile_w()) as u64
    }
    /// Address of the line holding texel (x, y) of `mip`.
    #[inline]
    pub fn line_addr(&self, mip: usize, x: u32, y: u32) -> u64 {
        self.base + self.line_index(mip, x, y) * LINE
    }
    /// The bits of texel (x, y) of `mip` (see [`Format::decode`]).
    #[inline]
    pub fn texel(&self, mip: usize, x: u32, y: u32) -> u64 {
        let m = &self.mips[mip];
        let i = (y * m.width + x) as usize;
        if self.format.words() == 1 {
            m.texels[i] as u64
        } else {
            m.texels[2 * i] as u64 | (m.texels[2 * i + 1] as u64) << 32
        }
    }
    #[inline]
    pub fn set(&mut self, mip: usize, x: u32, y: u32, v: u64) {
        let words = self.format.words();
        let m = &mut self.mips[mip];
        let i = (y * m.width + x) as usize;
        if words == 1 {
            m.texels[i] = v as u32;
        } else {
            let [lo, hi] = words_of(v);
            m.texels[2 * i] = lo;
            m.texels[2 * i + 1] = hi;
        }
    }
    /// Set every texel of mip 0 to `v` (clears).
    pub fn fill0(&mut self, v: u64) {
        let words = self.format.words();
        let t = &mut self.mips[0].texels;
        if words == 1 {
            t.fill(v as u32);
        } else {
            let w = words_of(v);
            for p in t.chunks_exact_mut(2) {
                p.copy_from_slice(&w);
            }
        }
    }
    /// Store mip 0 from RGBA colours in row-major order (one per texel).
    pub fn load0(&mut self, px: &[[f32; 4]]) {
        let f = self.format;
        self.mips[0].texels = if f.words() == 1 {
            px.iter().map(|c| f.encode(*c) as u32).collect()
        } else {
            px.iter().flat_map(|c| words_of(f.encode(*c))).collect()
        };
    }
    /// Lines of mip 0.
    pub fn lines0(&self) -> usize {
        let m = &self.mips[0];
        lines_of(m.width, m.height, self.format) as usize
    }
    /// Fill mip levels 1.. with 2x2 box filtering of the level above.
    pub fn build_mips(&mut self) {
        for l in 1..self.mips.len() {
            let (pw, ph) = (self.mips[l - 1].width, self.mips[l - 1].height);
            let (w, h) = (self.mips[l].width, self.mips[l].height);
            for y in 0..h {
                for x in 0..w {
                    let mut acc = [0.0f32; 4];
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        let sx = (2 * x + dx).min(pw - 1);
                        let sy = (2 * y + dy).min(ph - 1);
                        let c = self.format.decode(self.texel(l - 1, sx, sy));
                        for k in 0..4 {
                            acc[k] += c[k] * 0.25;
                        }
                    }
                    let v = self.format.encode(acc);
                    self.set(l, x, y, v);
                }
            }
        }
    }
}

/// 64 B lines of a `w` x `h` level of format `f`.
/// The two 32-bit words a 64-bit texel is stored as, low word first.
#[inline(always)]
fn words_of(v: u64) -> [u32; 2] {
    [v as u32, (v >> 32) as u32]
}

fn lines_of(w: u32, h: u32, f: Format) -> u64 {
    (w.div_ceil(f.tile_w()) as u64) * (h.div_ceil(f.tile_h()) as u64)
}

/// The HiZ buffer of a depth surface: (min, max) depth per 8x4 pixel block, two blocks
/// (upper and lower half) per 8x8 raster tile.
#[derive(Clone, Debug)]
pub struct HiZ {
    pub base: u64,
    /// 8x8 raster tiles across and down.
    pub tiles_x: u32,
    pub tiles_y: u32,
    /// Per 8x4 block, indexed by [`HiZ::block`].
    pub min: Vec<f32>,
    pub max: Vec<f32>,
}

impl HiZ {
    /// Pixels per HiZ block (8x4, 16 bytes) and per line (2x2 blocks: 16x8 pixels).
    pub const BLOCK_W: u32 = 8;
    pub const BLOCK_H: u32 = 4;
    const LINE_W: u32 = 16;
    const LINE_H: u32 = 8;
    /// Index of the block holding rows `half * 4 .. half * 4 + 4` of raster tile (tx, ty).
    pub fn block(&self, tx: u32, ty: u32, half: u32) -> usize {
        ((ty * 2 + half) * self.tiles_x + tx) as usize
    }
    /// The line holding both blocks of 8x8 raster tile (tx, ty).
    pub fn line_addr(&self, tx: u32, ty: u32) -> u64 {
        let lines_x = (self.tiles_x * 8).div_ceil(Self::LINE_W) as u64;
        let (lx, ly) = (tx * 8 / Self::LINE_W, ty * 8 / Self::LINE_H);
        self.base + (ly as u64 * lines_x + lx as u64) * LINE
    }
    pub fn bytes(tiles_x: u32, tiles_y: u32) -> u64 {
        (tiles_x * 8).div_ceil(Self::LINE_W) as u64
            * (tiles_y * 8).div_ceil(Self::LINE_H) as u64
            * LINE
    }
    /// Every line address of the buffer (for clears).
    pub fn all_lines(&self) -> impl Iterator<Item = u64> + '_ {
        let n = Self::bytes(self.tiles_x, self.tiles_y) / LINE;
        (0..n).map(move |i| self.base + i * LINE)
    }
}

/// Bump allocator of the GPU physical address space.
#[derive(Clone, Debug)]
pub struct GpuMemory {
    next: u64,
}

impl Default for GpuMemory {
    fn default() -> Self {
        GpuMemory { next: GPU_BASE }
    }
}

impl GpuMemory {
    /// Reserve `bytes`, 4 KiB aligned.
    pub fn alloc(&mut self, bytes: u64) -> u64 {
        let base = self.next;
        self.next = (base + bytes.max(1)).div_ceil(4096) * 4096;
        base
    }
    /// Allocate a surface with `levels` mips (0: full chain down to 1x1).
    pub fn surface(
        &mut self,
        name: &str,
        format: Format,
        usage: Usage,
        width: u32,
        height: u32,
        levels: u32,
    ) -> Surface {
        let full = 32 - width.max(height).max(1).leading_zeros();
        let n = if levels == 0 { full } else { levels.min(full) };
        let mut mips = Vec::with_capacity(n as usize);
        let mut off = 0u64;
        let (mut w, mut h) = (width.max(1), height.max(1));
        for _ in 0..n {
            mips.push(Mip {
                width: w,
                height: h,
                tiles_x: w.div_ceil(format.tile_w()),
                offset: off,
                texels: vec![0; (w * h) as usize * format.words()],
            });
            off += lines_of(w, h, format) * LINE;
            w = (w / 2).max(1);
            h = (h / 2).max(1);
        }
        let mut s = Surface {
            name: name.to_string(),
            format,
            usage,
            base: 0,
            mips,
            written_in: None,
            cleared: Vec::new(),
            clear_value: 0,
        };
        s.base = self.alloc(s.bytes());
        s.cleared = vec![false; s.lines0()];
        s
    }
    pub fn hiz(&mut self, width: u32, height: u32) -> HiZ {
        let (tx, ty) = (width.div_ceil(8), height.div_ceil(8));
        let n = (tx * ty * 2) as usize;
        HiZ {
            base: self.alloc(HiZ::bytes(tx, ty)),
            tiles_x: tx,
            tiles_y: ty,
            min: vec![1.0; n],
            max: vec![1.0; n],
        }
    }
    /// Bytes allocated so far.
    pub fn used(&self) -> u64 {
        self.next - GPU_BASE
    }
}
