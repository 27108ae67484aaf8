//! The per-bank views the scheduler decides on: built from the served queue, and updated
//! incrementally after each issued command (with a full check in debug builds).

use super::{Controller, Effect};
use crate::device::{ChannelState, Command};
use crate::scheduler::{BankView, Candidate, NO_CANDIDATE};
use std::hint::select_unpredictable;

/// Iterator of [`Controller::occupied_in`].
struct OccupiedIter {
    dense: bool,
    next: usize,
    hi: usize,
    word: u64,
}

impl Iterator for OccupiedIter {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.dense {
            let b = self.next;
            (b < self.hi).then(|| {
                self.next += 1;
                b
            })
        } else if self.word == 0 {
            None
        } else {
            let b = self.word.trailing_zeros() as usize;
            self.word &= self.word - 1;
            Some(b)
        }
    }
}

impl Controller {
    /// Account candidate `idx` (row `row`) in its bank's view.
    #[inline]
    fn note(v: &mut BankView, row: u32, idx: u32) {
        if v.open_row == Some(row) {
            v.pending_hits += 1;
            if v.oldest_hit == NO_CANDIDATE {
                v.oldest_hit = idx;
            }
        } else if v.oldest_other == NO_CANDIDATE {
            v.oldest_other = idx;
        }
    }

    /// Fill the timing fields of bank `b`'s view from the device state.
    #[inline]
    fn time_view(&mut self, b: usize) {
        let col_cmd = self.col_cmd();
        let v = &mut self.views[b];
        if self.ref_pending[b >> self.rank_shift] {
            v.act_ready = u64::MAX;
            v.pre_ready = u64::MAX;
            v.col_ready = u64::MAX;
            v.other_ready = u64::MAX;
        } else {
            v.act_ready = self.dev.earliest(Command::Act, b);
            v.pre_ready = self.dev.earliest(Command::Pre, b);
            v.col_ready = self.dev.earliest(col_cmd, b);
            v.other_ready = v.non_hit_ready();
        }
    }

    /// The column command of the served queue: WR while draining writes, else RD.
    #[inline]
    fn col_cmd(&self) -> Command {
        if self.write_mode {
            Command::Wr
        } else {
            Command::Rd
        }
    }

    /// Account a newly queued candidate of the served queue without a rebuild (the state has
    /// not changed since the last one; only banks that had candidates carry timing).
    pub(super) fn note_new(&mut self, bank: usize, row: u32, idx: u32) {
        let v = &self.views[bank];
        if v.oldest_hit == NO_CANDIDATE && v.oldest_other == NO_CANDIDATE {
            self.time_view(bank);
        }
        Self::note(&mut self.views[bank], row, idx);
        self.occupied[bank / 64] |= 1 << (bank % 64);
    }

    /// Set `views` to the banks' open rows in `dev` and the pending hits and oldest
    /// candidates of the served queue `q` (the timing is left as it is).
    fn compute_views(views: &mut [BankView], dev: &ChannelState, q: &[Candidate]) {
        for (b, v) in views.iter_mut().enumerate() {
            v.open_row = dev.open_row(b);
            v.pending_hits = 0;
            v.oldest_hit = NO_CANDIDATE;
            v.oldest_other = NO_CANDIDATE;
        }
        for (i, c) in q.iter().enumerate() {
            Self::note(&mut views[c.bank as usize], c.row, i as u32);
        }
    }

    /// Recompute the drain mode and the bank views (heads, pending hits, and the timing of
    /// every bank that has candidates) of the served queue.
    pub(super) fn rebuild(&mut self) {
        let m = self.desired_mode();
        if m != self.write_mode {
            if m {
                self.stats.write_drains += 1;
                self.drained = 0;
            } else {
                self.read_owed = self.drained >= self.drain_cap && !self.rq.is_empty();
            }
            self.write_mode = m;
        }
        self.version += 1;
        let q = if self.write_mode { &self.wq } else { &self.rq };
        Self::compute_views(&mut self.views, &self.dev, q);
        self.occupied.iter_mut().for_each(|w| *w = 0);
        for b in 0..self.views.len() {
            let v = &self.views[b];
            if v.oldest_hit != NO_CANDIDATE || v.oldest_other != NO_CANDIDATE {
                self.occupied[b / 64] |= 1 << (b % 64);
                self.time_view(b);
            }
        }
        self.dirty = false;
    }

    /// Recompute the heads and pending hits of bank `b` from the served queue (branch-free:
    /// which candidates belong to the bank is data-dependent).
    fn rescan_bank(&mut self, b: usize) {
        self.rescan_bank_from(b, 0);
    }

    /// [`Controller::rescan_bank`] when no candidate of bank `b` is older than `from`.
    fn rescan_bank_from(&mut self, b: usize, from: usize) {
        let open = self.views[b].open_row;
        let q = if self.write_mode { &self.wq } else { &self.rq };
        let (mut hits, mut first_hit, mut first_other) = (0u32, NO_CANDIDATE, NO_CANDIDATE);
        for (i, c) in q.iter().enumerate().skip(from) {
            let mine = c.bank as usize == b;
            let hit = open == Some(c.row);
            hits += (mine & hit) as u32;
            first_hit = first_hit.min(select_unpredictable(mine & hit, i as u32, NO_CANDIDATE));
            first_other =
                first_other.min(select_unpredictable(mine & !hit, i as u32, NO_CANDIDATE));
        }
        let v = &mut self.views[b];
        v.pending_hits = hits;
        v.oldest_hit = first_hit;
        v.oldest_other = first_other;
        self.set_occupied(b);
    }

    /// The banks in `lo..hi` that have candidates (all of `lo..hi` when most banks do: one
    /// predictable loop beats iterating set bits). Banks without candidates may carry stale
    /// timing; they get fresh timing when their first candidate arrives.
    fn occupied_in(&self, lo: usize, hi: usize) -> OccupiedIter {
        let dense = match self.occupied.as_slice() {
            [w] => w.count_ones() as usize * 2 >= self.views.len(),
            _ => true,
        };
        let word = if dense || self.occupied.is_empty() {
            0
        } else {
            let mask = if hi - lo >= 64 {
                u64::MAX
            } else {
                ((1u64 << (hi - lo)) - 1) << lo
            };
            self.occupied[0] & mask
        };
        OccupiedIter {
            dense,
            next: lo,
            hi,
            word,
        }
    }

    /// Set or clear bank `b`'s bit in `occupied` from its heads.
    #[inline]
    fn set_occupied(&mut self, b: usize) {
        let v = &self.views[b];
        let has = (v.oldest_hit != NO_CANDIDATE) | (v.oldest_other != NO_CANDIDATE);
        let w = &mut self.occupied[b / 64];
        *w = (*w & !(1 << (b % 64))) | ((has as u64) << (b % 64));
    }

    /// Bring the bank views up to date after an issued command, touching only what the
    /// command can have changed (falls back to a full rebuild if the drain mode flips).
    /// Debug builds check the result against a full rebuild. Kept out of line: inlined into
    /// the decision step it cost 4.5% more instructions in the saturated run (callgrind).
    #[inline(never)]
    pub(super) fn update_after(&mut self, effect: Effect) {
        if self.desired_mode() != self.write_mode {
            self.rebuild();
            return;
        }
        self.version += 1;
        let bpr = self.banks_per_rank as usize;
        match effect {
            Effect::RowChange { bank } => {
                let open = self.dev.open_row(bank);
                let v = &mut self.views[bank];
                // No candidate of the bank is older than its oldest head.
                let first = v.oldest_hit.min(v.oldest_other);
                v.open_row = open;
                if open.is_none() {
                    // PRE: every candidate of the bank is now a non-hit; the oldest of them
                    // is the older head (the set of candidates did not change).
                    v.oldest_other = first;
                    v.oldest_hit = NO_CANDIDATE;
                    v.pending_hits = 0;
                } else {
                    // ACT: only candidates from the bank's oldest one on can hit.
                    self.rescan_bank_from(bank, first as usize);
                }
                // ACT constrains the ACTs of its rank (tRRD, tFAW) and its bank's PRE (tRAS)
                // and column commands (tRCD); PRE only its bank's ACT (tRP).
                let rank = bank >> self.rank_shift;
                if !self.ref_pending[rank] {
                    if open.is_some() {
                        // The bank itself is among the occupied banks (it has candidates).
                        let (lo, hi) = (rank * bpr, (rank + 1) * bpr);
                        let banks = self.occupied_in(lo, hi);
                        if banks.dense {
                            // Every bank of the rank, in one pass over the device state.
                            let ready = self.dev.act_ready_in_rank(rank);
                            for (v, t) in self.views[lo..hi].iter_mut().zip(ready) {
                                v.act_ready = t;
                                v.other_ready = v.non_hit_ready();
                            }
                        } else {
                            for b in banks {
                                let v = &mut self.views[b];
                                v.act_ready = self.dev.earliest(Command::Act, b);
                                v.other_ready = v.non_hit_ready();
                            }
                        }
                        let col_cmd = self.col_cmd();
                        let v = &mut self.views[bank];
                        v.pre_ready = self.dev.earliest(Command::Pre, bank);
                        v.col_ready = self.dev.earliest(col_cmd, bank);
                        v.other_ready = v.pre_ready;
                    } else {
                        let v = &mut self.views[bank];
                        v.act_ready = self.dev.earliest(Command::Act, bank);
                        v.other_ready = v.act_ready;
                    }
                }
            }
            Effect::Column {
                bank,
                removed,
                auto_pre,
            } => {
                let r = removed as u32;
                let lost_head = self.views[bank].oldest_hit == r;
                self.views[bank].pending_hits -= 1;
                // Heads behind the removed candidate move up one; NO_CANDIDATE (u32::MAX)
                // stays, as it wraps to 0 when incremented (one compare per head).
                let shift = |v: &mut BankView| {
                    v.oldest_hit -= (v.oldest_hit.wrapping_add(1) > r + 1) as u32;
                    v.oldest_other -= (v.oldest_other.wrapping_add(1) > r + 1) as u32;
                };
                // Column commands constrain every rank's column commands.
                let all = self.occupied_in(0, self.views.len());
                if all.dense {
                    // Every bank, in one pass over the views and the device state.
                    let rs = self.rank_shift;
                    let ready = self.dev.column_ready(self.write_mode);
                    for (b, (v, t)) in self.views.iter_mut().zip(ready).enumerate() {
                        shift(v);
                        v.col_ready = select_unpredictable(self.ref_pending[b >> rs], u64::MAX, t);
                    }
                } else {
                    self.views.iter_mut().for_each(shift);
                    let col_cmd = self.col_cmd();
                    for b in all {
                        self.views[b].col_ready = if self.ref_pending[b >> self.rank_shift] {
                            u64::MAX
                        } else {
                            self.dev.earliest(col_cmd, b)
                        };
                    }
                }
                if auto_pre {
                    self.views[bank].open_row = None;
                    self.rescan_bank(bank);
                } else if lost_head && self.views[bank].pending_hits == 0 {
                    // That was the bank's last hit.
                    self.views[bank].oldest_hit = NO_CANDIDATE;
                    self.set_occupied(bank);
                } else if lost_head {
                    // The next hit of the bank is younger than the removed one.
                    let open = self.views[bank].open_row;
                    let q = if self.write_mode { &self.wq } else { &self.rq };
                    let mut next = NO_CANDIDATE;
                    for (j, c) in q.iter().enumerate().skip(removed) {
                        let hit = (c.bank as usize == bank) & (Some(c.row) == open);
                        next = next.min(select_unpredictable(hit, j as u32, NO_CANDIDATE));
                    }
                    self.views[bank].oldest_hit = next;
                    self.set_occupied(bank);
                }
                // ... and their own bank's precharge (with auto-precharge, its activate too).
                // Without auto-precharge only the PRE timing moves (tRTP, write recovery):
                // ACT timing is untouched and the column timing was refreshed above.
                if auto_pre {
                    self.time_view(bank);
                } else if !self.ref_pending[bank >> self.rank_shift] {
                    let v = &mut self.views[bank];
                    v.pre_ready = self.dev.earliest(Command::Pre, bank);
                    v.other_ready = v.non_hit_ready();
                }
            }
        }
        self.dirty = false;
        #[cfg(debug_assertions)]
        self.check_views();
    }

    /// Debug check: the incrementally maintained views equal a full recomputation.
    #[cfg(debug_assertions)]
    pub(super) fn check_views(&self) {
        let mut fresh = self.views.clone();
        let q = if self.write_mode { &self.wq } else { &self.rq };
        Self::compute_views(&mut fresh, &self.dev, q);
        let col_cmd = self.col_cmd();
        for (b, (f, v)) in fresh.iter().zip(&self.views).enumerate() {
            assert_eq!(
                (f.open_row, f.pending_hits, f.oldest_hit, f.oldest_other),
                (v.open_row, v.pending_hits, v.oldest_hit, v.oldest_other),
                "bank {b} heads"
            );
            if f.oldest_hit != NO_CANDIDATE || f.oldest_other != NO_CANDIDATE {
                let expect = if self.ref_pending[b >> self.rank_shift] {
                    (u64::MAX, u64::MAX, u64::MAX, u64::MAX)
                } else {
                    let (act, pre) = (
                        self.dev.earliest(Command::Act, b),
                        self.dev.earliest(Command::Pre, b),
                    );
                    let other = if f.open_row.is_some() { pre } else { act };
                    (act, pre, self.dev.earliest(col_cmd, b), other)
                };
                assert_eq!(
                    expect,
                    (v.act_ready, v.pre_ready, v.col_ready, v.other_ready),
                    "bank {b} timing"
                );
            }
        }
    }
}
