//! Tests of the controller: a custom scheduler driving the schedule, the idle refresh jump
//! and its deadline check, and the debug check of the bank views.

use super::*;
use crate::presets::preset;
use crate::request::Request;
use crate::scheduler::SchedContext;
use crate::system::MemorySystem;

/// "First ready": the oldest ready request, no row-hit priority and no held-back
/// precharges. A scheduler that is not registered.
#[derive(Debug)]
struct OldestReady;

impl Scheduler for OldestReady {
    fn name(&self) -> &'static str {
        "oldest-ready"
    }
    fn pick(&mut self, ctx: &SchedContext, cands: &[Candidate]) -> Option<usize> {
        cands.iter().position(|c| ctx.ready(c))
    }
}

/// A saturating mix of reads and writes over a few rows of every bank (row hits,
/// misses and conflicts; write drains), deterministic.
fn requests(mem: &MemorySystem, n: u64) -> Vec<Request> {
    let cfg = mem.config();
    let org = &cfg.spec.org;
    let row_bytes = u64::from(org.columns) * org.transaction_bytes() / 8;
    (0..n)
        .map(|i| {
            let h = (i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32;
            let addr = (h % 4) * row_bytes * 64 + (h >> 8) % (row_bytes * 8);
            let r = Request::read(i, addr & !63, i * 2);
            if h % 5 == 0 {
                Request {
                    is_write: true,
                    ..r
                }
            } else {
                r
            }
        })
        .collect()
}

fn run(mem: &mut MemorySystem, reqs: &[Request]) -> crate::stats::DramReport {
    crate::cli::run_requests(mem, reqs.iter().copied().map(Ok)).unwrap();
    mem.report()
}

/// The controller issues what the scheduler picks: a scheduler without row-hit priority
/// gets fewer row hits than FR-FCFS on the same requests.
#[test]
fn the_scheduler_drives_the_schedule() {
    let cfg = preset("ddr3-1600-11-1ch").unwrap();
    let mut fr = MemorySystem::new(cfg.clone()).unwrap();
    let reqs = requests(&fr, 3000);
    let fr_report = run(&mut fr, &reqs);
    let mut oldest = MemorySystem::new(cfg).unwrap();
    oldest
        .controller_mut(0)
        .set_scheduler(Box::new(OldestReady));
    let oldest_report = run(&mut oldest, &reqs);
    let (a, b) = (&fr_report.total.access, &oldest_report.total.access);
    assert_eq!(a.reads + a.writes, b.reads + b.writes);
    assert!(
        a.rows.hits > b.rows.hits,
        "FR-FCFS-cap {} hits, oldest ready {}",
        a.rows.hits,
        b.rows.hits
    );
}

/// Two ranks asleep in an idle stretch (a few rounds of refresh done), and what a jump
/// changes: (next decision, refreshes issued).
fn idle_two_ranks() -> (MemorySystem, u64) {
    let mut cfg = preset("ddr3-1600-11-1ch").unwrap();
    cfg.spec.org.ranks = 2;
    let refi = u64::from(cfg.spec.timing.refi);
    let mut mem = MemorySystem::new(cfg).unwrap();
    mem.advance_to(3 * refi + 100, &mut Vec::new());
    (mem, refi)
}

fn jump(c: &mut Controller, refi: u64) -> (u64, u64) {
    c.horizon = c.next_wake + 50 * refi;
    c.jump_refresh_rounds();
    (c.next_wake, c.stats.commands.refresh)
}

/// The idle jump applies only when every REF of the rounds it skips would issue at its
/// deadline: not when a refresh is pending, when two ranks are due on one cycle (one
/// would wait for the command bus), when the deadlines span a round or more, when a bank
/// is open, or when a rank's REF is not yet legal at its deadline. (States an idle
/// stretch reaches rarely or never, set up directly.)
#[test]
fn idle_jump_refuses_when_a_ref_would_miss_its_deadline() {
    let (mut mem, refi) = idle_two_ranks();
    let c = mem.controller_mut(0);
    let before = (c.next_wake, c.stats.commands.refresh);
    assert!(c.ref_due[0] != c.ref_due[1] && !c.ref_pending.contains(&true));
    // As it is, it jumps: 50 rounds of one REF per rank.
    assert_eq!(jump(c, refi), (before.0 + 50 * refi, before.1 + 100));

    let (mut mem, refi) = idle_two_ranks();
    let c = mem.controller_mut(0);
    let before = (c.next_wake, c.stats.commands.refresh);
    let due = c.ref_due.clone();
    c.ref_pending[1] = true;
    assert_eq!(jump(c, refi), before, "a refresh pending");
    c.ref_pending[1] = false;
    c.ref_due[1] = due[0];
    assert_eq!(jump(c, refi), before, "two ranks due on one cycle");
    c.ref_due[1] = due[0].max(due[1]) + refi;
    c.ref_due[0] = due[0].min(due[1]);
    assert_eq!(jump(c, refi), before, "deadlines a round apart");
    c.ref_due.copy_from_slice(&due);
    // Rank 1 opens a row a quarter round before the next deadline (after the clock and
    // every tRFC so far) and closes it after tRAS, so its next ACT, and REF, are legal
    // only tRP later.
    let t = before.0 - refi / 4;
    c.dev.issue(Command::Act, 8, 1, t);
    assert_eq!(jump(c, refi), before, "a bank open");
    let pre = c.dev.earliest(Command::Pre, 8);
    c.dev.issue(Command::Pre, 8, 1, pre);
    let legal = c.dev.earliest(Command::Ref, 8);
    c.ref_due[1] = legal - 1;
    c.ref_due[0] = legal;
    c.next_wake = legal - 1;
    let before = (c.next_wake, c.stats.commands.refresh);
    assert_eq!(jump(c, refi), before, "REF not yet legal at its deadline");
    c.ref_due[1] = legal;
    c.ref_due[0] = legal + 1;
    c.next_wake = legal;
    assert_eq!(
        jump(c, refi),
        (legal + 50 * refi, before.1 + 100),
        "legal at its deadline: jumps"
    );
}

/// The debug view check notices a stale head.
#[cfg(debug_assertions)]
#[test]
fn view_check_catches_stale_heads() {
    let cfg = preset("ddr3-1600-11-1ch").unwrap();
    let mut mem = MemorySystem::new(cfg).unwrap();
    let reqs = requests(&mem, 40);
    for r in &reqs[..20] {
        mem.try_send(*r).unwrap();
    }
    let mut sink = Vec::new();
    mem.advance_to(30, &mut sink);
    let c = mem.controller_mut(0);
    c.rebuild();
    c.check_views();
    let b = (0..c.views.len())
        .find(|&b| c.views[b].oldest_other != crate::scheduler::NO_CANDIDATE)
        .expect("a bank with a non-hit");
    c.views[b].oldest_other += 1;
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c.check_views()));
    assert!(caught.is_err());
}

/// Every request's first command is counted once under its stream tag, reads and writes
/// apart: over the streams the outcomes add up to the channel's row hits, misses and
/// conflicts.
#[test]
fn row_outcomes_per_stream_add_up_to_the_totals() {
    let cfg = preset("ddr3-1600-11-1ch").unwrap();
    let mut mem = MemorySystem::new(cfg).unwrap();
    let reqs: Vec<Request> = requests(&mem, 3000)
        .into_iter()
        .enumerate()
        .map(|(i, r)| r.with_stream((i % 3) as u8 + 1))
        .collect();
    let report = run(&mut mem, &reqs);
    let a = &report.total.access;
    let mut sum = [RowOutcomes::default(); 2];
    for s in 1..=3 {
        let [r, w] = mem.stream_row_outcomes(s);
        assert!(r.total() > 0 && w.total() > 0, "stream {s}: {r:?} {w:?}");
        sum[0].merge(&r);
        sum[1].merge(&w);
    }
    assert_eq!(mem.stream_row_outcomes(0), [RowOutcomes::default(); 2]);
    assert_eq!(sum[0].total(), a.reads - a.forwarded_reads);
    assert_eq!(sum[1].total(), a.writes - a.merged_writes);
    assert_eq!(sum[0].hits + sum[1].hits, a.rows.hits);
    assert_eq!(sum[0].misses + sum[1].misses, a.rows.misses);
    assert_eq!(sum[0].conflicts + sum[1].conflicts, a.rows.conflicts);
}

/// A stream reading along one row finds it open; a stream reading other rows of the same
/// bank finds another row open.
#[test]
fn row_outcomes_name_the_stream_that_finds_its_row_open() {
    let cfg = preset("ddr3-1600-11-1ch").unwrap();
    let mut mem = MemorySystem::new(cfg).unwrap();
    let home = mem.decode(0);
    let same_bank = |a: u64| {
        let d = mem.decode(a);
        (d.rank, d.bank_group, d.bank) == (home.rank, home.bank_group, home.bank)
    };
    let along: Vec<u64> = (0..1 << 16)
        .map(|k| k * 64)
        .filter(|&a| same_bank(a) && mem.decode(a).row == home.row)
        .take(8)
        .collect();
    let mut others: Vec<u64> = Vec::new();
    for a in (0..1u64 << 34).step_by(1 << 13) {
        let d = mem.decode(a);
        if same_bank(a) && d.row != home.row && others.iter().all(|&o| mem.decode(o).row != d.row) {
            others.push(a);
            if others.len() == 4 {
                break;
            }
        }
    }
    assert_eq!((along.len(), others.len()), (8, 4));
    // The row's reads come first and back to back; each other row's read comes after the
    // row before it has been served.
    let mut reqs: Vec<Request> = along
        .iter()
        .enumerate()
        .map(|(i, &a)| Request::read(i as u64, a, 0).with_stream(1))
        .collect();
    reqs.extend(
        others
            .iter()
            .enumerate()
            .map(|(i, &a)| Request::read(100 + i as u64, a, 1_000 * (i as u64 + 1)).with_stream(2)),
    );
    run(&mut mem, &reqs);
    let [row, _] = mem.stream_row_outcomes(1);
    let [other, _] = mem.stream_row_outcomes(2);
    assert_eq!((row.hits, row.misses, row.conflicts), (7, 1, 0));
    assert_eq!((other.hits, other.misses, other.conflicts), (0, 0, 4));
}
