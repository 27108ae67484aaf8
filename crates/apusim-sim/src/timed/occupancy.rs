//! How much of the LLC each agent holds over a timed run's measured window.
//!
//! tap Table 1 asks which application a policy favours when a CPU application shares the
//! LLC with a GPGPU one: the answer is the space each ends up holding. [`Occupancy`] reads
//! the LLC's tag array (each line carries the agent that filled it) at the start of the
//! measured window, every [`EVERY_CYCLES`] CPU cycles during it and at its end, and reports
//! each agent's mean number of lines and share of the LLC. Reading every line costs about a
//! tenth of a millisecond for a 16 MB LLC, so the readings are periodic rather than kept
//! up to date on every fill and eviction.

use crate::Hierarchy;
use apusim_cache::Policy;
use apusim_timing::{Domain, Tick};
use apusim_trace::Agent;
use serde::{Deserialize, Serialize};

/// CPU cycles between two readings (tap's partitioning period is 5 M cycles, so each
/// period is read about 76 times).
pub const EVERY_CYCLES: u64 = 1 << 16;

/// One agent's part of the LLC, averaged over the readings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentOccupancy {
    pub agent: String,
    /// Mean number of LLC lines the agent filled and that were still resident.
    pub lines: f64,
    /// `lines` over the LLC's capacity in lines.
    pub share: f64,
}

/// Readings of the LLC's lines per agent.
pub struct Occupancy {
    every: Tick,
    next: Tick,
    sums: Box<[u64; 256]>,
    readings: u64,
}

impl Occupancy {
    pub fn new(cpu: Domain) -> Occupancy {
        Occupancy {
            every: cpu.cycles(EVERY_CYCLES),
            next: 0,
            sums: Box::new([0; 256]),
            readings: 0,
        }
    }

    /// Take a reading if one is due at `now` (the first call always reads).
    pub fn maybe_read<P: Policy>(&mut self, now: Tick, h: &Hierarchy<P>) {
        if now >= self.next {
            self.read(h);
            self.next = now.saturating_add(self.every);
        }
    }

    /// Take a reading now.
    pub fn read<P: Policy>(&mut self, h: &Hierarchy<P>) {
        h.llc().add_lines_by_agent(&mut self.sums);
        self.readings += 1;
    }

    /// Each agent that held lines, in agent order, with its mean lines and share.
    pub fn result<P: Policy>(&self, h: &Hierarchy<P>) -> Vec<AgentOccupancy> {
        let capacity = h.llc().capacity_lines().max(1) as f64;
        let readings = self.readings.max(1) as f64;
        self.sums
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .filter_map(|(b, &n)| {
                let agent = Agent::from_byte(b as u8)?;
                let lines = n as f64 / readings;
                Some(AgentOccupancy {
                    agent: agent.to_string(),
                    lines,
                    share: lines / capacity,
                })
            })
            .collect()
    }
}
