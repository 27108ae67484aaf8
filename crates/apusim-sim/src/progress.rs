//! Progress displays, as hooks the front end fills: the library says what is running and how
//! far it got, and a [`Reporter`] installed by the program ([`install`]) decides how (if at
//! all) to show it. The `apusim` binary installs one that draws indicatif spinners and bars
//! on a terminal; without one (the Python bindings, tests, other embedders) nothing is shown.
//!
//! Two displays exist: a status line for one long piece of work ([`Progress`]: the functional
//! merge of `apusim run`, the timed loop of `apusim sim`), shown only after it has run for a
//! second, and a count of finished units ([`count_bar`]: policies of a run, cases of a study).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How a front end shows progress. Each method returns `None` when it will not show that
/// display (e.g. stderr is not a terminal).
pub trait Reporter: Send + Sync {
    /// A status line for one running piece of work, updated with [`StatusLine::set`].
    fn status(&self) -> Option<Box<dyn StatusLine>>;
    /// A count of `n` units of work, `what` naming what is counted ("policies done").
    fn counter(&self, n: usize, what: &str) -> Option<Box<dyn Counter>>;
}

/// A shown status line.
pub trait StatusLine: Send {
    /// Show `msg` as the current status.
    fn set(&mut self, msg: String);
    /// Remove the line.
    fn finish(self: Box<Self>);
}

/// A shown count of finished units.
pub trait Counter: Send + Sync {
    /// One more unit finished.
    fn inc(&self);
    /// Remove the display.
    fn finish(self: Box<Self>);
}

static REPORTER: OnceLock<Box<dyn Reporter>> = OnceLock::new();

/// Install the program's reporter (once; a second call is refused and returns false).
pub fn install(r: Box<dyn Reporter>) -> bool {
    REPORTER.set(r).is_ok()
}

fn reporter() -> Option<&'static dyn Reporter> {
    REPORTER.get().map(|r| &**r)
}

/// A display counting `n` finished units of `what` (`{pos}/{len} what`), if the installed
/// reporter shows one.
pub fn count_bar(n: usize, what: &str) -> Option<Box<dyn Counter>> {
    reporter()?.counter(n, what)
}

/// `f` over `items` in parallel on the rayon pool, collected into `C` in the items' order
/// (into a `Result`, the first error stops the items not yet started), with a display
/// counting the finished `what` out of `n` when `show` and the installed reporter shows one.
pub fn par_map_counted<P, T, C>(
    items: P,
    n: usize,
    what: &str,
    show: bool,
    f: impl Fn(P::Item) -> T + Sync,
) -> C
where
    P: rayon::iter::IntoParallelIterator,
    T: Send,
    C: rayon::iter::FromParallelIterator<T>,
{
    use rayon::iter::ParallelIterator;
    let bar = if show { count_bar(n, what) } else { None };
    let out = items
        .into_par_iter()
        .map(|x| {
            let r = f(x);
            if let Some(b) = &bar {
                b.inc();
            }
            r
        })
        .collect();
    if let Some(b) = bar {
        b.finish();
    }
    out
}

/// The status line of one long piece of work: it appears only once the work has run for a
/// second, and only if the installed reporter shows status lines.
pub struct Progress {
    enabled: bool,
    start: Instant,
    line: Option<Box<dyn StatusLine>>,
}

impl Progress {
    /// A status line if `want` (the run's `progress` option) and a reporter is installed.
    pub fn new(want: bool) -> Progress {
        Progress {
            enabled: want && reporter().is_some(),
            start: Instant::now(),
            line: None,
        }
    }

    /// Show the message `msg(seconds since start)`.
    pub fn show(&mut self, msg: impl FnOnce(f64) -> String) {
        if !self.enabled {
            return;
        }
        if self.line.is_none() {
            if self.start.elapsed() <= Duration::from_secs(1) {
                return;
            }
            self.line = reporter().and_then(|r| r.status());
            if self.line.is_none() {
                // The reporter does not show status lines here: stop asking.
                self.enabled = false;
                return;
            }
        }
        if let Some(line) = &mut self.line {
            line.set(msg(self.start.elapsed().as_secs_f64()));
        }
    }

    /// Remove the status line.
    pub fn finish(&mut self) {
        if let Some(line) = self.line.take() {
            line.finish();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A trace source whose records so far show on a status line ([`Progress`]) as `what`.
pub type Watched<S> = apusim_trace::Counted<S, Box<dyn FnMut(u64, bool) + Send>>;

/// `inner`, [`Watched`]: for the long reads that no simulation loop reports (a generated
/// workload written to the trace cache).
pub fn watch<S: apusim_trace::AccessSource>(inner: S, what: String) -> Watched<S> {
    let mut progress = Progress::new(true);
    apusim_trace::Counted::new(
        inner,
        Box::new(move |n, more| {
            progress.show(|secs| format!("{what}: {n} records ({:.1} M/s)", n as f64 / secs / 1e6));
            if !more {
                progress.finish();
            }
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use apusim_trace::{Access, AccessSource, Agent, Op, Stream, VecSource};

    #[test]
    fn a_watched_source_hands_on_every_batch_unchanged_and_counts_them() {
        let accesses: Vec<Access> = (0..10_000u64)
            .map(|i| Access::new(Agent::cpu(0), Stream::CpuData, Op::Read, i * 64, 8))
            .collect();
        let mut plain = VecSource::new(accesses.clone());
        let mut watched = watch(VecSource::new(accesses), "reading".into());
        assert_eq!(watched.header(), plain.header());
        let (mut a, mut b) = (Vec::new(), Vec::new());
        loop {
            let more_a = plain.next_batch(&mut a).unwrap();
            let more_b = watched.next_batch(&mut b).unwrap();
            assert_eq!(more_a, more_b);
            assert_eq!(a, b);
            if !more_a {
                break;
            }
        }
        assert_eq!(watched.records(), 10_000);
    }
}
