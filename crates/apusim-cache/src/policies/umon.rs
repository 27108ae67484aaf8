//! Shared machinery of the partitioning policies (tap-tlp-aware-llc.txt §2.3.1, §3.3 and
//! Appendix A): an explicit per-set LRU stack, utility monitors (UMONs) on sampled sets, UCP's
//! look-ahead partitioning algorithm (Algorithm 1), and quota-driven victim selection.
//!
//! # LRU stack
//!
//! [`LruStack`] keeps one byte per line: its stack position, 0 the MRU and `ways - 1` the LRU.
//! The positions of a set are always a permutation of `0..ways` (they start as `pos = way`
//! and the only operation, [`LruStack::move_to`], moves one way to a position and shifts the
//! ways in between by one), so insertion at any position (PIPP, TADIP's BIP), MRU promotion
//! (UCP) and single-step promotion (PIPP) are all `move_to`. Ways invalidated behind the
//! policy's back keep their position until the engine refills them.
//!
//! # UMON
//!
//! [`Umon`] keeps, for every agent (each CPU core and the GPU are the "applications"), a
//! shadow tag directory of the sampled sets with the cache's associativity and true LRU, as if
//! the agent had the cache to itself, and one hit counter per LRU stack position (UCP's UMON
//! with dynamic set sampling). A sampled set is one whose index fields `a = set & (m-1)` and
//! `b = (set >> k) & (m-1)` are equal, with `k = min(5, floor(log2(sets) / 2))` and
//! `m = 2^k`: 32 sets per 1024 (128 of an 8 MB 32-way LLC's 4096 sets), every set of a cache
//! of fewer than 4 sets. Only demand accesses (op `read` or `write`) train it.
//!
//! # Look-ahead partitioning
//!
//! [`lookahead`] is Algorithm 1 of the TAP paper (UCP's look-ahead algorithm with TAP's two
//! changes supplied by the caller: hit counters already divided by XSRATIO and an `eligible`
//! flag per application). Choices where the paper is silent: every application first gets one
//! way, as in UCP \[21\] (so an application left out of the allocation — the GPU under
//! UCP-Mask, a streaming CPU under TAP-S — keeps exactly "one way", §3.3 and §5.3); ties of
//! marginal utility go to the smallest block request, then to the lowest agent index (CPU
//! cores before the GPU); when no application is eligible the leftover ways go to agent 0.

use super::util::{agent_slot, is_demand, slot_name};
use crate::{PolicyContext, PolicyStat, SetView};
use apusim_trace::{Access, Agent};

// ---------------------------------------------------------------------------------------------
// LRU stack

/// Explicit LRU stack positions of every line (0 = MRU).
#[derive(Clone, Debug)]
pub struct LruStack {
    ways: usize,
    pos: Vec<u8>,
}

impl LruStack {
    /// Largest associativity a byte-wide stack position can serve.
    pub const MAX_WAYS: usize = 256;

    pub fn new(sets: usize, ways: usize) -> LruStack {
        assert!(ways <= Self::MAX_WAYS);
        LruStack {
            ways,
            pos: (0..sets * ways).map(|i| (i % ways) as u8).collect(),
        }
    }
    /// The positions of `set`'s ways.
    #[inline]
    pub fn set(&self, set: usize) -> &[u8] {
        &self.pos[set * self.ways..(set + 1) * self.ways]
    }
    /// Stack position of a line (0 = MRU).
    #[inline]
    pub fn pos(&self, set: usize, way: usize) -> usize {
        self.pos[set * self.ways + way] as usize
    }
    /// Move `way` to position `to`, shifting the ways in between by one.
    #[inline]
    pub fn move_to(&mut self, set: usize, way: usize, to: usize) {
        let s = &mut self.pos[set * self.ways..(set + 1) * self.ways];
        let from = s[way];
        let to = to.min(self.ways - 1) as u8;
        if to < from {
            for x in s.iter_mut() {
                *x += (*x >= to && *x < from) as u8;
            }
        } else if to > from {
            for x in s.iter_mut() {
                *x -= (*x > from && *x <= to) as u8;
            }
        }
        s[way] = to;
    }
    /// The way at the LRU position.
    #[inline]
    pub fn lru(&self, set: usize) -> usize {
        let last = (self.ways - 1) as u8;
        self.set(set).iter().position(|&p| p == last).unwrap_or(0)
    }
    /// The least recent way among those `candidate` accepts, if any.
    #[inline]
    pub fn lru_among(&self, set: usize, mut candidate: impl FnMut(usize) -> bool) -> Option<usize> {
        let mut best: Option<(u8, usize)> = None;
        for (w, &p) in self.set(set).iter().enumerate() {
            if best.is_none_or(|(bp, _)| p > bp) && candidate(w) {
                best = Some((p, w));
            }
        }
        best.map(|(_, w)| w)
    }
    pub fn prefetch(&self, set: usize) {
        super::util::prefetch(&self.pos, set * self.ways);
    }
}

// ---------------------------------------------------------------------------------------------
// Quota victim selection

/// Scratch space and the agent-to-class table of [`quota_victim`], sized once at build time
/// (no per-access allocation).
#[derive(Clone, Debug)]
pub struct QuotaScratch {
    /// Class of each agent byte ([`Agent::to_byte`]).
    class_of: [u8; 256],
    counts: Vec<u16>,
    over: Vec<u8>,
    class: Vec<u8>,
}

impl QuotaScratch {
    /// `classes` classes (at most 256) for a set of `ways` ways; every agent starts in class 0.
    pub fn new(classes: usize, ways: usize) -> QuotaScratch {
        assert!((1..=256).contains(&classes));
        QuotaScratch {
            class_of: [0; 256],
            counts: vec![0; classes],
            over: vec![0; classes],
            class: vec![0; ways],
        }
    }
    /// Put `agent` in class `class`.
    pub fn set_class(&mut self, agent: Agent, class: usize) {
        assert!(class < self.counts.len());
        self.class_of[agent.to_byte() as usize] = class as u8;
    }
    /// Classes by [`super::util::agent_slot`]: CPU core `i` (folded onto `n_cpus`) is class
    /// `i`, the GPU class `n_cpus`.
    pub fn by_agent(n_cpus: usize, ways: usize) -> QuotaScratch {
        let mut s = QuotaScratch::new(n_cpus + 1, ways);
        for b in 0..=Agent::GPU_ID {
            let a = Agent::from_byte(b).unwrap_or_default();
            s.set_class(a, super::util::agent_slot(a, n_cpus));
        }
        s
    }
    pub fn class(&self, agent: Agent) -> usize {
        self.class_of[agent.to_byte() as usize] as usize
    }
}

/// The way of the candidate with the largest stack position (the least recent), if any:
/// a branch-free max over `(position + 1) << 8 | way` keys.
#[inline]
fn lru_of(pos: &[u8], cand: impl Fn(usize) -> bool) -> Option<usize> {
    let mut best = 0u16;
    for (w, &p) in pos.iter().enumerate() {
        let key = (((p as u16) + 1) << 8) | w as u16;
        best = best.max(if cand(w) { key } else { 0 });
    }
    (best != 0).then_some((best & 0xFF) as usize)
}

/// UCP's replacement under a partition: count each class's lines in the (full) set; if the
/// class of the `requester` holds fewer lines than its target, evict the LRU line among the
/// classes holding more than their target (falling back to the LRU line of any other class);
/// otherwise evict the requester's own LRU line (falling back to the set's LRU line). A line's
/// class is its filling agent's class in `scratch`.
#[inline]
pub fn quota_victim(
    stack: &LruStack,
    set: usize,
    view: &SetView<'_>,
    targets: &[usize],
    requester: Agent,
    scratch: &mut QuotaScratch,
) -> usize {
    let own = scratch.class(requester);
    let QuotaScratch {
        class_of,
        counts,
        over,
        class,
    } = scratch;
    for (w, c) in class.iter_mut().enumerate() {
        *c = class_of[view.meta(w).agent.to_byte() as usize];
    }
    // One vectorizable comparison sweep per class (there are few), rather than a chain of
    // data-dependent increments.
    for (k, n) in counts.iter_mut().enumerate() {
        *n = class.iter().map(|&c| (c == k as u8) as u16).sum();
    }
    let pos = stack.set(set);
    let own_k = own as u8;
    let pick = if (counts[own] as usize) < targets[own] {
        for (o, (&n, &t)) in over.iter_mut().zip(counts.iter().zip(targets)) {
            *o = (n as usize > t) as u8;
        }
        lru_of(pos, |w| over[class[w] as usize] != 0).or_else(|| lru_of(pos, |w| class[w] != own_k))
    } else {
        lru_of(pos, |w| class[w] == own_k)
    };
    pick.unwrap_or_else(|| stack.lru(set))
}

// ---------------------------------------------------------------------------------------------
// UMON

/// Utility monitors: per-agent shadow tags on sampled sets and hit counters per stack position.
#[derive(Clone, Debug)]
pub struct Umon {
    k: u32,
    mask: usize,
    ways: usize,
    agents: usize,
    /// `[sample][agent][position]` line addresses, MRU first; `u64::MAX` is empty.
    tags: Vec<u64>,
    /// `[agent][position]` hit counters.
    hits: Vec<u64>,
    /// `[agent]` shadow-tag misses.
    misses: Vec<u64>,
}

impl Umon {
    pub fn new(sets: usize, ways: usize, agents: usize) -> Umon {
        let k = if sets < 4 {
            0
        } else {
            (sets.ilog2() / 2).min(5)
        };
        let rows = ((sets.max(1) - 1) >> k) + 1;
        Umon {
            k,
            mask: (1 << k) - 1,
            ways,
            agents,
            tags: vec![u64::MAX; rows * agents * ways],
            hits: vec![0; agents * ways],
            misses: vec![0; agents],
        }
    }
    /// Index of `set` among the sampled sets, if it is one.
    #[inline]
    pub fn sample(&self, set: usize) -> Option<usize> {
        let a = set & self.mask;
        let b = (set >> self.k) & self.mask;
        (a == b).then_some(set >> self.k)
    }
    /// A demand access of agent slot `agent` to `line` in `set` (ignored unless sampled).
    #[inline]
    pub fn access(&mut self, set: usize, agent: usize, line: u64) {
        let Some(i) = self.sample(set) else { return };
        let base = (i * self.agents + agent) * self.ways;
        let row = &mut self.tags[base..base + self.ways];
        match row.iter().position(|&t| t == line) {
            Some(p) => {
                self.hits[agent * self.ways + p] += 1;
                row[..=p].rotate_right(1);
            }
            None => {
                self.misses[agent] += 1;
                row.rotate_right(1);
                row[0] = line;
            }
        }
    }
    /// Hit counters of agent slot `agent`, by stack position (MRU first).
    pub fn hits(&self, agent: usize) -> &[u64] {
        &self.hits[agent * self.ways..(agent + 1) * self.ways]
    }
    pub fn misses(&self, agent: usize) -> u64 {
        self.misses[agent]
    }
    /// Halve every counter (UCP keeps half of the history across partitioning periods).
    pub fn halve(&mut self) {
        for h in self.hits.iter_mut().chain(self.misses.iter_mut()) {
            *h /= 2;
        }
    }
    pub fn sampled_sets(&self, sets: usize) -> usize {
        (0..sets).filter(|&s| self.sample(s).is_some()).count()
    }
}

/// Per-agent utility monitors and the look-ahead allocation they drive, as UCP
/// (tap-tlp-aware-llc.txt Appendix A, after Qureshi and Patt, MICRO 2006) and PIPP (tap
/// §2.3.2: "determined using a utility monitor as in UCP") use them: one [`Umon`] per agent
/// (CPU cores, then the GPU: [`agent_slot`]) fed the demand accesses; at the end of a period
/// the look-ahead splits the ways and the counters are halved.
#[derive(Clone, Debug)]
pub struct Utility {
    umon: Umon,
    n_cpus: usize,
    line_bits: u32,
    ways: usize,
}

impl Utility {
    pub fn from_ctx(ctx: &PolicyContext) -> Utility {
        Utility {
            umon: Umon::new(ctx.sets, ctx.ways, ctx.agents()),
            n_cpus: ctx.n_cpus,
            line_bits: ctx.line_bytes.trailing_zeros(),
            ways: ctx.ways,
        }
    }
    /// An access of `req` to `set`: the monitors see the demand ones.
    #[inline]
    pub fn observe(&mut self, set: usize, req: &Access) {
        if is_demand(req.op) {
            let slot = agent_slot(req.agent, self.n_cpus);
            self.umon.access(set, slot, req.addr >> self.line_bits);
        }
    }
    /// Every agent's hit counters by stack position, for [`Utility::allocate`].
    pub fn curves(&self) -> Vec<Vec<u64>> {
        (0..=self.n_cpus)
            .map(|i| self.umon.hits(i).to_vec())
            .collect()
    }
    /// End of a period: the look-ahead's ways per agent for the hit counters `hits` (the
    /// monitors' [`Utility::curves`], normalized as the policy does) and `eligible` agents;
    /// the monitors keep half of their counts for the next period.
    pub fn allocate(&mut self, hits: &[Vec<u64>], eligible: &[bool]) -> Vec<usize> {
        let alloc = lookahead(hits, eligible, self.ways);
        self.umon.halve();
        alloc
    }
    pub fn umon(&self) -> &Umon {
        &self.umon
    }
    /// `ways.<agent>` for every agent's share in `alloc`.
    pub fn push_ways(&self, alloc: &[usize], out: &mut Vec<PolicyStat>) {
        for (i, a) in alloc.iter().enumerate() {
            out.push((format!("ways.{}", slot_name(i, self.n_cpus)), *a as f64));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Look-ahead partitioning (Algorithm 1)

/// UCP's look-ahead algorithm: `hits[i]` are application `i`'s hit counters by stack position
/// (already divided by XSRATIO for the GPU under TAP-UCP); applications with `eligible[i]`
/// false get only their minimum. Returns ways per application, summing to `ways`.
pub fn lookahead(hits: &[Vec<u64>], eligible: &[bool], ways: usize) -> Vec<usize> {
    let n = hits.len();
    // Every application gets one way first (UCP), when there are ways enough.
    let min = usize::from(n <= ways);
    let mut alloc = vec![min; n];
    let mut balance = ways - min * n;
    // Cumulative utility curves: util[i][k] = hits with k ways.
    let util: Vec<Vec<u64>> = hits
        .iter()
        .map(|h| {
            let mut u = Vec::with_capacity(ways + 1);
            let mut s = 0;
            u.push(0);
            for k in 0..ways {
                s += h.get(k).copied().unwrap_or(0);
                u.push(s);
            }
            u
        })
        .collect();
    while balance > 0 {
        let mut winner: Option<(f64, usize, usize)> = None;
        for i in (0..n).filter(|&i| eligible[i]) {
            let a = alloc[i];
            let (mut max_mu, mut req) = (-1.0f64, 1);
            for ii in 1..=balance.min(ways - a) {
                let mu = (util[i][a + ii] - util[i][a]) as f64 / ii as f64;
                if mu > max_mu {
                    max_mu = mu;
                    req = ii;
                }
            }
            if winner.is_none_or(|(m, _, _)| max_mu > m) {
                winner = Some((max_mu, i, req));
            }
        }
        match winner {
            Some((_, i, req)) => {
                alloc[i] += req;
                balance -= req;
            }
            None => {
                alloc[0] += balance;
                balance = 0;
            }
        }
    }
    alloc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_stack_moves_keep_a_permutation() {
        let mut s = LruStack::new(2, 4);
        assert_eq!(s.set(1), &[0, 1, 2, 3]);
        s.move_to(1, 3, 0); // way 3 to MRU
        assert_eq!(s.set(1), &[1, 2, 3, 0]);
        s.move_to(1, 0, 3); // way 0 to LRU
        assert_eq!(s.set(1), &[3, 1, 2, 0]);
        s.move_to(1, 0, 2); // single step up from LRU
        assert_eq!(s.set(1), &[2, 1, 3, 0]);
        assert_eq!(s.lru(1), 2);
        assert_eq!(s.lru_among(1, |w| w != 2), Some(0));
        assert_eq!(s.lru_among(1, |_| false), None);
        assert_eq!(s.set(0), &[0, 1, 2, 3], "other sets untouched");
    }

    /// Hand-made sequence in one sampled set of a 4-way UMON, stacks MRU first in the comments.
    #[test]
    fn umon_counts_hits_by_stack_position() {
        let mut u = Umon::new(1, 4, 2);
        assert_eq!(u.sample(0), Some(0));
        let seq = [
            (0u64, None), // A: miss, stack A
            (1, None),    // B: miss, stack B A
            (2, None),    // C: miss, stack C B A
            (0, Some(2)), // A: hit at 2, stack A C B
            (0, Some(0)), // A: hit at 0
            (1, Some(2)), // B: hit at 2, stack B A C
            (3, None),    // D: miss, stack D B A C
            (4, None),    // E: miss, stack E D B A (C falls out)
            (2, None),    // C: miss again (A falls out), stack C E D B
            (1, Some(3)), // B: hit at 3, stack B C E D
        ];
        let mut want = [0u64; 4];
        let mut misses = 0;
        for (i, (line, hit)) in seq.iter().enumerate() {
            u.access(0, 1, *line);
            match hit {
                Some(p) => want[*p] += 1,
                None => misses += 1,
            }
            assert_eq!(u.hits(1), &want, "step {i}");
            assert_eq!(u.misses(1), misses, "step {i}");
        }
        assert_eq!(u.hits(0), &[0, 0, 0, 0], "agent 0 saw nothing");
        // Another agent's view of the same lines is separate.
        u.access(0, 0, 0);
        assert_eq!((u.misses(0), u.hits(0)[0]), (1, 0));
        u.halve();
        assert_eq!(u.hits(1), &[0, 0, 1, 0]);
        assert_eq!(u.misses(1), 3);
    }

    #[test]
    fn umon_samples_32_sets_per_1k() {
        let u = Umon::new(4096, 32, 5);
        assert_eq!(u.sampled_sets(4096), 128);
        let u = Umon::new(1024, 16, 2);
        assert_eq!(u.sampled_sets(1024), 32);
        assert_eq!(u.sample(33), Some(1)); // a = 1, b = 1
        assert_eq!(u.sample(34), None);
        // Unsampled sets do not count.
        let mut u = Umon::new(1024, 4, 1);
        u.access(34, 0, 7);
        u.access(34, 0, 7);
        assert_eq!((u.misses(0), u.hits(0)[0]), (0, 0));
        assert_eq!(Umon::new(3, 4, 1).sampled_sets(3), 3);
    }

    /// UCP's look-ahead on hand-computed curves, 8 ways, 2 applications (one way each first,
    /// balance 6). App 0: hits [10, 1, 1, 1, 1, 1, 1, 1]; app 1: [2, 0, 0, 30, 0, 0, 0, 0].
    /// Round 1: app 0 from 1 way: max mu = 1 (one more way); app 1 from 1 way: gains 0, 0, 30
    /// for +1, +2, +3 -> mu = 30/3 = 10 at 3 ways: app 1 wins 3 ways (4 total), balance 3.
    /// Round 2: app 0 mu 1; app 1 mu 0: app 0 gets 1; likewise the remaining two.
    #[test]
    fn lookahead_sees_past_plateaus() {
        let hits = vec![vec![10, 1, 1, 1, 1, 1, 1, 1], vec![2, 0, 0, 30, 0, 0, 0, 0]];
        assert_eq!(lookahead(&hits, &[true, true], 8), vec![4, 4]);
        // A greedy one-way-at-a-time allocator would have given app 0 everything.
        let greedy_trap = vec![vec![10, 5, 5, 5, 5, 5, 5, 5], vec![2, 0, 0, 30, 0, 0, 0, 0]];
        // Round 1: app 0 mu 5, app 1 mu 10 (3 ways): app 1 -> 4 ways; rest to app 0.
        assert_eq!(lookahead(&greedy_trap, &[true, true], 8), vec![4, 4]);
        // Dividing app 1's counters by XSRATIO = 10 (TAP-UCP) makes its mu 1: app 0 wins all.
        let scaled = vec![vec![10, 5, 5, 5, 5, 5, 5, 5], vec![0, 0, 0, 3, 0, 0, 0, 0]];
        assert_eq!(lookahead(&scaled, &[true, true], 8), vec![7, 1]);
        // UCP-Mask: the ineligible application keeps one way.
        assert_eq!(lookahead(&hits, &[true, false], 8), vec![7, 1]);
        // No hits anywhere: ties go to the lowest index one way at a time.
        let zero = vec![vec![0; 4]; 3];
        assert_eq!(lookahead(&zero, &[true; 3], 4), vec![2, 1, 1]);
        // More applications than ways: nobody gets a guaranteed way.
        assert_eq!(lookahead(&zero, &[true; 3], 2), vec![2, 0, 0]);
        assert_eq!(lookahead(&zero, &[false; 3], 4), vec![2, 1, 1]);
    }
}
