//! Mesh data: the vertex and index layout of the vertex buffers, the procedural meshes of the
//! built-in scenes, and the Wavefront OBJ loader.

use super::SceneError;
use crate::math::V3;

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
