//! The timed run: cores and the memory side on one clock, with warm-up and per-core targets.
//!
//! The papers' method (drp §3, gpu-access-criticality §5): each core first retires `warmup`
//! instructions (caches and policy state warm, statistics not counted), then runs to its
//! instruction target; a core that reaches its target keeps running, so the others still
//! see its interference, until every core has reached its own; each core's statistics are
//! taken at its target. Every counter is monotonic and a window is the difference of two
//! snapshots, so statistics can be read at any boundary.
//!
//! The engine loop: the next thing to happen is the earliest of the event queue's head and
//! the cores' wake-up ticks. Events due by then are handled first (data arriving wakes the
//! core it is for), then every core whose wake-up is now does one cycle. A core that waits
//! for memory asks for no wake-up, so idle time is skipped, never ticked through.
//!
//! This file holds the options and the engine loop (`simulate`, one function because every
//! phase of a run — warming, measuring, sampling, intervals — acts on the same local state);
//! `result.rs` what a run reports (the figures of its windows are `super::window`'s); `open_loop.rs` the GPU trace replayed beside the cores.

mod open_loop;
mod result;

use super::config::MAX_CYCLE;
use super::gpu::TimedGpu;
use super::hints::HintsControl;
use super::intervals::{self, IntervalSpec, Recorder};
use super::memory::{CorePort, TimedMemory};
use super::occupancy::Occupancy;
use super::sampling::{SampleSpec, Sampler, RENDER_WARMUP};
use super::window::{core_window, system_window, Snapshot, SystemSnapshot};
pub use super::window::{CoreResult, DramSource, LevelWindow, SystemWindow};
use crate::config::SystemConfig;
use crate::hierarchy::Hierarchy;
use crate::llc_switches::LlcSwitches;
use crate::run::{policy_context, Input, Inputs, Progress};
use anyhow::{bail, Context, Result};
use apusim_cache::policies::{self, PolicyVisitor};
use apusim_cache::{BoxedPolicy, Feedback, Policy};
use apusim_timing::{
    AccessInstrs, ChampSimInstrs, Clock, CoreModel, DepModel, Domain, InstrSource, Replay, Tick,
    Timebase, Wake,
};
use apusim_trace::{Agent, TraceError};
use open_loop::OpenLoop;
pub use result::{GpuSpeedup, JobSpeedup, SimResult, Speedup};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Options of a timed run.
#[derive(Clone, Debug, Default)]
pub struct SimOptions {
    /// Instructions each core retires before its statistics start.
    pub warmup: u64,
    /// Instructions each core retires after the warm-up; `None` runs every trace to its end.
    pub instructions: Option<u64>,
    /// Show progress on a terminal.
    pub progress: bool,
    /// Record every counter at boundaries of this length ([`mod@super::intervals`]).
    pub interval: Option<IntervalSpec>,
    /// Sample: detailed windows between functional warming ([`mod@super::sampling`]).
    pub sample: Option<SampleSpec>,
    /// Idealized streams and forced GPU read bypass at the LLC ([`crate::llc_switches`]): an
    /// idealized miss costs the LLC's hit latency and sends nothing to DRAM, a bypassed GPU
    /// read goes to DRAM without allocating. Alone runs are made without them.
    pub llc_switches: LlcSwitches,
}

impl SimOptions {
    /// Refuse counts beyond [`MAX_CYCLE`], naming the option: past it the sums and tick
    /// conversions of the engine could overflow, and no run could reach such a count anyway.
    pub fn check(&self) -> Result<()> {
        let over = |key: &str, v: u64| -> Result<()> {
            if v > MAX_CYCLE {
                bail!("{key} {v} is above the maximum of {MAX_CYCLE} (2^62)");
            }
            Ok(())
        };
        over("--warmup", self.warmup)?;
        if let Some(n) = self.instructions {
            over("--instructions", n)?;
        }
        if let Some(i) = &self.interval {
            over("--interval", i.every)?;
        }
        if let Some(s) = &self.sample {
            over("--sample-period", s.period)?;
            over("--sample-warmup", s.warmup_cycles())?;
            over("--sample-unit", s.unit)?;
        }
        Ok(())
    }
}

enum Phase {
    Warming,
    Measuring(Box<Snapshot>),
    Done(Box<Snapshot>, Box<Snapshot>, bool),
}

/// Run `policy` over `inputs` on `cfg`, timed.
pub fn sim_policy(
    cfg: &SystemConfig,
    policy: &str,
    inputs: &dyn Inputs,
    opts: &SimOptions,
) -> Result<SimResult> {
    let ctx = policy_context(cfg)?;
    let start = Instant::now();
    let mut r = policies::build(policy, &ctx, TimedVisitor { cfg, inputs, opts })??;
    r.policy = policy.to_string();
    r.seconds = start.elapsed().as_secs_f64();
    Ok(r)
}

struct TimedVisitor<'a> {
    cfg: &'a SystemConfig,
    inputs: &'a dyn Inputs,
    opts: &'a SimOptions,
}

impl PolicyVisitor for TimedVisitor<'_> {
    type Output = Result<SimResult>;
    fn visit<P: Policy>(self, policy: P) -> Result<SimResult> {
        // One timed engine for every policy (apusim_cache::boxed says why).
        let mut h = Hierarchy::new(self.cfg, BoxedPolicy::new(policy))?;
        if self.opts.llc_switches.dump_llc_trace.is_some() {
            bail!("a timed run does not dump the LLC stream (use `apusim run --dump-llc-trace`)");
        }
        h.set_llc_switches(&self.opts.llc_switches, self.cfg)?;
        simulate(self.cfg, h, self.inputs, self.opts)
    }
}

/// The CPU core an input drives: its remap, else the only agent its header names.
pub(crate) fn core_of(input: &Input) -> Result<Agent> {
    if let Some(a) = input.remap {
        return Ok(a);
    }
    let agents = &input.source.header().agents;
    match agents.as_slice() {
        [one] => Ok(one.agent),
        [] => Ok(Agent::cpu(0)),
        _ => bail!(
            "{}: a timed run drives one core per input, and this trace holds {} agents \
             (split it with `apusim trace convert --agent`, or give one file per core)",
            input.name,
            agents.len()
        ),
    }
}

/// The instructions an input drives its core with: a ChampSim trace's own (registers and
/// branches), else those rebuilt from its accesses.
fn program_of(input: Input, agent: Agent, deps: DepModel) -> Result<Box<dyn InstrSource>> {
    Ok(match &input.champsim {
        Some(path) => Box::new(
            ChampSimInstrs::open(path, agent)
                .with_context(|| format!("opening {}", path.display()))?,
        ),
        None => Box::new(AccessInstrs::new(input.source, Some(agent), deps)),
    })
}

fn simulate<P: Policy>(
    cfg: &SystemConfig,
    h: Hierarchy<P>,
    all_inputs: &dyn Inputs,
    opts: &SimOptions,
) -> Result<SimResult> {
    opts.check()?;
    let inputs = all_inputs.open()?;
    let t = &cfg.timing;
    let dram_cfg = t.dram_config()?;
    let cpu_clock = Clock::mhz(cfg.cpu_clock_mhz)?;
    let uncore_clock = Clock::mhz(if t.uncore_clock_mhz == 0 {
        cfg.cpu_clock_mhz
    } else {
        t.uncore_clock_mhz
    })?;
    let dram_clock = Clock::period_ps(dram_cfg.spec.timing.tck_ps)?;
    let mut clocks = vec![cpu_clock, uncore_clock, dram_clock];
    clocks.extend(open_loop_clocks(cfg, &inputs)?);
    let tb = Timebase::new(&clocks)?;
    let cpu = Domain::new(tb.period(cpu_clock)?);
    let uncore = Domain::new(tb.period(uncore_clock)?);
    let dram_domain = Domain::new(tb.period(dram_clock)?);
    let dram = apusim_dram::MemorySystem::new(dram_cfg).context("timing.dram")?;
    let mut mem = TimedMemory::new(cfg, h, cpu, uncore, dram_domain, dram)?;

    let deps = DepModel::parse(&t.deps).context("timing.deps")?;
    let mut cores: Vec<Box<dyn CoreModel>> = Vec::new();
    let mut agents: Vec<Agent> = Vec::new();
    // Each core's input, for errors.
    let mut names: Vec<String> = Vec::new();
    let mut open_loop: Vec<OpenLoop> = Vec::new();
    let mut gpu: Option<TimedGpu> = None;
    let mut restarts: Vec<Option<Arc<AtomicU64>>> = Vec::new();
    for (index, input) in inputs.into_iter().enumerate() {
        let agent = core_of(&input)?;
        match agent.cpu_index() {
            Some(n) if n < cfg.cpus => {}
            Some(_) => bail!(
                "{}: drives {agent} but the system has {} core(s) (use --set cpus=N)",
                input.name,
                cfg.cpus
            ),
            None if input.program.is_some() => {
                if gpu.is_some() {
                    bail!(
                        "{}: a second GPU program; the system has one GPU",
                        input.name
                    );
                }
                let clock = gpu_clock(cfg, &input)?;
                let domain = Domain::new(tb.period(clock)?);
                let reopen = opts.instructions.and_then(|_| all_inputs.reopen(index));
                let g = TimedGpu::new(cfg, input, domain, clock.mhz_f64(), reopen)?;
                mem.attach_gpu(cfg, domain);
                gpu = Some(g);
                continue;
            }
            None => {
                let period = tb.period(gpu_clock(cfg, &input)?)?;
                let mut o = OpenLoop {
                    input,
                    period,
                    buf: Vec::new(),
                    pos: 0,
                    done: false,
                    limit: t.gpu_outstanding,
                    slip: 0,
                    blocked: false,
                    reopen: opts.instructions.and_then(|_| all_inputs.reopen(index)),
                    last_due: 0,
                    in_pass: 0,
                    restarts: 0,
                };
                o.fill()?;
                open_loop.push(o);
                continue;
            }
        }
        if agents.contains(&agent) {
            bail!("{}: two inputs drive {agent}", input.name);
        }
        names.push(input.name.clone());
        let mut program = program_of(input, agent, deps)?;
        // With a target every core runs until the last has reached its own, so a shorter
        // trace is replayed (at most `MAX_RESTARTS` times); without one every trace runs once.
        let mut passes = None;
        if let Some(target) = opts.instructions {
            if let Some(reopen) = all_inputs.reopen(index) {
                let (r, count) = Replay::new(
                    program,
                    Box::new(move || {
                        reopen()
                            .and_then(|input| program_of(input, agent, deps))
                            .map_err(|e| TraceError::Other(format!("replaying: {e:#}")))
                    }),
                );
                program = Box::new(r.with_target(opts.warmup.saturating_add(target)));
                passes = Some(count);
            }
        }
        let core = apusim_timing::core::build(t.core_model(), &t.core.params, cpu, program)
            .context("timing.core")?;
        cores.push(core);
        agents.push(agent);
        restarts.push(passes);
    }
    if cores.is_empty() && gpu.is_none() {
        bail!("a timed run needs at least one CPU trace or GPU program");
    }
    if let Some(g) = &gpu {
        if !open_loop.is_empty() {
            bail!(
                "{} runs on the timed GPU, and a GPU access trace would replay on the same GPU; \
                 give one GPU input",
                g.name
            );
        }
    }
    let n = cores.len();
    let slot = |i: usize| agents[i].dense_index(cfg.cpus) as u32;
    let snapshot = |mem: &TimedMemory<P>, core: &dyn CoreModel, i: usize| Snapshot {
        core: core.stats(),
        functional: mem.h.stats(),
        latency: mem.latency[slot(i) as usize],
    };
    let mut phase: Vec<Phase> = (0..n)
        .map(|i| {
            if opts.warmup == 0 {
                Phase::Measuring(Box::new(snapshot(&mem, cores[i].as_ref(), i)))
            } else {
                Phase::Warming
            }
        })
        .collect();
    let mut window_start = (opts.warmup == 0).then(|| SystemSnapshot::take(0, &mem));
    let mut occupancy = Occupancy::new(cpu);
    let mut last_now = 0;
    let mut wake: Vec<Option<Tick>> = vec![Some(0); n];
    let mut finished = vec![false; n];
    let watchdog = cpu.cycles(t.watchdog_cycles);
    // The clock may not pass MAX_CYCLE CPU cycles, nor half the tick range (so that no tick
    // arithmetic of the engine can overflow).
    let end_of_time = cpu.cycles(MAX_CYCLE).min(Tick::MAX / 2);
    // Each core's count of instructions retired or taken by warming, and the tick it last
    // changed (for the no-progress watchdogs; the latest of them is the machine's).
    let mut advanced = vec![0u64; n];
    let mut advanced_at: Vec<Tick> = vec![0; n];
    let feedback_every = cpu.cycles(256);
    let mut next_feedback = feedback_every;
    let mut last_retired = vec![0u64; n];
    let mut gpu_feedback: Vec<Feedback> = Vec::new();
    let mut progress = Progress::new(opts.progress);
    let mut steps = 0u64;
    let by_slot: Vec<Option<usize>> = {
        let mut v = vec![None; cfg.cpus + 1];
        for i in 0..n {
            v[slot(i) as usize] = Some(i);
        }
        v
    };

    let level_names: Vec<String> = mem
        .h
        .stats()
        .levels
        .iter()
        .map(|l| l.name.clone())
        .collect();
    let slots: Vec<u32> = (0..n).map(slot).collect();
    let ctx = intervals::Context {
        cfg,
        agents: &agents,
        slots: &slots,
        level_names: &level_names,
        cpu,
        uncore,
    };
    let mut recorder = opts
        .interval
        .map(|spec| Recorder::new(spec, &mem, &cores, gpu.as_ref(), &ctx));

    let renders = gpu.as_ref().is_some_and(|g| !g.runs_kernels());
    let mut sampler = match opts.sample {
        Some(asked) => {
            let spec = asked.resolved(renders);
            if let Err(e) = spec.check() {
                match asked.warmup {
                    None if renders => bail!(
                        "{e}; beside a timed render pipeline --sample-warmup defaults to \
                         {RENDER_WARMUP} cycles"
                    ),
                    _ => bail!(e),
                }
            }
            Some(Sampler::new(spec, n))
        }
        None => None,
    };
    let mut hints = HintsControl::new(cfg.cpus, cpu, mem.dram_domain());
    if let Some(g) = gpu.as_mut().filter(|_| sampler.is_some()) {
        // The run starts with functional warming; the GPU starts at its program's start
        // once it ends.
        g.freeze(0);
    }

    loop {
        if phase.iter().all(|p| matches!(p, Phase::Done(..)))
            && gpu.as_ref().is_none_or(|g| g.ran_once())
        {
            break;
        }
        // A sampled run warms functionally once the machine has drained.
        if let Some(s) = sampler.as_mut().filter(|s| s.draining()) {
            if cores.iter().all(|c| c.drained())
                && mem.quiescent()
                && gpu.as_ref().is_none_or(|g| g.drained())
            {
                let (per_core, jump) = s.warming(last_now, cpu, &cores, opts.warmup);
                for i in 0..n {
                    if !finished[i] {
                        cores[i]
                            .warm(per_core[i], &mut mem.warm_port(slot(i)))
                            .with_context(|| format!("{} warming", agents[i]))?;
                        mem.take_error()
                            .with_context(|| format!("{} warming", agents[i]))?;
                    }
                }
                let resume = cpu.edge_at_or_after(last_now.saturating_add(cpu.cycles(jump)));
                for o in &mut open_loop {
                    o.warm_until(resume, cfg.cpus as u32, &mut mem)?;
                }
                if let Some(g) = &mut gpu {
                    g.warm_and_resume(last_now, resume, &mut mem, cfg.cpus as u32)?;
                }
                s.resume(resume, &mut cores);
                for i in 0..n {
                    if !finished[i] {
                        wake[i] = Some(resume);
                    }
                }
                mem.last_progress = resume;
                advanced_at.fill(resume);
            }
        }
        let holding = sampler.as_ref().is_some_and(|s| s.draining());
        let tc = wake
            .iter()
            .flatten()
            .copied()
            .chain(
                open_loop
                    .iter()
                    .filter(|_| !holding)
                    .filter_map(|o| o.next_tick()),
            )
            .chain(gpu.as_ref().and_then(|g| g.wake))
            .min();
        let te = mem.next_event();
        let now = match (tc, te) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => bail!(
                "deadlock: no core can run and nothing is in flight; oldest request: {}",
                mem.oldest_outstanding()
            ),
        };
        if now > end_of_time {
            bail!(
                "the run reached cycle {}, beyond the maximum of {MAX_CYCLE} (2^62) CPU cycles \
                 or half the 64-bit tick range; {}",
                cpu.cycle(now),
                core_states(&agents, &names, &cores, &wake, &finished, cpu)
            );
        }
        last_now = now;
        if let Some(r) = &mut recorder {
            r.before_step(now, &mem, &cores, gpu.as_ref(), &ctx);
        }
        if now > mem.last_progress.saturating_add(watchdog) && mem.busy() {
            bail!(
                "deadlock: no data delivered for {} cycles; oldest request: {}",
                t.watchdog_cycles,
                mem.oldest_outstanding()
            );
        }
        // The timed GPU models report their own deadlocks; a GPU cycle counts as progress.
        let gpu_active = gpu.as_ref().is_some_and(|g| g.wake.is_some());
        let last_retire = advanced_at.iter().copied().max().unwrap_or(0);
        if !gpu_active && now > mem.last_progress.max(last_retire).saturating_add(watchdog) {
            bail!(
                "no progress: no instruction retired and no data delivered for {} cycles \
                 (timing.watchdog_cycles), at cycle {}; {}; oldest request: {}",
                t.watchdog_cycles,
                cpu.cycle(now),
                core_states(&agents, &names, &cores, &wake, &finished, cpu),
                mem.oldest_outstanding()
            );
        }
        mem.run_events(now)?;
        if !holding {
            for o in &mut open_loop {
                o.inject_due(now, &mut mem)?;
            }
        }
        for (a, tok, at) in std::mem::take(&mut mem.completions) {
            if a as usize == cfg.cpus {
                if let Some(g) = &mut gpu {
                    g.complete(tok, at);
                }
                continue;
            }
            let Some(i) = by_slot.get(a as usize).copied().flatten() else {
                continue;
            };
            cores[i].complete(tok, at);
            let e = cpu.edge_at_or_after(at);
            wake[i] = Some(wake[i].map_or(e, |w| w.min(e)));
        }
        if now >= next_feedback {
            next_feedback = now - now % feedback_every + feedback_every;
            // A core that stops advancing while others (or the GPU) keep the machine busy is
            // as stuck as a machine that stops: each unfinished core must advance within the
            // watchdog too.
            if let Some(i) = (0..n).find(|&i| {
                !finished[i] && !holding && now > advanced_at[i].saturating_add(watchdog)
            }) {
                bail!(
                    "no progress on {} ({}): no instruction retired for {} cycles \
                     (timing.watchdog_cycles), at cycle {}; {}; oldest request: {}",
                    agents[i],
                    names[i],
                    t.watchdog_cycles,
                    cpu.cycle(now),
                    core_states(&agents, &names, &cores, &wake, &finished, cpu),
                    mem.oldest_outstanding()
                );
            }
            hints.step(now, &mut mem, gpu.as_ref());
            let llc = mem.h.llc_mut();
            llc.feedback(&Feedback::Tick {
                cycle: cpu.cycle(now),
            });
            for i in 0..n {
                let r = cores[i].stats().instructions;
                if r > last_retired[i] {
                    llc.feedback(&Feedback::RetiredInstructions {
                        core: slot(i),
                        count: r - last_retired[i],
                    });
                    last_retired[i] = r;
                }
            }
            if let Some(g) = &mut gpu {
                g.core_feedback(&mut gpu_feedback);
                for f in gpu_feedback.drain(..) {
                    llc.feedback(&f);
                }
            }
        }
        for i in 0..n {
            if wake[i] != Some(now) {
                continue;
            }
            let mut port = CorePort {
                mem: &mut mem,
                agent: slot(i),
            };
            let w = cores[i].cycle(now, &mut port).with_context(|| {
                format!("{} ({}) at cycle {}", agents[i], names[i], cpu.cycle(now))
            })?;
            mem.take_error()
                .with_context(|| format!("{} at cycle {}", agents[i], cpu.cycle(now)))?;
            wake[i] = match w {
                Wake::At(t) => Some(t.max(now + 1)),
                Wake::OnCompletion => None,
                Wake::Finished => {
                    finished[i] = true;
                    None
                }
            };
            let s = cores[i].stats();
            // Instructions the program has advanced: retired, and taken by warming.
            let progress = s.instructions + s.warmed;
            if progress != advanced[i] {
                advanced[i] = progress;
                advanced_at[i] = now;
            }
            let p = std::mem::replace(&mut phase[i], Phase::Warming);
            phase[i] = match p {
                Phase::Warming if progress >= opts.warmup || finished[i] => {
                    let snap = Box::new(snapshot(&mem, cores[i].as_ref(), i));
                    if finished[i] {
                        Phase::Done(snap.clone(), snap, false)
                    } else {
                        Phase::Measuring(snap)
                    }
                }
                // The target counts from where the measured window began, as ChampSim's
                // phases do: the warm-up may end a few instructions past `warmup` (a cycle
                // retires several), and the window still holds at least `target`.
                Phase::Measuring(start)
                    if finished[i]
                        || opts.instructions.is_some_and(|target| {
                            progress >= start.progress().saturating_add(target)
                        }) =>
                {
                    let reached = opts
                        .instructions
                        .is_none_or(|target| progress >= start.progress().saturating_add(target));
                    Phase::Done(
                        start,
                        Box::new(snapshot(&mem, cores[i].as_ref(), i)),
                        reached,
                    )
                }
                other => other,
            };
        }
        if let Some(g) = gpu.as_mut().filter(|g| g.wake == Some(now)) {
            let cpus_running = phase.iter().any(|p| !matches!(p, Phase::Done(..)));
            g.cycle(now, &mut mem, cfg.cpus as u32, cpus_running)?;
        }
        if let Some(s) = &mut sampler {
            let counts: Vec<bool> = phase
                .iter()
                .map(|p| matches!(p, Phase::Measuring(_)))
                .collect();
            s.after_step(now, cpu, &mut cores, &counts);
            if let Some(g) = &mut gpu {
                if s.draining() {
                    g.freeze(now);
                } else if s.in_window() {
                    g.window_started(now);
                }
            }
        }
        if let Some(r) = recorder.as_mut().filter(|r| r.counts_instructions()) {
            let retired = cores.iter().map(|c| c.stats().instructions).sum();
            r.after_step(now, retired, &mem, &cores, gpu.as_ref(), &ctx);
        }
        if window_start.is_none() && !phase.iter().any(|p| matches!(p, Phase::Warming)) {
            window_start = Some(SystemSnapshot::take(now, &mem));
        }
        if window_start.is_some() {
            occupancy.maybe_read(now, &mem.h);
        }
        steps += 1;
        if steps & 0xFFFF == 0 {
            // Instructions done: retired in detail, or taken by functional warming.
            let done = |c: &dyn CoreModel| {
                let s = c.stats();
                s.instructions + s.warmed
            };
            let total: u64 = cores.iter().map(|c| done(c.as_ref())).sum();
            let cycle = cpu.cycle(now);
            // How far the slowest core is on its way to warm-up plus target: the run's end.
            let slowest = opts.instructions.and_then(|t| {
                let whole = opts.warmup.saturating_add(t);
                let least = cores.iter().map(|c| done(c.as_ref())).min()?;
                Some(100.0 * (least as f64 / whole as f64).min(1.0))
            });
            let gpu_done = gpu
                .as_ref()
                .and_then(TimedGpu::progress)
                .map(|g| format!("; {g}"))
                .unwrap_or_default();
            progress.show(|secs| {
                let rate = total as f64 / secs / 1e6;
                let share = slowest
                    .map(|p| format!("; slowest core {p:.1}% through warm-up and target"))
                    .unwrap_or_default();
                format!(
                    "{total} instructions, cycle {cycle} ({rate:.2} M instructions/s){share}{gpu_done}"
                )
            });
        }
    }
    progress.finish();
    mem.h.finish()?;
    if let Some(r) = &mut recorder {
        r.finish(last_now, &mem, &cores, gpu.as_ref(), &ctx);
    }

    // A core whose program held no instruction at all: an empty input, refused as
    // `apusim run` refuses one (a program with instructions retires at least one, since every
    // core ends at its target or its program's end).
    for i in 0..n {
        let s = cores[i].stats();
        if s.instructions + s.warmed == 0 {
            bail!(
                "{}: the input holds no instructions, so there is nothing to simulate",
                names[i]
            );
        }
    }
    let mut results = Vec::new();
    let mut end_cycles = 0;
    for i in 0..n {
        let Phase::Done(start, end, reached) = &phase[i] else {
            unreachable!("the loop ends when every core is done")
        };
        end_cycles = end_cycles.max(end.core.cycles);
        let mut c = core_window(agents[i], start, end, &level_names, cpu);
        c.reached_target = *reached;
        c.restarts = restarts[i]
            .as_ref()
            .map_or(0, |c| c.load(Ordering::Relaxed));
        results.push(c);
    }
    let sampling = sampler.map(|s| {
        let names: Vec<String> = agents.iter().map(|a| a.to_string()).collect();
        s.finish(&names, &cores)
    });
    // A sampled core's IPC is its estimate (its cycles include the clock's jumps).
    if let Some(sm) = &sampling {
        for (c, e) in results.iter_mut().zip(&sm.cores) {
            if let Some(ipc) = e.ipc {
                c.ipc = ipc.value;
            }
        }
    }
    occupancy.read(&mem.h);
    let end = SystemSnapshot::take(last_now, &mem);
    let start = window_start.unwrap_or_else(|| SystemSnapshot::take(last_now, &mem));
    let system = system_window(&start, &end, cfg, cpu, uncore);
    Ok(SimResult {
        policy: String::new(),
        cores: results,
        cycles: end_cycles,
        system,
        open_loop_restarts: open_loop.iter().map(|o| o.restarts).sum(),
        gpu: gpu.map(|mut g| g.result(&mem)),
        policy_stats: mem.h.llc().policy().stats(),
        llc_occupancy: occupancy.result(&mem.h),
        sampling,
        intervals: recorder.map(|r| r.intervals).unwrap_or_default(),
        speedup: None,
        hints: hints.counters(),
        dram_scheduler: mem.dram.scheduler_stats(),
        functional: mem.h.stats(),
        seconds: 0.0,
    })
}

/// Each core's state, for a report of a run that stopped: its input, the instructions it
/// has advanced, and what it waits for.
fn core_states(
    agents: &[Agent],
    names: &[String],
    cores: &[Box<dyn CoreModel>],
    wake: &[Option<Tick>],
    finished: &[bool],
    cpu: Domain,
) -> String {
    let states: Vec<String> = (0..agents.len())
        .map(|i| {
            let s = cores[i].stats();
            let state = match wake[i] {
                _ if finished[i] => "finished".to_string(),
                Some(t) => format!("next step at cycle {}", cpu.cycle(t)),
                None => "waiting for a completion".to_string(),
            };
            format!(
                "{} ({}): {} instructions, {state}",
                agents[i],
                names[i],
                s.instructions + s.warmed
            )
        })
        .collect();
    if states.is_empty() {
        "no CPU cores".to_string()
    } else {
        format!("cores: {}", states.join("; "))
    }
}

/// The clock of a GPU input: a trace replayed open-loop keeps its header's (its time stamps
/// count those cycles), else the configured GPU clock; a program on the timed GPU runs at the
/// configured clock (the GPU is the system's, the program has no clock of its own).
fn gpu_clock(cfg: &SystemConfig, input: &Input) -> Result<Clock> {
    if input.program.is_some() {
        return Ok(Clock::mhz(cfg.gpu_clock_mhz)?);
    }
    let mhz = input
        .source
        .header()
        .agents
        .first()
        .map(|a| a.clock_mhz)
        .filter(|&c| c > 0)
        .unwrap_or(cfg.gpu_clock_mhz);
    Ok(Clock::mhz(mhz)?)
}

/// The clocks of the GPU inputs (the time base must be known before inputs are consumed).
fn open_loop_clocks(cfg: &SystemConfig, inputs: &[Input]) -> Result<Vec<Clock>> {
    let mut v = Vec::new();
    for input in inputs {
        if core_of(input)?.is_gpu() {
            v.push(gpu_clock(cfg, input)?);
        }
    }
    Ok(v)
}
