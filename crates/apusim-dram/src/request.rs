//! The request a caller hands to the memory system and the completion it gets back.

use serde::{Deserialize, Serialize};

/// Agent id of the GPU (apusim's access-record convention: `< 0x80` is CPU core n).
pub const GPU_SOURCE: u8 = 0x80;

/// The latest cycle a request may arrive at: 2^62 (about 137 years of a DDR3-2133 clock).
/// Every time the model derives from arrivals within it (completions, refresh deadlines, the
/// drain after the last arrival) stays below 2^63, so no cycle arithmetic overflows and
/// `u64::MAX` stays free as the controllers' "no event" marker. The trace readers refuse
/// later arrival cycles, and Ramulator-format intervals that lead to them, naming the file
/// and line; [`crate::MemorySystem::try_send`] panics on them.
pub const MAX_CYCLE: u64 = 1 << 62;

/// One memory request (one transaction, 64 B for DDR3 x64).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// Caller-chosen id, returned in the [`Completion`].
    pub id: u64,
    /// Physical byte address; the low bits below the transaction size are ignored.
    pub addr: u64,
    pub is_write: bool,
    /// Agent id: `< 0x80` CPU core n, `0x80` the GPU.
    pub source: u8,
    /// Stream tag (e.g. a GPU render stream); opaque to the DRAM model, visible to schedulers.
    pub stream: u8,
    /// Criticality hint for schedulers.
    pub critical: bool,
    /// Cycle (DRAM clock) at which the request was generated, at most [`MAX_CYCLE`]. If the
    /// controller queue is full the request enters later; the difference is reported as
    /// front-end stall.
    pub arrival: u64,
}

impl Request {
    /// A read or write from CPU core 0, stream 0, not critical.
    pub fn new(id: u64, addr: u64, is_write: bool, arrival: u64) -> Self {
        Request {
            id,
            addr,
            is_write,
            source: 0,
            stream: 0,
            critical: false,
            arrival,
        }
    }
    /// A read from CPU core 0, stream 0, not critical.
    pub fn read(id: u64, addr: u64, arrival: u64) -> Self {
        Request::new(id, addr, false, arrival)
    }
    /// A write from CPU core 0, stream 0, not critical.
    pub fn write(id: u64, addr: u64, arrival: u64) -> Self {
        Request::new(id, addr, true, arrival)
    }
    /// Same request from another source.
    pub fn with_source(mut self, source: u8) -> Self {
        self.source = source;
        self
    }
    /// Same request with the criticality flag set as given.
    pub fn with_critical(mut self, critical: bool) -> Self {
        self.critical = critical;
        self
    }
    /// Same request tagged with a stream.
    pub fn with_stream(mut self, stream: u8) -> Self {
        self.stream = stream;
        self
    }
}

/// Human label of a source id: `cpu0` … `cpu127`, `gpu`, or `agent0xNN` for other values.
pub fn source_label(source: u8) -> String {
    match source {
        s if s < GPU_SOURCE => format!("cpu{s}"),
        GPU_SOURCE => "gpu".to_string(),
        s => format!("agent0x{s:02x}"),
    }
}

/// Parse `cpuN`, `gpu`, or a number (decimal or 0x-hex) into a source id.
pub fn parse_source(s: &str) -> Option<u8> {
    if s.eq_ignore_ascii_case("gpu") {
        return Some(GPU_SOURCE);
    }
    let prefixed = |p: &str| {
        (s.len() > p.len() && s.is_char_boundary(p.len()) && s[..p.len()].eq_ignore_ascii_case(p))
            .then(|| &s[p.len()..])
    };
    if let Some(n) = prefixed("cpu") {
        return n.parse::<u8>().ok().filter(|&n| n < GPU_SOURCE);
    }
    if let Some(h) = prefixed("0x") {
        return u8::from_str_radix(h, 16).ok();
    }
    s.parse::<u8>().ok()
}

/// A finished request, as reported back to the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completion {
    pub id: u64,
    pub addr: u64,
    pub is_write: bool,
    pub source: u8,
    pub stream: u8,
    /// The request's own arrival cycle.
    pub arrival: u64,
    /// Cycle the request entered the controller queue (`>= arrival`).
    pub enqueued: u64,
    /// Cycle the last data beat left (reads) or entered (writes) the DRAM.
    pub done: u64,
}

impl Completion {
    /// Controller latency: queue entry to data done (what the statistics call latency).
    pub fn latency(&self) -> u64 {
        self.done - self.enqueued
    }
    /// Latency including the time the request waited for a queue slot.
    pub fn total_latency(&self) -> u64 {
        self.done - self.arrival
    }
}
