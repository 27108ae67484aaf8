//! Counters of a functional run: per cache level, per agent, per stream.

use apusim_trace::{Access, Agent, Stream};
use serde::{Deserialize, Serialize};

pub use apusim_cache::Counts;

/// A table of [`Counts`] indexed by (agent, stream), for a system of `cpus` cores and a GPU.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawTable")]
pub struct Table {
    cpus: usize,
    cells: Vec<Counts>,
}

/// A [`Table`] as stored, checked on reading so that a stored result with the wrong number of
/// cells is an error instead of an out-of-range index later.
#[derive(Deserialize)]
struct RawTable {
    cpus: usize,
    cells: Vec<Counts>,
}

impl TryFrom<RawTable> for Table {
    type Error = String;
    fn try_from(t: RawTable) -> Result<Table, String> {
        let want = t.cpus.saturating_add(1).saturating_mul(Stream::COUNT);
        if t.cells.len() != want || t.cpus > Agent::MAX_CPUS {
            return Err(format!(
                "a counter table of {} cores has {} cells, not {want}",
                t.cpus,
                t.cells.len()
            ));
        }
        Ok(Table {
            cpus: t.cpus,
            cells: t.cells,
        })
    }
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelStats {
    pub name: String,
    pub geometry: String,
    pub instances: usize,
    pub counts: Table,
}

/// Everything a functional run measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_table_reads_back_and_a_misshapen_one_is_refused() {
        let mut t = Table::new(2);
        t.at(Agent::cpu(1), Stream::CpuData).read_misses = 7;
        let text = serde_json::to_string(&t).unwrap();
        assert_eq!(serde_json::from_str::<Table>(&text).unwrap(), t);
        let short = r#"{"cpus":2,"cells":[]}"#;
        let e = serde_json::from_str::<Table>(short)
            .unwrap_err()
            .to_string();
        assert!(e.contains("has 0 cells"), "{e}");
    }
}
