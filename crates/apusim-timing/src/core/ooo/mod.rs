//! The out-of-order core for trace input.
//!
//! Each cycle, in reverse pipeline order (as ChampSim does, so an instruction moves at most
//! one stage per cycle):
//!
//! 1. **Retire** up to `retire_width` instructions from the head of the ROB whose results are
//!    known by now. A load blocks retirement until its data has arrived; a store retires
//!    once its address and data are ready and then waits in the store queue to be written.
//! 2. **Write stores**: up to `store_ports` retired stores, oldest first, are sent to the L1D;
//!    the store-queue entry is freed when the write is done.
//! 3. **Issue loads**: up to `load_ports` loads whose address is known, oldest ready first, are
//!    sent to the L1D. A load refused for lack of a miss-status register waits and retries;
//!    independent misses overlap up to the ROB, LQ and MSHR limits.
//! 4. **Dispatch** up to `dispatch_width` fetched instructions into the ROB (and their loads and
//!    stores into the LQ and SQ) once they have spent `frontend_cycles` after fetch, while
//!    physical registers last (`physical_registers`: every architectural register in use
//!    holds one, and every dispatched instruction one per destination until it retires, as
//!    ChampSim's register allocator does; ChampSim stops scheduling where this check fails,
//!    apusim stops dispatch there, which holds back the same instructions).
//! 5. **Fetch** up to `fetch_width` instructions; an instruction-fetch access goes through the
//!    L1I, and a miss stops fetch until its line arrives. For traces that carry branches
//!    (ChampSim traces), each branch is predicted ([`super::bpred`]): a correctly predicted
//!    taken branch ends the cycle's fetch; a mispredicted one stops fetch until it resolves
//!    (at decode for direct jumps and calls and for conditional branches with the right
//!    direction, else when it executes), and fetch restarts `mispredict_penalty` cycles
//!    later. As in ChampSim, the wrong path is never fetched.
//!
//! Results are time stamps: an instruction's completion tick is computed when its sources'
//! ticks are known, so chains of non-memory instructions cost no per-cycle work, and the
//! core sleeps (asks to be woken only on its next event) while it waits for memory.
//! Execution starts `schedule_cycles` after dispatch at the earliest and takes one of the
//! `exec_width` slots of a cycle (a calendar of slots per future cycle; an instruction takes
//! the first free slot at or after the tick its sources are ready, in the order readiness
//! becomes known, where ChampSim picks the oldest ready each cycle). Functional units are
//! not modelled otherwise (no port contention besides loads and stores), nor store-to-load
//! forwarding.

//!
//! The core's state and its [`CoreModel`] step are here; `frontend` fetches and dispatches,
//! `backend` executes, retires and sends loads and stores.

use super::bpred::BranchPredictor;
use super::{CoreModel, CoreStats, MemPort, Token, Wake, WarmPort};
use crate::instr::{BranchKind, Instr, InstrSource};
use crate::{Domain, Tick, TimingError};
use apusim_registry::Params;
use apusim_trace::Access;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

mod backend;
mod frontend;
#[cfg(test)]
mod tests;

const UNKNOWN: Tick = Tick::MAX;
const STORE_TOKEN: Token = 1 << 63;
const FETCH_TOKEN: Token = 1 << 62;

/// Sizes and widths (see [`super::OOO_PARAMS`]).
#[derive(Clone, Copy, Debug)]
struct Config {
    fetch_width: u64,
    dispatch_width: u64,
    retire_width: u64,
    rob: u64,
    lq: u64,
    sq: u64,
    load_ports: u64,
    store_ports: u64,
    fetch_buffer: u64,
    frontend_cycles: u64,
    alu_latency: u64,
    exec_width: u64,
    schedule_cycles: u64,
    physical_registers: u64,
    mispredict_penalty: u64,
}

struct RobEntry {
    /// Instructions this entry stands for (a run without memory accesses is one entry).
    count: u64,
    /// Completion tick, `UNKNOWN` until its sources (and loads) are known.
    done: Tick,
    /// Latest known source tick (starts at dispatch).
    ready: Tick,
    srcs_pending: u8,
    loads: u8,
    loads_left: u8,
    load_done: Tick,
    stores: u8,
    dst: [u8; 2],
    dependents: Vec<u64>,
}

struct Load {
    rob_seq: u64,
    acc: Access,
    parts_left: u32,
    done: Tick,
}

struct Store {
    acc: Access,
    /// Retired (may be written).
    retired: bool,
    issued: bool,
    parts_left: u32,
    done: Tick,
}

/// A fetched instruction (or part of a run without memory accesses), with what dispatch
/// needs of it; its data accesses wait in [`Ooo::fetch_data`], as the fetch buffer holds
/// many instructions and an [`Instr`] is a few hundred bytes.
#[derive(Clone, Copy)]
struct Fetched {
    /// Instructions this record stands for.
    count: u32,
    /// The instruction carried no access at all (not even its fetch): a record of more
    /// than one instruction is a run, dispatched as far as the ROB has room.
    no_ops: bool,
    loads: u8,
    stores: u8,
    src: [u8; 4],
    dst: [u8; 2],
    /// When it may dispatch (`UNKNOWN` while its instruction fetch is outstanding).
    avail: Tick,
    /// A mispredicted branch: `Some(true)` if it resolves at decode, `Some(false)` at execution.
    mispredict: Option<bool>,
}

pub struct Ooo {
    cfg: Config,
    domain: Domain,
    program: Box<dyn InstrSource>,
    ended: bool,
    /// `next` holds an instruction read from the program but not yet fetched (fetch stopped
    /// mid-way, or the rest of a run without memory accesses).
    held: bool,
    next: Instr,

    fetch_buf: VecDeque<Fetched>,
    /// The data accesses (loads and stores, in trace order) of the instructions in
    /// `fetch_buf`, in fetch order.
    fetch_data: VecDeque<Access>,
    fetch_buf_instrs: u64,
    /// Outstanding instruction-fetch completions; fetch is stopped while non-zero.
    fetch_wait: u32,
    fetch_token: Token,
    fetch_done: Tick,

    rob: VecDeque<RobEntry>,
    /// Sequence number of `rob[0]`.
    rob_base: u64,
    rob_instrs: u64,
    spare_deps: Vec<Vec<u64>>,

    lq: VecDeque<Load>,
    lq_base: u64,
    ready_loads: BinaryHeap<Reverse<(Tick, u64)>>,
    sq: VecDeque<Store>,
    sq_base: u64,
    /// Index (into `sq`) of the next store that may be written, once retired.
    sq_next_write: usize,

    reg_ready: [Tick; 256],
    reg_writer: [u64; 256],
    /// A load or store was refused for lack of an MSHR; retry then (`UNKNOWN`: on completion).
    busy_retry: Option<Tick>,
    stats: CoreStats,
    worklist: Vec<(u64, Tick)>,

    bp: BranchPredictor,
    /// Fetch may run from this tick on (`UNKNOWN` while a mispredicted branch is unresolved).
    fetch_resume: Tick,
    /// Since when fetch has waited for a mispredicted branch.
    mispredict_since: Tick,
    /// The ROB sequence number of a mispredicted branch that resolves when it executes.
    resolve_seq: Option<u64>,
    /// Execution slots used in cycles `exec_base`, `exec_base + 1`, ….
    exec_cal: VecDeque<u8>,
    exec_base: u64,
    /// Architectural registers mapped in the front end / with a committed physical register.
    reg_mapped: [bool; 256],
    reg_committed: [bool; 256],
    committed_regs: u64,
    /// Destinations of dispatched, unretired instructions (each holds a physical register).
    inflight_dsts: u64,
    /// Dispatch stopped at the last cycle for a full ROB, LQ, SQ or register file: only a
    /// retirement or a finished store can restart it, so the core need not wake for it.
    dispatch_stalled: bool,
    /// The resource dispatch is waiting for, and since when (stall cycles are counted when
    /// the stall ends, since the core sleeps through it).
    stall: Option<(Stall, Tick)>,
    /// Fetch stopped (sampled runs drain the core before warming).
    fetch_stopped: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stall {
    Rob,
    Lq,
    Sq,
    Registers,
}

pub fn build(p: &Params, domain: Domain, program: Box<dyn InstrSource>) -> Box<dyn CoreModel> {
    Box::new(Ooo::from_params(p, domain, program))
}

impl Ooo {
    /// The core with the registered parameters `p`.
    fn from_params(p: &Params, domain: Domain, program: Box<dyn InstrSource>) -> Ooo {
        let cfg = Config {
            fetch_width: p.int("fetch_width"),
            dispatch_width: p.int("dispatch_width"),
            retire_width: p.int("retire_width"),
            rob: p.int("rob"),
            lq: p.int("lq"),
            sq: p.int("sq"),
            load_ports: p.int("load_ports"),
            store_ports: p.int("store_ports"),
            fetch_buffer: p.int("fetch_buffer"),
            frontend_cycles: p.int("frontend_cycles"),
            alu_latency: p.int("alu_latency"),
            exec_width: p.int("exec_width"),
            schedule_cycles: p.int("schedule_cycles"),
            physical_registers: p.int("physical_registers"),
            mispredict_penalty: p.int("mispredict_penalty"),
        };
        let bp = match p.choice("branch_predictor") {
            "perfect" => BranchPredictor::perfect(),
            _ => BranchPredictor::bimodal(
                p.int("bimodal_entries"),
                p.int("btb_sets"),
                p.int("btb_ways"),
            ),
        };
        Ooo::new(cfg, domain, program, bp)
    }

    fn new(cfg: Config, domain: Domain, program: Box<dyn InstrSource>, bp: BranchPredictor) -> Ooo {
        Ooo {
            cfg,
            domain,
            program,
            ended: false,
            held: false,
            next: Instr::plain(1),
            fetch_buf: VecDeque::new(),
            fetch_data: VecDeque::new(),
            fetch_buf_instrs: 0,
            fetch_wait: 0,
            fetch_token: 0,
            fetch_done: 0,
            rob: VecDeque::new(),
            rob_base: 0,
            rob_instrs: 0,
            spare_deps: Vec::new(),
            lq: VecDeque::new(),
            lq_base: 0,
            ready_loads: BinaryHeap::new(),
            sq: VecDeque::new(),
            sq_base: 0,
            sq_next_write: 0,
            reg_ready: [0; 256],
            reg_writer: [u64::MAX; 256],
            busy_retry: None,
            stats: CoreStats::default(),
            worklist: Vec::new(),
            bp,
            fetch_resume: 0,
            mispredict_since: 0,
            resolve_seq: None,
            exec_cal: VecDeque::new(),
            exec_base: 0,
            reg_mapped: [false; 256],
            reg_committed: [false; 256],
            committed_regs: 0,
            inflight_dsts: 0,
            dispatch_stalled: false,
            stall: None,
            fetch_stopped: false,
        }
    }

    fn rob_entry(&mut self, seq: u64) -> Option<&mut RobEntry> {
        let i = seq.checked_sub(self.rob_base)? as usize;
        self.rob.get_mut(i)
    }

    /// When the core next has something to do after the cycle at `now`.
    fn next_wake(&self, now: Tick) -> Wake {
        let next_cycle = now + self.domain.period;
        let mut t = UNKNOWN;
        if let Some(h) = self.rob.front() {
            t = t.min(h.done);
        }
        let blocked = self.busy_retry;
        if let Some(&Reverse((r, _))) = self.ready_loads.peek() {
            t = t.min(match blocked {
                Some(b) => b.max(r),
                None => r,
            });
        }
        if self.sq_next_write < self.sq.len() && self.sq[self.sq_next_write].retired {
            t = t.min(blocked.unwrap_or(next_cycle));
        }
        if let Some(s) = self.sq.front() {
            if s.issued && s.parts_left == 0 {
                t = t.min(s.done);
            }
        }
        if let Some(f) = self.fetch_buf.front().filter(|_| !self.dispatch_stalled) {
            t = t.min(f.avail);
        }
        let can_fetch = self.fetch_wait == 0
            && !self.fetch_stopped
            && self.fetch_resume != UNKNOWN
            && (!self.ended || self.held)
            && self.fetch_buf_instrs < self.cfg.fetch_buffer;
        if can_fetch {
            t = t.min(next_cycle.max(self.fetch_resume));
        }
        if t != UNKNOWN {
            return Wake::At(self.domain.edge_at_or_after(t.max(next_cycle)));
        }
        let empty = self.rob.is_empty()
            && self.sq.is_empty()
            && self.fetch_buf.is_empty()
            && !self.held
            && self.ended;
        if empty {
            Wake::Finished
        } else {
            Wake::OnCompletion
        }
    }
}

impl CoreModel for Ooo {
    fn cycle(&mut self, now: Tick, port: &mut dyn MemPort) -> Result<Wake, TimingError> {
        self.stats.cycles = self.domain.cycle(now);
        self.advance_exec(now);
        if self.busy_retry.is_some_and(|b| b <= now) {
            self.busy_retry = None;
        }
        self.retire(now);
        if self.busy_retry.is_none() {
            self.write_stores(now, port);
        }
        if self.busy_retry.is_none() {
            self.issue_loads(now, port);
        }
        self.dispatch(now);
        self.fetch(now, port)?;
        Ok(self.next_wake(now))
    }

    fn complete(&mut self, token: Token, at: Tick) {
        // A completion frees an MSHR: a refused access may be retried.
        if self.busy_retry == Some(UNKNOWN) {
            self.busy_retry = Some(at);
        }
        if token & STORE_TOKEN != 0 {
            let seq = token & !STORE_TOKEN;
            if let Some(s) = seq
                .checked_sub(self.sq_base)
                .and_then(|i| self.sq.get_mut(i as usize))
            {
                s.parts_left = s.parts_left.saturating_sub(1);
                s.done = s.done.max(at);
            }
        } else if token & FETCH_TOKEN != 0 {
            self.fetch_wait = self.fetch_wait.saturating_sub(1);
            self.fetch_done = self.fetch_done.max(at);
            if self.fetch_wait == 0 {
                let avail = self.fetch_done + self.domain.cycles(self.cfg.frontend_cycles);
                let mut decode_resolved = false;
                for f in self.fetch_buf.iter_mut().rev() {
                    if f.avail == UNKNOWN {
                        f.avail = avail;
                        decode_resolved |= f.mispredict == Some(true);
                    }
                }
                if decode_resolved && self.fetch_resume == UNKNOWN {
                    self.resume_fetch(self.decode_tick(avail));
                }
            }
        } else {
            self.load_part_done(token, at);
        }
    }

    fn set_fetch(&mut self, on: bool) {
        self.fetch_stopped = !on;
    }

    fn drained(&self) -> bool {
        self.rob.is_empty()
            && self.sq.is_empty()
            && self.fetch_buf.is_empty()
            && self.fetch_wait == 0
    }

    fn warm(&mut self, n: u64, port: &mut dyn WarmPort) -> Result<u64, TimingError> {
        let mut taken = 0;
        while taken < n {
            // An instruction read but not fetched when fetch stopped comes first.
            if !self.hold_next()? {
                break;
            }
            if self.next.n_ops == 0 && self.next.repeat > 1 {
                let k = u64::from(self.next.repeat).min(n - taken);
                self.next.repeat -= k as u32;
                self.held = self.next.repeat > 0;
                taken += k;
                continue;
            }
            for a in self.next.ops() {
                port.warm(a)?;
            }
            if self.next.branch != BranchKind::None {
                self.bp.predict(&self.next);
            }
            self.held = false;
            taken += 1;
        }
        self.stats.warmed += taken;
        Ok(taken)
    }

    fn stats(&self) -> CoreStats {
        self.stats
    }

    fn domain(&self) -> Domain {
        self.domain
    }
}
