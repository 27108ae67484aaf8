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

use super::ImportOptions;
use crate::{Access, AccessSource, Op, Result, Stream, TraceError, TraceHeader, BATCH};
use std::fs::File;
use std::io::{self, BufReader, Cursor, Read};
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

/// Streaming ChampSim trace reader.
pub struct ChampSimSource {
    input: Box<dyn Read + Send>,
    path: PathBuf,
    header: TraceHeader,
    opts: ImportOptions,
    compression: Compression,
    buf: Vec<u8>,
    /// Bytes of the (decompressed) stream consumed so far.
    offset: u64,
    instrs: u64,
    done: bool,
}

impl ChampSimSource {
    /// Open a raw, gzip or xz ChampSim trace file.
    pub fn open(path: impl AsRef<Path>, opts: &ImportOptions) -> Result<Self> {
        let path = path.as_ref();
        let f = File::open(path).map_err(|e| TraceError::io(path, e))?;
        ChampSimSource::new(BufReader::with_capacity(1 << 18, f), path, opts)
    }

    /// Read a ChampSim trace (raw, gzip or xz, sniffed from the first bytes) from `input`;
    /// `name` is used in error messages and the header.
    pub fn new<R: Read + Send + 'static>(
        mut input: R,
        name: impl AsRef<Path>,
        opts: &ImportOptions,
    ) -> Result<Self> {
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
        let name = super::stem(&path);
        let header = TraceHeader::single(
            opts.agent,
            name.split(".champsim").next().unwrap_or(&name),
            opts.clock_mhz,
            &[Stream::CpuInstr, Stream::CpuData],
            &format!("champsim: {}", path.display()),
        );
        Ok(ChampSimSource {
            input,
            path,
            header,
            opts: opts.clone(),
            compression,
            buf: Vec::new(),
            offset: 0,
            instrs: 0,
            done: false,
        })
    }

    /// The compression found in the file.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Instructions read so far.
    pub fn instructions(&self) -> u64 {
        self.instrs
    }

    fn stream_name(&self) -> &'static str {
        match self.compression {
            Compression::None => "",
            Compression::Gzip => " of the gunzipped stream",
            Compression::Xz => " of the unxzipped stream",
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
        if self.done {
            return Ok(false);
        }
        let records = (BATCH / MAX_PER_INSTR).clamp(1, CHUNK_RECORDS);
        let n = match self.read_records(records) {
            Ok(n) => n,
            Err(e) => {
                self.done = true;
                return Err(e);
            }
        };
        if n == 0 {
            self.done = true;
            return Ok(false);
        }
        let agent = self.opts.agent;
        let unit = self.opts.unit();
        out.reserve(n * 2);
        for r in self.buf[..n * RECORD_LEN].chunks_exact(RECORD_LEN) {
            let ip = u64_at(r, 0);
            let base = Access {
                addr: ip,
                pc: ip,
                time: self.instrs,
                warp: 0,
                unit,
                size: FETCH_SIZE,
                agent,
                stream: Stream::CpuInstr,
                op: Op::Read,
                flags: 0,
            };
            out.push(base);
            for k in 0..4 {
                let a = u64_at(r, 32 + 8 * k);
                if a != 0 {
                    out.push(Access {
                        addr: a,
                        size: DATA_SIZE,
                        stream: Stream::CpuData,
                        ..base
                    });
                }
            }
            for k in 0..2 {
                let a = u64_at(r, 16 + 8 * k);
                if a != 0 {
                    out.push(Access {
                        addr: a,
                        size: DATA_SIZE,
                        stream: Stream::CpuData,
                        op: Op::Write,
                        ..base
                    });
                }
            }
            self.instrs += 1;
        }
        self.offset += (n * RECORD_LEN) as u64;
        Ok(true)
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
