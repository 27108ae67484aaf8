//! Tests of GSPZTC, GSPZTC+TSE and GSPC: sample sets, per-bank counters, each table's
//! sample and non-sample actions, and the statistics.

use super::super::util::test_support::*;
use super::*;
use apusim_trace::{Agent, Op};

// 1024 sets x 2 ways, one bank unless said otherwise. Sample sets: 0, 33, 66, ...;
// set 5 is a non-sample.
const S: u64 = 33;
const N: u64 = 5;
fn l(set: u64, i: u64) -> u64 {
    set + 1024 * i
}
fn tex(line: u64) -> Access {
    gpu(Stream::StaticTexture, Op::Read, line)
}
fn dtex(line: u64) -> Access {
    gpu(Stream::DynamicTexture, Op::Read, line)
}
fn z(line: u64) -> Access {
    gpu(Stream::Depth, Op::Read, line)
}
fn rt(line: u64) -> Access {
    gpu(Stream::Color, Op::Write, line)
}
fn other(line: u64) -> Access {
    gpu(Stream::Vertex, Op::Read, line)
}
fn counters<const L: u8>(c: &crate::Cache<Gsp<L>>) -> ([u8; 8], u8) {
    let b = c.policy().bank(0);
    (b.c, b.acc)
}
fn cache_banks<const L: u8>(banks: usize, t: f64) -> crate::Cache<Gsp<L>> {
    let mut x = ctx(1024, 2);
    x.banks = banks;
    x.params.insert("gspc_t".into(), t);
    cache(1024, 2, Gsp::<L>::build(&x).unwrap())
}

#[test]
fn sixteen_samples_per_1024_sets_spread_over_banks() {
    let samples: Vec<usize> = (0..4096).filter(|&s| is_sample(s)).collect();
    assert_eq!(samples.len(), 64);
    assert_eq!(&samples[..3], &[0, 33, 66]);
    assert!(!is_sample(16 * 33));
    for banks in [1usize, 2, 4, 8, 16] {
        for bank in 0..banks {
            let n = samples.iter().filter(|&&s| s % banks == bank).count();
            assert_eq!(n, 64 / banks, "banks {banks} bank {bank}");
        }
    }
    let classes = [
        (Stream::Depth, Op::Read, GraphicsClass::Z),
        (Stream::HiZ, Op::Read, GraphicsClass::Other),
        (Stream::StaticTexture, Op::Read, GraphicsClass::Tex),
        (Stream::DynamicTexture, Op::Read, GraphicsClass::Tex),
        (Stream::Color, Op::Read, GraphicsClass::Rt),
        (Stream::Color, Op::Writeback, GraphicsClass::Rt),
        (Stream::Display, Op::Write, GraphicsClass::Rt),
        (Stream::Display, Op::Read, GraphicsClass::Other),
        (Stream::Stencil, Op::Write, GraphicsClass::Other),
    ];
    for (s, op, want) in classes {
        assert_eq!(GraphicsClass::of(&gpu(s, op, 0)), want, "{s} {op}");
    }
}

/// Table 3, sample rows, event by event (GSPZTC).
#[test]
fn gspztc_sample_set_actions() {
    let mut c = cache_banks::<GSPZTC>(1, 8.0);
    // Z fill: RRPV 2, FILL(Z)++, ACC++.
    assert_eq!(run(&mut c, &z(l(S, 0))), Did::Fill(None));
    assert_eq!(c.policy().rrpv(S as usize, 0), 2);
    assert_eq!(counters(&c), ([1, 0, 0, 0, 0, 0, 0, 0], 1));
    // Z hit: RRPV 0, HIT(Z)++.
    assert_eq!(run(&mut c, &z(l(S, 0))), Did::Hit);
    assert_eq!(c.policy().rrpv(S as usize, 0), 0);
    assert_eq!(counters(&c), ([1, 1, 0, 0, 0, 0, 0, 0], 2));
    // RT fill: RRPV 2 in a sample, state 11, no counter but ACC (GSPZTC has no PROD).
    assert_eq!(run(&mut c, &rt(l(S, 1))), Did::Fill(None));
    assert_eq!(
        (
            c.policy().rrpv(S as usize, 1),
            c.policy().state(S as usize, 1)
        ),
        (2, RT)
    );
    assert_eq!(counters(&c), ([1, 1, 0, 0, 0, 0, 0, 0], 3));
    // RT -> TEX hit: RRPV 0, FILL(TEX)++, RT bit reset.
    assert_eq!(run(&mut c, &dtex(l(S, 1))), Did::Hit);
    assert_eq!(
        (
            c.policy().rrpv(S as usize, 1),
            c.policy().state(S as usize, 1)
        ),
        (0, E0)
    );
    assert_eq!(counters(&c), ([1, 1, 1, 0, 0, 0, 0, 0], 4));
    // TEX hit (RT bit reset): HIT(TEX)++, and GSPZTC has no epochs: state stays.
    assert_eq!(run(&mut c, &tex(l(S, 1))), Did::Hit);
    assert_eq!(run(&mut c, &tex(l(S, 1))), Did::Hit);
    assert_eq!(c.policy().state(S as usize, 1), E0);
    assert_eq!(counters(&c), ([1, 1, 1, 2, 0, 0, 0, 0], 6));
    // TEX fill (evicts after aging): RRPV 2, FILL(TEX)++.
    assert!(matches!(run(&mut c, &tex(l(S, 2))), Did::Fill(Some(_))));
    assert_eq!(counters(&c), ([1, 1, 2, 2, 0, 0, 0, 0], 7));
    // Other fill / hit: ACC only.
    assert!(matches!(run(&mut c, &other(l(S, 3))), Did::Fill(Some(_))));
    assert_eq!(run(&mut c, &other(l(S, 3))), Did::Hit);
    assert_eq!(counters(&c), ([1, 1, 2, 2, 0, 0, 0, 0], 9));
    // Non-sample accesses touch no counter.
    run(&mut c, &z(l(N, 0)));
    run(&mut c, &tex(l(N, 1)));
    assert_eq!(counters(&c), ([1, 1, 2, 2, 0, 0, 0, 0], 9));
}

/// Table 3, non-sample rows: thresholds FILL > t·HIT with t = 8.
#[test]
fn gspztc_non_sample_thresholds() {
    let mut c = cache_banks::<GSPZTC>(1, 8.0);
    // Empty counters: FILL(Z) = 0 > 8·0 is false -> Z fills at 2, TEX fills at 0.
    run(&mut c, &z(l(N, 0)));
    run(&mut c, &tex(l(N, 1)));
    assert_eq!((c.policy().rrpv(5, 0), c.policy().rrpv(5, 1)), (2, 0));
    // One Z fill in a sample: FILL(Z) = 1 > 0 -> Z fills at 3; likewise TEX.
    run(&mut c, &z(l(S, 0)));
    run(&mut c, &tex(l(S, 1)));
    run(&mut c, &z(l(N + 1, 0)));
    run(&mut c, &tex(l(N + 1, 1)));
    assert_eq!((c.policy().rrpv(6, 0), c.policy().rrpv(6, 1)), (3, 3));
    // One hit each: FILL = 1 > 8·1 false -> Z 2, TEX 0 again.
    run(&mut c, &z(l(S, 0)));
    run(&mut c, &tex(l(S, 1)));
    run(&mut c, &z(l(N + 2, 0)));
    run(&mut c, &tex(l(N + 2, 1)));
    assert_eq!((c.policy().rrpv(7, 0), c.policy().rrpv(7, 1)), (2, 0));
    // 8 more TEX fills into the sample: FILL(TEX) = 9 > 8·HIT = 8 -> 3; with 8 it is not.
    for i in 0..7 {
        run(&mut c, &tex(l(S, 10 + i)));
    }
    assert_eq!(c.policy().bank(0).c[FILL_0], 8);
    run(&mut c, &tex(l(N + 3, 0)));
    assert_eq!(c.policy().rrpv(8, 0), 0, "8 > 8 is false");
    run(&mut c, &tex(l(S, 20)));
    run(&mut c, &tex(l(N + 3, 1)));
    assert_eq!(c.policy().rrpv(8, 1), 3, "9 > 8");
    // RT fills at 0, other fills at 2, any hit to 0 (a distant TEX line hit).
    run(&mut c, &rt(l(N + 4, 0)));
    run(&mut c, &other(l(N + 4, 1)));
    assert_eq!((c.policy().rrpv(9, 0), c.policy().rrpv(9, 1)), (0, 2));
    assert_eq!(c.policy().state(9, 0), RT);
    assert_eq!(run(&mut c, &tex(l(N + 3, 1))), Did::Hit);
    assert_eq!(c.policy().rrpv(8, 1), 0);
    // RT -> TEX hit in a non-sample: GSPZTC sets 0 and clears the RT bit.
    assert_eq!(run(&mut c, &tex(l(N + 4, 0))), Did::Hit);
    assert_eq!((c.policy().rrpv(9, 0), c.policy().state(9, 0)), (0, E0));
    // t = 1: FILL(Z) 1 > 1·HIT(Z) 1 is false; one more fill makes it true.
    let mut c = cache_banks::<GSPZTC>(1, 1.0);
    run(&mut c, &z(l(S, 0)));
    run(&mut c, &z(l(S, 0)));
    run(&mut c, &z(l(N, 0)));
    assert_eq!(c.policy().rrpv(5, 0), 2);
    run(&mut c, &z(l(S, 1)));
    run(&mut c, &z(l(N, 1)));
    assert_eq!(c.policy().rrpv(5, 1), 3);
}

/// ACC(ALL) is 7 bits: the 127th sample access halves every counter and resets it.
#[test]
fn acc_all_saturation_halves_the_bank() {
    let mut c = cache_banks::<GSPC>(1, 8.0);
    // 63 Z fill + hit pairs = 126 accesses: FILL(Z) = HIT(Z) = 63.
    for i in 0..63 {
        run(&mut c, &z(l(S, i)));
        run(&mut c, &z(l(S, i)));
    }
    assert_eq!(counters(&c), ([63, 63, 0, 0, 0, 0, 0, 0], 126));
    // The 127th access (a Z fill: FILL(Z) 64) saturates ACC: 64/2 = 32, 63/2 = 31.
    run(&mut c, &z(l(S, 100)));
    assert_eq!(counters(&c), ([32, 31, 0, 0, 0, 0, 0, 0], 0));
    assert_eq!(c.policy().bank(0).halvings, 1);
    // 8-bit counters saturate at 255 between halvings? They cannot exceed 127 + 127/2..
    // but a direct check: 255 stays 255.
    let mut b = BankCounters {
        c: [255; 8],
        ..Default::default()
    };
    b.inc(0);
    assert_eq!(b.c[0], 255);
}

/// Counters are per bank: a sample of bank 1 trains bank 1 only, and a non-sample of bank
/// 0 reads bank 0's counters.
#[test]
fn counters_are_per_bank() {
    let mut c = cache_banks::<GSPZTC>(2, 8.0);
    // Set 33 is in bank 1, set 66 in bank 0.
    run(&mut c, &z(l(33, 0)));
    assert_eq!(c.policy().bank(1).c[FILL_Z], 1);
    assert_eq!(c.policy().bank(0).c[FILL_Z], 0);
    run(&mut c, &z(l(4, 0))); // bank 0: FILL 0 > 0 false
    run(&mut c, &z(l(5, 0))); // bank 1: FILL 1 > 0 true
    assert_eq!((c.policy().rrpv(4, 0), c.policy().rrpv(5, 0)), (2, 3));
}

/// Table 4: the texture epochs, in a sample and in a non-sample set.
#[test]
fn tse_epoch_transitions() {
    let mut c = cache_banks::<GSPZTC_TSE>(1, 8.0);
    let s = S as usize;
    // Sample: TEX fill -> state 00, FILL(0)++.
    run(&mut c, &tex(l(S, 0)));
    assert_eq!(c.policy().state(s, 0), E0);
    assert_eq!(counters(&c).0, [0, 0, 1, 0, 0, 0, 0, 0]);
    // TEX hit in 00 -> 01: HIT(0)++, FILL(1)++.
    run(&mut c, &tex(l(S, 0)));
    assert_eq!(c.policy().state(s, 0), E1);
    assert_eq!(counters(&c).0, [0, 0, 1, 1, 1, 0, 0, 0]);
    // TEX hit in 01 -> 10: HIT(1)++.
    run(&mut c, &tex(l(S, 0)));
    assert_eq!(c.policy().state(s, 0), E2);
    assert_eq!(counters(&c).0, [0, 0, 1, 1, 1, 1, 0, 0]);
    // TEX hit in 10 stays 10, no counter.
    run(&mut c, &tex(l(S, 0)));
    assert_eq!(c.policy().state(s, 0), E2);
    assert_eq!(counters(&c), ([0, 0, 1, 1, 1, 1, 0, 0], 4));
    // RT hit on a texture line: state 11; RT -> TEX hit: FILL(0)++, state 00.
    run(&mut c, &rt(l(S, 0)));
    assert_eq!(c.policy().state(s, 0), RT);
    run(&mut c, &tex(l(S, 0)));
    assert_eq!(c.policy().state(s, 0), E0);
    assert_eq!(counters(&c), ([0, 0, 2, 1, 1, 1, 0, 0], 6));
    assert_eq!(c.policy().rrpv(s, 0), 0, "samples promote every hit");

    // Non-sample: FILL(0) 2 > 8·1 false -> TEX fill at 0, state 00.
    let n = N as usize;
    run(&mut c, &tex(l(N, 0)));
    assert_eq!((c.policy().rrpv(n, 0), c.policy().state(n, 0)), (0, E0));
    // TEX hit in 00: FILL(1) 1 > 8·HIT(1) 8 false -> 0, state 01.
    run(&mut c, &tex(l(N, 0)));
    assert_eq!((c.policy().rrpv(n, 0), c.policy().state(n, 0)), (0, E1));
    // Make E1 dead in the samples: two more E0 -> E1 transitions, FILL(1) = 3, HIT(1) = 1.
    run(&mut c, &tex(l(S, 0))); // 00 -> 01 (FILL(1) 2)
    for i in 1..3 {
        run(&mut c, &tex(l(S, i))); // fills, FILL(0)++
        run(&mut c, &tex(l(S, i))); // 00 -> 01: FILL(1)++
    }
    assert_eq!(c.policy().bank(0).c[FILL_1], 4);
    assert_eq!(c.policy().bank(0).c[HIT_1], 1);
    // Still 4 > 8 false. Use a second line and t = 1 to flip: rebuild with t = 1.
    let mut c = cache_banks::<GSPZTC_TSE>(1, 1.0);
    run(&mut c, &tex(l(S, 0)));
    run(&mut c, &tex(l(S, 0))); // FILL(0) 1, HIT(0) 1, FILL(1) 1
    run(&mut c, &tex(l(N, 0))); // 1 > 1 false -> 0
    assert_eq!(c.policy().rrpv(n, 0), 0);
    run(&mut c, &tex(l(N, 0))); // E0 -> E1: FILL(1) 1 > HIT(1) 0 -> 3
    assert_eq!((c.policy().rrpv(n, 0), c.policy().state(n, 0)), (3, E1));
    run(&mut c, &tex(l(N, 0))); // E1 -> E2: RRPV 0
    assert_eq!((c.policy().rrpv(n, 0), c.policy().state(n, 0)), (0, E2));
    run(&mut c, &tex(l(N, 0)));
    assert_eq!((c.policy().rrpv(n, 0), c.policy().state(n, 0)), (0, E2));
    // FILL(0) 2 > HIT(0) 1: an RT -> TEX hit in a non-sample enters E0 at RRPV 3.
    run(&mut c, &tex(l(S, 1)));
    run(&mut c, &rt(l(N, 1)));
    assert_eq!((c.policy().rrpv(n, 1), c.policy().state(n, 1)), (0, RT));
    run(&mut c, &dtex(l(N, 1)));
    assert_eq!((c.policy().rrpv(n, 1), c.policy().state(n, 1)), (3, E0));
    // ... and a TEX fill too.
    run(&mut c, &tex(l(N + 1, 0)));
    assert_eq!(c.policy().rrpv(6, 0), 3);
}

// gspc §3, Table 5, one test per row. Each replays the row's event on a 1024-set, 2-way,
// one-bank GSPC cache and checks the line's state and RRPV and the bank's counters after.

/// Bank 0's PROD and CONS, as the sample sets would have trained them.
fn set_prod_cons<const L: u8>(c: &mut crate::Cache<Gsp<L>>, prod: u8, cons: u8) {
    let b = &mut c.policy_mut().counters[0];
    b.c[PROD] = prod;
    b.c[CONS] = cons;
}
/// `(state, RRPV)` of a line.
fn line<const L: u8>(c: &crate::Cache<Gsp<L>>, set: u64, way: usize) -> (u8, u8) {
    let p = c.policy();
    (p.state(set as usize, way), p.rrpv(set as usize, way))
}
/// Fill a render-target line into way 0 of the empty non-sample `set` with PROD and CONS
/// as given; check that the fill changes no counter and return the line's
/// `(state, RRPV)`.
fn non_sample_rt_fill(c: &mut crate::Cache<Gspc>, set: u64, prod: u8, cons: u8) -> (u8, u8) {
    assert!(!is_sample(set as usize));
    set_prod_cons(c, prod, cons);
    let before = counters(c);
    assert_eq!(run(c, &rt(l(set, 0))), Did::Fill(None));
    assert_eq!(counters(c), before, "a non-sample fill trains nothing");
    line(c, set, 0)
}

/// Table 5, sample sets: "RT fill | state ← 11, PROD++". The fill itself runs SRRIP
/// (RRPV 2, Table 2) whatever PROD and CONS say, and counts in ACC(ALL).
#[test]
fn table5_sample_rt_fill() {
    let mut c = cache_banks::<GSPC>(1, 8.0);
    assert_eq!(run(&mut c, &rt(l(S, 0))), Did::Fill(None));
    assert_eq!(line(&c, S, 0), (RT, 2));
    assert_eq!(counters(&c), ([0, 0, 0, 0, 0, 0, 1, 0], 1));
    // Counters that would insert at 3 in a non-sample do not change a sample's fill.
    set_prod_cons(&mut c, 100, 0);
    assert_eq!(run(&mut c, &rt(l(S, 1))), Did::Fill(None));
    assert_eq!(line(&c, S, 1), (RT, 2));
    assert_eq!(counters(&c), ([0, 0, 0, 0, 0, 0, 101, 0], 2));
    // A GPU write of the display stream is a render-target fill too (§5.1).
    let display = gpu(Stream::Display, Op::Write, l(S + 33, 0));
    assert_eq!(run(&mut c, &display), Did::Fill(None));
    assert_eq!(line(&c, S + 33, 0), (RT, 2));
    assert_eq!(counters(&c), ([0, 0, 0, 0, 0, 0, 102, 0], 3));
    // PROD is an 8-bit saturating counter.
    set_prod_cons(&mut c, 255, 0);
    run(&mut c, &rt(l(S + 66, 0)));
    assert_eq!(counters(&c), ([0, 0, 0, 0, 0, 0, 255, 0], 4));
}

/// Table 5, sample sets: "RT hit (blending) | state ← 11". The hit promotes to RRPV 0
/// (SRRIP, Table 2), counts in ACC(ALL) only: PROD counts fills, not hits.
#[test]
fn table5_sample_rt_blending_hit() {
    let mut c = cache_banks::<GSPC>(1, 8.0);
    // A texture line in E1: TEX fill, TEX hit.
    run(&mut c, &tex(l(S, 0)));
    run(&mut c, &tex(l(S, 0)));
    assert_eq!(line(&c, S, 0), (E1, 0));
    // Age it to RRPV 3 (a second fill into the full set ages both ways).
    run(&mut c, &other(l(S, 1)));
    assert!(matches!(run(&mut c, &other(l(S, 2))), Did::Fill(Some(_))));
    let (state, rrpv) = line(&c, S, 0);
    assert!(state == E1 && rrpv > 0, "{state} {rrpv}");
    let (before, acc) = counters(&c);
    assert_eq!(run(&mut c, &rt(l(S, 0))), Did::Hit);
    assert_eq!(line(&c, S, 0), (RT, 0));
    assert_eq!(counters(&c), (before, acc + 1));
    // A blending hit on a render-target line: still 11, no PROD.
    assert_eq!(run(&mut c, &rt(l(S, 0))), Did::Hit);
    assert_eq!(line(&c, S, 0), (RT, 0));
    assert_eq!(counters(&c), (before, acc + 2));
}

/// Table 5, sample sets: "RT → TEX hit | state ← 00, CONS++" (and Table 4's FILL(0)++;
/// RRPV 0 as every sample hit).
#[test]
fn table5_sample_rt_to_tex_hit() {
    let mut c = cache_banks::<GSPC>(1, 8.0);
    run(&mut c, &rt(l(S, 0)));
    run(&mut c, &rt(l(S, 1)));
    assert_eq!(counters(&c), ([0, 0, 0, 0, 0, 0, 2, 0], 2));
    // Z and "other" hits on a render-target line consume nothing: it stays 11 (the Z
    // hit counts HIT(Z), Table 3).
    assert_eq!(run(&mut c, &z(l(S, 1))), Did::Hit);
    assert_eq!(run(&mut c, &other(l(S, 1))), Did::Hit);
    assert_eq!(line(&c, S, 1), (RT, 0));
    assert_eq!(counters(&c), ([0, 1, 0, 0, 0, 0, 2, 0], 4));
    // Age way 0 so that the consuming hit's RRPV is visible.
    c.policy_mut().rrpv[S as usize * 2] = 2;
    assert_eq!(run(&mut c, &dtex(l(S, 0))), Did::Hit);
    assert_eq!(line(&c, S, 0), (E0, 0));
    assert_eq!(counters(&c), ([0, 1, 1, 0, 0, 0, 2, 1], 5));
    // A static-texture read consumes as well.
    assert_eq!(run(&mut c, &tex(l(S, 1))), Did::Hit);
    assert_eq!(line(&c, S, 1), (E0, 0));
    assert_eq!(counters(&c), ([0, 1, 2, 0, 0, 0, 2, 2], 6));
    // The next texture hit is an E0 hit (Table 4), not a second consumption.
    assert_eq!(run(&mut c, &tex(l(S, 0))), Did::Hit);
    assert_eq!(line(&c, S, 0), (E1, 0));
    assert_eq!(counters(&c), ([0, 1, 2, 1, 1, 0, 2, 2], 7));
    // CONS is an 8-bit saturating counter.
    set_prod_cons(&mut c, 0, 255);
    run(&mut c, &rt(l(S, 1)));
    run(&mut c, &tex(l(S, 1)));
    assert_eq!(c.policy().bank(0).c[CONS], 255);
}

/// Table 5, non-sample sets: "RT fill | state ← 11, If PROD > 16·CONS then RRPV ← 3".
/// PROD = 16·CONS is not above: it takes the next branch.
#[test]
fn table5_non_sample_rt_fill_rrpv3_when_prod_above_16_cons() {
    let mut c = cache_banks::<GSPC>(1, 8.0);
    let cases = [(1, 0), (17, 1), (33, 2), (129, 8), (255, 15)];
    for (i, (prod, cons)) in cases.into_iter().enumerate() {
        let set = N + i as u64;
        assert_eq!(
            non_sample_rt_fill(&mut c, set, prod, cons),
            (RT, 3),
            "PROD {prod} CONS {cons}"
        );
    }
    // The edge PROD = 16·CONS belongs to "16·CONS ≥ PROD > 8·CONS".
    for (i, (prod, cons)) in [(16, 1), (128, 8), (240, 15)].into_iter().enumerate() {
        let set = N + 10 + i as u64;
        assert_eq!(non_sample_rt_fill(&mut c, set, prod, cons), (RT, 2));
    }
}

/// Table 5, non-sample sets: "RT fill | state ← 11, Else if 16·CONS ≥ PROD > 8·CONS then
/// RRPV ← 2". Both edges: PROD = 16·CONS is in, PROD = 8·CONS is out.
#[test]
fn table5_non_sample_rt_fill_rrpv2_between_8_and_16_cons() {
    let mut c = cache_banks::<GSPC>(1, 8.0);
    let cases = [
        (9, 1),
        (16, 1),
        (17, 2),
        (32, 2),
        (65, 8),
        (128, 8),
        (255, 16),
    ];
    for (i, (prod, cons)) in cases.into_iter().enumerate() {
        let set = N + i as u64;
        assert_eq!(
            non_sample_rt_fill(&mut c, set, prod, cons),
            (RT, 2),
            "PROD {prod} CONS {cons}"
        );
    }
    // The edge PROD = 8·CONS belongs to "Else".
    for (i, (prod, cons)) in [(8, 1), (16, 2), (64, 8), (248, 31)]
        .into_iter()
        .enumerate()
    {
        let set = N + 10 + i as u64;
        assert_eq!(non_sample_rt_fill(&mut c, set, prod, cons), (RT, 0));
    }
}

/// Table 5, non-sample sets: "RT fill | state ← 11, ... Else RRPV ← 0": a consumption
/// probability CONS/PROD of at least 1/8, and no production at all (PROD 0).
#[test]
fn table5_non_sample_rt_fill_rrpv0_otherwise() {
    let mut c = cache_banks::<GSPC>(1, 8.0);
    let cases = [
        (0, 0),
        (0, 5),
        (8, 1),
        (7, 1),
        (64, 8),
        (255, 32),
        (255, 255),
    ];
    for (i, (prod, cons)) in cases.into_iter().enumerate() {
        let set = N + i as u64;
        assert_eq!(
            non_sample_rt_fill(&mut c, set, prod, cons),
            (RT, 0),
            "PROD {prod} CONS {cons}"
        );
    }
}

/// Table 5, non-sample sets: "RT hit (blending) | state ← 11, RRPV ← 0", on a render
/// target inserted at RRPV 3 and on a texture line inserted at 3.
#[test]
fn table5_non_sample_rt_blending_hit() {
    let mut c = cache_banks::<GSPC>(1, 8.0);
    assert_eq!(non_sample_rt_fill(&mut c, N, 17, 1), (RT, 3));
    let before = counters(&c);
    assert_eq!(run(&mut c, &rt(l(N, 0))), Did::Hit);
    assert_eq!(line(&c, N, 0), (RT, 0));
    // FILL(0) 1 > 8·HIT(0) 0: a texture fill goes in at 3, state 00.
    c.policy_mut().counters[0].c[FILL_0] = 1;
    run(&mut c, &tex(l(N, 1)));
    assert_eq!(line(&c, N, 1), (E0, 3));
    let before_tex = counters(&c);
    assert_eq!(run(&mut c, &rt(l(N, 1))), Did::Hit);
    assert_eq!(line(&c, N, 1), (RT, 0));
    assert_eq!(counters(&c), before_tex);
    assert_eq!(before.1, before_tex.1, "non-sample accesses leave ACC(ALL)");
}

/// Table 5, non-sample sets: "RT → TEX hit | state ← 00, RRPV updated as in Table 4",
/// i.e. RRPV ← (FILL(0) > t·HIT(0)) ? 3 : 0; CONS counts in the samples only.
#[test]
fn table5_non_sample_rt_to_tex_hit() {
    let mut c = cache_banks::<GSPC>(1, 8.0);
    let set_fill_hit = |c: &mut crate::Cache<Gspc>, fill: u8, hit: u8| {
        let b = &mut c.policy_mut().counters[0];
        b.c[FILL_0] = fill;
        b.c[HIT_0] = hit;
    };
    // FILL(0) 9 > 8·HIT(0) 8: the consumed line enters E0 at RRPV 3.
    assert_eq!(non_sample_rt_fill(&mut c, N, 0, 0), (RT, 0));
    set_fill_hit(&mut c, 9, 1);
    let before = counters(&c);
    assert_eq!(run(&mut c, &dtex(l(N, 0))), Did::Hit);
    assert_eq!(line(&c, N, 0), (E0, 3));
    assert_eq!(counters(&c), before, "no CONS++ in a non-sample");
    // FILL(0) 8 = 8·HIT(0): not above, RRPV 0.
    assert_eq!(non_sample_rt_fill(&mut c, N + 1, 0, 0), (RT, 0));
    set_fill_hit(&mut c, 8, 1);
    c.policy_mut().rrpv[(N as usize + 1) * 2] = 2;
    assert_eq!(run(&mut c, &tex(l(N + 1, 0))), Did::Hit);
    assert_eq!(line(&c, N + 1, 0), (E0, 0));
    // The next texture hit is an E0 -> E1 hit of Table 4, not a consumption.
    set_fill_hit(&mut c, 0, 0);
    c.policy_mut().counters[0].c[FILL_1] = 1;
    assert_eq!(run(&mut c, &tex(l(N + 1, 0))), Did::Hit);
    assert_eq!(line(&c, N + 1, 0), (E1, 3));
}

/// gspc §3: "The PROD and CONS counters are halved together with the FILL and HIT
/// counters within each LLC bank", i.e. when the 7-bit ACC(ALL) saturates (§3, Table 3).
/// Table 5 leaves the halving out; its effect on the insertion class is the integer
/// halving's: a CONS of 1 halves to 0, and any PROD then inserts at RRPV 3.
#[test]
fn prod_and_cons_are_halved_with_fill_and_hit() {
    let mut c = cache_banks::<GSPC>(1, 8.0);
    c.policy_mut().counters[0] = BankCounters {
        c: [10, 11, 12, 13, 14, 15, 16, 1],
        acc: 125,
        halvings: 0,
    };
    // PROD 16 = 16·CONS: RRPV 2.
    assert_eq!(non_sample_rt_fill(&mut c, N, 16, 1), (RT, 2));
    // The 126th sample access (a Z fill) does not saturate ACC(ALL).
    run(&mut c, &z(l(S, 0)));
    assert_eq!(counters(&c), ([11, 11, 12, 13, 14, 15, 16, 1], 126));
    // The 127th does: every 8-bit counter is halved, PROD and CONS with them.
    run(&mut c, &z(l(S, 0)));
    assert_eq!(counters(&c), ([5, 6, 6, 6, 7, 7, 8, 0], 0));
    assert_eq!(c.policy().bank(0).halvings, 1);
    // PROD 8 > 16·CONS 0: the same production history now inserts at RRPV 3.
    let before = counters(&c);
    assert_eq!(run(&mut c, &rt(l(N + 1, 0))), Did::Fill(None));
    assert_eq!(line(&c, N + 1, 0), (RT, 3));
    assert_eq!(counters(&c), before);
    // A sample RT fill that saturates ACC(ALL) is counted, then halved: PROD (201 + 1) / 2.
    c.policy_mut().counters[0] = BankCounters {
        c: [0, 0, 0, 0, 0, 0, 201, 41],
        acc: 126,
        halvings: 0,
    };
    run(&mut c, &rt(l(S, 1)));
    assert_eq!(counters(&c), ([0, 0, 0, 0, 0, 0, 101, 20], 0));
}

/// GSPZTC+TSE keeps no PROD/CONS: its RT fills go in at RRPV 0 whatever the samples saw
/// (gspc §3: "The GSPZTC and GSPZTC+TSE policies fill the render target blocks with RRPV
/// zero").
#[test]
fn tse_ignores_prod_and_cons() {
    let mut t = cache_banks::<GSPZTC_TSE>(1, 8.0);
    for i in 0..20 {
        run(&mut t, &rt(l(S, i)));
    }
    assert_eq!(t.policy().bank(0).c[PROD], 0);
    run(&mut t, &rt(l(N, 0)));
    assert_eq!(t.policy().rrpv(5, 0), 0);
    set_prod_cons(&mut t, 100, 0);
    run(&mut t, &rt(l(N, 1)));
    assert_eq!(t.policy().rrpv(5, 1), 0);
}

/// The render-target statistics: non-sample fills by insertion class, productions,
/// consumptions and evictions in state 11, and their balance with the lines still in 11.
#[test]
fn rt_statistics_count_classes_consumptions_and_unconsumed_evictions() {
    let stat = |c: &crate::Cache<Gspc>, name: &str| {
        let s = c.policy().stats();
        s.iter().find(|(k, _)| k == name).map(|(_, v)| *v).unwrap()
    };
    let mut c = cache_banks::<GSPC>(1, 8.0);
    assert_eq!(c.policy().rt_insertion(0), 0);
    assert_eq!(non_sample_rt_fill(&mut c, N, 17, 1), (RT, 3));
    assert_eq!(c.policy().rt_insertion(0), 3);
    assert_eq!(non_sample_rt_fill(&mut c, N + 1, 16, 1), (RT, 2));
    assert_eq!(c.policy().rt_insertion(0), 2);
    assert_eq!(non_sample_rt_fill(&mut c, N + 2, 8, 1), (RT, 0));
    assert_eq!(non_sample_rt_fill(&mut c, N + 3, 0, 0), (RT, 0));
    run(&mut c, &rt(l(S, 0)));
    assert_eq!(
        *c.policy().rt_stats(),
        RtStats {
            fills_at: [2, 0, 1, 1],
            sample_fills: 1,
            produced: 5,
            consumed: 0,
            evicted_unconsumed: 0,
        }
    );
    // Consume one (RT -> TEX), then produce it again with a blending write: a
    // production, while a blending hit on a line already in 11 is not.
    run(&mut c, &tex(l(N + 2, 0)));
    run(&mut c, &rt(l(N + 2, 0)));
    run(&mut c, &rt(l(N + 2, 0)));
    // Evict the RRPV-3 render target of set N unconsumed (an "other" line at 2 takes
    // way 1, the next fill ages the set and replaces way 0).
    run(&mut c, &other(l(N, 1)));
    assert_eq!(run(&mut c, &other(l(N, 2))), Did::Fill(Some(l(N, 0))));
    // Evicting a consumed line (now a texture line) counts nothing.
    run(&mut c, &tex(l(N + 3, 0)));
    for i in 1..5 {
        run(&mut c, &other(l(N + 3, i)));
    }
    assert!(!c.probe(l(N + 3, 0) * LINE));
    let rt_stats = *c.policy().rt_stats();
    assert_eq!(rt_stats.produced, 6);
    assert_eq!(rt_stats.consumed, 2);
    assert_eq!(rt_stats.evicted_unconsumed, 1);
    assert_eq!(stat(&c, "rt_fills_rrpv3"), 1.0);
    assert_eq!(stat(&c, "rt_fills_rrpv2"), 1.0);
    assert_eq!(stat(&c, "rt_fills_rrpv0"), 2.0);
    assert_eq!(stat(&c, "rt_fills_sample"), 1.0);
    assert_eq!(stat(&c, "rt_consumed"), 2.0);
    assert_eq!(stat(&c, "rt_evicted_unconsumed"), 1.0);
    // produced = consumed + evicted unconsumed + still in 11.
    assert_eq!(stat(&c, "rt_produced"), 2.0 + 1.0 + stat(&c, "rt_lines"));
    // GSPZTC+TSE counts the same events; all its non-sample RT fills are at 0.
    let mut t = cache_banks::<GSPZTC_TSE>(1, 8.0);
    set_prod_cons(&mut t, 100, 0);
    run(&mut t, &rt(l(N, 0)));
    run(&mut t, &rt(l(S, 0)));
    assert_eq!(t.policy().rt_insertion(0), 0);
    assert_eq!(t.policy().rt_stats().fills_at, [1, 0, 0, 0]);
    assert_eq!(t.policy().rt_stats().produced, 2);
}

/// Victims: the lowest way at 3 after aging, in samples and non-samples alike.
#[test]
fn victims_are_srrip() {
    let mut c = cache_banks::<GSPC>(1, 8.0);
    run(&mut c, &other(l(N, 0))); // 2
    run(&mut c, &rt(l(N, 1))); // 0
    assert_eq!(run(&mut c, &other(l(N, 2))), Did::Fill(Some(l(N, 0))));
    assert_eq!((c.policy().rrpv(5, 0), c.policy().rrpv(5, 1)), (2, 1));
    let cpu = Access::new(Agent::cpu(0), Stream::CpuData, Op::Read, l(N, 3) * LINE, 8);
    assert_eq!(run(&mut c, &cpu), Did::Fill(Some(l(N, 2))));
    let st = c.policy().stats();
    assert!(st.iter().any(|(k, v)| k == "rt_lines" && *v == 1.0));
}
