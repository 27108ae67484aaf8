//! Reading `.apt` files on the calling thread: the preamble, the container walk
//! ([`BlockScanner`]), the decoding of one block ([`BlockDecoder`]) and [`AptReader`], which
//! runs both. [`ParallelAptReader`](super::ParallelAptReader) reuses the two halves on threads.

use super::codec::{
    decode_records, Codec, Cursors, DeltaCoding, COLUMNS, COLUMN_NAMES, COLUMN_TABLE, C_A, C_ADDR,
    DECODE_PAD,
};
use super::{
    BLOCK_HEADER_LEN, BLOCK_MAGIC, BLOCK_RECORDS, MAGIC, MAX_HEADER_LEN, MAX_RECORD_LEN,
    OLDEST_VERSION, PREAMBLE_FIXED, TRAILER_LEN, TRAILER_MAGIC, VERSION,
};
use crate::{Access, AccessSource, Result, TraceError, TraceHeader, BATCH};
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

/// Read until `buf` is full or end of input; returns the bytes read.
fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Read and check the preamble (magic, version, header JSON and its CRC); returns the header,
/// the file offset of the first block and the delta coding of the file's version.
pub(super) fn read_preamble<R: Read>(
    input: &mut R,
    path: &Path,
) -> Result<(TraceHeader, u64, DeltaCoding)> {
    let fmt = |off: u64, msg: String| TraceError::format(path, off, msg);
    let mut pre = [0u8; PREAMBLE_FIXED as usize];
    let n = read_full(input, &mut pre).map_err(|e| TraceError::io(path, e))?;
    if n < 8 || pre[..8] != MAGIC {
        return Err(fmt(
            0,
            format!(
                "not an .apt trace: expected magic {:02x?}, found {:02x?}",
                MAGIC,
                &pre[..n.min(8)]
            ),
        ));
    }
    if n < 16 {
        return Err(fmt(
            n as u64,
            "truncated preamble: expected version and header length".into(),
        ));
    }
    let version = u32::from_le_bytes([pre[8], pre[9], pre[10], pre[11]]);
    let Some(delta) = DeltaCoding::of_version(version) else {
        return Err(fmt(
            8,
            format!(
                "unsupported .apt version {version}; this build reads versions {OLDEST_VERSION} to {VERSION}"
            ),
        ));
    };
    let hlen = u32::from_le_bytes([pre[12], pre[13], pre[14], pre[15]]);
    if hlen > MAX_HEADER_LEN {
        return Err(fmt(
            12,
            format!("header length {hlen} exceeds the maximum of {MAX_HEADER_LEN} bytes"),
        ));
    }
    // Read what is there (up to the declared length) rather than allocating the declared
    // length up front: a corrupt length must not cost 16 MiB.
    let want = hlen as usize + 4;
    let mut json = Vec::with_capacity(want.min(1 << 16));
    let n = input
        .take(want as u64)
        .read_to_end(&mut json)
        .map_err(|e| TraceError::io(path, e))?;
    if n < want {
        return Err(fmt(
            PREAMBLE_FIXED + n as u64,
            format!("truncated header: expected {want} bytes of header JSON and CRC, found {n}"),
        ));
    }
    let crc_bytes = &json[hlen as usize..];
    let crc = u32::from_le_bytes([crc_bytes[0], crc_bytes[1], crc_bytes[2], crc_bytes[3]]);
    let json = &json[..hlen as usize];
    if crc32fast::hash(json) != crc {
        return Err(fmt(
            PREAMBLE_FIXED + hlen as u64,
            "header CRC mismatch: the header JSON is corrupt".into(),
        ));
    }
    let mut header: TraceHeader = serde_json::from_slice(json).map_err(|e| {
        fmt(
            PREAMBLE_FIXED + (e.column() as u64).min(hlen as u64),
            format!("invalid header JSON (expected a TraceHeader object): {e}"),
        )
    })?;
    header.version = version;
    Ok((header, PREAMBLE_FIXED + hlen as u64 + 4, delta))
}

/// Where a block sits in the file and what its header declares; its payload's CRC has been
/// checked by the [`BlockScanner`] that produced it.
#[derive(Clone, Copy, Debug)]
pub(super) struct BlockInfo {
    /// Index of the block in the file (0-based).
    index: u64,
    /// File offset of the block header.
    offset: u64,
    pub(super) records: usize,
    pub(super) raw_len: usize,
}

impl BlockInfo {
    fn payload_offset(&self) -> u64 {
        self.offset + BLOCK_HEADER_LEN as u64
    }
}

/// The container half of reading: walks the file block by block, reading each block's header
/// and compressed payload and checking the payload's CRC, and checks the trailer at the end.
/// It does not decompress or decode ([`BlockDecoder`] does), so that blocks can be decoded on
/// other threads ([`ParallelAptReader`](super::ParallelAptReader)).
pub(super) struct BlockScanner<R: Read> {
    pub(super) input: R,
    pub(super) path: PathBuf,
    /// File offset of the next unread byte.
    pub(super) offset: u64,
    pub(super) blocks: u64,
    /// Records of the blocks scanned so far.
    pub(super) records: u64,
}

impl<R: Read> BlockScanner<R> {
    fn err(&self, offset: u64, msg: impl Into<String>) -> TraceError {
        TraceError::format(&self.path, offset, msg)
    }

    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        read_full(&mut self.input, buf).map_err(|e| TraceError::io(&self.path, e))
    }

    /// Read the next block into `payload` (its compressed bytes); `Ok(None)` after a valid
    /// trailer.
    pub(super) fn next_block(&mut self, payload: &mut Vec<u8>) -> Result<Option<BlockInfo>> {
        let at = self.offset;
        let mut hdr = [0u8; BLOCK_HEADER_LEN];
        let n = self.read(&mut hdr[..4])?;
        if n == 0 {
            return Err(self.err(
                at,
                format!(
                    "missing trailer: the file ends after {} blocks ({} records) without the \
                     end marker (truncated?)",
                    self.blocks, self.records
                ),
            ));
        }
        if n < 4 {
            return Err(self.err(at, "truncated: expected a block or trailer magic"));
        }
        if hdr[..4] == TRAILER_MAGIC {
            self.check_trailer(at)?;
            return Ok(None);
        }
        if hdr[..4] != BLOCK_MAGIC {
            return Err(self.err(
                at,
                format!(
                    "expected block magic {:?} or trailer magic {:?}, found {:02x?}",
                    "APTB",
                    "APTE",
                    &hdr[..4]
                ),
            ));
        }
        let n = self.read(&mut hdr[4..])?;
        if n < BLOCK_HEADER_LEN - 4 {
            return Err(self.err(at + 4 + n as u64, "truncated block header"));
        }
        let word = |i: usize| u32::from_le_bytes([hdr[i], hdr[i + 1], hdr[i + 2], hdr[i + 3]]);
        let (count, raw_len, comp_len, crc) = (
            word(4) as usize,
            word(8) as usize,
            word(12) as usize,
            word(16),
        );
        if count == 0 || count > BLOCK_RECORDS {
            return Err(self.err(
                at + 4,
                format!("block record count {count} out of range (expected 1..={BLOCK_RECORDS})"),
            ));
        }
        if raw_len < COLUMN_TABLE + 2 * count || raw_len > COLUMN_TABLE + count * MAX_RECORD_LEN {
            return Err(self.err(
                at + 8,
                format!(
                    "block raw length {raw_len} impossible for {count} records (expected {}..={})",
                    COLUMN_TABLE + 2 * count,
                    COLUMN_TABLE + count * MAX_RECORD_LEN
                ),
            ));
        }
        let max_comp = zstd::zstd_safe::compress_bound(raw_len) + 1024;
        if comp_len == 0 || comp_len > max_comp {
            return Err(self.err(
                at + 12,
                format!(
                    "block compressed length {comp_len} out of range (expected 1..={max_comp})"
                ),
            ));
        }
        let info = BlockInfo {
            index: self.blocks,
            offset: at,
            records: count,
            raw_len,
        };
        let payload_at = info.payload_offset();
        payload.clear();
        let n = (&mut self.input)
            .take(comp_len as u64)
            .read_to_end(payload)
            .map_err(|e| TraceError::io(&self.path, e))?;
        if n < comp_len {
            return Err(self.err(
                payload_at + n as u64,
                format!(
                    "truncated block {}: expected {comp_len} payload bytes, found {n}",
                    info.index
                ),
            ));
        }
        if crc32fast::hash(payload) != crc {
            return Err(self.err(
                payload_at,
                format!(
                    "CRC mismatch in block {}: the compressed payload is corrupt",
                    info.index
                ),
            ));
        }
        self.offset = payload_at + comp_len as u64;
        self.blocks += 1;
        self.records += count as u64;
        Ok(Some(info))
    }

    /// Check the trailer whose magic starts at `at` and that nothing follows it.
    fn check_trailer(&mut self, at: u64) -> Result<()> {
        let mut t = [0u8; TRAILER_LEN];
        t[..4].copy_from_slice(&TRAILER_MAGIC);
        let n = self.read(&mut t[4..])?;
        if n < TRAILER_LEN - 4 {
            return Err(self.err(at + 4 + n as u64, "truncated trailer"));
        }
        let crc = u32::from_le_bytes([t[20], t[21], t[22], t[23]]);
        if crc32fast::hash(&t[..20]) != crc {
            return Err(self.err(at + 20, "trailer CRC mismatch"));
        }
        let total = u64::from_le_bytes(t[4..12].try_into().unwrap_or([0; 8]));
        let blocks = u64::from_le_bytes(t[12..20].try_into().unwrap_or([0; 8]));
        if total != self.records || blocks != self.blocks {
            return Err(self.err(
                at + 4,
                format!(
                    "trailer says {total} records in {blocks} blocks, but the file holds {} \
                     records in {} blocks",
                    self.records, self.blocks
                ),
            ));
        }
        let mut extra = [0u8; 1];
        if self.read(&mut extra)? != 0 {
            return Err(self.err(at + TRAILER_LEN as u64, "unexpected data after the trailer"));
        }
        self.offset = at + TRAILER_LEN as u64;
        Ok(())
    }
}

/// The record half of reading: decompresses one block and decodes its records, a batch at a
/// time, into the caller's vector.
pub(super) struct BlockDecoder {
    path: PathBuf,
    codec: Codec,
    decompressor: zstd::bulk::Decompressor<'static>,
    raw: Vec<u8>,
    /// Decode positions in the columns of `raw`.
    cursors: Cursors,
    /// End offset of every column in `raw` (which is followed by [`DECODE_PAD`] zeros).
    col_ends: [usize; COLUMNS],
    /// Records left in the current block.
    pub(super) left: usize,
    /// The current block.
    info: BlockInfo,
}

impl BlockDecoder {
    /// A decoder for the blocks of a trace whose deltas are coded as `delta`.
    pub(super) fn new(path: &Path, delta: DeltaCoding) -> Result<BlockDecoder> {
        Ok(BlockDecoder {
            path: path.to_path_buf(),
            codec: Codec::new(delta),
            decompressor: zstd::bulk::Decompressor::new().map_err(|e| TraceError::io(path, e))?,
            raw: Vec::new(),
            cursors: Cursors::default(),
            col_ends: [0; COLUMNS],
            left: 0,
            info: BlockInfo {
                index: 0,
                offset: 0,
                records: 0,
                raw_len: 0,
            },
        })
    }

    fn err(&self, offset: u64, msg: impl Into<String>) -> TraceError {
        TraceError::format(&self.path, offset, msg)
    }

    /// Decompress the block `info` from its compressed `payload` and check its column table.
    pub(super) fn load(&mut self, info: BlockInfo, payload: &[u8]) -> Result<()> {
        let payload_at = info.payload_offset();
        let (index, raw_len, count) = (info.index, info.raw_len, info.records);
        self.raw.clear();
        self.raw.reserve(raw_len + DECODE_PAD);
        let got = match self
            .decompressor
            .decompress_to_buffer(payload, &mut self.raw)
        {
            Ok(k) => k,
            Err(e) => {
                return Err(self.err(payload_at, format!("zstd failed on block {index}: {e}")))
            }
        };
        if got != raw_len {
            return Err(self.err(
                payload_at,
                format!("block {index} decompressed to {got} bytes, header says {raw_len}"),
            ));
        }
        // Column table: the length of each column; the columns follow in order.
        let mut starts = [0usize; COLUMNS];
        let mut ends = [0usize; COLUMNS];
        let mut at_col = COLUMN_TABLE;
        for k in 0..COLUMNS {
            let t = &self.raw[4 * k..4 * k + 4];
            let len = u32::from_le_bytes([t[0], t[1], t[2], t[3]]) as usize;
            starts[k] = at_col;
            at_col = at_col.saturating_add(len);
            ends[k] = at_col;
        }
        let bad_table = if ends[C_A] - starts[C_A] != count {
            Some(format!(
                "column A holds {} bytes, expected one per record ({count})",
                ends[C_A] - starts[C_A]
            ))
        } else if ends[C_ADDR] - starts[C_ADDR] < count {
            Some("address column shorter than one byte per record".to_string())
        } else if at_col != raw_len {
            Some(format!(
                "column lengths add up to {at_col} bytes, the block holds {raw_len}"
            ))
        } else {
            None
        };
        if let Some(msg) = bad_table {
            return Err(self.err(
                payload_at,
                format!("block {index}: bad column table: {msg}"),
            ));
        }
        self.raw.resize(raw_len + DECODE_PAD, 0);
        self.cursors = Cursors::from_array(&starts);
        self.col_ends = ends;
        self.info = info;
        self.left = count;
        self.codec.reset();
        Ok(())
    }

    /// Decode the next batch (at most [`BATCH`] records) of the current block and append it
    /// to `out`. On error nothing is appended.
    pub(super) fn decode_batch(&mut self, out: &mut Vec<Access>) -> Result<usize> {
        let n = self.left.min(BATCH);
        let before = out.len();
        // Decode straight into the vector's spare capacity: returning each 40-byte record and
        // pushing it cost a copy through the stack per record, and filling the slots with a
        // default record first cost a second write of every slot.
        out.reserve(n);
        let raw = &self.raw[..];
        let mut c = self.cursors;
        let first = self.info.records - self.left;
        let slots = &mut out.spare_capacity_mut()[..n];
        let bad = match self.codec.delta {
            DeltaCoding::LengthPrefixed => {
                decode_records::<true>(&mut self.codec, raw, &mut c, slots)
            }
            DeltaCoding::Leb128 => decode_records::<false>(&mut self.codec, raw, &mut c, slots),
        };
        let failure = bad
            .map(|(i, msg)| format!("record {}: {msg}", first + i))
            .or_else(|| self.check_cursors(&c, first, n));
        if let Some(msg) = failure {
            let info = self.info;
            return Err(self.err(
                info.payload_offset(),
                format!(
                    "block {} (header at byte {}), {msg}",
                    info.index, info.offset
                ),
            ));
        }
        // SAFETY: `decode_records` found no bad record, so it wrote all `n` slots after `before`.
        unsafe { out.set_len(before + n) };
        self.cursors = c;
        self.left -= n;
        Ok(n)
    }

    /// Every byte the records `first..first + n` consumed must lie inside its own column, and
    /// the last record of the block must leave no column bytes unread.
    fn check_cursors(&self, c: &Cursors, first: usize, n: usize) -> Option<String> {
        let pos = c.to_array();
        if let Some(k) = (0..COLUMNS).find(|&k| pos[k] > self.col_ends[k]) {
            return Some(format!(
                "records {first}..{}: the {} column runs past its end",
                first + n,
                COLUMN_NAMES[k]
            ));
        }
        if self.left == n {
            if let Some(k) = (0..COLUMNS).find(|&k| pos[k] != self.col_ends[k]) {
                return Some(format!(
                    "{} undecoded bytes in the {} column after the last record",
                    self.col_ends[k] - pos[k],
                    COLUMN_NAMES[k]
                ));
            }
        }
        None
    }
}

/// Streaming `.apt` reader that decodes on the calling thread; an [`AccessSource`].
///
/// [`ParallelAptReader`](super::ParallelAptReader) yields exactly the same batches and errors
/// with the decoding done by worker threads.
pub struct AptReader<R: Read> {
    scanner: BlockScanner<R>,
    header: TraceHeader,
    decoder: BlockDecoder,
    comp: Vec<u8>,
    records_read: u64,
    raw_bytes: u64,
    state: ReaderState,
}

#[derive(PartialEq, Eq, Clone, Copy)]
pub(super) enum ReaderState {
    Running,
    Done,
    Failed,
}

impl ReaderState {
    /// What `next_batch` returns in a state other than `Running`, if any.
    pub(super) fn finished(self, path: &Path) -> Option<Result<bool>> {
        match self {
            ReaderState::Running => None,
            ReaderState::Done => Some(Ok(false)),
            ReaderState::Failed => Some(Err(TraceError::Other(format!(
                "{}: reading after an earlier error",
                path.display()
            )))),
        }
    }
}

impl AptReader<BufReader<File>> {
    /// Open `path` and read its header.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let f = File::open(path).map_err(|e| TraceError::io(path, e))?;
        AptReader::with_name(BufReader::with_capacity(1 << 18, f), path)
    }
}

impl<R: Read> AptReader<R> {
    /// Read an `.apt` stream from any reader; `name` is used in error messages.
    pub fn with_name(mut input: R, name: impl AsRef<Path>) -> Result<Self> {
        let path = name.as_ref();
        let (header, offset, delta) = read_preamble(&mut input, path)?;
        Ok(AptReader {
            scanner: BlockScanner {
                input,
                path: path.to_path_buf(),
                offset,
                blocks: 0,
                records: 0,
            },
            header,
            decoder: BlockDecoder::new(path, delta)?,
            comp: Vec::new(),
            records_read: 0,
            raw_bytes: 0,
            state: ReaderState::Running,
        })
    }

    /// The file name used in error messages.
    pub fn path(&self) -> &Path {
        &self.scanner.path
    }
    /// Blocks read so far.
    pub fn blocks_read(&self) -> u64 {
        self.scanner.blocks
    }
    /// Records handed out so far.
    pub fn records_read(&self) -> u64 {
        self.records_read
    }
    /// Decompressed (delta/varint encoded) bytes of the blocks read so far.
    pub fn raw_bytes(&self) -> u64 {
        self.raw_bytes
    }

    fn next_batch_inner(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        if self.decoder.left == 0 {
            let Some(info) = self.scanner.next_block(&mut self.comp)? else {
                self.state = ReaderState::Done;
                return Ok(false);
            };
            self.decoder.load(info, &self.comp)?;
            self.raw_bytes += info.raw_len as u64;
        }
        self.records_read += self.decoder.decode_batch(out)? as u64;
        Ok(true)
    }
}

impl<R: Read + Send> AccessSource for AptReader<R> {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_batch(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        if let Some(r) = self.state.finished(self.path()) {
            return r;
        }
        let r = self.next_batch_inner(out);
        if r.is_err() {
            self.state = ReaderState::Failed;
        }
        r
    }
}
