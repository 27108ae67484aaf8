//! The GPU memory side of adaptive-gpu-l1-bypassing.txt: the hierarchy of its Table 1 and
//! its L1 bypass predictors.
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
//! them and the L2's bypassBit are in [`levels`]. [`kernel`] runs one GPGPU kernel on a
//! configuration and renders runs as a table or CSV; the paper's functional figures that run
//! kernels under several configurations are studies of `apusim-experiments`
//! (`apusim study bypass-fig1`, ...).

pub mod config;
mod footprint;
pub mod hierarchy;
pub mod kernel;
pub mod levels;
pub mod metrics;
pub mod predictor;

pub use config::{GpuConfig, PredictorKind};
pub use hierarchy::{run_source, GpuHierarchy, RunResult};
pub use kernel::run_kernel;
pub use metrics::{Derived, Metrics};
pub use predictor::{CounterPredictor, PcPredictor, Storage};

#[cfg(test)]
mod tests;
