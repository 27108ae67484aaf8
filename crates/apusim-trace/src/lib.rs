//! Memory-access traces for apusim.
//!
//! The central type is [`Access`]: one memory access by one agent (a CPU core or the GPU),
//! tagged with its semantic [`Stream`] (CPU instruction/data, or one of the GPU's render and
//! compute streams), its [`Op`] (read, write, writeback, prefetch), address, size, PC, issuing
//! unit, warp and a time in the agent's own clock. Everything that produces accesses — the
//! native `.apt` reader, the importers for other tools' traces, the built-in workload
//! generators — implements [`AccessSource`], which hands out accesses in batches so that
//! consumers pay no per-access dynamic dispatch. Everything that consumes them to disk goes
//! through [`apt::AptWriter`].
//!
//! A trace file starts with a [`TraceHeader`] naming its agents, their clocks and the streams
//! present. The `.apt` container (documented in `docs/trace-format.md`) stores records in
//! independently zstd-compressed, checksummed blocks with delta/varint encoding, and is read and
//! written strictly streaming: a trace is never held in memory whole. Because blocks decode on
//! their own, [`apt::ParallelAptReader`] decodes several ahead on worker threads (what the CLI
//! uses); [`apt::AptReader`] decodes on the caller's thread; both hand out the same batches.
//!
//! Importers ([`import`]) turn valgrind lackey logs, ChampSim binary traces and a plain CSV/text
//! form into the same stream of [`Access`] records. Every parser reports malformed input as a
//! [`TraceError`] naming the file and the line or byte offset; none of them panics on bad input.
//!
//! A timed GPU needs more than an access order: [`warps`] defines per-warp programs
//! ([`BlockSource`]: kernel launches and thread blocks of [`WarpOp`]s), which GPGPU
//! generators produce and the timed shader cores execute in the order latency dictates; and
//! [`frames`] defines render work ([`FrameSource`]: triangles, tiles, quads, blits with the
//! accesses each pipeline [`Unit`] makes), which the renderer produces and a timed render
//! pipeline processes.

pub mod access;
pub mod apt;
pub mod counted;
pub mod error;
pub mod frames;
pub mod hash;
pub mod header;
pub mod import;
pub mod output;
pub mod warps;

pub use access::{Access, Agent, Op, Stream};
pub use counted::Counted;
pub use error::{Result, TraceError};
pub use frames::{FrameSource, RenderBatch, Unit, WorkItem, WorkKind};
pub use header::{AgentInfo, TraceHeader};
pub use warps::{BlockItem, BlockSource, LaunchInfo, ThreadBlock, WarpOp};

/// Number of accesses a source hands out per batch (a trade-off between call overhead and
/// cache footprint of the batch buffer).
pub const BATCH: usize = 4096;

/// A producer of accesses, read in batches.
///
/// Implementations append up to [`BATCH`] accesses to `out` per call and return `Ok(false)`
/// once the source is exhausted and appended nothing. Accesses of one agent come in that
/// agent's time order; a source that mixes agents need not be globally time ordered.
pub trait AccessSource: Send {
    /// The header describing the agents and streams this source produces.
    fn header(&self) -> &TraceHeader;
    /// Append the next batch to `out`; `Ok(false)` at end of input.
    fn next_batch(&mut self, out: &mut Vec<Access>) -> Result<bool>;
}

impl<S: AccessSource + ?Sized> AccessSource for Box<S> {
    fn header(&self) -> &TraceHeader {
        (**self).header()
    }
    fn next_batch(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        (**self).next_batch(out)
    }
}

impl<S: AccessSource + ?Sized> AccessSource for &mut S {
    fn header(&self) -> &TraceHeader {
        (**self).header()
    }
    fn next_batch(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        (**self).next_batch(out)
    }
}

/// An in-memory source, for tests and generators that already hold their accesses.
pub struct VecSource {
    header: TraceHeader,
    accesses: std::vec::IntoIter<Access>,
}

impl VecSource {
    /// A source over `accesses`; the header is derived from the agents and streams present.
    pub fn new(accesses: Vec<Access>) -> VecSource {
        let header = TraceHeader::describing(&accesses, "in-memory");
        VecSource {
            header,
            accesses: accesses.into_iter(),
        }
    }
    pub fn with_header(header: TraceHeader, accesses: Vec<Access>) -> VecSource {
        VecSource {
            header,
            accesses: accesses.into_iter(),
        }
    }
}

impl AccessSource for VecSource {
    fn header(&self) -> &TraceHeader {
        &self.header
    }
    fn next_batch(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        let before = out.len();
        out.extend(self.accesses.by_ref().take(BATCH));
        Ok(out.len() > before)
    }
}

/// Read a whole source into memory. Only for tests and small traces.
pub fn collect(source: &mut dyn AccessSource) -> Result<Vec<Access>> {
    let mut all = Vec::new();
    while source.next_batch(&mut all)? {}
    Ok(all)
}
