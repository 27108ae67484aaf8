//! The GPU memory side of apusim and the studies of adaptive-gpu-l1-bypassing.txt.
//!
//! A [`GpuConfig`] describes the GPU of the paper's Table 1 (preset `table1`): `sms` compute
//! units, each with a private L1 data cache, a shared L2 and a memory-side L3, all tree
//! pseudo-LRU on the shared engine `apusim_cache::Cache`, plus the L1's bypass predictor and
//! the per-access energies of Table 3. A [`GpuHierarchy`] built from it consumes GPGPU access
//! records (from `apusim_workloads::gpgpu` or an `.apt` file; `unit` selects the SM, `pc` the
//! predictor entry) and counts into [`Metrics`]; [`GpuHierarchy::finish`] turns them into a
//! [`RunResult`] with the derived figures of §5 ([`Derived`]: bypass ratio, coverage, both
//! false-positive rates, zero-reuse fraction, energy) and the predictor's [`Storage`].
//!
//! The predictors ([`predictor`]) are the PC-based one of Listing 1 ([`PcPredictor`]) and the
//! counter-based comparator of §3.3 ([`CounterPredictor`]); the L1 and L2 policies that carry
//! them and the L2's bypassBit are in [`levels`]. [`study`] runs the paper's figures over the
//! GPGPU kernels in parallel and prints them beside the paper's numbers.

pub mod config;
pub mod hierarchy;
pub mod levels;
pub mod metrics;
pub mod predictor;
pub mod study;

pub use config::{GpuConfig, PredictorKind};
pub use hierarchy::{run_source, GpuHierarchy, RunResult};
pub use metrics::{Derived, Metrics};
pub use predictor::{CounterPredictor, PcPredictor, Storage};
pub use study::{run_study, Study, StudyOptions, StudyResult};

#[cfg(test)]
mod tests;
