//! Trace headers: which agents a trace holds, their clocks, and which streams appear.

use crate::{Access, Agent, Stream};
use serde::{Deserialize, Serialize};

/// One agent of a trace and the clock its `time` field counts in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentInfo {
    pub agent: Agent,
    /// Free-form name (workload or program), e.g. `mcf` or `hotspot`.
    #[serde(default)]
    pub name: String,
    /// Clock of the agent's `time` field in MHz; 0 means `time` counts retired instructions
    /// (untimed CPU traces), and the simulator then takes the clock from its configuration
    /// with one instruction per cycle.
    #[serde(default)]
    pub clock_mhz: u32,
}

/// The header of every trace: format version, agents, streams present, free-form provenance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceHeader {
    /// Format version of the file this came from (the `.apt` version; 0 for imports).
    #[serde(default)]
    pub version: u32,
    pub agents: Vec<AgentInfo>,
    pub streams: Vec<Stream>,
    /// Where the trace came from (importer, generator and its parameters, command line).
    #[serde(default)]
    pub source: String,
}

impl TraceHeader {
    /// A header for a single agent with the given streams.
    pub fn single(
        agent: Agent,
        name: &str,
        clock_mhz: u32,
        streams: &[Stream],
        source: &str,
    ) -> Self {
        TraceHeader {
            version: 0,
            agents: vec![AgentInfo {
                agent,
                name: name.to_string(),
                clock_mhz,
            }],
            streams: streams.to_vec(),
            source: source.to_string(),
        }
    }

    /// A header listing exactly the agents and streams that occur in `accesses`, clocks 0.
    pub fn describing(accesses: &[Access], source: &str) -> Self {
        let mut agents: Vec<Agent> = accesses.iter().map(|a| a.agent).collect();
        agents.sort();
        agents.dedup();
        let mut streams: Vec<Stream> = accesses.iter().map(|a| a.stream).collect();
        streams.sort();
        streams.dedup();
        TraceHeader {
            version: 0,
            agents: agents
                .into_iter()
                .map(|agent| AgentInfo {
                    agent,
                    name: String::new(),
                    clock_mhz: 0,
                })
                .collect(),
            streams,
            source: source.to_string(),
        }
    }

    /// The info for `agent`, if the header lists it.
    pub fn agent(&self, agent: Agent) -> Option<&AgentInfo> {
        self.agents.iter().find(|a| a.agent == agent)
    }
}
