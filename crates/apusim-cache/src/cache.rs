//! The set-associative cache engine, generic over its [`Policy`].

use crate::lineindex::LineIndex;
use crate::policy::{Evicted, MissAction, Policy, SetView};
use crate::tagword::{
    pack, word_line, word_meta, LineMeta, AGENT_SHIFT, FLAG_SHIFT, INVALID, LINE_MASK,
};
use crate::wayset::WayBits;
use crate::{CacheError, Geometry, LineWords, SetLayout};
use apusim_trace::{Access, Op};

pub use crate::tagword::MAX_LINE;

/// How a level treats writes.
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize, serde::Deserialize)]
pub struct WritePolicy {
    /// Write-back (dirty lines written on eviction) or write-through (every write forwarded).
    pub write_back: bool,
    /// Allocate a line on a write miss.
    pub write_allocate: bool,
}

impl Default for WritePolicy {
    fn default() -> Self {
        WritePolicy {
            write_back: true,
            write_allocate: true,
        }
    }
}

/// What one access did to one cache level.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Outcome {
    Hit {
        /// The level is write-through and the access was a write: forward it.
        write_through: bool,
    },
    Miss {
        /// The line was installed.
        filled: bool,
        /// The policy chose not to allocate (as opposed to write-no-allocate).
        bypassed: bool,
        /// The valid line that made room for it.
        evicted: Option<Evicted>,
    },
}

impl Outcome {
    pub fn is_hit(&self) -> bool {
        matches!(self, Outcome::Hit { .. })
    }
}

/// Counters every level keeps, independent of who asked.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CacheCounters {
    pub hits: u64,
    pub misses: u64,
    pub fills: u64,
    pub bypasses: u64,
    pub evictions: u64,
    pub dirty_evictions: u64,
    pub invalidations: u64,
}

/// A set-associative cache: tags and engine metadata in flat arrays, plus a policy.
///
/// Lookups in compact sets scan the ways of one set; wide sets ([`SetLayout`]) look the line
/// up in a hash index and keep a bit set of their invalid ways, so no step of an access scans
/// the set. The set index is the line address masked (power-of-two set counts) or taken
/// modulo the set count (any other count).
pub struct Cache<P> {
    geometry: Geometry,
    line_bits: u32,
    sets: u64,
    set_mask: Option<u64>,
    ways: usize,
    write: WritePolicy,
    cpu_inclusive: bool,
    /// One word per way (its layout: [`crate::tagword`]), `sets * ways` long, starting a host
    /// cache line (so that a 16-way set is two host lines, both prefetched by
    /// [`Cache::prefetch`]).
    tags: LineWords,
    /// Valid ways in the whole cache: once every way is valid (the steady state), a miss
    /// skips the search for an invalid way.
    valid: usize,
    /// The lookup structures of wide sets, `None` for compact ones.
    wide: Option<Box<WideSets>>,
    policy: P,
    counters: CacheCounters,
}

/// What a cache of wide sets keeps beside its tag array: where each resident line is, and
/// which ways of each set are invalid (the engine fills the lowest one first, as it does in a
/// compact set).
struct WideSets {
    /// Line address → way of every resident line.
    index: LineIndex,
    bits: WayBits,
    /// Per set, [`WayBits::stride`] words: its invalid ways.
    invalid: Vec<u64>,
}

impl WideSets {
    fn new(sets: usize, ways: usize) -> WideSets {
        let bits = WayBits::new(ways);
        let mut invalid = vec![0; sets * bits.stride()];
        for set in invalid.chunks_exact_mut(bits.stride()) {
            bits.fill(set);
        }
        WideSets {
            index: LineIndex::with_capacity(sets * ways),
            bits,
            invalid,
        }
    }
    #[inline]
    fn invalid_of(&mut self, set: usize) -> &mut [u64] {
        let s = self.bits.stride();
        &mut self.invalid[set * s..(set + 1) * s]
    }

    // The wide-set steps stay out of line, so that the compact sets' inlined access path
    // keeps its size (a hash lookup dwarfs the call).

    #[inline(never)]
    fn find(&self, line: u64) -> Option<usize> {
        self.index.get(line).map(|way| way as usize)
    }

    /// The lowest invalid way of `set`, now taken.
    #[inline(never)]
    fn take_invalid(&mut self, set: usize) -> Option<usize> {
        let bits = self.bits;
        let free = self.invalid_of(set);
        let way = bits.first(free);
        if let Some(way) = way {
            bits.remove(free, way);
        }
        way
    }

    /// `line` now lives in `way`, in place of `evicted` if any.
    #[inline(never)]
    fn install(&mut self, evicted: Option<u64>, line: u64, way: usize) {
        if let Some(old) = evicted {
            self.index.remove(old);
        }
        self.index.insert(line, 0, way as u64);
    }

    /// `line` left `way` of `set` without a replacement.
    #[inline(never)]
    fn invalidate(&mut self, set: usize, line: u64, way: usize) {
        self.index.remove(line);
        let bits = self.bits;
        bits.insert(self.invalid_of(set), way);
    }
}

impl<P: Policy> Cache<P> {
    /// A cache of geometry `g` with `policy`. `cpu_inclusive` makes the engine refuse bypasses
    /// of CPU lines (the LLC of drp-reuse-probability-shared-llc.txt §3 keeps CPU data
    /// inclusive).
    pub fn new(
        geometry: Geometry,
        write: WritePolicy,
        cpu_inclusive: bool,
        policy: P,
    ) -> Result<Self, CacheError> {
        Self::with_layout(geometry, write, cpu_inclusive, policy, SetLayout::Auto)
    }

    /// [`Cache::new`] with the set representation chosen by `layout` instead of by the
    /// associativity alone (the results are the same; tests compare the two).
    pub fn with_layout(
        geometry: Geometry,
        write: WritePolicy,
        cpu_inclusive: bool,
        policy: P,
        layout: SetLayout,
    ) -> Result<Self, CacheError> {
        geometry.validate()?;
        let sets = geometry.sets();
        let ways = geometry.ways as usize;
        let slots = sets as usize * ways;
        Ok(Cache {
            geometry,
            line_bits: geometry.line.trailing_zeros(),
            sets,
            set_mask: sets.is_power_of_two().then_some(sets - 1),
            ways,
            write,
            cpu_inclusive,
            tags: LineWords::new(slots, INVALID),
            valid: 0,
            wide: layout
                .is_wide(ways)
                .then(|| Box::new(WideSets::new(sets as usize, ways))),
            policy,
            counters: CacheCounters::default(),
        })
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geometry
    }
    pub fn policy(&self) -> &P {
        &self.policy
    }
    pub fn policy_mut(&mut self) -> &mut P {
        &mut self.policy
    }
    pub fn counters(&self) -> &CacheCounters {
        &self.counters
    }
    pub fn line_bits(&self) -> u32 {
        self.line_bits
    }
    /// True if the sets are wide (hash index, bit sets of invalid ways).
    pub fn is_wide(&self) -> bool {
        self.wide.is_some()
    }

    /// Line address of a byte address.
    #[inline]
    pub fn line_of(&self, addr: u64) -> u64 {
        addr >> self.line_bits
    }

    /// Set index of a line address.
    #[inline]
    pub fn set_of(&self, line: u64) -> usize {
        match self.set_mask {
            Some(m) => (line & m) as usize,
            None => (line % self.sets) as usize,
        }
    }

    /// The ways of `set` as one slice.
    #[inline]
    fn set_tags(&self, set: usize) -> &[u64] {
        let base = set * self.ways;
        &self.tags[base..base + self.ways]
    }

    /// The way of `set` holding `line`.
    #[inline(always)]
    fn find(&self, set: usize, line: u64) -> Option<usize> {
        match self.wide.as_deref() {
            None => crate::simd::first_match(self.set_tags(set), LINE_MASK, line),
            Some(w) => w.find(line),
        }
    }

    /// Ask the host to bring what an access to `addr` will touch into its caches (a hint for
    /// replaying a known stream a few requests ahead, as the oracle's replay loop does). Compact sets: the set's tags
    /// and the policy's state of the set. Wide sets: if the line is resident, its tag word
    /// and the policy's state of its way; this looks the line up in the hash index, whose slot
    /// [`Cache::prefetch_index`] should have brought in a few requests earlier.
    #[inline]
    pub fn prefetch(&self, addr: u64) {
        let line = self.line_of(addr);
        let set = self.set_of(line);
        match self.wide.as_deref() {
            None => {
                let base = set * self.ways;
                crate::hostprefetch::prefetch(&self.tags, base);
                if self.ways > 8 {
                    crate::hostprefetch::prefetch(&self.tags, base + 8);
                }
                self.policy.prefetch_set(set);
            }
            Some(w) => {
                if line <= MAX_LINE {
                    if let Some(way) = w.find(line) {
                        crate::hostprefetch::prefetch(&self.tags, set * self.ways + way);
                        self.policy.prefetch_way(set, way);
                    }
                }
            }
        }
    }

    /// The first of the two prefetch steps of wide sets: bring in the hash index slot of
    /// `addr`'s line, whose address depends on the line alone. A no-op for compact sets.
    #[inline]
    pub fn prefetch_index(&self, addr: u64) {
        if let Some(w) = self.wide.as_deref() {
            let line = self.line_of(addr);
            if line <= MAX_LINE {
                w.index.prefetch(line);
            }
        }
    }

    /// True if the line holding byte address `addr` is resident (no state changes).
    pub fn probe(&self, addr: u64) -> bool {
        let line = self.line_of(addr);
        self.find(self.set_of(line), line).is_some()
    }

    /// A core's hit in its private caches on the line holding `req.addr`, told to the policy
    /// as a hit on that line (a temporal locality hint, Jaleel et al., MICRO 2010): nothing
    /// is counted and no line flag changes. Returns whether the line is resident.
    pub fn hint(&mut self, req: &Access) -> bool {
        let line = self.line_of(req.addr);
        let set = self.set_of(line);
        match self.find(set, line) {
            Some(way) => {
                self.policy.on_hit(set, way, req);
                true
            }
            None => false,
        }
    }

    /// Metadata of the resident line holding `addr`.
    pub fn meta_of(&self, addr: u64) -> Option<LineMeta> {
        let line = self.line_of(addr);
        let set = self.set_of(line);
        self.find(set, line)
            .map(|w| word_meta(self.tags[set * self.ways + w]))
    }

    /// Access the line holding `req.addr` (the caller splits accesses that straddle lines).
    /// The hit path is inlined into the caller (every level of the hierarchy); the miss path
    /// stays a call.
    #[inline]
    pub fn access(&mut self, req: &Access) -> Result<Outcome, CacheError> {
        let (set, line, way) = self.lookup(req)?;
        match way {
            Some(way) => Ok(self.hit(set, way, req)),
            None => self.miss(set, line, req),
        }
    }

    /// [`Cache::access`] where the victim may be spared: when the policy's victim is a line
    /// for which `spare(line, meta)` is true (a line a core's private cache still holds, say),
    /// the policy is told of a hit on it and asked again, up to `queries` times; the last
    /// victim is evicted whatever `spare` says. This is Jaleel et al.'s query based selection
    /// for an inclusive LLC (MICRO 2010): the LLC asks the cores before it evicts, so their hot
    /// lines are not inclusion victims. Returns the outcome and how many victims were spared.
    pub fn access_sparing(
        &mut self,
        req: &Access,
        queries: u32,
        mut spare: impl FnMut(u64, LineMeta) -> bool,
    ) -> Result<(Outcome, u32), CacheError> {
        let (set, line, way) = self.lookup(req)?;
        match way {
            Some(way) => Ok((self.hit(set, way, req), 0)),
            None => self.miss_inlined(set, line, req, queries, &mut spare),
        }
    }

    /// The set and line of `req.addr`, and the way holding it if resident.
    #[inline(always)]
    fn lookup(&self, req: &Access) -> Result<(usize, u64, Option<usize>), CacheError> {
        let line = self.line_of(req.addr);
        if line > MAX_LINE {
            return Err(CacheError::AddressTooLarge { addr: req.addr });
        }
        let set = self.set_of(line);
        Ok((set, line, self.find(set, line)))
    }

    #[inline]
    fn hit(&mut self, set: usize, way: usize, req: &Access) -> Outcome {
        self.counters.hits += 1;
        let is_write = req.dirties();
        let dirty = if is_write && self.write.write_back {
            LineMeta::DIRTY
        } else {
            0
        };
        let word = &mut self.tags[set * self.ways + way];
        // Branch-free (`&`, not `&&`): whether another core touches the line is unpredictable.
        let other_cpu = req.agent.is_cpu() & ((*word >> AGENT_SHIFT) as u8 != req.agent.to_byte());
        let shared = u8::from(other_cpu) * LineMeta::SHARED;
        *word |= ((LineMeta::REUSED | cpu_flag(req) | shared | dirty) as u64) << FLAG_SHIFT;
        self.policy.on_hit(set, way, req);
        Outcome::Hit {
            write_through: is_write && !self.write.write_back,
        }
    }

    /// [`Cache::miss_inlined`] kept out of line for [`Cache::access`], so that its callers
    /// (every hierarchy level) inline only the hit path. (Inlining it into `access` too cut the
    /// hierarchy's instructions by 6%, but wall-clock comparisons were inconclusive;
    /// docs/PERFORMANCE.md, "Cache engine".)
    #[inline(never)]
    fn miss(&mut self, set: usize, line: u64, req: &Access) -> Result<Outcome, CacheError> {
        self.miss_inlined(set, line, req, 0, &mut |_, _| false)
            .map(|(o, _)| o)
    }

    /// A miss: bypass or allocate (an invalid way, else the policy's victim, spared up to
    /// `queries` times as [`Cache::access_sparing`] says), then fill. Also returns how many
    /// victims were spared.
    #[inline(always)]
    fn miss_inlined<S: FnMut(u64, LineMeta) -> bool>(
        &mut self,
        set: usize,
        line: u64,
        req: &Access,
        queries: u32,
        spare: &mut S,
    ) -> Result<(Outcome, u32), CacheError> {
        self.counters.misses += 1;
        if req.op == Op::Write && !self.write.write_allocate {
            return Ok((
                Outcome::Miss {
                    filled: false,
                    bypassed: false,
                    evicted: None,
                },
                0,
            ));
        }
        if self.policy.on_miss(set, req) == MissAction::Bypass {
            if self.cpu_inclusive && req.agent.is_cpu() {
                return Err(CacheError::InclusionViolation {
                    addr: req.addr,
                    agent: req.agent,
                });
            }
            self.counters.bypasses += 1;
            return Ok((
                Outcome::Miss {
                    filled: false,
                    bypassed: true,
                    evicted: None,
                },
                0,
            ));
        }
        let base = set * self.ways;
        let mut spared = 0;
        let invalid = if self.valid < self.tags.len() {
            match self.wide.as_deref_mut() {
                None => crate::simd::first_match(self.set_tags(set), u64::MAX, INVALID),
                Some(w) => w.take_invalid(set),
            }
        } else {
            None
        };
        let (way, evicted) = match invalid {
            Some(w) => {
                self.valid += 1;
                (w, None)
            }
            None => {
                let mut w = self.victim(set, req)?;
                while spared < queries {
                    let word = self.tags[base + w];
                    let meta = word_meta(word);
                    if !spare(word_line(word), meta) {
                        break;
                    }
                    // Spared: to the policy, the line was just referenced by its owner.
                    spared += 1;
                    let touch = Access {
                        addr: word_line(word) << self.line_bits,
                        agent: meta.agent,
                        stream: meta.stream(),
                        op: Op::Read,
                        ..*req
                    };
                    self.policy.on_hit(set, w, &touch);
                    w = self.victim(set, req)?;
                }
                let word = self.tags[base + w];
                let ev = Evicted {
                    line: word_line(word),
                    meta: word_meta(word),
                };
                self.counters.evictions += 1;
                self.counters.dirty_evictions += u64::from(ev.meta.dirty());
                self.policy.on_evict(set, w, &ev);
                (w, Some(ev))
            }
        };
        let dirty = if req.dirties() && self.write.write_back {
            LineMeta::DIRTY
        } else {
            0
        };
        self.tags[base + way] = pack(
            line,
            LineMeta {
                agent: req.agent,
                stream: req.stream.to_byte(),
                flags: dirty | cpu_flag(req),
            },
        );
        if let Some(w) = self.wide.as_deref_mut() {
            w.install(evicted.map(|e| e.line), line, way);
        }
        self.counters.fills += 1;
        self.policy.on_fill(set, way, req);
        Ok((
            Outcome::Miss {
                filled: true,
                bypassed: false,
                evicted,
            },
            spared,
        ))
    }

    /// The policy's victim in full set `set`, checked to be a way of the set.
    #[inline(always)]
    fn victim(&mut self, set: usize, req: &Access) -> Result<usize, CacheError> {
        let base = set * self.ways;
        let view = SetView {
            tags: &self.tags[base..base + self.ways],
            index: self.wide.as_deref().map(|w| &w.index),
        };
        let w = self.policy.victim(set, req, &view);
        if w >= self.ways {
            return Err(CacheError::BadVictim {
                way: w,
                ways: self.ways,
            });
        }
        Ok(w)
    }

    /// Remove the line holding byte address `addr` (back-invalidation); returns its metadata.
    /// Policies are not told: to them the way simply becomes invalid and is refilled first.
    pub fn invalidate(&mut self, addr: u64) -> Option<LineMeta> {
        let line = self.line_of(addr);
        let set = self.set_of(line);
        let way = self.find(set, line)?;
        let i = set * self.ways + way;
        let word = std::mem::replace(&mut self.tags[i], INVALID);
        if let Some(w) = self.wide.as_deref_mut() {
            w.invalidate(set, line, way);
        }
        self.valid -= 1;
        self.counters.invalidations += 1;
        Some(word_meta(word))
    }

    /// Deliver a run-time signal to the policy.
    pub fn feedback(&mut self, fb: &crate::Feedback) {
        self.policy.on_feedback(fb);
    }

    /// Add each valid line to its filling agent's count (`counts[agent byte]`): who holds
    /// the cache now. A scan of the tag array, for periodic readings (tap Table 1 compares
    /// how much of the LLC each application gets), not for every access.
    pub fn add_lines_by_agent(&self, counts: &mut [u64; 256]) {
        for &word in self.tags.iter().filter(|&&w| w != INVALID) {
            counts[(word >> AGENT_SHIFT) as usize] += 1;
        }
    }

    /// Number of lines the cache holds when full.
    pub fn capacity_lines(&self) -> usize {
        self.tags.len()
    }

    /// Number of valid lines (for tests and reports).
    pub fn occupancy(&self) -> usize {
        debug_assert_eq!(
            self.valid,
            self.tags.iter().filter(|&&t| t != INVALID).count()
        );
        self.valid
    }
}

#[inline]
fn cpu_flag(req: &Access) -> u8 {
    if req.agent.is_cpu() {
        LineMeta::CPU
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policies::lru::Lru;
    use crate::PolicyContext;
    use apusim_trace::{Agent, Stream};

    fn lru_cache(g: Geometry) -> Cache<Lru> {
        Cache::new(
            g,
            WritePolicy::default(),
            false,
            Lru::build(&PolicyContext::for_geometry(&g)).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn line_metadata_lives_in_the_tag_word() {
        let mut c = lru_cache(Geometry::new(1024, 4, 64));
        let gpu = Access::new(
            Agent::GPU,
            Stream::DynamicTexture,
            Op::Read,
            0x1_2345_6780,
            4,
        );
        c.access(&gpu).unwrap();
        let m = c.meta_of(gpu.addr).unwrap();
        assert_eq!(
            (m.agent, m.stream(), m.flags),
            (Agent::GPU, Stream::DynamicTexture, 0)
        );
        // A CPU write hit: reused, dirty, CPU-touched, shared (not the filler).
        c.access(&Access::new(
            Agent::cpu(3),
            Stream::CpuData,
            Op::Write,
            gpu.addr + 8,
            8,
        ))
        .unwrap();
        let m = c.meta_of(gpu.addr).unwrap();
        assert_eq!(m.agent, Agent::GPU, "the filler stays");
        assert!(m.reused() && m.dirty() && m.cpu_touched());
        assert_eq!(m.sole_cpu(), None);
        // A line filled and re-read by one core only stays that core's.
        let own = Access::new(Agent::cpu(2), Stream::CpuData, Op::Read, 0x40, 8);
        c.access(&own).unwrap();
        c.access(&own).unwrap();
        assert_eq!(c.meta_of(0x40).unwrap().sole_cpu(), Some(2));
        assert_eq!(
            c.invalidate(0x40).map(|m| m.stream()),
            Some(Stream::CpuData)
        );
        assert!(!c.probe(0x40));
    }

    #[test]
    fn addresses_beyond_the_tag_range_are_errors() {
        let mut c = lru_cache(Geometry::new(1024, 4, 64));
        let ok = Access::new(
            Agent::cpu(0),
            Stream::CpuData,
            Op::Read,
            (MAX_LINE << 6) + 63,
            1,
        );
        assert!(c.access(&ok).is_ok());
        let bad = Access::new(Agent::cpu(0), Stream::CpuData, Op::Read, u64::MAX, 1);
        assert_eq!(
            c.access(&bad),
            Err(CacheError::AddressTooLarge { addr: u64::MAX })
        );
    }

    #[test]
    fn non_power_of_two_set_counts_index_by_modulo() {
        // 3 sets of 2 ways: lines 0, 3, 6 share set 0.
        let mut c = lru_cache(Geometry::new(3 * 2 * 64, 2, 64));
        let rd = |l: u64| Access::new(Agent::cpu(0), Stream::CpuData, Op::Read, l * 64, 8);
        for l in [0, 3] {
            c.access(&rd(l)).unwrap();
        }
        match c.access(&rd(6)).unwrap() {
            Outcome::Miss {
                evicted: Some(e), ..
            } => assert_eq!(e.line, 0),
            o => panic!("{o:?}"),
        }
        assert_eq!(c.occupancy(), 2);
    }

    #[test]
    fn lines_are_counted_by_the_agent_that_filled_them() {
        // 1 set of 4 ways: three CPU lines, then two GPU lines evict the two oldest.
        let mut c = lru_cache(Geometry::new(4 * 64, 4, 64));
        let rd = |a: Agent, l: u64| Access::new(a, Stream::CpuData, Op::Read, l * 64, 8);
        for l in 0..3 {
            c.access(&rd(Agent::cpu(1), l)).unwrap();
        }
        let mut counts = [0u64; 256];
        c.add_lines_by_agent(&mut counts);
        assert_eq!(counts[Agent::cpu(1).to_byte() as usize], 3);
        for l in 10..12 {
            c.access(&rd(Agent::GPU, l)).unwrap();
        }
        let mut counts = [0u64; 256];
        c.add_lines_by_agent(&mut counts);
        assert_eq!(counts[Agent::cpu(1).to_byte() as usize], 2);
        assert_eq!(counts[Agent::GPU.to_byte() as usize], 2);
        assert_eq!(counts.iter().sum::<u64>(), c.occupancy() as u64);
        assert_eq!(c.capacity_lines(), 4);
    }
}
