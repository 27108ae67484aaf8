//! Trace files as the inputs of a run: paths with an optional agent (`FILE@cpu1`), opened
//! through the importers, each single-agent trace given a free core when its own is taken.
//! `apusim run`, `apusim sim` and the sweeps of `apusim-sweep` share it.

use crate::run::{Input, Inputs, Reopen};
use anyhow::{anyhow, bail, Context, Result};
use apusim_trace::import::{self, Format, ImportOptions};
use apusim_trace::Agent;
use std::path::PathBuf;

/// Trace files given on the command line, each optionally pinned to an agent (`FILE@cpu1`).
#[derive(Clone)]
pub struct TraceInputs {
    specs: Vec<(PathBuf, Option<Agent>)>,
    /// Timed runs read ChampSim traces natively (with registers and branches).
    native_champsim: bool,
    /// Format of every file (`None`: detected per file).
    format: Option<Format>,
    /// How the importers read them (libCacheSim's trace parameters); the agent is each
    /// file's own or its `@` pin.
    opts: ImportOptions,
}

impl TraceInputs {
    pub fn parse(args: &[String]) -> Result<TraceInputs> {
        let specs = args
            .iter()
            .map(|a| match a.rsplit_once('@') {
                Some((path, agent)) if !path.is_empty() => {
                    let agent: Agent = agent.parse().map_err(|e: String| anyhow!("`{a}`: {e}"))?;
                    Ok((PathBuf::from(path), Some(agent)))
                }
                _ => Ok((PathBuf::from(a), None)),
            })
            .collect::<Result<Vec<_>>>()?;
        for (p, _) in &specs {
            if !p.exists() {
                bail!("{}: no such trace file", p.display());
            }
        }
        Ok(TraceInputs {
            specs,
            native_champsim: false,
            format: None,
            opts: ImportOptions::default(),
        })
    }

    /// Read every file as `format` (`None`: detected per file) with `opts` (`apusim run
    /// --from`, `--lcs-params`).
    pub fn import(mut self, format: Option<Format>, opts: ImportOptions) -> TraceInputs {
        self.format = format;
        self.opts = opts;
        self
    }

    /// The import settings in an input's key, empty when they are the defaults (so the keys
    /// of inputs read the default way are those they always were).
    fn import_key(&self) -> String {
        if self.format.is_none() && self.opts == ImportOptions::default() {
            return String::new();
        }
        let from = self.format.map(|f| f.name()).unwrap_or("detected");
        format!("#from={from};{}", self.opts.libcachesim)
    }

    /// Mark ChampSim traces (recognised as `apusim trace convert` does: a name containing
    /// `.champsim`, compressed data, or binary records) to be read natively by timed runs.
    pub fn native_champsim(mut self, yes: bool) -> TraceInputs {
        self.native_champsim = yes;
        self
    }
}

impl Inputs for TraceInputs {
    fn open(&self) -> Result<Vec<Input>> {
        let mut used: Vec<Agent> = Vec::new();
        let mut out = Vec::new();
        for (path, pinned) in &self.specs {
            let source = import::open(path, self.format, &self.opts)
                .with_context(|| format!("opening {}", path.display()))?;
            let agents: Vec<Agent> = source.header().agents.iter().map(|a| a.agent).collect();
            let remap = match (pinned, agents.as_slice()) {
                (Some(a), [_]) | (Some(a), []) => Some(*a),
                (Some(a), _) => bail!(
                    "{}: holds {} agents, so it cannot be assigned to {a} as a whole",
                    path.display(),
                    agents.len()
                ),
                // A single-CPU trace whose core is taken gets the next free core.
                (None, [only]) if only.is_cpu() && used.contains(only) => {
                    let free = (0..Agent::GPU_ID)
                        .map(Agent::cpu)
                        .find(|a| !used.contains(a))
                        .context("no free CPU core left")?;
                    Some(free)
                }
                (None, _) => None,
            };
            match remap {
                Some(a) => used.push(a),
                None => used.extend(agents.iter().copied()),
            }
            let format = match self.format {
                Some(f) => f,
                None => Format::detect(path)?,
            };
            let champsim =
                (self.native_champsim && format == Format::ChampSim).then(|| path.clone());
            out.push(Input {
                name: path.display().to_string(),
                source,
                remap,
                champsim,
                program: None,
            });
        }
        Ok(out)
    }

    fn describe(&self) -> String {
        self.specs
            .iter()
            .map(|(p, a)| match a {
                Some(a) => format!("{}@{a}", p.display()),
                None => p.display().to_string(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The files are opened together again (an input's core may depend on the others') and
    /// the one asked for is kept.
    fn reopen(&self, index: usize) -> Option<Reopen> {
        let all = self.clone();
        Some(Box::new(move || {
            let mut v = all.open()?;
            if index >= v.len() {
                bail!("input {index} of {} is gone", v.len());
            }
            Ok(v.swap_remove(index))
        }))
    }

    /// A file is named by its full path, length and modification time, so an edited or
    /// replaced trace is a different input, and by the import settings when they are not the
    /// defaults (other libCacheSim parameters make another access stream of the same file).
    fn keys(&self) -> Option<Vec<String>> {
        let import = self.import_key();
        self.specs
            .iter()
            .map(|(p, a)| {
                let full = std::fs::canonicalize(p).ok()?;
                let meta = std::fs::metadata(&full).ok()?;
                let mtime = meta
                    .modified()
                    .ok()?
                    .duration_since(std::time::UNIX_EPOCH)
                    .ok()?
                    .as_nanos();
                let pin = a.map(|a| a.to_string()).unwrap_or_default();
                Some(format!(
                    "file:{}:{}:{mtime}@{pin}{import}",
                    full.display(),
                    meta.len()
                ))
            })
            .collect()
    }
}
