//! The load/store units' side of memory: transactions sent to the cores' L1s, refused and
//! retried, and their answers returned to the warps that wait for them.

use super::{marked, InFlight, Simt};
use crate::{Issue, MemPort, Tick, Token};
use std::cmp::Reverse;

impl Simt {
    /// An in-flight transaction has all its data (at cycle `c`).
    pub(super) fn arrived(&mut self, idx: u32, at: Tick) {
        let f = self.inflight[idx as usize];
        self.free_inflight.push(idx);
        let c = self.domain.cycle(self.domain.edge_at_or_after(at));
        let (s, w) = (f.sm as usize, f.warp as usize);
        // A refusal without a retry time waits for a completion, and any core's completion may
        // free what refused it: a table the memory side shares among cores (the GPU streams
        // without a cache of their own) can be full of other cores' requests while this core
        // has nothing in flight.
        for sm in &mut self.sms {
            sm.lsu_wait = false;
        }
        let sm = &mut self.sms[s];
        let wc = &mut sm.warps[w];
        if f.load {
            wc.pending -= 1;
            self.stats.loads_done += 1;
            self.stats.load_ticks += at.saturating_sub(f.sent);
            if wc.pending == 0 {
                if let Some(since) = wc.waiting_since.take() {
                    let stalled = c.saturating_sub(since);
                    *self.pc_stalls.entry(f.pc).or_default() += stalled;
                    // The load whose data released the warp is the producer its first use
                    // waited for; it enters the stall table only if it missed the core's
                    // private cache (gpu-access-criticality §3).
                    if let Some(k) = self.crit.as_deref_mut().filter(|_| f.missed && stalled > 0) {
                        k.stall(s, f.pc, stalled);
                    }
                }
            }
        } else {
            wc.stores -= 1;
        }
        self.settle(s, w, c);
    }

    /// Send up to `lsu_width` transactions of core `s` to its L1.
    pub(super) fn send(&mut self, s: usize, now: Tick, c: u64, port: &mut dyn MemPort) {
        for _ in 0..self.lsu_width {
            let sm = &mut self.sms[s];
            let Some(&t) = sm.lsu.front() else {
                break;
            };
            if sm.lsu_wait || now < sm.lsu_retry {
                break;
            }
            let mut acc = t.access(s as u16);
            let mark = self.crit.as_deref().map(|k| k.mark(s, t.pc));
            if let Some(m) = mark {
                acc.flags = marked(acc.flags, m);
            }
            let idx = self.free_inflight.pop().unwrap_or_else(|| {
                self.inflight.push(InFlight::default());
                (self.inflight.len() - 1) as u32
            });
            self.inflight[idx as usize] = InFlight {
                sm: s as u16,
                warp: t.warp,
                load: t.returns_data(),
                pc: t.pc,
                sent: now,
                parts: 1,
                missed: false,
            };
            let sm = &mut self.sms[s];
            match port.issue(now, &acc, Token::from(idx)) {
                Issue::Busy(retry) => {
                    self.free_inflight.push(idx);
                    match retry {
                        Some(r) => sm.lsu_retry = r.max(now + 1),
                        None => sm.lsu_wait = true,
                    }
                    sm.lsu_blocked_since.get_or_insert(c);
                    break;
                }
                Issue::Done(at) => {
                    sm.lsu.pop_front();
                    self.due.push(Reverse((at, idx)));
                }
                Issue::Pending(parts) => {
                    sm.lsu.pop_front();
                    self.inflight[idx as usize].missed = true;
                    // The request the private cache sends on towards the LLC is the one the
                    // mark is for.
                    if let (Some(k), Some(m)) = (self.crit.as_deref_mut(), mark) {
                        k.count(m);
                    }
                    if parts == 0 {
                        self.due.push(Reverse((now, idx)));
                    } else {
                        self.inflight[idx as usize].parts = parts;
                    }
                }
            }
            let sm = &mut self.sms[s];
            if let Some(since) = sm.lsu_blocked_since.take() {
                self.stats.lsu_busy_cycles += c - since;
            }
        }
    }
}
