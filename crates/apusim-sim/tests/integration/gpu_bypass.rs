//! A GPU L1 with the PC-based bypass predictor of adaptive-gpu-l1-bypassing.txt in front of a
//! heterogeneous system's LLC (`bypass_predictor` on a GPU cache entry).

use apusim_cache::policies::lru::Lru;
use apusim_cache::Policy;
use apusim_sim::{Hierarchy, SystemConfig};
use apusim_trace::{Access, Agent, Op, Stream};

fn config(predictor: &str) -> SystemConfig {
    let text = format!(
        r#"
        name = "tiny-gpu"
        cpus = 1
        cpu_clock_mhz = 1000
        gpu_clock_mhz = 1000
        [llc]
        geometry = "4K,4,64"
        policy = "lru"
        [[gpu.caches]]
        name = "sm-l1d"
        streams = ["shader-data"]
        geometry = "128,2,64"
        units = 2
        write_back = false
        write_allocate = false
        {predictor}
        "#
    );
    SystemConfig::from_toml(&text, "tiny-gpu", &[]).unwrap()
}

fn rd(unit: u16, line: u64, pc: u64) -> Access {
    Access::new(Agent::GPU, Stream::ShaderData, Op::Read, line * 64, 4)
        .with_unit(unit)
        .with_pc(pc)
}

fn hierarchy(cfg: &SystemConfig) -> Hierarchy<Lru> {
    let ctx = apusim_sim::run::policy_context(cfg).unwrap();
    Hierarchy::new(cfg, Lru::build(&ctx).unwrap()).unwrap()
}

fn l1(h: &Hierarchy<Lru>) -> apusim_cache::Counts {
    *h.stats()
        .level("sm-l1d")
        .unwrap()
        .counts
        .get(Agent::GPU, Stream::ShaderData)
}

#[test]
fn pc_predictor_bypasses_and_the_bypass_bit_corrects_across_units() {
    let mut h = hierarchy(&config(r#"bypass_predictor = "pc""#));
    // Unit 0: ten lines by one PC, never reused: eight unreused evictions bring the PC's
    // counter to the threshold (8).
    for l in 1..=10 {
        h.access(&rd(0, l, 0x40)).unwrap();
    }
    assert_eq!(l1(&h).bypasses, 0);
    h.access(&rd(0, 20, 0x40)).unwrap();
    assert_eq!(l1(&h).bypasses, 1, "counter at threshold: bypass");
    // Unit 0 reads line 20 again: predicted bypass, but its bypassBit installs it; then hits.
    h.access(&rd(0, 20, 0x40)).unwrap();
    h.access(&rd(0, 20, 0x40)).unwrap();
    let c = l1(&h);
    assert_eq!((c.bypasses, c.reads, c.read_misses), (1, 13, 12));
    // Unit 1's predictor is its own: no bypass there.
    h.access(&rd(1, 30, 0x40)).unwrap();
    assert_eq!(l1(&h).bypasses, 1);
    // A bypassed read goes on to the LLC like a miss.
    assert_eq!(h.stats().level("llc").unwrap().counts.total().reads, 13);
}

#[test]
fn unknown_predictors_are_rejected_and_none_never_bypasses() {
    let text = r#"
        name = "bad"
        cpus = 1
        cpu_clock_mhz = 1000
        gpu_clock_mhz = 1000
        [llc]
        geometry = "4K,4,64"
        policy = "lru"
        [[gpu.caches]]
        name = "sm-l1d"
        streams = ["shader-data"]
        geometry = "128,2,64"
        bypass_predictor = "oracle"
    "#;
    let e = SystemConfig::from_toml(text, "bad", &[]).unwrap_err();
    assert!(format!("{e:#}").contains("bypass_predictor"), "{e:#}");
    let mut h = hierarchy(&config(""));
    for l in 1..=30 {
        h.access(&rd(0, l, 0x40)).unwrap();
    }
    assert_eq!(l1(&h).bypasses, 0);
}
