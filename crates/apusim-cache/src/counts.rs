//! Per-(agent, stream) access counters shared by every report of apusim: the functional
//! hierarchy's levels, the offline oracles and the studies built on them.

use apusim_trace::Op;
use serde::{Deserialize, Serialize};

/// What one level saw from one (agent, stream). An access that touches two lines counts once
/// and misses at most once (cachegrind's rule).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Demand reads (a read-modify-write counts as one read, as in cachegrind).
    pub reads: u64,
    pub read_misses: u64,
    pub writes: u64,
    pub write_misses: u64,
    /// Dirty lines written back into this level from above.
    pub writebacks: u64,
    pub writeback_misses: u64,
    pub prefetches: u64,
    pub prefetch_misses: u64,
    /// Misses the policy chose not to allocate.
    pub bypasses: u64,
    /// Lines of this (agent, stream) that left the level to make room.
    pub evictions: u64,
    /// ... of which dirty (written back below).
    pub dirty_evictions: u64,
    /// Lines removed by back-invalidation from the LLC (inclusion).
    pub back_invalidations: u64,
    /// Non-compulsory misses charged as hits by `--ideal` (counted among the hits).
    pub idealized: u64,
}

impl Counts {
    /// The CSV columns of [`Counts::csv`], in its order.
    pub const CSV_COLUMNS: &'static str = "reads,read_misses,writes,write_misses,writebacks,\
         writeback_misses,prefetches,prefetch_misses,bypasses,evictions,dirty_evictions";

    /// The access, miss, bypass and eviction counters as CSV fields ([`Counts::CSV_COLUMNS`]):
    /// what every CSV report of apusim writes of a cell.
    pub fn csv(&self) -> String {
        format!(
            "{},{},{},{},{},{},{},{},{},{},{}",
            self.reads,
            self.read_misses,
            self.writes,
            self.write_misses,
            self.writebacks,
            self.writeback_misses,
            self.prefetches,
            self.prefetch_misses,
            self.bypasses,
            self.evictions,
            self.dirty_evictions
        )
    }

    pub fn accesses(&self) -> u64 {
        self.reads + self.writes + self.writebacks + self.prefetches
    }
    pub fn misses(&self) -> u64 {
        self.read_misses + self.write_misses + self.writeback_misses + self.prefetch_misses
    }
    pub fn hits(&self) -> u64 {
        self.accesses() - self.misses()
    }
    /// Read hits over reads (prefetches count as reads here); `None` without reads.
    pub fn read_hit_rate(&self) -> Option<f64> {
        let r = self.reads + self.prefetches;
        (r > 0).then(|| (r - self.read_misses - self.prefetch_misses) as f64 / r as f64)
    }
    /// Hits over accesses; `None` without accesses.
    pub fn hit_rate(&self) -> Option<f64> {
        let a = self.accesses();
        (a > 0).then(|| self.hits() as f64 / a as f64)
    }

    /// Count one access of kind `op` (with `modify` reads counted as reads).
    #[inline]
    pub fn record(&mut self, op: Op, miss: bool) {
        let m = miss as u64;
        match op {
            Op::Read => {
                self.reads += 1;
                self.read_misses += m;
            }
            Op::Write => {
                self.writes += 1;
                self.write_misses += m;
            }
            Op::Writeback => {
                self.writebacks += 1;
                self.writeback_misses += m;
            }
            Op::Prefetch => {
                self.prefetches += 1;
                self.prefetch_misses += m;
            }
        }
    }

    pub fn add(&mut self, o: &Counts) {
        self.reads += o.reads;
        self.read_misses += o.read_misses;
        self.writes += o.writes;
        self.write_misses += o.write_misses;
        self.writebacks += o.writebacks;
        self.writeback_misses += o.writeback_misses;
        self.prefetches += o.prefetches;
        self.prefetch_misses += o.prefetch_misses;
        self.bypasses += o.bypasses;
        self.evictions += o.evictions;
        self.dirty_evictions += o.dirty_evictions;
        self.back_invalidations += o.back_invalidations;
        self.idealized += o.idealized;
    }
    /// `self − earlier`, field by field (counters only grow, so a window is a difference).
    pub fn since(&self, e: &Counts) -> Counts {
        Counts {
            reads: self.reads - e.reads,
            read_misses: self.read_misses - e.read_misses,
            writes: self.writes - e.writes,
            write_misses: self.write_misses - e.write_misses,
            writebacks: self.writebacks - e.writebacks,
            writeback_misses: self.writeback_misses - e.writeback_misses,
            prefetches: self.prefetches - e.prefetches,
            prefetch_misses: self.prefetch_misses - e.prefetch_misses,
            bypasses: self.bypasses - e.bypasses,
            evictions: self.evictions - e.evictions,
            dirty_evictions: self.dirty_evictions - e.dirty_evictions,
            back_invalidations: self.back_invalidations - e.back_invalidations,
            idealized: self.idealized - e.idealized,
        }
    }
}
