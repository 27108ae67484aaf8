//! The shader programs: a fixed library of vertex/pixel shaders of the kinds game frames run
//! (gspc §2.1's programmable stages). Each pixel shader works on a whole 2x2 quad so texture
//! sampling can take derivatives across the quad; every texture fetch goes through
//! [`Env::tex`], which records the lines touched per texture slot.

// Quad code indexes several per-pixel arrays in step; index loops are clearer here.
#![allow(clippy::needless_range_loop)]

use crate::math::{M4, V3};
use crate::raster::NATTR;
use crate::scene::ShaderKind;
use crate::surface::{lambert, Filter, LineSet, Surface, Wrap};

/// Most render targets a draw can bind (DirectX 10 allows eight; the scenes use up to 3).
pub const MAX_RT: usize = 4;
/// Most texture slots a draw can bind: a base texture and six cube faces for
/// [`ShaderKind::EnvMap`] (Direct3D 10 binds up to 128 shader resources per stage).
pub const MAX_TEX: usize = 8;

/// Instruction bytes of each program (fetched through the shader instruction cache).
pub fn code_lines(k: ShaderKind) -> u64 {
    use ShaderKind::*;
    match k {
        ShadowCaster | Copy | Hud | Unlit | Sky => 2,
        Particle | Downsample | BrightPass => 3,
        Lit | AlphaTest | BlurH | BlurV | Tonemap | Gbuffer | SoftParticle => 4,
        Water | DepthOffset | DepthOfField => 5,
        EnvMap => 6,
        DeferredLight => 8,
    }
}

/// Bytes of one shader instruction (a Direct3D 9 token stream's four dwords).
pub const INSTRUCTION_BYTES: u64 = 16;

/// Instructions one thread of pixel shader `k` runs: its whole program (the library's
/// shaders are straight-line code).
pub fn instructions(k: ShaderKind) -> u16 {
    (code_lines(k) * crate::surface::LINE / INSTRUCTION_BYTES) as u16
}

/// Cache lines of the vertex shader every draw runs (fetched per shader core).
pub const VERTEX_SHADER_LINES: u64 = 2;

/// Instructions of the vertex shader per vertex.
pub const VERTEX_INSTRUCTIONS: u16 =
    (VERTEX_SHADER_LINES * crate::surface::LINE / INSTRUCTION_BYTES) as u16;

/// Does the shader write depth or discard pixels (forcing the late depth test, gspc §2.1)?
pub fn needs_late_z(k: ShaderKind) -> bool {
    matches!(k, ShaderKind::AlphaTest | ShaderKind::DepthOffset)
}

/// Does the shader use screen-space texture coordinates instead of the mesh's?
pub fn screen_space(k: ShaderKind) -> bool {
    use ShaderKind::*;
    matches!(
        k,
        DeferredLight | Copy | Downsample | BrightPass | BlurH | BlurV | Tonemap | DepthOfField
    )
}

/// Does the vertex shader expand the mesh's particle centres into camera-facing quads?
pub fn billboard(k: ShaderKind) -> bool {
    matches!(k, ShaderKind::Particle | ShaderKind::SoftParticle)
}

/// The cube face (0-5: +x, -x, +y, -y, +z, -z) direction `r` points into, and its texture
/// coordinates in the face as rendered by a 90-degree [`M4::look_at`] camera looking along
/// the face's axis (the same basis, up = +y, or +z for the ±y faces, as `look_at` chooses).
pub fn cube_face(r: V3) -> (usize, [f32; 2]) {
    let a = [r.0.abs(), r.1.abs(), r.2.abs()];
    let axis = if a[0] >= a[1] && a[0] >= a[2] {
        0
    } else if a[1] >= a[2] {
        1
    } else {
        2
    };
    let comp = [r.0, r.1, r.2][axis];
    let face = axis * 2 + usize::from(comp < 0.0);
    let sign = if comp < 0.0 { -1.0 } else { 1.0 };
    let mut f = [0.0f32; 3];
    f[axis] = sign;
    let f = V3(f[0], f[1], f[2]);
    let up = if axis == 1 {
        V3(0.0, 0.0, 1.0)
    } else {
        V3(0.0, 1.0, 0.0)
    };
    let s = f.cross(up).norm();
    let u = s.cross(f);
    let ma = a[axis].max(1e-6);
    (face, [0.5 + 0.5 * r.dot(s) / ma, 0.5 - 0.5 * r.dot(u) / ma])
}

/// Uniforms of a draw.
pub struct Uniforms {
    pub tint: [f32; 4],
    pub light_dir: V3,
    pub light_vp: Option<M4>,
    /// Inverse view-projection of the camera whose depth buffer is read back.
    pub inv_view_vp: Option<M4>,
    pub filter: Filter,
}

/// What a shader sees: bound textures and the per-slot line sets.
pub struct Env<'a> {
    pub surfaces: &'a [Surface],
    pub slots: &'a [usize],
    pub lines: &'a mut [LineSet; MAX_TEX],
    pub live: u8,
    pub filter: Filter,
    /// Texels filtered per slot (the samplers' work: one texel per sampler cycle, drp §3).
    pub texels: [u32; MAX_TEX],
}

impl Env<'_> {
    /// Sample texture `slot` at four uvs (derivatives from the quad).
    pub fn tex(&mut self, slot: usize, uv: &[[f32; 2]; 4], wrap: Wrap) -> [[f32; 4]; 4] {
        if let Some(t) = self.texels.get_mut(slot) {
            *t += self.live.count_ones() * self.filter.taps();
        }
        match self.slots.get(slot) {
            Some(&s) => self.surfaces[s].sample_quad(
                uv,
                0.0,
                self.filter,
                wrap,
                self.live,
                &mut self.lines[slot],
            ),
            None => [[1.0; 4]; 4],
        }
    }
    fn size(&self, slot: usize) -> (f32, f32) {
        self.slots
            .get(slot)
            .map(|&s| {
                (
                    self.surfaces[s].width() as f32,
                    self.surfaces[s].height() as f32,
                )
            })
            .unwrap_or((1.0, 1.0))
    }
}

/// One quad's inputs.
pub struct QuadIn {
    pub attr: [[f32; NATTR]; 4],
    /// Screen-space uv of the pixel centres in the render target.
    pub screen: [[f32; 2]; 4],
    pub z: [f32; 4],
}

/// One quad's outputs.
pub struct QuadOut {
    pub color: [[[f32; 4]; 4]; MAX_RT],
    pub depth: Option<[f32; 4]>,
    /// Pixels discarded by the shader.
    pub kill: u8,
}

fn uv_of(q: &QuadIn) -> [[f32; 2]; 4] {
    std::array::from_fn(|i| [q.attr[i][6], q.attr[i][7]])
}
fn world(q: &QuadIn, i: usize) -> V3 {
    V3(q.attr[i][0], q.attr[i][1], q.attr[i][2])
}
fn normal(q: &QuadIn, i: usize) -> V3 {
    V3(q.attr[i][3], q.attr[i][4], q.attr[i][5])
}
fn mul4(a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
    std::array::from_fn(|k| a[k] * b[k])
}
fn scale3(a: [f32; 4], s: f32) -> [f32; 4] {
    [a[0] * s, a[1] * s, a[2] * s, a[3]]
}

/// Shadow factor: 1 lit, 0.35 in shadow, comparing the light-space depth with the (bilinearly
/// filtered) shadow map of `slot`.
/// Normal mapping (the lit shaders' optional last slot: after the base texture, and after
/// the shadow map when the draw has a light): a normal map sampled at the base texture
/// coordinates perturbs the interpolated normal by its texel, decoded from [0, 1] to
/// [-1, 1] (an object/world-space normal map: the meshes carry no tangent frame). Normal
/// maps were standard in the game frames gspc characterizes; in memory they are a second
/// texture of the base texture's size read at the same coordinates.
fn normal_map(env: &mut Env, slot: usize, q: &QuadIn) -> [V3; 4] {
    let n: [V3; 4] = std::array::from_fn(|i| normal(q, i));
    if env.slots.get(slot).is_none() {
        return n;
    }
    let b = env.tex(slot, &uv_of(q), Wrap::Repeat);
    std::array::from_fn(|i| {
        let d = V3(
            b[i][0] * 2.0 - 1.0,
            b[i][1] * 2.0 - 1.0,
            b[i][2] * 2.0 - 1.0,
        );
        (n[i] + d * 0.5).norm()
    })
}

fn shadow(env: &mut Env, slot: usize, u: &Uniforms, pos: [V3; 4]) -> [f32; 4] {
    let Some(lvp) = u.light_vp else {
        return [1.0; 4];
    };
    if env.slots.get(slot).is_none() {
        return [1.0; 4];
    }
    let mut uv = [[0.0; 2]; 4];
    let mut d = [0.0; 4];
    for i in 0..4 {
        let c = lvp.point(pos[i]);
        let w = if c[3].abs() > 1e-6 { c[3] } else { 1.0 };
        uv[i] = [c[0] / w * 0.5 + 0.5, 0.5 - c[1] / w * 0.5];
        d[i] = c[2] / w;
    }
    let s = env.tex(slot, &uv, Wrap::Clamp);
    std::array::from_fn(|i| if d[i] - 0.004 <= s[i][0] { 1.0 } else { 0.35 })
}

/// Run pixel shader `k` on a quad.
pub fn shade(k: ShaderKind, q: &QuadIn, u: &Uniforms, env: &mut Env) -> QuadOut {
    use ShaderKind::*;
    let mut out = QuadOut {
        color: [[[0.0; 4]; 4]; MAX_RT],
        depth: None,
        kill: 0,
    };
    let pos: [V3; 4] = std::array::from_fn(|i| world(q, i));
    let lit = |albedo: [f32; 4], n: V3, sh: f32| -> [f32; 4] {
        scale3(albedo, 0.3 + 0.7 * lambert(n, u.light_dir) * sh)
    };
    match k {
        Unlit | Sky | Hud | Particle => {
            let t = env.tex(0, &uv_of(q), Wrap::Repeat);
            for i in 0..4 {
                out.color[0][i] = mul4(t[i], u.tint);
            }
        }
        Lit | AlphaTest | DepthOffset => {
            let t = env.tex(0, &uv_of(q), Wrap::Repeat);
            let sh = shadow(env, 1, u, pos);
            let n = normal_map(env, if u.light_vp.is_some() { 2 } else { 1 }, q);
            for i in 0..4 {
                let a = mul4(t[i], u.tint);
                out.color[0][i] = lit(a, n[i], sh[i]);
                out.color[0][i][3] = 1.0;
                if k == AlphaTest && a[3] < 0.5 {
                    out.kill |= 1 << i;
                }
            }
            if k == DepthOffset {
                // Parallax-style depth offset from the texture's luminance.
                out.depth = Some(std::array::from_fn(|i| {
                    (q.z[i] + (t[i][0] + t[i][1] + t[i][2] - 1.5) * 2e-4).clamp(0.0, 1.0)
                }));
            }
        }
        ShadowCaster => {
            for i in 0..4 {
                out.color[0][i] = [q.z[i], 0.0, 0.0, 1.0];
            }
        }
        Gbuffer => {
            let t = env.tex(0, &uv_of(q), Wrap::Repeat);
            let spec = env.tex(1, &uv_of(q), Wrap::Repeat);
            for i in 0..4 {
                let n = normal(q, i).norm();
                // RT0 albedo with the specular mask in alpha, RT1 the normal, RT2 (R32F) depth.
                let a = mul4(t[i], u.tint);
                out.color[0][i] = [a[0], a[1], a[2], spec[i][0]];
                out.color[1][i] = [n.0 * 0.5 + 0.5, n.1 * 0.5 + 0.5, n.2 * 0.5 + 0.5, 1.0];
                out.color[2][i] = [q.z[i], 0.0, 0.0, 1.0];
            }
        }
        DeferredLight => {
            let s = q.screen;
            let albedo = env.tex(0, &s, Wrap::Clamp);
            let nrm = env.tex(1, &s, Wrap::Clamp);
            let depth = env.tex(2, &s, Wrap::Clamp);
            let inv = u.inv_view_vp.unwrap_or(M4::IDENTITY);
            let wp: [V3; 4] = std::array::from_fn(|i| {
                let c = inv.apply([s[i][0] * 2.0 - 1.0, 1.0 - s[i][1] * 2.0, depth[i][0], 1.0]);
                let w = if c[3].abs() > 1e-9 { c[3] } else { 1.0 };
                V3(c[0] / w, c[1] / w, c[2] / w)
            });
            let sh = shadow(env, 3, u, wp);
            for i in 0..4 {
                let n = V3(
                    nrm[i][0] * 2.0 - 1.0,
                    nrm[i][1] * 2.0 - 1.0,
                    nrm[i][2] * 2.0 - 1.0,
                );
                let c = lit(albedo[i], n, sh[i]);
                out.color[0][i] = [c[0], c[1], c[2], 1.0];
            }
        }
        Water => {
            let t = env.tex(0, &uv_of(q), Wrap::Repeat);
            let r = env.tex(1, &q.screen, Wrap::Clamp);
            for i in 0..4 {
                let base = lit(mul4(t[i], u.tint), normal(q, i), 1.0);
                out.color[0][i] = std::array::from_fn(|k| base[k] * 0.4 + r[i][k] * 0.6);
                out.color[0][i][3] = 1.0;
            }
        }
        Copy | Downsample => {
            let t = env.tex(0, &q.screen, Wrap::Clamp);
            out.color[0] = t;
        }
        BrightPass => {
            let t = env.tex(0, &q.screen, Wrap::Clamp);
            for i in 0..4 {
                out.color[0][i] = std::array::from_fn(|k| {
                    if k == 3 {
                        1.0
                    } else {
                        (t[i][k] - 0.3).max(0.0) * 1.5
                    }
                });
            }
        }
        BlurH | BlurV => {
            let (w, h) = env.size(0);
            let (dx, dy) = if k == BlurH {
                (1.0 / w, 0.0)
            } else {
                (0.0, 1.0 / h)
            };
            for (o, wgt) in [(-2.0, 1.0), (-1.0, 4.0), (0.0, 6.0), (1.0, 4.0), (2.0, 1.0)] {
                let uv: [[f32; 2]; 4] =
                    std::array::from_fn(|i| [q.screen[i][0] + o * dx, q.screen[i][1] + o * dy]);
                let t = env.tex(0, &uv, Wrap::Clamp);
                for i in 0..4 {
                    for c in 0..4 {
                        out.color[0][i][c] += t[i][c] * wgt / 16.0;
                    }
                }
            }
        }
        EnvMap => {
            let t = env.tex(0, &uv_of(q), Wrap::Repeat);
            // Reflection of the view ray (reconstructed from `view`'s inverse
            // view-projection) about the normal; without a view, the normal itself.
            let dirs: [V3; 4] = std::array::from_fn(|i| {
                let n = normal(q, i).norm();
                let Some(inv) = u.inv_view_vp else {
                    return n;
                };
                let (x, y) = (q.screen[i][0] * 2.0 - 1.0, 1.0 - q.screen[i][1] * 2.0);
                let p = |z: f32| {
                    let c = inv.apply([x, y, z, 1.0]);
                    let w = if c[3].abs() > 1e-9 { c[3] } else { 1.0 };
                    V3(c[0] / w, c[1] / w, c[2] / w)
                };
                let d = (p(1.0) - p(0.0)).norm();
                d - n * (2.0 * d.dot(n))
            });
            let faces: [(usize, [f32; 2]); 4] = std::array::from_fn(|i| cube_face(dirs[i]));
            let mut refl = [[0.0f32; 4]; 4];
            let live = env.live;
            // Each face's texture is sampled for the quad's pixels that look into it.
            for face in 0..6 {
                let m = (0..4)
                    .filter(|&i| faces[i].0 == face && live & (1 << i) != 0)
                    .fold(0u8, |m, i| m | 1 << i);
                if m == 0 {
                    continue;
                }
                let uv: [[f32; 2]; 4] = std::array::from_fn(|i| faces[i].1);
                env.live = m;
                let c = env.tex(1 + face, &uv, Wrap::Clamp);
                for i in 0..4 {
                    if m & (1 << i) != 0 {
                        refl[i] = c[i];
                    }
                }
            }
            env.live = live;
            for i in 0..4 {
                let base = lit(mul4(t[i], u.tint), normal(q, i), 1.0);
                out.color[0][i] = std::array::from_fn(|k| base[k] * 0.5 + refl[i][k] * 0.5);
                out.color[0][i][3] = 1.0;
            }
        }
        SoftParticle => {
            let t = env.tex(0, &uv_of(q), Wrap::Repeat);
            let scene = env.tex(1, &q.screen, Wrap::Clamp);
            for i in 0..4 {
                // Fade over a small depth range in front of the opaque surface behind.
                let fade = ((scene[i][0] - q.z[i]) * 400.0).clamp(0.0, 1.0);
                let c = mul4(t[i], u.tint);
                out.color[0][i] = [c[0], c[1], c[2], c[3] * fade];
            }
        }
        DepthOfField => {
            let sharp = env.tex(0, &q.screen, Wrap::Clamp);
            let blur = env.tex(1, &q.screen, Wrap::Clamp);
            let depth = env.tex(2, &q.screen, Wrap::Clamp);
            for i in 0..4 {
                let coc = ((depth[i][0] - u.tint[0]).abs() * u.tint[1]).clamp(0.0, 1.0);
                out.color[0][i] =
                    std::array::from_fn(|k| sharp[i][k] + (blur[i][k] - sharp[i][k]) * coc);
                out.color[0][i][3] = 1.0;
            }
        }
        Tonemap => {
            let hdr = env.tex(0, &q.screen, Wrap::Clamp);
            let bloom = env.tex(1, &q.screen, Wrap::Clamp);
            for i in 0..4 {
                out.color[0][i] = std::array::from_fn(|c| {
                    if c == 3 {
                        return 1.0;
                    }
                    let b = if env.slots.len() > 1 {
                        bloom[i][c]
                    } else {
                        0.0
                    };
                    let x = hdr[i][c] * 1.5 + b * 1.2;
                    x / (1.0 + x) * 1.8
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`cube_face`] picks the face a direction points into and lands where that face's
    /// 90-degree camera (the pipeline's `look_at` and `perspective`) projects it.
    #[test]
    fn cube_face_matches_the_face_cameras() {
        let axes = [
            V3(1.0, 0.0, 0.0),
            V3(-1.0, 0.0, 0.0),
            V3(0.0, 1.0, 0.0),
            V3(0.0, -1.0, 0.0),
            V3(0.0, 0.0, 1.0),
            V3(0.0, 0.0, -1.0),
        ];
        let proj = M4::perspective(90.0, 1.0, 0.1, 10.0);
        let dirs = [
            V3(1.0, 0.3, -0.2),
            V3(-0.9, -0.5, 0.4),
            V3(0.2, 1.0, 0.7),
            V3(-0.3, -1.0, -0.6),
            V3(0.5, -0.1, 1.0),
            V3(-0.4, 0.8, -1.0),
        ];
        for (want, r) in dirs.into_iter().enumerate() {
            let (face, uv) = cube_face(r);
            assert_eq!(face, want, "{r:?}");
            let view = M4::look_at(V3(0.0, 0.0, 0.0), axes[face], V3(0.0, 1.0, 0.0));
            let c = proj.mul(&view).point(r);
            let expect = [c[0] / c[3] * 0.5 + 0.5, 0.5 - c[1] / c[3] * 0.5];
            for k in 0..2 {
                assert!((uv[k] - expect[k]).abs() < 1e-4, "{r:?}: {uv:?} {expect:?}");
                assert!((0.0..=1.0).contains(&uv[k]));
            }
        }
        assert!(billboard(ShaderKind::SoftParticle) && !billboard(ShaderKind::EnvMap));
    }
}
