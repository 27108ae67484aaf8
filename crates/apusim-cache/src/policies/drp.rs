//! The dynamic reuse probability (DRP) policy of drp-reuse-probability-shared-llc.txt §5
//! (5.1–5.6, Figures 5–10) and its sub-policy ablation (§6, Figure 14). One type,
//! [`Drp<LEVEL>`]: `drp-rm` ([`READ_MISS`]: the read-miss sub-policy, everything else as the
//! heterogeneous baseline), `drp-rm-rh` ([`READ_HIT`]: plus the read-hit sub-policy) and `drp`
//! ([`ALL`]: plus the write-miss and write-hit sub-policies).
//!
//! One file, one policy: DRP's WSS cache, its four sub-policies and pinning share one
//! per-line state; a third of it is unit tests.
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

use super::ship::{pc_signature, COUNTER_MAX, SHIP_INIT, TABLE_ENTRIES};
use super::util::{
    prefetch, sat_dec, sat_inc, Bimodal, Psel, SplitMix64, BRRIP_THROTTLE, PSEL_BITS, RRPV_LONG,
    RRPV_MAX,
};
use crate::params::{ParamKind, ParamList, ParamSpec};
use crate::{CacheError, Evicted, MissAction, Policy, PolicyContext, PolicyStat, SetView};
use apusim_trace::{Access, Op, Stream};

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

// WSS block bits (low 8: stream id).
const B_V: u16 = 1 << 8;
const B_W: u16 = 1 << 9;
const B_R: u16 = 1 << 10;
const NO_OWNER: u8 = u8::MAX;
const NO_PAGE: u64 = u64::MAX;

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

/// The working set sample cache and its counters.
pub struct Wss {
    n_cpus: usize,
    line_bits: u32,
    blocks_per_page: u64,
    tracked: usize,
    page: Vec<u64>,
    owner: Vec<u8>,
    blk: Vec<u16>,
    entries_of: Vec<u32>,
    min_entries: u32,
    rng: SplitMix64,
    pub wr: Vec<u32>,
    pub rr: Vec<u32>,
    pub wa: Vec<u32>,
    pub ra: Vec<u32>,
    pub max_reuse: u32,
    pub dt_first: u32,
    pub dt_reuse: u32,
}

impl Wss {
    fn new(ctx: &PolicyContext, min_entries: u32) -> Wss {
        let n = ctx.n_cpus + GPU_STREAMS;
        let line_bits = ctx.line_bytes.max(1).trailing_zeros();
        let blocks_per_page = (PAGE_BYTES >> line_bits).max(1);
        let tracked = blocks_per_page.div_ceil(STRIDE) as usize;
        Wss {
            n_cpus: ctx.n_cpus,
            line_bits,
            blocks_per_page,
            tracked,
            page: vec![NO_PAGE; WSS_SETS * WSS_WAYS],
            owner: vec![NO_OWNER; WSS_SETS * WSS_WAYS],
            blk: vec![0; WSS_SETS * WSS_WAYS * tracked],
            entries_of: vec![0; n],
            min_entries,
            rng: SplitMix64::new(ctx.seed ^ 0xD5B_5EED),
            wr: vec![0; n],
            rr: vec![0; n],
            wa: vec![0; n],
            ra: vec![0; n],
            max_reuse: 0,
            dt_first: 0,
            dt_reuse: 0,
        }
    }

    fn streams(&self) -> usize {
        self.wr.len()
    }

    fn stream_name(&self, s: usize) -> String {
        if s < self.n_cpus {
            format!("cpu{s}")
        } else {
            GPU_NAMES[s - self.n_cpus].to_string()
        }
    }

    /// Entries owned by stream `s`.
    pub fn entries_of(&self, s: usize) -> u32 {
        self.entries_of[s]
    }

    /// Valid entries.
    pub fn valid_entries(&self) -> usize {
        self.page.iter().filter(|&&p| p != NO_PAGE).count()
    }

    /// The tracked-block state of the block holding `addr`, if its page is in the WSS:
    /// (valid, written, reused, stream).
    pub fn block(&self, addr: u64) -> Option<(bool, bool, bool, usize)> {
        let line = addr >> self.line_bits;
        let page = line / self.blocks_per_page;
        let m = ((line % self.blocks_per_page) / STRIDE) as usize;
        let set = (page % WSS_SETS as u64) as usize;
        let e = (set * WSS_WAYS..(set + 1) * WSS_WAYS).find(|&e| self.page[e] == page)?;
        let b = self.blk[e * self.tracked + m];
        Some((
            b & B_V != 0,
            b & B_W != 0,
            b & B_R != 0,
            (b & 0xFF) as usize,
        ))
    }

    #[inline]
    fn bump(&mut self, write_to_read: bool, s: usize) {
        let c = if write_to_read {
            &mut self.wr[s]
        } else {
            &mut self.rr[s]
        };
        *c = c.saturating_add(1);
        self.max_reuse = self.max_reuse.max(*c);
    }

    fn set_owner(&mut self, e: usize) {
        let base = e * self.tracked;
        let new = self.blk[base..base + self.tracked]
            .iter()
            .find(|&&b| b & B_V != 0)
            .map_or(NO_OWNER, |&b| (b & 0xFF) as u8);
        let old = self.owner[e];
        if old != new {
            if old != NO_OWNER {
                self.entries_of[old as usize] -= 1;
            }
            if new != NO_OWNER {
                self.entries_of[new as usize] += 1;
            }
            self.owner[e] = new;
        }
    }

    /// Record one LLC access of WSS stream `sid` (`texture`: a texture-sampler read).
    #[inline]
    fn access(&mut self, addr: u64, sid: usize, write: bool, texture: bool) {
        let line = addr >> self.line_bits;
        let off = line % self.blocks_per_page;
        if !off.is_multiple_of(STRIDE) {
            return;
        }
        self.access_tracked(
            line / self.blocks_per_page,
            (off / STRIDE) as usize,
            sid,
            write,
            texture,
        );
    }

    fn access_tracked(&mut self, page: u64, m: usize, sid: usize, write: bool, texture: bool) {
        let set = (page % WSS_SETS as u64) as usize;
        let ways = set * WSS_WAYS..(set + 1) * WSS_WAYS;
        let e = match ways.clone().find(|&e| self.page[e] == page) {
            Some(e) => e,
            None => {
                let e = match ways.clone().find(|&e| self.page[e] == NO_PAGE) {
                    Some(e) => e,
                    None if self.entries_of[sid] < self.min_entries => {
                        set * WSS_WAYS + self.rng.below(WSS_WAYS)
                    }
                    None => return,
                };
                let base = e * self.tracked;
                self.blk[base..base + self.tracked].fill(0);
                self.page[e] = page;
                self.set_owner(e);
                e
            }
        };
        let dyntex = self.n_cpus + G_DYNTEX;
        let i = e * self.tracked + m;
        let b = self.blk[i];
        if write {
            self.wa[sid] = self.wa[sid].saturating_add(1);
            self.blk[i] = B_V | B_W | sid as u16;
        } else if b & B_V == 0 {
            self.ra[sid] = self.ra[sid].saturating_add(1);
            if sid == dyntex {
                self.dt_first = self.dt_first.saturating_add(1);
            }
            self.blk[i] = B_V | sid as u16;
        } else {
            let old = (b & 0xFF) as usize;
            let written = b & B_W != 0;
            // A texture read of color/blitter/depth-written data is a dynamic texture read.
            let cbd = [G_COLOR, G_BLIT, G_DEPTH].map(|g| self.n_cpus + g);
            let eff = if texture && (cbd.contains(&old) || old == dyntex) {
                dyntex
            } else {
                sid
            };
            self.ra[eff] = self.ra[eff].saturating_add(1);
            self.bump(written, old);
            let first = written || old != eff;
            let mut r = 0;
            if eff == dyntex {
                if first {
                    self.dt_first = self.dt_first.saturating_add(1);
                } else if b & B_R == 0 {
                    self.dt_reuse = self.dt_reuse.saturating_add(1);
                    r = B_R;
                } else {
                    r = B_R;
                }
            } else if !first {
                r = B_R;
            }
            self.blk[i] = B_V | r | eff as u16;
        }
        self.set_owner(e);
    }

    /// End of an epoch: invalidate, halve.
    fn new_epoch(&mut self) {
        self.page.fill(NO_PAGE);
        self.owner.fill(NO_OWNER);
        self.blk.fill(0);
        self.entries_of.fill(0);
        for v in self
            .wr
            .iter_mut()
            .chain(self.rr.iter_mut())
            .chain(self.wa.iter_mut())
            .chain(self.ra.iter_mut())
        {
            *v >>= 1;
        }
        self.max_reuse >>= 1;
        self.dt_first >>= 1;
        self.dt_reuse >>= 1;
    }

    fn prob(num: u32, den: u32) -> f64 {
        if den == 0 {
            0.0
        } else {
            num as f64 / den as f64
        }
    }
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

/// The WSS epoch and allocation floor and the write sub-policy's access floor (drp §5.1,
/// §5.4).
const DRP_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "drp_epoch_reads",
        kind: ParamKind::Int { min: 1, max: 1 << 40 },
        default: "524288",
        unit: "reads",
        doc: "LLC reads per epoch, at whose end the WSS is invalidated and counters halve (drp §5.1)",
    },
    ParamSpec {
        name: "drp_wss_min_entries",
        kind: ParamKind::Int { min: 0, max: (WSS_SETS * WSS_WAYS) as u64 },
        default: "32",
        unit: "entries",
        doc: "WSS entries a stream keeps before its misses may take a random way (drp §5.1)",
    },
    ParamSpec {
        name: "drp_wa_floor",
        kind: ParamKind::Int { min: 0, max: u32::MAX as u64 },
        default: "131072",
        unit: "accesses",
        doc: "write accesses (WA) at or above which a stream with no write reuse inserts at RRPV 3 (drp §5.4)",
    },
];

impl<const LEVEL: u8> Policy for Drp<LEVEL> {
    fn params(list: &mut ParamList) {
        list.add(&[SHIP_INIT, PSEL_BITS, BRRIP_THROTTLE]);
        list.add(&DRP_PARAMS[..2]);
        if LEVEL >= ALL {
            list.add(&DRP_PARAMS[2..]);
        }
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        let init = ctx.int(&SHIP_INIT)? as u8;
        let epoch_reads = ctx.int(&DRP_PARAMS[0])?;
        let min_entries = ctx.int(&DRP_PARAMS[1])?;
        // Only the write sub-policy (`ALL`) uses the WA floor (see `params`).
        let unset = ctx.without_params();
        let writes = if LEVEL >= ALL { ctx } else { &unset };
        let wa_floor = writes.int(&DRP_PARAMS[2])? as u32;
        if ctx.n_cpus + GPU_STREAMS > 255 {
            return Err(CacheError::Config(
                "drp: at most 248 CPU cores (WSS stream ids are 8 bits)".into(),
            ));
        }
        let psel = Psel::from_ctx(ctx, &PSEL_BITS)?;
        let n = ctx.sets * ctx.ways;
        let n_duels = (DUEL_PIN_CPU + ctx.n_cpus).min(MAX_DUELS);
        Ok(Drp {
            ways: ctx.ways,
            n_cpus: ctx.n_cpus,
            rrpv: vec![RRPV_MAX; n],
            line: vec![0; n],
            sig: vec![0; n],
            table: vec![init; TABLE_ENTRIES],
            gpu_psel: psel,
            bimodal: Bimodal::from_ctx(ctx)?,
            duels: vec![psel; n_duels],
            wss: Wss::new(ctx, min_entries as u32),
            epoch_reads,
            reads: 0,
            epochs: 0,
            wa_floor,
            pending: Pending::default(),
            pinned: 0,
            pins: 0,
            unpins_at_distant: 0,
            write_bypasses: 0,
            dyntex_demotions: 0,
            history: Vec::new(),
        })
    }

    const OWN_WRITE_RULES: bool = true;

    #[inline]
    fn prefetch_set(&self, set: usize) {
        prefetch(&self.rrpv, set * self.ways);
        prefetch(&self.line, set * self.ways);
    }

    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, req: &Access) {
        let i = set * self.ways + way;
        if !req.op.is_write() {
            let f = self.line[i];
            if f & SHIP_SIG != 0 {
                sat_inc(&mut self.table[self.sig[i] as usize], COUNTER_MAX);
                self.line[i] |= SHIP_REUSED;
            }
            self.unpin(i);
            let st = f & ST_MASK;
            let mut rrpv = 0;
            if req.agent.is_gpu() && req.stream.is_texture() {
                if st == ST_WRITTEN {
                    if LEVEL >= READ_HIT {
                        rrpv = self.dyntex_first_hit_rrpv();
                        if rrpv != 0 {
                            self.dyntex_demotions += 1;
                        }
                    }
                    self.line[i] = (self.line[i] & !ST_MASK) | ST_DT0;
                } else if st == ST_DT0 {
                    self.line[i] = (self.line[i] & !ST_MASK) | ST_DT1;
                }
            }
            self.rrpv[i] = rrpv;
        } else {
            if cbd_write(req) {
                self.line[i] = (self.line[i] & !ST_MASK) | ST_WRITTEN;
            }
            if LEVEL >= ALL {
                let s = self.sid(req);
                if self.high_wr_hit(s) {
                    if self.duel_policy(set, DUEL_CONGESTION) == 0 {
                        self.rrpv[i] = 0;
                        if self.may_pin(set, s) {
                            self.pin(i);
                        }
                    } else if self.rrpv[i] == RRPV_MAX {
                        self.rrpv[i] = RRPV_LONG;
                    }
                } else if self.duel_policy(set, DUEL_CONGESTION) == 0 {
                    self.unpin(i);
                }
            }
        }
        self.observe(req);
    }

    #[inline]
    fn on_miss(&mut self, set: usize, req: &Access) -> MissAction {
        let l = leaders(set);
        if req.op == Op::Read {
            if let Some(k) = l.drrip {
                self.gpu_psel.record_miss(k);
            }
            if let Some((j, k)) = l.duel {
                if let Some(p) = self.duels.get_mut(j) {
                    p.record_miss(k);
                }
            }
        }
        let action = if req.agent.is_gpu() && req.op.is_write() {
            let allocate = match req.stream {
                Stream::Color | Stream::Blitter | Stream::ShaderData => true,
                Stream::Depth => self.duel_policy(set, DUEL_DEPTH) == 0,
                _ => false,
            };
            if !allocate {
                self.write_bypasses += 1;
                MissAction::Bypass
            } else {
                let state = if cbd_write(req) { ST_WRITTEN } else { 0 };
                if LEVEL >= ALL {
                    let s = self.sid(req);
                    let high = self.high_wr_miss(s);
                    let (pin, rrpv) = if self.pin_recommended(s) && self.may_pin(set, s) {
                        (PIN, 0)
                    } else if high {
                        (0, 0)
                    } else if self.wss.wr[s] == 0 && self.wss.wa[s] >= self.wa_floor {
                        (0, RRPV_MAX)
                    } else {
                        (0, RRPV_LONG)
                    };
                    self.pending = Pending {
                        rrpv,
                        flags: pin | state,
                        sig: 0,
                    };
                } else {
                    let mut p = self.read_miss_insertion(set, req);
                    p.flags = state;
                    self.pending = p;
                }
                MissAction::Allocate
            }
        } else {
            self.pending = self.read_miss_insertion(set, req);
            MissAction::Allocate
        };
        self.observe(req);
        action
    }

    #[inline]
    fn victim(&mut self, set: usize, _req: &Access, _view: &SetView<'_>) -> usize {
        let base = set * self.ways;
        loop {
            let mut max = 0u8;
            for w in 0..self.ways {
                let v = self.rrpv[base + w];
                if v >= RRPV_MAX {
                    if self.line[base + w] & PIN == 0 {
                        return w;
                    }
                    // A pinned line reaching 3 is unpinned and reset to 0.
                    self.unpin(base + w);
                    self.unpins_at_distant += 1;
                    self.rrpv[base + w] = 0;
                } else {
                    max = max.max(v);
                }
            }
            let age = RRPV_MAX - max;
            for v in &mut self.rrpv[base..base + self.ways] {
                *v += age;
            }
        }
    }

    #[inline]
    fn on_evict(&mut self, set: usize, way: usize, _victim: &Evicted) {
        let i = set * self.ways + way;
        let f = self.line[i];
        if f & (SHIP_SIG | SHIP_REUSED) == SHIP_SIG {
            sat_dec(&mut self.table[self.sig[i] as usize]);
        }
        self.unpin(i);
    }

    #[inline]
    fn on_fill(&mut self, set: usize, way: usize, _req: &Access) {
        let i = set * self.ways + way;
        let p = self.pending;
        // A line refilled after a back-invalidation may still carry a pin.
        self.unpin(i);
        self.line[i] = p.flags & !PIN;
        if p.flags & PIN != 0 {
            self.pin(i);
        }
        self.rrpv[i] = p.rrpv;
        self.sig[i] = p.sig;
    }

    fn stats(&self) -> Vec<PolicyStat> {
        let w = &self.wss;
        let mut s: Vec<PolicyStat> = Vec::new();
        for k in 0..w.streams() {
            let n = w.stream_name(k);
            s.push((format!("wss.{n}.wr"), w.wr[k] as f64));
            s.push((format!("wss.{n}.rr"), w.rr[k] as f64));
            s.push((format!("wss.{n}.wa"), w.wa[k] as f64));
            s.push((format!("wss.{n}.ra"), w.ra[k] as f64));
            s.push((format!("wss.{n}.wr_prob"), Wss::prob(w.wr[k], w.wa[k])));
            s.push((format!("wss.{n}.rr_prob"), Wss::prob(w.rr[k], w.ra[k])));
            s.push((format!("wss.{n}.entries"), w.entries_of[k] as f64));
        }
        s.push(("wss.max_reuse".into(), w.max_reuse as f64));
        s.push(("wss.dt_first".into(), w.dt_first as f64));
        s.push(("wss.dt_reuse".into(), w.dt_reuse as f64));
        s.push(("wss.valid_entries".into(), w.valid_entries() as f64));
        s.push(("epochs".into(), self.epochs as f64));
        s.push(("pinned_lines".into(), self.pinned as f64));
        s.push(("pins".into(), self.pins as f64));
        s.push(("unpins_at_distant".into(), self.unpins_at_distant as f64));
        s.push(("gpu_write_bypasses".into(), self.write_bypasses as f64));
        s.push(("dyntex_demotions".into(), self.dyntex_demotions as f64));
        s.push(("gpu_drrip_psel".into(), self.gpu_psel.value() as f64));
        s.push(("depth_psel".into(), self.duels[DUEL_DEPTH].value() as f64));
        s.push((
            "congestion_psel".into(),
            self.duels[DUEL_CONGESTION].value() as f64,
        ));
        for (j, p) in self.duels.iter().enumerate().skip(DUEL_PIN) {
            let owner = if j < DUEL_PIN_CPU {
                ["color", "blitter", "depth", "shader"][j - DUEL_PIN].to_string()
            } else {
                format!("cpu{}", j - DUEL_PIN_CPU)
            };
            s.push((format!("pin_psel.{owner}"), p.value() as f64));
        }
        let first = self.epochs as usize - self.history.len();
        for (e, snap) in self.history.iter().enumerate() {
            for (k, (wr, rr)) in snap.iter().enumerate() {
                let n = w.stream_name(k);
                s.push((format!("epoch{}.{n}.wr_prob", first + e), *wr));
                s.push((format!("epoch{}.{n}.rr_prob", first + e), *rr));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::util::test_support::*;
    use super::*;
    use crate::Cache;
    use apusim_trace::Agent;

    const COLOR: usize = 1 + G_COLOR; // one CPU core in test contexts
    const BLIT: usize = 1 + G_BLIT;
    const DYNTEX: usize = 1 + G_DYNTEX;

    fn drp<const L: u8>(params: &[(&str, f64)]) -> Cache<Drp<L>> {
        let mut c = ctx(1024, 2);
        for (k, v) in params {
            c.params.insert(k.to_string(), *v);
        }
        cache(1024, 2, Drp::<L>::build(&c).unwrap())
    }
    fn color_w(line: u64) -> Access {
        gpu(Stream::Color, Op::Write, line)
    }
    fn tex(line: u64) -> Access {
        gpu(Stream::StaticTexture, Op::Read, line)
    }
    fn set_wr(c: &mut Cache<Drp<ALL>>, s: usize, wr: u32, wa: u32, max: u32) {
        let w = &mut c.policy_mut().wss;
        w.wr[s] = wr;
        w.wa[s] = wa;
        w.max_reuse = max;
    }
    #[test]
    fn duel_groups_are_disjoint_8_per_1k() {
        assert_eq!(leaders(0).drrip, Some(0));
        assert_eq!(leaders(31).drrip, Some(1));
        assert_eq!(leaders(30).duel, Some((DUEL_DEPTH, 0)));
        assert_eq!(leaders(63).duel, Some((DUEL_DEPTH, 1)));
        assert_eq!(leaders(64).duel, Some((DUEL_CONGESTION, 0)));
        assert_eq!(leaders(97).duel, Some((DUEL_CONGESTION, 1)));
        assert_eq!(leaders(29).duel, Some((DUEL_PIN, 0)));
        assert_eq!(leaders(62).duel, Some((DUEL_PIN, 1)));
        assert_eq!(leaders(60).duel, Some((DUEL_PIN_CPU, 1)));
        for j in 0..MAX_DUELS {
            for k in 0..2u8 {
                let n = (0..1024)
                    .filter(|&s| leaders(s).duel == Some((j, k)))
                    .count();
                assert_eq!(n, 8, "duel {j} kind {k}");
            }
        }
        assert_eq!(
            (0..1024).filter(|&s| leaders(s).drrip == Some(0)).count(),
            32
        );
        assert_eq!((0..1024).filter(|&s| ship_sampled(s)).count(), 32);
    }

    /// Figure 6: write, then reads of a tracked block; the WR/RR/WA counters and the
    /// dynamic-texture counters.
    #[test]
    fn wss_counts_write_to_read_and_read_to_read_reuse() {
        let mut c = drp::<ALL>(&[]);
        // Line 8: page 0, tracked block 1. Untracked line 9 is never recorded.
        run(&mut c, &gpu(Stream::Color, Op::Write, 9));
        assert_eq!(c.policy().wss().valid_entries(), 0);
        run(&mut c, &color_w(8));
        let w = c.policy().wss();
        assert_eq!((w.wa[COLOR], w.wr[COLOR], w.valid_entries()), (1, 0, 1));
        assert_eq!(w.block(8 * LINE), Some((true, true, false, COLOR)));
        assert_eq!(w.entries_of(COLOR), 1);
        // A static-texture read of color-written data: WR[color]++, a dynamic texture first
        // access; the LLC line goes from written to DT0 (P unknown: RRPV 0).
        assert_eq!(c.policy().line_state(8, 0), ST_WRITTEN);
        assert_eq!(run(&mut c, &tex(8)), Did::Hit);
        let w = c.policy().wss();
        assert_eq!(
            (w.wr[COLOR], w.max_reuse, w.dt_first, w.dt_reuse),
            (1, 1, 1, 0)
        );
        assert_eq!(w.block(8 * LINE), Some((true, false, false, DYNTEX)));
        assert_eq!(
            (c.policy().line_state(8, 0), c.policy().rrpv(8, 0)),
            (ST_DT0, 0)
        );
        // Second read: RR[dyntex]++ and the first reuse beyond the first access.
        run(&mut c, &tex(8));
        let w = c.policy().wss();
        assert_eq!((w.rr[DYNTEX], w.dt_first, w.dt_reuse), (1, 1, 1));
        assert_eq!(w.block(8 * LINE), Some((true, false, true, DYNTEX)));
        assert_eq!(c.policy().line_state(8, 0), ST_DT1);
        // Third read: RR again, no more DT_REUSE.
        run(&mut c, &tex(8));
        let w = c.policy().wss();
        assert_eq!((w.rr[DYNTEX], w.dt_reuse, w.max_reuse), (2, 1, 2));
        // A CPU read of a fresh tracked block validates it without reuse.
        run(&mut c, &cpu_read(16));
        assert_eq!(
            c.policy().wss().block(16 * LINE),
            Some((true, false, false, 0))
        );
        assert_eq!(c.policy().wss().rr[0], 0);
        let st = c.policy().stats();
        assert!(st.contains(&("wss.color.wr_prob".to_string(), 1.0)));
        assert!(st.contains(&("wss.dyntex.rr".to_string(), 2.0)));
    }

    /// §5.1: allocation only into invalid entries; replacement only for streams with fewer
    /// than `drp_wss_min_entries` entries (8 here instead of 32).
    #[test]
    fn wss_allocation_and_replacement() {
        let mut c = drp::<ALL>(&[("drp_wss_min_entries", 8.0)]);
        // Pages 0, 128, 256, ... share WSS set 0; block 0 of each is tracked.
        let page_line = |k: u64| k * 128 * 64;
        for k in 0..16 {
            run(&mut c, &color_w(page_line(k)));
        }
        assert_eq!(c.policy().wss().entries_of(COLOR), 16);
        assert_eq!(c.policy().wss().valid_entries(), 16);
        // Color owns 16 >= 8 entries: a 17th page bypasses the WSS.
        run(&mut c, &color_w(page_line(16)));
        assert_eq!(c.policy().wss().block(page_line(16) * LINE), None);
        assert_eq!(c.policy().wss().wa[COLOR], 16);
        // Blitter owns none: a random color entry is replaced.
        run(&mut c, &gpu(Stream::Blitter, Op::Write, page_line(17)));
        let w = c.policy().wss();
        assert_eq!(
            w.block(page_line(17) * LINE),
            Some((true, true, false, BLIT))
        );
        assert_eq!((w.entries_of(COLOR), w.entries_of(BLIT)), (15, 1));
        assert_eq!(w.valid_entries(), 16);
        // Another WSS set still has invalid entries: allocation without replacement.
        run(&mut c, &color_w(64));
        assert_eq!(c.policy().wss().valid_entries(), 17);
        assert_eq!(c.policy().wss().entries_of(COLOR), 16);
    }

    /// An epoch of `drp_epoch_reads` reads invalidates the WSS and halves every counter.
    #[test]
    fn epochs_invalidate_and_halve() {
        let mut c = drp::<ALL>(&[("drp_epoch_reads", 5.0)]);
        for _ in 0..3 {
            run(&mut c, &color_w(8));
            run(&mut c, &tex(8)); // reads 1, 2, 3
        }
        let w = c.policy().wss();
        assert_eq!((w.wr[COLOR], w.wa[COLOR], w.max_reuse), (3, 3, 3));
        assert_eq!((w.dt_first, w.ra[DYNTEX]), (3, 3));
        run(&mut c, &cpu_read(3)); // read 4 (untracked)
        assert_eq!(c.policy().epochs(), 0);
        run(&mut c, &cpu_read(5)); // read 5: epoch ends
        assert_eq!(c.policy().epochs(), 1);
        let w = c.policy().wss();
        assert_eq!((w.wr[COLOR], w.wa[COLOR], w.max_reuse), (1, 1, 1));
        assert_eq!((w.dt_first, w.ra[DYNTEX]), (1, 1));
        assert_eq!(w.valid_entries(), 0);
        assert_eq!(w.block(8 * LINE), None);
        assert_eq!(w.entries_of(COLOR), 0);
        // Writes do not count toward the epoch.
        for _ in 0..10 {
            run(&mut c, &color_w(8));
        }
        assert_eq!(c.policy().epochs(), 1);
        let st = c.policy().stats();
        assert!(st.contains(&("epoch0.color.wr_prob".to_string(), 1.0)));
        assert!(st.contains(&("epochs".to_string(), 1.0)));
    }

    /// §5.2: SHiP-PC for CPU read misses (trained in sampled sets only), DRRIP insertion for
    /// GPU read misses.
    #[test]
    fn read_miss_policy() {
        let mut c = drp::<ALL>(&[]);
        let pc = 0x400;
        let sig = pc_signature(pc, 0);
        let cpu = |line: u64| cpu_read(line).with_pc(pc);
        // Sampled set 33: fill at 2 (counter 1), evicted twice without reuse: counter 0.
        run(&mut c, &cpu(33));
        assert_eq!(c.policy().rrpv(33, 0), 2);
        run(&mut c, &cpu(33 + 1024));
        run(&mut c, &cpu(33 + 2048)); // evicts one unreused line
        assert_eq!(c.policy().ship_counter(sig), 0);
        // Now the PC inserts at 3 everywhere; a non-sampled set does not train.
        run(&mut c, &cpu(40));
        assert_eq!(c.policy().rrpv(40, 0), 3);
        run(&mut c, &cpu(40));
        assert_eq!(c.policy().ship_counter(sig), 0, "set 40 is not sampled");
        // A read hit in the sampled set trains up.
        let hit = (0..3)
            .map(|i| 33 + 1024 * i)
            .find(|&l| c.probe(l * LINE))
            .unwrap();
        run(&mut c, &cpu(hit));
        assert_eq!(c.policy().ship_counter(sig), 1);
        // GPU: a read miss in SRRIP leader set 0 moves the selector (the CPU misses in set
        // 33, also an SRRIP leader, already moved it 3 steps); followers go BRRIP.
        assert_eq!(c.policy().gpu_psel(), 514);
        run(&mut c, &gpu(Stream::Vertex, Op::Read, 0));
        assert_eq!((c.policy().gpu_psel(), c.policy().rrpv(0, 0)), (515, 2));
        run(&mut c, &gpu(Stream::Vertex, Op::Read, 40 + 1024));
        assert_eq!(c.policy().rrpv(40, 1), 3);
    }

    /// §5.3 / Figure 8, decision by decision (untracked lines, so the counters stay put).
    #[test]
    fn write_miss_policy() {
        let mut c = drp::<ALL>(&[("drp_wa_floor", 100.0)]);
        let f = 9u64; // a follower of every duel
                      // Use fresh sets so the fill lands in way 0.
        let one = |c: &mut Cache<Drp<ALL>>, set: u64, s: Stream| -> (u8, bool) {
            assert!(matches!(run(c, &gpu(s, Op::Write, set)), Did::Fill(None)));
            (
                c.policy().rrpv(set as usize, 0),
                c.policy().pinned(set as usize, 0),
            )
        };
        // High by MAX_REUSE/3 (3·10 >= 30), not recommended (2·10 > 30 false, 80 < 1000).
        set_wr(&mut c, COLOR, 10, 1000, 30);
        assert!(c.policy().high_wr_miss(COLOR) && !c.policy().pin_recommended(COLOR));
        assert_eq!(one(&mut c, f, Stream::Color), (0, false));
        // Not high (27 < 30, 72 < 1000), some reuse: RRPV 2.
        set_wr(&mut c, COLOR, 9, 1000, 30);
        assert_eq!(one(&mut c, f + 2, Stream::Color), (2, false));
        // Zero reuse and WA >= floor: RRPV 3; WA one below the floor: 2.
        set_wr(&mut c, COLOR, 0, 100, 30);
        assert_eq!(one(&mut c, f + 4, Stream::Color), (3, false));
        set_wr(&mut c, COLOR, 0, 99, 30);
        assert_eq!(one(&mut c, f + 6, Stream::Color), (2, false));
        // Probability 1/8: high and recommended. Followers ignore the recommendation at
        // first; the color pin duel's "follow" leader (set 62) pins at 0; its "ignore" leader
        // (set 29) does not.
        set_wr(&mut c, COLOR, 1, 8, 1000);
        assert!(c.policy().pin_recommended(COLOR));
        assert_eq!(one(&mut c, f + 10, Stream::Color), (0, false));
        assert_eq!(one(&mut c, 62, Stream::Color), (0, true));
        assert_eq!(one(&mut c, 29, Stream::Color), (0, false));
        assert_eq!(c.policy().pinned_lines(), 1);
        // 1/9 is below 1/8: not high.
        set_wr(&mut c, COLOR, 1, 9, 1000);
        assert_eq!(one(&mut c, f + 12, Stream::Color), (2, false));
        // The blitter duel is separate: set 62 only leads color pinning.
        set_wr(&mut c, BLIT, 1, 8, 1000);
        assert!(matches!(
            run(&mut c, &gpu(Stream::Blitter, Op::Write, 62 + 1024)),
            Did::Fill(None)
        ));
        assert_eq!(
            (c.policy().rrpv(62, 1), c.policy().pinned(62, 1)),
            (0, false)
        );
        // Baseline allocation rules: vertex writes bypass, depth follows its duel.
        assert_eq!(
            run(&mut c, &gpu(Stream::Vertex, Op::Write, 200)),
            Did::Bypass
        );
        assert_eq!(run(&mut c, &gpu(Stream::Depth, Op::Write, 63)), Did::Bypass);
        assert!(matches!(
            run(&mut c, &gpu(Stream::Depth, Op::Writeback, 30)),
            Did::Fill(_)
        ));
        assert!(matches!(
            run(&mut c, &gpu(Stream::Depth, Op::Write, 17)),
            Did::Fill(_)
        ));
        // Once the pin duel's follow group has fewer read misses, followers pin.
        c.policy_mut().duels[DUEL_PIN].record_miss(0);
        set_wr(&mut c, COLOR, 1, 8, 1000);
        assert_eq!(one(&mut c, f + 14, Stream::Color), (0, true));
    }

    /// §5.4 / Figure 9: the congestion-oblivious (set 64) and congestion-aware (set 97)
    /// write-hit policies.
    #[test]
    fn write_hit_policies() {
        let mut c = drp::<ALL>(&[]);
        let pc = 0x40;
        // Oblivious leader set 64, color pinning for followers turned on.
        c.policy_mut().duels[DUEL_PIN].record_miss(0);
        run(&mut c, &cpu_read(64 + 1024 * 3).with_pc(pc)); // untracked? no: 64 | 0 mod 64
        assert_eq!(c.policy().rrpv(64, 0), 2);
        set_wr(&mut c, COLOR, 100, 100, 100);
        assert!(c.policy().high_wr_hit(COLOR));
        assert_eq!(run(&mut c, &color_w(64 + 1024 * 3)), Did::Hit);
        assert_eq!(
            (c.policy().rrpv(64, 0), c.policy().pinned(64, 0)),
            (0, true)
        );
        // A write hit from a stream without write-to-read reuse: RRPV kept, pin cleared.
        c.policy_mut().rrpv[64 * 2] = 1;
        assert_eq!(
            run(&mut c, &gpu(Stream::Blitter, Op::Write, 64 + 1024 * 3)),
            Did::Hit
        );
        assert_eq!(
            (c.policy().rrpv(64, 0), c.policy().pinned(64, 0)),
            (1, false)
        );
        // Aware leader set 97: a line at 3 (SHiP counter 0) goes to 2 on a high write hit.
        let sig = pc_signature(pc, 0);
        c.policy_mut().table[sig as usize] = 0;
        run(&mut c, &cpu_read(97).with_pc(pc));
        assert_eq!(c.policy().rrpv(97, 0), 3);
        set_wr(&mut c, COLOR, 100, 100, 100);
        run(&mut c, &color_w(97));
        assert_eq!(
            (c.policy().rrpv(97, 0), c.policy().pinned(97, 0)),
            (2, false)
        );
        run(&mut c, &color_w(97));
        assert_eq!(c.policy().rrpv(97, 0), 2, "only lines at 3 move");
        // Threshold for hits: 1/16 (WR 1, WA 16 qualifies, WA 17 does not), MAX/2.
        set_wr(&mut c, COLOR, 1, 16, 1000);
        assert!(c.policy().high_wr_hit(COLOR) && !c.policy().high_wr_miss(COLOR));
        set_wr(&mut c, COLOR, 1, 17, 1000);
        assert!(!c.policy().high_wr_hit(COLOR));
        set_wr(&mut c, COLOR, 500, 1 << 20, 1000);
        assert!(c.policy().high_wr_hit(COLOR));
        set_wr(&mut c, COLOR, 0, 0, 0);
        assert!(
            !c.policy().high_wr_hit(COLOR),
            "no reuse measured: not high"
        );
        // CPU write hits pin through the CPU core's duel (set 60 follows it).
        c.policy_mut().wss.wr[0] = 5;
        c.policy_mut().wss.wa[0] = 5;
        c.policy_mut().wss.max_reuse = 5;
        run(&mut c, &cpu_read(60));
        let w = Access::new(Agent::cpu(0), Stream::CpuData, Op::Write, 60 * LINE, 8);
        run(&mut c, &w);
        assert_eq!(
            (c.policy().rrpv(60, 0), c.policy().pinned(60, 0)),
            (0, true)
        );
    }

    /// §5.3 pinning: a pinned line reaching RRPV 3 is unpinned and reset to 0; a read hit
    /// unpins.
    #[test]
    fn pinned_lines_survive_one_aging_round() {
        let mut c = drp::<ALL>(&[]);
        set_wr(&mut c, COLOR, 1, 8, 1000);
        let s = 62u64; // color pin "follow" leader
        run(&mut c, &color_w(s));
        assert!(c.policy().pinned(62, 0));
        run(&mut c, &gpu(Stream::Vertex, Op::Read, s + 1024)); // way 1 at 2
        assert_eq!((c.policy().rrpv(62, 0), c.policy().rrpv(62, 1)), (0, 2));
        // Miss: age 1 -> [1, 3], evict way 1.
        assert_eq!(
            run(&mut c, &gpu(Stream::Vertex, Op::Read, s + 2048)),
            Did::Fill(Some(s + 1024))
        );
        // Miss: age 1 -> [2, 3], evict way 1.
        assert_eq!(
            run(&mut c, &gpu(Stream::Vertex, Op::Read, s + 3072)),
            Did::Fill(Some(s + 2048))
        );
        // Miss: age 1 -> [3, 3]: way 0 is pinned, so it is unpinned and reset to 0; way 1 goes.
        assert_eq!(
            run(&mut c, &gpu(Stream::Vertex, Op::Read, s + 4096)),
            Did::Fill(Some(s + 3072))
        );
        assert_eq!(
            (c.policy().rrpv(62, 0), c.policy().pinned(62, 0)),
            (0, false)
        );
        assert_eq!(c.policy().pinned_lines(), 0);
        // Pin again by a write hit... then a read hit unpins.
        run(&mut c, &color_w(s));
        assert!(
            c.policy().pinned(62, 0),
            "set 62 is oblivious-follower and color-pin leader"
        );
        c.policy_mut().rrpv[62 * 2] = 1;
        assert_eq!(run(&mut c, &tex(s)), Did::Hit);
        assert_eq!(
            (c.policy().rrpv(62, 0), c.policy().pinned(62, 0)),
            (0, false)
        );
        // All pinned: the victim search still terminates.
        let mut c = drp::<ALL>(&[]);
        set_wr(&mut c, COLOR, 1, 8, 1000);
        run(&mut c, &color_w(s));
        run(&mut c, &color_w(s + 1024));
        assert_eq!(c.policy().pinned_lines(), 2);
        assert!(matches!(
            run(&mut c, &color_w(s + 2048)),
            Did::Fill(Some(_))
        ));
        let st = c.policy().stats();
        assert!(st
            .iter()
            .any(|(k, v)| k == "unpins_at_distant" && *v == 2.0));
    }

    /// §5.5 / Figure 10: a dynamic texture block's first read hit by P = DT_REUSE/DT_FIRST.
    #[test]
    fn read_hit_demotes_dynamic_texture() {
        for (first, reuse, want) in [
            (128, 1, 3),
            (128, 2, 2),
            (128, 63, 2),
            (128, 64, 0),
            (0, 0, 0),
        ] {
            let mut c = drp::<READ_HIT>(&[]);
            c.policy_mut().wss.dt_first = first;
            c.policy_mut().wss.dt_reuse = reuse;
            run(&mut c, &color_w(5));
            assert_eq!(c.policy().line_state(5, 0), ST_WRITTEN);
            assert_eq!(run(&mut c, &tex(5)), Did::Hit);
            assert_eq!(
                (c.policy().rrpv(5, 0), c.policy().line_state(5, 0)),
                (want, ST_DT0),
                "P = {reuse}/{first}"
            );
            // The next texture hit is a reuse: RRPV 0.
            run(&mut c, &tex(5));
            assert_eq!(
                (c.policy().rrpv(5, 0), c.policy().line_state(5, 0)),
                (0, ST_DT1)
            );
            // Non-texture reads of written lines are ordinary.
            run(&mut c, &color_w(6));
            run(&mut c, &gpu(Stream::Color, Op::Read, 6));
            assert_eq!(
                (c.policy().rrpv(6, 0), c.policy().line_state(6, 0)),
                (0, ST_WRITTEN)
            );
        }
        // drp-rm: the read hit sub-policy is off.
        let mut c = drp::<READ_MISS>(&[]);
        c.policy_mut().wss.dt_first = 128;
        run(&mut c, &color_w(5));
        run(&mut c, &tex(5));
        assert_eq!(c.policy().rrpv(5, 0), 0);
    }

    /// Below `ALL`, writes follow the baseline: write misses insert like read misses, write
    /// hits change nothing.
    #[test]
    fn ablation_levels_use_baseline_writes() {
        let mut c = drp::<READ_HIT>(&[]);
        c.policy_mut().wss.wr[COLOR] = 1;
        c.policy_mut().wss.wa[COLOR] = 1;
        c.policy_mut().wss.max_reuse = 1;
        run(&mut c, &color_w(62));
        assert_eq!(
            (c.policy().rrpv(62, 0), c.policy().pinned(62, 0)),
            (2, false)
        );
        c.policy_mut().rrpv[62 * 2] = 3;
        run(&mut c, &color_w(62));
        assert_eq!(c.policy().rrpv(62, 0), 3);
        // GPU write misses in BRRIP-following sets insert like BRRIP read misses.
        run(&mut c, &gpu(Stream::Vertex, Op::Read, 0)); // SRRIP leader miss: followers BRRIP
        run(&mut c, &color_w(9));
        assert_eq!(c.policy().rrpv(9, 0), 3);
        assert_eq!(
            run(&mut c, &gpu(Stream::Stencil, Op::Write, 10)),
            Did::Bypass
        );
    }
}
