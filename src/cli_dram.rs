//! `apusim dram`: a DRAM request trace through apusim's DRAM timing model (crate
//! `apusim-dram`), in the trace formats of apusim, Ramulator 2 and DRAMsim3. clap parses the
//! whole command line into the library's [`DramCliArgs`].

use anyhow::Result;
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
    #[arg(long, short, default_value = "auto", value_parser = parse_format)]
    format: TraceFormat,
    /// Cycles between the requests of a Ramulator LD/ST trace (which has no times); at most
    /// 2^62, as is every arrival cycle (request i arrives at i × interval).
    #[arg(long)]
    interval: Option<u64>,
    #[arg(long = "set", value_name = "KEY=VALUE", help = set_help(), value_parser = parse_set)]
    set: Vec<(String, String)>,
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

/// Help of `--set`, naming the registered schedulers.
fn set_help() -> String {
    format!(
        "Override a setting: timings (tCL=12, tRCD=...), scheduler=NAME ({}), \
         scheduler.PARAM=VALUE, mapping=..., row_policy=open|closed, read_queue=N, \
         write_queue=N, refresh=on|off, ...",
        apusim_dram::scheduler::scheduler_names().join(", ")
    )
}

fn parse_format(s: &str) -> Result<TraceFormat, String> {
    s.parse()
}

/// `KEY=VALUE`, both trimmed.
fn parse_set(s: &str) -> Result<(String, String), String> {
    let (k, v) = s.split_once('=').ok_or("expected KEY=VALUE")?;
    Ok((k.trim().to_string(), v.trim().to_string()))
}

impl DramArgs {
    /// What the command line asks to run (`None` with `--list-presets`).
    fn cli_args(self) -> Option<DramCliArgs> {
        let trace = self.trace.filter(|_| !self.list_presets)?;
        let mut args = DramCliArgs::new(self.preset, trace);
        args.format = self.format;
        if let Some(i) = self.interval {
            args.overrides.push(("interval".into(), i.to_string()));
        }
        args.overrides.extend(self.set);
        args.json = self.json;
        args.csv = self.csv;
        Some(args)
    }
}

pub fn run(a: DramArgs) -> Result<()> {
    let Some(args) = a.cli_args() else {
        let mut t = apusim_sim::report::TextTable::new(["preset", "description"]);
        for (n, d) in apusim_dram::presets() {
            t.row(vec![n.to_string(), d.to_string()]);
        }
        print!("{}", t.render());
        return Ok(());
    };
    let report = apusim_dram::run_trace_file(&args)?;
    print!("{}", report.to_table());
    for p in [&args.json, &args.csv].into_iter().flatten() {
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        dram: DramArgs,
    }

    fn parse(args: &[&str]) -> Result<Option<DramCliArgs>, clap::Error> {
        let argv = std::iter::once("dram").chain(args.iter().copied());
        Cli::try_parse_from(argv).map(|c| c.dram.cli_args())
    }

    #[test]
    fn parses_arguments() {
        let a = parse(&[
            "--preset",
            "tap",
            "--format=dramsim3",
            "--interval",
            "16",
            "--set",
            "tCL = 10",
            "--json",
            "o.json",
            "t.trace",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(a.preset, "tap");
        assert_eq!(a.format, TraceFormat::DramSim3);
        assert_eq!(a.trace, PathBuf::from("t.trace"));
        assert_eq!(a.json, Some(PathBuf::from("o.json")));
        assert_eq!(
            a.overrides,
            vec![
                ("interval".to_string(), "16".to_string()),
                ("tCL".into(), "10".into())
            ]
        );
        assert!(parse(&["--list-presets"]).unwrap().is_none());
        assert!(parse(&["--bogus", "x"]).is_err());
        assert!(parse(&["--preset", "tap"]).is_err());
        assert!(parse(&["a", "b"]).is_err());
        assert!(parse(&["--set", "tCL", "a"]).is_err());
        assert!(parse(&["--format", "nope", "a"]).is_err());
    }

    #[test]
    fn set_help_names_every_scheduler() {
        let help = set_help();
        for name in apusim_dram::scheduler::scheduler_names() {
            assert!(help.contains(name), "{name}");
        }
    }
}
