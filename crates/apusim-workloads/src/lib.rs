//! Built-in workload generators.
//!
//! Every generator is an [`apusim_trace::AccessSource`] for one agent that produces its
//! accesses lazily and deterministically from a seed, so a workload costs no disk and little
//! memory and two runs with the same seed see the same accesses.
//!
//! - [`synthetic`] holds the simple generators behind `apusim demo`: CPU cores with the memory
//!   behaviour of a few characteristic program kinds, and a GPU that renders frames in passes
//!   with render-to-texture reuse.
//! - [`simt`] is a small SIMT execution layer: GPGPU kernels written in Rust over their thread
//!   index run as grids of thread blocks of 32-thread warps in lock step; each warp memory
//!   instruction becomes the coalesced 64/128-byte transactions a GPU coalescer forms.
//! - [`gpgpu`] holds the GPGPU kernels of the papers' CUDA/OpenCL workloads (matrixmul, spmv,
//!   bfs, cfd, blackscholes, ...), real algorithms on generated inputs ([`gpgpu::KERNELS`],
//!   [`gpgpu::generate`]).
//! - [`cpu`] holds CPU kernels that execute real algorithms with the memory behaviour of the
//!   SPEC CPU 2006 programs the papers mix (mcf, omnetpp, libquantum, lbm, ...), traced at
//!   instruction level ([`cpu::KERNELS`], [`cpu::generate`]).
//! - [`mixes`] names the papers' heterogeneous mixes (drp Table 3 S/D/Q1–18, the TAP sets, the
//!   criticality paper's H/L/HL mixes) built from these workloads ([`mixes::MIXES`],
//!   [`mixes::sources`]).
//! - [`champsim`] writes ChampSim-format instruction traces (streaming, pointer chase,
//!   cache-friendly loop) for side-by-side validation against ChampSim.
//!
//! See `docs/workloads.md` for footprints, miss rates and generation speed.

pub mod champsim;
pub mod cpu;
pub mod gpgpu;
pub mod mixes;
pub mod rng;
pub mod simt;
pub mod synthetic;

pub use synthetic::{demo_mix, CpuKind, CpuSynth, RenderSynth};

/// Version of the generators' output. Bump it whenever a change alters the records any
/// generator produces for the same parameters and seed: it is part of the key of cached
/// traces ([`mixes::Job::key`]), so stale caches are never reused. (Edits of a built-in render
/// scene's file need no bump: the key holds a hash of the scene text; changes of the render
/// pipeline's code do.)
pub const GENERATOR_VERSION: u32 = 3;

/// The largest workload scale (`apusim run --mix --scale`, the studies' `scale` option): a
/// thousand times a workload's default size already runs for hours; a larger one would only
/// look like a hang.
pub const MAX_SCALE: u64 = 1000;

/// Errors of the workload registries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkloadError {
    /// No workload of this kind has that name (`nearest`: the closest one, if any is close).
    Unknown {
        kind: &'static str,
        name: String,
        nearest: Option<String>,
        known: String,
    },
    /// A parameter is out of range.
    InvalidParam(String),
    /// A rendering job's scene could not be loaded or rendered.
    Render(String),
}

impl std::fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WorkloadError::Unknown {
                kind,
                name,
                nearest,
                known,
            } => {
                write!(f, "unknown {kind} `{name}`")?;
                if let Some(n) = nearest {
                    write!(f, " (did you mean `{n}`?)")?;
                }
                write!(f, " (known: {known})")
            }
            WorkloadError::InvalidParam(m) => write!(f, "invalid workload parameter: {m}"),
            WorkloadError::Render(m) => write!(f, "rendering job: {m}"),
        }
    }
}

impl std::error::Error for WorkloadError {}

impl WorkloadError {
    /// `name` is not one of `entries` (a workload registry called `kind` in messages): the
    /// error names the nearest entry ([`apusim_registry::find`]) and lists them all.
    pub fn unknown<C>(
        kind: &'static str,
        name: &str,
        entries: &[apusim_registry::Entry<C>],
    ) -> WorkloadError {
        let nearest = match apusim_registry::find(entries, kind, name) {
            Err(apusim_registry::RegistryError::UnknownName { nearest, .. }) => nearest,
            _ => None,
        };
        WorkloadError::Unknown {
            kind,
            name: name.to_string(),
            nearest,
            known: entries
                .iter()
                .map(|e| e.name)
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}
