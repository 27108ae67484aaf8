//! Listing 1 replayed on hand-made sequences, and whole-kernel checks.

use crate::config::GpuConfig;
use crate::hierarchy::GpuHierarchy;
use crate::kernel::{run_kernel, run_table, to_csv};
use crate::levels::Predictor;
use crate::predictor::hash_bits;
use crate::PredictorKind;
use apusim_trace::{Access, Agent, Op, Stream};

/// Two SMs, each with a one-set 2-way L1; a one-set 16-way L2 (lines take ways in order of
/// first use); threshold 2.
fn tiny(predictor: &str) -> GpuConfig {
    GpuConfig::load_preset(
        "table1",
        &[
            "sms=2".into(),
            "l1=128,2,64".into(),
            "l2=1K,16,64".into(),
            "l3=4K,16,64".into(),
            format!("predictor={predictor}"),
            "l1.pc.threshold=2".into(),
        ],
    )
    .unwrap()
}

fn rd(sm: u16, line: u64, pc: u64) -> Access {
    let mut a = Access::new(Agent::GPU, Stream::ShaderData, Op::Read, line * 64, 4);
    a.unit = sm;
    a.pc = pc;
    a
}

fn wr(sm: u16, line: u64) -> Access {
    Access {
        op: Op::Write,
        ..rd(sm, line, 0x999)
    }
}

fn counter(h: &GpuHierarchy, sm: usize, pc: u64) -> u8 {
    match &h.l1(sm).policy().predictor {
        Predictor::Pc(p) => p.counter(pc),
        _ => panic!("no PC predictor"),
    }
}

const P1: u64 = 0x100;
const P2: u64 = 0x204;
const P3: u64 = 0x308;

#[test]
fn test_pcs_map_to_distinct_entries() {
    let idx: Vec<usize> = [P1, P2, P3].iter().map(|p| hash_bits(*p, 7)).collect();
    assert!(
        idx[0] != idx[1] && idx[1] != idx[2] && idx[0] != idx[2],
        "{idx:?}"
    );
}

#[test]
fn listing1_hit_decrements_the_stored_pc_and_eviction_increments() {
    let mut h = GpuHierarchy::new(&tiny("pc"), false).unwrap();
    // A, B fill the two ways; C and D evict A and B, both last touched by P1.
    for l in [1, 2, 3, 4] {
        h.access(&rd(0, l, P1)).unwrap();
    }
    assert_eq!(counter(&h, 0, P1), 2, "two unreused evictions");
    // A hit on C by P2 decrements the counter of the PC stored in C (P1), not P2's.
    h.access(&rd(0, 3, P2)).unwrap();
    assert_eq!(counter(&h, 0, P1), 1);
    assert_eq!(counter(&h, 0, P2), 0);
    // E (P3, counter 0: no bypass) evicts D, the pseudo-LRU line, stored PC P1.
    h.access(&rd(0, 5, P3)).unwrap();
    assert_eq!(counter(&h, 0, P1), 2);
    assert!(h.l1(0).probe(5 * 64) && h.l1(0).probe(3 * 64));
    // Now C (stored P2) is evicted by F: P2's counter rises.
    h.access(&rd(0, 6, P3)).unwrap();
    assert_eq!(counter(&h, 0, P2), 1);
    let m = h.metrics();
    assert_eq!((m.l1_hits, m.l1_misses, m.bypasses), (1, 6, 0));
    // The other SM's table is untouched.
    assert_eq!(counter(&h, 1, P1), 0);
}

#[test]
fn listing1_threshold_bypass_and_bypass_bit_correction() {
    let mut h = GpuHierarchy::new(&tiny("pc"), false).unwrap();
    for l in [1, 2, 3, 4] {
        h.access(&rd(0, l, P1)).unwrap();
    }
    assert_eq!(counter(&h, 0, P1), 2);
    // Line 7 (L2 way 4: lines 1-4 took ways 0-3) by P1: counter 2 >= threshold 2: bypassed.
    h.access(&rd(0, 7, P1)).unwrap();
    assert!(!h.l1(0).probe(7 * 64));
    assert_eq!(h.metrics().bypasses, 1);
    assert!(h.l2().policy().bit(0, 4), "the L2 remembers the bypass");
    // Re-referenced while in the L2: predicted bypass again, but the bypassBit installs it.
    h.access(&rd(0, 7, P1)).unwrap();
    assert!(h.l1(0).probe(7 * 64));
    let m = *h.metrics();
    assert_eq!((m.bypasses, m.corrected, m.predicted_bypasses), (1, 1, 2));
    assert!(
        !h.l2().policy().bit(0, 4),
        "the bypassBit is cleared once read"
    );
    assert_eq!(
        m.fp_paper, 1,
        "a re-referenced bypass is a false positive (§5.3)"
    );
    assert_eq!(m.fp_sdbp, 1, "and it would still have been resident");
    // Without the bypassBit the bypass is irreversible.
    let mut cfg = tiny("pc");
    cfg.l1.pc.bypass_bit = false;
    let mut h = GpuHierarchy::new(&cfg, false).unwrap();
    for l in [1, 2, 3, 4, 7, 7] {
        h.access(&rd(0, l, P1)).unwrap();
    }
    assert!(!h.l1(0).probe(7 * 64));
    assert_eq!(h.metrics().bypasses, 2);
}

#[test]
fn listing1_misprediction_recovery_across_sms() {
    let mut h = GpuHierarchy::new(&tiny("pc"), false).unwrap();
    // Train P1 towards bypass on both SMs.
    for sm in [0, 1] {
        for l in [1, 2, 3, 4] {
            h.access(&rd(sm, 10 * sm as u64 + l, P1)).unwrap();
        }
        assert_eq!(counter(&h, sm as usize, P1), 2);
    }
    // SM 0 bypasses line 30; SM 1 then misses on it, predicts bypass too, but the bypassBit
    // SM 0 left in the L2 makes SM 1 install it (§3.2: the correction does not distinguish
    // compute units).
    h.access(&rd(0, 30, P1)).unwrap();
    assert!(!h.l1(0).probe(30 * 64));
    h.access(&rd(1, 30, P1)).unwrap();
    assert!(h.l1(1).probe(30 * 64));
    assert_eq!(h.metrics().corrected, 1);
    // The corrective fill evicted an unreused line of SM 1 (stored P1): 3. SM 1's hits on
    // the installed line then retrain P1 towards caching, below the threshold.
    assert_eq!(counter(&h, 1, P1), 3);
    h.access(&rd(1, 30, P1)).unwrap();
    assert_eq!(counter(&h, 1, P1), 2);
    h.access(&rd(1, 30, P1)).unwrap();
    assert_eq!(counter(&h, 1, P1), 1);
    // Recovered: SM 1's next P1 miss fills instead of bypassing.
    h.access(&rd(1, 32, P1)).unwrap();
    assert!(h.l1(1).probe(32 * 64));
    // SM 0 is unaffected by SM 1's recovery: P1 still bypasses there.
    assert_eq!(counter(&h, 0, P1), 2);
    h.access(&rd(0, 31, P1)).unwrap();
    assert!(!h.l1(0).probe(31 * 64));
}

#[test]
fn l1_is_write_through_no_allocate() {
    let mut h = GpuHierarchy::new(&tiny("none"), false).unwrap();
    h.access(&wr(0, 5)).unwrap();
    assert!(!h.l1(0).probe(5 * 64), "write miss does not allocate");
    h.access(&rd(0, 5, P1)).unwrap();
    h.access(&wr(0, 5)).unwrap();
    let m = *h.metrics();
    assert_eq!((m.l1_hits, m.l1_misses, m.l1_writes), (1, 2, 2));
    // Both writes and the read miss reached the L2; the L2 holds line 5 dirty.
    assert_eq!(m.l2_accesses, 3);
    assert!(h.l2().meta_of(5 * 64).unwrap().dirty());
    assert_eq!(m.predictions, 0);
}

#[test]
fn zero_reuse_evictions_are_counted() {
    let mut h = GpuHierarchy::new(&tiny("none"), true).unwrap();
    // A hit once, B never: then C, D evict both.
    for l in [1, 1, 2, 3, 4] {
        h.access(&rd(0, l, P1)).unwrap();
    }
    let r = h.finish("t").unwrap();
    assert_eq!(r.metrics.l1_evictions, 2);
    assert_eq!(r.metrics.zero_reuse_evictions, 1);
    assert_eq!(r.derived.zero_reuse_fraction, 0.5);
    assert_eq!((r.metrics.distinct_lines, r.metrics.once_lines), (4, 3));
}

#[test]
fn counter_predictor_bypasses_confident_zero_hit_blocks() {
    let mut h = GpuHierarchy::new(&tiny("counter"), false).unwrap();
    // Line 1 by P1 dies unreused twice (two generations): its entry becomes confident.
    for l in [1, 2, 3, 1, 4, 5] {
        h.access(&rd(0, l, P1)).unwrap();
    }
    let before = h.metrics().bypasses;
    h.access(&rd(0, 1, P1)).unwrap();
    assert_eq!(h.metrics().bypasses, before + 1);
    assert!(!h.l1(0).probe(64));
}

#[test]
fn kernel_runs_are_deterministic_and_consistent() {
    for p in ["none", "pc", "counter"] {
        let cfg = GpuConfig::load_preset("table1", &[format!("predictor={p}")]).unwrap();
        let a = run_kernel(&cfg, "spmv", 1024, 3, false).unwrap();
        let b = run_kernel(&cfg, "spmv", 1024, 3, false).unwrap();
        assert_eq!(a.metrics, b.metrics, "{p}");
        let m = &a.metrics;
        assert!(m.l1_accesses > 10_000, "{p}: {m:?}");
        assert_eq!(m.l1_hits + m.l1_misses, m.l1_accesses);
        assert_eq!(m.l1_reads + m.l1_writes, m.l1_accesses);
        assert_eq!(m.l1_fills + m.bypasses, m.l1_read_misses);
        assert!(m.predicted_bypasses >= m.bypasses);
        if cfg.l1.predictor == PredictorKind::None {
            assert_eq!(m.bypasses, 0);
        }
    }
}

#[test]
fn pc_predictor_bypasses_streaming_loads_of_spmv() {
    let base = GpuConfig::load_preset("table1", &[]).unwrap();
    let mut pc = base.clone();
    pc.l1.predictor = PredictorKind::Pc;
    let b = run_kernel(&base, "spmv", 2048, 1, false).unwrap();
    let p = run_kernel(&pc, "spmv", 2048, 1, false).unwrap();
    assert!(p.metrics.bypasses > 0, "{:?}", p.metrics);
    assert!(p.derived.l1_dynamic_energy_nj < b.derived.l1_dynamic_energy_nj);
    assert!(b.derived.zero_reuse_fraction > 0.0);
}

#[test]
fn the_run_table_and_csv_have_a_row_per_run() {
    let base = GpuConfig::load_preset("table1", &[]).unwrap();
    let pc = GpuConfig::load_preset("table1", &["predictor=pc".into()]).unwrap();
    let runs = [
        run_kernel(&base, "nw", 128, 1, false).unwrap(),
        run_kernel(&pc, "nw", 128, 1, false).unwrap(),
    ];
    assert_eq!(runs[1].config, "16K+pc");
    let t = run_table(&runs);
    assert!(
        t.contains("16K+pc") && t.lines().filter(|l| l.contains("nw")).count() == 2,
        "{t}"
    );
    let csv = to_csv(&runs);
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(
        csv.lines().nth(2).unwrap().starts_with("nw,16K+pc,pc,"),
        "{csv}"
    );
    assert!(run_kernel(&base, "nosuch", 0, 1, false).is_err());
}
