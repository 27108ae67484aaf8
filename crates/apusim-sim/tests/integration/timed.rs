//! The timed machine: exact against the functional hierarchy under the blocking core, latency
//! probes per level, overlap of independent misses, and refusal of bad timing parameters.

use anyhow::Result;
use apusim_sim::run::{run_policy, Input, Inputs, RunOptions};
use apusim_sim::timed::{sim_policy, SimOptions, SimResult};
use apusim_sim::SystemConfig;
use apusim_trace::{Access, Agent, Op, Stream, VecSource};

struct VecInputs(Vec<Access>);

impl Inputs for VecInputs {
    fn open(&self) -> Result<Vec<Input>> {
        Ok(vec![Input {
            name: "test".into(),
            source: Box::new(VecSource::new(self.0.clone())),
            remap: None,
            champsim: None,
            program: None,
        }])
    }
    fn describe(&self) -> String {
        "test trace".into()
    }
}

/// A random single-core trace: instruction fetches walking code lines, reads, writes and
/// read-modify-writes over `span` bytes, some accesses crossing a line.
fn random_trace(n: u64, span: u64, seed: u64) -> Vec<Access> {
    let mut x = seed;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let a = Agent::cpu(0);
    let mut v = Vec::new();
    let mut time = 0;
    for i in 0..n {
        let r = next();
        time += 1 + r % 3;
        if i % 5 == 0 {
            let pc = 0x40_0000 + (next() % 512) * 64;
            v.push(Access::new(a, Stream::CpuInstr, Op::Read, pc, 4).with_time(time));
        }
        let addr = 0x1000_0000 + next() % span;
        let size = if r % 17 == 0 { 16 } else { 8 };
        let mut acc = match r % 10 {
            0..=5 => Access::new(a, Stream::CpuData, Op::Read, addr, size),
            6..=8 => Access::new(a, Stream::CpuData, Op::Write, addr, size),
            _ => {
                let mut m = Access::new(a, Stream::CpuData, Op::Read, addr, size);
                m.flags |= Access::MODIFY;
                m
            }
        };
        acc = acc.with_time(time).with_pc(0x40_0000 + r % 4096);
        v.push(acc);
    }
    v
}

fn small_system(extra: &[&str]) -> SystemConfig {
    let mut set: Vec<String> = [
        "cpus=1",
        "l1i=4096,4,64",
        "l1d=4096,4,64",
        "l2=16384,8,64",
        "llc=65536,8,64",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    set.extend(extra.iter().map(|s| s.to_string()));
    SystemConfig::load_preset("4c1g", &set).unwrap()
}

#[test]
fn blocking_core_equals_the_functional_hierarchy_in_every_counter() {
    let trace = VecInputs(random_trace(60_000, 512 * 1024, 7));
    for policy in ["lru", "srrip", "drp-baseline", "ship-hybrid"] {
        // Inclusive, inclusive with the L2 hits hinted to the LLC (each hint reaches its
        // bank before the core's next request), and not inclusive.
        for (inclusive, hints) in [("true", "false"), ("true", "true"), ("false", "false")] {
            let cfg = small_system(&[
                "timing.core={model=\"in-order\"}",
                &format!("llc.cpu_inclusive={inclusive}"),
                &format!("llc.l2_hit_hints={hints}"),
            ]);
            let f = run_policy(&cfg, policy, &trace, &RunOptions::default()).unwrap();
            let t = sim_policy(&cfg, policy, &trace, &SimOptions::default()).unwrap();
            assert_eq!(
                t.functional.levels, f.stats.levels,
                "{policy}, inclusive {inclusive}, hints {hints}: level counters differ"
            );
            assert_eq!(
                t.functional.memory, f.stats.memory,
                "{policy}: memory traffic"
            );
            assert_eq!(
                t.functional.policy_stats, f.stats.policy_stats,
                "{policy}, hints {hints}"
            );
            if hints == "true" {
                let hinted = |s: &[(String, f64)]| {
                    s.iter()
                        .find(|(k, _)| k == "l2_hit_hints_resident")
                        .map(|(_, v)| *v)
                };
                assert!(
                    hinted(&t.functional.policy_stats).is_some_and(|n| n > 1000.0),
                    "{policy}: the timed run must hint"
                );
            }
            let llc = f.stats.llc().counts.total();
            assert!(
                llc.misses() > 1000 && llc.evictions > 1000,
                "the test must evict"
            );
        }
    }
}

#[test]
fn out_of_order_core_performs_every_access_once() {
    let trace = VecInputs(random_trace(40_000, 512 * 1024, 9));
    let cfg = small_system(&[]);
    let f = run_policy(&cfg, "lru", &trace, &RunOptions::default()).unwrap();
    let t = sim_policy(&cfg, "lru", &trace, &SimOptions::default()).unwrap();
    for (ft, tt) in f.stats.levels.iter().zip(&t.functional.levels).take(2) {
        let (a, b) = (ft.counts.total(), tt.counts.total());
        assert_eq!(
            (a.reads, a.writes),
            (b.reads, b.writes),
            "{}: the same accesses, possibly reordered",
            ft.name
        );
    }
    let first = trace.0.first().unwrap().time;
    assert_eq!(t.cores[0].instructions, f.stats.instructions[0] - first + 1);
}

/// One load per instruction over `lines` lines `stride` bytes apart, repeated `passes` times.
fn chase(lines: u64, stride: u64, passes: u64) -> Vec<Access> {
    let a = Agent::cpu(0);
    (0..lines * passes)
        .map(|i| {
            let addr = 0x2000_0000 + (i % lines) * stride;
            Access::new(a, Stream::CpuData, Op::Read, addr, 8).with_time(i)
        })
        .collect()
}

fn cycles_per_load(lines: u64, stride: u64, deps: &str, extra: &[&str]) -> (f64, SimResult) {
    let passes = 3;
    let trace = VecInputs(chase(lines, stride, passes));
    let mut set = vec!["cpus=1".to_string(), format!("timing.deps=\"{deps}\"")];
    set.extend(extra.iter().map(|s| s.to_string()));
    let cfg = SystemConfig::load_preset("4c1g", &set).unwrap();
    let opts = SimOptions {
        warmup: lines * 2,
        instructions: Some(lines - 16),
        ..SimOptions::default()
    };
    let r = sim_policy(&cfg, "lru", &trace, &opts).unwrap();
    let c = &r.cores[0];
    (c.cycles as f64 / c.instructions as f64, r)
}

#[test]
fn a_dependent_chase_costs_each_levels_round_trip() {
    // 4c1g: L1D 2, L2 3, LLC 10 cycles; one core, so the ring's stops are cpu0, gpu, the
    // LLC bank (2 hops from cpu0), then the two memory controllers. Each dependent load
    // also spends one cycle generating its address (its execution slot) before it issues.
    let (l1, _) = cycles_per_load(64, 64, "chain", &[]);
    assert!((l1 - 3.0).abs() < 0.01, "L1 hit chase: {l1}");
    let (l2, _) = cycles_per_load(2048, 64, "chain", &[]);
    assert!((l2 - 6.0).abs() < 0.01, "L2 hit chase: {l2}");
    let (llc, r) = cycles_per_load(32 * 1024, 64, "chain", &[]);
    assert!((llc - 20.0).abs() < 0.01, "LLC hit chase: {llc}");
    assert_eq!(r.cores[0].levels[3].misses, 0, "all LLC hits");
}

/// The 4c1g machine with a 1 MB LLC, so that [`MISSING`] lines miss it.
const SMALL_LLC: &str = "llc=1048576,16,64";
/// Consecutive lines that miss the L2 and a [`SMALL_LLC`] on every pass (4 MB).
const MISSING: u64 = 1 << 16;

#[test]
fn dram_row_hits_are_faster_than_row_conflicts() {
    // 4 MB of consecutive lines: each chase load misses the LLC and opens few rows.
    let (hit, r) = cycles_per_load(MISSING, 64, "chain", &[SMALL_LLC]);
    assert!(
        r.system.dram_row_hit_rate > 0.8,
        "row hits: {}",
        r.system.dram_row_hit_rate
    );
    // Lower bound of a row hit: 19 cycles to miss the LLC, the ring to a controller and back
    // (at least 2 hops), tCL + tBURST = 18 DRAM cycles of 0.938 ns = 67.5 CPU cycles.
    assert!(hit > 19.0 + 2.0 + 67.5, "row-hit chase {hit}");
    assert!(hit < 19.0 + 6.0 + 67.5 + 30.0, "row-hit chase {hit}");
    // One line per 1 MB: every access opens a new row in its bank (tRP + tRCD more).
    let (conflict, r) = cycles_per_load(16 * 1024, 1 << 20, "chain", &[]);
    assert!(
        r.system.dram_row_hit_rate < 0.2,
        "row conflicts: {}",
        r.system.dram_row_hit_rate
    );
    // Requests wait for the next DRAM clock edge (3.75 CPU cycles), so the two runs' mean
    // alignments may differ by up to one DRAM cycle.
    assert!(
        conflict > hit + 28.0 * 3.75 - 3.75,
        "conflict {conflict} vs hit {hit}"
    );
}

#[test]
fn independent_misses_overlap() {
    let (chained, _) = cycles_per_load(MISSING, 64, "chain", &[SMALL_LLC]);
    let (free, r) = cycles_per_load(MISSING, 64, "none", &[SMALL_LLC]);
    assert!(
        free * 4.0 < chained,
        "independent {free} vs chained {chained}"
    );
    // With one L1D MSHR the loads are serialized again.
    let (one, _) = cycles_per_load(MISSING, 64, "none", &[SMALL_LLC, "cpu.l1d.mshrs=1"]);
    assert!(one > free * 4.0, "one MSHR {one} vs {free}");
    assert!(
        r.system.dram_bandwidth_gbps > 5.0,
        "{}",
        r.system.dram_bandwidth_gbps
    );
}

/// A measured window holds at least its target: the target counts from where the warm-up
/// ended (a few instructions past `warmup` when the cycle that crossed it retired several),
/// as ChampSim's phases count, and ends within the cycle that reaches it.
#[test]
fn a_measured_window_holds_its_target_counted_from_the_warm_up_end() {
    let trace = VecInputs(random_trace(40_000, 64 * 1024, 5));
    let cfg = small_system(&[]);
    let retire_width = 4; // preset 4c1g
    let mut past_target = 0;
    for warmup in [997, 5_001, 12_347, 30_011] {
        for target in [1_000, 9_999, 20_000] {
            let opts = SimOptions {
                warmup,
                instructions: Some(target),
                ..SimOptions::default()
            };
            let r = sim_policy(&cfg, "lru", &trace, &opts).unwrap();
            let n = r.cores[0].instructions;
            assert!(
                (target..target + retire_width).contains(&n),
                "warm-up {warmup}, target {target}: measured {n}"
            );
            past_target += u64::from(n > target);
        }
    }
    assert!(past_target > 0, "some cycle retires past its target");
}

#[test]
fn runs_are_deterministic() {
    let trace = VecInputs(random_trace(20_000, 1 << 20, 3));
    let cfg = small_system(&[]);
    let a = sim_policy(&cfg, "drrip", &trace, &SimOptions::default()).unwrap();
    let b = sim_policy(&cfg, "drrip", &trace, &SimOptions::default()).unwrap();
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

#[test]
fn bad_timing_parameters_are_refused_naming_the_key() {
    for (set, expect) in [
        ("timing.core.rob=0", "`rob` = 0"),
        ("timing.core.robb=64", "did you mean `rob`"),
        ("timing.core.model=\"oooo\"", "did you mean `ooo`"),
        ("timing.network.hop_cycles=0", "hop_cycles"),
        ("timing.deps=\"pointer\"", "timing.deps"),
        ("cpu.l1d.mshrs=0", "cpu.l1d.mshrs"),
        ("llc.latency=4000000000", "llc.latency"),
        ("timing.dram=\"ddr9\"", "timing.dram"),
        ("timing.watchdog_cycles=0", "watchdog_cycles"),
    ] {
        let e = SystemConfig::load_preset("4c1g", &[set.to_string()])
            .err()
            .unwrap_or_else(|| panic!("{set} was accepted"));
        let msg = format!("{e:#}");
        assert!(msg.contains(expect), "{set}: {msg}");
    }
}
