//! Procedural value noise (a hash, and its octave sum tabulated per lattice) for the
//! procedural meshes and textures, and the Lambert term the shaders light with.

use crate::math::V3;

/// Deterministic hash noise in `[0, 1)` (SplitMix64 finaliser).
pub fn hash01(x: i64, y: i64, seed: u64) -> f32 {
    let mut z = (x as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add((y as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
        .wrapping_add(seed.wrapping_mul(0x1656_67B1_9E37_79F9));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 40) as f32 / (1u64 << 24) as f32
}

/// `x.floor()` as an integer, without the `floorf` call (bit-identical for |x| < 2^62).
#[inline]
pub(super) fn floor_i64(x: f32) -> i64 {
    let t = x as i64;
    t - ((t as f32) > x) as i64
}

/// Smooth value noise with `octaves` octaves, period `cells` at the base octave. The lattice
/// is addressed with integers (no `floorf`, one hash per corner); results are bit-identical
/// to evaluating the lattice with `f32::floor`.
pub fn value_noise(u: f32, v: f32, cells: f32, octaves: u32, seed: u64) -> f32 {
    noise_sum(u, v, cells, octaves, |o, i, j| {
        hash01(i, j, seed + o as u64)
    })
}

/// The octave sum of [`value_noise`], with the lattice value of octave `o` at (i, j) (already
/// wrapped to the octave's period) given by `lattice`.
#[inline]
fn noise_sum(
    u: f32,
    v: f32,
    cells: f32,
    octaves: u32,
    lattice: impl Fn(u32, i64, i64) -> f32,
) -> f32 {
    let mut sum = 0.0;
    let mut amp = 0.5;
    let mut freq = cells;
    let mut norm = 0.0;
    let s = |a: f32| a * a * (3.0 - 2.0 * a);
    for o in 0..octaves {
        let (x, y) = (u * freq, v * freq);
        let (x0, y0) = (floor_i64(x), floor_i64(y));
        let (fx, fy) = (x - x0 as f32, y - y0 as f32);
        let p = (freq as i64).max(1);
        // Wrap to the period; coordinates are usually inside it already (no division).
        let wrap = |k: i64| {
            if (0..p).contains(&k) {
                k
            } else {
                k.rem_euclid(p)
            }
        };
        let (xa, xb) = (wrap(x0), wrap(x0 + 1));
        let (ya, yb) = (wrap(y0), wrap(y0 + 1));
        let (h00, h10) = (lattice(o, xa, ya), lattice(o, xb, ya));
        let (h01, h11) = (lattice(o, xa, yb), lattice(o, xb, yb));
        let a = h00 + (h10 - h00) * s(fx);
        let b = h01 + (h11 - h01) * s(fx);
        sum += amp * (a + (b - a) * s(fy));
        norm += amp;
        amp *= 0.5;
        freq *= 2.0;
    }
    sum / norm
}

/// [`value_noise`] with each octave's periodic lattice hashed once into a table: for
/// generating whole textures, where every lattice value is used by many texels. Gives exactly
/// the values of [`value_noise`] with the same parameters.
pub struct ValueNoise {
    cells: f32,
    octaves: u32,
    seed: u64,
    /// Per octave: (period, p x p lattice values), or no table when the period is too large.
    tables: Vec<(i64, Vec<f32>)>,
}

impl ValueNoise {
    /// Largest lattice period tabulated (4 MB of f32 per octave).
    const MAX_PERIOD: i64 = 1024;
    pub fn new(cells: f32, octaves: u32, seed: u64) -> ValueNoise {
        let mut freq = cells;
        let mut tables = Vec::with_capacity(octaves as usize);
        for o in 0..octaves {
            let p = (freq as i64).max(1);
            let t = if p <= Self::MAX_PERIOD {
                (0..p * p)
                    .map(|k| hash01(k % p, k / p, seed + o as u64))
                    .collect()
            } else {
                Vec::new()
            };
            tables.push((p, t));
            freq *= 2.0;
        }
        ValueNoise {
            cells,
            octaves,
            seed,
            tables,
        }
    }
    pub fn at(&self, u: f32, v: f32) -> f32 {
        noise_sum(u, v, self.cells, self.octaves, |o, i, j| {
            let (p, t) = &self.tables[o as usize];
            if t.is_empty() {
                hash01(i, j, self.seed + o as u64)
            } else {
                t[(j * p + i) as usize]
            }
        })
    }
}

/// Lambert shading helper shared by the lit shaders.
pub fn lambert(n: V3, l: V3) -> f32 {
    n.norm().dot(l.norm()).max(0.0)
}
