//! Traces as packed records: [`TraceReader`] streams any trace apusim reads (`.apt`, lackey,
//! ChampSim, CSV, libCacheSim's oracleGeneral, oracleGeneralOpNS, csv and txt) in chunks, [`TraceWriter`] writes `.apt`. A chunk is a `bytearray` of
//! [`RECORD_SIZE`]-byte little-endian records laid out as [`RECORD_FIELDS`], which numpy views
//! as a structured array without a copy.

use crate::{py_err, ApusimError};
use anyhow::{anyhow, Context, Result};
use apusim_trace::apt::AptWriter;
use apusim_trace::import::{self, Format, ImportOptions, LcsOptions};
use apusim_trace::{Access, AccessSource, Agent, Op, Stream, TraceHeader};
use pyo3::prelude::*;
use pyo3::types::PyByteArray;
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

/// The fields of a packed record in order, with their numpy type strings (little-endian, no
/// padding): the fields of [`Access`], the enums as their one-byte codes (`agent`: CPU core
/// number or 128 for the GPU; `stream` and `op`: indices into `STREAMS` and `OPS`).
pub const RECORD_FIELDS: &[(&str, &str)] = &[
    ("addr", "<u8"),
    ("pc", "<u8"),
    ("time", "<u8"),
    ("warp", "<u4"),
    ("unit", "<u2"),
    ("size", "<u2"),
    ("agent", "u1"),
    ("stream", "u1"),
    ("op", "u1"),
    ("flags", "u1"),
];

/// Bytes of one packed record.
pub const RECORD_SIZE: usize = 36;

fn pack(a: &Access, out: &mut [u8]) {
    out[0..8].copy_from_slice(&a.addr.to_le_bytes());
    out[8..16].copy_from_slice(&a.pc.to_le_bytes());
    out[16..24].copy_from_slice(&a.time.to_le_bytes());
    out[24..28].copy_from_slice(&a.warp.to_le_bytes());
    out[28..30].copy_from_slice(&a.unit.to_le_bytes());
    out[30..32].copy_from_slice(&a.size.to_le_bytes());
    out[32] = a.agent.to_byte();
    out[33] = a.stream.to_byte();
    out[34] = a.op.to_byte();
    out[35] = a.flags;
}

/// Decode one packed record; the message names what is wrong with it.
fn unpack(b: &[u8]) -> Result<Access, String> {
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
    let agent = Agent::from_byte(b[32]).ok_or_else(|| {
        format!(
            "agent {} (expected 0..=127 for a CPU core, 128 for the GPU)",
            b[32]
        )
    })?;
    let stream = Stream::from_byte(b[33])
        .ok_or_else(|| format!("stream {} (expected 0..={})", b[33], Stream::COUNT - 1))?;
    let op = Op::from_byte(b[34])
        .ok_or_else(|| format!("op {} (expected 0..={})", b[34], Op::COUNT - 1))?;
    Ok(Access {
        addr: u64_at(0),
        pc: u64_at(8),
        time: u64_at(16),
        warp: u32::from_le_bytes([b[24], b[25], b[26], b[27]]),
        unit: u16::from_le_bytes([b[28], b[29]]),
        size: u16::from_le_bytes([b[30], b[31]]),
        agent,
        stream,
        op,
        flags: b[35],
    })
}

/// A reader's state: the source and the accesses of its last batch not handed out yet.
struct Reader {
    source: Box<dyn AccessSource>,
    pending: Vec<Access>,
    done: bool,
}

impl Reader {
    /// Up to `n` accesses, fewer only at the end of the trace.
    fn take(&mut self, n: usize) -> Result<Vec<Access>> {
        let mut out = Vec::with_capacity(n.min(1 << 22));
        while out.len() < n {
            if self.pending.is_empty() {
                if self.done {
                    break;
                }
                if !self.source.next_batch(&mut self.pending)? {
                    self.done = true;
                    break;
                }
                // Batches are handed out from the front.
                self.pending.reverse();
            }
            let want = (n - out.len()).min(self.pending.len());
            let from = self.pending.len() - want;
            out.extend(self.pending.drain(from..).rev());
        }
        Ok(out)
    }
}

/// The lock of a reader or writer. Never waited for: a thread that waits while holding the
/// GIL would deadlock with the holder, which takes the GIL back when its call ends.
fn lock<T>(m: &Mutex<T>) -> PyResult<MutexGuard<'_, T>> {
    m.try_lock().map_err(|e| match e {
        std::sync::TryLockError::WouldBlock => {
            ApusimError::new_err("the trace is in use by another thread")
        }
        std::sync::TryLockError::Poisoned(_) => {
            ApusimError::new_err("the trace was left broken by an earlier error")
        }
    })
}

/// A trace opened for reading in chunks of packed records.
#[pyclass(module = "apusim._native")]
pub struct TraceReader {
    inner: Mutex<Reader>,
    header: String,
}

#[pymethods]
impl TraceReader {
    /// Open `path` (`format`: apt, lackey, champsim, csv, oracleGeneral, oracleGeneralOpNS,
    /// lcs-csv or lcs-txt; default: detected), attributing a single-agent import to `agent`
    /// (`cpuN` or `gpu`) and reading libCacheSim's formats with `lcs_params` (libCacheSim's
    /// `-t` string), as `apusim trace convert --from FORMAT --lcs-params ...` does.
    #[new]
    #[pyo3(signature = (path, *, format = None, agent = "cpu0".to_string(), lcs_params = None))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        format: Option<String>,
        agent: String,
        lcs_params: Option<String>,
    ) -> PyResult<Self> {
        py.detach(|| -> Result<TraceReader> {
            let format = format
                .map(|f| f.parse::<Format>().map_err(|e| anyhow!("format: {e}")))
                .transpose()?;
            let libcachesim = match lcs_params {
                Some(p) => p
                    .parse::<LcsOptions>()
                    .map_err(|e| anyhow!("lcs_params: {e}"))?,
                None => LcsOptions::default(),
            };
            let opts = ImportOptions {
                agent: agent.parse().map_err(|e: String| anyhow!("agent: {e}"))?,
                libcachesim,
                ..ImportOptions::default()
            };
            let source = import::open(&path, format, &opts)
                .with_context(|| format!("opening {}", path.display()))?;
            let header = serde_json::to_string(source.header())?;
            Ok(TraceReader {
                inner: Mutex::new(Reader {
                    source,
                    pending: Vec::new(),
                    done: false,
                }),
                header,
            })
        })
        .map_err(py_err)
    }

    /// The trace's header as JSON: agents with their names and clocks, streams, source.
    fn header_json(&self) -> String {
        self.header.clone()
    }

    /// The next `n` records (fewer at the end, none after it) as packed bytes.
    fn read<'py>(&self, py: Python<'py>, n: usize) -> PyResult<Bound<'py, PyByteArray>> {
        let accesses = {
            let mut guard = lock(&self.inner)?;
            let r: &mut Reader = &mut guard;
            py.detach(|| r.take(n)).map_err(py_err)?
        };
        PyByteArray::new_with(py, accesses.len() * RECORD_SIZE, |buf| {
            for (a, out) in accesses.iter().zip(buf.chunks_exact_mut(RECORD_SIZE)) {
                pack(a, out);
            }
            Ok(())
        })
    }
}

/// An `.apt` trace being written from packed records; the file appears when it is closed.
#[pyclass(module = "apusim._native")]
pub struct TraceWriter {
    inner: Mutex<Option<AptWriter<BufWriter<File>>>>,
    header: TraceHeader,
}

#[pymethods]
impl TraceWriter {
    /// Start writing `path` under the header `header_json` (the JSON of
    /// `TraceReader.header_json`: agents, streams, source).
    #[new]
    fn new(py: Python<'_>, path: PathBuf, header_json: &str) -> PyResult<Self> {
        py.detach(|| -> Result<TraceWriter> {
            let header: TraceHeader =
                serde_json::from_str(header_json).context("the trace header")?;
            let w = AptWriter::create(&path, &header)?;
            Ok(TraceWriter {
                inner: Mutex::new(Some(w)),
                header,
            })
        })
        .map_err(py_err)
    }

    /// Append packed records; every record is checked (its agent and stream must be in the
    /// header) before any is written. Returns the records written so far.
    fn write(&self, py: Python<'_>, data: &[u8]) -> PyResult<u64> {
        let mut guard = lock(&self.inner)?;
        let w = guard
            .as_mut()
            .ok_or_else(|| ApusimError::new_err("the trace writer is closed"))?;
        let header = &self.header;
        py.detach(|| -> Result<u64> {
            if !data.len().is_multiple_of(RECORD_SIZE) {
                anyhow::bail!(
                    "{} bytes is not a whole number of {RECORD_SIZE}-byte records",
                    data.len()
                );
            }
            let first = w.records();
            let accesses = data
                .chunks_exact(RECORD_SIZE)
                .enumerate()
                .map(|(i, b)| {
                    let bad = |what: String| anyhow!("record {}: invalid {what}", first + i as u64);
                    let a = unpack(b).map_err(bad)?;
                    if header.agent(a.agent).is_none() {
                        return Err(bad(format!(
                            "agent {}: not in the header's agents",
                            a.agent
                        )));
                    }
                    if !header.streams.contains(&a.stream) {
                        return Err(bad(format!(
                            "stream {}: not in the header's streams",
                            a.stream
                        )));
                    }
                    Ok(a)
                })
                .collect::<Result<Vec<_>>>()?;
            w.write_all(&accesses)?;
            Ok(w.records())
        })
        .map_err(py_err)
    }

    /// Finish the file (last block, trailer, rename into place); returns the records written.
    /// Closing twice does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<u64> {
        let mut guard = lock(&self.inner)?;
        let Some(w) = guard.take() else {
            return Ok(0);
        };
        let n = w.records();
        py.detach(|| w.finish().map(drop).map_err(anyhow::Error::from))
            .map_err(py_err)?;
        Ok(n)
    }
}
