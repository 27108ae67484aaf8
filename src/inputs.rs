//! Run inputs (trace files and the built-in demo mix) and the `apusim trace` subcommands.

use crate::TraceCommand;
use anyhow::{anyhow, bail, Context, Result};
use apusim_sim::run::{Input, Inputs, Reopen};
use apusim_trace::import::{self, Format, ImportOptions, LcsOptions};
use apusim_trace::{AccessSource, Agent};
use clap::Args;
use std::path::Path;

/// How trace files are read: their format and libCacheSim's trace parameters. One struct,
/// flattened into every command that reads a trace file (`run`, `sim`, `oracle`, `reuse`,
/// `trace convert`), so that each option has the same name, meaning and errors everywhere.
#[derive(Args, Clone, Debug, Default)]
pub struct ImportArgs {
    /// Format of the trace files: apt, lackey, champsim, csv, or libCacheSim's oracleGeneral,
    /// oracleGeneralOpNS, lcs-csv, lcs-txt (default: detected from each file's first bytes
    /// and name; libCacheSim's binary formats by a name containing `oracleGeneral` or
    /// `oracleGeneralOpNS`). Applies to every trace file of the command.
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub from: Option<Format>,
    /// libCacheSim trace parameters (oracleGeneral, oracleGeneralOpNS, lcs-csv, lcs-txt), as
    /// libCacheSim's `-t`: e.g. `time-col=1,obj-id-col=2,obj-size-col=3,delimiter=,`; also
    /// block-size, ignore-obj-size, max-obj-size, dense-ids, op-col, has-header,
    /// obj-id-is-num (docs/trace-format.md).
    #[arg(long, value_name = "KEY=VALUE,...", value_parser = parse_lcs_params)]
    pub lcs_params: Option<LcsOptions>,
}

/// `--from`: a format name (`Format::from_str`).
fn parse_format(s: &str) -> Result<Format, String> {
    s.parse()
}

/// `--lcs-params`: libCacheSim's parameter string (`LcsOptions::from_str`), refused when the
/// command line is read, naming the key.
fn parse_lcs_params(s: &str) -> Result<LcsOptions, String> {
    s.parse()
}

impl ImportArgs {
    /// The import options of a trace attributed to `agent`.
    pub fn options_for(&self, agent: Agent) -> ImportOptions {
        ImportOptions {
            agent,
            libcachesim: self.lcs_params.clone().unwrap_or_default(),
            ..ImportOptions::default()
        }
    }

    /// The import options (accesses attributed to `cpu0`, as the importers' default).
    pub fn options(&self) -> ImportOptions {
        self.options_for(ImportOptions::default().agent)
    }

    /// True when neither option was given.
    pub fn is_default(&self) -> bool {
        self.from.is_none() && self.lcs_params.is_none()
    }

    /// Open `path` as these options say.
    pub fn open(&self, path: &Path) -> apusim_oracle::Result<Box<dyn AccessSource>> {
        apusim_oracle::open_any(path, self.from, &self.options())
    }

    /// The trace files `traces` (`FILE@cpu2`, as `apusim run` takes them) read as these options
    /// say; `timed` runs read ChampSim traces natively.
    pub fn trace_inputs(&self, traces: &[String], timed: bool) -> Result<Box<dyn Inputs>> {
        Ok(Box::new(
            apusim_sim::inputs::TraceInputs::parse(traces)?
                .native_champsim(timed)
                .import(self.from, self.options()),
        ))
    }
}

/// The built-in demo mix (see `apusim_workloads::demo_mix`).
pub struct DemoInputs {
    pub cpus: u8,
    pub scale: u64,
    pub seed: u64,
}

impl Inputs for DemoInputs {
    fn open(&self) -> Result<Vec<Input>> {
        Ok(apusim_workloads::demo_mix(self.cpus, self.scale, self.seed)
            .into_iter()
            .map(|(name, source)| Input {
                name,
                source,
                remap: None,
                champsim: None,
                program: None,
            })
            .collect())
    }
    fn describe(&self) -> String {
        format!(
            "built-in synthetic mix ({} CPU cores + rendering GPU, scale {}, seed {})",
            self.cpus, self.scale, self.seed
        )
    }
    fn reopen(&self, index: usize) -> Option<Reopen> {
        let (cpus, scale, seed) = (self.cpus, self.scale, self.seed);
        Some(Box::new(move || {
            let mut v = DemoInputs { cpus, scale, seed }.open()?;
            if index >= v.len() {
                bail!("input {index} of {} is gone", v.len());
            }
            Ok(v.swap_remove(index))
        }))
    }
    fn keys(&self) -> Option<Vec<String>> {
        // demo_mix: one input per CPU core, then the GPU's.
        let n = self.cpus as usize + 1;
        Some(
            (0..n)
                .map(|i| {
                    format!(
                        "demo-v{}-cpus{}-scale{}-seed{}-input{i}",
                        apusim_workloads::GENERATOR_VERSION,
                        self.cpus,
                        self.scale,
                        self.seed
                    )
                })
                .collect(),
        )
    }
}

fn parse_agent(s: &str) -> Result<Agent> {
    s.parse().map_err(|e: String| anyhow!("--agent: {e}"))
}

pub fn trace_command(t: TraceCommand) -> Result<()> {
    match t {
        TraceCommand::Info { file } => {
            let summary = apusim_trace::apt::summarize(&file)?;
            print!("{summary}");
            Ok(())
        }
        TraceCommand::Convert {
            import: how,
            input,
            output,
            agent,
        } => {
            let opts = how.options_for(parse_agent(&agent)?);
            let mut src = apusim_oracle::open_any(&input, how.from, &opts)?;
            let n = import::convert(&mut *src, &output)?;
            eprintln!("wrote {n} accesses to {}", output.display());
            Ok(())
        }
        TraceCommand::Record {
            output,
            agent,
            command,
        } => {
            let opts = ImportOptions {
                agent: parse_agent(&agent)?,
                ..ImportOptions::default()
            };
            let (program, args) = command.split_first().context("no program given")?;
            let mut line = apusim_sim::progress::Progress::new(true);
            let n = import::record_with_lackey_watched(program, args, &output, &opts, &mut |n| {
                line.show(|secs| {
                    format!(
                        "recording {program}: {n} accesses ({:.1} M/s)",
                        n as f64 / secs / 1e6
                    )
                })
            })?;
            line.finish();
            eprintln!("wrote {n} accesses to {}", output.display());
            Ok(())
        }
    }
}
