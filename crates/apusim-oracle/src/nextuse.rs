//! Next-use indices by a streaming backward pass (Belady's MIN needs, for every reference, when
//! its line is referenced next; drp-reuse-probability-shared-llc.txt §4.1, gspc §2).
//!
//! A trace is a sequence of *line references*: every access is split into the cache lines it
//! touches (an access that straddles a line boundary becomes one reference per line). Reference
//! `i`'s next use is the index of the next reference to the same line, or [`NEVER`].
//!
//! Traces may be larger than memory, so nothing here holds the whole trace:
//! 1. the source is read forward in batches and each reference's line address is collected in
//!    chunks of [`SpillOptions::chunk_refs`] references; every full chunk is spilled to an
//!    anonymous temporary file (8 bytes per reference), the last one stays in memory;
//! 2. the chunks are walked backward, last first; a table line → index of its latest-seen
//!    (i.e. next) reference (`LatestUse` of `latest.rs`: open addressing, fixed hash, lookups
//!    prefetched a few references ahead) gives each reference its next use, and each chunk of
//!    next uses is written at its own offset of a second temporary file — except the first
//!    chunk's, computed last, which stays in memory (a trace of one chunk touches no file);
//! 3. the forward simulation reads the next uses in step with a replay of the source
//!    ([`NextUseReader`]: the in-memory first chunk, then the file).
//!
//! Memory is O(distinct lines) for the table (21–43 bytes per distinct line) plus three chunk buffers. The spill files are
//! removed when the [`NextUses`] is dropped.

pub use crate::latest::NEVER;

use crate::error::{OracleError, Result};
use crate::latest::LatestUse;
use apusim_cache::cache::MAX_LINE;
use apusim_cache::CacheError;
use apusim_trace::{Access, AccessSource, BATCH};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// The line references of one batch of accesses, for the replay: `lines()[i]` is the line of
/// `reqs(batch)[i]`. A batch whose accesses each touch one line (the normal case for an LLC
/// stream) is used as it is; only a batch with an access that straddles a line boundary is
/// copied, with one request per line (its address moved to the start of every line after the
/// first).
#[derive(Default)]
pub(crate) struct Refs {
    lines: Vec<u64>,
    split: Vec<Access>,
    straddles: bool,
}

impl Refs {
    /// Split `batch` into line references; an error for lines beyond the tag range.
    pub(crate) fn fill(
        &mut self,
        batch: &[Access],
        line_bits: u32,
    ) -> std::result::Result<(), CacheError> {
        self.lines.clear();
        self.split.clear();
        // Fast path: one line per access and every line in range (one branch-free pass).
        let mut odd = false;
        self.lines.extend(batch.iter().map(|a| {
            let (first, last) = line_span(a, line_bits);
            odd |= off_fast_path(first, last);
            first
        }));
        self.straddles = odd;
        if !odd {
            return Ok(());
        }
        self.lines.clear();
        for a in batch {
            let (first, last) = checked_span(a, line_bits)?;
            self.lines.extend(first..=last);
            self.split.push(*a);
            self.split.extend((first + 1..=last).map(|line| Access {
                addr: line << line_bits,
                ..*a
            }));
        }
        Ok(())
    }
    /// True if every access of `batch` touches one line, in the tag range (one branch-free
    /// pass).
    #[inline]
    fn one_line_each(batch: &[Access], line_bits: u32) -> bool {
        !batch.iter().fold(false, |odd, a| {
            let (first, last) = line_span(a, line_bits);
            odd | off_fast_path(first, last)
        })
    }
    /// The lines referenced, in order.
    pub(crate) fn lines(&self) -> &[u64] {
        &self.lines
    }
    /// The request of every line reference (`batch` itself unless an access straddles).
    pub(crate) fn reqs<'a>(&'a self, batch: &'a [Access]) -> &'a [Access] {
        if self.straddles {
            &self.split
        } else {
            batch
        }
    }
}

/// True if an access spanning lines `first..=last` leaves the one-line fast path: it
/// straddles a line boundary or reaches beyond the tag range (branch-free, for batch folds).
#[inline(always)]
fn off_fast_path(first: u64, last: u64) -> bool {
    (first != last) | (last > MAX_LINE)
}

/// [`line_span`], with an error for lines beyond the tag range.
#[inline]
fn checked_span(a: &Access, line_bits: u32) -> std::result::Result<(u64, u64), CacheError> {
    let (first, last) = line_span(a, line_bits);
    if last > MAX_LINE {
        return Err(CacheError::AddressTooLarge { addr: a.addr });
    }
    Ok((first, last))
}

/// Order-sensitive fingerprint of the line sequence, to detect a replay that differs.
#[inline]
pub(crate) fn fingerprint(h: u64, line: u64) -> u64 {
    (h ^ line)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(29)
}

/// The bytes of `v` as stored in the spill files (little-endian `u64`s).
fn le_bytes(v: &mut [u64]) -> &[u8] {
    for x in v.iter_mut() {
        *x = x.to_le(); // the identity on little-endian hosts (compiled away)
    }
    // SAFETY: `u64` has no padding and every byte is initialized; `u8` has alignment 1.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// Read `v.len()` little-endian `u64`s from `r` into `v`.
fn read_u64s(r: &mut impl Read, v: &mut [u64]) -> std::io::Result<()> {
    // SAFETY: every byte pattern is a valid `u64`; `u8` has alignment 1; the slice covers
    // exactly `v`'s memory, which it borrows mutably.
    let bytes = unsafe {
        std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v))
    };
    r.read_exact(bytes)?;
    for x in v.iter_mut() {
        *x = u64::from_le(*x);
    }
    Ok(())
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

/// The next use of every line reference of a trace: the first chunk in memory, the rest
/// spilled to a temporary file.
pub struct NextUses {
    /// Next uses of references `0..head.len()` (the first chunk, computed last).
    head: Arc<Vec<u64>>,
    /// Next uses of references `head.len()..` at offset `8 * index`.
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

/// The forward pass: line addresses in chunks, all but the last written to a spill file.
struct Forward {
    /// The full chunks.
    file: File,
    /// References written to `file` (a multiple of the chunk size).
    written: u64,
    /// The last, partial chunk.
    tail: Vec<u64>,
    counts: TraceCounts,
    fingerprint: u64,
}

impl Forward {
    fn read(
        source: &mut dyn AccessSource,
        line_bits: u32,
        chunk: usize,
        mut file: File,
        err: &impl Fn(std::io::Error) -> OracleError,
    ) -> Result<Forward> {
        let mut counts = TraceCounts::default();
        let (mut fp, mut written) = (0u64, 0u64);
        let mut buf: Vec<u64> = vec![0; chunk];
        let mut len = 0;
        let mut batch = Vec::with_capacity(BATCH);
        loop {
            batch.clear();
            if !source.next_batch(&mut batch)? {
                break;
            }
            counts.accesses += batch.len() as u64;
            // A full chunk is spilled when the next line arrives (the last one stays).
            let mut spill = |buf: &mut Vec<u64>, len: &mut usize| -> Result<()> {
                if *len == chunk {
                    file.write_all(le_bytes(buf)).map_err(err)?;
                    written += chunk as u64;
                    *len = 0;
                }
                Ok(())
            };
            if Refs::one_line_each(&batch, line_bits) {
                // Fast path (the normal case): one reference per access, chunk by chunk.
                let mut rest = &batch[..];
                while !rest.is_empty() {
                    spill(&mut buf, &mut len)?;
                    let n = rest.len().min(chunk - len);
                    for (slot, a) in buf[len..len + n].iter_mut().zip(&rest[..n]) {
                        let line = a.addr >> line_bits;
                        *slot = line;
                        counts.read_references += u64::from(a.op.is_read());
                        fp = fingerprint(fp, line);
                    }
                    len += n;
                    rest = &rest[n..];
                }
                continue;
            }
            for a in &batch {
                let (first, last) = checked_span(a, line_bits)?;
                counts.read_references += (last - first + 1) * a.op.is_read() as u64;
                let mut line = first;
                loop {
                    spill(&mut buf, &mut len)?;
                    buf[len] = line;
                    len += 1;
                    fp = fingerprint(fp, line);
                    if line == last {
                        break;
                    }
                    line += 1;
                }
            }
        }
        buf.truncate(len);
        counts.references = written + len as u64;
        Ok(Forward {
            file,
            written,
            tail: buf,
            counts,
            fingerprint: fp,
        })
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

        // Pass 1: forward, spill line addresses (all but the last chunk).
        let lines_file = tempfile::tempfile_in(&dir).map_err(&err)?;
        let Forward {
            file: mut lines_file,
            written,
            tail,
            mut counts,
            fingerprint,
        } = Forward::read(source, line_bits, chunk, lines_file, &err)?;

        // Pass 2: backward over chunks (the last one still in memory), next uses written at
        // their own offsets except the first chunk's, which stays in memory.
        let file = tempfile::NamedTempFile::new_in(&dir).map_err(&err)?;
        let mut map = LatestUse::with_capacity(chunk.min(counts.references as usize));
        let mut lines = tail;
        let mut next = vec![0u64; lines.len().max(chunk.min(written as usize))];
        let mut start = written;
        loop {
            map.walk_back(&lines, start, &mut next);
            if start == 0 {
                break;
            }
            let mut out = file.as_file();
            out.seek(SeekFrom::Start(start * 8)).map_err(&err)?;
            out.write_all(le_bytes(&mut next[..lines.len()]))
                .map_err(&err)?;
            start -= chunk as u64;
            lines.resize(chunk, 0);
            lines_file.seek(SeekFrom::Start(start * 8)).map_err(&err)?;
            read_u64s(&mut lines_file, &mut lines).map_err(&err)?;
        }
        next.truncate(lines.len());
        counts.distinct_lines = map.distinct();
        drop(err);
        Ok(NextUses {
            head: Arc::new(next),
            file,
            dir,
            line_bits,
            counts,
            fingerprint,
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
        let err = spill_err(&self.dir);
        let mut f = self.file.reopen().map_err(&err)?;
        f.seek(SeekFrom::Start(self.head.len() as u64 * 8))
            .map_err(&err)?;
        Ok(NextUseReader {
            head: Arc::clone(&self.head),
            pos: 0,
            input: f,
            remaining: self.counts.references,
            dir: self.dir.clone(),
        })
    }
}

/// Sequential reader of a [`NextUses`], in step with a replay of the trace.
pub struct NextUseReader {
    /// The in-memory first chunk and the position in it.
    head: Arc<Vec<u64>>,
    pos: usize,
    /// The spill file, from the first reference after the head on (read straight into the
    /// caller's buffer: one system call per batch, no intermediate copy).
    input: File,
    remaining: u64,
    dir: PathBuf,
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
        out.clear();
        let from_head = n.min(self.head.len() - self.pos);
        out.extend_from_slice(&self.head[self.pos..self.pos + from_head]);
        self.pos += from_head;
        out.resize(n, 0);
        read_u64s(&mut self.input, &mut out[from_head..]).map_err(spill_err(&self.dir))?;
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

    /// SplitMix64, for reproducible random traces.
    fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Next uses by a backward walk with a std map, whole trace in memory.
    fn by_std_map(lines: &[u64]) -> Vec<u64> {
        let mut last = std::collections::HashMap::new();
        let mut v = vec![NEVER; lines.len()];
        for (i, &l) in lines.iter().enumerate().rev() {
            v[i] = last.insert(l, i as u64).unwrap_or(NEVER);
        }
        v
    }

    #[test]
    fn random_traces_match_at_every_chunk_boundary_and_table_size() {
        // Sparse lines over a wide range and sequential runs, with straddling accesses, so
        // that the table grows several times in the middle of chunks.
        for seed in 0..4u64 {
            let n = 3000 + 1700 * seed as usize;
            let accesses: Vec<Access> = (0..n as u64)
                .map(|i| {
                    let r = mix(seed << 32 | i);
                    let line = match r % 4 {
                        0 => i,
                        1 => (r >> 8) % (1 << 36),
                        _ => (r >> 8) % (50 + 400 * seed),
                    };
                    let size = if r.is_multiple_of(16) { 100 } else { 8 };
                    rd(line * 64 + 40, size)
                })
                .collect();
            let lines: Vec<u64> = accesses
                .iter()
                .flat_map(|a| {
                    let (f, l) = line_span(a, 6);
                    f..=l
                })
                .collect();
            let want = by_std_map(&lines);
            assert_eq!(want[..500], naive(&lines)[..500]);
            let distinct = lines
                .iter()
                .collect::<std::collections::BTreeSet<_>>()
                .len() as u64;
            let refs = lines.len();
            for chunk in [1, 3, 1000, refs - 1, refs, refs + 1] {
                let opts = SpillOptions {
                    dir: None,
                    chunk_refs: chunk,
                };
                let nu =
                    NextUses::compute(&mut VecSource::new(accesses.clone()), 64, &opts).unwrap();
                assert_eq!(all(&nu), want, "seed {seed}, chunk {chunk}");
                assert_eq!(nu.counts().distinct_lines, distinct);
                assert_eq!(nu.counts().references, refs as u64);
                // Reading in pieces that do not line up with the chunks gives the same.
                let mut r = nu.reader().unwrap();
                let (mut got, mut piece) = (Vec::new(), Vec::new());
                for k in 0.. {
                    let take = (7 * k % 1500 + 1).min(r.remaining() as usize);
                    if take == 0 {
                        break;
                    }
                    r.read(take, &mut piece).unwrap();
                    got.extend_from_slice(&piece);
                }
                assert_eq!(got, want, "seed {seed}, chunk {chunk}, pieces");
            }
        }
    }

    #[test]
    fn refs_split_only_batches_with_straddling_accesses() {
        let mut refs = Refs::default();
        let plain = vec![rd(0, 8), rd(640, 64)];
        refs.fill(&plain, 6).unwrap();
        assert_eq!(refs.lines(), &[0, 10]);
        assert_eq!(refs.reqs(&plain), &plain[..]);
        let straddling = vec![rd(0, 8), rd(60, 8), rd(640, 8)];
        refs.fill(&straddling, 6).unwrap();
        assert_eq!(refs.lines(), &[0, 0, 1, 10]);
        let addrs: Vec<u64> = refs.reqs(&straddling).iter().map(|a| a.addr).collect();
        assert_eq!(addrs, vec![0, 60, 64, 640]);
        assert!(refs.fill(&[rd(0, 8), rd(u64::MAX - 4, 4)], 6).is_err());
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
