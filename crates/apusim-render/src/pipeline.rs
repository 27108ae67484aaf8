//! The renderer: resolves a scene into GPU resources and runs its passes frame by frame
//! through the pipeline of gspc-graphics-stream-llc.txt §2.1 (Figures 2 and 3), emitting every
//! memory access the render caches see:
//!
//! One file, one idea: the renderer, one pass of the §2.1 pipeline over shared per-frame state;
//! splitting the stages apart would thread that state through every call.
//!
//! input assembly (index fetch, vertex fetch through a 32-entry post-transform FIFO) →
//! vertex shading (transform, near-plane clipping) → triangle setup and rasterization into
//! 8x8 tiles of 2x2 quads → HiZ test per 8x4 block → stencil and early depth test per quad →
//! pixel shading with texture sampling → late depth test (shaders that write depth or
//! discard) → output merger (blending, up to [`MAX_RT`] targets) → display write; plus
//! blitter copies/mip generation and fast clears.
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

use crate::emit::{Emitter, Stage, Tag, NO_QUAD};
use crate::math::{M4, V3};
use crate::raster::{Cull, ScreenVert, Tri, NATTR};
use crate::scene::*;
use crate::shader::{self, Env, QuadIn, Uniforms, MAX_RT, MAX_TEX};
use crate::surface::*;
use apusim_trace::{Op, Stream, WorkKind};
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

fn lookup(
    src: &Source,
    map: &BTreeMap<String, usize>,
    what: &str,
    name: &toml::Spanned<String>,
) -> Result<usize, SceneError> {
    map.get(name.get_ref().as_str()).copied().ok_or_else(|| {
        src.err(
            name.span(),
            format!(
                "unknown {what} `{}` (known: {})",
                name.get_ref(),
                map.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        )
    })
}

impl Renderer {
    /// Resolve a parsed scene: allocate every surface and buffer, generate textures and meshes.
    pub fn new(src: &Source, desc: &SceneDesc, opt: &Options) -> Result<Renderer, SceneError> {
        let top = |msg: String| SceneError {
            file: src.file.clone(),
            line: 1,
            msg,
        };
        if opt.width == 0 || opt.height == 0 || opt.width > MAX_W || opt.height > MAX_H {
            return Err(top(format!(
                "resolution {}x{} out of range (1x1 to {MAX_W}x{MAX_H})",
                opt.width, opt.height
            )));
        }
        let mut mem = GpuMemory::default();
        let mut surfaces = Vec::new();
        let mut names = BTreeMap::new();
        let mut depth_extra = BTreeMap::new();
        let (w, h) = (opt.width, opt.height);
        // Command buffer, constants and shader code live in GPU memory too.
        let cmds = mem.alloc(64 * 4096);
        let consts = mem.alloc(64 * 4096);
        let code = mem.alloc(64 * 64);
        let bb = mem.surface("backbuffer", Format::Rgba8, Usage::Display, w, h, 1);
        names.insert("backbuffer".to_string(), 0);
        surfaces.push(bb);
        for t in &desc.textures {
            let (tw, th, px) = match t.kind {
                TextureKind::Png | TextureKind::Jpeg => {
                    let p = t.path.as_ref().ok_or_else(|| {
                        top(format!(
                            "texture `{}`: kind {:?} needs a path",
                            t.name, t.kind
                        ))
                    })?;
                    let path = src.path(p.get_ref());
                    let loaded = if t.kind == TextureKind::Png {
                        load_png(&path)
                    } else {
                        load_jpeg(&path)
                    };
                    loaded.map_err(|e| src.err(p.span(), format!("texture `{}`: {e}", t.name)))?
                }
                _ => {
                    let s = t.size.clamp(1, 4096);
                    (s, s, procedural(t, s))
                }
            };
            if tw == 0 || th == 0 || tw > 16384 || th > 16384 || px.len() != (tw * th) as usize {
                return Err(top(format!(
                    "texture `{}`: unusable image size {tw}x{th} (1x1 to 16384x16384)",
                    t.name
                )));
            }
            let levels = if t.mipmaps { 0 } else { 1 };
            let mut s = mem.surface(&t.name, Format::Rgba8, Usage::Texture, tw, th, levels);
            s.load0(&px);
            s.build_mips();
            names.insert(t.name.clone(), surfaces.len());
            surfaces.push(s);
        }
        for t in &desc.targets {
            let [tw, th] = t.size.unwrap_or([
                ((w as f32 * t.scale).round() as u32).max(1),
                ((h as f32 * t.scale).round() as u32).max(1),
            ]);
            let (tw, th) = (tw.clamp(1, 4096), th.clamp(1, 4096));
            let levels = if t.mipmaps { 0 } else { 1 };
            let (fmt, usage) = match t.format {
                TargetFormat::Rgba8 => (Format::Rgba8, Usage::Target),
                TargetFormat::Rgba16f => (Format::Rgba16f, Usage::Target),
                TargetFormat::R32f => (Format::R32f, Usage::Target),
                TargetFormat::Depth => (Format::Depth32, Usage::Depth),
            };
            let s = mem.surface(&t.name, fmt, usage, tw, th, levels);
            let id = surfaces.len();
            names.insert(t.name.clone(), id);
            surfaces.push(s);
            if usage == Usage::Depth {
                let st = mem.surface(
                    &format!("{}.stencil", t.name),
                    Format::Stencil8,
                    Usage::Stencil,
                    tw,
                    th,
                    1,
                );
                surfaces.push(st);
                depth_extra.insert(
                    id,
                    DepthExtra {
                        stencil: id + 1,
                        hiz: mem.hiz(tw, th),
                    },
                );
            }
        }
        let mut mesh_names = BTreeMap::new();
        let mut meshes = Vec::new();
        for m in &desc.meshes {
            let seg = m.segments.clamp(1, 1024);
            let data = match m.kind {
                MeshKind::Plane => MeshData::plane(m.size[0], m.size[2], seg, m.uv_scale),
                MeshKind::Terrain => MeshData::terrain(
                    m.size[0],
                    m.size[2],
                    seg,
                    m.height,
                    m.uv_scale,
                    m.seed ^ opt.seed,
                ),
                MeshKind::Sphere => MeshData::sphere(seg, m.uv_scale),
                MeshKind::Box => MeshData::cube(m.size, m.uv_scale),
                MeshKind::Particles => {
                    MeshData::particles(m.count.min(1 << 16), m.size, m.seed ^ opt.seed)
                }
                MeshKind::Foliage => MeshData::foliage(
                    m.count.min(1 << 16),
                    m.size,
                    m.height,
                    m.uv_scale,
                    m.seed ^ opt.seed,
                ),
                MeshKind::Rect => MeshData::rect(),
                MeshKind::Fullscreen => MeshData::fullscreen(),
                MeshKind::Obj => {
                    let p = m
                        .path
                        .as_ref()
                        .ok_or_else(|| top(format!("mesh `{}`: kind obj needs a path", m.name)))?;
                    let path = src.path(p.get_ref());
                    let text = std::fs::read_to_string(&path).map_err(|e| {
                        src.err(
                            p.span(),
                            format!("mesh `{}`: {}: {e}", m.name, path.display()),
                        )
                    })?;
                    MeshData::obj(&text, &path.display().to_string())?
                }
            };
            let vb = mem.alloc(data.verts.len() as u64 * VERTEX_STRIDE);
            let index_bytes = index_bytes(data.verts.len());
            let ib = mem.alloc(data.idx.len() as u64 * index_bytes);
            mesh_names.insert(m.name.clone(), meshes.len());
            meshes.push(GpuMesh {
                data,
                vb,
                ib,
                index_bytes,
            });
        }
        let cam_names: BTreeMap<String, usize> = desc
            .cameras
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.clone(), i))
            .collect();
        let mut cams = Vec::new();
        for c in &desc.cameras {
            let mirror = match (&c.kind, &c.mirror_of) {
                (CameraKind::Mirror, Some(m)) => {
                    let i = lookup(src, &cam_names, "camera", m)?;
                    if desc.cameras[i].kind == CameraKind::Mirror {
                        return Err(src.err(m.span(), "a mirror camera cannot mirror a mirror"));
                    }
                    Some(i)
                }
                (CameraKind::Mirror, None) => {
                    return Err(top(format!(
                        "camera `{}`: kind mirror needs mirror_of",
                        c.name
                    )))
                }
                _ => None,
            };
            cams.push(Cam {
                desc: c.clone(),
                mirror,
            });
        }
        let mut passes = Vec::new();
        for p in &desc.passes {
            let color = p
                .color
                .iter()
                .map(|n| lookup(src, &names, "render target", n))
                .collect::<Result<Vec<_>, _>>()?;
            if color.len() > MAX_RT {
                return Err(top(format!(
                    "pass `{}`: at most {MAX_RT} colour targets",
                    p.name
                )));
            }
            for (n, &c) in p.color.iter().zip(&color) {
                if !matches!(surfaces[c].usage, Usage::Target | Usage::Display) {
                    return Err(src.err(
                        n.span(),
                        format!("`{}` is not a colour target", n.get_ref()),
                    ));
                }
            }
            let depth = match &p.depth {
                Some(n) => {
                    let d = lookup(src, &names, "depth target", n)?;
                    if surfaces[d].usage != Usage::Depth {
                        return Err(
                            src.err(n.span(), format!("`{}` is not a depth target", n.get_ref()))
                        );
                    }
                    Some(d)
                }
                None => None,
            };
            if let Some(&c0) = color.first() {
                for &s in color.iter().chain(depth.iter()) {
                    if surfaces[s].width() != surfaces[c0].width()
                        || surfaces[s].height() != surfaces[c0].height()
                    {
                        return Err(top(format!(
                            "pass `{}`: targets `{}` and `{}` differ in size",
                            p.name, surfaces[c0].name, surfaces[s].name
                        )));
                    }
                }
            }
            let camera = p
                .camera
                .as_ref()
                .map(|n| lookup(src, &cam_names, "camera", n))
                .transpose()?;
            let src_s = p
                .src
                .as_ref()
                .map(|n| lookup(src, &names, "surface", n))
                .transpose()?;
            let dst_s = p
                .dst
                .as_ref()
                .map(|n| lookup(src, &names, "surface", n))
                .transpose()?;
            match p.kind {
                PassKind::Draw => {
                    if color.is_empty() && depth.is_none() {
                        return Err(top(format!(
                            "pass `{}` has no colour or depth target",
                            p.name
                        )));
                    }
                    if !p.draws.is_empty() && camera.is_none() {
                        return Err(top(format!("pass `{}` needs a camera", p.name)));
                    }
                }
                PassKind::Blit if src_s.is_none() || dst_s.is_none() => {
                    return Err(top(format!("blit pass `{}` needs src and dst", p.name)))
                }
                PassKind::Mipgen if src_s.is_none() => {
                    return Err(top(format!("mipgen pass `{}` needs src", p.name)))
                }
                _ => {}
            }
            let mut draws = Vec::new();
            for d in &p.draws {
                let mesh = lookup(src, &mesh_names, "mesh", &d.mesh)?;
                let textures = d
                    .textures
                    .iter()
                    .map(|n| lookup(src, &names, "texture", n))
                    .collect::<Result<Vec<_>, _>>()?;
                if textures.len() > MAX_TEX {
                    return Err(src.err(
                        d.mesh.span(),
                        format!("at most {MAX_TEX} textures per draw"),
                    ));
                }
                for (n, t) in d.textures.iter().zip(&textures) {
                    if color.contains(t) || depth == Some(*t) {
                        return Err(src.err(
                            n.span(),
                            format!("`{}` is sampled while bound as a target", n.get_ref()),
                        ));
                    }
                }
                let light = d
                    .light
                    .as_ref()
                    .map(|n| lookup(src, &cam_names, "camera", n))
                    .transpose()?;
                let view = d
                    .view
                    .as_ref()
                    .map(|n| lookup(src, &cam_names, "camera", n))
                    .transpose()?;
                if d.stencil.is_some() && depth.is_none() {
                    return Err(src.err(d.mesh.span(), "stencil needs a depth target in the pass"));
                }
                draws.push(Draw {
                    desc: d.clone(),
                    mesh,
                    textures,
                    light,
                    view,
                });
            }
            passes.push(Pass {
                kind: p.kind,
                color,
                depth,
                camera,
                clear_color: p.clear_color,
                clear_depth: p.clear_depth,
                clear_stencil: p.clear_stencil,
                src: src_s,
                dst: dst_s,
                draws,
            });
        }
        Ok(Renderer {
            name: desc.name.clone(),
            frames: opt.frames.unwrap_or(desc.frames).max(1),
            width: w,
            height: h,
            mem,
            surfaces,
            depth_extra,
            meshes,
            cams,
            passes,
            backbuffer: 0,
            consts,
            code,
            cmds,
            frame: 0,
        })
    }

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

    fn camera(&self, i: usize, frame: u32, aspect: f32) -> View {
        let c = &self.cams[i];
        let d = &c.desc;
        if let Some(m) = c.mirror {
            let base = self.camera(m, frame, aspect);
            let view = base.view.mul(&M4::mirror_y(d.mirror_y));
            let proj = base.vp.mul(&base.view.inverse());
            return View {
                view,
                vp: proj.mul(&view),
                flip: !base.flip,
            };
        }
        if d.kind == CameraKind::Screen {
            return View {
                view: M4::IDENTITY,
                vp: M4::IDENTITY,
                flip: false,
            };
        }
        let f = frame as f32;
        let tgt = V3::from(d.target) + V3::from(d.motion) * f;
        let rel = V3::from(d.position) - V3::from(d.target);
        let rel = M4::rotate_y((d.orbit * f).to_radians()).dir(rel);
        let eye = tgt + rel;
        let view = M4::look_at(eye, tgt, V3(0.0, 1.0, 0.0));
        let proj = match d.kind {
            CameraKind::Ortho => M4::ortho(d.extent, d.near, d.far),
            _ => M4::perspective(d.fov, aspect, d.near, d.far),
        };
        View {
            view,
            vp: proj.mul(&view),
            flip: false,
        }
    }

    /// Light direction (towards the light) of a camera.
    fn light_dir(&self, i: usize, frame: u32) -> V3 {
        let d = &self.cams[i].desc;
        let rel = V3::from(d.position) - V3::from(d.target);
        M4::rotate_y((d.orbit * frame as f32).to_radians())
            .dir(rel)
            .norm()
    }

    /// Render the next frame, emitting its accesses.
    pub fn render_frame(&mut self, em: &mut Emitter) {
        let frame = self.frame;
        for p in 0..self.passes.len() {
            let tag = Tag {
                pass: p as u8,
                draw: 0,
                frame: frame as u16,
            };
            match self.passes[p].kind {
                PassKind::Draw => self.draw_pass(em, p, tag),
                PassKind::Blit => {
                    let (s, d) = (
                        self.passes[p].src.unwrap_or(0),
                        self.passes[p].dst.unwrap_or(0),
                    );
                    self.blit(em, s, 0, d, 0, tag);
                }
                PassKind::Mipgen => {
                    let s = self.passes[p].src.unwrap_or(0);
                    for l in 1..self.surfaces[s].mips.len() {
                        self.blit(em, s, l - 1, s, l, tag);
                    }
                }
            }
        }
        em.begin(WorkKind::FrameEnd { frame }, 0, 0);
        self.frame += 1;
    }

    /// Render every frame.
    pub fn render_all(&mut self, em: &mut Emitter, mut after_frame: impl FnMut(&Renderer, u32)) {
        for f in 0..self.frames {
            self.render_frame(em);
            after_frame(self, f);
        }
    }

    fn mark_written(&mut self, s: usize) {
        self.surfaces[s].written_in = Some(self.frame);
    }

    /// Fast-clear resolve: write back still-cleared lines before a surface is sampled.
    fn resolve(&mut self, em: &mut Emitter, s: usize, tag: Tag) {
        if !self.surfaces[s].cleared.iter().any(|&c| c) {
            return;
        }
        let base = self.surfaces[s].base;
        for i in 0..self.surfaces[s].cleared.len() {
            if std::mem::take(&mut self.surfaces[s].cleared[i]) {
                em.begin(WorkKind::Blit, 0, 0);
                em.line(
                    Stream::Blitter,
                    Op::Write,
                    base + i as u64 * LINE,
                    0,
                    tag.pc(Stage::Clear, 0),
                    NO_QUAD,
                );
                em.tick(1);
            }
        }
        self.mark_written(s);
    }

    /// Blitter copy of `src` level `sl` into `dst` level `dl` with bilinear scaling: per
    /// destination line, reads of the source lines it covers, then the write.
    fn blit(&mut self, em: &mut Emitter, src: usize, sl: usize, dst: usize, dl: usize, tag: Tag) {
        // The copy reads what earlier passes (or the previous mip level's copy) wrote.
        em.begin(WorkKind::Sync, 0, 0);
        self.resolve(em, src, tag);
        let (dw, dh, t) = {
            let d = &self.surfaces[dst];
            (d.mips[dl].width, d.mips[dl].height, d.format)
        };
        let (tw, th) = (t.tile_w(), t.tile_h());
        let mut lines = LineSet::default();
        let mut vals = Vec::new();
        for ty in (0..dh).step_by(th as usize) {
            for tx in (0..dw).step_by(tw as usize) {
                lines.clear();
                vals.clear();
                let s = &self.surfaces[src];
                for y in ty..(ty + th).min(dh) {
                    for x in tx..(tx + tw).min(dw) {
                        let uv = [(x as f32 + 0.5) / dw as f32, (y as f32 + 0.5) / dh as f32];
                        let c = s.bilinear(sl, uv, Wrap::Clamp, &mut lines);
                        vals.push((x, y, c));
                    }
                }
                let pc = tag.pc(Stage::Blit, dl as u16);
                em.begin(WorkKind::Blit, 0, 0);
                for &a in &lines.lines {
                    em.line(Stream::Blitter, Op::Read, a, 0, pc, NO_QUAD);
                }
                let d = &mut self.surfaces[dst];
                let f = d.format;
                for &(x, y, c) in &vals {
                    d.set(dl, x, y, f.encode(c));
                }
                em.line(
                    Stream::Blitter,
                    Op::Write,
                    d.line_addr(dl, tx, ty),
                    0,
                    pc,
                    NO_QUAD,
                );
                if dl == 0 {
                    let li = d.line_index(0, tx, ty) as usize;
                    d.cleared[li] = false;
                }
                em.tick(1);
            }
        }
        self.mark_written(dst);
    }

    fn clear(&mut self, em: &mut Emitter, p: usize, tag: Tag) {
        let pass = &self.passes[p];
        let (cc, cd, cs) = (pass.clear_color, pass.clear_depth, pass.clear_stencil);
        let color = pass.color.clone();
        let depth = pass.depth;
        if let Some(c) = cc {
            for &s in &color {
                let surf = &mut self.surfaces[s];
                let v = surf.format.encode(c);
                surf.fill0(v);
                surf.cleared.fill(true);
                surf.clear_value = v;
            }
        }
        if let Some(d) = depth {
            if let Some(z) = cd {
                let surf = &mut self.surfaces[d];
                surf.fill0(z.to_bits() as u64);
                surf.cleared.fill(true);
                let ex = self
                    .depth_extra
                    .get_mut(&d)
                    .expect("depth targets have HiZ");
                ex.hiz.min.fill(z);
                ex.hiz.max.fill(z);
                let pc = tag.pc(Stage::Clear, 0);
                for a in ex.hiz.all_lines() {
                    em.begin(WorkKind::Blit, 0, 0);
                    em.line(Stream::HiZ, Op::Write, a, 0, pc, NO_QUAD);
                }
            }
            if let Some(s) = cs {
                let st = self.depth_extra[&d].stencil;
                let surf = &mut self.surfaces[st];
                surf.fill0(s as u64);
                surf.cleared.fill(true);
            }
        }
    }

    fn draw_pass(&mut self, em: &mut Emitter, p: usize, tag: Tag) {
        em.begin(WorkKind::Sync, 0, 0);
        self.clear(em, p, tag);
        let pass = &self.passes[p];
        let (tw, th) = match (pass.color.first(), pass.depth) {
            (Some(&c), _) => (self.surfaces[c].width(), self.surfaces[c].height()),
            (None, Some(d)) => (self.surfaces[d].width(), self.surfaces[d].height()),
            _ => (self.width, self.height),
        };
        let Some(cam) = pass.camera else { return };
        let view = self.camera(cam, self.frame, tw as f32 / th as f32);
        for di in 0..self.passes[p].draws.len() {
            let tag = Tag {
                draw: di as u16,
                ..tag
            };
            let texs = self.passes[p].draws[di].textures.clone();
            for t in texs {
                self.resolve(em, t, tag);
            }
            self.draw(em, p, di, view, tw, th, tag);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn draw(
        &mut self,
        em: &mut Emitter,
        p: usize,
        di: usize,
        view: View,
        tw: u32,
        th: u32,
        tag: Tag,
    ) {
        let frame = self.frame;
        // Move the bound targets out so shading can read the texture surfaces meanwhile.
        let pass = &self.passes[p];
        let color_ids = pass.color.clone();
        let depth_id = pass.depth;
        let draw = &pass.draws[di];
        let d = draw.desc.clone();
        let textures = draw.textures.clone();
        let mesh_id = draw.mesh;
        let light_dir = draw
            .light
            .map(|l| self.light_dir(l, frame))
            .unwrap_or(V3(0.4, 1.0, 0.3).norm());
        let aspect = tw as f32 / th as f32;
        let light_vp = draw.light.map(|l| {
            // The shadow map's own aspect: use its size if bound in slot 1 or 3.
            self.camera(l, frame, 1.0).vp
        });
        let inv_view_vp = draw
            .view
            .map(|v| self.camera(v, frame, aspect).vp.inverse());
        let filter = match d.filter {
            FilterMode::Point => Filter::Point,
            FilterMode::Bilinear => Filter::Bilinear,
            FilterMode::Trilinear => Filter::Trilinear,
        };
        let uni = Uniforms {
            tint: d.tint,
            light_dir,
            light_vp,
            inv_view_vp,
            filter,
        };
        // Command and constants: one command line and two constant lines per draw. A draw
        // starts when the previous one is done (drp §2).
        em.begin(WorkKind::Sync, 0, 0);
        em.begin(WorkKind::Command, 0, 0);
        let draw_no = (p * 64 + di) as u64;
        em.line(
            Stream::Other,
            Op::Read,
            self.cmds + draw_no * LINE,
            0,
            tag.pc(Stage::Command, 0),
            NO_QUAD,
        );
        for k in 0..2 {
            em.line(
                Stream::ShaderData,
                Op::Read,
                self.consts + (draw_no * 2 + k) * LINE,
                0,
                tag.pc(Stage::Command, 1),
                NO_QUAD,
            );
        }
        let mut targets: Vec<Surface> = color_ids
            .iter()
            .map(|&i| std::mem::replace(&mut self.surfaces[i], empty_surface()))
            .collect();
        let mut depth = depth_id.map(|i| std::mem::replace(&mut self.surfaces[i], empty_surface()));
        let stencil_id = depth_id.map(|i| self.depth_extra[&i].stencil);
        let mut stencil =
            stencil_id.map(|i| std::mem::replace(&mut self.surfaces[i], empty_surface()));
        let mut hiz = depth_id.and_then(|i| self.depth_extra.remove(&i).map(|e| e.hiz));
        let streams: Vec<Stream> = textures
            .iter()
            .map(|&t| {
                if self.surfaces[t].written_in == Some(frame) {
                    Stream::DynamicTexture
                } else {
                    Stream::StaticTexture
                }
            })
            .collect();
        let cull = match (d.cull, view.flip) {
            (CullMode::None, _) => Cull::None,
            (CullMode::Back, false) | (CullMode::Front, true) => Cull::Back,
            _ => Cull::Front,
        };
        let mut ctx = RasterCtx {
            em,
            tag,
            shader: d.shader,
            uni: &uni,
            surfaces: &self.surfaces,
            textures: &textures,
            tex_streams: &streams,
            targets: &mut targets,
            display: color_ids.iter().map(|&i| i == self.backbuffer).collect(),
            depth: depth.as_mut(),
            stencil: stencil.as_mut(),
            hiz: hiz.as_mut(),
            desc: &d,
            cull,
            code: self.code + shader_slot(d.shader) * 8 * LINE,
            tw,
            th,
            wrote: false,
            wrote_depth: false,
            ps_cores: 0,
            vs_cores: 0,
            display_pending: Vec::new(),
        };
        let mesh = &self.meshes[mesh_id];
        let (cam_right, cam_up) = {
            let v = &view.view.0;
            (V3(v[0][0], v[1][0], v[2][0]), V3(v[0][1], v[1][1], v[2][1]))
        };
        for ix in 0..d.instances[0].max(1) {
            for iz in 0..d.instances[1].max(1) {
                let off = V3(
                    ix as f32 * d.spacing[0]
                        - (d.instances[0].max(1) - 1) as f32 * d.spacing[0] * 0.5,
                    0.0,
                    iz as f32 * d.spacing[1]
                        - (d.instances[1].max(1) - 1) as f32 * d.spacing[1] * 0.5,
                );
                let model = M4::translate(V3::from(d.translate) + off)
                    .mul(&M4::rotate_y(
                        (d.rotate_y + d.spin * frame as f32).to_radians(),
                    ))
                    .mul(&M4::scale(V3::from(d.scale)));
                let particle = shader::billboard(d.shader);
                let vs = |v: &Vertex| -> ClipVert {
                    let (wp, n) = if particle {
                        let c = V3::from(d.translate) + off + V3::from(v.p);
                        (
                            c + cam_right * (v.n[0] * d.scale[0]) + cam_up * (v.n[1] * d.scale[0]),
                            V3(0.0, 0.0, 1.0),
                        )
                    } else {
                        let w = model.point(V3::from(v.p));
                        (V3(w[0], w[1], w[2]), model.dir(V3::from(v.n)).norm())
                    };
                    ClipVert {
                        pos: view.vp.point(wp),
                        attr: [wp.0, wp.1, wp.2, n.0, n.1, n.2, v.uv[0], v.uv[1]],
                    }
                };
                ctx.geometry(mesh, &vs);
            }
        }
        let (wrote, wrote_depth) = (ctx.wrote, ctx.wrote_depth);
        drop(ctx);
        // Put the targets back.
        for (&i, s) in color_ids.iter().zip(targets) {
            self.surfaces[i] = s;
        }
        if let (Some(i), Some(s)) = (depth_id, depth) {
            self.surfaces[i] = s;
            if let (Some(si), Some(st), Some(h)) = (stencil_id, stencil, hiz) {
                self.surfaces[si] = st;
                self.depth_extra.insert(
                    i,
                    DepthExtra {
                        stencil: si,
                        hiz: h,
                    },
                );
            }
        }
        if wrote {
            for &i in &color_ids {
                self.mark_written(i);
            }
        }
        if let (true, Some(i)) = (wrote_depth, depth_id) {
            self.mark_written(i);
        }
    }
}

fn empty_surface() -> Surface {
    Surface {
        name: String::new(),
        format: Format::Rgba8,
        usage: Usage::Texture,
        base: 0,
        mips: Vec::new(),
        written_in: None,
        cleared: Vec::new(),
        clear_value: 0,
    }
}

fn shader_slot(k: ShaderKind) -> u64 {
    k as u64
}

/// (min, max) depth of the 8x4 HiZ block at pixel (x0, y0), clipped to the viewport
/// ((+inf, -inf) when the block has no pixel inside it).
fn block_range(ds: &Surface, x0: u32, y0: u32, tw: u32, th: u32) -> (f32, f32) {
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for y in y0..(y0 + HiZ::BLOCK_H).min(th) {
        for x in x0..(x0 + HiZ::BLOCK_W).min(tw) {
            let v = f32::from_bits(ds.texel(0, x, y) as u32);
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    (lo, hi)
}

/// A vertex in clip space with its attributes.
#[derive(Clone, Copy, Debug)]
pub struct ClipVert {
    pub pos: [f32; 4],
    pub attr: [f32; NATTR],
}

fn lerp_clip(a: &ClipVert, b: &ClipVert, t: f32) -> ClipVert {
    ClipVert {
        pos: std::array::from_fn(|k| a.pos[k] + (b.pos[k] - a.pos[k]) * t),
        attr: std::array::from_fn(|k| a.attr[k] + (b.attr[k] - a.attr[k]) * t),
    }
}

/// Clip a triangle against the near plane z >= 0 (Direct3D clip space); the other planes are
/// handled by the viewport scissor in rasterization (guard band).
pub fn clip_near(t: [ClipVert; 3]) -> Vec<ClipVert> {
    let mut out = Vec::with_capacity(4);
    for i in 0..3 {
        let (a, b) = (&t[i], &t[(i + 1) % 3]);
        let (da, db) = (a.pos[2], b.pos[2]);
        if da >= 0.0 {
            out.push(*a);
        }
        if (da >= 0.0) != (db >= 0.0) {
            out.push(lerp_clip(a, b, da / (da - db)));
        }
    }
    out
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

/// Entries of the post-transform vertex cache (FIFO).
const VERTEX_FIFO: usize = 32;

impl RasterCtx<'_, '_> {
    fn core(tx: u32, ty: u32) -> u16 {
        ((tx % 8) + 8 * (ty % 8)) as u16
    }
    fn rop(tx: u32, ty: u32) -> u16 {
        ((tx % 4) + 4 * (ty % 4)) as u16
    }

    /// Input assembly and vertex shading of one instance of a mesh, then rasterization.
    fn geometry(&mut self, mesh: &GpuMesh, vs: &dyn Fn(&Vertex) -> ClipVert) {
        let mut fifo: std::collections::VecDeque<u32> =
            std::collections::VecDeque::with_capacity(VERTEX_FIFO);
        let mut shaded: Vec<Option<ClipVert>> = vec![None; mesh.data.verts.len()];
        let mut last_index_line = u64::MAX;
        let mut batch = 0u64;
        let tag = self.tag;
        for (ti, tri) in mesh.data.idx.chunks_exact(3).enumerate() {
            self.em.begin(
                WorkKind::Triangle {
                    vertices: 0,
                    setup: false,
                },
                0,
                0,
            );
            let mut cv = [ClipVert {
                pos: [0.0; 4],
                attr: [0.0; NATTR],
            }; 3];
            for (k, &vi) in tri.iter().enumerate() {
                let ia = mesh.ib + (ti * 3 + k) as u64 * mesh.index_bytes;
                let il = ia & !(LINE - 1);
                if il != last_index_line {
                    self.em.line(
                        Stream::VertexIndex,
                        Op::Read,
                        il,
                        0,
                        tag.pc(Stage::IndexFetch, 0),
                        NO_QUAD,
                    );
                    last_index_line = il;
                }
                if !fifo.contains(&vi) {
                    let va = mesh.vb + vi as u64 * VERTEX_STRIDE;
                    self.em.line(
                        Stream::Vertex,
                        Op::Read,
                        va & !(LINE - 1),
                        0,
                        tag.pc(Stage::VertexFetch, 0),
                        NO_QUAD,
                    );
                    if fifo.len() == VERTEX_FIFO {
                        if let Some(old) = fifo.pop_front() {
                            shaded[old as usize] = None;
                        }
                    }
                    fifo.push_back(vi);
                    // One vertex-shader dispatch (instruction fetch) per 32 vertices.
                    let core = ((batch / 32) % 64) as u16;
                    if batch.is_multiple_of(32) && self.vs_cores & (1 << core) == 0 {
                        self.vs_cores |= 1 << core;
                        for l in 0..2 {
                            self.em.line(
                                Stream::ShaderInstr,
                                Op::Read,
                                self.code + (6 + l) * LINE,
                                core,
                                tag.pc(Stage::VertexShader, 0),
                                NO_QUAD,
                            );
                        }
                    }
                    if let Some(item) = self.em.item() {
                        if let WorkKind::Triangle { vertices, .. } = &mut item.kind {
                            *vertices += 1;
                        }
                        item.core = core;
                        item.instructions = shader::VERTEX_INSTRUCTIONS;
                    }
                    batch += 1;
                    self.em.tick(1);
                    let v = vs(&mesh.data.verts[vi as usize]);
                    shaded[vi as usize] = Some(v);
                }
                cv[k] = match shaded.get(vi as usize).copied().flatten() {
                    Some(v) => v,
                    None => vs(&mesh.data.verts[vi as usize]),
                };
            }
            let poly = clip_near(cv);
            for k in 1..poly.len().saturating_sub(1) {
                let sv = [poly[0], poly[k], poly[k + 1]].map(|c| self.viewport(&c));
                if let Some(t) = Tri::setup(sv, self.cull, self.tw, self.th) {
                    if k > 1 {
                        // The second half of a clipped triangle follows the first's tiles.
                        self.em.begin(
                            WorkKind::Triangle {
                                vertices: 0,
                                setup: true,
                            },
                            0,
                            0,
                        );
                    } else if let Some(WorkKind::Triangle { setup, .. }) =
                        self.em.item().map(|i| &mut i.kind)
                    {
                        *setup = true;
                    }
                    self.em.stats.triangles += 1;
                    self.raster(&t);
                }
            }
        }
    }

    fn viewport(&self, c: &ClipVert) -> ScreenVert {
        let w = if c.pos[3].abs() > 1e-12 {
            c.pos[3]
        } else {
            1e-12
        };
        let iw = 1.0 / w;
        ScreenVert {
            x: (c.pos[0] * iw * 0.5 + 0.5) * self.tw as f32,
            y: (0.5 - c.pos[1] * iw * 0.5) * self.th as f32,
            z: (c.pos[2] * iw).clamp(0.0, 1.0),
            inv_w: iw,
            attr: c.attr,
        }
    }

    /// Rasterize one triangle tile by tile, quad by quad.
    fn raster(&mut self, t: &Tri) {
        let d = self.desc;
        let late = shader::needs_late_z(self.shader);
        let depth_on = d.depth_test && self.depth.is_some();
        for ty in t.y0 / 8..t.y1.div_ceil(8) {
            for tx in t.x0 / 8..t.x1.div_ceil(8) {
                let mut masks = [0u8; 16];
                let mut any = false;
                for (q, m) in masks.iter_mut().enumerate() {
                    let (qx, qy) = (tx * 8 + (q as u32 % 4) * 2, ty * 8 + (q as u32 / 4) * 2);
                    *m = t.quad_mask(qx, qy, self.tw, self.th);
                    any |= *m != 0;
                }
                if !any {
                    continue;
                }
                self.tile(t, tx, ty, &masks, depth_on, late);
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn tile(&mut self, t: &Tri, tx: u32, ty: u32, masks: &[u8; 16], depth_on: bool, late: bool) {
        let tag = self.tag;
        let d = self.desc;
        let core = Self::core(tx, ty);
        let rop = Self::rop(tx, ty);
        let tile_warp = (ty * 4) << 16 | (tx * 4);
        self.em.begin(WorkKind::Tile, core, rop);
        // HiZ test per 8x4 block (the two halves of the tile share one HiZ line): a block is
        // rejected when the triangle's nearest depth is behind its farthest, and accepted
        // without depth reads when the triangle's farthest depth is in front of its nearest.
        let mut masks = *masks;
        let mut accept_all = [false; 2];
        if let (true, Some(h)) = (depth_on, self.hiz.as_deref()) {
            self.em.line(
                Stream::HiZ,
                Op::Read,
                h.line_addr(tx, ty),
                rop,
                tag.pc(Stage::HiZ, 0),
                tile_warp,
            );
            for half in 0..2 {
                let b = h.block(tx, ty, half);
                if t.zmin >= h.max[b] {
                    masks[half as usize * 8..half as usize * 8 + 8].fill(0);
                }
                accept_all[half as usize] = t.zmax < h.min[b] && !late;
            }
            if masks.iter().all(|&m| m == 0) {
                self.em.stats.hiz_rejected_tiles += 1;
                self.em.tick(1);
                return;
            }
        }
        // Pixel shader dispatch: the core fetches the program the first time it runs it in
        // this draw (its instruction cache keeps it afterwards).
        let first = self.ps_cores & (1 << core) == 0;
        self.ps_cores |= 1 << core;
        for l in 0..if first {
            shader::code_lines(self.shader).min(6)
        } else {
            0
        } {
            self.em.line(
                Stream::ShaderInstr,
                Op::Read,
                self.code + l * LINE,
                core,
                tag.pc(Stage::PixelShader, 0),
                tile_warp,
            );
        }
        // Stencil: one line per 8x8 tile.
        let st = d.stencil.clone();
        if let (Some(_), Some(s)) = (&st, self.stencil.as_deref()) {
            let li = s.line_index(0, tx * 8, ty * 8) as usize;
            if !s.cleared[li] {
                self.em.line(
                    Stream::Stencil,
                    Op::Read,
                    s.line_addr(0, tx * 8, ty * 8),
                    rop,
                    tag.pc(Stage::Stencil, 0),
                    tile_warp,
                );
            }
        }
        let mut depth_dirty = false;
        let mut stencil_dirty = false;
        let mut lines: [LineSet; MAX_TEX] = Default::default();
        for (q, &m0) in masks.iter().enumerate() {
            if m0 == 0 {
                continue;
            }
            let (qx, qy) = (tx * 8 + (q as u32 % 4) * 2, ty * 8 + (q as u32 / 4) * 2);
            let warp = (qy / 2) << 16 | (qx / 2);
            let px: [(u32, u32); 4] =
                std::array::from_fn(|i| (qx + (i as u32 & 1), qy + (i as u32 >> 1)));
            let (vw, vh) = (self.tw, self.th);
            let inside = move |x: u32, y: u32| x < vw && y < vh;
            self.em.stats.quads += 1;
            self.em.tick(1);
            self.em.begin(
                WorkKind::Quad {
                    shaded: false,
                    late_z: late && depth_on,
                    texels: [0; 2],
                },
                core,
                rop,
            );
            let mut mask = m0;
            let z: [f32; 4] = std::array::from_fn(|i| t.depth(px[i].0, px[i].1).clamp(0.0, 1.0));
            // Stencil test.
            if let (Some(sd), Some(s)) = (&st, self.stencil.as_deref()) {
                for i in 0..4 {
                    if mask & (1 << i) != 0 {
                        let v = s.texel(0, px[i].0, px[i].1) as u8;
                        let ok = match sd.func {
                            StencilFunc::Always => true,
                            StencilFunc::Equal => v == sd.reference,
                            StencilFunc::NotEqual => v != sd.reference,
                        };
                        if !ok {
                            mask &= !(1 << i);
                        }
                    }
                }
            }
            // Early depth.
            if depth_on && !late && mask != 0 {
                mask = self.depth_test(
                    mask,
                    &px,
                    &z,
                    accept_all[q / 8],
                    rop,
                    tag.pc(Stage::EarlyDepth, 0),
                    warp,
                    &mut depth_dirty,
                );
            }
            if mask == 0 {
                continue;
            }
            // Shade (all four pixels run for derivatives; only covered ones sample).
            let qin = QuadIn {
                attr: std::array::from_fn(|i| t.attrs(px[i].0, px[i].1)),
                screen: std::array::from_fn(|i| {
                    [
                        (px[i].0 as f32 + 0.5) / self.tw as f32,
                        (px[i].1 as f32 + 0.5) / self.th as f32,
                    ]
                }),
                z,
            };
            for l in lines.iter_mut() {
                l.clear();
            }
            let out = {
                let mut env = Env {
                    surfaces: self.surfaces,
                    slots: self.textures,
                    lines: &mut lines,
                    live: mask,
                    filter: self.uni.filter,
                    texels: [0; MAX_TEX],
                };
                let out = shader::shade(self.shader, &qin, self.uni, &mut env);
                let instructions = shader::instructions(self.shader);
                if let Some(item) = self.em.item() {
                    item.instructions = instructions;
                    if let WorkKind::Quad { shaded, texels, .. } = &mut item.kind {
                        *shaded = true;
                        // Slot s samples on its core's sampler s mod 2 (see `sampler` below).
                        for (slot, &n) in env.texels.iter().enumerate() {
                            let t = &mut texels[slot & 1];
                            *t = t.saturating_add(n.min(u16::MAX as u32) as u16);
                        }
                    }
                }
                out
            };
            self.em.stats.pixels_shaded += mask.count_ones() as u64;
            for (slot, ls) in lines.iter().enumerate() {
                let sampler = core * 2 + (slot as u16 & 1);
                let stream = self
                    .tex_streams
                    .get(slot)
                    .copied()
                    .unwrap_or(Stream::StaticTexture);
                for &a in &ls.lines {
                    self.em.line(
                        stream,
                        Op::Read,
                        a,
                        sampler,
                        tag.pc(Stage::Texture, slot as u16),
                        warp,
                    );
                }
            }
            mask &= !out.kill;
            if depth_on && late && mask != 0 {
                let zz = out.depth.unwrap_or(z);
                mask = self.depth_test(
                    mask,
                    &px,
                    &zz,
                    false,
                    rop,
                    tag.pc(Stage::LateDepth, 0),
                    warp,
                    &mut depth_dirty,
                );
            }
            if mask == 0 {
                continue;
            }
            if let (Some(sd), Some(s)) = (&st, self.stencil.as_deref_mut()) {
                if let Some(wv) = sd.write {
                    for i in 0..4 {
                        if mask & (1 << i) != 0 {
                            s.set(0, px[i].0, px[i].1, wv as u64);
                        }
                    }
                    stencil_dirty = true;
                }
            }
            self.merge(mask, &px, &out.color, rop, warp, &inside);
        }
        self.em.begin(WorkKind::TileEnd, core, rop);
        for (addr, rop, pc, warp) in std::mem::take(&mut self.display_pending) {
            self.em
                .line(Stream::Display, Op::Write, addr, rop, pc, warp);
        }
        if stencil_dirty {
            if let Some(s) = self.stencil.as_deref_mut() {
                let li = s.line_index(0, tx * 8, ty * 8) as usize;
                s.cleared[li] = false;
                self.em.line(
                    Stream::Stencil,
                    Op::Write,
                    s.line_addr(0, tx * 8, ty * 8),
                    rop,
                    tag.pc(Stage::Stencil, 0),
                    tile_warp,
                );
            }
        }
        if depth_dirty {
            if let (Some(h), Some(ds)) = (self.hiz.as_deref_mut(), self.depth.as_deref()) {
                let mut changed = false;
                for half in 0..2 {
                    let (lo, hi) =
                        block_range(ds, tx * 8, ty * 8 + half * HiZ::BLOCK_H, self.tw, self.th);
                    let b = h.block(tx, ty, half);
                    // A block below the viewport's last row (height not a multiple of 8) has
                    // no pixels and keeps its clear value.
                    if lo <= hi && (lo != h.min[b] || hi != h.max[b]) {
                        h.min[b] = lo;
                        h.max[b] = hi;
                        changed = true;
                    }
                }
                if changed {
                    self.em.line(
                        Stream::HiZ,
                        Op::Write,
                        h.line_addr(tx, ty),
                        rop,
                        tag.pc(Stage::HiZ, 0),
                        tile_warp,
                    );
                }
            }
        }
    }

    /// Depth test (LESS) of a quad against the depth buffer; writes passing depths.
    #[allow(clippy::too_many_arguments)]
    fn depth_test(
        &mut self,
        mut mask: u8,
        px: &[(u32, u32); 4],
        z: &[f32; 4],
        accept_all: bool,
        rop: u16,
        pc: u64,
        warp: u32,
        dirty: &mut bool,
    ) -> u8 {
        let write = self.desc.depth_write;
        let Some(ds) = self.depth.as_deref_mut() else {
            return mask;
        };
        let (x0, y0) = px[0];
        let li = ds.line_index(0, x0, y0) as usize;
        let addr = ds.line_addr(0, x0, y0);
        if !accept_all && !ds.cleared[li] {
            self.em.line(Stream::Depth, Op::Read, addr, rop, pc, warp);
        }
        let mut wrote = false;
        for i in 0..4 {
            if mask & (1 << i) == 0 {
                continue;
            }
            let (x, y) = px[i];
            let stored = f32::from_bits(ds.texel(0, x, y) as u32);
            if z[i] < stored {
                if write {
                    ds.set(0, x, y, z[i].to_bits() as u64);
                    wrote = true;
                }
            } else {
                mask &= !(1 << i);
            }
        }
        if wrote {
            self.wrote_depth = true;
            ds.cleared[li] = false;
            self.em.line(Stream::Depth, Op::Write, addr, rop, pc, warp);
            *dirty = true;
        }
        mask
    }

    /// Output merger: blend and write each bound target.
    fn merge(
        &mut self,
        mask: u8,
        px: &[(u32, u32); 4],
        color: &[[[f32; 4]; 4]; MAX_RT],
        rop: u16,
        warp: u32,
        inside: &dyn Fn(u32, u32) -> bool,
    ) {
        let blend = self.desc.blend;
        let tag = self.tag;
        for (k, s) in self.targets.iter_mut().enumerate() {
            let (stream, stage) = if self.display[k] {
                (Stream::Display, Stage::Display)
            } else {
                (Stream::Color, Stage::Color)
            };
            let pc = tag.pc(stage, k as u16);
            let (x0, y0) = px[0];
            let li = s.line_index(0, x0, y0) as usize;
            let addr = s.line_addr(0, x0, y0);
            // The ROP holds a displayable line for the whole tile (see `display_pending`), so
            // blending reads it from memory once per tile, not once per quad.
            let held = self.display[k] && self.display_pending.iter().any(|p| p.0 == addr);
            if blend != BlendMode::Opaque && !s.cleared[li] && !held {
                self.em.line(stream, Op::Read, addr, rop, pc, warp);
            }
            let f = s.format;
            for i in 0..4 {
                let (x, y) = px[i];
                if mask & (1 << i) == 0 || !inside(x, y) {
                    continue;
                }
                let src = color[k][i];
                let out = match blend {
                    BlendMode::Opaque => src,
                    BlendMode::Alpha | BlendMode::Additive => {
                        let dst = f.decode(s.texel(0, x, y));
                        let a = src[3];
                        if blend == BlendMode::Alpha {
                            std::array::from_fn(|c| {
                                if c == 3 {
                                    a + dst[3] * (1.0 - a)
                                } else {
                                    src[c] * a + dst[c] * (1.0 - a)
                                }
                            })
                        } else {
                            std::array::from_fn(
                                |c| if c == 3 { dst[3] } else { dst[c] + src[c] * a },
                            )
                        }
                    }
                };
                s.set(0, x, y, f.encode(out));
            }
            s.cleared[li] = false;
            if self.display[k] {
                // The ROP combines display writes per line within a tile.
                if !self.display_pending.iter().any(|p| p.0 == addr) {
                    self.display_pending.push((addr, rop, pc, warp));
                }
            } else {
                self.em.line(stream, Op::Write, addr, rop, pc, warp);
            }
        }
        self.wrote = true;
    }
}
