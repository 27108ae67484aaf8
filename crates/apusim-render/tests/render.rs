//! End-to-end tests of the render pipeline: render-to-texture streams, scene errors, and golden
//! checksums of the built-in scenes at a small resolution.

use apusim_render::{builtin, load, render, scene, Options, Renderer, Source};
use apusim_trace::hash::fnv1a as fnv;
use apusim_trace::{Access, Op, Stream};
use std::collections::BTreeSet;

fn src(text: &str) -> (Source, apusim_render::SceneDesc) {
    let s = Source {
        file: "test.toml".into(),
        text: text.into(),
        dir: None,
    };
    let d = scene::parse(&s).unwrap();
    (s, d)
}

/// The error of parsing `text` as scene file `file`.
fn parse_err(file: &str, text: String) -> apusim_render::SceneError {
    let s = Source {
        file: file.into(),
        text,
        dir: None,
    };
    scene::parse(&s).unwrap_err()
}

const RTT: &str = r#"
name = "rtt"
frames = 1
[[camera]]
name = "screen"
kind = "screen"
[[texture]]
name = "checker"
kind = "checker"
size = 64
[[mesh]]
name = "tri"
kind = "fullscreen"
[[mesh]]
name = "panel"
kind = "rect"
[[target]]
name = "offscreen"
format = "rgba8"
[[pass]]
name = "produce"
color = ["offscreen"]
camera = "screen"
clear_color = [0.0, 0.0, 0.0, 1.0]
[[pass.draw]]
mesh = "panel"
shader = "unlit"
textures = ["checker"]
depth_test = false
cull = "none"
scale = [0.5, 0.5, 1.0]
[[pass]]
name = "consume"
color = ["backbuffer"]
camera = "screen"
[[pass.draw]]
mesh = "tri"
shader = "copy"
textures = ["offscreen"]
depth_test = false
cull = "none"
filter = "point"
"#;

#[test]
fn render_to_texture_reads_exactly_the_written_lines() {
    rtt_reads_exactly_the_written_lines("rgba8", 16);
}

/// The same with a 16-bit float target: 8-byte texels, 2x4 per line, so twice the lines.
#[test]
fn rgba16f_render_to_texture_reads_exactly_the_written_lines() {
    rtt_reads_exactly_the_written_lines("rgba16f", 8);
}

fn rtt_reads_exactly_the_written_lines(format: &str, texels_per_line: usize) {
    let text = RTT.replace("format = \"rgba8\"", &format!("format = \"{format}\""));
    let (s, d) = src(&text);
    let mut v: Vec<Access> = Vec::new();
    let opt = Options {
        width: 64,
        height: 48,
        frames: None,
        seed: 1,
    };
    let r = Renderer::new(&s, &d, &opt).unwrap();
    let off = r.surface("offscreen").unwrap();
    let range = off.base..off.base + off.bytes();
    render(&s, &d, &opt, &mut v, |_, _| {}).unwrap();
    // Lines written into the offscreen target (colour writes and fast-clear resolves).
    let written: BTreeSet<u64> = v
        .iter()
        .filter(|a| a.op == Op::Write && range.contains(&a.addr))
        .map(|a| a.addr)
        .collect();
    let dynamic: BTreeSet<u64> = v
        .iter()
        .filter(|a| a.stream == Stream::DynamicTexture)
        .map(|a| a.addr)
        .collect();
    assert!(!dynamic.is_empty());
    assert_eq!(dynamic, written);
    // The whole target is read back (full-screen point-sampled copy at the same size).
    assert_eq!(written.len(), off.lines0());
    assert_eq!(written.len(), 64 * 48 / texels_per_line);
    // Static texture reads are only of the checker texture, never of the offscreen target.
    assert!(v
        .iter()
        .filter(|a| a.stream == Stream::StaticTexture)
        .all(|a| !range.contains(&a.addr)));
    // Every dynamic read comes after the last write of its line.
    let last_write = v
        .iter()
        .enumerate()
        .filter(|(_, a)| a.op == Op::Write && range.contains(&a.addr))
        .map(|(i, _)| i)
        .max()
        .unwrap();
    let first_read = v
        .iter()
        .position(|a| a.stream == Stream::DynamicTexture)
        .unwrap();
    assert!(first_read > last_write);
}

/// A blended full-screen draw over the back buffer: the ROP holds each displayable line for
/// its tile, so every line is read once (not once per quad, four per 4x4-pixel line) and
/// written once.
#[test]
fn blending_into_the_display_reads_each_line_once_per_tile() {
    let text = RTT.replace("filter = \"point\"\n", "filter = \"point\"\n[[pass.draw]]\nmesh = \"tri\"\nshader = \"copy\"\ntextures = [\"checker\"]\ndepth_test = false\ncull = \"none\"\nblend = \"alpha\"\n");
    assert_ne!(text, RTT);
    let (s, d) = src(&text);
    let opt = Options {
        width: 64,
        height: 48,
        frames: None,
        seed: 1,
    };
    let mut v: Vec<Access> = Vec::new();
    render(&s, &d, &opt, &mut v, |_, _| {}).unwrap();
    let lines = (64 * 48 / 16) as usize;
    let reads: Vec<u64> = v
        .iter()
        .filter(|a| a.stream == Stream::Display && a.op == Op::Read)
        .map(|a| a.addr)
        .collect();
    let distinct: BTreeSet<u64> = reads.iter().copied().collect();
    assert_eq!((reads.len(), distinct.len()), (lines, lines));
    let writes = v
        .iter()
        .filter(|a| a.stream == Stream::Display && a.op == Op::Write)
        .count();
    // Two draws (the copy, then the blended one), each writing every line once.
    assert_eq!(writes, 2 * lines);
}

#[test]
fn scene_errors_name_file_and_line() {
    let line_of =
        |text: &str, needle: &str| text[..text.find(needle).unwrap()].matches('\n').count() + 1;
    let bad_mesh = RTT.replace("mesh = \"panel\"", "mesh = \"pannel\"");
    let (s, d) = src(&bad_mesh);
    let e = Renderer::new(&s, &d, &Options::default()).err().unwrap();
    assert_eq!(e.file, "test.toml");
    assert_eq!(e.line, line_of(&bad_mesh, "\"pannel\""), "{e}");
    assert!(e.msg.contains("unknown mesh `pannel`"), "{e}");

    let bad_tex = RTT.replace("textures = [\"offscreen\"]", "textures = [\"ofscreen\"]");
    let (s, d) = src(&bad_tex);
    let e = Renderer::new(&s, &d, &Options::default()).err().unwrap();
    assert!(e.msg.contains("unknown texture `ofscreen`"), "{e}");
    assert_eq!(e.line, line_of(&bad_tex, "\"ofscreen\""));

    let bad_shader = RTT.replace("shader = \"copy\"", "shader = \"kopy\"");
    let want = line_of(&bad_shader, "kopy");
    let e = parse_err("x.toml", bad_shader);
    assert_eq!(e.line, want, "{e}");
    assert!(e.to_string().starts_with(&format!("x.toml:{want}:")), "{e}");

    // An unknown target format names the line and the formats there are.
    let bad_fmt = RTT.replace("format = \"rgba8\"", "format = \"rgba16\"");
    let want = line_of(&bad_fmt, "rgba16");
    let e = parse_err("f.toml", bad_fmt);
    assert_eq!(e.line, want, "{e}");
    assert!(e.msg.contains("rgba16f"), "{e}");

    let bad_png = format!(
        "{}\n[[texture]]\nname = \"photo\"\nkind = \"png\"\npath = \"/nonexistent/photo.png\"\n",
        RTT
    );
    let (s, d) = src(&bad_png);
    let e = Renderer::new(&s, &d, &Options::default()).err().unwrap();
    assert!(e.msg.contains("photo.png"), "{e}");
    assert_eq!(e.line, line_of(&bad_png, "/nonexistent"), "{e}");

    let bad_obj = "o x\nv 0 0 0\nv 1 0 0\nf 1 2 3\n";
    let e = apusim_render::scene::MeshData::obj(bad_obj, "m.obj").unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("m.obj", 4));
}

#[test]
fn obj_import_triangulates_faces() {
    let obj =
        "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nf 1/1 2/2 3/3 4/4\n";
    let m = apusim_render::scene::MeshData::obj(obj, "q.obj").unwrap();
    assert_eq!(m.idx.len(), 6);
    assert_eq!(m.verts.len(), 4);
    assert_eq!(m.verts[2].uv, [1.0, 0.0]);
}

/// Golden checksums of each built-in scene at 96x64, two frames: (PNG pixels of the last
/// frame, trace statistics). Update deliberately when rendering changes. (Updates: the first
/// gspc Fig. 4 calibration — display blend reads per tile, denser courtyard, ground and floor
/// cast into the shadow maps, uncleared G-buffer, smoke and a bloom chain in lake; then the
/// Intel Gen7 HiZ layout, 16 bytes per 8x4 block — traces only, HiZ is conservative so the
/// PNGs stayed; then denser geometry — tessellated terrain, finer spheres, grass clumps —
/// 16-bit index buffers and normal maps on the terrain, walls and rocks; then RGBA16F HDR
/// scene colour and bloom targets — 8-byte texels, and values above 1 and below 1/255 that
/// RGBA8 clipped or quantized now reach the tone mapper, so the PNGs changed too; then the
/// deferred scene's forward-blended effects layer, sparks and smoke; then the five scenes of
/// the gspc Table 1 techniques: shooter, racing, postfx, particles, strategy.)
const GOLDEN: &[(&str, u64, u64)] = &[
    ("courtyard", 4094218715970475131, 5702746519424587301),
    ("deferred", 3796360576950156127, 2321441383535267091),
    ("lake", 1054917589439468576, 13920745651117986583),
    ("shooter", 14017710256797186688, 9421360988986755375),
    ("racing", 10695292696182542312, 12493161474081869220),
    ("postfx", 1679166408713050082, 5592450188407567880),
    ("particles", 3429032150318975069, 4795778321283849199),
    ("strategy", 11245557715143481810, 16583929568565020862),
];

/// Every colour target of every built-in scene is written and then sampled as a texture in
/// the same frame (the render-target → texture reuse of gspc §2, Fig. 6): the shadow maps and
/// cascades, the cube faces of `racing`, the G-buffer, the reflection, the scene depth of the
/// pre-passes, the minimap and every post-processing buffer. (That renders are deterministic
/// is what the golden checksums below check.)
#[test]
fn every_colour_target_of_every_scene_is_sampled_after_it_is_written() {
    for (name, _) in builtin::SCENES {
        let (s, d) = load(name).unwrap();
        let opt = Options {
            width: 96,
            height: 64,
            frames: Some(1),
            seed: 1,
        };
        let colour: Vec<&str> = d
            .targets
            .iter()
            .filter(|t| t.format != scene::TargetFormat::Depth)
            .map(|t| t.name.as_str())
            .collect();
        // (first byte, end, target) of each colour target, by address.
        let mut ranges: Vec<(u64, u64, usize)> = Vec::new();
        let mut v: Vec<Access> = Vec::new();
        render(&s, &d, &opt, &mut v, |r, _| {
            ranges = colour
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let surf = r.surface(n).unwrap();
                    (surf.base, surf.base + surf.bytes(), i)
                })
                .collect();
        })
        .unwrap();
        ranges.sort_unstable();
        let (mut first_write, mut first_read) =
            (vec![None; colour.len()], vec![None; colour.len()]);
        for (k, a) in v.iter().enumerate() {
            let j = ranges.partition_point(|r| r.0 <= a.addr);
            let Some(&(_, end, i)) = j.checked_sub(1).map(|j| &ranges[j]) else {
                continue;
            };
            if a.addr >= end {
                continue;
            }
            if a.op == Op::Write {
                first_write[i].get_or_insert(k);
            }
            if a.stream == Stream::DynamicTexture {
                first_read[i].get_or_insert(k);
            }
        }
        for (i, t) in colour.iter().enumerate() {
            match (first_write[i], first_read[i]) {
                (Some(w), Some(r)) => assert!(w < r, "{name}: `{t}` read before written"),
                other => panic!("{name}: `{t}` written/read at {other:?}"),
            }
        }
    }
}

/// Shader instruction fetches read the shader code region, never a surface: every kind's
/// code lies inside the region (which is allocated just before the back buffer), so the
/// `shader-instr` stream shares no line with the display or any texture or target. The
/// built-in scenes together draw with every shader kind.
#[test]
fn shader_instruction_fetches_stay_out_of_every_surface() {
    let mut kinds: Vec<scene::ShaderKind> = Vec::new();
    for (name, _) in builtin::SCENES {
        let (s, d) = load(name).unwrap();
        for draw in d.passes.iter().flat_map(|p| &p.draws) {
            if !kinds.contains(&draw.shader) {
                kinds.push(draw.shader);
            }
        }
        let opt = Options {
            width: 64,
            height: 64,
            frames: Some(1),
            seed: 1,
        };
        let mut names = vec!["backbuffer".to_string()];
        names.extend(d.textures.iter().map(|t| t.name.clone()));
        for t in &d.targets {
            names.push(t.name.clone());
            names.push(format!("{}.stencil", t.name));
        }
        // (name, first byte, end) of every surface.
        let mut ranges: Vec<(String, u64, u64)> = Vec::new();
        let mut display = 0;
        let mut v: Vec<Access> = Vec::new();
        render(&s, &d, &opt, &mut v, |r, _| {
            display = r.surface("backbuffer").unwrap().base;
            ranges = names
                .iter()
                .filter_map(|n| r.surface(n))
                .map(|surf| (surf.name.clone(), surf.base, surf.base + surf.bytes()))
                .collect();
        })
        .unwrap();
        assert!(ranges.len() > d.textures.len() + d.targets.len(), "{name}");
        let fetches: BTreeSet<u64> = v
            .iter()
            .filter(|a| a.stream == Stream::ShaderInstr)
            .map(|a| a.addr)
            .collect();
        assert!(!fetches.is_empty(), "{name}");
        for &a in &fetches {
            assert!(
                a < display,
                "{name}: shader fetch {a:#x} at or after the back buffer"
            );
            for (surf, first, end) in &ranges {
                assert!(
                    !(*first..*end).contains(&a),
                    "{name}: shader fetch {a:#x} inside `{surf}`"
                );
            }
        }
    }
    for k in scene::ShaderKind::ALL {
        assert!(kinds.contains(k), "no built-in scene draws with {k:?}");
    }
}

#[test]
fn builtin_scenes_match_golden_checksums() {
    let mut got = Vec::new();
    for (name, _) in builtin::SCENES {
        let (s, d) = load(name).unwrap();
        let opt = Options {
            width: 96,
            height: 64,
            frames: Some(2),
            seed: 1,
        };
        let mut pix = 0;
        let stats = render(&s, &d, &opt, &mut apusim_render::NullSink, |r, _| {
            pix = fnv(&r.backbuffer_rgba().2);
        })
        .unwrap();
        // Every scene exercises render-to-texture.
        assert!(stats.reads[Stream::DynamicTexture as usize] > 0, "{name}");
        assert!(stats.reads[Stream::StaticTexture as usize] > 0, "{name}");
        got.push((name.to_string(), pix, stats.checksum()));
    }
    let want: Vec<(String, u64, u64)> =
        GOLDEN.iter().map(|g| (g.0.to_string(), g.1, g.2)).collect();
    assert_eq!(got, want, "golden checksums changed: {got:?}");
}

const OCCLUSION: &str = r#"
name = "occlusion"
frames = 1
[[camera]]
name = "screen"
kind = "screen"
[[texture]]
name = "checker"
kind = "checker"
size = 32
[[mesh]]
name = "panel"
kind = "rect"
[[target]]
name = "depth"
format = "depth"
[[pass]]
name = "main"
color = ["backbuffer"]
depth = "depth"
camera = "screen"
clear_color = [0.0, 0.0, 0.0, 1.0]
clear_depth = 1.0
[[pass.draw]]
mesh = "panel"
shader = "unlit"
textures = ["checker"]
cull = "none"
translate = [0.0, 0.0, 0.2]
[[pass.draw]]
mesh = "panel"
shader = "SECOND"
textures = ["checker"]
cull = "none"
translate = [0.0, 0.0, 0.5]
"#;

#[test]
fn hiz_rejects_occluded_draws_and_late_z_runs_after_shading() {
    use apusim_render::emit::{decode_pc, Stage};
    let opt = Options {
        width: 64,
        height: 48,
        frames: None,
        seed: 1,
    };
    // A full-screen quad behind another: every tile of the second draw is rejected by HiZ,
    // so it issues no depth, texture or display access.
    let (s, d) = src(&OCCLUSION.replace("SECOND", "unlit"));
    let mut v: Vec<Access> = Vec::new();
    let st = render(&s, &d, &opt, &mut v, |_, _| {}).unwrap();
    let second: Vec<&Access> = v.iter().filter(|a| decode_pc(a.pc).2 == 1).collect();
    assert!(second.iter().all(|a| matches!(
        a.stream,
        Stream::HiZ
            | Stream::Other
            | Stream::ShaderData
            | Stream::Vertex
            | Stream::VertexIndex
            | Stream::ShaderInstr
    )));
    // 8x6 tiles, both triangles of the quad touch every tile on the diagonal band.
    assert!(st.hiz_rejected_tiles >= 48, "{}", st.hiz_rejected_tiles);
    // The HiZ buffer has one 16-byte entry per 8x4 block, 16x8 pixels per line: the depth
    // clear writes 4x6 lines, and each draw reads each of them (two tiles per line).
    let hiz = |op: Op, draw: Option<u16>| {
        v.iter()
            .filter(|a| a.stream == Stream::HiZ && a.op == op)
            .filter(|a| {
                draw.is_none_or(|dr| {
                    decode_pc(a.pc).2 == dr && decode_pc(a.pc).0 == Stage::HiZ as u8
                })
            })
            .map(|a| a.addr)
            .collect::<BTreeSet<u64>>()
    };
    let cleared = hiz(Op::Write, None);
    assert_eq!(cleared.len(), 24);
    assert_eq!(hiz(Op::Read, Some(1)), cleared);
    // First draw: every quad passes early depth and writes its depth line once.
    let first_depth_writes = v
        .iter()
        .filter(|a| a.stream == Stream::Depth && a.op == Op::Write && decode_pc(a.pc).2 == 0)
        .count();
    assert_eq!(first_depth_writes as u64, st.quads);
    // An alpha-tested draw in front runs its depth test late (after texturing).
    let (s, d) = src(&OCCLUSION
        .replace("SECOND", "alpha-test")
        .replace("translate = [0.0, 0.0, 0.5]", "translate = [0.0, 0.0, 0.1]"));
    let mut v: Vec<Access> = Vec::new();
    render(&s, &d, &opt, &mut v, |_, _| {}).unwrap();
    let stages: Vec<u8> = v
        .iter()
        .filter(|a| decode_pc(a.pc).2 == 1 && a.stream == Stream::Depth)
        .map(|a| decode_pc(a.pc).0)
        .collect();
    assert!(!stages.is_empty());
    assert!(stages.iter().all(|&s| s == Stage::LateDepth as u8));
}

#[test]
fn png_textures_are_imported_relative_to_the_scene_file() {
    let dir = tempfile::tempdir().unwrap();
    // A 2x2 PNG: red, green / blue, white.
    let px: [u8; 16] = [
        255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255,
    ];
    {
        let f = std::fs::File::create(dir.path().join("tiny.png")).unwrap();
        let mut e = png::Encoder::new(f, 2, 2);
        e.set_color(png::ColorType::Rgba);
        e.set_depth(png::BitDepth::Eight);
        e.write_header().unwrap().write_image_data(&px).unwrap();
    }
    let scene = RTT.replace(
        "[[texture]]\nname = \"checker\"\nkind = \"checker\"\nsize = 64",
        "[[texture]]\nname = \"checker\"\nkind = \"png\"\npath = \"tiny.png\"",
    );
    let path = dir.path().join("s.toml");
    std::fs::write(&path, &scene).unwrap();
    let (s, d) = load(path.to_str().unwrap()).unwrap();
    let r = Renderer::new(&s, &d, &Options::default()).unwrap();
    let t = r.surface("checker").unwrap();
    assert_eq!((t.width(), t.height(), t.mips.len()), (2, 2, 2));
    assert_eq!((t.texel(0, 1, 0) as u32).to_le_bytes(), [0, 255, 0, 255]);
    assert_eq!((t.texel(0, 0, 1) as u32).to_le_bytes(), [0, 0, 255, 255]);
    // A JPEG that is not one is an error naming the file and the scene line.
    std::fs::write(dir.path().join("bad.jpg"), b"not a jpeg").unwrap();
    let scene = scene.replace(
        "kind = \"png\"\npath = \"tiny.png\"",
        "kind = \"jpeg\"\npath = \"bad.jpg\"",
    );
    std::fs::write(&path, &scene).unwrap();
    let (s, d) = load(path.to_str().unwrap()).unwrap();
    let e = Renderer::new(&s, &d, &Options::default()).err().unwrap();
    assert!(e.msg.contains("bad.jpg"), "{e}");
    assert!(e.line > 1, "{e}");
}

const GEOMETRY: &str = r#"
name = "geometry"
frames = 1
[[camera]]
name = "main"
position = [0.0, 6.0, 12.0]
target = [0.0, 0.0, 0.0]
[[texture]]
name = "leaves"
kind = "leaves"
size = 64
[[mesh]]
name = "MESH"
kind = "KIND"
segments = 16
count = 10
size = [8.0, 1.0, 8.0]
height = 2.0
[[pass]]
name = "main"
color = ["backbuffer"]
camera = "main"
[[pass.draw]]
mesh = "MESH"
shader = "alpha-test"
textures = ["leaves"]
cull = "none"
"#;

/// Index lines fetched and vertex count of one draw of a generated mesh.
fn index_lines(kind: &str) -> usize {
    let (s, d) = src(&GEOMETRY.replace("KIND", kind));
    let mut v: Vec<Access> = Vec::new();
    render(&s, &d, &Options::default(), &mut v, |_, _| {}).unwrap();
    v.iter()
        .filter(|a| a.stream == Stream::VertexIndex)
        .map(|a| a.addr)
        .collect::<BTreeSet<u64>>()
        .len()
}

#[test]
fn small_meshes_fetch_16_bit_indices_and_foliage_is_crossed_quads() {
    assert_eq!(scene::index_bytes(1 << 16), 2);
    assert_eq!(scene::index_bytes((1 << 16) + 1), 4);
    // A 16-segment sphere: 32x16 quads = 1024 triangles, 3072 16-bit indices = 96 lines.
    assert_eq!(index_lines("sphere"), 96);
    // Ten clumps of three quads: 120 vertices, 180 indices = 360 bytes = 6 lines.
    let f = scene::MeshData::foliage(10, [8.0, 1.0, 8.0], 2.0, 1.0, 3);
    assert_eq!((f.verts.len(), f.idx.len()), (120, 180));
    assert_eq!(index_lines("foliage"), 6);
    // Clumps stand on the terrain of the same size, height and seed: each clump's lowest
    // vertex is just below the ground under it.
    for clump in f.verts.chunks(12) {
        let (x, z) = (clump[0].p[0] + clump[1].p[0], clump[0].p[2] + clump[1].p[2]);
        let (u, w) = (x * 0.5 / 8.0 + 0.5, z * 0.5 / 8.0 + 0.5);
        let ground = apusim_render::surface::value_noise(u, w, 4.0, 4, 3) * 2.0;
        let low = clump.iter().map(|v| v.p[1]).fold(f32::INFINITY, f32::min);
        assert!((low - (ground - 0.05)).abs() < 1e-4, "{low} {ground}");
    }
}

/// A draw binds at most `MAX_TEX` (8) textures: the base texture and six cube faces of an
/// `env-map` draw fit, a ninth is refused naming the file and the draw's line, and shaders
/// given fewer textures than they sample (an `env-map` without its faces, a `soft-particle`
/// without the depth, a `depth-of-field` without its inputs) render without panicking.
#[test]
fn texture_slots_are_bounded_and_missing_ones_do_not_panic() {
    let opt = Options {
        width: 32,
        height: 32,
        frames: None,
        seed: 1,
    };
    let nine = RTT.replace(
        "textures = [\"offscreen\"]",
        &format!("textures = [{}]", ["\"checker\""; 9].join(", ")),
    );
    let (s, d) = src(&nine);
    let e = Renderer::new(&s, &d, &opt)
        .err()
        .expect("nine textures refused");
    assert_eq!(e.to_string(), "test.toml:37: at most 8 textures per draw");
    for shader in ["env-map", "soft-particle", "depth-of-field"] {
        let text = RTT.replace(
            "shader = \"copy\"\ntextures = [\"offscreen\"]",
            &format!("shader = \"{shader}\"\ntextures = [\"offscreen\"]"),
        );
        let (s, d) = src(&text);
        let mut v: Vec<Access> = Vec::new();
        render(&s, &d, &opt, &mut v, |_, _| {}).unwrap();
        assert!(
            v.iter().any(|a| a.stream == Stream::DynamicTexture),
            "{shader}"
        );
    }
}
