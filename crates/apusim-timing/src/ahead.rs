//! A program whose instructions are built on a thread of their own.
//!
//! Reading a trace, decompressing it and building its instruction records is independent of
//! the timing model, so [`Ahead`] does it on a second thread, a few chunks of records ahead
//! of the core; the core then only copies each record out. The instructions, and so the
//! run, are the same as the wrapped program's on the calling thread.

use crate::instr::{Instr, InstrSource};
use apusim_trace::TraceError;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};

/// Instructions per chunk sent between the threads.
const CHUNK: usize = 1024;
/// Chunks the building thread may run ahead of the core.
const AHEAD: usize = 4;

/// The instructions of a program built on another thread.
pub struct Ahead {
    rx: Receiver<Result<Vec<Instr>, TraceError>>,
    /// Emptied chunks go back to the building thread for reuse.
    back: Sender<Vec<Instr>>,
    buf: Vec<Instr>,
    pos: usize,
    ended: bool,
}

impl Ahead {
    /// Build `program`'s instructions on a new thread. An error ends the program after the
    /// instructions read before it.
    pub fn spawn(mut program: impl InstrSource + 'static) -> Ahead {
        let (tx, rx) = sync_channel::<Result<Vec<Instr>, TraceError>>(AHEAD);
        let (back, back_rx) = channel::<Vec<Instr>>();
        std::thread::spawn(move || loop {
            let mut v = back_rx.try_recv().unwrap_or_default();
            v.resize(CHUNK, Instr::plain(1));
            let mut n = 0;
            let mut error = None;
            while n < CHUNK {
                match program.next_into(&mut v[n]) {
                    Ok(true) => n += 1,
                    Ok(false) => break,
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
            }
            let end = n < CHUNK;
            v.truncate(n);
            if n > 0 && tx.send(Ok(v)).is_err() {
                return;
            }
            if let Some(e) = error {
                let _ = tx.send(Err(e));
            }
            if end {
                return;
            }
        });
        Ahead {
            rx,
            back,
            buf: Vec::new(),
            pos: 0,
            ended: false,
        }
    }
}

impl InstrSource for Ahead {
    fn next_instr(&mut self) -> Result<Option<Instr>, TraceError> {
        let mut ins = Instr::plain(1);
        Ok(self.next_into(&mut ins)?.then_some(ins))
    }

    fn next_into(&mut self, out: &mut Instr) -> Result<bool, TraceError> {
        while self.pos == self.buf.len() {
            if self.ended {
                return Ok(false);
            }
            self.pos = 0;
            match self.rx.recv() {
                Ok(Ok(v)) => {
                    let _ = self.back.send(std::mem::replace(&mut self.buf, v));
                }
                Ok(Err(e)) => {
                    self.buf.clear();
                    self.ended = true;
                    return Err(e);
                }
                // The building thread ended: so did the program.
                Err(_) => {
                    self.buf.clear();
                    self.ended = true;
                }
            }
        }
        out.copy_from(&self.buf[self.pos]);
        self.pos += 1;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instr::VecInstrs;

    /// Yields `n` runs of increasing length, then an error.
    struct Failing(u32, u32);
    impl InstrSource for Failing {
        fn next_instr(&mut self) -> Result<Option<Instr>, TraceError> {
            if self.0 == self.1 {
                return Err(TraceError::Other("broken".into()));
            }
            self.0 += 1;
            Ok(Some(Instr::plain(self.0)))
        }
    }

    fn all(mut s: impl InstrSource) -> Vec<Result<Instr, String>> {
        let mut out = Vec::new();
        loop {
            match s.next_instr() {
                Ok(Some(i)) => out.push(Ok(i)),
                Ok(None) => return out,
                Err(e) => {
                    out.push(Err(e.to_string()));
                    return out;
                }
            }
        }
    }

    #[test]
    fn the_same_instructions_in_the_same_order() {
        let v: Vec<Instr> = (1..=3 * CHUNK as u32 + 5).map(Instr::plain).collect();
        assert_eq!(
            all(Ahead::spawn(VecInstrs(v.clone().into()))),
            all(VecInstrs(v.into()))
        );
    }

    #[test]
    fn an_error_follows_the_instructions_before_it() {
        let n = CHUNK as u32 + 7;
        let got = all(Ahead::spawn(Failing(0, n)));
        assert_eq!(got.len(), n as usize + 1);
        assert_eq!(got[n as usize - 1], Ok(Instr::plain(n)));
        assert!(got[n as usize].as_ref().unwrap_err().contains("broken"));
    }
}
