//! SIMT shader cores executing per-warp programs (the `simt` GPU model).
//!
//! The model is split by the part of the core it describes: this file holds the state of
//! the cores and warps and the [`GpuModel`] step that drives them; `dispatch` places and
//! retires thread blocks, `scheduler` issues warp instructions (scoreboard, barriers, warp
//! scheduler, stall accounting), `lsu` moves transactions between the load/store units and
//! memory, and `warm` is functional warming of sampled runs.
//!
//! The model follows the shader cores of the papers' CUDA GPU (drp §3, borrowed from
//! MacSim; tap Table 4) as GPGPU-Sim/Accel-Sim users know them:
//!
//! - **Thread-block dispatch**: blocks of the current kernel launch go to shader cores in
//!   round robin, at most one per core per cycle, while the core has room: free warp
//!   contexts (`warps_per_sm`), a free block slot (`blocks_per_sm`), scratchpad
//!   (`shared_bytes_per_sm`) and registers (`registers_per_sm`) for what the launch declares.
//!   A launch starts only when every block of the one before has finished.
//! - **Issue**: every `issue_cycles` cycles (an issue slot) the warp scheduler picks up to
//!   `issue_width` ready warps, and each issues its next instruction: drp §3's "two ready
//!   warps every fourth cycle". `lrr` takes ready warps in loose round robin after the last
//!   one that issued; `gto` keeps issuing the same warp while it is ready, then the oldest
//!   ready one (adaptive-gpu-l1-bypassing §4.1's oldest-first).
//! - **Scoreboard**: loads issue back to back; the first later instruction that is not a load
//!   (compute, scratchpad, store, atomic, barrier) uses their data and waits until every
//!   load of the warp has its data. The per-warp programs carry no register names, so this
//!   is the dependence the scoreboard sees (see `apusim_trace::warps`). The cycles a warp
//!   waits are charged to the PC of the load whose data released it.
//! - **Load/store unit**: a memory instruction puts its coalesced transactions into the
//!   core's queue (it issues while fewer than `lsu_entries` wait); `lsu_width` transactions
//!   a cycle leave for the core's L1 through the [`MemPort`] (the access's `unit` is the
//!   core). A transaction the L1 cannot take (no free MSHR) stays at the head until the
//!   memory side says it can. Stores need no answer to go on; a warp ends only when its
//!   stores are acknowledged.
//! - **Barriers**: a warp at `__syncthreads()` waits until every warp of its block has
//!   arrived.
//!
//! - **Access criticality** (`criticality`, off by default; gpu-access-criticality §4.1.2,
//!   [`super::shader_criticality`]): every `crit_period` cycles each core is classified
//!   bottlenecked or not by its `InputStall` and `OutputStall` counters, and its stall table's
//!   top PCs become its critical set; each transaction leaving a load/store unit is marked
//!   critical ([`Access::CRITICAL`]) or not, and a non-critical one carries
//!   [`Access::BYPASS_LLC`], so it does not allocate in the LLC when it misses there.
//!
//! Time is skipped: the model asks to run again only at the next issue slot with a ready
//! warp, the next cycle its load/store unit can send, or the next local completion; a GPU
//! whose warps all wait for memory sleeps until data arrives. Every cycle of every core is
//! charged to one of [`StallCycles`]' classes.

use super::shader_criticality::{ppm, CritParams, Criticality, CriticalityStats, Mark};
use super::{min_tick, GpuModel, GpuProgram, GpuStats, KernelSpan, StallCycles};
use crate::{Domain, MemPort, Tick, TimingError, Token, Wake, WarmPort};
use apusim_registry::Params;
use apusim_trace::{Access, Agent, BlockItem, BlockSource, LaunchInfo, Op, Stream, ThreadBlock};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

mod dispatch;
mod lsu;
mod scheduler;
mod warm;

/// Most warp contexts per shader core (the ready set is one 128-bit mask).
pub const MAX_WARPS: usize = 128;

/// Instructions each resident warp takes per round of functional warming (sampled runs):
/// warps advance together, as loose round robin would interleave them.
const WARM_CHUNK: u64 = 32;

/// A transaction waiting in a load/store unit.
#[derive(Clone, Copy, Debug)]
struct Txn {
    addr: u64,
    size: u16,
    op: Op,
    flags: u8,
    pc: u64,
    warp: u8,
    gwarp: u32,
}

impl Txn {
    /// Loads and atomics return data the warp waits for; stores only an acknowledgement.
    fn returns_data(&self) -> bool {
        self.op == Op::Read
    }
    /// The access shader core `unit` sends for it.
    fn access(&self, unit: u16) -> Access {
        let mut acc = Access::new(
            Agent::GPU,
            Stream::ShaderData,
            self.op,
            self.addr,
            self.size,
        )
        .with_pc(self.pc)
        .with_unit(unit)
        .with_warp(self.gwarp);
        acc.flags = self.flags;
        acc
    }
}

/// A transaction sent to memory and not yet answered (the token names its slot).
#[derive(Clone, Copy, Debug, Default)]
struct InFlight {
    sm: u16,
    warp: u8,
    load: bool,
    pc: u64,
    sent: Tick,
    /// Completions still to come.
    parts: u32,
    /// It missed the core's private cache: the memory side could not answer it at once
    /// ([`Issue::Pending`](crate::Issue::Pending)).
    missed: bool,
}

#[derive(Clone, Copy, Debug, Default)]
struct WarpCtx {
    live: bool,
    block: u8,
    /// The next instruction (an index into the block's ops) and the end of the warp's.
    next: u32,
    end: u32,
    /// Instructions left of the current compute or scratchpad run (0: not started).
    rem: u32,
    /// Load transactions not yet answered, and store transactions not yet acknowledged.
    pending: u32,
    stores: u32,
    at_barrier: bool,
    /// Dispatch order (greedy-then-oldest).
    age: u64,
    /// Global warp id of the program.
    gwarp: u32,
    /// The cycle the warp began waiting for its loads' data.
    waiting_since: Option<u64>,
}

impl WarpCtx {
    /// Take up to `up_to` instructions of the compute or scratchpad run of `n` at the warp's
    /// next instruction (starting it if it has not begun), moving past it when it is done;
    /// returns the instructions taken.
    fn take_run(&mut self, n: u32, up_to: u32) -> u32 {
        if self.rem == 0 {
            self.rem = n.max(1);
        }
        let t = self.rem.min(up_to);
        self.rem -= t;
        if self.rem == 0 {
            self.next += 1;
        }
        t
    }
}

struct BlockCtx {
    block: ThreadBlock,
    warps: Vec<u8>,
    live: u32,
    arrived: u32,
    shared: u32,
    regs: u32,
}

/// What a core's cycles go to when it does not issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cat {
    Memory,
    Issue,
    Barrier,
    Idle,
}

struct Sm {
    warps: Vec<WarpCtx>,
    free_warps: Vec<u8>,
    blocks: Vec<Option<BlockCtx>>,
    /// Warps whose next instruction may issue (the scoreboard and barrier allow it).
    ready: u128,
    resident: u32,
    shared_used: u32,
    regs_used: u32,
    lsu: VecDeque<Txn>,
    /// The L1 refused the head transaction: retry at this tick, or after a completion.
    lsu_retry: Tick,
    lsu_wait: bool,
    lsu_blocked_since: Option<u64>,
    /// Loose round robin: the last warp that issued; greedy-then-oldest: the greedy warp.
    last: usize,
    /// The first issue slot not yet charged, and what the slots until the next evaluation
    /// are charged to.
    next_slot: u64,
    cat: Cat,
    /// Where this core's cycles went.
    stalls: StallCycles,
    /// Warp instructions this core issued (its share of `GpuStats::warp_instructions`).
    issued: u64,
}

/// The `simt` GPU model (see the module documentation).
pub struct Simt {
    domain: Domain,
    issue_width: usize,
    issue_cycles: u64,
    warps_per_sm: usize,
    shared_per_sm: u32,
    regs_per_sm: u32,
    lsu_entries: usize,
    lsu_width: usize,
    gto: bool,
    sms: Vec<Sm>,
    source: Box<dyn BlockSource>,
    /// The current launch, the next item taken from the program and not yet placed, the
    /// program's end.
    launch: Option<LaunchInfo>,
    waiting: Option<BlockItem>,
    ended: bool,
    /// Blocks of the current launch resident, and finished.
    running: u32,
    finished_blocks: u32,
    rr: usize,
    ages: u64,
    inflight: Vec<InFlight>,
    free_inflight: Vec<u32>,
    /// Answers known in advance (first-level hits): (tick, in-flight slot).
    due: BinaryHeap<Reverse<(Tick, u32)>>,
    stats: GpuStats,
    kernels: Vec<KernelSpan>,
    first_pass: bool,
    pc_stalls: FxHashMap<u64, u64>,
    /// A block finished: dispatch may place the next one.
    room: bool,
    /// Frozen: nothing is dispatched, issued or sent (sampled runs let memory drain).
    frozen: bool,
    /// The criticality hardware (`criticality`; gpu-access-criticality §4.1.2).
    crit: Option<Box<Criticality>>,
}

/// `flags` with the criticality bits of mark `m`: [`Access::CRITICAL`] for a critical
/// transaction, [`Access::BYPASS_LLC`] for a non-critical one (gpu-access-criticality §4.1.2:
/// "the non-critical shader accesses that miss in the LLC bypass the LLC").
fn marked(flags: u8, m: Mark) -> u8 {
    let f = flags & !(Access::CRITICAL | Access::BYPASS_LLC);
    if m.critical() {
        f | Access::CRITICAL
    } else {
        f | Access::BYPASS_LLC
    }
}

/// `flags` of a transaction of the instruction at `pc` from core `s` under the criticality
/// hardware `crit` (as they are without it).
fn crit_flags(crit: Option<&Criticality>, s: usize, pc: u64, flags: u8) -> u8 {
    match crit {
        Some(k) => marked(flags, k.mark(s, pc)),
        None => flags,
    }
}

pub fn build(
    p: &Params,
    domain: Domain,
    program: GpuProgram,
) -> Result<Box<dyn GpuModel>, TimingError> {
    let GpuProgram::Kernels(source) = program else {
        return Err(TimingError::Config(
            "the `simt` GPU model runs GPGPU kernels; a 3D render job needs the `pipeline` \
             model ([timing.render])"
                .into(),
        ));
    };
    let n = p.int("sms") as usize;
    let warps = p.int("warps_per_sm") as usize;
    let blocks = p.int("blocks_per_sm") as usize;
    let sms = (0..n)
        .map(|_| Sm {
            warps: vec![WarpCtx::default(); warps],
            free_warps: (0..warps as u8).rev().collect(),
            blocks: (0..blocks).map(|_| None).collect(),
            ready: 0,
            resident: 0,
            shared_used: 0,
            regs_used: 0,
            lsu: VecDeque::new(),
            lsu_retry: 0,
            lsu_wait: false,
            lsu_blocked_since: None,
            last: warps - 1,
            next_slot: 0,
            cat: Cat::Idle,
            stalls: StallCycles::default(),
            issued: 0,
        })
        .collect();
    Ok(Box::new(Simt {
        domain,
        issue_width: p.int("issue_width") as usize,
        issue_cycles: p.int("issue_cycles"),
        warps_per_sm: warps,
        shared_per_sm: p.int("shared_bytes_per_sm") as u32,
        regs_per_sm: p.int("registers_per_sm") as u32,
        lsu_entries: p.int("lsu_entries") as usize,
        lsu_width: p.int("lsu_width") as usize,
        gto: p.choice("scheduler") == "gto",
        sms,
        source,
        launch: None,
        waiting: None,
        ended: false,
        running: 0,
        finished_blocks: 0,
        rr: 0,
        ages: 0,
        inflight: Vec::new(),
        free_inflight: Vec::new(),
        due: BinaryHeap::new(),
        stats: GpuStats::default(),
        kernels: Vec::new(),
        first_pass: true,
        pc_stalls: FxHashMap::default(),
        room: true,
        frozen: false,
        crit: p.bool("criticality").then(|| {
            Box::new(Criticality::new(
                CritParams {
                    counter_bits: p.int("counter_bits") as u32,
                    entries: p.int("stall_table_entries") as usize,
                    cover_ppm: ppm(p.float("crit_cover")),
                    miss_limit_ppm: ppm(p.float("llc_miss_limit")),
                    period: p.int("crit_period"),
                    decay: p.int("stall_decay") as u32,
                },
                n,
            ))
        }),
    }))
}

impl Simt {
    fn name(&self) -> String {
        self.source
            .header()
            .agents
            .first()
            .map(|a| a.name.clone())
            .unwrap_or_else(|| "gpu program".into())
    }

    /// A description of what every core holds (deadlock reports).
    fn describe(&self) -> String {
        let cores: Vec<String> = self
            .sms
            .iter()
            .enumerate()
            .filter(|(_, sm)| sm.resident > 0 || !sm.lsu.is_empty())
            .map(|(i, sm)| {
                let pending: u32 = sm.warps.iter().filter(|w| w.live).map(|w| w.pending).sum();
                let barrier = sm.warps.iter().filter(|w| w.live && w.at_barrier).count();
                format!(
                    "sm{i}: {} warps, {pending} loads pending, {barrier} at a barrier, {} in \
                     the load/store unit",
                    sm.resident,
                    sm.lsu.len()
                )
            })
            .collect();
        format!("{}: {}", self.name(), cores.join("; "))
    }
}

fn charge(st: &mut StallCycles, cat: Cat, cycles: u64) {
    match cat {
        Cat::Memory => st.memory += cycles,
        Cat::Issue => st.issue += cycles,
        Cat::Barrier => st.barrier += cycles,
        Cat::Idle => st.idle += cycles,
    }
}

impl GpuModel for Simt {
    fn cycle(&mut self, now: Tick, port: &mut dyn MemPort) -> Result<Wake, TimingError> {
        let c = self.domain.cycle(now);
        self.stats.cycles = c;
        while let Some(&Reverse((t, idx))) = self.due.peek() {
            if t > now {
                break;
            }
            self.due.pop();
            self.arrived(idx, t);
        }
        if self.frozen {
            // Data still arrives; nothing else moves until the engine thaws the GPU.
            return Ok(match self.due.peek() {
                Some(&Reverse((t, _))) => Wake::At(self.domain.edge_at_or_after(t)),
                None => Wake::OnCompletion,
            });
        }
        if self.room || self.waiting.is_none() {
            self.room = false;
            self.dispatch(c, false)?;
        }
        self.evaluate_criticality(c);
        let slot_now = c.is_multiple_of(self.issue_cycles);
        for s in 0..self.sms.len() {
            self.send(s, now, c, port);
            if slot_now {
                self.issue_slot(s, c);
            }
        }
        // When something can happen next.
        let next_slot = self
            .domain
            .tick((c / self.issue_cycles + 1) * self.issue_cycles);
        let next_cycle = now + self.domain.period;
        let mut next = self.due.peek().map(|r| r.0 .0);
        for sm in &self.sms {
            if sm.ready != 0 {
                next = min_tick(next, Some(next_slot));
            }
            if !sm.lsu.is_empty() && !sm.lsu_wait {
                next = min_tick(next, Some(sm.lsu_retry.max(next_cycle)));
            }
        }
        if self.room && self.waiting.is_some() {
            next = min_tick(next, Some(next_cycle));
        }
        if let Some(t) = next {
            return Ok(Wake::At(self.domain.edge_at_or_after(t.max(next_cycle))));
        }
        if self.inflight.len() > self.free_inflight.len() {
            return Ok(Wake::OnCompletion);
        }
        if self.ended && self.waiting.is_none() && self.running == 0 {
            if self.first_pass {
                self.stats.programs += 1;
            }
            return Ok(Wake::Finished);
        }
        if self.running == 0 && self.waiting.is_some() {
            // Dispatch had no room only because the last block just finished.
            return Ok(Wake::At(next_cycle));
        }
        Err(TimingError::Deadlock(format!(
            "no warp can issue and no request is outstanding; {}",
            self.describe()
        )))
    }

    fn complete(&mut self, token: Token, at: Tick) {
        let idx = token as u32;
        let f = &mut self.inflight[idx as usize];
        f.parts = f.parts.saturating_sub(1);
        if f.parts == 0 {
            self.arrived(idx, at);
        }
    }

    fn stats(&self) -> GpuStats {
        let mut st = self.stats;
        for c in self.core_stalls() {
            st.stalls.add(&c);
        }
        st
    }

    fn core_instructions(&self) -> Vec<u64> {
        self.sms.iter().map(|sm| sm.issued).collect()
    }

    fn ready_warps(&self) -> Vec<u32> {
        self.sms.iter().map(|sm| sm.ready.count_ones()).collect()
    }

    fn core_stalls(&self) -> Vec<StallCycles> {
        // Slots since each core's last evaluation go to what it was doing then.
        let slot = self.stats.cycles / self.issue_cycles;
        self.sms
            .iter()
            .map(|sm| {
                let mut c = sm.stalls;
                if slot > sm.next_slot {
                    charge(&mut c, sm.cat, (slot - sm.next_slot) * self.issue_cycles);
                }
                c
            })
            .collect()
    }

    fn domain(&self) -> Domain {
        self.domain
    }

    fn units(&self) -> u16 {
        self.sms.len() as u16
    }

    fn restart(&mut self, program: GpuProgram) -> Result<(), TimingError> {
        let GpuProgram::Kernels(program) = program else {
            return Err(TimingError::Config(
                "the `simt` GPU model was restarted with a render program".into(),
            ));
        };
        self.source = program;
        self.first_pass = false;
        self.launch = None;
        self.waiting = None;
        self.ended = false;
        self.room = true;
        Ok(())
    }

    fn set_frozen(&mut self, frozen: bool) {
        self.frozen = frozen;
        self.room = true;
    }

    fn drained(&self) -> bool {
        self.due.is_empty() && self.inflight.len() == self.free_inflight.len()
    }

    fn warm(&mut self, n: u64, over: u64, port: &mut dyn WarmPort) -> Result<u64, TimingError> {
        let c = self.stats.cycles;
        // The cycle something that happens after `taken` of the `n` instructions happens at.
        let at = |taken: u64| {
            c + (u128::from(over) * u128::from(taken.min(n)) / u128::from(n.max(1))) as u64
        };
        let blocks = self.stats.blocks;
        // The transactions waiting in the load/store units go first (nothing is in flight).
        for s in 0..self.sms.len() {
            let crit = self.crit.as_deref();
            let sm = &mut self.sms[s];
            for t in sm.lsu.drain(..) {
                let mut acc = t.access(s as u16);
                acc.flags = crit_flags(crit, s, t.pc, acc.flags);
                port.warm(&acc)?;
                let wc = &mut sm.warps[t.warp as usize];
                if t.returns_data() {
                    wc.pending -= 1;
                } else {
                    wc.stores -= 1;
                }
            }
            for w in 0..self.warps_per_sm {
                if self.sms[s].warps[w].live {
                    self.settle(s, w, c);
                }
            }
        }
        let mut taken = 0;
        while taken < n {
            // Resident blocks as the dispatcher keeps them, then a round of every warp.
            self.dispatch(at(taken), true)?;
            if self.running == 0 {
                break;
            }
            let mut round = 0;
            for s in 0..self.sms.len() {
                for w in 0..self.warps_per_sm {
                    let wc = &self.sms[s].warps[w];
                    if wc.live && !wc.at_barrier {
                        round += self.warm_warp(s, w, WARM_CHUNK, at(taken + round), port)?;
                    }
                }
            }
            if round == 0 {
                return Err(TimingError::Deadlock(format!(
                    "functional warming found no warp that can go on; {}",
                    self.describe()
                )));
            }
            taken += round;
        }
        self.stats.warmed_instructions += taken;
        self.stats.warmed_blocks += self.stats.blocks - blocks;
        Ok(taken)
    }

    fn kernels(&self) -> &[KernelSpan] {
        &self.kernels
    }

    fn pc_stalls(&self) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = self.pc_stalls.iter().map(|(&p, &c)| (p, c)).collect();
        v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }

    fn llc_feedback(&mut self, accesses: u64, misses: u64) -> Option<&CriticalityStats> {
        let k = self.crit.as_deref_mut()?;
        k.feedback(accesses, misses);
        Some(k.stats())
    }
}

#[cfg(test)]
mod tests;
