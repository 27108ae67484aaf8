//! GPU memory: one physical address space in which every surface and buffer is allocated, the
//! tiled layouts of textures, render targets, depth, stencil and HiZ, and the texel data.
//!
//! One file, one idea: where every texel of every surface lives (the address space, the tiled
//! layouts and the texel store share the layout arithmetic); about a fifth of it is unit tests.
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

use crate::math::V3;

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

/// Texture addressing outside `[0, 1]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrap {
    Repeat,
    Clamp,
}

/// Texture filtering (gspc §2.1: point, bilinear, trilinear).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    Point,
    Bilinear,
    Trilinear,
}

impl Filter {
    /// Texels one sample filters: one, a 2x2 footprint, or a 2x2 footprint on two mip levels.
    pub fn taps(self) -> u32 {
        match self {
            Filter::Point => 1,
            Filter::Bilinear => 4,
            Filter::Trilinear => 8,
        }
    }
}

/// The distinct lines one quad's samples of one texture touch (deduplicated within the quad).
#[derive(Clone, Debug, Default)]
pub struct LineSet {
    pub lines: Vec<u64>,
}

impl LineSet {
    #[inline]
    pub fn add(&mut self, a: u64) {
        if !self.lines.contains(&a) {
            self.lines.push(a);
        }
    }
    pub fn clear(&mut self) {
        self.lines.clear();
    }
}

/// Mip level of detail from a quad's texture coordinates (pixels ordered (0,0), (1,0), (0,1),
/// (1,1)): `log2` of the larger screen-axis derivative length in texels (the OpenGL/D3D
/// isotropic rule).
pub fn quad_lod(uv: &[[f32; 2]; 4], w: u32, h: u32) -> f32 {
    let (w, h) = (w as f32, h as f32);
    let dx = ((uv[1][0] - uv[0][0]) * w, (uv[1][1] - uv[0][1]) * h);
    let dy = ((uv[2][0] - uv[0][0]) * w, (uv[2][1] - uv[0][1]) * h);
    let rho = (dx.0 * dx.0 + dx.1 * dx.1)
        .max(dy.0 * dy.0 + dy.1 * dy.1)
        .sqrt();
    if rho > 0.0 {
        rho.log2()
    } else {
        f32::NEG_INFINITY
    }
}

#[inline]
fn wrap_coord(i: i32, n: u32, wrap: Wrap) -> u32 {
    match wrap {
        Wrap::Repeat => i.rem_euclid(n as i32) as u32,
        Wrap::Clamp => i.clamp(0, n as i32 - 1) as u32,
    }
}

impl Surface {
    /// Nearest texel of `mip` at `uv`.
    fn point(&self, mip: usize, uv: [f32; 2], wrap: Wrap, lines: &mut LineSet) -> [f32; 4] {
        let m = &self.mips[mip];
        let x = wrap_coord((uv[0] * m.width as f32).floor() as i32, m.width, wrap);
        let y = wrap_coord((uv[1] * m.height as f32).floor() as i32, m.height, wrap);
        lines.add(self.line_addr(mip, x, y));
        self.format.decode(self.texel(mip, x, y))
    }
    /// Bilinear filtering of the 2x2 texels around `uv` on `mip`.
    pub fn bilinear(&self, mip: usize, uv: [f32; 2], wrap: Wrap, lines: &mut LineSet) -> [f32; 4] {
        let m = &self.mips[mip];
        let fx = uv[0] * m.width as f32 - 0.5;
        let fy = uv[1] * m.height as f32 - 0.5;
        let (x0, y0) = (fx.floor(), fy.floor());
        let (ax, ay) = (fx - x0, fy - y0);
        let mut out = [0.0f32; 4];
        for (dx, dy, wgt) in [
            (0, 0, (1.0 - ax) * (1.0 - ay)),
            (1, 0, ax * (1.0 - ay)),
            (0, 1, (1.0 - ax) * ay),
            (1, 1, ax * ay),
        ] {
            let x = wrap_coord(x0 as i32 + dx, m.width, wrap);
            let y = wrap_coord(y0 as i32 + dy, m.height, wrap);
            lines.add(self.line_addr(mip, x, y));
            let c = self.format.decode(self.texel(mip, x, y));
            for k in 0..4 {
                out[k] += c[k] * wgt;
            }
        }
        out
    }
    /// Sample one pixel's `uv` at level of detail `lod` with `filter`, recording the lines.
    pub fn sample(
        &self,
        uv: [f32; 2],
        lod: f32,
        filter: Filter,
        wrap: Wrap,
        lines: &mut LineSet,
    ) -> [f32; 4] {
        let top = (self.mips.len() - 1) as f32;
        let lod = if lod.is_nan() {
            0.0
        } else {
            lod.clamp(0.0, top)
        };
        match filter {
            Filter::Point => self.point(lod.round() as usize, uv, wrap, lines),
            Filter::Bilinear => self.bilinear(lod.round() as usize, uv, wrap, lines),
            Filter::Trilinear => {
                let l0 = lod.floor();
                let f = lod - l0;
                let a = self.bilinear(l0 as usize, uv, wrap, lines);
                if f <= 0.0 || l0 >= top {
                    return a;
                }
                let b = self.bilinear(l0 as usize + 1, uv, wrap, lines);
                [0, 1, 2, 3].map(|k| a[k] * (1.0 - f) + b[k] * f)
            }
        }
    }
    /// Sample a whole quad: the level of detail comes from the quad's derivatives.
    pub fn sample_quad(
        &self,
        uv: &[[f32; 2]; 4],
        bias: f32,
        filter: Filter,
        wrap: Wrap,
        live: u8,
        lines: &mut LineSet,
    ) -> [[f32; 4]; 4] {
        let lod = quad_lod(uv, self.width(), self.height()) + bias;
        let mut out = [[0.0f32; 4]; 4];
        for i in 0..4 {
            if live & (1 << i) != 0 {
                out[i] = self.sample(uv[i], lod, filter, wrap, lines);
            }
        }
        out
    }
}

/// Deterministic hash noise in `[0, 1)` (SplitMix64 finaliser).
pub fn hash01(x: i64, y: i64, seed: u64) -> f32 {
    let mut z = (x as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add((y as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
        .wrapping_add(seed.wrapping_mul(0x1656_67B1_9E37_79F9));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 40) as f32 / (1u64 << 24) as f32
}

/// `x.floor()` as an integer, without the `floorf` call (bit-identical for |x| < 2^62).
#[inline]
fn floor_i64(x: f32) -> i64 {
    let t = x as i64;
    t - ((t as f32) > x) as i64
}

/// Smooth value noise with `octaves` octaves, period `cells` at the base octave. The lattice
/// is addressed with integers (no `floorf`, one hash per corner); results are bit-identical
/// to evaluating the lattice with `f32::floor`.
pub fn value_noise(u: f32, v: f32, cells: f32, octaves: u32, seed: u64) -> f32 {
    noise_sum(u, v, cells, octaves, |o, i, j| {
        hash01(i, j, seed + o as u64)
    })
}

/// The octave sum of [`value_noise`], with the lattice value of octave `o` at (i, j) (already
/// wrapped to the octave's period) given by `lattice`.
#[inline]
fn noise_sum(
    u: f32,
    v: f32,
    cells: f32,
    octaves: u32,
    lattice: impl Fn(u32, i64, i64) -> f32,
) -> f32 {
    let mut sum = 0.0;
    let mut amp = 0.5;
    let mut freq = cells;
    let mut norm = 0.0;
    let s = |a: f32| a * a * (3.0 - 2.0 * a);
    for o in 0..octaves {
        let (x, y) = (u * freq, v * freq);
        let (x0, y0) = (floor_i64(x), floor_i64(y));
        let (fx, fy) = (x - x0 as f32, y - y0 as f32);
        let p = (freq as i64).max(1);
        // Wrap to the period; coordinates are usually inside it already (no division).
        let wrap = |k: i64| {
            if (0..p).contains(&k) {
                k
            } else {
                k.rem_euclid(p)
            }
        };
        let (xa, xb) = (wrap(x0), wrap(x0 + 1));
        let (ya, yb) = (wrap(y0), wrap(y0 + 1));
        let (h00, h10) = (lattice(o, xa, ya), lattice(o, xb, ya));
        let (h01, h11) = (lattice(o, xa, yb), lattice(o, xb, yb));
        let a = h00 + (h10 - h00) * s(fx);
        let b = h01 + (h11 - h01) * s(fx);
        sum += amp * (a + (b - a) * s(fy));
        norm += amp;
        amp *= 0.5;
        freq *= 2.0;
    }
    sum / norm
}

/// [`value_noise`] with each octave's periodic lattice hashed once into a table: for
/// generating whole textures, where every lattice value is used by many texels. Gives exactly
/// the values of [`value_noise`] with the same parameters.
pub struct ValueNoise {
    cells: f32,
    octaves: u32,
    seed: u64,
    /// Per octave: (period, p x p lattice values), or no table when the period is too large.
    tables: Vec<(i64, Vec<f32>)>,
}

impl ValueNoise {
    /// Largest lattice period tabulated (4 MB of f32 per octave).
    const MAX_PERIOD: i64 = 1024;
    pub fn new(cells: f32, octaves: u32, seed: u64) -> ValueNoise {
        let mut freq = cells;
        let mut tables = Vec::with_capacity(octaves as usize);
        for o in 0..octaves {
            let p = (freq as i64).max(1);
            let t = if p <= Self::MAX_PERIOD {
                (0..p * p)
                    .map(|k| hash01(k % p, k / p, seed + o as u64))
                    .collect()
            } else {
                Vec::new()
            };
            tables.push((p, t));
            freq *= 2.0;
        }
        ValueNoise {
            cells,
            octaves,
            seed,
            tables,
        }
    }
    pub fn at(&self, u: f32, v: f32) -> f32 {
        noise_sum(u, v, self.cells, self.octaves, |o, i, j| {
            let (p, t) = &self.tables[o as usize];
            if t.is_empty() {
                hash01(i, j, self.seed + o as u64)
            } else {
                t[(j * p + i) as usize]
            }
        })
    }
}

/// Lambert shading helper shared by the lit shaders.
pub fn lambert(n: V3, l: V3) -> f32 {
    n.norm().dot(l.norm()).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tex(w: u32, h: u32, levels: u32) -> Surface {
        GpuMemory::default().surface("t", Format::Rgba8, Usage::Texture, w, h, levels)
    }

    #[test]
    fn tabulated_noise_equals_hashed_noise() {
        for (cells, oct) in [(4.0, 4), (16.0, 5), (0.5, 2), (700.0, 2)] {
            let n = ValueNoise::new(cells, oct, 9);
            for k in 0..200 {
                let (u, v) = (k as f32 * 0.0173 - 0.4, k as f32 * 0.0311 + 0.05);
                assert_eq!(
                    n.at(u, v).to_bits(),
                    value_noise(u, v, cells, oct, 9).to_bits()
                );
            }
        }
    }

    #[test]
    fn integer_floor_matches_floorf() {
        for x in [
            -2.5f32, -2.0, -0.25, -0.0, 0.0, 0.25, 1.0, 1.999, 7.5e6, -7.5e6, 3.0e9,
        ] {
            assert_eq!(floor_i64(x), x.floor() as i64, "{x}");
        }
    }

    #[test]
    fn hiz_line_holds_2x2_blocks_of_8x4_pixels() {
        // 1280x1024: 160x256 blocks of 16 bytes = 655 360 bytes, 16x8 pixels per line.
        let mut mem = GpuMemory::default();
        let h = mem.hiz(1280, 1024);
        assert_eq!(HiZ::bytes(h.tiles_x, h.tiles_y), 1280 * 1024 / (8 * 4) * 16);
        assert_eq!(h.min.len(), 160 * 256);
        // Tiles (0,0) and (1,0) share a line; (2,0) is the next line; (0,1) is a row of
        // 80 lines further.
        assert_eq!(h.line_addr(0, 0), h.line_addr(1, 0));
        assert_eq!(h.line_addr(2, 0), h.base + LINE);
        assert_eq!(h.line_addr(0, 1), h.base + 80 * LINE);
        // The two blocks of a tile are distinct and stacked.
        assert_eq!(h.block(3, 2, 1), h.block(3, 2, 0) + 160);
        assert_eq!(h.all_lines().count(), 80 * 128);
    }

    #[test]
    fn tiling_puts_4x4_texels_in_a_line() {
        let s = tex(16, 8, 1);
        assert_eq!(s.line_addr(0, 0, 0), s.line_addr(0, 3, 3));
        assert_eq!(s.line_addr(0, 4, 0), s.base + 64);
        assert_eq!(s.line_addr(0, 0, 4), s.base + 4 * 64);
        assert_eq!(s.bytes() % 64, 0);
    }

    #[test]
    fn rgba16f_encodes_known_half_floats_and_round_trips() {
        let f = Format::Rgba16f;
        // IEEE 754 binary16 bit patterns: 1.0, 0.5, -2.0, 65504 (largest finite), channels
        // packed low to high (R in bits 0..16, as the little-endian DXGI layout stores them).
        let v = f.encode([1.0, 0.5, -2.0, 65504.0]);
        assert_eq!(v, 0x7BFF_C000_3800_3C00);
        assert_eq!(f.decode(v), [1.0, 0.5, -2.0, 65504.0]);
        // Smallest subnormal 2^-24, zero, HDR values above 1 (exact: few mantissa bits).
        let w = f.encode([2f32.powi(-24), 0.0, 3.25, 1024.0]);
        assert_eq!(w & 0xffff, 0x0001);
        assert_eq!(f.decode(w), [2f32.powi(-24), 0.0, 3.25, 1024.0]);
        // Rounding to nearest: 1/3 has no exact half; 0x3555 = 0.333251953125 is within half
        // an ulp (2^-13 in [0.25, 0.5)), and re-encoding the decoded value is exact.
        let third = f.encode([1.0 / 3.0; 4]);
        assert_eq!(third & 0xffff, 0x3555);
        let t = f.decode(third);
        assert!((t[0] - 1.0 / 3.0).abs() <= 2f32.powi(-13), "{t:?}");
        assert_eq!(f.encode(t), third);
        // Beyond the half range: infinity, as a float render-target write.
        assert!(f.decode(f.encode([1e6, 0.0, 0.0, 0.0]))[0].is_infinite());
        // RGBA8 clamps what RGBA16F keeps.
        assert_eq!(
            Format::Rgba8.decode(Format::Rgba8.encode([3.25; 4]))[0],
            1.0
        );
    }

    #[test]
    fn rgba16f_puts_2x4_texels_of_8_bytes_in_a_line() {
        let mut s = GpuMemory::default().surface("h", Format::Rgba16f, Usage::Target, 10, 8, 0);
        // 10x8 texels: 5 lines across, 2 down; mip 1 (5x4) is 3x1 lines after mip 0.
        assert_eq!(s.lines0(), 10);
        assert_eq!(s.mips[1].offset, 10 * LINE);
        // Mips 2 (2x2) and 3 (1x1) take one line each.
        assert_eq!(s.bytes(), (10 + 3 + 1 + 1) * LINE);
        for y in 0..8 {
            for x in 0..10 {
                let want = s.base + ((y / 4) * 5 + x / 2) as u64 * LINE;
                assert_eq!(s.line_addr(0, x, y), want, "texel ({x}, {y})");
            }
        }
        assert_eq!(s.line_addr(1, 4, 3), s.base + 12 * LINE);
        // Two 32-bit words per texel, low word first; texels are independent.
        s.set(0, 3, 5, 0x1122_3344_5566_7788);
        s.set(0, 4, 5, 7);
        assert_eq!(s.texel(0, 3, 5), 0x1122_3344_5566_7788);
        assert_eq!(s.texel(0, 4, 5), 7);
        assert_eq!(s.mips[0].texels.len(), 2 * 10 * 8);
        s.fill0(Format::Rgba16f.encode([2.5, 0.0, 1.0, 1.0]));
        assert_eq!(
            Format::Rgba16f.decode(s.texel(0, 9, 7)),
            [2.5, 0.0, 1.0, 1.0]
        );
    }

    #[test]
    fn rgba16f_filters_and_mipmaps_float_values_above_one() {
        let mut s = GpuMemory::default().surface("h", Format::Rgba16f, Usage::Target, 2, 2, 0);
        s.load0(&[
            [4.0, 0.0, 0.0, 1.0],
            [0.0, 0.0, 0.0, 1.0],
            [4.0, 0.0, 0.0, 1.0],
            [0.0, 0.0, 0.0, 1.0],
        ]);
        s.build_mips();
        let mut ls = LineSet::default();
        let c = s.bilinear(0, [0.5, 0.5], Wrap::Clamp, &mut ls);
        assert_eq!(c[0], 2.0);
        assert_eq!(Format::Rgba16f.decode(s.texel(1, 0, 0))[0], 2.0);
    }

    #[test]
    fn mip_chain_and_lod_selection() {
        let s = tex(64, 64, 0);
        assert_eq!(s.mips.len(), 7);
        // One texel per pixel: lod 0; two texels per pixel: lod 1; quarter: lod -2.
        let step = |d: f32| [[0.0, 0.0], [d, 0.0], [0.0, d], [d, d]];
        assert!((quad_lod(&step(1.0 / 64.0), 64, 64) - 0.0).abs() < 1e-5);
        assert!((quad_lod(&step(2.0 / 64.0), 64, 64) - 1.0).abs() < 1e-5);
        assert!((quad_lod(&step(8.0 / 64.0), 64, 64) - 3.0).abs() < 1e-5);
        assert!((quad_lod(&step(0.25 / 64.0), 64, 64) + 2.0).abs() < 1e-5);
    }

    #[test]
    fn bilinear_and_trilinear_on_known_texture() {
        // 2x2 texture black/white columns: halfway between texel centres is grey.
        let mut s = tex(2, 2, 0);
        for y in 0..2 {
            s.set(0, 0, y, Format::Rgba8.encode([0.0, 0.0, 0.0, 1.0]));
            s.set(0, 1, y, Format::Rgba8.encode([1.0, 1.0, 1.0, 1.0]));
        }
        s.build_mips();
        let mut ls = LineSet::default();
        let c = s.bilinear(0, [0.5, 0.5], Wrap::Clamp, &mut ls);
        assert!((c[0] - 0.5).abs() < 1e-6);
        let c = s.bilinear(0, [0.375, 0.5], Wrap::Clamp, &mut ls);
        assert!((c[0] - 0.25).abs() < 1e-6, "{c:?}");
        // Texel centre: exact.
        let c = s.sample([0.75, 0.25], 0.0, Filter::Bilinear, Wrap::Clamp, &mut ls);
        assert!((c[0] - 1.0).abs() < 1e-6);
        // Trilinear halfway between mip 0 (white at this texel centre) and mip 1 (grey 0.5).
        let c = s.sample([0.75, 0.25], 0.5, Filter::Trilinear, Wrap::Clamp, &mut ls);
        let grey = Format::Rgba8.decode(s.texel(1, 0, 0))[0];
        assert!((c[0] - (0.5 + 0.5 * grey)).abs() < 1e-6, "{c:?} {grey}");
        // Point sampling picks the texel under uv.
        let c = s.sample([0.2, 0.2], 0.0, Filter::Point, Wrap::Repeat, &mut ls);
        assert_eq!(c[0], 0.0);
        // Repeat wraps: bilinear at u=0 mixes texel 1 (wrapped) and texel 0.
        let c = s.bilinear(0, [0.0, 0.25], Wrap::Repeat, &mut ls);
        assert!((c[0] - 0.5).abs() < 1e-6);
        // Every line touched was recorded once.
        let mut l = ls.lines.clone();
        l.sort();
        l.dedup();
        assert_eq!(l.len(), ls.lines.len());
    }
}
