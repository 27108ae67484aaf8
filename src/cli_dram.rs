//! `apusim dram`: a DRAM request trace through apusim's DRAM timing model (crate
//! `apusim-dram`), in the trace formats of apusim, Ramulator 2 and DRAMsim3.

use anyhow::{anyhow, Result};
use apusim_dram::{DramCliArgs, TraceFormat};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct DramArgs {
    /// DRAM preset (see `--list-presets`) or a TOML configuration file.
    #[arg(long, short, default_value = "ddr3-1600-11-1ch")]
    preset: String,
    /// Trace format: auto, apusim-text (ADDRESS R|W CYCLE), ramulator (LD/ST ADDRESS) or
    /// dramsim3 (ADDRESS READ|WRITE CYCLE).
    #[arg(long, short, default_value = "auto")]
    format: String,
    /// Cycles between the requests of a Ramulator LD/ST trace (which has no times); at most
    /// 2^62, as is every arrival cycle (request i arrives at i × interval).
    #[arg(long)]
    interval: Option<u64>,
    /// Override a setting: timings (tCL=12, tRCD=...), scheduler=NAME (fcfs, frfcfs,
    /// frfcfs-cap, gpu-favoring, im, im-sched, im-llc, dynprio, dash, sms, sms-0.9, sms-0),
    /// scheduler.PARAM=VALUE, mapping=..., row_policy=open|closed, read_queue=N,
    /// write_queue=N, refresh=on|off, ...
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Write the report as JSON to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the report as CSV to this file.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// List the DRAM presets and exit.
    #[arg(long)]
    list_presets: bool,
    /// The request trace.
    #[arg(required_unless_present = "list_presets")]
    trace: Option<PathBuf>,
}

pub fn run(a: DramArgs) -> Result<()> {
    if a.list_presets {
        let mut t = apusim_sim::report::TextTable::new(["preset", "description"]);
        for (n, d) in apusim_dram::presets() {
            t.row(vec![n.to_string(), d.to_string()]);
        }
        print!("{}", t.render());
        return Ok(());
    }
    let trace = a
        .trace
        .clone()
        .ok_or_else(|| anyhow!("no trace file given"))?;
    let mut args = DramCliArgs::new(a.preset.clone(), trace);
    args.format = a
        .format
        .parse::<TraceFormat>()
        .map_err(|e| anyhow!("--format: {e}"))?;
    if let Some(i) = a.interval {
        args.overrides.push(("interval".into(), i.to_string()));
    }
    for s in &a.set {
        let (k, v) = s
            .split_once('=')
            .ok_or_else(|| anyhow!("--set {s}: expected KEY=VALUE"))?;
        args.overrides.push((k.trim().into(), v.trim().into()));
    }
    args.json = a.json.clone();
    args.csv = a.csv.clone();
    let report = apusim_dram::run_trace_file(&args)?;
    print!("{}", report.to_table());
    for p in [&args.json, &args.csv].into_iter().flatten() {
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}
