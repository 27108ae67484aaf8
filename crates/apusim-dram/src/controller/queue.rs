//! Requests arriving at the controller: admission into the read and write queues, write
//! merging and read forwarding, untimed completion, the statistics of every completion, and
//! the write-drain mode they set.

use super::Controller;
use crate::mapping::DecodedAddr;
use crate::request::{Completion, Request};
use crate::scheduler::Candidate;
use crate::stats::AccessStats;

impl Controller {
    /// Would [`Controller::enqueue`] accept a request to `addr` now (room in its queue, or a
    /// queued write to forward from / merge with)?
    pub(crate) fn would_accept(&self, addr: u64, is_write: bool) -> bool {
        let line = addr >> self.tx_shift;
        self.has_room(is_write)
            || (self.wq_filter[(line & 63) as usize] > 0 && self.wq_lines.contains(&line))
    }

    pub(crate) fn has_room(&self, is_write: bool) -> bool {
        if is_write {
            self.wq.len() < self.wq_cap
        } else {
            self.rq.len() < self.rq_cap
        }
    }

    #[inline]
    fn source_stats(sources: &mut [Option<Box<AccessStats>>], s: u8) -> &mut AccessStats {
        sources[s as usize].get_or_insert_with(Default::default)
    }

    /// The write-drain decision for the current queue lengths (Ramulator 2's rule): enter
    /// drain mode when the write queue reaches the high watermark or no read is waiting;
    /// leave it when the write queue is empty, or at/below the low watermark with reads
    /// waiting. Bounded as gem5 bounds it: with reads waiting a drain ends after
    /// `write_drain_cap` writes, and the next one waits until a read has been served.
    #[inline]
    pub(super) fn desired_mode(&self) -> bool {
        let (rl, wl) = (self.rq.len(), self.wq.len());
        if !self.write_mode {
            if self.read_owed && rl > 0 {
                return false;
            }
            wl >= self.high || (rl == 0 && wl > 0)
        } else {
            !(wl == 0 || (rl > 0 && (wl <= self.low || self.drained >= self.drain_cap)))
        }
    }

    /// Accept `req` at cycle `now`, or hand it back if its queue is full. Reads that find a
    /// queued write to the same transaction are served from it (forwarded); writes to a
    /// transaction already queued for writing merge with it.
    pub(crate) fn enqueue(
        &mut self,
        req: Request,
        d: &DecodedAddr,
        now: u64,
    ) -> Result<(), Request> {
        let line = req.addr >> self.tx_shift;
        let stall = now.saturating_sub(req.arrival);
        let queued_write =
            self.wq_filter[(line & 63) as usize] > 0 && self.wq_lines.contains(&line);
        if req.is_write {
            if queued_write {
                self.finish_untimed(req, now, now, stall);
                self.stats.access.merged_writes += 1;
                Self::source_stats(&mut self.sources, req.source).merged_writes += 1;
                return Ok(());
            }
            if self.wq.len() >= self.wq_cap {
                return Err(req);
            }
        } else {
            if queued_write {
                self.finish_untimed(req, now, now + 1, stall);
                self.stats.access.forwarded_reads += 1;
                Self::source_stats(&mut self.sources, req.source).forwarded_reads += 1;
                return Ok(());
            }
            if self.rq.len() >= self.rq_cap {
                return Err(req);
            }
        }
        let bank = self.dev.flat(d.rank, d.bank_group, d.bank) as u32;
        let c = Candidate {
            req,
            enqueued: now,
            bank,
            row: d.row,
            column: d.column,
            rank: d.rank,
            first_outcome: None,
        };
        self.stats.access.stall_cycles += stall;
        Self::source_stats(&mut self.sources, req.source).stall_cycles += stall;
        self.version += 1;
        let served = req.is_write == self.write_mode;
        if !self.dirty && served {
            // Keep the bank view current without a rebuild (the new candidate is youngest).
            let idx = if req.is_write {
                self.wq.len()
            } else {
                self.rq.len()
            } as u32;
            self.note_new(bank as usize, d.row, idx);
        }
        if req.is_write {
            self.wq.push(c);
            self.wq_lines.push(line);
            self.wq_filter[(line & 63) as usize] += 1;
            self.stats.write_queue.update(now, self.wq.len());
        } else {
            self.rq.push(c);
            self.stats.read_queue.update(now, self.rq.len());
        }
        if !self.dirty && self.desired_mode() != self.write_mode {
            self.dirty = true;
        }
        #[cfg(debug_assertions)]
        if !self.dirty {
            self.check_views();
        }
        // Re-plan at this cycle's decision (all arrivals of a cycle share one plan).
        self.needs_plan = true;
        self.next_wake = self.next_wake.min(now);
        Ok(())
    }

    /// Statistics and completion of a request served without a DRAM burst.
    fn finish_untimed(&mut self, req: Request, now: u64, done: u64, stall: u64) {
        self.complete(req, now, done, stall, 0);
    }

    /// Count served request `req` (queued at `enqueued`, its data at `done`) in the channel's
    /// and its source's statistics, with the `stall` cycles it waited for a queue slot and the
    /// `bytes` it moved, and report its completion when asked.
    #[inline]
    pub(super) fn complete(
        &mut self,
        req: Request,
        enqueued: u64,
        done: u64,
        stall: u64,
        bytes: u64,
    ) {
        let lat = done - enqueued;
        let src = Self::source_stats(&mut self.sources, req.source);
        for s in [&mut self.stats.access, src] {
            s.stall_cycles += stall;
            s.bytes += bytes;
            if req.is_write {
                s.writes += 1;
                s.write_latency.record(lat);
            } else {
                s.reads += 1;
                s.read_latency.record(lat);
            }
        }
        self.stats.last_done = self.stats.last_done.max(done);
        if self.report_completions {
            self.completions.push(Completion {
                id: req.id,
                addr: req.addr,
                is_write: req.is_write,
                source: req.source,
                stream: req.stream,
                arrival: req.arrival,
                enqueued,
                done,
            });
        }
    }
}
