//! The command state machine of one channel: per-bank row state and, at bank, bank-group, rank
//! and channel level, the earliest cycle each command may issue.
//!
//! Every timing constraint is kept as "next allowed cycle" counters (the Ramulator approach):
//! issuing a command at cycle `t` raises the counters it constrains to `t + latency`, and a
//! command is legal at `t` iff the bank is in the right state and `t` is at least every counter
//! that applies. The constraints and where they are recorded:
//!
//! | from → to | scope | spacing |
//! |---|---|---|
//! | ACT → ACT | bank | tRC |
//! | ACT → ACT | bank group / rank | tRRD_L / tRRD_S, and at most 4 ACTs per tFAW per rank |
//! | ACT → RD/WR | bank | tRCD |
//! | ACT → PRE | bank | tRAS |
//! | RD → RD, WR → WR | bank group / rank | tCCD_L / tCCD_S |
//! | RD → RD, WR → WR | other ranks | tBURST + tRTRS |
//! | RD → WR | same rank | tRTW |
//! | RD → WR | other ranks | max(tRTW, tCL + tBURST + tRTRS − tCWL) |
//! | WR → RD | bank group / rank | tCWL + tBURST + tWTR_L / tWTR_S |
//! | WR → RD | other ranks | tCWL + tBURST + tRTRS − tCL |
//! | RD → PRE | bank | tRTP |
//! | WR → PRE | bank | tCWL + tBURST + tWR |
//! | PRE → ACT | bank | tRP |
//! | REF → ACT/REF | rank | tRFC |
//!
//! RDA/WRA (auto-precharge, used by the closed-page policy) precharge at the earliest legal
//! cycle after the column command and make the bank available for ACT tRP later.

use crate::spec::{Organization, Timings};
use serde::{Deserialize, Serialize};

/// DRAM commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Command {
    /// Activate (open) a row.
    Act,
    /// Precharge (close) one bank.
    Pre,
    /// Precharge all banks of a rank.
    PreA,
    /// Column read.
    Rd,
    /// Column write.
    Wr,
    /// Read with auto-precharge.
    Rda,
    /// Write with auto-precharge.
    Wra,
    /// All-bank refresh of a rank.
    Ref,
}

impl Command {
    pub fn is_column(self) -> bool {
        matches!(
            self,
            Command::Rd | Command::Wr | Command::Rda | Command::Wra
        )
    }
    pub fn is_read(self) -> bool {
        matches!(self, Command::Rd | Command::Rda)
    }
    pub fn is_write(self) -> bool {
        matches!(self, Command::Wr | Command::Wra)
    }
    pub fn mnemonic(self) -> &'static str {
        match self {
            Command::Act => "ACT",
            Command::Pre => "PRE",
            Command::PreA => "PREA",
            Command::Rd => "RD",
            Command::Wr => "WR",
            Command::Rda => "RDA",
            Command::Wra => "WRA",
            Command::Ref => "REF",
        }
    }
}

/// No row open.
const CLOSED: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct BankState {
    open_row: u32,
    next_act: u64,
    next_pre: u64,
    next_rd: u64,
    next_wr: u64,
}

#[derive(Clone, Debug, Default)]
struct GroupState {
    next_act: u64,
    next_rd: u64,
    next_wr: u64,
}

#[derive(Clone, Debug, Default)]
struct RankState {
    next_act: u64,
    next_rd: u64,
    next_wr: u64,
    /// Times of the last four ACTs (ring buffer), for tFAW.
    faw: [u64; 4],
    faw_pos: usize,
    acts: u64,
    open_banks: u32,
}

/// Why a command is not legal now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandError {
    /// The bank is in the wrong state (ACT to an open bank, RD to a closed bank or other row,
    /// REF with open banks, …).
    State,
    /// A timing constraint forbids the command before this cycle.
    TooEarly(u64),
}

/// Timing and row state of one channel's ranks and banks. Banks are addressed by a flat index
/// `rank * banks_per_rank + bank_group * banks_per_group + bank`.
#[derive(Clone, Debug)]
pub struct ChannelState {
    t: Timings,
    banks_per_rank: u32,
    banks_per_group: u32,
    rank_shift: u32,
    group_shift: u32,
    banks: Vec<BankState>,
    groups: Vec<GroupState>,
    ranks: Vec<RankState>,
    /// Derived spacings.
    rd_to_wr_other_rank: u64,
    wr_to_rd_other_rank: u64,
    wr_to_rd_same_s: u64,
    wr_to_rd_same_l: u64,
    wr_to_pre: u64,
}

impl ChannelState {
    pub fn new(org: &Organization, t: &Timings) -> Self {
        let banks_per_rank = org.banks_per_rank();
        let n_banks = (org.ranks * banks_per_rank) as usize;
        let bank = BankState {
            open_row: CLOSED,
            next_act: 0,
            next_pre: 0,
            next_rd: 0,
            next_wr: 0,
        };
        let u = |v: u32| u64::from(v);
        ChannelState {
            t: t.clone(),
            banks_per_rank,
            banks_per_group: org.banks_per_group,
            rank_shift: banks_per_rank.trailing_zeros(),
            group_shift: org.banks_per_group.trailing_zeros(),
            banks: vec![bank; n_banks],
            groups: vec![GroupState::default(); (org.ranks * org.bank_groups) as usize],
            ranks: vec![RankState::default(); org.ranks as usize],
            rd_to_wr_other_rank: u(t.rtw)
                .max((u(t.cl) + u(t.burst) + u(t.rtrs)).saturating_sub(u(t.cwl))),
            wr_to_rd_other_rank: (u(t.cwl) + u(t.burst) + u(t.rtrs)).saturating_sub(u(t.cl)),
            wr_to_rd_same_s: u(t.cwl) + u(t.burst) + u(t.wtr_s),
            wr_to_rd_same_l: u(t.cwl) + u(t.burst) + u(t.wtr_l),
            wr_to_pre: u(t.cwl) + u(t.burst) + u(t.wr),
        }
    }

    /// Flat bank index of (rank, bank group, bank).
    #[inline]
    pub fn flat(&self, rank: u32, bank_group: u32, bank: u32) -> usize {
        (rank * self.banks_per_rank + bank_group * self.banks_per_group + bank) as usize
    }

    /// Number of banks (all ranks).
    pub fn num_banks(&self) -> usize {
        self.banks.len()
    }

    #[inline]
    fn rank_of(&self, flat: usize) -> usize {
        flat >> self.rank_shift
    }

    #[inline]
    fn group_of(&self, flat: usize) -> usize {
        flat >> self.group_shift
    }

    /// Open row of a bank, if any.
    #[inline]
    pub fn open_row(&self, flat: usize) -> Option<u32> {
        let r = self.banks[flat].open_row;
        (r != CLOSED).then_some(r)
    }

    /// Number of open banks in `rank`.
    pub fn open_banks(&self, rank: usize) -> u32 {
        self.ranks[rank].open_banks
    }

    /// Total ACTs issued to `rank`.
    pub fn acts(&self, rank: usize) -> u64 {
        self.ranks[rank].acts
    }

    /// Earliest cycle the timing constraints allow `cmd` to bank `flat` (for `PreA` and `Ref`
    /// any bank of the rank). Ignores the bank state; see [`ChannelState::check`].
    #[inline(always)]
    pub fn earliest(&self, cmd: Command, flat: usize) -> u64 {
        let b = &self.banks[flat];
        match cmd {
            Command::Act => {
                let g = &self.groups[self.group_of(flat)];
                let r = &self.ranks[self.rank_of(flat)];
                b.next_act.max(g.next_act).max(r.next_act)
            }
            Command::Pre => b.next_pre,
            Command::Rd | Command::Rda => {
                let g = &self.groups[self.group_of(flat)];
                let r = &self.ranks[self.rank_of(flat)];
                b.next_rd.max(g.next_rd).max(r.next_rd)
            }
            Command::Wr | Command::Wra => {
                let g = &self.groups[self.group_of(flat)];
                let r = &self.ranks[self.rank_of(flat)];
                b.next_wr.max(g.next_wr).max(r.next_wr)
            }
            Command::PreA => self
                .rank_banks(self.rank_of(flat))
                .filter(|b| b.open_row != CLOSED)
                .map(|b| b.next_pre)
                .max()
                .unwrap_or(0),
            Command::Ref => self
                .rank_banks(self.rank_of(flat))
                .map(|b| b.next_act)
                .max()
                .unwrap_or(0)
                .max(self.ranks[self.rank_of(flat)].next_act),
        }
    }

    /// [`ChannelState::earliest`] of RD (`write` false) or WR (`write` true) for every bank,
    /// in flat order (one pass over groups and their banks, no per-bank lookups).
    #[inline]
    pub fn column_ready(&self, write: bool) -> impl Iterator<Item = u64> + '_ {
        let per_group = self.banks_per_group as usize;
        let group_shift = self.group_shift;
        let rank_shift = self.rank_shift;
        self.groups
            .iter()
            .zip(self.banks.chunks(per_group))
            .enumerate()
            .flat_map(move |(gi, (g, banks))| {
                let r = &self.ranks[(gi << group_shift) >> rank_shift];
                let common = if write {
                    g.next_wr.max(r.next_wr)
                } else {
                    g.next_rd.max(r.next_rd)
                };
                banks
                    .iter()
                    .map(move |b| common.max(if write { b.next_wr } else { b.next_rd }))
            })
    }

    /// [`ChannelState::earliest`] of ACT for every bank of `rank`, in flat order (one pass
    /// over the rank's groups and their banks, no per-bank lookups).
    #[inline]
    pub fn act_ready_in_rank(&self, rank: usize) -> impl Iterator<Item = u64> + '_ {
        let per_group = self.banks_per_group as usize;
        let per_rank = self.banks_per_rank as usize;
        let groups = per_rank / per_group;
        let r = self.ranks[rank].next_act;
        self.groups[rank * groups..(rank + 1) * groups]
            .iter()
            .zip(self.banks[rank * per_rank..(rank + 1) * per_rank].chunks(per_group))
            .flat_map(move |(g, banks)| {
                let common = g.next_act.max(r);
                banks.iter().map(move |b| common.max(b.next_act))
            })
    }

    fn rank_banks(&self, rank: usize) -> impl Iterator<Item = &BankState> {
        let n = self.banks_per_rank as usize;
        self.banks[rank * n..(rank + 1) * n].iter()
    }

    /// Is `cmd` (to `row` for ACT/RD/WR) legal at cycle `t`? State first, then timing.
    pub fn check(&self, cmd: Command, flat: usize, row: u32, t: u64) -> Result<(), CommandError> {
        let b = &self.banks[flat];
        let state_ok = match cmd {
            Command::Act => b.open_row == CLOSED,
            Command::Pre => b.open_row != CLOSED,
            Command::PreA => true,
            Command::Rd | Command::Wr | Command::Rda | Command::Wra => b.open_row == row,
            Command::Ref => self.ranks[self.rank_of(flat)].open_banks == 0,
        };
        if !state_ok {
            return Err(CommandError::State);
        }
        let e = self.earliest(cmd, flat);
        if t < e {
            return Err(CommandError::TooEarly(e));
        }
        Ok(())
    }

    /// [`ChannelState::check`] then [`ChannelState::issue`].
    pub fn try_issue(
        &mut self,
        cmd: Command,
        flat: usize,
        row: u32,
        t: u64,
    ) -> Result<(), CommandError> {
        self.check(cmd, flat, row, t)?;
        self.issue(cmd, flat, row, t);
        Ok(())
    }

    /// Issue `cmd` at cycle `t`, updating row state and every constraint it imposes. The caller
    /// guarantees legality (the controller only issues commands [`ChannelState::check`] would
    /// accept; debug builds assert it).
    pub fn issue(&mut self, cmd: Command, flat: usize, row: u32, t: u64) {
        debug_assert_eq!(
            self.check(cmd, flat, row, t),
            Ok(()),
            "{cmd:?} bank {flat} row {row} at {t}"
        );
        let tm = &self.t;
        let u = |v: u32| u64::from(v);
        let rank = self.rank_of(flat);
        let group = self.group_of(flat);
        match cmd {
            Command::Act => {
                let b = &mut self.banks[flat];
                b.open_row = row;
                b.next_act = b.next_act.max(t + u(tm.rc));
                b.next_pre = b.next_pre.max(t + u(tm.ras));
                b.next_rd = b.next_rd.max(t + u(tm.rcd));
                b.next_wr = b.next_wr.max(t + u(tm.rcd));
                let g = &mut self.groups[group];
                g.next_act = g.next_act.max(t + u(tm.rrd_l));
                let r = &mut self.ranks[rank];
                r.open_banks += 1;
                r.acts += 1;
                r.faw[r.faw_pos] = t;
                r.faw_pos = (r.faw_pos + 1) & 3;
                let mut next = t + u(tm.rrd_s);
                if r.acts >= 4 {
                    // The oldest of the last four ACTs opens the window the fifth must wait for.
                    next = next.max(r.faw[r.faw_pos] + u(tm.faw));
                }
                r.next_act = r.next_act.max(next);
            }
            Command::Pre => {
                let b = &mut self.banks[flat];
                b.open_row = CLOSED;
                b.next_act = b.next_act.max(t + u(tm.rp));
                self.ranks[rank].open_banks -= 1;
            }
            Command::PreA => {
                let n = self.banks_per_rank as usize;
                for b in &mut self.banks[rank * n..(rank + 1) * n] {
                    if b.open_row != CLOSED {
                        b.open_row = CLOSED;
                        b.next_act = b.next_act.max(t + u(tm.rp));
                    }
                }
                self.ranks[rank].open_banks = 0;
            }
            Command::Ref => {
                let n = self.banks_per_rank as usize;
                for b in &mut self.banks[rank * n..(rank + 1) * n] {
                    b.next_act = b.next_act.max(t + u(tm.rfc));
                }
                let r = &mut self.ranks[rank];
                r.next_act = r.next_act.max(t + u(tm.rfc));
            }
            Command::Rd | Command::Rda => {
                let d = ColumnDelays {
                    same_rank: u(tm.ccd_s),
                    same_group: u(tm.ccd_l),
                    other_rank: u(tm.burst) + u(tm.rtrs),
                    turn_rank: u(tm.rtw),
                    turn_group: u(tm.rtw),
                    turn_other_rank: self.rd_to_wr_other_rank,
                    pre: u(tm.rtp),
                };
                self.column(&d, false, cmd == Command::Rda, rank, group, flat, t);
            }
            Command::Wr | Command::Wra => {
                let d = ColumnDelays {
                    same_rank: u(tm.ccd_s),
                    same_group: u(tm.ccd_l),
                    other_rank: u(tm.burst) + u(tm.rtrs),
                    turn_rank: self.wr_to_rd_same_s,
                    turn_group: self.wr_to_rd_same_l,
                    turn_other_rank: self.wr_to_rd_other_rank,
                    pre: self.wr_to_pre,
                };
                self.column(&d, true, cmd == Command::Wra, rank, group, flat, t);
            }
        }
    }

    /// The effects of a column command (RD/WR, with auto-precharge if `auto_pre`) issued at
    /// `t`: the next command of the same kind waits `d.same_*`, the turnaround to the other
    /// kind `d.turn_*`, in its own rank, its bank group and the other ranks; the bank's
    /// precharge waits `d.pre`, and an auto-precharge closes the row then.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn column(
        &mut self,
        d: &ColumnDelays,
        write: bool,
        auto_pre: bool,
        rank: usize,
        group: usize,
        flat: usize,
        t: u64,
    ) {
        for (i, r) in self.ranks.iter_mut().enumerate() {
            let (same, turn) = if i == rank {
                (d.same_rank, d.turn_rank)
            } else {
                (d.other_rank, d.turn_other_rank)
            };
            let (own, other) = own_and_other(&mut r.next_rd, &mut r.next_wr, write);
            *own = (*own).max(t + same);
            *other = (*other).max(t + turn);
        }
        let g = &mut self.groups[group];
        let (own, other) = own_and_other(&mut g.next_rd, &mut g.next_wr, write);
        *own = (*own).max(t + d.same_group);
        *other = (*other).max(t + d.turn_group);
        let rp = u64::from(self.t.rp);
        let b = &mut self.banks[flat];
        b.next_pre = b.next_pre.max(t + d.pre);
        if auto_pre {
            let pre_at = b.next_pre;
            b.open_row = CLOSED;
            b.next_act = b.next_act.max(pre_at + rp);
            self.ranks[rank].open_banks -= 1;
        }
    }
}

/// Minimum delays a column command imposes (see [`ChannelState::column`]): on the next
/// command of the same kind (RD after RD, WR after WR) and on the turnaround to the other
/// kind, in its own rank, its bank group and the other ranks, and on its bank's precharge.
struct ColumnDelays {
    same_rank: u64,
    same_group: u64,
    other_rank: u64,
    turn_rank: u64,
    turn_group: u64,
    turn_other_rank: u64,
    pre: u64,
}

/// `(next of the same kind, next of the other kind)` of a read (`write` false) or a write.
#[inline(always)]
fn own_and_other<'a>(rd: &'a mut u64, wr: &'a mut u64, write: bool) -> (&'a mut u64, &'a mut u64) {
    if write {
        (wr, rd)
    } else {
        (rd, wr)
    }
}
