//! The binary `oracleGeneral` and `oracleGeneralOpNS` formats: their records, op codes and
//! [`OracleGeneralSource`], which streams them.

use super::mapping::{next_batch, Emitter, ObjectMap};
use super::{header, maybe_zstd};
use crate::import::ImportOptions;
use crate::{Access, AccessSource, Op, Result, TraceError, TraceHeader, BATCH};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// Bytes of one `oracleGeneral` record.
pub const RECORD_BYTES: usize = 24;

/// Bytes of one `oracleGeneralOpNS` record.
pub const OPNS_RECORD_BYTES: usize = 27;

/// One `oracleGeneral` record as stored: 24 packed little-endian bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OracleGeneralRecord {
    /// Wall-clock time of the request, in seconds.
    pub clock_time: u32,
    /// The object requested.
    pub obj_id: u64,
    /// The object's size in bytes.
    pub obj_size: u32,
    /// Index of the next request of the same object; -1 (or `i64::MAX`) for none.
    pub next_access_vtime: i64,
}

impl OracleGeneralRecord {
    /// Decode one record.
    pub fn decode(b: &[u8; RECORD_BYTES]) -> Self {
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u64_at = |o: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[o..o + 8]);
            u64::from_le_bytes(w)
        };
        OracleGeneralRecord {
            clock_time: u32_at(0),
            obj_id: u64_at(4),
            obj_size: u32_at(12),
            next_access_vtime: u64_at(16) as i64,
        }
    }

    /// Encode one record (for writing test traces and converting to libCacheSim).
    pub fn encode(&self) -> [u8; RECORD_BYTES] {
        let mut b = [0u8; RECORD_BYTES];
        b[0..4].copy_from_slice(&self.clock_time.to_le_bytes());
        b[4..12].copy_from_slice(&self.obj_id.to_le_bytes());
        b[12..16].copy_from_slice(&self.obj_size.to_le_bytes());
        b[16..24].copy_from_slice(&self.next_access_vtime.to_le_bytes());
        b
    }
}

/// One `oracleGeneralOpNS` record as stored: 27 packed little-endian bytes (libCacheSim's
/// `oracleGeneralOpNS_read_one_req`, `traceReader/customizedReader/oracle/oracleGeneralBin.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OracleGeneralOpNSRecord {
    /// Wall-clock time of the request, in seconds.
    pub clock_time: u32,
    /// The object requested.
    pub obj_id: u64,
    /// The object's size in bytes.
    pub obj_size: u32,
    /// The operation, a libCacheSim `req_op_e` code (see [`lcs_op`]).
    pub op: u8,
    /// The namespace (ignored by the importer, as by libCacheSim's caches).
    pub ns: u16,
    /// Index of the next request of the same object; -1 for none.
    pub next_access_vtime: i64,
}

impl OracleGeneralOpNSRecord {
    /// Decode one record.
    pub fn decode(b: &[u8; OPNS_RECORD_BYTES]) -> Self {
        let mut w4 = [0u8; 4];
        let mut w8 = [0u8; 8];
        w4.copy_from_slice(&b[0..4]);
        let clock_time = u32::from_le_bytes(w4);
        w8.copy_from_slice(&b[4..12]);
        let obj_id = u64::from_le_bytes(w8);
        w4.copy_from_slice(&b[12..16]);
        let obj_size = u32::from_le_bytes(w4);
        w8.copy_from_slice(&b[19..27]);
        OracleGeneralOpNSRecord {
            clock_time,
            obj_id,
            obj_size,
            op: b[16],
            ns: u16::from_le_bytes([b[17], b[18]]),
            next_access_vtime: i64::from_le_bytes(w8),
        }
    }

    /// Encode one record (for writing test traces).
    pub fn encode(&self) -> [u8; OPNS_RECORD_BYTES] {
        let mut b = [0u8; OPNS_RECORD_BYTES];
        b[0..4].copy_from_slice(&self.clock_time.to_le_bytes());
        b[4..12].copy_from_slice(&self.obj_id.to_le_bytes());
        b[12..16].copy_from_slice(&self.obj_size.to_le_bytes());
        b[16] = self.op;
        b[17..19].copy_from_slice(&self.ns.to_le_bytes());
        b[19..27].copy_from_slice(&self.next_access_vtime.to_le_bytes());
        b
    }
}

/// The apusim operation of libCacheSim's `req_op_e` code `code` (`include/libCacheSim/enum.h`;
/// see the module documentation), or why it has none.
pub fn lcs_op(code: u8) -> std::result::Result<Op, String> {
    match code {
        // nop, get, gets, read
        0 | 1 | 2 | 12 => Ok(Op::Read),
        // set, add, cas, replace, append, prepend, incr, decr, write, update
        3..=8 | 10 | 11 | 13 | 14 => Ok(Op::Write),
        9 => Err(
            "op 9 (delete) has no apusim equivalent (a request cannot drop a cache line); \
             remove deletes from the trace"
                .into(),
        ),
        c => Err(format!(
            "op {c} is not a libCacheSim request operation (req_op_e runs from 0, nop, to 14, \
             update)"
        )),
    }
}

/// The record layouts [`OracleGeneralSource`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OracleLayout {
    /// `oracleGeneral`: 24 bytes, every request a read.
    General,
    /// `oracleGeneralOpNS`: 27 bytes with an op and a namespace.
    OpNS,
}

impl OracleLayout {
    /// Bytes of one record.
    pub const fn record_bytes(self) -> usize {
        match self {
            OracleLayout::General => RECORD_BYTES,
            OracleLayout::OpNS => OPNS_RECORD_BYTES,
        }
    }

    /// libCacheSim's name of the format.
    pub const fn name(self) -> &'static str {
        match self {
            OracleLayout::General => "oracleGeneral",
            OracleLayout::OpNS => "oracleGeneralOpNS",
        }
    }
}

/// Read until `buf` is full or the input ends; the number of bytes read.
fn read_full(input: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Streaming reader of a libCacheSim `oracleGeneral` or `oracleGeneralOpNS` trace, raw or
/// zstd-compressed.
pub struct OracleGeneralSource {
    input: Box<dyn BufRead + Send>,
    layout: OracleLayout,
    path: PathBuf,
    header: TraceHeader,
    map: ObjectMap,
    emit: Emitter,
    zstd: bool,
    /// Byte offset of the next record (in the decompressed stream for zstd input).
    offset: u64,
}

impl OracleGeneralSource {
    /// Open an `oracleGeneral` file (zstd-compressed or not).
    pub fn open(path: impl AsRef<Path>, opts: &ImportOptions) -> Result<Self> {
        OracleGeneralSource::open_layout(path, OracleLayout::General, opts)
    }

    /// Open a file of `layout` records (zstd-compressed or not).
    pub fn open_layout(
        path: impl AsRef<Path>,
        layout: OracleLayout,
        opts: &ImportOptions,
    ) -> Result<Self> {
        let path = path.as_ref();
        let f = File::open(path).map_err(|e| TraceError::io(path, e))?;
        OracleGeneralSource::with_layout(BufReader::with_capacity(1 << 18, f), path, layout, opts)
    }

    /// Read `oracleGeneral` records from `input`; `name` is used in errors and the header.
    pub fn new<R: BufRead + Send + 'static>(
        input: R,
        name: impl AsRef<Path>,
        opts: &ImportOptions,
    ) -> Result<Self> {
        OracleGeneralSource::with_layout(input, name, OracleLayout::General, opts)
    }

    /// Read `layout` records from `input`; `name` is used in errors and the header.
    pub fn with_layout<R: BufRead + Send + 'static>(
        input: R,
        name: impl AsRef<Path>,
        layout: OracleLayout,
        opts: &ImportOptions,
    ) -> Result<Self> {
        let path = name.as_ref().to_path_buf();
        let map = ObjectMap::new(&opts.libcachesim).map_err(TraceError::Other)?;
        let (input, zstd) = maybe_zstd(input, &path)?;
        Ok(OracleGeneralSource {
            input,
            layout,
            header: header(opts, &path, layout.name()),
            emit: Emitter::new(opts, opts.libcachesim.block_size),
            map,
            path,
            zstd,
            offset: 0,
        })
    }

    fn err(&self, offset: u64, msg: impl Into<String>) -> TraceError {
        let mut msg = msg.into();
        if self.zstd {
            msg.push_str(" (offset in the decompressed stream)");
        }
        TraceError::format(&self.path, offset, msg)
    }

    /// The next `N`-byte record and its byte offset; `None` at the end of the input. `N` is a
    /// constant, so that the copy out of the reader's buffer is a fixed-size one.
    #[inline(always)]
    fn next_record<const N: usize>(&mut self) -> Result<Option<(u64, [u8; N])>> {
        let mut b = [0u8; N];
        let n = read_full(&mut self.input, &mut b).map_err(|e| TraceError::io(&self.path, e))?;
        let at = self.offset;
        if n == 0 {
            return Ok(None);
        }
        if n < N {
            return Err(self.err(
                at,
                format!(
                    "truncated {} record: the input ends {n} bytes into a {N}-byte record",
                    self.layout.name()
                ),
            ));
        }
        self.offset += N as u64;
        Ok(Some((at, b)))
    }

    fn fill(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        // One loop per layout, each with its record size and decoder inlined.
        match self.layout {
            OracleLayout::General => self.fill_with(out, |b: &[u8; RECORD_BYTES]| {
                let r = OracleGeneralRecord::decode(b);
                (r.obj_id, r.obj_size, Ok(Op::Read))
            }),
            OracleLayout::OpNS => self.fill_with(out, |b: &[u8; OPNS_RECORD_BYTES]| {
                let r = OracleGeneralOpNSRecord::decode(b);
                (r.obj_id, r.obj_size, lcs_op(r.op))
            }),
        }
    }

    /// Fill `out` from records of `N` bytes, `decode` giving each one's object id, size and
    /// operation (or why it has none).
    #[inline(always)]
    fn fill_with<const N: usize>(
        &mut self,
        out: &mut Vec<Access>,
        decode: impl Fn(&[u8; N]) -> (u64, u32, std::result::Result<Op, String>),
    ) -> Result<bool> {
        let mut produced = self.emit.drain(out, 0);
        while produced < BATCH {
            let Some((at, rec)) = self.next_record::<N>()? else {
                self.emit.done = true;
                break;
            };
            let (obj_id, obj_size, op) = decode(&rec);
            // libCacheSim skips requests of size 0 before looking at their op.
            if obj_size == 0 {
                continue;
            }
            let op = op.map_err(|m| self.err(at, m))?;
            let mut b = self
                .map
                .map(obj_id, false, obj_size as u64)
                .map_err(|m| self.err(at, m))?;
            b.op = op;
            produced = self.emit.push(b, out, produced);
        }
        Ok(produced > 0)
    }
}

impl AccessSource for OracleGeneralSource {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_batch(&mut self, out: &mut Vec<Access>) -> Result<bool> {
        next_batch(self, out, |s| &mut s.emit, Self::fill)
    }
}
