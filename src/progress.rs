//! The program's progress displays: the [`Reporter`] `apusim` installs in the simulation
//! library. On a terminal it draws indicatif spinners and bars on stderr. Elsewhere (a log
//! file, a pipe, a SLURM job's output) it writes a plain status line at most once every
//! [`STATUS_ENV`] seconds (default [`DEFAULT_STATUS_SECONDS`]), so a long run in a log shows
//! that it is alive and how far it got, while a run shorter than that writes nothing.

use apusim_sim::progress::{Counter, Reporter, StatusLine};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Environment variable: seconds between status lines when stderr is not a terminal
/// (`0`: none).
pub const STATUS_ENV: &str = "APUSIM_STATUS_SECONDS";
/// Seconds between status lines in a log when [`STATUS_ENV`] is not set.
pub const DEFAULT_STATUS_SECONDS: u64 = 60;
/// Most seconds [`STATUS_ENV`] may ask for (a day).
pub const MAX_STATUS_SECONDS: f64 = 86_400.0;

/// The interval between status lines in a log: [`STATUS_ENV`] if set (seconds, fractions
/// allowed, up to [`MAX_STATUS_SECONDS`]; `0` for none; anything else is an error naming the
/// variable), else [`DEFAULT_STATUS_SECONDS`].
pub fn log_interval() -> Result<Option<Duration>, String> {
    let secs = match std::env::var(STATUS_ENV) {
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(x) if (0.0..=MAX_STATUS_SECONDS).contains(&x) => x,
            _ => {
                return Err(format!(
                    "{STATUS_ENV}={v}: expected seconds from 0 (no status lines in logs) to \
                     {MAX_STATUS_SECONDS}"
                ))
            }
        },
        Err(_) => DEFAULT_STATUS_SECONDS as f64,
    };
    Ok((secs > 0.0).then(|| Duration::from_secs_f64(secs)))
}

/// indicatif on a terminal; plain lines every `log_every` (if any) elsewhere. The terminal's
/// spinners and bars share one [`MultiProgress`], so displays shown at once (a study's count
/// of cases and the generation of a trace inside one) stack instead of overwriting a line.
pub struct Stderr {
    log_every: Option<Duration>,
    multi: MultiProgress,
}

impl Stderr {
    pub fn new(log_every: Option<Duration>) -> Stderr {
        Stderr {
            log_every,
            multi: MultiProgress::new(),
        }
    }
}

/// A terminal display: its bar, and the set it was added to (to leave it when done).
struct Shown {
    bar: ProgressBar,
    multi: MultiProgress,
}

impl Shown {
    fn clear(&self) {
        self.bar.finish_and_clear();
        self.multi.remove(&self.bar);
    }
}

struct Spinner(Shown);
struct Bar(Shown);

impl Reporter for Stderr {
    fn status(&self) -> Option<Box<dyn StatusLine>> {
        if !std::io::stderr().is_terminal() {
            return self.log_every.map(|every| {
                Box::new(LogLine {
                    every,
                    start: Instant::now(),
                    last: Instant::now(),
                }) as Box<dyn StatusLine>
            });
        }
        let bar = self.multi.add(ProgressBar::new_spinner());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        Some(Box::new(Spinner(Shown {
            bar,
            multi: self.multi.clone(),
        })))
    }

    fn counter(&self, n: usize, what: &str) -> Option<Box<dyn Counter>> {
        if !std::io::stderr().is_terminal() {
            return self.log_every.map(|every| {
                let now = Instant::now();
                Box::new(LogCount {
                    n,
                    what: what.to_string(),
                    every,
                    start: now,
                    state: Mutex::new(CountState {
                        done: 0,
                        last: now,
                        shown: false,
                    }),
                }) as Box<dyn Counter>
            });
        }
        let bar = self.multi.add(ProgressBar::new(n as u64));
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{spinner}} {{elapsed}} {{pos}}/{{len}} {what}"
            ))
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(250));
        Some(Box::new(Bar(Shown {
            bar,
            multi: self.multi.clone(),
        })))
    }
}

impl StatusLine for Spinner {
    fn set(&mut self, msg: String) {
        self.0.bar.set_message(msg);
        self.0.bar.tick();
    }
    fn finish(self: Box<Self>) {
        self.0.clear();
    }
}

impl Counter for Bar {
    fn inc(&self) {
        self.0.bar.inc(1);
    }
    fn finish(self: Box<Self>) {
        self.0.clear();
    }
}

/// `1h02m03s`, `2m03s` or `3s`.
fn elapsed(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m{sec:02}s"),
        (h, m, sec) => format!("{h}h{m:02}m{sec:02}s"),
    }
}

/// A status line in a log: the latest message, written once `every` has passed since the
/// last (the work's first second is not counted: [`apusim_sim::progress::Progress`] asks for
/// a line only after it).
struct LogLine {
    every: Duration,
    start: Instant,
    last: Instant,
}

impl StatusLine for LogLine {
    fn set(&mut self, msg: String) {
        let now = Instant::now();
        if now.duration_since(self.last) >= self.every {
            self.last = now;
            eprintln!(
                "apusim: [{}] {msg}",
                elapsed(now.duration_since(self.start))
            );
        }
    }
    fn finish(self: Box<Self>) {}
}

/// A count of finished units in a log: `done/n what`, once `every` has passed since the
/// last line, and when the last unit finishes if a line was written before.
struct LogCount {
    n: usize,
    what: String,
    every: Duration,
    start: Instant,
    state: Mutex<CountState>,
}

struct CountState {
    done: usize,
    last: Instant,
    shown: bool,
}

impl Counter for LogCount {
    fn inc(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.done += 1;
        let now = Instant::now();
        let due = now.duration_since(s.last) >= self.every;
        if due || (s.shown && s.done == self.n) {
            s.last = now;
            s.shown = true;
            eprintln!(
                "apusim: [{}] {}/{} {}",
                elapsed(now.duration_since(self.start)),
                s.done,
                self.n,
                self.what
            );
        }
    }
    fn finish(self: Box<Self>) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_times_read_as_hours_minutes_seconds() {
        assert_eq!(elapsed(Duration::from_secs(7)), "7s");
        assert_eq!(elapsed(Duration::from_secs(125)), "2m05s");
        assert_eq!(elapsed(Duration::from_secs(3723)), "1h02m03s");
    }
}
