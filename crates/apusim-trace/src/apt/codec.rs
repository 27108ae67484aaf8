//! The record coding of `.apt` blocks: the per-block delta state ([`Codec`]), the column
//! layout of a decompressed block, and the LEB128, zigzag and length-prefixed integer codings.
//! The writer encodes with it and the reader decodes with it.

use super::{N_AGENTS, SLOTS_PER_AGENT};
use crate::{Access, Agent, Op, Stream, BATCH};
use std::hint::select_unpredictable;
use std::mem::MaybeUninit;

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
pub(super) const C_A: usize = 0;
const C_B: usize = 1;
const C_AGENT: usize = 2;
const C_STREAM: usize = 3;
const C_SIZE: usize = 4;
const C_UNIT: usize = 5;
const C_WARP: usize = 6;
const C_XFLAGS: usize = 7;
const C_PC: usize = 8;
const C_TIME: usize = 9;
pub(super) const C_ADDR: usize = 10;
/// Column names, for error messages.
pub(super) const COLUMN_NAMES: [&str; COLUMNS] = [
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
pub(super) const COLUMN_TABLE: usize = 4 * COLUMNS;

/// How a block stores its pc, time and address deltas (the one difference between format
/// versions 1 and 2).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum DeltaCoding {
    /// Version 1: LEB128 varints.
    Leb128,
    /// Version 2: a length byte `0..=8`, then that many little-endian bytes.
    LengthPrefixed,
}

impl DeltaCoding {
    pub(super) fn of_version(version: u32) -> Option<DeltaCoding> {
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
pub(super) struct Codec {
    pub(super) delta: DeltaCoding,
    agent: u8,
    agents: Box<[AgentState; N_AGENTS]>,
    slots: Box<[SlotState; N_AGENTS * SLOTS_PER_AGENT]>,
}

/// Read cursors into the columns of a decompressed block.
#[derive(Clone, Copy, Default)]
pub(super) struct Cursors {
    /// Position in column A (= start of column A + index of the next record).
    pub(super) a: usize,
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
    pub(super) fn from_array(s: &[usize; COLUMNS]) -> Cursors {
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
    pub(super) fn to_array(self) -> [usize; COLUMNS] {
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
    pub(super) fn new(delta: DeltaCoding) -> Codec {
        Codec {
            delta,
            agent: 0,
            agents: Box::new([AgentState::default(); N_AGENTS]),
            slots: Box::new([SlotState::default(); N_AGENTS * SLOTS_PER_AGENT]),
        }
    }

    pub(super) fn reset(&mut self) {
        self.agent = 0;
        self.agents.fill(AgentState::default());
        self.slots.fill(SlotState::default());
    }

    #[inline]
    pub(super) fn encode(&mut self, a: &Access, cols: &mut [Vec<u8>; COLUMNS]) {
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
pub(super) fn decode_records<const PREFIXED: bool>(
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

/// Most bytes one record moves one column cursor: 9 for a length-prefixed delta, 10 for the
/// longest LEB128 varint.
pub(super) const MAX_ADVANCE: usize = 10;

/// Zero bytes the reader appends to a decompressed block so that a whole batch can be decoded
/// without bounds checks even when its records are malformed and their cursors run on past
/// the block's data (see [`Codec::decode`]).
pub(super) const DECODE_PAD: usize = BATCH * MAX_ADVANCE + 9;

#[inline]
pub(super) fn zigzag(v: u64) -> u64 {
    (v << 1) ^ (((v as i64) >> 63) as u64)
}

#[inline]
pub(super) fn unzigzag(v: u64) -> u64 {
    (v >> 1) ^ (v & 1).wrapping_neg()
}

/// Append `v` length-prefixed: a byte `0..=8` giving the number of significant bytes, then
/// those bytes of `v`, least significant first.
#[inline]
pub(super) fn put_prefixed(out: &mut Vec<u8>, v: u64) {
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
pub(super) unsafe fn get_prefixed(
    buf: &[u8],
    pos: &mut usize,
) -> std::result::Result<u64, &'static str> {
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
pub(super) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
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
pub(super) unsafe fn get_small_varint(
    buf: &[u8],
    pos: &mut usize,
) -> std::result::Result<u64, &'static str> {
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
pub(super) fn get_varint(buf: &[u8], pos: &mut usize) -> std::result::Result<u64, &'static str> {
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
