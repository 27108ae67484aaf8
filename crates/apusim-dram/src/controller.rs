//! One channel's memory controller: read and write queues, write-drain mode, refresh, row
//! policy, and the event-driven decision step that asks the scheduler what to issue.
//!
//! One file, one idea: the channel controller's event-driven decision step and the queue and
//! bank state it keeps up to date, which only make sense together.
//!
//! The controller is never ticked cycle by cycle. It keeps one [`BankView`] per bank for the
//! queue it serves (open row, earliest ACT/PRE/column cycle, pending hits, oldest hit and
//! oldest non-hit, the non-hits' ready cycle, and the scheduler's [`HeadKeys`]) and updates
//! only what an issued command changed: the keys are recomputed with
//! [`Scheduler::head_keys`] only for the bank whose heads, row or hit streak changed; the
//! other banks' keys just shift with their heads when a candidate leaves the queue. After a
//! change it asks the scheduler for a plan — the earliest cycle it could issue something and
//! what — and sleeps until then, the next refresh deadline, or an arrival (which pulls
//! `next_wake` back to the current cycle). The command bus carries one command per cycle, so
//! after a command the next decision is at the following cycle at the earliest. Between
//! those cycles nothing can happen, so the simulation jumps.

use crate::config::{DramConfig, RowPolicy};
use crate::device::{ChannelState, Command};
use crate::mapping::DecodedAddr;
use crate::request::{Completion, Request};
use crate::scheduler::{
    make_scheduler, BankView, Candidate, HeadKeys, RowStatus, SchedContext, SchedHints, Scheduler,
    NO_CANDIDATE,
};
use crate::stats::{AccessStats, ChannelStats};
use crate::DramError;
use serde::Serialize;
use std::hint::select_unpredictable;

/// `v.remove(i)` written with slice operations the optimiser inlines where the queue is
/// served.
#[inline(always)]
fn remove_at<T: Copy>(v: &mut Vec<T>, i: usize) -> T {
    let x = v[i];
    v.copy_within(i + 1.., i);
    v.pop();
    x
}

/// One issued command, as recorded by the optional command log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CommandRecord {
    pub cycle: u64,
    pub channel: u32,
    pub rank: u32,
    /// Flat bank index within the channel.
    pub bank: u32,
    pub command: Command,
    /// Row for ACT/RD/WR/RDA/WRA/PRE (PRE: the row closed); 0 for PREA/REF.
    pub row: u32,
}

/// Iterator of [`Controller::occupied_in`].
struct OccupiedIter {
    dense: bool,
    next: usize,
    hi: usize,
    word: u64,
}

impl Iterator for OccupiedIter {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.dense {
            let b = self.next;
            (b < self.hi).then(|| {
                self.next += 1;
                b
            })
        } else if self.word == 0 {
            None
        } else {
            let b = self.word.trailing_zeros() as usize;
            self.word &= self.word - 1;
            Some(b)
        }
    }
}

/// What an issued command changed, for the incremental update of the bank views.
#[derive(Clone, Copy, Debug)]
enum Effect {
    /// ACT or PRE on a bank: its row state changed.
    RowChange { bank: usize },
    /// Column command to `bank`; candidate `removed` left the served queue.
    Column {
        bank: usize,
        removed: usize,
        auto_pre: bool,
    },
}

pub(crate) struct Controller {
    id: u32,
    dev: ChannelState,
    cl: u64,
    cwl: u64,
    burst: u64,
    refi: u64,
    tx_bytes: u64,
    tx_shift: u32,
    banks_per_rank: u32,
    rank_shift: u32,
    pub(crate) rq: Vec<Candidate>,
    pub(crate) wq: Vec<Candidate>,
    /// Transaction numbers (addr >> tx_shift) of `wq`, for forwarding and merging.
    wq_lines: Vec<u64>,
    /// Count of `wq_lines` per low 6 bits: a zero rules a line out without scanning.
    wq_filter: [u16; 64],
    rq_cap: usize,
    wq_cap: usize,
    high: usize,
    low: usize,
    pub(crate) write_mode: bool,
    policy: RowPolicy,
    refresh: bool,
    ref_due: Vec<u64>,
    ref_pending: Vec<bool>,
    sched: Box<dyn Scheduler>,
    /// `sched.observes_issue()`: whether [`Scheduler::on_issue`] needs calling.
    observe_issue: bool,
    /// The system's hints, shown to the scheduler in every context.
    hints: SchedHints,
    /// `sched.uses_hints()`: whether new hints call for a new plan.
    uses_hints: bool,
    views: Vec<BankView>,
    /// Banks with candidates in the served queue (bit set).
    occupied: Vec<u64>,
    /// `views` and `occupied` are stale.
    dirty: bool,
    /// The scheduler's plan made when going to sleep: pick `.1` at cycle `.0` (valid while
    /// nothing changes; every change re-plans).
    planned: Option<(u64, usize)>,
    /// Something changed since `planned` was made.
    needs_plan: bool,
    pub(crate) next_wake: u64,
    /// The cycle the running [`crate::MemorySystem::advance_to`] simulates up to: decisions
    /// before it are made. An idle decision jumps the whole rounds of refresh that end by
    /// then ([`Controller::jump_refresh_rounds`]).
    pub(crate) horizon: u64,
    /// Steps taken for refresh and idle time: decisions that issued a refresh command or
    /// found the served queue empty, and jumps over idle stretches.
    pub(crate) idle_steps: u64,
    pub(crate) stats: ChannelStats,
    pub(crate) sources: Vec<Option<Box<AccessStats>>>,
    pub(crate) completions: Vec<Completion>,
    pub(crate) report_completions: bool,
    pub(crate) log: Option<Vec<CommandRecord>>,
}

impl Controller {
    pub(crate) fn new(id: u32, cfg: &DramConfig) -> Result<Self, DramError> {
        let org = &cfg.spec.org;
        let t = &cfg.spec.timing;
        let dev = ChannelState::new(org, t);
        let n_banks = dev.num_banks();
        let (high, low) = cfg.watermarks();
        let ranks = org.ranks as usize;
        let refi = u64::from(t.refi);
        // Stagger the ranks' refresh deadlines evenly over one tREFI.
        let ref_due: Vec<u64> = (0..ranks as u64)
            .map(|r| refi - r * refi / ranks as u64)
            .collect();
        let first_due = ref_due.iter().copied().min().unwrap_or(u64::MAX);
        let sched = make_scheduler(&cfg.scheduler, cfg)?;
        Ok(Controller {
            id,
            dev,
            cl: u64::from(t.cl),
            cwl: u64::from(t.cwl),
            burst: u64::from(t.burst),
            refi,
            tx_bytes: org.transaction_bytes(),
            tx_shift: org.transaction_bytes().trailing_zeros(),
            banks_per_rank: org.banks_per_rank(),
            rank_shift: org.banks_per_rank().trailing_zeros(),
            rq: Vec::with_capacity(cfg.read_queue),
            wq: Vec::with_capacity(cfg.write_queue),
            wq_lines: Vec::with_capacity(cfg.write_queue),
            wq_filter: [0; 64],
            rq_cap: cfg.read_queue,
            wq_cap: cfg.write_queue,
            high,
            low,
            write_mode: false,
            policy: cfg.row_policy,
            refresh: cfg.refresh,
            ref_due,
            ref_pending: vec![false; ranks],
            observe_issue: sched.observes_issue(),
            hints: SchedHints::default(),
            uses_hints: sched.uses_hints(),
            sched,
            views: vec![BankView::IDLE; n_banks],
            occupied: vec![0; n_banks.div_ceil(64)],
            dirty: true,
            planned: None,
            needs_plan: true,
            next_wake: if cfg.refresh { first_due } else { u64::MAX },
            horizon: 0,
            idle_steps: 0,
            stats: ChannelStats::default(),
            sources: (0..256).map(|_| None).collect(),
            completions: Vec::new(),
            report_completions: true,
            log: None,
        })
    }

    pub(crate) fn scheduler_name(&self) -> &'static str {
        self.sched.name()
    }

    /// Take new scheduler hints at cycle `now` (the system clock: no decision at `now` has
    /// been made yet). A scheduler that uses hints re-plans at `now`; one that does not is
    /// left asleep, so that hints never change its schedule.
    pub(crate) fn set_hints(&mut self, hints: SchedHints, now: u64) {
        if hints == self.hints {
            return;
        }
        self.hints = hints;
        if self.uses_hints {
            self.needs_plan = true;
            self.planned = None;
            self.next_wake = self.next_wake.min(now);
        }
    }

    pub(crate) fn queued(&self) -> usize {
        self.rq.len() + self.wq.len()
    }

    /// Would [`Controller::enqueue`] accept a request to `addr` now (room in its queue, or a
    /// queued write to forward from / merge with)?
    pub(crate) fn would_accept(&self, addr: u64, is_write: bool) -> bool {
        let line = addr >> self.tx_shift;
        self.has_room(is_write)
            || (self.wq_filter[(line & 63) as usize] > 0 && self.wq_lines.contains(&line))
    }

    pub(crate) fn has_room(&self, is_write: bool) -> bool {
        if is_write {
            self.wq.len() < self.wq_cap
        } else {
            self.rq.len() < self.rq_cap
        }
    }

    #[inline]
    fn source_stats(sources: &mut [Option<Box<AccessStats>>], s: u8) -> &mut AccessStats {
        sources[s as usize].get_or_insert_with(Default::default)
    }

    /// The write-drain decision for the current queue lengths (Ramulator 2's rule): enter
    /// drain mode when the write queue reaches the high watermark or no read is waiting;
    /// leave it when the write queue is empty, or at/below the low watermark with reads
    /// waiting.
    #[inline]
    fn desired_mode(&self) -> bool {
        let (rl, wl) = (self.rq.len(), self.wq.len());
        if !self.write_mode {
            wl >= self.high || (rl == 0 && wl > 0)
        } else {
            !(wl == 0 || (wl <= self.low && rl > 0))
        }
    }

    /// Accept `req` at cycle `now`, or hand it back if its queue is full. Reads that find a
    /// queued write to the same transaction are served from it (forwarded); writes to a
    /// transaction already queued for writing merge with it.
    pub(crate) fn enqueue(
        &mut self,
        req: Request,
        d: &DecodedAddr,
        now: u64,
    ) -> Result<(), Request> {
        let line = req.addr >> self.tx_shift;
        let stall = now.saturating_sub(req.arrival);
        let queued_write =
            self.wq_filter[(line & 63) as usize] > 0 && self.wq_lines.contains(&line);
        if req.is_write {
            if queued_write {
                self.finish_untimed(req, now, now, stall);
                self.stats.access.merged_writes += 1;
                Self::source_stats(&mut self.sources, req.source).merged_writes += 1;
                return Ok(());
            }
            if self.wq.len() >= self.wq_cap {
                return Err(req);
            }
        } else {
            if queued_write {
                self.finish_untimed(req, now, now + 1, stall);
                self.stats.access.forwarded_reads += 1;
                Self::source_stats(&mut self.sources, req.source).forwarded_reads += 1;
                return Ok(());
            }
            if self.rq.len() >= self.rq_cap {
                return Err(req);
            }
        }
        let bank = self.dev.flat(d.rank, d.bank_group, d.bank) as u32;
        let c = Candidate {
            req,
            enqueued: now,
            bank,
            row: d.row,
            column: d.column,
            rank: d.rank,
            first_outcome: None,
        };
        self.stats.access.stall_cycles += stall;
        Self::source_stats(&mut self.sources, req.source).stall_cycles += stall;
        let served = req.is_write == self.write_mode;
        if !self.dirty && served {
            // Keep the bank view current without a rebuild (the new candidate is youngest).
            let idx = if req.is_write {
                self.wq.len()
            } else {
                self.rq.len()
            } as u32;
            self.note_new(bank as usize, d.row, idx);
        }
        if req.is_write {
            self.wq.push(c);
            self.wq_lines.push(line);
            self.wq_filter[(line & 63) as usize] += 1;
            self.stats.write_queue.update(now, self.wq.len());
        } else {
            self.rq.push(c);
            self.stats.read_queue.update(now, self.rq.len());
        }
        if !self.dirty && self.desired_mode() != self.write_mode {
            self.dirty = true;
        }
        #[cfg(debug_assertions)]
        if !self.dirty {
            self.check_views();
        }
        // Re-plan at this cycle's decision (all arrivals of a cycle share one plan).
        self.needs_plan = true;
        self.next_wake = self.next_wake.min(now);
        Ok(())
    }

    /// Statistics and completion of a request served without a DRAM burst.
    fn finish_untimed(&mut self, req: Request, now: u64, done: u64, stall: u64) {
        let lat = done - now;
        let src = Self::source_stats(&mut self.sources, req.source);
        for s in [&mut self.stats.access, src] {
            s.stall_cycles += stall;
            if req.is_write {
                s.writes += 1;
                s.write_latency.record(lat);
            } else {
                s.reads += 1;
                s.read_latency.record(lat);
            }
        }
        self.stats.last_done = self.stats.last_done.max(done);
        if self.report_completions {
            self.completions.push(Completion {
                id: req.id,
                addr: req.addr,
                is_write: req.is_write,
                source: req.source,
                stream: req.stream,
                arrival: req.arrival,
                enqueued: now,
                done,
            });
        }
    }

    fn log(&mut self, cycle: u64, bank: usize, command: Command, row: u32) {
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

    /// Refresh step at `now`: mark ranks whose deadline passed as pending (their other
    /// commands stop), and issue PREA (if rows are open) or REF for one pending rank if legal.
    /// Returns whether a command issued.
    fn refresh_step(&mut self, now: u64) -> bool {
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
    fn refresh_wake(&self) -> u64 {
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
    fn jump_refresh_rounds(&mut self) {
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

    /// Account candidate `idx` (row `row`) in its bank's view.
    #[inline]
    fn note(v: &mut BankView, row: u32, idx: u32) {
        if v.open_row == Some(row) {
            v.pending_hits += 1;
            if v.oldest_hit == NO_CANDIDATE {
                v.oldest_hit = idx;
            }
        } else if v.oldest_other == NO_CANDIDATE {
            v.oldest_other = idx;
        }
    }

    /// Fill the timing fields of bank `b`'s view from the device state.
    #[inline]
    fn time_view(&mut self, b: usize) {
        let col_cmd = self.col_cmd();
        let v = &mut self.views[b];
        if self.ref_pending[b >> self.rank_shift] {
            v.act_ready = u64::MAX;
            v.pre_ready = u64::MAX;
            v.col_ready = u64::MAX;
            v.other_ready = u64::MAX;
        } else {
            v.act_ready = self.dev.earliest(Command::Act, b);
            v.pre_ready = self.dev.earliest(Command::Pre, b);
            v.col_ready = self.dev.earliest(col_cmd, b);
            v.other_ready = v.non_hit_ready();
        }
    }

    /// The column command of the served queue: WR while draining writes, else RD.
    #[inline]
    fn col_cmd(&self) -> Command {
        if self.write_mode {
            Command::Wr
        } else {
            Command::Rd
        }
    }

    /// Recompute bank `b`'s cached plan keys ([`Scheduler::head_keys`]) from its view.
    #[inline]
    fn rekey(&mut self, b: usize) {
        self.views[b].keys = self.sched.head_keys(&self.views[b]);
    }

    /// Account a newly queued candidate of the served queue without a rebuild (the state has
    /// not changed since the last one; only banks that had candidates carry timing).
    fn note_new(&mut self, bank: usize, row: u32, idx: u32) {
        let v = &self.views[bank];
        if v.oldest_hit == NO_CANDIDATE && v.oldest_other == NO_CANDIDATE {
            self.time_view(bank);
        }
        Self::note(&mut self.views[bank], row, idx);
        self.rekey(bank);
        self.occupied[bank / 64] |= 1 << (bank % 64);
    }

    /// Recompute the drain mode and the bank views (heads, pending hits, and the timing of
    /// every bank that has candidates) of the served queue.
    fn rebuild(&mut self) {
        let m = self.desired_mode();
        if m != self.write_mode {
            self.write_mode = m;
            if m {
                self.stats.write_drains += 1;
            }
        }
        for (b, v) in self.views.iter_mut().enumerate() {
            v.open_row = self.dev.open_row(b);
            v.pending_hits = 0;
            v.oldest_hit = NO_CANDIDATE;
            v.oldest_other = NO_CANDIDATE;
        }
        let q = if self.write_mode { &self.wq } else { &self.rq };
        for (i, c) in q.iter().enumerate() {
            Self::note(&mut self.views[c.bank as usize], c.row, i as u32);
        }
        self.occupied.iter_mut().for_each(|w| *w = 0);
        for b in 0..self.views.len() {
            let v = &self.views[b];
            if v.oldest_hit != NO_CANDIDATE || v.oldest_other != NO_CANDIDATE {
                self.occupied[b / 64] |= 1 << (b % 64);
                self.time_view(b);
                self.rekey(b);
            } else {
                // No heads, nothing eligible (the hook is not asked). Clear the heads' ready
                // cycles too: a refresh leaves them at u64::MAX, which would send every plan
                // that visits this bank to the scheduler's slow exact pass.
                let v = &mut self.views[b];
                v.keys = HeadKeys::NONE;
                v.col_ready = 0;
                v.other_ready = 0;
            }
        }
        self.dirty = false;
    }

    /// Make the decision of cycle `now` (which must be `next_wake`).
    ///
    /// After any change (an issued command, an arrival) the controller re-plans at its next
    /// decision: the scheduler names the earliest cycle it could issue something and what it
    /// would issue then ([`Scheduler::plan`]); if that is later, the controller sleeps until
    /// then (or an earlier refresh deadline, or an arrival) and issues the planned pick when
    /// it wakes. So each issued command costs one plan, whatever the number of arrivals.
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
        let ctx = SchedContext {
            now,
            channel: self.id,
            write_mode: self.write_mode,
            read_queue_len: self.rq.len(),
            write_queue_len: self.wq.len(),
            banks: &self.views,
            occupied: &self.occupied,
            hints: &self.hints,
        };
        if q.is_empty() {
            self.idle_steps += 1;
            self.planned = None;
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
            let plan = self.sched.plan(&ctx, q);
            self.planned = plan.and_then(|(t, pick)| pick.map(|i| (t, i)));
            match plan {
                Some((t, _)) if t <= now => {}
                later => {
                    // Sleep until the planned cycle (or a refresh event).
                    let t = later.map_or(u64::MAX, |(t, _)| t);
                    self.next_wake = t.min(self.refresh_wake()).max(now + 1);
                    return;
                }
            }
        }
        let pick = match self.planned.take() {
            Some((t, i)) if t == now => Some(i),
            _ => self.sched.pick(&ctx, q),
        };
        let mut row_change = false;
        if let Some(i) = pick.filter(|&i| i < q.len() && ctx.ready(&q[i])) {
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
            // make the next cycle's plan now and sleep through to it.
            self.plan_ahead(now + 1);
        }
    }

    /// The plan [`Controller::process`] would make at cycle `at` (the next one), made now:
    /// sleep until the planned cycle, or a refresh event, if that is later than `at`. Any
    /// change before then (an arrival) re-plans as usual. Does nothing if the views are
    /// stale or the served queue is empty (`process` at `at` handles those).
    fn plan_ahead(&mut self, at: u64) {
        let q = if self.write_mode { &self.wq } else { &self.rq };
        if self.dirty || q.is_empty() {
            return;
        }
        let ctx = SchedContext {
            now: at,
            channel: self.id,
            write_mode: self.write_mode,
            read_queue_len: self.rq.len(),
            write_queue_len: self.wq.len(),
            banks: &self.views,
            occupied: &self.occupied,
            hints: &self.hints,
        };
        self.needs_plan = false;
        let plan = self.sched.plan(&ctx, q);
        self.planned = plan.and_then(|(t, pick)| pick.map(|i| (t, i)));
        let t = plan.map_or(u64::MAX, |(t, _)| t);
        if t > at {
            // A refresh event at `at` itself still wakes the controller at `at`.
            self.next_wake = t.min(self.refresh_wake()).max(at);
        }
    }

    /// Recompute the heads and pending hits of bank `b` from the served queue (branch-free:
    /// which candidates belong to the bank is data-dependent).
    fn rescan_bank(&mut self, b: usize) {
        self.rescan_bank_from(b, 0);
    }

    /// [`Controller::rescan_bank`] when no candidate of bank `b` is older than `from`.
    fn rescan_bank_from(&mut self, b: usize, from: usize) {
        let open = self.views[b].open_row;
        let q = if self.write_mode { &self.wq } else { &self.rq };
        let (mut hits, mut first_hit, mut first_other) = (0u32, NO_CANDIDATE, NO_CANDIDATE);
        for (i, c) in q.iter().enumerate().skip(from) {
            let mine = c.bank as usize == b;
            let hit = open == Some(c.row);
            hits += (mine & hit) as u32;
            first_hit = first_hit.min(select_unpredictable(mine & hit, i as u32, NO_CANDIDATE));
            first_other =
                first_other.min(select_unpredictable(mine & !hit, i as u32, NO_CANDIDATE));
        }
        let v = &mut self.views[b];
        v.pending_hits = hits;
        v.oldest_hit = first_hit;
        v.oldest_other = first_other;
        self.set_occupied(b);
    }

    /// The banks in `lo..hi` that have candidates (all of `lo..hi` when most banks do: one
    /// predictable loop beats iterating set bits). Banks without candidates may carry stale
    /// timing; they get fresh timing when their first candidate arrives.
    fn occupied_in(&self, lo: usize, hi: usize) -> OccupiedIter {
        let dense = match self.occupied.as_slice() {
            [w] => w.count_ones() as usize * 2 >= self.views.len(),
            _ => true,
        };
        let word = if dense || self.occupied.is_empty() {
            0
        } else {
            let mask = if hi - lo >= 64 {
                u64::MAX
            } else {
                ((1u64 << (hi - lo)) - 1) << lo
            };
            self.occupied[0] & mask
        };
        OccupiedIter {
            dense,
            next: lo,
            hi,
            word,
        }
    }

    /// Set or clear bank `b`'s bit in `occupied` from its heads.
    #[inline]
    fn set_occupied(&mut self, b: usize) {
        let v = &self.views[b];
        let has = (v.oldest_hit != NO_CANDIDATE) | (v.oldest_other != NO_CANDIDATE);
        let w = &mut self.occupied[b / 64];
        *w = (*w & !(1 << (b % 64))) | ((has as u64) << (b % 64));
    }

    /// Bring the bank views up to date after an issued command, touching only what the
    /// command can have changed (falls back to a full rebuild if the drain mode flips).
    /// Debug builds check the result against a full rebuild. Kept out of line: inlined into
    /// the decision step it cost 4.5% more instructions in the saturated run (callgrind).
    #[inline(never)]
    fn update_after(&mut self, effect: Effect) {
        if self.desired_mode() != self.write_mode {
            self.rebuild();
            return;
        }
        let bpr = self.banks_per_rank as usize;
        match effect {
            Effect::RowChange { bank } => {
                let open = self.dev.open_row(bank);
                let v = &mut self.views[bank];
                // No candidate of the bank is older than its oldest head.
                let first = v.oldest_hit.min(v.oldest_other);
                v.open_row = open;
                if open.is_none() {
                    // PRE: every candidate of the bank is now a non-hit; the oldest of them
                    // is the older head (the set of candidates did not change).
                    v.oldest_other = first;
                    v.oldest_hit = NO_CANDIDATE;
                    v.pending_hits = 0;
                } else {
                    // ACT: only candidates from the bank's oldest one on can hit.
                    self.rescan_bank_from(bank, first as usize);
                }
                // ACT constrains the ACTs of its rank (tRRD, tFAW) and its bank's PRE (tRAS)
                // and column commands (tRCD); PRE only its bank's ACT (tRP).
                let rank = bank >> self.rank_shift;
                if !self.ref_pending[rank] {
                    if open.is_some() {
                        // The bank itself is among the occupied banks (it has candidates).
                        let (lo, hi) = (rank * bpr, (rank + 1) * bpr);
                        let banks = self.occupied_in(lo, hi);
                        if banks.dense {
                            // Every bank of the rank, in one pass over the device state.
                            let ready = self.dev.act_ready_in_rank(rank);
                            for (v, t) in self.views[lo..hi].iter_mut().zip(ready) {
                                v.act_ready = t;
                                v.other_ready = v.non_hit_ready();
                            }
                        } else {
                            for b in banks {
                                let v = &mut self.views[b];
                                v.act_ready = self.dev.earliest(Command::Act, b);
                                v.other_ready = v.non_hit_ready();
                            }
                        }
                        let col_cmd = self.col_cmd();
                        let v = &mut self.views[bank];
                        v.pre_ready = self.dev.earliest(Command::Pre, bank);
                        v.col_ready = self.dev.earliest(col_cmd, bank);
                        v.other_ready = v.pre_ready;
                    } else {
                        let v = &mut self.views[bank];
                        v.act_ready = self.dev.earliest(Command::Act, bank);
                        v.other_ready = v.act_ready;
                    }
                }
                self.rekey(bank);
            }
            Effect::Column {
                bank,
                removed,
                auto_pre,
            } => {
                let r = removed as u32;
                let lost_head = self.views[bank].oldest_hit == r;
                self.views[bank].pending_hits -= 1;
                // Heads behind the removed candidate move up one; NO_CANDIDATE (u32::MAX)
                // stays, as it wraps to 0 when incremented (one compare per head). The other
                // banks' keys shift with them (their eligibility and classes do not change:
                // nothing of their banks did, and their heads keep their order); the issued
                // bank is re-keyed below.
                let shift = |v: &mut BankView| {
                    v.oldest_hit -= (v.oldest_hit.wrapping_add(1) > r + 1) as u32;
                    v.oldest_other -= (v.oldest_other.wrapping_add(1) > r + 1) as u32;
                    v.keys.shift(r);
                };
                // Column commands constrain every rank's column commands.
                let all = self.occupied_in(0, self.views.len());
                if all.dense {
                    // Every bank, in one pass over the views and the device state.
                    let rs = self.rank_shift;
                    let ready = self.dev.column_ready(self.write_mode);
                    for (b, (v, t)) in self.views.iter_mut().zip(ready).enumerate() {
                        shift(v);
                        v.col_ready = select_unpredictable(self.ref_pending[b >> rs], u64::MAX, t);
                    }
                } else {
                    self.views.iter_mut().for_each(shift);
                    let col_cmd = self.col_cmd();
                    for b in all {
                        self.views[b].col_ready = if self.ref_pending[b >> self.rank_shift] {
                            u64::MAX
                        } else {
                            self.dev.earliest(col_cmd, b)
                        };
                    }
                }
                if auto_pre {
                    self.views[bank].open_row = None;
                    self.rescan_bank(bank);
                } else if lost_head && self.views[bank].pending_hits == 0 {
                    // That was the bank's last hit.
                    self.views[bank].oldest_hit = NO_CANDIDATE;
                    self.set_occupied(bank);
                } else if lost_head {
                    // The next hit of the bank is younger than the removed one.
                    let open = self.views[bank].open_row;
                    let q = if self.write_mode { &self.wq } else { &self.rq };
                    let mut next = NO_CANDIDATE;
                    for (j, c) in q.iter().enumerate().skip(removed) {
                        let hit = (c.bank as usize == bank) & (Some(c.row) == open);
                        next = next.min(select_unpredictable(hit, j as u32, NO_CANDIDATE));
                    }
                    self.views[bank].oldest_hit = next;
                    self.set_occupied(bank);
                }
                // ... and their own bank's precharge (with auto-precharge, its activate too).
                // Without auto-precharge only the PRE timing moves (tRTP, write recovery):
                // ACT timing is untouched and the column timing was refreshed above.
                if auto_pre {
                    self.time_view(bank);
                } else if !self.ref_pending[bank >> self.rank_shift] {
                    let v = &mut self.views[bank];
                    v.pre_ready = self.dev.earliest(Command::Pre, bank);
                    v.other_ready = v.non_hit_ready();
                }
                self.rekey(bank);
            }
        }
        self.dirty = false;
        #[cfg(debug_assertions)]
        self.check_views();
    }

    /// Debug check: the incrementally maintained views equal a full recomputation.
    #[cfg(debug_assertions)]
    fn check_views(&self) {
        let mut fresh = self.views.clone();
        for (b, v) in fresh.iter_mut().enumerate() {
            v.open_row = self.dev.open_row(b);
            v.pending_hits = 0;
            v.oldest_hit = NO_CANDIDATE;
            v.oldest_other = NO_CANDIDATE;
        }
        let q = if self.write_mode { &self.wq } else { &self.rq };
        for (i, c) in q.iter().enumerate() {
            Self::note(&mut fresh[c.bank as usize], c.row, i as u32);
        }
        let col_cmd = self.col_cmd();
        for (b, (f, v)) in fresh.iter().zip(&self.views).enumerate() {
            assert_eq!(
                (f.open_row, f.pending_hits, f.oldest_hit, f.oldest_other),
                (v.open_row, v.pending_hits, v.oldest_hit, v.oldest_other),
                "bank {b} heads"
            );
            assert_eq!(self.sched.head_keys(f), v.keys, "bank {b} keys");
            if f.oldest_hit != NO_CANDIDATE || f.oldest_other != NO_CANDIDATE {
                let expect = if self.ref_pending[b >> self.rank_shift] {
                    (u64::MAX, u64::MAX, u64::MAX, u64::MAX)
                } else {
                    let (act, pre) = (
                        self.dev.earliest(Command::Act, b),
                        self.dev.earliest(Command::Pre, b),
                    );
                    let other = if f.open_row.is_some() { pre } else { act };
                    (act, pre, self.dev.earliest(col_cmd, b), other)
                };
                assert_eq!(
                    expect,
                    (v.act_ready, v.pre_ready, v.col_ready, v.other_ready),
                    "bank {b} timing"
                );
            }
        }
    }

    /// Issue the command of candidate `i` of the served queue at `now`.
    fn issue(&mut self, now: u64, i: usize) -> Effect {
        let write_mode = self.write_mode;
        if self.observe_issue {
            let ctx = SchedContext {
                now,
                channel: self.id,
                write_mode,
                read_queue_len: self.rq.len(),
                write_queue_len: self.wq.len(),
                banks: &self.views,
                occupied: &self.occupied,
                hints: &self.hints,
            };
            let q = if write_mode { &self.wq } else { &self.rq };
            self.sched.on_issue(&ctx, q, i);
        }
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
            for s in [&mut self.stats.access, &mut **src] {
                match status {
                    RowStatus::Hit => s.row_hits += 1,
                    RowStatus::Miss => s.row_misses += 1,
                    RowStatus::Conflict => s.row_conflicts += 1,
                }
            }
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
                let lat = done - c.enqueued;
                let src = self.sources[c.req.source as usize].get_or_insert_with(Default::default);
                for s in [&mut self.stats.access, &mut **src] {
                    s.bytes += self.tx_bytes;
                    if is_write {
                        s.writes += 1;
                        s.write_latency.record(lat);
                    } else {
                        s.reads += 1;
                        s.read_latency.record(lat);
                    }
                }
                self.stats.last_done = self.stats.last_done.max(done);
                if self.report_completions {
                    self.completions.push(Completion {
                        id: c.req.id,
                        addr: c.req.addr,
                        is_write,
                        source: c.req.source,
                        stream: c.req.stream,
                        arrival: c.req.arrival,
                        enqueued: c.enqueued,
                        done,
                    });
                }
                Effect::Column {
                    bank,
                    removed: i,
                    auto_pre,
                }
            }
        }
    }

    /// Close the queue-occupancy integrals at `now`.
    pub(crate) fn settle(&mut self, now: u64) {
        self.stats.read_queue.settle(now);
        self.stats.write_queue.settle(now);
    }

    /// Read access to the timing state (tests, tools).
    pub(crate) fn device(&self) -> &ChannelState {
        &self.dev
    }

    /// The scheduler's own counters ([`Scheduler::stats`]).
    pub(crate) fn scheduler_stats(&self) -> Vec<(&'static str, f64)> {
        self.sched.stats()
    }

    /// Replace the scheduler (tests of schedulers that are not registered); the views are
    /// rebuilt with its head keys at the next decision.
    #[cfg(test)]
    pub(crate) fn set_scheduler(&mut self, sched: Box<dyn Scheduler>) {
        self.observe_issue = sched.observes_issue();
        self.uses_hints = sched.uses_hints();
        self.sched = sched;
        self.dirty = true;
        self.needs_plan = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::preset;
    use crate::scheduler::frfcfs::plan_heads;
    use crate::system::MemorySystem;

    /// "First ready, oldest head": every existing head is eligible, all in one class (no
    /// row-hit priority, no held-back precharges), and the plan is FR-FCFS's minimum over the
    /// cached keys. A scheduler that changes only the key hook.
    #[derive(Debug)]
    struct OldestReadyHead;

    impl Scheduler for OldestReadyHead {
        fn name(&self) -> &'static str {
            "oldest-ready-head"
        }
        fn observes_issue(&self) -> bool {
            false
        }
        fn head_keys(&self, v: &BankView) -> HeadKeys {
            HeadKeys {
                hit: HeadKeys::key(v.oldest_hit != NO_CANDIDATE, 0, v.oldest_hit),
                other: HeadKeys::key(v.oldest_other != NO_CANDIDATE, 0, v.oldest_other),
            }
        }
        fn pick(&mut self, ctx: &SchedContext, _cands: &[Candidate]) -> Option<usize> {
            plan_heads(ctx).and_then(|(t, pick)| pick.filter(|_| t == ctx.now))
        }
        fn next_decision(&self, ctx: &SchedContext, _cands: &[Candidate]) -> Option<u64> {
            plan_heads(ctx).map(|(t, _)| t)
        }
        fn plan(&mut self, ctx: &SchedContext, _c: &[Candidate]) -> Option<(u64, Option<usize>)> {
            plan_heads(ctx)
        }
    }

    /// A saturating mix of reads and writes over a few rows of every bank (row hits,
    /// misses and conflicts; write drains), deterministic.
    fn requests(mem: &MemorySystem, n: u64) -> Vec<Request> {
        let cfg = mem.config();
        let org = &cfg.spec.org;
        let row_bytes = u64::from(org.columns) * org.transaction_bytes() / 8;
        (0..n)
            .map(|i| {
                let h = (i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32;
                let addr = (h % 4) * row_bytes * 64 + (h >> 8) % (row_bytes * 8);
                let r = Request::read(i, addr & !63, i * 2);
                if h % 5 == 0 {
                    Request {
                        is_write: true,
                        ..r
                    }
                } else {
                    r
                }
            })
            .collect()
    }

    fn run(mem: &mut MemorySystem, reqs: &[Request]) -> crate::stats::DramReport {
        crate::cli::run_requests(mem, reqs.iter().copied().map(Ok)).unwrap();
        mem.report()
    }

    /// The controller computes the cached keys with the scheduler's own hook: a custom hook
    /// changes the schedule (in debug builds, every command also checks the cached keys
    /// against the hook, see `check_views`).
    #[test]
    fn custom_head_keys_drive_the_plan() {
        let cfg = preset("ddr3-1600-11-1ch").unwrap();
        let mut fr = MemorySystem::new(cfg.clone()).unwrap();
        let reqs = requests(&fr, 3000);
        let fr_report = run(&mut fr, &reqs);
        let mut oldest = MemorySystem::new(cfg).unwrap();
        oldest
            .controller_mut(0)
            .set_scheduler(Box::new(OldestReadyHead));
        let oldest_report = run(&mut oldest, &reqs);
        let (a, b) = (&fr_report.total.access, &oldest_report.total.access);
        assert_eq!(a.reads + a.writes, b.reads + b.writes);
        assert!(
            a.row_hits > b.row_hits,
            "FR-FCFS-cap {} hits, oldest ready head {}",
            a.row_hits,
            b.row_hits
        );
    }

    /// Two ranks asleep in an idle stretch (a few rounds of refresh done), and what a jump
    /// changes: (next decision, refreshes issued).
    fn idle_two_ranks() -> (MemorySystem, u64) {
        let mut cfg = preset("ddr3-1600-11-1ch").unwrap();
        cfg.spec.org.ranks = 2;
        let refi = u64::from(cfg.spec.timing.refi);
        let mut mem = MemorySystem::new(cfg).unwrap();
        mem.advance_to(3 * refi + 100, &mut Vec::new());
        (mem, refi)
    }

    fn jump(c: &mut Controller, refi: u64) -> (u64, u64) {
        c.horizon = c.next_wake + 50 * refi;
        c.jump_refresh_rounds();
        (c.next_wake, c.stats.commands.refresh)
    }

    /// The idle jump applies only when every REF of the rounds it skips would issue at its
    /// deadline: not when a refresh is pending, when two ranks are due on one cycle (one
    /// would wait for the command bus), when the deadlines span a round or more, when a bank
    /// is open, or when a rank's REF is not yet legal at its deadline. (States an idle
    /// stretch reaches rarely or never, set up directly.)
    #[test]
    fn idle_jump_refuses_when_a_ref_would_miss_its_deadline() {
        let (mut mem, refi) = idle_two_ranks();
        let c = mem.controller_mut(0);
        let before = (c.next_wake, c.stats.commands.refresh);
        assert!(c.ref_due[0] != c.ref_due[1] && !c.ref_pending.contains(&true));
        // As it is, it jumps: 50 rounds of one REF per rank.
        assert_eq!(jump(c, refi), (before.0 + 50 * refi, before.1 + 100));

        let (mut mem, refi) = idle_two_ranks();
        let c = mem.controller_mut(0);
        let before = (c.next_wake, c.stats.commands.refresh);
        let due = c.ref_due.clone();
        c.ref_pending[1] = true;
        assert_eq!(jump(c, refi), before, "a refresh pending");
        c.ref_pending[1] = false;
        c.ref_due[1] = due[0];
        assert_eq!(jump(c, refi), before, "two ranks due on one cycle");
        c.ref_due[1] = due[0].max(due[1]) + refi;
        c.ref_due[0] = due[0].min(due[1]);
        assert_eq!(jump(c, refi), before, "deadlines a round apart");
        c.ref_due.copy_from_slice(&due);
        // Rank 1 opens a row a quarter round before the next deadline (after the clock and
        // every tRFC so far) and closes it after tRAS, so its next ACT, and REF, are legal
        // only tRP later.
        let t = before.0 - refi / 4;
        c.dev.issue(Command::Act, 8, 1, t);
        assert_eq!(jump(c, refi), before, "a bank open");
        let pre = c.dev.earliest(Command::Pre, 8);
        c.dev.issue(Command::Pre, 8, 1, pre);
        let legal = c.dev.earliest(Command::Ref, 8);
        c.ref_due[1] = legal - 1;
        c.ref_due[0] = legal;
        c.next_wake = legal - 1;
        let before = (c.next_wake, c.stats.commands.refresh);
        assert_eq!(jump(c, refi), before, "REF not yet legal at its deadline");
        c.ref_due[1] = legal;
        c.ref_due[0] = legal + 1;
        c.next_wake = legal;
        assert_eq!(
            jump(c, refi),
            (legal + 50 * refi, before.1 + 100),
            "legal at its deadline: jumps"
        );
    }

    /// The debug view check notices a cached key that no longer matches the hook.
    #[cfg(debug_assertions)]
    #[test]
    fn view_check_catches_stale_keys() {
        let cfg = preset("ddr3-1600-11-1ch").unwrap();
        let mut mem = MemorySystem::new(cfg).unwrap();
        let reqs = requests(&mem, 40);
        for r in &reqs[..20] {
            mem.try_send(*r).unwrap();
        }
        let mut sink = Vec::new();
        mem.advance_to(30, &mut sink);
        let c = mem.controller_mut(0);
        c.rebuild();
        c.check_views();
        let b = (0..c.views.len())
            .find(|&b| c.views[b].keys.other != HeadKeys::INELIGIBLE)
            .expect("a bank with an eligible non-hit");
        c.views[b].keys.other -= 1;
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c.check_views()));
        assert!(caught.is_err());
    }
}
