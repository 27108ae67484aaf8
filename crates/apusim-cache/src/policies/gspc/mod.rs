//! The graphics stream-aware probabilistic caching policies of gspc-graphics-stream-llc.txt
//! §3: GSPZTC (Tables 2 and 3), GSPZTC+TSE (texture sampler epochs, Table 4, Figure 10) and
//! GSPC (render-target production/consumption, Table 5), for a GPU LLC. One type,
//! [`Gsp<LEVEL>`], with `LEVEL` = [`GSPZTC`], [`GSPZTC_TSE`] or [`GSPC`]; each level adds the
//! next table on top of the previous one. Registered as `gspztc`, `gspztc-tse`, `gspc`, and
//! (through [`super::ucd::Ucd`]) `gspc-ucd`.
//!
//! # Streams
//!
//! Accesses fall into four classes ([`GraphicsClass`]): Z (stream `depth`), texture sampler
//! (`static-texture`, `dynamic-texture`), render target (`color`, and GPU writes of the
//! `display` stream — "displayable color is a render target", §5.1) and the rest (everything
//! else, CPU accesses included; HiZ and stencil have their own caches in §4, so they are
//! "the rest").
//!
//! # Sample sets (Table 2)
//!
//! Sixteen sets in every 1024 are samples: with `a = set & 31` and `b = (set >> 5) & 31`, a
//! set is a sample iff `a == b` and `a < 16` (sets 0, 33, 66, ... 495 of each 1024). Samples
//! run 2-bit SRRIP for every stream (fill at 2, hit to 0) and train the counters of their
//! bank; all other sets apply the tables' non-sample actions. Victim selection everywhere is
//! SRRIP's: the lowest way at RRPV 3, aging the set until there is one.
//!
//! # Per-bank counters
//!
//! The LLC has `ctx.banks` banks; the bank of a set is `set % banks` (the paper does not say
//! how sets map to banks; with this rule and the sample function above, each of up to 16
//! banks gets the same number of samples). Each bank keeps 8-bit saturating counters
//! `FILL(Z)`, `HIT(Z)`, `FILL(0)`, `HIT(0)`, `FILL(1)`, `HIT(1)`, `PROD`, `CONS` and the 7-bit
//! `ACC(ALL)`, which counts every access to the bank's samples (every hit and every fill; the
//! only misses that do not fill are uncached displayable color under [`super::ucd::Ucd`],
//! which never reach the policy). When `ACC(ALL)` saturates (reaches 127) every other counter of the bank is halved
//! and `ACC(ALL)` is reset; the access that saturates it has already made its own counter
//! updates, which are halved with the rest. In GSPZTC, `FILL(TEX)` and `HIT(TEX)` are
//! `FILL(0)` and `HIT(0)`.
//!
//! # Per-line state
//!
//! Two bits per line (Figure 10): `00`, `01`, `10` are the texture epochs E0, E1, E≥2, and
//! `11` marks a render target (GSPZTC's RT bit is "state == 11"). A render-target access (fill
//! or hit) sets `11`; a texture access to a line in `11` is an RT→TEX hit; a texture fill
//! installs `00`. The paper does not say what Z and "other" fills install: they install `00`
//! (the reset value; a later texture hit on such a line is an ordinary E0 texture hit), and Z
//! and "other" hits leave the state alone. Evicted lines lose their state (the refill
//! overwrites it).
//!
//! # Actions
//!
//! With `t` the threshold (parameter `gspc_t`, default 8, the §5.1 choice):
//!
//! | event | sample set | non-sample set |
//! |---|---|---|
//! | Z fill | RRPV 2, `FILL(Z)++` | RRPV `FILL(Z) > t·HIT(Z) ? 3 : 2` |
//! | Z hit | RRPV 0, `HIT(Z)++` | RRPV 0 |
//! | TEX fill | RRPV 2, `FILL(0)++`, state 00 | RRPV `FILL(0) > t·HIT(0) ? 3 : 0`, state 00 |
//! | RT→TEX hit | RRPV 0, `FILL(0)++`, state 00 (GSPC: `CONS++`) | as TEX fill, state 00 |
//! | TEX hit, state 00 | RRPV 0, `HIT(0)++`, `FILL(1)++`, state 01 | RRPV `FILL(1) > t·HIT(1) ? 3 : 0`, state 01 |
//! | TEX hit, state 01 | RRPV 0, `HIT(1)++`, state 10 | RRPV 0, state 10 |
//! | TEX hit, state 10 | RRPV 0, state 10 | RRPV 0, state 10 |
//! | RT fill | RRPV 2, state 11 (GSPC: `PROD++`) | state 11, RRPV 0 (GSPC: `PROD > 16·CONS ? 3 : PROD > 8·CONS ? 2 : 0`) |
//! | RT hit | RRPV 0, state 11 | RRPV 0, state 11 |
//! | other fill / hit | RRPV 2 / 0 | RRPV 2 / 0 |
//!
//! plus `ACC(ALL)++` on every sample-set access. GSPZTC (no epochs) is the same table with
//! every texture hit on a non-RT line being "TEX hit, state 00" without the epoch advance: it
//! counts `HIT(TEX)++` in samples and sets RRPV 0 in non-samples. The GSPC thresholds 16 and
//! 8 are parameters `gspc_rt_low` and `gspc_rt_high`.
//!
//! # Statistics
//!
//! Beside the counters' sums, the policy counts what its render-target rule does (all
//! levels, so that GSPZTC+TSE and GSPC can be compared): the non-sample RT fills by the RRPV
//! they were inserted at (`rt_fills_rrpv3`, `rt_fills_rrpv2`, `rt_fills_rrpv0`; GSPZTC and
//! GSPZTC+TSE insert all at 0), the sample RT fills (`rt_fills_sample`), the lines that
//! entered state 11 (`rt_produced`: RT fills, and RT hits on lines in another state), those
//! that left it through an RT→TEX hit (`rt_consumed`) and those evicted while still in it
//! (`rt_evicted_unconsumed`: a render target replaced before the texture sampler read it from
//! the LLC). With `rt_lines` (lines in state 11 at the end), `rt_produced = rt_consumed +
//! rt_evicted_unconsumed + rt_lines` when nothing was invalidated. [`Gsp::rt_insertion`]
//! gives the RRPV a bank's PROD and CONS currently select (for a series over a run).
//!
//! # Writes
//!
//! GSPC is a policy for a GPU-only LLC that caches all graphics data: every miss allocates and
//! render-target hits (blending writes) update the state. It therefore declares
//! `OWN_WRITE_RULES` and is never wrapped in the heterogeneous baseline's write rules
//! (which would drop the "RT hit (blending)" row of Table 5).

use super::util::{prefetch, rrip_victim, RRPV_LONG, RRPV_MAX};
use crate::params::{ParamKind, ParamList, ParamSpec};
use crate::{CacheError, Evicted, Policy, PolicyContext, PolicyStat, SetView};
use apusim_trace::{Access, Stream};

/// The four stream classes of gspc-graphics-stream-llc.txt §3.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum GraphicsClass {
    Z = 0,
    Tex = 1,
    Rt = 2,
    Other = 3,
}

impl GraphicsClass {
    /// The class of an access (see the module doc).
    #[inline]
    pub fn of(req: &Access) -> GraphicsClass {
        match req.stream {
            Stream::Depth => GraphicsClass::Z,
            Stream::StaticTexture | Stream::DynamicTexture => GraphicsClass::Tex,
            Stream::Color => GraphicsClass::Rt,
            Stream::Display if req.op.is_write() && req.agent.is_gpu() => GraphicsClass::Rt,
            _ => GraphicsClass::Other,
        }
    }
}

/// Level of [`Gsp`]: GSPZTC (Table 3).
pub const GSPZTC: u8 = 0;
/// Level of [`Gsp`]: GSPZTC with texture sampler epochs (Tables 3 and 4).
pub const GSPZTC_TSE: u8 = 1;
/// Level of [`Gsp`]: GSPC (Tables 3, 4 and 5).
pub const GSPC: u8 = 2;

/// Per-line states (Figure 10).
pub const E0: u8 = 0b00;
pub const E1: u8 = 0b01;
pub const E2: u8 = 0b10;
pub const RT: u8 = 0b11;

/// Indices of a bank's 8-bit counters.
pub const FILL_Z: usize = 0;
pub const HIT_Z: usize = 1;
pub const FILL_0: usize = 2;
pub const HIT_0: usize = 3;
pub const FILL_1: usize = 4;
pub const HIT_1: usize = 5;
pub const PROD: usize = 6;
pub const CONS: usize = 7;
const COUNTER_NAMES: [&str; 8] = [
    "fill_z", "hit_z", "fill_0", "hit_0", "fill_1", "hit_1", "prod", "cons",
];
/// Saturation value of the 8-bit counters and of the 7-bit `ACC(ALL)`.
const C8_MAX: u8 = 255;
const ACC_MAX: u8 = 127;

/// What happened to render-target lines (see the module doc, Statistics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RtStats {
    /// Non-sample RT fills by insertion RRPV (index 1 stays 0: Table 5 never inserts at 1).
    pub fills_at: [u64; 4],
    /// RT fills into sample sets.
    pub sample_fills: u64,
    /// Lines that entered state 11.
    pub produced: u64,
    /// Lines that left state 11 through an RT→TEX hit.
    pub consumed: u64,
    /// Lines evicted in state 11.
    pub evicted_unconsumed: u64,
}

/// One bank's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BankCounters {
    pub c: [u8; 8],
    pub acc: u8,
    /// Number of halvings so far (statistics only).
    pub halvings: u32,
}

impl BankCounters {
    #[inline]
    fn inc(&mut self, i: usize) {
        if self.c[i] < C8_MAX {
            self.c[i] += 1;
        }
    }
    /// `ACC(ALL)++`, halving everything when it saturates.
    #[inline]
    fn access(&mut self) {
        self.acc += 1;
        if self.acc >= ACC_MAX {
            for v in self.c.iter_mut() {
                *v >>= 1;
            }
            self.acc = 0;
            self.halvings += 1;
        }
    }
    /// `FILL > t · HIT` for the counter pair `(fill, hit)`.
    #[inline]
    fn low_reuse(&self, fill: usize, hit: usize, t: u32) -> bool {
        self.c[fill] as u32 > t * self.c[hit] as u32
    }
}

/// The GSPZTC / GSPZTC+TSE / GSPC policy (see the module doc).
pub struct Gsp<const LEVEL: u8> {
    ways: usize,
    banks: usize,
    t: u32,
    rt_low: u32,
    rt_high: u32,
    rrpv: Vec<u8>,
    state: Vec<u8>,
    counters: Vec<BankCounters>,
    rt: RtStats,
}

/// GSPZTC.
pub type Gspztc = Gsp<GSPZTC>;
/// GSPZTC+TSE.
pub type GspztcTse = Gsp<GSPZTC_TSE>;
/// GSPC.
pub type Gspc = Gsp<GSPC>;

/// True if `set` is one of the 16-per-1024 sample sets.
#[inline]
pub fn is_sample(set: usize) -> bool {
    let a = set & 31;
    a == (set >> 5) & 31 && a < 16
}

impl<const LEVEL: u8> Gsp<LEVEL> {
    /// RRPV of a line.
    pub fn rrpv(&self, set: usize, way: usize) -> u8 {
        self.rrpv[set * self.ways + way]
    }
    /// Two-bit state of a line (see [`E0`], [`E1`], [`E2`], [`RT`]).
    pub fn state(&self, set: usize, way: usize) -> u8 {
        self.state[set * self.ways + way]
    }
    /// Counters of `bank`.
    pub fn bank(&self, bank: usize) -> &BankCounters {
        &self.counters[bank]
    }
    /// Bank of `set`.
    #[inline]
    pub fn bank_of(&self, set: usize) -> usize {
        set % self.banks
    }
    /// Number of banks.
    pub fn banks(&self) -> usize {
        self.banks
    }
    /// What render-target lines did so far (see the module doc, Statistics).
    pub fn rt_stats(&self) -> &RtStats {
        &self.rt
    }

    /// The RRPV a render-target fill into a non-sample set of `bank` gets now: GSPC's
    /// `PROD > 16·CONS ? 3 : PROD > 8·CONS ? 2 : 0` (gspc §3, Table 5; thresholds
    /// `gspc_rt_low` and `gspc_rt_high`), 0 for GSPZTC and GSPZTC+TSE (gspc §3, Table 3).
    #[inline]
    pub fn rt_insertion(&self, bank: usize) -> u8 {
        self.rt_insertion_of(&self.counters[bank])
    }

    #[inline]
    fn rt_insertion_of(&self, b: &BankCounters) -> u8 {
        if LEVEL < GSPC {
            return 0;
        }
        let (prod, cons) = (b.c[PROD] as u32, b.c[CONS] as u32);
        if prod > self.rt_low * cons {
            RRPV_MAX
        } else if prod > self.rt_high * cons {
            RRPV_LONG
        } else {
            0
        }
    }

    /// Insertion RRPV of a texture line entering E0 in a non-sample set.
    #[inline]
    fn tex_e0(&self, b: &BankCounters) -> u8 {
        if b.low_reuse(FILL_0, HIT_0, self.t) {
            RRPV_MAX
        } else {
            0
        }
    }
}

/// The threshold `t` of Tables 3-4 and the render-target thresholds of Table 5 (gspc §3).
const GSPC_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "gspc_t",
        kind: ParamKind::Int {
            min: 1,
            max: 1 << 16,
        },
        default: "8",
        unit: "",
        doc: "Z/texture lines insert at RRPV 3 when FILL > t * HIT (gspc §3, Tables 3-4)",
    },
    ParamSpec {
        name: "gspc_rt_low",
        kind: ParamKind::Int {
            min: 1,
            max: 1 << 16,
        },
        default: "16",
        unit: "",
        doc: "render-target fills insert at RRPV 3 when PROD > this * CONS (gspc §3, Table 5)",
    },
    ParamSpec {
        name: "gspc_rt_high",
        kind: ParamKind::Int {
            min: 1,
            max: 1 << 16,
        },
        default: "8",
        unit: "",
        doc: "else at RRPV 2 when PROD > this * CONS, else at 0 (gspc §3, Table 5)",
    },
];

impl<const LEVEL: u8> Policy for Gsp<LEVEL> {
    fn params(list: &mut ParamList) {
        list.add(&[GSPC_PARAMS[0]]);
        if LEVEL >= GSPC {
            list.add(&GSPC_PARAMS[1..]);
        }
    }
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        let t = ctx.int(&GSPC_PARAMS[0])? as u32;
        // Only GSPC inserts render targets by PROD/CONS; the lower levels build the
        // thresholds from their defaults (see `params`).
        let unset = ctx.without_params();
        let rt = if LEVEL >= GSPC { ctx } else { &unset };
        let rt_low = rt.int(&GSPC_PARAMS[1])? as u32;
        let rt_high = rt.int(&GSPC_PARAMS[2])? as u32;
        if ctx.banks == 0 {
            return Err(CacheError::Config(
                "gspc: the LLC needs at least one bank".into(),
            ));
        }
        let n = ctx.sets * ctx.ways;
        Ok(Gsp {
            ways: ctx.ways,
            banks: ctx.banks,
            t,
            rt_low,
            rt_high,
            rrpv: vec![RRPV_MAX; n],
            state: vec![E0; n],
            counters: vec![BankCounters::default(); ctx.banks],
            rt: RtStats::default(),
        })
    }

    const OWN_WRITE_RULES: bool = true;

    #[inline]
    fn prefetch_set(&self, set: usize) {
        prefetch(&self.rrpv, set * self.ways);
        prefetch(&self.state, set * self.ways);
    }

    #[inline]
    fn on_hit(&mut self, set: usize, way: usize, req: &Access) {
        let i = set * self.ways + way;
        let bank = set % self.banks;
        let sample = is_sample(set);
        let st = self.state[i];
        let mut b = self.counters[bank];
        let mut rrpv = 0;
        match GraphicsClass::of(req) {
            GraphicsClass::Z => {
                if sample {
                    b.inc(HIT_Z);
                }
            }
            GraphicsClass::Rt => {
                self.rt.produced += u64::from(st != RT);
                self.state[i] = RT;
            }
            GraphicsClass::Other => {}
            GraphicsClass::Tex => {
                if st == RT {
                    // RT -> TEX hit: the line becomes an E0 texture line.
                    self.state[i] = E0;
                    self.rt.consumed += 1;
                    if sample {
                        b.inc(FILL_0);
                        if LEVEL >= GSPC {
                            b.inc(CONS);
                        }
                    } else if LEVEL >= GSPZTC_TSE {
                        rrpv = self.tex_e0(&b);
                    }
                } else if LEVEL == GSPZTC {
                    if sample {
                        b.inc(HIT_0);
                    }
                } else if st == E0 {
                    self.state[i] = E1;
                    if sample {
                        b.inc(HIT_0);
                        b.inc(FILL_1);
                    } else if b.low_reuse(FILL_1, HIT_1, self.t) {
                        rrpv = RRPV_MAX;
                    }
                } else {
                    if st == E1 && sample {
                        b.inc(HIT_1);
                    }
                    self.state[i] = E2;
                }
            }
        }
        if sample {
            b.access();
        }
        self.counters[bank] = b;
        self.rrpv[i] = rrpv;
    }

    #[inline]
    fn victim(&mut self, set: usize, _req: &Access, _view: &SetView<'_>) -> usize {
        let base = set * self.ways;
        rrip_victim(&mut self.rrpv[base..base + self.ways])
    }

    #[inline]
    fn on_evict(&mut self, set: usize, way: usize, _victim: &Evicted) {
        self.rt.evicted_unconsumed += u64::from(self.state[set * self.ways + way] == RT);
    }

    #[inline]
    fn on_fill(&mut self, set: usize, way: usize, req: &Access) {
        let i = set * self.ways + way;
        let bank = set % self.banks;
        let sample = is_sample(set);
        let mut b = self.counters[bank];
        let class = GraphicsClass::of(req);
        self.state[i] = if class == GraphicsClass::Rt { RT } else { E0 };
        let rrpv = if sample {
            match class {
                GraphicsClass::Z => b.inc(FILL_Z),
                GraphicsClass::Tex => b.inc(FILL_0),
                GraphicsClass::Rt if LEVEL >= GSPC => b.inc(PROD),
                _ => {}
            }
            b.access();
            if class == GraphicsClass::Rt {
                self.rt.sample_fills += 1;
            }
            RRPV_LONG
        } else {
            match class {
                GraphicsClass::Z if b.low_reuse(FILL_Z, HIT_Z, self.t) => RRPV_MAX,
                GraphicsClass::Z => RRPV_LONG,
                GraphicsClass::Tex => self.tex_e0(&b),
                GraphicsClass::Rt => {
                    let rrpv = self.rt_insertion_of(&b);
                    self.rt.fills_at[rrpv as usize] += 1;
                    rrpv
                }
                GraphicsClass::Other => RRPV_LONG,
            }
        };
        self.rt.produced += u64::from(class == GraphicsClass::Rt);
        self.counters[bank] = b;
        self.rrpv[i] = rrpv;
    }

    fn stats(&self) -> Vec<PolicyStat> {
        let mut s = Vec::new();
        let mut sum = [0u64; 8];
        let mut halvings = 0u64;
        for b in &self.counters {
            for (k, v) in b.c.iter().enumerate() {
                sum[k] += *v as u64;
            }
            halvings += b.halvings as u64;
        }
        for (k, name) in COUNTER_NAMES.iter().enumerate() {
            s.push((format!("{name}_sum"), sum[k] as f64));
        }
        s.push(("counter_halvings".into(), halvings as f64));
        let rt_lines = self.state.iter().filter(|&&x| x == RT).count();
        s.push(("rt_lines".into(), rt_lines as f64));
        let rt = &self.rt;
        for (name, v) in [
            ("rt_fills_rrpv3", rt.fills_at[3]),
            ("rt_fills_rrpv2", rt.fills_at[2]),
            ("rt_fills_rrpv0", rt.fills_at[0]),
            ("rt_fills_sample", rt.sample_fills),
            ("rt_produced", rt.produced),
            ("rt_consumed", rt.consumed),
            ("rt_evicted_unconsumed", rt.evicted_unconsumed),
        ] {
            s.push((name.into(), v as f64));
        }
        if self.banks <= 16 {
            for (i, b) in self.counters.iter().enumerate() {
                for (k, name) in COUNTER_NAMES.iter().enumerate() {
                    s.push((format!("bank{i}_{name}"), b.c[k] as f64));
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests;
