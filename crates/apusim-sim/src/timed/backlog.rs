//! Requests that reached a memory controller whose queue was full.
//!
//! Each channel's controller has a read queue and a write queue (`apusim_dram`). A request
//! that finds its queue full waits here, in a first-in first-out line of its own channel and
//! direction, until a slot frees. Separate lines matter: a single line would hold every CPU
//! read behind a burst of GPU write-backs to a full write queue (head-of-line blocking that
//! no controller has: its read queue would have room), and requests to an idle channel behind
//! those of a busy one.

use apusim_dram::stats::Occupancy;
use apusim_dram::{MemorySystem, Request};
use std::collections::VecDeque;

/// The waiting lines, one per channel and direction.
#[derive(Debug)]
pub struct Backlog {
    /// Index `2 × channel + is_write`.
    lines: Vec<VecDeque<Request>>,
    reads: usize,
    writes: usize,
    /// `reads` and `writes` integrated over DRAM cycles.
    read_occupancy: Occupancy,
    write_occupancy: Occupancy,
}

impl Backlog {
    pub fn new(channels: usize) -> Backlog {
        Backlog {
            lines: (0..2 * channels.max(1)).map(|_| VecDeque::new()).collect(),
            reads: 0,
            writes: 0,
            read_occupancy: Occupancy::default(),
            write_occupancy: Occupancy::default(),
        }
    }

    /// The counts changed at DRAM cycle `now`.
    fn counted(&mut self, now: u64) {
        self.read_occupancy.update(now, self.reads);
        self.write_occupancy.update(now, self.writes);
    }

    /// The sums over DRAM cycles, up to `now`, of the reads and of the write-backs waiting
    /// here: a window's mean is the difference of two readings over the cycles between them.
    pub fn integrals_at(&self, now: u64) -> (u128, u128) {
        (
            self.read_occupancy.integral_at(now),
            self.write_occupancy.integral_at(now),
        )
    }

    fn line(dram: &MemorySystem, r: &Request) -> usize {
        2 * dram.decode(r.addr).channel as usize + usize::from(r.is_write)
    }

    /// Offer `r` to its controller; it waits here if its line is not empty (requests keep
    /// their order within a line) or its queue is full.
    pub fn send(&mut self, dram: &mut MemorySystem, r: Request) {
        let l = Self::line(dram, &r);
        if !self.lines[l].is_empty() {
            self.push(l, r, dram.now());
        } else if let Err(r) = dram.try_send(r) {
            self.push(l, r, dram.now());
        }
    }

    fn push(&mut self, l: usize, r: Request, now: u64) {
        if r.is_write {
            self.writes += 1;
        } else {
            self.reads += 1;
        }
        self.lines[l].push_back(r);
        self.counted(now);
    }

    /// Hand waiting requests to their controllers, oldest first in each line, while their
    /// queues take them.
    pub fn retry(&mut self, dram: &mut MemorySystem) {
        if self.is_empty() {
            return;
        }
        for line in &mut self.lines {
            while let Some(&r) = line.front() {
                if dram.try_send(r).is_err() {
                    break;
                }
                line.pop_front();
                if r.is_write {
                    self.writes -= 1;
                } else {
                    self.reads -= 1;
                }
            }
        }
        self.counted(dram.now());
    }

    pub fn is_empty(&self) -> bool {
        self.reads + self.writes == 0
    }
    /// Reads waiting for a read-queue slot.
    pub fn reads(&self) -> usize {
        self.reads
    }
    /// Write-backs waiting for a write-queue slot.
    pub fn writes(&self) -> usize {
        self.writes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(id: u64, addr: u64, is_write: bool) -> Request {
        Request::new(id, addr, is_write, 0)
    }

    /// A full write queue does not hold back a read: with the one channel's write queue
    /// full and writes waiting, a read still enters the read queue at once.
    #[test]
    fn reads_pass_waiting_writes() {
        let mut cfg = apusim_dram::presets::preset("ddr3-2133-14-2ch").unwrap();
        cfg.apply_override("channels", "1").unwrap();
        cfg.apply_override("write_queue", "2").unwrap();
        let mut dram = MemorySystem::new(cfg).unwrap();
        let mut b = Backlog::new(1);
        for i in 0..5 {
            b.send(&mut dram, req(i, i << 20, true));
        }
        assert_eq!(b.writes(), 3, "two writes fit the queue, three wait");
        let queued = dram.queued();
        b.send(&mut dram, req(9, 1 << 30, false));
        assert_eq!(
            b.reads() + b.writes(),
            3,
            "the read did not wait behind the writes"
        );
        assert_eq!(dram.queued(), queued + 1);
        // Once the queue drains, the waiting writes all enter.
        let mut out = Vec::new();
        while !b.is_empty() {
            let next = dram.next_event().expect("the controller has work");
            dram.advance_to(next + 1, &mut out);
            b.retry(&mut dram);
        }
        assert_eq!(b.writes(), 0);
    }

    /// The integrals are the waiting counts summed over DRAM cycles: integrating the counts
    /// seen between the steps of a drain gives the same sums, and a reading between changes
    /// extends the last count to the cycle asked for.
    #[test]
    fn waiting_requests_integrate_over_dram_cycles() {
        let mut cfg = apusim_dram::presets::preset("ddr3-2133-14-2ch").unwrap();
        cfg.apply_override("channels", "1").unwrap();
        cfg.apply_override("write_queue", "2").unwrap();
        cfg.apply_override("read_queue", "1").unwrap();
        let mut dram = MemorySystem::new(cfg).unwrap();
        let mut b = Backlog::new(1);
        for i in 0..6 {
            b.send(&mut dram, req(i, i << 20, true));
        }
        for i in 0..3 {
            b.send(&mut dram, req(10 + i, (i + 40) << 20, false));
        }
        assert_eq!((b.reads(), b.writes()), (2, 4));
        assert_eq!(b.integrals_at(0), (0, 0));
        assert_eq!(
            b.integrals_at(7),
            (14, 28),
            "a reading extends the counts to its cycle"
        );
        let (mut want, mut at, mut counts) = ((0u128, 0u128), 0u64, (2u128, 4u128));
        let mut out = Vec::new();
        while !b.is_empty() {
            let next = dram.next_event().expect("the controller has work");
            dram.advance_to(next + 1, &mut out);
            let now = dram.now();
            want.0 += counts.0 * u128::from(now - at);
            want.1 += counts.1 * u128::from(now - at);
            b.retry(&mut dram);
            assert_eq!(b.integrals_at(now), want, "at DRAM cycle {now}");
            (at, counts) = (now, (b.reads() as u128, b.writes() as u128));
        }
        assert!(want.0 > 0 && want.1 > 0, "{want:?}");
        assert_eq!(b.integrals_at(at + 100), want, "nothing waits any more");
    }
}
