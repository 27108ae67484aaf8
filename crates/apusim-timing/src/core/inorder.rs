//! The blocking in-order core: one access at a time, each waiting for its data.
//!
//! Each instruction's accesses (fetch, loads, stores, in trace order) are sent one after the
//! other, each only once the previous one's data has arrived; an instruction takes at least
//! one cycle; a run of `n` instructions without memory accesses takes `n` cycles. The memory
//! side therefore sees exactly the trace's access order, and every access finishes before the
//! next one starts, so the timed hierarchy's hit/miss decisions equal the functional
//! hierarchy's (the exactness test in `apusim-sim`). It is gem5's TimingSimpleCPU without
//! its instruction execution.

use super::{CoreModel, CoreStats, Issue, MemPort, Token, Wake};
use crate::instr::{Instr, InstrSource};
use crate::{Domain, Tick, TimingError};
use apusim_registry::Params;
use apusim_trace::Stream;

pub struct InOrder {
    domain: Domain,
    program: Box<dyn InstrSource>,
    cur: Option<Instr>,
    next_op: usize,
    /// Completions still awaited for the access in flight.
    waiting: u32,
    /// Nothing happens before this tick.
    ready_at: Tick,
    /// When the current instruction started (it takes at least a cycle).
    started: Tick,
    token: Token,
    stats: CoreStats,
}

pub fn build(_: &Params, domain: Domain, program: Box<dyn InstrSource>) -> Box<dyn CoreModel> {
    Box::new(InOrder {
        domain,
        program,
        cur: None,
        next_op: 0,
        waiting: 0,
        ready_at: 0,
        started: 0,
        token: 0,
        stats: CoreStats::default(),
    })
}

impl CoreModel for InOrder {
    fn cycle(&mut self, now: Tick, port: &mut dyn MemPort) -> Result<Wake, TimingError> {
        self.stats.cycles = self.domain.cycle(now);
        loop {
            if self.waiting > 0 {
                return Ok(Wake::OnCompletion);
            }
            if now < self.ready_at {
                return Ok(Wake::At(self.domain.edge_at_or_after(self.ready_at)));
            }
            let Some(ins) = self.cur else {
                match self.program.next_instr()? {
                    None => return Ok(Wake::Finished),
                    Some(i) if i.n_ops == 0 => {
                        self.stats.instructions += u64::from(i.repeat);
                        self.ready_at = now + self.domain.cycles(u64::from(i.repeat));
                    }
                    Some(i) => {
                        self.cur = Some(i);
                        self.next_op = 0;
                        self.started = now;
                    }
                }
                continue;
            };
            if self.next_op == ins.n_ops as usize {
                self.stats.instructions += 1;
                self.cur = None;
                self.ready_at = self.ready_at.max(self.started + self.domain.period);
                continue;
            }
            let op = ins.ops[self.next_op];
            self.token += 1;
            match port.issue(now, &op, self.token) {
                Issue::Done(t) => self.ready_at = t.max(now),
                Issue::Pending(n) => {
                    self.waiting = n;
                    self.ready_at = now;
                }
                Issue::Busy(retry) => {
                    self.stats.mshr_busy += 1;
                    return Ok(match retry {
                        Some(t) => Wake::At(self.domain.edge_at_or_after(t.max(now + 1))),
                        None => Wake::OnCompletion,
                    });
                }
            }
            match (op.stream, op.op.is_write()) {
                (Stream::CpuInstr, _) => self.stats.fetches += 1,
                (_, true) => self.stats.stores += 1,
                (_, false) => self.stats.loads += 1,
            }
            self.next_op += 1;
        }
    }

    fn complete(&mut self, token: Token, at: Tick) {
        if token == self.token && self.waiting > 0 {
            self.waiting -= 1;
            self.ready_at = self.ready_at.max(at);
        }
    }

    fn stats(&self) -> CoreStats {
        self.stats
    }

    fn domain(&self) -> Domain {
        self.domain
    }
}
