//! Tests of the building blocks: SplitMix64's reference vectors, saturating counters and
//! selectors, RRIP victims, bimodal insertion, leader-set sampling and both duels.

use super::rrip::rrip_victim_scan;
use super::test_support::*;
use super::*;
use apusim_trace::Agent;

#[test]
fn splitmix64_matches_reference_vectors() {
    let mut r = SplitMix64::new(1234567);
    let want = [
        6457827717110365317u64,
        3203168211198807973,
        9817491932198370423,
        4593380528125082431,
        16408922859458223821,
    ];
    for w in want {
        assert_eq!(r.next_u64(), w);
    }
    let mut r = SplitMix64::new(7);
    for _ in 0..1000 {
        assert!(r.below(16) < 16);
    }
}

#[test]
fn saturating_counters_saturate() {
    let mut c = SatCounter::new(3, 6);
    c.inc();
    c.inc();
    assert_eq!(c.get(), 7);
    assert!(c.is_max() && c.msb());
    for _ in 0..10 {
        c.dec();
    }
    assert!(c.is_zero() && !c.msb());
    c.inc();
    c.inc();
    c.inc();
    assert!(!c.msb());
    c.inc();
    assert!(c.msb(), "4 of 0..=7 has the MSB set");
    let mut b = 6u8;
    sat_inc(&mut b, 7);
    sat_inc(&mut b, 7);
    assert_eq!(b, 7);
    b = 0;
    sat_dec(&mut b);
    assert_eq!(b, 0);
}

#[test]
fn psel_starts_at_policy_0_and_flips_on_one_net_miss() {
    let mut p = Psel::new(10);
    assert_eq!((p.value(), p.choice()), (511, 0));
    p.record_miss(0);
    assert_eq!((p.value(), p.choice()), (512, 1));
    p.record_miss(1);
    assert_eq!(p.choice(), 0);
    for _ in 0..5000 {
        p.record_miss(0);
    }
    assert_eq!(p.value(), 1023);
    for _ in 0..5000 {
        p.record_miss(1);
    }
    assert_eq!(p.value(), 0);
}

proptest::proptest! {
    /// The branch-free 16-way victim search equals the scan for every set state (RRPVs
    /// never exceed the distant value), both in the victim and in the aged RRPVs.
    #[test]
    fn victim_16_matches_scan(
        raw in proptest::array::uniform16(0u8..=15),
        distant in 3u8..=15,
    ) {
        let mut set = raw.map(|v| v.min(distant));
        let mut scanned = set;
        let want = rrip_victim_scan(&mut scanned, distant);
        proptest::prop_assert_eq!(crate::simd::rrip_victim_16(&mut set, distant), want);
        proptest::prop_assert_eq!(set, scanned);
    }
}

#[test]
fn rrip_victim_ages_then_picks_lowest_distant_way() {
    let mut s = [1, 2, 0, 2];
    assert_eq!(rrip_victim(&mut s), 1);
    assert_eq!(s, [2, 3, 1, 3]);
    let mut s = [0, 3, 3, 1];
    assert_eq!(rrip_victim(&mut s), 1);
    assert_eq!(s, [0, 3, 3, 1], "no aging when a distant line exists");
    let mut s = [0, 0];
    assert_eq!(rrip_victim(&mut s), 0);
    assert_eq!(s, [3, 3]);
}

#[test]
fn bimodal_inserts_long_once_in_32() {
    let mut b = Bimodal::new(32);
    let v: Vec<u8> = (0..64).map(|_| b.insertion()).collect();
    for (i, &x) in v.iter().enumerate() {
        let want = if i % 32 == 31 { RRPV_LONG } else { RRPV_MAX };
        assert_eq!(x, want, "insertion {i}");
    }
}

#[test]
fn complement_select_matches_the_1024_set_rule() {
    for sets in [1024usize, 4096, 6144, 16384] {
        let s = SetSampler::new(sets);
        for t in 0..16 {
            let (mut n0, mut n1) = (0, 0);
            for set in 0..sets {
                let a = set & 31;
                let b = (set >> 5) & 31;
                let want = if b == (a + 2 * t) % 32 {
                    Some(0)
                } else if b == (a + 2 * t + 1) % 32 {
                    Some(1)
                } else {
                    None
                };
                assert_eq!(s.leader(set, t), want, "sets {sets} set {set} t {t}");
                n0 += (want == Some(0)) as usize;
                n1 += (want == Some(1)) as usize;
            }
            assert_eq!((n0, n1), (32 * sets / 1024, 32 * sets / 1024));
        }
    }
}

#[test]
fn every_cache_of_64_or_more_sets_has_both_leader_kinds() {
    for sets in [
        4usize, 8, 16, 32, 48, 64, 96, 100, 128, 256, 512, 768, 2048, 3000,
    ] {
        let s = SetSampler::new(sets);
        let threads = if sets >= 64 { 16 } else { s.distinct_threads() };
        for t in 0..threads {
            let n0 = (0..sets).filter(|&x| s.leader(x, t) == Some(0)).count();
            let n1 = (0..sets).filter(|&x| s.leader(x, t) == Some(1)).count();
            assert!(n0 >= 2 && n1 >= 2, "sets {sets} thread {t}: {n0} {n1}");
            if sets >= 64 {
                let per = (sets as f64) / 32.0;
                assert!((n0 as f64 - per).abs() <= 1.0, "density, sets {sets}");
            }
        }
        // Leaders of different threads never overlap.
        for x in 0..sets {
            let owners = (0..threads).filter(|&t| s.leader(x, t).is_some()).count();
            assert!(owners <= 1, "set {x} of {sets} led by {owners} threads");
        }
    }
    let tiny = SetSampler::new(2);
    assert_eq!(tiny.leader(0, 0), None);
    assert_eq!(tiny.spare_leader(1), None);
}

#[test]
fn depth_groups_are_8_per_1k_and_disjoint_from_rrip_leaders() {
    for sets in [64usize, 96, 128, 1024, 4096, 6144, 16384] {
        let s = SetSampler::new(sets);
        let g0: Vec<usize> = (0..sets)
            .filter(|&x| s.spare_leader(x) == Some(0))
            .collect();
        let g1: Vec<usize> = (0..sets)
            .filter(|&x| s.spare_leader(x) == Some(1))
            .collect();
        assert!(!g0.is_empty() && !g1.is_empty(), "sets {sets}");
        if sets >= 1024 {
            assert_eq!(g0.len(), 8 * sets / 1024);
            assert_eq!(g1.len(), 8 * sets / 1024);
        }
        for &x in g0.iter().chain(&g1) {
            for t in 0..15 {
                assert_eq!(
                    s.leader(x, t),
                    None,
                    "set {x} of {sets} also leads thread {t}"
                );
            }
        }
    }
    // The concrete 1K groups: offset 31 sets, b = 0, 4, ... and b = 2, 6, ...
    let s = SetSampler::new(1024);
    assert_eq!(s.spare_leader(1), Some(0)); // a = 1, b = 0
    assert_eq!(s.spare_leader(2 * 32 + 3), Some(1)); // a = 3, b = 2
    assert_eq!(s.spare_leader(32 + 2), None); // a = 2, b = 1
}

#[test]
fn set_duel_trains_on_leader_misses_only() {
    let mut c = ctx(64, 4);
    c.params.insert("psel_bits".into(), 4.0);
    let mut d = SetDuel::from_ctx(&c).unwrap();
    assert_eq!(d.psel().value(), 7);
    assert_eq!(
        (d.leader(0), d.leader(31), d.leader(5)),
        (Some(0), Some(1), None)
    );
    d.record_miss(5);
    assert_eq!(d.psel().value(), 7);
    d.record_miss(0);
    assert_eq!((d.psel().value(), d.policy(5), d.policy(0)), (8, 1, 0));
    d.record_miss(31);
    d.record_miss(32);
    assert_eq!((d.psel().value(), d.policy(5), d.policy(33)), (6, 0, 0));
    c.params.insert("psel_bits".into(), 40.0);
    assert!(SetDuel::from_ctx(&c).is_err());
}

#[test]
fn set_duel_leaders_are_thread_0_of_the_sampler() {
    for sets in [1, 2, 3, 4, 5, 8, 63, 64, 100, 1000, 1024, 3000, 16384] {
        let d = SetDuel::from_ctx(&ctx(sets, 4)).unwrap();
        let s = SetSampler::new(sets);
        let mut leaders = [0; 2];
        for set in 0..sets {
            assert_eq!(d.leader(set), s.leader(set, 0), "set {set} of {sets}");
            if let Some(p) = d.leader(set) {
                leaders[p as usize] += 1;
            }
        }
        if sets >= 4 {
            assert!(
                leaders[0] >= 2 && leaders[1] >= 2,
                "{sets} sets: {leaders:?}"
            );
        } else {
            assert_eq!(leaders, [0, 0], "{sets} sets");
        }
    }
}

#[test]
fn agent_duel_keeps_one_selector_per_agent() {
    let mut c = ctx(64, 4);
    c.n_cpus = 2;
    let mut d = AgentDuel::from_ctx(&c).unwrap();
    assert_eq!(d.agents(), 3);
    // The GPU is thread 2, so offset 4 marks its policy-0 leaders: set 28 has a = 28,
    // b = 0, offset (0 - 28) mod 32 = 4.
    assert_eq!(d.leader(28, Agent::GPU), Some(0));
    assert_eq!(d.leader(28, Agent::cpu(0)), None);
    d.record_miss(28, Agent::cpu(0));
    assert_eq!(d.psel(Agent::cpu(0)).value(), 511, "not cpu0's leader");
    d.record_miss(28, Agent::GPU);
    assert_eq!(d.psel(Agent::GPU).value(), 512);
    assert_eq!(d.policy(5, Agent::GPU), 1);
    assert_eq!(d.policy(5, Agent::cpu(1)), 0);
    // In the GPU's leader set, cpu1 follows its own selector.
    assert_eq!(d.policy(28, Agent::cpu(1)), 0);
    assert_eq!(agent_slot(Agent::cpu(5), 2), 1, "extra cores fold");
    assert_eq!(agent_slot(Agent::GPU, 2), 2);
}
