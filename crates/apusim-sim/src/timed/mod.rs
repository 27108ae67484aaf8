//! The timed machine behind `apusim sim`: CPU cores, private caches, the network, the LLC
//! banks and DRAM on one clock.
//!
//! [`TimingConfig`] (the `[timing]` section) names the core model and network (registered in
//! `apusim_timing`) with their parameters, the DRAM preset, and how traces without register
//! information get dependences; each cache level's `latency` and `mshrs` sit beside its
//! geometry. [`memory::TimedMemory`] layers timing over the functional [`crate::Hierarchy`]
//! in deferred mode; [`sim::sim_policy`] runs the engine loop with warm-up and per-core
//! instruction targets and returns a [`sim::SimResult`]; [`mod@gpu`] drives a GPGPU
//! program on the timed GPU model (`timing.gpu`) as one more agent; [`mod@speedup`] makes the jobs' alone
//! runs (cached) and the weighted speedup of a mix.

pub mod backlog;
pub mod config;
pub mod estimate;
pub mod gpu;
pub mod hints;
pub mod interference;
pub mod intervals;
pub mod memory;
pub mod occupancy;
pub mod policies;
mod ratio;
pub mod sampling;
pub mod sim;
pub mod speedup;
pub mod stored;
pub mod streams;
pub mod target_error;
pub mod window;

pub use config::{LevelTiming, ModelConfig, TimingConfig, MAX_CYCLE};
pub use gpu::{GpuResult, RenderResult, ShaderCriticalityResult};
pub use intervals::{GpuInterval, Interval, IntervalSpec, IntervalUnit};
pub use occupancy::AgentOccupancy;
pub use policies::sim_policies;
pub use sampling::{SampleSpec, Sampled, SampledCore, CPU_WARMUP, RENDER_WARMUP};
pub use sim::{sim_policy, CoreResult, SimOptions, SimResult, SystemWindow};
pub use speedup::{alone_config, alone_runs, speedup, AloneOptions, AloneRun, GpuSpeedup, Speedup};
pub use window::NetworkLink;
