//! Controller-level behaviour: latencies, scheduling order, row-hit cap, refresh, write drain,
//! row policies, multi-channel operation, and (proptest) data-bus exclusivity plus every
//! timing constraint re-checked by an independent checker on random request streams.

mod common;

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
            r.total.access.row_misses,
            r.total.access.row_hits,
            r.total.access.row_conflicts
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
