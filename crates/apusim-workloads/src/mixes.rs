//! Named heterogeneous mixes reproducing the papers' experimental designs with apusim's
//! workloads:
//!
//! - `S1`–`S18`, `D1`–`D18`, `Q1`–`Q18`: the 1C1G/2C1G/4C1G mixes of
//!   drp-reuse-probability-shared-llc.txt Table 3 (GPU job `n` is the same in Sn, Dn and Qn;
//!   the CPU jobs are the table's memory-sensitive SPEC programs, played by [`crate::cpu`]
//!   kernels). The fourteen 3D-rendering GPU jobs (n = 1–14, Table 1) are frames of the
//!   built-in scenes of `apusim-render`, rendered by its software pipeline at the game's
//!   resolution: each title is played by the scene whose rendering techniques it shares (see
//!   `DRP_GPU`), with the procedural content seeded per title; n = 15–18 are the CUDA jobs
//!   of Table 2 (cfd, blackscholes, fastwalsh, reduction).
//! - `TAP-<k>C-<T>` for k ∈ {1, 2, 4} and T ∈ {A, …, E}: the TAP workload sets of
//!   tap-tlp-aware-llc.txt Table 7, one GPGPU job of type T (as measured, `TAP_GPU`) with k CPU jobs drawn
//!   from the cache-friendly group of Table 5 (deterministic rotation through the group);
//!   `TAP-S-<T>` pairs it with a streaming CPU job (the Stream-CPU set).
//! - `H1`–`H20`, `L1`–`L20`, `HL1`–`HL20`: the four-core mixes of gpu-access-criticality-
//!   dram-scheduling.txt §5, the twenty GPU workloads (fourteen rendering, then LBM, CFD, BFS,
//!   FASTWALSH, BLACKSCHOLES, REDUCTION of its Table 3) each with four CPU jobs of the H group
//!   (bwaves, lbm, leslie3d, libquantum, mcf, milc, soplex), the L group (bzip2, gcc,
//!   omnetpp, sphinx3, wrf, zeusmp) or two of each. The paper does not list its mixes'
//!   members; ours rotate deterministically through the groups.

use crate::cpu::{self, CpuParams};
pub use crate::frames::Frames;
use crate::frames::{CRIT_TABLE2, DRP_TABLE1};
use crate::gpgpu::{self, GpgpuParams};
pub use crate::scene_ref::SceneRef;
use crate::WorkloadError;
use apusim_registry::Value;
use apusim_trace::AccessSource;
use std::sync::LazyLock;

/// The GPU job of a mix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuJob {
    /// A 3D rendering job: the title's frames are played by the built-in render scene
    /// `scene` at the title's resolution.
    Render {
        title: &'static str,
        scene: &'static str,
        width: u32,
        height: u32,
    },
    /// A GPGPU kernel of [`gpgpu::KERNELS`].
    Gpgpu(&'static str),
}

impl GpuJob {
    pub fn name(&self) -> String {
        match self {
            GpuJob::Render {
                title,
                scene,
                width,
                height,
            } => format!("{title} (render {scene} {width}x{height})"),
            GpuJob::Gpgpu(k) => k.to_string(),
        }
    }
}

/// One named mix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mix {
    pub name: String,
    /// Paper and table it reproduces.
    pub source: &'static str,
    pub gpu: GpuJob,
    /// CPU kernels, on cores 0, 1, ...
    pub cpus: Vec<&'static str>,
    /// A rendering job's frame region (first and last frame) in the table of the mix's
    /// paper, which `--frames paper` renders ([`Frames::Paper`]); `None` for GPGPU jobs.
    pub paper_frames: Option<(u32, u32)>,
}

const fn render(title: &'static str, scene: &'static str, width: u32, height: u32) -> GpuJob {
    GpuJob::Render {
        title,
        scene,
        width,
        height,
    }
}

/// drp Table 1 / Table 2: GPU job n (1-based) of the S/D/Q series. The captured frames of the
/// paper cannot be had, so each game is played by the built-in scene closest to its rendering
/// techniques: `deferred` (indoor scenes with many lights and stencil work: the Doom 3 engine
/// titles DOOM3 and Quake4 with stencil shadows, Riddick, Left 4 Dead, 3DMark06's indoor
/// Proxycon, and Unreal Engine 3's deferred lighting), `lake` (planar water reflections and
/// environment passes: Canyon Flight, Crysis, Half-Life 2, Need for Speed) and `courtyard`
/// (outdoor shadow-mapped scenes with foliage, particles and bloom: Firefly Forest, Deep
/// Freeze, Call of Duty 2, UT2004).
const DRP_GPU: [GpuJob; 18] = [
    render("3DMark06 GT1", "deferred", 1280, 1024),
    render("3DMark06 GT2", "courtyard", 1280, 1024),
    render("3DMark06 HDR1", "lake", 1280, 1024),
    render("3DMark06 HDR2", "courtyard", 1280, 1024),
    render("COD2", "courtyard", 1920, 1200),
    render("Crysis", "lake", 1920, 1200),
    render("DOOM3", "deferred", 1600, 1200),
    render("HL2", "lake", 1600, 1200),
    render("L4D", "deferred", 1280, 1024),
    render("NFS", "lake", 1280, 1024),
    render("Quake4", "deferred", 1600, 1200),
    render("COR", "deferred", 1280, 1024),
    render("UT2004", "courtyard", 1600, 1200),
    render("UT3", "deferred", 1280, 1024),
    GpuJob::Gpgpu("cfd"),
    GpuJob::Gpgpu("blackscholes"),
    GpuJob::Gpgpu("fastwalsh"),
    GpuJob::Gpgpu("reduction"),
];

/// drp Table 3: (Sn, Dn, Qn) CPU jobs.
const DRP_CPU: [(&[&str], &[&str], &[&str]); 18] = [
    (
        &["wrf"],
        &["mcf", "milc"],
        &["gcc", "soplex", "sphinx3", "wrf"],
    ),
    (
        &["omnetpp"],
        &["bwaves", "milc"],
        &["gcc", "mcf", "sphinx3", "zeusmp"],
    ),
    (
        &["lbm"],
        &["bzip2", "lbm"],
        &["bzip2", "lbm", "leslie3d", "soplex"],
    ),
    (
        &["sphinx3"],
        &["lbm", "libquantum"],
        &["bzip2", "lbm", "libquantum", "omnetpp"],
    ),
    (
        &["lbm"],
        &["bzip2", "lbm"],
        &["bzip2", "lbm", "leslie3d", "soplex"],
    ),
    (
        &["mcf"],
        &["soplex", "wrf"],
        &["mcf", "milc", "sphinx3", "zeusmp"],
    ),
    (
        &["libquantum"],
        &["libquantum", "omnetpp"],
        &["bwaves", "libquantum", "milc", "omnetpp"],
    ),
    (
        &["gcc"],
        &["bwaves", "omnetpp"],
        &["bwaves", "mcf", "milc", "zeusmp"],
    ),
    (
        &["libquantum"],
        &["libquantum", "omnetpp"],
        &["bwaves", "libquantum", "milc", "omnetpp"],
    ),
    (
        &["leslie3d"],
        &["gcc", "wrf"],
        &["bwaves", "mcf", "milc", "omnetpp"],
    ),
    (
        &["bwaves"],
        &["mcf", "zeusmp"],
        &["bzip2", "leslie3d", "soplex", "wrf"],
    ),
    (
        &["zeusmp"],
        &["bzip2", "leslie3d"],
        &["gcc", "leslie3d", "soplex", "wrf"],
    ),
    (
        &["soplex"],
        &["sphinx3", "zeusmp"],
        &["bzip2", "lbm", "leslie3d", "libquantum"],
    ),
    (
        &["zeusmp"],
        &["bzip2", "leslie3d"],
        &["gcc", "leslie3d", "soplex", "wrf"],
    ),
    (
        &["sphinx3"],
        &["lbm", "libquantum"],
        &["bzip2", "lbm", "libquantum", "omnetpp"],
    ),
    (
        &["gcc"],
        &["libquantum", "omnetpp"],
        &["bwaves", "libquantum", "milc", "omnetpp"],
    ),
    (
        &["mcf"],
        &["libquantum", "omnetpp"],
        &["bwaves", "libquantum", "milc", "omnetpp"],
    ),
    (
        &["libquantum"],
        &["gcc", "wrf"],
        &["bwaves", "mcf", "milc", "omnetpp"],
    ),
];

/// TAP Table 5's cache-friendly group (the members we model).
const TAP_FRIENDLY: [&str; 9] = [
    "bzip2", "gcc", "mcf", "omnetpp", "leslie3d", "soplex", "lbm", "wrf", "sphinx3",
];
/// TAP Table 5's streaming group (the members we model).
const TAP_STREAM: [&str; 4] = ["libquantum", "bwaves", "milc", "zeusmp"];
/// One GPGPU kernel per TAP type A–E, by type as `apusim study tap-fig2` measures it on the
/// tap Table 4 system (tap §2.2's method: CPI and LLC MPKI alone with 1 to 32 LLC ways at
/// 4096 sets; docs/results.md has the table). For each type, a kernel listed with that type
/// (tap Table 6) if one measures so, else the first kernel of `apusim gpgpu` measured as that
/// type and not already taken (`apusim_experiments::tap_char::tap_kernels`). No kernel
/// measures A (every one misses more than 1 MPKI at 256 KB), so A takes the closest of the
/// rest: lud, the lowest MPKI at 256 KB (33) among kernels whose CPI stays within 25% of the
/// ideal 2.0 at every size.
const TAP_GPU: [(char, &str); 5] = [
    ('A', "lud"),
    ('B', "lbm"),
    ('C', "sort"),
    ('D', "matrixmul"),
    ('E', "dct"),
];

const CRIT_H: [&str; 7] = [
    "bwaves",
    "lbm",
    "leslie3d",
    "libquantum",
    "mcf",
    "milc",
    "soplex",
];
const CRIT_L: [&str; 6] = ["bzip2", "gcc", "omnetpp", "sphinx3", "wrf", "zeusmp"];
const CRIT_GPGPU: [&str; 6] = [
    "lbm",
    "cfd",
    "bfs",
    "fastwalsh",
    "blackscholes",
    "reduction",
];

fn all_mixes() -> Vec<Mix> {
    let mut v = Vec::new();
    for (i, gpu) in DRP_GPU.iter().enumerate() {
        let (s, d, q) = DRP_CPU[i];
        for (prefix, cpus) in [("S", s), ("D", d), ("Q", q)] {
            v.push(Mix {
                name: format!("{prefix}{}", i + 1),
                source: "drp-reuse-probability-shared-llc Table 3",
                gpu: gpu.clone(),
                cpus: cpus.to_vec(),
                paper_frames: DRP_TABLE1.get(i).copied(),
            });
        }
    }
    for k in [1usize, 2, 4] {
        for (ti, (ty, kernel)) in TAP_GPU.iter().enumerate() {
            let cpus = (0..k)
                .map(|j| TAP_FRIENDLY[(ti * 4 + k + j * 2) % TAP_FRIENDLY.len()])
                .collect();
            v.push(Mix {
                name: format!("TAP-{k}C-{ty}"),
                source: "tap-tlp-aware-llc Table 7",
                gpu: GpuJob::Gpgpu(kernel),
                cpus,
                paper_frames: None,
            });
        }
    }
    for (ti, (ty, kernel)) in TAP_GPU.iter().enumerate() {
        v.push(Mix {
            name: format!("TAP-S-{ty}"),
            source: "tap-tlp-aware-llc Table 7 (Stream-CPU)",
            gpu: GpuJob::Gpgpu(kernel),
            cpus: vec![TAP_STREAM[ti % TAP_STREAM.len()]],
            paper_frames: None,
        });
    }
    let gpus: Vec<GpuJob> = DRP_GPU[..14]
        .iter()
        .cloned()
        .chain(CRIT_GPGPU.iter().map(|k| GpuJob::Gpgpu(k)))
        .collect();
    for (i, gpu) in gpus.iter().enumerate() {
        let h = |j: usize| CRIT_H[(i + j * 2) % CRIT_H.len()];
        let l = |j: usize| CRIT_L[(i + j * 2) % CRIT_L.len()];
        for (prefix, cpus) in [
            ("H", vec![h(0), h(1), h(2), h(3)]),
            ("L", vec![l(0), l(1), l(2), l(3)]),
            ("HL", vec![h(0), h(1), l(0), l(1)]),
        ] {
            v.push(Mix {
                name: format!("{prefix}{}", i + 1),
                source: "gpu-access-criticality-dram-scheduling §5",
                gpu: gpu.clone(),
                cpus,
                paper_frames: CRIT_TABLE2.get(i).copied(),
            });
        }
    }
    v
}

/// Every named mix.
pub static MIXES: LazyLock<Vec<Mix>> = LazyLock::new(all_mixes);

/// The mix named `name` (case-insensitive).
pub fn mix(name: &str) -> Option<&'static Mix> {
    MIXES.iter().find(|m| m.name.eq_ignore_ascii_case(name))
}

/// Instructions per CPU job at scale 1.
pub const CPU_INSTRUCTIONS: u64 = 5_000_000;

/// Named sources of one mix, as the simulator takes them.
pub type MixSources = Vec<(String, Box<dyn AccessSource>)>;

/// What one agent of a mix runs, with every parameter that determines its records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobSpec {
    Cpu {
        kernel: &'static str,
        params: CpuParams,
    },
    Gpgpu {
        kernel: &'static str,
        params: GpgpuParams,
    },
    Render {
        scene: SceneRef,
        width: u32,
        height: u32,
        frames: u32,
        seed: u64,
    },
}

/// One agent's job of a mix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// Input name shown in reports (`cpu0 mcf`, `gpu cfd`).
    pub label: String,
    pub spec: JobSpec,
}

impl Job {
    /// The job as a per-warp program for a timed GPU: GPGPU kernels only (`None` for CPU
    /// and rendering jobs).
    pub fn program(&self) -> Result<Option<Box<dyn apusim_trace::BlockSource>>, WorkloadError> {
        match &self.spec {
            JobSpec::Gpgpu { kernel, params } => gpgpu::program(kernel, params).map(Some),
            _ => Ok(None),
        }
    }

    /// The renderer's options of a rendering job (`None` for other jobs).
    fn render_options(&self) -> Option<apusim_render::Options> {
        match &self.spec {
            JobSpec::Render {
                width,
                height,
                frames,
                seed,
                ..
            } => Some(apusim_render::Options {
                width: *width,
                height: *height,
                frames: Some(*frames),
                seed: *seed,
            }),
            _ => None,
        }
    }

    /// The job as render work for a timed render pipeline: rendering jobs only. The scene
    /// is rendered from the first read on.
    pub fn frames(&self) -> Option<Box<dyn apusim_trace::FrameSource>> {
        match &self.spec {
            JobSpec::Render { scene, .. } => Some(Box::new(apusim_render::WorkSource::lazy(
                scene.name(),
                &self.render_options()?,
            ))),
            _ => None,
        }
    }

    /// Generate the job's records.
    pub fn open(&self) -> Result<Box<dyn AccessSource>, WorkloadError> {
        match &self.spec {
            JobSpec::Cpu { kernel, params } => cpu::generate(kernel, params),
            JobSpec::Gpgpu { kernel, params } => gpgpu::generate(kernel, params),
            JobSpec::Render { scene, .. } => {
                let opt = self.render_options().expect("a rendering job");
                let scene = scene.name();
                let source = apusim_render::RenderSource::spawn(scene, &opt)
                    .map_err(|e| WorkloadError::Render(format!("{scene}: {e}")))?;
                Ok(Box::new(source))
            }
        }
    }

    /// A file-name-safe key that names the job's records exactly: the generator, every
    /// parameter, the seed and [`crate::GENERATOR_VERSION`]. Two jobs with the same key produce
    /// the same records, so the key names a cached trace.
    pub fn key(&self) -> String {
        let v = crate::GENERATOR_VERSION;
        match &self.spec {
            JobSpec::Cpu { kernel, params: p } => format!(
                "v{v}-cpu-{kernel}-core{}-instr{}-size{}-seed{}",
                p.core, p.instructions, p.size, p.seed
            ),
            JobSpec::Gpgpu { kernel, params: p } => format!(
                "v{v}-gpgpu-{kernel}-size{}-seed{}-sms{}-warps{}-mhz{}",
                p.size, p.seed, p.gpu.sms, p.gpu.max_warps_per_sm, p.gpu.clock_mhz
            ),
            JobSpec::Render {
                scene,
                width,
                height,
                frames,
                seed,
            } => format!(
                "v{v}-render-{}-{width}x{height}-frames{frames}-seed{seed}",
                scene.key()
            ),
        }
    }
}

/// The jobs of mix `name`: CPU job `i` on core `i` retiring `scale ×` [`CPU_INSTRUCTIONS`]
/// instructions (seed `seed + i`), then the GPU job: a GPGPU kernel at its default problem
/// size scaled by `scale` ([`gpgpu::KernelInfo::scaled_size`]: `scale ×` the elements, so
/// `√scale ×` the side of a 2-D problem), or a rendering job of `scale` frames. A `scale`
/// outside [`crate::SCALE`]'s range is refused with the registry's message.
pub fn jobs(name: &str, scale: u64, seed: u64) -> Result<Vec<Job>, WorkloadError> {
    jobs_at(name, scale, None, Frames::Scale, seed)
}

/// [`jobs`] with the jobs' lengths given apart from `scale`: each CPU job retires
/// `instructions` (checked against the CPU workloads' `instructions` parameter) when set,
/// and a rendering job renders `frames` ([`Frames`]: `scale` of them, a count, or its
/// title's frame region in the mix's paper), while `scale` still sizes a GPGPU job. drp §3
/// runs every CPU job for 250 M instructions beside a few frames; `scale` alone would give
/// the GPU fifty frames to go with them. A frame count for a mix whose GPU job is a kernel
/// is refused (a kernel's length is its `scale`); `paper` leaves a kernel as it is.
pub fn jobs_at(
    name: &str,
    scale: u64,
    instructions: Option<u64>,
    frames: Frames,
    seed: u64,
) -> Result<Vec<Job>, WorkloadError> {
    let m = mix(name).ok_or_else(|| WorkloadError::Unknown {
        kind: "mix",
        name: name.to_string(),
        nearest: apusim_registry::nearest(name, MIXES.iter().map(|m| m.name.as_str()))
            .map(String::from),
        known:
            "S1-S18, D1-D18, Q1-Q18, TAP-{1,2,4}C-{A..E}, TAP-S-{A..E}, H1-H20, L1-L20, HL1-HL20"
                .to_string(),
    })?;
    crate::SCALE.check_value(&Value::Int(scale))?;
    let mut v = Vec::new();
    for (i, c) in m.cpus.iter().enumerate() {
        let (k, params) = cpu::params(
            c,
            &[
                ("core", Value::Int(i as u64)),
                (
                    "instructions",
                    Value::Int(instructions.unwrap_or(CPU_INSTRUCTIONS * scale)),
                ),
                ("seed", Value::Int(seed.wrapping_add(i as u64))),
            ],
        )?;
        let kernel = k.name;
        v.push(Job {
            label: format!("cpu{i} {c}"),
            spec: JobSpec::Cpu { kernel, params },
        });
    }
    let spec = match &m.gpu {
        GpuJob::Render {
            scene,
            width,
            height,
            ..
        } => {
            // Titles played by the same scene differ in their procedural content.
            let seed = seed.wrapping_add(title_index(&m.gpu));
            let count = frames.resolve(scale, m.paper_frames, &format!("mix {}", m.name))?;
            let o = apusim_render::builtin::options(
                Some(scene),
                &[
                    ("width", Value::Int(*width as u64)),
                    ("height", Value::Int(*height as u64)),
                    ("frames", Value::Int(count as u64)),
                    ("seed", Value::Int(seed)),
                ],
            )?;
            JobSpec::Render {
                scene: SceneRef::builtin(scene)?,
                width: o.width,
                height: o.height,
                frames: count,
                seed: o.seed,
            }
        }
        GpuJob::Gpgpu(k) if matches!(frames, Frames::Count(_)) => {
            return Err(WorkloadError::InvalidParam(format!(
                "frames {frames}: mix {}'s GPU job is the kernel {k}, whose length is its \
                 scale; frames are a rendering job's",
                m.name
            )));
        }
        GpuJob::Gpgpu(k) => {
            let (info, params) = gpgpu::params(
                k,
                &[("scale", Value::Int(scale)), ("seed", Value::Int(seed))],
            )?;
            JobSpec::Gpgpu {
                kernel: info.name,
                params,
            }
        }
    };
    v.push(Job {
        label: format!("gpu {}", m.gpu.name()),
        spec,
    });
    Ok(v)
}

/// A built-in workload a run puts alone on the system (`apusim run|sim --scene|--kernel|--cpu`,
/// the Python `run`'s `scene` and `kernel`, sweep points).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alone<'a> {
    /// A built-in scene's or a scene file's frames at `resolution`, `scale` of them, on the
    /// GPU ([`SceneRef::resolve`]).
    Scene(&'a str),
    /// A GPGPU kernel at `scale ×` its default elements, on the GPU.
    Kernel(&'a str),
    /// A CPU kernel on core 0 ([`cpu_alone_job`]).
    Cpu(&'a str),
}

impl<'a> Alone<'a> {
    /// The workload a command line names among a scene, a GPGPU kernel and a CPU kernel (the
    /// first given, in that order; front ends refuse more than one), if any.
    pub fn named(
        scene: Option<&'a str>,
        kernel: Option<&'a str>,
        cpu: Option<&'a str>,
    ) -> Option<Alone<'a>> {
        scene
            .map(Alone::Scene)
            .or(kernel.map(Alone::Kernel))
            .or(cpu.map(Alone::Cpu))
    }

    /// Whether it runs on the GPU (and so on a system of no CPU core unless told otherwise).
    pub fn on_gpu(self) -> bool {
        !matches!(self, Alone::Cpu(_))
    }
}

/// The job of CPU kernel `name` alone on core 0: it retires `instructions`, or `scale ×`
/// [`CPU_INSTRUCTIONS`] (a mix's CPU job at that scale), with the seed a mix gives its first
/// core, so it is the first CPU job of a mix of that kernel, record for record.
pub fn cpu_alone_job(
    name: &str,
    scale: u64,
    instructions: Option<u64>,
    seed: u64,
) -> Result<Job, WorkloadError> {
    crate::SCALE.check_value(&Value::Int(scale))?;
    let length = match instructions {
        Some(n) => n,
        None => CPU_INSTRUCTIONS.saturating_mul(scale),
    };
    let (k, params) = cpu::params(
        name,
        &[
            ("core", Value::Int(0)),
            ("instructions", Value::Int(length)),
            ("seed", Value::Int(seed)),
        ],
    )?;
    Ok(Job {
        label: format!("cpu0 {}", k.name),
        spec: JobSpec::Cpu {
            kernel: k.name,
            params,
        },
    })
}

/// Check the name and every parameter of a run of one workload alone against its registry
/// entry before anything runs (the job itself is built by the front ends' shared code).
pub fn check_alone(
    alone: Alone<'_>,
    resolution: (u32, u32),
    scale: u64,
    seed: u64,
) -> Result<(), WorkloadError> {
    match alone {
        Alone::Scene(scene) => {
            let (width, height) = resolution;
            // A built-in scene by its registry entry, a scene file by the scenes' parameters
            // (the file read and parsed here, so that its errors come before the run).
            let scene = SceneRef::resolve(scene)?;
            apusim_render::builtin::options(
                (!scene.is_file()).then_some(scene.name()),
                &[
                    ("width", Value::Int(width as u64)),
                    ("height", Value::Int(height as u64)),
                    ("frames", Value::Int(scale)),
                    ("seed", Value::Int(seed)),
                ],
            )?;
            // `scale` frames: the size multiplier's own range too.
            crate::SCALE.check_value(&Value::Int(scale))?;
        }
        Alone::Kernel(kernel) => {
            gpgpu::params(
                kernel,
                &[("scale", Value::Int(scale)), ("seed", Value::Int(seed))],
            )?;
        }
        Alone::Cpu(kernel) => {
            cpu_alone_job(kernel, scale, None, seed)?;
        }
    }
    Ok(())
}

/// The 1-based number of a rendering title in [`DRP_GPU`] (0 for other jobs).
fn title_index(job: &GpuJob) -> u64 {
    DRP_GPU
        .iter()
        .position(|g| g == job)
        .map_or(0, |i| i as u64 + 1)
}

/// The sources of mix `name` ([`jobs`], each generated on the fly).
pub fn sources(name: &str, scale: u64, seed: u64) -> Result<MixSources, WorkloadError> {
    jobs(name, scale, seed)?
        .into_iter()
        .map(|j| Ok((j.label.clone(), j.open()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_follow_the_papers() {
        assert_eq!(MIXES.len(), 54 + 15 + 5 + 60);
        let q15 = mix("q15").unwrap();
        assert_eq!(q15.gpu, GpuJob::Gpgpu("cfd"));
        assert_eq!(q15.cpus, ["bzip2", "lbm", "libquantum", "omnetpp"]);
        for n in 1..=18 {
            let g = |p: &str| mix(&format!("{p}{n}")).unwrap().gpu.clone();
            assert!(g("S") == g("D") && g("D") == g("Q"));
        }
        for m in MIXES.iter() {
            for c in &m.cpus {
                assert!(cpu::info(c).is_some(), "{}: {c}", m.name);
            }
            if let GpuJob::Gpgpu(k) = m.gpu {
                assert!(gpgpu::info(k).is_some(), "{}: {k}", m.name);
            }
            if m.name.starts_with("H") && !m.name.starts_with("HL") {
                assert!(m
                    .cpus
                    .iter()
                    .all(|c| cpu::info(c).unwrap().mpki_group == 'H'));
            }
        }
        assert_eq!(mix("TAP-4C-E").unwrap().cpus.len(), 4);
        let s = sources("S16", 1, 1).unwrap();
        assert_eq!(s.len(), 2);
        assert!(sources("Z9", 1, 1).is_err());
    }

    #[test]
    fn scales_outside_the_registry_range_are_refused() {
        for m in ["S1", "TAP-1C-D", "H1"] {
            for scale in [0, crate::MAX_SCALE + 1] {
                let e = jobs(m, scale, 1).unwrap_err();
                assert!(
                    matches!(&e, WorkloadError::Param(apusim_registry::RegistryError::BadValue { key, .. }) if key == "scale"),
                    "{m} {scale}: {e}"
                );
            }
            assert!(jobs(m, crate::MAX_SCALE, 1).is_ok(), "{m}");
        }
    }

    #[test]
    fn scale_grows_every_job_and_keys_name_all_parameters() {
        let size = |m: &str, scale| match jobs(m, scale, 1).unwrap().last().unwrap().spec {
            JobSpec::Gpgpu { params, .. } => params.size,
            ref s => panic!("{s:?}"),
        };
        // reduction (1-D): elements × scale; matrixmul (2-D, TAP-1C-D): side × √scale.
        assert_eq!(size("S18", 1), 0);
        assert_eq!(size("S18", 4), 4 << 20);
        assert_eq!(size("TAP-1C-D", 4), 1024);
        assert_eq!(gpgpu::info("lbm").unwrap().scaled_size(8), 128);
        let a = jobs("Q7", 2, 5).unwrap();
        assert_eq!(a.len(), 5);
        match a[0].spec {
            JobSpec::Cpu { params, .. } => assert_eq!(params.instructions, 2 * CPU_INSTRUCTIONS),
            ref s => panic!("{s:?}"),
        }
        let keys: std::collections::BTreeSet<String> = a.iter().map(Job::key).collect();
        assert_eq!(keys.len(), 5, "{keys:?}");
        assert_ne!(a[4].key(), jobs("Q7", 2, 6).unwrap()[4].key());
        assert_ne!(a[4].key(), jobs("Q7", 3, 5).unwrap()[4].key());
        assert!(keys.iter().all(|k| k
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_x.".contains(c))));
    }

    #[test]
    fn a_rendering_job_renders_the_frames_asked_for() {
        let frames =
            |m: &str, scale, f| match jobs_at(m, scale, None, f, 1).unwrap().last().unwrap().spec {
                JobSpec::Render { frames, .. } => frames,
                ref s => panic!("{s:?}"),
            };
        // DOOM3 is n = 7: frames 300–304 in drp Table 1, 300–314 in gpu-access-criticality
        // Table 2; UT2004 (n = 13) 200–204 and 200–217.
        assert_eq!(frames("S7", 2, Frames::Scale), 2);
        assert_eq!(frames("S7", 2, Frames::Count(9)), 9);
        assert_eq!(frames("S7", 2, Frames::Paper), 5);
        assert_eq!(frames("Q7", 1, Frames::Paper), 5);
        assert_eq!(frames("HL7", 1, Frames::Paper), 15);
        assert_eq!(frames("L13", 1, Frames::Paper), 18);
        assert_eq!(frames("H3", 1, Frames::Paper), 2);
        // The frames name the trace; the CPU jobs keep theirs.
        let a = jobs_at("HL7", 1, None, Frames::Scale, 1).unwrap();
        let b = jobs_at("HL7", 1, None, Frames::Paper, 1).unwrap();
        assert_eq!(a[0].key(), b[0].key());
        assert_ne!(a[4].key(), b[4].key());
        // A kernel's length is its scale: `paper` leaves it, a count is refused.
        let k = jobs_at("HL15", 1, None, Frames::Paper, 1).unwrap();
        assert_eq!(k, jobs("HL15", 1, 1).unwrap());
        let e = jobs_at("HL15", 1, None, Frames::Count(3), 1).unwrap_err();
        assert!(e.to_string().contains("kernel lbm"), "{e}");
        for m in MIXES.iter() {
            let render = matches!(m.gpu, GpuJob::Render { .. });
            assert_eq!(m.paper_frames.is_some(), render, "{}", m.name);
        }
    }
}
