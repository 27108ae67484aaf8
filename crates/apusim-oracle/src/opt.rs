//! Belady's MIN (OPT) replacement, with and without the oracle bypass of GPU lines
//! (drp-reuse-probability-shared-llc.txt §4.1 "OPT, OPT+Bypass"; gspc-graphics-stream-llc.txt
//! §2, Figs. 1 and 5–9 "Belady's optimal policy").
//!
//! Every line reference — read, write, writeback or prefetch — is a use of its line, and every
//! miss allocates (write-allocate for writes and writebacks too), so OPT minimizes the misses of
//! all references: that is the "MIN extended to handle both read and write misses" of drp §4.1.
//! On a miss in a full set OPT evicts the resident line whose next use is farthest; lines never
//! used again ([`crate::NEVER`]) are the farthest of all. With bypass, a GPU line whose next use
//! is farther than that of every resident line of its (full) set is not allocated; CPU lines
//! always allocate (the LLC keeps CPU data inclusive).
//!
//! Two implementations of the same decisions:
//! - [`ScanOpt`], for sets of at most 64 ways: per set, the tag words and the next uses of its
//!   ways side by side (one contiguous run of memory), a vectorizable tag compare for lookup and
//!   a linear scan of the next uses for the victim;
//! - [`HeapOpt`], for sets with hundreds of thousands of ways (fully-associative studies): per
//!   set, a hash index line → (tag word metadata, next use) ([`LineIndex`]: one host line per
//!   lookup, prefetched by the replay) and a max-heap of (next use, line) with lazy deletion
//!   (an entry is live while it matches the index; the heap is rebuilt from the index when
//!   stale entries outnumber live ones; four children per node, one host line per level:
//!   `maxheap`), O(log ways) per reference.
//!
//! Finite next uses are distinct reference indices, so two resident lines can only tie at
//! [`crate::NEVER`]; evicting either of them costs nothing (neither is referenced again), so the
//! miss count does not depend on the [`TieBreak`].

use crate::maxheap::MaxHeap4;
use crate::nextuse::NEVER;
use crate::sim::RefSim;
use apusim_cache::{
    CacheError, Evicted, Geometry, LineIndex, LineMeta, LineWords, Outcome, PolicyStat,
};
use apusim_trace::Access;

/// Which of several equally-far (never used again) lines OPT evicts. The miss count is the same
/// either way; the choice exists to show that.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum TieBreak {
    /// The lowest way (set-associative) or the lowest line address (heap-based).
    #[default]
    First,
    /// The highest way or the highest line address.
    Last,
}

const LINE_MASK: u64 = (1 << 48) - 1;
const FLAG_SHIFT: u32 = 48;
const STREAM_SHIFT: u32 = 52;
const AGENT_SHIFT: u32 = 56;
const INVALID: u64 = u64::MAX;

/// Tag word: line address in the low 48 bits, flags, stream and filling agent above (the
/// engine's layout, so a victim's metadata comes with its tag).
#[inline]
fn pack(line: u64, req: &Access) -> u64 {
    line | (fill_flags(req) as u64) << FLAG_SHIFT
        | (req.stream.to_byte() as u64 & 0xF) << STREAM_SHIFT
        | (req.agent.to_byte() as u64) << AGENT_SHIFT
}

/// Branch-free: which requests write, and whose, is data-dependent.
#[inline]
fn fill_flags(req: &Access) -> u8 {
    (u8::from(req.dirties()) * LineMeta::DIRTY) | (u8::from(req.agent.is_cpu()) * LineMeta::CPU)
}

#[inline]
fn hit_flags(req: &Access) -> u64 {
    ((fill_flags(req) | LineMeta::REUSED) as u64) << FLAG_SHIFT
}

#[inline]
fn unpack(word: u64) -> Evicted {
    Evicted {
        line: word & LINE_MASK,
        meta: LineMeta {
            agent: apusim_trace::Agent::from_byte((word >> AGENT_SHIFT) as u8).unwrap_or_default(),
            stream: (word >> STREAM_SHIFT) as u8 & 0xF,
            flags: (word >> FLAG_SHIFT) as u8 & 0xF,
        },
    }
}

const HIT: Outcome = Outcome::Hit {
    write_through: false,
};
const BYPASS: Outcome = Outcome::Miss {
    filled: false,
    bypassed: true,
    evicted: None,
};

#[derive(Clone, Copy)]
struct SetIndex {
    sets: u64,
    mask: Option<u64>,
}

impl SetIndex {
    fn new(g: &Geometry) -> SetIndex {
        let sets = g.sets();
        SetIndex {
            sets,
            mask: sets.is_power_of_two().then_some(sets - 1),
        }
    }
    #[inline]
    fn of(&self, line: u64) -> usize {
        match self.mask {
            Some(m) => (line & m) as usize,
            None => (line % self.sets) as usize,
        }
    }
}

/// Set-associative OPT for sets of at most 64 ways (see the module doc).
pub struct ScanOpt {
    index: SetIndex,
    ways: usize,
    /// Per set: `ways` tag words, then `ways` next uses; starting a host cache line, so that a
    /// 16-way set is exactly the four host lines [`RefSim::prefetch`] asks for.
    slots: LineWords,
    /// Valid ways per set (ways fill in order: nothing is ever invalidated).
    filled: Vec<u8>,
    bypass: bool,
    tie: TieBreak,
    bypasses: u64,
}

impl ScanOpt {
    /// Largest associativity this implementation serves.
    pub const MAX_WAYS: usize = 64;

    pub fn new(g: &Geometry, bypass: bool, tie: TieBreak) -> Result<ScanOpt, CacheError> {
        g.validate()?;
        let ways = g.ways as usize;
        if ways > Self::MAX_WAYS {
            return Err(CacheError::Geometry(format!(
                "{g}: the scanning OPT serves at most {} ways",
                Self::MAX_WAYS
            )));
        }
        let sets = g.sets() as usize;
        let mut slots = LineWords::new(sets * 2 * ways, INVALID);
        for set in slots.chunks_exact_mut(2 * ways) {
            set[ways..].fill(NEVER);
        }
        Ok(ScanOpt {
            index: SetIndex::new(g),
            ways,
            slots,
            filled: vec![0; sets],
            bypass,
            tie,
            bypasses: 0,
        })
    }
}

impl ScanOpt {
    /// [`RefSim::access`] for sets of `W` ways: the same code as the general case, with the
    /// set's length a constant so that the tag compare and the victim scan are unrolled and
    /// vectorized (`W` = 0 means "any").
    #[inline(always)]
    fn access_ways<const W: usize>(&mut self, req: &Access, line: u64, next: u64) -> Outcome {
        let set = self.index.of(line);
        let ways = if W == 0 { self.ways } else { W };
        let base = set * 2 * ways;
        let (tags, nexts) = self.slots[base..base + 2 * ways].split_at_mut(ways);
        if let Some(w) = apusim_cache::first_match(tags, LINE_MASK, line) {
            tags[w] |= hit_flags(req);
            nexts[w] = next;
            return HIT;
        }
        let n = self.filled[set] as usize;
        let (way, evicted) = if n < ways {
            self.filled[set] += 1;
            (n, None)
        } else {
            let (best, far) = farthest(nexts, self.tie);
            if self.bypass && req.agent.is_gpu() && next > far {
                self.bypasses += 1;
                return BYPASS;
            }
            (best, Some(unpack(tags[best])))
        };
        tags[way] = pack(line, req);
        nexts[way] = next;
        Outcome::Miss {
            filled: true,
            bypassed: false,
            evicted,
        }
    }
}

/// The way with the farthest next use and that next use; among equal ones the first or the
/// last way, by `tie` (the cache engine's [`apusim_cache::max_way`]: a branch-free SSE
/// reduction for 16 ways, which the scalar scan spent about 110 instructions on).
#[inline(always)]
fn farthest(nexts: &[u64], tie: TieBreak) -> (usize, u64) {
    apusim_cache::max_way(nexts, tie == TieBreak::Last)
}

impl RefSim for ScanOpt {
    #[inline(always)]
    fn access(&mut self, req: &Access, line: u64, next: u64) -> Result<Outcome, CacheError> {
        Ok(match self.ways {
            16 => self.access_ways::<16>(req, line, next),
            8 => self.access_ways::<8>(req, line, next),
            _ => self.access_ways::<0>(req, line, next),
        })
    }

    #[inline]
    fn prefetch(&self, _req: &Access, line: u64) {
        use apusim_cache::policies::util::prefetch;
        let base = self.index.of(line) * 2 * self.ways;
        // One hint per 64-byte host line of the set's tags and next uses (unrolled for 16
        // ways: the `step_by` loop cost about 20 instructions per reference).
        if self.ways == 16 {
            for off in [0, 8, 16, 24] {
                prefetch(&self.slots, base + off);
            }
        } else {
            let mut off = 0;
            while off < 2 * self.ways {
                prefetch(&self.slots, base + off);
                off += 8;
            }
        }
    }

    fn policy_stats(&self) -> Vec<PolicyStat> {
        bypass_stats(self.bypass, self.bypasses)
    }
}

fn bypass_stats(bypass: bool, n: u64) -> Vec<PolicyStat> {
    if bypass {
        vec![("oracle_bypasses".to_string(), n as f64)]
    } else {
        Vec::new()
    }
}

/// One set of [`HeapOpt`].
struct HeapSet {
    /// Resident line → its tag word's metadata (high 16 bits) and its next use.
    map: LineIndex,
    resident: usize,
    /// (next use, line key) for every resident line, plus stale entries.
    heap: MaxHeap4,
}

/// OPT for sets of any associativity, fully-associative included (see the module doc).
pub struct HeapOpt {
    index: SetIndex,
    ways: usize,
    sets: Vec<HeapSet>,
    bypass: bool,
    tie: TieBreak,
    bypasses: u64,
}

impl HeapOpt {
    pub fn new(g: &Geometry, bypass: bool, tie: TieBreak) -> Result<HeapOpt, CacheError> {
        g.validate()?;
        let sets = g.sets() as usize;
        let ways = g.ways as usize;
        Ok(HeapOpt {
            index: SetIndex::new(g),
            ways,
            sets: (0..sets)
                .map(|_| HeapSet {
                    map: LineIndex::with_capacity(ways),
                    resident: 0,
                    heap: MaxHeap4::default(),
                })
                .collect(),
            bypass,
            tie,
            bypasses: 0,
        })
    }
}

/// Heap key of a line (its own inverse): among equal next uses the max-heap pops the highest
/// key, i.e. the lowest line for [`TieBreak::First`] and the highest for [`TieBreak::Last`].
#[inline]
fn heap_key(tie: TieBreak, line: u64) -> u64 {
    match tie {
        TieBreak::First => !line,
        TieBreak::Last => line,
    }
}

impl RefSim for HeapOpt {
    fn access(&mut self, req: &Access, line: u64, next: u64) -> Result<Outcome, CacheError> {
        debug_assert!(
            line <= apusim_cache::cache::MAX_LINE,
            "lines are checked by the replay"
        );
        let set_i = self.index.of(line);
        let tie = self.tie;
        let key = heap_key(tie, line);
        let ways = self.ways;
        let set = &mut self.sets[set_i];
        if let Some(i) = set.map.find(line) {
            let s = set.map.at(i);
            s[0] |= hit_flags(req);
            s[1] = next;
            set.heap.push((next, key));
            if set.heap.len() > 2 * set.resident + 64 {
                let live: Vec<(u64, u64)> = set
                    .map
                    .iter()
                    .map(|(l, s)| (s[1], heap_key(tie, l)))
                    .collect();
                set.heap.rebuild(live.into_iter());
            }
            return Ok(HIT);
        }
        let evicted = if set.resident < ways {
            set.resident += 1;
            None
        } else {
            // The live entry with the farthest next use.
            let (far, slot) = loop {
                let (n, k) = set
                    .heap
                    .peek()
                    .expect("a full set has a live heap entry for every resident line");
                if let Some(i) = set.map.find(heap_key(tie, k)) {
                    if set.map.at(i)[1] == n {
                        break (n, i);
                    }
                }
                set.heap.pop();
            };
            if self.bypass && req.agent.is_gpu() && next > far {
                self.bypasses += 1;
                return Ok(BYPASS);
            }
            set.heap.pop();
            // The slot's first word is the tag word plus one (line + 1 in the low bits).
            let word = set.map.at(slot)[0] - 1;
            set.map.remove_at(slot);
            Some(unpack(word))
        };
        set.map.insert(line, (pack(line, req) >> 48) as u16, next);
        set.heap.push((next, key));
        Ok(Outcome::Miss {
            filled: true,
            bypassed: false,
            evicted,
        })
    }

    #[inline]
    fn prefetch_early(&self, _req: &Access, line: u64) {
        self.sets[self.index.of(line)].map.prefetch(line);
    }

    fn policy_stats(&self) -> Vec<PolicyStat> {
        bypass_stats(self.bypass, self.bypasses)
    }
}
