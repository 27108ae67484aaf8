//! Tests of the surface layouts and sampling: noise tables, HiZ and texel tiling, RGBA16F
//! encoding, mip chains, level-of-detail and filtering.

use super::noise::floor_i64;
use super::*;

fn tex(w: u32, h: u32, levels: u32) -> Surface {
    GpuMemory::default().surface("t", Format::Rgba8, Usage::Texture, w, h, levels)
}

#[test]
fn tabulated_noise_equals_hashed_noise() {
    for (cells, oct) in [(4.0, 4), (16.0, 5), (0.5, 2), (700.0, 2)] {
        let n = ValueNoise::new(cells, oct, 9);
        for k in 0..200 {
            let (u, v) = (k as f32 * 0.0173 - 0.4, k as f32 * 0.0311 + 0.05);
            assert_eq!(
                n.at(u, v).to_bits(),
                value_noise(u, v, cells, oct, 9).to_bits()
            );
        }
    }
}

#[test]
fn integer_floor_matches_floorf() {
    for x in [
        -2.5f32, -2.0, -0.25, -0.0, 0.0, 0.25, 1.0, 1.999, 7.5e6, -7.5e6, 3.0e9,
    ] {
        assert_eq!(floor_i64(x), x.floor() as i64, "{x}");
    }
}

#[test]
fn hiz_line_holds_2x2_blocks_of_8x4_pixels() {
    // 1280x1024: 160x256 blocks of 16 bytes = 655 360 bytes, 16x8 pixels per line.
    let mut mem = GpuMemory::default();
    let h = mem.hiz(1280, 1024);
    assert_eq!(HiZ::bytes(h.tiles_x, h.tiles_y), 1280 * 1024 / (8 * 4) * 16);
    assert_eq!(h.min.len(), 160 * 256);
    // Tiles (0,0) and (1,0) share a line; (2,0) is the next line; (0,1) is a row of
    // 80 lines further.
    assert_eq!(h.line_addr(0, 0), h.line_addr(1, 0));
    assert_eq!(h.line_addr(2, 0), h.base + LINE);
    assert_eq!(h.line_addr(0, 1), h.base + 80 * LINE);
    // The two blocks of a tile are distinct and stacked.
    assert_eq!(h.block(3, 2, 1), h.block(3, 2, 0) + 160);
    assert_eq!(h.all_lines().count(), 80 * 128);
}

#[test]
fn tiling_puts_4x4_texels_in_a_line() {
    let s = tex(16, 8, 1);
    assert_eq!(s.line_addr(0, 0, 0), s.line_addr(0, 3, 3));
    assert_eq!(s.line_addr(0, 4, 0), s.base + 64);
    assert_eq!(s.line_addr(0, 0, 4), s.base + 4 * 64);
    assert_eq!(s.bytes() % 64, 0);
}

#[test]
fn rgba16f_encodes_known_half_floats_and_round_trips() {
    let f = Format::Rgba16f;
    // IEEE 754 binary16 bit patterns: 1.0, 0.5, -2.0, 65504 (largest finite), channels
    // packed low to high (R in bits 0..16, as the little-endian DXGI layout stores them).
    let v = f.encode([1.0, 0.5, -2.0, 65504.0]);
    assert_eq!(v, 0x7BFF_C000_3800_3C00);
    assert_eq!(f.decode(v), [1.0, 0.5, -2.0, 65504.0]);
    // Smallest subnormal 2^-24, zero, HDR values above 1 (exact: few mantissa bits).
    let w = f.encode([2f32.powi(-24), 0.0, 3.25, 1024.0]);
    assert_eq!(w & 0xffff, 0x0001);
    assert_eq!(f.decode(w), [2f32.powi(-24), 0.0, 3.25, 1024.0]);
    // Rounding to nearest: 1/3 has no exact half; 0x3555 = 0.333251953125 is within half
    // an ulp (2^-13 in [0.25, 0.5)), and re-encoding the decoded value is exact.
    let third = f.encode([1.0 / 3.0; 4]);
    assert_eq!(third & 0xffff, 0x3555);
    let t = f.decode(third);
    assert!((t[0] - 1.0 / 3.0).abs() <= 2f32.powi(-13), "{t:?}");
    assert_eq!(f.encode(t), third);
    // Beyond the half range: infinity, as a float render-target write.
    assert!(f.decode(f.encode([1e6, 0.0, 0.0, 0.0]))[0].is_infinite());
    // RGBA8 clamps what RGBA16F keeps.
    assert_eq!(
        Format::Rgba8.decode(Format::Rgba8.encode([3.25; 4]))[0],
        1.0
    );
}

#[test]
fn rgba16f_puts_2x4_texels_of_8_bytes_in_a_line() {
    let mut s = GpuMemory::default().surface("h", Format::Rgba16f, Usage::Target, 10, 8, 0);
    // 10x8 texels: 5 lines across, 2 down; mip 1 (5x4) is 3x1 lines after mip 0.
    assert_eq!(s.lines0(), 10);
    assert_eq!(s.mips[1].offset, 10 * LINE);
    // Mips 2 (2x2) and 3 (1x1) take one line each.
    assert_eq!(s.bytes(), (10 + 3 + 1 + 1) * LINE);
    for y in 0..8 {
        for x in 0..10 {
            let want = s.base + ((y / 4) * 5 + x / 2) as u64 * LINE;
            assert_eq!(s.line_addr(0, x, y), want, "texel ({x}, {y})");
        }
    }
    assert_eq!(s.line_addr(1, 4, 3), s.base + 12 * LINE);
    // Two 32-bit words per texel, low word first; texels are independent.
    s.set(0, 3, 5, 0x1122_3344_5566_7788);
    s.set(0, 4, 5, 7);
    assert_eq!(s.texel(0, 3, 5), 0x1122_3344_5566_7788);
    assert_eq!(s.texel(0, 4, 5), 7);
    assert_eq!(s.mips[0].texels.len(), 2 * 10 * 8);
    s.fill0(Format::Rgba16f.encode([2.5, 0.0, 1.0, 1.0]));
    assert_eq!(
        Format::Rgba16f.decode(s.texel(0, 9, 7)),
        [2.5, 0.0, 1.0, 1.0]
    );
}

#[test]
fn rgba16f_filters_and_mipmaps_float_values_above_one() {
    let mut s = GpuMemory::default().surface("h", Format::Rgba16f, Usage::Target, 2, 2, 0);
    s.load0(&[
        [4.0, 0.0, 0.0, 1.0],
        [0.0, 0.0, 0.0, 1.0],
        [4.0, 0.0, 0.0, 1.0],
        [0.0, 0.0, 0.0, 1.0],
    ]);
    s.build_mips();
    let mut ls = LineSet::default();
    let c = s.bilinear(0, [0.5, 0.5], Wrap::Clamp, &mut ls);
    assert_eq!(c[0], 2.0);
    assert_eq!(Format::Rgba16f.decode(s.texel(1, 0, 0))[0], 2.0);
}

#[test]
fn mip_chain_and_lod_selection() {
    let s = tex(64, 64, 0);
    assert_eq!(s.mips.len(), 7);
    // One texel per pixel: lod 0; two texels per pixel: lod 1; quarter: lod -2.
    let step = |d: f32| [[0.0, 0.0], [d, 0.0], [0.0, d], [d, d]];
    assert!((quad_lod(&step(1.0 / 64.0), 64, 64) - 0.0).abs() < 1e-5);
    assert!((quad_lod(&step(2.0 / 64.0), 64, 64) - 1.0).abs() < 1e-5);
    assert!((quad_lod(&step(8.0 / 64.0), 64, 64) - 3.0).abs() < 1e-5);
    assert!((quad_lod(&step(0.25 / 64.0), 64, 64) + 2.0).abs() < 1e-5);
}

#[test]
fn bilinear_and_trilinear_on_known_texture() {
    // 2x2 texture black/white columns: halfway between texel centres is grey.
    let mut s = tex(2, 2, 0);
    for y in 0..2 {
        s.set(0, 0, y, Format::Rgba8.encode([0.0, 0.0, 0.0, 1.0]));
        s.set(0, 1, y, Format::Rgba8.encode([1.0, 1.0, 1.0, 1.0]));
    }
    s.build_mips();
    let mut ls = LineSet::default();
    let c = s.bilinear(0, [0.5, 0.5], Wrap::Clamp, &mut ls);
    assert!((c[0] - 0.5).abs() < 1e-6);
    let c = s.bilinear(0, [0.375, 0.5], Wrap::Clamp, &mut ls);
    assert!((c[0] - 0.25).abs() < 1e-6, "{c:?}");
    // Texel centre: exact.
    let c = s.sample([0.75, 0.25], 0.0, Filter::Bilinear, Wrap::Clamp, &mut ls);
    assert!((c[0] - 1.0).abs() < 1e-6);
    // Trilinear halfway between mip 0 (white at this texel centre) and mip 1 (grey 0.5).
    let c = s.sample([0.75, 0.25], 0.5, Filter::Trilinear, Wrap::Clamp, &mut ls);
    let grey = Format::Rgba8.decode(s.texel(1, 0, 0))[0];
    assert!((c[0] - (0.5 + 0.5 * grey)).abs() < 1e-6, "{c:?} {grey}");
    // Point sampling picks the texel under uv.
    let c = s.sample([0.2, 0.2], 0.0, Filter::Point, Wrap::Repeat, &mut ls);
    assert_eq!(c[0], 0.0);
    // Repeat wraps: bilinear at u=0 mixes texel 1 (wrapped) and texel 0.
    let c = s.bilinear(0, [0.0, 0.25], Wrap::Repeat, &mut ls);
    assert!((c[0] - 0.5).abs() < 1e-6);
    // Every line touched was recorded once.
    let mut l = ls.lines.clone();
    l.sort();
    l.dedup();
    assert_eq!(l.len(), ls.lines.len());
}
