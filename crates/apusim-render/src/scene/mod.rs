//! Scene descriptions: a small TOML format for cameras, textures, meshes, render targets and
//! passes of draws and blits, plus the procedural meshes and textures that let the built-in
//! scenes need no files (the item 5). See docs/workloads.md "Rendered scenes".
//!
//! This file holds the scene format: one serde struct or enum per TOML table, with its
//! defaults, resolved and checked in one pass; `mesh` and `texture` hold the mesh and texture
//! data the format's declarations turn into.
//!
//! Names are resolved when the scene is loaded; a reference to an unknown mesh, texture,
//! target or camera, an unknown shader, stream or key, or a bad value is reported with the
//! file name and line (toml's spans).

mod mesh;
mod texture;

pub use mesh::{index_bytes, MeshData, Vertex, INDEX_BYTES, VERTEX_STRIDE};
pub use texture::{load_jpeg, load_png, procedural};

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

/// Declares [`ShaderKind`] and its [`ShaderKind::ALL`] from one list of variants, so the
/// list cannot miss one.
macro_rules! shader_kinds {
    ($($(#[$doc:meta])* $kind:ident,)*) => {
        /// The shader programs (see `shader.rs`).
        #[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
        #[serde(rename_all = "kebab-case")]
        pub enum ShaderKind {
            $($(#[$doc])* $kind,)*
        }

        impl ShaderKind {
            /// Every shader kind, in declaration order: `ALL[k as usize] == k`.
            pub const ALL: &'static [ShaderKind] = &[$(ShaderKind::$kind,)*];
        }
    };
}

shader_kinds! {
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

impl ShaderKind {
    /// The number of shader kinds.
    pub const COUNT: usize = Self::ALL.len();
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

#[cfg(test)]
mod tests {
    use super::ShaderKind;
    use serde::de::value::{Error, U32Deserializer};
    use serde::de::IntoDeserializer;
    use serde::Deserialize;

    /// The variant with declaration index `i`, by serde's variant index (the derived
    /// `Deserialize` knows every variant, so this sees one added after `ALL` was written).
    fn by_index(i: u32) -> Result<ShaderKind, Error> {
        let d: U32Deserializer<Error> = i.into_deserializer();
        ShaderKind::deserialize(d)
    }

    #[test]
    fn all_lists_every_shader_kind_in_order() {
        for (i, &k) in ShaderKind::ALL.iter().enumerate() {
            assert_eq!(k as usize, i, "{k:?}");
            assert_eq!(by_index(i as u32).unwrap(), k);
        }
        assert!(
            by_index(ShaderKind::COUNT as u32).is_err(),
            "a ShaderKind variant is missing from ShaderKind::ALL"
        );
    }
}
