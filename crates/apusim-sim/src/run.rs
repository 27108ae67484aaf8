//! The functional run: merge the agents' traces in global time and feed the hierarchy.
//!
//! Each input is a source of accesses in its agents' own time. A time stamp becomes global
//! time by scaling with the agent's clock: with `L` the least common multiple of every clock
//! in the run (MHz), one unit of an agent at `f` MHz is `L / f` global ticks, so the merge is
//! exact integer arithmetic. Agents whose header gives no clock (instruction-counted CPU
//! traces) run at the configured core clock, one instruction per cycle. Ties go to the input
//! listed first, so a run is deterministic.

use crate::config::SystemConfig;
use crate::hierarchy::Hierarchy;
use crate::stats::RunStats;
use anyhow::{bail, Context, Result};
use apusim_cache::policies::{self, PolicyVisitor};
use apusim_cache::{Policy, PolicyContext};
pub use apusim_timing::gpu::GpuProgram;
use apusim_trace::{Access, AccessSource, Agent};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Something that can open the run's inputs afresh (each policy of a comparison reads them
/// again, so a trace is never held in memory).
pub trait Inputs: Sync {
    /// Open every input. An input may be remapped to one agent (for single-agent traces).
    fn open(&self) -> Result<Vec<Input>>;
    /// A short description for reports.
    fn describe(&self) -> String;
    /// A stable identity of each input, in the order `open` returns them, for caches of
    /// results derived from one input (the alone runs of weighted speedup); `None` when the
    /// inputs cannot be identified, and such results are then never cached.
    fn keys(&self) -> Option<Vec<String>> {
        None
    }
    /// A way to open input `index` again from its start, usable from any thread for as long
    /// as the run lasts (a timed run replays a trace that ends before its core's target, as
    /// ChampSim does); `None` when the input cannot be reopened.
    fn reopen(&self, index: usize) -> Option<Reopen> {
        let _ = index;
        None
    }
}

/// Opens one input again from its start (see [`Inputs::reopen`]).
pub type Reopen = Box<dyn Fn() -> Result<Input> + Send + Sync>;

/// One opened input.
pub struct Input {
    pub name: String,
    pub source: Box<dyn AccessSource>,
    /// If set, every access of this input is attributed to this agent.
    pub remap: Option<Agent>,
    /// A ChampSim trace that timed runs read natively: its instructions keep the trace's
    /// register dependences and branches (`apusim_timing::ChampSimInstrs`), where `source`
    /// (the same trace as access records) gives only what functional runs need.
    pub champsim: Option<std::path::PathBuf>,
    /// A GPU program — GPGPU kernels as per-warp instruction streams, or a scene's render
    /// work — which a timed run executes on its timed GPU (`timing.gpu`, `timing.render`)
    /// instead of replaying `source` at its time stamps.
    pub program: Option<GpuProgram>,
}

/// Options of a run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Show a progress bar on a terminal for runs longer than a second.
    pub progress: bool,
    /// Stop after this many trace accesses.
    pub limit: Option<u64>,
    /// drp §3's method for runs of several programs: inputs that end early start again
    /// until every input has ended once ([`simulate_with_restarts`]); `false` runs each
    /// input once.
    pub continue_to_run: bool,
    /// Experiment switches at the LLC (ideal streams, forced bypass, LLC trace dump).
    pub llc_switches: crate::LlcSwitches,
}

/// The result of one policy's run (kept whole in a results database by [`crate::stored`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    pub policy: String,
    pub stats: RunStats,
    /// Wall-clock seconds the simulation took (not part of any comparison of results).
    #[serde(skip)]
    pub seconds: f64,
}

pub use crate::progress::{count_bar, Progress};

/// Run `f` on a pool of `threads` workers (the global pool, every core, when unset).
pub fn in_pool<T: Send>(threads: Option<usize>, f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    match threads {
        Some(0) => bail!("threads must be at least 1"),
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .context("building the thread pool")?
            .install(f),
        None => f(),
    }
}

/// Build the policy context of `cfg`'s LLC.
pub fn policy_context(cfg: &SystemConfig) -> Result<PolicyContext> {
    let g = crate::config::parse_geometry(&cfg.llc.geometry)?;
    Ok(PolicyContext {
        sets: g.sets() as usize,
        ways: g.ways as usize,
        line_bytes: g.line,
        n_cpus: cfg.cpus,
        banks: cfg.llc.banks,
        seed: cfg.seed,
        params: cfg.llc.params.clone(),
        gpu_write_rules: cfg.llc.gpu_write_rules,
        layout: apusim_cache::SetLayout::Auto,
    })
}

/// Run `policy` over `inputs` on the system `cfg`.
pub fn run_policy(
    cfg: &SystemConfig,
    policy: &str,
    inputs: &dyn Inputs,
    opts: &RunOptions,
) -> Result<RunResult> {
    let ctx = policy_context(cfg)?;
    let start = Instant::now();
    let stats = policies::build(policy, &ctx, Simulate { cfg, inputs, opts })??;
    Ok(RunResult {
        policy: policy.to_string(),
        stats,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// Run several policies over the same inputs, in parallel across cores; results in the order
/// given. Results do not depend on the number of threads.
pub fn run_policies(
    cfg: &SystemConfig,
    names: &[String],
    inputs: &dyn Inputs,
    opts: &RunOptions,
) -> Result<Vec<RunResult>> {
    if opts.llc_switches.dump_llc_trace.is_some() && names.len() > 1 {
        anyhow::bail!("--dump-llc-trace writes one policy's LLC stream: give a single --policy");
    }
    opts.llc_switches.validate()?;
    // Check every name first, so a typo fails before hours of simulation.
    for n in names {
        if policies::info(n).is_none() {
            policies::build(n, &policy_context(cfg)?, NameCheck)?;
        }
    }
    policies::check_params(names, &cfg.llc.params, cfg.llc.gpu_write_rules)?;
    let progress = opts.progress && names.len() == 1;
    // Several policies: one display counting finished policies.
    let several = opts.progress && names.len() > 1;
    crate::progress::par_map_counted(names, names.len(), "policies done", several, |n| {
        let o = RunOptions {
            progress,
            ..opts.clone()
        };
        run_policy(&cfg.for_policy(n), n, inputs, &o).with_context(|| format!("policy {n}"))
    })
}

struct NameCheck;
impl PolicyVisitor for NameCheck {
    type Output = ();
    fn visit<P: Policy>(self, _: P) {}
}

struct Simulate<'a> {
    cfg: &'a SystemConfig,
    inputs: &'a dyn Inputs,
    opts: &'a RunOptions,
}

impl PolicyVisitor for Simulate<'_> {
    type Output = Result<RunStats>;
    fn visit<P: Policy>(self, policy: P) -> Result<RunStats> {
        let mut h = Hierarchy::new(self.cfg, policy)?;
        h.set_llc_switches(&self.opts.llc_switches, self.cfg)?;
        let inputs = self.inputs.open()?;
        let stats = match self.opts.continue_to_run {
            false => simulate(&mut h, self.cfg, inputs, self.opts)?,
            true => {
                let reopen = (0..inputs.len()).map(|i| self.inputs.reopen(i)).collect();
                simulate_with_restarts(&mut h, self.cfg, inputs, reopen, self.opts)?
            }
        };
        h.finish()?;
        Ok(stats)
    }
}

/// An input being merged: its buffered batch and per-agent time scale.
struct Cursor {
    input: Input,
    buf: Vec<Access>,
    pos: usize,
    /// Global ticks per time unit, indexed by agent byte.
    scale: [u64; 129],
    done: bool,
    /// Global ticks added to every time stamp: where the current pass started (0 on the
    /// first pass of an input).
    base: u64,
    /// Instructions retired by the input's earlier passes.
    instr_base: u64,
    /// Passes of the input started after its first.
    restarts: u64,
    /// Whether the input has ended once (see [`simulate_with_restarts`]).
    ended_once: bool,
}

impl Cursor {
    /// Make sure the buffer has an access unless the input is exhausted.
    fn fill(&mut self) -> Result<()> {
        if self.pos < self.buf.len() || self.done {
            return Ok(());
        }
        self.buf.clear();
        self.pos = 0;
        while self.buf.is_empty() {
            let more = self
                .input
                .source
                .next_batch(&mut self.buf)
                .with_context(|| format!("reading {}", self.input.name))?;
            if !more {
                self.done = self.buf.is_empty();
                break;
            }
        }
        if let Some(a) = self.input.remap {
            for acc in &mut self.buf {
                acc.agent = a;
            }
        }
        Ok(())
    }

    /// Start the input again from its beginning, its time stamps following on from `last`,
    /// the final access of the pass that ended ([`simulate_with_restarts`]).
    fn restart(&mut self, last: &Access, reopen: Option<&Reopen>) -> Result<()> {
        let Some(reopen) = reopen else {
            bail!(
                "{} ended before the other inputs and cannot be opened again to continue \
                 running (drp §3's method needs every input replayable)",
                self.input.name
            );
        };
        self.restarts += 1;
        if self.restarts > apusim_timing::replay::MAX_RESTARTS {
            bail!(
                "{} ended {} times before the other inputs ended once; give it a longer \
                 trace (or the others shorter ones)",
                self.input.name,
                apusim_timing::replay::MAX_RESTARTS
            );
        }
        // One time unit after the pass's last access, so the passes never overlap.
        let unit = self.scale[last.agent.to_byte() as usize];
        self.base = last
            .time
            .saturating_mul(unit)
            .saturating_add(self.base)
            .saturating_add(unit);
        if last.agent.is_cpu() {
            self.instr_base += last.time + 1;
        }
        let remap = self.input.remap;
        self.input = reopen().with_context(|| format!("opening {} again", self.input.name))?;
        self.input.remap = remap.or(self.input.remap);
        self.done = false;
        self.fill()?;
        if self.done {
            bail!(
                "{}: opened again, the input holds no accesses",
                self.input.name
            );
        }
        Ok(())
    }

    #[inline]
    fn head_time(&self) -> Option<u64> {
        self.buf.get(self.pos).map(|a| {
            a.time
                .saturating_mul(self.scale[a.agent.to_byte() as usize])
                .saturating_add(self.base)
        })
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Merge `inputs` in global time through `h`, returning the final statistics. Each input
/// runs once, to its end (`opts.continue_to_run` is not looked at: see
/// [`simulate_with_restarts`]).
pub fn simulate<P: Policy>(
    h: &mut Hierarchy<P>,
    cfg: &SystemConfig,
    inputs: Vec<Input>,
    opts: &RunOptions,
) -> Result<RunStats> {
    let none = inputs.iter().map(|_| None).collect();
    merge(h, cfg, inputs, none, false, opts)
}

/// [`simulate`] with drp §3's method for runs of several programs: "each CPU application
/// ... commits at least 250 million representative dynamic instructions and early-finishing
/// applications continue to run until each CPU application commits its representative set
/// of dynamic instructions and the GPU completes rendering the set of 3D frames or the
/// portion of the CUDA application assigned to it", as `apusim sim` runs them.
///
/// Each input's representative set is its whole trace (a mix's CPU jobs are generated at the
/// length asked for: `apusim run --mix --instructions`). An input that ends before every
/// input has ended once starts again from its beginning (`reopen`, as a timed run replays a
/// trace), its time stamps following on from where its pass ended, at most
/// [`apusim_timing::replay::MAX_RESTARTS`] times; the run ends the moment the last input
/// ends its first pass. Every access of every pass is counted: the later passes are the
/// interference the others see. A CPU core's instructions are those of all its passes.
pub fn simulate_with_restarts<P: Policy>(
    h: &mut Hierarchy<P>,
    cfg: &SystemConfig,
    inputs: Vec<Input>,
    reopen: Vec<Option<Reopen>>,
    opts: &RunOptions,
) -> Result<RunStats> {
    merge(h, cfg, inputs, reopen, true, opts)
}

/// The merge behind [`simulate`] (`restart` false: every input once) and
/// [`simulate_with_restarts`].
fn merge<P: Policy>(
    h: &mut Hierarchy<P>,
    cfg: &SystemConfig,
    inputs: Vec<Input>,
    mut reopen: Vec<Option<Reopen>>,
    restart: bool,
    opts: &RunOptions,
) -> Result<RunStats> {
    let clock_of = |input: &Input, a: Agent| -> u64 {
        let header = input.source.header();
        let from_header = header
            .agent(a)
            .or_else(|| input.remap.and(header.agents.first()))
            .map(|i| i.clock_mhz)
            .unwrap_or(0);
        let c = if from_header > 0 {
            from_header
        } else if a.is_gpu() {
            cfg.gpu_clock_mhz
        } else {
            cfg.cpu_clock_mhz
        };
        c.max(1) as u64
    };
    let all_agents: Vec<Agent> = (0..=Agent::GPU_ID).filter_map(Agent::from_byte).collect();
    let mut lcm = 1u64;
    for input in &inputs {
        for a in &all_agents {
            let c = clock_of(input, *a);
            lcm = lcm / gcd(lcm, c) * c;
        }
    }
    let mut cursors: Vec<Cursor> = inputs
        .into_iter()
        .map(|input| {
            let mut scale = [1u64; 129];
            for a in &all_agents {
                scale[a.to_byte() as usize] = lcm / clock_of(&input, *a);
            }
            Cursor {
                input,
                buf: Vec::with_capacity(apusim_trace::BATCH),
                pos: 0,
                scale,
                done: false,
                base: 0,
                instr_base: 0,
                restarts: 0,
                ended_once: false,
            }
        })
        .collect();
    reopen.resize_with(cursors.len(), || None);
    // Inputs that have not ended once yet.
    let mut running = cursors.len();

    let mut instructions = vec![0u64; cfg.cpus + 1];
    let mut seen = [false; 129];
    let mut count = 0u64;
    let limit = opts.limit.unwrap_or(u64::MAX);
    let mut progress = Progress::new(opts.progress);
    for c in cursors.iter_mut() {
        c.fill()?;
        if c.done {
            bail!(
                "{}: the input holds no accesses, so there is nothing to simulate",
                c.input.name
            );
        }
    }
    'merge: loop {
        // The input with the earliest head, and the earliest head among the others.
        let mut best: Option<(usize, u64)> = None;
        let mut second = u64::MAX;
        for (i, c) in cursors.iter().enumerate() {
            if let Some(t) = c.head_time() {
                match best {
                    Some((_, bt)) if t >= bt => second = second.min(t),
                    Some((_, bt)) => {
                        second = bt;
                        best = Some((i, t));
                    }
                    None => best = Some((i, t)),
                }
            }
        }
        let Some((i, _)) = best else { break };
        let c = &mut cursors[i];
        // Drain the chosen input while it stays strictly earliest (ties go to lower index,
        // which the scan above already preferred).
        loop {
            let acc = c.buf[c.pos];
            let byte = acc.agent.to_byte() as usize;
            if !seen[byte] {
                h.check_agent(acc.agent)
                    .with_context(|| format!("in {}", c.input.name))?;
                seen[byte] = true;
            }
            h.access(&acc).with_context(|| {
                format!("simulating access {count} of the run ({})", c.input.name)
            })?;
            if acc.agent.is_cpu() {
                let slot = &mut instructions[acc.agent.dense_index(cfg.cpus)];
                *slot = (*slot).max(c.instr_base + acc.time);
            }
            count += 1;
            c.pos += 1;
            if count >= limit {
                break 'merge;
            }
            if count & 0xF_FFFF == 0 {
                progress.show(|secs| {
                    let rate = count as f64 / secs / 1e6;
                    format!("{count} accesses ({rate:.1} M/s)")
                });
            }
            let last = acc;
            c.fill()?;
            if c.done && restart {
                if !c.ended_once {
                    c.ended_once = true;
                    running -= 1;
                }
                if running == 0 {
                    break 'merge;
                }
                c.restart(&last, reopen[i].as_ref())?;
            }
            match c.head_time() {
                Some(t) if t < second => continue,
                _ => break,
            }
        }
    }
    progress.finish();
    let mut stats = h.stats();
    // Instruction counts are only meaningful for instruction-counted (clockless) CPU inputs.
    stats.instructions = instructions;
    stats.trace_accesses = count;
    Ok(stats)
}
