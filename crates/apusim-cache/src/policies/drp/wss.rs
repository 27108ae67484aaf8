//! The working set sample (WSS) cache of drp §5.1: sampled pages' blocks with their stream,
//! write and read-reuse bits, and the per-stream reuse counters the sub-policies read.

use super::{
    GPU_NAMES, GPU_STREAMS, G_BLIT, G_COLOR, G_DEPTH, G_DYNTEX, PAGE_BYTES, STRIDE, WSS_SETS,
    WSS_WAYS,
};
use crate::policies::util::SplitMix64;
use crate::PolicyContext;

// WSS block bits (low 8: stream id).
const B_V: u16 = 1 << 8;
const B_W: u16 = 1 << 9;
const B_R: u16 = 1 << 10;
const NO_OWNER: u8 = u8::MAX;
const NO_PAGE: u64 = u64::MAX;

/// The working set sample cache and its counters.
pub struct Wss {
    n_cpus: usize,
    line_bits: u32,
    blocks_per_page: u64,
    tracked: usize,
    page: Vec<u64>,
    owner: Vec<u8>,
    blk: Vec<u16>,
    pub(super) entries_of: Vec<u32>,
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
    pub(super) fn new(ctx: &PolicyContext, min_entries: u32) -> Wss {
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

    pub(super) fn streams(&self) -> usize {
        self.wr.len()
    }

    pub(super) fn stream_name(&self, s: usize) -> String {
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
    pub(super) fn access(&mut self, addr: u64, sid: usize, write: bool, texture: bool) {
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
    pub(super) fn new_epoch(&mut self) {
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

    pub(super) fn prob(num: u32, den: u32) -> f64 {
        if den == 0 {
            0.0
        } else {
            num as f64 / den as f64
        }
    }
}
