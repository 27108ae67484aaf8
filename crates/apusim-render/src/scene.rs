//! Scene descriptions: a small TOML format for cameras, textures, meshes, render targets and
//! passes of draws and blits, plus the procedural meshes and textures that let the built-in
//! scenes need no files (the item 5). See docs/workloads.md "Rendered scenes".
//!
//! One file, one idea: the scene format, whose declarations (one serde struct or enum per TOML
//! table, with its defaults) are most of its length, resolved and checked in one pass.
//!
//! Names are resolved when the scene is loaded; a reference to an unknown mesh, texture,
//! target or camera, an unknown shader, stream or key, or a bad value is reported with the
//! file name and line (toml's spans).

use crate::math::V3;
use serde::Deserialize;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// A scene error: file, 1-based line (0 when the error concerns the whole file), message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SceneError {
    pub file: String,
    pub line: usize,
    pub msg: String,
}

impl std::fmt::Display for SceneError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.msg)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.msg)
        }
    }
}
impl std::error::Error for SceneError {}

fn d_true() -> bool {
    true
}
fn d_one3() -> [f32; 3] {
    [1.0; 3]
}
fn d_tint() -> [f32; 4] {
    [1.0; 4]
}

/// The whole file.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct SceneDesc {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "d_frames")]
    pub frames: u32,
    #[serde(default, rename = "camera")]
    pub cameras: Vec<CameraDesc>,
    #[serde(default, rename = "texture")]
    pub textures: Vec<TextureDesc>,
    #[serde(default, rename = "mesh")]
    pub meshes: Vec<MeshDesc>,
    #[serde(default, rename = "target")]
    pub targets: Vec<TargetDesc>,
    #[serde(rename = "pass")]
    pub passes: Vec<PassDesc>,
}
fn d_frames() -> u32 {
    3
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum CameraKind {
    Perspective,
    Ortho,
    /// The `mirror_of` camera reflected about `y = mirror_y`.
    Mirror,
    /// Identity: positions are NDC (HUD, full-screen passes).
    Screen,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct CameraDesc {
    pub name: String,
    #[serde(default = "d_persp")]
    pub kind: CameraKind,
    #[serde(default)]
    pub position: [f32; 3],
    #[serde(default)]
    pub target: [f32; 3],
    #[serde(default = "d_fov")]
    pub fov: f32,
    #[serde(default = "d_near")]
    pub near: f32,
    #[serde(default = "d_far")]
    pub far: f32,
    /// Half-size of an orthographic view.
    #[serde(default = "d_extent")]
    pub extent: f32,
    /// Degrees per frame the position orbits about the target's vertical axis.
    #[serde(default)]
    pub orbit: f32,
    /// Translation per frame of position and target.
    #[serde(default, rename = "move")]
    pub motion: [f32; 3],
    pub mirror_of: Option<Spanned<String>>,
    #[serde(default)]
    pub mirror_y: f32,
}
fn d_persp() -> CameraKind {
    CameraKind::Perspective
}
fn d_fov() -> f32 {
    60.0
}
fn d_near() -> f32 {
    0.1
}
fn d_far() -> f32 {
    500.0
}
fn d_extent() -> f32 {
    20.0
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum TextureKind {
    Checker,
    Noise,
    Bricks,
    Gradient,
    /// A soft round sprite (particles).
    Sprite,
    /// Text-like glyph blocks with alpha (HUD).
    Glyphs,
    /// Leaves with alpha holes (alpha-tested foliage).
    Leaves,
    /// A PNG file (`path`).
    Png,
    /// A baseline or progressive JPEG file (`path`).
    Jpeg,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct TextureDesc {
    pub name: String,
    pub kind: TextureKind,
    #[serde(default = "d_tex")]
    pub size: u32,
    #[serde(default)]
    pub colors: Vec<[f32; 4]>,
    #[serde(default = "d_cells")]
    pub scale: f32,
    pub path: Option<Spanned<String>>,
    #[serde(default)]
    pub seed: u64,
    #[serde(default = "d_true")]
    pub mipmaps: bool,
}
fn d_tex() -> u32 {
    256
}
fn d_cells() -> f32 {
    8.0
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum MeshKind {
    Plane,
    Box,
    Sphere,
    Terrain,
    Particles,
    /// Instanced-style grass/bush clumps: `count` clumps of three crossed vertical quads over
    /// the `size` x/z area, `size[1]` tall, standing on the terrain of the same size,
    /// `height` and `seed` (alpha-tested foliage, the way games of the gspc era drew it).
    Foliage,
    /// A quad in the xy plane from (-1,-1) to (1,1) (HUD panels with a screen camera).
    Rect,
    /// One triangle covering the screen (full-screen passes).
    Fullscreen,
    /// A Wavefront OBJ file (`path`).
    Obj,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct MeshDesc {
    pub name: String,
    pub kind: MeshKind,
    #[serde(default = "d_one3")]
    pub size: [f32; 3],
    #[serde(default = "d_segments")]
    pub segments: u32,
    #[serde(default = "d_count")]
    pub count: u32,
    #[serde(default)]
    pub height: f32,
    #[serde(default = "d_uv")]
    pub uv_scale: f32,
    #[serde(default)]
    pub seed: u64,
    pub path: Option<Spanned<String>>,
}
fn d_segments() -> u32 {
    16
}
fn d_count() -> u32 {
    64
}
fn d_uv() -> f32 {
    1.0
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum TargetFormat {
    Rgba8,
    /// 16-bit float RGBA (8 bytes per texel): HDR scene colour and bloom targets.
    Rgba16f,
    R32f,
    Depth,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct TargetDesc {
    pub name: String,
    pub format: TargetFormat,
    /// Size relative to the screen.
    #[serde(default = "d_scale")]
    pub scale: f32,
    /// Absolute size (overrides `scale`).
    pub size: Option<[u32; 2]>,
    /// Give the target a full mip chain (filled by `mipgen` blit passes).
    #[serde(default)]
    pub mipmaps: bool,
}
fn d_scale() -> f32 {
    1.0
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PassKind {
    Draw,
    /// Blitter copy (with scaling) of `src` into `dst`.
    Blit,
    /// Blitter 2x2 downsampling of `src` mip 0 into its mip chain.
    Mipgen,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct PassDesc {
    pub name: String,
    #[serde(default = "d_draw")]
    pub kind: PassKind,
    #[serde(default)]
    pub color: Vec<Spanned<String>>,
    pub depth: Option<Spanned<String>>,
    pub camera: Option<Spanned<String>>,
    pub clear_color: Option<[f32; 4]>,
    pub clear_depth: Option<f32>,
    pub clear_stencil: Option<u8>,
    pub src: Option<Spanned<String>>,
    pub dst: Option<Spanned<String>>,
    #[serde(default, rename = "draw")]
    pub draws: Vec<DrawDesc>,
}
fn d_draw() -> PassKind {
    PassKind::Draw
}

/// The shader programs (see `shader.rs`).
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ShaderKind {
    Unlit,
    Lit,
    ShadowCaster,
    Gbuffer,
    DeferredLight,
    Water,
    Sky,
    AlphaTest,
    DepthOffset,
    Particle,
    Hud,
    Copy,
    Downsample,
    BrightPass,
    BlurH,
    BlurV,
    Tonemap,
    /// Dynamic environment mapping (the racing titles' reflective cars, gspc Table 1's NFS):
    /// slot 0 the base texture, slots 1-6 the six cube faces (+x, -x, +y, -y, +z, -z), each
    /// rendered by a 90-degree camera looking along that axis from the reflector's centre.
    EnvMap,
    /// A billboard particle faded where it meets the opaque scene (soft particles): slot 0
    /// the sprite, slot 1 the scene's depth (an R32F target written by a depth pre-pass).
    SoftParticle,
    /// Depth of field: slot 0 the sharp scene, slot 1 its blurred copy, slot 2 the scene
    /// depth; `tint[0]` is the focal depth and `tint[1]` the circle-of-confusion scale.
    DepthOfField,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum BlendMode {
    Opaque,
    Alpha,
    Additive,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum CullMode {
    Back,
    Front,
    None,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum StencilFunc {
    Always,
    Equal,
    NotEqual,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct StencilDesc {
    pub func: StencilFunc,
    #[serde(default, rename = "ref")]
    pub reference: u8,
    /// Value written where the depth test passes.
    pub write: Option<u8>,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum FilterMode {
    Point,
    Bilinear,
    Trilinear,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct DrawDesc {
    pub mesh: Spanned<String>,
    pub shader: ShaderKind,
    #[serde(default)]
    pub textures: Vec<Spanned<String>>,
    #[serde(default = "d_blend")]
    pub blend: BlendMode,
    #[serde(default = "d_true")]
    pub depth_test: bool,
    #[serde(default = "d_true")]
    pub depth_write: bool,
    #[serde(default = "d_cull")]
    pub cull: CullMode,
    pub stencil: Option<StencilDesc>,
    #[serde(default)]
    pub translate: [f32; 3],
    #[serde(default = "d_one3")]
    pub scale: [f32; 3],
    #[serde(default)]
    pub rotate_y: f32,
    /// Degrees of extra rotation about y per frame.
    #[serde(default)]
    pub spin: f32,
    /// Instances on a grid (x, z) `spacing` apart.
    #[serde(default = "d_inst")]
    pub instances: [u32; 2],
    #[serde(default)]
    pub spacing: [f32; 2],
    #[serde(default = "d_tint")]
    pub tint: [f32; 4],
    #[serde(default = "d_filter")]
    pub filter: FilterMode,
    /// The light camera whose shadow map (texture slot 1 or 3) the shader samples.
    pub light: Option<Spanned<String>>,
    /// The camera whose depth buffer a deferred or screen-space shader reconstructs from.
    pub view: Option<Spanned<String>>,
}
fn d_blend() -> BlendMode {
    BlendMode::Opaque
}
fn d_cull() -> CullMode {
    CullMode::Back
}
fn d_inst() -> [u32; 2] {
    [1, 1]
}
fn d_filter() -> FilterMode {
    FilterMode::Trilinear
}

/// Text and name of a loaded scene file, for error messages.
#[derive(Clone, Debug)]
pub struct Source {
    pub file: String,
    pub text: String,
    pub dir: Option<PathBuf>,
}

impl Source {
    pub fn line_of(&self, span: Range<usize>) -> usize {
        let end = span.start.min(self.text.len());
        self.text[..end].bytes().filter(|&b| b == b'\n').count() + 1
    }
    pub fn err(&self, span: Range<usize>, msg: impl Into<String>) -> SceneError {
        SceneError {
            file: self.file.clone(),
            line: self.line_of(span),
            msg: msg.into(),
        }
    }
    /// Resolve a path named in the scene relative to the scene file.
    pub fn path(&self, p: &str) -> PathBuf {
        match &self.dir {
            Some(d) if Path::new(p).is_relative() => d.join(p),
            _ => PathBuf::from(p),
        }
    }
}

/// Parse a scene; syntax and type errors carry toml's line.
pub fn parse(src: &Source) -> Result<SceneDesc, SceneError> {
    toml::from_str::<SceneDesc>(&src.text).map_err(|e| {
        let line = e.span().map(|s| src.line_of(s)).unwrap_or(0);
        SceneError {
            file: src.file.clone(),
            line,
            msg: e.message().to_string(),
        }
    })
}

/// One vertex: position, normal, texture coordinate (32 bytes in the vertex buffer).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vertex {
    pub p: [f32; 3],
    pub n: [f32; 3],
    pub uv: [f32; 2],
}

/// Bytes per vertex in a vertex buffer.
pub const VERTEX_STRIDE: u64 = 32;
/// Bytes per 32-bit index.
pub const INDEX_BYTES: u64 = 4;

/// Bytes per index of a mesh with `verts` vertices: 16-bit indices when they suffice (at most
/// 65 536 vertices), 32-bit otherwise — what D3D9/10-era games and their exporters do, since
/// 16-bit index buffers halve index fetch bandwidth.
pub fn index_bytes(verts: usize) -> u64 {
    if verts <= 1 << 16 {
        2
    } else {
        INDEX_BYTES
    }
}

/// Triangle list geometry.
#[derive(Clone, Debug, Default)]
pub struct MeshData {
    pub verts: Vec<Vertex>,
    pub idx: Vec<u32>,
}

impl MeshData {
    fn quad_grid(nx: u32, nz: u32, f: impl Fn(f32, f32) -> Vertex) -> MeshData {
        let mut m = MeshData::default();
        for j in 0..=nz {
            for i in 0..=nx {
                m.verts.push(f(i as f32 / nx as f32, j as f32 / nz as f32));
            }
        }
        let row = nx + 1;
        for j in 0..nz {
            for i in 0..nx {
                let a = j * row + i;
                // Counter-clockwise seen from +y for a grid in x/z with z growing towards the
                // viewer.
                m.idx
                    .extend([a, a + row, a + 1, a + 1, a + row, a + row + 1]);
            }
        }
        m
    }

    /// A plane in x/z centred at the origin, facing +y.
    pub fn plane(sx: f32, sz: f32, seg: u32, uv: f32) -> MeshData {
        Self::quad_grid(seg, seg, |u, v| Vertex {
            p: [(u - 0.5) * sx, 0.0, (v - 0.5) * sz],
            n: [0.0, 1.0, 0.0],
            uv: [u * uv, v * uv],
        })
    }

    /// A heightfield of value noise.
    pub fn terrain(sx: f32, sz: f32, seg: u32, h: f32, uv: f32, seed: u64) -> MeshData {
        let height = |u: f32, v: f32| crate::surface::value_noise(u, v, 4.0, 4, seed) * h;
        let e = 1.0 / seg as f32;
        Self::quad_grid(seg, seg, |u, v| {
            let dx = (height(u + e, v) - height(u - e, v)) / (2.0 * e * sx);
            let dz = (height(u, v + e) - height(u, v - e)) / (2.0 * e * sz);
            let n = V3(-dx, 1.0, -dz).norm();
            Vertex {
                p: [(u - 0.5) * sx, height(u, v), (v - 0.5) * sz],
                n: [n.0, n.1, n.2],
                uv: [u * uv, v * uv],
            }
        })
    }

    /// A UV sphere of radius 1 (outward normals).
    pub fn sphere(seg: u32, uv: f32) -> MeshData {
        let seg = seg.max(3);
        let mut m = Self::quad_grid(seg * 2, seg, |u, v| {
            let (th, ph) = (u * std::f32::consts::TAU, v * std::f32::consts::PI);
            let n = [ph.sin() * th.cos(), ph.cos(), ph.sin() * th.sin()];
            Vertex {
                p: n,
                n,
                uv: [u * uv, v * uv],
            }
        });
        // The grid winds for +y viewing; the sphere's outside needs the opposite winding.
        for t in m.idx.chunks_mut(3) {
            t.swap(1, 2);
        }
        m
    }

    /// An axis-aligned box with 6 faces (outward winding), size `s`.
    pub fn cube(s: [f32; 3], uv: f32) -> MeshData {
        let mut m = MeshData::default();
        let faces: [([f32; 3], [f32; 3], [f32; 3]); 6] = [
            ([1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]),
            ([-1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]),
            ([0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]),
            ([0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
            ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
            ([0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ];
        for (n, t, b) in faces {
            let base = m.verts.len() as u32;
            for (cu, cv) in [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)] {
                let p: [f32; 3] = std::array::from_fn(|k| {
                    (n[k] + t[k] * (cu * 2.0 - 1.0) + b[k] * (cv * 2.0 - 1.0)) * 0.5 * s[k]
                });
                m.verts.push(Vertex {
                    p,
                    n,
                    uv: [cu * uv, (1.0 - cv) * uv],
                });
            }
            m.idx
                .extend([base, base + 1, base + 2, base, base + 2, base + 3]);
        }
        m
    }

    /// Camera-facing particle quads: `p` is the centre, `n.xy` the corner offset, expanded by
    /// the particle vertex shader (billboarding).
    pub fn particles(count: u32, s: [f32; 3], seed: u64) -> MeshData {
        let mut m = MeshData::default();
        for i in 0..count {
            let r = |k: i64| crate::surface::hash01(i as i64, k, seed) - 0.5;
            let c = [r(0) * s[0], (r(1) + 0.5) * s[1], r(2) * s[2]];
            let base = m.verts.len() as u32;
            for (cx, cy) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                m.verts.push(Vertex {
                    p: c,
                    n: [cx, cy, 0.0],
                    uv: [(cx + 1.0) * 0.5, (1.0 - cy) * 0.5],
                });
            }
            m.idx
                .extend([base, base + 1, base + 2, base, base + 2, base + 3]);
        }
        m
    }

    /// Grass/bush clumps standing on the terrain of [`MeshData::terrain`] with the same size,
    /// `ground` height and `seed`: each clump is three vertical quads crossed at 60 degrees
    /// (12 vertices, 6 triangles), with a random yaw, height (60-100% of `s[1]`) and width,
    /// normals pointing up as foliage lighting usually does.
    pub fn foliage(count: u32, s: [f32; 3], ground: f32, uv: f32, seed: u64) -> MeshData {
        let mut m = MeshData::default();
        let place = seed ^ 0x5eed_f011_a6e0;
        for i in 0..count {
            let r = |k: i64| crate::surface::hash01(i as i64, k, place);
            let (u, v) = (r(0), r(1));
            let y0 = crate::surface::value_noise(u, v, 4.0, 4, seed) * ground - 0.05 * s[1];
            let (cx, cz) = ((u - 0.5) * s[0], (v - 0.5) * s[2]);
            let h = s[1] * (0.6 + 0.4 * r(2));
            let w = h * (0.6 + 0.4 * r(3));
            let yaw = r(4) * std::f32::consts::PI;
            for q in 0..3 {
                let a = yaw + q as f32 * std::f32::consts::FRAC_PI_3;
                let (dx, dz) = (a.cos() * w * 0.5, a.sin() * w * 0.5);
                let base = m.verts.len() as u32;
                for (cu, cv) in [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)] {
                    let t = cu * 2.0 - 1.0;
                    m.verts.push(Vertex {
                        p: [cx + dx * t, y0 + cv * h, cz + dz * t],
                        n: [0.0, 1.0, 0.0],
                        uv: [cu * uv, (1.0 - cv) * uv],
                    });
                }
                m.idx
                    .extend([base, base + 1, base + 2, base, base + 2, base + 3]);
            }
        }
        m
    }

    /// A quad from (-1,-1) to (1,1) in the xy plane facing +z.
    pub fn rect() -> MeshData {
        let v = |x: f32, y: f32| Vertex {
            p: [x, y, 0.0],
            n: [0.0, 0.0, 1.0],
            uv: [(x + 1.0) * 0.5, (1.0 - y) * 0.5],
        };
        MeshData {
            verts: vec![v(-1.0, -1.0), v(1.0, -1.0), v(1.0, 1.0), v(-1.0, 1.0)],
            idx: vec![0, 1, 2, 0, 2, 3],
        }
    }

    /// One triangle covering NDC [-1,1]^2.
    pub fn fullscreen() -> MeshData {
        let v = |x: f32, y: f32| Vertex {
            p: [x, y, 0.0],
            n: [0.0, 0.0, 1.0],
            uv: [(x + 1.0) * 0.5, (1.0 - y) * 0.5],
        };
        MeshData {
            verts: vec![v(-1.0, -1.0), v(3.0, -1.0), v(-1.0, 3.0)],
            idx: vec![0, 1, 2],
        }
    }

    /// Parse a Wavefront OBJ (v, vt, vn, f with polygon fans; other statements ignored).
    pub fn obj(text: &str, file: &str) -> Result<MeshData, SceneError> {
        let mut p: Vec<[f32; 3]> = Vec::new();
        let mut t: Vec<[f32; 2]> = Vec::new();
        let mut n: Vec<[f32; 3]> = Vec::new();
        let mut m = MeshData::default();
        for (ln, line) in text.lines().enumerate() {
            let err = |msg: String| SceneError {
                file: file.to_string(),
                line: ln + 1,
                msg,
            };
            let mut it = line.split_whitespace();
            let nums = |it: std::str::SplitWhitespace, k: usize| -> Result<Vec<f32>, SceneError> {
                let v: Vec<f32> = it
                    .take(k)
                    .map(|s| s.parse::<f32>())
                    .collect::<Result<_, _>>()
                    .map_err(|e| err(format!("expected {k} numbers: {e}")))?;
                if v.len() < k.min(2) {
                    return Err(err(format!("expected {k} numbers")));
                }
                Ok(v)
            };
            match it.next() {
                Some("v") => {
                    let v = nums(it, 3)?;
                    p.push([v[0], v[1], *v.get(2).unwrap_or(&0.0)]);
                }
                Some("vt") => {
                    let v = nums(it, 2)?;
                    t.push([v[0], 1.0 - v[1]]);
                }
                Some("vn") => {
                    let v = nums(it, 3)?;
                    n.push([v[0], v[1], *v.get(2).unwrap_or(&1.0)]);
                }
                Some("f") => {
                    let mut poly = Vec::new();
                    for c in it {
                        let mut parts = c.split('/');
                        let get = |s: Option<&str>,
                                   len: usize|
                         -> Result<Option<usize>, SceneError> {
                            match s {
                                None | Some("") => Ok(None),
                                Some(s) => {
                                    let i: i64 = s
                                        .parse()
                                        .map_err(|_| err(format!("bad face index `{s}`")))?;
                                    let k = if i < 0 { len as i64 + i } else { i - 1 };
                                    if k < 0 || k as usize >= len {
                                        return Err(err(format!("face index {i} out of range")));
                                    }
                                    Ok(Some(k as usize))
                                }
                            }
                        };
                        let vi = get(parts.next(), p.len())?
                            .ok_or_else(|| err("face corner without a vertex".into()))?;
                        let ti = get(parts.next(), t.len())?;
                        let ni = get(parts.next(), n.len())?;
                        m.verts.push(Vertex {
                            p: p[vi],
                            n: ni.map(|i| n[i]).unwrap_or([0.0, 1.0, 0.0]),
                            uv: ti.map(|i| t[i]).unwrap_or([0.0, 0.0]),
                        });
                        poly.push(m.verts.len() as u32 - 1);
                    }
                    if poly.len() < 3 {
                        return Err(err("a face needs at least 3 corners".into()));
                    }
                    for k in 1..poly.len() - 1 {
                        m.idx.extend([poly[0], poly[k], poly[k + 1]]);
                    }
                }
                _ => {}
            }
        }
        if m.idx.is_empty() {
            return Err(SceneError {
                file: file.to_string(),
                line: 0,
                msg: "the OBJ file has no faces".into(),
            });
        }
        Ok(m)
    }
}

/// Generate a procedural texture's mip-0 texels (RGBA in `[0, 1]`).
pub fn procedural(desc: &TextureDesc, size: u32) -> Vec<[f32; 4]> {
    let c = |i: usize, d: [f32; 4]| *desc.colors.get(i).unwrap_or(&d);
    let (c0, c1) = (c(0, [0.9, 0.9, 0.85, 1.0]), c(1, [0.2, 0.25, 0.3, 1.0]));
    let mix = |a: [f32; 4], b: [f32; 4], t: f32| -> [f32; 4] {
        std::array::from_fn(|k| a[k] + (b[k] - a[k]) * t)
    };
    let s = desc.scale.max(1.0);
    // The noise lattices each kind uses, hashed once per texture (the other kinds' get no
    // octaves, so nothing is tabulated for them; they never evaluate it).
    use crate::surface::ValueNoise;
    let noise = |cells: f32, oct: u32, seed: u64, kind: TextureKind| {
        ValueNoise::new(cells, if desc.kind == kind { oct } else { 0 }, seed)
    };
    let checker_n = noise(32.0, 2, desc.seed, TextureKind::Checker);
    let noise_n = noise(s, 5, desc.seed, TextureKind::Noise);
    let brick_n = noise(64.0, 3, desc.seed, TextureKind::Bricks);
    let leaf_a = noise(s, 3, desc.seed, TextureKind::Leaves);
    let leaf_c = noise(s * 4.0, 2, desc.seed + 7, TextureKind::Leaves);
    let texel = |x: u32, y: u32| -> [f32; 4] {
        let (u, v) = (
            (x as f32 + 0.5) / size as f32,
            (y as f32 + 0.5) / size as f32,
        );
        match desc.kind {
            TextureKind::Checker => {
                let k = ((u * s).floor() as i32 + (v * s).floor() as i32) & 1;
                let n = checker_n.at(u, v) * 0.15;
                mix(if k == 0 { c0 } else { c1 }, [0.0, 0.0, 0.0, 1.0], n)
            }
            TextureKind::Noise => mix(c0, c1, noise_n.at(u, v)),
            TextureKind::Bricks => {
                let row = (v * s).floor();
                let off = if row as i32 % 2 == 0 { 0.0 } else { 0.5 };
                let bu = (u * s * 0.5 + off).fract();
                let bv = (v * s).fract();
                let mortar = bu < 0.05 || bv < 0.1;
                let n = brick_n.at(u, v);
                if mortar {
                    mix(c1, [0.5, 0.5, 0.5, 1.0], n * 0.3)
                } else {
                    mix(c0, [0.3, 0.1, 0.05, 1.0], n * 0.4)
                }
            }
            TextureKind::Gradient => mix(c0, c1, v),
            TextureKind::Sprite => {
                let r = ((u - 0.5) * (u - 0.5) + (v - 0.5) * (v - 0.5)).sqrt() * 2.0;
                let a = (1.0 - r).clamp(0.0, 1.0).powf(1.5);
                [c0[0], c0[1], c0[2], a]
            }
            TextureKind::Glyphs => {
                let (cu, cv) = ((u * s).fract(), (v * s * 0.5).fract());
                let on =
                    crate::surface::hash01((u * s) as i64, (v * s * 0.5) as i64, desc.seed) > 0.3;
                let inside = cu > 0.15 && cu < 0.85 && cv > 0.2 && cv < 0.8;
                let bit = crate::surface::hash01(
                    (u * s * 5.0) as i64,
                    (v * s * 3.5) as i64,
                    desc.seed + 1,
                ) > 0.5;
                if on && inside && bit {
                    [c0[0], c0[1], c0[2], 1.0]
                } else {
                    [c1[0], c1[1], c1[2], 0.35]
                }
            }
            TextureKind::Leaves => {
                let n = leaf_a.at(u, v);
                let a = if n > 0.5 { 1.0 } else { 0.0 };
                let g = mix(c0, c1, leaf_c.at(u, v));
                [g[0], g[1], g[2], a]
            }
            TextureKind::Png | TextureKind::Jpeg => [1.0, 0.0, 1.0, 1.0],
        }
    };
    // Rows in parallel: every texel is a pure function of (x, y), so the result is the same
    // whatever the thread count.
    use rayon::prelude::*;
    let mut out = vec![[0.0f32; 4]; (size * size) as usize];
    out.par_chunks_mut(size.max(1) as usize)
        .enumerate()
        .for_each(|(y, row)| {
            for (x, t) in row.iter_mut().enumerate() {
                *t = texel(x as u32, y as u32);
            }
        });
    out
}

/// Read a PNG file as RGBA in `[0, 1]`: (width, height, texels).
pub fn load_png(path: &Path) -> Result<(u32, u32, Vec<[f32; 4]>), String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut dec = png::Decoder::new(std::io::BufReader::new(f));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut r = dec
        .read_info()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut buf = vec![0; r.output_buffer_size()];
    let info = r
        .next_frame(&mut buf)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let ch = info.color_type.samples();
    let px = (info.width * info.height) as usize;
    let mut out = Vec::with_capacity(px);
    for i in 0..px {
        let s = &buf[i * ch..i * ch + ch];
        let g = |k: usize| s[k] as f32 / 255.0;
        out.push(match ch {
            1 => [g(0), g(0), g(0), 1.0],
            2 => [g(0), g(0), g(0), g(1)],
            3 => [g(0), g(1), g(2), 1.0],
            _ => [g(0), g(1), g(2), g(3)],
        });
    }
    Ok((info.width, info.height, out))
}

/// Read a JPEG file as RGBA in `[0, 1]`: (width, height, texels).
pub fn load_jpeg(path: &Path) -> Result<(u32, u32, Vec<[f32; 4]>), String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut dec = jpeg_decoder::Decoder::new(std::io::BufReader::new(f));
    let px = dec
        .decode()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let info = dec
        .info()
        .ok_or_else(|| format!("{}: no image information", path.display()))?;
    let g = |v: u8| v as f32 / 255.0;
    let out: Vec<[f32; 4]> = match info.pixel_format {
        jpeg_decoder::PixelFormat::L8 => px.iter().map(|&l| [g(l), g(l), g(l), 1.0]).collect(),
        jpeg_decoder::PixelFormat::L16 => px
            .chunks_exact(2)
            .map(|c| [g(c[0]), g(c[0]), g(c[0]), 1.0])
            .collect(),
        jpeg_decoder::PixelFormat::RGB24 => px
            .chunks_exact(3)
            .map(|c| [g(c[0]), g(c[1]), g(c[2]), 1.0])
            .collect(),
        jpeg_decoder::PixelFormat::CMYK32 => px
            .chunks_exact(4)
            .map(|c| {
                let k = 1.0 - g(c[3]);
                [
                    (1.0 - g(c[0])) * k,
                    (1.0 - g(c[1])) * k,
                    (1.0 - g(c[2])) * k,
                    1.0,
                ]
            })
            .collect(),
    };
    Ok((info.width as u32, info.height as u32, out))
}
