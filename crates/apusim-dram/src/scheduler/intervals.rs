//! Requests served per source in equal intervals of DRAM cycles: the memory-intensity
//! measure of the schedulers that classify sources (`dash`, `sms`), and the `interval`
//! parameter of every scheduler that measures over intervals (those and `im`). The schedulers see only
//! the DRAM queues, not instruction counts, so they use requests served per interval where
//! their papers use misses per kilo-instruction.
//!
//! Counts change only in `on_issue` ([`ServedCounts::record`] after [`ServedCounts::roll`]).
//! What a decision at cycle `now` uses — the counts of the last complete interval before
//! `now` — is a pure function of those counts and `now` ([`ServedCounts::history_at`]), so
//! a speculative `pick` in a new interval sees the same history as the `on_issue` that
//! follows it.

use apusim_registry::{ParamKind, ParamSpec};

/// The `interval` parameter of a scheduler that measures over intervals: its length in DRAM
/// cycles, `doc` saying what is measured.
pub(crate) const fn interval_param(doc: &'static str) -> ParamSpec {
    ParamSpec {
        name: "interval",
        kind: ParamKind::Int {
            min: 1,
            max: 1 << 40,
        },
        default: "100000",
        unit: "DRAM cycles",
        doc,
    }
}

/// Per-source served requests of the current and the last complete interval.
#[derive(Clone, Debug)]
pub(crate) struct ServedCounts {
    len: u64,
    /// Interval index of `counts`.
    cur: u64,
    /// Served in interval `cur`, per source.
    counts: Vec<u32>,
    /// Served in interval `cur - 1` (all zero before the first), per source.
    last: Vec<u32>,
}

impl ServedCounts {
    /// Intervals of `len` DRAM cycles (at least 1).
    pub(crate) fn new(len: u64) -> Self {
        ServedCounts {
            len: len.max(1),
            cur: 0,
            counts: vec![0; 256],
            last: vec![0; 256],
        }
    }

    /// Interval length in DRAM cycles.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Move on to the interval of `now` if it is a later one; true if it moved.
    pub(crate) fn roll(&mut self, now: u64) -> bool {
        let k = now / self.len;
        if k <= self.cur {
            return false;
        }
        if k == self.cur + 1 {
            std::mem::swap(&mut self.last, &mut self.counts);
        } else {
            self.last.fill(0);
        }
        self.counts.fill(0);
        self.cur = k;
        true
    }

    /// Count a request of `source` served in the current interval (after [`Self::roll`]).
    pub(crate) fn record(&mut self, source: u8) {
        self.counts[source as usize] += 1;
    }

    /// The per-source counts of the last complete interval before `now`, and whether they
    /// are the cached `last` (`now` in interval `cur`, the case of every decision after the
    /// first command of an interval); `None` if that interval had no command at all (every
    /// count zero).
    pub(crate) fn history_at(&self, now: u64) -> Option<(&[u32], bool)> {
        match (now / self.len).checked_sub(self.cur) {
            Some(0) | None => Some((&self.last, true)),
            Some(1) => Some((&self.counts, false)),
            Some(_) => None,
        }
    }

    /// The first cycle of the interval after the one of `now`.
    pub(crate) fn next_boundary(&self, now: u64) -> u64 {
        (now / self.len).saturating_add(1).saturating_mul(self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_is_the_last_complete_interval() {
        let mut c = ServedCounts::new(100);
        assert_eq!(c.history_at(50).unwrap().0[3], 0);
        c.roll(10);
        c.record(3);
        c.record(3);
        // In interval 1, before any command there: interval 0's counts.
        assert_eq!(c.history_at(150), Some((&c.counts[..], false)));
        assert_eq!(c.history_at(150).unwrap().0[3], 2);
        assert_eq!(c.history_at(250), None, "interval 1 had no command");
        assert!(c.roll(150));
        assert!(!c.roll(199));
        assert_eq!(c.history_at(160).unwrap(), (&c.last[..], true));
        assert_eq!(c.history_at(160).unwrap().0[3], 2);
        c.record(4);
        // Skipping an interval forgets everything.
        assert!(c.roll(350));
        assert!(c.last.iter().all(|&n| n == 0) && c.counts.iter().all(|&n| n == 0));
        assert_eq!(c.next_boundary(350), 400);
        assert_eq!(ServedCounts::new(7).next_boundary(u64::MAX - 1), u64::MAX);
    }
}
