//! Counters of a functional run: per cache level, per agent, per stream.

use apusim_trace::{Access, Agent, Op, Stream};
use serde::Serialize;

/// What one level saw from one (agent, stream). An access that touches two lines counts once
/// and misses at most once (cachegrind's rule).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq, Serialize)]
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
    pub fn accesses(&self) -> u64 {
        self.reads + self.writes + self.writebacks + self.prefetches
    }
    pub fn misses(&self) -> u64 {
        self.read_misses + self.write_misses + self.writeback_misses + self.prefetch_misses
    }
    pub fn hits(&self) -> u64 {
        self.accesses() - self.misses()
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
}

/// A table of [`Counts`] indexed by (agent, stream), for a system of `cpus` cores and a GPU.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Table {
    cpus: usize,
    cells: Vec<Counts>,
}

impl Table {
    pub fn new(cpus: usize) -> Table {
        Table {
            cpus,
            cells: vec![Counts::default(); (cpus + 1) * Stream::COUNT],
        }
    }
    #[inline]
    fn index(&self, agent: Agent, stream: Stream) -> usize {
        agent.dense_index(self.cpus) * Stream::COUNT + stream as usize
    }
    #[inline]
    pub fn at(&mut self, agent: Agent, stream: Stream) -> &mut Counts {
        let i = self.index(agent, stream);
        &mut self.cells[i]
    }
    #[inline]
    pub fn of(&mut self, req: &Access) -> &mut Counts {
        self.at(req.agent, req.stream)
    }
    pub fn get(&self, agent: Agent, stream: Stream) -> &Counts {
        &self.cells[self.index(agent, stream)]
    }
    /// All agents of the system: cores, then the GPU.
    pub fn agents(&self) -> impl Iterator<Item = Agent> {
        (0..self.cpus as u8)
            .map(Agent::cpu)
            .chain(std::iter::once(Agent::GPU))
    }
    /// The sum over streams for one agent.
    pub fn agent_total(&self, agent: Agent) -> Counts {
        let mut t = Counts::default();
        for s in Stream::ALL {
            t.add(self.get(agent, *s));
        }
        t
    }
    /// The sum over agents of one class (CPU cores or the GPU).
    pub fn class_total(&self, gpu: bool) -> Counts {
        let mut t = Counts::default();
        for a in self.agents().filter(|a| a.is_gpu() == gpu) {
            t.add(&self.agent_total(a));
        }
        t
    }
    pub fn total(&self) -> Counts {
        let mut t = Counts::default();
        for c in &self.cells {
            t.add(c);
        }
        t
    }
    /// Non-empty cells as (agent, stream, counts).
    pub fn cells(&self) -> impl Iterator<Item = (Agent, Stream, &Counts)> {
        self.agents().flat_map(move |a| {
            Stream::ALL
                .iter()
                .map(move |s| (a, *s, self.get(a, *s)))
                .filter(|(_, _, c)| **c != Counts::default())
        })
    }
}

/// Counters of one cache level (all instances of it summed).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LevelStats {
    pub name: String,
    pub geometry: String,
    pub instances: usize,
    pub counts: Table,
}

/// Everything a functional run measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunStats {
    /// Private levels in configuration order (CPU levels first), then the LLC last.
    pub levels: Vec<LevelStats>,
    /// Requests that reached DRAM: reads (fills and bypassed reads) and writes.
    pub memory: Table,
    /// Retired instructions per agent (from instruction-count time stamps; 0 when unknown).
    pub instructions: Vec<u64>,
    /// Accesses read from the traces.
    pub trace_accesses: u64,
    /// Policy-specific statistics of the LLC policy.
    pub policy_stats: Vec<(String, f64)>,
}

impl RunStats {
    pub fn llc(&self) -> &LevelStats {
        self.levels.last().expect("the LLC is always present")
    }
    pub fn level(&self, name: &str) -> Option<&LevelStats> {
        self.levels.iter().find(|l| l.name == name)
    }
}
