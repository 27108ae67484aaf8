//! The functional (untimed) cache hierarchy: private CPU levels per core, GPU render/compute
//! caches per stream and unit, one shared LLC generic over its policy, then memory.
//!
//! One file, one idea: the functional hierarchy's access walk, whose levels, forwarding,
//! write-backs and back-invalidations act on the same level array.
//!
//! An access enters at the first level that serves its stream (CPU instruction → L1I, CPU
//! data → L1D, a GPU stream → the GPU cache that lists it, else the LLC). At each level it is
//! split into the lines it touches; it counts once and misses if any line misses. Misses fetch
//! from the next level (writes only where `fetch_on_write`), bypasses and write-through /
//! write-no-allocate writes are forwarded as they are, dirty victims are written back to the
//! next level, and an LLC victim that a CPU touched back-invalidates every core's private copies
//! when the LLC is CPU-inclusive. An access flagged [`Access::BYPASS_LLC`] (a timed GPU's
//! non-critical shader access, gpu-access-criticality §4.1.2) that misses the LLC goes on to
//! memory as it is without allocating, a bypass of the LLC (GPU blocks need not be in the LLC:
//! it is inclusive of CPU blocks only). In cachegrind mode there is no write-back traffic, and a
//! miss forwards the whole access once, as cachegrind does.

use crate::config::{LevelConfig, SystemConfig};
use crate::llc_switches::{LlcSwitchState, LlcSwitches};
use crate::stats::{LevelStats, RunStats, Table};
use anyhow::{bail, Context, Result};
use apusim_cache::policies::l1_bypass::{build_predictor, L1Bypass};
use apusim_cache::policies::lru::Lru;
use apusim_cache::policies::plru::Plru;
use apusim_cache::{
    Cache, CacheError, Evicted, Geometry, LineMeta, Outcome, Policy, PolicyContext,
};
use apusim_trace::{Access, Agent, Op, Stream};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// The storage of one private cache instance. Caches of many ways (fully-associative render
/// caches) get the engine's wide sets, whose cost per access does not grow with the ways.
enum Store {
    Scan(Cache<Lru>),
    /// A GPU cache on tree pseudo-LRU (`replacement = "plru"`).
    PseudoLru(Cache<Plru>),
    /// A GPU L1 with a bypass predictor (`bypass_predictor` in the configuration).
    Bypass(Cache<L1Bypass>),
}

impl Store {
    /// An instance of `level`, on tree pseudo-LRU when `plru`, else LRU.
    fn new(g: Geometry, level: &LevelConfig, plru: bool) -> Result<Store> {
        let write = level.write_policy();
        let ctx = PolicyContext::for_geometry(&g);
        Ok(if plru {
            Store::PseudoLru(Cache::new(g, write, false, Plru::build(&ctx)?)?)
        } else {
            Store::Scan(Cache::new(g, write, false, Lru::build(&ctx)?)?)
        })
    }
    #[inline]
    fn access(&mut self, req: &Access) -> Result<Outcome, CacheError> {
        match self {
            Store::Scan(c) => c.access(req),
            Store::PseudoLru(c) => c.access(req),
            Store::Bypass(c) => c.access(req),
        }
    }
    fn probe(&self, addr: u64) -> bool {
        match self {
            Store::Scan(c) => c.probe(addr),
            Store::PseudoLru(c) => c.probe(addr),
            Store::Bypass(c) => c.probe(addr),
        }
    }
    fn invalidate(&mut self, addr: u64) -> Option<LineMeta> {
        match self {
            Store::Scan(c) => c.invalidate(addr),
            Store::PseudoLru(c) => c.invalidate(addr),
            Store::Bypass(c) => c.invalidate(addr),
        }
    }
}

/// Where a request goes next.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Target {
    Level(usize),
    Llc,
    Memory,
}

/// How a level picks the instance an access uses.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Owner {
    /// One instance per CPU core, selected by the agent's core number.
    PerCore,
    /// `units` instances selected by the access's unit modulo `units`.
    PerUnit,
}

/// The bypassBits of a GPU level with an L1 bypass predictor (adaptive-gpu-l1-bypassing.txt
/// §3.1: a bypassed line re-referenced while still in the next level is installed next time,
/// whichever instance bypassed it). In `apusim-gpu` they live in the L2's lines; here the next
/// level may be any cache (the LLC under any policy), so the level keeps them itself for the
/// last `cap` bypasses of all its instances, `cap` being the next level's line count: a bit
/// lives about as long as its line would in the next level under LRU.
struct BypassBits {
    cap: usize,
    seq: u64,
    fifo: VecDeque<(u64, u64)>,
    live: FxHashMap<u64, u64>,
}

impl BypassBits {
    fn new(cap: u64) -> BypassBits {
        BypassBits {
            cap: cap.max(1) as usize,
            seq: 0,
            fifo: VecDeque::new(),
            live: FxHashMap::default(),
        }
    }

    /// Listing 1's miss path: read and clear the line's bit; bypass if predicted and the bit
    /// was clear, and then set it.
    fn resolve(&mut self, line: u64, predicted: bool) -> bool {
        let was_set = self.live.remove(&line).is_some();
        let bypass = predicted && !was_set;
        if bypass {
            self.seq += 1;
            self.live.insert(line, self.seq);
            self.fifo.push_back((line, self.seq));
            while self.fifo.len() > self.cap {
                if let Some((l, s)) = self.fifo.pop_front() {
                    if self.live.get(&l) == Some(&s) {
                        self.live.remove(&l);
                    }
                }
            }
        }
        bypass
    }
}

struct Level {
    /// Set when the level's instances carry an L1 bypass predictor.
    bypass_bits: Option<BypassBits>,
    stats: LevelStats,
    instances: Vec<Store>,
    owner: Owner,
    line_bits: u32,
    fetch_on_write: bool,
    next: Target,
    /// Levels between this one and the agent (0 for the level an access enters first).
    depth: u8,
    /// Hits here are told to the LLC's policy (`llc.l2_hit_hints`: the cores' L2s).
    hints_llc: bool,
}

impl Level {
    /// The instances of a per-core level that may hold a CPU line: core `only`'s, when the
    /// line never left that core, else every core's.
    fn cores(&self, only: Option<usize>) -> std::ops::Range<usize> {
        match only {
            Some(c) if c < self.instances.len() => c..c + 1,
            _ => 0..self.instances.len(),
        }
    }

    /// The instance `req` uses: its core's, or its unit's modulo the instance count.
    #[inline]
    fn instance_of(&self, req: &Access) -> usize {
        let n = self.instances.len();
        if n == 1 {
            0
        } else {
            match self.owner {
                Owner::PerCore => req.agent.cpu_index().unwrap_or(0) % n,
                Owner::PerUnit => req.unit as usize % n,
            }
        }
    }
}

/// Depth reported by [`Hierarchy::take_depth`] for an access that went on to the LLC.
pub const LLC_DEPTH: u8 = u8::MAX;

/// A message from the private levels to the LLC (timed mode), in the order a functional run
/// would have reached the LLC.
#[derive(Clone, Copy, Debug)]
pub enum ToLlc {
    /// A request, served by [`Hierarchy::llc_access`] when it arrives.
    Request(Access),
    /// A hit in a core's L2 to tell the LLC's policy (`llc.l2_hit_hints`), delivered by
    /// [`Hierarchy::llc_hint`].
    Hint(Access),
}

/// What the timed system takes from the hierarchy instead of letting it reach the LLC and
/// memory at once (see [`Hierarchy::set_deferred`]).
#[derive(Default)]
struct Deferred {
    on: bool,
    /// Set while [`Hierarchy::llc_access`] runs: requests to the LLC are served, not deferred.
    at_llc: bool,
    /// Requests and hints that left the private levels for the LLC, in the order they left.
    to_llc: Vec<ToLlc>,
    /// Requests that left the LLC for memory, in order.
    to_memory: Vec<Access>,
    /// Deepest level a non-writeback request of the current access reached.
    depth: u8,
}

/// The hierarchy of one system with LLC policy `P`.
pub struct Hierarchy<P: Policy> {
    cpus: usize,
    levels: Vec<Level>,
    /// Index in `levels` of the first GPU cache (`cfg.gpu.caches` follow in order).
    first_gpu: usize,
    /// Entry target per (CPU stream or GPU stream): index by `Stream as usize`, for the CPU
    /// and the GPU separately.
    cpu_entry: [Target; 2],
    gpu_entry: [Target; Stream::COUNT],
    llc: Cache<P>,
    llc_stats: LevelStats,
    llc_line_bits: u32,
    memory: Table,
    cpu_inclusive: bool,
    /// `llc.qbs_queries`: victims the LLC may spare per miss because a core holds them.
    qbs_queries: u32,
    /// Victims spared so far (`llc.qbs_queries`).
    spared: u64,
    cachegrind: bool,
    /// Largest data size in cachegrind mode (its smallest line size).
    clamp: u16,
    /// Experiment switches at the LLC (`None` when all are off, the common case).
    llc_switches: Option<LlcSwitchState>,
    deferred: Deferred,
    /// LLC misses of accesses flagged [`Access::BYPASS_LLC`] that went around the LLC.
    flag_bypasses: u64,
    /// L2 hits told to the LLC's policy (`llc.l2_hit_hints`), and how many found their line
    /// in the LLC.
    hints: (u64, u64),
}

/// The levels of a hierarchy above its LLC, with the entry of every stream: the part that does
/// not depend on the LLC's policy, so it is built here once instead of in every policy's
/// instance of [`Hierarchy::new`].
struct Private {
    levels: Vec<Level>,
    first_gpu: usize,
    cpu_entry: [Target; 2],
    gpu_entry: [Target; Stream::COUNT],
    llc_geometry: Geometry,
    /// The smallest line size of any level, the LLC's included.
    min_line: u32,
}

impl Private {
    fn of(cfg: &SystemConfig) -> Result<Private> {
        let mut levels = Vec::new();
        let mut cpu_entry = [Target::Llc; 2];
        let cpu_levels = cfg.cpu_levels();
        // CPU: l1i and l1d miss into l2 if present, else the LLC.
        let l2_index = cpu_levels.iter().position(|(n, _)| *n == "l2");
        for (name, lc) in &cpu_levels {
            let next = match (*name, l2_index) {
                ("l2", _) | (_, None) => Target::Llc,
                (_, Some(i)) => Target::Level(i),
            };
            match *name {
                "l1i" => cpu_entry[0] = Target::Level(levels.len()),
                "l1d" => cpu_entry[1] = Target::Level(levels.len()),
                _ => {}
            }
            let mut level = build_level(cfg, name, lc, cfg.cpus, Owner::PerCore, next, false)?;
            level.hints_llc = cfg.llc.l2_hit_hints && *name == "l2";
            levels.push(level);
        }
        // A missing L1 sends its stream to L2 (if any).
        for e in cpu_entry.iter_mut() {
            if *e == Target::Llc {
                if let Some(i) = l2_index {
                    *e = Target::Level(i);
                }
            }
        }
        let first_gpu = levels.len();
        let index_of = |name: &str| cfg.gpu.caches.iter().position(|c| c.name == name);
        let mut gpu_entry = [Target::Llc; Stream::COUNT];
        for (i, gc) in cfg.gpu.caches.iter().enumerate() {
            let next = match &gc.next {
                Some(n) => Target::Level(first_gpu + index_of(n).context("validated next")?),
                None => Target::Llc,
            };
            for s in &gc.streams {
                gpu_entry[*s as usize] = Target::Level(first_gpu + i);
            }
            let mut level = build_level(
                cfg,
                &gc.name,
                &gc.level(),
                gc.units,
                Owner::PerUnit,
                next,
                gc.pseudo_lru(),
            )?;
            if let Some(kind) = &gc.bypass_predictor {
                let next_geometry = match &gc.next {
                    Some(n) => &cfg.gpu.caches[index_of(n).context("validated next")?].geometry,
                    None => &cfg.llc.geometry,
                };
                let cap = crate::config::parse_geometry(next_geometry)?.lines();
                add_bypass_predictor(&mut level, gc, kind, cap)
                    .with_context(|| format!("gpu cache {}", gc.name))?;
            }
            levels.push(level);
        }
        let g = crate::config::parse_geometry(&cfg.llc.geometry)?;
        if cfg.llc.cpu_inclusive {
            if let Some(bad) = levels
                .iter()
                .take(first_gpu)
                .find(|l| l.line_bits > g.line.trailing_zeros())
            {
                bail!(
                    "CPU-inclusive LLC with {}-byte lines cannot hold {}'s {}-byte lines",
                    g.line,
                    bad.stats.name,
                    1u32 << bad.line_bits
                );
            }
        }
        let min_line = levels
            .iter()
            .map(|l| 1u32 << l.line_bits)
            .chain(std::iter::once(g.line))
            .min()
            .unwrap_or(g.line);
        let mut private = Private {
            levels,
            first_gpu,
            cpu_entry,
            gpu_entry,
            llc_geometry: g,
            min_line,
        };
        private.number_depths();
        Ok(private)
    }

    /// Number each level by its distance from the agents: entry levels 0, the level they miss
    /// into 1, and so on.
    fn number_depths(&mut self) {
        let entries: Vec<Target> = self
            .cpu_entry
            .iter()
            .chain(self.gpu_entry.iter())
            .copied()
            .collect();
        for e in entries {
            let (mut t, mut d) = (e, 0u8);
            while let Target::Level(i) = t {
                let l = &mut self.levels[i];
                l.depth = l.depth.max(d);
                t = l.next;
                d = d.saturating_add(1);
            }
        }
    }
}

impl<P: Policy> Hierarchy<P> {
    /// Build the hierarchy of `cfg` around an LLC run by `policy`.
    pub fn new(cfg: &SystemConfig, policy: P) -> Result<Self> {
        let Private {
            levels,
            first_gpu,
            cpu_entry,
            gpu_entry,
            llc_geometry: g,
            min_line,
        } = Private::of(cfg)?;
        let llc = Cache::new(g, Default::default(), cfg.llc.cpu_inclusive, policy)?;
        Ok(Hierarchy {
            cpus: cfg.cpus,
            levels,
            first_gpu,
            cpu_entry,
            gpu_entry,
            llc_line_bits: g.line.trailing_zeros(),
            llc,
            llc_stats: LevelStats {
                name: "llc".into(),
                geometry: g.to_string(),
                instances: 1,
                counts: Table::new(cfg.cpus),
            },
            memory: Table::new(cfg.cpus),
            cpu_inclusive: cfg.llc.cpu_inclusive,
            qbs_queries: cfg.llc.qbs_queries,
            spared: 0,
            cachegrind: cfg.cachegrind,
            clamp: min_line.min(u16::MAX as u32) as u16,
            llc_switches: None,
            deferred: Deferred::default(),
            flag_bypasses: 0,
            hints: (0, 0),
        })
    }

    /// Timed mode: requests leaving the private levels for the LLC, and the LLC's requests to
    /// memory, are collected instead of served at once; the timed system delivers the first
    /// to the LLC with [`Hierarchy::llc_access`] when they arrive there, and the second to
    /// DRAM. State changes of the private levels happen when the agent accesses them, the
    /// LLC's when a request reaches it.
    pub fn set_deferred(&mut self, on: bool) {
        self.deferred.on = on;
    }

    /// The deepest level the last access's demand (not its write-backs) reached: 0 for the
    /// level it entered, 1 for the one below, ..., [`LLC_DEPTH`] if it went on to the LLC.
    /// Resets it for the next access.
    pub fn take_depth(&mut self) -> u8 {
        std::mem::take(&mut self.deferred.depth)
    }

    /// Requests that left the LLC for memory since the last call (timed mode), in order.
    pub fn drain_to_memory(&mut self, out: &mut Vec<Access>) {
        out.append(&mut self.deferred.to_memory);
    }

    /// Requests and L2 hit hints that left for the LLC since the last call (timed mode), in
    /// the order a functional run reaches the LLC.
    pub fn drain_to_llc(&mut self, out: &mut Vec<ToLlc>) {
        out.append(&mut self.deferred.to_llc);
    }

    /// Tell the LLC's policy of a hit on `hint`'s line in a core's L2 (`llc.l2_hit_hints`):
    /// the policy's hit update if the line is resident, nothing otherwise. Counted in the
    /// policy statistics `l2_hit_hints` and `l2_hit_hints_resident`.
    pub fn llc_hint(&mut self, hint: &Access) {
        let found = self.llc.hint(hint);
        self.hints.0 += 1;
        self.hints.1 += u64::from(found);
    }

    /// Serve a request that has arrived at the LLC (timed mode): the LLC's lookup, fill,
    /// eviction, back-invalidation of private copies, and requests to memory (collected).
    pub fn llc_access(&mut self, req: &Access) -> Result<()> {
        self.deferred.at_llc = true;
        let r = self.send(Target::Llc, req);
        self.deferred.at_llc = false;
        r
    }

    /// Would `req` (a single-line access) miss the level it enters first? Changes nothing.
    pub fn misses_first_level(&self, req: &Access) -> bool {
        match self.entry_of(req) {
            Target::Level(i) => !self.store_of(i, req).probe(req.addr),
            Target::Llc => !self.llc.probe(req.addr),
            Target::Memory => true,
        }
    }

    /// Would `req` miss every private level down to the LLC? Changes nothing.
    pub fn misses_private_levels(&self, req: &Access) -> bool {
        let mut t = self.entry_of(req);
        while let Target::Level(i) = t {
            if self.store_of(i, req).probe(req.addr) {
                return false;
            }
            t = self.levels[i].next;
        }
        true
    }

    /// Is the line of `addr` in the LLC?
    pub fn llc_holds(&self, addr: u64) -> bool {
        self.llc.probe(addr)
    }

    /// Line-size bits of the level `req` enters first.
    pub fn entry_line_bits(&self, req: &Access) -> u32 {
        self.bits_of(self.entry_of(req))
    }

    /// The GPU cache a GPU access of `stream` from unit `unit` enters first, as its index in
    /// the configuration's `gpu.caches`, and the instance it uses; `None` when the stream
    /// goes straight to the LLC.
    pub fn gpu_entry_cache(&self, stream: Stream, unit: u16) -> Option<(usize, usize)> {
        match self.gpu_entry[stream as usize] {
            Target::Level(i) => {
                let probe = Access {
                    unit,
                    ..Access::new(Agent::GPU, stream, Op::Read, 0, 1)
                };
                Some((i - self.first_gpu, self.levels[i].instance_of(&probe)))
            }
            _ => None,
        }
    }

    /// Line-size bits of the LLC.
    pub fn llc_line_bits(&self) -> u32 {
        self.llc_line_bits
    }

    /// LLC misses of accesses flagged [`Access::BYPASS_LLC`] that went around the LLC so far
    /// (also counted in the LLC's `bypasses`).
    pub fn llc_flag_bypasses(&self) -> u64 {
        self.flag_bypasses
    }

    /// The GPU's demand accesses to the LLC (reads, writes and prefetches; not write-backs)
    /// and their misses so far.
    pub fn gpu_llc_demand(&self) -> (u64, u64) {
        let (mut accesses, mut misses) = (0, 0);
        for s in Stream::ALL {
            let c = self.llc_stats.counts.get(Agent::GPU, *s);
            accesses += c.reads + c.writes + c.prefetches;
            misses += c.read_misses + c.write_misses + c.prefetch_misses;
        }
        (accesses, misses)
    }

    #[inline]
    fn entry_of(&self, req: &Access) -> Target {
        if req.agent.is_cpu() {
            self.cpu_entry[(req.stream != Stream::CpuInstr) as usize]
        } else {
            self.gpu_entry[req.stream as usize]
        }
    }

    fn store_of(&self, i: usize, req: &Access) -> &Store {
        let level = &self.levels[i];
        &level.instances[level.instance_of(req)]
    }

    /// Turn on the LLC switches of `opts` (see [`crate::llc_switches`]).
    pub fn set_llc_switches(&mut self, opts: &LlcSwitches, cfg: &SystemConfig) -> Result<()> {
        if self.cachegrind && opts.is_active() {
            bail!("the LLC switches do not apply to the cachegrind model");
        }
        self.llc_switches = if opts.is_active() {
            Some(LlcSwitchState::new(opts, cfg)?)
        } else {
            None
        };
        Ok(())
    }

    /// Flush what the run writes (the LLC dump).
    pub fn finish(&mut self) -> Result<()> {
        match &mut self.llc_switches {
            Some(s) => s.finish(),
            None => Ok(()),
        }
    }

    pub fn llc(&self) -> &Cache<P> {
        &self.llc
    }
    /// The LLC's counters per (agent, stream) so far.
    pub fn llc_counts(&self) -> &crate::stats::Table {
        &self.llc_stats.counts
    }
    pub fn llc_mut(&mut self) -> &mut Cache<P> {
        &mut self.llc
    }

    /// Check that the system has the agent `a`.
    pub fn check_agent(&self, a: Agent) -> Result<()> {
        match a.cpu_index() {
            Some(n) if n >= self.cpus => bail!(
                "the trace has {a} but the system has {} CPU core(s) (use --set cpus=N)",
                self.cpus
            ),
            _ => Ok(()),
        }
    }

    /// Simulate one access from a trace. The agent must have been checked with `check_agent`.
    #[inline]
    pub fn access(&mut self, req: &Access) -> Result<()> {
        let mut req = *req;
        if req.size == 0 {
            req.size = 1;
        }
        let entry = self.entry_of(&req);
        if self.cachegrind {
            if req.stream != Stream::CpuInstr {
                req.size = req.size.min(self.clamp);
            }
            self.cachegrind_access(entry, &req)
        } else if let Target::Level(i) = entry {
            // Fast path: most accesses touch one line of their first-level cache.
            let bits = self.levels[i].line_bits;
            let line = req.addr >> bits;
            if line != req.addr.saturating_add(req.size as u64 - 1) >> bits {
                return self.send(entry, &req);
            }
            let outcome = self.store_access(entry, &req)?;
            let miss = match outcome {
                Outcome::Hit {
                    write_through: false,
                } => false,
                o => {
                    let next = self.levels[i].next;
                    self.complete(entry, next, &req, &req, line, bits, o)?
                }
            };
            self.levels[i].stats.counts.of(&req).record(req.op, miss);
            Ok(())
        } else {
            self.send(entry, &req)
        }
    }

    /// cachegrind's rule: look up every line at this level; on any miss, reference the whole
    /// access at the next level; no write-back traffic.
    fn cachegrind_access(&mut self, at: Target, req: &Access) -> Result<()> {
        let mut t = at;
        loop {
            if t == Target::Memory {
                self.memory.of(req).record(req.op, false);
                return Ok(());
            }
            let bits = self.bits_of(t);
            let mut miss = false;
            for line in lines(req, bits) {
                let sub = Access {
                    addr: line << bits,
                    ..*req
                };
                miss |= !self.store_access(t, &sub)?.is_hit();
            }
            self.stats_at(t).of(req).record(req.op, miss);
            if !miss {
                return Ok(());
            }
            t = self.next_of(t);
        }
    }

    /// Send `req` to `t` with full write-back semantics.
    fn send(&mut self, t: Target, req: &Access) -> Result<()> {
        let bits = match t {
            Target::Memory => {
                self.memory.of(req).record(req.op, false);
                if self.deferred.on {
                    self.deferred.to_memory.push(*req);
                }
                return Ok(());
            }
            Target::Llc => {
                if self.deferred.on && !self.deferred.at_llc {
                    if req.op != Op::Writeback {
                        self.deferred.depth = LLC_DEPTH;
                    }
                    self.deferred.to_llc.push(ToLlc::Request(*req));
                    return Ok(());
                }
                self.llc_line_bits
            }
            Target::Level(i) => {
                if self.deferred.on && req.op != Op::Writeback {
                    self.deferred.depth = self.deferred.depth.max(self.levels[i].depth);
                }
                self.levels[i].line_bits
            }
        };
        let next = self.next_of(t);
        if t == Target::Llc && self.llc_switches.is_some() {
            return self.send_llc_switched(req, bits, next);
        }
        let mut miss = false;
        let span = lines(req, bits);
        let single = span.start() == span.end();
        for line in span {
            let sub = if single {
                *req
            } else {
                part_in_line(req, line, bits)
            };
            let outcome = if t == Target::Llc
                && sub.flags & Access::BYPASS_LLC != 0
                && !self.llc.probe(sub.addr)
            {
                // A flagged miss goes around the LLC: no allocation, no victim, and the
                // request continues to memory as it is (gpu-access-criticality §4.1.2).
                self.flag_bypasses += 1;
                Outcome::Miss {
                    filled: false,
                    bypassed: true,
                    evicted: None,
                }
            } else {
                self.store_access(t, &sub)?
            };
            miss |= self.complete(t, next, req, &sub, line, bits, outcome)?;
        }
        self.stats_at(t).of(req).record(req.op, miss);
        Ok(())
    }

    /// Finish one line of `req` at `t` after the store returned `outcome`: forward
    /// write-throughs, bypasses and no-allocate writes, write back the victim, fetch the line.
    /// Returns whether it was a miss.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn complete(
        &mut self,
        t: Target,
        next: Target,
        req: &Access,
        sub: &Access,
        line: u64,
        bits: u32,
        outcome: Outcome,
    ) -> Result<bool> {
        match outcome {
            Outcome::Hit { write_through } => {
                if let Target::Level(i) = t {
                    if self.levels[i].hints_llc {
                        // The reference, not the operation: a hint is a read of the line.
                        let hint = Access {
                            op: Op::Read,
                            ..*sub
                        };
                        if self.deferred.on && !self.deferred.at_llc {
                            self.deferred.to_llc.push(ToLlc::Hint(hint));
                        } else {
                            self.llc_hint(&hint);
                        }
                    }
                }
                if write_through {
                    self.send(next, sub)?;
                }
                Ok(false)
            }
            Outcome::Miss {
                filled,
                bypassed,
                evicted,
            } => {
                self.count_miss(t, next, req, bypassed, evicted)?;
                if !filled {
                    // Bypass or write-no-allocate: the request continues as it is.
                    self.send(next, sub)?;
                } else if self.fetches(t, req) {
                    let fetch = fetch_of(req, line, bits);
                    self.send(next, &fetch)?;
                }
                Ok(true)
            }
        }
    }

    /// The LLC with switches on: dump, forced GPU read bypass, idealized streams.
    fn send_llc_switched(&mut self, req: &Access, bits: u32, next: Target) -> Result<()> {
        let t = Target::Llc;
        let sw = self.llc_switches.as_mut().expect("checked by the caller");
        sw.dump(req)?;
        let resident = lines(req, bits).all(|l| self.llc.probe(l << bits));
        let flagged = req.flags & Access::BYPASS_LLC != 0;
        if !resident && (sw.force_bypass(req) || flagged) {
            self.flag_bypasses += u64::from(flagged);
            let c = self.llc_stats.counts.of(req);
            c.record(req.op, true);
            c.bypasses += 1;
            for line in lines(req, bits) {
                sw.seen_before(line);
            }
            return self.send(next, req);
        }
        let mut miss = false;
        let mut idealized = false;
        for line in lines(req, bits) {
            let sub = part_in_line(req, line, bits);
            let sw = self.llc_switches.as_mut().expect("checked by the caller");
            let repeat = sw.seen_before(line);
            let ideal = repeat && sw.is_ideal(req);
            match self.llc.access(&sub)? {
                Outcome::Hit { .. } => {}
                Outcome::Miss {
                    bypassed, evicted, ..
                } if ideal => {
                    // Charged as a hit: no memory traffic, whatever the policy did.
                    self.count_miss(t, next, req, bypassed, evicted)?;
                    idealized = true;
                }
                outcome => miss |= self.complete(t, next, req, &sub, line, bits, outcome)?,
            }
        }
        let c = self.llc_stats.counts.of(req);
        c.record(req.op, miss);
        if idealized && !miss {
            c.idealized += 1;
        }
        Ok(())
    }

    /// Does a miss of `req` that allocated at `t` read the line from below?
    fn fetches(&self, t: Target, req: &Access) -> bool {
        match req.op {
            Op::Read | Op::Prefetch => true,
            Op::Writeback => false,
            Op::Write => match t {
                Target::Level(i) => self.levels[i].fetch_on_write,
                _ => false,
            },
        }
    }

    /// What a miss of `req` at `t` did besides filling: a bypass counted, a victim evicted.
    #[inline]
    fn count_miss(
        &mut self,
        t: Target,
        next: Target,
        req: &Access,
        bypassed: bool,
        evicted: Option<Evicted>,
    ) -> Result<()> {
        if bypassed {
            self.stats_at(t).of(req).bypasses += 1;
        }
        match evicted {
            Some(ev) => self.evict(t, next, req, ev),
            None => Ok(()),
        }
    }

    /// A valid line left `t` to make room for `cause`: count it, write it back if dirty, and
    /// back-invalidate private CPU copies of an LLC line when inclusion demands it.
    fn evict(&mut self, t: Target, next: Target, cause: &Access, ev: Evicted) -> Result<()> {
        let bits = self.bits_of(t);
        let owner = Access {
            addr: ev.line << bits,
            size: line_bytes(bits),
            agent: ev.meta.agent,
            stream: ev.meta.stream(),
            op: Op::Writeback,
            flags: 0,
            ..*cause
        };
        let c = self.stats_at(t).of(&owner);
        c.evictions += 1;
        let mut dirty = ev.meta.dirty();
        if dirty {
            c.dirty_evictions += 1;
        }
        if t == Target::Llc && self.cpu_inclusive && ev.meta.cpu_touched() {
            dirty |= self.back_invalidate(owner.addr, bits, ev.meta.sole_cpu());
        }
        if dirty {
            self.send(next, &owner)?;
        }
        Ok(())
    }

    /// Remove every private CPU copy of the LLC line at `addr` (only core `only`'s, when the
    /// line never left that core); true if any copy was dirty ([`held_privately`] asks the
    /// same caches whether they hold it).
    fn back_invalidate(&mut self, addr: u64, llc_bits: u32, only: Option<usize>) -> bool {
        let mut dirty = false;
        for level in self.levels.iter_mut().filter(|l| l.owner == Owner::PerCore) {
            let step = 1u64 << level.line_bits;
            let cores = level.cores(only);
            for (inst, core) in level.instances[cores.clone()].iter_mut().zip(cores) {
                let mut a = addr;
                while a < addr + (1u64 << llc_bits) {
                    if let Some(m) = inst.invalidate(a) {
                        dirty |= m.dirty();
                        level
                            .stats
                            .counts
                            .at(Agent::cpu(core as u8), m.stream())
                            .back_invalidations += 1;
                    }
                    a += step;
                }
            }
        }
        dirty
    }

    #[inline]
    fn store_access(&mut self, t: Target, req: &Access) -> Result<Outcome> {
        Ok(match t {
            Target::Llc if self.qbs_queries > 0 => {
                let (levels, bits) = (&self.levels, self.llc_line_bits);
                let (outcome, spared) =
                    self.llc
                        .access_sparing(req, self.qbs_queries, |line, meta| {
                            meta.cpu_touched()
                                && held_privately(levels, line << bits, bits, meta.sole_cpu())
                        })?;
                self.spared += u64::from(spared);
                outcome
            }
            Target::Llc => self.llc.access(req)?,
            Target::Level(i) => {
                let level = &mut self.levels[i];
                let inst = level.instance_of(req);
                if let (Some(bits), Store::Bypass(c)) =
                    (&mut level.bypass_bits, &mut level.instances[inst])
                {
                    if !req.op.is_write() && !c.probe(req.addr) {
                        let predicted = c.policy_mut().predict(req);
                        let bypass = bits.resolve(req.addr >> level.line_bits, predicted);
                        c.policy_mut().decide(bypass);
                    }
                }
                level.instances[inst].access(req)?
            }
            Target::Memory => unreachable!("memory has no store"),
        })
    }

    #[inline]
    fn stats_at(&mut self, t: Target) -> &mut Table {
        match t {
            Target::Llc => &mut self.llc_stats.counts,
            Target::Level(i) => &mut self.levels[i].stats.counts,
            Target::Memory => &mut self.memory,
        }
    }

    #[inline]
    fn next_of(&self, t: Target) -> Target {
        match t {
            Target::Level(i) => self.levels[i].next,
            Target::Llc | Target::Memory => Target::Memory,
        }
    }

    fn bits_of(&self, t: Target) -> u32 {
        match t {
            Target::Level(i) => self.levels[i].line_bits,
            _ => self.llc_line_bits,
        }
    }

    /// The counters so far (instructions and trace accesses are filled in by the run loop).
    pub fn stats(&self) -> RunStats {
        let mut levels: Vec<LevelStats> = self.levels.iter().map(|l| l.stats.clone()).collect();
        levels.push(self.llc_stats.clone());
        RunStats {
            levels,
            memory: self.memory.clone(),
            instructions: vec![0; self.cpus + 1],
            trace_accesses: 0,
            policy_stats: {
                let mut s = self.llc.policy().stats();
                if self.levels.iter().any(|l| l.hints_llc) {
                    s.push(("l2_hit_hints".into(), self.hints.0 as f64));
                    s.push(("l2_hit_hints_resident".into(), self.hints.1 as f64));
                }
                if self.qbs_queries > 0 {
                    s.push(("qbs_spared".into(), self.spared as f64));
                }
                s
            },
        }
    }
}

/// The line addresses an access touches at a level with `bits` line bits.
#[inline]
fn lines(req: &Access, bits: u32) -> std::ops::RangeInclusive<u64> {
    let first = req.addr >> bits;
    let last = req.addr.saturating_add(req.size.max(1) as u64 - 1) >> bits;
    first..=last
}

/// The read that fills line `line` (of `bits` line bits) from below for `req`'s miss.
#[inline]
fn fetch_of(req: &Access, line: u64, bits: u32) -> Access {
    Access {
        addr: line << bits,
        size: line_bytes(bits),
        op: if req.op == Op::Prefetch {
            Op::Prefetch
        } else {
            Op::Read
        },
        flags: req.flags & !Access::MODIFY,
        ..*req
    }
}

/// The part of `req` that falls in line `line`.
#[inline]
fn part_in_line(req: &Access, line: u64, bits: u32) -> Access {
    let start = req.addr.max(line << bits);
    let end = req
        .addr
        .saturating_add(req.size as u64)
        .min((line + 1) << bits);
    Access {
        addr: start,
        size: (end - start).max(1) as u16,
        ..*req
    }
}

/// Bytes in a line of `bits` line bits, as an access size.
#[inline]
fn line_bytes(bits: u32) -> u16 {
    (1u32 << bits).min(u16::MAX as u32) as u16
}

fn build_level(
    cfg: &SystemConfig,
    name: &str,
    lc: &LevelConfig,
    instances: usize,
    owner: Owner,
    next: Target,
    plru: bool,
) -> Result<Level> {
    let g = crate::config::parse_geometry(&lc.geometry).with_context(|| format!("cache {name}"))?;
    let stores = (0..instances.max(1))
        .map(|_| Store::new(g, lc, plru))
        .collect::<Result<Vec<_>>>()
        .with_context(|| format!("cache {name}"))?;
    Ok(Level {
        bypass_bits: None,
        stats: LevelStats {
            name: name.to_string(),
            geometry: g.to_string(),
            instances: stores.len(),
            counts: Table::new(cfg.cpus),
        },
        instances: stores,
        owner,
        line_bits: g.line.trailing_zeros(),
        fetch_on_write: lc.fetch_on_write,
        next,
        depth: 0,
        hints_llc: false,
    })
}

/// Give every instance of a GPU level an L1 bypass predictor of kind `kind` (a name of
/// `l1_bypass::PREDICTORS`, with the paper's default sizes) on tree pseudo-LRU, and the level its
/// bypassBits, remembered for the last `cap` bypasses.
fn add_bypass_predictor(
    level: &mut Level,
    gc: &crate::config::GpuCacheConfig,
    kind: &str,
    cap: u64,
) -> Result<()> {
    let g = crate::config::parse_geometry(&gc.geometry)?;
    let lines = g.lines() as usize;
    let ctx = PolicyContext::for_geometry(&g);
    let mut stores = Vec::with_capacity(level.instances.len());
    for _ in 0..level.instances.len() {
        let predictor = build_predictor(kind, &toml::Table::new(), lines)
            .map_err(|e| anyhow::anyhow!("bypass_predictor: {e}"))?;
        let policy = L1Bypass::new(&ctx, predictor)?;
        stores.push(Store::Bypass(Cache::new(
            g,
            gc.level().write_policy(),
            false,
            policy,
        )?));
    }
    level.instances = stores;
    level.bypass_bits = Some(BypassBits::new(cap));
    Ok(())
}

/// Does a core's private cache hold part of the LLC line at `addr` (only core `only`'s caches
/// when the line never left that core)? The question query based selection asks before the
/// LLC evicts a CPU line (`llc.qbs_queries`).
fn held_privately(levels: &[Level], addr: u64, llc_bits: u32, only: Option<usize>) -> bool {
    levels
        .iter()
        .filter(|l| l.owner == Owner::PerCore)
        .any(|level| {
            let step = 1u64 << level.line_bits;
            level.instances[level.cores(only)].iter().any(|inst| {
                (addr..addr + (1u64 << llc_bits))
                    .step_by(step as usize)
                    .any(|a| inst.probe(a))
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use apusim_cache::policies::lru::Lru;

    fn hierarchy() -> Hierarchy<Lru> {
        hierarchy_with("128,2,64", "")
    }

    /// The tiny system with an L1D of `geometry` and `l1` appended to its entry.
    fn hierarchy_with(geometry: &str, l1: &str) -> Hierarchy<Lru> {
        let text = format!(
            r#"
            name = "tiny-gpu"
            cpus = 1
            cpu_clock_mhz = 1000
            gpu_clock_mhz = 1000
            [llc]
            geometry = "4K,4,64"
            policy = "lru"
            cpu_inclusive = true
            [[gpu.caches]]
            name = "sm-l1d"
            streams = ["shader-data"]
            geometry = "{geometry}"
            units = 1
            write_back = false
            write_allocate = false
            {l1}
            "#
        );
        let cfg = SystemConfig::from_toml(&text, "tiny-gpu", &[]).unwrap();
        let ctx = crate::run::policy_context(&cfg).unwrap();
        Hierarchy::new(&cfg, Lru::build(&ctx).unwrap()).unwrap()
    }

    fn gpu(op: Op, line: u64, flags: u8) -> Access {
        let mut a = Access::new(Agent::GPU, Stream::ShaderData, op, line * 64, 4);
        a.flags = flags;
        a
    }

    #[test]
    fn a_flagged_llc_miss_goes_around_the_llc_and_a_hit_stays_a_hit() {
        let mut h = hierarchy();
        let by = Access::BYPASS_LLC;
        // A flagged read miss: no LLC allocation, the read goes to memory, one bypass.
        h.access(&gpu(Op::Read, 1, by)).unwrap();
        assert!(!h.llc_holds(64));
        let llc = *h.llc_stats.counts.get(Agent::GPU, Stream::ShaderData);
        assert_eq!((llc.reads, llc.read_misses, llc.bypasses), (1, 1, 1));
        assert_eq!(h.memory.get(Agent::GPU, Stream::ShaderData).reads, 1);
        assert_eq!(h.llc_flag_bypasses(), 1);
        assert_eq!(h.gpu_llc_demand(), (1, 1));
        // The same line unflagged allocates; flagged again (after the L1 lost it), it hits.
        h.access(&gpu(Op::Read, 1 + 2, 0)).unwrap();
        h.access(&gpu(Op::Read, 1 + 4, 0)).unwrap();
        h.access(&gpu(Op::Read, 1, 0)).unwrap();
        assert!(h.llc_holds(64));
        for l in [3, 5, 7] {
            h.access(&gpu(Op::Read, l, 0)).unwrap();
        }
        let before = *h.llc_stats.counts.get(Agent::GPU, Stream::ShaderData);
        h.access(&gpu(Op::Read, 1, by)).unwrap();
        let after = *h.llc_stats.counts.get(Agent::GPU, Stream::ShaderData);
        assert_eq!(after.reads - before.reads, 1, "the L1 lost line 1");
        assert_eq!(after.read_misses, before.read_misses);
        assert_eq!(h.llc_flag_bypasses(), 1);
        // A flagged store miss (write-through, no allocate above) is written to memory
        // without allocating.
        h.access(&gpu(Op::Write, 40, by)).unwrap();
        assert!(!h.llc_holds(40 * 64));
        assert_eq!(h.memory.get(Agent::GPU, Stream::ShaderData).writes, 1);
        assert_eq!(h.llc_flag_bypasses(), 2);
        // Unflagged, the same store allocates in the LLC.
        h.access(&gpu(Op::Write, 41, 0)).unwrap();
        assert!(h.llc_holds(41 * 64));
        let (a, m) = h.gpu_llc_demand();
        assert_eq!(a, after.reads + 2);
        assert!(m >= 3);
    }

    /// `replacement = "plru"` makes every instance tree pseudo-LRU: the L1's read misses on
    /// a stream where the two policies differ are those of a standalone `Cache<Plru>`, not
    /// of `Cache<Lru>`.
    #[test]
    fn a_pseudo_lru_gpu_cache_misses_as_tree_pseudo_lru_does() {
        let g = Geometry::new(512, 8, 64);
        let write = apusim_cache::WritePolicy {
            write_back: false,
            write_allocate: false,
        };
        let ctx = PolicyContext::for_geometry(&g);
        let mut plru = Cache::new(g, write, false, Plru::build(&ctx).unwrap()).unwrap();
        let mut lru = Cache::new(g, write, false, Lru::build(&ctx).unwrap()).unwrap();
        let mut h = hierarchy_with("512,8,64", r#"replacement = "plru""#);
        let mut x = 12345u64;
        let (mut want_plru, mut want_lru) = (0, 0);
        for _ in 0..4000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let line = (x >> 33) % 13;
            let a = gpu(Op::Read, line, 0);
            want_plru += u64::from(!plru.access(&a).unwrap().is_hit());
            want_lru += u64::from(!lru.access(&a).unwrap().is_hit());
            h.access(&a).unwrap();
        }
        assert_ne!(
            want_plru, want_lru,
            "the stream does not tell the policies apart"
        );
        let l1 = h.levels[h.first_gpu]
            .stats
            .counts
            .get(Agent::GPU, Stream::ShaderData)
            .read_misses;
        assert_eq!(l1, want_plru);
    }
}
