//! Built-in workloads on the command line: `apusim gen gpgpu|cpu` writes a generated trace,
//! `apusim workloads` lists the generators, `apusim mixes` the papers' mixes, and
//! `apusim run --mix NAME` runs a mix with no other input: its per-agent traces are generated
//! deterministically from the seed on first use and cached as `.apt` files named by
//! `mixes::Job::key` (workload, every parameter, seed, generator version) in the cache
//! directory (`--cache-dir`, `$APUSIM_CACHE_DIR`, `$XDG_CACHE_HOME/apusim` or
//! `~/.cache/apusim`), so later runs read them back; `--no-cache` generates on the fly.

use anyhow::{Context, Result};
use apusim_sim::report::TextTable;
use apusim_sim::run::{Input, Inputs};
use apusim_trace::apt::{AptReader, AptWriter};
use apusim_trace::AccessSource;
use apusim_workloads::{cpu, gpgpu, mixes};
use clap::Subcommand;
use std::path::PathBuf;

#[derive(Subcommand)]
pub enum GenCommand {
    /// A rendered 3D scene (software render pipeline; see `apusim gen render --list`).
    Render(crate::cli_render::RenderArgs),
    /// A GPGPU kernel run on the SIMT layer (see `apusim workloads`).
    Gpgpu {
        kernel: String,
        #[arg(short, long)]
        output: PathBuf,
        /// Problem size in the kernel's unit (0: its default).
        #[arg(long, default_value_t = 0)]
        size: usize,
        /// Streaming multiprocessors.
        #[arg(long, default_value_t = 6)]
        sms: u16,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// A CPU kernel (SPEC CPU 2006 stand-in, see `apusim workloads`).
    Cpu {
        kernel: String,
        #[arg(short, long)]
        output: PathBuf,
        /// Instructions to retire.
        #[arg(long, default_value_t = 10_000_000)]
        instructions: u64,
        /// Data-set size in the kernel's unit (0: its default).
        #[arg(long, default_value_t = 0)]
        size: usize,
        /// The core it runs on.
        #[arg(long, default_value_t = 0)]
        core: u8,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
}

pub fn gen(c: GenCommand) -> Result<()> {
    let (mut src, output) = match c {
        GenCommand::Render(a) => return crate::cli_render::run(a),
        GenCommand::Gpgpu {
            kernel,
            output,
            size,
            sms,
            seed,
        } => {
            let mut p = gpgpu::GpgpuParams {
                size,
                seed,
                ..Default::default()
            };
            p.gpu.sms = sms;
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
            let p = cpu::CpuParams {
                core,
                instructions,
                size,
                seed,
            };
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

pub fn list_workloads() -> String {
    let mut g = TextTable::new(["gpgpu kernel", "type", "description", "source"]);
    for k in gpgpu::KERNELS {
        g.row(vec![
            k.name.into(),
            format!("{:?}", k.behaviour),
            k.description.into(),
            k.paper_source.into(),
        ]);
    }
    let mut c = TextTable::new(["cpu kernel", "group", "description", "stands in for"]);
    for k in cpu::KERNELS {
        c.row(vec![
            k.name.into(),
            k.mpki_group.to_string(),
            k.description.into(),
            k.stands_in_for.into(),
        ]);
    }
    format!("{}\n{}", g.render(), c.render())
}

pub fn list_mixes() -> String {
    let mut t = TextTable::new(["mix", "gpu job", "cpu jobs", "source"]);
    for m in mixes::MIXES.iter() {
        let gpu = match &m.gpu {
            mixes::GpuJob::Render {
                title,
                width,
                height,
            } => format!("render {title} {width}x{height}"),
            mixes::GpuJob::Gpgpu(k) => k.to_string(),
        };
        t.row(vec![m.name.clone(), gpu, m.cpus.join(" "), m.source.into()]);
    }
    t.render()
}

/// A named mix as the run's inputs.
pub struct MixInputs {
    pub name: String,
    pub scale: u64,
    pub seed: u64,
    /// Directory of cached per-agent traces; `None` generates every job on the fly.
    pub cache: Option<PathBuf>,
}

impl MixInputs {
    /// The source of one job: generated on the fly, or (with a cache) read from the cached
    /// `.apt`, which is generated and written atomically first if it is not there yet.
    fn open_job(&self, job: &mixes::Job) -> Result<Box<dyn AccessSource>> {
        let Some(dir) = &self.cache else {
            return Ok(job.open()?);
        };
        let path = dir.join(format!("{}.apt", job.key()));
        if !path.exists() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("creating the trace cache {}", dir.display()))?;
            let mut src = job.open()?;
            let header = src.header().clone();
            let mut w = AptWriter::create(&path, &header)?;
            w.write_source(&mut *src)?;
            w.finish()?;
        }
        Ok(Box::new(AptReader::open(&path)?))
    }
}

/// The trace cache directory: `$APUSIM_CACHE_DIR`, else `$XDG_CACHE_HOME/apusim`, else
/// `$HOME/.cache/apusim`; `None` when none of them is set.
pub fn default_cache_dir() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("APUSIM_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("apusim")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("apusim")))
}

impl Inputs for MixInputs {
    fn open(&self) -> Result<Vec<Input>> {
        let jobs = mixes::jobs(&self.name, self.scale, self.seed)
            .with_context(|| format!("mix {}", self.name))?;
        jobs.iter()
            .map(|job| {
                let source = self
                    .open_job(job)
                    .with_context(|| format!("mix {}: {}", self.name, job.label))?;
                Ok(Input {
                    name: job.label.clone(),
                    source,
                    remap: None,
                })
            })
            .collect()
    }
    fn describe(&self) -> String {
        format!(
            "mix {} (scale {}, seed {})",
            self.name, self.scale, self.seed
        )
    }
}
