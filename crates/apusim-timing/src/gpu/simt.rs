//! SIMT shader cores executing per-warp programs (the `simt` GPU model).
//!
//! One file, one model: dispatch, issue, the memory pipeline and the scoreboard of the SIMT
//! cores advance in one cycle step over the same warp state; a third of it is tests.
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
use crate::{Domain, Issue, MemPort, Tick, TimingError, Token, Wake, WarmPort};
use apusim_registry::Params;
use apusim_trace::{
    Access, Agent, BlockItem, BlockSource, LaunchInfo, Op, Stream, ThreadBlock, WarpOp,
};
use rustc_hash::FxHashMap;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

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

/// Functional warming of one memory instruction (`pc`, `op`, `flags`, its transactions
/// `txns`) of global warp `gwarp` on shader core `unit`: every transaction goes to `port`.
fn warm_mem(
    (pc, op, flags): (u64, Op, u8),
    txns: &[(u64, u16)],
    unit: u16,
    gwarp: u32,
    port: &mut dyn WarmPort,
) -> Result<(), TimingError> {
    for &(addr, size) in txns {
        let t = Txn {
            addr,
            size,
            op,
            flags,
            pc,
            warp: 0,
            gwarp,
        };
        port.warm(&t.access(unit))?;
    }
    Ok(())
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
    /// ([`Issue::Pending`]).
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
    /// Whether a block of `l` fits on core `s` now; an error if it never can.
    fn fits(&self, s: usize, l: &LaunchInfo) -> Result<bool, TimingError> {
        let wpb = l.warps_per_block() as usize;
        let regs = l.registers.saturating_mul(l.threads);
        if wpb > self.warps_per_sm
            || l.shared_bytes > self.shared_per_sm
            || (self.regs_per_sm > 0 && regs > self.regs_per_sm)
        {
            return Err(TimingError::Config(format!(
                "{}: launch {} needs {wpb} warps, {} scratchpad bytes and {regs} registers per \
                 block; a shader core has {} warps, {} bytes and {} registers \
                 (timing.gpu warps_per_sm, shared_bytes_per_sm, registers_per_sm)",
                self.name(),
                l.index,
                l.shared_bytes,
                self.warps_per_sm,
                self.shared_per_sm,
                self.regs_per_sm
            )));
        }
        let sm = &self.sms[s];
        Ok(sm.free_warps.len() >= wpb
            && sm.blocks.iter().any(Option::is_none)
            && sm.shared_used + l.shared_bytes <= self.shared_per_sm
            && (self.regs_per_sm == 0 || sm.regs_used + regs <= self.regs_per_sm))
    }

    fn name(&self) -> String {
        self.source
            .header()
            .agents
            .first()
            .map(|a| a.name.clone())
            .unwrap_or_else(|| "gpu program".into())
    }

    /// Place blocks of the current launch while they fit, at most one per core unless
    /// `any_number` (functional warming).
    fn dispatch(&mut self, c: u64, any_number: bool) -> Result<(), TimingError> {
        let n = self.sms.len();
        let mut placed = vec![false; n];
        loop {
            if self.waiting.is_none() && !self.ended {
                self.waiting = self.source.next_item()?;
                self.ended = self.waiting.is_none();
            }
            match self.waiting.take() {
                None => return Ok(()),
                Some(BlockItem::Launch(l)) => {
                    // The source names a launch only after the last block of the one before,
                    // so no block resident means that launch has finished.
                    if self.running > 0 {
                        self.waiting = Some(BlockItem::Launch(l));
                        return Ok(());
                    }
                    self.launch = Some(l);
                    self.finished_blocks = 0;
                    if self.first_pass {
                        self.kernels.push(KernelSpan {
                            launch: l.index,
                            blocks: l.blocks,
                            threads: l.threads,
                            start: c,
                            end: c,
                        });
                    }
                }
                Some(BlockItem::Block(b)) => {
                    let Some(l) = self.launch else {
                        return Err(TimingError::Config(format!(
                            "{}: a thread block came before any launch",
                            self.name()
                        )));
                    };
                    let mut target = None;
                    for k in 0..n {
                        let s = (self.rr + k) % n;
                        if (any_number || !placed[s]) && self.fits(s, &l)? {
                            target = Some(s);
                            break;
                        }
                    }
                    let Some(s) = target else {
                        self.waiting = Some(BlockItem::Block(b));
                        return Ok(());
                    };
                    placed[s] = true;
                    // More may fit next cycle.
                    self.room = true;
                    self.rr = (s + 1) % n;
                    self.place(s, b, &l, c);
                }
            }
        }
    }

    fn place(&mut self, s: usize, block: ThreadBlock, l: &LaunchInfo, c: u64) {
        let regs = l.registers.saturating_mul(l.threads);
        let sm = &mut self.sms[s];
        let slot = sm.blocks.iter().position(Option::is_none).expect("fits");
        let mut warps = Vec::with_capacity(block.warps());
        let mut live = 0;
        for w in 0..block.warps() {
            let r = block.warp_range(w);
            let ws = sm.free_warps.pop().expect("fits");
            self.ages += 1;
            sm.warps[ws as usize] = WarpCtx {
                live: !r.is_empty(),
                block: slot as u8,
                next: r.start as u32,
                end: r.end as u32,
                rem: 0,
                pending: 0,
                stores: 0,
                at_barrier: false,
                age: self.ages,
                gwarp: block.warp_base.wrapping_add(w as u32),
                waiting_since: None,
            };
            if r.is_empty() {
                sm.free_warps.push(ws);
            } else {
                live += 1;
                warps.push(ws);
            }
        }
        sm.resident += live;
        sm.shared_used += l.shared_bytes;
        sm.regs_used += regs;
        sm.blocks[slot] = Some(BlockCtx {
            block,
            warps: warps.clone(),
            live,
            arrived: 0,
            shared: l.shared_bytes,
            regs,
        });
        self.running += 1;
        if live == 0 {
            self.finish_block(s, slot, c);
        }
        for w in warps {
            self.refresh(s, w as usize, c);
        }
    }

    /// Recompute whether warp `w` of core `s` may issue, noting when it starts waiting for
    /// its loads' data.
    fn refresh(&mut self, s: usize, w: usize, c: u64) {
        let sm = &mut self.sms[s];
        let wc = &mut sm.warps[w];
        let bit = 1u128 << w;
        if !wc.live || wc.at_barrier || wc.next >= wc.end {
            sm.ready &= !bit;
            return;
        }
        let b = sm.blocks[wc.block as usize].as_ref().expect("live warp");
        let op = b.block.ops[wc.next as usize];
        let is_load =
            matches!(op, WarpOp::Mem { op: Op::Read, flags, .. } if flags & Access::MODIFY == 0);
        if wc.pending == 0 || is_load {
            sm.ready |= bit;
        } else {
            sm.ready &= !bit;
            wc.waiting_since.get_or_insert(c);
        }
    }

    /// Issue warp `w`'s next instruction on core `s`; false if its memory instruction found
    /// the load/store unit full.
    fn issue(&mut self, s: usize, w: usize, c: u64) -> bool {
        let lsu_entries = self.lsu_entries;
        let sm = &mut self.sms[s];
        let wc = sm.warps[w];
        let slot = wc.block as usize;
        let b = sm.blocks[slot].as_mut().expect("live warp");
        let op = b.block.ops[wc.next as usize];
        let wc = &mut sm.warps[w];
        match op {
            WarpOp::Compute(n) | WarpOp::Shared(n) => {
                wc.take_run(n, 1);
            }
            WarpOp::Mem {
                pc,
                op,
                flags,
                first,
                count,
            } => {
                if sm.lsu.len() >= lsu_entries {
                    return false;
                }
                let txns = &b.block.txns[first as usize..(first + count) as usize];
                for &(addr, size) in txns {
                    let t = Txn {
                        addr,
                        size,
                        op,
                        flags,
                        pc,
                        warp: w as u8,
                        gwarp: wc.gwarp,
                    };
                    if t.returns_data() {
                        wc.pending += 1;
                    } else {
                        wc.stores += 1;
                    }
                    sm.lsu.push_back(t);
                }
                self.stats.memory_instructions += 1;
                self.stats.transactions += u64::from(count);
                if op == Op::Read {
                    self.stats.load_transactions += u64::from(count);
                } else {
                    self.stats.store_transactions += u64::from(count);
                }
                wc.next += 1;
            }
            WarpOp::Barrier => {
                wc.at_barrier = true;
                wc.next += 1;
                b.arrived += 1;
                if b.arrived == b.live {
                    self.stats.warp_instructions += 1;
                    self.sms[s].issued += 1;
                    self.release_barrier(s, slot, c);
                    return true;
                }
            }
        }
        self.stats.warp_instructions += 1;
        self.sms[s].issued += 1;
        self.settle(s, w, c);
        true
    }

    /// After warp `w`'s state changed: retire it if it is done, else refresh its readiness.
    fn settle(&mut self, s: usize, w: usize, c: u64) {
        let wc = self.sms[s].warps[w];
        if wc.live && wc.next >= wc.end && wc.pending == 0 && wc.stores == 0 && !wc.at_barrier {
            let sm = &mut self.sms[s];
            sm.warps[w].live = false;
            sm.ready &= !(1u128 << w);
            sm.free_warps.push(w as u8);
            sm.resident -= 1;
            let slot = wc.block as usize;
            let b = sm.blocks[slot].as_mut().expect("live warp");
            b.warps.retain(|&x| x as usize != w);
            b.live -= 1;
            if b.live == 0 {
                self.finish_block(s, slot, c);
            } else if b.arrived == b.live && b.arrived > 0 {
                // The warps still live all wait at the barrier.
                self.release_barrier(s, slot, c);
            }
        } else {
            self.refresh(s, w, c);
        }
    }

    /// Functional warming of warp `w` on core `s`: up to `budget` instructions, stopping at
    /// a barrier; its transactions go to `port`. Returns the instructions taken.
    fn warm_warp(
        &mut self,
        s: usize,
        w: usize,
        budget: u64,
        c: u64,
        port: &mut dyn WarmPort,
    ) -> Result<u64, TimingError> {
        let mut taken = 0;
        let crit = self.crit.as_deref();
        let sm = &mut self.sms[s];
        let slot = sm.warps[w].block as usize;
        let b = sm.blocks[slot].as_mut().expect("live warp");
        let wc = &mut sm.warps[w];
        while taken < budget && wc.next < wc.end && !wc.at_barrier {
            match b.block.ops[wc.next as usize] {
                WarpOp::Compute(k) | WarpOp::Shared(k) => {
                    let up_to = u32::try_from(budget - taken).unwrap_or(u32::MAX);
                    taken += u64::from(wc.take_run(k, up_to));
                }
                WarpOp::Mem {
                    pc,
                    op,
                    flags,
                    first,
                    count,
                } => {
                    let txns = &b.block.txns[first as usize..(first + count) as usize];
                    let flags = crit_flags(crit, s, pc, flags);
                    warm_mem((pc, op, flags), txns, s as u16, wc.gwarp, port)?;
                    taken += 1;
                    wc.next += 1;
                }
                WarpOp::Barrier => {
                    wc.at_barrier = true;
                    wc.next += 1;
                    taken += 1;
                    b.arrived += 1;
                }
            }
        }
        let release = b.arrived == b.live && b.arrived > 0;
        if release {
            self.release_barrier(s, slot, c);
        } else {
            self.settle(s, w, c);
        }
        Ok(taken)
    }

    /// Every live warp of block `slot` on core `s` has arrived at its barrier: all go on.
    fn release_barrier(&mut self, s: usize, slot: usize, c: u64) {
        let sm = &mut self.sms[s];
        let b = sm.blocks[slot].as_mut().expect("resident block");
        b.arrived = 0;
        let ws = b.warps.clone();
        for &x in &ws {
            sm.warps[x as usize].at_barrier = false;
        }
        for x in ws {
            self.settle(s, x as usize, c);
        }
    }

    fn finish_block(&mut self, s: usize, slot: usize, c: u64) {
        let sm = &mut self.sms[s];
        let b = sm.blocks[slot].take().expect("resident block");
        sm.shared_used -= b.shared;
        sm.regs_used -= b.regs;
        self.running -= 1;
        self.finished_blocks += 1;
        self.stats.blocks += 1;
        self.room = true;
        if let Some(l) = self.launch {
            if self.finished_blocks == l.blocks {
                self.stats.launches += 1;
                if self.first_pass {
                    if let Some(k) = self.kernels.last_mut() {
                        k.end = c;
                    }
                }
            }
        }
        self.source.recycle(b.block);
    }

    /// An in-flight transaction has all its data (at cycle `c`).
    fn arrived(&mut self, idx: u32, at: Tick) {
        let f = self.inflight[idx as usize];
        self.free_inflight.push(idx);
        let c = self.domain.cycle(self.domain.edge_at_or_after(at));
        let (s, w) = (f.sm as usize, f.warp as usize);
        // A refusal without a retry time waits for a completion, and any core's completion may
        // free what refused it: a table the memory side shares among cores (the GPU streams
        // without a cache of their own) can be full of other cores' requests while this core
        // has nothing in flight.
        for sm in &mut self.sms {
            sm.lsu_wait = false;
        }
        let sm = &mut self.sms[s];
        let wc = &mut sm.warps[w];
        if f.load {
            wc.pending -= 1;
            self.stats.loads_done += 1;
            self.stats.load_ticks += at.saturating_sub(f.sent);
            if wc.pending == 0 {
                if let Some(since) = wc.waiting_since.take() {
                    let stalled = c.saturating_sub(since);
                    *self.pc_stalls.entry(f.pc).or_default() += stalled;
                    // The load whose data released the warp is the producer its first use
                    // waited for; it enters the stall table only if it missed the core's
                    // private cache (gpu-access-criticality §3).
                    if let Some(k) = self.crit.as_deref_mut().filter(|_| f.missed && stalled > 0) {
                        k.stall(s, f.pc, stalled);
                    }
                }
            }
        } else {
            wc.stores -= 1;
        }
        self.settle(s, w, c);
    }

    /// Send up to `lsu_width` transactions of core `s` to its L1.
    fn send(&mut self, s: usize, now: Tick, c: u64, port: &mut dyn MemPort) {
        for _ in 0..self.lsu_width {
            let sm = &mut self.sms[s];
            let Some(&t) = sm.lsu.front() else {
                break;
            };
            if sm.lsu_wait || now < sm.lsu_retry {
                break;
            }
            let mut acc = t.access(s as u16);
            let mark = self.crit.as_deref().map(|k| k.mark(s, t.pc));
            if let Some(m) = mark {
                acc.flags = marked(acc.flags, m);
            }
            let idx = self.free_inflight.pop().unwrap_or_else(|| {
                self.inflight.push(InFlight::default());
                (self.inflight.len() - 1) as u32
            });
            self.inflight[idx as usize] = InFlight {
                sm: s as u16,
                warp: t.warp,
                load: t.returns_data(),
                pc: t.pc,
                sent: now,
                parts: 1,
                missed: false,
            };
            let sm = &mut self.sms[s];
            match port.issue(now, &acc, Token::from(idx)) {
                Issue::Busy(retry) => {
                    self.free_inflight.push(idx);
                    match retry {
                        Some(r) => sm.lsu_retry = r.max(now + 1),
                        None => sm.lsu_wait = true,
                    }
                    sm.lsu_blocked_since.get_or_insert(c);
                    break;
                }
                Issue::Done(at) => {
                    sm.lsu.pop_front();
                    self.due.push(Reverse((at, idx)));
                }
                Issue::Pending(parts) => {
                    sm.lsu.pop_front();
                    self.inflight[idx as usize].missed = true;
                    // The request the private cache sends on towards the LLC is the one the
                    // mark is for.
                    if let (Some(k), Some(m)) = (self.crit.as_deref_mut(), mark) {
                        k.count(m);
                    }
                    if parts == 0 {
                        self.due.push(Reverse((now, idx)));
                    } else {
                        self.inflight[idx as usize].parts = parts;
                    }
                }
            }
            let sm = &mut self.sms[s];
            if let Some(since) = sm.lsu_blocked_since.take() {
                self.stats.lsu_busy_cycles += c - since;
            }
        }
    }

    /// One issue slot of core `s`: pick up to `issue_width` ready warps and issue.
    fn issue_slot(&mut self, s: usize, c: u64) {
        let slot = c / self.issue_cycles;
        let ic = self.issue_cycles;
        {
            let sm = &mut self.sms[s];
            if slot > sm.next_slot {
                let n = (slot - sm.next_slot) * ic;
                charge(&mut sm.stalls, sm.cat, n);
                if let Some(k) = self.crit.as_deref_mut() {
                    k.account(s, sm.cat == Cat::Memory, true, n);
                }
            }
            sm.next_slot = slot + 1;
        }
        let mut issued = 0;
        let mut lsu_full = false;
        let mut tried: u128 = 0;
        while issued < self.issue_width {
            let cand = self.sms[s].ready & !tried;
            let Some(w) = self.pick(s, cand) else {
                break;
            };
            tried |= 1u128 << w;
            if self.issue(s, w, c) {
                issued += 1;
                self.sms[s].last = w;
            } else {
                lsu_full = true;
            }
        }
        let cat = self.classify(s, lsu_full);
        let sm = &mut self.sms[s];
        if issued > 0 {
            sm.stalls.issued += ic;
        } else {
            charge(&mut sm.stalls, cat, ic);
        }
        if let Some(k) = self.crit.as_deref_mut() {
            // InputStall: nothing dispatched for pending operands (the scoreboard);
            // OutputStall: no instruction committed, where an instruction commits when it
            // issues (gpu-access-criticality §4.1.2).
            k.account(s, issued == 0 && cat == Cat::Memory, issued == 0, ic);
        }
        sm.cat = cat;
    }

    /// gpu-access-criticality §4.1.2's periodic evaluation, if one is due at cycle `c`: the
    /// issue slots each core slept through are accounted first, to what it was doing when
    /// it fell asleep (as [`Simt::issue_slot`] would charge them).
    fn evaluate_criticality(&mut self, c: u64) {
        let ic = self.issue_cycles;
        let Some(k) = self.crit.as_deref_mut().filter(|k| k.due(c)) else {
            return;
        };
        let slot = c / ic;
        for (s, sm) in self.sms.iter_mut().enumerate() {
            if slot > sm.next_slot {
                let n = (slot - sm.next_slot) * ic;
                charge(&mut sm.stalls, sm.cat, n);
                k.account(s, sm.cat == Cat::Memory, true, n);
                sm.next_slot = slot;
            }
        }
        k.evaluate(c);
    }

    /// The next warp the scheduler takes among `cand` on core `s`.
    fn pick(&self, s: usize, cand: u128) -> Option<usize> {
        if cand == 0 {
            return None;
        }
        let sm = &self.sms[s];
        if self.gto {
            if cand & (1u128 << sm.last) != 0 {
                return Some(sm.last);
            }
            let mut m = cand;
            let mut best: Option<(u64, usize)> = None;
            while m != 0 {
                let w = m.trailing_zeros() as usize;
                m &= m - 1;
                let age = sm.warps[w].age;
                if best.is_none_or(|(a, _)| age < a) {
                    best = Some((age, w));
                }
            }
            return best.map(|b| b.1);
        }
        // Loose round robin: the first ready warp after the last one that issued.
        let start = (sm.last + 1) % self.warps_per_sm;
        let hi = cand & (!0u128 << start);
        let m = if hi != 0 { hi } else { cand };
        Some(m.trailing_zeros() as usize)
    }

    /// What core `s`'s cycles go to while it issues nothing.
    fn classify(&self, s: usize, lsu_full: bool) -> Cat {
        let sm = &self.sms[s];
        if sm.resident == 0 {
            return Cat::Idle;
        }
        if lsu_full || sm.ready != 0 {
            return Cat::Issue;
        }
        let live = || sm.warps.iter().filter(|w| w.live);
        // Data a warp waits for comes first: warps at a barrier wait for those warps.
        if live().any(|w| w.pending > 0) {
            Cat::Memory
        } else if live().any(|w| w.at_barrier) {
            Cat::Barrier
        } else {
            // Finished warps waiting for their stores' acknowledgements.
            Cat::Memory
        }
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
mod tests {
    use super::*;
    use apusim_trace::TraceHeader;

    /// A program held in memory.
    struct Items(VecDeque<BlockItem>, TraceHeader);
    impl BlockSource for Items {
        fn header(&self) -> &TraceHeader {
            &self.1
        }
        fn next_item(&mut self) -> apusim_trace::Result<Option<BlockItem>> {
            Ok(self.0.pop_front())
        }
    }

    /// One launch of `blocks` blocks whose warps each run `warp(block, warp)`; memory
    /// instructions get one 128-byte transaction per entry of their `count` at distinct
    /// lines.
    /// One launch: blocks, threads per block, each warp's instructions by (block, warp).
    type LaunchSpec = (u32, u32, fn(u32, u32) -> Vec<WarpOp>);

    fn program(launches: &[LaunchSpec]) -> Box<dyn BlockSource> {
        let mut items = VecDeque::new();
        let mut line = 0u64;
        for (li, &(blocks, threads, warp)) in launches.iter().enumerate() {
            let info = LaunchInfo {
                index: li as u32,
                blocks,
                threads,
                shared_bytes: 0,
                registers: 0,
            };
            items.push_back(BlockItem::Launch(info));
            for b in 0..blocks {
                let mut tb = ThreadBlock {
                    launch: li as u32,
                    index: b,
                    warp_base: b * info.warps_per_block(),
                    ..Default::default()
                };
                for w in 0..info.warps_per_block() {
                    for mut op in warp(b, w) {
                        if let WarpOp::Mem { first, count, .. } = &mut op {
                            *first = tb.txns.len() as u32;
                            for _ in 0..*count {
                                tb.txns.push((line << 7, 128));
                                line += 1;
                            }
                        }
                        tb.ops.push(op);
                    }
                    tb.ends.push(tb.ops.len() as u32);
                }
                items.push_back(BlockItem::Block(tb));
            }
        }
        let h = TraceHeader::single(Agent::GPU, "test", 1000, &[Stream::ShaderData], "test");
        Box::new(Items(items, h))
    }

    fn load(pc: u64, count: u32) -> WarpOp {
        WarpOp::Mem {
            pc,
            op: Op::Read,
            flags: 0,
            first: 0,
            count,
        }
    }
    fn store(pc: u64) -> WarpOp {
        WarpOp::Mem {
            pc,
            op: Op::Write,
            flags: 0,
            first: 0,
            count: 1,
        }
    }

    /// Memory answering every access after `latency` cycles (as pending, completed by the
    /// driver), refusing the first `refuse` accesses; accesses of the PCs in `hit_pcs` hit
    /// the first level (answered at once, `hit_latency` cycles later). `flags` records each
    /// access's PC and flags.
    struct Mem {
        latency: Tick,
        due: Vec<(Tick, Token)>,
        sent: Vec<(Tick, u64, u16)>,
        refuse: u32,
        hit_pcs: Vec<u64>,
        hit_latency: Tick,
        flags: Vec<(u64, u8)>,
    }
    impl MemPort for Mem {
        fn issue(&mut self, now: Tick, acc: &Access, token: Token) -> Issue {
            if self.refuse > 0 {
                self.refuse -= 1;
                return Issue::Busy(None);
            }
            assert_eq!((acc.agent, acc.stream), (Agent::GPU, Stream::ShaderData));
            self.sent.push((now, acc.addr, acc.unit));
            self.flags.push((acc.pc, acc.flags));
            if self.hit_pcs.contains(&acc.pc) {
                return Issue::Done(now + self.hit_latency);
            }
            self.due.push((now + self.latency, token));
            Issue::Pending(1)
        }
    }

    fn params(set: &[(&str, i64)], scheduler: &str) -> Params {
        let mut t = toml::Table::new();
        for (k, v) in set {
            t.insert((*k).into(), toml::Value::Integer(*v));
        }
        t.insert("scheduler".into(), toml::Value::String(scheduler.into()));
        super::super::REGISTRY[0].params(&t).unwrap()
    }

    /// One shader core issuing one instruction a cycle (loose round robin), with `more`.
    fn one_core_one_issue(more: &[(&str, i64)]) -> Params {
        let mut set = vec![("sms", 1), ("issue_cycles", 1), ("issue_width", 1)];
        set.extend_from_slice(more);
        params(&set, "lrr")
    }

    /// Run `prog` to its end on the model `p` over memory `mem` (1 tick = 1 GPU cycle);
    /// returns the finished model.
    fn run(p: &Params, prog: Box<dyn BlockSource>, mem: &mut Mem) -> Box<dyn GpuModel> {
        let mut g = build(p, Domain::new(1), GpuProgram::Kernels(prog)).unwrap();
        let mut wake = Some(0);
        assert!(
            drive(&mut *g, mem, &mut wake, None),
            "the model did not finish"
        );
        g
    }

    /// Drive `g` from `wake` until it finishes (true) or, with `until`, until nothing of its
    /// is due before that tick and nothing is in flight (false).
    fn drive(
        g: &mut dyn GpuModel,
        mem: &mut Mem,
        wake: &mut Option<Tick>,
        until: Option<Tick>,
    ) -> bool {
        for _ in 0..10_000_000 {
            let te = mem.due.iter().map(|d| d.0).min();
            let now = match (*wake, te) {
                (Some(a), Some(b)) => a.min(b),
                (None, None) if until.is_some() => return false,
                (a, b) => a.or(b).expect("the model neither waits nor finished"),
            };
            if until.is_some_and(|u| now >= u) && te.is_none() {
                return false;
            }
            mem.due.sort_unstable();
            while mem.due.first().is_some_and(|d| d.0 <= now) {
                let (t, tok) = mem.due.remove(0);
                g.complete(tok, t);
                *wake = Some(wake.map_or(t, |w| w.min(t)));
            }
            if *wake == Some(now) {
                match g.cycle(now, mem).unwrap() {
                    Wake::At(t) => *wake = Some(t),
                    Wake::OnCompletion => *wake = None,
                    Wake::Finished => return true,
                }
            }
        }
        panic!("the model did not finish");
    }

    fn mem(latency: Tick) -> Mem {
        Mem {
            latency,
            due: Vec::new(),
            sent: Vec::new(),
            refuse: 0,
            hit_pcs: Vec::new(),
            hit_latency: 5,
            flags: Vec::new(),
        }
    }

    #[test]
    fn compute_issues_two_warps_every_fourth_cycle() {
        // One core, four warps of 100 compute instructions and the closing barrier: 404 warp
        // instructions at two per four cycles.
        let p = params(&[("sms", 1)], "lrr");
        let prog = program(&[(1, 128, |_, _| vec![WarpOp::Compute(100), WarpOp::Barrier])]);
        let g = run(&p, prog, &mut mem(10));
        let st = g.stats();
        assert_eq!(st.warp_instructions, 404);
        assert_eq!((st.blocks, st.launches, st.programs), (1, 1, 1));
        assert_eq!(st.stalls.issued, 808, "{st:?}");
        // The last of 202 slots is cycle 804.
        assert_eq!(st.cycles, 804);
        assert_eq!(g.kernels().len(), 1);
        assert!(g.kernels()[0].end >= 800);
    }

    #[test]
    fn a_warp_waits_for_its_loads_at_the_first_use_only() {
        // Two loads back to back, then a compute that uses them.
        let p = one_core_one_issue(&[]);
        let prog = program(&[(1, 32, |_, _| {
            vec![
                load(0x10, 1),
                load(0x20, 1),
                WarpOp::Compute(1),
                WarpOp::Barrier,
            ]
        })]);
        let mut m = mem(500);
        let g = run(&p, prog, &mut m);
        // Both loads left before either returned (back to back), the compute waited ~500.
        assert_eq!(m.sent.len(), 2);
        assert!(m.sent[1].0 - m.sent[0].0 <= 2, "{:?}", m.sent);
        let st = g.stats();
        assert!((500..520).contains(&st.cycles), "{}", st.cycles);
        assert!(st.stalls.memory >= 490, "{:?}", st.stalls);
        // The stall is charged to the load whose data came last.
        let pcs = g.pc_stalls();
        assert_eq!(pcs[0].0, 0x20);
        assert!(pcs[0].1 >= 490);
        assert_eq!(st.loads_done, 2);
        assert_eq!(st.load_ticks, 1000);
    }

    #[test]
    fn more_warps_hide_more_latency_as_littles_law_says() {
        // Each warp: 20 × (load, compute). With latency L and one issue per cycle, a warp
        // does one iteration per ~L cycles, so W warps sustain ~W/L loads per cycle until
        // issue bandwidth (one instruction per cycle: 1/2 load per cycle) bounds them.
        let rate = |warps: i64| {
            let p = one_core_one_issue(&[("warps_per_sm", warps)]);
            let threads = 32 * warps as u32;
            let prog = match warps {
                2 => program(&[(1, 64, body)]),
                8 => program(&[(1, 256, body)]),
                32 => program(&[(1, 1024, body)]),
                _ => unreachable!(),
            };
            assert_eq!(threads / 32, warps as u32);
            let g = run(&p, prog, &mut mem(200));
            let st = g.stats();
            st.load_transactions as f64 / st.cycles as f64
        };
        fn body(_: u32, _: u32) -> Vec<WarpOp> {
            let mut v = Vec::new();
            for i in 0..20 {
                v.push(load(0x100 + i, 1));
                v.push(WarpOp::Compute(1));
            }
            v.push(WarpOp::Barrier);
            v
        }
        let (r2, r8, r32) = (rate(2), rate(8), rate(32));
        // Little's law: outstanding loads = rate × latency.
        assert!((r2 * 200.0 - 2.0).abs() < 0.2, "{r2}");
        assert!((r8 * 200.0 - 8.0).abs() < 0.6, "{r8}");
        let ratio = r8 / r2;
        assert!((3.6..=4.1).contains(&ratio), "{ratio}");
        assert!(r32 > 3.5 * r8, "{r32} vs {r8}");
    }

    #[test]
    fn barriers_hold_warps_until_the_whole_block_arrives() {
        let p = one_core_one_issue(&[]);
        // Warp 0 computes 50, warp 1 computes 1; both then store after the barrier.
        let prog = program(&[(1, 64, |_, w| {
            vec![
                WarpOp::Compute(if w == 0 { 50 } else { 1 }),
                WarpOp::Barrier,
                store(0x40),
                WarpOp::Barrier,
            ]
        })]);
        let mut m = mem(10);
        let g = run(&p, prog, &mut m);
        // Neither store left before warp 0's 50 instructions.
        assert!(m.sent.iter().all(|s| s.0 >= 50), "{:?}", m.sent);
        let st = g.stats();
        assert_eq!(st.store_transactions, 2);
        assert_eq!(st.warp_instructions, 53 + 4);
    }

    #[test]
    fn warps_at_a_barrier_wait_for_a_warp_that_ends_without_reaching_it() {
        // Warp 0 stores and ends (waiting for the acknowledgement); warp 1 waits at a
        // barrier, which opens when warp 0 retires.
        let p = one_core_one_issue(&[]);
        let prog = program(&[(1, 64, |_, w| {
            if w == 0 {
                vec![store(0x40)]
            } else {
                vec![WarpOp::Barrier, WarpOp::Compute(1)]
            }
        })]);
        let g = run(&p, prog, &mut mem(100));
        let st = g.stats();
        assert!(st.stalls.barrier >= 95, "{:?}", st.stalls);
        assert!(st.cycles >= 100, "{}", st.cycles);
        assert_eq!(st.blocks, 1);
    }

    #[test]
    fn a_launch_starts_after_the_previous_one_ends_and_blocks_spread_over_cores() {
        let p = params(&[("sms", 4)], "lrr");
        let prog = program(&[
            (8, 32, |_, _| {
                vec![load(0x10, 1), WarpOp::Compute(4), WarpOp::Barrier]
            }),
            (4, 32, |_, _| vec![WarpOp::Compute(4), WarpOp::Barrier]),
        ]);
        let mut m = mem(300);
        let g = run(&p, prog, &mut m);
        let k = g.kernels();
        assert_eq!(k.len(), 2);
        assert!(k[0].end >= 300 && k[1].start >= k[0].end, "{k:?}");
        let units: std::collections::BTreeSet<u16> = m.sent.iter().map(|s| s.2).collect();
        assert_eq!(units.len(), 4);
        assert_eq!(g.stats().blocks, 12);
    }

    #[test]
    fn a_transaction_refused_with_nothing_in_flight_is_reported_not_waited_for() {
        let p = params(&[("sms", 1)], "lrr");
        let prog = program(&[(2, 32, |_, _| {
            vec![load(0x10, 2), WarpOp::Compute(1), WarpOp::Barrier]
        })]);
        let mut m = mem(40);
        m.refuse = 1;
        // The first transaction is refused until data arrives for the core, and nothing of
        // the core's is in flight: the model must report the stuck core, not sleep.
        let mut g = build(&p, Domain::new(1), GpuProgram::Kernels(prog)).unwrap();
        let w = g.cycle(0, &mut m).unwrap();
        assert!(matches!(w, Wake::At(_)), "{w:?}");
        let mut now = 0;
        let mut out = None;
        for _ in 0..100 {
            now += 1;
            match g.cycle(now, &mut m) {
                Ok(Wake::At(_)) => {}
                other => {
                    out = Some(other);
                    break;
                }
            }
        }
        // Refused with nothing in flight: a deadlock naming the core, not a hang.
        match out {
            Some(Err(TimingError::Deadlock(msg))) => {
                assert!(msg.contains("sm0") && msg.contains("load/store"), "{msg}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn runs_are_deterministic_and_schedulers_differ() {
        let prog = || {
            program(&[(12, 256, |b, w| {
                let mut v = vec![];
                for i in 0..(3 + (b + w) % 5) {
                    v.push(load(0x10 * u64::from(i), 1 + (w % 3)));
                    v.push(WarpOp::Compute(1 + w % 4));
                }
                v.push(WarpOp::Barrier);
                v
            })])
        };
        let one = |s: &str| {
            let p = params(&[("sms", 2)], s);
            let mut m = mem(120);
            let g = run(&p, prog(), &mut m);
            (g.stats(), m.sent)
        };
        assert_eq!(one("lrr"), one("lrr"));
        assert_eq!(one("gto"), one("gto"));
        assert_ne!(one("lrr").1, one("gto").1);
    }

    /// Counts what functional warming sends.
    struct Warmed(u64);
    impl WarmPort for Warmed {
        fn warm(&mut self, acc: &Access) -> Result<(), TimingError> {
            assert_eq!(acc.stream, Stream::ShaderData);
            self.0 += 1;
            Ok(())
        }
    }

    #[test]
    fn frozen_and_warmed_the_program_goes_on_where_it_stopped() {
        let p = params(&[("sms", 2)], "lrr");
        let prog = || {
            program(&[
                (6, 64, |_, w| {
                    vec![
                        load(0x10, 1 + w % 2),
                        WarpOp::Compute(20),
                        WarpOp::Barrier,
                        store(0x20),
                        WarpOp::Compute(5),
                        WarpOp::Barrier,
                    ]
                }),
                (3, 32, |_, _| vec![WarpOp::Compute(10), WarpOp::Barrier]),
            ])
        };
        let full = run(&p, prog(), &mut mem(50)).stats();
        // Run 60 cycles, freeze, let memory drain, warm, thaw, run to the end.
        let mut m = mem(50);
        let mut g = build(&p, Domain::new(1), GpuProgram::Kernels(prog())).unwrap();
        let mut wake = Some(0);
        assert!(!drive(&mut *g, &mut m, &mut wake, Some(60)));
        g.set_frozen(true);
        assert!(!drive(&mut *g, &mut m, &mut wake, Some(61)));
        assert!(g.drained() && m.due.is_empty());
        let mut log = Warmed(0);
        // Past every warp's first compute run, its barrier and its store.
        let taken = g.warm(300, 600, &mut log).unwrap();
        assert!(taken >= 300, "{taken}");
        g.set_frozen(false);
        wake = Some(700);
        assert!(drive(&mut *g, &mut m, &mut wake, None));
        let st = g.stats();
        assert_eq!(
            st.warp_instructions + st.warmed_instructions,
            full.warp_instructions
        );
        assert_eq!(st.warmed_instructions, taken);
        assert_eq!(m.sent.len() as u64 + log.0, full.transactions);
        assert!(log.0 > 0);
        assert_eq!((st.blocks, st.launches), (full.blocks, full.launches));
        assert!(st.warmed_blocks > 0);
    }

    /// One core issuing one instruction a cycle with the criticality hardware `on`, evaluated
    /// every `period` cycles.
    fn crit_params(on: bool, period: i64) -> Params {
        let mut t = toml::Table::new();
        for (k, v) in [("sms", 1), ("issue_cycles", 1), ("issue_width", 1)] {
            t.insert(k.into(), toml::Value::Integer(v));
        }
        t.insert("crit_period".into(), toml::Value::Integer(period));
        t.insert("criticality".into(), toml::Value::Boolean(on));
        super::super::REGISTRY[0].params(&t).unwrap()
    }

    /// Four warps of 30 × (load 0x10, load 0x20, compute), then a store at 0x30: memory
    /// bound, each first use waits for load 0x20's data, which comes last.
    fn two_loads() -> Box<dyn BlockSource> {
        program(&[(1, 128, |_, _| {
            let mut v = Vec::new();
            for _ in 0..30 {
                v.push(load(0x10, 1));
                v.push(load(0x20, 1));
                v.push(WarpOp::Compute(1));
            }
            v.push(store(0x30));
            v.push(WarpOp::Barrier);
            v
        })])
    }

    #[test]
    fn criticality_off_or_on_leaves_the_timing_as_it_is() {
        // Off (by default or said so) is the model without the hardware; on, the marks change
        // flags only: over a memory that ignores them every figure and send is the same.
        let run_with = |p: &Params| {
            let mut m = mem(300);
            let mut g = run(p, two_loads(), &mut m);
            let crit = g.llc_feedback(0, 0).cloned();
            (
                g.stats(),
                g.core_stalls(),
                g.pc_stalls(),
                m.sent,
                m.flags,
                crit,
            )
        };
        let plain = run_with(&one_core_one_issue(&[]));
        let off = run_with(&crit_params(false, 200));
        let on = run_with(&crit_params(true, 200));
        assert_eq!(plain, off);
        assert!(off.5.is_none());
        assert_eq!(
            (&plain.0, &plain.1, &plain.2, &plain.3),
            (&on.0, &on.1, &on.2, &on.3)
        );
        assert_ne!(plain.4, on.4, "the marks changed the flags");
        assert!(plain.4.iter().all(|f| f.1 == 0));
    }

    #[test]
    fn a_bottlenecked_core_marks_its_stalling_loads_critical_and_the_rest_bypass() {
        // `miss_rate`: the GPU's LLC accesses and misses fed before the run.
        let run_with = |hit_pcs: Vec<u64>, llc: (u64, u64)| {
            let p = crit_params(true, 200);
            let mut m = mem(300);
            m.hit_pcs = hit_pcs;
            // A hit answered after the misses (behind a busy first level, say): its data
            // is the last the first use waits for.
            m.hit_latency = 400;
            let mut g = build(&p, Domain::new(1), GpuProgram::Kernels(two_loads())).unwrap();
            g.llc_feedback(llc.0, llc.1);
            let mut wake = Some(0);
            assert!(drive(&mut *g, &mut m, &mut wake, None));
            let k = g.llc_feedback(llc.0, llc.1).unwrap().clone();
            (g.stats(), k, m.flags)
        };
        // Every transaction misses; the LLC's miss rate is 0 (nothing fed).
        let (st, k, flags) = run_with(vec![], (0, 0));
        assert!(k.evaluations >= 10, "{k:?}");
        // Warps wait for memory nearly all the time: the core is bottlenecked from the
        // first evaluation on.
        assert_eq!(k.bottlenecked_core_periods, k.evaluations, "{k:?}");
        // Load 0x20 released every stall: the only critical PC.
        assert_eq!(k.critical_pcs.len(), 1, "{k:?}");
        assert_eq!((k.critical_pcs[0].pc, k.critical_pcs[0].cores), (0x20, 1));
        assert!(k.critical_in_set > 0 && k.critical_untracked > 0, "{k:?}");
        // Before the first evaluation nothing is bottlenecked.
        assert!(k.non_critical_not_bottlenecked > 0, "{k:?}");
        // (A load that enters the table after an evaluation is in the table but not in the
        // critical set until the next one: `non_critical_in_table`.)
        assert_eq!(k.non_critical_miss_rate, 0, "{k:?}");
        assert_eq!(k.critical() + k.non_critical(), st.transactions);
        // Each transaction carries one of the two marks, as counted.
        let critical = flags.iter().filter(|f| f.1 == Access::CRITICAL).count() as u64;
        let bypass = flags.iter().filter(|f| f.1 == Access::BYPASS_LLC).count() as u64;
        assert_eq!((critical, bypass), (k.critical(), k.non_critical()));
        // 0x10 and the stores (not in the table) are critical by the miss rate, after the
        // first evaluation.
        assert!(flags.iter().any(|f| f.0 == 0x30 && f.1 == Access::CRITICAL));

        // The GPU's LLC misses 90% of its accesses: PCs not in the table are non-critical.
        let (_, k, flags) = run_with(vec![], (1000, 900));
        assert!(
            k.non_critical_miss_rate > 0 && k.critical_untracked == 0,
            "{k:?}"
        );
        assert!((k.llc_miss_rate - 0.9).abs() < 1e-12);
        assert!(flags
            .iter()
            .filter(|f| f.0 == 0x10)
            .all(|f| f.1 == Access::BYPASS_LLC));
        assert!(flags.iter().any(|f| f.0 == 0x20 && f.1 == Access::CRITICAL));

        // Load 0x20 hits the first level, and its data still comes last: the stalls it
        // causes do not enter the table (nor do its hits count as marked requests), so no PC
        // is critical by the table, and 0x10 is critical as an untracked PC.
        let (st, k, _) = run_with(vec![0x20], (0, 0));
        assert!(k.critical_pcs.is_empty(), "{k:?}");
        assert_eq!(k.critical_in_set + k.non_critical_in_table, 0, "{k:?}");
        assert!(k.critical_untracked > 0, "{k:?}");
        assert_eq!(
            k.critical() + k.non_critical(),
            st.transactions - st.load_transactions / 2
        );
    }

    #[test]
    fn a_core_that_issues_is_not_bottlenecked() {
        // Compute-bound warps: OutputStall falls, nothing is critical.
        let p = crit_params(true, 100);
        let prog = program(&[(1, 128, |_, _| {
            let mut v = vec![load(0x10, 1)];
            v.push(WarpOp::Compute(400));
            v.push(store(0x30));
            v.push(WarpOp::Barrier);
            v
        })]);
        let mut m = mem(20);
        let mut g = run(&p, prog, &mut m);
        let k = g.llc_feedback(0, 0).unwrap();
        assert!(k.evaluations >= 10);
        assert_eq!(k.bottlenecked_core_periods, 0, "{k:?}");
        assert_eq!(k.critical(), 0);
        assert!(m.flags.iter().all(|f| f.1 == Access::BYPASS_LLC));
    }
}
