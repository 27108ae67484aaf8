//! Next-use indices by a streaming backward pass (Belady's MIN needs, for every reference, when
//! its line is referenced next; drp-reuse-probability-shared-llc.txt §4.1, gspc §2).
//!
//! A trace is a sequence of *line references*: every access is split into the cache lines it
//! touches (an access that straddles a line boundary becomes one reference per line). Reference
//! `i`'s next use is the index of the next reference to the same line, or [`NEVER`].
//!
//! Traces may be larger than memory, so nothing here holds the whole trace:
//! 1. the source is read forward in batches and each reference's line address is spilled to an
//!    anonymous temporary file (8 bytes per reference);
//! 2. that file is walked backward in chunks of [`SpillOptions::chunk_refs`] references; a hash
//!    map line → index of its latest-seen (i.e. next) reference gives each reference its next
//!    use, and each chunk of next uses is written at its own offset of a second temporary file;
//! 3. the forward simulation reads the second file in step with a replay of the source
//!    ([`NextUseReader`]).
//!
//! Memory is O(distinct lines) for the map plus two chunk buffers. The spill files are removed
//! when the [`NextUses`] is dropped.

use crate::error::{OracleError, Result};
use apusim_cache::cache::MAX_LINE;
use apusim_cache::CacheError;
use apusim_trace::{Access, AccessSource, BATCH};
use rustc_hash::FxHashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Next use of a reference whose line is never referenced again.
pub const NEVER: u64 = u64::MAX;

/// Where and in what chunk size the backward pass spills.
#[derive(Clone, Debug)]
pub struct SpillOptions {
    /// Directory for the temporary files; `None` for the system's temporary directory.
    pub dir: Option<PathBuf>,
    /// References per chunk of the backward walk (two buffers of 8 bytes per reference).
    pub chunk_refs: usize,
}

impl Default for SpillOptions {
    fn default() -> Self {
        SpillOptions {
            dir: None,
            chunk_refs: 1 << 20,
        }
    }
}

impl SpillOptions {
    fn dir(&self) -> PathBuf {
        self.dir.clone().unwrap_or_else(std::env::temp_dir)
    }
}

/// The line references of one access: the line of its first byte through the line of its last.
#[inline]
pub fn line_span(a: &Access, line_bits: u32) -> (u64, u64) {
    let first = a.addr >> line_bits;
    let last = a.addr.saturating_add((a.size.max(1) - 1) as u64) >> line_bits;
    (first, last)
}

/// Expand `batch` into line references: `(request, line)` with the request's address moved to
/// the start of every line after the first. Returns an error for lines beyond the tag range.
pub(crate) fn expand(
    batch: &[Access],
    line_bits: u32,
    out: &mut Vec<(Access, u64)>,
) -> std::result::Result<(), CacheError> {
    out.clear();
    for a in batch {
        let (first, last) = line_span(a, line_bits);
        if last > MAX_LINE {
            return Err(CacheError::AddressTooLarge { addr: a.addr });
        }
        out.push((*a, first));
        for line in first + 1..=last {
            out.push((
                Access {
                    addr: line << line_bits,
                    ..*a
                },
                line,
            ));
        }
    }
    Ok(())
}

/// Order-sensitive fingerprint of the line sequence, to detect a replay that differs.
#[inline]
pub(crate) fn fingerprint(h: u64, line: u64) -> u64 {
    (h ^ line)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(29)
}

/// Lines per group of the backward pass's map (one 64-byte host cache line of indices).
const GROUP: usize = 8;

/// Line → index of its latest-seen reference, for the backward pass. Lines are grouped by
/// [`GROUP`] neighbours (lines of one 512-byte region share a map entry and one host cache line
/// of indices), which makes the map several times smaller and the walk cache-friendlier for the
/// mostly sequential GPU streams; the worst case (one line per group) costs 64 bytes per line.
#[derive(Default)]
struct LatestUse {
    map: FxHashMap<u64, u32>,
    groups: Vec<[u64; GROUP]>,
    distinct: u64,
}

impl LatestUse {
    /// Record reference `idx` to `line`; the previously recorded index (or [`NEVER`]).
    #[inline]
    fn replace(&mut self, line: u64, idx: u64) -> u64 {
        let groups = &mut self.groups;
        let g = *self.map.entry(line / GROUP as u64).or_insert_with(|| {
            groups.push([NEVER; GROUP]);
            (groups.len() - 1) as u32
        });
        let slot = &mut self.groups[g as usize][(line % GROUP as u64) as usize];
        let prev = std::mem::replace(slot, idx);
        self.distinct += (prev == NEVER) as u64;
        prev
    }
}

/// Summary counts gathered on the forward pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TraceCounts {
    /// Accesses read from the source.
    pub accesses: u64,
    /// Line references (accesses split at line boundaries).
    pub references: u64,
    /// Line references of read or prefetch accesses.
    pub read_references: u64,
    /// Distinct lines referenced.
    pub distinct_lines: u64,
}

/// The next use of every line reference of a trace, spilled to a temporary file.
pub struct NextUses {
    file: tempfile::NamedTempFile,
    dir: PathBuf,
    line_bits: u32,
    counts: TraceCounts,
    fingerprint: u64,
}

fn spill_err(dir: &Path) -> impl Fn(std::io::Error) -> OracleError + '_ {
    move |source| OracleError::Spill {
        dir: dir.to_path_buf(),
        source,
    }
}

impl NextUses {
    /// Read `source` to its end and compute the next use of every line reference for lines of
    /// `line_bytes` bytes (a power of two).
    pub fn compute(
        source: &mut dyn AccessSource,
        line_bytes: u32,
        opts: &SpillOptions,
    ) -> Result<NextUses> {
        if line_bytes == 0 || !line_bytes.is_power_of_two() {
            return Err(CacheError::Geometry(format!(
                "line size {line_bytes} is not a power of two"
            ))
            .into());
        }
        let line_bits = line_bytes.trailing_zeros();
        let dir = opts.dir();
        let err = spill_err(&dir);
        let chunk = opts.chunk_refs.max(1);

        // Pass 1: forward, spill line addresses.
        let mut lines_file = tempfile::tempfile_in(&dir).map_err(&err)?;
        let mut counts = TraceCounts::default();
        let mut fp = 0u64;
        {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut lines_file);
            let mut batch = Vec::with_capacity(BATCH);
            let mut refs = Vec::with_capacity(BATCH);
            let mut bytes = Vec::with_capacity(BATCH * 8);
            loop {
                batch.clear();
                if !source.next_batch(&mut batch)? {
                    break;
                }
                counts.accesses += batch.len() as u64;
                expand(&batch, line_bits, &mut refs)?;
                bytes.clear();
                for (a, line) in &refs {
                    bytes.extend_from_slice(&line.to_le_bytes());
                    fp = fingerprint(fp, *line);
                    counts.read_references += a.op.is_read() as u64;
                }
                counts.references += refs.len() as u64;
                w.write_all(&bytes).map_err(&err)?;
            }
            w.flush().map_err(&err)?;
        }

        // Pass 2: backward over chunks, next uses written at their own offsets.
        let file = tempfile::NamedTempFile::new_in(&dir).map_err(&err)?;
        let n = counts.references;
        {
            let mut out = file.as_file();
            out.set_len(n * 8).map_err(&err)?;
            let mut map = LatestUse::default();
            let mut inbuf = vec![0u8; chunk * 8];
            let mut outbuf = vec![0u8; chunk * 8];
            let mut end = n;
            while end > 0 {
                let start = end.saturating_sub(chunk as u64);
                let len = (end - start) as usize;
                lines_file.seek(SeekFrom::Start(start * 8)).map_err(&err)?;
                lines_file.read_exact(&mut inbuf[..len * 8]).map_err(&err)?;
                for k in (0..len).rev() {
                    let line = u64::from_le_bytes(inbuf[k * 8..k * 8 + 8].try_into().unwrap());
                    let idx = start + k as u64;
                    let next = map.replace(line, idx);
                    outbuf[k * 8..k * 8 + 8].copy_from_slice(&next.to_le_bytes());
                }
                out.seek(SeekFrom::Start(start * 8)).map_err(&err)?;
                out.write_all(&outbuf[..len * 8]).map_err(&err)?;
                end = start;
            }
            out.flush().map_err(&err)?;
            counts.distinct_lines = map.distinct;
        }
        drop(err);
        Ok(NextUses {
            file,
            dir,
            line_bits,
            counts,
            fingerprint: fp,
        })
    }

    /// Line size (bytes) the next uses were computed for.
    pub fn line_bytes(&self) -> u32 {
        1 << self.line_bits
    }
    /// Counts of the trace seen on the forward pass.
    pub fn counts(&self) -> &TraceCounts {
        &self.counts
    }
    pub(crate) fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// A reader of the next uses from the first reference on (independent of other readers).
    pub fn reader(&self) -> Result<NextUseReader> {
        let f = self.file.reopen().map_err(spill_err(&self.dir))?;
        Ok(NextUseReader {
            input: BufReader::with_capacity(1 << 16, f),
            remaining: self.counts.references,
            dir: self.dir.clone(),
            bytes: Vec::new(),
        })
    }
}

/// Sequential reader of a [`NextUses`] file, in step with a replay of the trace.
pub struct NextUseReader {
    input: BufReader<File>,
    remaining: u64,
    dir: PathBuf,
    bytes: Vec<u8>,
}

impl NextUseReader {
    /// Next uses not yet read.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// Replace `out` with the next `n` next uses; an error if fewer than `n` remain.
    pub fn read(&mut self, n: usize, out: &mut Vec<u64>) -> Result<()> {
        if n as u64 > self.remaining {
            return Err(OracleError::TraceChanged(format!(
                "the replay has more line references than the {} of the first pass",
                self.remaining
            )));
        }
        self.bytes.resize(n * 8, 0);
        self.input
            .read_exact(&mut self.bytes)
            .map_err(spill_err(&self.dir))?;
        out.clear();
        out.extend(
            self.bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap())),
        );
        self.remaining -= n as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apusim_trace::{Agent, Op, Stream, VecSource};

    fn rd(addr: u64, size: u16) -> Access {
        Access::new(Agent::cpu(0), Stream::CpuData, Op::Read, addr, size)
    }

    /// Next uses computed the obvious way, whole trace in memory.
    fn naive(lines: &[u64]) -> Vec<u64> {
        (0..lines.len())
            .map(|i| {
                (i + 1..lines.len())
                    .find(|&j| lines[j] == lines[i])
                    .map_or(NEVER, |j| j as u64)
            })
            .collect()
    }

    fn all(nu: &NextUses) -> Vec<u64> {
        let mut r = nu.reader().unwrap();
        let mut v = Vec::new();
        r.read(nu.counts().references as usize, &mut v).unwrap();
        assert_eq!(r.remaining(), 0);
        v
    }

    #[test]
    fn chunked_backward_pass_matches_the_naive_next_uses() {
        let lines: Vec<u64> = (0..5000u64).map(|i| (i * 7919 + i / 3) % 97).collect();
        let accesses: Vec<Access> = lines.iter().map(|l| rd(l * 64 + 8, 8)).collect();
        for chunk in [1, 7, 64, 4999, 5000, 1 << 20] {
            let opts = SpillOptions {
                dir: None,
                chunk_refs: chunk,
            };
            let nu = NextUses::compute(&mut VecSource::new(accesses.clone()), 64, &opts).unwrap();
            assert_eq!(all(&nu), naive(&lines), "chunk {chunk}");
            assert_eq!(nu.counts().distinct_lines, 97);
            assert_eq!(nu.counts().read_references, 5000);
        }
    }

    #[test]
    fn straddling_accesses_are_one_reference_per_line() {
        // 60..68 straddles lines 0 and 1; then line 1, then line 0.
        let accesses = vec![rd(60, 8), rd(64, 4), rd(0, 1)];
        let nu =
            NextUses::compute(&mut VecSource::new(accesses), 64, &SpillOptions::default()).unwrap();
        assert_eq!(nu.counts().accesses, 3);
        assert_eq!(nu.counts().references, 4);
        assert_eq!(all(&nu), vec![3, 2, NEVER, NEVER]);
    }

    #[test]
    fn bad_line_sizes_and_addresses_are_errors() {
        let mut s = VecSource::new(vec![rd(0, 8)]);
        assert!(NextUses::compute(&mut s, 48, &SpillOptions::default()).is_err());
        let mut s = VecSource::new(vec![rd(u64::MAX - 4, 4)]);
        let e = NextUses::compute(&mut s, 64, &SpillOptions::default())
            .err()
            .unwrap();
        assert!(e.to_string().contains("beyond"), "{e}");
        let mut s = VecSource::new(vec![rd(0, 8)]);
        let opts = SpillOptions {
            dir: Some("/nonexistent/apusim-oracle".into()),
            chunk_refs: 16,
        };
        let e = NextUses::compute(&mut s, 64, &opts).err().unwrap();
        assert!(e.to_string().contains("/nonexistent"), "{e}");
    }

    #[test]
    fn reading_past_the_end_is_a_trace_change() {
        let nu = NextUses::compute(
            &mut VecSource::new(vec![rd(0, 8)]),
            64,
            &SpillOptions::default(),
        )
        .unwrap();
        let mut r = nu.reader().unwrap();
        let mut v = Vec::new();
        assert!(matches!(
            r.read(2, &mut v),
            Err(OracleError::TraceChanged(_))
        ));
    }
}
