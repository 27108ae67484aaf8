//! apusim's DRAM model: a cycle-level, event-driven DDR3 (and DDR4-ready) timing simulator
//! with pluggable memory schedulers.
//!
//! # How the pieces fit
//!
//! A [`DramSpec`] describes the device: its [`Organization`] (channels, ranks, bank groups,
//! banks, rows, columns, bus and burst geometry) and its [`Timings`] (tCL, tRCD, tRP, tRAS,
//! tRC, tCCD, tRRD, tFAW, tWTR, tRTW/tRTRS, tWR, tRTP, tBURST, tREFI, tRFC, all in DRAM
//! cycles). [`Timings::validate`] refuses impossible sets (tRC < tRAS + tRP, tCCD < tBURST,
//! …). A [`DramConfig`] wraps a spec with controller choices — address mapping, scheduler,
//! open/closed row policy, queue sizes, write-drain watermarks, refresh — and comes from
//! [`presets()`] (one per configuration of the papers apusim reproduces), a TOML file, and
//! `key=value` overrides.
//!
//! A [`MemorySystem`] is built from a config. It owns an [`AddressMapper`] ([`mapping`]:
//! row-bank-rank-column-channel, row-channel-rank-bank-column, XOR bank permutation, or any
//! field order) that turns a physical address into (channel, rank, bank group, bank, row,
//! column), and one controller per channel. Each controller keeps a read queue and a write
//! queue, switches into write-drain mode between watermarks, schedules refresh, and holds a
//! [`ChannelState`] ([`device`]): per-bank open rows plus, per bank, bank group and rank, the
//! earliest cycle every command (ACT, PRE, PREA, RD, WR, RDA, WRA, REF) may issue. Issuing a
//! command raises those counters; nothing else encodes timing, so every constraint lives in
//! one place and is unit-tested on its own.
//!
//! Whenever a controller may issue a command its [`Scheduler`] sees the queue it serves as a
//! slice of [`Candidate`]s in arrival order (each request with its source, stream, critical
//! flag and arrival, plus where it goes) and a [`SchedContext`] with one [`BankView`] per bank
//! (open row, the cycle an ACT/PRE/column command becomes legal there, pending row hits, the
//! oldest hit and oldest non-hit), from which every candidate's row-hit status, next command
//! and ready cycle follow. The scheduler picks ([`scheduler`]: FCFS, FR-FCFS, FR-FCFS with a
//! row-hit cap, and the heterogeneous CPU-GPU schedulers of gpu-access-criticality §4.3 and
//! §6.1.4 — GPU-favoring, IM, DynPrio, DASH, SMS — which also see the system's
//! [`SchedHints`], set with [`MemorySystem::set_hints`]). The controller keeps the
//! bank views up to date incrementally as commands issue. The simulation is event-driven:
//! when nothing can issue now, the scheduler names the next cycle it could issue something
//! ([`Scheduler::next_decision`]); the controller sleeps until then, a
//! refresh deadline or an arrival, and the clock jumps there instead of ticking through idle
//! cycles. A controller with nothing queued goes further: it jumps over whole rounds of
//! refresh at once (the REFs owed are computed, not issued one by one), so an idle stretch
//! costs the same few steps whatever its length ([`MemorySystem::idle_steps`]) and ends in
//! the state stepping would have reached.
//!
//! Times are DRAM cycles in `u64`. Arrival cycles are at most [`MAX_CYCLE`] (2^62): the
//! trace readers refuse later ones naming the file and line, and `--interval` beyond it.
//! Within that bound no cycle arithmetic of the model overflows.
//!
//! Callers (apusim's timing model) send [`Request`]s with [`MemorySystem::try_send`], advance
//! time with [`MemorySystem::advance_to`] and receive [`Completion`]s carrying each request's
//! latency. Statistics ([`stats`]) are kept per channel and per source — read/write latency
//! (mean and histogram), bandwidth, row hits/misses/conflicts, queue occupancy, command and
//! refresh counts — and rendered by [`DramReport`] as a table, JSON or CSV.
//!
//! The standalone trace mode ([`cli`]: `apusim dram --preset NAME TRACE`) reads apusim's text
//! format and the trace formats of Ramulator 2 and DRAMsim3 ([`trace`]) and is exposed as
//! [`run_trace_file`] for the `apusim` binary.

pub mod cli;
pub mod config;
mod controller;
pub mod device;
pub mod error;
pub mod mapping;
pub mod presets;
pub mod request;
pub mod scheduler;
pub mod spec;
pub mod stats;
pub mod system;
pub mod trace;

pub use cli::{run_requests, run_trace_file, write_atomic, DramCliArgs};
pub use config::{DramConfig, RowPolicy};
pub use controller::CommandRecord;
pub use device::{ChannelState, Command, CommandError};
pub use error::DramError;
pub use mapping::{make_mapper, AddressMapper, DecodedAddr};
pub use presets::presets;
pub use request::{Completion, Request, GPU_SOURCE, MAX_CYCLE};
pub use scheduler::{
    make_scheduler, BankView, Candidate, FrameHint, RowStatus, SchedContext, SchedHints, Scheduler,
    SchedulerConfig, NO_CANDIDATE,
};
pub use spec::{DramSpec, Organization, Timings};
pub use stats::{DramReport, RowOutcomes};
pub use system::MemorySystem;
pub use trace::{open_trace, TraceFormat, TraceReader};
