//! The dynamic reuse probability (DRP) policy of drp-reuse-probability-shared-llc.txt §5
//! (5.1–5.6, Figures 5–10) and its sub-policy ablation (§6, Figure 14). One type,
//! [`Drp<LEVEL>`]: `drp-rm` ([`READ_MISS`]: the read-miss sub-policy, everything else as the
//! heterogeneous baseline), `drp-rm-rh` ([`READ_HIT`]: plus the read-hit sub-policy) and `drp`
//! ([`ALL`]: plus the write-miss and write-hit sub-policies).
//!
//! DRP's WSS cache, its four sub-policies and pinning share one per-line state, held here
//! with the sub-policies' decisions; `wss` is the working set sample cache and `policy` the
//! [`Policy`](crate::Policy) hooks that apply the decisions on every access.
//!
//! # Working set sample (WSS) cache (§5.1)
//!
//! 2K entries, 128 sets × 16 ways, one entry per sampled 4 KB page (set = page mod 128, tag =
//! page). Every 8th block of a page (block index within the page ≡ 0 mod 8: 8 blocks of a
//! 64-block page) is tracked with V, W, a stream id and one read-reuse bit R (7 bits, §5.5).
//! Streams: one per CPU core, then color, depth, static texture, dynamic texture, blitter,
//! shader (shader data and instructions) and the rest.
//!
//! Every LLC access to a tracked block looks the WSS up (accesses to untracked blocks have
//! nothing to record and do not allocate). On a WSS miss an invalid way of the WSS set is
//! allocated; if there is none, the access bypasses the WSS unless its stream owns fewer than
//! 32 entries (parameter `drp_wss_min_entries`), in which case a random way (SplitMix64 from
//! the run's seed) is replaced. An entry belongs to the stream of its lowest-index valid
//! tracked block. On the tracked block:
//! - invalid: it becomes valid with W = (access is a write), R = 0, stream = the access's;
//! - valid, read: a reuse. If W is set, `WR[stream of the block]++` (write-to-read) and W is
//!   cleared; otherwise `RR[stream of the block]++` (read-to-read). The block then belongs to
//!   the reading stream;
//! - valid, write: W set, the block belongs to the writing stream.
//!
//! Each write captured counts `WA[stream]++`, each read `RA[stream]++` (the latter only for
//! the reported read-to-read reuse probability `RR/RA`). `MAX_REUSE` is the largest WR or RR
//! counter. A texture read of a block last written by color, blitter or depth is a dynamic
//! texture read (the same rule the LLC uses, §5.6), whatever its stream tag. For the read-hit
//! policy two counters estimate P(a dynamic texture block is reused beyond its first access):
//! `DT_FIRST++` on a dynamic texture read that is the block's first access as a dynamic
//! texture (R := 0), `DT_REUSE++` on a later dynamic texture read with R = 0 (R := 1).
//!
//! An epoch is 512K LLC read accesses (ops `read` and `prefetch`; parameter
//! `drp_epoch_reads`). At its end the WSS is invalidated and every reuse and access counter
//! (WR, RR, WA, RA, MAX_REUSE, DT_FIRST, DT_REUSE) is halved. Counters are 32-bit (the paper
//! gives no widths; halving bounds them).
//!
//! # Read miss (§5.2, Figure 7)
//!
//! CPU misses insert by SHiP-PC: 16K 3-bit counters (initial value `ship_init`, default 1)
//! indexed by PC bits 13:0 XOR the bit-reversed core id ([`super::ship::pc_signature`]); RRPV
//! 3 if the counter is 0, else 2. As §5.6 says, signatures are stored and trained only in 32
//! sampled sets per 1K (`set & 31 == (set >> 5) & 31`): a read hit on a CPU-filled line there
//! increments its counter, an eviction without such a hit decrements it. GPU read misses
//! insert by DRRIP's insertion component: a 10-bit selector (`psel_bits`) dueling SRRIP (RRPV
//! 2) against BRRIP (3, one in 32 at 2; `brrip_throttle`) on 32 + 32 leader sets per 1K
//! (offsets `(b - a) mod 32` 0 and 1 of the complement-select rule of [`super::util`]),
//! trained by read misses of any agent in the leaders. CPU write misses (rare: CPU data is
//! inclusive) insert like CPU read misses.
//!
//! # Write miss (§5.3, Figure 8)
//!
//! Whether a GPU write miss allocates is the baseline's rule: color, blitter and shader
//! allocate, depth follows the depth-write bypass duel, all others bypass. An allocated miss
//! of stream S: with WR = WR\[S\], WA = WA\[S\], a stream is *high WR reuse* if WR > 0 and
//! (3·WR ≥ MAX_REUSE or 8·WR ≥ WA); the block is *recommended for pinning* if WR > 0 and
//! (2·WR > MAX_REUSE or 8·WR ≥ WA). A pinned insertion is at RRPV 0, a high-WR one at 0; if
//! the stream is not high, WR = 0 and WA ≥ 128K (`drp_wa_floor`), RRPV 3; otherwise 2.
//! Whether a recommendation pins is decided by a per-stream pin duel (color, blitter, depth,
//! shader). The guard WR > 0 is our choice: without it every stream would count as high
//! before anything is measured (MAX_REUSE = 0).
//!
//! # Write hit (§5.4, Figure 9)
//!
//! High WR reuse for a write hit: WR > 0 and (2·WR ≥ MAX_REUSE or 16·WR ≥ WA), for the
//! writing stream S. Congestion-oblivious: a high stream's write hit sets RRPV 0 and is
//! recommended for pinning (pinned if S's pin duel says so: the four GPU duels, or one per CPU
//! core); otherwise the RRPV is unchanged and the pin is cleared. Congestion-aware: a high
//! stream's write hit on a block at RRPV 3 sets 2; nothing else changes. A duel (8 + 8 sets
//! per 1K) picks between them.
//!
//! # Read hit (§5.5, Figure 10)
//!
//! A read hit sets RRPV 0 and unpins the block, except the first read hit of a dynamic
//! texture block — a texture read of a line in the color/blit/depth-write state — which gets
//! RRPV 3 if P = DT_REUSE / DT_FIRST < 1/64, 2 if 1/64 ≤ P < 1/2, else 0 (P is taken as 1
//! while DT_FIRST = 0).
//!
//! # Pinning and per-line state (§5.3, §5.6)
//!
//! Three bits per line beside the RRPV: a pin bit and two state bits (none;
//! color/blit/depth-written; dynamic texture with zero reuses; with at least one). GPU
//! writes of color, blitter or depth put a line in the written state; a texture read of a
//! written line moves it to "dynamic texture, zero reuses", a further texture read to "at
//! least one"; a dynamic-texture read miss fills in "zero reuses". Victim selection is
//! SRRIP's, except that a pinned line that reaches RRPV 3 is unpinned and reset to 0 instead
//! of being evicted. A read hit unpins.
//!
//! # Duels
//!
//! With `a = set & 31`, `b = (set >> 5) & 31`, `d = (b - a) mod 32`: `d` = 0 / 1 are the GPU
//! DRRIP leaders (SRRIP / BRRIP); for `d ≥ 2`, duel `j = 2(d - 2) + ((b >> 1) & 1)` has
//! policy-0 leaders where `b` is even and policy-1 leaders where `b` is odd — 8 + 8 sets per
//! 1K for each duel, all disjoint. Duel 0: depth writes (0 allocate, 1 bypass); 1: write hit
//! (0 oblivious, 1 congestion-aware); 2–5: pinning of color, blitter, depth, shader; 6 + c:
//! pinning for CPU core c (0 ignores the recommendation, 1 follows it). Each has a 10-bit
//! selector trained by read misses (op `read`, any agent) in its two groups; followers use
//! policy 1 while the top bit is set (they start with policy 0). Caches of fewer than 1024
//! sets have proportionally fewer leaders (tests use 1024 sets).
//!
//! # Ablation
//!
//! Below [`ALL`], write misses allocate by the baseline rule and insert like read misses (as
//! [`super::hetero_writes::HeteroWrites`] does) and write hits change nothing; below [`READ_HIT`],
//! every read hit sets RRPV 0. All levels implement the write rules themselves
//! (`OWN_WRITE_RULES`).
//!
//! # Statistics
//!
//! Per WSS stream: `wss.<s>.wr`, `.rr`, `.wa`, `.ra`, `.wr_prob` (WR/WA), `.rr_prob` (RR/RA),
//! `.entries`; `wss.max_reuse`, `wss.dt_first`, `wss.dt_reuse`, `wss.valid_entries`,
//! `epochs`, `pinned_lines`, the duel selectors, and the history of the per-stream WR and RR
//! probabilities at the end of each of the last 64 epochs (`epoch<N>.<s>.wr_prob`, ...).

use super::ship::{pc_signature, TABLE_ENTRIES};
use super::util::{Bimodal, Psel, RRPV_LONG, RRPV_MAX};
use apusim_trace::{Access, Stream};

mod policy;
#[cfg(test)]
mod tests;
mod wss;

pub use wss::Wss;

/// Ablation level: the read-miss sub-policy only.
pub const READ_MISS: u8 = 1;
/// Ablation level: read miss and read hit.
pub const READ_HIT: u8 = 2;
/// All four sub-policies.
pub const ALL: u8 = 3;

/// WSS geometry (§5.6).
pub const WSS_SETS: usize = 128;
pub const WSS_WAYS: usize = 16;
pub const PAGE_BYTES: u64 = 4096;
/// Every `STRIDE`-th block of a page is tracked.
pub const STRIDE: u64 = 8;

// GPU stream slots (added to n_cpus).
pub const G_COLOR: usize = 0;
pub const G_DEPTH: usize = 1;
pub const G_TEX: usize = 2;
pub const G_DYNTEX: usize = 3;
pub const G_BLIT: usize = 4;
pub const G_SHADER: usize = 5;
pub const G_REST: usize = 6;
const GPU_STREAMS: usize = 7;
const GPU_NAMES: [&str; GPU_STREAMS] = [
    "color", "depth", "texture", "dyntex", "blitter", "shader", "rest",
];

// Duel indices.
pub const DUEL_DEPTH: usize = 0;
pub const DUEL_CONGESTION: usize = 1;
pub const DUEL_PIN: usize = 2; // + color, blitter, depth, shader
pub const DUEL_PIN_CPU: usize = 6; // + core
const MAX_DUELS: usize = 60;

// Per-line flag bits.
const ST_MASK: u8 = 0b11;
pub const ST_NONE: u8 = 0;
pub const ST_WRITTEN: u8 = 1;
pub const ST_DT0: u8 = 2;
pub const ST_DT1: u8 = 3;
const PIN: u8 = 1 << 2;
const SHIP_SIG: u8 = 1 << 3;
const SHIP_REUSED: u8 = 1 << 4;

/// Where a set sits in the duels (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leaders {
    /// GPU DRRIP leader kind (0 SRRIP, 1 BRRIP).
    pub drrip: Option<u8>,
    /// (duel index, kind) of the other duels.
    pub duel: Option<(usize, u8)>,
}

/// Duel membership of `set`.
#[inline]
pub fn leaders(set: usize) -> Leaders {
    let a = set & 31;
    let b = (set >> 5) & 31;
    let d = b.wrapping_sub(a) & 31;
    if d < 2 {
        Leaders {
            drrip: Some(d as u8),
            duel: None,
        }
    } else {
        Leaders {
            drrip: None,
            duel: Some(((d - 2) * 2 + ((b >> 1) & 1), (b & 1) as u8)),
        }
    }
}

/// True for the 32-per-1K sets where SHiP-PC stores signatures and trains.
#[inline]
pub fn ship_sampled(set: usize) -> bool {
    set & 31 == (set >> 5) & 31
}

/// Pending decision of a miss, applied by the fill.
#[derive(Clone, Copy, Debug, Default)]
struct Pending {
    rrpv: u8,
    flags: u8,
    sig: u16,
}

/// The DRP policy at ablation level `LEVEL` (see the module doc).
pub struct Drp<const LEVEL: u8> {
    ways: usize,
    n_cpus: usize,
    rrpv: Vec<u8>,
    line: Vec<u8>,
    sig: Vec<u16>,
    table: Vec<u8>,
    gpu_psel: Psel,
    bimodal: Bimodal,
    duels: Vec<Psel>,
    wss: Wss,
    epoch_reads: u64,
    reads: u64,
    epochs: u64,
    wa_floor: u32,
    pending: Pending,
    pinned: u64,
    pins: u64,
    unpins_at_distant: u64,
    write_bypasses: u64,
    dyntex_demotions: u64,
    history: Vec<Vec<(f64, f64)>>,
}

/// `drp-rm`.
pub type DrpReadMiss = Drp<READ_MISS>;
/// `drp-rm-rh`.
pub type DrpReadMissHit = Drp<READ_HIT>;
/// `drp`.
pub type DrpAll = Drp<ALL>;

const HISTORY: usize = 64;

impl<const LEVEL: u8> Drp<LEVEL> {
    /// RRPV of a line.
    pub fn rrpv(&self, set: usize, way: usize) -> u8 {
        self.rrpv[set * self.ways + way]
    }
    /// Pin bit of a line.
    pub fn pinned(&self, set: usize, way: usize) -> bool {
        self.line[set * self.ways + way] & PIN != 0
    }
    /// Two-bit LLC state of a line ([`ST_NONE`], [`ST_WRITTEN`], [`ST_DT0`], [`ST_DT1`]).
    pub fn line_state(&self, set: usize, way: usize) -> u8 {
        self.line[set * self.ways + way] & ST_MASK
    }
    pub fn wss(&self) -> &Wss {
        &self.wss
    }
    pub fn epochs(&self) -> u64 {
        self.epochs
    }
    /// SHiP-PC counter of signature `sig`.
    pub fn ship_counter(&self, sig: u16) -> u8 {
        self.table[sig as usize & (TABLE_ENTRIES - 1)]
    }
    /// Selector of duel `j`.
    pub fn duel_psel(&self, j: usize) -> u32 {
        self.duels[j].value()
    }
    /// Selector of the GPU DRRIP insertion duel.
    pub fn gpu_psel(&self) -> u32 {
        self.gpu_psel.value()
    }
    /// Number of pinned lines.
    pub fn pinned_lines(&self) -> u64 {
        self.pinned
    }

    /// WSS stream of an access.
    #[inline]
    pub fn sid(&self, req: &Access) -> usize {
        match req.agent.cpu_index() {
            Some(c) => c % self.n_cpus.max(1),
            None => {
                self.n_cpus
                    + match req.stream {
                        Stream::Color => G_COLOR,
                        Stream::Depth => G_DEPTH,
                        Stream::StaticTexture => G_TEX,
                        Stream::DynamicTexture => G_DYNTEX,
                        Stream::Blitter => G_BLIT,
                        Stream::ShaderData | Stream::ShaderInstr => G_SHADER,
                        _ => G_REST,
                    }
            }
        }
    }

    /// The policy (0 or 1) duel `j` applies in `set`.
    #[inline]
    fn duel_policy(&self, set: usize, j: usize) -> u8 {
        match leaders(set).duel {
            Some((d, kind)) if d == j => kind,
            _ => self.duels[j].choice(),
        }
    }

    /// Pin duel of WSS stream `s`, if it has one.
    #[inline]
    fn pin_duel(&self, s: usize) -> Option<usize> {
        if s < self.n_cpus {
            let j = DUEL_PIN_CPU + s;
            return (j < MAX_DUELS).then_some(j);
        }
        match s - self.n_cpus {
            G_COLOR => Some(DUEL_PIN),
            G_BLIT => Some(DUEL_PIN + 1),
            G_DEPTH => Some(DUEL_PIN + 2),
            G_SHADER => Some(DUEL_PIN + 3),
            _ => None,
        }
    }

    /// Does the pin duel let stream `s` pin in `set`?
    #[inline]
    fn may_pin(&self, set: usize, s: usize) -> bool {
        self.pin_duel(s)
            .is_some_and(|j| self.duel_policy(set, j) == 1)
    }

    #[inline]
    fn wr_wa(&self, s: usize) -> (u64, u64, u64) {
        (
            self.wss.wr[s] as u64,
            self.wss.wa[s] as u64,
            self.wss.max_reuse as u64,
        )
    }

    /// High write-to-read reuse for a write miss (§5.3).
    pub fn high_wr_miss(&self, s: usize) -> bool {
        let (wr, wa, max) = self.wr_wa(s);
        wr > 0 && (3 * wr >= max || 8 * wr >= wa)
    }
    /// Pinning recommendation of a write miss (§5.3).
    pub fn pin_recommended(&self, s: usize) -> bool {
        let (wr, wa, max) = self.wr_wa(s);
        wr > 0 && (2 * wr > max || 8 * wr >= wa)
    }
    /// High write-to-read reuse for a write hit (§5.4).
    pub fn high_wr_hit(&self, s: usize) -> bool {
        let (wr, wa, max) = self.wr_wa(s);
        wr > 0 && (2 * wr >= max || 16 * wr >= wa)
    }

    /// RRPV of a dynamic texture block's first read hit (§5.5).
    pub fn dyntex_first_hit_rrpv(&self) -> u8 {
        let (first, reuse) = (self.wss.dt_first as u64, self.wss.dt_reuse as u64);
        if first == 0 || 2 * reuse >= first {
            0
        } else if 64 * reuse < first {
            RRPV_MAX
        } else {
            RRPV_LONG
        }
    }

    /// The read-miss policy's insertion (CPU: SHiP-PC; GPU: DRRIP).
    #[inline]
    fn read_miss_insertion(&mut self, set: usize, req: &Access) -> Pending {
        if let Some(core) = req.agent.cpu_index() {
            let sig = pc_signature(req.pc, core);
            let rrpv = if self.table[sig as usize] == 0 {
                RRPV_MAX
            } else {
                RRPV_LONG
            };
            let flags = if ship_sampled(set) { SHIP_SIG } else { 0 };
            Pending { rrpv, flags, sig }
        } else {
            let policy = leaders(set).drrip.unwrap_or_else(|| self.gpu_psel.choice());
            let rrpv = if policy == 0 {
                RRPV_LONG
            } else {
                self.bimodal.insertion()
            };
            let flags = if req.stream == Stream::DynamicTexture && !req.op.is_write() {
                ST_DT0
            } else {
                0
            };
            Pending {
                rrpv,
                flags,
                sig: 0,
            }
        }
    }

    /// WSS update and epoch accounting, after the LLC decision.
    #[inline]
    fn observe(&mut self, req: &Access) {
        let sid = self.sid(req);
        let write = req.op.is_write();
        self.wss
            .access(req.addr, sid, write, !write && req.stream.is_texture());
        if req.op.is_read() {
            self.reads += 1;
            if self.reads >= self.epoch_reads {
                self.end_epoch();
            }
        }
    }

    fn end_epoch(&mut self) {
        let snap: Vec<(f64, f64)> = (0..self.wss.streams())
            .map(|s| {
                (
                    Wss::prob(self.wss.wr[s], self.wss.wa[s]),
                    Wss::prob(self.wss.rr[s], self.wss.ra[s]),
                )
            })
            .collect();
        if self.history.len() == HISTORY {
            self.history.remove(0);
        }
        self.history.push(snap);
        self.wss.new_epoch();
        self.reads = 0;
        self.epochs += 1;
    }

    #[inline]
    fn unpin(&mut self, i: usize) {
        if self.line[i] & PIN != 0 {
            self.line[i] &= !PIN;
            self.pinned -= 1;
        }
    }
    #[inline]
    fn pin(&mut self, i: usize) {
        if self.line[i] & PIN == 0 {
            self.line[i] |= PIN;
            self.pinned += 1;
            self.pins += 1;
        }
    }
}

/// True for GPU streams whose writes put a line in the color/blit/depth-written state.
#[inline]
fn cbd_write(req: &Access) -> bool {
    req.agent.is_gpu()
        && req.op.is_write()
        && matches!(req.stream, Stream::Color | Stream::Blitter | Stream::Depth)
}
