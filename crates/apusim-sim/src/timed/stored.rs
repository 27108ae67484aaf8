//! A timed run's whole result as bytes, so that a run recorded once (in the results database
//! of `apusim sim|sweep|study --db`) can be read back instead of simulated again.
//!
//! The bytes are [`FORMAT`]: the [`SimResult`]'s CBOR encoding, zstd-compressed. CBOR rather
//! than JSON: a result holds NaN and infinite figures (a ratio over an empty window), which
//! JSON writes as `null` and cannot read back as numbers. Compressed because a result repeats
//! its field names in every interval, frame and per-stream row: 25-210 KB of CBOR per run
//! become a fifth to a tenth of that. Reading checks the counter tables' shapes, so a
//! damaged or foreign blob is an error, never a panic later. A result written by an apusim
//! whose result type has since changed fails to decode; callers then run the simulation
//! again rather than trust it.

use super::SimResult;
use anyhow::Result;

/// The name of the encoding, stored beside the bytes; a reader refuses any other.
pub const FORMAT: &str = "apusim-sim-result-cbor-zstd-1";

/// `r` as bytes of [`FORMAT`].
pub fn encode(r: &SimResult) -> Result<Vec<u8>> {
    crate::stored::encode_as(r, "a timed result")
}

/// The result `bytes` of format `format` hold.
pub fn decode(format: &str, bytes: &[u8]) -> Result<SimResult> {
    let mut r: SimResult =
        crate::stored::decode_as(format, FORMAT, bytes, "a stored timed result")?;
    // Host time is not part of a result's identity (it is not serialized).
    r.seconds = 0.0;
    Ok(r)
}
