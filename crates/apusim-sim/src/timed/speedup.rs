//! Multiprogram metrics of a timed run: weighted speedup, harmonic speedup, maximum slowdown.
//!
//! Each CPU job's IPC in the mix is compared with its IPC *alone*: the same job on the same
//! system (same configuration, same core, same warm-up and instruction target) with every
//! other core idle and the GPU silent (drp §1 "CPU jobs standalone by keeping the GPU free";
//! gpu-access-criticality §5 weighs CPU mixes by weighted speedup). With `s_i` the IPC of job
//! `i` in the mix and `a_i` alone:
//!
//! - weighted speedup `Σ s_i / a_i` (Snavely and Tullsen),
//! - harmonic speedup `n / Σ (a_i / s_i)` (Luo et al.),
//! - maximum slowdown `max a_i / s_i`.
//!
//! A GPGPU program on the timed GPU is compared with its own alone run too (the GPU with
//! every core idle, drp §3's standalone GPU): its slowdown is its execution cycles in the
//! mix over its cycles alone ([`GpuSpeedup`]), reported beside the CPU metrics, which it
//! does not enter (the papers report CPU and GPU performance separately).
//!
//! The alone runs use one fixed LLC policy for every policy compared ([`AloneOptions::policy`],
//! `lru` by default, as the papers normalise to an LRU baseline), so the denominators are the
//! same for every policy and weighted speedups of two policies can be divided. They are made
//! automatically, in parallel, and cached on disk as small JSON files keyed by everything that
//! decides their result: the simulator build, the whole system configuration, the policy, the
//! warm-up and target, the input's identity and its core. A second study over the same mix
//! reads them back instead of simulating them again.

pub use super::sim::{GpuSpeedup, JobSpeedup, Speedup};

use super::ratio::ratio;
use super::sim::{core_of, sim_policy, SimOptions, SimResult};
use crate::config::SystemConfig;
use crate::report::write_atomic;
use crate::run::{Input, Inputs};
use anyhow::{bail, Context, Result};
use apusim_trace::hash::fnv1a;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// How the alone runs are made.
#[derive(Clone, Debug)]
pub struct AloneOptions {
    /// The LLC policy of every alone run.
    pub policy: String,
    /// Directory of cached alone results (`None`: always simulate).
    pub cache_dir: Option<PathBuf>,
    /// Identity of the simulator build; cached results of another build are not used.
    pub build_id: String,
}

impl AloneOptions {
    /// Alone runs under `policy`, cached in `cache_dir`, for the running executable.
    pub fn new(policy: &str, cache_dir: Option<PathBuf>) -> AloneOptions {
        AloneOptions {
            policy: policy.to_string(),
            cache_dir,
            build_id: build_id(),
        }
    }
}

/// The simulator build's identity when the running executable is not the simulator (a Python
/// interpreter that loaded the bindings), set by [`set_build_id`].
static BUILD_ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Name the simulator build for [`build_id`], for a host program whose own executable says
/// nothing of the simulator it loaded (the Python bindings pass their extension module's
/// length and modification time). The first call wins; false when the identity was set.
pub fn set_build_id(id: String) -> bool {
    BUILD_ID.set(id).is_ok()
}

/// The running executable's version, length and modification time (or the identity given to
/// [`set_build_id`]): a rebuilt simulator (whose timing may differ) does not reuse the alone
/// results of the previous one.
pub fn build_id() -> String {
    if let Some(id) = BUILD_ID.get() {
        return id.clone();
    }
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| std::fs::metadata(p).ok())
        .map(|m| {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos());
            format!("{}:{mtime}", m.len())
        })
        .unwrap_or_default();
    format!("{} {exe}", env!("CARGO_PKG_VERSION"))
}

/// One job run alone: a CPU job (instructions, cycles and IPC of its core) or the timed
/// GPU's program (warp instructions and GPU cycles).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct AloneRun {
    /// The input's name and the core it drives.
    pub input: String,
    pub agent: String,
    pub instructions: u64,
    pub cycles: u64,
    pub ipc: f64,
    /// A sampled run's IPC interval (half its width, 99.7%).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipc_half_width: Option<f64>,
    pub reached_target: bool,
    /// Read from the cache rather than simulated in this run.
    #[serde(skip)]
    pub cached: bool,
}

/// The metrics of `shared` against the alone runs of its CPU jobs.
pub fn speedup(shared: &SimResult, alone: &[AloneRun], alone_policy: &str) -> Result<Speedup> {
    let mut jobs = Vec::new();
    for c in &shared.cores {
        let a = alone
            .iter()
            .find(|a| a.agent == c.agent)
            .with_context(|| format!("no alone run of {}", c.agent))?;
        if a.ipc <= 0.0 {
            bail!(
                "{} ({}) retired no instructions alone, so its slowdown is undefined",
                a.agent,
                a.input
            );
        }
        jobs.push(JobSpeedup {
            agent: c.agent.clone(),
            ipc: c.ipc,
            alone_ipc: a.ipc,
            slowdown: if c.ipc > 0.0 {
                a.ipc / c.ipc
            } else {
                f64::INFINITY
            },
        });
    }
    let gpu = match &shared.gpu {
        Some(g) => {
            let a = alone
                .iter()
                .find(|a| a.agent == apusim_trace::Agent::GPU.to_string())
                .with_context(|| format!("no alone run of {}", g.agent))?;
            Some(GpuSpeedup {
                agent: g.agent.clone(),
                cycles: g.cycles,
                alone_cycles: a.cycles,
                slowdown: ratio(g.cycles, a.cycles),
            })
        }
        None => None,
    };
    if jobs.is_empty() {
        bail!("no CPU job to compare");
    }
    let weighted = jobs.iter().map(|j| j.ipc / j.alone_ipc).sum();
    let inverse: f64 = jobs.iter().map(|j| j.slowdown).sum();
    let weighted_half_width = shared.sampling.as_ref().map(|s| {
        jobs.iter()
            .map(|j| {
                let rel_mix = s
                    .cores
                    .iter()
                    .find(|c| c.agent == j.agent)
                    .and_then(|c| c.ipc)
                    .map_or(f64::INFINITY, |e| e.relative_error());
                let rel_alone = alone
                    .iter()
                    .find(|a| a.agent == j.agent)
                    .and_then(|a| a.ipc_half_width)
                    .map_or(0.0, |h| h / j.alone_ipc);
                j.ipc / j.alone_ipc * (rel_mix + rel_alone)
            })
            .sum()
    });
    Ok(Speedup {
        alone_policy: alone_policy.to_string(),
        weighted_half_width,
        harmonic: jobs.len() as f64 / inverse,
        max_slowdown: jobs.iter().map(|j| j.slowdown).fold(0.0, f64::max),
        gpu,
        weighted,
        jobs,
    })
}

/// One input of a list, alone.
struct Only<'a> {
    inner: &'a dyn Inputs,
    index: usize,
}

impl Inputs for Only<'_> {
    fn open(&self) -> Result<Vec<Input>> {
        let mut all = self.inner.open()?;
        if self.index >= all.len() {
            bail!("input {} of {} is gone", self.index, all.len());
        }
        Ok(vec![all.swap_remove(self.index)])
    }
    fn describe(&self) -> String {
        format!("input {} of {}", self.index, self.inner.describe())
    }
    fn reopen(&self, index: usize) -> Option<crate::run::Reopen> {
        (index == 0)
            .then(|| self.inner.reopen(self.index))
            .flatten()
    }
}

/// What a cached alone result is stored with: the whole key, checked on reading so that a
/// hash collision can never return another run's result.
#[derive(Serialize, Deserialize)]
struct CacheEntry {
    key: String,
    run: AloneRun,
}

/// Every CPU job of `inputs` run alone on `cfg` (from the cache where possible), in input
/// order. Runs that are not cached are simulated in parallel on the current rayon pool.
pub fn alone_runs(
    cfg: &SystemConfig,
    inputs: &dyn Inputs,
    opts: &SimOptions,
    alone: &AloneOptions,
) -> Result<Vec<AloneRun>> {
    // Open once to learn which inputs drive CPU cores (and, for generated mixes, to have
    // every trace cached before parallel runs open them).
    let opened = inputs.open()?;
    let keys = inputs.keys();
    if let Some(k) = &keys {
        if k.len() != opened.len() {
            bail!(
                "{}: {} input keys for {} inputs",
                inputs.describe(),
                k.len(),
                opened.len()
            );
        }
    }
    let mut jobs = Vec::new();
    for (i, input) in opened.iter().enumerate() {
        let agent = core_of(input)?;
        if agent.is_cpu() || input.program.is_some() {
            let key = keys
                .as_ref()
                .map(|k| cache_key(cfg, opts, alone, &k[i], agent));
            jobs.push((i, input.name.clone(), agent.to_string(), key));
        }
    }
    drop(opened);
    // Alone runs are sampled when the mix is (the same windows), without intervals, and on
    // the plain machine (no idealized streams or forced bypass), so the speedups of runs with
    // and without the LLC switches share their denominators.
    let solo = SimOptions {
        progress: false,
        interval: None,
        llc_switches: Default::default(),
        ..opts.clone()
    };
    // The alone runs come before the shared one, as one silent stretch otherwise: count them.
    let n = jobs.len();
    crate::progress::par_map_counted(
        jobs,
        n,
        "alone runs done",
        opts.progress,
        |(index, name, agent, key)| {
            if let (Some(dir), Some(key)) = (&alone.cache_dir, &key) {
                if let Some(run) = read_cached(dir, key) {
                    return Ok(run);
                }
            }
            let only = Only {
                inner: inputs,
                index,
            };
            let r = sim_policy(&cfg.for_policy(&alone.policy), &alone.policy, &only, &solo)
                .with_context(|| format!("{name} alone ({})", alone.policy))?;
            if let Some(g) = &r.gpu {
                let run = AloneRun {
                    input: name,
                    agent,
                    instructions: g.stats.warp_instructions,
                    cycles: g.cycles,
                    ipc: ratio(g.stats.warp_instructions, g.cycles),
                    ipc_half_width: None,
                    reached_target: true,
                    cached: false,
                };
                if let (Some(dir), Some(key)) = (&alone.cache_dir, key) {
                    write_cached(dir, key, &run)?;
                }
                return Ok(run);
            }
            let c = r
                .cores
                .first()
                .with_context(|| format!("{name} alone drove no core"))?;
            if let Some(s) = r.sampling.as_ref() {
                if s.cores.first().is_some_and(|c| c.windows == 0) {
                    bail!(
                        "{name} alone ({}): its target ended before the first sampling window \
                         (--sample-warmup {} + --sample-unit {} cycles of detail after each \
                         --sample-period {}), so it has no IPC to compare with; give more \
                         --instructions or shorter sampling sizes",
                        alone.policy,
                        s.spec.warmup_cycles(),
                        s.spec.unit,
                        s.spec.period
                    );
                }
            }
            // A sampled run's IPC is its estimate: the ratio of its windows' sums.
            let (instructions, cycles, half) =
                match r.sampling.as_ref().and_then(|s| s.cores.first()) {
                    Some(s) => (
                        s.measured_instructions,
                        s.measured_cycles,
                        s.ipc.map(|e| e.half_width),
                    ),
                    None => (c.instructions, c.cycles, None),
                };
            let run = AloneRun {
                input: name,
                agent,
                instructions,
                cycles,
                ipc: ratio(instructions, cycles),
                ipc_half_width: half,
                reached_target: c.reached_target,
                cached: false,
            };
            if let (Some(dir), Some(key)) = (&alone.cache_dir, key) {
                write_cached(dir, key, &run)?;
            }
            Ok(run)
        },
    )
}

/// The configuration an alone run under `policy` simulates, whatever the shared run's LLC
/// policy: every policy compared (and a sweep's every point) shares the alone runs of one
/// system.
pub fn alone_config(cfg: &SystemConfig, policy: &str) -> SystemConfig {
    let mut c = cfg.for_policy(policy);
    c.llc.policy = policy.to_string();
    c
}

fn cache_key(
    cfg: &SystemConfig,
    opts: &SimOptions,
    alone: &AloneOptions,
    input: &str,
    agent: apusim_trace::Agent,
) -> String {
    let simulated = alone_config(cfg, &alone.policy);
    format!(
        "apusim alone run 3\nbuild {}\nconfig {}\npolicy {}\nwarmup {}\ninstructions {:?}\n\
         sample {:?}\ninput {input}\ncore {agent}\n",
        alone.build_id,
        serde_json::to_string(&simulated).unwrap_or_default(),
        alone.policy,
        opts.warmup,
        opts.instructions,
        opts.sample,
    )
}

fn cache_path(dir: &std::path::Path, key: &str) -> PathBuf {
    dir.join("alone")
        .join(format!("{:016x}.json", fnv1a(key.as_bytes())))
}

/// A cached result for `key`, or `None` (absent, unreadable, or another key's).
fn read_cached(dir: &std::path::Path, key: &str) -> Option<AloneRun> {
    let text = std::fs::read_to_string(cache_path(dir, key)).ok()?;
    let e: CacheEntry = serde_json::from_str(&text).ok()?;
    // The IPC is recomputed from the stored integers exactly as the run computed it (a
    // decimal float need not read back to the same bits).
    (e.key == key).then_some(AloneRun {
        cached: true,
        ipc: ratio(e.run.instructions, e.run.cycles),
        ..e.run
    })
}

fn write_cached(dir: &std::path::Path, key: String, run: &AloneRun) -> Result<()> {
    let path = cache_path(dir, &key);
    let parent = dir.join("alone");
    std::fs::create_dir_all(&parent)
        .with_context(|| format!("creating the alone-run cache {}", parent.display()))?;
    apusim_trace::output::sweep_stale_once(&parent);
    let entry = CacheEntry {
        key,
        run: run.clone(),
    };
    write_atomic(&path, serde_json::to_string_pretty(&entry)?.as_bytes())
}
