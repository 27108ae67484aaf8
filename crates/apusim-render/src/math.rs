//! Small linear algebra for the pipeline: 3/4-vectors and column-major 4x4 matrices with the
//! Direct3D conventions the gspc paper's pipeline uses (§2.1): clip-space depth in `[0, w]`,
//! right-handed view space looking down -z, NDC y up.

use std::ops::{Add, Mul, Sub};

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct V3(pub f32, pub f32, pub f32);

impl V3 {
    pub fn from(a: [f32; 3]) -> V3 {
        V3(a[0], a[1], a[2])
    }
    pub fn dot(self, o: V3) -> f32 {
        self.0 * o.0 + self.1 * o.1 + self.2 * o.2
    }
    pub fn cross(self, o: V3) -> V3 {
        V3(
            self.1 * o.2 - self.2 * o.1,
            self.2 * o.0 - self.0 * o.2,
            self.0 * o.1 - self.1 * o.0,
        )
    }
    pub fn len(self) -> f32 {
        self.dot(self).sqrt()
    }
    pub fn norm(self) -> V3 {
        let l = self.len();
        if l > 0.0 {
            self * (1.0 / l)
        } else {
            V3(0.0, 1.0, 0.0)
        }
    }
}
impl Add for V3 {
    type Output = V3;
    fn add(self, o: V3) -> V3 {
        V3(self.0 + o.0, self.1 + o.1, self.2 + o.2)
    }
}
impl Sub for V3 {
    type Output = V3;
    fn sub(self, o: V3) -> V3 {
        V3(self.0 - o.0, self.1 - o.1, self.2 - o.2)
    }
}
impl Mul<f32> for V3 {
    type Output = V3;
    fn mul(self, s: f32) -> V3 {
        V3(self.0 * s, self.1 * s, self.2 * s)
    }
}

/// Column-major 4x4 matrix: `m[c][r]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct M4(pub [[f32; 4]; 4]);

impl M4 {
    pub const IDENTITY: M4 = M4([
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ]);
    pub fn translate(t: V3) -> M4 {
        let mut m = Self::IDENTITY;
        m.0[3] = [t.0, t.1, t.2, 1.0];
        m
    }
    pub fn scale(s: V3) -> M4 {
        let mut m = Self::IDENTITY;
        m.0[0][0] = s.0;
        m.0[1][1] = s.1;
        m.0[2][2] = s.2;
        m
    }
    pub fn rotate_y(rad: f32) -> M4 {
        let (s, c) = rad.sin_cos();
        let mut m = Self::IDENTITY;
        m.0[0] = [c, 0.0, -s, 0.0];
        m.0[2] = [s, 0.0, c, 0.0];
        m
    }
    /// Right-handed view matrix looking from `eye` at `at`.
    pub fn look_at(eye: V3, at: V3, up: V3) -> M4 {
        let f = (at - eye).norm();
        let up = if f.cross(up).len() < 1e-4 {
            V3(0.0, 0.0, 1.0)
        } else {
            up
        };
        let s = f.cross(up).norm();
        let u = s.cross(f);
        M4([
            [s.0, u.0, -f.0, 0.0],
            [s.1, u.1, -f.1, 0.0],
            [s.2, u.2, -f.2, 0.0],
            [-s.dot(eye), -u.dot(eye), f.dot(eye), 1.0],
        ])
    }
    /// Perspective projection, depth mapped to `[0, 1]` (Direct3D).
    pub fn perspective(fov_y_deg: f32, aspect: f32, near: f32, far: f32) -> M4 {
        let f = 1.0 / (fov_y_deg.to_radians() * 0.5).tan();
        let a = far / (near - far);
        M4([
            [f / aspect, 0.0, 0.0, 0.0],
            [0.0, f, 0.0, 0.0],
            [0.0, 0.0, a, -1.0],
            [0.0, 0.0, near * a, 0.0],
        ])
    }
    /// Orthographic projection of the box `[-e, e]^2 x [near, far]`, depth to `[0, 1]`.
    pub fn ortho(extent: f32, near: f32, far: f32) -> M4 {
        let d = 1.0 / (near - far);
        M4([
            [1.0 / extent, 0.0, 0.0, 0.0],
            [0.0, 1.0 / extent, 0.0, 0.0],
            [0.0, 0.0, d, 0.0],
            [0.0, 0.0, near * d, 1.0],
        ])
    }
    /// Reflection about the plane `y = h`.
    pub fn mirror_y(h: f32) -> M4 {
        let mut m = Self::IDENTITY;
        m.0[1][1] = -1.0;
        m.0[3][1] = 2.0 * h;
        m
    }
    pub fn mul(&self, o: &M4) -> M4 {
        let mut r = [[0.0f32; 4]; 4];
        for (c, col) in r.iter_mut().enumerate() {
            for (rr, v) in col.iter_mut().enumerate() {
                *v = (0..4).map(|k| self.0[k][rr] * o.0[c][k]).sum();
            }
        }
        M4(r)
    }
    pub fn apply(&self, p: [f32; 4]) -> [f32; 4] {
        let mut r = [0.0f32; 4];
        for (rr, v) in r.iter_mut().enumerate() {
            *v = (0..4).map(|k| self.0[k][rr] * p[k]).sum();
        }
        r
    }
    pub fn point(&self, p: V3) -> [f32; 4] {
        self.apply([p.0, p.1, p.2, 1.0])
    }
    pub fn dir(&self, d: V3) -> V3 {
        let r = self.apply([d.0, d.1, d.2, 0.0]);
        V3(r[0], r[1], r[2])
    }
    /// General inverse (cofactor expansion); identity if singular.
    pub fn inverse(&self) -> M4 {
        let m: Vec<f64> = (0..16).map(|i| self.0[i / 4][i % 4] as f64).collect();
        let mut inv = [0.0f64; 16];
        let mut a = [[0.0f64; 8]; 4];
        for r in 0..4 {
            for c in 0..4 {
                a[r][c] = m[c * 4 + r];
            }
            a[r][4 + r] = 1.0;
        }
        for col in 0..4 {
            let piv = (col..4)
                .max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
                .unwrap_or(col);
            if a[piv][col].abs() < 1e-12 {
                return Self::IDENTITY;
            }
            a.swap(col, piv);
            let p = a[col][col];
            for v in a[col].iter_mut() {
                *v /= p;
            }
            for r in 0..4 {
                if r != col {
                    let f = a[r][col];
                    let row = a[col];
                    for (v, rv) in a[r].iter_mut().zip(row) {
                        *v -= f * rv;
                    }
                }
            }
        }
        for r in 0..4 {
            for c in 0..4 {
                inv[c * 4 + r] = a[r][4 + c];
            }
        }
        let mut out = [[0.0f32; 4]; 4];
        for (i, v) in inv.iter().enumerate() {
            out[i / 4][i % 4] = *v as f32;
        }
        M4(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn inverse_round_trips() {
        let m = M4::perspective(60.0, 1.5, 0.1, 100.0).mul(&M4::look_at(
            V3(1.0, 2.0, 3.0),
            V3(0.0, 0.0, 0.0),
            V3(0.0, 1.0, 0.0),
        ));
        let p = m.inverse().mul(&m);
        for c in 0..4 {
            for r in 0..4 {
                let e = if c == r { 1.0 } else { 0.0 };
                assert!((p.0[c][r] - e).abs() < 1e-3, "{p:?}");
            }
        }
    }
    #[test]
    fn perspective_maps_near_far_to_unit_depth() {
        let p = M4::perspective(90.0, 1.0, 1.0, 10.0);
        let n = p.point(V3(0.0, 0.0, -1.0));
        let f = p.point(V3(0.0, 0.0, -10.0));
        assert!((n[2] / n[3]).abs() < 1e-6);
        assert!((f[2] / f[3] - 1.0).abs() < 1e-6);
    }
}
