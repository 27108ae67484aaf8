//! Controller-level behaviour: latencies, scheduling order, row-hit cap, refresh, write drain,
//! row policies, multi-channel operation, and (proptest) data-bus exclusivity plus every
//! timing constraint re-checked by an independent checker on random request streams.
//!
//! One file, one idea: the controller seen from its public interface, whose tests share the
//! request builders, the run loop and the completion-order helpers above them.

use crate::common;

use apusim_dram::{
    mapping::DecodedAddr, presets::preset, Command, Completion, DramConfig, MemorySystem, Request,
    GPU_SOURCE,
};
use proptest::prelude::*;

fn config(f: impl FnOnce(&mut DramConfig)) -> DramConfig {
    let mut c = preset("ddr3-1600-11-1ch").unwrap();
    c.scheduler = "frfcfs".into();
    f(&mut c);
    c
}

/// Address of (bank, row, column) on channel 0, rank 0 of `mem`.
fn addr(mem: &MemorySystem, bank: u32, row: u32, column: u32) -> u64 {
    mem.mapper().unmap(&DecodedAddr {
        channel: 0,
        rank: 0,
        bank_group: 0,
        bank,
        row,
        column,
    })
}

/// Send all requests (each at its arrival), run to completion, return completions in
/// completion order.
fn run(mem: &mut MemorySystem, reqs: &[Request]) -> Vec<Completion> {
    let mut out = Vec::new();
    for r in reqs {
        mem.advance_to(r.arrival.max(mem.now()), &mut out);
        let mut r = *r;
        while let Err(back) = mem.try_send(r) {
            r = back;
            let n = mem.next_event().unwrap().max(mem.now());
            mem.advance_to(n + 1, &mut out);
        }
    }
    mem.drain(&mut out);
    out
}

fn order(done: &[Completion]) -> Vec<u64> {
    done.iter().map(|c| c.id).collect()
}

#[test]
fn idle_latencies_miss_hit_conflict() {
    let mut mem = MemorySystem::new(config(|_| {})).unwrap();
    let t = mem.config().spec.timing.clone();
    let a = addr(&mem, 0, 7, 0);
    let hit = addr(&mem, 0, 7, 1);
    let conflict = addr(&mem, 0, 9, 0);
    let done = run(
        &mut mem,
        &[
            Request::read(0, a, 100),
            Request::read(1, hit, 500),
            Request::read(2, conflict, 900),
        ],
    );
    let lat: Vec<u64> = done.iter().map(|c| c.latency()).collect();
    assert_eq!(lat[0], u64::from(t.rcd + t.cl + t.burst), "miss");
    assert_eq!(lat[1], u64::from(t.cl + t.burst), "hit");
    assert_eq!(lat[2], u64::from(t.rp + t.rcd + t.cl + t.burst), "conflict");
    let r = mem.report();
    assert_eq!(
        (
            r.total.access.rows.misses,
            r.total.access.rows.hits,
            r.total.access.rows.conflicts
        ),
        (1, 1, 1)
    );
    assert_eq!(r.total.access.reads, 3);
    assert_eq!(r.total.access.bytes, 3 * 64);
}

#[test]
fn write_latency_and_completion_fields() {
    let mut mem = MemorySystem::new(config(|_| {})).unwrap();
    let t = mem.config().spec.timing.clone();
    let a = addr(&mem, 3, 1, 0);
    let done = run(
        &mut mem,
        &[Request::write(42, a, 10)
            .with_source(GPU_SOURCE)
            .with_stream(5)],
    );
    assert_eq!(done.len(), 1);
    let c = done[0];
    assert_eq!(
        (c.id, c.is_write, c.source, c.stream),
        (42, true, GPU_SOURCE, 5)
    );
    assert_eq!(c.enqueued, 10);
    assert_eq!(c.latency(), u64::from(t.rcd + t.cwl + t.burst));
    let r = mem.report();
    assert_eq!(r.sources.len(), 1);
    assert_eq!(r.sources[0].0, GPU_SOURCE);
    assert_eq!(r.sources[0].1.writes, 1);
}

/// Open row 7 in bank 0, then queue an older conflict (row 9) and a younger hit (row 7).
fn hit_vs_older_conflict(scheduler: &str) -> Vec<u64> {
    let mut mem = MemorySystem::new(config(|c| c.scheduler = scheduler.into())).unwrap();
    let reqs = [
        Request::read(0, addr(&mem, 0, 7, 0), 0),
        Request::read(1, addr(&mem, 0, 9, 0), 1),
        Request::read(2, addr(&mem, 0, 7, 1), 2),
    ];
    order(&run(&mut mem, &reqs))
}

#[test]
fn frfcfs_serves_row_hit_before_older_miss() {
    assert_eq!(hit_vs_older_conflict("frfcfs"), vec![0, 2, 1]);
    assert_eq!(hit_vs_older_conflict("fcfs"), vec![0, 1, 2]);
}

/// One older conflict behind a stream of hits to the open row.
fn conflict_position(scheduler: &str, cap: u32) -> usize {
    let mut mem = MemorySystem::new(config(|c| {
        c.scheduler = scheduler.into();
        c.row_hit_cap = cap;
    }))
    .unwrap();
    let mut reqs = vec![
        Request::read(0, addr(&mem, 0, 7, 0), 0),
        Request::read(1, addr(&mem, 0, 9, 0), 1),
    ];
    for i in 0..12 {
        reqs.push(Request::read(2 + i, addr(&mem, 0, 7, 1 + i as u32), 2));
    }
    let done = order(&run(&mut mem, &reqs));
    done.iter().position(|&id| id == 1).unwrap()
}

#[test]
fn row_hit_cap_bounds_starvation() {
    // Uncapped FR-FCFS serves every hit first; the cap lets the conflict in after `cap` hits
    // from the open row (the first read's own column command counts as one).
    assert_eq!(conflict_position("frfcfs", 4), 13);
    assert_eq!(conflict_position("frfcfs-cap", 4), 4);
    assert_eq!(conflict_position("frfcfs-cap", 2), 2);
}

#[test]
fn refresh_happens_every_trefi_and_blocks_the_rank() {
    let mut mem = MemorySystem::new(config(|_| {})).unwrap();
    mem.enable_command_log();
    let t = mem.config().spec.timing.clone();
    let refi = u64::from(t.refi);
    let mut out = Vec::new();
    mem.advance_to(10 * refi + 1, &mut out);
    let refs: Vec<u64> = mem
        .command_log()
        .iter()
        .filter(|r| r.command == Command::Ref)
        .map(|r| r.cycle)
        .collect();
    assert_eq!(refs, (1..=10).map(|i| i * refi).collect::<Vec<_>>());
    // A read arriving just as refresh starts waits for tRFC.
    let a = addr(&mem, 0, 1, 0);
    mem.advance_to(11 * refi, &mut out);
    mem.try_send(Request::read(7, a, 11 * refi)).unwrap();
    mem.drain(&mut out);
    let c = out.iter().find(|c| c.id == 7).unwrap();
    assert_eq!(c.latency(), u64::from(t.rfc + t.rcd + t.cl + t.burst));
    assert_eq!(mem.report().total.commands.refresh, 11);
}

#[test]
fn refresh_closes_open_rows_first() {
    let mut mem = MemorySystem::new(config(|_| {})).unwrap();
    mem.enable_command_log();
    let refi = u64::from(mem.config().spec.timing.refi);
    let a = addr(&mem, 2, 1, 0);
    run(&mut mem, &[Request::read(0, a, refi - 50)]);
    let mut out = Vec::new();
    mem.advance_to(refi + 500, &mut out);
    let log = mem.command_log();
    let cmds: Vec<Command> = log.iter().map(|r| r.command).collect();
    assert_eq!(
        cmds,
        vec![Command::Act, Command::Rd, Command::PreA, Command::Ref]
    );
    common::check_log(mem.config(), &log).unwrap();
}

/// At the shortest refresh interval the configuration accepts, a stream of row misses
/// is still served: at least one request between two refreshes, so the run ends. (Just
/// below it, tREFI 60 with tRFC 20, each miss's ACT was closed again by the next refresh's
/// PREA before its column command, and the run never finished.)
#[test]
fn the_shortest_accepted_refresh_interval_still_serves_row_misses() {
    let c = config(|c| {
        c.spec.timing.rfc = 20;
        c.spec.timing.refi = 70;
    });
    let mut mem = MemorySystem::new(c).unwrap();
    let n = 200u64;
    let reqs: Vec<Request> = (0..n)
        .map(|i| Request::read(i, addr(&mem, (i % 8) as u32, 100 + i as u32, 0), i * 16))
        .collect();
    let done = run(&mut mem, &reqs);
    assert_eq!(done.len(), n as usize);
    // One refresh round (70 cycles) serves at least one request.
    assert!(mem.now() <= n * 16 + n * 70, "took {} cycles", mem.now());
}

#[test]
fn refresh_off_means_no_ref() {
    let mut mem = MemorySystem::new(config(|c| c.refresh = false)).unwrap();
    let mut out = Vec::new();
    mem.advance_to(1_000_000, &mut out);
    assert_eq!(mem.report().total.commands.refresh, 0);
    assert_eq!(mem.next_event(), None);
}

#[test]
fn writes_wait_for_the_high_watermark_while_reads_are_queued() {
    let mut mem = MemorySystem::new(config(|c| {
        c.write_high_watermark = Some(4);
        c.write_low_watermark = Some(1);
    }))
    .unwrap();
    // A long stream of reads, then three writes: the writes wait (below the watermark)
    // until the read queue runs empty.
    let mut reqs: Vec<Request> = (0..20)
        .map(|i| Request::read(10 + i, addr(&mem, 2, 1, i as u32), 0))
        .collect();
    for i in 0..3 {
        reqs.push(Request::write(i, addr(&mem, 1, 1, i as u32), 1));
    }
    let done = order(&run(&mut mem, &reqs));
    let first_write = done.iter().position(|&id| id < 3).unwrap();
    assert!(first_write >= 19, "writes drained early: {done:?}");
    // With a fourth write the high watermark is reached and the writes go first.
    let mut mem = MemorySystem::new(config(|c| {
        c.write_high_watermark = Some(4);
        c.write_low_watermark = Some(1);
    }))
    .unwrap();
    let mut reqs: Vec<Request> = (0..20)
        .map(|i| Request::read(10 + i, addr(&mem, 2, 1, i as u32), 0))
        .collect();
    for i in 0..4 {
        reqs.push(Request::write(i, addr(&mem, 1, 1, i as u32), 1));
    }
    let done = order(&run(&mut mem, &reqs));
    let first_write = done.iter().position(|&id| id < 4).unwrap();
    assert!(
        first_write < 8,
        "writes not drained at the watermark: {done:?}"
    );
    assert!(mem.report().total.write_drains >= 1);
}

/// The read latency of one read sent at cycle 1,000 into a channel whose write queue a writer
/// refills as fast as it drains (every freed slot taken at once), or `None` if the read is
/// still waiting at cycle 100,000.
fn read_latency_under_a_write_flood(cap: usize) -> Option<u64> {
    let mut mem = MemorySystem::new(config(|c| c.write_drain_cap = Some(cap))).unwrap();
    let mut out = Vec::new();
    let mut id = 1u64;
    for cycle in 0..100_000u64 {
        mem.advance_to(cycle, &mut out);
        if let Some(c) = out.iter().find(|c| c.id == 0) {
            return Some(c.done - c.arrival);
        }
        out.clear();
        loop {
            let a = addr(&mem, (id % 8) as u32, (id / 8 % 4096) as u32, 0);
            if mem.try_send(Request::write(id, a, cycle)).is_err() {
                break;
            }
            id += 1;
        }
        if cycle == 1000 {
            mem.try_send(Request::read(0, addr(&mem, 3, 5000, 0), cycle))
                .unwrap();
        }
    }
    None
}

/// A drain that a writer refills as fast as it empties never reaches the low watermark; the
/// drain cap (gem5's bound) ends it and serves the waiting read. Without the cap the read
/// waits for good: this is the starvation the cap exists for.
#[test]
fn the_drain_cap_serves_a_read_under_an_endless_write_flood() {
    let cfg = config(|_| {});
    let capped = read_latency_under_a_write_flood(cfg.drain_cap())
        .expect("the read is served under the default cap");
    // At most a full drain of `cap` writes (a few cycles each) and the read's own service.
    assert!(capped < 2_000, "read latency {capped} cycles");
    assert_eq!(
        read_latency_under_a_write_flood(1 << 40),
        None,
        "without a cap the watermark rule starves the read"
    );
    // A cap below the watermarks' span is refused.
    let bad = config(|c| c.write_drain_cap = Some(1));
    let e = MemorySystem::new(bad).map(|_| ()).expect_err("refused");
    assert!(e.to_string().contains("write_drain_cap"), "{e}");
}

#[test]
fn closed_page_precharges_unless_a_hit_is_queued() {
    let mut mem =
        MemorySystem::new(config(|c| c.row_policy = apusim_dram::RowPolicy::Closed)).unwrap();
    mem.enable_command_log();
    let reqs = [
        Request::read(0, addr(&mem, 0, 3, 0), 0),
        Request::read(1, addr(&mem, 0, 3, 1), 0),
        Request::read(2, addr(&mem, 0, 3, 2), 200),
    ];
    run(&mut mem, &reqs);
    let cmds: Vec<Command> = mem.command_log().iter().map(|r| r.command).collect();
    assert_eq!(
        cmds,
        vec![
            Command::Act,
            Command::Rd,
            Command::Rda,
            Command::Act,
            Command::Rda
        ]
    );
    common::check_log(mem.config(), &mem.command_log()).unwrap();
    let r = mem.report();
    assert_eq!((r.total.commands.rda, r.total.commands.rd), (2, 1));
}

#[test]
fn read_forwarding_and_write_merging() {
    let mut mem = MemorySystem::new(config(|_| {})).unwrap();
    let a = addr(&mem, 0, 3, 0);
    let reqs = [
        Request::write(0, a, 0),
        Request::read(1, a + 8, 0), // same 64 B transaction: served from the write queue
        Request::write(2, a, 0),    // merges with write 0
        Request::read(3, addr(&mem, 5, 3, 0), 0),
    ];
    let done = run(&mut mem, &reqs);
    assert_eq!(done.len(), 4);
    let r = mem.report();
    assert_eq!(r.total.access.forwarded_reads, 1);
    assert_eq!(r.total.access.merged_writes, 1);
    assert_eq!(r.total.commands.wr + r.total.commands.rd, 2);
    assert_eq!(done.iter().find(|c| c.id == 1).unwrap().latency(), 1);
}

#[test]
fn queue_full_refuses_and_reports_stall() {
    let mut mem = MemorySystem::new(config(|c| c.read_queue = 2)).unwrap();
    let r = |i: u64| Request::read(i, i * (1 << 20), 0);
    assert!(mem.try_send(r(0)).is_ok());
    assert!(mem.try_send(r(1)).is_ok());
    assert!(!mem.can_accept(r(2).addr, false));
    assert_eq!(mem.try_send(r(2)), Err(r(2)));
    let done = run(&mut mem, &[r(2)]);
    assert_eq!(done.len(), 3);
    assert!(mem.report().total.access.stall_cycles > 0);
}

#[test]
fn channels_work_in_parallel() {
    let mut c = preset("ddr3-1600-11-2ch").unwrap();
    c.refresh = false;
    let mut mem = MemorySystem::new(c).unwrap();
    // Consecutive lines alternate channels (RoBaRaCoCh).
    assert_eq!(mem.decode(0).channel, 0);
    assert_eq!(mem.decode(64).channel, 1);
    let reqs: Vec<Request> = (0..64).map(|i| Request::read(i, i * 64, 0)).collect();
    let done = run(&mut mem, &reqs);
    assert_eq!(done.len(), 64);
    let r = mem.report();
    assert_eq!(r.channels.len(), 2);
    assert_eq!(r.channels[0].access.reads, 32);
    assert_eq!(r.channels[1].access.reads, 32);
    // 32 row hits per channel stream at one burst per tCCD: the two channels overlap.
    assert!(r.cycles < 32 * 4 + 40, "cycles {}", r.cycles);
}

#[test]
fn report_renders_table_json_csv() {
    let mut mem = MemorySystem::new(config(|_| {})).unwrap();
    let reqs: Vec<Request> = (0..50)
        .map(|i| {
            let r = Request::read(i, i * 4096, i * 10);
            if i % 3 == 0 {
                Request {
                    is_write: true,
                    ..r
                }
                .with_source(GPU_SOURCE)
            } else {
                r
            }
        })
        .collect();
    run(&mut mem, &reqs);
    let r = mem.report();
    let table = r.to_table();
    assert!(
        table.contains("total") && table.contains("gpu") && table.contains("cpu0"),
        "{table}"
    );
    let json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(json["total"]["access"]["reads"], 33);
    assert_eq!(json["sources"]["gpu"]["writes"], 17);
    assert!(!json["total"]["access"]["read_latency"]["histogram"]
        .as_array()
        .unwrap()
        .is_empty());
    let csv = r.to_csv();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 1 + 1 + 2); // header, total, ch0, cpu0, gpu
    let cols = lines[0].split(',').count();
    assert!(lines.iter().all(|l| l.split(',').count() == cols), "{csv}");
}

fn scheduler_strategy() -> impl Strategy<Value = (&'static str, bool, u32)> {
    (
        prop::sample::select(vec!["fcfs", "frfcfs", "frfcfs-cap"]),
        any::<bool>(),
        prop::sample::select(vec![1u32, 2]),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Random request streams over few banks and rows (so hits, misses and conflicts all
    /// occur), on one or two ranks, every scheduler and both row policies: the data bus never
    /// carries two bursts at once, every timing constraint holds per the independent checker,
    /// and every request completes exactly once.
    #[test]
    fn data_bus_exclusive_and_all_constraints_hold(
        (sched, closed, ranks) in scheduler_strategy(),
        reqs in prop::collection::vec((0u32..8, 0u32..3, 0u32..8, any::<bool>(), 0u64..6), 1..200),
        refresh_on in any::<bool>(),
    ) {
        let c = config(|c| {
            c.scheduler = sched.into();
            c.spec.org.ranks = ranks;
            c.row_policy = if closed { apusim_dram::RowPolicy::Closed } else { apusim_dram::RowPolicy::Open };
            c.read_queue = 8;
            c.write_queue = 8;
            c.refresh = refresh_on;
            // Short refresh interval so that refreshes interleave with traffic.
            c.spec.timing.refi = 700;
        });
        c.validate().unwrap();
        let mut mem = MemorySystem::new(c).unwrap();
        mem.enable_command_log();
        let mut t = 0;
        let mut stream = Vec::new();
        for (i, (bank, row, col, w, gap)) in reqs.iter().enumerate() {
            t += gap;
            let rank = (i as u32) % ranks;
            let a = mem.mapper().unmap(&DecodedAddr { channel: 0, rank, bank_group: 0, bank: *bank, row: *row, column: *col });
            let r = if *w { Request::write(i as u64, a, t) } else { Request::read(i as u64, a, t) };
            stream.push(r);
        }
        let done = run(&mut mem, &stream);
        let mut ids: Vec<u64> = done.iter().map(|c| c.id).collect();
        ids.sort_unstable();
        prop_assert_eq!(ids, (0..stream.len() as u64).collect::<Vec<_>>());
        let log = mem.command_log();
        let tm = mem.config().spec.timing.clone();
        let mut bursts: Vec<(u64, u64, u32)> = log
            .iter()
            .filter(|r| r.command.is_column())
            .map(|r| {
                let s = r.cycle + u64::from(if r.command.is_read() { tm.cl } else { tm.cwl });
                (s, s + u64::from(tm.burst), r.rank)
            })
            .collect();
        prop_assert!(common::check_bursts(&mut bursts, 0).is_ok());
        if let Err(e) = common::check_log(mem.config(), &log) {
            prop_assert!(false, "{}", e);
        }
        // Completion times match the log.
        for c in &done {
            prop_assert!(c.done >= c.enqueued && c.enqueued >= c.arrival);
        }
    }
}

/// Every preset runs a mixed random stream to completion within all timing constraints, with
/// refresh interleaved (the run spans several tREFI).
#[test]
fn every_preset_runs_clean() {
    for (name, _) in apusim_dram::presets() {
        let cfg = preset(name).unwrap();
        let mut mem = MemorySystem::new(cfg).unwrap();
        mem.enable_command_log();
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let reqs: Vec<Request> = (0..3000u64)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let addr = if i % 2 == 0 {
                    i * 64
                } else {
                    (x % (1 << 30)) & !63
                };
                let r = Request::read(i, addr, i * 6).with_source((i % 3) as u8);
                if x % 10 < 3 {
                    Request {
                        is_write: true,
                        ..r
                    }
                } else {
                    r
                }
            })
            .collect();
        let done = run(&mut mem, &reqs);
        assert_eq!(done.len(), reqs.len(), "{name}");
        let log = mem.command_log();
        common::check_log(mem.config(), &log).unwrap_or_else(|e| panic!("{name}: {e}"));
        let r = mem.report();
        assert!(r.total.commands.refresh > 0, "{name}: no refresh");
        assert_eq!(
            r.channels.len() as u32,
            mem.config().spec.org.channels,
            "{name}"
        );
        assert!(
            r.channels.iter().all(|c| c.access.reads > 0),
            "{name}: idle channel"
        );
    }
}

/// Bursts of requests `(bank, row, write, cycles after the previous)`, each after an idle
/// gap of `(whole tREFI rounds, extra cycles)`, for the idle-jump tests.
type Bursts = Vec<((u64, u64), Vec<(u32, u32, bool, u64)>)>;

/// Gaps of every length: shorter than a refresh interval, whole rounds of refreshes give or
/// take a few cycles, many rounds.
fn bursts_with_gaps() -> impl Strategy<Value = Bursts> {
    let gap = (
        prop::sample::select(vec![0u64, 0, 1, 2, 3, 7, 30]),
        prop_oneof![0u64..5, 0u64..60_000],
    );
    let burst = prop::collection::vec((0u32..8, 0u32..3, any::<bool>(), 0u64..5), 1..12);
    prop::collection::vec((gap, burst), 1..12)
}

/// One configuration of the idle-jump tests: preset, ranks, tREFI/tRFC (`None`: the
/// preset's), row policy, scheduler.
type IdleCase = (&'static str, u32, Option<(u32, u32)>, bool, &'static str);

/// Configurations with traffic. (Refresh intervals much shorter than 200 cycles leave a rank
/// too little time between refreshes to serve a request at all.)
fn idle_case() -> impl Strategy<Value = IdleCase> {
    (
        prop::sample::select(vec![
            "ddr3-1600-11-1ch",
            "ddr3-1600-11-2ch",
            "ddr4-3200-24-1ch",
        ]),
        prop::sample::select(vec![1u32, 2, 4, 8]),
        prop::sample::select(vec![None, Some((700, 150)), Some((200, 20))]),
        any::<bool>(),
        prop::sample::select(vec!["fcfs", "frfcfs", "frfcfs-cap"]),
    )
}

fn idle_config(case: IdleCase) -> DramConfig {
    let (name, ranks, refresh, closed, sched) = case;
    let mut cfg = preset(name).unwrap();
    cfg.spec.org.ranks = ranks;
    if let Some((refi, rfc)) = refresh {
        cfg.spec.timing.refi = refi;
        cfg.spec.timing.rfc = rfc;
    }
    cfg.row_policy = if closed {
        apusim_dram::RowPolicy::Closed
    } else {
        apusim_dram::RowPolicy::Open
    };
    cfg.scheduler = sched.into();
    cfg.read_queue = 8;
    cfg.write_queue = 8;
    cfg.write_high_watermark = None;
    cfg.write_low_watermark = None;
    cfg.validate().unwrap();
    cfg
}

/// What a run of the idle-jump tests leaves.
#[derive(Debug)]
struct RunEnd {
    done: Vec<Completion>,
    report: apusim_dram::DramReport,
    /// [`snapshot`]s the driver took along the way, then one at the end.
    snapshots: Vec<String>,
    idle_steps: u64,
}

/// The memory system's state beyond its report: clock, next event, and every channel's
/// timing state (all next-allowed-cycle counters), as text.
fn snapshot(mem: &MemorySystem) -> String {
    let states: Vec<String> = (0..mem.config().spec.org.channels as usize)
        .map(|c| format!("{:?}", mem.channel_state(c)))
        .collect();
    format!("now {} next {:?} {states:?}", mem.now(), mem.next_event())
}

/// Drive a memory system of `cfg` with `drive` twice: with the command log (which records
/// every REF, so idle time is stepped refresh by refresh) and without (idle time jumped).
/// `drive` may push [`snapshot`]s. Returns both runs' ends (stepped first) and the REFs in
/// the log.
fn stepped_and_jumped_by(
    cfg: &DramConfig,
    drive: impl Fn(&mut MemorySystem, &mut Vec<String>) -> Vec<Completion>,
) -> ([RunEnd; 2], u64) {
    let mut refs = 0;
    let runs = [true, false].map(|log| {
        let mut mem = MemorySystem::new(cfg.clone()).unwrap();
        if log {
            mem.enable_command_log();
        }
        let mut snapshots = Vec::new();
        let done = drive(&mut mem, &mut snapshots);
        if log {
            refs = mem
                .command_log()
                .iter()
                .filter(|r| r.command == Command::Ref)
                .count() as u64;
        }
        snapshots.push(snapshot(&mem));
        RunEnd {
            done,
            report: mem.report(),
            snapshots,
            idle_steps: mem.idle_steps(),
        }
    });
    (runs, refs)
}

/// [`stepped_and_jumped_by`] on `bursts`, then 13 refresh intervals of idle time.
fn stepped_and_jumped(cfg: &DramConfig, bursts: &Bursts) -> ([RunEnd; 2], u64) {
    let refi = u64::from(cfg.spec.timing.refi);
    stepped_and_jumped_by(cfg, |mem, _| {
        let mut t = 0;
        let mut reqs = Vec::new();
        for ((rounds, extra), burst) in bursts {
            // Extra cycles beyond 4 are a fraction of a round (as many as the round has).
            t += rounds * refi + if *extra < 5 { *extra } else { extra % refi };
            for &(bank, row, w, dt) in burst {
                t += dt;
                let i = reqs.len() as u64;
                let a = mem.mapper().unmap(&DecodedAddr {
                    channel: (i % u64::from(cfg.spec.org.channels)) as u32,
                    rank: (i % u64::from(cfg.spec.org.ranks)) as u32,
                    bank_group: 0,
                    bank,
                    row,
                    column: i as u32 % 8,
                });
                reqs.push(if w {
                    Request::write(i, a, t)
                } else {
                    Request::read(i, a, t)
                });
            }
        }
        let done = run(mem, &reqs);
        let mut out = Vec::new();
        let end = mem.now() + 13 * refi + 5;
        mem.advance_to(end, &mut out);
        done
    })
}

/// Stepped and jumped runs leave the same (all but the idle steps, of which the jumped run
/// takes no more), and the report counts the log's REFs.
fn assert_same_end(runs: &[RunEnd; 2], refs: u64, what: &str) {
    let [stepped, jumped] = runs;
    assert_eq!(stepped.done, jumped.done, "{what}: completions");
    assert_eq!(stepped.report, jumped.report, "{what}: report");
    assert_eq!(stepped.snapshots, jumped.snapshots, "{what}: state");
    assert_eq!(jumped.report.total.commands.refresh, refs, "{what}: REFs");
    assert!(
        jumped.idle_steps <= stepped.idle_steps,
        "{what}: jumped {} idle steps, stepped {}",
        jumped.idle_steps,
        stepped.idle_steps
    );
}

/// A refresh deadline that falls just after the last request, when a row is still open
/// (open page: PREA first) or its bank still precharging (closed page: the auto-precharge
/// delays the REF past its deadline): the idle stretch that follows, ending a cycle or so
/// either side of a round's end, then a read, leave what stepping leaves, and so does the
/// state at the end of the idle stretch. Every arrival from 60 cycles before the first
/// deadline to it, both row policies.
#[test]
fn idle_jumps_after_a_deadline_that_waits_for_a_precharge() {
    for closed in [false, true] {
        let cfg = idle_config(("ddr3-1600-11-1ch", 1, None, closed, "frfcfs"));
        let refi = u64::from(cfg.spec.timing.refi);
        for before in 0..=60 {
            for until in [
                2 * refi - 1,
                2 * refi,
                2 * refi + 1,
                2 * refi + 3,
                5 * refi + 2,
            ] {
                let (runs, refs) = stepped_and_jumped_by(&cfg, |mem, snaps| {
                    let a = mem.mapper().unmap(&DecodedAddr {
                        channel: 0,
                        rank: 0,
                        bank_group: 0,
                        bank: 3,
                        row: 9,
                        column: 0,
                    });
                    // As the timed engine drives it: send, then advance a long way at once,
                    // so the decisions after the read (and their idle jump) are made there.
                    let mut done = Vec::new();
                    mem.advance_to(refi - before, &mut done);
                    mem.try_send(Request::read(0, a, refi - before)).unwrap();
                    mem.advance_to(until, &mut done);
                    snaps.push(snapshot(mem));
                    let then = Request::read(1, a + (1 << 20), until);
                    done.extend(run(mem, &[then]));
                    done
                });
                let what = format!("closed {closed}, read at tREFI - {before}, until {until}");
                assert_same_end(&runs, refs, &what);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Jumping over idle time changes nothing: on random bursts separated by gaps of every
    /// length (within a refresh interval, whole rounds of refreshes give or take a cycle,
    /// many rounds), with one to eight ranks, one or two channels, three refresh intervals,
    /// both row policies and every scheduler, the run without the command log (idle time
    /// jumped) ends with the same completions, report, timing state and next event as the
    /// run with it (idle time stepped), its refresh count is the log's REF count, and it
    /// takes no more idle steps.
    #[test]
    fn idle_jumps_leave_what_stepping_leaves(case in idle_case(), bursts in bursts_with_gaps()) {
        let (runs, refs) = stepped_and_jumped(&idle_config(case), &bursts);
        assert_same_end(&runs, refs, &format!("{case:?}"));
    }

    /// The same with no traffic at all, where refresh intervals are as short as the model
    /// accepts (every other timing at its minimum, so that tREFI ≥ tRFC + 5): one to eight
    /// ranks due on adjacent cycles (tREFI 6 for 4 ranks, 8 or 9 for 8) or on the same
    /// cycle (tREFI 6 for 8 ranks: two ranks share some deadlines and take turns on the
    /// command bus, so idle time must be stepped), the clock advanced to random cycles in
    /// between and the state compared at each.
    #[test]
    fn idle_jumps_with_ranks_due_on_adjacent_cycles(
        ranks in prop::sample::select(vec![1u32, 2, 4, 8]),
        (refi, rfc) in prop::sample::select(vec![(6u32, 1u32), (8, 3), (9, 4), (17, 5), (6240, 208)]),
        stops in prop::collection::vec(0u64..2_000, 1..8),
    ) {
        let mut cfg = preset("ddr3-1600-11-2ch").unwrap();
        cfg.spec.org.ranks = ranks;
        cfg.spec.org.burst_length = 2;
        let t = &mut cfg.spec.timing;
        for v in [
            &mut t.cl, &mut t.cwl, &mut t.rcd, &mut t.rp, &mut t.ras, &mut t.burst,
            &mut t.ccd_s, &mut t.ccd_l, &mut t.rrd_s, &mut t.rrd_l, &mut t.faw,
            &mut t.wtr_s, &mut t.wtr_l, &mut t.rtw, &mut t.wr, &mut t.rtp,
        ] {
            *v = 1;
        }
        t.rc = 2;
        cfg.spec.timing.refi = refi;
        cfg.spec.timing.rfc = rfc;
        cfg.validate().unwrap();
        let (runs, refs) = stepped_and_jumped_by(&cfg, |mem, snaps| {
            let mut out = Vec::new();
            for s in &stops {
                let to = mem.now() + s * u64::from(refi) / 100;
                mem.advance_to(to, &mut out);
                snaps.push(snapshot(mem));
            }
            out
        });
        assert_same_end(&runs, refs, &format!("{ranks} ranks, tREFI {refi}"));
    }
}

/// A run that idles through whole rounds of refresh jumps them: far fewer idle steps than
/// stepping, same result.
#[test]
fn idle_rounds_are_jumped_not_stepped() {
    let burst = vec![(0, 1, false, 1), (3, 2, true, 2), (5, 0, false, 0)];
    let bursts: Bursts = [(0, 0), (200, 0), (0, 7), (30, 200), (3, 1)]
        .into_iter()
        .map(|g| (g, burst.clone()))
        .collect();
    for case in [
        ("ddr3-1600-11-1ch", 1, None, false, "frfcfs-cap"),
        ("ddr3-1600-11-2ch", 4, Some((700, 150)), true, "frfcfs"),
        ("ddr4-3200-24-1ch", 8, Some((200, 20)), false, "fcfs"),
    ] {
        let (runs, refs) = stepped_and_jumped(&idle_config(case), &bursts);
        assert_same_end(&runs, refs, &format!("{case:?}"));
        assert!(refs > 200 * u64::from(case.1), "{case:?}: {refs} refreshes");
        let [stepped, jumped] = &runs;
        assert!(
            jumped.idle_steps * 4 < stepped.idle_steps,
            "{case:?}: jumped {} idle steps, stepped {}",
            jumped.idle_steps,
            stepped.idle_steps
        );
    }
}

/// Idle time costs constant work whatever the gap: 10^15 idle cycles (1.6·10^11 refreshes
/// of a 1-channel rank, 1.5·10^12 on the 4-channel 2-rank TAP preset) take a handful of
/// idle steps, and every refresh is counted: one REF per rank for each deadline before the
/// end. Stepping them would take hours (and two idle steps per refresh).
#[test]
fn a_gap_of_1e15_cycles_costs_constant_work() {
    const GAP: u64 = 1_000_000_000_000_000;
    for name in ["ddr3-1600-11-1ch", "ddr3-1333-9-4ch"] {
        let cfg = preset(name).unwrap();
        let org = cfg.spec.org.clone();
        let t = cfg.spec.timing.clone();
        let mut mem = MemorySystem::new(cfg).unwrap();
        let reqs: Vec<Request> = (0..2 * u64::from(org.channels))
            .map(|i| {
                let a = mem.mapper().unmap(&DecodedAddr {
                    channel: (i % u64::from(org.channels)) as u32,
                    rank: 0,
                    bank_group: 0,
                    bank: 1,
                    row: 5,
                    column: 0,
                });
                Request::read(i, a, (i / u64::from(org.channels)) * GAP)
            })
            .collect();
        let done = run(&mut mem, &reqs);
        assert_eq!(done.len(), reqs.len(), "{name}");
        // The row opened at cycle 0 was closed by the first refresh: the late reads miss.
        let miss = u64::from(t.rcd + t.cl + t.burst);
        assert!(done[org.channels as usize..]
            .iter()
            .all(|c| c.arrival == GAP && c.latency() == miss));
        let r = mem.report();
        assert_eq!(r.cycles, GAP + miss, "{name}");
        // Rank r's deadlines: tREFI − r·tREFI/ranks, then every tREFI; those before the
        // last decision (the end of the run) have been served.
        let refi = u64::from(t.refi);
        let ranks = u64::from(org.ranks);
        let per_channel: u64 = (0..ranks)
            .map(|rank| refi - rank * refi / ranks)
            .map(|due0| (r.cycles - 1 - due0) / refi + 1)
            .sum();
        assert_eq!(
            r.total.commands.refresh,
            per_channel * u64::from(org.channels),
            "{name}"
        );
        // Only the first refresh of rank 0 found a row open.
        assert_eq!(r.total.commands.prea, u64::from(org.channels), "{name}");
        assert!(
            mem.idle_steps() < 100 * u64::from(org.channels),
            "{name}: {} idle steps",
            mem.idle_steps()
        );
    }
}

/// Arrival cycles beyond the documented maximum are refused before anything runs:
/// `run_requests` returns an error naming the request, `try_send` panics (its callers
/// validate first).
#[test]
fn arrivals_beyond_the_maximum_are_refused() {
    let mut mem = MemorySystem::new(preset("reference").unwrap()).unwrap();
    let reqs = [
        Request::read(0, 0x40, 1),
        Request::read(1, 0x80, apusim_dram::MAX_CYCLE + 1),
    ];
    let e = apusim_dram::run_requests(&mut mem, reqs.into_iter().map(Ok))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("request 1") && e.contains(&apusim_dram::MAX_CYCLE.to_string()),
        "{e}"
    );
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = mem.try_send(Request::read(2, 0x40, u64::MAX));
    }));
    assert!(caught.is_err());
}
