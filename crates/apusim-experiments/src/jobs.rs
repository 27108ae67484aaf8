//! Generated workloads as run inputs, with the trace cache of `apusim run --mix`.
//!
//! A [`Job`] (from `apusim_workloads::mixes`) names a generator, every parameter and the seed;
//! its [`Job::key`] names its records exactly. [`JobInputs`] turns a list of jobs (a mix, or a
//! single rendering job) into [`Inputs`] for the simulator: each job is either generated on the
//! fly or, with a cache directory, written once as `KEY.apt` (atomically) and read back on
//! every later run, so a study that runs many policies over one mix generates it once.

use anyhow::{Context, Result};
use apusim_sim::run::{GpuProgram, Input, Inputs, Reopen};
use apusim_trace::apt::{AptWriter, ParallelAptReader};
use apusim_trace::AccessSource;
use apusim_workloads::mixes::{self, Job};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

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

pub use apusim_workloads::mixes::Alone;

/// The system of a run (`apusim run/sim`, the Python bindings): preset `preset`, or the
/// configuration file `config`, with the `set` overrides (and `seed`); with as many CPU
/// cores as mix `mix` has CPU jobs (the studies' 1C1G/2C1G/4C1G systems), none for a GPU
/// workload alone and one for a CPU kernel alone (`alone`), unless `set` gives `cpus`. Idle
/// cores would otherwise count as agents to partitioning and thread-aware policies (UCP
/// gives each at least one way).
pub fn load_system(
    preset: &str,
    config: Option<&Path>,
    set: &[String],
    seed: Option<u64>,
    mix: Option<&str>,
    alone: Option<Alone<'_>>,
) -> Result<apusim_sim::SystemConfig> {
    let mut set = set.to_vec();
    if let Some(s) = seed {
        set.push(format!("seed={s}"));
    }
    let mut cfg = match config {
        Some(path) => apusim_sim::SystemConfig::load_file(path, &set)?,
        None => apusim_sim::SystemConfig::load_preset(preset, &set)?,
    };
    let user_cpus = set
        .iter()
        .any(|kv| kv.split('=').next().is_some_and(|k| k.trim() == "cpus"));
    if !user_cpus {
        if let Some(m) = mix.and_then(mixes::mix) {
            cfg.cpus = m.cpus.len();
        } else if let Some(a) = alone {
            cfg.cpus = usize::from(!a.on_gpu());
        }
    }
    Ok(cfg)
}

/// The inputs of a run (`apusim run/sim`, the Python bindings): the jobs of mix `mix` at
/// `scale`, or a workload alone ([`alone_job_inputs`]), or else the trace files `traces`
/// (ChampSim traces read natively when `timed`). A mix's CPU jobs, or a CPU kernel alone,
/// retire `instructions` each when set; a mix's rendering job, or a scene alone, renders
/// `frames` ([`mixes::Frames`]; a count for a kernel, a CPU kernel or trace files is
/// refused). Generated jobs are cached under `cache`.
#[allow(clippy::too_many_arguments)]
pub fn run_inputs(
    traces: &[String],
    mix: Option<&str>,
    alone: Option<Alone<'_>>,
    resolution: (u32, u32),
    scale: u64,
    instructions: Option<u64>,
    frames: mixes::Frames,
    seed: u64,
    cache: Option<PathBuf>,
    timed: bool,
) -> Result<Box<dyn Inputs>> {
    if let Some(m) = mix {
        if mixes::mix(m).is_none() {
            anyhow::bail!("unknown mix `{m}` (see `apusim mixes`)");
        }
        return Ok(Box::new(JobInputs::mix_at(
            m,
            scale,
            instructions,
            frames,
            seed,
            cache,
        )?));
    }
    if frames != mixes::Frames::Scale && !matches!(alone, Some(Alone::Scene(_))) {
        anyhow::bail!(
            "frames are the length of a --mix's rendering job or a --scene's; trace files, \
             --kernel and --cpu have their own length"
        );
    }
    if let Some(which) = alone {
        let scale = match which {
            Alone::Scene(name) => frames.resolve(scale, None, &format!("scene {name}"))? as u64,
            _ => scale,
        };
        return Ok(Box::new(alone_job_inputs(
            which,
            resolution,
            scale,
            instructions,
            seed,
            cache,
        )?));
    }
    Ok(Box::new(
        apusim_sim::inputs::TraceInputs::parse(traces)?.native_champsim(timed),
    ))
}

/// A workload alone as run inputs: `scale` frames of a built-in scene at `resolution`, a
/// GPGPU kernel at `scale` times its default elements, or a CPU kernel retiring
/// `instructions` (default `scale ×` 5 M; [`mixes::cpu_alone_job`]) (`apusim run/sim
/// --scene`, `--kernel` and `--cpu`, and sweep points of `scene`, `kernel` or `cpu`).
pub fn alone_job_inputs(
    which: Alone<'_>,
    resolution: (u32, u32),
    scale: u64,
    instructions: Option<u64>,
    seed: u64,
    cache: Option<PathBuf>,
) -> Result<JobInputs> {
    Ok(match which {
        Alone::Scene(scene) => {
            let frames = u32::try_from(scale).unwrap_or(u32::MAX);
            let (width, height) = resolution;
            let job = scene_job(scene, width, height, frames, seed)?;
            let description =
                format!("scene {scene} ({width}x{height}, {frames} frame(s), seed {seed})");
            JobInputs::new(vec![job], cache, description)
        }
        Alone::Kernel(kernel) => {
            let job = kernel_job(kernel, scale, seed)?;
            let description = format!("kernel {kernel} (scale {scale}, seed {seed})");
            JobInputs::new(vec![job], cache, description)
        }
        Alone::Cpu(kernel) => {
            let job = mixes::cpu_alone_job(kernel, scale, instructions, seed)?;
            let length = match instructions {
                Some(n) => format!("{n} instructions"),
                None => format!("scale {scale}"),
            };
            let description = format!("CPU kernel {kernel} ({length}, seed {seed})");
            JobInputs::new(vec![job], cache, description)
        }
    })
}

/// A resolution as `WIDTHxHEIGHT`, checked by the scene registry's `width` and `height`
/// declarations (`apusim_render::builtin::parse_resolution`), as a message.
pub fn parse_resolution(s: &str) -> std::result::Result<(u32, u32), String> {
    apusim_render::builtin::parse_resolution(s).map_err(|e| e.to_string())
}

/// The rendering job of built-in scene or scene file `scene` ([`mixes::SceneRef::resolve`]):
/// `frames` frames at `width`×`height`, its procedural content seeded by `seed`. An unknown
/// scene is refused, naming the nearest built-in one; a malformed scene file, naming its line.
pub fn scene_job(scene: &str, width: u32, height: u32, frames: u32, seed: u64) -> Result<Job> {
    let scene = mixes::SceneRef::resolve(scene)?;
    Ok(Job {
        label: format!("gpu {}", scene.label()),
        spec: mixes::JobSpec::Render {
            scene,
            width,
            height,
            frames,
            seed,
        },
    })
}

/// The job running GPGPU kernel `kernel` (`apusim workloads`) once, with `scale ×` its
/// default elements (1: its default size), its data seeded by `seed`: the kernel's registry
/// entry checks both and sizes it (`gpgpu::params`, as a mix's GPU job is sized). An unknown
/// kernel is refused, naming the nearest one.
pub fn kernel_job(kernel: &str, scale: u64, seed: u64) -> Result<Job> {
    use apusim_registry::Value;
    use apusim_workloads::gpgpu;
    let (k, params) = gpgpu::params(
        kernel,
        &[("scale", Value::Int(scale)), ("seed", Value::Int(seed))],
    )
    .map_err(|e| anyhow::anyhow!("{e} (see `apusim workloads`)"))?;
    Ok(Job {
        label: format!("gpu {}", k.name),
        spec: mixes::JobSpec::Gpgpu {
            kernel: k.name,
            params,
        },
    })
}

/// Where `job`'s cached trace lives in `dir`.
pub fn cached_path(dir: &Path, job: &Job) -> PathBuf {
    dir.join(format!("{}.apt", job.key()))
}

/// Make sure `job`'s trace is in the cache `dir` (generating and writing it atomically if
/// not) and return its path.
pub fn ensure_cached(dir: &Path, job: &Job) -> Result<PathBuf> {
    apusim_trace::output::sweep_stale_once(dir);
    let path = cached_path(dir, job);
    if !path.exists() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the trace cache {}", dir.display()))?;
        let mut src = apusim_sim::progress::watch(job.open()?, format!("generating {}", job.label));
        let header = src.header().clone();
        let mut w = AptWriter::create(&path, &header)?;
        w.write_source(&mut src)?;
        w.finish()?;
    }
    Ok(path)
}

/// A list of generated jobs as the inputs of a run.
pub struct JobInputs {
    jobs: Vec<Job>,
    /// Directory of cached per-job traces; `None` generates every job on the fly.
    cache: Option<PathBuf>,
    description: String,
}

impl JobInputs {
    /// The jobs of mix `name` at `scale` and `seed` (see `apusim_workloads::mixes::jobs`).
    pub fn mix(name: &str, scale: u64, seed: u64, cache: Option<PathBuf>) -> Result<JobInputs> {
        JobInputs::mix_at(name, scale, None, mixes::Frames::Scale, seed, cache)
    }

    /// [`JobInputs::mix`] with CPU jobs of `instructions` each when set and a rendering job
    /// of `frames` (`apusim_workloads::mixes::jobs_at`).
    pub fn mix_at(
        name: &str,
        scale: u64,
        instructions: Option<u64>,
        frames: mixes::Frames,
        seed: u64,
        cache: Option<PathBuf>,
    ) -> Result<JobInputs> {
        let jobs = mixes::jobs_at(name, scale, instructions, frames, seed)
            .with_context(|| format!("mix {name}"))?;
        let mut length = match instructions {
            Some(n) => format!(", CPU jobs of {n} instructions"),
            None => String::new(),
        };
        if frames != mixes::Frames::Scale {
            let rendered = jobs.iter().find_map(|j| match &j.spec {
                mixes::JobSpec::Render { frames, .. } => Some(*frames),
                _ => None,
            });
            match (rendered, frames) {
                (Some(n), mixes::Frames::Paper) => {
                    length += &format!(", {n} frame(s), the title's region in its paper")
                }
                (Some(n), _) => length += &format!(", {n} frame(s)"),
                (None, _) => {}
            }
        }
        Ok(JobInputs {
            jobs,
            cache,
            description: format!("mix {name} (scale {scale}{length}, seed {seed})"),
        })
    }

    /// Any list of jobs, described as `description` in reports.
    pub fn new(jobs: Vec<Job>, cache: Option<PathBuf>, description: String) -> JobInputs {
        JobInputs {
            jobs,
            cache,
            description,
        }
    }

    pub fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    /// How many of the jobs run on CPU cores (every job but the GPU's).
    pub fn cpu_jobs(&self) -> usize {
        self.jobs
            .iter()
            .filter(|j| matches!(j.spec, mixes::JobSpec::Cpu { .. }))
            .count()
    }

    /// The source of one job: generated on the fly, or read from the cached `.apt`.
    fn open_job(&self, job: &Job) -> Result<Box<dyn AccessSource>> {
        match &self.cache {
            None => Ok(job.open()?),
            Some(dir) => Ok(ParallelAptReader::open_default(ensure_cached(dir, job)?)?),
        }
    }
}

impl Inputs for JobInputs {
    fn open(&self) -> Result<Vec<Input>> {
        self.jobs
            .iter()
            .map(|job| {
                let source = self
                    .open_job(job)
                    .with_context(|| format!("{}: {}", self.description, job.label))?;
                let kernels = job
                    .program()
                    .with_context(|| format!("{}: {}", self.description, job.label))?;
                let program = match (kernels, job.frames()) {
                    (Some(k), _) => Some(GpuProgram::Kernels(k)),
                    (None, Some(f)) => Some(GpuProgram::Frames(f)),
                    (None, None) => None,
                };
                Ok(Input {
                    name: job.label.clone(),
                    source,
                    remap: None,
                    champsim: None,
                    program,
                })
            })
            .collect()
    }

    fn describe(&self) -> String {
        self.description.clone()
    }

    fn keys(&self) -> Option<Vec<String>> {
        Some(
            self.jobs
                .iter()
                .map(|j| format!("job:{}", j.key()))
                .collect(),
        )
    }

    fn reopen(&self, index: usize) -> Option<Reopen> {
        let one = JobInputs {
            jobs: vec![self.jobs.get(index)?.clone()],
            cache: self.cache.clone(),
            description: self.description.clone(),
        };
        Some(Box::new(move || {
            one.open()?
                .pop()
                .ok_or_else(|| anyhow::anyhow!("{}: no job to reopen", one.description))
        }))
    }
}

/// Generate every distinct job of `inputs` into the cache `dir` now, in parallel, so that runs
/// started in parallel afterwards never generate the same trace twice.
pub fn prepare_all(dir: &Path, inputs: &[JobInputs]) -> Result<()> {
    let distinct: BTreeMap<String, &Job> = inputs
        .iter()
        .flat_map(|i| i.jobs())
        .map(|j| (j.key(), j))
        .collect();
    let jobs: Vec<&Job> = distinct.into_values().collect();
    crate::par_counted(&jobs, "workloads generated", |j| {
        ensure_cached(dir, j).with_context(|| format!("generating {}", j.label))
    })?;
    Ok(())
}

/// Each of `jobs` alone as the inputs of one run (described as the job's label), with every
/// trace generated into `dir` now.
pub fn alone_inputs(dir: &Path, jobs: &[Job]) -> Result<Vec<JobInputs>> {
    let inputs: Vec<JobInputs> = jobs
        .iter()
        .map(|j| JobInputs::new(vec![j.clone()], Some(dir.to_path_buf()), j.label.clone()))
        .collect();
    prepare_all(dir, &inputs)?;
    Ok(inputs)
}

/// Where a study keeps its traces: the trace cache if there is one, else a temporary directory
/// that lives as long as this value.
pub struct TraceDir {
    path: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

impl TraceDir {
    pub fn new(cache: Option<&Path>) -> Result<TraceDir> {
        Ok(match cache {
            Some(d) => TraceDir {
                path: d.to_path_buf(),
                _temp: None,
            },
            None => {
                let t = tempfile::tempdir().context("creating a temporary trace directory")?;
                TraceDir {
                    path: t.path().to_path_buf(),
                    _temp: Some(t),
                }
            }
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel alone is the same job as the GPU job of a mix that runs it (the same trace
    /// cache key at every scale: one sizing rule), and a misspelt kernel gets the nearest.
    #[test]
    fn a_kernel_alone_is_the_mix_gpu_job() {
        for scale in [1, 3, 16] {
            let mix = mixes::jobs("S16", scale, 5).unwrap();
            let alone = kernel_job("blackscholes", scale, 5).unwrap();
            assert_eq!(alone.key(), mix.last().unwrap().key(), "scale {scale}");
        }
        let e = kernel_job("blackschole", 1, 1).unwrap_err().to_string();
        assert!(e.contains("did you mean `blackscholes`"), "{e}");
        assert!(kernel_job("bfs", 0, 1).is_err());
    }
}
