//! Geometry: input assembly through the post-transform vertex FIFO, vertex shading,
//! near-plane clipping and the viewport transform.

use super::{GpuMesh, RasterCtx};
use crate::emit::{Stage, NO_QUAD};
use crate::raster::{ScreenVert, Tri, NATTR};
use crate::scene::*;
use crate::shader;
use crate::surface::*;
use apusim_trace::{Op, Stream, WorkKind};

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

/// Entries of the post-transform vertex cache (FIFO).
const VERTEX_FIFO: usize = 32;

impl RasterCtx<'_, '_> {
    /// Input assembly and vertex shading of one instance of a mesh, then rasterization.
    pub(super) fn geometry(&mut self, mesh: &GpuMesh, vs: &dyn Fn(&Vertex) -> ClipVert) {
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
}
