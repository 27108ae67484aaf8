//! One channel's memory controller: read and write queues, write-drain mode, refresh, row
//! policy, and the event-driven decision step that asks the scheduler what to issue.
//!
//! The controller's state is held here; `queue` admits requests, `refresh` keeps the ranks
//! refreshed, `views` keeps the per-bank views current, and `step` is the decision step that
//! plans and issues commands.
//!
//! The controller is never ticked cycle by cycle. It keeps one [`BankView`] per bank for the
//! queue it serves (open row, earliest ACT/PRE/column cycle, pending hits, oldest hit and
//! oldest non-hit, the non-hits' ready cycle) and updates only what an issued command
//! changed. After a change it asks the scheduler for its next decision — the earliest cycle
//! it could issue something ([`Scheduler::next_decision`]) — and sleeps until then, the next
//! refresh deadline, or an arrival (which pulls `next_wake` back to the current cycle). The
//! command bus carries one command per cycle, so after a command the next decision is at the
//! following cycle at the earliest. Between those cycles nothing can happen, so the
//! simulation jumps.

mod queue;
mod refresh;
mod step;
#[cfg(test)]
mod tests;
mod views;

use crate::config::{DramConfig, RowPolicy};
use crate::device::{ChannelState, Command};
use crate::request::Completion;
use crate::scheduler::{make_scheduler, BankView, Candidate, SchedHints, Scheduler};
use crate::stats::{AccessStats, ChannelStats, RowOutcomes};
use crate::DramError;
use serde::Serialize;

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
    /// Most writes a drain serves while reads wait ([`DramConfig::write_drain_cap`]).
    drain_cap: usize,
    /// Writes issued since the drain began.
    drained: usize,
    /// A drain ended at its cap: the next drain waits for a read to be served.
    read_owed: bool,
    policy: RowPolicy,
    refresh: bool,
    ref_due: Vec<u64>,
    ref_pending: Vec<bool>,
    sched: Box<dyn Scheduler>,
    /// The system's hints, shown to the scheduler in every context.
    hints: SchedHints,
    /// `sched.uses_hints()`: whether new hints call for a new plan.
    uses_hints: bool,
    views: Vec<BankView>,
    /// Banks with candidates in the served queue (bit set).
    occupied: Vec<u64>,
    /// `views` and `occupied` are stale.
    dirty: bool,
    /// Something changed since the scheduler last named its next decision.
    needs_plan: bool,
    /// Moves on every change of the views, the queues or the hints
    /// ([`SchedContext::version`](crate::scheduler::SchedContext::version)).
    version: u64,
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
    /// Row outcomes per stream tag: `[reads, writes]`.
    pub(crate) stream_rows: Vec<[RowOutcomes; 2]>,
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
        let sched = make_scheduler(&cfg.scheduler_config())?;
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
            drain_cap: cfg.drain_cap(),
            drained: 0,
            read_owed: false,
            policy: cfg.row_policy,
            refresh: cfg.refresh,
            ref_due,
            ref_pending: vec![false; ranks],
            hints: SchedHints::default(),
            uses_hints: sched.uses_hints(),
            sched,
            views: vec![BankView::IDLE; n_banks],
            occupied: vec![0; n_banks.div_ceil(64)],
            dirty: true,
            needs_plan: true,
            version: 0,
            next_wake: if cfg.refresh { first_due } else { u64::MAX },
            horizon: 0,
            idle_steps: 0,
            stats: ChannelStats::default(),
            sources: (0..256).map(|_| None).collect(),
            stream_rows: vec![[RowOutcomes::default(); 2]; 256],
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
        self.version += 1;
        if self.uses_hints {
            self.needs_plan = true;
            self.next_wake = self.next_wake.min(now);
        }
    }

    pub(crate) fn queued(&self) -> usize {
        self.rq.len() + self.wq.len()
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

    /// Replace the scheduler (tests of schedulers that are not registered).
    #[cfg(test)]
    pub(crate) fn set_scheduler(&mut self, sched: Box<dyn Scheduler>) {
        self.uses_hints = sched.uses_hints();
        self.sched = sched;
        self.dirty = true;
        self.needs_plan = true;
    }
}
