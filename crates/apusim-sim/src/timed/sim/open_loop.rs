//! The open-loop replay of a GPU trace beside timed cores (`OpenLoop`).

use super::super::memory::TimedMemory;
use crate::run::Input;
use anyhow::{bail, Context, Result};
use apusim_cache::Policy;
use apusim_timing::replay::MAX_RESTARTS;
use apusim_timing::Tick;

/// A GPU trace replayed open-loop: each access enters the hierarchy at its own time stamp
/// (in the GPU's clock), so CPU mixes see the GPU's interference before the GPU is timed
/// itself. Nothing waits for the GPU's data, but at most `limit` of its requests are on their
/// way to the LLC or waiting for it at once (`timing.gpu_outstanding`; reads until their data
/// returns, write-backs until their bank takes them), and none is sent while DRAM's
/// write-backs back up ([`TimedMemory::write_backlog_full`]). At the bound the replay stops,
/// and when a slot frees it resumes with its clock slipped by the wait, keeping the trace's
/// spacing. Without the bound a trace faster than the ring, the LLC or DRAM would queue
/// without end, and every CPU request behind it would wait longer the longer the run (a
/// render trace's first thousands of write-backs alone held a CPU's first fetch for 2,000
/// cycles at the ring and 3,000 at the LLC bank).
pub(super) struct OpenLoop {
    pub(super) input: Input,
    pub(super) period: Tick,
    pub(super) buf: Vec<apusim_trace::Access>,
    pub(super) pos: usize,
    pub(super) done: bool,
    pub(super) limit: u32,
    /// Ticks the replay has been held back so far.
    pub(super) slip: Tick,
    /// Waiting for a free slot (no next tick until then).
    pub(super) blocked: bool,
    /// Opens the trace again when it ends while cores still run (as their traces are); the
    /// next pass starts one GPU cycle after the last access of the one before.
    pub(super) reopen: Option<crate::run::Reopen>,
    pub(super) last_due: Tick,
    /// Accesses of the current pass read so far, and passes restarted.
    pub(super) in_pass: u64,
    pub(super) restarts: u64,
}

impl OpenLoop {
    pub(super) fn fill(&mut self) -> Result<()> {
        while self.pos >= self.buf.len() && !self.done {
            self.buf.clear();
            self.pos = 0;
            if self
                .input
                .source
                .next_batch(&mut self.buf)
                .with_context(|| format!("reading {}", self.input.name))?
                || !self.buf.is_empty()
            {
                self.in_pass += self.buf.len() as u64;
                continue;
            }
            // The trace has ended: replay it if it can be reopened and was not empty.
            match &self.reopen {
                Some(reopen) if self.in_pass > 0 => {
                    if self.restarts >= MAX_RESTARTS {
                        bail!(
                            "{}: the GPU trace ({} accesses a pass) has been replayed {} times, \
                             the maximum, while the cores have not reached their targets; give \
                             a longer trace or a smaller --instructions",
                            self.input.name,
                            self.in_pass,
                            self.restarts
                        );
                    }
                    self.input =
                        reopen().with_context(|| format!("replaying {}", self.input.name))?;
                    self.in_pass = 0;
                    self.restarts += 1;
                    let first = self
                        .input
                        .source
                        .next_batch(&mut self.buf)
                        .with_context(|| format!("reading {}", self.input.name))?;
                    match self.buf.first() {
                        Some(a) => {
                            self.in_pass = self.buf.len() as u64;
                            self.slip = (self.last_due + self.period)
                                .saturating_sub(a.time.saturating_mul(self.period));
                        }
                        None if !first => self.done = true,
                        None => {}
                    }
                }
                _ => self.done = true,
            }
        }
        Ok(())
    }
    /// When the next access is due; `None` at the end or while blocked.
    pub(super) fn next_tick(&self) -> Option<Tick> {
        if self.blocked {
            return None;
        }
        self.due()
    }
    pub(super) fn due(&self) -> Option<Tick> {
        self.buf
            .get(self.pos)
            .map(|a| a.time.saturating_mul(self.period).saturating_add(self.slip))
    }
    /// Sampled runs: warm every access due by `until` functionally (agent slot `slot`).
    pub(super) fn warm_until<P: Policy>(
        &mut self,
        until: Tick,
        slot: u32,
        mem: &mut TimedMemory<P>,
    ) -> Result<()> {
        self.blocked = false;
        while let Some(t) = self.due() {
            if t > until {
                break;
            }
            let a = self.take(t)?;
            mem.warm(slot, &a)
                .with_context(|| format!("warming {}", self.input.name))?;
        }
        Ok(())
    }

    /// The next access (under the input's remap), sent at `at`; the replay moves past it.
    pub(super) fn take(&mut self, at: Tick) -> Result<apusim_trace::Access> {
        let mut a = self.buf[self.pos];
        if let Some(r) = self.input.remap {
            a.agent = r;
        }
        self.last_due = at;
        self.pos += 1;
        self.fill()?;
        Ok(a)
    }

    pub(super) fn inject_due<P: Policy>(
        &mut self,
        now: Tick,
        mem: &mut TimedMemory<P>,
    ) -> Result<()> {
        while let Some(t) = self.due() {
            if t > now {
                break;
            }
            if mem.open_loop_outstanding >= self.limit || mem.write_backlog_full() {
                self.blocked = true;
                break;
            }
            if self.blocked {
                self.blocked = false;
                self.slip += now - t;
            }
            let a = self.take(now)?;
            mem.inject(now, &a)
                .with_context(|| format!("replaying {}", self.input.name))?;
        }
        Ok(())
    }
}
