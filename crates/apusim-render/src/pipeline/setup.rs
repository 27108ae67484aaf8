//! Building a [`Renderer`]: the scene's meshes, surfaces, cameras, passes and draws resolved
//! into GPU resources and checked against each other.

use super::{Cam, DepthExtra, Draw, GpuMesh, Options, Pass, Renderer, MAX_H, MAX_W};
use crate::scene::*;
use crate::shader::{MAX_RT, MAX_TEX};
use crate::surface::*;
use std::collections::BTreeMap;

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
        let code = mem.alloc(super::frame::SHADER_CODE_BYTES);
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
}
