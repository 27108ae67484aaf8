//! The event-driven decision step: ask the scheduler for a plan, sleep until it is due, and
//! issue the chosen command to the device.

use super::{CommandRecord, Controller, Effect};
use crate::config::RowPolicy;
use crate::device::Command;
use crate::scheduler::{Candidate, RowStatus, SchedContext};

/// `v.remove(i)` written with slice operations the optimiser inlines where the queue is
/// served.
#[inline(always)]
fn remove_at<T: Copy>(v: &mut Vec<T>, i: usize) -> T {
    let x = v[i];
    v.copy_within(i + 1.., i);
    v.pop();
    x
}

/// The scheduler's view of controller `$c` at cycle `$now`. A macro, not a method: the
/// context borrows only the fields it shows (views, occupancy, hints), so the controller's
/// scheduler and planning state stay writable beside it.
macro_rules! sched_context {
    ($c:ident, $now:expr) => {
        SchedContext {
            now: $now,
            channel: $c.id,
            write_mode: $c.write_mode,
            read_queue_len: $c.rq.len(),
            write_queue_len: $c.wq.len(),
            banks: &$c.views,
            occupied: &$c.occupied,
            hints: &$c.hints,
            version: $c.version,
        }
    };
}

impl Controller {
    /// Make the decision of cycle `now` (which must be `next_wake`).
    ///
    /// After any change (an issued command, an arrival) the controller asks the scheduler
    /// at its next decision for the earliest cycle it could issue something
    /// ([`Scheduler::next_decision`](crate::scheduler::Scheduler::next_decision)); if that is
    /// later, the controller sleeps until then (or an earlier refresh deadline, or an arrival)
    /// and picks when it wakes. So each issued command costs one such question and one pick,
    /// whatever the number of arrivals.
    pub(crate) fn process(&mut self, now: u64) {
        debug_assert!(now >= self.next_wake);
        if self.refresh && self.refresh_step(now) {
            self.idle_steps += 1;
            self.rebuild();
            self.needs_plan = true;
            self.next_wake = now + 1;
            return;
        }
        if self.dirty {
            self.rebuild();
            self.needs_plan = true;
        }
        let q = if self.write_mode { &self.wq } else { &self.rq };
        let ctx = sched_context!(self, now);
        if q.is_empty() {
            self.idle_steps += 1;
            self.needs_plan = false;
            self.next_wake = self.refresh_wake().max(now + 1);
            if self.horizon.saturating_sub(self.next_wake) >= self.refi
                && self.rq.is_empty()
                && self.wq.is_empty()
            {
                self.jump_refresh_rounds();
            }
            return;
        }
        if self.needs_plan {
            self.needs_plan = false;
            match self.sched.next_decision(&ctx, q) {
                Some(t) if t <= now => {}
                later => {
                    // Sleep until that cycle (or a refresh event).
                    let t = later.unwrap_or(u64::MAX);
                    self.next_wake = t.min(self.refresh_wake()).max(now + 1);
                    return;
                }
            }
        }
        let pick = self.sched.pick(&ctx, q);
        let mut row_change = false;
        if let Some(i) = pick.filter(|&i| i < q.len() && ctx.ready(&q[i])) {
            self.sched.on_issue(&ctx, q, i);
            let effect = self.issue(now, i);
            row_change = matches!(effect, Effect::RowChange { .. });
            self.update_after(effect);
        }
        // Whether or not something issued, re-plan from the next cycle (the command bus
        // takes one command per cycle).
        self.needs_plan = true;
        self.next_wake = now + 1;
        if row_change {
            // An ACT/PRE frees no queue slot, so no arrival is waiting for this command:
            // ask for the next cycle's decision now and sleep through to it.
            self.plan_ahead(now + 1);
        }
    }

    /// The next decision [`Controller::process`] would ask for at cycle `at` (the next
    /// one), asked now: sleep until that cycle, or a refresh event, if it is later than
    /// `at`. Any change before then (an arrival) asks again as usual. Does nothing if the
    /// views are stale or the served queue is empty (`process` at `at` handles those).
    fn plan_ahead(&mut self, at: u64) {
        let q = if self.write_mode { &self.wq } else { &self.rq };
        if self.dirty || q.is_empty() {
            return;
        }
        let ctx = sched_context!(self, at);
        self.needs_plan = false;
        let t = self.sched.next_decision(&ctx, q).unwrap_or(u64::MAX);
        if t > at {
            // A refresh event at `at` itself still wakes the controller at `at`.
            self.next_wake = t.min(self.refresh_wake()).max(at);
        }
    }

    /// Issue the command of candidate `i` of the served queue at `now` (the scheduler has
    /// been told, [`Scheduler::on_issue`](crate::scheduler::Scheduler::on_issue)).
    fn issue(&mut self, now: u64, i: usize) -> Effect {
        let write_mode = self.write_mode;
        self.dirty = true;
        let q = if write_mode {
            &mut self.wq
        } else {
            &mut self.rq
        };
        let c = &mut q[i];
        let (status, command) = match self.views[c.bank as usize].open_row {
            Some(r) if r == c.row => (
                RowStatus::Hit,
                if write_mode { Command::Wr } else { Command::Rd },
            ),
            Some(_) => (RowStatus::Conflict, Command::Pre),
            None => (RowStatus::Miss, Command::Act),
        };
        if c.first_outcome.is_none() {
            c.first_outcome = Some(status);
            let src = self.sources[c.req.source as usize].get_or_insert_with(Default::default);
            self.stats.access.rows.count(status);
            src.rows.count(status);
            self.stream_rows[c.req.stream as usize][usize::from(c.req.is_write)].count(status);
        }
        let bank = c.bank as usize;
        let row = c.row;
        let is_write = c.req.is_write;
        match command {
            Command::Act => {
                self.dev.issue(Command::Act, bank, row, now);
                self.views[bank].hit_streak = 0;
                self.stats.commands.act += 1;
                self.log(now, bank, Command::Act, row);
                Effect::RowChange { bank }
            }
            Command::Pre => {
                let open = self.dev.open_row(bank).unwrap_or(0);
                self.dev.issue(Command::Pre, bank, open, now);
                self.stats.commands.pre += 1;
                self.log(now, bank, Command::Pre, open);
                Effect::RowChange { bank }
            }
            _ => {
                let auto_pre = self.policy == RowPolicy::Closed && {
                    let others = |q: &[Candidate], skip: Option<usize>| {
                        q.iter().enumerate().any(|(j, o)| {
                            Some(j) != skip && o.bank as usize == bank && o.row == row
                        })
                    };
                    let (rq_skip, wq_skip) = if write_mode {
                        (None, Some(i))
                    } else {
                        (Some(i), None)
                    };
                    !(others(&self.rq, rq_skip) || others(&self.wq, wq_skip))
                };
                let cmd = match (is_write, auto_pre) {
                    (false, false) => Command::Rd,
                    (false, true) => Command::Rda,
                    (true, false) => Command::Wr,
                    (true, true) => Command::Wra,
                };
                self.dev.issue(cmd, bank, row, now);
                self.log(now, bank, cmd, row);
                self.views[bank].hit_streak += 1;
                let k = &mut self.stats.commands;
                match cmd {
                    Command::Rd => k.rd += 1,
                    Command::Rda => k.rda += 1,
                    Command::Wr => k.wr += 1,
                    _ => k.wra += 1,
                }
                if is_write {
                    self.drained += 1;
                } else {
                    self.read_owed = false;
                }
                let c = if is_write {
                    let line = remove_at(&mut self.wq_lines, i);
                    self.wq_filter[(line & 63) as usize] -= 1;
                    let c = remove_at(&mut self.wq, i);
                    self.stats.write_queue.update(now, self.wq.len());
                    c
                } else {
                    let c = remove_at(&mut self.rq, i);
                    self.stats.read_queue.update(now, self.rq.len());
                    c
                };
                let done = now + if is_write { self.cwl } else { self.cl } + self.burst;
                self.complete(c.req, c.enqueued, done, 0, self.tx_bytes);
                Effect::Column {
                    bank,
                    removed: i,
                    auto_pre,
                }
            }
        }
    }

    pub(super) fn log(&mut self, cycle: u64, bank: usize, command: Command, row: u32) {
        if let Some(log) = &mut self.log {
            log.push(CommandRecord {
                cycle,
                channel: self.id,
                rank: bank as u32 / self.banks_per_rank,
                bank: bank as u32,
                command,
                row,
            });
        }
    }
}
