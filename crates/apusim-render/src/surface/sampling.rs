//! Texture sampling: addressing modes, filters, level-of-detail selection, and point,
//! bilinear and trilinear lookups that record the cache lines they touch.

// Quad code indexes several per-pixel arrays in step; index loops are clearer here.
#![allow(clippy::needless_range_loop)]

use super::Surface;

/// Texture addressing outside `[0, 1]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrap {
    Repeat,
    Clamp,
}

/// Texture filtering (gspc §2.1: point, bilinear, trilinear).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    Point,
    Bilinear,
    Trilinear,
}

impl Filter {
    /// Texels one sample filters: one, a 2x2 footprint, or a 2x2 footprint on two mip levels.
    pub fn taps(self) -> u32 {
        match self {
            Filter::Point => 1,
            Filter::Bilinear => 4,
            Filter::Trilinear => 8,
        }
    }
}

/// The distinct lines one quad's samples of one texture touch (deduplicated within the quad).
#[derive(Clone, Debug, Default)]
pub struct LineSet {
    pub lines: Vec<u64>,
}

impl LineSet {
    #[inline]
    pub fn add(&mut self, a: u64) {
        if !self.lines.contains(&a) {
            self.lines.push(a);
        }
    }
    pub fn clear(&mut self) {
        self.lines.clear();
    }
}

/// Mip level of detail from a quad's texture coordinates (pixels ordered (0,0), (1,0), (0,1),
/// (1,1)): `log2` of the larger screen-axis derivative length in texels (the OpenGL/D3D
/// isotropic rule).
pub fn quad_lod(uv: &[[f32; 2]; 4], w: u32, h: u32) -> f32 {
    let (w, h) = (w as f32, h as f32);
    let dx = ((uv[1][0] - uv[0][0]) * w, (uv[1][1] - uv[0][1]) * h);
    let dy = ((uv[2][0] - uv[0][0]) * w, (uv[2][1] - uv[0][1]) * h);
    let rho = (dx.0 * dx.0 + dx.1 * dx.1)
        .max(dy.0 * dy.0 + dy.1 * dy.1)
        .sqrt();
    if rho > 0.0 {
        rho.log2()
    } else {
        f32::NEG_INFINITY
    }
}

#[inline]
fn wrap_coord(i: i32, n: u32, wrap: Wrap) -> u32 {
    match wrap {
        Wrap::Repeat => i.rem_euclid(n as i32) as u32,
        Wrap::Clamp => i.clamp(0, n as i32 - 1) as u32,
    }
}

impl Surface {
    /// Nearest texel of `mip` at `uv`.
    fn point(&self, mip: usize, uv: [f32; 2], wrap: Wrap, lines: &mut LineSet) -> [f32; 4] {
        let m = &self.mips[mip];
        let x = wrap_coord((uv[0] * m.width as f32).floor() as i32, m.width, wrap);
        let y = wrap_coord((uv[1] * m.height as f32).floor() as i32, m.height, wrap);
        lines.add(self.line_addr(mip, x, y));
        self.format.decode(self.texel(mip, x, y))
    }
    /// Bilinear filtering of the 2x2 texels around `uv` on `mip`.
    pub fn bilinear(&self, mip: usize, uv: [f32; 2], wrap: Wrap, lines: &mut LineSet) -> [f32; 4] {
        let m = &self.mips[mip];
        let fx = uv[0] * m.width as f32 - 0.5;
        let fy = uv[1] * m.height as f32 - 0.5;
        let (x0, y0) = (fx.floor(), fy.floor());
        let (ax, ay) = (fx - x0, fy - y0);
        let mut out = [0.0f32; 4];
        for (dx, dy, wgt) in [
            (0, 0, (1.0 - ax) * (1.0 - ay)),
            (1, 0, ax * (1.0 - ay)),
            (0, 1, (1.0 - ax) * ay),
            (1, 1, ax * ay),
        ] {
            let x = wrap_coord(x0 as i32 + dx, m.width, wrap);
            let y = wrap_coord(y0 as i32 + dy, m.height, wrap);
            lines.add(self.line_addr(mip, x, y));
            let c = self.format.decode(self.texel(mip, x, y));
            for k in 0..4 {
                out[k] += c[k] * wgt;
            }
        }
        out
    }
    /// Sample one pixel's `uv` at level of detail `lod` with `filter`, recording the lines.
    pub fn sample(
        &self,
        uv: [f32; 2],
        lod: f32,
        filter: Filter,
        wrap: Wrap,
        lines: &mut LineSet,
    ) -> [f32; 4] {
        let top = (self.mips.len() - 1) as f32;
        let lod = if lod.is_nan() {
            0.0
        } else {
            lod.clamp(0.0, top)
        };
        match filter {
            Filter::Point => self.point(lod.round() as usize, uv, wrap, lines),
            Filter::Bilinear => self.bilinear(lod.round() as usize, uv, wrap, lines),
            Filter::Trilinear => {
                let l0 = lod.floor();
                let f = lod - l0;
                let a = self.bilinear(l0 as usize, uv, wrap, lines);
                if f <= 0.0 || l0 >= top {
                    return a;
                }
                let b = self.bilinear(l0 as usize + 1, uv, wrap, lines);
                [0, 1, 2, 3].map(|k| a[k] * (1.0 - f) + b[k] * f)
            }
        }
    }
    /// Sample a whole quad: the level of detail comes from the quad's derivatives.
    pub fn sample_quad(
        &self,
        uv: &[[f32; 2]; 4],
        bias: f32,
        filter: Filter,
        wrap: Wrap,
        live: u8,
        lines: &mut LineSet,
    ) -> [[f32; 4]; 4] {
        let lod = quad_lod(uv, self.width(), self.height()) + bias;
        let mut out = [[0.0f32; 4]; 4];
        for i in 0..4 {
            if live & (1 << i) != 0 {
                out[i] = self.sample(uv[i], lod, filter, wrap, lines);
            }
        }
        out
    }
}
