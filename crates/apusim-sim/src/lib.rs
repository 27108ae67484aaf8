//! Functional simulation of a CPU-GPU memory hierarchy.
//!
//! A [`SystemConfig`] (a TOML preset or file, adjusted with `--set KEY=VALUE`) describes the
//! machine: CPU cores with private L1I/L1D/L2, GPU caches that serve given streams (per unit
//! where the hardware has one per sampler, ROP or SM), and the shared LLC with its policy.
//! [`Hierarchy`] builds that machine around an LLC generic over its policy and moves one
//! [`apusim_trace::Access`] at a time through it, counting per level, agent and stream
//! ([`stats`]). [`run`] opens the inputs (traces or generators, via the [`run::Inputs`] seam),
//! merges the agents in global time by their clocks, and runs one policy or several in
//! parallel; [`report`] renders the results as tables, CSV, JSON or cachegrind's counters.
//!
//! The LLC policy is chosen once per run: [`run::run_policy`] asks
//! `apusim_cache::policies::build` for the named policy, which instantiates the simulation
//! loop for that concrete type, so the hot loop has no dynamic dispatch on the policy. The timed
//! engine ([`timed`]) runs every policy as one type, `apusim_cache::BoxedPolicy`: its cost per
//! LLC access is the event machinery around it, and one instantiation keeps this crate's
//! release build short.

pub mod config;
pub mod hierarchy;
pub mod inputs;
pub mod llc_switches;
pub mod progress;
pub mod report;
pub mod run;
pub mod stats;
pub mod stored;
pub mod timed;

pub use config::SystemConfig;
pub use hierarchy::Hierarchy;
pub use llc_switches::LlcSwitches;
pub use run::{run_policies, run_policy, Input, Inputs, Reopen, RunOptions, RunResult};
