//! Miss-status holding registers: the lines a cache level is waiting for.
//!
//! An entry is a line with either a known arrival tick (a hit further down whose latency is
//! fixed) or an unknown one (a request travelling below), plus the accesses waiting for it.
//! A later access to a line that has an entry merges into it instead of sending a second
//! request; the number of entries is bounded by the level's MSHR count. Levels have a few
//! dozen MSHRs, so the table is a short vector searched linearly.

use crate::core::Token;
use crate::Tick;

/// Arrival tick of a line whose request is still travelling.
pub const UNKNOWN: Tick = Tick::MAX;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub line: u64,
    pub ready: Tick,
    /// When the first access asked for the line.
    pub since: Tick,
    /// (who, token) of each access waiting for the line.
    pub waiters: Vec<(u32, Token)>,
}

#[derive(Clone, Debug)]
pub struct Mshrs {
    capacity: usize,
    entries: Vec<Entry>,
}

impl Mshrs {
    pub fn new(capacity: usize) -> Mshrs {
        Mshrs {
            capacity: capacity.max(1),
            entries: Vec::new(),
        }
    }

    /// Drop entries whose line arrived by `now`.
    pub fn expire(&mut self, now: Tick) {
        self.entries
            .retain(|e| e.ready == UNKNOWN || e.ready > now || !e.waiters.is_empty());
    }

    pub fn get_mut(&mut self, line: u64) -> Option<&mut Entry> {
        self.entries.iter_mut().find(|e| e.line == line)
    }

    pub fn contains(&self, line: u64) -> bool {
        self.entries.iter().any(|e| e.line == line)
    }

    pub fn is_full(&self) -> bool {
        self.entries.len() >= self.capacity
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The earliest known arrival among the entries (when one frees by itself).
    pub fn earliest_known(&self) -> Option<Tick> {
        self.entries
            .iter()
            .map(|e| e.ready)
            .filter(|&r| r != UNKNOWN)
            .min()
    }

    /// Add an entry (the caller checked `is_full` and `contains`).
    pub fn insert(&mut self, line: u64, since: Tick, ready: Tick, waiter: Option<(u32, Token)>) {
        self.entries.push(Entry {
            line,
            ready,
            since,
            waiters: waiter.into_iter().collect(),
        });
    }

    /// The line arrived: remove its entry and return it.
    pub fn fill(&mut self, line: u64) -> Option<Entry> {
        let i = self.entries.iter().position(|e| e.line == line)?;
        Some(self.entries.swap_remove(i))
    }

    /// The entry waited for longest (for deadlock reports).
    pub fn oldest(&self) -> Option<&Entry> {
        self.entries.iter().min_by_key(|e| e.since)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_merge_expire_and_fill() {
        let mut m = Mshrs::new(2);
        m.insert(1, 0, 100, None);
        m.insert(2, 0, UNKNOWN, Some((0, 7)));
        assert!(m.is_full());
        m.get_mut(2).unwrap().waiters.push((0, 8));
        m.expire(99);
        assert_eq!(m.len(), 2);
        m.expire(100);
        assert_eq!(m.len(), 1, "the known arrival has passed");
        assert_eq!(m.earliest_known(), None);
        assert_eq!(m.fill(2).unwrap().waiters, vec![(0, 7), (0, 8)]);
        assert!(m.is_empty());
    }
}
