//! Texture data: the procedural textures of the built-in scenes and the PNG and JPEG loaders.

use super::{TextureDesc, TextureKind};
use std::path::Path;

/// Generate a procedural texture's mip-0 texels (RGBA in `[0, 1]`).
pub fn procedural(desc: &TextureDesc, size: u32) -> Vec<[f32; 4]> {
    let c = |i: usize, d: [f32; 4]| *desc.colors.get(i).unwrap_or(&d);
    let (c0, c1) = (c(0, [0.9, 0.9, 0.85, 1.0]), c(1, [0.2, 0.25, 0.3, 1.0]));
    let mix = |a: [f32; 4], b: [f32; 4], t: f32| -> [f32; 4] {
        std::array::from_fn(|k| a[k] + (b[k] - a[k]) * t)
    };
    let s = desc.scale.max(1.0);
    // The noise lattices each kind uses, hashed once per texture (the other kinds' get no
    // octaves, so nothing is tabulated for them; they never evaluate it).
    use crate::surface::ValueNoise;
    let noise = |cells: f32, oct: u32, seed: u64, kind: TextureKind| {
        ValueNoise::new(cells, if desc.kind == kind { oct } else { 0 }, seed)
    };
    let checker_n = noise(32.0, 2, desc.seed, TextureKind::Checker);
    let noise_n = noise(s, 5, desc.seed, TextureKind::Noise);
    let brick_n = noise(64.0, 3, desc.seed, TextureKind::Bricks);
    let leaf_a = noise(s, 3, desc.seed, TextureKind::Leaves);
    let leaf_c = noise(s * 4.0, 2, desc.seed + 7, TextureKind::Leaves);
    let texel = |x: u32, y: u32| -> [f32; 4] {
        let (u, v) = (
            (x as f32 + 0.5) / size as f32,
            (y as f32 + 0.5) / size as f32,
        );
        match desc.kind {
            TextureKind::Checker => {
                let k = ((u * s).floor() as i32 + (v * s).floor() as i32) & 1;
                let n = checker_n.at(u, v) * 0.15;
                mix(if k == 0 { c0 } else { c1 }, [0.0, 0.0, 0.0, 1.0], n)
            }
            TextureKind::Noise => mix(c0, c1, noise_n.at(u, v)),
            TextureKind::Bricks => {
                let row = (v * s).floor();
                let off = if row as i32 % 2 == 0 { 0.0 } else { 0.5 };
                let bu = (u * s * 0.5 + off).fract();
                let bv = (v * s).fract();
                let mortar = bu < 0.05 || bv < 0.1;
                let n = brick_n.at(u, v);
                if mortar {
                    mix(c1, [0.5, 0.5, 0.5, 1.0], n * 0.3)
                } else {
                    mix(c0, [0.3, 0.1, 0.05, 1.0], n * 0.4)
                }
            }
            TextureKind::Gradient => mix(c0, c1, v),
            TextureKind::Sprite => {
                let r = ((u - 0.5) * (u - 0.5) + (v - 0.5) * (v - 0.5)).sqrt() * 2.0;
                let a = (1.0 - r).clamp(0.0, 1.0).powf(1.5);
                [c0[0], c0[1], c0[2], a]
            }
            TextureKind::Glyphs => {
                let (cu, cv) = ((u * s).fract(), (v * s * 0.5).fract());
                let on =
                    crate::surface::hash01((u * s) as i64, (v * s * 0.5) as i64, desc.seed) > 0.3;
                let inside = cu > 0.15 && cu < 0.85 && cv > 0.2 && cv < 0.8;
                let bit = crate::surface::hash01(
                    (u * s * 5.0) as i64,
                    (v * s * 3.5) as i64,
                    desc.seed + 1,
                ) > 0.5;
                if on && inside && bit {
                    [c0[0], c0[1], c0[2], 1.0]
                } else {
                    [c1[0], c1[1], c1[2], 0.35]
                }
            }
            TextureKind::Leaves => {
                let n = leaf_a.at(u, v);
                let a = if n > 0.5 { 1.0 } else { 0.0 };
                let g = mix(c0, c1, leaf_c.at(u, v));
                [g[0], g[1], g[2], a]
            }
            TextureKind::Png | TextureKind::Jpeg => [1.0, 0.0, 1.0, 1.0],
        }
    };
    // Rows in parallel: every texel is a pure function of (x, y), so the result is the same
    // whatever the thread count.
    use rayon::prelude::*;
    let mut out = vec![[0.0f32; 4]; (size * size) as usize];
    out.par_chunks_mut(size.max(1) as usize)
        .enumerate()
        .for_each(|(y, row)| {
            for (x, t) in row.iter_mut().enumerate() {
                *t = texel(x as u32, y as u32);
            }
        });
    out
}

/// Read a PNG file as RGBA in `[0, 1]`: (width, height, texels).
pub fn load_png(path: &Path) -> Result<(u32, u32, Vec<[f32; 4]>), String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut dec = png::Decoder::new(std::io::BufReader::new(f));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut r = dec
        .read_info()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut buf = vec![0; r.output_buffer_size()];
    let info = r
        .next_frame(&mut buf)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let ch = info.color_type.samples();
    let px = (info.width * info.height) as usize;
    let mut out = Vec::with_capacity(px);
    for i in 0..px {
        let s = &buf[i * ch..i * ch + ch];
        let g = |k: usize| s[k] as f32 / 255.0;
        out.push(match ch {
            1 => [g(0), g(0), g(0), 1.0],
            2 => [g(0), g(0), g(0), g(1)],
            3 => [g(0), g(1), g(2), 1.0],
            _ => [g(0), g(1), g(2), g(3)],
        });
    }
    Ok((info.width, info.height, out))
}

/// Read a JPEG file as RGBA in `[0, 1]`: (width, height, texels).
pub fn load_jpeg(path: &Path) -> Result<(u32, u32, Vec<[f32; 4]>), String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut dec = jpeg_decoder::Decoder::new(std::io::BufReader::new(f));
    let px = dec
        .decode()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let info = dec
        .info()
        .ok_or_else(|| format!("{}: no image information", path.display()))?;
    let g = |v: u8| v as f32 / 255.0;
    let out: Vec<[f32; 4]> = match info.pixel_format {
        jpeg_decoder::PixelFormat::L8 => px.iter().map(|&l| [g(l), g(l), g(l), 1.0]).collect(),
        jpeg_decoder::PixelFormat::L16 => px
            .chunks_exact(2)
            .map(|c| [g(c[0]), g(c[0]), g(c[0]), 1.0])
            .collect(),
        jpeg_decoder::PixelFormat::RGB24 => px
            .chunks_exact(3)
            .map(|c| [g(c[0]), g(c[1]), g(c[2]), 1.0])
            .collect(),
        jpeg_decoder::PixelFormat::CMYK32 => px
            .chunks_exact(4)
            .map(|c| {
                let k = 1.0 - g(c[3]);
                [
                    (1.0 - g(c[0])) * k,
                    (1.0 - g(c[1])) * k,
                    (1.0 - g(c[2])) * k,
                    1.0,
                ]
            })
            .collect(),
    };
    Ok((info.width as u32, info.height as u32, out))
}
