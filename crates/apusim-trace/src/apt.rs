//! The native `.apt` trace container: streaming writer, streaming reader and summary.
//!
//! One file, one format: the `.apt` writer, reader and summary share the block layout and its
//! delta/varint coding, so they change together.
//!
//! Byte-level layout (all integers little-endian; the authoritative description with every
//! field is `docs/trace-format.md`):
//!
//! ```text
//! file    = preamble block* trailer
//! preamble= MAGIC[8] version:u32 header_len:u32 header_json[header_len] header_crc:u32
//! block   = "APTB" records:u32 raw_len:u32 comp_len:u32 crc:u32 zstd_payload[comp_len]
//! trailer = "APTE" total_records:u64 blocks:u64 crc:u32
//! ```
//!
//! Each block holds at most [`BLOCK_RECORDS`] records, delta/varint encoded against state that
//! is reset at the start of every block (so each block decodes on its own), then compressed as
//! one zstd frame. The CRC32 of a block covers its compressed payload, the trailer's CRC its
//! first 20 bytes, the header's CRC its JSON text. The trailer carries the total record count so
//! that a truncated file is always detected.
//!
//! Record encoding (state per block: the current agent; per agent its pc, time, unit, warp,
//! current and alternate stream; per (agent, stream) the previous address and size). Each
//! record has the fields below, stored column-wise: the decompressed block is a table of 11
//! column lengths (u32) followed by the columns, each holding that field of every record that
//! has it, in record order. Column-wise storage lets the decoder follow 11 short, independent
//! dependency chains instead of one long one and lets zstd see like with like.
//!
//! ```text
//! A: bits 0-1 op | bit 2 toggle stream | bits 3-4 pc mode | bits 5-6 time mode | bit 7 B follows
//! B: bit 0 critical | 1 modify | 2 stream byte | 3 agent byte | 4 size | 5 unit | 6 warp
//!    | 7 extra-flags byte
//! then: [agent u8] [stream u8] [size varint] [unit varint] [warp varint] [flags u8]
//!       [pc zigzag delta if pc mode 2] [time zigzag delta if time mode 2]
//!       addr zigzag delta (against previous addr + previous size of (agent, stream))
//! ```
//!
//! Varints are LEB128. The three zigzag deltas are length-prefixed in version 2 (a byte
//! `0..=8`, then that many little-endian bytes: one 8-byte load and a mask to decode) and LEB128
//! in version 1, which this code still reads and can write ([`AptWriter::with_format_version`]).
//!
//! Writing goes to a temporary file in the destination directory that is renamed into place by
//! [`AptWriter::finish`], so a crash or an error never leaves a partial `.apt` behind. Reading is
//! strictly streaming and split in two halves: a `BlockScanner` walks the container (block
//! headers, payloads and their CRCs, the trailer) and a `BlockDecoder` decompresses a block and
//! decodes its records. [`AptReader`] runs both on the calling thread, one block in memory at a
//! time, decoding straight into the caller's batch vector; [`ParallelAptReader`] runs the
//! scanner and several decoders on their own threads and hands out the same batches in file
//! order (bounded read-ahead), so that decoding overlaps with whatever consumes the records. Every malformation is reported
//! as [`TraceError::Format`] with the file and byte offset; no input makes the reader panic.

use crate::{Access, AccessSource, Agent, Op, Result, Stream, TraceError, TraceHeader, BATCH};
use std::fmt;
use std::fs::File;
use std::hint::select_unpredictable;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};

mod parallel;
pub use parallel::{
    default_decode_threads, ParallelAptReader, DECODE_THREADS_ENV, MAX_DECODE_THREADS,
};

/// First 8 bytes of every `.apt` file (PNG-style: catches text-mode and 7-bit mangling).
pub const MAGIC: [u8; 8] = *b"\x89APT\r\n\x1a\n";
/// The format version this code writes.
pub const VERSION: u32 = 2;
/// The oldest format version this code reads (and can write): 1, whose pc, time and address
/// deltas are LEB128 varints instead of length-prefixed.
pub const OLDEST_VERSION: u32 = 1;
/// Magic of a record block.
pub const BLOCK_MAGIC: [u8; 4] = *b"APTB";
/// Magic of the end-of-file trailer.
pub const TRAILER_MAGIC: [u8; 4] = *b"APTE";
/// Records per block (the last block may hold fewer).
pub const BLOCK_RECORDS: usize = 1 << 16;
/// Largest header JSON a reader accepts.
pub const MAX_HEADER_LEN: u32 = 16 << 20;
/// Longest possible encoding of one record: A, B, agent, stream, size(3), unit(3), warp(5),
/// extra flags, pc(10), time(10), addr(10).
pub const MAX_RECORD_LEN: usize = 46;
/// Default zstd compression level.
pub const DEFAULT_ZSTD_LEVEL: i32 = 3;
/// zstd's shortest match at the default level (its own default there is 5). Longer matches
/// mean fewer zstd sequences to decode: on the benchmark mix 16% fewer decode instructions
/// together with the length-prefixed deltas, for a 1–6% larger file (docs/PERFORMANCE.md).
const DEFAULT_ZSTD_MIN_MATCH: i32 = 7;

const PREAMBLE_FIXED: u64 = 16;
const BLOCK_HEADER_LEN: usize = 20;
const TRAILER_LEN: usize = 24;

const N_AGENTS: usize = Agent::GPU_ID as usize + 1;
const SLOTS_PER_AGENT: usize = 16;
const _: () = assert!(Stream::COUNT <= SLOTS_PER_AGENT);

// Byte A.
const A_OP_MASK: u8 = 0b11;
const A_TOGGLE: u8 = 1 << 2;
const A_PC_SHIFT: u8 = 3;
const A_TIME_SHIFT: u8 = 5;
const A_EXT: u8 = 1 << 7;
const MODE_SAME: u8 = 0;
const MODE_ONE: u8 = 1; // pc: pc = addr; time: time + 1
const MODE_DELTA: u8 = 2;
// Byte B.
const B_CRITICAL: u8 = 1;
const B_MODIFY: u8 = 1 << 1;
const B_STREAM: u8 = 1 << 2;
const B_AGENT: u8 = 1 << 3;
const B_SIZE: u8 = 1 << 4;
const B_UNIT: u8 = 1 << 5;
const B_WARP: u8 = 1 << 6;
const B_FLAGS: u8 = 1 << 7;
const KNOWN_FLAGS: u8 = Access::CRITICAL | Access::MODIFY;

// ------------------------------------------------------------------------------------------
// Record codec
// ------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Default)]
struct AgentState {
    pc: u64,
    time: u64,
    warp: u32,
    unit: u16,
    cur: u8,
    alt: u8,
}

#[derive(Clone, Copy, Default)]
struct SlotState {
    addr: u64,
    size: u16,
}

/// Number of columns (sections) of a block's record data.
pub const COLUMNS: usize = 11;
// Column indices: the flag bytes A and B, the agent and stream bytes, the size, unit and warp
// varints, the extra-flags bytes, the pc, time and address zigzag varints.
const C_A: usize = 0;
const C_B: usize = 1;
const C_AGENT: usize = 2;
const C_STREAM: usize = 3;
const C_SIZE: usize = 4;
const C_UNIT: usize = 5;
const C_WARP: usize = 6;
const C_XFLAGS: usize = 7;
const C_PC: usize = 8;
const C_TIME: usize = 9;
const C_ADDR: usize = 10;
/// Column names, for error messages.
const COLUMN_NAMES: [&str; COLUMNS] = [
    "A flags",
    "B flags",
    "agent",
    "stream",
    "size",
    "unit",
    "warp",
    "extra flags",
    "pc",
    "time",
    "address",
];
/// Bytes of the column-length table at the start of a block's decompressed data.
const COLUMN_TABLE: usize = 4 * COLUMNS;

/// How a block stores its pc, time and address deltas (the one difference between format
/// versions 1 and 2).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum DeltaCoding {
    /// Version 1: LEB128 varints.
    Leb128,
    /// Version 2: a length byte `0..=8`, then that many little-endian bytes.
    LengthPrefixed,
}

impl DeltaCoding {
    fn of_version(version: u32) -> Option<DeltaCoding> {
        match version {
            1 => Some(DeltaCoding::Leb128),
            2 => Some(DeltaCoding::LengthPrefixed),
            _ => None,
        }
    }

    #[inline]
    fn put(self, out: &mut Vec<u8>, v: u64) {
        match self {
            DeltaCoding::Leb128 => put_varint(out, v),
            DeltaCoding::LengthPrefixed => put_prefixed(out, v),
        }
    }
}

/// Read one delta of the coding chosen by `PREFIXED` (version 2 when true).
///
/// # Safety
/// `*pos + 9 <= buf.len()` (see [`Codec::decode`]).
#[inline(always)]
unsafe fn get_delta<const PREFIXED: bool>(
    buf: &[u8],
    pos: &mut usize,
) -> std::result::Result<u64, &'static str> {
    if PREFIXED {
        get_prefixed(buf, pos)
    } else {
        get_varint(buf, pos)
    }
}

/// Per-block delta state shared by encoder and decoder.
struct Codec {
    delta: DeltaCoding,
    agent: u8,
    agents: Box<[AgentState; N_AGENTS]>,
    slots: Box<[SlotState; N_AGENTS * SLOTS_PER_AGENT]>,
}

/// Read cursors into the columns of a decompressed block.
#[derive(Clone, Copy, Default)]
struct Cursors {
    /// Position in column A (= start of column A + index of the next record).
    a: usize,
    b: usize,
    agent: usize,
    stream: usize,
    size: usize,
    unit: usize,
    warp: usize,
    xflags: usize,
    pc: usize,
    time: usize,
    addr: usize,
}

impl Cursors {
    fn from_array(s: &[usize; COLUMNS]) -> Cursors {
        Cursors {
            a: s[C_A],
            b: s[C_B],
            agent: s[C_AGENT],
            stream: s[C_STREAM],
            size: s[C_SIZE],
            unit: s[C_UNIT],
            warp: s[C_WARP],
            xflags: s[C_XFLAGS],
            pc: s[C_PC],
            time: s[C_TIME],
            addr: s[C_ADDR],
        }
    }
    fn to_array(self) -> [usize; COLUMNS] {
        [
            self.a,
            self.b,
            self.agent,
            self.stream,
            self.size,
            self.unit,
            self.warp,
            self.xflags,
            self.pc,
            self.time,
            self.addr,
        ]
    }
}

impl Codec {
    fn new(delta: DeltaCoding) -> Codec {
        Codec {
            delta,
            agent: 0,
            agents: Box::new([AgentState::default(); N_AGENTS]),
            slots: Box::new([SlotState::default(); N_AGENTS * SLOTS_PER_AGENT]),
        }
    }

    fn reset(&mut self) {
        self.agent = 0;
        self.agents.fill(AgentState::default());
        self.slots.fill(SlotState::default());
    }

    #[inline]
    fn encode(&mut self, a: &Access, cols: &mut [Vec<u8>; COLUMNS]) {
        let ab = a.agent.to_byte();
        let sb = a.stream.to_byte();
        let st = &mut self.agents[ab as usize];
        let slot = &mut self.slots[ab as usize * SLOTS_PER_AGENT + sb as usize];

        let mut fa = a.op.to_byte() & A_OP_MASK;
        let mut fb = 0u8;
        if a.flags & Access::CRITICAL != 0 {
            fb |= B_CRITICAL;
        }
        if a.flags & Access::MODIFY != 0 {
            fb |= B_MODIFY;
        }
        let extra = a.flags & !KNOWN_FLAGS;
        if extra != 0 {
            fb |= B_FLAGS;
        }
        if ab != self.agent {
            fb |= B_AGENT;
        }
        if sb != st.cur {
            if sb == st.alt {
                fa |= A_TOGGLE;
            } else {
                fb |= B_STREAM;
            }
        }
        if a.size != slot.size {
            fb |= B_SIZE;
        }
        if a.unit != st.unit {
            fb |= B_UNIT;
        }
        if a.warp != st.warp {
            fb |= B_WARP;
        }
        let pc_mode = if a.pc == st.pc {
            MODE_SAME
        } else if a.pc == a.addr {
            MODE_ONE
        } else {
            MODE_DELTA
        };
        let time_mode = if a.time == st.time {
            MODE_SAME
        } else if a.time == st.time.wrapping_add(1) {
            MODE_ONE
        } else {
            MODE_DELTA
        };
        fa |= (pc_mode << A_PC_SHIFT) | (time_mode << A_TIME_SHIFT);
        if fb != 0 {
            fa |= A_EXT;
        }

        cols[C_A].push(fa);
        if fb != 0 {
            cols[C_B].push(fb);
            if fb & B_AGENT != 0 {
                cols[C_AGENT].push(ab);
            }
            if fb & B_STREAM != 0 {
                cols[C_STREAM].push(sb);
            }
            if fb & B_SIZE != 0 {
                put_varint(&mut cols[C_SIZE], a.size as u64);
            }
            if fb & B_UNIT != 0 {
                put_varint(&mut cols[C_UNIT], a.unit as u64);
            }
            if fb & B_WARP != 0 {
                put_varint(&mut cols[C_WARP], a.warp as u64);
            }
            if fb & B_FLAGS != 0 {
                cols[C_XFLAGS].push(extra);
            }
        }
        if pc_mode == MODE_DELTA {
            self.delta
                .put(&mut cols[C_PC], zigzag(a.pc.wrapping_sub(st.pc)));
        }
        if time_mode == MODE_DELTA {
            self.delta
                .put(&mut cols[C_TIME], zigzag(a.time.wrapping_sub(st.time)));
        }
        let pred = slot.addr.wrapping_add(slot.size as u64);
        self.delta
            .put(&mut cols[C_ADDR], zigzag(a.addr.wrapping_sub(pred)));

        // Update state exactly as the decoder will.
        self.agent = ab;
        if fa & A_TOGGLE != 0 {
            std::mem::swap(&mut st.cur, &mut st.alt);
        }
        if fb & B_STREAM != 0 {
            st.alt = st.cur;
            st.cur = sb;
        }
        st.pc = a.pc;
        st.time = a.time;
        st.unit = a.unit;
        st.warp = a.warp;
        slot.addr = a.addr;
        slot.size = a.size;
    }

    /// Decode the next record from the columns of `buf` at the cursors `c`; `PREFIXED` says
    /// whether the deltas are length-prefixed (version 2) or LEB128 (version 1).
    ///
    /// A cursor may run past the end of its column into the next one when the block is
    /// malformed; the caller checks the cursors after each batch and rejects the whole batch
    /// then.
    ///
    /// # Safety
    /// Every cursor of `c` is at least 9 bytes before the end of `buf`: the column bytes are
    /// read without bounds checks (they were 8% of the decoder's instructions). A record reads
    /// at most 9 bytes past each cursor and moves it at most [`MAX_ADVANCE`] bytes, so
    /// [`decode_records`] can check this once for a whole batch.
    #[inline(always)]
    unsafe fn decode<const PREFIXED: bool>(
        &mut self,
        buf: &[u8],
        c: &mut Cursors,
    ) -> std::result::Result<Access, &'static str> {
        let fa = byte_at(buf, c.a);
        c.a += 1;
        // Whether a B byte follows changes from record to record in a way branch predictors
        // do not learn: read the byte either way and keep it or not by arithmetic (as for the
        // stream toggle below); docs/PERFORMANCE.md has what this and the unchecked reads
        // gained.
        let ext = fa >> 7;
        let fb = byte_at(buf, c.b) & ext.wrapping_neg();
        c.b += ext as usize;
        let op = match fa & A_OP_MASK {
            0 => Op::Read,
            1 => Op::Write,
            2 => Op::Writeback,
            _ => Op::Prefetch,
        };
        let pc_mode = (fa >> A_PC_SHIFT) & 3;
        let time_mode = (fa >> A_TIME_SHIFT) & 3;
        if pc_mode == 3 || time_mode == 3 {
            return Err(if pc_mode == 3 {
                "invalid pc mode 3 in record flags"
            } else {
                "invalid time mode 3 in record flags"
            });
        }
        let mut flags = fb & KNOWN_FLAGS; // B_CRITICAL and B_MODIFY equal the Access flags.
        let mut agent = self.agent;
        let mut stream_byte = None;
        if fb & (B_AGENT | B_STREAM) != 0 {
            if fb & B_AGENT != 0 {
                let b = byte_at(buf, c.agent);
                if b > Agent::GPU_ID {
                    return Err("invalid agent byte (expected 0..=128)");
                }
                c.agent += 1;
                agent = b;
            }
            if fb & B_STREAM != 0 {
                let b = byte_at(buf, c.stream);
                if b as usize >= Stream::COUNT {
                    return Err("invalid stream byte (expected 0..=14)");
                }
                c.stream += 1;
                stream_byte = Some(b);
            }
        }
        let st = self
            .agents
            .get_mut(agent as usize)
            .ok_or("invalid agent byte")?;
        let toggle = fa & A_TOGGLE != 0;
        (st.cur, st.alt) = (
            select_unpredictable(toggle, st.alt, st.cur),
            select_unpredictable(toggle, st.cur, st.alt),
        );
        if let Some(s) = stream_byte {
            st.alt = st.cur;
            st.cur = s;
        }
        let sb = st.cur;
        let stream = Stream::from_byte(sb).ok_or("invalid stream byte")?;
        let slot = self
            .slots
            .get_mut(agent as usize * SLOTS_PER_AGENT + sb as usize)
            .ok_or("invalid stream byte")?;
        let predicted = slot.addr.wrapping_add(slot.size as u64);
        // Work on locals and store the state once at the end: reading fields back from memory
        // right after narrower stores to them defeats store-to-load forwarding.
        let (mut size, mut unit, mut warp, mut pc, mut time) =
            (slot.size, st.unit, st.warp, st.pc, st.time);
        if fb & (B_SIZE | B_UNIT | B_WARP | B_FLAGS) != 0 {
            if fb & B_SIZE != 0 {
                let v = get_small_varint(buf, &mut c.size)?;
                size = u16::try_from(v).map_err(|_| "size does not fit in 16 bits")?;
            }
            if fb & B_UNIT != 0 {
                let v = get_small_varint(buf, &mut c.unit)?;
                unit = u16::try_from(v).map_err(|_| "unit does not fit in 16 bits")?;
            }
            if fb & B_WARP != 0 {
                let v = get_small_varint(buf, &mut c.warp)?;
                warp = u32::try_from(v).map_err(|_| "warp does not fit in 32 bits")?;
            }
            if fb & B_FLAGS != 0 {
                flags |= byte_at(buf, c.xflags);
                c.xflags += 1;
            }
        }
        if pc_mode == MODE_DELTA {
            pc = pc.wrapping_add(unzigzag(get_delta::<PREFIXED>(buf, &mut c.pc)?));
        }
        match time_mode {
            MODE_SAME => {}
            MODE_ONE => time = time.wrapping_add(1),
            _ => time = time.wrapping_add(unzigzag(get_delta::<PREFIXED>(buf, &mut c.time)?)),
        }
        let addr = predicted.wrapping_add(unzigzag(get_delta::<PREFIXED>(buf, &mut c.addr)?));
        if pc_mode == MODE_ONE {
            pc = addr;
        }
        slot.addr = addr;
        slot.size = size;
        st.pc = pc;
        st.time = time;
        st.unit = unit;
        st.warp = warp;
        self.agent = agent;
        Ok(Access {
            addr,
            pc,
            time,
            warp,
            unit,
            size,
            agent: Agent::from_byte(agent).unwrap_or(Agent::GPU),
            stream,
            op,
            flags,
        })
    }
}

/// Decode one record into each slot of `out`; the index and error of the first bad record.
/// Every slot is written when it returns `None`.
#[inline(always)]
fn decode_records<const PREFIXED: bool>(
    codec: &mut Codec,
    raw: &[u8],
    c: &mut Cursors,
    out: &mut [MaybeUninit<Access>],
) -> Option<(usize, &'static str)> {
    // The reader's DECODE_PAD makes this hold for every batch of a block whose cursors are
    // still inside their columns (the cursor check after each batch sees to that).
    let furthest = c.to_array().into_iter().max().unwrap_or(0);
    if furthest.saturating_add(out.len() * MAX_ADVANCE + 9) > raw.len() {
        return Some((0, "column data runs past the end of the block"));
    }
    for (i, slot) in out.iter_mut().enumerate() {
        // SAFETY: every cursor started at least `out.len() * MAX_ADVANCE + 9` bytes before the
        // end of `raw`, and each of the `i < out.len()` records decoded before this one moved
        // it at most MAX_ADVANCE bytes, so it is still at least 9 bytes before the end.
        match unsafe { codec.decode::<PREFIXED>(raw, c) } {
            Ok(a) => {
                slot.write(a);
            }
            Err(msg) => return Some((i, msg)),
        }
    }
    None
}

/// The zstd compressor of the default level, tuned for decoding speed (see
/// [`DEFAULT_ZSTD_MIN_MATCH`]).
fn default_compressor() -> io::Result<zstd::bulk::Compressor<'static>> {
    let mut c = zstd::bulk::Compressor::new(DEFAULT_ZSTD_LEVEL)?;
    c.set_parameter(zstd::zstd_safe::CParameter::MinMatch(
        DEFAULT_ZSTD_MIN_MATCH as u32,
    ))?;
    Ok(c)
}

/// Most bytes one record moves one column cursor: 9 for a length-prefixed delta, 10 for the
/// longest LEB128 varint.
const MAX_ADVANCE: usize = 10;

/// Zero bytes the reader appends to a decompressed block so that a whole batch can be decoded
/// without bounds checks even when its records are malformed and their cursors run on past
/// the block's data (see [`Codec::decode`]).
const DECODE_PAD: usize = BATCH * MAX_ADVANCE + 9;

#[inline]
fn zigzag(v: u64) -> u64 {
    (v << 1) ^ (((v as i64) >> 63) as u64)
}

#[inline]
fn unzigzag(v: u64) -> u64 {
    (v >> 1) ^ (v & 1).wrapping_neg()
}

/// Append `v` length-prefixed: a byte `0..=8` giving the number of significant bytes, then
/// those bytes of `v`, least significant first.
#[inline]
fn put_prefixed(out: &mut Vec<u8>, v: u64) {
    let len = (u64::BITS - v.leading_zeros()).div_ceil(8) as usize;
    out.push(len as u8);
    out.extend_from_slice(&v.to_le_bytes()[..len]);
}

/// The value masks of the length-prefixed coding, by length byte.
const PREFIXED_MASKS: [u64; 9] = {
    let mut m = [u64::MAX; 9];
    let mut len = 0;
    while len < 8 {
        m[len] = (1u64 << (8 * len)) - 1;
        len += 1;
    }
    m
};

/// Decode a length-prefixed value at `buf[*pos..]` with one 8-byte load and a mask.
///
/// # Safety
/// `*pos + 9 <= buf.len()`.
#[inline(always)]
unsafe fn get_prefixed(buf: &[u8], pos: &mut usize) -> std::result::Result<u64, &'static str> {
    let p = *pos;
    let len = byte_at(buf, p);
    let mask = *PREFIXED_MASKS
        .get(len as usize)
        .ok_or("invalid length byte (expected 0..=8)")?;
    // SAFETY: the caller guarantees bytes p + 1 ..= p + 8.
    let word = unsafe { buf.as_ptr().add(p + 1).cast::<[u8; 8]>().read_unaligned() };
    *pos = p + 1 + len as usize;
    Ok(u64::from_le_bytes(word) & mask)
}

/// Byte `p` of `buf`, without a bounds check.
///
/// # Safety
/// `p < buf.len()`.
#[inline(always)]
unsafe fn byte_at(buf: &[u8], p: usize) -> u8 {
    debug_assert!(p < buf.len());
    // SAFETY: the caller guarantees `p < buf.len()`.
    unsafe { *buf.get_unchecked(p) }
}

/// Append `v` as an unsigned LEB128 varint.
#[inline]
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}
/// Decode a LEB128 varint of at most 8 bytes at `buf[p..]` with one 8-byte load and bit
/// tricks: `(value, length)`, or `None` if it is longer or fewer than 8 bytes remain.
#[inline(always)]
fn peek_varint(buf: &[u8], p: usize) -> Option<(u64, usize)> {
    let bytes = buf.get(p..p + 8)?;
    let mut w = [0u8; 8];
    w.copy_from_slice(bytes);
    let w = u64::from_le_bytes(w);
    let stops = !w & 0x8080_8080_8080_8080;
    if stops == 0 {
        return None;
    }
    let bits = stops.trailing_zeros() + 1; // 8, 16, ..., 64
    let mut x = (w & (u64::MAX >> (64 - bits))) & 0x7f7f_7f7f_7f7f_7f7f;
    x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
    x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
    x = (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4);
    Some((x, (bits / 8) as usize))
}
/// A varint that is usually one byte (sizes, units, warps): a predictable branch for the
/// one-byte case.
///
/// # Safety
/// `*pos < buf.len()`.
#[inline(always)]
unsafe fn get_small_varint(buf: &[u8], pos: &mut usize) -> std::result::Result<u64, &'static str> {
    let b = byte_at(buf, *pos);
    if b < 0x80 {
        *pos += 1;
        return Ok(b as u64);
    }
    get_varint(buf, pos)
}
/// Decode a LEB128 varint at `buf[*pos..]`; longer than 8 bytes or near the end of `buf` it
/// takes [`get_varint_slow`].
#[inline(always)]
fn get_varint(buf: &[u8], pos: &mut usize) -> std::result::Result<u64, &'static str> {
    match peek_varint(buf, *pos) {
        Some((v, len)) => {
            *pos += len;
            Ok(v)
        }
        None => get_varint_slow(buf, pos),
    }
}
#[cold]
#[inline(never)]
fn get_varint_slow(buf: &[u8], pos: &mut usize) -> std::result::Result<u64, &'static str> {
    const PAST: &str = "varint runs past the end of the block";
    let mut v = 0u64;
    let mut shift = 0u32;
    loop {
        let b = *buf.get(*pos).ok_or(PAST)?;
        *pos += 1;
        if shift == 63 && b > 1 {
            return Err("varint overflows 64 bits");
        }
        v |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            return Ok(v);
        }
        shift += 7;
        if shift > 63 {
            return Err("varint longer than 10 bytes");
        }
    }
}

// ------------------------------------------------------------------------------------------
// Writer
// ------------------------------------------------------------------------------------------

/// Streaming `.apt` writer.
///
/// Records are buffered into the current block (at most [`BLOCK_RECORDS`]), which is compressed
/// and written when full. [`AptWriter::finish`] writes the last block and the trailer; a writer
/// dropped without `finish` leaves an incomplete stream (and, for [`AptWriter::create`], no
/// file at all).
pub struct AptWriter<W: Write> {
    out: W,
    path: PathBuf,
    /// For [`AptWriter::create`]: the temporary file and the final path it is renamed to.
    persist: Option<(tempfile::TempPath, PathBuf, File)>,
    codec: Codec,
    cols: [Vec<u8>; COLUMNS],
    raw: Vec<u8>,
    comp: Vec<u8>,
    compressor: zstd::bulk::Compressor<'static>,
    in_block: usize,
    total: u64,
    blocks: u64,
    bytes: u64,
}

impl AptWriter<BufWriter<File>> {
    /// Create `path`. Data goes to a temporary file in the same directory, renamed to `path`
    /// by [`finish`](AptWriter::finish); until then `path` is untouched.
    pub fn create(path: impl AsRef<Path>, header: &TraceHeader) -> Result<Self> {
        let path = path.as_ref();
        let tmp = crate::output::temp_beside(path).map_err(|e| TraceError::io(path, e))?;
        let (file, temp_path) = tmp.into_parts();
        let sync = file.try_clone().map_err(|e| TraceError::io(path, e))?;
        let mut w = AptWriter::with_name(BufWriter::with_capacity(1 << 20, file), path, header)?;
        w.persist = Some((temp_path, path.to_path_buf(), sync));
        Ok(w)
    }
}

impl<W: Write> AptWriter<W> {
    /// Write an `.apt` stream to any writer (error messages name it `<stream>`).
    pub fn new(out: W, header: &TraceHeader) -> Result<Self> {
        Self::with_name(out, Path::new("<stream>"), header)
    }

    /// Like [`AptWriter::new`], naming the destination `name` in error messages.
    pub fn with_name(out: W, name: impl AsRef<Path>, header: &TraceHeader) -> Result<Self> {
        Self::with_format_version(out, name, header, VERSION)
    }

    /// Like [`AptWriter::with_name`], writing format `version` ([`OLDEST_VERSION`] to
    /// [`VERSION`]): version 1 for builds of apusim that read only that one.
    pub fn with_format_version(
        out: W,
        name: impl AsRef<Path>,
        header: &TraceHeader,
        version: u32,
    ) -> Result<Self> {
        let path = name.as_ref().to_path_buf();
        let delta = DeltaCoding::of_version(version).ok_or_else(|| {
            TraceError::Other(format!(
                "{}: cannot write .apt version {version} (this build writes {OLDEST_VERSION} to {VERSION})",
                path.display()
            ))
        })?;
        let compressor = default_compressor().map_err(|e| TraceError::io(&path, e))?;
        let mut w = AptWriter {
            out,
            path,
            persist: None,
            codec: Codec::new(delta),
            cols: std::array::from_fn(|_| Vec::new()),
            raw: Vec::new(),
            comp: Vec::new(),
            compressor,
            in_block: 0,
            total: 0,
            blocks: 0,
            bytes: 0,
        };
        w.write_preamble(header, version)?;
        Ok(w)
    }

    /// Use zstd level `level` (1..=22, zstd's own parameters for that level) for the blocks
    /// written from now on.
    pub fn set_zstd_level(&mut self, level: i32) -> Result<()> {
        self.compressor = zstd::bulk::Compressor::new(level).map_err(|e| self.io_err(e))?;
        Ok(())
    }

    fn io_err(&self, e: io::Error) -> TraceError {
        TraceError::io(&self.path, e)
    }

    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.out
            .write_all(bytes)
            .map_err(|e| TraceError::io(&self.path, e))?;
        self.bytes += bytes.len() as u64;
        Ok(())
    }

    fn write_preamble(&mut self, header: &TraceHeader, version: u32) -> Result<()> {
        let mut h = header.clone();
        h.version = version;
        let json = serde_json::to_vec(&h).map_err(|e| {
            TraceError::Other(format!(
                "{}: cannot encode header: {e}",
                self.path.display()
            ))
        })?;
        let mut pre = Vec::with_capacity(json.len() + 20);
        pre.extend_from_slice(&MAGIC);
        pre.extend_from_slice(&version.to_le_bytes());
        pre.extend_from_slice(&(json.len() as u32).to_le_bytes());
        pre.extend_from_slice(&json);
        pre.extend_from_slice(&crc32fast::hash(&json).to_le_bytes());
        self.put(&pre)
    }

    /// Append one access.
    #[inline]
    pub fn write(&mut self, a: &Access) -> Result<()> {
        self.codec.encode(a, &mut self.cols);
        self.in_block += 1;
        if self.in_block == BLOCK_RECORDS {
            self.flush_block()?;
        }
        Ok(())
    }

    /// Append many accesses.
    pub fn write_all(&mut self, accesses: &[Access]) -> Result<()> {
        let mut rest = accesses;
        while !rest.is_empty() {
            let n = rest.len().min(BLOCK_RECORDS - self.in_block);
            for a in &rest[..n] {
                self.codec.encode(a, &mut self.cols);
            }
            self.in_block += n;
            rest = &rest[n..];
            if self.in_block == BLOCK_RECORDS {
                self.flush_block()?;
            }
        }
        Ok(())
    }

    /// Drain `source` into this writer; returns the number of accesses copied.
    pub fn write_source(&mut self, source: &mut dyn AccessSource) -> Result<u64> {
        let mut batch = Vec::with_capacity(BATCH);
        let mut n = 0u64;
        loop {
            batch.clear();
            if !source.next_batch(&mut batch)? {
                return Ok(n);
            }
            self.write_all(&batch)?;
            n += batch.len() as u64;
        }
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.total + self.in_block as u64
    }

    fn flush_block(&mut self) -> Result<()> {
        if self.in_block == 0 {
            return Ok(());
        }
        self.raw.clear();
        for c in &self.cols {
            self.raw.extend_from_slice(&(c.len() as u32).to_le_bytes());
        }
        for c in &mut self.cols {
            self.raw.extend_from_slice(c);
            c.clear();
        }
        self.comp.clear();
        self.comp
            .reserve(zstd::zstd_safe::compress_bound(self.raw.len()));
        self.compressor
            .compress_to_buffer(&self.raw[..], &mut self.comp)
            .map_err(|e| TraceError::io(&self.path, e))?;
        let mut hdr = [0u8; BLOCK_HEADER_LEN];
        hdr[0..4].copy_from_slice(&BLOCK_MAGIC);
        hdr[4..8].copy_from_slice(&(self.in_block as u32).to_le_bytes());
        hdr[8..12].copy_from_slice(&(self.raw.len() as u32).to_le_bytes());
        hdr[12..16].copy_from_slice(&(self.comp.len() as u32).to_le_bytes());
        hdr[16..20].copy_from_slice(&crc32fast::hash(&self.comp).to_le_bytes());
        self.put(&hdr)?;
        let comp = std::mem::take(&mut self.comp);
        let r = self.put(&comp);
        self.comp = comp;
        r?;
        self.total += self.in_block as u64;
        self.blocks += 1;
        self.in_block = 0;
        self.raw.clear();
        self.codec.reset();
        Ok(())
    }

    /// Write the last block and the trailer, flush, and (for [`AptWriter::create`]) fsync the
    /// file and rename it into place. Returns the underlying writer.
    pub fn finish(mut self) -> Result<W> {
        self.flush_block()?;
        let mut t = [0u8; TRAILER_LEN];
        t[0..4].copy_from_slice(&TRAILER_MAGIC);
        t[4..12].copy_from_slice(&self.total.to_le_bytes());
        t[12..20].copy_from_slice(&self.blocks.to_le_bytes());
        let crc = crc32fast::hash(&t[..20]);
        t[20..24].copy_from_slice(&crc.to_le_bytes());
        self.put(&t)?;
        self.out
            .flush()
            .map_err(|e| TraceError::io(&self.path, e))?;
        if let Some((temp, dest, file)) = self.persist.take() {
            // Temporary files are private (0600); the finished trace gets a normal file's mode.
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                file.set_permissions(std::fs::Permissions::from_mode(0o644))
                    .map_err(|e| TraceError::io(&dest, e))?;
            }
            file.sync_all().map_err(|e| TraceError::io(&dest, e))?;
            temp.persist(&dest)
                .map_err(|e| TraceError::io(&dest, e.error))?;
        }
        Ok(self.out)
    }

    /// Bytes written so far (including the preamble).
    pub fn bytes_written(&self) -> u64 {
        self.bytes
    }
}

/// Write `accesses` to `path` under `header` in one call.
pub fn write_file(path: impl AsRef<Path>, header: &TraceHeader, accesses: &[Access]) -> Result<()> {
    let mut w = AptWriter::create(path, header)?;
    w.write_all(accesses)?;
    w.finish()?;
    Ok(())
}

// ------------------------------------------------------------------------------------------
// Reader
// ------------------------------------------------------------------------------------------

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
fn read_preamble<R: Read>(input: &mut R, path: &Path) -> Result<(TraceHeader, u64, DeltaCoding)> {
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
struct BlockInfo {
    /// Index of the block in the file (0-based).
    index: u64,
    /// File offset of the block header.
    offset: u64,
    records: usize,
    raw_len: usize,
}

impl BlockInfo {
    fn payload_offset(&self) -> u64 {
        self.offset + BLOCK_HEADER_LEN as u64
    }
}

/// The container half of reading: walks the file block by block, reading each block's header
/// and compressed payload and checking the payload's CRC, and checks the trailer at the end.
/// It does not decompress or decode ([`BlockDecoder`] does), so that blocks can be decoded on
/// other threads ([`ParallelAptReader`]).
struct BlockScanner<R: Read> {
    input: R,
    path: PathBuf,
    /// File offset of the next unread byte.
    offset: u64,
    blocks: u64,
    /// Records of the blocks scanned so far.
    records: u64,
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
    fn next_block(&mut self, payload: &mut Vec<u8>) -> Result<Option<BlockInfo>> {
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
struct BlockDecoder {
    path: PathBuf,
    codec: Codec,
    decompressor: zstd::bulk::Decompressor<'static>,
    raw: Vec<u8>,
    /// Decode positions in the columns of `raw`.
    cursors: Cursors,
    /// End offset of every column in `raw` (which is followed by [`DECODE_PAD`] zeros).
    col_ends: [usize; COLUMNS],
    /// Records left in the current block.
    left: usize,
    /// The current block.
    info: BlockInfo,
}

impl BlockDecoder {
    /// A decoder for the blocks of a trace whose deltas are coded as `delta`.
    fn new(path: &Path, delta: DeltaCoding) -> Result<BlockDecoder> {
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
    fn load(&mut self, info: BlockInfo, payload: &[u8]) -> Result<()> {
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
    fn decode_batch(&mut self, out: &mut Vec<Access>) -> Result<usize> {
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
/// [`ParallelAptReader`] yields exactly the same batches and errors with the decoding done by
/// worker threads.
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
enum ReaderState {
    Running,
    Done,
    Failed,
}

impl ReaderState {
    /// What `next_batch` returns in a state other than `Running`, if any.
    fn finished(self, path: &Path) -> Option<Result<bool>> {
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

// ------------------------------------------------------------------------------------------
// Summary
// ------------------------------------------------------------------------------------------

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

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize) -> Vec<Access> {
        let mut v = Vec::new();
        let mut x = 0x1234_5678u64;
        for i in 0..n as u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let s = Stream::ALL[(x % Stream::COUNT as u64) as usize];
            let agent = if s.is_cpu() {
                Agent::cpu((x >> 8) as u8 % 4)
            } else {
                Agent::GPU
            };
            v.push(Access {
                addr: if x & 1 == 0 { 0x1000 + i * 64 } else { x },
                pc: if x & 2 == 0 { x >> 3 } else { 0x400000 + i },
                time: i / 3,
                warp: (x >> 20) as u32 % 7,
                unit: (x >> 30) as u16 % 3,
                size: [1, 4, 8, 64, 65535][(x >> 40) as usize % 5],
                agent,
                stream: s,
                op: Op::ALL[(x >> 50) as usize % 4],
                flags: (x >> 56) as u8,
            });
        }
        v
    }

    fn encode(v: &[Access]) -> Vec<u8> {
        let h = TraceHeader::describing(v, "test");
        let mut w = AptWriter::new(Vec::new(), &h).unwrap();
        w.write_all(v).unwrap();
        w.finish().unwrap()
    }

    fn decode(bytes: &[u8]) -> Result<Vec<Access>> {
        let mut r = AptReader::with_name(bytes, "mem")?;
        crate::collect(&mut r)
    }

    #[test]
    fn varints() {
        let mut values = vec![0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX, 1 << 63];
        for k in 1..64 {
            values.extend([(1u64 << k) - 1, 1 << k]);
        }
        for v in values {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            let bits = 64 - v.leading_zeros();
            assert_eq!(b.len(), bits.div_ceil(7).max(1) as usize, "{v}");
            // Exact-length buffer (slow path) and padded buffer (fast path).
            let mut p = 0;
            assert_eq!(get_varint(&b, &mut p), Ok(v));
            assert_eq!(p, b.len());
            let mut padded = b.clone();
            padded.extend_from_slice(&[0xff; 16]);
            let mut p = 0;
            assert_eq!(get_varint(&padded, &mut p), Ok(v));
            assert_eq!(p, b.len());
            let mut p = 0;
            // SAFETY: `padded` extends past the varint.
            assert_eq!(unsafe { get_small_varint(&padded, &mut p) }, Ok(v));
            assert_eq!(p, b.len());
        }
        for v in [0u64, 1, u64::MAX, 1 << 63, 5u64.wrapping_neg()] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        for bad in [
            &[][..],
            &[0x80, 0x80],
            &[0xff; 11],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02],
        ] {
            let mut p = 0;
            assert!(get_varint(bad, &mut p).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn round_trip_multi_block() {
        let v = sample(BLOCK_RECORDS * 2 + 17);
        let bytes = encode(&v);
        assert_eq!(decode(&bytes).unwrap(), v);
        // Deterministic.
        assert_eq!(encode(&v), bytes);
    }

    #[test]
    fn empty_trace() {
        let bytes = encode(&[]);
        assert!(decode(&bytes).unwrap().is_empty());
    }

    #[test]
    fn length_prefixed_values() {
        let mut values = vec![0u64, 1, 255, 256, u32::MAX as u64, u64::MAX, 1 << 63];
        for k in 1..64 {
            values.extend([(1u64 << k) - 1, 1 << k]);
        }
        for v in values {
            let mut b = Vec::new();
            put_prefixed(&mut b, v);
            let significant = (64 - v.leading_zeros()).div_ceil(8) as usize;
            assert_eq!(b.len(), 1 + significant, "{v}");
            assert_eq!(b[0] as usize, significant, "{v}");
            // The bytes after the value (the next value, or padding) must not leak into it.
            b.extend_from_slice(&[0xff; 9]);
            let mut p = 0;
            // SAFETY: `b` extends 9 bytes past the value's start.
            assert_eq!(unsafe { get_prefixed(&b, &mut p) }, Ok(v));
            assert_eq!(p, 1 + significant);
        }
        // A length byte above 8 is an error and leaves the position alone.
        let mut p = 0;
        // SAFETY: 10 bytes.
        assert!(unsafe { get_prefixed(&[9, 0, 0, 0, 0, 0, 0, 0, 0, 0], &mut p) }.is_err());
        assert_eq!(p, 0);
    }

    /// Both format versions round-trip the same records, and version 1 files keep their
    /// version in the header.
    #[test]
    fn both_versions_round_trip() {
        let v = sample(BLOCK_RECORDS + 999);
        for version in OLDEST_VERSION..=VERSION {
            let h = TraceHeader::describing(&v, "t");
            let mut w = AptWriter::with_format_version(Vec::new(), "t", &h, version).unwrap();
            w.write_all(&v).unwrap();
            let bytes = w.finish().unwrap();
            assert_eq!(&bytes[8..12], &version.to_le_bytes());
            let mut r = AptReader::with_name(&bytes[..], "t").unwrap();
            assert_eq!(r.header().version, version);
            assert_eq!(crate::collect(&mut r).unwrap(), v, "version {version}");
        }
        let h = TraceHeader::describing(&v, "t");
        assert!(AptWriter::with_format_version(Vec::new(), "t", &h, VERSION + 1).is_err());
        assert!(AptWriter::with_format_version(Vec::new(), "t", &h, 0).is_err());
    }

    /// The record decoder reads columns without bounds checks only when the whole batch fits
    /// the buffer; a batch that would not is refused, never read.
    #[test]
    fn batch_guard_refuses_short_buffers() {
        let mut codec = Codec::new(DeltaCoding::LengthPrefixed);
        let mut out = vec![MaybeUninit::<Access>::uninit(); 4];
        // One-byte records at the start of a buffer that holds them but not the pad they need.
        let short = vec![0u8; 4 * MAX_ADVANCE + 8];
        let mut c = Cursors::default();
        assert_eq!(
            decode_records::<true>(&mut codec, &short, &mut c, &mut out),
            Some((0, "column data runs past the end of the block"))
        );
        assert_eq!(c.a, 0, "nothing was read");
        // With the pad the same zero bytes decode: four reads of address 0.
        let padded = vec![0u8; 4 * MAX_ADVANCE + 9];
        assert_eq!(
            decode_records::<true>(&mut codec, &padded, &mut c, &mut out),
            None
        );
        assert_eq!(c.a, 4);
    }

    /// Records encoded into columns and read back by the unchecked column decoder, batch by
    /// batch as a block is, without compression (so that it runs under Miri, which cannot call
    /// zstd): every cursor ends exactly at the end of its column.
    #[test]
    fn columns_round_trip_through_the_unchecked_decoder() {
        let v = sample(if cfg!(miri) { 120 } else { 3000 });
        for coding in [DeltaCoding::Leb128, DeltaCoding::LengthPrefixed] {
            let mut enc = Codec::new(coding);
            let mut cols: [Vec<u8>; COLUMNS] = Default::default();
            for a in &v {
                enc.encode(a, &mut cols);
            }
            let (mut raw, mut starts, mut ends) = (Vec::new(), [0; COLUMNS], [0; COLUMNS]);
            for (k, col) in cols.iter().enumerate() {
                starts[k] = raw.len();
                raw.extend_from_slice(col);
                ends[k] = raw.len();
            }
            raw.resize(raw.len() + DECODE_PAD, 0);
            let mut dec = Codec::new(coding);
            let mut c = Cursors::from_array(&starts);
            let mut out = Vec::new();
            for chunk in v.chunks(7) {
                let mut slots = vec![MaybeUninit::<Access>::uninit(); chunk.len()];
                let bad = match coding {
                    DeltaCoding::LengthPrefixed => {
                        decode_records::<true>(&mut dec, &raw, &mut c, &mut slots)
                    }
                    DeltaCoding::Leb128 => {
                        decode_records::<false>(&mut dec, &raw, &mut c, &mut slots)
                    }
                };
                assert_eq!(bad, None);
                // SAFETY: `decode_records` returned `None`, so it wrote every slot.
                out.extend(slots.into_iter().map(|s| unsafe { s.assume_init() }));
            }
            assert_eq!(out, v);
            assert_eq!(c.to_array(), ends);
        }
    }

    #[test]
    fn max_record_len_holds() {
        for coding in [DeltaCoding::Leb128, DeltaCoding::LengthPrefixed] {
            max_record_len_holds_in(coding);
        }
    }

    fn max_record_len_holds_in(coding: DeltaCoding) {
        let mut c = Codec::new(coding);
        let mut cols: [Vec<u8>; COLUMNS] = Default::default();
        let a = Access {
            addr: 1 << 63,
            pc: u64::MAX / 3,
            time: 1 << 62,
            warp: u32::MAX,
            unit: u16::MAX,
            size: u16::MAX,
            agent: Agent::GPU,
            stream: Stream::Other,
            op: Op::Prefetch,
            flags: 0xff,
        };
        c.encode(&a, &mut cols);
        let len: usize = cols.iter().map(|c| c.len()).sum();
        assert!(len <= MAX_RECORD_LEN, "{len}");
    }

    #[test]
    fn truncation_detected() {
        let v = sample(300);
        let bytes = encode(&v);
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
    }
}
