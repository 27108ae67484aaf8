//! The blocking in-order core: one access at a time, each waiting for its data.
//!
//! Each instruction's accesses (fetch, loads, stores, in trace order) are sent one after the
//! other, each only once the previous one's data has arrived; an instruction takes at least
//! one cycle; a run of `n` instructions without memory accesses takes `n` cycles. The memory
//! side therefore sees exactly the trace's access order, and every access finishes before the
//! next one starts, so the timed hierarchy's hit/miss decisions equal the functional
//! hierarchy's (the exactness test in `apusim-sim`). It is gem5's TimingSimpleCPU without
//! its instruction execution.

use super::{CoreModel, CoreStats, Issue, MemPort, Token, Wake, WarmPort};
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
    /// Fetch stopped (sampled runs drain the core before warming).
    stopped: bool,
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
        stopped: false,
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
                if self.stopped {
                    return Ok(Wake::OnCompletion);
                }
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

    fn set_fetch(&mut self, on: bool) {
        self.stopped = !on;
    }

    fn drained(&self) -> bool {
        self.cur.is_none() && self.waiting == 0
    }

    fn warm(&mut self, n: u64, port: &mut dyn WarmPort) -> Result<u64, TimingError> {
        let mut taken = 0;
        while taken < n {
            let Some(i) = self.program.next_instr()? else {
                break;
            };
            for a in i.ops() {
                port.warm(a)?;
            }
            // A run without memory accesses counts whole (the program hands it out whole).
            taken += u64::from(i.repeat);
        }
        self.stats.warmed += taken;
        Ok(taken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instr::VecInstrs;
    use apusim_trace::{Access, Agent, Op};

    struct Fixed;
    impl MemPort for Fixed {
        fn issue(&mut self, now: Tick, _: &Access, _: Token) -> Issue {
            Issue::Done(now + 10)
        }
    }

    /// Stopped, the core finishes its instruction and takes no other; warming takes the next
    /// ones in order; resumed, it runs the rest.
    #[test]
    fn stops_warms_and_resumes() {
        let program: Vec<Instr> = (0..100u64)
            .map(|i| {
                let mut ins = Instr::plain(1);
                ins.push(Access::new(
                    Agent::cpu(0),
                    Stream::CpuData,
                    Op::Read,
                    i * 64,
                    8,
                ));
                ins
            })
            .collect();
        let mut core = super::super::build(
            "in-order",
            &toml::Table::new(),
            Domain::new(1),
            Box::new(VecInstrs(program.into())),
        )
        .unwrap();
        let mut now = 0;
        let mut run = |core: &mut Box<dyn CoreModel>, until: u64| {
            for _ in 0..100_000 {
                match core.cycle(now, &mut Fixed).unwrap() {
                    Wake::At(t) => now = t,
                    Wake::OnCompletion | Wake::Finished => return,
                }
                if core.stats().instructions >= until {
                    return;
                }
            }
        };
        run(&mut core, 30);
        core.set_fetch(false);
        run(&mut core, u64::MAX);
        assert!(core.drained());
        // The instruction under way when fetch stopped completes.
        let retired = core.stats().instructions;
        assert!((30..=31).contains(&retired), "{retired}");
        let mut rec = super::super::WarmLog(Vec::new());
        assert_eq!(core.warm(20, &mut rec).unwrap(), 20);
        assert_eq!(
            rec.0,
            (retired..retired + 20).map(|i| i * 64).collect::<Vec<_>>()
        );
        core.set_fetch(true);
        run(&mut core, u64::MAX);
        let s = core.stats();
        assert_eq!((s.instructions, s.warmed), (80, 20));
    }
}
