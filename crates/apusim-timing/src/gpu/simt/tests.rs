//! Tests of the `simt` model on small in-memory programs and a scripted memory side: issue
//! rate, scoreboard, latency hiding, barriers, launch order, refusals, schedulers, freezing and
//! warming, and access criticality.

use super::*;
use crate::Issue;
use apusim_trace::{TraceHeader, WarpOp};

/// A program held in memory.
struct Items(VecDeque<BlockItem>, TraceHeader);
impl BlockSource for Items {
    fn header(&self) -> &TraceHeader {
        &self.1
    }
    fn next_item(&mut self) -> apusim_trace::Result<Option<BlockItem>> {
        Ok(self.0.pop_front())
    }
}

/// One launch of `blocks` blocks whose warps each run `warp(block, warp)`; memory
/// instructions get one 128-byte transaction per entry of their `count` at distinct
/// lines.
/// One launch: blocks, threads per block, each warp's instructions by (block, warp).
type LaunchSpec = (u32, u32, fn(u32, u32) -> Vec<WarpOp>);

fn program(launches: &[LaunchSpec]) -> Box<dyn BlockSource> {
    let mut items = VecDeque::new();
    let mut line = 0u64;
    for (li, &(blocks, threads, warp)) in launches.iter().enumerate() {
        let info = LaunchInfo {
            index: li as u32,
            blocks,
            threads,
            shared_bytes: 0,
            registers: 0,
        };
        items.push_back(BlockItem::Launch(info));
        for b in 0..blocks {
            let mut tb = ThreadBlock {
                launch: li as u32,
                index: b,
                warp_base: b * info.warps_per_block(),
                ..Default::default()
            };
            for w in 0..info.warps_per_block() {
                for mut op in warp(b, w) {
                    if let WarpOp::Mem { first, count, .. } = &mut op {
                        *first = tb.txns.len() as u32;
                        for _ in 0..*count {
                            tb.txns.push((line << 7, 128));
                            line += 1;
                        }
                    }
                    tb.ops.push(op);
                }
                tb.ends.push(tb.ops.len() as u32);
            }
            items.push_back(BlockItem::Block(tb));
        }
    }
    let h = TraceHeader::single(Agent::GPU, "test", 1000, &[Stream::ShaderData], "test");
    Box::new(Items(items, h))
}

fn load(pc: u64, count: u32) -> WarpOp {
    WarpOp::Mem {
        pc,
        op: Op::Read,
        flags: 0,
        first: 0,
        count,
    }
}
fn store(pc: u64) -> WarpOp {
    WarpOp::Mem {
        pc,
        op: Op::Write,
        flags: 0,
        first: 0,
        count: 1,
    }
}

/// Memory answering every access after `latency` cycles (as pending, completed by the
/// driver), refusing the first `refuse` accesses; accesses of the PCs in `hit_pcs` hit
/// the first level (answered at once, `hit_latency` cycles later). `flags` records each
/// access's PC and flags.
struct Mem {
    latency: Tick,
    due: Vec<(Tick, Token)>,
    sent: Vec<(Tick, u64, u16)>,
    refuse: u32,
    hit_pcs: Vec<u64>,
    hit_latency: Tick,
    flags: Vec<(u64, u8)>,
}
impl MemPort for Mem {
    fn issue(&mut self, now: Tick, acc: &Access, token: Token) -> Issue {
        if self.refuse > 0 {
            self.refuse -= 1;
            return Issue::Busy(None);
        }
        assert_eq!((acc.agent, acc.stream), (Agent::GPU, Stream::ShaderData));
        self.sent.push((now, acc.addr, acc.unit));
        self.flags.push((acc.pc, acc.flags));
        if self.hit_pcs.contains(&acc.pc) {
            return Issue::Done(now + self.hit_latency);
        }
        self.due.push((now + self.latency, token));
        Issue::Pending(1)
    }
}

fn params(set: &[(&str, i64)], scheduler: &str) -> Params {
    let mut t = toml::Table::new();
    for (k, v) in set {
        t.insert((*k).into(), toml::Value::Integer(*v));
    }
    t.insert("scheduler".into(), toml::Value::String(scheduler.into()));
    super::super::REGISTRY[0].params(&t).unwrap()
}

/// One shader core issuing one instruction a cycle (loose round robin), with `more`.
fn one_core_one_issue(more: &[(&str, i64)]) -> Params {
    let mut set = vec![("sms", 1), ("issue_cycles", 1), ("issue_width", 1)];
    set.extend_from_slice(more);
    params(&set, "lrr")
}

/// Run `prog` to its end on the model `p` over memory `mem` (1 tick = 1 GPU cycle);
/// returns the finished model.
fn run(p: &Params, prog: Box<dyn BlockSource>, mem: &mut Mem) -> Box<dyn GpuModel> {
    let mut g = build(p, Domain::new(1), GpuProgram::Kernels(prog)).unwrap();
    let mut wake = Some(0);
    assert!(
        drive(&mut *g, mem, &mut wake, None),
        "the model did not finish"
    );
    g
}

/// Drive `g` from `wake` until it finishes (true) or, with `until`, until nothing of its
/// is due before that tick and nothing is in flight (false).
fn drive(
    g: &mut dyn GpuModel,
    mem: &mut Mem,
    wake: &mut Option<Tick>,
    until: Option<Tick>,
) -> bool {
    for _ in 0..10_000_000 {
        let te = mem.due.iter().map(|d| d.0).min();
        let now = match (*wake, te) {
            (Some(a), Some(b)) => a.min(b),
            (None, None) if until.is_some() => return false,
            (a, b) => a.or(b).expect("the model neither waits nor finished"),
        };
        if until.is_some_and(|u| now >= u) && te.is_none() {
            return false;
        }
        mem.due.sort_unstable();
        while mem.due.first().is_some_and(|d| d.0 <= now) {
            let (t, tok) = mem.due.remove(0);
            g.complete(tok, t);
            *wake = Some(wake.map_or(t, |w| w.min(t)));
        }
        if *wake == Some(now) {
            match g.cycle(now, mem).unwrap() {
                Wake::At(t) => *wake = Some(t),
                Wake::OnCompletion => *wake = None,
                Wake::Finished => return true,
            }
        }
    }
    panic!("the model did not finish");
}

fn mem(latency: Tick) -> Mem {
    Mem {
        latency,
        due: Vec::new(),
        sent: Vec::new(),
        refuse: 0,
        hit_pcs: Vec::new(),
        hit_latency: 5,
        flags: Vec::new(),
    }
}

#[test]
fn compute_issues_two_warps_every_fourth_cycle() {
    // One core, four warps of 100 compute instructions and the closing barrier: 404 warp
    // instructions at two per four cycles.
    let p = params(&[("sms", 1)], "lrr");
    let prog = program(&[(1, 128, |_, _| vec![WarpOp::Compute(100), WarpOp::Barrier])]);
    let g = run(&p, prog, &mut mem(10));
    let st = g.stats();
    assert_eq!(st.warp_instructions, 404);
    assert_eq!((st.blocks, st.launches, st.programs), (1, 1, 1));
    assert_eq!(st.stalls.issued, 808, "{st:?}");
    // The last of 202 slots is cycle 804.
    assert_eq!(st.cycles, 804);
    assert_eq!(g.kernels().len(), 1);
    assert!(g.kernels()[0].end >= 800);
}

#[test]
fn a_warp_waits_for_its_loads_at_the_first_use_only() {
    // Two loads back to back, then a compute that uses them.
    let p = one_core_one_issue(&[]);
    let prog = program(&[(1, 32, |_, _| {
        vec![
            load(0x10, 1),
            load(0x20, 1),
            WarpOp::Compute(1),
            WarpOp::Barrier,
        ]
    })]);
    let mut m = mem(500);
    let g = run(&p, prog, &mut m);
    // Both loads left before either returned (back to back), the compute waited ~500.
    assert_eq!(m.sent.len(), 2);
    assert!(m.sent[1].0 - m.sent[0].0 <= 2, "{:?}", m.sent);
    let st = g.stats();
    assert!((500..520).contains(&st.cycles), "{}", st.cycles);
    assert!(st.stalls.memory >= 490, "{:?}", st.stalls);
    // The stall is charged to the load whose data came last.
    let pcs = g.pc_stalls();
    assert_eq!(pcs[0].0, 0x20);
    assert!(pcs[0].1 >= 490);
    assert_eq!(st.loads_done, 2);
    assert_eq!(st.load_ticks, 1000);
}

#[test]
fn more_warps_hide_more_latency_as_littles_law_says() {
    // Each warp: 20 × (load, compute). With latency L and one issue per cycle, a warp
    // does one iteration per ~L cycles, so W warps sustain ~W/L loads per cycle until
    // issue bandwidth (one instruction per cycle: 1/2 load per cycle) bounds them.
    let rate = |warps: i64| {
        let p = one_core_one_issue(&[("warps_per_sm", warps)]);
        let threads = 32 * warps as u32;
        let prog = match warps {
            2 => program(&[(1, 64, body)]),
            8 => program(&[(1, 256, body)]),
            32 => program(&[(1, 1024, body)]),
            _ => unreachable!(),
        };
        assert_eq!(threads / 32, warps as u32);
        let g = run(&p, prog, &mut mem(200));
        let st = g.stats();
        st.load_transactions as f64 / st.cycles as f64
    };
    fn body(_: u32, _: u32) -> Vec<WarpOp> {
        let mut v = Vec::new();
        for i in 0..20 {
            v.push(load(0x100 + i, 1));
            v.push(WarpOp::Compute(1));
        }
        v.push(WarpOp::Barrier);
        v
    }
    let (r2, r8, r32) = (rate(2), rate(8), rate(32));
    // Little's law: outstanding loads = rate × latency.
    assert!((r2 * 200.0 - 2.0).abs() < 0.2, "{r2}");
    assert!((r8 * 200.0 - 8.0).abs() < 0.6, "{r8}");
    let ratio = r8 / r2;
    assert!((3.6..=4.1).contains(&ratio), "{ratio}");
    assert!(r32 > 3.5 * r8, "{r32} vs {r8}");
}

#[test]
fn barriers_hold_warps_until_the_whole_block_arrives() {
    let p = one_core_one_issue(&[]);
    // Warp 0 computes 50, warp 1 computes 1; both then store after the barrier.
    let prog = program(&[(1, 64, |_, w| {
        vec![
            WarpOp::Compute(if w == 0 { 50 } else { 1 }),
            WarpOp::Barrier,
            store(0x40),
            WarpOp::Barrier,
        ]
    })]);
    let mut m = mem(10);
    let g = run(&p, prog, &mut m);
    // Neither store left before warp 0's 50 instructions.
    assert!(m.sent.iter().all(|s| s.0 >= 50), "{:?}", m.sent);
    let st = g.stats();
    assert_eq!(st.store_transactions, 2);
    assert_eq!(st.warp_instructions, 53 + 4);
}

#[test]
fn warps_at_a_barrier_wait_for_a_warp_that_ends_without_reaching_it() {
    // Warp 0 stores and ends (waiting for the acknowledgement); warp 1 waits at a
    // barrier, which opens when warp 0 retires.
    let p = one_core_one_issue(&[]);
    let prog = program(&[(1, 64, |_, w| {
        if w == 0 {
            vec![store(0x40)]
        } else {
            vec![WarpOp::Barrier, WarpOp::Compute(1)]
        }
    })]);
    let g = run(&p, prog, &mut mem(100));
    let st = g.stats();
    assert!(st.stalls.barrier >= 95, "{:?}", st.stalls);
    assert!(st.cycles >= 100, "{}", st.cycles);
    assert_eq!(st.blocks, 1);
}

#[test]
fn a_launch_starts_after_the_previous_one_ends_and_blocks_spread_over_cores() {
    let p = params(&[("sms", 4)], "lrr");
    let prog = program(&[
        (8, 32, |_, _| {
            vec![load(0x10, 1), WarpOp::Compute(4), WarpOp::Barrier]
        }),
        (4, 32, |_, _| vec![WarpOp::Compute(4), WarpOp::Barrier]),
    ]);
    let mut m = mem(300);
    let g = run(&p, prog, &mut m);
    let k = g.kernels();
    assert_eq!(k.len(), 2);
    assert!(k[0].end >= 300 && k[1].start >= k[0].end, "{k:?}");
    let units: std::collections::BTreeSet<u16> = m.sent.iter().map(|s| s.2).collect();
    assert_eq!(units.len(), 4);
    assert_eq!(g.stats().blocks, 12);
}

#[test]
fn a_transaction_refused_with_nothing_in_flight_is_reported_not_waited_for() {
    let p = params(&[("sms", 1)], "lrr");
    let prog = program(&[(2, 32, |_, _| {
        vec![load(0x10, 2), WarpOp::Compute(1), WarpOp::Barrier]
    })]);
    let mut m = mem(40);
    m.refuse = 1;
    // The first transaction is refused until data arrives for the core, and nothing of
    // the core's is in flight: the model must report the stuck core, not sleep.
    let mut g = build(&p, Domain::new(1), GpuProgram::Kernels(prog)).unwrap();
    let w = g.cycle(0, &mut m).unwrap();
    assert!(matches!(w, Wake::At(_)), "{w:?}");
    let mut now = 0;
    let mut out = None;
    for _ in 0..100 {
        now += 1;
        match g.cycle(now, &mut m) {
            Ok(Wake::At(_)) => {}
            other => {
                out = Some(other);
                break;
            }
        }
    }
    // Refused with nothing in flight: a deadlock naming the core, not a hang.
    match out {
        Some(Err(TimingError::Deadlock(msg))) => {
            assert!(msg.contains("sm0") && msg.contains("load/store"), "{msg}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn runs_are_deterministic_and_schedulers_differ() {
    let prog = || {
        program(&[(12, 256, |b, w| {
            let mut v = vec![];
            for i in 0..(3 + (b + w) % 5) {
                v.push(load(0x10 * u64::from(i), 1 + (w % 3)));
                v.push(WarpOp::Compute(1 + w % 4));
            }
            v.push(WarpOp::Barrier);
            v
        })])
    };
    let one = |s: &str| {
        let p = params(&[("sms", 2)], s);
        let mut m = mem(120);
        let g = run(&p, prog(), &mut m);
        (g.stats(), m.sent)
    };
    assert_eq!(one("lrr"), one("lrr"));
    assert_eq!(one("gto"), one("gto"));
    assert_ne!(one("lrr").1, one("gto").1);
}

/// Counts what functional warming sends.
struct Warmed(u64);
impl WarmPort for Warmed {
    fn warm(&mut self, acc: &Access) -> Result<(), TimingError> {
        assert_eq!(acc.stream, Stream::ShaderData);
        self.0 += 1;
        Ok(())
    }
}

#[test]
fn frozen_and_warmed_the_program_goes_on_where_it_stopped() {
    let p = params(&[("sms", 2)], "lrr");
    let prog = || {
        program(&[
            (6, 64, |_, w| {
                vec![
                    load(0x10, 1 + w % 2),
                    WarpOp::Compute(20),
                    WarpOp::Barrier,
                    store(0x20),
                    WarpOp::Compute(5),
                    WarpOp::Barrier,
                ]
            }),
            (3, 32, |_, _| vec![WarpOp::Compute(10), WarpOp::Barrier]),
        ])
    };
    let full = run(&p, prog(), &mut mem(50)).stats();
    // Run 60 cycles, freeze, let memory drain, warm, thaw, run to the end.
    let mut m = mem(50);
    let mut g = build(&p, Domain::new(1), GpuProgram::Kernels(prog())).unwrap();
    let mut wake = Some(0);
    assert!(!drive(&mut *g, &mut m, &mut wake, Some(60)));
    g.set_frozen(true);
    assert!(!drive(&mut *g, &mut m, &mut wake, Some(61)));
    assert!(g.drained() && m.due.is_empty());
    let mut log = Warmed(0);
    // Past every warp's first compute run, its barrier and its store.
    let taken = g.warm(300, 600, &mut log).unwrap();
    assert!(taken >= 300, "{taken}");
    g.set_frozen(false);
    wake = Some(700);
    assert!(drive(&mut *g, &mut m, &mut wake, None));
    let st = g.stats();
    assert_eq!(
        st.warp_instructions + st.warmed_instructions,
        full.warp_instructions
    );
    assert_eq!(st.warmed_instructions, taken);
    assert_eq!(m.sent.len() as u64 + log.0, full.transactions);
    assert!(log.0 > 0);
    assert_eq!((st.blocks, st.launches), (full.blocks, full.launches));
    assert!(st.warmed_blocks > 0);
}

/// One core issuing one instruction a cycle with the criticality hardware `on`, evaluated
/// every `period` cycles.
fn crit_params(on: bool, period: i64) -> Params {
    let mut t = toml::Table::new();
    for (k, v) in [("sms", 1), ("issue_cycles", 1), ("issue_width", 1)] {
        t.insert(k.into(), toml::Value::Integer(v));
    }
    t.insert("crit_period".into(), toml::Value::Integer(period));
    t.insert("criticality".into(), toml::Value::Boolean(on));
    super::super::REGISTRY[0].params(&t).unwrap()
}

/// Four warps of 30 × (load 0x10, load 0x20, compute), then a store at 0x30: memory
/// bound, each first use waits for load 0x20's data, which comes last.
fn two_loads() -> Box<dyn BlockSource> {
    program(&[(1, 128, |_, _| {
        let mut v = Vec::new();
        for _ in 0..30 {
            v.push(load(0x10, 1));
            v.push(load(0x20, 1));
            v.push(WarpOp::Compute(1));
        }
        v.push(store(0x30));
        v.push(WarpOp::Barrier);
        v
    })])
}

#[test]
fn criticality_off_or_on_leaves_the_timing_as_it_is() {
    // Off (by default or said so) is the model without the hardware; on, the marks change
    // flags only: over a memory that ignores them every figure and send is the same.
    let run_with = |p: &Params| {
        let mut m = mem(300);
        let mut g = run(p, two_loads(), &mut m);
        let crit = g.llc_feedback(0, 0).cloned();
        (
            g.stats(),
            g.core_stalls(),
            g.pc_stalls(),
            m.sent,
            m.flags,
            crit,
        )
    };
    let plain = run_with(&one_core_one_issue(&[]));
    let off = run_with(&crit_params(false, 200));
    let on = run_with(&crit_params(true, 200));
    assert_eq!(plain, off);
    assert!(off.5.is_none());
    assert_eq!(
        (&plain.0, &plain.1, &plain.2, &plain.3),
        (&on.0, &on.1, &on.2, &on.3)
    );
    assert_ne!(plain.4, on.4, "the marks changed the flags");
    assert!(plain.4.iter().all(|f| f.1 == 0));
}

#[test]
fn a_bottlenecked_core_marks_its_stalling_loads_critical_and_the_rest_bypass() {
    // `miss_rate`: the GPU's LLC accesses and misses fed before the run.
    let run_with = |hit_pcs: Vec<u64>, llc: (u64, u64)| {
        let p = crit_params(true, 200);
        let mut m = mem(300);
        m.hit_pcs = hit_pcs;
        // A hit answered after the misses (behind a busy first level, say): its data
        // is the last the first use waits for.
        m.hit_latency = 400;
        let mut g = build(&p, Domain::new(1), GpuProgram::Kernels(two_loads())).unwrap();
        g.llc_feedback(llc.0, llc.1);
        let mut wake = Some(0);
        assert!(drive(&mut *g, &mut m, &mut wake, None));
        let k = g.llc_feedback(llc.0, llc.1).unwrap().clone();
        (g.stats(), k, m.flags)
    };
    // Every transaction misses; the LLC's miss rate is 0 (nothing fed).
    let (st, k, flags) = run_with(vec![], (0, 0));
    assert!(k.evaluations >= 10, "{k:?}");
    // Warps wait for memory nearly all the time: the core is bottlenecked from the
    // first evaluation on.
    assert_eq!(k.bottlenecked_core_periods, k.evaluations, "{k:?}");
    // Load 0x20 released every stall: the only critical PC.
    assert_eq!(k.critical_pcs.len(), 1, "{k:?}");
    assert_eq!((k.critical_pcs[0].pc, k.critical_pcs[0].cores), (0x20, 1));
    assert!(k.critical_in_set > 0 && k.critical_untracked > 0, "{k:?}");
    // Before the first evaluation nothing is bottlenecked.
    assert!(k.non_critical_not_bottlenecked > 0, "{k:?}");
    // (A load that enters the table after an evaluation is in the table but not in the
    // critical set until the next one: `non_critical_in_table`.)
    assert_eq!(k.non_critical_miss_rate, 0, "{k:?}");
    assert_eq!(k.critical() + k.non_critical(), st.transactions);
    // Each transaction carries one of the two marks, as counted.
    let critical = flags.iter().filter(|f| f.1 == Access::CRITICAL).count() as u64;
    let bypass = flags.iter().filter(|f| f.1 == Access::BYPASS_LLC).count() as u64;
    assert_eq!((critical, bypass), (k.critical(), k.non_critical()));
    // 0x10 and the stores (not in the table) are critical by the miss rate, after the
    // first evaluation.
    assert!(flags.iter().any(|f| f.0 == 0x30 && f.1 == Access::CRITICAL));

    // The GPU's LLC misses 90% of its accesses: PCs not in the table are non-critical.
    let (_, k, flags) = run_with(vec![], (1000, 900));
    assert!(
        k.non_critical_miss_rate > 0 && k.critical_untracked == 0,
        "{k:?}"
    );
    assert!((k.llc_miss_rate - 0.9).abs() < 1e-12);
    assert!(flags
        .iter()
        .filter(|f| f.0 == 0x10)
        .all(|f| f.1 == Access::BYPASS_LLC));
    assert!(flags.iter().any(|f| f.0 == 0x20 && f.1 == Access::CRITICAL));

    // Load 0x20 hits the first level, and its data still comes last: the stalls it
    // causes do not enter the table (nor do its hits count as marked requests), so no PC
    // is critical by the table, and 0x10 is critical as an untracked PC.
    let (st, k, _) = run_with(vec![0x20], (0, 0));
    assert!(k.critical_pcs.is_empty(), "{k:?}");
    assert_eq!(k.critical_in_set + k.non_critical_in_table, 0, "{k:?}");
    assert!(k.critical_untracked > 0, "{k:?}");
    assert_eq!(
        k.critical() + k.non_critical(),
        st.transactions - st.load_transactions / 2
    );
}

#[test]
fn a_core_that_issues_is_not_bottlenecked() {
    // Compute-bound warps: OutputStall falls, nothing is critical.
    let p = crit_params(true, 100);
    let prog = program(&[(1, 128, |_, _| {
        let mut v = vec![load(0x10, 1)];
        v.push(WarpOp::Compute(400));
        v.push(store(0x30));
        v.push(WarpOp::Barrier);
        v
    })]);
    let mut m = mem(20);
    let mut g = run(&p, prog, &mut m);
    let k = g.llc_feedback(0, 0).unwrap();
    assert!(k.evaluations >= 10);
    assert_eq!(k.bottlenecked_core_periods, 0, "{k:?}");
    assert_eq!(k.critical(), 0);
    assert!(m.flags.iter().all(|f| f.1 == Access::BYPASS_LLC));
}
