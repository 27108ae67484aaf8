//! Running frames: each pass in order, the blitter's resolves and copies, fast clears, and
//! the set-up of every draw call before its triangles are rasterized.

use super::geometry::ClipVert;
use super::{DepthExtra, RasterCtx, Renderer, View};
use crate::emit::{Emitter, Stage, Tag, NO_QUAD};
use crate::math::{M4, V3};
use crate::raster::Cull;
use crate::scene::*;
use crate::shader::{self, Uniforms};
use crate::surface::*;
use apusim_trace::{Op, Stream, WorkKind};

impl Renderer {
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
            code: self.code + shader_code_offset(d.shader),
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

/// Cache lines of code each shader kind owns in the code region: up to 6 lines of pixel
/// shader (quad.rs) and the vertex shader in lines 6 and 7 (geometry.rs).
pub(super) const SHADER_SLOT_LINES: u64 = 8;

/// Bytes of the shader code region: a slot for every [`ShaderKind`], so no kind's code
/// spills into the allocation after the region.
pub(super) const SHADER_CODE_BYTES: u64 = ShaderKind::COUNT as u64 * SHADER_SLOT_LINES * LINE;

/// Index of kind `k`'s slot in the code region (below [`ShaderKind::COUNT`]).
fn shader_slot(k: ShaderKind) -> u64 {
    k as u64
}

/// Offset of kind `k`'s code from the start of the code region.
pub(super) fn shader_code_offset(k: ShaderKind) -> u64 {
    shader_slot(k) * SHADER_SLOT_LINES * LINE
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind's slot, pixel shader (up to 6 lines) and vertex shader (lines 6 and 7),
    /// lies inside the code region, and no two kinds' slots overlap.
    #[test]
    fn every_shader_kind_has_its_code_inside_the_code_region() {
        let mut ends = Vec::new();
        for &k in ShaderKind::ALL {
            let first = shader_code_offset(k);
            let ps_lines = shader::code_lines(k).min(6);
            let end = first + SHADER_SLOT_LINES * LINE;
            assert!(first + ps_lines * LINE <= end, "{k:?}");
            assert!(first + (6 + 2) * LINE <= end, "{k:?}");
            assert!(end <= SHADER_CODE_BYTES, "{k:?}");
            ends.push((first, end));
        }
        ends.sort_unstable();
        assert!(ends.windows(2).all(|w| w[0].1 <= w[1].0));
    }
}
