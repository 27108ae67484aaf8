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

use super::bpred::{BranchPredictor, Prediction};
use super::{CoreModel, CoreStats, Issue, MemPort, Token, Wake, WarmPort};
use crate::instr::{BranchKind, Instr, InstrSource, NO_REG};
use crate::{Domain, Tick, TimingError};
use apusim_registry::Params;
use apusim_trace::{Access, Stream};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

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

    /// Take `n` execution slots from tick `ready` on; the tick of the cycle of the last one.
    fn exec_slots(&mut self, ready: Tick, n: u64) -> Tick {
        let w = self.cfg.exec_width;
        let mut c = self
            .domain
            .cycle(self.domain.edge_at_or_after(ready))
            .max(self.exec_base);
        let mut left = n;
        loop {
            let i = (c - self.exec_base) as usize;
            if self.exec_cal.len() <= i {
                self.exec_cal.resize(i + 1, 0);
            }
            let used = u64::from(self.exec_cal[i]);
            let take = (w - used).min(left);
            self.exec_cal[i] = (used + take) as u8;
            left -= take;
            if left == 0 {
                return self.domain.tick(c);
            }
            c += 1;
        }
    }

    /// Forget the execution slots of cycles before `now`.
    fn advance_exec(&mut self, now: Tick) {
        let c = self.domain.cycle(now);
        if c > self.exec_base {
            let drop = ((c - self.exec_base) as usize).min(self.exec_cal.len());
            self.exec_cal.drain(..drop);
            self.exec_base = c;
        }
    }

    /// Fetch may restart at `at` (a mispredicted branch resolved).
    fn resume_fetch(&mut self, at: Tick) {
        let at = at + self.domain.cycles(self.cfg.mispredict_penalty);
        self.stats.mispredict_stall_cycles +=
            at.saturating_sub(self.mispredict_since) / self.domain.period;
        self.fetch_resume = at;
    }

    /// Physical registers instruction `f` needs at dispatch: one per destination, and one
    /// per source read before anything mapped it.
    fn regs_needed(&self, f: &Fetched) -> u64 {
        let new_srcs = f
            .src
            .iter()
            .enumerate()
            .filter(|&(i, &r)| {
                r != NO_REG && !self.reg_mapped[r as usize] && !f.src[..i].contains(&r)
            })
            .count();
        let dsts = f.dst.iter().filter(|&&d| d != NO_REG).count();
        (new_srcs + dsts) as u64
    }

    fn rob_entry(&mut self, seq: u64) -> Option<&mut RobEntry> {
        let i = seq.checked_sub(self.rob_base)? as usize;
        self.rob.get_mut(i)
    }

    /// Instruction `seq`'s completion tick is now known: publish it to its destination
    /// registers and its dependents (and theirs, transitively).
    fn finish(&mut self, seq: u64, done: Tick) {
        self.worklist.push((seq, done));
        while let Some((seq, done)) = self.worklist.pop() {
            let alu = self.domain.cycles(self.cfg.alu_latency);
            if self.resolve_seq == Some(seq) {
                self.resolve_seq = None;
                self.resume_fetch(done);
            }
            let Some(e) = self.rob_entry(seq) else {
                continue;
            };
            e.done = done;
            let dst = e.dst;
            let dependents = std::mem::take(&mut e.dependents);
            for d in dst {
                if d != NO_REG && self.reg_writer[d as usize] == seq {
                    self.reg_ready[d as usize] = done;
                }
            }
            for &c in &dependents {
                let Some(ce) = self.rob_entry(c) else {
                    continue;
                };
                ce.ready = ce.ready.max(done);
                ce.srcs_pending -= 1;
                if ce.srcs_pending == 0 {
                    let (r, loads, count) = (ce.ready, ce.loads, ce.count);
                    if loads > 0 {
                        let x = self.exec_slots(r, 1);
                        self.release_loads(c, x + self.domain.period);
                    } else {
                        let x = self.exec_slots(r, count);
                        self.worklist.push((c, x + alu));
                    }
                }
            }
            self.recycle(dependents);
        }
    }

    /// Keep an emptied dependents list for reuse. Only lists that own memory are kept:
    /// every entry's list is taken when it finishes and again when it retires, and keeping
    /// the empty one left behind would grow the spare pool by one per instruction.
    fn recycle(&mut self, mut v: Vec<u64>) {
        if v.capacity() > 0 {
            v.clear();
            self.spare_deps.push(v);
        }
    }

    /// The loads of instruction `seq` may issue from tick `ready` on.
    fn release_loads(&mut self, seq: u64, ready: Tick) {
        for (i, l) in self.lq.iter().enumerate() {
            if l.rob_seq == seq {
                self.ready_loads
                    .push(Reverse((ready, self.lq_base + i as u64)));
            }
        }
    }

    fn load_part_done(&mut self, lq_seq: u64, at: Tick) {
        let Some(l) = lq_seq
            .checked_sub(self.lq_base)
            .and_then(|i| self.lq.get_mut(i as usize))
        else {
            return;
        };
        l.done = l.done.max(at);
        l.parts_left = l.parts_left.saturating_sub(1);
        if l.parts_left > 0 {
            return;
        }
        let (seq, done) = (l.rob_seq, l.done);
        let Some(e) = self.rob_entry(seq) else { return };
        e.load_done = e.load_done.max(done);
        e.loads_left -= 1;
        if e.loads_left == 0 {
            let t = e.load_done.max(e.ready);
            self.finish(seq, t);
        }
    }

    fn retire(&mut self, now: Tick) {
        let mut budget = self.cfg.retire_width;
        while budget > 0 {
            let Some(head) = self.rob.front_mut() else {
                break;
            };
            if head.done == UNKNOWN || head.done > now {
                if head.loads > 0 {
                    self.stats.rob_head_load_cycles += 1;
                }
                break;
            }
            let n = head.count.min(budget);
            head.count -= n;
            budget -= n;
            self.rob_instrs -= n;
            self.stats.instructions += n;
            if head.count > 0 {
                break;
            }
            let head = self.rob.pop_front().expect("checked above");
            self.rob_base += 1;
            for &d in head.dst.iter().filter(|&&d| d != NO_REG) {
                self.inflight_dsts -= 1;
                if !self.reg_committed[d as usize] {
                    self.reg_committed[d as usize] = true;
                    self.committed_regs += 1;
                }
            }
            for _ in 0..head.loads {
                self.lq.pop_front();
                self.lq_base += 1;
            }
            for s in self
                .sq
                .iter_mut()
                .filter(|s| !s.retired)
                .take(usize::from(head.stores))
            {
                s.retired = true;
            }
            self.recycle(head.dependents);
        }
    }

    fn write_stores(&mut self, now: Tick, port: &mut dyn MemPort) {
        let mut budget = self.cfg.store_ports;
        while budget > 0 && self.sq_next_write < self.sq.len() {
            let i = self.sq_next_write;
            if !self.sq[i].retired {
                break;
            }
            let token = STORE_TOKEN | (self.sq_base + i as u64);
            let acc = self.sq[i].acc;
            match port.issue(now, &acc, token) {
                Issue::Done(t) => {
                    let s = &mut self.sq[i];
                    s.done = t;
                    s.issued = true;
                }
                Issue::Pending(n) => {
                    let s = &mut self.sq[i];
                    s.parts_left = n;
                    s.issued = true;
                }
                Issue::Busy(retry) => {
                    self.stats.mshr_busy += 1;
                    self.busy_retry = Some(retry.unwrap_or(UNKNOWN));
                    break;
                }
            }
            self.stats.stores += 1;
            self.sq_next_write += 1;
            budget -= 1;
        }
        while let Some(s) = self.sq.front() {
            if !(s.issued && s.parts_left == 0 && s.done <= now) {
                break;
            }
            self.sq.pop_front();
            self.sq_base += 1;
            self.sq_next_write -= 1;
        }
    }

    fn issue_loads(&mut self, now: Tick, port: &mut dyn MemPort) {
        let mut budget = self.cfg.load_ports;
        while budget > 0 {
            let Some(&Reverse((ready, lq_seq))) = self.ready_loads.peek() else {
                break;
            };
            if ready > now {
                break;
            }
            let i = (lq_seq - self.lq_base) as usize;
            let acc = self.lq[i].acc;
            match port.issue(now, &acc, lq_seq) {
                Issue::Done(t) => {
                    self.ready_loads.pop();
                    self.lq[i].parts_left = 1;
                    self.load_part_done(lq_seq, t.max(now));
                }
                Issue::Pending(n) => {
                    self.ready_loads.pop();
                    self.lq[i].parts_left = n;
                }
                Issue::Busy(retry) => {
                    self.stats.mshr_busy += 1;
                    self.busy_retry = Some(retry.unwrap_or(UNKNOWN));
                    break;
                }
            }
            self.stats.loads += 1;
            budget -= 1;
        }
    }

    fn dispatch(&mut self, now: Tick) {
        let stall = self.dispatch_stall(now);
        if self.stall.map(|s| s.0) != stall {
            if let Some((kind, since)) = self.stall.take() {
                let cycles = (now - since) / self.domain.period;
                let c = match kind {
                    Stall::Rob => &mut self.stats.rob_full_cycles,
                    Stall::Lq => &mut self.stats.lq_full_cycles,
                    Stall::Sq => &mut self.stats.sq_full_cycles,
                    Stall::Registers => &mut self.stats.prf_full_cycles,
                };
                *c += cycles;
            }
            self.stall = stall.map(|k| (k, now));
        }
        self.dispatch_stalled = stall.is_some();
    }

    /// Dispatch from the fetch buffer; the resource it stopped for, if any.
    fn dispatch_stall(&mut self, now: Tick) -> Option<Stall> {
        let mut budget = self.cfg.dispatch_width;
        while budget > 0 {
            let Some(&f) = self.fetch_buf.front() else {
                break;
            };
            if f.avail == UNKNOWN || f.avail > now {
                break;
            }
            let rob_free = self.cfg.rob - self.rob_instrs;
            if rob_free == 0 {
                return Some(Stall::Rob);
            }
            if f.no_ops && f.count > 1 {
                // A run without memory accesses: as much of it as fits.
                let n = u64::from(f.count).min(budget).min(rob_free);
                self.push_rob(now, n, &f);
                budget -= n;
                self.fetch_buf_instrs -= n;
                let head = self.fetch_buf.front_mut().expect("checked above");
                head.count -= n as u32;
                if head.count == 0 {
                    self.fetch_buf.pop_front();
                }
                continue;
            }
            if self.lq.len() as u64 + u64::from(f.loads) > self.cfg.lq {
                return Some(Stall::Lq);
            }
            if self.sq.len() as u64 + u64::from(f.stores) > self.cfg.sq {
                return Some(Stall::Sq);
            }
            let regs = self.regs_needed(&f);
            if self.committed_regs + self.inflight_dsts + regs > self.cfg.physical_registers
                && regs > 0
                && !self.rob.is_empty()
            {
                return Some(Stall::Registers);
            }
            self.push_rob(now, 1, &f);
            self.fetch_buf.pop_front();
            self.fetch_buf_instrs -= 1;
            budget -= 1;
        }
        None
    }

    /// Put `count` instructions of `f` (all of it, or part of a run) into the ROB, and its
    /// loads and stores into the LQ and SQ.
    fn push_rob(&mut self, now: Tick, count: u64, f: &Fetched) {
        let (loads, stores) = (f.loads, f.stores);
        let seq = self.rob_base + self.rob.len() as u64;
        if f.mispredict == Some(false) {
            self.resolve_seq = Some(seq);
        }
        let mut e = RobEntry {
            count,
            done: UNKNOWN,
            ready: now + self.domain.cycles(self.cfg.schedule_cycles),
            srcs_pending: 0,
            loads,
            loads_left: loads,
            load_done: 0,
            stores,
            dst: f.dst,
            dependents: self.spare_deps.pop().unwrap_or_default(),
        };
        for &r in f.src.iter().filter(|&&r| r != NO_REG) {
            if !self.reg_mapped[r as usize] {
                // A register read before any write in the trace: its value is committed.
                self.reg_mapped[r as usize] = true;
                if !self.reg_committed[r as usize] {
                    self.reg_committed[r as usize] = true;
                    self.committed_regs += 1;
                }
            }
            let ready = self.reg_ready[r as usize];
            if ready != UNKNOWN {
                e.ready = e.ready.max(ready);
                continue;
            }
            // The writer is in the ROB with its result not yet known: wait for it.
            let w = self.reg_writer[r as usize];
            if let Some(i) = w.checked_sub(self.rob_base) {
                if let Some(we) = self.rob.get_mut(i as usize) {
                    we.dependents.push(seq);
                    e.srcs_pending += 1;
                }
            }
        }
        for &d in f.dst.iter().filter(|&&d| d != NO_REG) {
            self.reg_writer[d as usize] = seq;
            self.reg_ready[d as usize] = UNKNOWN;
            self.reg_mapped[d as usize] = true;
            self.inflight_dsts += 1;
        }
        let lq_first = self.lq_base + self.lq.len() as u64;
        for _ in 0..loads + stores {
            let a = self
                .fetch_data
                .pop_front()
                .expect("fetched with its instruction");
            if a.op.is_write() {
                self.sq.push_back(Store {
                    acc: a,
                    retired: false,
                    issued: false,
                    parts_left: 0,
                    done: 0,
                });
            } else {
                self.lq.push_back(Load {
                    rob_seq: seq,
                    acc: a,
                    parts_left: 0,
                    done: 0,
                });
            }
        }
        let ready = e.ready;
        let pending = e.srcs_pending;
        self.rob.push_back(e);
        self.rob_instrs += count;
        if pending == 0 {
            if loads > 0 {
                // Address generation takes an execution slot; the load issues from the next
                // cycle (ChampSim's LQ issues entries whose ready time has passed).
                let x = self.exec_slots(ready, 1);
                let at = (x + self.domain.period).max(now + self.domain.period);
                for q in lq_first..lq_first + u64::from(loads) {
                    self.ready_loads.push(Reverse((at, q)));
                }
            } else {
                let x = self.exec_slots(ready, count);
                let t = x + self.domain.cycles(self.cfg.alu_latency);
                self.finish(seq, t);
            }
        }
    }

    fn fetch(&mut self, now: Tick, port: &mut dyn MemPort) -> Result<(), TimingError> {
        if self.fetch_wait > 0 {
            self.stats.fetch_stall_cycles += 1;
            return Ok(());
        }
        if self.fetch_resume > now || self.fetch_stopped {
            return Ok(());
        }
        let frontend = self.domain.cycles(self.cfg.frontend_cycles);
        let mut budget = self.cfg.fetch_width;
        while budget > 0 && self.fetch_buf_instrs < self.cfg.fetch_buffer {
            if !self.hold_next()? {
                break;
            }
            if self.next.n_ops == 0 && self.next.repeat > 1 {
                let room = self.cfg.fetch_buffer - self.fetch_buf_instrs;
                let n = u64::from(self.next.repeat).min(budget).min(room);
                self.next.repeat -= n as u32;
                self.held = self.next.repeat > 0;
                let avail = self.fetch_done.max(now) + frontend;
                self.push_fetched(n as u32, avail, None);
                budget -= n;
                continue;
            }
            // The instruction's fetch accesses, in trace order.
            let mut waiting = 0;
            let n = self.next.n_ops as usize;
            for a in self.next.ops[..n]
                .iter()
                .filter(|a| a.stream == Stream::CpuInstr)
            {
                self.fetch_token += 1;
                match port.issue(now, a, FETCH_TOKEN | self.fetch_token) {
                    Issue::Done(t) => self.fetch_done = self.fetch_done.max(t),
                    Issue::Pending(n) => waiting += n,
                    Issue::Busy(_) => {
                        // No MSHR for the fetch: try this instruction again next cycle.
                        self.stats.mshr_busy += 1;
                        return Ok(());
                    }
                }
                self.stats.fetches += 1;
            }
            let mut stop = false;
            let mut mispredict = None;
            if self.next.branch != BranchKind::None {
                self.stats.branches += 1;
                match self.bp.predict(&self.next) {
                    Prediction::Right { taken } => stop = taken,
                    Prediction::Wrong { at_decode } => {
                        self.stats.mispredicts += 1;
                        mispredict = Some(at_decode);
                        self.fetch_resume = UNKNOWN;
                        self.mispredict_since = now;
                        stop = true;
                    }
                }
            }
            let avail = if waiting > 0 {
                self.fetch_wait = waiting;
                stop = true;
                UNKNOWN
            } else {
                self.fetch_done.max(now) + frontend
            };
            self.held = false;
            self.push_fetched(1, avail, mispredict);
            if mispredict == Some(true) && avail != UNKNOWN {
                let decoded = self.decode_tick(avail);
                self.resume_fetch(decoded);
            }
            budget -= 1;
            if stop {
                break;
            }
        }
        Ok(())
    }

    /// Make `next` hold the program's next instruction (read in place, see `dispatch`) unless
    /// it holds one already; false at the program's end.
    fn hold_next(&mut self) -> Result<bool, TimingError> {
        if !self.held {
            if !self.program.next_into(&mut self.next)? {
                self.ended = true;
                return Ok(false);
            }
            self.held = true;
        }
        Ok(true)
    }

    /// When an instruction that may dispatch at `avail` was decoded (decode is the stage before
    /// dispatch).
    fn decode_tick(&self, avail: Tick) -> Tick {
        if self.cfg.frontend_cycles > 0 {
            avail - self.domain.period
        } else {
            avail
        }
    }

    /// Put `count` instructions of `next` into the fetch buffer (its data accesses into
    /// `fetch_data`).
    fn push_fetched(&mut self, count: u32, avail: Tick, mispredict: Option<bool>) {
        let ins = &self.next;
        let (mut loads, mut stores) = (0, 0);
        for a in ins.ops().iter().filter(|a| a.stream != Stream::CpuInstr) {
            if a.op.is_write() {
                stores += 1;
            } else {
                loads += 1;
            }
            self.fetch_data.push_back(*a);
        }
        self.fetch_buf_instrs += u64::from(count);
        self.fetch_buf.push_back(Fetched {
            count,
            no_ops: ins.n_ops == 0,
            loads,
            stores,
            src: ins.src,
            dst: ins.dst,
            avail,
            mispredict,
        });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instr::{AccessInstrs, DepModel, VecInstrs};
    use crate::{Clock, Timebase};
    use apusim_trace::{Agent, Op, VecSource};

    /// Every access is answered after `latency` ticks.
    struct FixedLatency(Tick);
    impl MemPort for FixedLatency {
        fn issue(&mut self, now: Tick, _acc: &Access, _token: Token) -> Issue {
            Issue::Done(now + self.0)
        }
    }

    /// A long run of chained loads (every instruction has dependents) keeps a bounded pool of
    /// spare dependents lists: memory must not grow with the length of a run.
    #[test]
    fn spare_dependents_lists_stay_bounded() {
        let a = Agent::cpu(0);
        let trace: Vec<Access> = (0..200_000u64)
            .map(|i| Access::new(a, Stream::CpuData, Op::Read, (i % 512) * 64, 8).with_time(i))
            .collect();
        let program = AccessInstrs::new(Box::new(VecSource::new(trace)), None, DepModel::Chain);
        let clock = Clock::mhz(4000).unwrap();
        let tb = Timebase::new(&[clock]).unwrap();
        let domain = Domain::new(tb.period(clock).unwrap());
        let entry = apusim_registry::find(super::super::REGISTRY, "core model", "ooo").unwrap();
        let p = entry.params(&toml::from_str("rob = 64").unwrap()).unwrap();
        let mut core = Ooo::from_params(&p, domain, Box::new(program));
        let mut mem = FixedLatency(domain.cycles(3));
        let mut now = 0;
        loop {
            match core.cycle(now, &mut mem).unwrap() {
                Wake::At(t) => now = t.max(now + 1),
                Wake::OnCompletion => now += domain.period,
                Wake::Finished => break,
            }
        }
        assert_eq!(core.stats().instructions, 200_000);
        assert!(
            core.spare_deps.len() <= 64,
            "{} spare lists for a 64-entry ROB",
            core.spare_deps.len()
        );
    }

    /// Switching mid-run: with fetch stopped the core drains, warming takes the next
    /// instructions of the program in order without retiring them, and detailed execution
    /// resumes after them; retired plus warmed is the whole program.
    #[test]
    fn fetch_stops_the_core_drains_warms_and_resumes() {
        let program: Vec<Instr> = (0..3_000u64).map(|i| load(1, i * 64)).collect();
        let mut core = super::super::build(
            "ooo",
            &toml::Table::new(),
            Domain::new(1),
            Box::new(VecInstrs(program.into())),
        )
        .unwrap();
        let mut port = FixedLatency(50);
        let mut now = 0;
        // One cycle; true once the program has ended and the pipeline is empty.
        let mut step = |core: &mut Box<dyn CoreModel>, now: &mut Tick| {
            match core.cycle(*now, &mut port).unwrap() {
                Wake::At(t) => *now = t,
                Wake::OnCompletion => *now += 1,
                Wake::Finished => return true,
            }
            false
        };
        while core.stats().instructions < 1_000 {
            step(&mut core, &mut now);
        }
        core.set_fetch(false);
        assert!(!core.drained(), "instructions are in flight");
        for _ in 0..100_000 {
            if core.drained() {
                break;
            }
            step(&mut core, &mut now);
        }
        assert!(core.drained());
        let retired = core.stats().instructions;
        assert!((1_000..1_400).contains(&retired), "{retired}");
        let mut rec = super::super::WarmLog(Vec::new());
        assert_eq!(core.warm(500, &mut rec).unwrap(), 500);
        // The warmed loads are the program's next ones, in order (an instruction read ahead
        // when fetch stopped included).
        let first = rec.0[0] / 64;
        assert!(first >= retired, "warming starts after the retired ones");
        assert!(
            rec.0.windows(2).all(|w| w[1] == w[0] + 64),
            "in trace order"
        );
        assert_eq!(core.stats().warmed, 500);
        core.set_fetch(true);
        for _ in 0..1_000_000 {
            if step(&mut core, &mut now) {
                break;
            }
        }
        let s = core.stats();
        assert_eq!(s.instructions + s.warmed, 3_000);
        assert_eq!(
            first, retired,
            "nothing skipped between retiring and warming"
        );
    }

    fn run(program: Vec<Instr>, params: &[(&str, toml::Value)], latency: Tick) -> CoreStats {
        let mut t = toml::Table::new();
        for (k, v) in params {
            t.insert(k.to_string(), v.clone());
        }
        let mut core = super::super::build(
            "ooo",
            &t,
            Domain::new(1),
            Box::new(VecInstrs(program.into())),
        )
        .unwrap();
        let mut port = FixedLatency(latency);
        let mut now = 0;
        for _ in 0..10_000_000 {
            match core.cycle(now, &mut port).unwrap() {
                Wake::At(next) => now = next,
                Wake::Finished => return core.stats(),
                Wake::OnCompletion => panic!("nothing is pending with a fixed-latency port"),
            }
        }
        panic!("the program did not finish")
    }

    fn alu(dst: u8, src: u8) -> Instr {
        let mut i = Instr::plain(1);
        i.src[0] = src;
        i.dst[0] = dst;
        i
    }

    fn branch(ip: u64, taken: bool) -> Instr {
        let mut i = Instr::plain(1);
        i.ip = ip;
        i.branch = BranchKind::Conditional;
        i.taken = taken;
        i.target = if taken { 0x1000 } else { 0 };
        i.src = [26, 25, 0, 0];
        i.dst = [26, 0];
        i
    }

    fn load(dst: u8, addr: u64) -> Instr {
        let mut i = Instr::plain(1);
        i.push(Access::new(
            Agent::cpu(0),
            Stream::CpuData,
            Op::Read,
            addr,
            8,
        ));
        i.dst[0] = dst;
        i
    }

    /// Ten independent instructions and a branch whose direction follows a fixed
    /// pseudo-random pattern, `n` times.
    fn random_branches(n: u64) -> Vec<Instr> {
        let mut v = Vec::new();
        let mut x = 12345u64;
        for _ in 0..n {
            for k in 0..10 {
                v.push(alu(1 + k, 1 + k));
            }
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            v.push(branch(0x2000, x >> 63 == 1));
        }
        v
    }

    #[test]
    fn mispredicted_branches_stop_fetch_until_they_resolve() {
        let prog = random_branches(2000);
        let bimodal = run(prog.clone(), &[], 1);
        let perfect = run(
            prog,
            &[("branch_predictor", toml::Value::String("perfect".into()))],
            1,
        );
        assert_eq!(bimodal.instructions, 22_000);
        assert_eq!(bimodal.branches, 2000);
        // A random direction is mispredicted about half the time.
        assert!(
            (700..1300).contains(&bimodal.mispredicts),
            "{}",
            bimodal.mispredicts
        );
        assert_eq!(perfect.mispredicts, 0);
        // Each misprediction costs at least the refill of the front end.
        assert!(
            bimodal.cycles > perfect.cycles + bimodal.mispredicts * 4,
            "bimodal {} vs perfect {} cycles",
            bimodal.cycles,
            perfect.cycles
        );
        assert!(bimodal.mispredict_stall_cycles >= bimodal.mispredicts * 4);
    }

    #[test]
    fn execute_width_bounds_independent_instructions() {
        let prog: Vec<Instr> = (0..40_000u64).map(|k| alu(1 + (k % 20) as u8, 0)).collect();
        let four = run(prog.clone(), &[], 1);
        let two = run(prog, &[("exec_width", toml::Value::Integer(2))], 1);
        let ipc = |s: &CoreStats| s.instructions as f64 / s.cycles as f64;
        assert!((ipc(&four) - 4.0).abs() < 0.05, "{}", ipc(&four));
        assert!((ipc(&two) - 2.0).abs() < 0.05, "{}", ipc(&two));
    }

    #[test]
    fn physical_registers_bound_the_loads_in_flight() {
        // Independent loads of 200 cycles, each writing its own register.
        let prog: Vec<Instr> = (0..4000u64)
            .map(|k| load(1 + (k % 100) as u8, 64 * k))
            .collect();
        let many = run(prog.clone(), &[], 200);
        let few = run(
            prog,
            &[("physical_registers", toml::Value::Integer(16))],
            200,
        );
        // 128 registers less the ~100 architectural ones in use leave ~28 loads in flight;
        // 16 registers (all needed by the architectural state) let one through at a time.
        assert!(
            few.cycles > 3 * many.cycles,
            "{} vs {}",
            few.cycles,
            many.cycles
        );
        assert!(
            few.prf_full_cycles > few.cycles / 2,
            "{}",
            few.prf_full_cycles
        );
    }

    #[test]
    fn traces_without_branches_predict_nothing() {
        let prog: Vec<Instr> = (0..1000u64).map(|k| alu(1, (k % 2) as u8)).collect();
        let s = run(prog, &[], 1);
        assert_eq!((s.branches, s.mispredicts), (0, 0));
    }
}
