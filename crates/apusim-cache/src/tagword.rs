//! A resident line's engine metadata ([`LineMeta`]) and the 64-bit tag word that packs it with
//! the line address. The engine's tag array ([`crate::Cache`]) stores these words and the set
//! views policies read ([`crate::SetView`]) decode them, so the layout has this one home below
//! both.

use apusim_trace::{Agent, Stream};

/// Engine-owned facts about one resident line, visible to policies.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct LineMeta {
    /// Agent whose miss filled the line.
    pub agent: Agent,
    /// Stream of the access that filled the line.
    pub stream: u8,
    /// Bit set of [`LineMeta::DIRTY`], [`LineMeta::REUSED`], [`LineMeta::CPU`],
    /// [`LineMeta::SHARED`].
    pub flags: u8,
}

impl LineMeta {
    /// The line holds data newer than the next level.
    pub const DIRTY: u8 = 1;
    /// The line has been hit since it was filled.
    pub const REUSED: u8 = 2;
    /// A CPU core has touched the line (so inclusion requires back-invalidating it).
    pub const CPU: u8 = 4;
    /// A CPU core other than the filling agent has touched the line: copies may sit in any
    /// core's private caches, not only the filler's.
    pub const SHARED: u8 = 8;

    pub fn stream(&self) -> Stream {
        Stream::from_byte(self.stream).unwrap_or(Stream::Other)
    }
    pub fn dirty(&self) -> bool {
        self.flags & Self::DIRTY != 0
    }
    pub fn reused(&self) -> bool {
        self.flags & Self::REUSED != 0
    }
    pub fn cpu_touched(&self) -> bool {
        self.flags & Self::CPU != 0
    }
    /// The CPU core whose private caches alone can hold copies, if only one can.
    pub fn sole_cpu(&self) -> Option<usize> {
        if self.flags & Self::SHARED == 0 {
            self.agent.cpu_index()
        } else {
            None
        }
    }
}

/// Each way is one 64-bit word: the line address in the low 48 bits and the engine's line
/// metadata (flags, stream, filling agent) in the high 16, so a lookup, a hit's flag update and
/// a fill touch only the tag array.
pub(crate) const LINE_MASK: u64 = (1 << 48) - 1;
pub(crate) const FLAG_SHIFT: u32 = 48;
const STREAM_SHIFT: u32 = 52;
pub(crate) const AGENT_SHIFT: u32 = 56;

/// Word of an invalid way (its line field, all ones, is no valid line address).
pub(crate) const INVALID: u64 = u64::MAX;

/// Largest line address (byte address >> line bits) a cache can hold: 2^48 - 2, i.e. byte
/// addresses below 2^54 with 64-byte lines.
pub const MAX_LINE: u64 = LINE_MASK - 1;

#[inline]
pub(crate) fn pack(line: u64, meta: LineMeta) -> u64 {
    line | (meta.flags as u64) << FLAG_SHIFT
        | (meta.stream as u64 & 0xF) << STREAM_SHIFT
        | (meta.agent.to_byte() as u64) << AGENT_SHIFT
}

/// The line address of a valid way's word.
#[inline]
pub(crate) fn word_line(word: u64) -> u64 {
    word & LINE_MASK
}

/// The metadata of a valid way's word.
#[inline]
pub(crate) fn word_meta(word: u64) -> LineMeta {
    LineMeta {
        agent: Agent::from_byte((word >> AGENT_SHIFT) as u8).unwrap_or_default(),
        stream: (word >> STREAM_SHIFT) as u8 & 0xF,
        flags: (word >> FLAG_SHIFT) as u8 & 0xF,
    }
}
