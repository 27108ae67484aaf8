//! Shared building blocks of the policies: saturating counters, a deterministic RNG, RRIP
//! victim selection, set sampling and set dueling (global and per agent). The heterogeneous
//! baseline's write rules built from them are [`super::hetero_writes::HeteroWrites`].
//!
//! Above 800 lines because a third of it is the unit tests of these blocks.
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
//! A second, independent duel (the depth-write bypass duel of [`super::hetero_writes::HeteroWrites`]) uses the
//! *spare* offset `d = m - 1`, which no thread below `m/2 - 1` uses: among the sets with that
//! offset (one per value of `b`), group 0 is `b % 4 == 0` and group 1 is `b % 4 == 2`, i.e.
//! 8 sets of each group per 1024 sets. When the cache has fewer than 4 values of `b`
//! (64 to 127 sets, or fewer), group 0 is `b == 0` and group 1 is `b == 1`, so every cache of
//! at least 4 sets has one set of each group. These groups are disjoint from the DRRIP
//! leaders and from the TA-DRRIP leaders of up to 15 agents (14 CPU cores and the GPU) in
//! every cache of ≥ 64 sets.
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

use crate::params::{ParamKind, ParamSpec};
use crate::wayset::WayBits;
use crate::{CacheError, PolicyContext};
use apusim_trace::{Agent, Op};

// ---------------------------------------------------------------------------------------------
// Saturating counters

/// An n-bit saturating counter (1 ≤ n ≤ 31).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SatCounter {
    value: u32,
    max: u32,
}

impl SatCounter {
    /// A counter of `bits` bits starting at `init` (clamped to the maximum).
    pub fn new(bits: u32, init: u32) -> SatCounter {
        assert!(
            (1..=31).contains(&bits),
            "counter width {bits} out of range"
        );
        let max = (1u32 << bits) - 1;
        SatCounter {
            value: init.min(max),
            max,
        }
    }
    #[inline]
    pub fn get(&self) -> u32 {
        self.value
    }
    #[inline]
    pub fn max(&self) -> u32 {
        self.max
    }
    #[inline]
    pub fn inc(&mut self) {
        if self.value < self.max {
            self.value += 1;
        }
    }
    #[inline]
    pub fn dec(&mut self) {
        self.value = self.value.saturating_sub(1);
    }
    #[inline]
    pub fn is_zero(&self) -> bool {
        self.value == 0
    }
    #[inline]
    pub fn is_max(&self) -> bool {
        self.value == self.max
    }
    /// The most significant bit of the counter.
    #[inline]
    pub fn msb(&self) -> bool {
        self.value > self.max / 2
    }
}

/// Saturating increment of a small counter stored in a byte table.
#[inline]
pub fn sat_inc(c: &mut u8, max: u8) {
    if *c < max {
        *c += 1;
    }
}

/// Saturating decrement of a small counter stored in a byte table.
#[inline]
pub fn sat_dec(c: &mut u8) {
    *c = c.saturating_sub(1);
}

// ---------------------------------------------------------------------------------------------
// Deterministic randomness

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, well-mixed deterministic generator.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }
    /// Seeded from the policy context.
    pub fn from_ctx(ctx: &PolicyContext) -> SplitMix64 {
        SplitMix64::new(ctx.seed)
    }
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// A uniform value in `0..n` (multiply-high; `n` must be positive).
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

// ---------------------------------------------------------------------------------------------
// RRIP

/// Largest re-reference prediction value of a 2-bit RRIP policy ("distant").
pub const RRPV_MAX: u8 = 3;
/// SRRIP's insertion value `2^n - 2` ("long").
pub const RRPV_LONG: u8 = 2;

/// Prefetch hint for `v[i]` (never faults; a no-op off x86-64).
#[inline(always)]
pub fn prefetch<T>(v: &[T], i: usize) {
    let p = v.as_ptr().wrapping_add(i);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint that never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// RRIP victim selection on the RRPVs of one set: the lowest way whose RRPV is
/// [`RRPV_MAX`], after aging every line by the same amount until one reaches it (equivalent to
/// repeatedly incrementing every RRPV by one, done in one step).
#[inline]
pub fn rrip_victim(rrpv: &mut [u8]) -> usize {
    rrip_victim_max(rrpv, RRPV_MAX)
}

/// [`rrip_victim`] for RRPVs of any width: `distant` is the largest RRPV, `2^n - 1` for
/// n-bit RRPVs (the 4-bit iso-overhead comparators of gspc-graphics-stream-llc.txt §5.2).
#[inline]
pub fn rrip_victim_max(rrpv: &mut [u8], distant: u8) -> usize {
    match <&mut [u8; 16]>::try_from(&mut *rrpv) {
        Ok(set) => crate::simd::rrip_victim_16(set, distant),
        Err(_) => rrip_victim_scan(rrpv, distant),
    }
}

/// [`rrip_victim_max`] for any number of ways: one early-exit pass, then the aging.
#[inline]
fn rrip_victim_scan(rrpv: &mut [u8], distant: u8) -> usize {
    let mut max = 0u8;
    let mut way = 0usize;
    for (w, &v) in rrpv.iter().enumerate() {
        if v >= distant {
            return w;
        }
        if v > max {
            max = v;
            way = w;
        }
    }
    let age = distant - max;
    for v in rrpv.iter_mut() {
        *v += age;
    }
    way
}

/// The per-line RRPVs of an RRIP-family policy, `set * ways + way`, all starting distant, with
/// the SRRIP victim search of [`rrip_victim_max`].
///
/// Compact sets keep the RRPVs themselves and scan the set for the victim. Wide sets
/// ([`crate::SetLayout`]) keep, per set, one [`WayBits`] bucket per RRPV value and an aging
/// offset: a line in bucket `b` has RRPV `(b + age) mod (distant + 1)`, so setting an RRPV
/// moves one way between two buckets, and aging every line of the set by `k` (the victim
/// search) is `age += k`: the buckets of the values that would pass the distant value are
/// empty at that moment, so the rotation renames buckets without moving a line. The victim,
/// the lowest way of the distant bucket after the aging, is the compact search's.
#[derive(Clone, Debug)]
pub struct RrpvTable {
    ways: usize,
    distant: u8,
    /// Compact: the RRPV of every line. Wide: the bucket of every line.
    v: Vec<u8>,
    wide: Option<Box<RrpvBuckets>>,
}

/// The buckets of wide sets (see [`RrpvTable`]). Their steps stay out of line, so that the
/// compact sets' inlined hooks keep their size.
#[derive(Clone, Debug)]
struct RrpvBuckets {
    distant: u8,
    bits: WayBits,
    /// Per set: the aging offset.
    age: Vec<u8>,
    /// Per set and bucket (set-major): the ways in the bucket.
    words: Vec<u64>,
}

impl RrpvBuckets {
    #[inline]
    fn bucket(&mut self, set: usize, values: usize, b: u8) -> &mut [u64] {
        let s = self.bits.stride();
        let at = (set * values + b as usize) * s;
        &mut self.words[at..at + s]
    }

    /// Give `way` of `set`, now in bucket `*bucket`, the RRPV `rrpv`.
    #[inline(never)]
    fn set(&mut self, set: usize, way: usize, bucket: &mut u8, rrpv: u8) {
        let (values, bits) = (self.distant as usize + 1, self.bits);
        let new = rrpv.wrapping_sub(self.age[set]) & self.distant;
        let old = *bucket;
        if old != new {
            bits.remove(self.bucket(set, values, old), way);
            bits.insert(self.bucket(set, values, new), way);
            *bucket = new;
        }
    }

    /// The SRRIP victim of a full `set`, aging it as needed.
    #[inline(never)]
    fn victim(&mut self, set: usize) -> usize {
        let (values, bits, age, distant) = (
            self.distant as usize + 1,
            self.bits,
            self.age[set],
            self.distant,
        );
        // The largest RRPV present (every way is in some bucket, so the loop ends).
        let mut top = distant;
        let bucket = loop {
            let b = top.wrapping_sub(age) & distant;
            if !bits.is_empty(self.bucket(set, values, b)) || top == 0 {
                break b;
            }
            top -= 1;
        };
        self.age[set] = age.wrapping_add(distant - top) & distant;
        let way = bits.first(self.bucket(set, values, bucket));
        debug_assert!(way.is_some(), "every way of a set is in one of its buckets");
        way.unwrap_or(0)
    }
}

impl RrpvTable {
    /// 2-bit RRPVs ([`RRPV_MAX`] distant).
    pub fn new(ctx: &PolicyContext) -> RrpvTable {
        RrpvTable::with_distant(ctx, RRPV_MAX)
    }

    /// RRPVs `0..=distant`; sets are wide when `ctx` says so and `distant + 1` is a power of
    /// two (`2^n - 1` for n-bit RRPVs).
    pub fn with_distant(ctx: &PolicyContext, distant: u8) -> RrpvTable {
        let values = distant as usize + 1;
        let wide = (ctx.wide_sets() && values.is_power_of_two()).then(|| {
            let bits = WayBits::new(ctx.ways);
            let mut words = vec![0; ctx.sets * values * bits.stride()];
            for set in words.chunks_exact_mut(values * bits.stride()) {
                bits.fill(&mut set[distant as usize * bits.stride()..]);
            }
            Box::new(RrpvBuckets {
                distant,
                bits,
                age: vec![0; ctx.sets],
                words,
            })
        });
        RrpvTable {
            ways: ctx.ways,
            distant,
            // Age 0: a line's bucket is its RRPV, so both start at `distant`.
            v: vec![distant; ctx.sets * ctx.ways],
            wide,
        }
    }

    /// True if the sets are wide (bucketed).
    pub fn is_wide(&self) -> bool {
        self.wide.is_some()
    }

    #[inline]
    pub fn get(&self, set: usize, way: usize) -> u8 {
        let v = self.v[set * self.ways + way];
        match self.wide.as_deref() {
            None => v,
            Some(w) => v.wrapping_add(w.age[set]) & self.distant,
        }
    }

    #[inline]
    pub fn set(&mut self, set: usize, way: usize, rrpv: u8) {
        let i = set * self.ways + way;
        match self.wide.as_deref_mut() {
            None => self.v[i] = rrpv,
            Some(w) => w.set(set, way, &mut self.v[i], rrpv),
        }
    }

    /// The victim of a full `set` (ages the set as needed).
    #[inline]
    pub fn victim(&mut self, set: usize) -> usize {
        match self.wide.as_deref_mut() {
            None => {
                let base = set * self.ways;
                rrip_victim_max(&mut self.v[base..base + self.ways], self.distant)
            }
            Some(w) => w.victim(set),
        }
    }

    #[inline]
    pub fn prefetch(&self, set: usize) {
        prefetch(&self.v, set * self.ways);
    }
}

/// BRRIP's bimodal insertion throttle: every `every`-th insertion (the 32nd, 64th, ... by
/// default) is "long" ([`RRPV_LONG`]), all others "distant" ([`RRPV_MAX`]). Deterministic, so
/// runs are reproducible without a seed.
#[derive(Clone, Debug)]
pub struct Bimodal {
    count: u32,
    every: u32,
}

/// BRRIP's throttle: one long insertion in 32 by default (drp-reuse-probability-shared-llc.txt
/// §2.1's BRRIP, after the RRIP paper's ε = 1/32).
pub const BRRIP_THROTTLE: ParamSpec = ParamSpec {
    name: "brrip_throttle",
    kind: ParamKind::Int { min: 1, max: 1 << 20 },
    default: "32",
    unit: "insertions",
    doc: "BRRIP inserts one line in this many at the long RRPV, the rest at the distant one (drp §2.1)",
};

impl Bimodal {
    pub fn new(every: u32) -> Bimodal {
        Bimodal {
            count: 0,
            every: every.max(1),
        }
    }
    /// The throttle of parameter [`BRRIP_THROTTLE`].
    pub fn from_ctx(ctx: &PolicyContext) -> Result<Bimodal, CacheError> {
        Ok(Bimodal::new(ctx.int(&BRRIP_THROTTLE)? as u32))
    }
    /// The RRPV of the next bimodal insertion.
    #[inline]
    pub fn insertion(&mut self) -> u8 {
        self.count += 1;
        if self.count >= self.every {
            self.count = 0;
            RRPV_LONG
        } else {
            RRPV_MAX
        }
    }
}

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

// ---------------------------------------------------------------------------------------------
// Set sampling

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
    /// Width from the width parameter `spec` ([`PSEL_BITS`], [`super::hetero_writes::DEPTH_PSEL_BITS`]).
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

// ---------------------------------------------------------------------------------------------
// Test support

/// Helpers shared by the policies' unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    use crate::{Cache, Geometry, Outcome, Policy, PolicyContext, WritePolicy};
    use apusim_trace::{Access, Agent, Op, Stream};

    pub const LINE: u64 = 64;

    pub fn geometry(sets: usize, ways: usize) -> Geometry {
        Geometry::new((sets * ways) as u64 * LINE, ways as u32, LINE as u32)
    }
    pub fn ctx(sets: usize, ways: usize) -> PolicyContext {
        PolicyContext::for_geometry(&geometry(sets, ways))
    }
    /// A write-back, write-allocate cache of `sets` x `ways` 64-byte lines, not inclusive.
    pub fn cache<P: Policy>(sets: usize, ways: usize, p: P) -> Cache<P> {
        Cache::new(geometry(sets, ways), WritePolicy::default(), false, p).unwrap()
    }
    /// Build `P` for `sets` x `ways` and put it in a cache.
    pub fn cache_of<P: Policy>(sets: usize, ways: usize) -> Cache<P> {
        cache(sets, ways, P::build(&ctx(sets, ways)).unwrap())
    }
    pub fn cpu_read(line: u64) -> Access {
        Access::new(Agent::cpu(0), Stream::CpuData, Op::Read, line * LINE, 8)
    }
    pub fn gpu(stream: Stream, op: Op, line: u64) -> Access {
        Access::new(Agent::GPU, stream, op, line * LINE, 64)
    }
    /// What one access did: `Hit`, `Fill(None)`, `Fill(Some(evicted line))` or `Bypass`.
    #[derive(Debug, PartialEq, Eq, Clone, Copy)]
    pub enum Did {
        Hit,
        Fill(Option<u64>),
        Bypass,
    }
    pub fn run<P: Policy>(c: &mut Cache<P>, a: &Access) -> Did {
        match c.access(a).unwrap() {
            Outcome::Hit { .. } => Did::Hit,
            Outcome::Miss {
                filled: true,
                evicted,
                ..
            } => Did::Fill(evicted.map(|e| e.line)),
            Outcome::Miss { .. } => Did::Bypass,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;

    #[test]
    fn splitmix64_matches_reference_vectors() {
        let mut r = SplitMix64::new(1234567);
        let want = [
            6457827717110365317u64,
            3203168211198807973,
            9817491932198370423,
            4593380528125082431,
            16408922859458223821,
        ];
        for w in want {
            assert_eq!(r.next_u64(), w);
        }
        let mut r = SplitMix64::new(7);
        for _ in 0..1000 {
            assert!(r.below(16) < 16);
        }
    }

    #[test]
    fn saturating_counters_saturate() {
        let mut c = SatCounter::new(3, 6);
        c.inc();
        c.inc();
        assert_eq!(c.get(), 7);
        assert!(c.is_max() && c.msb());
        for _ in 0..10 {
            c.dec();
        }
        assert!(c.is_zero() && !c.msb());
        c.inc();
        c.inc();
        c.inc();
        assert!(!c.msb());
        c.inc();
        assert!(c.msb(), "4 of 0..=7 has the MSB set");
        let mut b = 6u8;
        sat_inc(&mut b, 7);
        sat_inc(&mut b, 7);
        assert_eq!(b, 7);
        b = 0;
        sat_dec(&mut b);
        assert_eq!(b, 0);
    }

    #[test]
    fn psel_starts_at_policy_0_and_flips_on_one_net_miss() {
        let mut p = Psel::new(10);
        assert_eq!((p.value(), p.choice()), (511, 0));
        p.record_miss(0);
        assert_eq!((p.value(), p.choice()), (512, 1));
        p.record_miss(1);
        assert_eq!(p.choice(), 0);
        for _ in 0..5000 {
            p.record_miss(0);
        }
        assert_eq!(p.value(), 1023);
        for _ in 0..5000 {
            p.record_miss(1);
        }
        assert_eq!(p.value(), 0);
    }

    proptest::proptest! {
        /// The branch-free 16-way victim search equals the scan for every set state (RRPVs
        /// never exceed the distant value), both in the victim and in the aged RRPVs.
        #[test]
        fn victim_16_matches_scan(
            raw in proptest::array::uniform16(0u8..=15),
            distant in 3u8..=15,
        ) {
            let mut set = raw.map(|v| v.min(distant));
            let mut scanned = set;
            let want = rrip_victim_scan(&mut scanned, distant);
            proptest::prop_assert_eq!(crate::simd::rrip_victim_16(&mut set, distant), want);
            proptest::prop_assert_eq!(set, scanned);
        }
    }

    #[test]
    fn rrip_victim_ages_then_picks_lowest_distant_way() {
        let mut s = [1, 2, 0, 2];
        assert_eq!(rrip_victim(&mut s), 1);
        assert_eq!(s, [2, 3, 1, 3]);
        let mut s = [0, 3, 3, 1];
        assert_eq!(rrip_victim(&mut s), 1);
        assert_eq!(s, [0, 3, 3, 1], "no aging when a distant line exists");
        let mut s = [0, 0];
        assert_eq!(rrip_victim(&mut s), 0);
        assert_eq!(s, [3, 3]);
    }

    #[test]
    fn bimodal_inserts_long_once_in_32() {
        let mut b = Bimodal::new(32);
        let v: Vec<u8> = (0..64).map(|_| b.insertion()).collect();
        for (i, &x) in v.iter().enumerate() {
            let want = if i % 32 == 31 { RRPV_LONG } else { RRPV_MAX };
            assert_eq!(x, want, "insertion {i}");
        }
    }

    #[test]
    fn complement_select_matches_the_1024_set_rule() {
        for sets in [1024usize, 4096, 6144, 16384] {
            let s = SetSampler::new(sets);
            for t in 0..16 {
                let (mut n0, mut n1) = (0, 0);
                for set in 0..sets {
                    let a = set & 31;
                    let b = (set >> 5) & 31;
                    let want = if b == (a + 2 * t) % 32 {
                        Some(0)
                    } else if b == (a + 2 * t + 1) % 32 {
                        Some(1)
                    } else {
                        None
                    };
                    assert_eq!(s.leader(set, t), want, "sets {sets} set {set} t {t}");
                    n0 += (want == Some(0)) as usize;
                    n1 += (want == Some(1)) as usize;
                }
                assert_eq!((n0, n1), (32 * sets / 1024, 32 * sets / 1024));
            }
        }
    }

    #[test]
    fn every_cache_of_64_or_more_sets_has_both_leader_kinds() {
        for sets in [
            4usize, 8, 16, 32, 48, 64, 96, 100, 128, 256, 512, 768, 2048, 3000,
        ] {
            let s = SetSampler::new(sets);
            let threads = if sets >= 64 { 16 } else { s.distinct_threads() };
            for t in 0..threads {
                let n0 = (0..sets).filter(|&x| s.leader(x, t) == Some(0)).count();
                let n1 = (0..sets).filter(|&x| s.leader(x, t) == Some(1)).count();
                assert!(n0 >= 2 && n1 >= 2, "sets {sets} thread {t}: {n0} {n1}");
                if sets >= 64 {
                    let per = (sets as f64) / 32.0;
                    assert!((n0 as f64 - per).abs() <= 1.0, "density, sets {sets}");
                }
            }
            // Leaders of different threads never overlap.
            for x in 0..sets {
                let owners = (0..threads).filter(|&t| s.leader(x, t).is_some()).count();
                assert!(owners <= 1, "set {x} of {sets} led by {owners} threads");
            }
        }
        let tiny = SetSampler::new(2);
        assert_eq!(tiny.leader(0, 0), None);
        assert_eq!(tiny.spare_leader(1), None);
    }

    #[test]
    fn depth_groups_are_8_per_1k_and_disjoint_from_rrip_leaders() {
        for sets in [64usize, 96, 128, 1024, 4096, 6144, 16384] {
            let s = SetSampler::new(sets);
            let g0: Vec<usize> = (0..sets)
                .filter(|&x| s.spare_leader(x) == Some(0))
                .collect();
            let g1: Vec<usize> = (0..sets)
                .filter(|&x| s.spare_leader(x) == Some(1))
                .collect();
            assert!(!g0.is_empty() && !g1.is_empty(), "sets {sets}");
            if sets >= 1024 {
                assert_eq!(g0.len(), 8 * sets / 1024);
                assert_eq!(g1.len(), 8 * sets / 1024);
            }
            for &x in g0.iter().chain(&g1) {
                for t in 0..15 {
                    assert_eq!(
                        s.leader(x, t),
                        None,
                        "set {x} of {sets} also leads thread {t}"
                    );
                }
            }
        }
        // The concrete 1K groups: offset 31 sets, b = 0, 4, ... and b = 2, 6, ...
        let s = SetSampler::new(1024);
        assert_eq!(s.spare_leader(1), Some(0)); // a = 1, b = 0
        assert_eq!(s.spare_leader(2 * 32 + 3), Some(1)); // a = 3, b = 2
        assert_eq!(s.spare_leader(32 + 2), None); // a = 2, b = 1
    }

    #[test]
    fn set_duel_trains_on_leader_misses_only() {
        let mut c = ctx(64, 4);
        c.params.insert("psel_bits".into(), 4.0);
        let mut d = SetDuel::from_ctx(&c).unwrap();
        assert_eq!(d.psel().value(), 7);
        assert_eq!(
            (d.leader(0), d.leader(31), d.leader(5)),
            (Some(0), Some(1), None)
        );
        d.record_miss(5);
        assert_eq!(d.psel().value(), 7);
        d.record_miss(0);
        assert_eq!((d.psel().value(), d.policy(5), d.policy(0)), (8, 1, 0));
        d.record_miss(31);
        d.record_miss(32);
        assert_eq!((d.psel().value(), d.policy(5), d.policy(33)), (6, 0, 0));
        c.params.insert("psel_bits".into(), 40.0);
        assert!(SetDuel::from_ctx(&c).is_err());
    }

    #[test]
    fn set_duel_leaders_are_thread_0_of_the_sampler() {
        for sets in [1, 2, 3, 4, 5, 8, 63, 64, 100, 1000, 1024, 3000, 16384] {
            let d = SetDuel::from_ctx(&ctx(sets, 4)).unwrap();
            let s = SetSampler::new(sets);
            let mut leaders = [0; 2];
            for set in 0..sets {
                assert_eq!(d.leader(set), s.leader(set, 0), "set {set} of {sets}");
                if let Some(p) = d.leader(set) {
                    leaders[p as usize] += 1;
                }
            }
            if sets >= 4 {
                assert!(
                    leaders[0] >= 2 && leaders[1] >= 2,
                    "{sets} sets: {leaders:?}"
                );
            } else {
                assert_eq!(leaders, [0, 0], "{sets} sets");
            }
        }
    }

    #[test]
    fn agent_duel_keeps_one_selector_per_agent() {
        let mut c = ctx(64, 4);
        c.n_cpus = 2;
        let mut d = AgentDuel::from_ctx(&c).unwrap();
        assert_eq!(d.agents(), 3);
        // The GPU is thread 2, so offset 4 marks its policy-0 leaders: set 28 has a = 28,
        // b = 0, offset (0 - 28) mod 32 = 4.
        assert_eq!(d.leader(28, Agent::GPU), Some(0));
        assert_eq!(d.leader(28, Agent::cpu(0)), None);
        d.record_miss(28, Agent::cpu(0));
        assert_eq!(d.psel(Agent::cpu(0)).value(), 511, "not cpu0's leader");
        d.record_miss(28, Agent::GPU);
        assert_eq!(d.psel(Agent::GPU).value(), 512);
        assert_eq!(d.policy(5, Agent::GPU), 1);
        assert_eq!(d.policy(5, Agent::cpu(1)), 0);
        // In the GPU's leader set, cpu1 follows its own selector.
        assert_eq!(d.policy(28, Agent::cpu(1)), 0);
        assert_eq!(agent_slot(Agent::cpu(5), 2), 1, "extra cores fold");
        assert_eq!(agent_slot(Agent::GPU, 2), 2);
    }
}
