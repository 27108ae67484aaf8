//! ChampSim binary trace importer.
//!
//! A ChampSim trace is a sequence of 64-byte `input_instr` records, little-endian:
//!
//! ```text
//! offset size field
//!      0    8 ip
//!      8    1 is_branch
//!      9    1 branch_taken
//!     10    2 destination_registers[2]
//!     12    4 source_registers[4]
//!     16   16 destination_memory[2]   (u64 each; 0 = unused)
//!     32   32 source_memory[4]        (u64 each; 0 = unused)
//! ```
//!
//! stored raw or compressed with gzip (`.gz`, read with a multi-member decoder) or xz (`.xz`,
//! multi-stream); the compression is recognised by its magic bytes, not the file name.
//!
//! Each instruction `i` (0-based) becomes, all with `time = i`, `pc = ip`, the agent and unit
//! of [`ImportOptions`]:
//!
//! 1. an instruction fetch: [`Stream::CpuInstr`] [`Op::Read`] at `ip`, size 4;
//! 2. one [`Stream::CpuData`] read per non-zero `source_memory` entry, in array order;
//! 3. one data write per non-zero `destination_memory` entry, in array order.
//!
//! ChampSim records no access sizes: fetches are given 4 bytes (a typical fixed-length
//! encoding; ChampSim itself fetches by cache line) and data accesses 8 bytes (a machine word).
//! Both stay within one 64-byte line for aligned addresses, which is what ChampSim models.
//! Duplicate addresses within one instruction are kept (ChampSim's own front end merges them).
//!
//! A trailing partial record is a [`TraceError::Format`] naming its byte offset in the
//! (decompressed) stream; corrupt compressed data is reported the same way.
//!
//! Two readers share the decompression and framing: [`ChampSimReader`] yields whole
//! [`ChampSimRecord`]s (ip, branch flags, registers, memory operands: what a timed core needs
//! to honour register dependences and predict branches), and [`ChampSimSource`] flattens them
//! into access records for the functional runs.

use super::ImportOptions;
use crate::{Access, AccessSource, Op, Result, Stream, TraceError, TraceHeader, BATCH};
use std::fs::File;
use std::io::{self, BufReader, Cursor, Read, Write};
use std::path::{Path, PathBuf};

/// Bytes per ChampSim `input_instr` record.
pub const RECORD_LEN: usize = 64;
/// Size given to instruction fetches.
pub const FETCH_SIZE: u16 = 4;
/// Size given to data accesses.
pub const DATA_SIZE: u16 = 8;
/// Most accesses one instruction produces (fetch + 4 loads + 2 stores).
const MAX_PER_INSTR: usize = 7;
const CHUNK_RECORDS: usize = 1024;

/// The compression of a ChampSim file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Xz,
}

impl Compression {
    /// Recognise gzip or xz magic bytes.
    pub fn sniff(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
            Compression::Xz
        } else {
            Compression::None
        }
    }
}

/// One ChampSim `input_instr` record, decoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChampSimRecord {
    pub ip: u64,
    /// The tracer's branch flag (ChampSim re-derives the branch type from the registers).
    pub is_branch: bool,
    pub branch_taken: bool,
    /// Architectural registers written and read (0 = unused).
    pub dst_regs: [u8; 2],
    pub src_regs: [u8; 4],
    /// Addresses stored to and loaded from (0 = unused).
    pub dst_mem: [u64; 2],
    pub src_mem: [u64; 4],
}

impl ChampSimRecord {
    /// Decode one 64-byte record.
    pub fn decode(r: &[u8]) -> ChampSimRecord {
        debug_assert!(r.len() >= RECORD_LEN);
        ChampSimRecord {
            ip: u64_at(r, 0),
            is_branch: r[8] != 0,
            branch_taken: r[9] != 0,
            dst_regs: [r[10], r[11]],
            src_regs: [r[12], r[13], r[14], r[15]],
            dst_mem: [u64_at(r, 16), u64_at(r, 24)],
            src_mem: [u64_at(r, 32), u64_at(r, 40), u64_at(r, 48), u64_at(r, 56)],
        }
    }

    /// Encode as a 64-byte record.
    pub fn encode(&self) -> [u8; RECORD_LEN] {
        let mut r = [0u8; RECORD_LEN];
        r[0..8].copy_from_slice(&self.ip.to_le_bytes());
        r[8] = u8::from(self.is_branch);
        r[9] = u8::from(self.branch_taken);
        r[10..12].copy_from_slice(&self.dst_regs);
        r[12..16].copy_from_slice(&self.src_regs);
        for (k, a) in self.dst_mem.iter().enumerate() {
            r[16 + 8 * k..24 + 8 * k].copy_from_slice(&a.to_le_bytes());
        }
        for (k, a) in self.src_mem.iter().enumerate() {
            r[32 + 8 * k..40 + 8 * k].copy_from_slice(&a.to_le_bytes());
        }
        r
    }
}

/// Streaming reader of whole ChampSim records (raw, gzip or xz).
pub struct ChampSimReader {
    input: Box<dyn Read + Send>,
    path: PathBuf,
    compression: Compression,
    buf: Vec<u8>,
    /// Bytes of the (decompressed) stream consumed so far.
    offset: u64,
    records: u64,
    done: bool,
}

impl ChampSimReader {
    /// Open a raw, gzip or xz ChampSim trace file.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let f = File::open(path).map_err(|e| TraceError::io(path, e))?;
        ChampSimReader::new(BufReader::with_capacity(1 << 18, f), path)
    }

    /// Read a ChampSim trace (raw, gzip or xz, sniffed from the first bytes) from `input`;
    /// `name` is used in error messages.
    pub fn new<R: Read + Send + 'static>(mut input: R, name: impl AsRef<Path>) -> Result<Self> {
        let path = name.as_ref().to_path_buf();
        let mut head = [0u8; 6];
        let mut n = 0;
        while n < head.len() {
            match input.read(&mut head[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TraceError::io(&path, e)),
            }
        }
        let compression = Compression::sniff(&head[..n]);
        let whole = Cursor::new(head[..n].to_vec()).chain(input);
        let input: Box<dyn Read + Send> = match compression {
            Compression::None => Box::new(whole),
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(whole))),
            Compression::Xz => Box::new(xz2::read::XzDecoder::new_multi_decoder(BufReader::new(
                whole,
            ))),
        };
        Ok(ChampSimReader {
            input,
            path,
            compression,
            buf: Vec::new(),
            offset: 0,
            records: 0,
            done: false,
        })
    }

    /// The file (or name) being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The compression found in the file.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Records read so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Bytes of the (decompressed) stream read so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn stream_name(&self) -> &'static str {
        match self.compression {
            Compression::None => "",
            Compression::Gzip => " of the gunzipped stream",
            Compression::Xz => " of the unxzipped stream",
        }
    }

    /// Append up to `max` records to `out`; false (and nothing appended) at the end of the
    /// trace. After an error the reader stays at its end.
    pub fn next_records(&mut self, max: usize, out: &mut Vec<ChampSimRecord>) -> Result<bool> {
        let n = self.next_raw(max)?;
        out.extend(
            self.buf[..n * RECORD_LEN]
                .chunks_exact(RECORD_LEN)
                .map(ChampSimRecord::decode),
        );
        Ok(n > 0)
    }

    /// Read up to `max` whole records into the internal buffer; returns the count.
    fn next_raw(&mut self, max: usize) -> Result<usize> {
        if self.done {
            return Ok(0);
        }
        match self.read_records(max.max(1)) {
            Ok(0) => {
                self.done = true;
                Ok(0)
            }
            Ok(n) => {
                self.offset += (n * RECORD_LEN) as u64;
                self.records += n as u64;
                Ok(n)
            }
            Err(e) => {
                self.done = true;
                Err(e)
            }
        }
    }

    /// Fill `buf` with up to `records` whole records; returns the count.
    fn read_records(&mut self, records: usize) -> Result<usize> {
        self.buf.resize(records * RECORD_LEN, 0);
        let mut n = 0;
        while n < self.buf.len() {
            match self.input.read(&mut self.buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let at = self.offset + n as u64;
                    return Err(match self.compression {
                        Compression::None => TraceError::io(&self.path, e),
                        _ => TraceError::format(
                            &self.path,
                            at,
                            format!(
                                "decompression failed at byte {at}{}: {e}",
                                self.stream_name()
                            ),
                        ),
                    });
                }
            }
        }
        if n % RECORD_LEN != 0 {
            let at = self.offset + (n - n % RECORD_LEN) as u64;
            return Err(TraceError::format(
                &self.path,
                at,
                format!(
                    "trailing partial record{}: expected {RECORD_LEN} bytes, found {}",
                    self.stream_name(),
                    n % RECORD_LEN
                ),
            ));
        }
        Ok(n / RECORD_LEN)
    }
}

/// Streaming ChampSim trace reader producing access records.
pub struct ChampSimSource {
    reader: ChampSimReader,
    header: TraceHeader,
    opts: ImportOptions,
}

impl ChampSimSource {
    /// Open a raw, gzip or xz ChampSim trace file.
    pub fn open(path: impl AsRef<Path>, opts: &ImportOptions) -> Result<Self> {
        ChampSimSource::from_reader(ChampSimReader::open(path)?, opts)
    }

    /// Read a ChampSim trace (raw, gzip or xz, sniffed from the first bytes) from `input`;
    /// `name` is used in error messages and the header.
    pub fn new<R: Read + Send + 'static>(
        input: R,
        name: impl AsRef<Path>,
        opts: &ImportOptions,
    ) -> Result<Self> {
        ChampSimSource::from_reader(ChampSimReader::new(input, name)?, opts)
    }

    fn from_reader(reader: ChampSimReader, opts: &ImportOptions) -> Result<Self> {
        let header = champsim_header(reader.path(), opts);
        Ok(ChampSimSource {
            reader,
            header,
            opts: opts.clone(),
        })
    }

    /// The compression found in the file.
    pub fn compression(&self) -> Compression {
        self.reader.compression()
    }

    /// Instructions read so far.
    pub fn instructions(&self) -> u64 {
        self.reader.records()
    }
}

/// The header of a ChampSim trace at `path`: one agent (`opts.agent`), named after the file
/// without its `.champsim…` suffix, with instruction and data streams.
pub fn champsim_header(path: &Path, opts: &ImportOptions) -> TraceHeader {
    let name = super::stem(path);
    TraceHeader::single(
        opts.agent,
        name.split(".champsim").next().unwrap_or(&name),
        opts.clock_mhz,
        &[Stream::CpuInstr, Stream::CpuData],
        &format!("champsim: {}", path.display()),
    )
}

#[inline]
fn u64_at(r: &[u8], i: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&r[i..i + 8]);
    u64::from_le_bytes(b)
}

impl AccessSource for ChampSimSource {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_batch(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        let records = (BATCH / MAX_PER_INSTR).clamp(1, CHUNK_RECORDS);
        let first = self.reader.records();
        let n = self.reader.next_raw(records)?;
        if n == 0 {
            return Ok(false);
        }
        let agent = self.opts.agent;
        let unit = self.opts.unit();
        out.reserve(n * 2);
        for (i, r) in self.reader.buf[..n * RECORD_LEN]
            .chunks_exact(RECORD_LEN)
            .enumerate()
        {
            let ip = u64_at(r, 0);
            let base = Access {
                addr: ip,
                pc: ip,
                time: first + i as u64,
                warp: 0,
                unit,
                size: FETCH_SIZE,
                agent,
                stream: Stream::CpuInstr,
                op: Op::Read,
                flags: 0,
            };
            out.push(base);
            // The four source memory operands (reads) at byte 32, then the two destination
            // ones (writes) at byte 16; a zero address is an unused operand.
            for (at, n, op) in [(32, 4, Op::Read), (16, 2, Op::Write)] {
                for k in 0..n {
                    let a = u64_at(r, at + 8 * k);
                    if a != 0 {
                        out.push(Access {
                            addr: a,
                            size: DATA_SIZE,
                            stream: Stream::CpuData,
                            op,
                            ..base
                        });
                    }
                }
            }
        }
        Ok(true)
    }
}

/// Writes a ChampSim trace: raw, or compressed with xz (a name ending in `.xz`) or gzip
/// (`.gz`), as ChampSim picks its reader by the name. Records go to a temporary file in the
/// same directory, renamed to the path by [`ChampSimWriter::finish`]; until then the path is
/// untouched, and a writer dropped unfinished leaves nothing behind.
pub struct ChampSimWriter {
    out: Box<dyn FinishWrite>,
    temp: Option<tempfile::TempPath>,
    path: PathBuf,
    records: u64,
}

/// A stream that must be finished (compressors write their trailer then).
trait FinishWrite: io::Write {
    fn finish_stream(self: Box<Self>) -> io::Result<File>;
}

impl FinishWrite for io::BufWriter<File> {
    fn finish_stream(self: Box<Self>) -> io::Result<File> {
        self.into_inner().map_err(|e| e.into_error())
    }
}

impl FinishWrite for xz2::write::XzEncoder<io::BufWriter<File>> {
    fn finish_stream(self: Box<Self>) -> io::Result<File> {
        (*self).finish()?.into_inner().map_err(|e| e.into_error())
    }
}

impl FinishWrite for flate2::write::GzEncoder<io::BufWriter<File>> {
    fn finish_stream(self: Box<Self>) -> io::Result<File> {
        (*self).finish()?.into_inner().map_err(|e| e.into_error())
    }
}

impl ChampSimWriter {
    /// Start writing the trace `path`.
    pub fn create(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let tmp = crate::output::temp_beside(path).map_err(|e| TraceError::io(path, e))?;
        let name = path.to_string_lossy();
        let (file, temp) = tmp.into_parts();
        let buf = io::BufWriter::with_capacity(1 << 20, file);
        let out: Box<dyn FinishWrite> = if name.ends_with(".xz") {
            // Preset 1 keeps generation quick (these regular traces still compress well);
            // no integrity check, so that reading costs no CRC64 per byte (ChampSim's and
            // apusim's xz readers accept such streams).
            let stream = xz2::stream::Stream::new_easy_encoder(1, xz2::stream::Check::None)
                .map_err(|e| TraceError::io(path, e.into()))?;
            Box::new(xz2::write::XzEncoder::new_stream(buf, stream))
        } else if name.ends_with(".gz") {
            Box::new(flate2::write::GzEncoder::new(
                buf,
                flate2::Compression::fast(),
            ))
        } else {
            Box::new(buf)
        };
        Ok(ChampSimWriter {
            out,
            temp: Some(temp),
            path: path.to_path_buf(),
            records: 0,
        })
    }

    /// Append one record.
    pub fn write(&mut self, r: &ChampSimRecord) -> Result<()> {
        self.records += 1;
        self.out
            .write_all(&r.encode())
            .map_err(|e| TraceError::io(&self.path, e))
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Finish the stream and move the trace to its path.
    pub fn finish(mut self) -> Result<u64> {
        let path = self.path.clone();
        let file = self
            .out
            .finish_stream()
            .map_err(|e| TraceError::io(&path, e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o644))
                .map_err(|e| TraceError::io(&path, e))?;
        }
        file.sync_all().map_err(|e| TraceError::io(&path, e))?;
        if let Some(t) = self.temp.take() {
            t.persist(&path)
                .map_err(|e| TraceError::io(&path, e.error))?;
        }
        Ok(self.records)
    }
}

/// Encode one `input_instr` record (for tests and tools that write ChampSim traces).
pub fn encode_record(ip: u64, sources: &[u64], destinations: &[u64]) -> [u8; RECORD_LEN] {
    let mut r = [0u8; RECORD_LEN];
    r[0..8].copy_from_slice(&ip.to_le_bytes());
    for (k, a) in destinations.iter().take(2).enumerate() {
        r[16 + 8 * k..24 + 8 * k].copy_from_slice(&a.to_le_bytes());
    }
    for (k, a) in sources.iter().take(4).enumerate() {
        r[32 + 8 * k..40 + 8 * k].copy_from_slice(&a.to_le_bytes());
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(ip: u64) -> ChampSimRecord {
        ChampSimRecord {
            ip,
            is_branch: true,
            branch_taken: true,
            dst_regs: [26, 0],
            src_regs: [26, 25, 0, 0],
            dst_mem: [0x3000, 0],
            src_mem: [0x1000, 0, 0x2000, 0],
        }
    }

    #[test]
    fn records_round_trip_and_stream_in_chunks() {
        let mut raw = Vec::new();
        for k in 0..5 {
            raw.extend_from_slice(&rec(0x400000 + 4 * k).encode());
        }
        let mut r = ChampSimReader::new(std::io::Cursor::new(raw), "t.champsimtrace").unwrap();
        let mut out = Vec::new();
        assert!(r.next_records(3, &mut out).unwrap());
        assert!(r.next_records(3, &mut out).unwrap());
        assert!(!r.next_records(3, &mut out).unwrap());
        assert_eq!(out.len(), 5);
        assert_eq!(out[4], rec(0x400010));
        assert_eq!((r.records(), r.offset()), (5, 5 * RECORD_LEN as u64));
    }

    #[test]
    fn a_partial_record_names_file_and_offset() {
        let mut raw = rec(0x400000).encode().to_vec();
        raw.extend_from_slice(&[1, 2, 3]);
        let mut r = ChampSimReader::new(std::io::Cursor::new(raw), "bad.champsimtrace").unwrap();
        let mut out = Vec::new();
        let e = r.next_records(8, &mut out).unwrap_err().to_string();
        assert!(e.contains("bad.champsimtrace") && e.contains("64"), "{e}");
        assert!(!r.next_records(8, &mut out).unwrap(), "stays at its end");
    }

    #[test]
    fn the_writer_compresses_by_name_and_the_reader_sniffs_it() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "a.champsimtrace",
            "a.champsimtrace.xz",
            "a.champsimtrace.gz",
        ] {
            let p = dir.path().join(name);
            let mut w = ChampSimWriter::create(&p).unwrap();
            for k in 0..100 {
                w.write(&rec(0x400000 + 4 * k)).unwrap();
            }
            assert!(!p.exists(), "written atomically");
            assert_eq!(w.finish().unwrap(), 100);
            let mut r = ChampSimReader::open(&p).unwrap();
            let mut out = Vec::new();
            while r.next_records(64, &mut out).unwrap() {}
            assert_eq!(out.len(), 100, "{name}");
            assert_eq!(out[99], rec(0x400000 + 4 * 99));
        }
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            3,
            "no temporaries left"
        );
    }

    #[test]
    fn corrupt_xz_is_an_error_not_a_panic() {
        let mut raw = vec![0xfd, b'7', b'z', b'X', b'Z', 0];
        raw.extend_from_slice(&[0xAB; 100]);
        let mut r = ChampSimReader::new(std::io::Cursor::new(raw), "c.champsimtrace.xz").unwrap();
        let mut out = Vec::new();
        let e = r.next_records(8, &mut out).unwrap_err().to_string();
        assert!(e.contains("c.champsimtrace.xz"), "{e}");
    }
}
