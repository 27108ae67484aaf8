//! Memory schedulers: the seam where request-ordering policies plug in.
//!
//! The interface is Ramulator 2's (ramulator2): pick the next request from a view of the
//! queue. The controller keeps each channel's read and write queues in arrival order.
//! Whenever the command bus is free it hands the [`Scheduler`] the queue the write-drain
//! policy is serving as a slice of [`Candidate`]s (oldest first: the request with its source,
//! stream, critical flag and arrival, plus where it goes) and a [`SchedContext`] holding one
//! [`BankView`] per bank: the open row, the earliest cycle each command kind is legal there,
//! how many queued requests hit the open row, and the oldest hit and oldest non-hit of the
//! bank. From these the context derives each candidate's row-hit status, next command and
//! ready cycle ([`SchedContext::status`], [`SchedContext::command`],
//! [`SchedContext::ready_at`]). The scheduler picks one candidate; the controller issues its
//! command if it is ready and otherwise waits (this is how strict FCFS stalls behind its
//! oldest request). Refresh and the read/write-drain switch are the controller's business,
//! not the scheduler's.
//!
//! The controller is event-driven: after every change it asks [`Scheduler::next_decision`]
//! for the earliest cycle the scheduler could pick a ready candidate and sleeps until then.
//! A scheduler needs only [`Scheduler::name`] and [`Scheduler::pick`]; the other methods
//! have default bodies (wake at the earliest ready candidate, keep no state, ignore hints,
//! count nothing).
//!
//! Implementations live one per file and are registered in [`REGISTRY`] (name, description,
//! paper key, typed parameters, constructor; [`make_scheduler`] builds one from a
//! [`SchedulerConfig`]): `fcfs` ([`fcfs::Fcfs`]), `frfcfs` ([`frfcfs::FrFcfs`]) and
//! `frfcfs-cap` ([`frfcfs_cap::FrFcfsCap`]); the heterogeneous schedulers of
//! gpu-access-criticality §4.3 — `gpu-favoring` ([`gpu_favoring::GpuFavoring`]), `im`,
//! `im-sched`, `im-llc` ([`im::Im`]) — and the baselines it compares against in §6.1.4:
//! `dynprio` ([`dynprio::DynPrio`]), `dash` ([`dash::Dash`]), `sms`, `sms-0.9`, `sms-0`
//! ([`sms::Sms`]). These see what only the system knows through [`SchedContext::hints`]
//! ([`SchedHints`], set with [`crate::MemorySystem::set_hints`]). A new scheduler is a new
//! file plus one entry in the registry (docs/policies.md lists them with every choice the
//! papers leave open).

pub mod dash;
pub mod dynprio;
pub mod fcfs;
pub mod frfcfs;
pub mod frfcfs_cap;
mod frfcfs_heads;
pub mod gpu_favoring;
pub mod hints;
pub mod im;
mod intervals;
mod ranked;
pub mod sms;
#[cfg(test)]
pub(crate) mod test_util;
#[cfg(test)]
mod tests;

pub use hints::{FrameHint, SchedHints};

use crate::device::Command;
use crate::error::DramError;
use crate::request::Request;
use apusim_registry::{find, Entry, Params, RegistryError};

/// Row-buffer state a request finds in its bank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum RowStatus {
    /// Its row is open: the next command is RD/WR.
    Hit,
    /// The bank is closed: the next command is ACT.
    Miss,
    /// Another row is open: the next command is PRE.
    Conflict,
}

/// No candidate (in [`BankView`] head fields).
pub const NO_CANDIDATE: u32 = u32::MAX;

/// One queued request as the scheduler sees it.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    /// The request as the caller sent it (id, address, source, stream, critical, arrival).
    pub req: Request,
    /// Cycle the request entered the queue.
    pub enqueued: u64,
    /// Flat bank index within the channel (`rank * banks_per_rank + group * per_group + bank`).
    pub bank: u32,
    pub row: u32,
    pub column: u32,
    pub rank: u32,
    /// Row-buffer outcome recorded when the request got its first command (statistics).
    pub(crate) first_outcome: Option<RowStatus>,
}

/// State of one bank as seen by the scheduler, for the queue being served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BankView {
    /// Open row, if any.
    pub open_row: Option<u32>,
    /// Earliest cycle an ACT / PRE / column command (RD in read mode, WR in write mode) is
    /// legal in this bank; `u64::MAX` while its rank waits for a refresh.
    pub act_ready: u64,
    pub pre_ready: u64,
    pub col_ready: u64,
    /// Candidates hitting the open row.
    pub pending_hits: u32,
    /// Column commands served from the open row since its ACT.
    pub hit_streak: u32,
    /// Index (into the candidate slice) of the oldest hit, or [`NO_CANDIDATE`].
    pub oldest_hit: u32,
    /// Index of the oldest candidate that is not a hit (all of a bank's non-hits need the
    /// same command at the same cycle), or [`NO_CANDIDATE`].
    pub oldest_other: u32,
    /// Earliest cycle the non-hits' command is legal: `pre_ready` if a row is open, else
    /// `act_ready`.
    pub other_ready: u64,
}

impl BankView {
    /// A closed bank with everything legal at cycle 0 and no candidates.
    pub const IDLE: BankView = BankView {
        open_row: None,
        act_ready: 0,
        pre_ready: 0,
        col_ready: 0,
        pending_hits: 0,
        hit_streak: 0,
        oldest_hit: NO_CANDIDATE,
        oldest_other: NO_CANDIDATE,
        other_ready: 0,
    };

    /// Earliest cycle the non-hits' command is legal, from the open row and the ACT/PRE
    /// timing: `pre_ready` if a row is open, else `act_ready` (what [`BankView::other_ready`]
    /// caches).
    #[inline]
    pub fn non_hit_ready(&self) -> u64 {
        std::hint::select_unpredictable(self.open_row.is_some(), self.pre_ready, self.act_ready)
    }
}

/// Controller state visible to a scheduler at a decision.
#[derive(Clone, Copy, Debug)]
pub struct SchedContext<'a> {
    pub now: u64,
    pub channel: u32,
    /// True while the controller drains writes (candidates are then write requests).
    pub write_mode: bool,
    pub read_queue_len: usize,
    pub write_queue_len: usize,
    /// One view per flat bank of the channel.
    pub banks: &'a [BankView],
    /// Bit set of the banks that have candidates (bit `b % 64` of word `b / 64`).
    pub occupied: &'a [u64],
    /// What the system told the schedulers ([`crate::MemorySystem::set_hints`]).
    pub hints: &'a SchedHints,
    /// A number that changes whenever anything else this context shows may have changed (a
    /// command, an arrival, a refresh, new hints): two contexts of one controller with the
    /// same version differ at most in `now`, so a scheduler may reuse what it derived from
    /// one for the other (FR-FCFS reuses its next decision's pick).
    pub version: u64,
}

/// Iterator over the set bits of a bit set, ascending.
pub struct Bits<'a> {
    words: &'a [u64],
    word: usize,
    cur: u64,
}

impl Iterator for Bits<'_> {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.cur == 0 {
            self.word += 1;
            self.cur = *self.words.get(self.word)?;
        }
        let b = self.cur.trailing_zeros() as usize;
        self.cur &= self.cur - 1;
        Some(self.word * 64 + b)
    }
}

impl<'a> SchedContext<'a> {
    /// Call `f` on the view of every bank that has candidates, and possibly on some that have
    /// none (their heads are [`NO_CANDIDATE`]): when most banks are occupied it is cheaper to
    /// visit all of them than to iterate over the set bits (whose loop exits mispredict).
    /// Always inlined, so that what `f` keeps across banks stays in registers.
    #[inline(always)]
    pub fn for_candidate_banks(&self, mut f: impl FnMut(&BankView)) {
        let occupied = match self.occupied {
            [w] => w.count_ones(),
            ws => ws.iter().map(|w| w.count_ones()).sum(),
        };
        if occupied as usize * 2 >= self.banks.len() {
            self.banks.iter().for_each(f);
        } else {
            for b in self.occupied_banks() {
                f(&self.banks[b]);
            }
        }
    }

    /// The banks that have candidates, ascending.
    #[inline]
    pub fn occupied_banks(&self) -> Bits<'a> {
        Bits {
            words: self.occupied,
            word: 0,
            cur: self.occupied.first().copied().unwrap_or(0),
        }
    }
    /// The bank view of a candidate.
    #[inline]
    pub fn bank(&self, c: &Candidate) -> &BankView {
        &self.banks[c.bank as usize]
    }
    /// Row-buffer status of a candidate.
    #[inline]
    pub fn status(&self, c: &Candidate) -> RowStatus {
        match self.banks[c.bank as usize].open_row {
            Some(r) if r == c.row => RowStatus::Hit,
            Some(_) => RowStatus::Conflict,
            None => RowStatus::Miss,
        }
    }
    /// Next command a candidate needs.
    #[inline]
    pub fn command(&self, c: &Candidate) -> Command {
        match self.status(c) {
            RowStatus::Hit if self.write_mode => Command::Wr,
            RowStatus::Hit => Command::Rd,
            RowStatus::Miss => Command::Act,
            RowStatus::Conflict => Command::Pre,
        }
    }
    /// Earliest cycle the candidate's next command is legal.
    #[inline]
    pub fn ready_at(&self, c: &Candidate) -> u64 {
        let v = &self.banks[c.bank as usize];
        match v.open_row {
            Some(r) if r == c.row => v.col_ready,
            Some(_) => v.pre_ready,
            None => v.act_ready,
        }
    }
    /// Can the candidate's next command issue now?
    #[inline]
    pub fn ready(&self, c: &Candidate) -> bool {
        self.ready_at(c) <= self.now
    }
    /// Queued requests (served queue) that hit the row open in `c`'s bank.
    #[inline]
    pub fn pending_hits(&self, c: &Candidate) -> u32 {
        self.banks[c.bank as usize].pending_hits
    }
    /// Column commands served from the row open in `c`'s bank since its ACT.
    #[inline]
    pub fn hit_streak(&self, c: &Candidate) -> u32 {
        self.banks[c.bank as usize].hit_streak
    }
    /// Would issuing `c`'s command close a row other queued requests still hit?
    #[inline]
    pub fn closes_useful_row(&self, c: &Candidate) -> bool {
        self.status(c) == RowStatus::Conflict && self.pending_hits(c) > 0
    }
}

/// A request-ordering policy (Ramulator 2's interface: pick the next request from a view of
/// the queue).
pub trait Scheduler: Send + std::fmt::Debug {
    /// Registered name.
    fn name(&self) -> &'static str;
    /// Pick the candidate whose command should issue (index into `cands`, which is in arrival
    /// order, oldest first), or `None` to issue nothing. The controller issues the command
    /// only if it is ready ([`SchedContext::ready`]). `pick` may be called more than once for
    /// the same decision: keep state changes in [`Scheduler::on_issue`].
    fn pick(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Option<usize>;
    /// The earliest cycle `>= ctx.now` at which [`Scheduler::pick`] could return a ready
    /// candidate, assuming the candidates do not change before then (every change — an
    /// arrival, an issued command, a refresh — triggers a new decision anyway); `None` if
    /// never. The controller sleeps until then and picks at that cycle. The default is the
    /// earliest ready cycle of any candidate; a scheduler may skip candidates it will
    /// certainly not pick, but must never report a cycle later than its next possible pick.
    /// `&mut self` only for scratch space: what later decisions do must not change.
    fn next_decision(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Option<u64> {
        cands.iter().map(|c| ctx.ready_at(c).max(ctx.now)).min()
    }
    /// Called just before the controller issues the command of `cands[picked]`, with the
    /// context and candidates of that decision: the place for a scheduler's state changes.
    /// A column command (the candidate's status is [`RowStatus::Hit`]) then removes the
    /// candidate from the queue; nothing else removes candidates, and arrivals are appended,
    /// so a scheduler can keep per-candidate state in step with the queue. Nothing by default.
    fn on_issue(&mut self, _ctx: &SchedContext, _cands: &[Candidate], _picked: usize) {}
    /// Whether the decisions depend on [`SchedContext::hints`]. If so, the controller
    /// decides again when the hints change; if not (the default), new hints leave it asleep.
    fn uses_hints(&self) -> bool {
        false
    }
    /// The scheduler's own counters so far, by name (monotonic, so a run's channels add
    /// up): what a stateful scheduler decided, e.g. IM-SCHED's intervals at its probability
    /// cap. None by default.
    fn stats(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// What building a scheduler takes from the memory system's configuration
/// ([`crate::DramConfig::scheduler_config`]).
#[derive(Clone, Copy, Debug)]
pub struct SchedulerConfig<'a> {
    /// Registered name (or an accepted spelling, see [`scheduler_entry`]).
    pub name: &'a str,
    /// Parameters by name (`--set scheduler.KEY=VALUE`), validated against the entry's.
    pub params: &'a toml::Table,
    /// Row-hit cap of `frfcfs-cap`.
    pub row_hit_cap: u32,
}

/// Constructor of a registered scheduler: its validated parameters and the configuration it
/// was chosen with.
pub type BuildScheduler = fn(&Params, &SchedulerConfig) -> Box<dyn Scheduler>;

/// The registered memory schedulers (apusim's one registration shape: name, description,
/// paper key, typed validated parameters, constructor). Parameters come from
/// [`SchedulerConfig::params`] (`--set scheduler.KEY=VALUE`).
pub const REGISTRY: &[Entry<BuildScheduler>] = &[
    Entry {
        name: "fcfs",
        description: "first-come first-served: always the oldest request, waiting until it can issue",
        paper: "ramulator2 (its FCFS scheduler)",
        params: &[],
        build: |_, _| Box::new(fcfs::Fcfs),
    },
    Entry {
        name: "frfcfs",
        description: "FR-FCFS: ready row hits first, then the oldest ready request; no precharge closes a row other requests hit",
        paper: "frfcfs (as DRAMsim3 runs FR-FCFS)",
        params: &[],
        build: |_, _| Box::new(frfcfs::FrFcfs::default()),
    },
    Entry {
        name: "frfcfs-cap",
        description: "FR-FCFS whose row hits lose priority after row_hit_cap column commands to the open row",
        paper: "stfm (FR-FCFS+Cap, as in DRAMsim3)",
        params: &[],
        build: |_, cfg| Box::new(frfcfs_cap::FrFcfsCap::new(cfg.row_hit_cap)),
    },
    Entry {
        name: "gpu-favoring",
        description: "FR-FCFS with critical GPU accesses first among row hits and among activations",
        paper: "gpu-access-criticality §4.3",
        params: &[],
        build: |_, _| Box::new(gpu_favoring::GpuFavoring),
    },
    Entry {
        name: "im",
        description: "interference mitigation: GPU-favoring with IM-SCHED (probabilistic CPU priority) and IM-LLC (emergency CPU sources)",
        paper: "gpu-access-criticality §4.3, Fig. 11",
        params: &im::IM_PARAMS,
        build: |p, _| Box::new(im::Im::new("im", p)),
    },
    Entry {
        name: "im-sched",
        description: "the IM policy with IM-SCHED only (Fig. 11 ablation)",
        paper: "gpu-access-criticality §4.3, Fig. 11",
        params: &im::IM_SCHED_PARAMS,
        build: |p, _| Box::new(im::Im::new("im-sched", p)),
    },
    Entry {
        name: "im-llc",
        description: "the IM policy with IM-LLC only (Fig. 11 ablation)",
        paper: "gpu-access-criticality §4.3, Fig. 11",
        params: &im::IM_LLC_PARAMS,
        build: |p, _| Box::new(im::Im::new("im-llc", p)),
    },
    Entry {
        name: "dynprio",
        description: "dynamic priority: GPU below the CPU on track, equal when behind its frame, above it in the last share of the frame",
        paper: "dynprio, as in gpu-access-criticality §2, §6.1.4",
        params: &dynprio::PARAMS,
        build: |p, _| Box::new(dynprio::DynPrio::new(p)),
    },
    Entry {
        name: "dash",
        description: "deadline-aware: urgent GPU > non-intensive CPU > non-urgent GPU > intensive CPU",
        paper: "dash, as in gpu-access-criticality §2, §6.1.4",
        params: &dash::PARAMS,
        build: |p, _| Box::new(dash::Dash::new(p)),
    },
    Entry {
        name: "sms",
        description: "staged memory scheduling: per-source batch formation, SJF (probability p) or round-robin batch scheduler, per-bank FIFOs",
        paper: "sms, as in gpu-access-criticality §6.1.4, §6.2",
        params: &sms::SMS_PARAMS,
        build: |p, _| Box::new(sms::Sms::new("sms", p)),
    },
    Entry {
        name: "sms-0.9",
        description: "SMS with shortest job first at probability 0.9 (SMS-0.9)",
        paper: "gpu-access-criticality §6.1.4",
        params: &sms::SMS_PARAMS,
        build: |p, _| Box::new(sms::Sms::new("sms-0.9", p)),
    },
    Entry {
        name: "sms-0",
        description: "SMS with round-robin batch scheduling only (SMS-0)",
        paper: "gpu-access-criticality §6.1.4",
        params: &sms::SMS_0_PARAMS,
        build: |p, _| Box::new(sms::Sms::new("sms-0", p)),
    },
];

/// Spellings accepted for registered names (after lower-casing and `_` → `-`).
pub const ALIASES: &[(&str, &str)] = &[("fr-fcfs", "frfcfs"), ("fr-fcfs-cap", "frfcfs-cap")];

/// Registered scheduler names, in registry order.
pub fn scheduler_names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.name).collect()
}

/// The registry entry of scheduler `name` (case-insensitive; `_` for `-` and the
/// [`ALIASES`] spellings accepted), or an error naming the nearest registered name.
pub fn scheduler_entry(name: &str) -> Result<&'static Entry<BuildScheduler>, DramError> {
    let norm = name.to_ascii_lowercase().replace('_', "-");
    let canonical = ALIASES
        .iter()
        .find(|(a, _)| *a == norm)
        .map_or(norm.as_str(), |(_, n)| n);
    match find(REGISTRY, "memory scheduler", canonical) {
        Ok(e) => Ok(e),
        // Report the name as the user wrote it.
        Err(RegistryError::UnknownName {
            kind,
            nearest,
            valid,
            ..
        }) => Err(DramError::UnknownScheduler(Box::new(
            RegistryError::UnknownName {
                kind,
                name: name.to_string(),
                nearest,
                valid,
            },
        ))),
        Err(e) => Err(DramError::UnknownScheduler(Box::new(e))),
    }
}

/// Build the scheduler `cfg.name` names with the parameters `cfg.params` gives (validated:
/// unknown keys, wrong types and out-of-range values are refused).
pub fn make_scheduler(cfg: &SchedulerConfig) -> Result<Box<dyn Scheduler>, DramError> {
    let e = scheduler_entry(cfg.name)?;
    let params = e
        .params(cfg.params)
        .map_err(|err| DramError::SchedulerParams {
            scheduler: e.name.to_string(),
            err: Box::new(err),
        })?;
    Ok((e.build)(&params, cfg))
}
