//! The front end: instruction fetch through the L1I with branch prediction, decode, and
//! dispatch into the ROB, LQ and SQ while their entries and physical registers last.

use super::{Fetched, Load, Ooo, RobEntry, Stall, Store, FETCH_TOKEN, UNKNOWN};
use crate::core::bpred::Prediction;
use crate::core::{Issue, MemPort};
use crate::instr::{BranchKind, NO_REG};
use crate::{Tick, TimingError};
use apusim_trace::Stream;
use std::cmp::Reverse;

impl Ooo {
    /// Fetch may restart at `at` (a mispredicted branch resolved).
    pub(super) fn resume_fetch(&mut self, at: Tick) {
        let at = at + self.domain.cycles(self.cfg.mispredict_penalty);
        self.stats.mispredict_stall_cycles +=
            at.saturating_sub(self.mispredict_since) / self.domain.period;
        self.fetch_resume = at;
    }

    pub(super) fn fetch(&mut self, now: Tick, port: &mut dyn MemPort) -> Result<(), TimingError> {
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
    pub(super) fn hold_next(&mut self) -> Result<bool, TimingError> {
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
    pub(super) fn decode_tick(&self, avail: Tick) -> Tick {
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

    pub(super) fn dispatch(&mut self, now: Tick) {
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
}
