//! Built-in workload generators.
//!
//! Every generator is an [`apusim_trace::AccessSource`] for one agent that produces its
//! accesses lazily and deterministically from a seed, so a workload costs no disk and no
//! memory and two runs with the same seed see the same accesses. [`synthetic`] holds the
//! simple generators behind `apusim demo`: CPU cores with the memory behaviour of a few
//! characteristic program kinds, and a GPU that renders frames in passes with render-to-texture
//! reuse. (Generators that execute real algorithms and a real render pipeline live beside them
//! as they are added.)

pub mod rng;
pub mod synthetic;

pub use synthetic::{demo_mix, CpuKind, CpuSynth, RenderSynth};
