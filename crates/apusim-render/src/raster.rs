//! Triangle setup and rasterization into 2x2 quads (gspc §2.1's rasterization stage).
//!
//! Vertices are snapped to 1/256 pixel ([`SUB`]); edge functions are exact 64-bit integers
//! evaluated at pixel centres, and ties go by the **top-left fill rule** (Direct3D): a sample
//! exactly on an edge belongs to the triangle only if the edge is a top edge (horizontal,
//! interior below) or a left edge (interior to its right), so triangles sharing an edge never
//! both cover a pixel. Depth is interpolated linearly in screen space, attributes perspective
//! correctly (with 1/w).

/// Sub-pixel precision: 8 bits.
pub const SUB: i64 = 256;

/// Number of interpolated attributes per vertex.
pub const NATTR: usize = 8;

/// A vertex after the viewport transform.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScreenVert {
    /// Pixel coordinates (y down).
    pub x: f32,
    pub y: f32,
    /// Depth in `[0, 1]`.
    pub z: f32,
    /// 1 / clip w.
    pub inv_w: f32,
    pub attr: [f32; NATTR],
}

/// Which faces to drop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cull {
    None,
    Back,
    Front,
}

/// A set-up triangle: integer edge equations and plane data.
#[derive(Clone, Debug)]
pub struct Tri {
    v: [ScreenVert; 3],
    /// Edge i runs opposite vertex i: (a, b, c) with E(x, y) = a*x + b*y + c in SUB units.
    edge: [(i64, i64, i64); 3],
    /// 0 for top-left edges, 1 otherwise (samples with E == 0 are in only when bias is 0).
    bias: [i64; 3],
    area: i64,
    /// Pixel bounding box, inclusive min, exclusive max, clipped to the viewport.
    pub x0: u32,
    pub y0: u32,
    pub x1: u32,
    pub y1: u32,
    /// Smallest and largest vertex depth.
    pub zmin: f32,
    pub zmax: f32,
}

impl Tri {
    /// Set up a triangle; `None` when culled, degenerate or off-screen. Counter-clockwise on
    /// screen (y up, i.e. in NDC) is front facing.
    pub fn setup(v: [ScreenVert; 3], cull: Cull, width: u32, height: u32) -> Option<Tri> {
        let fx = |f: f32| (f as f64 * SUB as f64).round() as i64;
        let p: Vec<(i64, i64)> = v.iter().map(|q| (fx(q.x), fx(q.y))).collect();
        // Signed area in y-down screen space; positive = clockwise on screen = back facing
        // with y up.
        let area2 = (p[1].0 - p[0].0) * (p[2].1 - p[0].1) - (p[1].1 - p[0].1) * (p[2].0 - p[0].0);
        if area2 == 0 {
            return None;
        }
        let front = area2 < 0;
        match cull {
            Cull::Back if !front => return None,
            Cull::Front if front => return None,
            _ => {}
        }
        // Order the vertices so that the area is positive (interior has E >= 0).
        let (v, p) = if area2 > 0 {
            (v, [p[0], p[1], p[2]])
        } else {
            ([v[0], v[2], v[1]], [p[0], p[2], p[1]])
        };
        let mut edge = [(0, 0, 0); 3];
        let mut bias = [0; 3];
        for i in 0..3 {
            let (a0, a1) = (p[(i + 1) % 3], p[(i + 2) % 3]);
            let (dx, dy) = (a1.0 - a0.0, a1.1 - a0.1);
            // E(p) = dx*(py - a0.y) - dy*(px - a0.x)
            edge[i] = (-dy, dx, dy * a0.0 - dx * a0.1);
            let top_left = (dy == 0 && dx > 0) || dy < 0;
            bias[i] = if top_left { 0 } else { 1 };
        }
        let area = edge[0].0 * p[0].0 + edge[0].1 * p[0].1 + edge[0].2;
        let minx = p.iter().map(|q| q.0).min().unwrap_or(0);
        let maxx = p.iter().map(|q| q.0).max().unwrap_or(0);
        let miny = p.iter().map(|q| q.1).min().unwrap_or(0);
        let maxy = p.iter().map(|q| q.1).max().unwrap_or(0);
        let clampu = |v: i64, hi: u32| v.clamp(0, hi as i64) as u32;
        // Pixel px's centre is px*SUB + SUB/2.
        let x0 = clampu((minx - SUB / 2 + SUB - 1).div_euclid(SUB), width);
        let x1 = clampu((maxx - SUB / 2).div_euclid(SUB) + 1, width);
        let y0 = clampu((miny - SUB / 2 + SUB - 1).div_euclid(SUB), height);
        let y1 = clampu((maxy - SUB / 2).div_euclid(SUB) + 1, height);
        if x0 >= x1 || y0 >= y1 {
            return None;
        }
        let zmin = v.iter().map(|q| q.z).fold(f32::INFINITY, f32::min);
        let zmax = v.iter().map(|q| q.z).fold(f32::NEG_INFINITY, f32::max);
        Some(Tri {
            v,
            edge,
            bias,
            area,
            x0,
            y0,
            x1,
            y1,
            zmin,
            zmax,
        })
    }

    #[inline]
    fn e(&self, i: usize, px: u32, py: u32) -> i64 {
        let (a, b, c) = self.edge[i];
        let x = px as i64 * SUB + SUB / 2;
        let y = py as i64 * SUB + SUB / 2;
        a * x + b * y + c
    }

    /// True if the centre of pixel (px, py) is covered.
    #[inline]
    pub fn covers(&self, px: u32, py: u32) -> bool {
        (0..3).all(|i| self.e(i, px, py) - self.bias[i] >= 0)
    }

    /// Coverage mask of the 2x2 quad whose top-left pixel is (qx, qy): bit i for pixel
    /// (qx + i % 2, qy + i / 2), only pixels inside the viewport `w x h`.
    pub fn quad_mask(&self, qx: u32, qy: u32, w: u32, h: u32) -> u8 {
        let mut m = 0;
        for i in 0..4 {
            let (x, y) = (qx + (i & 1), qy + (i >> 1));
            if x < w && y < h && self.covers(x, y) {
                m |= 1 << i;
            }
        }
        m
    }

    /// Screen-space barycentric weights at the centre of (px, py) (extrapolated outside).
    #[inline]
    pub fn bary(&self, px: u32, py: u32) -> [f32; 3] {
        let a = self.area as f64;
        [
            (self.e(0, px, py) as f64 / a) as f32,
            (self.e(1, px, py) as f64 / a) as f32,
            (self.e(2, px, py) as f64 / a) as f32,
        ]
    }

    /// Depth at the centre of (px, py).
    #[inline]
    pub fn depth(&self, px: u32, py: u32) -> f32 {
        let b = self.bary(px, py);
        b[0] * self.v[0].z + b[1] * self.v[1].z + b[2] * self.v[2].z
    }

    /// Perspective-correct attributes at the centre of (px, py).
    pub fn attrs(&self, px: u32, py: u32) -> [f32; NATTR] {
        let b = self.bary(px, py);
        let wts = [
            b[0] * self.v[0].inv_w,
            b[1] * self.v[1].inv_w,
            b[2] * self.v[2].inv_w,
        ];
        let s = wts[0] + wts[1] + wts[2];
        let s = if s.abs() > 1e-20 { 1.0 / s } else { 0.0 };
        let mut out = [0.0; NATTR];
        for (k, o) in out.iter_mut().enumerate() {
            *o = (wts[0] * self.v[0].attr[k]
                + wts[1] * self.v[1].attr[k]
                + wts[2] * self.v[2].attr[k])
                * s;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sv(x: f32, y: f32, z: f32) -> ScreenVert {
        ScreenVert {
            x,
            y,
            z,
            inv_w: 1.0,
            attr: [0.0; NATTR],
        }
    }

    fn covered(t: &Tri, w: u32, h: u32) -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        for y in 0..h {
            for x in 0..w {
                if t.covers(x, y) {
                    v.push((x, y));
                }
            }
        }
        v
    }

    #[test]
    fn right_triangle_coverage_by_hand() {
        // Legs of 4 pixels along the top and left edges: centres (x+.5, y+.5) with
        // x + y + 1 <= 4 are inside; those with x + y + 1 == 4 lie on the hypotenuse, which is
        // a right edge (not top-left), so they are out: x + y <= 2 -> 6 pixels.
        let t = Tri::setup(
            [sv(0.0, 0.0, 0.5), sv(0.0, 4.0, 0.5), sv(4.0, 0.0, 0.5)],
            Cull::None,
            8,
            8,
        )
        .unwrap();
        let c = covered(&t, 8, 8);
        assert_eq!(
            c,
            vec![(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (0, 2)],
            "{c:?}"
        );
    }

    #[test]
    fn shared_edge_pixels_go_to_exactly_one_triangle() {
        // A 4x4 square split along its diagonal: every pixel covered exactly once; pixel
        // centres on the diagonal (x == y) go to the triangle for which it is a top-left edge.
        let a = Tri::setup(
            [sv(0.0, 0.0, 0.5), sv(4.0, 4.0, 0.5), sv(4.0, 0.0, 0.5)],
            Cull::None,
            4,
            4,
        )
        .unwrap();
        let b = Tri::setup(
            [sv(0.0, 0.0, 0.5), sv(0.0, 4.0, 0.5), sv(4.0, 4.0, 0.5)],
            Cull::None,
            4,
            4,
        )
        .unwrap();
        for y in 0..4 {
            for x in 0..4 {
                assert!(a.covers(x, y) ^ b.covers(x, y), "pixel {x},{y}");
            }
        }
        // The diagonal is the left edge of the upper-right triangle `a`.
        assert!(a.covers(1, 1) && !b.covers(1, 1));
        assert_eq!(covered(&a, 4, 4).len(), 10);
        assert_eq!(covered(&b, 4, 4).len(), 6);
    }

    #[test]
    fn depth_is_interpolated_at_pixel_centres() {
        // z = x / 8 across an 8-wide triangle: pixel (2, 0) centre x=2.5 -> 0.3125.
        let t = Tri::setup(
            [sv(0.0, 0.0, 0.0), sv(0.0, 8.0, 0.0), sv(8.0, 0.0, 1.0)],
            Cull::None,
            8,
            8,
        )
        .unwrap();
        assert!((t.depth(2, 0) - 0.3125).abs() < 1e-6);
        assert!((t.depth(0, 3) - 0.0625).abs() < 1e-6);
        assert_eq!(t.quad_mask(0, 0, 8, 8), 0b1111);
        // Quad (6,0): pixel (6,0) centre x+y+1 = 7 < 8 in; (7,0) on the hypotenuse, out;
        // (6,1) on it too, out; (7,1) beyond.
        assert_eq!(t.quad_mask(6, 0, 8, 8), 0b0001);
    }

    #[test]
    fn back_faces_are_culled() {
        // Clockwise on screen (y down) seen with y up is back facing.
        let cw = [sv(0.0, 0.0, 0.5), sv(4.0, 0.0, 0.5), sv(0.0, 4.0, 0.5)];
        assert!(Tri::setup(cw, Cull::Back, 8, 8).is_none());
        assert!(Tri::setup(cw, Cull::Front, 8, 8).is_some());
        let ccw = [sv(0.0, 0.0, 0.5), sv(0.0, 4.0, 0.5), sv(4.0, 0.0, 0.5)];
        assert!(Tri::setup(ccw, Cull::Back, 8, 8).is_some());
    }

    #[test]
    fn perspective_correct_attributes() {
        // Attribute 0 = 0 at a near vertex (w=1) and 1 at two far vertices (w=3): at the
        // screen-space midpoint the perspective-correct value is weighted by 1/w.
        let mut a = sv(0.0, 0.0, 0.5);
        a.inv_w = 1.0;
        let mut b = sv(0.0, 16.0, 0.5);
        b.inv_w = 1.0 / 3.0;
        b.attr[0] = 1.0;
        let mut c = sv(16.0, 0.0, 0.5);
        c.inv_w = 1.0 / 3.0;
        c.attr[0] = 1.0;
        let t = Tri::setup([a, b, c], Cull::None, 16, 16).unwrap();
        let bw = t.bary(3, 3);
        let expect = (bw[1] + bw[2]) / 3.0 / (bw[0] + (bw[1] + bw[2]) / 3.0);
        assert!((t.attrs(3, 3)[0] - expect).abs() < 1e-6);
        assert!(t.attrs(3, 3)[0] < bw[1] + bw[2]);
    }
}
