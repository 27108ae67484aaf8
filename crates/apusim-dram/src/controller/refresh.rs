//! Refresh: per-rank deadlines, the refresh commands a decision step issues, and the jump
//! over whole rounds of refresh while the channel is idle.

use super::Controller;
use crate::device::Command;

impl Controller {
    /// Refresh step at `now`: mark ranks whose deadline passed as pending (their other
    /// commands stop), and issue PREA (if rows are open) or REF for one pending rank if legal.
    /// Returns whether a command issued.
    pub(super) fn refresh_step(&mut self, now: u64) -> bool {
        for r in 0..self.ref_pending.len() {
            if !self.ref_pending[r] {
                if now < self.ref_due[r] {
                    continue;
                }
                self.ref_pending[r] = true;
                self.dirty = true;
            }
            let flat0 = r * self.banks_per_rank as usize;
            let cmd = if self.dev.open_banks(r) > 0 {
                Command::PreA
            } else {
                Command::Ref
            };
            if self.dev.earliest(cmd, flat0) <= now {
                self.dev.issue(cmd, flat0, 0, now);
                self.log(now, flat0, cmd, 0);
                if cmd == Command::PreA {
                    self.stats.commands.prea += 1;
                } else {
                    self.stats.commands.refresh += 1;
                    self.ref_pending[r] = false;
                    self.ref_due[r] += self.refi;
                }
                return true;
            }
        }
        false
    }

    /// Earliest refresh-related event: a deadline, or the cycle a pending rank's PREA/REF
    /// becomes legal.
    pub(super) fn refresh_wake(&self) -> u64 {
        if !self.refresh {
            return u64::MAX;
        }
        let mut w = u64::MAX;
        for (r, (&pending, &due)) in self.ref_pending.iter().zip(&self.ref_due).enumerate() {
            let t = if pending {
                self.pending_refresh_ready(r)
            } else {
                due
            };
            w = w.min(t);
        }
        w
    }

    /// Cycle the PREA/REF of rank `r`, whose refresh is pending, becomes legal (rare: kept
    /// out of line so that [`Controller::refresh_wake`] stays small).
    #[cold]
    #[inline(never)]
    fn pending_refresh_ready(&self, r: usize) -> u64 {
        let flat0 = r * self.banks_per_rank as usize;
        let cmd = if self.dev.open_banks(r) > 0 {
            Command::PreA
        } else {
            Command::Ref
        };
        self.dev.earliest(cmd, flat0)
    }

    /// Jump over the refreshes of an idle stretch: with nothing queued, apply in one step
    /// every whole round of refreshes (one REF per rank, each at its deadline) that
    /// [`Controller::process`] would issue before `horizon`, and leave what stepping through
    /// them would leave (device state, deadlines, refresh count, bank views). If it jumps,
    /// `next_wake` becomes a later deadline, at most `horizon`. The work is the same for any
    /// gap.
    ///
    /// Why it is exact: with empty queues a decision does one of two things. At a rank's
    /// deadline it issues the rank's REF (or PREA first, if rows are open; or nothing until
    /// the REF is legal), and decides again the cycle after; at any other cycle it finds
    /// nothing to do and sleeps until the next deadline. A REF only raises the rank's and
    /// its banks' next-ACT counters to `t + tRFC` (a `max`), so after REFs at increasing
    /// cycles the counters are those of the last one alone; the deadlines each move on by
    /// tREFI. So whole rounds reduce to their last REF per rank, the deadlines plus rounds ×
    /// tREFI and the count, as long as every REF issues at its deadline. That is certain
    /// when no rank has a refresh pending, every rank's banks are closed and its REF is
    /// legal at its deadline (`tRFC < tREFI` then keeps it legal at every later one), no two
    /// ranks are due on one cycle (the command bus takes one command a cycle, so one would
    /// wait), and the deadlines lie within one tREFI (each round refreshes every rank once).
    /// Otherwise idle time is stepped until it is: about a round after the queues empty.
    /// With the command log on it is always stepped: the log records every REF.
    ///
    /// Called at the end of an idle decision of [`Controller::process`] (the queues are
    /// empty, the controller asleep until its next event with no plan, and `horizon` at
    /// least a tREFI later); kept out of line, off the busy path.
    #[cold]
    #[inline(never)]
    pub(super) fn jump_refresh_rounds(&mut self) {
        let until = self.horizon;
        if !self.refresh || self.log.is_some() || self.ref_pending.iter().any(|&p| p) {
            return;
        }
        let refi = self.refi;
        let first = self.ref_due.iter().copied().min().unwrap_or(u64::MAX);
        let last = self.ref_due.iter().copied().max().unwrap_or(0);
        // Round k issues its REFs at the deadlines + k·tREFI, all before the next round's
        // first; `rounds` of them end before `until`.
        let rounds = until.saturating_sub(first) / refi;
        if rounds == 0 || last - first >= refi {
            return;
        }
        let bpr = self.banks_per_rank as usize;
        for (r, &due) in self.ref_due.iter().enumerate() {
            if self.dev.open_banks(r) > 0 || self.dev.earliest(Command::Ref, r * bpr) > due {
                return;
            }
        }
        let due = &self.ref_due;
        if (1..due.len()).any(|r| due[..r].contains(&due[r])) {
            return;
        }
        for r in 0..self.ref_due.len() {
            let last_ref = self.ref_due[r] + (rounds - 1) * refi;
            self.dev.issue(Command::Ref, r * bpr, 0, last_ref);
            self.ref_due[r] += rounds * refi;
        }
        self.stats.commands.refresh += rounds * self.ref_due.len() as u64;
        // As the decisions after the last REF leave it: views rebuilt (no candidates, drain
        // mode off), asleep until the next deadline (with no plan, as the caller left it).
        self.rebuild();
        self.next_wake = first + rounds * refi;
        self.idle_steps += 1;
    }
}
