//! The event queue: messages in flight between components, delivered in time order.
//!
//! Events at the same tick are delivered in the order they were scheduled (a sequence number
//! breaks ties), so a run is deterministic whatever the host does.

use crate::Tick;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

struct Entry<E> {
    at: Tick,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// A deterministic time-ordered queue of events of type `E`.
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Entry<E>>>,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    /// Deliver `event` at tick `at`.
    pub fn schedule(&mut self, at: Tick, event: E) {
        self.seq += 1;
        self.heap.push(Reverse(Entry {
            at,
            seq: self.seq,
            event,
        }));
    }
    /// The tick of the next event.
    pub fn peek_time(&self) -> Option<Tick> {
        self.heap.peek().map(|e| e.0.at)
    }
    /// The next event if it is due at or before `now`.
    pub fn pop_due(&mut self, now: Tick) -> Option<(Tick, E)> {
        if self.peek_time()? <= now {
            self.heap.pop().map(|e| (e.0.at, e.0.event))
        } else {
            None
        }
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_order_then_schedule_order() {
        let mut q = EventQueue::default();
        q.schedule(10, 'b');
        q.schedule(5, 'a');
        q.schedule(10, 'c');
        assert_eq!(q.pop_due(4), None);
        assert_eq!(q.pop_due(100), Some((5, 'a')));
        assert_eq!(q.pop_due(100), Some((10, 'b')));
        assert_eq!(q.pop_due(100), Some((10, 'c')));
        assert!(q.is_empty());
    }
}
