//! The native `.apt` trace container: streaming writer, streaming reader and summary.
//!
//! The writer, reader and summary share the block layout and its delta/varint coding, so
//! the layout's constants live here and the record coding in one module beside them:
//!
//! * `codec`: the per-block delta state and the column, varint and length-prefixed coding of
//!   records, used by both ends;
//! * `writer`: [`AptWriter`] and [`write_file`];
//! * `reader`: the preamble, the container walk (`BlockScanner`), the block decoding
//!   (`BlockDecoder`) and the sequential [`AptReader`];
//! * `parallel`: [`ParallelAptReader`], the same reading with decoder threads;
//! * `summary`: [`summarize`] and the [`TraceSummary`] that `apusim trace info` prints.
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
//! order (bounded read-ahead), so that decoding overlaps with whatever consumes the records.
//! Every malformation is reported as [`TraceError::Format`](crate::TraceError::Format) with the
//! file and byte offset; no input makes the reader panic.

use crate::{Agent, Stream};

mod codec;
mod parallel;
mod reader;
mod summary;
#[cfg(test)]
mod tests;
mod writer;

pub use codec::COLUMNS;
pub use parallel::{
    default_decode_threads, ParallelAptReader, DECODE_THREADS_ENV, INLINE_BLOCKS,
    MAX_DECODE_THREADS,
};
pub use reader::AptReader;
pub use summary::{summarize, Counts, TraceSummary};
pub use writer::{write_file, AptWriter};

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
