//! Tiles and quads: rasterization into 8x8 tiles, the HiZ test, stencil and depth tests,
//! pixel shading and the output merger.

use super::RasterCtx;
use crate::emit::Stage;
use crate::raster::Tri;
use crate::scene::*;
use crate::shader::{self, Env, QuadIn, MAX_RT, MAX_TEX};
use crate::surface::*;
use apusim_trace::{Op, Stream, WorkKind};

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

impl RasterCtx<'_, '_> {
    /// Rasterize one triangle tile by tile, quad by quad.
    pub(super) fn raster(&mut self, t: &Tri) {
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
