//! Hierarchy behaviour replayed on hand-made access sequences.

use apusim_cache::policies::lru::Lru;
use apusim_cache::{CacheError, MissAction, Policy, PolicyContext, SetView};
use apusim_sim::run::{simulate, Input, Inputs};
use apusim_sim::{Hierarchy, RunOptions, SystemConfig};
use apusim_trace::{Access, Agent, Op, Stream, TraceHeader, VecSource};

/// Two cores, small enough to reason about by hand: L1D 128 B 2-way (1 set), L2 256 B 4-way
/// (1 set), LLC 512 B 2-way (4 sets).
fn tiny(extra: &str) -> SystemConfig {
    tiny_with(extra, &[])
}

fn tiny_with(extra: &str, overrides: &[String]) -> SystemConfig {
    let text = format!(
        r#"
        name = "tiny"
        cpus = 2
        cpu_clock_mhz = 1000
        gpu_clock_mhz = 1000
        [cpu]
        l1d = {{ geometry = "128,2,64" }}
        l2 = {{ geometry = "256,4,64" }}
        [llc]
        geometry = "512,2,64"
        policy = "lru"
        cpu_inclusive = true
        {extra}
        "#
    );
    SystemConfig::from_toml(&text, "tiny", overrides).unwrap()
}

fn lru_hierarchy(cfg: &SystemConfig) -> Hierarchy<Lru> {
    let ctx = apusim_sim::run::policy_context(cfg).unwrap();
    Hierarchy::new(cfg, Lru::build(&ctx).unwrap()).unwrap()
}

fn rd(core: u8, addr: u64) -> Access {
    Access::new(Agent::cpu(core), Stream::CpuData, Op::Read, addr, 8)
}
fn wr(core: u8, addr: u64) -> Access {
    Access::new(Agent::cpu(core), Stream::CpuData, Op::Write, addr, 8)
}
fn gpu(addr: u64, op: Op, stream: Stream) -> Access {
    Access::new(Agent::GPU, stream, op, addr, 64)
}

#[test]
fn llc_eviction_back_invalidates_cpu_copies() {
    // A 4-way L1D, so that L1D still holds line 0 when the LLC evicts it.
    let cfg = tiny_with("", &["l1d=256,4,64".into()]);
    let mut h = lru_hierarchy(&cfg);
    // LLC set 0 holds lines 0 and 4 (addresses 0, 256); line 8 (512) evicts line 0.
    h.access(&rd(0, 0)).unwrap();
    h.access(&rd(0, 256)).unwrap();
    h.access(&rd(0, 512)).unwrap();
    let s = h.stats();
    let l1 = s
        .level("l1d")
        .unwrap()
        .counts
        .get(Agent::cpu(0), Stream::CpuData);
    let l2 = s
        .level("l2")
        .unwrap()
        .counts
        .get(Agent::cpu(0), Stream::CpuData);
    assert_eq!(l1.back_invalidations, 1, "L1D copy of line 0 must go");
    assert_eq!(l2.back_invalidations, 1, "L2 copy of line 0 must go");
    // Reading line 0 again misses everywhere, although L1D and L2 had room for it.
    h.access(&rd(0, 0)).unwrap();
    let s = h.stats();
    let l1 = s
        .level("l1d")
        .unwrap()
        .counts
        .get(Agent::cpu(0), Stream::CpuData);
    assert_eq!(l1.read_misses, 4);
    assert_eq!(
        s.llc()
            .counts
            .get(Agent::cpu(0), Stream::CpuData)
            .read_misses,
        4
    );
}

#[test]
fn gpu_lines_are_not_back_invalidated_and_cpu_sharing_is_tracked() {
    let cfg = tiny("");
    let mut h = lru_hierarchy(&cfg);
    // The GPU fills line 0; a CPU read then hits it in the LLC and copies it privately.
    h.access(&gpu(0, Op::Read, Stream::ShaderData)).unwrap();
    h.access(&rd(1, 0)).unwrap();
    assert_eq!(
        h.stats()
            .llc()
            .counts
            .get(Agent::cpu(1), Stream::CpuData)
            .read_misses,
        0
    );
    // Evicting it must still back-invalidate core 1 (the CPU touched it).
    h.access(&gpu(256, Op::Read, Stream::ShaderData)).unwrap();
    h.access(&gpu(512, Op::Read, Stream::ShaderData)).unwrap();
    let s = h.stats();
    assert_eq!(
        s.level("l1d")
            .unwrap()
            .counts
            .get(Agent::cpu(1), Stream::CpuData)
            .back_invalidations,
        1
    );
    // Lines only the GPU touched leave without back-invalidations.
    let total: u64 = s
        .levels
        .iter()
        .map(|l| l.counts.total().back_invalidations)
        .sum();
    assert_eq!(total, 2, "one L1D and one L2 copy");
}

#[test]
fn dirty_lines_are_written_back_level_by_level() {
    let cfg = tiny("");
    let mut h = lru_hierarchy(&cfg);
    // Write line 0 (dirty in L1D), then fill L1D's only set with lines 1 and 2.
    h.access(&wr(0, 0)).unwrap();
    h.access(&rd(0, 64)).unwrap();
    h.access(&rd(0, 128)).unwrap();
    let s = h.stats();
    let l1 = s
        .level("l1d")
        .unwrap()
        .counts
        .get(Agent::cpu(0), Stream::CpuData);
    let l2 = s
        .level("l2")
        .unwrap()
        .counts
        .get(Agent::cpu(0), Stream::CpuData);
    assert_eq!((l1.writes, l1.write_misses, l1.dirty_evictions), (1, 1, 1));
    assert_eq!(
        (l2.writebacks, l2.writeback_misses),
        (1, 0),
        "L2 holds line 0 from the RFO"
    );
    // The write miss fetched the line (read for ownership), so L2 saw 3 reads.
    assert_eq!(l2.reads, 3);
    assert_eq!(s.memory.total().writes + s.memory.total().writebacks, 0);
}

#[test]
fn accesses_straddling_two_lines_count_once() {
    let cfg = tiny("");
    let mut h = lru_hierarchy(&cfg);
    let mut a = rd(0, 60);
    a.size = 8; // bytes 60..68: lines 0 and 1
    h.access(&a).unwrap();
    let s = h.stats();
    let l1 = s
        .level("l1d")
        .unwrap()
        .counts
        .get(Agent::cpu(0), Stream::CpuData);
    assert_eq!((l1.reads, l1.read_misses), (1, 1));
    // Both lines were fetched: the LLC saw one access per line.
    assert_eq!(s.llc().counts.get(Agent::cpu(0), Stream::CpuData).reads, 2);
    h.access(&a).unwrap();
    let s = h.stats();
    let l1 = s
        .level("l1d")
        .unwrap()
        .counts
        .get(Agent::cpu(0), Stream::CpuData);
    assert_eq!((l1.reads, l1.read_misses), (2, 1));
}

/// A policy that bypasses every miss, to provoke the inclusion check.
struct BypassAll(Lru);
impl Policy for BypassAll {
    fn build(ctx: &PolicyContext) -> Result<Self, CacheError> {
        Ok(BypassAll(Lru::build(ctx)?))
    }
    fn on_hit(&mut self, s: usize, w: usize, r: &Access) {
        self.0.on_hit(s, w, r)
    }
    fn on_miss(&mut self, _: usize, _: &Access) -> MissAction {
        MissAction::Bypass
    }
    fn victim(&mut self, s: usize, r: &Access, v: &SetView<'_>) -> usize {
        self.0.victim(s, r, v)
    }
    fn on_fill(&mut self, s: usize, w: usize, r: &Access) {
        self.0.on_fill(s, w, r)
    }
}

#[test]
fn bypassing_a_cpu_line_in_an_inclusive_llc_is_refused() {
    let cfg = tiny("");
    let ctx = apusim_sim::run::policy_context(&cfg).unwrap();
    let mut h = Hierarchy::new(&cfg, BypassAll::build(&ctx).unwrap()).unwrap();
    // GPU reads may bypass: they go to memory.
    h.access(&gpu(0, Op::Read, Stream::StaticTexture)).unwrap();
    let s = h.stats();
    assert_eq!(
        s.llc()
            .counts
            .get(Agent::GPU, Stream::StaticTexture)
            .bypasses,
        1
    );
    assert_eq!(s.memory.get(Agent::GPU, Stream::StaticTexture).reads, 1);
    let err = h.access(&rd(0, 4096)).unwrap_err();
    assert!(format!("{err:#}").contains("inclusion"), "{err:#}");
}

#[test]
fn gpu_render_caches_route_by_stream_and_unit() {
    let cfg = tiny(
        r#"
        [[gpu.caches]]
        name = "color-l1"
        streams = ["color"]
        geometry = "512,2,256"
        units = 2
        fetch_on_write = false
        next = "color-l2"
        [[gpu.caches]]
        name = "color-l2"
        geometry = "1024,4,64"
        fetch_on_write = false
        "#,
    );
    let mut h = lru_hierarchy(&cfg);
    // Unit 0 and unit 1 each write line 0 of the color surface: private L1s, both miss, no fetch.
    h.access(&gpu(0, Op::Write, Stream::Color).with_unit(0))
        .unwrap();
    h.access(&gpu(0, Op::Write, Stream::Color).with_unit(1))
        .unwrap();
    h.access(&gpu(0, Op::Write, Stream::Color).with_unit(0))
        .unwrap();
    let s = h.stats();
    let l1 = s
        .level("color-l1")
        .unwrap()
        .counts
        .get(Agent::GPU, Stream::Color);
    assert_eq!((l1.writes, l1.write_misses), (3, 2));
    assert_eq!(
        s.level("color-l2").unwrap().counts.total().accesses(),
        0,
        "no fetch on write"
    );
    // Evict unit 0's dirty 256-byte line: it reaches color-l2 as one writeback access that
    // covers four of color-l2's 64-byte lines.
    for k in 1..=2 {
        h.access(&gpu(k * 512, Op::Write, Stream::Color).with_unit(0))
            .unwrap();
    }
    let s = h.stats();
    let l2 = s
        .level("color-l2")
        .unwrap()
        .counts
        .get(Agent::GPU, Stream::Color);
    assert_eq!(l2.writebacks, 1);
    assert_eq!(
        s.level("color-l2").unwrap().counts.total().writeback_misses,
        1
    );
    // Texture reads have no GPU cache in this system: straight to the LLC.
    h.access(&gpu(1 << 20, Op::Read, Stream::StaticTexture))
        .unwrap();
    assert_eq!(
        h.stats()
            .llc()
            .counts
            .get(Agent::GPU, Stream::StaticTexture)
            .reads,
        1
    );
}

#[derive(Clone)]
struct Fixed(Vec<(String, Vec<Access>, u32)>);
impl Inputs for Fixed {
    fn reopen(&self, index: usize) -> Option<apusim_sim::Reopen> {
        let one = Fixed(vec![self.0.get(index)?.clone()]);
        Some(Box::new(move || Ok(one.open()?.remove(0))))
    }
    fn open(&self) -> anyhow::Result<Vec<Input>> {
        Ok(self
            .0
            .iter()
            .map(|(n, v, clock)| {
                let mut h = TraceHeader::describing(v, n);
                for a in &mut h.agents {
                    a.clock_mhz = *clock;
                }
                Input {
                    name: n.clone(),
                    source: Box::new(VecSource::with_header(h, v.clone())),
                    remap: None,
                    champsim: None,
                    program: None,
                }
            })
            .collect())
    }
    fn describe(&self) -> String {
        "fixed".into()
    }
}

#[test]
fn agents_merge_in_global_time_by_their_clocks() {
    // CPU at 2000 MHz: time 10 is 5 ns; GPU at 1000 MHz: time 4 is 4 ns, time 6 is 6 ns.
    // Order: gpu@4ns (line 0), cpu@5ns (line 0: hit, the GPU filled it), gpu@6ns.
    let cfg = SystemConfig::from_toml(
        r#"
        name = "merge"
        cpus = 1
        cpu_clock_mhz = 2000
        gpu_clock_mhz = 1000
        [llc]
        geometry = "512,2,64"
        policy = "lru"
        "#,
        "merge",
        &[],
    )
    .unwrap();
    let cpu = vec![rd(0, 0).with_time(10)];
    let g = vec![
        gpu(0, Op::Read, Stream::Vertex).with_time(4),
        gpu(64, Op::Read, Stream::Vertex).with_time(6),
    ];
    let inputs = Fixed(vec![("cpu".into(), cpu, 2000), ("gpu".into(), g, 1000)]);
    let mut h = lru_hierarchy(&cfg);
    let s = simulate(&mut h, &cfg, inputs.open().unwrap(), &RunOptions::default()).unwrap();
    assert_eq!(s.trace_accesses, 3);
    assert_eq!(
        s.llc()
            .counts
            .get(Agent::cpu(0), Stream::CpuData)
            .read_misses,
        0
    );
    // With the CPU twice as slow, its access comes after the GPU's second one and still hits.
    let cpu = vec![rd(0, 0).with_time(10)];
    let g = vec![gpu(0, Op::Read, Stream::Vertex).with_time(4)];
    let late = Fixed(vec![("cpu".into(), cpu, 500), ("gpu".into(), g, 1000)]);
    let mut h = lru_hierarchy(&cfg);
    let s = simulate(&mut h, &cfg, late.open().unwrap(), &RunOptions::default()).unwrap();
    assert_eq!(
        s.llc()
            .counts
            .get(Agent::cpu(0), Stream::CpuData)
            .read_misses,
        0
    );
    // And with the CPU first (time 2 at 2000 MHz = 1 ns) it misses.
    let cpu = vec![rd(0, 0).with_time(2)];
    let g = vec![gpu(0, Op::Read, Stream::Vertex).with_time(4)];
    let early = Fixed(vec![("cpu".into(), cpu, 2000), ("gpu".into(), g, 1000)]);
    let mut h = lru_hierarchy(&cfg);
    let s = simulate(&mut h, &cfg, early.open().unwrap(), &RunOptions::default()).unwrap();
    assert_eq!(
        s.llc()
            .counts
            .get(Agent::cpu(0), Stream::CpuData)
            .read_misses,
        1
    );
    assert_eq!(
        s.llc().counts.get(Agent::GPU, Stream::Vertex).read_misses,
        0
    );
}

#[test]
fn an_agent_outside_the_system_is_an_error() {
    let cfg = tiny("");
    let inputs = Fixed(vec![("t".into(), vec![rd(5, 0)], 0)]);
    let mut h = lru_hierarchy(&cfg);
    let err = simulate(&mut h, &cfg, inputs.open().unwrap(), &RunOptions::default()).unwrap_err();
    assert!(format!("{err:#}").contains("cpus="), "{err:#}");
}

#[test]
fn lines_shared_by_two_cores_are_back_invalidated_in_both() {
    let cfg = tiny_with("", &["l1d=256,4,64".into()]);
    let mut h = lru_hierarchy(&cfg);
    h.access(&rd(0, 0)).unwrap(); // core 0 fills line 0
    h.access(&rd(1, 0)).unwrap(); // core 1 hits it in the LLC: now shared
    h.access(&rd(0, 64)).unwrap(); // line 1 (LLC set 1): unshared, core 0 only
    h.access(&rd(0, 256)).unwrap();
    h.access(&rd(0, 512)).unwrap(); // evicts line 0 from LLC set 0
    let s = h.stats();
    let l1 = &s.level("l1d").unwrap().counts;
    assert_eq!(l1.get(Agent::cpu(0), Stream::CpuData).back_invalidations, 1);
    assert_eq!(l1.get(Agent::cpu(1), Stream::CpuData).back_invalidations, 1);
    // Line 1 stays private to core 0 and resident everywhere.
    h.access(&rd(0, 64)).unwrap();
    let s = h.stats();
    assert_eq!(
        s.level("l1d")
            .unwrap()
            .counts
            .get(Agent::cpu(0), Stream::CpuData)
            .read_misses,
        4
    );
}

fn with_llc_switches(cfg: &SystemConfig, switches: apusim_sim::LlcSwitches) -> Hierarchy<Lru> {
    let mut h = lru_hierarchy(cfg);
    h.set_llc_switches(&switches, cfg).unwrap();
    h
}

#[test]
fn ideal_streams_charge_non_compulsory_misses_as_hits() {
    let cfg = tiny("");
    let switches = apusim_sim::LlcSwitches {
        ideal: apusim_sim::LlcSwitches::parse_ideal("color").unwrap(),
        ..Default::default()
    };
    let mut h = with_llc_switches(&cfg, switches);
    let color = |a| gpu(a, Op::Read, Stream::Color);
    h.access(&color(0)).unwrap(); // compulsory miss
    h.access(&color(256)).unwrap(); // compulsory miss
    h.access(&color(512)).unwrap(); // compulsory miss, evicts line 0
    h.access(&color(0)).unwrap(); // a real miss, charged as a hit
    assert!(
        h.llc().probe(0),
        "the policy still ran: line 0 was filled again"
    );
    h.access(&gpu(256 * 4, Op::Read, Stream::Vertex)).unwrap(); // other streams: normal
    h.access(&gpu(256, Op::Read, Stream::Vertex)).unwrap(); // evicted by now? either way normal
    let s = h.stats();
    let c = s.llc().counts.get(Agent::GPU, Stream::Color);
    assert_eq!((c.reads, c.read_misses, c.idealized), (4, 3, 1));
    assert_eq!(
        s.memory.get(Agent::GPU, Stream::Color).reads,
        3,
        "no memory read for the ideal hit"
    );
}

#[test]
fn forced_gpu_read_bypass_is_seeded_and_spares_the_cpu() {
    let cfg = tiny("");
    let all = apusim_sim::LlcSwitches {
        gpu_read_bypass: 1.0,
        ..Default::default()
    };
    let mut h = with_llc_switches(&cfg, all);
    for a in 0..8u64 {
        h.access(&gpu(a * 64, Op::Read, Stream::StaticTexture))
            .unwrap();
        h.access(&rd(0, 4096 + a * 64)).unwrap();
    }
    let s = h.stats();
    let g = s.llc().counts.get(Agent::GPU, Stream::StaticTexture);
    assert_eq!((g.read_misses, g.bypasses), (8, 8));
    assert_eq!(h.llc().occupancy(), 8, "only CPU lines were allocated");
    let half = |seed: u64| {
        let mut cfg = tiny("");
        cfg.seed = seed;
        let mut h = with_llc_switches(
            &cfg,
            apusim_sim::LlcSwitches {
                gpu_read_bypass: 0.5,
                ..Default::default()
            },
        );
        for a in 0..2000u64 {
            h.access(&gpu(a * 64, Op::Read, Stream::StaticTexture))
                .unwrap();
        }
        h.stats()
            .llc()
            .counts
            .get(Agent::GPU, Stream::StaticTexture)
            .bypasses
    };
    assert_eq!(half(1), half(1));
    assert!((900..1100).contains(&half(1)), "{}", half(1));
}

#[test]
fn the_llc_stream_can_be_dumped_and_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("llc.apt");
    let cfg = tiny("");
    let mut h = with_llc_switches(
        &cfg,
        apusim_sim::LlcSwitches {
            dump_llc_trace: Some(path.clone()),
            ..Default::default()
        },
    );
    for a in 0..50u64 {
        h.access(&rd((a % 2) as u8, a * 64 % 2048)).unwrap();
        h.access(&wr(0, a * 128 % 4096)).unwrap();
        h.access(&gpu(a * 64, Op::Write, Stream::Color)).unwrap();
    }
    h.finish().unwrap();
    let llc_accesses = h.stats().llc().counts.total().accesses();
    let mut r = apusim_trace::apt::AptReader::open(&path).unwrap();
    let dumped = apusim_trace::collect(&mut r).unwrap();
    assert_eq!(dumped.len() as u64, llc_accesses);
    assert!(dumped.iter().any(|a| a.op == Op::Writeback));
    assert!(dumped.iter().all(|a| a.stream != Stream::CpuInstr));
}

#[test]
fn llc_switches_reject_bad_values() {
    assert!(apusim_sim::LlcSwitches::parse_ideal("").is_err());
    assert!(apusim_sim::LlcSwitches::parse_ideal("colour").is_err());
    let both = apusim_sim::LlcSwitches::parse_ideal("texture,gpu").unwrap();
    assert!(both.contains(&Stream::DynamicTexture) && !both.contains(&Stream::CpuData));
    let bad = apusim_sim::LlcSwitches {
        gpu_read_bypass: 1.5,
        ..Default::default()
    };
    assert!(bad.validate().is_err());
}

#[test]
fn addresses_beyond_the_tag_range_are_errors_not_panics() {
    let cfg = tiny("");
    let mut h = lru_hierarchy(&cfg);
    for addr in [u64::MAX, u64::MAX - 3, 1 << 60] {
        let err = h.access(&rd(0, addr)).unwrap_err();
        assert!(format!("{err:#}").contains("beyond"), "{err:#}");
        let err = h.access(&gpu(addr, Op::Read, Stream::Color)).unwrap_err();
        assert!(format!("{err:#}").contains("beyond"), "{err:#}");
    }
}

/// Inputs that cannot be opened a second time.
struct Once(Fixed);
impl Inputs for Once {
    fn open(&self) -> anyhow::Result<Vec<Input>> {
        self.0.open()
    }
    fn describe(&self) -> String {
        "once".into()
    }
}

/// drp §3's method (`RunOptions::continue_to_run`): an input that ends before the others
/// starts again, its time following on, until every input has ended once.
#[test]
fn early_finishers_continue_to_run_until_every_input_has_ended_once() {
    let cfg = tiny("");
    // Core 0 reads lines 0, 1, 0 at instructions 0, 1, 2; the GPU reads one line (of an LLC
    // set with room for it) at cycles 0..=9 of the same 1000 MHz clock.
    let cpu: Vec<Access> = (0..3).map(|i| rd(0, (i % 2) * 64).with_time(i)).collect();
    let g: Vec<Access> = (0..10)
        .map(|i| gpu(1 << 20, Op::Read, Stream::Vertex).with_time(i))
        .collect();
    let inputs = Fixed(vec![("cpu".into(), cpu, 0), ("gpu".into(), g, 1000)]);
    let once = apusim_sim::run_policy(&cfg, "lru", &inputs, &RunOptions::default()).unwrap();
    assert_eq!(once.stats.trace_accesses, 13);
    let opts = RunOptions {
        continue_to_run: true,
        ..RunOptions::default()
    };
    let r = apusim_sim::run_policy(&cfg, "lru", &inputs, &opts).unwrap();
    // The core's passes start at instructions 3, 6 and 9: ten reads up to the GPU's last
    // cycle (the tie at 9 goes to the first input), then the GPU ends its first pass and
    // the run ends.
    assert_eq!(r.stats.trace_accesses, 20);
    assert_eq!(r.stats.instructions[0], 9);
    let l1d = r.stats.level("l1d").unwrap().counts.total();
    assert_eq!((l1d.reads, l1d.read_misses), (10, 2), "later passes hit");
    // The other way round: a GPU that ends first runs again until the core has ended (its
    // passes at cycles 0-1, 2-3, ..., 8-9; the run ends with the core's access at 9, which
    // the tie puts first).
    let cpu: Vec<Access> = (0..10).map(|i| rd(0, i * 64).with_time(i)).collect();
    let g: Vec<Access> = (0..2)
        .map(|i| gpu((1 << 20) | (i * 64), Op::Read, Stream::Vertex).with_time(i))
        .collect();
    let inputs = Fixed(vec![("cpu".into(), cpu, 0), ("gpu".into(), g, 1000)]);
    let r = apusim_sim::run_policy(&cfg, "lru", &inputs, &opts).unwrap();
    let vertex = r.stats.llc().counts.get(Agent::GPU, Stream::Vertex);
    assert_eq!(vertex.reads, 9);
    assert_eq!(r.stats.trace_accesses, 19);
    // Inputs that cannot be opened again are named.
    let err = apusim_sim::run_policy(&cfg, "lru", &Once(inputs.clone()), &opts).unwrap_err();
    assert!(
        format!("{err:#}").contains("gpu ended before the other inputs"),
        "{err:#}"
    );
    // A pass that would have to run more than MAX_RESTARTS times is refused.
    let long: Vec<Access> = (0..20_100)
        .map(|i| rd(0, (i % 4) * 64).with_time(i))
        .collect();
    let g = vec![gpu(1 << 20, Op::Read, Stream::Vertex).with_time(0)];
    let inputs = Fixed(vec![("cpu".into(), long, 0), ("gpu".into(), g, 1000)]);
    let err = apusim_sim::run_policy(&cfg, "lru", &inputs, &opts).unwrap_err();
    assert!(
        format!("{err:#}").contains("gpu ended 10000 times"),
        "{err:#}"
    );
}

/// `llc.l2_hit_hints`: a core's L2 hit refreshes its line in the LLC's policy, so the line a
/// core keeps using in its L2 is not the LLC's LRU victim (and is not back-invalidated).
#[test]
fn l2_hit_hints_keep_the_cores_reused_lines_in_an_inclusive_llc() {
    let run = |hints: bool| {
        let cfg = tiny_with("", &[format!("llc.l2_hit_hints={hints}")]);
        let mut h = lru_hierarchy(&cfg);
        // Lines 0 and 4 share LLC set 0; lines 1 and 2 push them out of the 2-line L1D, and
        // line 0 is then read again from the L2.
        for line in [0, 4, 1, 2, 0] {
            h.access(&rd(0, line * 64)).unwrap();
        }
        // The GPU's line 8 takes set 0's LRU way: line 0 without hints, line 4 with them.
        h.access(&gpu(8 * 64, Op::Read, Stream::Vertex)).unwrap();
        h.access(&rd(0, 0)).unwrap();
        let s = h.stats();
        let l1d = s.level("l1d").unwrap().counts.total().read_misses;
        let hint = |n: &str| s.policy_stats.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        (l1d, hint("l2_hit_hints"), hint("l2_hit_hints_resident"))
    };
    assert_eq!(
        run(false),
        (6, None, None),
        "line 0 back-invalidated and read again"
    );
    assert_eq!(
        run(true),
        (5, Some(1.0), Some(1.0)),
        "line 0 kept: the L1D hits"
    );
}

/// `llc.qbs_queries` (query based selection): the LLC does not evict a CPU line a core still
/// holds while another line of the set is held by nobody; without it the held line is the LRU
/// victim and is back-invalidated.
#[test]
fn query_based_selection_spares_a_line_a_core_holds() {
    let run = |queries: u32| {
        let cfg = tiny_with("", &[format!("llc.qbs_queries={queries}")]);
        let mut h = lru_hierarchy(&cfg);
        // LLC set 0 (lines 0, 4, 8): core 0 reads line 0 and keeps it in its L1D; core 1 reads
        // line 4, then lines of other sets push it out of its 2-line L1D and 4-line L2.
        h.access(&rd(0, 0)).unwrap();
        for line in [4, 5, 6, 7, 9] {
            h.access(&rd(1, line * 64)).unwrap();
        }
        // The GPU's line 8 needs a way of set 0, whose LRU line is core 0's line 0.
        h.access(&gpu(8 * 64, Op::Read, Stream::Vertex)).unwrap();
        h.access(&rd(0, 0)).unwrap();
        let s = h.stats();
        let l1d = s.level("l1d").unwrap().counts.total();
        let spared = s
            .policy_stats
            .iter()
            .find(|(k, _)| k == "qbs_spared")
            .map(|(_, v)| *v);
        (l1d.read_misses, l1d.back_invalidations, spared)
    };
    assert_eq!(
        run(0),
        (7, 1, None),
        "line 0 evicted, back-invalidated, missed again"
    );
    assert_eq!(
        run(1),
        (6, 0, Some(1.0)),
        "line 4 evicted instead; line 0 hits"
    );
    let err = SystemConfig::load_preset(
        "4c1g",
        &["llc.cpu_inclusive=false".into(), "llc.qbs_queries=1".into()],
    )
    .unwrap_err();
    assert!(format!("{err:#}").contains("llc.qbs_queries"), "{err:#}");
}
