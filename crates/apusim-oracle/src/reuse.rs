//! Reuse characterization of an LLC stream under a policy (OPT or any registered policy):
//! the studies of gspc-graphics-stream-llc.txt §2.2–2.3 (Figs. 5–7 and 9) and of
//! adaptive-gpu-l1-bypassing.txt §1 (Fig. 1), plus LRU stack-distance histograms.
//!
//! [`ReuseObserver`] watches the outcomes of a run (hits, fills, bypasses, evictions with the
//! evicted line's engine metadata) and keeps a little state per resident line:
//! - **hit rates** per stream (Fig. 5);
//! - **zero-reuse evictions** per filling stream: lines evicted without a single hit since
//!   their fill (`Evicted::meta.reused()`; adaptive-gpu-l1-bypassing Fig. 1);
//! - **inter-stream reuse** (§2.3, Fig. 6): a line's RT bit is set by a render-target (Color)
//!   access that hits or fills it, and reset when a texture read (static or dynamic texture)
//!   consumes it from the LLC — that hit is an *inter-stream* texture hit — or when the line is
//!   evicted. Texture hits on lines without the RT bit are *intra-stream*. The share of RT
//!   markings consumed by texture reads is Fig. 6's lower panel;
//! - **epochs** (§2.3, Figs. 7 and 9): a texture line (filled by a texture stream, or an RT line
//!   just consumed by a texture read) or a Z line (filled by the Depth stream) enters E0; each
//!   LLC hit moves it from E_k to E_k+1. `|E_k|` counts line lives that reached E_k; the death
//!   ratio of E_k is `(|E_k| - |E_k+1|) / |E_k|`; hits are also counted by the epoch they hit
//!   in (texture reads on texture lines, Depth accesses on Z lines);
//! - **reuse distance**: the LRU stack distance of every line reference (distinct other lines
//!   referenced since the previous reference to the same line), per stream, in power-of-two
//!   buckets, computed in O(log n) with a Fenwick tree over reference timestamps that is
//!   renumbered when full, so memory stays O(distinct lines).

use crate::error::{OracleError, Result};
use crate::nextuse::NextUses;
use crate::sim::Observer;
use crate::stats::{csv_field, OracleResult};
use crate::{run_observed, OracleConfig, OraclePolicy};
use apusim_cache::{Geometry, Outcome, PolicyContext};
use apusim_trace::{Access, AccessSource, Stream};
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::fmt::Write as _;

const CLASS_NONE: u8 = 0;
const CLASS_TEX: u8 = 1;
const CLASS_Z: u8 = 2;
/// Epoch bookkeeping depth: E0..E4 are counted so that E3's death ratio is known.
const EPOCHS: usize = 5;
/// Stack-distance buckets: 0, then [2^(b-1), 2^b) for b = 1..=64.
const BUCKETS: usize = 65;

#[derive(Clone, Copy)]
struct LineState {
    stream: u8,
    class: u8,
    rt: bool,
    reused: bool,
    epoch: u32,
}

#[derive(Clone, Copy, Default)]
struct StreamTally {
    fills: u64,
    evictions: u64,
    zero_reuse_evictions: u64,
}

#[derive(Clone, Copy, Default)]
struct EpochTally {
    reached: [u64; EPOCHS],
    hits: [u64; 4],
}

impl EpochTally {
    fn enter(&mut self) {
        self.reached[0] += 1;
    }
}

/// LRU stack distances in O(log n) per reference: a Fenwick tree marks, for every line, the
/// timestamp of its latest reference; the distance of a re-reference is the number of marks
/// after the line's previous timestamp. Timestamps are renumbered densely when they run out.
struct StackDistance {
    last: FxHashMap<u64, usize>,
    tree: Vec<u32>,
    now: usize,
}

impl StackDistance {
    fn new() -> StackDistance {
        StackDistance {
            last: FxHashMap::default(),
            tree: vec![0; 1 << 16],
            now: 0,
        }
    }
    fn add(&mut self, pos: usize, delta: i32) {
        let mut i = pos + 1;
        while i <= self.tree.len() {
            self.tree[i - 1] = self.tree[i - 1].wrapping_add_signed(delta);
            i += i & i.wrapping_neg();
        }
    }
    /// Marks at positions `0..pos`.
    fn prefix(&self, pos: usize) -> u64 {
        let mut i = pos;
        let mut s = 0u64;
        while i > 0 {
            s += self.tree[i - 1] as u64;
            i -= i & i.wrapping_neg();
        }
        s
    }
    /// Renumber the live marks 0..n in timestamp order and size the tree to at least 2n.
    fn compact(&mut self) {
        let mut live: Vec<(usize, u64)> = self.last.iter().map(|(&l, &p)| (p, l)).collect();
        live.sort_unstable();
        let n = live.len();
        let cap = (4 * n).max(1 << 16);
        self.tree = vec![0; cap];
        for (i, (_, l)) in live.iter().enumerate() {
            self.last.insert(*l, i);
        }
        // Linear Fenwick build: ones at 0..n, every node passes its sum to its parent.
        for i in 0..cap {
            if i < n {
                self.tree[i] += 1;
            }
            let j = (i + 1) + ((i + 1) & (i + 1).wrapping_neg());
            if j <= cap {
                let v = self.tree[i];
                self.tree[j - 1] += v;
            }
        }
        self.now = n;
    }
    /// Reference `line`; its stack distance, or `None` on its first reference.
    fn access(&mut self, line: u64) -> Option<u64> {
        if self.now == self.tree.len() {
            self.compact();
        }
        let t = self.now;
        self.now += 1;
        let prev = self.last.insert(line, t);
        let d = prev.map(|p| {
            let d = self.prefix(t) - self.prefix(p + 1);
            self.add(p, -1);
            d
        });
        self.add(t, 1);
        d
    }
}

#[inline]
fn bucket(d: u64) -> usize {
    if d == 0 {
        0
    } else {
        64 - d.leading_zeros() as usize
    }
}

/// The observer that gathers a [`ReuseReport`] (see the module doc).
pub struct ReuseObserver {
    lines: FxHashMap<u64, LineState>,
    streams: [StreamTally; Stream::COUNT],
    inter: InterStream,
    epochs: [EpochTally; 3],
    distance: StackDistance,
    /// Whether stack distances are tracked (the costliest part of the observer).
    distances: bool,
    cold: [u64; Stream::COUNT],
    hist: Vec<[u64; BUCKETS]>,
    /// Evictions where the engine's reused bit disagreed with the observer's (always 0; kept
    /// as a self-check and exposed for tests).
    reuse_disagreements: u64,
}

impl Default for ReuseObserver {
    fn default() -> Self {
        Self::new()
    }
}

impl ReuseObserver {
    pub fn new() -> ReuseObserver {
        ReuseObserver {
            lines: FxHashMap::default(),
            streams: [StreamTally::default(); Stream::COUNT],
            inter: InterStream::default(),
            epochs: [EpochTally::default(); 3],
            distance: StackDistance::new(),
            distances: true,
            cold: [0; Stream::COUNT],
            hist: vec![[0; BUCKETS]; Stream::COUNT],
            reuse_disagreements: 0,
        }
    }

    /// An observer that skips the LRU stack distances (its report's `reuse_distance` is
    /// empty); everything else is identical, at a fraction of the cost.
    pub fn without_distances() -> ReuseObserver {
        ReuseObserver {
            distances: false,
            ..ReuseObserver::new()
        }
    }

    /// Evictions whose engine `reused` bit disagreed with the observer's own tracking.
    pub fn reuse_disagreements(&self) -> u64 {
        self.reuse_disagreements
    }

    fn class_of(req: &Access) -> u8 {
        if req.stream.is_texture() {
            CLASS_TEX
        } else if req.stream == Stream::Depth {
            CLASS_Z
        } else {
            CLASS_NONE
        }
    }

    /// Combine the observations with the run's counters into the report.
    pub fn report(&self, result: OracleResult) -> ReuseReport {
        let mut resident = [0u64; Stream::COUNT];
        let mut unreused = [0u64; Stream::COUNT];
        let mut inter = self.inter.clone();
        for st in self.lines.values() {
            let s = (st.stream as usize).min(Stream::COUNT - 1);
            resident[s] += 1;
            unreused[s] += !st.reused as u64;
            inter.rt_resident_at_end += st.rt as u64;
        }
        inter.consumed_share = ratio(inter.rt_consumed, inter.rt_marked);
        inter.texture_hits = inter.texture_hits_inter + inter.texture_hits_intra;
        inter.inter_share = ratio(inter.texture_hits_inter, inter.texture_hits);
        let streams = Stream::ALL
            .iter()
            .filter_map(|&s| {
                let c = result.stream(s);
                let t = self.streams[s as usize];
                if c.accesses() == 0 && t.evictions == 0 && resident[s as usize] == 0 {
                    return None;
                }
                let reads = c.reads + c.prefetches;
                Some(StreamReuse {
                    stream: s,
                    accesses: c.accesses(),
                    hits: c.hits(),
                    hit_rate: c.hit_rate(),
                    reads,
                    read_hits: reads - c.read_misses - c.prefetch_misses,
                    read_hit_rate: c.read_hit_rate(),
                    bypasses: c.bypasses,
                    fills: t.fills,
                    evictions: t.evictions,
                    zero_reuse_evictions: t.zero_reuse_evictions,
                    zero_reuse_share: ratio(t.zero_reuse_evictions, t.evictions),
                    resident_at_end: resident[s as usize],
                    resident_unreused: unreused[s as usize],
                })
            })
            .collect();
        let epochs = |class: &str, t: &EpochTally| EpochStats {
            class: class.to_string(),
            lines: [t.reached[0], t.reached[1], t.reached[2], t.reached[3]],
            death_ratio: std::array::from_fn(|k| {
                ratio(t.reached[k] - t.reached[k + 1], t.reached[k])
            }),
            hits: t.hits,
        };
        let reuse_distance = Stream::ALL
            .iter()
            .filter_map(|&s| {
                let h = &self.hist[s as usize];
                let cold = self.cold[s as usize];
                let top = h.iter().rposition(|&c| c > 0);
                if cold == 0 && top.is_none() {
                    return None;
                }
                let buckets = (0..top.map_or(0, |t| t + 1))
                    .map(|b| {
                        let (lo, hi) = if b == 0 {
                            (0, 0)
                        } else {
                            (1u64 << (b - 1), ((1u128 << b) - 1) as u64)
                        };
                        DistanceBucket {
                            lo,
                            hi,
                            count: h[b],
                        }
                    })
                    .collect();
                Some(DistanceHistogram {
                    stream: s,
                    cold,
                    buckets,
                })
            })
            .collect();
        ReuseReport {
            policy: result.policy.clone(),
            geometry: result.geometry,
            accesses: result.accesses,
            references: result.references,
            streams,
            inter_stream: inter,
            texture_epochs: epochs("texture", &self.epochs[CLASS_TEX as usize]),
            depth_epochs: epochs("depth", &self.epochs[CLASS_Z as usize]),
            reuse_distance,
            result,
        }
    }
}

impl Observer for ReuseObserver {
    fn observe(&mut self, req: &Access, line: u64, _next_use: u64, outcome: &Outcome) {
        let s = req.stream as usize;
        if self.distances {
            match self.distance.access(line) {
                Some(d) => self.hist[s][bucket(d)] += 1,
                None => self.cold[s] += 1,
            }
        }
        let tex_read = req.stream.is_texture() && req.op.is_read();
        match outcome {
            Outcome::Hit { .. } => {
                let Some(st) = self.lines.get_mut(&line) else {
                    return;
                };
                st.reused = true;
                if tex_read && st.rt {
                    // Render target consumed by the sampler: a new texture life in E0.
                    self.inter.texture_hits_inter += 1;
                    self.inter.rt_consumed += 1;
                    st.rt = false;
                    st.class = CLASS_TEX;
                    st.epoch = 0;
                    self.epochs[CLASS_TEX as usize].enter();
                } else {
                    if tex_read {
                        self.inter.texture_hits_intra += 1;
                    }
                    if st.class != CLASS_NONE {
                        let e = &mut self.epochs[st.class as usize];
                        let own = match st.class {
                            CLASS_TEX => tex_read,
                            _ => req.stream == Stream::Depth,
                        };
                        if own {
                            e.hits[(st.epoch as usize).min(3)] += 1;
                        }
                        st.epoch = st.epoch.saturating_add(1);
                        if (st.epoch as usize) < EPOCHS {
                            e.reached[st.epoch as usize] += 1;
                        }
                    }
                }
                if req.stream == Stream::Color && !st.rt {
                    st.rt = true;
                    self.inter.rt_marked += 1;
                }
            }
            Outcome::Miss {
                filled, evicted, ..
            } => {
                if let Some(e) = evicted {
                    let es = e.meta.stream as usize;
                    if let Some(t) = self.streams.get_mut(es) {
                        t.evictions += 1;
                        t.zero_reuse_evictions += !e.meta.reused() as u64;
                    }
                    if let Some(st) = self.lines.remove(&e.line) {
                        self.inter.rt_evicted += st.rt as u64;
                        self.reuse_disagreements += (st.reused != e.meta.reused()) as u64;
                    }
                }
                if *filled {
                    let class = Self::class_of(req);
                    let rt = req.stream == Stream::Color;
                    self.inter.rt_marked += rt as u64;
                    self.streams[s].fills += 1;
                    if class != CLASS_NONE {
                        self.epochs[class as usize].enter();
                    }
                    self.lines.insert(
                        line,
                        LineState {
                            stream: req.stream as u8,
                            class,
                            rt,
                            reused: false,
                            epoch: 0,
                        },
                    );
                }
            }
        }
    }
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// Per-stream reuse under the policy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StreamReuse {
    pub stream: Stream,
    /// Line references of this stream (all ops).
    pub accesses: u64,
    pub hits: u64,
    pub hit_rate: Option<f64>,
    /// Read and prefetch references.
    pub reads: u64,
    pub read_hits: u64,
    pub read_hit_rate: Option<f64>,
    pub bypasses: u64,
    /// Lines this stream filled.
    pub fills: u64,
    /// Lines filled by this stream that were evicted ...
    pub evictions: u64,
    /// ... without a single hit since their fill.
    pub zero_reuse_evictions: u64,
    /// `zero_reuse_evictions / evictions` (adaptive-gpu-l1-bypassing Fig. 1).
    pub zero_reuse_share: Option<f64>,
    /// Lines of this stream still resident when the trace ends ...
    pub resident_at_end: u64,
    /// ... of which never hit.
    pub resident_unreused: u64,
}

/// Render-target → texture reuse through the LLC (gspc §2.3, Fig. 6).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct InterStream {
    /// Times a line's RT bit was set (a Color access filled the line or hit it with the bit
    /// clear): the render-target blocks of Fig. 6's lower panel.
    pub rt_marked: u64,
    /// ... consumed by a texture read from the LLC (RT bit set at the hit).
    pub rt_consumed: u64,
    /// ... evicted with the RT bit still set.
    pub rt_evicted: u64,
    /// ... still set when the trace ends.
    pub rt_resident_at_end: u64,
    /// `rt_consumed / rt_marked`.
    pub consumed_share: Option<f64>,
    /// Texture read hits, split into inter-stream (RT bit set) and intra-stream.
    pub texture_hits: u64,
    pub texture_hits_inter: u64,
    pub texture_hits_intra: u64,
    /// `texture_hits_inter / texture_hits` (Fig. 6's upper panel).
    pub inter_share: Option<f64>,
}

/// Epoch statistics of one line class (gspc §2.3, Figs. 7 and 9).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EpochStats {
    /// `texture` or `depth`.
    pub class: String,
    /// Line lives that reached E0, E1, E2 and E≥3 (`|E_k|`; E≥3 is `|E_3|`).
    pub lines: [u64; 4],
    /// Death ratio `(|E_k| - |E_k+1|) / |E_k|` of E0, E1, E2 and E3. Lives still resident at
    /// the end of the trace count as dying in their current epoch.
    pub death_ratio: [Option<f64>; 4],
    /// Hits by the class's own stream (texture reads without the RT bit; Depth accesses) on
    /// lines in E0, E1, E2, E≥3 (Fig. 7's upper panel).
    pub hits: [u64; 4],
}

/// One power-of-two bucket of stack distances `lo..=hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DistanceBucket {
    pub lo: u64,
    pub hi: u64,
    pub count: u64,
}

/// LRU stack-distance histogram of one stream (policy-independent: a property of the trace).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DistanceHistogram {
    pub stream: Stream,
    /// First references (infinite distance).
    pub cold: u64,
    pub buckets: Vec<DistanceBucket>,
}

/// Everything [`characterize`] finds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReuseReport {
    pub policy: String,
    pub geometry: Geometry,
    pub accesses: u64,
    pub references: u64,
    pub streams: Vec<StreamReuse>,
    pub inter_stream: InterStream,
    pub texture_epochs: EpochStats,
    pub depth_epochs: EpochStats,
    pub reuse_distance: Vec<DistanceHistogram>,
    /// The run's per (agent, stream) counters.
    pub result: OracleResult,
}

fn pct(r: Option<f64>) -> String {
    r.map_or_else(|| "-".to_string(), |r| format!("{:.2}", 100.0 * r))
}
fn num(r: Option<f64>) -> String {
    r.map_or_else(|| "-".to_string(), |r| format!("{r:.4}"))
}

impl ReuseReport {
    /// Aligned text tables, one section per study.
    pub fn to_table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "reuse characterization: policy {}  LLC {}  ({} accesses, {} line references)",
            self.policy, self.geometry, self.accesses, self.references
        );
        let _ = writeln!(s, "\nper stream");
        let _ = writeln!(
            s,
            "{:<16} {:>12} {:>8} {:>12} {:>8} {:>10} {:>12} {:>12} {:>12} {:>8} {:>10}",
            "stream",
            "accesses",
            "hit%",
            "reads",
            "rd_hit%",
            "bypasses",
            "fills",
            "evictions",
            "zero_reuse",
            "zr%",
            "resident"
        );
        for r in &self.streams {
            let _ = writeln!(
                s,
                "{:<16} {:>12} {:>8} {:>12} {:>8} {:>10} {:>12} {:>12} {:>12} {:>8} {:>10}",
                r.stream.name(),
                r.accesses,
                pct(r.hit_rate),
                r.reads,
                pct(r.read_hit_rate),
                r.bypasses,
                r.fills,
                r.evictions,
                r.zero_reuse_evictions,
                pct(r.zero_reuse_share),
                r.resident_at_end
            );
        }
        let i = &self.inter_stream;
        let _ = writeln!(s, "\nrender target -> texture (gspc §2.3, Fig. 6)");
        let _ = writeln!(
            s,
            "  RT blocks {}  consumed by texture {} ({}%)  evicted unconsumed {}  resident at end {}",
            i.rt_marked,
            i.rt_consumed,
            pct(i.consumed_share),
            i.rt_evicted,
            i.rt_resident_at_end
        );
        let _ = writeln!(
            s,
            "  texture hits {}  inter-stream {} ({}%)  intra-stream {}",
            i.texture_hits,
            i.texture_hits_inter,
            pct(i.inter_share),
            i.texture_hits_intra
        );
        let _ = writeln!(s, "\nepochs (gspc §2.3, Figs. 7 and 9)");
        let _ = writeln!(
            s,
            "{:<8} {:<12} {:>12} {:>12} {:>12} {:>12}",
            "class", "", "E0", "E1", "E2", "E>=3"
        );
        for e in [&self.texture_epochs, &self.depth_epochs] {
            let _ = writeln!(
                s,
                "{:<8} {:<12} {:>12} {:>12} {:>12} {:>12}",
                e.class, "lines", e.lines[0], e.lines[1], e.lines[2], e.lines[3]
            );
            let _ = writeln!(
                s,
                "{:<8} {:<12} {:>12} {:>12} {:>12} {:>12}",
                "",
                "death ratio",
                num(e.death_ratio[0]),
                num(e.death_ratio[1]),
                num(e.death_ratio[2]),
                num(e.death_ratio[3])
            );
            let _ = writeln!(
                s,
                "{:<8} {:<12} {:>12} {:>12} {:>12} {:>12}",
                "", "own hits", e.hits[0], e.hits[1], e.hits[2], e.hits[3]
            );
        }
        let _ = writeln!(
            s,
            "\nLRU stack distance (lines; buckets [2^(b-1), 2^b - 1])"
        );
        for h in &self.reuse_distance {
            let mut row = format!("  {:<16} cold {}", h.stream.name(), h.cold);
            for b in &h.buckets {
                if b.count > 0 {
                    let _ = write!(row, "  {}-{}:{}", b.lo, b.hi, b.count);
                }
            }
            let _ = writeln!(s, "{row}");
        }
        s
    }

    /// Long-format CSV: `policy,section,stream,metric,value`, one row per number.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("policy,section,stream,metric,value\n");
        let p = csv_field(&self.policy);
        let mut row = |section: &str, stream: &str, metric: &str, value: String| {
            let _ = writeln!(s, "{p},{section},{stream},{metric},{value}");
        };
        let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
        for r in &self.streams {
            let n = r.stream.name();
            row("stream", n, "accesses", r.accesses.to_string());
            row("stream", n, "hits", r.hits.to_string());
            row("stream", n, "hit_rate", opt(r.hit_rate));
            row("stream", n, "reads", r.reads.to_string());
            row("stream", n, "read_hits", r.read_hits.to_string());
            row("stream", n, "read_hit_rate", opt(r.read_hit_rate));
            row("stream", n, "bypasses", r.bypasses.to_string());
            row("stream", n, "fills", r.fills.to_string());
            row("stream", n, "evictions", r.evictions.to_string());
            row(
                "stream",
                n,
                "zero_reuse_evictions",
                r.zero_reuse_evictions.to_string(),
            );
            row("stream", n, "zero_reuse_share", opt(r.zero_reuse_share));
            row(
                "stream",
                n,
                "resident_at_end",
                r.resident_at_end.to_string(),
            );
            row(
                "stream",
                n,
                "resident_unreused",
                r.resident_unreused.to_string(),
            );
        }
        let i = &self.inter_stream;
        for (k, v) in [
            ("rt_marked", i.rt_marked.to_string()),
            ("rt_consumed", i.rt_consumed.to_string()),
            ("rt_evicted", i.rt_evicted.to_string()),
            ("rt_resident_at_end", i.rt_resident_at_end.to_string()),
            ("consumed_share", opt(i.consumed_share)),
            ("texture_hits", i.texture_hits.to_string()),
            ("texture_hits_inter", i.texture_hits_inter.to_string()),
            ("texture_hits_intra", i.texture_hits_intra.to_string()),
            ("inter_share", opt(i.inter_share)),
        ] {
            row("inter_stream", "*", k, v);
        }
        for e in [&self.texture_epochs, &self.depth_epochs] {
            let sec = format!("epochs_{}", e.class);
            for (k, label) in ["E0", "E1", "E2", "E>=3"].iter().enumerate() {
                row(&sec, "*", &format!("lines_{label}"), e.lines[k].to_string());
                row(&sec, "*", &format!("hits_{label}"), e.hits[k].to_string());
            }
            for (k, label) in ["E0", "E1", "E2", "E3"].iter().enumerate() {
                row(
                    &sec,
                    "*",
                    &format!("death_ratio_{label}"),
                    opt(e.death_ratio[k]),
                );
            }
        }
        for h in &self.reuse_distance {
            let n = h.stream.name();
            row("reuse_distance", n, "cold", h.cold.to_string());
            for b in &h.buckets {
                row(
                    "reuse_distance",
                    n,
                    &format!("{}-{}", b.lo, b.hi),
                    b.count.to_string(),
                );
            }
        }
        s
    }

    /// JSON (pretty-printed).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }
}

/// Characterize the reuse of the trace that `open` opens under `policy` (OPT, OPT+Bypass, a
/// registered policy with or without the oracle bypass). The source is opened twice when the
/// policy needs next uses, once otherwise. Errors if the trace has no accesses or no reads.
pub fn characterize(
    open: &mut dyn FnMut() -> Result<Box<dyn AccessSource>>,
    policy: &OraclePolicy,
    cfg: &OracleConfig,
    ctx: &PolicyContext,
) -> Result<ReuseReport> {
    cfg.geometry.validate()?;
    crate::check_params(std::slice::from_ref(policy), ctx)?;
    let next_uses = if policy.needs_next_uses() {
        let mut src = open()?;
        let n = NextUses::compute(&mut *src, cfg.geometry.line, &cfg.spill)?;
        if n.counts().references == 0 {
            return Err(OracleError::EmptyTrace);
        }
        if n.counts().read_references == 0 {
            return Err(OracleError::NoReads("reuse characterization"));
        }
        Some(n)
    } else {
        None
    };
    let mut src = open()?;
    characterize_with(policy, cfg, ctx, next_uses.as_ref(), &mut *src)
}

/// [`characterize`] over one replay, with next uses computed by the caller.
pub fn characterize_with(
    policy: &OraclePolicy,
    cfg: &OracleConfig,
    ctx: &PolicyContext,
    next_uses: Option<&NextUses>,
    source: &mut dyn AccessSource,
) -> Result<ReuseReport> {
    let mut obs = ReuseObserver::new();
    let result = run_observed(policy, cfg, ctx, next_uses, source, &mut obs)?;
    if result.total.reads + result.total.prefetches == 0 {
        return Err(OracleError::NoReads("reuse characterization"));
    }
    Ok(obs.report(result))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stack_distance_matches_a_list_scan_across_compactions() {
        let mut sd = StackDistance::new();
        sd.tree = vec![0; 8]; // force many compactions
        let mut stack: Vec<u64> = Vec::new();
        for i in 0..3000u64 {
            let line = (i * 31 + i / 7) % 53;
            let want = stack.iter().rposition(|&l| l == line).map(|p| {
                let d = (stack.len() - 1 - p) as u64;
                stack.remove(p);
                d
            });
            stack.push(line);
            assert_eq!(sd.access(line), want, "reference {i}");
        }
        assert!(sd.tree.len() >= 4 * 53);
    }

    #[test]
    fn buckets_are_powers_of_two() {
        assert_eq!(
            [0, 1, 2, 3, 4, 7, 8, u64::MAX].map(bucket),
            [0, 1, 2, 2, 3, 3, 4, 64]
        );
    }
}
