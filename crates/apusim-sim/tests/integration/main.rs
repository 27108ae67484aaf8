//! The system crate's integration tests, one binary with a module per subject (each binary links
//! the whole workspace again, so one binary keeps the test build short).
//!
//! - `hierarchy`, `gpu_bypass`: the functional hierarchy;
//! - `timed`: one timed core against the functional hierarchy, and the latency probes;
//! - `timed_mix`: mixes, weighted speedup, sampling of CPU cores;
//! - `timed_gpu`: the SIMT GPU in the whole machine;
//! - `timed_render`: the render pipeline in the whole machine, frame rates and criticality;
//! - `champsim`: ChampSim's counts on the shared traces.

mod champsim;
mod gpu_bypass;
mod hierarchy;
mod timed;
mod timed_gpu;
mod timed_mix;
mod timed_render;
