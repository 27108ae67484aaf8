//! Set sampling and set dueling: leader sets chosen by the set-index bits ([`SetSampler`]),
//! policy selectors ([`Psel`]) and the duels built from them, global ([`SetDuel`]) and per
//! agent ([`AgentDuel`]; [`AgentBimodalDuel`] with per-agent bimodal throttles); with the
//! demand test and per-agent slots duels train and index by.
//!
//! # Set sampling ("complement-select")
//!
//! [`SetSampler`] picks the leader sets of a duel by a Boolean function of the set-index bits,
//! so no table is needed. For a cache of at least 64 sets, the set index is cut into
//! constituencies of 1024 sets; inside one, `a = set & 31` and `b = (set >> 5) & 31`. A set
//! leads duel-policy 0 for thread `t` when `b == (a + 2t) % 32`, and duel-policy 1 when
//! `b == (a + 2t + 1) % 32`. Equivalently, with the *offset* `d = (b - a) mod 32`, a set leads
//! for thread `d / 2` and policy `d % 2`. Each thread thus owns 32 leaders of each policy per
//! 1024 sets, and the leader sets of different threads are disjoint.
//!
//! Scaling: with `k = min(5, floor(log2(sets)) - 1)` and `m = 2^k`, the fields become
//! `a = set & (m-1)`, `b = (set >> k) & (m-1)`, offsets are taken mod `m`. For every cache of
//! at least 64 sets this is exactly the 1024-set rule above (smaller caches simply have fewer
//! values of `b`, so the leader density stays 1/32 per policy and thread, and every thread
//! gets at least two leaders of each kind). Caches of 4 to 63 sets use a smaller `m`, which
//! keeps two leaders of each kind per thread (at a higher density). Caches of fewer than 4
//! sets have no leaders: every set follows the selector, which keeps its initial choice
//! (policy 0). Only `m / 2` threads (16 for caches of ≥ 64 sets) get distinct leader sets;
//! thread `t` shares the leaders of thread `t mod (m/2)`.
//!
//! A second, independent duel (the depth-write bypass duel of
//! [`HeteroWrites`](crate::policies::hetero_writes::HeteroWrites)) uses the *spare* offset
//! `d = m - 1`, which no thread below `m/2 - 1` uses: among the sets with that offset (one per
//! value of `b`), group 0 is `b % 4 == 0` and group 1 is `b % 4 == 2`, i.e. 8 sets of each group per
//! 1024 sets. When the cache has fewer than 4 values of `b` (64 to 127 sets, or fewer), group 0
//! is `b == 0` and group 1 is `b == 1`, so every cache of at least 4 sets has one set of each
//! group. These groups are disjoint from the DRRIP leaders and from the TA-DRRIP leaders of up
//! to 15 agents (14 CPU cores and the GPU) in every cache of ≥ 64 sets.
//!
//! # Set dueling
//!
//! A [`Psel`] is an n-bit (default 10) saturating policy selector. A miss in a leader set of
//! policy 0 increments it, a miss in a leader set of policy 1 decrements it, and follower sets
//! use policy 1 exactly when its most significant bit is set. It starts at `2^(n-1) - 1`, so
//! followers start with policy 0 and switch after one net extra miss in the policy-0 leaders.
//! [`SetDuel`] is one selector for the whole cache (DRRIP); [`AgentDuel`] keeps one selector
//! and one set of leaders per agent (CPU cores, then the GPU; TA-DRRIP): in a set led by
//! another agent, an agent follows its own selector.

use super::counters::SatCounter;
use super::rrip::{Bimodal, RRPV_LONG};
use crate::params::{ParamKind, ParamSpec};
use crate::{CacheError, PolicyContext, PolicyStat};
use apusim_trace::{Access, Agent, Op};

/// True for the accesses that train set duels: demand reads and writes (not writebacks from
/// upper levels, not prefetches).
#[inline]
pub fn is_demand(op: Op) -> bool {
    matches!(op, Op::Read | Op::Write)
}

/// Index of `agent` in a per-agent table of `n_cpus + 1` entries (cores, then the GPU). A
/// core beyond the configured count folds onto core `id % n_cpus` rather than panicking.
#[inline]
pub fn agent_slot(agent: Agent, n_cpus: usize) -> usize {
    match agent.cpu_index() {
        Some(i) if i < n_cpus => i,
        Some(i) => i % n_cpus.max(1),
        None => n_cpus,
    }
}

/// Name of per-agent slot `i` (the inverse of [`agent_slot`]), for statistics: `cpuN` or `gpu`.
pub fn slot_name(i: usize, n_cpus: usize) -> String {
    if i == n_cpus {
        "gpu".into()
    } else {
        format!("cpu{i}")
    }
}

/// Leader-set selection by Boolean functions of the set-index bits (see the module doc).
#[derive(Clone, Copy, Debug)]
pub struct SetSampler {
    k: u32,
    mask: usize,
    half: usize,
    enabled: bool,
    /// The cache has at least 4 values of `b`: spare groups use `b % 4`.
    wide: bool,
}

impl SetSampler {
    pub fn new(sets: usize) -> SetSampler {
        if sets < 4 {
            return SetSampler {
                k: 0,
                mask: 0,
                half: 1,
                enabled: false,
                wide: false,
            };
        }
        let k = (sets.ilog2() - 1).min(5);
        let m = 1usize << k;
        let b_values = sets.div_ceil(m).min(m);
        SetSampler {
            k,
            mask: m - 1,
            half: m / 2,
            enabled: true,
            wide: b_values >= 4,
        }
    }

    /// Number of threads with distinct leader sets (`m / 2`).
    pub fn distinct_threads(&self) -> usize {
        if self.enabled {
            self.half
        } else {
            0
        }
    }

    /// `(b - a) mod m` of `set`.
    #[inline]
    fn offset(&self, set: usize) -> usize {
        let a = set & self.mask;
        let b = (set >> self.k) & self.mask;
        b.wrapping_sub(a) & self.mask
    }

    /// The duel policy (0 or 1) `set` always uses for `thread`, or `None` for a follower.
    #[inline]
    pub fn leader(&self, set: usize, thread: usize) -> Option<u8> {
        let d = self.offset(set);
        (self.enabled && d >> 1 == thread % self.half).then_some((d & 1) as u8)
    }

    /// Group (0 or 1) of `set` in the second, independent duel on the spare offset, or
    /// `None` (see the module doc).
    #[inline]
    pub fn spare_leader(&self, set: usize) -> Option<u8> {
        if !self.enabled || self.offset(set) != self.mask {
            return None;
        }
        let b = (set >> self.k) & self.mask;
        match (self.wide, b) {
            (true, b) if b & 3 == 0 => Some(0),
            (true, b) if b & 3 == 2 => Some(1),
            (false, 0) => Some(0),
            (false, 1) => Some(1),
            _ => None,
        }
    }
}

/// A policy selector: an n-bit saturating counter dueling two policies (see the module doc).
#[derive(Clone, Copy, Debug)]
pub struct Psel(SatCounter);

/// Width of the RRIP set duels' selectors: 10 bits by default (drp-reuse-probability-shared-llc.txt
/// §2.1's DRRIP, after the RRIP paper).
pub const PSEL_BITS: ParamSpec = ParamSpec {
    name: "psel_bits",
    kind: ParamKind::Int { min: 1, max: 16 },
    default: "10",
    unit: "bits",
    doc: "width of the set-dueling policy selector (drp §2.1)",
};

impl Psel {
    pub fn new(bits: u32) -> Psel {
        Psel(SatCounter::new(bits, (1 << (bits - 1)) - 1))
    }
    /// Width from the width parameter `spec` ([`PSEL_BITS`],
    /// [`DEPTH_PSEL_BITS`](crate::policies::hetero_writes::DEPTH_PSEL_BITS)).
    pub fn from_ctx(ctx: &PolicyContext, spec: &ParamSpec) -> Result<Psel, CacheError> {
        Ok(Psel::new(ctx.int(spec)? as u32))
    }
    /// A miss in a leader set of `policy`.
    #[inline]
    pub fn record_miss(&mut self, policy: u8) {
        if policy == 0 {
            self.0.inc();
        } else {
            self.0.dec();
        }
    }
    /// The policy followers use: 1 iff the most significant bit is set.
    #[inline]
    pub fn choice(&self) -> u8 {
        self.0.msb() as u8
    }
    pub fn value(&self) -> u32 {
        self.0.get()
    }
    pub fn max(&self) -> u32 {
        self.0.max()
    }
}

/// One selector for the whole cache (DRRIP, DIP): thread 0's leaders of [`SetSampler`].
///
/// The leader test runs on every miss of a DRRIP cache, so it is [`SetSampler::leader`] for
/// thread 0 reduced to its arithmetic: a set leads policy `d` exactly when its offset
/// `d = (b - a) mod m` is below `leads` (2; 0 for a cache without leaders).
#[derive(Clone, Debug)]
pub struct SetDuel {
    k: u32,
    mask: usize,
    leads: usize,
    psel: Psel,
}

impl SetDuel {
    /// Leaders for `ctx.sets`; selector width from parameter [`PSEL_BITS`].
    pub fn from_ctx(ctx: &PolicyContext) -> Result<SetDuel, CacheError> {
        let sampler = SetSampler::new(ctx.sets);
        Ok(SetDuel {
            k: sampler.k,
            mask: sampler.mask,
            leads: if sampler.enabled { 2 } else { 0 },
            psel: Psel::from_ctx(ctx, &PSEL_BITS)?,
        })
    }
    /// The leader kind of `set`, if it is a leader.
    #[inline]
    pub fn leader(&self, set: usize) -> Option<u8> {
        let d = (set >> self.k).wrapping_sub(set) & self.mask;
        (d < self.leads).then_some(d as u8)
    }
    /// The policy followers use now.
    #[inline]
    pub fn choice(&self) -> u8 {
        self.psel.choice()
    }
    /// A miss in `set` whose leader kind is `leader` ([`SetDuel::leader`]), if it trains.
    #[inline]
    pub fn record_leader_miss(&mut self, leader: Option<u8>) {
        if let Some(p) = leader {
            self.psel.record_miss(p);
        }
    }
    /// A (training) miss in `set`.
    #[inline]
    pub fn record_miss(&mut self, set: usize) {
        self.record_leader_miss(self.leader(set));
    }
    /// The policy `set` uses now.
    #[inline]
    pub fn policy(&self, set: usize) -> u8 {
        self.leader(set).unwrap_or_else(|| self.psel.choice())
    }
    pub fn psel(&self) -> &Psel {
        &self.psel
    }
}

/// One selector and one set of leaders per agent (TA-DRRIP, TADIP): agent `i` (dense index,
/// see [`agent_slot`]) is sampler thread `i`.
#[derive(Clone, Debug)]
pub struct AgentDuel {
    sampler: SetSampler,
    n_cpus: usize,
    psel: Vec<Psel>,
}

impl AgentDuel {
    /// Leaders for `ctx.sets`, one selector per agent of width [`PSEL_BITS`].
    pub fn from_ctx(ctx: &PolicyContext) -> Result<AgentDuel, CacheError> {
        let p = Psel::from_ctx(ctx, &PSEL_BITS)?;
        Ok(AgentDuel {
            sampler: SetSampler::new(ctx.sets),
            n_cpus: ctx.n_cpus,
            psel: vec![p; ctx.agents()],
        })
    }
    #[inline]
    pub fn slot(&self, agent: Agent) -> usize {
        agent_slot(agent, self.n_cpus)
    }
    /// The leader kind of `set` for `agent`, if `set` is one of `agent`'s leaders.
    #[inline]
    pub fn leader(&self, set: usize, agent: Agent) -> Option<u8> {
        self.sampler.leader(set, self.slot(agent))
    }
    /// A (training) miss of `agent` in `set`: trains `agent`'s selector if `set` is one of
    /// its leaders.
    #[inline]
    pub fn record_miss(&mut self, set: usize, agent: Agent) {
        let slot = self.slot(agent);
        if let Some(p) = self.sampler.leader(set, slot) {
            self.psel[slot].record_miss(p);
        }
    }
    /// The policy `agent` uses in `set` now.
    #[inline]
    pub fn policy(&self, set: usize, agent: Agent) -> u8 {
        let slot = self.slot(agent);
        match self.sampler.leader(set, slot) {
            Some(p) => p,
            None => self.psel[slot].choice(),
        }
    }
    /// Selector of `agent`.
    pub fn psel(&self, agent: Agent) -> &Psel {
        &self.psel[self.slot(agent)]
    }
    /// Number of agents (selectors).
    pub fn agents(&self) -> usize {
        self.psel.len()
    }
    /// Name of the agent in slot `i`, for statistics.
    pub fn agent_name(&self, i: usize) -> String {
        slot_name(i, self.n_cpus)
    }
    pub fn psel_at(&self, i: usize) -> &Psel {
        &self.psel[i]
    }
}

/// A per-agent duel between an insertion near the top of the stack (policy 0) and its bimodal
/// form (policy 1), each agent with its own selector, leaders and throttle: TA-DRRIP's SRRIP
/// against BRRIP (drp §2.1) and TADIP's MRU insertion against BIP (tap §5.7), both after
/// Jaleel et al.'s thread-aware duels (PACT 2008). An agent's demand misses in its own
/// leaders train its selector; in every other set it follows its own selector.
#[derive(Clone, Debug)]
pub struct AgentBimodalDuel {
    duel: AgentDuel,
    bimodal: Vec<Bimodal>,
}

impl AgentBimodalDuel {
    /// Leaders and selectors from `ctx` ([`AgentDuel::from_ctx`]); every agent's throttle
    /// starts as `throttle`.
    pub fn from_ctx(ctx: &PolicyContext, throttle: Bimodal) -> Result<Self, CacheError> {
        Ok(AgentBimodalDuel {
            duel: AgentDuel::from_ctx(ctx)?,
            bimodal: vec![throttle; ctx.agents()],
        })
    }
    /// A miss of `req` in `set`: trains its agent's selector if it is a demand miss in one of
    /// the agent's leaders.
    #[inline]
    pub fn record_miss(&mut self, set: usize, req: &Access) {
        if is_demand(req.op) {
            self.duel.record_miss(set, req.agent);
        }
    }
    /// True if a fill of `agent` in `set` inserts near: always under policy 0, once per
    /// throttle period of the agent's under the bimodal policy 1.
    #[inline]
    pub fn inserts_near(&mut self, set: usize, agent: Agent) -> bool {
        self.duel.policy(set, agent) == 0 || self.bimodal_near(agent)
    }
    /// `agent`'s next bimodal insertion: true (near) once per throttle period.
    #[inline]
    pub fn bimodal_near(&mut self, agent: Agent) -> bool {
        let slot = self.duel.slot(agent);
        self.bimodal[slot].insertion() == RRPV_LONG
    }
    /// The duel's leaders and selectors.
    pub fn duel(&self) -> &AgentDuel {
        &self.duel
    }
    /// Per agent: `psel.<agent>` and `followers_<bimodal>.<agent>` (1 while its followers
    /// insert bimodally).
    pub fn push_stats(&self, stats: &mut Vec<PolicyStat>, bimodal: &str) {
        for i in 0..self.duel.agents() {
            let name = self.duel.agent_name(i);
            let p = self.duel.psel_at(i);
            stats.push((format!("psel.{name}"), p.value() as f64));
            stats.push((format!("followers_{bimodal}.{name}"), p.choice() as f64));
        }
    }
}
