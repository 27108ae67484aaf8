//! Tests of DRP: duel groups, the WSS cache's counting, allocation and epochs, each
//! sub-policy, pinning, and the ablation levels.

use super::super::util::test_support::*;
use super::*;
use crate::{Cache, Policy};
use apusim_trace::{Agent, Op};

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
