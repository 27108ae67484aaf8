//! An independent JEDEC-style checker for command logs: it re-derives every constraint from
//! the raw command history (no shared code with the model's next-allowed-cycle counters), and
//! checks data-bus exclusivity.

#![allow(dead_code)]

use apusim_dram::{Command, CommandRecord, DramConfig};
use std::collections::HashMap;

#[derive(Default, Clone)]
struct Bank {
    open: Option<u32>,
    act: Option<u64>,
    /// Effective precharge time (explicit PRE, PREA, or auto-precharge of RDA/WRA).
    pre: Option<u64>,
    rd: Option<u64>,
    wr: Option<u64>,
}

#[derive(Default, Clone)]
struct Rank {
    acts: Vec<u64>,
    rd: Option<u64>,
    wr: Option<u64>,
    refresh: Option<u64>,
    /// Per bank group: last ACT, RD, WR.
    group_act: HashMap<u32, u64>,
    group_rd: HashMap<u32, u64>,
    group_wr: HashMap<u32, u64>,
}

/// Per channel: banks, ranks, data bursts (start, end, rank), last command cycle.
type ChannelLog = (Vec<Bank>, Vec<Rank>, Vec<(u64, u64, u32)>, Option<u64>);

fn need(ok: bool, what: &str, r: &CommandRecord) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} violated by {} at cycle {} (channel {}, bank {}, row {})",
            r.command.mnemonic(),
            r.cycle,
            r.channel,
            r.bank,
            r.row
        ))
    }
}

fn after(last: Option<u64>, gap: u64, t: u64) -> bool {
    last.is_none_or(|l| t >= l + gap)
}

/// Check a (cycle-sorted) command log of one or more channels against `cfg`'s timing set.
pub fn check_log(cfg: &DramConfig, log: &[CommandRecord]) -> Result<(), String> {
    let org = &cfg.spec.org;
    let tm = &cfg.spec.timing;
    let u = |v: u32| u64::from(v);
    let bpr = org.banks_per_rank();
    let bpg = org.banks_per_group;
    let mut channels: HashMap<u32, ChannelLog> = HashMap::new();
    for r in log {
        let (banks, ranks, bursts, last_cmd) = channels.entry(r.channel).or_insert_with(|| {
            (
                vec![Bank::default(); (org.ranks * bpr) as usize],
                vec![Rank::default(); org.ranks as usize],
                Vec::new(),
                None,
            )
        });
        let t = r.cycle;
        need(
            last_cmd.is_none_or(|l| t > l),
            "one command per cycle on the command bus",
            r,
        )?;
        *last_cmd = Some(t);
        let rank = r.rank as usize;
        let b = r.bank as usize;
        let group = (r.bank % bpr) / bpg;
        let rank_banks = rank * bpr as usize..(rank + 1) * bpr as usize;
        match r.command {
            Command::Act => {
                let bk = &banks[b];
                need(bk.open.is_none(), "ACT to a closed bank", r)?;
                need(after(bk.pre, u(tm.rp), t), "tRP", r)?;
                need(after(bk.act, u(tm.rc), t), "tRC", r)?;
                let rk = &ranks[rank];
                need(after(rk.acts.last().copied(), u(tm.rrd_s), t), "tRRD_S", r)?;
                need(
                    after(rk.group_act.get(&group).copied(), u(tm.rrd_l), t),
                    "tRRD_L",
                    r,
                )?;
                if rk.acts.len() >= 4 {
                    need(t >= rk.acts[rk.acts.len() - 4] + u(tm.faw), "tFAW", r)?;
                }
                need(after(rk.refresh, u(tm.rfc), t), "tRFC", r)?;
                let bk = &mut banks[b];
                bk.open = Some(r.row);
                bk.act = Some(t);
                let rk = &mut ranks[rank];
                rk.acts.push(t);
                rk.group_act.insert(group, t);
            }
            Command::Pre | Command::PreA => {
                let targets: Vec<usize> = if r.command == Command::Pre {
                    need(banks[b].open.is_some(), "PRE to an open bank", r)?;
                    vec![b]
                } else {
                    rank_banks
                        .clone()
                        .filter(|&i| banks[i].open.is_some())
                        .collect()
                };
                for i in targets {
                    let bk = &banks[i];
                    need(after(bk.act, u(tm.ras), t), "tRAS", r)?;
                    need(after(bk.rd, u(tm.rtp), t), "tRTP", r)?;
                    need(after(bk.wr, u(tm.cwl + tm.burst + tm.wr), t), "tWR", r)?;
                    let bk = &mut banks[i];
                    bk.open = None;
                    bk.pre = Some(t);
                }
            }
            Command::Ref => {
                for i in rank_banks.clone() {
                    need(banks[i].open.is_none(), "REF with all banks closed", r)?;
                    need(after(banks[i].pre, u(tm.rp), t), "tRP before REF", r)?;
                    need(after(banks[i].act, u(tm.rc), t), "tRC before REF", r)?;
                }
                need(
                    after(ranks[rank].refresh, u(tm.rfc), t),
                    "tRFC between REFs",
                    r,
                )?;
                ranks[rank].refresh = Some(t);
            }
            Command::Rd | Command::Rda | Command::Wr | Command::Wra => {
                let is_read = matches!(r.command, Command::Rd | Command::Rda);
                let bk = &banks[b];
                need(bk.open == Some(r.row), "column command to the open row", r)?;
                need(after(bk.act, u(tm.rcd), t), "tRCD", r)?;
                for (q, rk) in ranks.iter().enumerate() {
                    if q == rank {
                        let g_rd = rk.group_rd.get(&group).copied();
                        let g_wr = rk.group_wr.get(&group).copied();
                        if is_read {
                            need(after(rk.rd, u(tm.ccd_s), t), "tCCD_S (RD-RD)", r)?;
                            need(after(g_rd, u(tm.ccd_l), t), "tCCD_L (RD-RD)", r)?;
                            need(
                                after(rk.wr, u(tm.cwl + tm.burst + tm.wtr_s), t),
                                "tWTR_S",
                                r,
                            )?;
                            need(after(g_wr, u(tm.cwl + tm.burst + tm.wtr_l), t), "tWTR_L", r)?;
                        } else {
                            need(after(rk.wr, u(tm.ccd_s), t), "tCCD_S (WR-WR)", r)?;
                            need(after(g_wr, u(tm.ccd_l), t), "tCCD_L (WR-WR)", r)?;
                            need(after(rk.rd, u(tm.rtw), t), "tRTW", r)?;
                        }
                    } else if is_read {
                        need(
                            after(rk.rd, u(tm.burst + tm.rtrs), t),
                            "tRTRS (RD-RD other rank)",
                            r,
                        )?;
                        let gap = u(tm.cwl + tm.burst + tm.rtrs).saturating_sub(u(tm.cl));
                        need(after(rk.wr, gap, t), "tRTRS (WR-RD other rank)", r)?;
                    } else {
                        need(
                            after(rk.wr, u(tm.burst + tm.rtrs), t),
                            "tRTRS (WR-WR other rank)",
                            r,
                        )?;
                        let gap =
                            u(tm.rtw).max(u(tm.cl + tm.burst + tm.rtrs).saturating_sub(u(tm.cwl)));
                        need(after(rk.rd, gap, t), "tRTRS (RD-WR other rank)", r)?;
                    }
                }
                let start = t + if is_read { u(tm.cl) } else { u(tm.cwl) };
                bursts.push((start, start + u(tm.burst), r.rank));
                let rk = &mut ranks[rank];
                let bk = &mut banks[b];
                if is_read {
                    rk.rd = Some(t);
                    rk.group_rd.insert(group, t);
                    bk.rd = Some(t);
                } else {
                    rk.wr = Some(t);
                    rk.group_wr.insert(group, t);
                    bk.wr = Some(t);
                }
                if matches!(r.command, Command::Rda | Command::Wra) {
                    let ready = if is_read {
                        t + u(tm.rtp)
                    } else {
                        t + u(tm.cwl + tm.burst + tm.wr)
                    };
                    let pre = ready.max(bk.act.unwrap_or(0) + u(tm.ras));
                    bk.open = None;
                    bk.pre = Some(pre);
                }
            }
        }
    }
    for (ch, (_, _, bursts, _)) in channels.iter_mut() {
        check_bursts(bursts, u(tm.rtrs)).map_err(|e| format!("channel {ch}: {e}"))?;
    }
    Ok(())
}

/// The data bus never carries two bursts at once (and switching ranks leaves tRTRS free).
pub fn check_bursts(bursts: &mut [(u64, u64, u32)], rtrs: u64) -> Result<(), String> {
    bursts.sort_unstable();
    for w in bursts.windows(2) {
        let (s0, e0, r0) = w[0];
        let (s1, _, r1) = w[1];
        let gap = if r0 != r1 { rtrs } else { 0 };
        if s1 < e0 + gap {
            return Err(format!(
                "data bus: burst [{s0}, {e0}) of rank {r0} overlaps burst starting at {s1} of rank {r1}"
            ));
        }
    }
    Ok(())
}
