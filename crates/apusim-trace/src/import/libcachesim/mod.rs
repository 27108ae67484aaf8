//! libCacheSim traces: the `oracleGeneral` binary format (raw or zstd-compressed) and the
//! `csv` and `txt` text forms, read as object requests and mapped onto cache blocks.
//!
//! libCacheSim's binary and text traces share the object-to-block mapping ([`LcsOptions`]):
//! `options` parses it, `mapping` applies it, `oracle` reads the binary formats and `text` the
//! text forms; this file holds what both readers share besides (zstd detection, the header).
//!
//! Three types do the work. [`OracleGeneralSource`] streams 24-byte [`OracleGeneralRecord`]s;
//! [`LcsTextSource`] streams lines of a libCacheSim `csv` trace (columns chosen by the user) or
//! `txt` trace (one object id per line). Both turn each object request into cache-block
//! accesses as [`LcsOptions`] says, and both read through a bounded buffer, so a trace larger
//! than memory streams (only `dense-ids=true` and non-numeric ids keep a table, one entry per
//! distinct object).
//!
//! # `oracleGeneral`
//!
//! libCacheSim's `oracleGeneralBin` (`libCacheSim/traceReader/customizedReader/oracle/
//! oracleGeneralBin.h`): packed little-endian 24-byte records, no header:
//!
//! | bytes | field | use here |
//! |---|---|---|
//! | 0..4 | `uint32 clock_time` (seconds) | ignored |
//! | 4..12 | `uint64 obj_id` | the object |
//! | 12..16 | `uint32 obj_size` (bytes) | requests of size 0 are skipped, as libCacheSim does; the block count when `ignore-obj-size=false` |
//! | 16..24 | `int64 next_access_vtime` (-1: never) | ignored: apusim's OPT computes its own next uses |
//!
//! A file starting with the zstd magic (`.oracleGeneral.zst`) is decompressed on the fly; a
//! file that ends inside a record is an error naming the byte offset of that record (in the
//! decompressed stream for zstd input), where libCacheSim only warns.
//!
//! # `oracleGeneralOpNS`
//!
//! The same with an operation and a namespace (`oracleGeneralOpNS_read_one_req` in the same
//! `oracleGeneralBin.h`): packed little-endian 27-byte records, no header, read by the same
//! [`OracleGeneralSource`] (zstd, truncation and the object mapping as above):
//!
//! | bytes | field | use here |
//! |---|---|---|
//! | 0..4 | `uint32 clock_time` (seconds) | ignored |
//! | 4..12 | `uint64 obj_id` | the object |
//! | 12..16 | `uint32 obj_size` (bytes) | as in `oracleGeneral` (size 0 skipped) |
//! | 16 | `uint8 op` | read or write, by libCacheSim's `req_op_e` (below) |
//! | 17..19 | `uint16 ns` (namespace) | ignored |
//! | 19..27 | `int64 next_access_vtime` (-1: never) | ignored |
//!
//! The op codes are libCacheSim's `req_op_e` (`include/libCacheSim/enum.h`): `get` (1),
//! `gets` (2) and `read` (12) are reads; `set` (3), `add` (4), `cas` (5), `replace` (6),
//! `append` (7), `prepend` (8), `incr` (10), `decr` (11), `write` (13) and `update` (14) are
//! writes; `nop` (0), which libCacheSim's converters write for an operation they do not
//! classify, is a read, as libCacheSim's simulator serves every request as a lookup whatever
//! its op. A `delete` (9) is refused as in the `csv` form (a request cannot drop a cache line),
//! and so is any code from 15 (`invalid`) up, each with the record's byte offset.
//!
//! The namespace is ignored: libCacheSim's caches key objects by `obj_id` alone (`ns` is
//! carried in `request_t` and used by no cache), so the same id in two namespaces is one
//! object there, and apusim maps it onto the same block to keep miss counts equal. Traces
//! whose ids repeat across namespaces with different meanings should be renumbered first.
//!
//! libCacheSim detects the format by a name containing `oracleGeneralOpNS` (`detect_trace_type`
//! in `bin/cli_reader_utils.c`), e.g. `msr_hm_0.oracleGeneralOpNS` or
//! `msr_hm_0.oracleGeneralOpNS.zst`; apusim detects it the same way (see
//! [`Format::detect`](super::Format::detect)).
//!
//! # `csv` and `txt`
//!
//! As libCacheSim's `csv` reader (`traceReader/generalReader/csv.c`), the columns are named by
//! 1-based index in a parameter string (libCacheSim's `-t`), e.g.
//! `time-col=1,obj-id-col=2,obj-size-col=3,delimiter=,`. The delimiter, when not given, is
//! guessed from the first line as libCacheSim does (the most frequent of tab, `,`, `|`, `:`
//! weighted 4, 3, 2, 1); a header line, when `has-header` is not given, is recognized by its
//! selected numeric fields (time, size, a numeric id): none of them parses. Fields are trimmed
//! and may be wrapped in double quotes (no delimiter inside quotes). `txt` (`txt.c`) has one
//! object id per line. Blank lines are skipped in both. Numbers follow C's `strtoull(.., 0)`, as in libCacheSim: `0x` hex,
//! leading-`0` octal, else decimal; the time is a decimal or floating-point number (validated,
//! then unused: accesses are timed by their position, libCacheSim's virtual time).
//!
//! The optional `op-col` (libCacheSim's csv reader has none) names each request's operation:
//! `get`, `gets`, `read`, `r`, `load` are reads; `set`, `add`, `replace`, `cas`, `append`,
//! `prepend`, `incr`, `decr`, `update`, `put`, `write`, `w`, `store` are writes; a `delete` is
//! refused (a cache line cannot be dropped by a request). Without it every request is a read,
//! which is what libCacheSim's miss counts compare with.
//!
//! # From objects to blocks
//!
//! apusim's caches hold lines addressed by byte; a libCacheSim request names an object. By
//! default (`ignore-obj-size=true`, libCacheSim's `--ignore-obj-size 1`) each object is one
//! block of `block-size` bytes (default 64) at address `obj_id × block-size`: distinct ids are
//! distinct blocks, and as long as the simulated line size is at most `block-size` (both powers
//! of two) they are distinct lines too. With the default block of 64 bytes an id must be below
//! 2^58 for its address to fit in 64 bits; a larger id is refused with the file and its offset
//! or line, not wrapped onto another object.
//!
//! With `ignore-obj-size=false` an object of `S` bytes covers `ceil(S / block-size)`
//! consecutive blocks starting at `obj_id × slot`, where `slot` is `max-obj-size` (default
//! 1 MiB) rounded up to a power of two; an object larger than `max-obj-size` is refused with
//! its id and offset or line. apusim's cache engine knows lines, not objects, so the importer
//! is where object size is checked: give the cache's capacity as `max-obj-size` to refuse every
//! object that cannot fit in it. Ids must then be below `2^64 / slot` (2^44 for 1 MiB).
//!
//! `dense-ids=true` numbers objects in the order they first appear (0, 1, 2, ...) before the
//! mapping, for traces whose ids are hashes too large to shift; it keeps one table entry per
//! distinct object. Non-numeric ids (`obj-id-is-num=false`) are always numbered that way.

mod mapping;
mod options;
mod oracle;
#[cfg(test)]
mod tests;
mod text;

pub use options::{
    parse_c_u64, LcsOptions, DEFAULT_BLOCK_SIZE, DEFAULT_MAX_OBJ_SIZE, MAX_MAX_OBJ_SIZE,
};
pub use oracle::{
    lcs_op, OracleGeneralOpNSRecord, OracleGeneralRecord, OracleGeneralSource, OracleLayout,
    OPNS_RECORD_BYTES, RECORD_BYTES,
};
pub use text::{LcsTextSource, TextKind};

use super::{file_header, ImportOptions};
use crate::{Result, Stream, TraceError, TraceHeader};
use std::io::{BufRead, BufReader};
use std::path::Path;

/// The first bytes of a zstd frame.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// Wrap `input` in a zstd decoder when it starts with the zstd magic; the flag says so.
fn maybe_zstd<R: BufRead + Send + 'static>(
    mut input: R,
    path: &Path,
) -> Result<(Box<dyn BufRead + Send>, bool)> {
    let head = input.fill_buf().map_err(|e| TraceError::io(path, e))?;
    if head.starts_with(&ZSTD_MAGIC) {
        let d =
            zstd::stream::read::Decoder::with_buffer(input).map_err(|e| TraceError::io(path, e))?;
        Ok((Box::new(BufReader::with_capacity(1 << 18, d)), true))
    } else {
        Ok((Box::new(input), false))
    }
}

fn header(opts: &ImportOptions, path: &Path, what: &str) -> TraceHeader {
    file_header(
        path,
        opts,
        &[Stream::CpuData],
        &format!(
            "libCacheSim {what}: {} ({})",
            path.display(),
            opts.libcachesim
        ),
    )
}
