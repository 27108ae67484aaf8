//! A program that starts again from its beginning when it ends.
//!
//! In a multiprogram run every core must keep running until the last one reaches its
//! instruction target, so that the others see its interference to the end; a trace shorter
//! than that is replayed from its start, as ChampSim's trace readers do. [`Replay`] wraps the
//! first pass and a function that opens the program afresh; the caches stay warm from the
//! earlier passes, as they would for a program run twice. The passes are counted so that a
//! report can say when a core's figures include a replay.

use crate::instr::{Instr, InstrSource};
use apusim_trace::TraceError;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Opens the program again from its start.
pub type Reopen = Box<dyn FnMut() -> Result<Box<dyn InstrSource>, TraceError> + Send>;

/// A program replayed from its start each time it ends.
pub struct Replay {
    current: Box<dyn InstrSource>,
    reopen: Reopen,
    /// Instructions of the current pass handed out so far.
    in_pass: u64,
    restarts: Arc<AtomicU64>,
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
            },
            restarts,
        )
    }
}

impl Replay {
    /// At the end of a pass: start the next one, unless the pass was empty (an empty
    /// program would restart forever; it ends instead). True if a new pass began.
    fn restart(&mut self) -> Result<bool, TraceError> {
        if self.in_pass == 0 {
            return Ok(false);
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
    fn a_failed_reopen_is_an_error() {
        let (mut r, _) = Replay::new(
            Box::new(Count(0, 1)),
            Box::new(|| Err(TraceError::Other("gone".into()))),
        );
        assert!(r.next_instr().unwrap().is_some());
        assert!(r.next_instr().is_err());
    }
}
