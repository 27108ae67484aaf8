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
pub mod frames;
pub mod gpgpu;
pub mod mixes;
pub mod rng;
pub mod scene_ref;
pub mod simt;
pub mod synthetic;

pub use synthetic::{demo_mix, CpuKind, CpuSynth, RenderSynth};

use apusim_registry::{ParamKind, ParamSpec, RegistryError};

/// Version of the generators' output. Bump it whenever a change alters the records any
/// generator produces for the same parameters and seed: it is part of the key of cached
/// traces ([`mixes::Job::key`]), so stale caches are never reused. (Edits of a built-in render
/// scene's file need no bump: the key holds a hash of the scene text; changes of the render
/// pipeline's code do.)
pub const GENERATOR_VERSION: u32 = 4;

/// The largest workload scale (`apusim run --mix --scale`, the studies' `scale` option): a
/// thousand times a workload's default size already runs for hours; a larger one would only
/// look like a hang.
pub const MAX_SCALE: u64 = 1000;

/// The size multiplier of a built-in workload (`apusim run --mix|--kernel --scale`, the
/// Python `run`'s `scale`): declared once here, in every GPGPU kernel's registry entry, and
/// checked by [`mixes::jobs`] for a whole mix.
pub const SCALE: ParamSpec = ParamSpec {
    name: "scale",
    kind: ParamKind::Int {
        min: 1,
        max: MAX_SCALE,
    },
    default: "1",
    unit: "",
    doc: "size multiplier: `scale ×` the default elements (CPU jobs of a mix: `scale ×` 5 M instructions)",
};

/// The seed parameter of every workload.
pub const SEED: ParamSpec = ParamSpec {
    name: "seed",
    kind: ParamKind::Int {
        min: 0,
        max: u64::MAX,
    },
    default: "1",
    unit: "",
    doc: "seed of the generated input",
};

/// The data-set size parameter of a workload in `unit`s (0: its default), described by `doc`.
/// The text is built once per registry entry and kept for the process's life, as an `Entry`
/// holds static text.
pub(crate) fn size_param(unit: &'static str, doc: String) -> ParamSpec {
    ParamSpec {
        name: "size",
        kind: ParamKind::Int {
            min: 0,
            max: u32::MAX as u64,
        },
        default: "0",
        unit,
        doc: Box::leak(doc.into_boxed_str()),
    }
}

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
    /// A parameter refused by its registry declaration (unknown key, wrong kind, out of
    /// range), with the registry's message.
    Param(RegistryError),
}

impl From<RegistryError> for WorkloadError {
    fn from(e: RegistryError) -> Self {
        WorkloadError::Param(e)
    }
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
            WorkloadError::Param(e) => write!(f, "{e}"),
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

/// Drive every declared parameter of every entry of a workload registry through its real
/// entry point `build` (the function every caller validates with): each of the parameter's
/// [`ParamSpec::refused_values`] must be refused naming the key, and a valid value other than
/// the default must change what `build` returns (a parameter only described, never used,
/// fails). With no parameter given, `build` must return `defaults`.
#[cfg(test)]
pub(crate) fn drive_every_parameter<C, T: std::fmt::Debug>(
    entries: &[apusim_registry::Entry<C>],
    defaults: &T,
    build: impl Fn(&str, &[(&str, apusim_registry::Value)]) -> Result<T, WorkloadError>,
) {
    use apusim_registry::Value;
    for e in entries {
        let base = format!("{:?}", build(e.name, &[]).unwrap());
        assert_eq!(base, format!("{defaults:?}"), "{}: defaults", e.name);
        match build(e.name, &[("sede", Value::Int(1))]) {
            Err(WorkloadError::Param(RegistryError::UnknownKey { nearest, .. })) => {
                assert_eq!(nearest.as_deref(), Some("seed"), "{}", e.name)
            }
            other => panic!("{}: unknown key accepted: {other:?}", e.name),
        }
        for spec in e.params {
            for v in spec.refused_values() {
                match build(e.name, &[(spec.name, v.clone())]) {
                    Err(WorkloadError::Param(RegistryError::BadValue { key, .. }))
                        if key == spec.name => {}
                    other => panic!("{} {} = {v}: {other:?}", e.name, spec.name),
                }
            }
            let ParamKind::Int { min, .. } = spec.kind else {
                panic!("{} {}: workload parameters are integers", e.name, spec.name)
            };
            let v = if spec.default_value() == Ok(Value::Int(min + 1)) {
                min + 2
            } else {
                min + 1
            };
            let other = format!(
                "{:?}",
                build(e.name, &[(spec.name, Value::Int(v))]).unwrap()
            );
            assert_ne!(
                other, base,
                "{} {} = {v} changes nothing",
                e.name, spec.name
            );
        }
    }
}
