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
//!    stores into the LQ and SQ) once they have spent `frontend_cycles` after fetch.
//! 5. **Fetch** up to `fetch_width` instructions; an instruction-fetch access goes through the
//!    L1I, and a miss stops fetch until its line arrives.
//!
//! Results are time stamps: an instruction's completion tick is computed when its sources'
//! ticks are known, so chains of non-memory instructions cost no per-cycle work, and the
//! core sleeps (asks to be woken only on its next event) while it waits for memory.
//! Functional units are not modelled (no port contention besides loads and stores), nor
//! branch prediction or store-to-load forwarding.

use super::{CoreModel, CoreStats, Issue, MemPort, Token, Wake};
use crate::instr::{Instr, InstrSource, NO_REG};
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

struct Fetched {
    ins: Instr,
    /// When it may dispatch (`UNKNOWN` while its instruction fetch is outstanding).
    avail: Tick,
}

pub struct Ooo {
    cfg: Config,
    domain: Domain,
    program: Box<dyn InstrSource>,
    ended: bool,
    /// An instruction read from the program but not yet fetched (fetch stopped mid-way).
    held: Option<Instr>,

    fetch_buf: VecDeque<Fetched>,
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
}

pub fn build(p: &Params, domain: Domain, program: Box<dyn InstrSource>) -> Box<dyn CoreModel> {
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
    };
    Box::new(Ooo::new(cfg, domain, program))
}

impl Ooo {
    fn new(cfg: Config, domain: Domain, program: Box<dyn InstrSource>) -> Ooo {
        Ooo {
            cfg,
            domain,
            program,
            ended: false,
            held: None,
            fetch_buf: VecDeque::new(),
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
        }
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
                    if ce.loads > 0 {
                        let r = ce.ready;
                        self.release_loads(c, r);
                    } else {
                        let t = ce.ready + alu;
                        self.worklist.push((c, t));
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
        let mut budget = self.cfg.dispatch_width;
        while budget > 0 {
            let Some(f) = self.fetch_buf.front() else {
                break;
            };
            if f.avail == UNKNOWN || f.avail > now {
                break;
            }
            let ins = f.ins;
            let rob_free = self.cfg.rob - self.rob_instrs;
            if rob_free == 0 {
                self.stats.rob_full_cycles += 1;
                break;
            }
            if ins.n_ops == 0 {
                // A run without memory accesses: as much of it as fits.
                let n = u64::from(ins.repeat).min(budget).min(rob_free);
                self.push_rob(now, n, &ins, 0, 0);
                budget -= n;
                self.fetch_buf_instrs -= n;
                let f = self.fetch_buf.front_mut().expect("checked above");
                f.ins.repeat -= n as u32;
                if f.ins.repeat == 0 {
                    self.fetch_buf.pop_front();
                }
                continue;
            }
            let data = ins.ops().iter().filter(|a| a.stream != Stream::CpuInstr);
            let stores = data.clone().filter(|a| a.op.is_write()).count() as u64;
            let loads = data.count() as u64 - stores;
            if self.lq.len() as u64 + loads > self.cfg.lq {
                self.stats.lq_full_cycles += 1;
                break;
            }
            if self.sq.len() as u64 + stores > self.cfg.sq {
                self.stats.sq_full_cycles += 1;
                break;
            }
            self.fetch_buf.pop_front();
            self.fetch_buf_instrs -= 1;
            self.push_rob(now, 1, &ins, loads as u8, stores as u8);
            budget -= 1;
        }
    }

    fn push_rob(&mut self, now: Tick, count: u64, ins: &Instr, loads: u8, stores: u8) {
        let seq = self.rob_base + self.rob.len() as u64;
        let mut e = RobEntry {
            count,
            done: UNKNOWN,
            ready: now,
            srcs_pending: 0,
            loads,
            loads_left: loads,
            load_done: 0,
            stores,
            dst: ins.dst,
            dependents: self.spare_deps.pop().unwrap_or_default(),
        };
        for &r in ins.src.iter().filter(|&&r| r != NO_REG) {
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
        for &d in ins.dst.iter().filter(|&&d| d != NO_REG) {
            self.reg_writer[d as usize] = seq;
            self.reg_ready[d as usize] = UNKNOWN;
        }
        let lq_first = self.lq_base + self.lq.len() as u64;
        for a in ins.ops().iter().filter(|a| a.stream != Stream::CpuInstr) {
            if a.op.is_write() {
                self.sq.push_back(Store {
                    acc: *a,
                    retired: false,
                    issued: false,
                    parts_left: 0,
                    done: 0,
                });
            } else {
                self.lq.push_back(Load {
                    rob_seq: seq,
                    acc: *a,
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
                // Address generation takes the cycle of dispatch; the load issues from the next.
                let at = ready.max(now + self.domain.period);
                for q in lq_first..lq_first + u64::from(loads) {
                    self.ready_loads.push(Reverse((at, q)));
                }
            } else {
                let t = ready + self.domain.cycles(self.cfg.alu_latency);
                self.finish(seq, t);
            }
        }
    }

    fn fetch(&mut self, now: Tick, port: &mut dyn MemPort) -> Result<(), TimingError> {
        if self.fetch_wait > 0 {
            self.stats.fetch_stall_cycles += 1;
            return Ok(());
        }
        let mut budget = self.cfg.fetch_width;
        while budget > 0 && self.fetch_buf_instrs < self.cfg.fetch_buffer {
            let ins = match self.held.take() {
                Some(i) => i,
                None => match self.program.next_instr()? {
                    Some(i) => i,
                    None => {
                        self.ended = true;
                        break;
                    }
                },
            };
            let frontend = self.domain.cycles(self.cfg.frontend_cycles);
            if ins.n_ops == 0 {
                let room = self.cfg.fetch_buffer - self.fetch_buf_instrs;
                let n = u64::from(ins.repeat).min(budget).min(room);
                let mut part = ins;
                part.repeat = n as u32;
                if u64::from(ins.repeat) > n {
                    let mut rest = ins;
                    rest.repeat -= n as u32;
                    self.held = Some(rest);
                }
                self.push_fetched(part, self.fetch_done.max(now) + frontend);
                budget -= n;
                continue;
            }
            // The instruction's fetch accesses, in trace order.
            let mut waiting = 0;
            for a in ins.ops().iter().filter(|a| a.stream == Stream::CpuInstr) {
                self.fetch_token += 1;
                match port.issue(now, a, FETCH_TOKEN | self.fetch_token) {
                    Issue::Done(t) => self.fetch_done = self.fetch_done.max(t),
                    Issue::Pending(n) => waiting += n,
                    Issue::Busy(_) => {
                        // No MSHR for the fetch: try this instruction again next cycle.
                        self.stats.mshr_busy += 1;
                        self.held = Some(ins);
                        return Ok(());
                    }
                }
                self.stats.fetches += 1;
            }
            if waiting > 0 {
                self.fetch_wait = waiting;
                self.push_fetched(ins, UNKNOWN);
                break;
            }
            self.push_fetched(ins, self.fetch_done.max(now) + frontend);
            budget -= 1;
        }
        Ok(())
    }

    fn push_fetched(&mut self, ins: Instr, avail: Tick) {
        self.fetch_buf_instrs += u64::from(ins.repeat);
        self.fetch_buf.push_back(Fetched { ins, avail });
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
        if let Some(f) = self.fetch_buf.front() {
            t = t.min(f.avail);
        }
        let can_fetch = self.fetch_wait == 0
            && (!self.ended || self.held.is_some())
            && self.fetch_buf_instrs < self.cfg.fetch_buffer;
        if can_fetch {
            t = t.min(next_cycle);
        }
        if t != UNKNOWN {
            return Wake::At(self.domain.edge_at_or_after(t.max(next_cycle)));
        }
        let empty = self.rob.is_empty()
            && self.sq.is_empty()
            && self.fetch_buf.is_empty()
            && self.held.is_none()
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
                for f in self.fetch_buf.iter_mut().rev() {
                    if f.avail == UNKNOWN {
                        f.avail = avail;
                    }
                }
            }
        } else {
            self.load_part_done(token, at);
        }
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
    use crate::instr::{AccessInstrs, DepModel};
    use crate::{Clock, Timebase};
    use apusim_trace::{Access, Agent, Op, VecSource};

    /// Memory that answers every access after `latency` ticks.
    struct FixedLatency(Tick);
    impl MemPort for FixedLatency {
        fn issue(&mut self, now: Tick, _: &Access, _: Token) -> Issue {
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
        let cfg = Config {
            fetch_width: 6,
            dispatch_width: 6,
            retire_width: 5,
            rob: 64,
            lq: 32,
            sq: 16,
            load_ports: 2,
            store_ports: 1,
            fetch_buffer: 64,
            frontend_cycles: 1,
            alu_latency: 1,
        };
        let mut core = Ooo::new(cfg, domain, Box::new(program));
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
}
