//! DRP's parameters and its [`Policy`] hooks: every hit, miss, victim choice, eviction and
//! fill, applying the sub-policies' decisions to the per-line state.

use super::wss::Wss;
use super::{
    cbd_write, leaders, Drp, Pending, ALL, DUEL_CONGESTION, DUEL_DEPTH, DUEL_PIN, DUEL_PIN_CPU,
    GPU_STREAMS, MAX_DUELS, PIN, READ_HIT, SHIP_REUSED, SHIP_SIG, ST_DT0, ST_DT1, ST_MASK,
    ST_WRITTEN, WSS_SETS, WSS_WAYS,
};
use crate::params::{ParamKind, ParamList, ParamSpec};
use crate::policies::ship::{COUNTER_MAX, SHIP_INIT, TABLE_ENTRIES};
use crate::policies::util::{
    prefetch, sat_dec, sat_inc, Bimodal, Psel, BRRIP_THROTTLE, PSEL_BITS, RRPV_LONG, RRPV_MAX,
};
use crate::{CacheError, Evicted, MissAction, Policy, PolicyContext, PolicyStat, SetView};
use apusim_trace::{Access, Op, Stream};

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
