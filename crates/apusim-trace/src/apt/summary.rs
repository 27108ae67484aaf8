//! What `apusim trace info` reports about an `.apt` file: [`summarize`] reads it through and
//! counts records per agent and stream into a [`TraceSummary`].

use super::{default_decode_threads, AptReader, ParallelAptReader, N_AGENTS};
use crate::{Access, AccessSource, Agent, Result, Stream, TraceError, TraceHeader, BATCH};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Record counts of one agent or stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub records: u64,
    /// Reads and prefetches.
    pub reads: u64,
    /// Writes and writebacks.
    pub writes: u64,
    /// Reads flagged [`Access::MODIFY`] (read-modify-write).
    pub modifies: u64,
    /// Accesses flagged [`Access::CRITICAL`].
    pub critical: u64,
    /// Smallest and largest `time` seen (meaningful when `records > 0`).
    pub min_time: u64,
    pub max_time: u64,
}

impl Counts {
    fn add(&mut self, a: &Access) {
        if self.records == 0 {
            self.min_time = a.time;
            self.max_time = a.time;
        } else {
            self.min_time = self.min_time.min(a.time);
            self.max_time = self.max_time.max(a.time);
        }
        self.records += 1;
        if a.op.is_read() {
            self.reads += 1;
        } else {
            self.writes += 1;
        }
        if a.flags & Access::MODIFY != 0 {
            self.modifies += 1;
        }
        if a.flags & Access::CRITICAL != 0 {
            self.critical += 1;
        }
    }
}

/// What `apusim trace info` prints: the header and record statistics of an `.apt` file.
#[derive(Clone, Debug)]
pub struct TraceSummary {
    pub path: PathBuf,
    pub header: TraceHeader,
    pub file_bytes: u64,
    pub blocks: u64,
    pub records: u64,
    /// Encoded bytes before zstd.
    pub raw_bytes: u64,
    /// Per agent present, in agent order.
    pub agents: Vec<(Agent, Counts)>,
    /// Per stream present, in stream order.
    pub streams: Vec<(Stream, Counts)>,
}

impl TraceSummary {
    /// File bytes per record (0 for an empty trace).
    pub fn bytes_per_record(&self) -> f64 {
        if self.records == 0 {
            0.0
        } else {
            self.file_bytes as f64 / self.records as f64
        }
    }
    /// Delta/varint-encoded bytes per record before compression.
    pub fn raw_bytes_per_record(&self) -> f64 {
        if self.records == 0 {
            0.0
        } else {
            self.raw_bytes as f64 / self.records as f64
        }
    }
}

/// The counters a finished `.apt` reader reports: blocks, records and decompressed bytes read.
trait ReadCounters: AccessSource {
    fn counters(&self) -> (u64, u64, u64);
}

impl<R: Read + Send> ReadCounters for AptReader<R> {
    fn counters(&self) -> (u64, u64, u64) {
        (self.blocks_read(), self.records_read(), self.raw_bytes())
    }
}

impl ReadCounters for ParallelAptReader {
    fn counters(&self) -> (u64, u64, u64) {
        (self.blocks_read(), self.records_read(), self.raw_bytes())
    }
}

/// Read the whole `.apt` file at `path` (streaming, decoded by [`default_decode_threads`]
/// threads) and count its records per agent and stream.
pub fn summarize(path: impl AsRef<Path>) -> Result<TraceSummary> {
    let path = path.as_ref();
    match default_decode_threads()? {
        0 => summarize_with(path, AptReader::open(path)?),
        n => summarize_with(path, ParallelAptReader::open(path, n)?),
    }
}

fn summarize_with(path: &Path, mut r: impl ReadCounters) -> Result<TraceSummary> {
    let file_bytes = std::fs::metadata(path)
        .map_err(|e| TraceError::io(path, e))?
        .len();
    let mut agents = vec![Counts::default(); N_AGENTS];
    let mut streams = vec![Counts::default(); Stream::COUNT];
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        batch.clear();
        if !r.next_batch(&mut batch)? {
            break;
        }
        for a in &batch {
            agents[a.agent.to_byte() as usize].add(a);
            streams[a.stream.to_byte() as usize].add(a);
        }
    }
    let (blocks, records, raw_bytes) = r.counters();
    Ok(TraceSummary {
        path: path.to_path_buf(),
        header: r.header().clone(),
        file_bytes,
        blocks,
        records,
        raw_bytes,
        agents: agents
            .into_iter()
            .enumerate()
            .filter(|(_, c)| c.records > 0)
            .filter_map(|(i, c)| Agent::from_byte(i as u8).map(|a| (a, c)))
            .collect(),
        streams: streams
            .into_iter()
            .enumerate()
            .filter(|(_, c)| c.records > 0)
            .filter_map(|(i, c)| Stream::from_byte(i as u8).map(|s| (s, c)))
            .collect(),
    })
}

impl fmt::Display for TraceSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = &self.header;
        writeln!(f, "trace      {}", self.path.display())?;
        writeln!(
            f,
            "format     apt v{}, {} blocks, {} bytes ({:.2} bytes/record; {:.2} before zstd)",
            h.version,
            self.blocks,
            self.file_bytes,
            self.bytes_per_record(),
            self.raw_bytes_per_record()
        )?;
        if !h.source.is_empty() {
            writeln!(f, "source     {}", h.source)?;
        }
        for (i, a) in h.agents.iter().enumerate() {
            let clock = if a.clock_mhz == 0 {
                "time = retired instructions".to_string()
            } else {
                format!("clock {} MHz", a.clock_mhz)
            };
            let name = if a.name.is_empty() {
                String::new()
            } else {
                format!(" \"{}\"", a.name)
            };
            writeln!(
                f,
                "{:<10} {}{name}, {clock}",
                if i == 0 { "agents" } else { "" },
                a.agent
            )?;
        }
        let streams: Vec<&str> = h.streams.iter().map(|s| s.name()).collect();
        writeln!(f, "streams    {}", streams.join(", "))?;
        writeln!(f, "records    {}", self.records)?;
        writeln!(f)?;
        let row = |f: &mut fmt::Formatter<'_>, name: &str, c: &Counts| {
            let pct = if self.records == 0 {
                0.0
            } else {
                100.0 * c.records as f64 / self.records as f64
            };
            writeln!(
                f,
                "{:<16} {:>14} {:>6.2}% {:>14} {:>14} {:>12} {:>12}   {}..={}",
                name,
                c.records,
                pct,
                c.reads,
                c.writes,
                c.modifies,
                c.critical,
                c.min_time,
                c.max_time
            )
        };
        let head = |f: &mut fmt::Formatter<'_>, first: &str| {
            writeln!(
                f,
                "{:<16} {:>14} {:>7} {:>14} {:>14} {:>12} {:>12}   time",
                first, "records", "share", "reads", "writes", "modify", "critical"
            )
        };
        head(f, "agent")?;
        for (a, c) in &self.agents {
            row(f, &a.to_string(), c)?;
        }
        writeln!(f)?;
        head(f, "stream")?;
        for (s, c) in &self.streams {
            row(f, s.name(), c)?;
        }
        Ok(())
    }
}
