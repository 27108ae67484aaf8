//! The timed memory side: private levels, network, LLC banks and DRAM on one clock.
//!
//! State lives in the functional [`Hierarchy`] (deferred mode), so hit/miss decisions are
//! the functional ones: a core's access updates its private levels when the core makes it;
//! a request that leaves them travels the network and updates the LLC when it arrives at
//! its bank; a request the LLC sends to memory enters the DRAM model when it arrives at the
//! controller. Timing is layered on top:
//!
//! - **Private levels**: an access that hits the level it enters costs that level's latency;
//!   a hit in the level below adds that level's latency; a miss of both leaves for the LLC
//!   after both lookups. Each first level has [`Mshrs`]: a later access to a line still on its
//!   way merges and waits for it, and an access that would miss with every MSHR busy is
//!   refused ([`Issue::Busy`]) until one frees; the L2's MSHRs bound the core's requests
//!   outstanding at the LLC.
//! - **Network**: requests and responses cross the [`Network`] between the core's stop, the
//!   LLC bank of the line (lines interleave over banks) and the memory controller.
//! - **LLC banks**: one lookup per uncore cycle per bank, answered after the LLC latency; a
//!   miss holds one of the bank's MSHRs until its line returns from DRAM, and a request to a
//!   line already on its way merges. A miss finding every MSHR busy waits in the bank.
//! - **DRAM**: `apusim-dram`'s [`MemorySystem`], each request carrying its agent, stream and
//!   critical flag to the scheduler; a read's completion returns over the network to the
//!   bank, which forwards the line to every waiting core.
//!
//! With `timing.pages = "random"`, a core's access is placed on its physical page
//! ([`PageMap`]) as it enters its first level, so every cache and DRAM see physical
//! addresses.
//!
//! Write-backs and write misses of the LLC are posted: they take bank and DRAM bandwidth but
//! nobody waits for them.
//!
//! This file holds the state and what an agent does to it (issue, warm, inject); `events.rs`
//! what happens when a message arrives; `counters.rs` the counters read out. The state's
//! fields and the three kinds of agent they serve (a core's and a timed GPU cache instance's
//! `issue`, an open-loop replay's `inject`) are read together, which is why it runs past 800
//! lines.

use super::backlog::Backlog;
use super::streams::{StreamCounts, StreamTable};

mod counters;
mod events;

use crate::config::SystemConfig;
use crate::hierarchy::{Hierarchy, ToLlc, LLC_DEPTH};
use anyhow::{Context, Result};
use apusim_cache::Policy;
use apusim_dram::{Completion, MemorySystem};
use apusim_timing::mshr::UNKNOWN;
use apusim_timing::pages::PageMap;
use apusim_timing::{Domain, EventQueue, Issue, MemPort, Mshrs, Network, Tick, Token, WarmPort};
use apusim_trace::{Access, Op, Stream};
pub use counters::{AgentLatency, DramCounts, DramQueues, DramTraffic, LlcTiming};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// A message in flight or a component's scheduled work.
enum Ev {
    /// A request leaves agent `agent`'s stop for the LLC bank of its line.
    ToLlc { req: Access, agent: u32 },
    /// A request arrives at its LLC bank.
    AtLlc { req: Access, agent: u32, sent: Tick },
    /// A request from the LLC arrives at its memory controller.
    AtMemory { req: Access, fill: Option<u64> },
    /// DRAM has something to do at this tick (stale if another wake-up replaced it).
    DramWake,
    /// DRAM finished the read of LLC line `line` at this tick (at the controller).
    FromMemory { line: u64 },
    /// The line's data reached the LLC bank.
    LlcFill { line: u64 },
    /// The data of `w.addr` reached agent `w.agent`'s stop.
    AtAgent { w: Waiter },
    /// An open-loop agent's write-back was taken by its LLC bank.
    OpenLoopAccepted,
    /// An L2 hit's hint (`llc.l2_hit_hints`) leaves agent `agent`'s stop for its line's bank.
    ToLlcHint { hint: Access, agent: u32 },
    /// The hint arrives at its bank: one tag lookup updates the line's replacement state.
    HintAtLlc { hint: Access },
}

/// A request waiting for data from the LLC.
#[derive(Clone, Copy, Debug)]
struct Waiter {
    agent: u32,
    addr: u64,
    /// An instruction fetch (its agent's L1I waits), else data (its L1D).
    instr: bool,
    /// The issuing unit (with `stream`, it names the GPU cache instance that waits, for a
    /// timed GPU's requests).
    unit: u16,
    stream: Stream,
    /// When it left its agent's private caches.
    sent: Tick,
}

/// A line on its way from memory to the LLC: since when, and who waits for it.
type LlcMiss = (Tick, Vec<Waiter>);

struct Bank {
    free: Tick,
    busy_mshrs: u32,
    /// Requests waiting for a free MSHR, oldest first: the request, its agent, when it was
    /// sent and when it began to wait.
    blocked: VecDeque<(Access, u32, Tick, Tick)>,
}

/// Per-agent private timing state.
struct Private {
    l1i: Mshrs,
    l1d: Mshrs,
    /// Line-size bits of the levels the agent's instruction fetches and data enter first
    /// (the keys of `l1i` and `l1d`).
    l1i_bits: u32,
    l1d_bits: u32,
    /// Demand requests of this agent outstanding at the LLC (bounded by the L2's MSHRs).
    at_llc: u32,
}

/// A core's functional warming into the memory side ([`TimedMemory::warm_port`]).
pub struct WarmSink<'a, P: Policy> {
    mem: &'a mut TimedMemory<P>,
    agent: u32,
}

impl<P: Policy> WarmPort for WarmSink<'_, P> {
    fn warm(&mut self, acc: &Access) -> Result<(), apusim_timing::TimingError> {
        if self.mem.error.is_none() {
            if let Err(e) = self.mem.warm(self.agent, acc) {
                self.mem.error = Some(e);
            }
        }
        Ok(())
    }
}

pub struct TimedMemory<P: Policy> {
    pub h: Hierarchy<P>,
    events: EventQueue<Ev>,
    pub net: Network,
    uncore: Domain,
    dram_domain: Domain,
    l1i_lat: Tick,
    l1d_lat: Tick,
    l2_lat: Tick,
    llc_lat: Tick,
    l2_mshrs: u32,
    llc_mshrs: u32,
    private: Vec<Private>,
    banks: Vec<Bank>,
    llc_inflight: FxHashMap<u64, LlcMiss>,
    llc_bits: u32,
    pub dram: MemorySystem,
    dram_waiting: Backlog,
    dram_tags: FxHashMap<u64, Option<u64>>,
    dram_ids: u64,
    dram_wake: Option<Tick>,
    dram_done: Vec<Completion>,
    n_agents: usize,
    banks_first_stop: usize,
    mcs_first_stop: usize,
    scratch: Vec<Access>,
    /// What the hierarchy sends the LLC, drained after each access (kept for its allocation).
    to_llc: Vec<ToLlc>,
    /// Data arrivals for the cores: (agent, token, tick).
    pub completions: Vec<(u32, Token, Tick)>,
    /// The first error a port call hit (reported by the engine after the cycle).
    pub error: Option<anyhow::Error>,
    pub latency: Vec<AgentLatency>,
    pub llc_timing: LlcTiming,
    pub dram_traffic: Vec<DramTraffic>,
    /// Per stream, indexed by the stream's byte.
    pub streams: StreamTable,
    /// Tick of the last data delivered anywhere (for the deadlock watchdog).
    pub last_progress: Tick,
    /// Requests of open-loop (GPU) inputs sent towards the LLC and not yet answered: reads
    /// until their data returns, write-backs until their LLC bank takes them.
    pub open_loop_outstanding: u32,
    /// Page placement of core accesses (`timing.pages = "random"`).
    pages: Option<PageMap>,
    /// Events other than DRAM wake-ups scheduled and not yet handled.
    in_transit: u64,
    /// A timed GPU's first levels, one per instance of every GPU cache a stream enters
    /// first, then one for the streams that go straight to the LLC
    /// ([`TimedMemory::attach_gpu`]); empty when the GPU slot is an open-loop replay.
    gpu_units: Vec<Private>,
    /// Per GPU cache (`cfg.gpu.caches` order): its first instance in `gpu_units` (entry
    /// caches only), and the lookup latencies down its chain of levels, summed: a hit at
    /// depth `d` is ready after `gpu_lat[i][d]`, a miss of all leaves after the last.
    gpu_first: Vec<Option<usize>>,
    gpu_lat: Vec<Vec<Tick>>,
}

impl<P: Policy> TimedMemory<P> {
    /// The memory side of `cfg` with `cpus` agents, the cores' clock `cpu`, uncore clock
    /// `uncore` and DRAM clock `dram_domain`.
    pub fn new(
        cfg: &SystemConfig,
        mut h: Hierarchy<P>,
        cpu: Domain,
        uncore: Domain,
        dram_domain: Domain,
        dram: MemorySystem,
    ) -> Result<Self> {
        h.set_deferred(true);
        let t = &cfg.timing;
        let lvl = |n: &str| cfg.level_timing(n);
        let banks = cfg.llc.banks.max(1);
        let channels = dram.config().spec.org.channels as usize;
        let n_agents = cfg.cpus + 1;
        let stops = n_agents + banks + channels;
        let net =
            apusim_timing::network::build(t.network_model(), &t.network.params, uncore, stops)
                .context("timing.network")?;
        let private = (0..n_agents)
            .map(|i| {
                let agent = agent_at(i as u32, n_agents);
                let bits = |s| h.entry_line_bits(&Access::new(agent, s, Op::Read, 0, 1));
                Private {
                    l1i: Mshrs::new(lvl("l1i").mshrs as usize),
                    l1d: Mshrs::new(lvl("l1d").mshrs as usize),
                    l1i_bits: bits(Stream::CpuInstr),
                    l1d_bits: bits(Stream::CpuData),
                    at_llc: 0,
                }
            })
            .collect();
        let llc_bits = h.llc_line_bits();
        let pages = (t.pages == "random")
            .then(|| PageMap::random(dram.config().spec.org.capacity_bytes(), cfg.seed));
        Ok(TimedMemory {
            h,
            events: EventQueue::default(),
            net,
            uncore,
            dram_domain,
            l1i_lat: cpu.cycles(lvl("l1i").latency.into()),
            l1d_lat: cpu.cycles(lvl("l1d").latency.into()),
            l2_lat: if cfg.cpu.l2.is_some() {
                cpu.cycles(lvl("l2").latency.into())
            } else {
                0
            },
            llc_lat: uncore.cycles(lvl("llc").latency.into()),
            l2_mshrs: lvl("l2").mshrs,
            llc_mshrs: lvl("llc").mshrs,
            private,
            banks: (0..banks)
                .map(|_| Bank {
                    free: 0,
                    busy_mshrs: 0,
                    blocked: VecDeque::new(),
                })
                .collect(),
            llc_inflight: FxHashMap::default(),
            llc_bits,
            dram,
            dram_waiting: Backlog::new(channels),
            dram_tags: FxHashMap::default(),
            dram_ids: 0,
            dram_wake: None,
            dram_done: Vec::new(),
            n_agents,
            banks_first_stop: n_agents,
            mcs_first_stop: n_agents + banks,
            scratch: Vec::new(),
            to_llc: Vec::new(),
            completions: Vec::new(),
            error: None,
            latency: vec![AgentLatency::default(); n_agents],
            llc_timing: LlcTiming::default(),
            dram_traffic: vec![DramTraffic::default(); n_agents],
            streams: [StreamCounts::default(); Stream::COUNT],
            last_progress: 0,
            open_loop_outstanding: 0,
            pages,
            in_transit: 0,
            gpu_units: Vec::new(),
            gpu_first: Vec::new(),
            gpu_lat: Vec::new(),
        })
    }

    /// Drive the GPU slot from a timed GPU clocked at `gpu`: every instance of every GPU
    /// cache a stream enters first gets its own MSHRs (`gpu.caches.*.mshrs`), and GPU
    /// requests are answered like a core's (nothing is open-loop any more). Latencies are
    /// the GPU caches' (`gpu.caches.*.latency`, in GPU cycles), summed down each chain.
    pub fn attach_gpu(&mut self, cfg: &SystemConfig, gpu: Domain) {
        let caches = &cfg.gpu.caches;
        let index = |name: &str| caches.iter().position(|c| c.name == name);
        self.gpu_lat = caches
            .iter()
            .map(|c| {
                let mut chain = Vec::new();
                let mut sum = 0;
                let mut at = Some(c);
                // A chain is at most as long as the list (`next` never loops: validated).
                for _ in 0..caches.len() {
                    let Some(level) = at else { break };
                    sum += gpu.cycles(level.timing().latency.into());
                    chain.push(sum);
                    at = level.next.as_deref().and_then(index).map(|i| &caches[i]);
                }
                chain
            })
            .collect();
        self.gpu_units.clear();
        self.gpu_first = caches
            .iter()
            .map(|c| {
                if c.streams.is_empty() {
                    return None;
                }
                let probe = Access::new(apusim_trace::Agent::GPU, c.streams[0], Op::Read, 0, 1);
                let bits = self.h.entry_line_bits(&probe);
                let mshrs = c.timing().mshrs as usize;
                let first = self.gpu_units.len();
                self.gpu_units.extend((0..c.units.max(1)).map(|_| Private {
                    l1i: Mshrs::new(1),
                    l1d: Mshrs::new(mshrs),
                    l1i_bits: bits,
                    l1d_bits: bits,
                    at_llc: 0,
                }));
                Some(first)
            })
            .collect();
        // Streams without a GPU cache: one table, keyed by LLC lines.
        self.gpu_units.push(Private {
            l1i: Mshrs::new(1),
            l1d: Mshrs::new(cfg.timing.gpu_outstanding as usize),
            l1i_bits: self.llc_bits,
            l1d_bits: self.llc_bits,
            at_llc: 0,
        });
    }

    /// The index in `gpu_units` of the first level a timed GPU's access of `stream` from
    /// `unit` enters, and the summed latencies down its chain (empty: straight to the LLC).
    fn gpu_private(&self, stream: Stream, unit: u16) -> (usize, &[Tick]) {
        match self.h.gpu_entry_cache(stream, unit) {
            Some((c, inst)) => match self.gpu_first[c] {
                Some(first) => (first + inst, &self.gpu_lat[c]),
                None => (self.gpu_units.len() - 1, &[]),
            },
            None => (self.gpu_units.len() - 1, &[]),
        }
    }

    /// The GPU's agent slot.
    fn gpu_slot(&self) -> u32 {
        (self.n_agents - 1) as u32
    }

    /// Whether requests of `agent` come from a timed GPU's shader cores.
    fn timed_gpu(&self, agent: u32) -> bool {
        agent == self.gpu_slot() && !self.gpu_units.is_empty()
    }

    /// The private timing state an access of `agent`'s `stream` from unit `unit` uses.
    fn private_of(&mut self, agent: u32, stream: Stream, unit: u16) -> &mut Private {
        if self.timed_gpu(agent) {
            let (i, _) = self.gpu_private(stream, unit);
            &mut self.gpu_units[i]
        } else {
            &mut self.private[agent as usize]
        }
    }

    fn bank_of(&self, addr: u64) -> usize {
        ((addr >> self.llc_bits) % self.banks.len() as u64) as usize
    }
    /// The first stop of the LLC banks and of the memory controllers (the agents' stops
    /// come first: the cores, then the GPU).
    pub(crate) fn stop_layout(&self) -> (usize, usize) {
        (self.banks_first_stop, self.mcs_first_stop)
    }
    fn bank_stop(&self, bank: usize) -> usize {
        self.banks_first_stop + bank
    }
    fn mc_stop(&self, addr: u64) -> usize {
        self.mcs_first_stop + self.dram.decode(addr).channel as usize
    }

    /// The next tick at which an event is due.
    /// The DRAM's clock.
    pub fn dram_domain(&self) -> Domain {
        self.dram_domain
    }

    pub fn next_event(&self) -> Option<Tick> {
        self.events.peek_time()
    }

    /// Whether DRAM write-backs that wait for a write-queue slot outnumber the slots of all
    /// the controllers' write queues together (the LLC's write-back buffer, taken to be as
    /// deep as those queues, is full): an open-loop agent then holds its next request, as a
    /// real one would stall on a full LLC.
    pub fn write_backlog_full(&self) -> bool {
        let c = self.dram.config();
        self.dram_waiting.writes() >= c.write_queue * c.spec.org.channels as usize
    }

    /// Whether any request is still travelling.
    pub fn busy(&self) -> bool {
        !self.events.is_empty() || self.dram.queued() > 0 || !self.dram_waiting.is_empty()
    }

    /// Functional warming of agent `agent`'s accesses, as a core sees it: an error is kept
    /// for the engine ([`TimedMemory::take_error`]) as a port's is.
    pub fn warm_port(&mut self, agent: u32) -> WarmSink<'_, P> {
        WarmSink { mem: self, agent }
    }

    /// A core's access at `now` (see [`MemPort`]).
    pub fn issue(&mut self, agent: u32, now: Tick, acc: &Access, token: Token) -> Issue {
        match self.try_issue(agent, now, acc, token) {
            Ok(i) => i,
            Err(e) => {
                self.error.get_or_insert(e);
                Issue::Done(now)
            }
        }
    }

    fn try_issue(&mut self, agent: u32, now: Tick, acc: &Access, token: Token) -> Result<Issue> {
        let acc = &self.placed(agent, acc);
        let instr = acc.stream == Stream::CpuInstr;
        let bits = self.h.entry_line_bits(acc);
        let line = acc.addr >> bits;
        let gpu = self.timed_gpu(agent);
        // Lookup latencies down the levels (a hit at depth d is ready after `chain[d]`, a
        // miss of all leaves after the last) and the bound on requests at the LLC.
        let (slot, chain, l2_mshrs) = match (gpu, instr) {
            // A GPU cache instance misses into the caches below it and the LLC; its own MSHRs
            // bound what it has outstanding.
            (true, _) => {
                let (i, chain) = self.gpu_private(acc.stream, acc.unit);
                (i, ChainLat::gpu(chain), u32::MAX)
            }
            (false, true) => (
                agent as usize,
                ChainLat::Cpu(self.l1i_lat, self.l2_lat),
                self.l2_mshrs,
            ),
            (false, false) => (
                agent as usize,
                ChainLat::Cpu(self.l1d_lat, self.l2_lat),
                self.l2_mshrs,
            ),
        };
        let l1_lat = chain.at(0);
        let p = private_in(&mut self.private, &mut self.gpu_units, gpu, slot);
        let table = if instr { &mut p.l1i } else { &mut p.l1d };
        table.expire(now);
        let merged = table.contains(line);
        if !merged {
            if table.is_full() && self.h.misses_first_level(acc) {
                return Ok(Issue::Busy(table.earliest_known()));
            }
            if p.at_llc >= l2_mshrs && self.h.misses_private_levels(acc) {
                return Ok(Issue::Busy(None));
            }
            // A full write-back buffer blocks the GPU at the LLC, as it holds an open-loop
            // GPU trace: the GPU's writes need no data back, so nothing else paces them, and
            // unheld they would queue without bound. It retries when DRAM next acts.
            if agent == self.gpu_slot()
                && self.write_backlog_full()
                && self.h.misses_private_levels(acc)
            {
                let retry = self.dram_wake.filter(|&w| w > now).unwrap_or(now + 1);
                return Ok(Issue::Busy(Some(retry)));
            }
        }
        self.h.access(acc)?;
        let depth = self.h.take_depth();
        let depart = now + chain.all();
        let mut out = std::mem::take(&mut self.to_llc);
        self.h.drain_to_llc(&mut out);
        let mut parts = 0;
        let p = private_in(&mut self.private, &mut self.gpu_units, gpu, slot);
        let lat = &mut self.latency[agent as usize];
        let table = if instr { &mut p.l1i } else { &mut p.l1d };
        for m in &out {
            // `post`, spelled out: `table` still borrows another field of `self`.
            self.in_transit += 1;
            let r = match *m {
                ToLlc::Hint(hint) => {
                    self.events.schedule(depart, Ev::ToLlcHint { hint, agent });
                    continue;
                }
                ToLlc::Request(r) => r,
            };
            if r.op != Op::Writeback && !merged {
                let key = r.addr >> bits;
                if !table.contains(key) {
                    table.insert(key, now, UNKNOWN, Some((agent, token)));
                    p.at_llc += 1;
                    parts += 1;
                }
            }
            self.events.schedule(depart, Ev::ToLlc { req: r, agent });
        }
        out.clear();
        self.to_llc = out;
        if merged {
            lat.merges += 1;
            let e = table.get_mut(line).expect("checked above");
            if e.ready != UNKNOWN {
                return Ok(Issue::Done(e.ready.max(now + l1_lat)));
            }
            e.waiters.push((agent, token));
            return Ok(Issue::Pending(1));
        }
        Ok(match depth {
            0 => Issue::Done(now + l1_lat),
            LLC_DEPTH if parts > 0 => Issue::Pending(parts),
            d => {
                let ready = now + chain.at(d);
                lat.second_level_hits += 1;
                if !table.contains(line) {
                    table.insert(line, now, ready, None);
                }
                Issue::Done(ready)
            }
        })
    }

    /// Core `agent`'s access on its physical page (`timing.pages = "random"`), or as it is.
    fn placed(&mut self, agent: u32, acc: &Access) -> Access {
        match &mut self.pages {
            Some(m) => Access {
                addr: m.translate(agent, acc.addr),
                ..*acc
            },
            None => *acc,
        }
    }

    /// Functional warming (sampled runs): `acc` of agent `agent` updates every cache level
    /// it reaches, the LLC and its policy included, at once and without timing, as a
    /// functional run does. What the LLC sends to memory is dropped (DRAM's row buffers are
    /// left to the detailed warm-up window; they hold microseconds of history). Nothing may
    /// be in flight: the engine drains the machine before it warms.
    pub fn warm(&mut self, agent: u32, acc: &Access) -> Result<()> {
        let acc = if (agent as usize) < self.n_agents - 1 {
            self.placed(agent, acc)
        } else {
            *acc
        };
        self.h.access(&acc)?;
        self.h.take_depth();
        let mut to_llc = std::mem::take(&mut self.to_llc);
        self.h.drain_to_llc(&mut to_llc);
        for m in &to_llc {
            match m {
                ToLlc::Hint(hint) => self.h.llc_hint(hint),
                ToLlc::Request(r) => self.h.llc_access(r)?,
            }
        }
        to_llc.clear();
        self.to_llc = to_llc;
        let mut out = std::mem::take(&mut self.scratch);
        self.h.drain_to_memory(&mut out);
        out.clear();
        self.scratch = out;
        Ok(())
    }

    /// Open-loop traffic: `acc` enters the hierarchy at `now` and nobody waits for it (a GPU
    /// trace replayed at its own time stamps). Requests leaving the agent's private levels
    /// travel to the LLC as any other.
    pub fn inject(&mut self, now: Tick, acc: &Access) -> Result<()> {
        let agent = acc.agent.dense_index(self.n_agents - 1) as u32;
        self.h.access(acc)?;
        self.h.take_depth();
        let mut out = std::mem::take(&mut self.to_llc);
        self.h.drain_to_llc(&mut out);
        for m in &out {
            match *m {
                ToLlc::Hint(hint) => self.post(now, Ev::ToLlcHint { hint, agent }),
                ToLlc::Request(req) => {
                    self.open_loop_outstanding += 1;
                    self.post(now, Ev::ToLlc { req, agent });
                }
            }
        }
        out.clear();
        self.to_llc = out;
        Ok(())
    }

    /// Handle every event due at or before `now`.
    pub fn run_events(&mut self, now: Tick) -> Result<()> {
        while let Some((t, ev)) = self.events.pop_due(now) {
            self.handle(t, ev)?;
        }
        Ok(())
    }

    /// Schedule `ev` at `t`, counting requests and data in transit.
    fn post(&mut self, t: Tick, ev: Ev) {
        if !matches!(ev, Ev::DramWake) {
            self.in_transit += 1;
        }
        self.events.schedule(t, ev);
    }

    /// Nothing is in flight anywhere: no request or data travelling or waiting at the LLC,
    /// in DRAM or for a controller slot (DRAM's own wake-ups, such as refresh, go on). A
    /// sampled run warms functionally only then, so no request from the detailed window
    /// reaches a cache after the warming accesses that follow it.
    pub fn quiescent(&self) -> bool {
        self.in_transit == 0
            && self.llc_inflight.is_empty()
            && self.dram.queued() == 0
            && self.dram_waiting.is_empty()
            && self.banks.iter().all(|b| b.blocked.is_empty())
    }

    /// Times the DRAM controllers have switched into write-drain mode so far.
    pub fn dram_write_drains(&self) -> u64 {
        self.dram.write_drains()
    }

    /// The occupancy integrals up to the DRAM cycle of `at`: the requests in the
    /// controllers' read queues, in their write queues, and the reads and write-backs waiting
    /// for a slot in them (summed over channels; see [`DramQueues`]). Read at the reading's
    /// own time, not at the DRAM's last decision, so every window's means are over its own
    /// length.
    pub fn dram_queues(&self, at: Tick) -> DramQueues {
        let cycle = self.dram_domain.cycle(at).max(self.dram.now());
        let (read_queue, write_queue) = self.dram.queue_integrals(cycle);
        let (reads_waiting, writes_waiting) = self.dram_waiting.integrals_at(cycle);
        DramQueues {
            cycle,
            read_queue,
            write_queue,
            reads_waiting,
            writes_waiting,
        }
    }

    /// Every stream's counters so far, with the DRAM's row-buffer outcomes of its requests
    /// (the DRAM model keeps those; the rest is counted here).
    pub fn stream_counts(&self) -> StreamTable {
        let mut t = self.streams;
        for (i, c) in t.iter_mut().enumerate() {
            [c.dram_read_rows, c.dram_write_rows] = self.dram.stream_row_outcomes(i as u8);
        }
        t
    }

    /// Every agent's DRAM counters so far (index: the agent's dense index, GPU last).
    pub fn dram_counts(&self) -> Vec<DramCounts> {
        (0..self.n_agents)
            .map(|a| {
                let d = self.dram.source_stats(self.agent_of(a as u32).to_byte());
                DramCounts {
                    traffic: self.dram_traffic[a],
                    bytes: d.bytes,
                    rows: d.rows,
                }
            })
            .collect()
    }

    /// A description of the oldest request still outstanding (for deadlock reports).
    pub fn oldest_outstanding(&self) -> String {
        // The oldest request: since when, what it is, and for one waiting in a private
        // cache its LLC line.
        let mut best: Option<(Tick, String, Option<u64>)> = None;
        let privates = self
            .private
            .iter()
            .enumerate()
            .map(|(i, p)| (self.agent_of(i as u32).to_string(), p))
            .chain(
                self.gpu_units
                    .iter()
                    .enumerate()
                    .map(|(u, p)| (format!("gpu cache instance {u}"), p)),
            );
        for (who, p) in privates {
            for (name, m, bits) in [("L1I", &p.l1i, p.l1i_bits), ("L1D", &p.l1d, p.l1d_bits)] {
                if let Some(e) = m.oldest().filter(|e| e.ready == UNKNOWN) {
                    if best.as_ref().is_none_or(|b| e.since < b.0) {
                        best = Some((
                            e.since,
                            format!(
                                "{who} line {:#x} waiting at its {name} since tick {}",
                                e.line, e.since
                            ),
                            Some((e.line << bits) >> self.llc_bits),
                        ));
                    }
                }
            }
        }
        for (line, (since, w)) in &self.llc_inflight {
            if best.as_ref().is_none_or(|b| *since < b.0) {
                best = Some((
                    *since,
                    format!(
                        "LLC line {:#x} waiting for DRAM since tick {since} ({} waiter(s))",
                        line,
                        w.len()
                    ),
                    None,
                ));
            }
        }
        // Where a request waiting in a private cache is further down: its LLC miss waiting
        // for DRAM (and on which channel), or not at the LLC at all.
        let whereabouts = |line: u64| match self.llc_inflight.get(&line) {
            Some((since, _)) => format!(
                " (its LLC miss has waited for DRAM channel {} since tick {since})",
                self.dram.decode(line << self.llc_bits).channel
            ),
            None => " (it is not waiting at the LLC: in a bank's queue, on the network, or \
                      its data on the way back)"
                .to_string(),
        };
        let blocked: usize = self.banks.iter().map(|b| b.blocked.len()).sum();
        let mshrs: u32 = self.banks.iter().map(|b| b.busy_mshrs).sum();
        format!(
            "{}; queues: {} LLC misses in flight, {mshrs} bank MSHRs busy, {blocked} requests \
             waiting for a bank MSHR, {} in the DRAM controllers, {} reads and {} writes waiting \
             for a controller slot, {} open-loop GPU requests outstanding, {} events pending; {}",
            best.map(|(_, what, line)| what + &line.map(whereabouts).unwrap_or_default())
                .unwrap_or_else(|| "no request is outstanding".into()),
            self.llc_inflight.len(),
            self.dram.queued(),
            self.dram_waiting.reads(),
            self.dram_waiting.writes(),
            self.open_loop_outstanding,
            self.events.len(),
            self.dram.describe_queues()
        )
    }

    /// Check the engine state is sane after a step.
    pub fn take_error(&mut self) -> Result<()> {
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The private timing state of slot `slot`: a core's (`gpu` false), or a timed GPU cache
/// instance's, as a function of the two fields so that a caller can hold other fields of
/// the timed memory meanwhile.
fn private_in<'a>(
    private: &'a mut [Private],
    gpu_units: &'a mut [Private],
    gpu: bool,
    slot: usize,
) -> &'a mut Private {
    if gpu {
        &mut gpu_units[slot]
    } else {
        &mut private[slot]
    }
}

/// Summed lookup latencies of the levels an access passes on its way to the LLC.
enum ChainLat {
    /// A core: its first level's latency and the L2's.
    Cpu(Tick, Tick),
    /// A GPU cache chain, summed from the first level, and how many levels it has (0: no
    /// GPU cache); levels past the fourth count as the fourth.
    Gpu([Tick; 4], u8),
}

impl ChainLat {
    fn gpu(chain: &[Tick]) -> ChainLat {
        let mut c = [0; 4];
        for (d, t) in c.iter_mut().enumerate() {
            *t = chain.get(d).or(chain.last()).copied().unwrap_or(0);
        }
        ChainLat::Gpu(c, chain.len().min(4) as u8)
    }
    /// Ready time of a hit at depth `d` (0: the first level).
    fn at(&self, d: u8) -> Tick {
        match self {
            ChainLat::Cpu(l1, _) if d == 0 => *l1,
            ChainLat::Cpu(l1, l2) => l1 + l2,
            ChainLat::Gpu(c, _) => c[(d as usize).min(3)],
        }
    }
    /// Time to pass every level (a miss leaves for the LLC then).
    fn all(&self) -> Tick {
        match self {
            ChainLat::Cpu(l1, l2) => l1 + l2,
            ChainLat::Gpu(c, n) => c[(*n as usize).max(1) - 1],
        }
    }
}

/// The agent of dense slot `slot` in a system of `n_agents` (cores, then the GPU).
fn agent_at(slot: u32, n_agents: usize) -> apusim_trace::Agent {
    if slot as usize == n_agents - 1 {
        apusim_trace::Agent::GPU
    } else {
        apusim_trace::Agent::cpu(slot as u8)
    }
}

/// A core's view of the memory side.
pub struct CorePort<'a, P: Policy> {
    pub mem: &'a mut TimedMemory<P>,
    pub agent: u32,
}

impl<P: Policy> MemPort for CorePort<'_, P> {
    fn issue(&mut self, now: Tick, acc: &Access, token: Token) -> Issue {
        self.mem.issue(self.agent, now, acc, token)
    }
}
