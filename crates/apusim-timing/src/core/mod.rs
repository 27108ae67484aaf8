//! Core models: what turns a program's instructions into memory requests over time.
//!
//! A core model implements [`CoreModel`]. The engine calls [`CoreModel::cycle`] at edges of the
//! core's clock; the core does one cycle of work, sends memory accesses through the
//! [`MemPort`] it is given, and says when it next has work ([`Wake`]). An access the memory
//! side cannot answer at once returns [`Issue::Pending`]; the engine later calls
//! [`CoreModel::complete`] with the access's [`Token`] and the tick its data arrived.
//!
//! Models register in [`REGISTRY`] with their parameters (see `apusim_registry`).

pub mod bpred;
pub mod inorder;
pub mod ooo;

use crate::instr::InstrSource;
use crate::{Domain, Tick, TimingError};
use apusim_registry::{Entry, ParamKind, ParamSpec, Params};
use apusim_trace::Access;
use serde::{Deserialize, Serialize};

/// Names one waiting access of one core.
pub type Token = u64;

/// The memory side's answer to an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Issue {
    /// The data is there at this tick.
    Done(Tick),
    /// The data comes later: `parts` completions with this access's token will arrive.
    Pending(u32),
    /// Not accepted now (no free miss-status register); retry at this tick if known, else
    /// after the next completion.
    Busy(Option<Tick>),
}

/// The memory side as a core sees it.
pub trait MemPort {
    fn issue(&mut self, now: Tick, acc: &Access, token: Token) -> Issue;
}

/// Where functional warming sends a core's accesses (sampled runs): every cache level and
/// policy is updated at once, without timing.
pub trait WarmPort {
    fn warm(&mut self, acc: &Access) -> Result<(), TimingError>;
}

/// When the core next has work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// At this tick (an edge of the core's clock).
    At(Tick),
    /// After its next completion.
    OnCompletion,
    /// The program has ended and the pipeline is empty.
    Finished,
}

/// Counters of one core (monotonic; a window is the difference of two snapshots).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreStats {
    /// Retired instructions.
    pub instructions: u64,
    /// Cycles the core has simulated (its clock at the last cycle it ran).
    pub cycles: u64,
    pub loads: u64,
    pub stores: u64,
    pub fetches: u64,
    /// Cycles the head of the ROB waited for a load (retirement blocked on memory).
    pub rob_head_load_cycles: u64,
    /// Cycles dispatch stopped because the ROB, LQ or SQ was full (counted when the stall
    /// ends).
    pub rob_full_cycles: u64,
    pub lq_full_cycles: u64,
    pub sq_full_cycles: u64,
    /// Cycles fetch waited for an instruction-cache miss.
    pub fetch_stall_cycles: u64,
    /// Accesses refused for lack of a miss-status register.
    pub mshr_busy: u64,
    /// Cycles dispatch stopped because every physical register was in use (counted when the
    /// stall ends).
    pub prf_full_cycles: u64,
    /// Retired branches (traces with branch information) and the mispredicted ones.
    pub branches: u64,
    pub mispredicts: u64,
    /// Cycles fetch waited for a mispredicted branch to resolve.
    pub mispredict_stall_cycles: u64,
    /// Instructions taken from the program by functional warming (not retired, not timed).
    pub warmed: u64,
}

impl CoreStats {
    /// `self − earlier`, field by field.
    pub fn since(&self, e: &CoreStats) -> CoreStats {
        CoreStats {
            instructions: self.instructions - e.instructions,
            cycles: self.cycles - e.cycles,
            loads: self.loads - e.loads,
            stores: self.stores - e.stores,
            fetches: self.fetches - e.fetches,
            rob_head_load_cycles: self.rob_head_load_cycles - e.rob_head_load_cycles,
            rob_full_cycles: self.rob_full_cycles - e.rob_full_cycles,
            lq_full_cycles: self.lq_full_cycles - e.lq_full_cycles,
            sq_full_cycles: self.sq_full_cycles - e.sq_full_cycles,
            fetch_stall_cycles: self.fetch_stall_cycles - e.fetch_stall_cycles,
            mshr_busy: self.mshr_busy - e.mshr_busy,
            prf_full_cycles: self.prf_full_cycles - e.prf_full_cycles,
            branches: self.branches - e.branches,
            mispredicts: self.mispredicts - e.mispredicts,
            mispredict_stall_cycles: self.mispredict_stall_cycles - e.mispredict_stall_cycles,
            warmed: self.warmed - e.warmed,
        }
    }
}

/// A timed core.
pub trait CoreModel: Send {
    /// One cycle of work at `now` (an edge of the core's clock, never earlier than the last
    /// wake the core asked for, nor than a completion it was given).
    fn cycle(&mut self, now: Tick, port: &mut dyn MemPort) -> Result<Wake, TimingError>;
    /// The data of the access `token` arrived at `at` (one call per part).
    fn complete(&mut self, token: Token, at: Tick);
    fn stats(&self) -> CoreStats;
    /// The core's clock.
    fn domain(&self) -> Domain;
    /// Stop taking new instructions from the program (the pipeline then drains), or take
    /// them again. Sampled runs stop fetch before they switch to functional warming.
    fn set_fetch(&mut self, on: bool);
    /// Nothing is in flight: no instruction fetched and not retired, no access outstanding.
    fn drained(&self) -> bool;
    /// Functional warming: take up to `n` instructions from the program without timing,
    /// sending their accesses to `port` in trace order and training the branch predictor
    /// with their branches; returns the instructions taken (fewer at the program's end).
    /// Called only when the core is [`CoreModel::drained`].
    fn warm(&mut self, n: u64, port: &mut dyn WarmPort) -> Result<u64, TimingError>;
}

/// The constructor of a registered core model: validated parameters, the core's clock, its
/// instruction source.
pub type BuildCore = fn(&Params, Domain, Box<dyn InstrSource>) -> Box<dyn CoreModel>;

const fn int(
    name: &'static str,
    default: &'static str,
    max: u64,
    unit: &'static str,
    doc: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        kind: ParamKind::Int { min: 1, max },
        default,
        unit,
        doc,
    }
}

/// Parameters of the out-of-order model, defaults ChampSim's default core.
pub const OOO_PARAMS: &[ParamSpec] = &[
    int(
        "fetch_width",
        "6",
        64,
        "instructions/cycle",
        "instructions fetched per cycle",
    ),
    int(
        "dispatch_width",
        "6",
        64,
        "instructions/cycle",
        "instructions entering the ROB per cycle",
    ),
    int(
        "retire_width",
        "5",
        64,
        "instructions/cycle",
        "instructions retired per cycle",
    ),
    int("rob", "352", 4096, "entries", "reorder buffer"),
    int(
        "lq",
        "128",
        4096,
        "entries",
        "load queue (held from dispatch to retirement)",
    ),
    int(
        "sq",
        "72",
        4096,
        "entries",
        "store queue (from dispatch until the store is written)",
    ),
    int(
        "load_ports",
        "2",
        64,
        "loads/cycle",
        "loads sent to the L1D per cycle",
    ),
    int(
        "store_ports",
        "2",
        64,
        "stores/cycle",
        "retired stores written to the L1D per cycle",
    ),
    int(
        "fetch_buffer",
        "64",
        4096,
        "instructions",
        "fetched instructions waiting for dispatch",
    ),
    ParamSpec {
        name: "frontend_cycles",
        kind: ParamKind::Int { min: 0, max: 1000 },
        default: "2",
        unit: "cycles",
        doc: "fetch-to-dispatch latency (decode and dispatch stages)",
    },
    int(
        "alu_latency",
        "1",
        1000,
        "cycles",
        "execution latency of an instruction without memory access",
    ),
    int(
        "exec_width",
        "4",
        64,
        "instructions/cycle",
        "instructions that begin execution per cycle (a load's address generation included)",
    ),
    ParamSpec {
        name: "schedule_cycles",
        kind: ParamKind::Int { min: 0, max: 1000 },
        default: "2",
        unit: "cycles",
        doc: "dispatch-to-execute latency (ChampSim schedules an instruction the cycle after dispatch and executes it the cycle after that)",
    },
    int(
        "physical_registers",
        "128",
        65536,
        "registers",
        "physical register file: each architectural register in use holds one, each dispatched instruction one per destination until it retires",
    ),
    ParamSpec {
        name: "branch_predictor",
        kind: ParamKind::Choice(&["bimodal", "perfect"]),
        default: "\"bimodal\"",
        unit: "",
        doc: "direction predictor for traces with branch information (bimodal: ChampSim's default; perfect: never wrong)",
    },
    int(
        "bimodal_entries",
        "16384",
        1 << 24,
        "counters",
        "2-bit counters of the bimodal predictor, indexed by ip modulo the largest prime not above it",
    ),
    int("btb_sets", "1024", 1 << 20, "sets", "branch target buffer sets"),
    int("btb_ways", "8", 64, "ways", "branch target buffer ways"),
    ParamSpec {
        name: "mispredict_penalty",
        kind: ParamKind::Int { min: 0, max: 1000 },
        default: "1",
        unit: "cycles",
        doc: "cycles after a mispredicted branch resolves before fetch restarts",
    },
];

/// Parameters of the in-order blocking model.
pub const INORDER_PARAMS: &[ParamSpec] = &[];

/// The registered core models.
pub const REGISTRY: &[Entry<BuildCore>] = &[
    Entry {
        name: "ooo",
        description: "out-of-order superscalar core: fetch through the L1I, branch prediction (traces with branches), ROB, physical registers, execute width, load/store queues, loads block retirement, misses overlap up to ROB/LQ/MSHR limits",
        paper: "drp §3 (Multi2Sim x86 OoO), tap Table 4, ChampSim's ooo_cpu and bimodal/basic_btb",
        params: OOO_PARAMS,
        build: ooo::build,
    },
    Entry {
        name: "in-order",
        description: "blocking in-order core: one access at a time, each waits for its data (gem5's TimingSimpleCPU); its access order is the trace's",
        paper: "gem5 TimingSimpleCPU",
        params: INORDER_PARAMS,
        build: inorder::build,
    },
];

/// Build the core model `name` with user parameters `given`.
pub fn build(
    name: &str,
    given: &toml::Table,
    domain: Domain,
    program: Box<dyn InstrSource>,
) -> Result<Box<dyn CoreModel>, TimingError> {
    let e = apusim_registry::find(REGISTRY, "core model", name)?;
    let p = e.params(given)?;
    Ok((e.build)(&p, domain, program))
}

/// Records the addresses a core warms, in order (the models' switching tests).
#[cfg(test)]
pub(crate) struct WarmLog(pub Vec<u64>);

#[cfg(test)]
impl WarmPort for WarmLog {
    fn warm(&mut self, acc: &Access) -> Result<(), TimingError> {
        self.0.push(acc.addr);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_declared_default_is_valid() {
        for e in REGISTRY {
            e.params(&toml::Table::new())
                .unwrap_or_else(|err| panic!("{}: {err}", e.name));
        }
    }
}
