//! Run inputs (trace files and the built-in demo mix) and the `apusim trace` subcommands.

use crate::TraceCommand;
use anyhow::{anyhow, bail, Context, Result};
use apusim_sim::run::{Input, Inputs, Reopen};
use apusim_trace::import::{self, Format, ImportOptions};
use apusim_trace::Agent;

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
            from,
            input,
            output,
            agent,
            lcs_params,
        } => {
            let format = from
                .map(|f| f.parse::<Format>().map_err(|e| anyhow!("--from: {e}")))
                .transpose()?;
            let libcachesim = match lcs_params {
                Some(p) => p
                    .parse::<import::LcsOptions>()
                    .map_err(|e| anyhow!("--lcs-params: {e}"))?,
                None => import::LcsOptions::default(),
            };
            let opts = ImportOptions {
                agent: parse_agent(&agent)?,
                libcachesim,
                ..ImportOptions::default()
            };
            let mut src = import::open(&input, format, &opts)?;
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
            let n = import::record_with_lackey(program, args, &output, &opts)?;
            eprintln!("wrote {n} accesses to {}", output.display());
            Ok(())
        }
    }
}
