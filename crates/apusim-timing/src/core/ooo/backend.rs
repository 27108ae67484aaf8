//! The back end: execution slots and completion times, retirement from the ROB, and the
//! loads and stores it sends to the L1D.

use super::{Ooo, STORE_TOKEN, UNKNOWN};
use crate::core::{Issue, MemPort};
use crate::instr::NO_REG;
use crate::Tick;
use std::cmp::Reverse;

impl Ooo {
    /// Take `n` execution slots from tick `ready` on; the tick of the cycle of the last one.
    pub(super) fn exec_slots(&mut self, ready: Tick, n: u64) -> Tick {
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
    pub(super) fn advance_exec(&mut self, now: Tick) {
        let c = self.domain.cycle(now);
        if c > self.exec_base {
            let drop = ((c - self.exec_base) as usize).min(self.exec_cal.len());
            self.exec_cal.drain(..drop);
            self.exec_base = c;
        }
    }

    /// Instruction `seq`'s completion tick is now known: publish it to its destination
    /// registers and its dependents (and theirs, transitively).
    pub(super) fn finish(&mut self, seq: u64, done: Tick) {
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

    pub(super) fn load_part_done(&mut self, lq_seq: u64, at: Tick) {
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

    pub(super) fn retire(&mut self, now: Tick) {
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

    pub(super) fn write_stores(&mut self, now: Tick, port: &mut dyn MemPort) {
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

    pub(super) fn issue_loads(&mut self, now: Tick, port: &mut dyn MemPort) {
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
}
