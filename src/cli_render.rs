//! `apusim gen render`: render a scene with the software pipeline of apusim-render, write the
//! GPU's memory accesses as an `.apt` trace and optionally each frame as a PNG.

use anyhow::{bail, Context, Result};
use apusim_render::source::STREAMS;
use apusim_render::{builtin, emit::NullSink};
use apusim_sim::report::{write_atomic, TextTable};
use apusim_trace::apt::AptWriter;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct RenderArgs {
    /// A built-in scene name (see --list) or a scene TOML file.
    pub scene: Option<String>,
    /// Output trace (.apt); without it only statistics are printed.
    #[arg(short, long, value_parser = crate::writable_output)]
    pub output: Option<PathBuf>,
    /// Frames to render (default: the scene's). This and the width, height and seed are the
    /// scenes' registry parameters (`apusim describe lake`: defaults and ranges).
    #[arg(long)]
    pub frames: Option<String>,
    /// Frame width in pixels (default 640).
    #[arg(long)]
    pub width: Option<String>,
    /// Frame height in pixels (default 400).
    #[arg(long)]
    pub height: Option<String>,
    /// Write each displayed frame as DIR/SCENE-FRAME.png.
    #[arg(long, value_name = "DIR")]
    pub png: Option<PathBuf>,
    /// Seed of the procedural content (default 1).
    #[arg(long)]
    pub seed: Option<String>,
    /// List the built-in scenes.
    #[arg(long)]
    pub list: bool,
}

pub fn run(a: RenderArgs) -> Result<()> {
    if a.list {
        let mut t = TextTable::new(["scene", "description"]);
        for e in builtin::REGISTRY.iter() {
            t.row(vec![e.name.to_string(), e.description.to_string()]);
        }
        print!("{}", t.render());
        return Ok(());
    }
    let Some(scene) = a.scene else {
        bail!("name a scene (apusim gen render --list) or a scene file");
    };
    let given = crate::args::registry_values(
        builtin::PARAMS,
        [
            ("width", a.width),
            ("height", a.height),
            ("frames", a.frames),
            ("seed", a.seed),
        ],
    )?;
    // A built-in scene by name, or a scene file (which takes the same parameters).
    let builtin_name = builtin::get(&scene).map(|_| scene.as_str());
    let opt = builtin::options(builtin_name, &given)?;
    let (src, desc) = apusim_render::load(&scene)?;
    if let Some(dir) = &a.png {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let mut png_err: Option<anyhow::Error> = None;
    let png_dir = a.png.clone();
    let name = desc.name.clone();
    let after = |r: &apusim_render::Renderer, f: u32| {
        if let (Some(dir), None) = (&png_dir, &png_err) {
            let path = dir.join(format!("{name}-{f}.png"));
            if let Err(e) = write_atomic(&path, &r.backbuffer_png()) {
                png_err = Some(e.context(format!("writing {}", path.display())));
            }
        }
    };
    let start = std::time::Instant::now();
    let (stats, bytes) = match &a.output {
        Some(out) => {
            let header = apusim_render::source::header(&scene, &opt);
            let mut w = AptWriter::create(out, &header)?;
            let stats = apusim_render::render(&src, &desc, &opt, &mut w, after)
                .map_err(anyhow::Error::msg)?;
            let bytes = w.bytes_written();
            w.finish()?;
            (stats, Some(bytes))
        }
        None => (
            apusim_render::render(&src, &desc, &opt, &mut NullSink, after)
                .map_err(anyhow::Error::msg)?,
            None,
        ),
    };
    if let Some(e) = png_err {
        return Err(e);
    }
    let secs = start.elapsed().as_secs_f64();
    let mut t = TextTable::new(["stream", "reads", "writes", "share"]);
    let total = stats.total().max(1) as f64;
    for s in STREAMS {
        let (r, w) = (stats.reads[*s as usize], stats.writes[*s as usize]);
        if r + w > 0 {
            t.row(vec![
                s.name().into(),
                r.to_string(),
                w.to_string(),
                format!("{:.1}%", 100.0 * (r + w) as f64 / total),
            ]);
        }
    }
    print!("{}", t.render());
    println!(
        "{}: {} accesses, {} triangles, {} quads, {} pixels shaded, {} HiZ-rejected tiles, {:.2} s{}",
        desc.name,
        stats.total(),
        stats.triangles,
        stats.quads,
        stats.pixels_shaded,
        stats.hiz_rejected_tiles,
        secs,
        bytes
            .map(|b| format!(", {:.1} MB written", b as f64 / 1e6))
            .unwrap_or_default()
    );
    Ok(())
}
