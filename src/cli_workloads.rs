//! Built-in workloads on the command line: `apusim gen gpgpu|cpu` writes a generated trace,
//! `apusim gen champsim` a ChampSim-format instruction trace,
//! `apusim workloads` lists the generators, `apusim mixes` the papers' mixes, and
//! `apusim run --mix NAME` runs a mix with no other input: its per-agent traces are generated
//! deterministically from the seed on first use and cached as `.apt` files named by
//! `mixes::Job::key` (workload, every parameter, seed, generator version) in the cache
//! directory (`--cache-dir`, `$APUSIM_CACHE_DIR`, `$XDG_CACHE_HOME/apusim` or
//! `~/.cache/apusim`), so later runs read them back; `--no-cache` generates on the fly.

use anyhow::{anyhow, Result};
use apusim_sim::report::TextTable;
use apusim_trace::apt::AptWriter;
use apusim_trace::import::ChampSimWriter;
use apusim_trace::AccessSource;
use apusim_workloads::{champsim, cpu, gpgpu, mixes};
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum GenCommand {
    /// A rendered 3D scene (software render pipeline; see `apusim gen render --list`).
    Render(crate::cli_render::RenderArgs),
    /// A GPGPU kernel run on the SIMT layer (see `apusim workloads`). Its parameters, their
    /// defaults and ranges are its registry entry's (`apusim describe KERNEL`).
    Gpgpu {
        kernel: String,
        #[arg(short, long, value_parser = crate::writable_output)]
        output: PathBuf,
        /// Problem size in the kernel's unit (0: its default).
        #[arg(long)]
        size: Option<String>,
        /// Streaming multiprocessors (default 6).
        #[arg(long)]
        sms: Option<String>,
        /// Seed of the generated input (default 1).
        #[arg(long)]
        seed: Option<String>,
    },
    /// A CPU kernel (SPEC CPU 2006 stand-in, see `apusim workloads`). Its parameters, their
    /// defaults and ranges are its registry entry's (`apusim describe KERNEL`).
    Cpu {
        kernel: String,
        #[arg(short, long, value_parser = crate::writable_output)]
        output: PathBuf,
        /// Instructions to retire, 1 to 10^12 (already a trace of terabytes; default 10 M).
        #[arg(long)]
        instructions: Option<String>,
        /// Data-set size in the kernel's unit (0: its default).
        #[arg(long)]
        size: Option<String>,
        /// The core it runs on (default 0).
        #[arg(long)]
        core: Option<String>,
        /// Seed of the generated input (default 1).
        #[arg(long)]
        seed: Option<String>,
    },
    /// A ChampSim-format instruction trace (stream, chase or loop) for running apusim and
    /// ChampSim side by side; compressed with xz or gzip if the name ends in .xz or .gz.
    Champsim {
        /// stream (read-only sweep), chase (random pointer chase), loop (cache-friendly loop).
        #[arg(long)]
        kind: String,
        #[arg(short, long, value_parser = crate::writable_output)]
        output: PathBuf,
        /// Instructions to write, 1 to 10^12.
        #[arg(long, default_value_t = 10_000_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000_000_000))]
        instructions: u64,
        /// Working set in bytes (default: 4 MiB for stream and chase, 32 KiB for loop).
        #[arg(long)]
        bytes: Option<u64>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

pub fn gen(c: GenCommand) -> Result<()> {
    let (mut src, output) = match c {
        GenCommand::Render(a) => return crate::cli_render::run(a),
        GenCommand::Champsim {
            kind,
            output,
            instructions,
            bytes,
            seed,
        } => return gen_champsim(&kind, &output, instructions, bytes, seed),
        GenCommand::Gpgpu {
            kernel,
            output,
            size,
            sms,
            seed,
        } => {
            let entry = gpgpu::entry(&kernel)?;
            let given = crate::args::registry_values(
                entry.params,
                [("size", size), ("sms", sms), ("seed", seed)],
            )?;
            let (_, p) = gpgpu::params(&kernel, &given)?;
            (gpgpu::generate(&kernel, &p)?, output)
        }
        GenCommand::Cpu {
            kernel,
            output,
            instructions,
            size,
            core,
            seed,
        } => {
            let entry = cpu::entry(&kernel)?;
            let given = crate::args::registry_values(
                entry.params,
                [
                    ("instructions", instructions),
                    ("size", size),
                    ("core", core),
                    ("seed", seed),
                ],
            )?;
            let (_, p) = cpu::params(&kernel, &given)?;
            (cpu::generate(&kernel, &p)?, output)
        }
    };
    let header = src.header().clone();
    let mut w = AptWriter::create(&output, &header)?;
    let n = w.write_source(&mut *src)?;
    w.finish()?;
    eprintln!("wrote {n} accesses to {}", output.display());
    Ok(())
}

/// Write a generated ChampSim trace (atomically: `output` appears only when complete).
fn gen_champsim(
    kind: &str,
    output: &std::path::Path,
    instructions: u64,
    bytes: Option<u64>,
    seed: u64,
) -> Result<()> {
    let kind = champsim::Kind::parse(kind).map_err(|e| anyhow!("--kind: {e}"))?;
    let p = champsim::Params {
        kind,
        bytes: bytes.unwrap_or(kind.default_bytes()),
        instructions,
        seed,
    };
    let g = champsim::Generator::new(p).map_err(|e| anyhow!("{e}"))?;
    let mut w = ChampSimWriter::create(output)?;
    for r in g {
        w.write(&r)?;
    }
    let n = w.finish()?;
    eprintln!(
        "wrote {n} {} instructions ({} bytes of data) to {}",
        kind.name(),
        p.bytes,
        output.display()
    );
    Ok(())
}

pub fn list_workloads() -> String {
    let mut g = TextTable::new(["gpgpu kernel", "type", "description", "source"]);
    for e in gpgpu::REGISTRY.iter() {
        g.row(vec![
            e.name.into(),
            format!("{:?}", e.build.behaviour),
            e.description.into(),
            e.paper.into(),
        ]);
    }
    let mut c = TextTable::new(["cpu kernel", "group", "description", "stands in for"]);
    for e in cpu::REGISTRY.iter() {
        c.row(vec![
            e.name.into(),
            e.build.mpki_group.to_string(),
            e.description.into(),
            e.build.stands_in_for.into(),
        ]);
    }
    format!("{}\n{}", g.render(), c.render())
}

pub fn list_mixes() -> String {
    let mut t = TextTable::new(["mix", "gpu job", "paper frames", "cpu jobs", "source"]);
    for m in mixes::MIXES.iter() {
        // The title's frame region in the mix's paper, which `--frames paper` renders.
        let frames = match m.paper_frames {
            Some((a, b)) => format!("{a}-{b} ({})", b - a + 1),
            None => String::new(),
        };
        let gpu = match &m.gpu {
            mixes::GpuJob::Render {
                title,
                scene,
                width,
                height,
            } => format!("render {title} ({scene}) {width}x{height}"),
            mixes::GpuJob::Gpgpu(k) => k.to_string(),
        };
        t.row(vec![
            m.name.clone(),
            gpu,
            frames,
            m.cpus.join(" "),
            m.source.into(),
        ]);
    }
    t.render()
}
