//! The timed memory side's event handling: messages arriving at LLC banks, memory
//! controllers and agents, DRAM stepping, and the LLC's fills and blocked requests.

use super::{agent_at, Ev, TimedMemory, Waiter};
use anyhow::Result;
use apusim_cache::Policy;
use apusim_dram::Request;
use apusim_timing::Tick;
use apusim_trace::{Access, Op, Stream};

impl<P: Policy> TimedMemory<P> {
    /// Deliver event `ev`, due at `t`.
    pub(super) fn handle(&mut self, t: Tick, ev: Ev) -> Result<()> {
        if !matches!(ev, Ev::DramWake) {
            self.in_transit -= 1;
        }
        match ev {
            Ev::ToLlc { req, agent } => {
                let to = self.bank_stop(self.bank_of(req.addr));
                let at = self.net.send(agent as usize, to, t);
                self.post(
                    at,
                    Ev::AtLlc {
                        req,
                        agent,
                        sent: t,
                    },
                );
            }
            Ev::AtLlc { req, agent, sent } => self.at_llc(t, req, agent, sent)?,
            Ev::AtMemory { req, fill } => self.at_memory(t, req, fill),
            Ev::DramWake => {
                if self.dram_wake != Some(t) {
                    return Ok(());
                }
                self.dram_wake = None;
                self.advance_dram(self.dram_domain.cycle(t) + 1);
            }
            Ev::FromMemory { line } => {
                let bank = self.bank_of(line << self.llc_bits);
                let at =
                    self.net
                        .send(self.mc_stop(line << self.llc_bits), self.bank_stop(bank), t);
                self.post(at, Ev::LlcFill { line });
            }
            Ev::LlcFill { line } => self.llc_fill(t, line)?,
            Ev::ToLlcHint { hint, agent } => {
                let to = self.bank_stop(self.bank_of(hint.addr));
                let at = self.net.send(agent as usize, to, t);
                self.post(at, Ev::HintAtLlc { hint });
            }
            Ev::HintAtLlc { hint } => {
                // A hint takes the bank's tag port for a cycle, as a lookup does (Jaleel et
                // al.'s hints cost LLC bandwidth); nobody waits for it.
                let bank = self.bank_of(hint.addr);
                let start = t.max(self.banks[bank].free);
                self.banks[bank].free = start + self.uncore.period;
                self.h.llc_hint(&hint);
            }
            Ev::OpenLoopAccepted => {
                self.open_loop_outstanding = self.open_loop_outstanding.saturating_sub(1);
            }
            Ev::AtAgent { w } => {
                let Waiter {
                    agent,
                    addr,
                    instr,
                    unit,
                    stream,
                    sent,
                } = w;
                self.last_progress = t;
                let st = &mut self.streams[stream.to_byte() as usize];
                st.llc_requests += 1;
                st.llc_request_ticks += t - sent;
                if agent == self.gpu_slot() && !self.timed_gpu(agent) {
                    self.open_loop_outstanding = self.open_loop_outstanding.saturating_sub(1);
                }
                let p = self.private_of(agent, stream, unit);
                let (table, bits) = if instr {
                    (&mut p.l1i, p.l1i_bits)
                } else {
                    (&mut p.l1d, p.l1d_bits)
                };
                if let Some(e) = table.fill(addr >> bits) {
                    p.at_llc = p.at_llc.saturating_sub(1);
                    let lat = &mut self.latency[agent as usize];
                    lat.llc_requests += 1;
                    lat.llc_request_ticks += t - e.since;
                    for (a, tok) in e.waiters {
                        self.completions.push((a, tok, t));
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) fn agent_of(&self, agent: u32) -> apusim_trace::Agent {
        agent_at(agent, self.n_agents)
    }

    pub(super) fn at_llc(&mut self, t: Tick, req: Access, agent: u32, sent: Tick) -> Result<()> {
        let bank = self.bank_of(req.addr);
        let line = req.addr >> self.llc_bits;
        let demand = req.op != Op::Writeback;
        let waiter = Waiter {
            agent,
            addr: req.addr,
            instr: req.stream == Stream::CpuInstr,
            unit: req.unit,
            stream: req.stream,
            sent,
        };
        if demand {
            if let Some((_, waiters)) = self.llc_inflight.get_mut(&line) {
                waiters.push(waiter);
                self.llc_timing.merges += 1;
                return self.serve_llc(t, bank, &req, None).map(|_| ());
            }
            if !self.h.llc_holds(req.addr) && self.banks[bank].busy_mshrs >= self.llc_mshrs {
                self.llc_timing.mshr_waits += 1;
                self.banks[bank].blocked.push_back((req, agent, sent, t));
                return Ok(());
            }
        }
        let start = t.max(self.banks[bank].free);
        self.banks[bank].free = start + self.uncore.period;
        if !demand && agent == self.gpu_slot() && !self.timed_gpu(agent) {
            self.post(start, Ev::OpenLoopAccepted);
        }
        let done = start + self.llc_lat;
        let fill = self.serve_llc(done, bank, &req, demand.then_some(line))?;
        if demand {
            if fill {
                self.llc_inflight.insert(line, (t, vec![waiter]));
                self.banks[bank].busy_mshrs += 1;
            } else {
                let at = self.net.send(self.bank_stop(bank), agent as usize, done);
                self.post(at, Ev::AtAgent { w: waiter });
            }
        }
        Ok(())
    }

    /// Run the LLC's functional access for `req` and send what it sends to memory at `at`.
    /// Returns whether a read of line `fill` went to memory.
    pub(super) fn serve_llc(
        &mut self,
        at: Tick,
        bank: usize,
        req: &Access,
        fill: Option<u64>,
    ) -> Result<bool> {
        self.h.llc_access(req)?;
        let mut out = std::mem::take(&mut self.scratch);
        self.h.drain_to_memory(&mut out);
        let mut filled = false;
        for m in &out {
            let is_fill = fill.is_some_and(|l| !m.op.is_write() && m.addr >> self.llc_bits == l);
            filled |= is_fill;
            let arrive = self
                .net
                .send(self.bank_stop(bank), self.mc_stop(m.addr), at);
            self.post(
                arrive,
                Ev::AtMemory {
                    req: *m,
                    fill: is_fill.then(|| m.addr >> self.llc_bits),
                },
            );
        }
        out.clear();
        self.scratch = out;
        Ok(filled)
    }

    pub(super) fn at_memory(&mut self, t: Tick, req: Access, fill: Option<u64>) {
        let cycle = self.dram_domain.cycle(self.dram_domain.edge_at_or_after(t));
        self.advance_dram(cycle);
        self.dram_ids += 1;
        let r = Request {
            id: self.dram_ids,
            addr: req.addr,
            is_write: req.op.is_write(),
            source: req.agent.to_byte(),
            stream: req.stream.to_byte(),
            critical: req.is_critical(),
            arrival: cycle,
        };
        let a = req.agent.dense_index(self.n_agents - 1);
        let st = &mut self.streams[req.stream.to_byte() as usize];
        if r.is_write {
            self.dram_traffic[a].writes += 1;
            st.dram_writes += 1;
        } else {
            self.dram_traffic[a].reads += 1;
            st.dram_reads += 1;
        }
        self.dram_tags.insert(r.id, fill);
        self.dram_waiting.send(&mut self.dram, r);
        self.schedule_dram();
    }

    /// Simulate DRAM up to (not including) `cycle`, hand its completions on, and retry the
    /// requests waiting for a queue slot.
    pub(super) fn advance_dram(&mut self, cycle: u64) {
        if cycle > self.dram.now() {
            self.dram.advance_to(cycle, &mut self.dram_done);
        }
        self.dram_waiting.retry(&mut self.dram);
        for c in std::mem::take(&mut self.dram_done) {
            let tag = self.dram_tags.remove(&c.id).flatten();
            if !c.is_write {
                let a = apusim_trace::Agent::from_byte(c.source)
                    .map(|a| a.dense_index(self.n_agents - 1))
                    .unwrap_or(0);
                self.dram_traffic[a].read_cycles += c.done - c.arrival;
                if let Some(st) = self.streams.get_mut(c.stream as usize) {
                    st.dram_read_cycles += c.done - c.arrival;
                }
            }
            if let Some(line) = tag {
                let at = self.dram_domain.tick(c.done);
                self.post(at, Ev::FromMemory { line });
            }
        }
        self.schedule_dram();
    }

    pub(super) fn schedule_dram(&mut self) {
        let next = self.dram.next_event().map(|c| self.dram_domain.tick(c));
        let next = match (next, self.dram_waiting.is_empty()) {
            (Some(n), _) => Some(n),
            (None, false) => Some(self.dram_domain.tick(self.dram.now() + 1)),
            (None, true) => None,
        };
        if let Some(n) = next {
            if self.dram_wake.is_none_or(|w| n < w) {
                self.dram_wake = Some(n);
                self.post(n, Ev::DramWake);
            }
        }
    }

    pub(super) fn llc_fill(&mut self, t: Tick, line: u64) -> Result<()> {
        let Some((since, waiters)) = self.llc_inflight.remove(&line) else {
            return Ok(());
        };
        self.llc_timing.misses += 1;
        self.llc_timing.miss_ticks += t - since;
        let bank = self.bank_of(line << self.llc_bits);
        self.banks[bank].busy_mshrs = self.banks[bank].busy_mshrs.saturating_sub(1);
        // The miss is its first waiter's (counted at the fill, as `llc_timing.misses` is).
        if let Some(first) = waiters.first() {
            self.streams[first.stream.to_byte() as usize].llc_misses += 1;
        }
        for w in waiters {
            let at = self.net.send(self.bank_stop(bank), w.agent as usize, t);
            self.post(at, Ev::AtAgent { w });
        }
        self.retry_blocked(t, bank)
    }

    /// Take requests that wait for one of `bank`'s MSHRs, oldest first, while one is free.
    /// A retried request that hits or merges needs no MSHR, so the loop goes on until the
    /// MSHRs are full again or nobody waits.
    pub(super) fn retry_blocked(&mut self, t: Tick, bank: usize) -> Result<()> {
        while self.banks[bank].busy_mshrs < self.llc_mshrs {
            let Some((req, agent, sent, since)) = self.banks[bank].blocked.pop_front() else {
                break;
            };
            self.streams[req.stream.to_byte() as usize].llc_mshr_wait_ticks += t - since;
            self.at_llc(t, req, agent, sent)?;
        }
        Ok(())
    }
}
