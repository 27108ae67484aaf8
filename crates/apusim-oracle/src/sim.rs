//! The replay loop shared by every oracle run, and Baseline+Bypass: any registered policy run
//! through the engine [`apusim_cache::Cache`] with the oracle bypass of GPU lines on top
//! (drp-reuse-probability-shared-llc.txt §4.1, "Baseline+Bypass").
//!
//! The loop replays the source a second time, splits each access into line references and reads
//! the matching next uses from the [`NextUses`] file in step; a simulator ([`RefSim`]: OPT or the
//! engine) turns each reference into an engine [`Outcome`], which is counted per (agent, stream)
//! and handed to an [`Observer`] (the reuse characterization, or nothing).
//!
//! The oracle bypass for registered policies is the policy wrapper [`OracleBypass`]: it keeps a
//! shadow array with the next use of the line in every way (written on the engine's `on_fill`
//! and `on_hit` hooks, which name the way) and the number of valid ways per set. On a miss the
//! wrapped policy's `on_miss` runs first (so its learning sees every miss, as it would without
//! the oracle); if it allocates, the set is full and the request is a GPU one whose next use is
//! farther than that of every line in the set, the wrapper answers `Bypass` instead.

use crate::error::{OracleError, Result};
use crate::nextuse::{fingerprint, NextUses, Refs, NEVER};
use crate::stats::{OracleResult, Table};
use apusim_cache::policies::wrapper::Wrapper;
use apusim_cache::{
    Cache, CacheError, Evicted, Geometry, MissAction, Outcome, Policy, PolicyContext, PolicyStat,
};
use apusim_trace::{Access, AccessSource, BATCH};

/// Sees every line reference of a run and what it did.
pub trait Observer {
    /// `req` (its address inside `line`) referenced `line`, whose next reference is `next_use`
    /// ([`crate::NEVER`] if none, or always `NEVER` for runs without next uses), with `outcome`.
    fn observe(&mut self, req: &Access, line: u64, next_use: u64, outcome: &Outcome);
}

/// An observer that does nothing (plain runs).
pub struct NoObserver;

impl Observer for NoObserver {
    #[inline(always)]
    fn observe(&mut self, _: &Access, _: u64, _: u64, _: &Outcome) {}
}

/// A cache simulator driven one line reference at a time, told each reference's next use.
pub trait RefSim {
    fn access(
        &mut self,
        req: &Access,
        line: u64,
        next_use: u64,
    ) -> std::result::Result<Outcome, CacheError>;
    /// Hint: `line` will be accessed soon (`drive` calls it [`AHEAD`] references ahead).
    #[inline]
    fn prefetch(&self, _req: &Access, _line: u64) {}
    /// Hint: `line` will be accessed a little later than [`RefSim::prefetch`]'s line (`drive`
    /// calls it twice [`AHEAD`] references ahead): the first step of a two-step prefetch,
    /// whose second step ([`RefSim::prefetch`]) reads what the first brought in (the engine's
    /// wide sets: the hash index slot, then the way's tag and policy state).
    #[inline]
    fn prefetch_early(&self, _req: &Access, _line: u64) {}
    fn policy_stats(&self) -> Vec<PolicyStat>;
}

/// How many references ahead of its access `drive` calls [`RefSim::prefetch`] (and twice as
/// many, [`RefSim::prefetch_early`]).
pub const AHEAD: usize = 8;

/// Replay `source` through `sim`, with next uses from `next_uses` (or all [`NEVER`] without).
/// Public for the studies that drive a cache of their own through the same loop.
pub fn drive<S: RefSim, O: Observer>(
    sim: &mut S,
    name: &str,
    geometry: Geometry,
    next_uses: Option<&NextUses>,
    source: &mut dyn AccessSource,
    observer: &mut O,
) -> Result<OracleResult> {
    let line_bits = geometry.line.trailing_zeros();
    let mut reader = next_uses.map(|n| n.reader()).transpose()?;
    let mut table = Table::new();
    let mut batch = Vec::with_capacity(BATCH);
    let mut refs = Refs::default();
    let mut nexts = Vec::with_capacity(BATCH);
    let (mut accesses, mut references, mut fp) = (0u64, 0u64, 0u64);
    loop {
        batch.clear();
        if !source.next_batch(&mut batch)? {
            break;
        }
        accesses += batch.len() as u64;
        refs.fill(&batch, line_bits)?;
        let (reqs, lines) = (refs.reqs(&batch), refs.lines());
        match reader.as_mut() {
            Some(r) => r.read(lines.len(), &mut nexts)?,
            None => {
                nexts.clear();
                nexts.resize(lines.len(), NEVER);
            }
        }
        for (req, &line) in reqs.iter().zip(lines).take(2 * AHEAD) {
            sim.prefetch_early(req, line);
        }
        for (req, &line) in reqs.iter().zip(lines).take(AHEAD) {
            sim.prefetch(req, line);
        }
        for (i, ((req, &line), &next)) in reqs.iter().zip(lines).zip(&nexts).enumerate() {
            if let (Some(r), Some(&l)) = (reqs.get(i + 2 * AHEAD), lines.get(i + 2 * AHEAD)) {
                sim.prefetch_early(r, l);
            }
            if let (Some(r), Some(&l)) = (reqs.get(i + AHEAD), lines.get(i + AHEAD)) {
                sim.prefetch(r, l);
            }
            let o = sim.access(req, line, next)?;
            table.record(req, &o);
            observer.observe(req, line, next, &o);
            fp = fingerprint(fp, line);
        }
        references += lines.len() as u64;
    }
    if references == 0 {
        return Err(OracleError::EmptyTrace);
    }
    if let (Some(r), Some(n)) = (reader.as_ref(), next_uses) {
        if r.remaining() != 0 {
            return Err(OracleError::TraceChanged(format!(
                "the replay has {references} line references, the first pass {}",
                n.counts().references
            )));
        }
        if fp != n.fingerprint() {
            return Err(OracleError::TraceChanged(
                "the replay references other lines than the first pass".into(),
            ));
        }
    }
    Ok(OracleResult::from_table(
        name,
        geometry,
        accesses,
        references,
        &table,
        sim.policy_stats(),
    ))
}

/// A registered policy with the oracle bypass of GPU lines on top (see the module doc).
pub struct OracleBypass<P> {
    inner: P,
    ways: usize,
    /// Next use of the line in each way, `sets * ways` (empty, and never written, when the
    /// bypass is off: a plain replay needs no next uses).
    next: Vec<u64>,
    /// Valid ways per set.
    valid: Vec<u32>,
    /// Next use of the request being accessed (set by the driver before each access).
    pending: u64,
    enabled: bool,
    bypasses: u64,
}

impl<P: Policy> OracleBypass<P> {
    /// Wrap `inner` for a cache of `sets` x `ways`; `enabled` false makes the wrapper a pure
    /// pass-through (a registered policy run without the oracle).
    pub fn wrap(inner: P, sets: usize, ways: usize, enabled: bool) -> Self {
        OracleBypass {
            inner,
            ways,
            next: if enabled {
                vec![NEVER; sets * ways]
            } else {
                Vec::new()
            },
            valid: vec![0; sets],
            pending: NEVER,
            enabled,
            bypasses: 0,
        }
    }
    /// Set the next use of the request about to be accessed.
    #[inline]
    pub fn set_next_use(&mut self, next: u64) {
        self.pending = next;
    }
    pub fn inner(&self) -> &P {
        &self.inner
    }
}

/// The oracle's own hooks; every other hook, the parameters and the statistics are the
/// wrapped policy's, forwarded by [`Wrapper`].
impl<P: Policy> Wrapper for OracleBypass<P> {
    type Inner = P;
    fn inner(&self) -> &P {
        &self.inner
    }
    fn inner_mut(&mut self) -> &mut P {
        &mut self.inner
    }
    fn wrap(inner: P, ctx: &PolicyContext) -> std::result::Result<Self, CacheError> {
        Ok(OracleBypass::wrap(inner, ctx.sets, ctx.ways, true))
    }

    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, req: &Access) {
        if self.enabled {
            self.next[set * self.ways + way] = self.pending;
        }
        self.inner.on_hit(set, way, req);
    }
    #[inline]
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        let action = self.inner.on_miss(set, req);
        if action == MissAction::Allocate
            && self.enabled
            && req.agent.is_gpu()
            && self.valid[set] as usize == self.ways
        {
            let base = set * self.ways;
            let far = self.next[base..base + self.ways]
                .iter()
                .copied()
                .max()
                .unwrap_or(NEVER);
            if self.pending > far {
                self.bypasses += 1;
                return MissAction::Bypass;
            }
        }
        action
    }
    #[inline]
    fn on_evict(&mut self, set: usize, way: usize, victim: &Evicted) {
        self.valid[set] -= 1;
        self.inner.on_evict(set, way, victim);
    }
    #[inline]
    fn on_fill(&mut self, set: usize, way: usize, req: &Access) {
        if self.enabled {
            self.next[set * self.ways + way] = self.pending;
        }
        self.valid[set] += 1;
        self.inner.on_fill(set, way, req);
    }
    fn extra_stats(&self, stats: &mut Vec<PolicyStat>) {
        if self.enabled {
            stats.push(("oracle_bypasses".to_string(), self.bypasses as f64));
        }
    }
}

/// The engine with a wrapped policy, as a [`RefSim`].
pub(crate) struct EngineSim<P: Policy> {
    pub(crate) cache: Cache<OracleBypass<P>>,
}

impl<P: Policy> RefSim for EngineSim<P> {
    #[inline]
    fn access(
        &mut self,
        req: &Access,
        _line: u64,
        next: u64,
    ) -> std::result::Result<Outcome, CacheError> {
        self.cache.policy_mut().set_next_use(next);
        self.cache.access(req)
    }
    #[inline]
    fn prefetch(&self, req: &Access, _line: u64) {
        self.cache.prefetch(req.addr);
    }
    #[inline]
    fn prefetch_early(&self, req: &Access, _line: u64) {
        self.cache.prefetch_index(req.addr);
    }
    fn policy_stats(&self) -> Vec<PolicyStat> {
        self.cache.policy().stats()
    }
}
