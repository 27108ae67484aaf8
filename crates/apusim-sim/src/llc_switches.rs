//! The LLC switches: experiment switches of a functional or timed run that change what the
//! LLC reports, not how it replaces: idealized streams, forced GPU read bypass, and dumping
//! the LLC's access stream. (A *study* is something else: a named experiment reproducing a
//! paper figure, `apusim_experiments::studies`.)
//!
//! - `--ideal STREAMS` (drp-reuse-probability-shared-llc.txt §4.2,
//!   gpu-access-criticality-dram-scheduling.txt §3): a non-compulsory LLC miss of one of these
//!   streams is charged as a hit (no memory read) while the policy still fills and evicts as
//!   usual. Compulsory misses — the first touch of a line by anyone — stay misses.
//! - `--gpu-read-bypass P` (drp §4.3): a seeded fraction `P` of GPU read misses bypass the LLC
//!   (the policy is not consulted and nothing is allocated).
//! - `--dump-llc-trace FILE`: every access that reaches the LLC, after the private caches, is
//!   written to an `.apt` trace, so oracles and policies can be compared offline on exactly the
//!   same LLC stream, as the papers do.

use anyhow::{bail, Result};
use apusim_cache::policies::util::SplitMix64;
use apusim_trace::apt::AptWriter;
use apusim_trace::{Access, Agent, AgentInfo, Stream, TraceHeader};
use rustc_hash::FxHashSet;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// The LLC switches of a run (all off by default).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LlcSwitches {
    /// Streams whose non-compulsory LLC misses count as hits.
    pub ideal: Vec<Stream>,
    /// GPU accesses whose non-compulsory LLC misses count as hits by their critical flag:
    /// `Some(true)` the critical ones, `Some(false)` the others (gpu-access-criticality
    /// §6.1.1, Fig. 8).
    pub ideal_critical: Option<bool>,
    /// Fraction of GPU read misses forced to bypass the LLC, in [0, 1].
    pub gpu_read_bypass: f64,
    /// Write the LLC's access stream here.
    pub dump_llc_trace: Option<PathBuf>,
    /// The path the dump's errors name, when `dump_llc_trace` is a temporary file standing
    /// in for it (the command line reserves one, renamed into place with the run's other
    /// outputs); `None`: `dump_llc_trace` itself.
    pub dump_llc_name: Option<PathBuf>,
}

impl LlcSwitches {
    /// Parse an `--ideal` list: stream names, plus `texture` (static and dynamic), `gpu` (every
    /// GPU stream) and `cpu` (both CPU streams).
    pub fn parse_ideal(spec: &str) -> Result<Vec<Stream>> {
        let mut out = Vec::new();
        for word in spec.split(',').map(str::trim) {
            match word {
                "" => continue,
                "texture" | "tex" => out.extend([Stream::StaticTexture, Stream::DynamicTexture]),
                "gpu" => out.extend(Stream::ALL.iter().filter(|s| !s.is_cpu())),
                "cpu" => out.extend([Stream::CpuInstr, Stream::CpuData]),
                w => out.push(
                    w.parse::<Stream>()
                        .map_err(|e| anyhow::anyhow!("--ideal: {e}"))?,
                ),
            }
        }
        if out.is_empty() {
            bail!("--ideal needs at least one stream (e.g. color,texture or gpu)");
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    pub fn validate(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.gpu_read_bypass) {
            bail!(
                "--gpu-read-bypass must lie in [0, 1], not {}",
                self.gpu_read_bypass
            );
        }
        Ok(())
    }

    pub fn is_active(&self) -> bool {
        !self.ideal.is_empty()
            || self.ideal_critical.is_some()
            || self.gpu_read_bypass > 0.0
            || self.dump_llc_trace.is_some()
    }
}

/// The LLC-side state of the LLC switches, owned by the hierarchy.
pub(crate) struct LlcSwitchState {
    pub ideal: [bool; Stream::COUNT],
    pub ideal_critical: Option<bool>,
    /// Lines the LLC has seen (only kept when some stream is ideal).
    seen: Option<FxHashSet<u64>>,
    /// `P * 2^64`: a GPU read miss bypasses when the next random number is below it.
    bypass_below: u64,
    rng: SplitMix64,
    /// The dump's writer, and the path its errors name.
    dump: Option<(PathBuf, AptWriter<BufWriter<File>>)>,
}

/// An error of the LLC dump, naming `shown` (the user's path) rather than the temporary file
/// it is written to: an I/O error keeps only the system's message.
fn dump_error(shown: &Path, what: &str, e: apusim_trace::TraceError) -> anyhow::Error {
    match e {
        apusim_trace::TraceError::Io { err, .. } => {
            anyhow::anyhow!("--dump-llc-trace {}: {what}: {err}", shown.display())
        }
        e => anyhow::Error::new(e).context(format!("--dump-llc-trace {}: {what}", shown.display())),
    }
}

impl LlcSwitchState {
    pub fn new(opts: &LlcSwitches, cfg: &crate::SystemConfig) -> Result<LlcSwitchState> {
        opts.validate()?;
        let mut ideal = [false; Stream::COUNT];
        for s in &opts.ideal {
            ideal[*s as usize] = true;
        }
        let dump = match &opts.dump_llc_trace {
            None => None,
            Some(path) => {
                let mut agents: Vec<AgentInfo> = (0..cfg.cpus as u8)
                    .map(|c| AgentInfo {
                        agent: Agent::cpu(c),
                        name: format!("cpu{c}"),
                        clock_mhz: cfg.cpu_clock_mhz,
                    })
                    .collect();
                agents.push(AgentInfo {
                    agent: Agent::GPU,
                    name: "gpu".into(),
                    clock_mhz: cfg.gpu_clock_mhz,
                });
                let header = TraceHeader {
                    version: 0,
                    agents,
                    streams: Stream::ALL.to_vec(),
                    source: format!(
                        "apusim LLC access stream of system {} ({})",
                        cfg.name, cfg.llc.geometry
                    ),
                };
                let shown = opts.dump_llc_name.as_ref().unwrap_or(path);
                let w = AptWriter::create(path, &header)
                    .map_err(|e| dump_error(shown, "creating", e))?;
                Some((shown.clone(), w))
            }
        };
        Ok(LlcSwitchState {
            ideal,
            ideal_critical: opts.ideal_critical,
            seen: (ideal.iter().any(|b| *b) || opts.ideal_critical.is_some())
                .then(FxHashSet::default),
            bypass_below: (opts.gpu_read_bypass * 2f64.powi(64)).min(u64::MAX as f64) as u64,
            rng: SplitMix64::new(cfg.seed ^ 0xB1A5_0000),
            dump,
        })
    }

    /// Record an access reaching the LLC in the dump.
    pub fn dump(&mut self, req: &Access) -> Result<()> {
        if let Some((path, w)) = &mut self.dump {
            w.write(req).map_err(|e| dump_error(path, "writing", e))?;
        }
        Ok(())
    }

    /// Should this GPU read miss be forced around the LLC?
    pub fn force_bypass(&mut self, req: &Access) -> bool {
        self.bypass_below > 0
            && req.agent.is_gpu()
            && req.op == apusim_trace::Op::Read
            && (self.bypass_below == u64::MAX || self.rng.next_u64() < self.bypass_below)
    }

    /// Is `req` idealized (its non-compulsory misses charged as hits)?
    pub fn is_ideal(&self, req: &Access) -> bool {
        self.ideal[req.stream as usize]
            || (req.agent.is_gpu() && self.ideal_critical == Some(req.is_critical()))
    }

    /// Note that the LLC saw `line`; true if it had seen it before (a miss on it is not
    /// compulsory).
    pub fn seen_before(&mut self, line: u64) -> bool {
        match &mut self.seen {
            Some(set) => !set.insert(line),
            None => false,
        }
    }

    /// Finish the dump file (atomically renamed into place).
    pub fn finish(&mut self) -> Result<()> {
        if let Some((path, w)) = self.dump.take() {
            w.finish().map_err(|e| dump_error(&path, "finishing", e))?;
        }
        Ok(())
    }
}
