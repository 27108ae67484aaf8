//! The terminal's progress displays: the [`Reporter`] `apusim` installs in the simulation
//! library, drawing indicatif spinners and bars on stderr when it is a terminal and nothing
//! otherwise (so piped or logged runs stay clean).

use apusim_sim::progress::{Counter, Reporter, StatusLine};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// indicatif on a terminal.
pub struct Terminal;

struct Spinner(ProgressBar);
struct Bar(ProgressBar);

impl Reporter for Terminal {
    fn status(&self) -> Option<Box<dyn StatusLine>> {
        std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            Box::new(Spinner(bar)) as Box<dyn StatusLine>
        })
    }

    fn counter(&self, n: usize, what: &str) -> Option<Box<dyn Counter>> {
        std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(n as u64);
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{{spinner}} {{elapsed}} {{pos}}/{{len}} {what}"
                ))
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(250));
            Box::new(Bar(bar)) as Box<dyn Counter>
        })
    }
}

impl StatusLine for Spinner {
    fn set(&mut self, msg: String) {
        self.0.set_message(msg);
        self.0.tick();
    }
    fn finish(self: Box<Self>) {
        self.0.finish_and_clear();
    }
}

impl Counter for Bar {
    fn inc(&self) {
        self.0.inc(1);
    }
    fn finish(self: Box<Self>) {
        self.0.finish_and_clear();
    }
}
