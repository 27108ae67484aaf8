//! Standalone trace mode (`apusim dram --preset NAME TRACE`), as library functions the
//! `apusim` binary wires up: [`DramCliArgs`] (what its command line, parsed by the binary,
//! asks for), [`run_trace_file`], and the request-driving loop [`run_requests`].

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

    #[test]
    fn config_applies_the_interval_and_overrides() {
        let mut a = DramCliArgs::new("tap", "t.trace");
        a.overrides.push(("interval".into(), "16".into()));
        a.overrides.push(("tCL".into(), "10".into()));
        let (cfg, interval) = a.config().unwrap();
        assert_eq!((cfg.spec.timing.cl, interval), (10, 16));
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
