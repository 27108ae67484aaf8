//! The timing engine of apusim: the parts every timed component shares.
//!
//! - [`clock`]: [`Clock`]s (a CPU at 4 GHz, a GPU at 1 GHz, DRAM at its tCK) on one exact
//!   global time line of [`Tick`]s ([`Timebase`]), and a component's [`Domain`] for converting
//!   between its cycles and ticks. No clock edge is ever rounded.
//! - [`event`]: the deterministic [`EventQueue`] of messages in flight (time order, then the
//!   order they were sent), so a run gives the same result on any host.
//! - [`instr`]: [`Instr`], the core models' instruction record, and [`AccessInstrs`], which
//!   rebuilds instructions from an instruction-counted access trace.
//! - [`champsim`]: [`ChampSimInstrs`], instructions read from a ChampSim trace with its
//!   register dependences and branches.
//! - [`ahead`]: [`Ahead`], a program whose instructions are built on a thread of their own.
//! - [`core`]: the [`CoreModel`] trait (a core does one cycle of work at an edge of its clock,
//!   sends accesses through a [`MemPort`], says when it next has work) and the registered
//!   models: `ooo` (out-of-order) and `in-order` (blocking).
//! - [`gpu`]: the [`GpuModel`] trait (the GPU's counterpart of [`CoreModel`]: one cycle of
//!   every shader core at an edge of the GPU's clock) and the registered models: `simt`
//!   (shader cores executing per-warp programs).
//! - [`network`]: the on-chip [`Network`]s (`ring`, `fixed`).
//! - [`pages`]: physical page placement ([`pages::PageMap`]: identity, or random first-touch
//!   frames as ChampSim's virtual memory places them).
//! - [`mshr`]: miss-status holding registers ([`Mshrs`]), which merge accesses to a line that
//!   is already on its way.
//! - [`replay`]: [`Replay`], a program started again from its beginning when it ends (a trace
//!   shorter than the run).
//!
//! Every model registers in the shape of `apusim_registry` (name, description, paper key,
//! typed parameters, constructor). The system layer (`apusim-sim`'s `timed` module) assembles
//! cores, caches, the network, the LLC and DRAM (`apusim-dram`) into one timed machine.

pub mod ahead;
pub mod champsim;
pub mod clock;
pub mod core;
mod error;
pub mod event;
pub mod gpu;
pub mod instr;
pub mod mshr;
pub mod network;
pub mod pages;
pub mod replay;

pub use crate::core::{CoreModel, CoreStats, Issue, MemPort, Token, Wake, WarmPort};
pub use ahead::Ahead;
pub use champsim::ChampSimInstrs;
pub use clock::{Clock, Domain, Tick, Timebase};
pub use error::TimingError;
pub use event::EventQueue;
pub use gpu::{GpuModel, GpuStats, KernelSpan, StallCycles};
pub use instr::{AccessInstrs, BranchKind, DepModel, Instr, InstrSource};
pub use mshr::Mshrs;
pub use network::{LinkCount, Network, Stop};
pub use replay::Replay;
