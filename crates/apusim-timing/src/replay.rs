//! A program that starts again from its beginning when it ends.
//!
//! In a multiprogram run every core must keep running until the last one reaches its
//! instruction target, so that the others see its interference to the end; a trace shorter
//! than that is replayed from its start, as ChampSim's trace readers do. [`Replay`] wraps the
//! first pass and a function that opens the program afresh; the caches stay warm from the
//! earlier passes, as they would for a program run twice. The passes are counted so that a
//! report can say when a core's figures include a replay.
//!
//! Replays are bounded: a program is restarted at most [`MAX_RESTARTS`] times. A run whose
//! target would need more (a trace of a few instructions behind a large target, each pass
//! costing a reopen) fails at the end of its first pass, when the pass length is known, and
//! one replayed that often while other programs reach their targets fails at the restart past
//! the maximum; the error gives the pass length, the target and the maximum.

use crate::instr::{Instr, InstrSource};
use apusim_trace::TraceError;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Opens the program again from its start.
pub type Reopen = Box<dyn FnMut() -> Result<Box<dyn InstrSource>, TraceError> + Send>;

/// Most times a program is restarted. Past it a run measures mostly its replays (every pass
/// after the first sees caches warm with the same addresses), and each restart reopens the
/// trace: ten thousand restarts of a few-instruction trace take seconds, a million minutes.
pub const MAX_RESTARTS: u64 = 10_000;

/// A program replayed from its start each time it ends.
pub struct Replay {
    current: Box<dyn InstrSource>,
    reopen: Reopen,
    /// Instructions of the current pass handed out so far.
    in_pass: u64,
    restarts: Arc<AtomicU64>,
    /// Instructions the program must hand out in all (for the early refusal of a target
    /// that needs more than [`MAX_RESTARTS`] restarts).
    target: Option<u64>,
}

impl Replay {
    /// The program `first`, reopened by `reopen`; the counter tells how many times it has
    /// been restarted.
    pub fn new(first: Box<dyn InstrSource>, reopen: Reopen) -> (Replay, Arc<AtomicU64>) {
        let restarts = Arc::new(AtomicU64::new(0));
        (
            Replay {
                current: first,
                reopen,
                in_pass: 0,
                restarts: restarts.clone(),
                target: None,
            },
            restarts,
        )
    }

    /// The same replay, told that its consumer needs `target` instructions in all: a first
    /// pass too short to reach them within [`MAX_RESTARTS`] restarts is an error at its end.
    pub fn with_target(mut self, target: u64) -> Replay {
        self.target = Some(target);
        self
    }
}

impl Replay {
    /// At the end of a pass: start the next one, unless the pass was empty (an empty
    /// program would restart forever; it ends instead). True if a new pass began.
    fn restart(&mut self) -> Result<bool, TraceError> {
        if self.in_pass == 0 {
            return Ok(false);
        }
        let restarts = self.restarts.load(Ordering::Relaxed);
        if let Some(target) = self.target.filter(|_| restarts == 0) {
            // Passes beyond the first that reaching `target` takes.
            let more = target.div_ceil(self.in_pass).saturating_sub(1);
            if more > MAX_RESTARTS {
                return Err(TraceError::Other(format!(
                    "one pass of the trace holds {} instructions, so reaching the target of {} \
                     instructions would restart it {} times, more than the maximum of \
                     {MAX_RESTARTS} (give a longer trace or a smaller target)",
                    self.in_pass, target, more
                )));
            }
        }
        if restarts >= MAX_RESTARTS {
            return Err(TraceError::Other(format!(
                "the trace ({} instructions a pass) has been restarted {restarts} times, the \
                 maximum, and the run still needs instructions from it; give a longer trace or \
                 a smaller target",
                self.in_pass
            )));
        }
        self.current = (self.reopen)()?;
        self.in_pass = 0;
        self.restarts.fetch_add(1, Ordering::Relaxed);
        Ok(true)
    }
}

impl InstrSource for Replay {
    fn next_instr(&mut self) -> Result<Option<Instr>, TraceError> {
        loop {
            if let Some(i) = self.current.next_instr()? {
                self.in_pass += 1;
                return Ok(Some(i));
            }
            if !self.restart()? {
                return Ok(None);
            }
        }
    }
    /// In place, as the wrapped program builds it (cores read records this way).
    fn next_into(&mut self, out: &mut Instr) -> Result<bool, TraceError> {
        loop {
            if self.current.next_into(out)? {
                self.in_pass += 1;
                return Ok(true);
            }
            if !self.restart()? {
                return Ok(false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Count(u32, u32);
    impl InstrSource for Count {
        fn next_instr(&mut self) -> Result<Option<Instr>, TraceError> {
            if self.0 == self.1 {
                return Ok(None);
            }
            self.0 += 1;
            Ok(Some(Instr::plain(self.0)))
        }
    }

    #[test]
    fn a_program_restarts_from_its_first_instruction() {
        let (mut r, restarts) = Replay::new(
            Box::new(Count(0, 3)),
            Box::new(|| Ok(Box::new(Count(0, 3)) as Box<dyn InstrSource>)),
        );
        let got: Vec<u32> = (0..8)
            .map(|_| r.next_instr().unwrap().unwrap().repeat)
            .collect();
        assert_eq!(got, [1, 2, 3, 1, 2, 3, 1, 2]);
        assert_eq!(restarts.load(Ordering::Relaxed), 2);
        // The same through the in-place path cores use.
        let (mut r, _) = Replay::new(
            Box::new(Count(0, 3)),
            Box::new(|| Ok(Box::new(Count(0, 3)) as Box<dyn InstrSource>)),
        );
        let mut i = Instr::plain(1);
        let got: Vec<u32> = (0..7)
            .map(|_| {
                assert!(r.next_into(&mut i).unwrap());
                i.repeat
            })
            .collect();
        assert_eq!(got, [1, 2, 3, 1, 2, 3, 1]);
    }

    #[test]
    fn an_empty_program_ends() {
        let (mut r, restarts) = Replay::new(
            Box::new(Count(0, 0)),
            Box::new(|| Ok(Box::new(Count(0, 0)) as Box<dyn InstrSource>)),
        );
        assert!(r.next_instr().unwrap().is_none());
        assert_eq!(restarts.load(Ordering::Relaxed), 0);
        // A program that becomes empty on its second pass ends then.
        let (mut r, _) = Replay::new(
            Box::new(Count(0, 1)),
            Box::new(|| Ok(Box::new(Count(0, 0)) as Box<dyn InstrSource>)),
        );
        assert!(r.next_instr().unwrap().is_some());
        assert!(r.next_instr().unwrap().is_none());
    }

    #[test]
    fn a_target_out_of_reach_fails_at_the_end_of_the_first_pass() {
        let reopen = || Box::new(|| Ok(Box::new(Count(0, 4)) as Box<dyn InstrSource>)) as Reopen;
        // 4 instructions a pass: 4 × (MAX_RESTARTS + 1) are reachable, one more is not.
        let reachable = 4 * (MAX_RESTARTS + 1);
        let (r, _) = Replay::new(Box::new(Count(0, 4)), reopen());
        let mut r = r.with_target(reachable);
        for _ in 0..reachable {
            assert!(r.next_instr().unwrap().is_some());
        }
        let (r, restarts) = Replay::new(Box::new(Count(0, 4)), reopen());
        let mut r = r.with_target(reachable + 1);
        for _ in 0..4 {
            assert!(r.next_instr().unwrap().is_some());
        }
        let e = r.next_instr().unwrap_err().to_string();
        assert!(
            e.contains("holds 4 instructions") && e.contains(&(reachable + 1).to_string()),
            "{e}"
        );
        assert!(e.contains(&MAX_RESTARTS.to_string()), "{e}");
        assert_eq!(restarts.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn restarts_stop_at_the_maximum() {
        let (mut r, restarts) = Replay::new(
            Box::new(Count(0, 1)),
            Box::new(|| Ok(Box::new(Count(0, 1)) as Box<dyn InstrSource>)),
        );
        for _ in 0..=MAX_RESTARTS {
            assert!(r.next_instr().unwrap().is_some());
        }
        let e = r.next_instr().unwrap_err().to_string();
        assert!(e.contains("restarted 10000 times"), "{e}");
        assert_eq!(restarts.load(Ordering::Relaxed), MAX_RESTARTS);
    }

    #[test]
    fn a_failed_reopen_is_an_error() {
        let (mut r, _) = Replay::new(
            Box::new(Count(0, 1)),
            Box::new(|| Err(TraceError::Other("gone".into()))),
        );
        assert!(r.next_instr().unwrap().is_some());
        assert!(r.next_instr().is_err());
    }
}
