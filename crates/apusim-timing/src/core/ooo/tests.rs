//! Tests of the out-of-order core: bounded dependents lists, stopping and resuming fetch,
//! branch misprediction, execute width, physical registers and branch-free traces.

use super::*;
use crate::instr::{AccessInstrs, DepModel, VecInstrs};
use crate::{Clock, Issue, Timebase};
use apusim_trace::{Agent, Op, Stream, VecSource};

/// Every access is answered after `latency` ticks.
struct FixedLatency(Tick);
impl MemPort for FixedLatency {
    fn issue(&mut self, now: Tick, _acc: &Access, _token: Token) -> Issue {
        Issue::Done(now + self.0)
    }
}

/// A long run of chained loads (every instruction has dependents) keeps a bounded pool of
/// spare dependents lists: memory must not grow with the length of a run.
#[test]
fn spare_dependents_lists_stay_bounded() {
    let a = Agent::cpu(0);
    let trace: Vec<Access> = (0..200_000u64)
        .map(|i| Access::new(a, Stream::CpuData, Op::Read, (i % 512) * 64, 8).with_time(i))
        .collect();
    let program = AccessInstrs::new(Box::new(VecSource::new(trace)), None, DepModel::Chain);
    let clock = Clock::mhz(4000).unwrap();
    let tb = Timebase::new(&[clock]).unwrap();
    let domain = Domain::new(tb.period(clock).unwrap());
    let entry = apusim_registry::find(super::super::REGISTRY, "core model", "ooo").unwrap();
    let p = entry.params(&toml::from_str("rob = 64").unwrap()).unwrap();
    let mut core = Ooo::from_params(&p, domain, Box::new(program));
    let mut mem = FixedLatency(domain.cycles(3));
    let mut now = 0;
    loop {
        match core.cycle(now, &mut mem).unwrap() {
            Wake::At(t) => now = t.max(now + 1),
            Wake::OnCompletion => now += domain.period,
            Wake::Finished => break,
        }
    }
    assert_eq!(core.stats().instructions, 200_000);
    assert!(
        core.spare_deps.len() <= 64,
        "{} spare lists for a 64-entry ROB",
        core.spare_deps.len()
    );
}

/// Switching mid-run: with fetch stopped the core drains, warming takes the next
/// instructions of the program in order without retiring them, and detailed execution
/// resumes after them; retired plus warmed is the whole program.
#[test]
fn fetch_stops_the_core_drains_warms_and_resumes() {
    let program: Vec<Instr> = (0..3_000u64).map(|i| load(1, i * 64)).collect();
    let mut core = super::super::build(
        "ooo",
        &toml::Table::new(),
        Domain::new(1),
        Box::new(VecInstrs(program.into())),
    )
    .unwrap();
    let mut port = FixedLatency(50);
    let mut now = 0;
    // One cycle; true once the program has ended and the pipeline is empty.
    let mut step = |core: &mut Box<dyn CoreModel>, now: &mut Tick| {
        match core.cycle(*now, &mut port).unwrap() {
            Wake::At(t) => *now = t,
            Wake::OnCompletion => *now += 1,
            Wake::Finished => return true,
        }
        false
    };
    while core.stats().instructions < 1_000 {
        step(&mut core, &mut now);
    }
    core.set_fetch(false);
    assert!(!core.drained(), "instructions are in flight");
    for _ in 0..100_000 {
        if core.drained() {
            break;
        }
        step(&mut core, &mut now);
    }
    assert!(core.drained());
    let retired = core.stats().instructions;
    assert!((1_000..1_400).contains(&retired), "{retired}");
    let mut rec = super::super::WarmLog(Vec::new());
    assert_eq!(core.warm(500, &mut rec).unwrap(), 500);
    // The warmed loads are the program's next ones, in order (an instruction read ahead
    // when fetch stopped included).
    let first = rec.0[0] / 64;
    assert!(first >= retired, "warming starts after the retired ones");
    assert!(
        rec.0.windows(2).all(|w| w[1] == w[0] + 64),
        "in trace order"
    );
    assert_eq!(core.stats().warmed, 500);
    core.set_fetch(true);
    for _ in 0..1_000_000 {
        if step(&mut core, &mut now) {
            break;
        }
    }
    let s = core.stats();
    assert_eq!(s.instructions + s.warmed, 3_000);
    assert_eq!(
        first, retired,
        "nothing skipped between retiring and warming"
    );
}

fn run(program: Vec<Instr>, params: &[(&str, toml::Value)], latency: Tick) -> CoreStats {
    let mut t = toml::Table::new();
    for (k, v) in params {
        t.insert(k.to_string(), v.clone());
    }
    let mut core = super::super::build(
        "ooo",
        &t,
        Domain::new(1),
        Box::new(VecInstrs(program.into())),
    )
    .unwrap();
    let mut port = FixedLatency(latency);
    let mut now = 0;
    for _ in 0..10_000_000 {
        match core.cycle(now, &mut port).unwrap() {
            Wake::At(next) => now = next,
            Wake::Finished => return core.stats(),
            Wake::OnCompletion => panic!("nothing is pending with a fixed-latency port"),
        }
    }
    panic!("the program did not finish")
}

fn alu(dst: u8, src: u8) -> Instr {
    let mut i = Instr::plain(1);
    i.src[0] = src;
    i.dst[0] = dst;
    i
}

fn branch(ip: u64, taken: bool) -> Instr {
    let mut i = Instr::plain(1);
    i.ip = ip;
    i.branch = BranchKind::Conditional;
    i.taken = taken;
    i.target = if taken { 0x1000 } else { 0 };
    i.src = [26, 25, 0, 0];
    i.dst = [26, 0];
    i
}

fn load(dst: u8, addr: u64) -> Instr {
    let mut i = Instr::plain(1);
    i.push(Access::new(
        Agent::cpu(0),
        Stream::CpuData,
        Op::Read,
        addr,
        8,
    ));
    i.dst[0] = dst;
    i
}

/// Ten independent instructions and a branch whose direction follows a fixed
/// pseudo-random pattern, `n` times.
fn random_branches(n: u64) -> Vec<Instr> {
    let mut v = Vec::new();
    let mut x = 12345u64;
    for _ in 0..n {
        for k in 0..10 {
            v.push(alu(1 + k, 1 + k));
        }
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.push(branch(0x2000, x >> 63 == 1));
    }
    v
}

#[test]
fn mispredicted_branches_stop_fetch_until_they_resolve() {
    let prog = random_branches(2000);
    let bimodal = run(prog.clone(), &[], 1);
    let perfect = run(
        prog,
        &[("branch_predictor", toml::Value::String("perfect".into()))],
        1,
    );
    assert_eq!(bimodal.instructions, 22_000);
    assert_eq!(bimodal.branches, 2000);
    // A random direction is mispredicted about half the time.
    assert!(
        (700..1300).contains(&bimodal.mispredicts),
        "{}",
        bimodal.mispredicts
    );
    assert_eq!(perfect.mispredicts, 0);
    // Each misprediction costs at least the refill of the front end.
    assert!(
        bimodal.cycles > perfect.cycles + bimodal.mispredicts * 4,
        "bimodal {} vs perfect {} cycles",
        bimodal.cycles,
        perfect.cycles
    );
    assert!(bimodal.mispredict_stall_cycles >= bimodal.mispredicts * 4);
}

#[test]
fn execute_width_bounds_independent_instructions() {
    let prog: Vec<Instr> = (0..40_000u64).map(|k| alu(1 + (k % 20) as u8, 0)).collect();
    let four = run(prog.clone(), &[], 1);
    let two = run(prog, &[("exec_width", toml::Value::Integer(2))], 1);
    let ipc = |s: &CoreStats| s.instructions as f64 / s.cycles as f64;
    assert!((ipc(&four) - 4.0).abs() < 0.05, "{}", ipc(&four));
    assert!((ipc(&two) - 2.0).abs() < 0.05, "{}", ipc(&two));
}

#[test]
fn physical_registers_bound_the_loads_in_flight() {
    // Independent loads of 200 cycles, each writing its own register.
    let prog: Vec<Instr> = (0..4000u64)
        .map(|k| load(1 + (k % 100) as u8, 64 * k))
        .collect();
    let many = run(prog.clone(), &[], 200);
    let few = run(
        prog,
        &[("physical_registers", toml::Value::Integer(16))],
        200,
    );
    // 128 registers less the ~100 architectural ones in use leave ~28 loads in flight;
    // 16 registers (all needed by the architectural state) let one through at a time.
    assert!(
        few.cycles > 3 * many.cycles,
        "{} vs {}",
        few.cycles,
        many.cycles
    );
    assert!(
        few.prf_full_cycles > few.cycles / 2,
        "{}",
        few.prf_full_cycles
    );
}

#[test]
fn traces_without_branches_predict_nothing() {
    let prog: Vec<Instr> = (0..1000u64).map(|k| alu(1, (k % 2) as u8)).collect();
    let s = run(prog, &[], 1);
    assert_eq!((s.branches, s.mispredicts), (0, 0));
}
