//! GPU L1 data-cache bypassing (adaptive-gpu-l1-bypassing.txt): the two bypass predictors,
//! their storage, and [`L1Bypass`], tree pseudo-LRU plus one predictor as a cache policy.
//! Used by `apusim-gpu` (Table 1 hierarchy, studies) and by `apusim-sim` GPU caches that set
//! `bypass_predictor`. Not an LLC policy: the predictors have their own registry,
//! [`PREDICTORS`] (name, description, paper key, typed parameters, constructor), which both
//! hierarchies look names up in and build from.
//!
//! [`PcPredictor`] is §3.1-3.2 and Listing 1: a table of 4-bit saturating counters indexed by
//! a hashed PC, and per L1 line the hashed PC of the last instruction that touched it. A hit
//! decrements the counter of the line's stored PC (that PC's access was reused) and stores the
//! hitting PC; the eviction of a line increments the counter of its stored PC (that last access
//! saw no reuse before eviction); a read miss is predicted zero-reuse when the counter of the
//! missing PC is at least the threshold. The bypassBit correction lives in the next level (in
//! `apusim-gpu`, its `L2Policy`); the caller hands the final decision of a miss to
//! [`L1Bypass::decide`] before the access, and the engine's `on_miss` returns it.
//!
//! [`CounterPredictor`] is the comparator of §3.3: Kharbutli and Solihin's counter-based
//! live-time predictor (LvP) used for bypassing. Each L1 line counts the hits of its current
//! generation in a 4-bit event counter; at eviction the count is compared with the entry of a
//! two-dimensional table indexed by (hashed PC of the filling miss, hashed block address): if
//! equal the entry becomes confident, otherwise it learns the new count and loses confidence.
//! A read miss is bypassed when its entry is confident that the block sees zero hits. As in
//! the original CPU scheme there is no bypassBit: a bypass decision is only revisited when the
//! table entry is retrained by another block mapping to it (§6.3: "irreversible in previous
//! CPU cache bypassing work").
//!
//! Choices where the paper is silent (also in docs/results.md):
//! - The hash is the top `bits` bits of the PC (block address) times a 64-bit odd constant
//!   (Fibonacci hashing): deterministic and spreading nearby PCs over the table.
//! - Counters start at 0 (no bypass until evidence accumulates).
//! - Listing 1 shows the victim increment only on the predicted-no-bypass path; a fill made by
//!   the bypassBit correction also evicts a line, and we count that eviction the same way (the
//!   §3.2 prose: "the LRU block is replaced ... indicating this PC likely leads to zero-reuse
//!   blocks"). Fills into an invalid way evict nothing and update nothing.
//! - Counter-based per-line state: hashed PC (7 bits) + event counter (4) + a copy of the
//!   entry's learned count (4) + its confidence bit (1) = 16 bits; §4.1 quotes 20 bits without
//!   the breakdown, so the paper's total is 10.626 KB and ours 10.5 KB ("more than 10.5KB" in
//!   §3.3). The table entry is 4-bit count + 1 confidence bit = 5 bits, as §4.1.

use super::plru::Plru;
use crate::{CacheError, Evicted, MissAction, Policy, PolicyContext, SetView};
use apusim_registry::{Entry, ParamKind, ParamSpec, Params};
use apusim_trace::Access;
use serde::{Deserialize, Serialize};

/// Width of the saturating counters of the PC-based table (§3.1).
pub const PC_COUNTER_BITS: u32 = 4;
const PC_COUNTER_MAX: u8 = (1 << PC_COUNTER_BITS) - 1;
/// Width of the counter-based predictor's event counters and learned counts (§4.1).
const EVENT_BITS: u32 = 4;
const EVENT_MAX: u8 = (1 << EVENT_BITS) - 1;
const CONF: u8 = 1 << EVENT_BITS;

/// `x` hashed to `bits` bits (Fibonacci hashing).
#[inline]
pub fn hash_bits(x: u64, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        (x.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
    }
}

/// Storage a predictor adds, in bits (§4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Storage {
    /// The prediction table beside each L1.
    pub table_bits_per_l1: u64,
    /// Extra metadata in each L1 tag entry, times the L1's lines.
    pub line_bits_per_l1: u64,
    /// Extra bits in the shared L2 (the bypassBit per L2 line).
    pub l2_bits: u64,
}

impl Storage {
    /// Bytes added to each L1 (table plus per-line metadata).
    pub fn bytes_per_l1(&self) -> f64 {
        (self.table_bits_per_l1 + self.line_bits_per_l1) as f64 / 8.0
    }
    /// Bytes added to the L2.
    pub fn l2_bytes(&self) -> f64 {
        self.l2_bits as f64 / 8.0
    }
    /// Bytes added to the whole GPU with `sms` L1s.
    pub fn total_bytes(&self, sms: usize) -> f64 {
        self.bytes_per_l1() * sms as f64 + self.l2_bytes()
    }
}

/// The PC-based bypass predictor of one L1 (Listing 1).
pub struct PcPredictor {
    /// log2 of the table size: the width of the hashed PC stored per line.
    index_bits: u32,
    threshold: u8,
    table: Vec<u8>,
    /// Hashed PC of the last instruction that touched each line (`set * ways + way`).
    line_pc: Vec<u16>,
    /// Table entries ever indexed (for the per-kernel report).
    used: Vec<bool>,
    /// Table reads and updates (for the energy model).
    pub table_accesses: u64,
}

impl PcPredictor {
    /// A predictor of `entries` (a power of two) counters for an L1 of `lines` lines.
    pub fn new(entries: usize, threshold: u8, lines: usize) -> PcPredictor {
        assert!(entries.is_power_of_two(), "validated by the configuration");
        PcPredictor {
            index_bits: entries.trailing_zeros(),
            threshold,
            table: vec![0; entries],
            line_pc: vec![0; lines],
            used: vec![false; entries],
            table_accesses: 0,
        }
    }

    /// The table index of `pc`.
    #[inline]
    pub fn index(&self, pc: u64) -> usize {
        hash_bits(pc, self.index_bits)
    }

    /// Counter value of the entry `pc` maps to.
    pub fn counter(&self, pc: u64) -> u8 {
        self.table[self.index(pc)]
    }

    /// Listing 1, miss path: `predictionTable[hash(PC)] >= threshold`.
    #[inline]
    pub fn predict(&mut self, pc: u64) -> bool {
        let i = self.index(pc);
        self.used[i] = true;
        self.table_accesses += 1;
        self.table[i] >= self.threshold
    }

    /// Listing 1, hit path: decrement the counter of the line's stored PC, store the new PC.
    #[inline]
    pub fn on_hit(&mut self, slot: usize, pc: u64) {
        let old = self.line_pc[slot] as usize;
        self.table[old] = self.table[old].saturating_sub(1);
        self.table_accesses += 1;
        self.line_pc[slot] = self.index(pc) as u16;
    }

    /// Listing 1, replacement: the victim's last PC led to a zero-reuse access.
    #[inline]
    pub fn on_evict(&mut self, slot: usize) {
        let old = self.line_pc[slot] as usize;
        self.table[old] = (self.table[old] + 1).min(PC_COUNTER_MAX);
        self.table_accesses += 1;
    }

    /// Listing 1, installation: `block[address].hashedPC = hash(PC)`.
    #[inline]
    pub fn on_fill(&mut self, slot: usize, pc: u64) {
        let i = self.index(pc);
        self.used[i] = true;
        self.line_pc[slot] = i as u16;
    }

    /// Entries ever indexed.
    pub fn entries_used(&self) -> usize {
        self.used.iter().filter(|u| **u).count()
    }

    /// Storage of this design for an L1 of `l1_lines` lines and an L2 of `l2_lines` lines:
    /// `entries` 4-bit counters and a log2(entries)-bit hashed PC per L1 line; one bypassBit per
    /// L2 line (§3.1, §4.1).
    pub fn storage(entries: usize, l1_lines: u64, l2_lines: u64) -> Storage {
        Storage {
            table_bits_per_l1: entries as u64 * PC_COUNTER_BITS as u64,
            line_bits_per_l1: l1_lines * entries.trailing_zeros() as u64,
            l2_bits: l2_lines,
        }
    }
}

/// Per-line state of the counter-based predictor.
#[derive(Clone, Copy, Default)]
struct LineState {
    /// Table row: hashed PC of the miss that filled the line.
    row: u16,
    /// Table column: hashed block address.
    col: u16,
    /// Hits in this generation (saturating).
    events: u8,
}

/// The counter-based (live-time) bypass predictor of one L1 (§3.3).
pub struct CounterPredictor {
    row_bits: u32,
    col_bits: u32,
    /// Entries: low 4 bits the learned hit count, bit 4 the confidence.
    table: Vec<u8>,
    lines: Vec<LineState>,
    pub table_accesses: u64,
}

impl CounterPredictor {
    pub fn new(pc_entries: usize, addr_entries: usize, lines: usize) -> CounterPredictor {
        CounterPredictor {
            row_bits: pc_entries.trailing_zeros(),
            col_bits: addr_entries.trailing_zeros(),
            // Nothing learned yet: the largest count, not confident (never a bypass).
            table: vec![EVENT_MAX; pc_entries * addr_entries],
            lines: vec![LineState::default(); lines],
            table_accesses: 0,
        }
    }

    #[inline]
    fn cell(&self, pc: u64, line: u64) -> (u16, u16) {
        (
            hash_bits(pc, self.row_bits) as u16,
            hash_bits(line, self.col_bits) as u16,
        )
    }

    #[inline]
    fn entry(&self, row: u16, col: u16) -> usize {
        ((row as usize) << self.col_bits) | col as usize
    }

    /// Bypass a miss of `pc` to `line` when its entry is confident of zero hits.
    #[inline]
    pub fn predict(&mut self, pc: u64, line: u64) -> bool {
        let (r, c) = self.cell(pc, line);
        self.table_accesses += 1;
        self.table[self.entry(r, c)] == CONF
    }

    #[inline]
    pub fn on_hit(&mut self, slot: usize) {
        let l = &mut self.lines[slot];
        l.events = (l.events + 1).min(EVENT_MAX);
    }

    /// Train the entry of the leaving line with its generation's hit count.
    #[inline]
    pub fn on_evict(&mut self, slot: usize) {
        let l = self.lines[slot];
        let i = self.entry(l.row, l.col);
        let e = self.table[i];
        self.table[i] = if e & EVENT_MAX == l.events {
            l.events | CONF
        } else {
            l.events
        };
        self.table_accesses += 1;
    }

    #[inline]
    pub fn on_fill(&mut self, slot: usize, pc: u64, line: u64) {
        let (row, col) = self.cell(pc, line);
        self.lines[slot] = LineState {
            row,
            col,
            events: 0,
        };
    }

    /// Storage (§4.1): a table of 5-bit entries, 16 bits per L1 line (see the module doc),
    /// nothing in the L2.
    pub fn storage(pc_entries: usize, addr_entries: usize, l1_lines: u64) -> Storage {
        Storage {
            table_bits_per_l1: (pc_entries * addr_entries) as u64 * (EVENT_BITS as u64 + 1),
            line_bits_per_l1: l1_lines
                * (pc_entries.trailing_zeros() as u64 + 2 * EVENT_BITS as u64 + 1),
            l2_bits: 0,
        }
    }
}

/// The bypass predictor beside one L1.
pub enum Predictor {
    None,
    Pc(PcPredictor),
    Counter(CounterPredictor),
}

/// The constructor of a registered predictor: its validated parameters and the lines of the
/// L1 it sits beside.
pub type BuildPredictor = fn(&Params, usize) -> Result<Predictor, CacheError>;

/// Parameters of the PC-based predictor (§3.1, §4.1).
pub const PC_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "entries",
        kind: ParamKind::Int { min: 2, max: 1 << 16 },
        default: "128",
        unit: "entries",
        doc: "prediction-table counters, a power of two (the hashed PC stored per line has log2(entries) bits)",
    },
    ParamSpec {
        name: "threshold",
        kind: ParamKind::Int { min: 1, max: 15 },
        default: "8",
        unit: "",
        doc: "bypass a read miss when its 4-bit counter is at least this (the paper gives no value; 8 is the middle)",
    },
    ParamSpec {
        name: "bypass_bit",
        kind: ParamKind::Bool,
        default: "true",
        unit: "",
        doc: "correct mispredictions with the next level's bypassBit (§3.1; off only for ablations)",
    },
];

/// Parameters of the counter-based predictor (§3.3, §4.1).
pub const COUNTER_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "pc_entries",
        kind: ParamKind::Int { min: 2, max: 4096 },
        default: "128",
        unit: "entries",
        doc: "rows of the prediction table (hashed PC of the filling miss), a power of two",
    },
    ParamSpec {
        name: "addr_entries",
        kind: ParamKind::Int { min: 2, max: 4096 },
        default: "128",
        unit: "entries",
        doc: "columns of the prediction table (hashed block address), a power of two",
    },
];

/// `name` = `v` as a table size: a power of two (the ranges are checked by the registry).
fn power_of_two(name: &str, v: u64) -> Result<usize, CacheError> {
    if v.is_power_of_two() {
        Ok(v as usize)
    } else {
        Err(CacheError::Config(format!(
            "bypass predictor parameter `{name}` = {v} must be a power of two"
        )))
    }
}

/// Every L1 bypass predictor, by the name `bypass_predictor` (apusim-sim) and
/// `l1.predictor` (apusim-gpu) take; no predictor at all is the paper's Baseline.
pub const PREDICTORS: &[Entry<BuildPredictor>] = &[
    Entry {
        name: "pc",
        description: "PC-based: 4-bit counters indexed by the hashed PC learn which instructions fill zero-reuse lines (Listing 1)",
        paper: "adaptive-gpu-l1-bypassing §3.1-3.2, Listing 1",
        params: PC_PARAMS,
        build: |p, lines| {
            let entries = power_of_two("entries", p.int("entries"))?;
            Ok(Predictor::Pc(PcPredictor::new(
                entries,
                p.int("threshold") as u8,
                lines,
            )))
        },
    },
    Entry {
        name: "counter",
        description: "counter-based: Kharbutli and Solihin's live-time predictor, a (PC, block) table of confident hit counts",
        paper: "adaptive-gpu-l1-bypassing §3.3, §4.1",
        params: COUNTER_PARAMS,
        build: |p, lines| {
            let rows = power_of_two("pc_entries", p.int("pc_entries"))?;
            let cols = power_of_two("addr_entries", p.int("addr_entries"))?;
            Ok(Predictor::Counter(CounterPredictor::new(rows, cols, lines)))
        },
    },
];

/// Build the predictor `name` with parameters `given` (unknown names and keys, wrong types
/// and out-of-range values are refused, naming the nearest valid name) for an L1 of `lines`
/// lines.
pub fn build_predictor(
    name: &str,
    given: &toml::Table,
    lines: usize,
) -> Result<Predictor, CacheError> {
    let e = apusim_registry::find(PREDICTORS, "L1 bypass predictor", name)
        .map_err(|e| CacheError::Config(e.to_string()))?;
    let p = e
        .params(given)
        .map_err(|err| CacheError::Config(format!("bypass predictor `{name}`: {err}")))?;
    (e.build)(&p, lines)
}

/// Pseudo-LRU plus the bypass predictor of one L1 data cache.
pub struct L1Bypass {
    plru: Plru,
    ways: usize,
    line_bits: u32,
    pub predictor: Predictor,
    /// Decision for the miss about to be looked up (set by [`L1Bypass::decide`]).
    bypass_next: bool,
    /// Evictions of lines that were hit at least once since their fill.
    pub reused_evictions: u64,
    /// Evictions of lines never hit after their fill (zero-reuse blocks, Fig. 1).
    pub zero_reuse_evictions: u64,
}

impl L1Bypass {
    pub fn new(ctx: &PolicyContext, predictor: Predictor) -> Result<L1Bypass, CacheError> {
        Ok(L1Bypass {
            plru: Plru::build(ctx)?,
            ways: ctx.ways,
            line_bits: ctx.line_bytes.trailing_zeros(),
            predictor,
            bypass_next: false,
            reused_evictions: 0,
            zero_reuse_evictions: 0,
        })
    }

    /// The predictor's verdict for a read miss of `req` (false without a predictor).
    #[inline]
    pub fn predict(&mut self, req: &Access) -> bool {
        let line = req.addr >> self.line_bits;
        match &mut self.predictor {
            Predictor::None => false,
            Predictor::Pc(p) => p.predict(req.pc),
            Predictor::Counter(c) => c.predict(req.pc, line),
        }
    }

    /// Set the final decision for the next miss (prediction after the bypassBit correction).
    #[inline]
    pub fn decide(&mut self, bypass: bool) {
        self.bypass_next = bypass;
    }

    /// Prediction-table reads and updates so far.
    pub fn table_accesses(&self) -> u64 {
        match &self.predictor {
            Predictor::None => 0,
            Predictor::Pc(p) => p.table_accesses,
            Predictor::Counter(c) => c.table_accesses,
        }
    }
}

impl Policy for L1Bypass {
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        L1Bypass::new(ctx, Predictor::None)
    }
    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, req: &Access) {
        self.plru.on_hit(set, way, req);
        let slot = set * self.ways + way;
        match &mut self.predictor {
            Predictor::None => {}
            Predictor::Pc(p) => p.on_hit(slot, req.pc),
            Predictor::Counter(c) => c.on_hit(slot),
        }
    }
    #[inline]
    fn on_miss(&mut self, _set: usize, _req: &Access) -> MissAction {
        if std::mem::take(&mut self.bypass_next) {
            MissAction::Bypass
        } else {
            MissAction::Allocate
        }
    }
    #[inline]
    fn victim(&mut self, set: usize, req: &Access, view: &SetView<'_>) -> usize {
        self.plru.victim(set, req, view)
    }
    #[inline]
    fn on_evict(&mut self, set: usize, way: usize, victim: &Evicted) {
        if victim.meta.reused() {
            self.reused_evictions += 1;
        } else {
            self.zero_reuse_evictions += 1;
        }
        let slot = set * self.ways + way;
        match &mut self.predictor {
            Predictor::None => {}
            Predictor::Pc(p) => p.on_evict(slot),
            Predictor::Counter(c) => c.on_evict(slot),
        }
    }
    #[inline]
    fn on_fill(&mut self, set: usize, way: usize, req: &Access) {
        self.plru.on_fill(set, way, req);
        let slot = set * self.ways + way;
        match &mut self.predictor {
            Predictor::None => {}
            Predictor::Pc(p) => p.on_fill(slot, req.pc),
            Predictor::Counter(c) => c.on_fill(slot, req.pc, req.addr >> self.line_bits),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predictors_build_from_the_registry_and_refuse_bad_input() {
        for e in PREDICTORS {
            let p = e.params(&toml::Table::new()).unwrap();
            assert!((e.build)(&p, 64).is_ok(), "{}", e.name);
        }
        let t = |s: &str| -> toml::Table { toml::from_str(s).unwrap() };
        assert!(matches!(
            build_predictor("pc", &t("threshold = 4"), 64),
            Ok(Predictor::Pc(_))
        ));
        let msg = |r: Result<Predictor, CacheError>| match r {
            Err(e) => e.to_string(),
            Ok(_) => panic!("accepted"),
        };
        let e = msg(build_predictor("pcc", &toml::Table::new(), 64));
        assert!(e.contains("did you mean `pc`"), "{e}");
        let e = msg(build_predictor("pc", &t("treshold = 4"), 64));
        assert!(e.contains("did you mean `threshold`"), "{e}");
        let e = msg(build_predictor("pc", &t("threshold = 16"), 64));
        assert!(e.contains("out of range"), "{e}");
        let e = msg(build_predictor("counter", &t("pc_entries = 100"), 64));
        assert!(e.contains("power of two"), "{e}");
    }

    #[test]
    fn pc_storage_matches_the_paper() {
        // 16 KB / 64 B = 256 lines; 256 KB / 64 B = 4096 L2 lines.
        let s = PcPredictor::storage(128, 256, 4096);
        // §3.1: the 128-entry table of 4-bit counters "consumes 64 bytes".
        assert_eq!(s.table_bits_per_l1 / 8, 64);
        // §4.1: "additional metadata of 7-bit in each tag entry, costing 224 bytes".
        assert_eq!(s.line_bits_per_l1 / 8, 224);
        // §4.1: the L2's bypassBits "taking 0.5KB in total".
        assert_eq!(s.l2_bytes(), 512.0);
        assert_eq!(s.bytes_per_l1(), 288.0);
    }

    #[test]
    fn counter_storage_matches_the_paper() {
        let s = CounterPredictor::storage(128, 128, 256);
        // §4.1: 128×128 entries of 5 bits = 10 KB.
        assert_eq!(s.table_bits_per_l1, 128 * 128 * 5);
        assert_eq!(s.table_bits_per_l1 / 8, 10240);
        // §3.3 "more than 10.5KB" per 16 KB L1; §4.1 quotes 10.626 KB with 20-bit tags.
        assert_eq!(s.bytes_per_l1(), 10.5 * 1024.0);
        let paper: f64 = 10240.0 + 256.0 * 20.0 / 8.0;
        assert!((paper / 1024.0 - 10.626).abs() < 0.001);
        assert_eq!(s.l2_bits, 0);
    }

    #[test]
    fn pc_counters_saturate_at_four_bits() {
        let mut p = PcPredictor::new(128, 8, 4);
        p.on_fill(0, 0x40);
        for _ in 0..20 {
            p.on_evict(0);
        }
        assert_eq!(p.counter(0x40), 15);
        for _ in 0..20 {
            p.on_hit(0, 0x40);
        }
        assert_eq!(p.counter(0x40), 0);
    }

    #[test]
    fn counter_predictor_learns_zero_hit_generations() {
        let mut c = CounterPredictor::new(128, 128, 2);
        // First generation with zero hits: entry learns 0 but is not confident yet.
        c.on_fill(0, 0x10, 77);
        c.on_evict(0);
        assert!(!c.predict(0x10, 77));
        // Second zero-hit generation confirms it.
        c.on_fill(0, 0x10, 77);
        c.on_evict(0);
        assert!(c.predict(0x10, 77));
        // A generation with hits retrains it.
        c.on_fill(1, 0x10, 77);
        c.on_hit(1);
        c.on_evict(1);
        assert!(!c.predict(0x10, 77));
    }
}
