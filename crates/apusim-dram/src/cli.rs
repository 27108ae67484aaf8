//! Standalone trace mode (`apusim dram --preset NAME TRACE`), as library functions the
//! `apusim` binary wires up: [`DramCliArgs`] (with a small argument parser for the
//! subcommand), [`run_trace_file`], and the request-driving loop [`run_requests`].

use crate::config::DramConfig;
use crate::error::DramError;
use crate::presets::preset;
use crate::request::{Request, MAX_CYCLE};
use crate::stats::DramReport;
use crate::system::MemorySystem;
use crate::trace::{open_trace, TraceFormat};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `apusim dram`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DramCliArgs {
    /// Preset name (see [`crate::presets()`]) or path to a TOML configuration file.
    pub preset: String,
    /// Trace file.
    pub trace: PathBuf,
    pub format: TraceFormat,
    /// `key=value` settings applied over the preset (timings such as `tCL`, `scheduler`,
    /// `mapping`, `row_policy`, queue sizes, …; `interval` sets the Ramulator-format arrival
    /// spacing).
    pub overrides: Vec<(String, String)>,
    /// Write the JSON report here.
    pub json: Option<PathBuf>,
    /// Write the CSV report here.
    pub csv: Option<PathBuf>,
}

/// Usage text of `apusim dram`.
pub const USAGE: &str = "\
usage: apusim dram [--preset NAME|FILE.toml] [--format auto|apusim-text|ramulator|dramsim3]
                   [--interval N] [--set KEY=VALUE]... [--json FILE] [--csv FILE] TRACE
       apusim dram --list-presets

Runs a DRAM request trace through apusim's DRAM model and prints statistics.
  --preset     preset name (default ddr3-1600-11-1ch) or a TOML configuration file
  --format     trace format (default auto-detect from the first line)
  --interval   cycles between requests of a Ramulator LD/ST trace (default 1, at most 2^62)
  --set        override a setting: timings (tCL=12, tRCD=…, tFAW=…), scheduler=NAME,
               scheduler.PARAM=VALUE (a parameter of the scheduler, e.g. scheduler.p=0.5),
               mapping=RoBaRaCoCh|RoChRaBaCo|RoBaRaCoCh-xor|…, row_policy=open|closed,
               read_queue=N, write_queue=N, write_high=N, write_low=N, row_hit_cap=N, refresh=on|off
  --json/--csv write the report as JSON / CSV (atomically)

Schedulers (docs/policies.md): fcfs, frfcfs, frfcfs-cap (row_hit_cap); gpu-favoring, im, im-sched,
im-llc (gpu-access-criticality §4.3); dynprio, dash, sms, sms-0.9, sms-0 (its §6.1.4 baselines).";

impl DramCliArgs {
    /// Defaults: format auto, no overrides, no output files.
    pub fn new(preset: impl Into<String>, trace: impl Into<PathBuf>) -> Self {
        DramCliArgs {
            preset: preset.into(),
            trace: trace.into(),
            format: TraceFormat::Auto,
            overrides: Vec::new(),
            json: None,
            csv: None,
        }
    }

    /// Parse the subcommand's arguments (everything after `dram`). `Ok(None)` means
    /// `--list-presets` or `--help` was asked for (print [`crate::presets()`] / [`USAGE`]).
    pub fn parse(args: &[String]) -> Result<Option<Self>, DramError> {
        let bad = |k: &str, v: &str, m: &str| DramError::BadOverride {
            key: k.to_string(),
            value: v.to_string(),
            msg: m.to_string(),
        };
        let mut out = DramCliArgs::new("ddr3-1600-11-1ch", "");
        let mut trace = None;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let (flag, inline) = match a.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
                _ => (a.as_str(), None),
            };
            let mut value = |name: &str| -> Result<String, DramError> {
                inline
                    .clone()
                    .or_else(|| it.next().cloned())
                    .ok_or_else(|| bad(name, "", "missing value"))
            };
            match flag {
                "--help" | "-h" | "--list-presets" => return Ok(None),
                "--preset" | "-p" => out.preset = value("--preset")?,
                "--format" | "-f" => {
                    let v = value("--format")?;
                    out.format = v.parse().map_err(|m: String| bad("--format", &v, &m))?;
                }
                "--interval" => out
                    .overrides
                    .push(("interval".into(), value("--interval")?)),
                "--set" | "-D" => {
                    let v = value("--set")?;
                    let (k, val) = v
                        .split_once('=')
                        .ok_or_else(|| bad("--set", &v, "expected KEY=VALUE"))?;
                    out.overrides
                        .push((k.trim().to_string(), val.trim().to_string()));
                }
                "--json" => out.json = Some(PathBuf::from(value("--json")?)),
                "--csv" => out.csv = Some(PathBuf::from(value("--csv")?)),
                f if f.starts_with('-') && f.len() > 1 => {
                    return Err(bad(f, "", "unknown option (see --help)"))
                }
                _ => {
                    if trace.is_some() {
                        return Err(bad(a, "", "more than one trace file given"));
                    }
                    trace = Some(PathBuf::from(a));
                }
            }
        }
        out.trace = trace.ok_or_else(|| bad("TRACE", "", "no trace file given"))?;
        Ok(Some(out))
    }

    /// The configuration these arguments describe (preset or TOML file, plus overrides),
    /// validated, and the Ramulator-format arrival interval.
    pub fn config(&self) -> Result<(DramConfig, u64), DramError> {
        let p = Path::new(&self.preset);
        let mut cfg =
            if self.preset.ends_with(".toml") || (p.is_file() && preset(&self.preset).is_err()) {
                DramConfig::from_toml_file(p)?
            } else {
                preset(&self.preset)?
            };
        let mut interval = 1;
        for (k, v) in &self.overrides {
            if k.eq_ignore_ascii_case("interval") {
                let bad = |msg: String| DramError::BadOverride {
                    key: k.clone(),
                    value: v.clone(),
                    msg,
                };
                interval = v
                    .parse()
                    .map_err(|_| bad(format!("expected an integer from 0 to {MAX_CYCLE}")))?;
                if interval > MAX_CYCLE {
                    return Err(bad(format!(
                        "--interval is at most {MAX_CYCLE} (2^62) cycles"
                    )));
                }
            } else {
                cfg.apply_override(k, v)?;
            }
        }
        cfg.validate()?;
        Ok((cfg, interval))
    }
}

/// Drive `requests` (arrival-ordered) through `mem` the way a trace frontend does: each
/// request is offered at its arrival cycle (or as soon as the previous one was accepted, if
/// later) and retried while its queue is full; then everything is drained. Returns the number
/// of requests. A request arriving after [`MAX_CYCLE`] is refused with an error.
pub fn run_requests<I>(mem: &mut MemorySystem, requests: I) -> Result<u64, DramError>
where
    I: IntoIterator<Item = Result<Request, DramError>>,
{
    let mut sink = Vec::new();
    let mut n = 0u64;
    for r in requests {
        let mut req = r?;
        if req.arrival > MAX_CYCLE {
            return Err(DramError::BadRequest {
                id: req.id,
                msg: format!(
                    "arrival cycle {} is beyond the maximum {MAX_CYCLE} (2^62)",
                    req.arrival
                ),
            });
        }
        if req.arrival > mem.now() {
            mem.advance_to(req.arrival, &mut sink);
        }
        loop {
            // Simulate until the request would be accepted (returns at once if it would be
            // now: cheaper than a refused `try_send`), then send it.
            mem.advance_until_accepts(req.addr, req.is_write, &mut sink);
            match mem.try_send(req) {
                Ok(()) => break,
                Err(back) => req = back,
            }
        }
        sink.clear();
        n += 1;
    }
    mem.drain(&mut sink);
    Ok(n)
}

/// Run a trace file as `apusim dram` does and return the report; writes the JSON/CSV files
/// if asked. Printing the table ([`DramReport::to_table`]) is left to the caller.
pub fn run_trace_file(args: &DramCliArgs) -> Result<DramReport, DramError> {
    let (cfg, interval) = args.config()?;
    let mut mem = MemorySystem::new(cfg)?;
    mem.set_report_completions(false);
    let reader = open_trace(&args.trace, args.format, interval)?;
    let format = reader.format();
    if run_requests(&mut mem, reader)? == 0 {
        return Err(DramError::EmptyTrace {
            path: args.trace.clone(),
        });
    }
    let mut report = mem.report();
    report.trace = Some(args.trace.display().to_string());
    report.format = Some(if format == TraceFormat::Ramulator {
        format!("ramulator, interval {interval}")
    } else {
        format.name().to_string()
    });
    if let Some(p) = &args.json {
        write_atomic(p, report.to_json().as_bytes())?;
    }
    if let Some(p) = &args.csv {
        write_atomic(p, report.to_csv().as_bytes())?;
    }
    Ok(report)
}

/// Write `data` to `path` atomically: a temporary file in the same directory, then a rename.
pub fn write_atomic(path: &Path, data: &[u8]) -> Result<(), DramError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let res = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(data)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(DramError::io(path, e));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn parses_arguments() {
        let a = DramCliArgs::parse(&s(&[
            "--preset",
            "tap",
            "--format=dramsim3",
            "--interval",
            "16",
            "--set",
            "tCL=10",
            "--json",
            "o.json",
            "t.trace",
        ]))
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
        let (cfg, interval) = a.config().unwrap();
        assert_eq!((cfg.spec.timing.cl, interval), (10, 16));
        assert!(DramCliArgs::parse(&s(&["--list-presets"]))
            .unwrap()
            .is_none());
        assert!(DramCliArgs::parse(&s(&["--bogus", "x"])).is_err());
        assert!(DramCliArgs::parse(&s(&["--preset", "tap"])).is_err());
        assert!(DramCliArgs::parse(&s(&["a", "b"])).is_err());
    }

    #[test]
    fn interval_beyond_the_maximum_is_refused() {
        let mut a = DramCliArgs::new("reference", "x");
        a.overrides.push(("interval".into(), MAX_CYCLE.to_string()));
        assert_eq!(a.config().unwrap().1, MAX_CYCLE);
        a.overrides
            .push(("interval".into(), "18446744073709551615".into()));
        let e = a.config().unwrap_err().to_string();
        assert!(
            e.contains("interval=18446744073709551615") && e.contains(&MAX_CYCLE.to_string()),
            "{e}"
        );
        a.overrides.pop();
        a.overrides.push(("interval".into(), "-1".into()));
        let e = a.config().unwrap_err().to_string();
        assert!(
            e.contains("interval=-1") && e.contains("integer from 0"),
            "{e}"
        );
    }

    #[test]
    fn impossible_timing_override_is_refused() {
        let mut a = DramCliArgs::new("reference", "x");
        a.overrides.push(("tRC".into(), "20".into()));
        let e = a.config().unwrap_err().to_string();
        assert!(e.contains("tRC (20) < tRAS (28) + tRP (11)"), "{e}");
    }

    /// tREFI just above tRFC used to starve every row miss behind refreshes (the run never
    /// finished); the smallest interval that serves one miss per refresh is accepted.
    #[test]
    fn refresh_interval_too_short_to_serve_a_miss_is_refused() {
        let mut a = DramCliArgs::new("reference", "x");
        a.overrides.push(("tRFC".into(), "20".into()));
        a.overrides.push(("tREFI".into(), "60".into()));
        let e = a.config().unwrap_err().to_string();
        // DDR3-1600 11-11-11: max(tRAS 28, tRTP 6, tCWL 8 + tBURST 4 + tWR 12) + 11 + 20 + 11.
        assert!(e.contains("tREFI (60) < 70"), "{e}");
        a.overrides.pop();
        a.overrides.push(("tREFI".into(), "70".into()));
        assert!(a.config().is_ok());
    }

    /// Bank groups × banks per group of 2^16 × 2^16 overflowed 32 bits and passed validation
    /// as 0 banks (then a panic indexing them); the product is checked in 64 bits.
    #[test]
    fn bank_counts_whose_product_overflows_are_refused() {
        let mut a = DramCliArgs::new("reference", "x");
        a.overrides.push(("bank_groups".into(), "65536".into()));
        a.overrides.push(("banks_per_group".into(), "65536".into()));
        let e = a.config().unwrap_err().to_string();
        assert!(e.contains("256 banks per rank"), "{e}");
    }

    /// A trace without requests is an error naming the file, not an empty report.
    #[test]
    fn a_trace_without_requests_is_refused() {
        let path = std::env::temp_dir().join(format!("apusim-{}-blank.trace", std::process::id()));
        std::fs::write(&path, "# only a comment\n\n").unwrap();
        let r = run_trace_file(&DramCliArgs::new("reference", &path));
        std::fs::remove_file(&path).unwrap();
        let e = r.unwrap_err().to_string();
        assert!(
            e.contains("blank.trace") && e.contains("no requests"),
            "{e}"
        );
    }
}
