//! A trace source that reports how many records have passed through it: after each batch it
//! calls its `report` with the count so far and whether more follow. Front ends hang their
//! progress displays on it for the long reads no simulation loop reports (a generated
//! workload written to the trace cache, a program recorded under valgrind).

use crate::{Access, AccessSource, Result, TraceHeader};

/// `inner`, counted; see the module doc.
pub struct Counted<S, F> {
    inner: S,
    records: u64,
    report: F,
}

impl<S: AccessSource, F: FnMut(u64, bool) + Send> Counted<S, F> {
    pub fn new(inner: S, report: F) -> Counted<S, F> {
        Counted {
            inner,
            records: 0,
            report,
        }
    }

    /// Records handed on so far.
    pub fn records(&self) -> u64 {
        self.records
    }
}

impl<S: AccessSource, F: FnMut(u64, bool) + Send> AccessSource for Counted<S, F> {
    fn header(&self) -> &TraceHeader {
        self.inner.header()
    }
    fn next_batch(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        let before = out.len();
        let more = self.inner.next_batch(out)?;
        // Saturating: a source outside the contract may refill `out` instead of appending.
        self.records += out.len().saturating_sub(before) as u64;
        (self.report)(self.records, more);
        Ok(more)
    }
}
