//! One test per timing constraint, on the channel state machine: issue the preceding command,
//! check the following command is refused one cycle before the constraint allows it and
//! accepted exactly then. Each test fails if its constraint is dropped from the model.
//! Reference timing set (DDR3-1600K): CL 11, CWL 8, RCD 11, RP 11, RAS 28, RC 39, BURST 4,
//! CCD 4, RRD 5, FAW 24, WTR 6, RTW 9, RTRS 1, WR 12, RTP 6, RFC 208.

use apusim_dram::{presets::preset, ChannelState, Command, CommandError, Timings};
use Command::*;

fn state_with(f: impl FnOnce(&mut apusim_dram::DramConfig)) -> (ChannelState, Timings) {
    let mut c = preset("ddr3-1600-11-1ch").unwrap();
    c.spec.org.ranks = 2;
    f(&mut c);
    c.validate().unwrap();
    (
        ChannelState::new(&c.spec.org, &c.spec.timing),
        c.spec.timing.clone(),
    )
}

fn state() -> (ChannelState, Timings) {
    state_with(|_| {})
}

/// `cmd` to `bank`/`row` is refused at `t - 1` for timing and accepted at `t`.
#[track_caller]
fn boundary(s: &ChannelState, cmd: Command, bank: usize, row: u32, t: u64) {
    assert_eq!(
        s.check(cmd, bank, row, t - 1),
        Err(CommandError::TooEarly(t)),
        "{cmd:?} one cycle early"
    );
    assert_eq!(s.check(cmd, bank, row, t), Ok(()), "{cmd:?} on time");
}

#[track_caller]
fn go(s: &mut ChannelState, cmd: Command, bank: usize, row: u32, t: u64) {
    s.try_issue(cmd, bank, row, t)
        .unwrap_or_else(|e| panic!("{cmd:?} at {t}: {e:?}"));
}

// Banks 0..8 are rank 0, 8..16 rank 1.

#[test]
fn t_rcd_act_to_rd_and_wr() {
    let (mut s, t) = state();
    go(&mut s, Act, 0, 5, 0);
    boundary(&s, Rd, 0, 5, u64::from(t.rcd));
    boundary(&s, Wr, 0, 5, u64::from(t.rcd));
}

#[test]
fn t_ras_act_to_pre() {
    let (mut s, t) = state();
    go(&mut s, Act, 0, 5, 0);
    boundary(&s, Pre, 0, 5, u64::from(t.ras));
}

#[test]
fn t_rp_pre_to_act() {
    let (mut s, t) = state();
    go(&mut s, Act, 0, 5, 0);
    go(&mut s, Pre, 0, 5, 40);
    boundary(&s, Act, 0, 6, 40 + u64::from(t.rp));
}

#[test]
fn t_rc_act_to_act_same_bank() {
    // tRC longer than tRAS + tRP so that it, not tRP, is binding.
    let (mut s, t) = state_with(|c| c.spec.timing.rc = 45);
    go(&mut s, Act, 0, 5, 0);
    go(&mut s, Pre, 0, 5, u64::from(t.ras));
    assert!(u64::from(t.ras + t.rp) < 45);
    boundary(&s, Act, 0, 6, 45);
}

#[test]
fn t_rrd_act_to_act_other_bank() {
    let (mut s, t) = state();
    go(&mut s, Act, 0, 5, 0);
    boundary(&s, Act, 1, 5, u64::from(t.rrd_s));
    // Other rank: no tRRD.
    assert_eq!(s.check(Act, 8, 5, 1), Ok(()));
}

#[test]
fn t_faw_fifth_act() {
    let (mut s, t) = state();
    for (i, when) in [0u64, 5, 10, 15].into_iter().enumerate() {
        go(&mut s, Act, i, 1, when);
    }
    // tRRD alone would allow 20; tFAW pushes the fifth ACT to 24.
    boundary(&s, Act, 4, 1, u64::from(t.faw));
}

#[test]
fn t_ccd_rd_to_rd_and_wr_to_wr() {
    let (mut s, t) = state();
    go(&mut s, Act, 0, 1, 0);
    go(&mut s, Act, 1, 1, 5);
    go(&mut s, Rd, 0, 1, 16);
    boundary(&s, Rd, 1, 1, 16 + u64::from(t.ccd_s));
    let (mut s, t) = state();
    go(&mut s, Act, 0, 1, 0);
    go(&mut s, Act, 1, 1, 5);
    go(&mut s, Wr, 0, 1, 16);
    boundary(&s, Wr, 1, 1, 16 + u64::from(t.ccd_s));
}

#[test]
fn t_rtw_rd_to_wr() {
    let (mut s, t) = state();
    go(&mut s, Act, 0, 1, 0);
    go(&mut s, Act, 1, 1, 5);
    go(&mut s, Rd, 0, 1, 16);
    boundary(&s, Wr, 1, 1, 16 + u64::from(t.rtw));
}

#[test]
fn t_wtr_wr_to_rd() {
    let (mut s, t) = state();
    go(&mut s, Act, 0, 1, 0);
    go(&mut s, Act, 1, 1, 5);
    go(&mut s, Wr, 0, 1, 16);
    boundary(&s, Rd, 1, 1, 16 + u64::from(t.cwl + t.burst + t.wtr_s));
}

#[test]
fn t_wr_write_recovery_to_pre() {
    let (mut s, t) = state();
    go(&mut s, Act, 0, 1, 0);
    go(&mut s, Wr, 0, 1, 16);
    // 16 + 8 + 4 + 12 = 40 > tRAS (28).
    boundary(&s, Pre, 0, 1, 16 + u64::from(t.cwl + t.burst + t.wr));
}

#[test]
fn t_rtp_rd_to_pre() {
    let (mut s, t) = state();
    go(&mut s, Act, 0, 1, 0);
    go(&mut s, Rd, 0, 1, 30);
    // 30 + 6 = 36 > tRAS (28).
    boundary(&s, Pre, 0, 1, 30 + u64::from(t.rtp));
}

#[test]
fn t_rtrs_rank_to_rank() {
    let (mut s, t) = state();
    go(&mut s, Act, 0, 1, 0);
    go(&mut s, Act, 8, 1, 1);
    go(&mut s, Rd, 0, 1, 20);
    // Same-rank tCCD would allow 24; the rank switch costs tRTRS more.
    boundary(&s, Rd, 8, 1, 20 + u64::from(t.burst + t.rtrs));
    let (mut s, t) = state();
    go(&mut s, Act, 0, 1, 0);
    go(&mut s, Act, 8, 1, 1);
    go(&mut s, Wr, 0, 1, 20);
    boundary(&s, Wr, 8, 1, 20 + u64::from(t.burst + t.rtrs));
    // WR then RD on the other rank: data of the RD must start tRTRS after the write data.
    boundary(
        &s,
        Rd,
        8,
        1,
        20 + u64::from(t.cwl + t.burst + t.rtrs - t.cl),
    );
}

#[test]
fn t_burst_equals_ccd_for_back_to_back_reads_same_bank() {
    let (mut s, t) = state();
    go(&mut s, Act, 0, 1, 0);
    go(&mut s, Rd, 0, 1, 11);
    boundary(&s, Rd, 0, 1, 11 + u64::from(t.ccd_s.max(t.burst)));
}

#[test]
fn t_rfc_refresh_to_act() {
    let (mut s, t) = state();
    go(&mut s, Ref, 0, 0, 100);
    boundary(&s, Act, 3, 1, 100 + u64::from(t.rfc));
    boundary(&s, Ref, 3, 0, 100 + u64::from(t.rfc));
    // The other rank is not refreshing.
    assert_eq!(s.check(Act, 8, 1, 101), Ok(()));
}

#[test]
fn refresh_needs_closed_banks_and_trp() {
    let (mut s, t) = state();
    go(&mut s, Act, 2, 1, 0);
    assert_eq!(s.check(Ref, 0, 0, 1000), Err(CommandError::State));
    boundary(&s, PreA, 0, 0, u64::from(t.ras));
    go(&mut s, PreA, 0, 0, 50);
    assert_eq!(s.open_banks(0), 0);
    boundary(&s, Ref, 0, 0, 50 + u64::from(t.rp));
}

#[test]
fn auto_precharge_reopens_after_rtp_and_rp() {
    let (mut s, t) = state();
    go(&mut s, Act, 0, 1, 0);
    go(&mut s, Rda, 0, 1, 30);
    assert_eq!(s.open_row(0), None);
    boundary(&s, Act, 0, 2, 30 + u64::from(t.rtp + t.rp));
    let (mut s, t) = state();
    go(&mut s, Act, 0, 1, 0);
    go(&mut s, Wra, 0, 1, 11);
    // Write recovery (11 + 24 = 35) beats tRAS (28).
    boundary(&s, Act, 0, 2, 11 + u64::from(t.cwl + t.burst + t.wr + t.rp));
    let (mut s, t) = state();
    go(&mut s, Act, 0, 1, 0);
    go(&mut s, Rda, 0, 1, 11);
    // tRAS (28) beats 11 + tRTP; tRC (39) equals tRAS + tRP here.
    boundary(&s, Act, 0, 2, u64::from(t.ras + t.rp).max(u64::from(t.rc)));
}

#[test]
fn bank_group_long_and_short_spacings() {
    let (mut s, _) = state_with(|c| {
        c.spec.org.bank_groups = 2;
        c.spec.org.banks_per_group = 4;
        let t = &mut c.spec.timing;
        t.ccd_l = 6;
        t.rrd_l = 7;
        t.wtr_l = 9;
    });
    // Banks 0..4 group 0, 4..8 group 1 (rank 0).
    go(&mut s, Act, 0, 1, 0);
    boundary(&s, Act, 1, 1, 7); // same group: tRRD_L
    boundary(&s, Act, 4, 1, 5); // other group: tRRD_S
    go(&mut s, Act, 1, 1, 7);
    go(&mut s, Act, 4, 1, 12);
    go(&mut s, Rd, 0, 1, 30);
    boundary(&s, Rd, 1, 1, 36); // tCCD_L
    boundary(&s, Rd, 4, 1, 34); // tCCD_S
    go(&mut s, Wr, 1, 1, 60);
    boundary(&s, Rd, 0, 1, 60 + 8 + 4 + 9); // tWTR_L
    boundary(&s, Rd, 4, 1, 60 + 8 + 4 + 6); // tWTR_S
}

#[test]
fn state_rules() {
    let (mut s, _) = state();
    assert_eq!(s.check(Rd, 0, 1, 100), Err(CommandError::State));
    assert_eq!(s.check(Pre, 0, 1, 100), Err(CommandError::State));
    go(&mut s, Act, 0, 1, 0);
    assert_eq!(s.check(Act, 0, 2, 100), Err(CommandError::State));
    assert_eq!(s.check(Rd, 0, 2, 100), Err(CommandError::State));
}
