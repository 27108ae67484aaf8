//! Offline oracle studies of a last-level-cache access stream: Belady's OPT, oracle bypass, and
//! the reuse characterization of the graphics streams.
//!
//! The papers evaluate online LLC policies against offline oracles that know the future of an
//! LLC access trace (drp-reuse-probability-shared-llc.txt §4.1, Fig. 2: OPT, OPT+Bypass,
//! Baseline+Bypass; gspc-graphics-stream-llc.txt §2, Figs. 1 and 5–9: Belady's optimal policy
//! and the inter-/intra-stream reuse and epoch analysis). This crate runs those studies on any
//! [`AccessSource`] — typically an `.apt` file of LLC accesses.
//!
//! The central types:
//! - [`NextUses`]: the next use of every line reference of a trace, computed by a streaming
//!   backward pass over temporary spill files, so traces larger than memory work. It depends on
//!   the line size only, so one computation serves every policy and geometry of that line size.
//! - [`OraclePolicy`]: what to run, parsed from a name — `opt` (Belady's MIN), `opt-bypass`
//!   (MIN plus the oracle bypass of GPU lines), `<policy>-bypass` (any registered policy of
//!   `apusim_cache::policies` with the oracle bypass on top, e.g. `srrip-bypass`,
//!   `drp-baseline-bypass`), or a plain registered policy name.
//! - [`OracleConfig`]: the cache geometry, whether CPU lines are kept inclusive, the spill
//!   options and the OPT tie-break.
//! - [`run`] replays a source with its [`NextUses`] through one policy and returns an
//!   [`OracleResult`]: per (agent, stream) reads, writes, writebacks and prefetches with their
//!   misses, bypasses and evictions, with `to_table`, `to_csv` and serde JSON. [`run_many`] does
//!   the whole job for several policies from a function that opens the source afresh.
//! - [`reuse::characterize`] runs one policy with the [`reuse::ReuseObserver`] attached and
//!   returns a [`reuse::ReuseReport`]: per-stream hit rates and zero-reuse evictions,
//!   render-target → texture consumption, texture and Z epoch statistics, and LRU stack-distance
//!   histograms.
//!
//! Every line reference (read, write, writeback, prefetch) is a use of its line, and every miss
//! allocates unless the oracle (or the registered policy itself) bypasses it; see `opt` for the
//! exact rules and `docs/oracles.md` for the choices made where the papers are silent.

mod engine_run;
pub mod error;
mod falru;
mod latest;
mod maxheap;
pub mod nextuse;
pub mod opt;
pub mod reuse;
pub mod sim;
pub mod stats;

pub use error::{OracleError, Result};
pub use nextuse::{NextUseReader, NextUses, SpillOptions, TraceCounts, NEVER};
pub use opt::{HeapOpt, ScanOpt, TieBreak};
pub use reuse::{characterize, ReuseObserver, ReuseReport};
pub use sim::{NoObserver, Observer, OracleBypass, RefSim};
pub use stats::{AgentStream, Counts, OracleResult};

use apusim_cache::policies;
use apusim_cache::{Geometry, PolicyContext};
use apusim_trace::AccessSource;
use std::fmt;
use std::str::FromStr;

/// A policy an oracle run can execute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OraclePolicy {
    /// Belady's MIN; with `bypass`, GPU lines farther than every line of their set bypass.
    Opt { bypass: bool },
    /// A registered policy run through the engine; with `bypass`, the oracle bypass on top.
    Registered { name: String, bypass: bool },
}

impl OraclePolicy {
    /// Parse `opt`, `opt-bypass`, `<registered>-bypass` or `<registered>`.
    pub fn parse(name: &str) -> Result<OraclePolicy> {
        let n = name.trim().to_ascii_lowercase();
        match n.as_str() {
            "opt" | "belady" | "min" => return Ok(OraclePolicy::Opt { bypass: false }),
            "opt-bypass" | "opt+bypass" => return Ok(OraclePolicy::Opt { bypass: true }),
            _ => {}
        }
        if policies::info(&n).is_some() {
            return Ok(OraclePolicy::Registered {
                name: n,
                bypass: false,
            });
        }
        if let Some(base) = n
            .strip_suffix("-bypass")
            .or_else(|| n.strip_suffix("+bypass"))
        {
            if policies::info(base).is_some() {
                return Ok(OraclePolicy::Registered {
                    name: base.to_string(),
                    bypass: true,
                });
            }
        }
        let known: Vec<&str> = policies::REGISTRY.iter().map(|p| p.name).collect();
        Err(OracleError::Policy(format!(
            "unknown oracle policy `{name}`: expected `opt`, `opt-bypass`, a registered policy \
             or `<registered>-bypass`; registered policies: {}",
            known.join(", ")
        )))
    }

    /// Parse a comma-separated list (`opt,opt-bypass,srrip-bypass`).
    pub fn parse_list(list: &str) -> Result<Vec<OraclePolicy>> {
        let v: Vec<OraclePolicy> = list
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(OraclePolicy::parse)
            .collect::<Result<_>>()?;
        if v.is_empty() {
            return Err(OracleError::Policy(format!(
                "no policy in `{list}`: name at least one (e.g. `opt`)"
            )));
        }
        Ok(v)
    }

    /// True if the run needs next uses (everything but a plain registered policy).
    pub fn needs_next_uses(&self) -> bool {
        !matches!(self, OraclePolicy::Registered { bypass: false, .. })
    }
}

impl fmt::Display for OraclePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OraclePolicy::Opt { bypass: false } => f.write_str("opt"),
            OraclePolicy::Opt { bypass: true } => f.write_str("opt-bypass"),
            OraclePolicy::Registered {
                name,
                bypass: false,
            } => f.write_str(name),
            OraclePolicy::Registered { name, bypass: true } => write!(f, "{name}-bypass"),
        }
    }
}

impl FromStr for OraclePolicy {
    type Err = OracleError;
    fn from_str(s: &str) -> Result<Self> {
        OraclePolicy::parse(s)
    }
}

/// How to run an oracle study.
#[derive(Clone, Debug)]
pub struct OracleConfig {
    /// The simulated cache (the LLC). Fully associative when `ways * line == size`.
    pub geometry: Geometry,
    /// Refuse bypasses of CPU lines (the LLC of drp §3 keeps CPU data inclusive). The oracle
    /// never bypasses CPU lines; this makes the engine reject a registered policy that would.
    pub cpu_inclusive: bool,
    /// Which of several never-used-again lines OPT evicts (does not change miss counts).
    pub tie_break: TieBreak,
    /// Sets with more ways than this use the heap-based OPT ([`HeapOpt`]), others the scan.
    pub heap_above_ways: u32,
    /// Temporary files of the next-use pass.
    pub spill: SpillOptions,
}

impl OracleConfig {
    /// Defaults for `geometry`: CPU-inclusive, first-way tie-break, scan up to 64 ways.
    pub fn new(geometry: Geometry) -> OracleConfig {
        OracleConfig {
            geometry,
            cpu_inclusive: true,
            tie_break: TieBreak::First,
            heap_above_ways: ScanOpt::MAX_WAYS as u32,
            spill: SpillOptions::default(),
        }
    }
}

/// Run `policy` over `source` (a fresh replay of the trace `next_uses` was computed from).
/// `ctx` configures registered policies (agents, seed, parameters, write rules); its geometry
/// fields are overridden by `cfg.geometry`. `next_uses` may be `None` only for a plain
/// registered policy.
pub fn run(
    policy: &OraclePolicy,
    cfg: &OracleConfig,
    ctx: &PolicyContext,
    next_uses: Option<&NextUses>,
    source: &mut dyn AccessSource,
) -> Result<OracleResult> {
    run_observed(policy, cfg, ctx, next_uses, source, &mut NoObserver)
}

/// [`run`] with the [`ReuseObserver`] attached, for callers in other crates. Not generic, so the
/// replay loop of every registered policy is compiled here once rather than again in each
/// crate that runs it with this observer (release builds share no generic instances).
pub fn run_reuse(
    policy: &OraclePolicy,
    cfg: &OracleConfig,
    ctx: &PolicyContext,
    next_uses: Option<&NextUses>,
    source: &mut dyn AccessSource,
    observer: &mut ReuseObserver,
) -> Result<OracleResult> {
    run_observed(policy, cfg, ctx, next_uses, source, observer)
}

/// [`run`] with an [`Observer`] that sees every line reference and its outcome. Generic: each
/// observer type compiles the replay loop of every registered policy, so callers outside this
/// crate use [`run`] or [`run_reuse`] where they can.
pub fn run_observed<O: Observer>(
    policy: &OraclePolicy,
    cfg: &OracleConfig,
    ctx: &PolicyContext,
    next_uses: Option<&NextUses>,
    source: &mut dyn AccessSource,
    observer: &mut O,
) -> Result<OracleResult> {
    let g = cfg.geometry;
    g.validate()?;
    if let Some(n) = next_uses {
        if n.line_bytes() != g.line {
            return Err(OracleError::LineSize {
                computed: n.line_bytes(),
                cache: g.line,
            });
        }
        if n.counts().references == 0 {
            return Err(OracleError::EmptyTrace);
        }
    } else if policy.needs_next_uses() {
        return Err(OracleError::Policy(format!(
            "`{policy}` needs next uses: compute them with NextUses::compute first"
        )));
    }
    let name = policy.to_string();
    match policy {
        OraclePolicy::Opt { bypass } => {
            if g.ways <= cfg.heap_above_ways && g.ways as usize <= ScanOpt::MAX_WAYS {
                let mut sim = ScanOpt::new(&g, *bypass, cfg.tie_break)?;
                sim::drive(&mut sim, &name, g, next_uses, source, observer)
            } else {
                let mut sim = HeapOpt::new(&g, *bypass, cfg.tie_break)?;
                sim::drive(&mut sim, &name, g, next_uses, source, observer)
            }
        }
        OraclePolicy::Registered { name: base, bypass } => {
            let mut ctx = ctx.clone();
            ctx.params = policies::params_for(base, &ctx.params, ctx.gpu_write_rules);
            ctx.sets = g.sets() as usize;
            ctx.ways = g.ways as usize;
            ctx.line_bytes = g.line;
            policies::build(
                base,
                &ctx,
                engine_run::EngineRun {
                    name: &name,
                    ctx: &ctx,
                    geometry: g,
                    cpu_inclusive: cfg.cpu_inclusive,
                    bypass: *bypass,
                    next_uses,
                    source,
                    observer,
                },
            )?
        }
    }
}

/// Run every policy of `policies` over the trace that `open` opens (once for the next-use pass
/// if any policy needs it, then once per policy), in order.
pub fn run_many(
    open: &mut dyn FnMut() -> Result<Box<dyn AccessSource>>,
    policies: &[OraclePolicy],
    cfg: &OracleConfig,
    ctx: &PolicyContext,
) -> Result<Vec<OracleResult>> {
    cfg.geometry.validate()?;
    check_params(policies, ctx)?;
    let next_uses = if policies.iter().any(|p| p.needs_next_uses()) {
        let mut src = open()?;
        Some(NextUses::compute(&mut *src, cfg.geometry.line, &cfg.spill)?)
    } else {
        None
    };
    policies
        .iter()
        .map(|p| {
            let mut src = open()?;
            run(p, cfg, ctx, next_uses.as_ref(), &mut *src)
        })
        .collect()
}

/// Check `ctx.params` for a replay of `policies`: each key must be declared by one of the
/// registered policies among them, in range (`apusim_cache::policies::check_params`); each
/// is then built with the keys it declares.
pub fn check_params(policies: &[OraclePolicy], ctx: &PolicyContext) -> Result<()> {
    let registered: Vec<&str> = policies
        .iter()
        .filter_map(|p| match p {
            OraclePolicy::Registered { name, .. } => Some(name.as_str()),
            OraclePolicy::Opt { .. } => None,
        })
        .collect();
    apusim_cache::policies::check_params(&registered, &ctx.params, ctx.gpu_write_rules)?;
    Ok(())
}

/// Open an `.apt` file as a boxed source (for [`run_many`] and [`characterize`]).
pub fn open_apt(path: &std::path::Path) -> Result<Box<dyn AccessSource>> {
    Ok(apusim_trace::apt::ParallelAptReader::open_default(path)?)
}

/// Open an access stream in any format the importers read: `format`, or when `None` the one
/// sniffed from its first bytes and name (`.apt`, libCacheSim `oracleGeneral` and
/// `oracleGeneralOpNS`, lackey, ChampSim, CSV), read with `opts` (libCacheSim's trace
/// parameters among them). The error names the file.
pub fn open_any(
    path: &std::path::Path,
    format: Option<apusim_trace::import::Format>,
    opts: &apusim_trace::import::ImportOptions,
) -> Result<Box<dyn AccessSource>> {
    Ok(apusim_trace::import::open(path, format, opts)?)
}

#[cfg(test)]
mod tests;
