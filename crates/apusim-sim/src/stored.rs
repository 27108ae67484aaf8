//! A functional run's whole result as bytes, so that a run recorded once (in the results
//! database of `apusim run|sweep|study --db`) can be read back instead of simulated again.
//!
//! The bytes are [`FORMAT`]: the [`RunResult`]'s CBOR encoding, zstd-compressed, as a timed
//! result's are (`crate::timed::stored`, which says why CBOR: a policy's own statistics may
//! be NaN, which JSON cannot read back as a number). Reading checks the counter tables'
//! shapes (`crate::stats::Table`), so a damaged or foreign blob is an error, never a panic
//! later. A result written by an apusim whose result type has since changed fails to decode;
//! callers then run the simulation again rather than trust it.

use crate::RunResult;
use anyhow::{Context, Result};

/// The name of the encoding, stored beside the bytes; a reader refuses any other.
pub const FORMAT: &str = "apusim-run-result-cbor-zstd-1";

/// `r` as bytes of [`FORMAT`].
pub fn encode(r: &RunResult) -> Result<Vec<u8>> {
    encode_as(r, "a functional result")
}

/// The result `bytes` of format `format` hold.
pub fn decode(format: &str, bytes: &[u8]) -> Result<RunResult> {
    let mut r: RunResult = decode_as(format, FORMAT, bytes, "a stored functional result")?;
    // Host time is not part of a result's identity (it is not serialized).
    r.seconds = 0.0;
    Ok(r)
}

/// Any result (`what` names it in errors) as zstd-compressed CBOR: the encoding of every
/// stored result format.
pub fn encode_as<T: serde::Serialize>(r: &T, what: &str) -> Result<Vec<u8>> {
    let mut cbor = Vec::new();
    ciborium::into_writer(r, &mut cbor).with_context(|| format!("encoding {what}"))?;
    zstd::encode_all(cbor.as_slice(), 3).with_context(|| format!("compressing {what}"))
}

/// The result of format `expected` that `bytes` of format `format` hold ([`encode_as`]'s
/// inverse); a format other than `expected` is refused.
pub fn decode_as<T: serde::de::DeserializeOwned>(
    format: &str,
    expected: &str,
    bytes: &[u8],
    what: &str,
) -> Result<T> {
    if format != expected {
        anyhow::bail!("a stored result of format `{format}`, not `{expected}`");
    }
    let cbor = zstd::decode_all(bytes).with_context(|| format!("decompressing {what}"))?;
    ciborium::from_reader(cbor.as_slice()).with_context(|| format!("decoding {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{LevelStats, RunStats, Table};
    use apusim_trace::{Agent, Stream};

    fn result() -> RunResult {
        let mut llc = Table::new(2);
        llc.at(Agent::cpu(1), Stream::CpuData).read_misses = 7;
        llc.at(Agent::GPU, Stream::StaticTexture).read_misses = 11;
        let mut memory = Table::new(2);
        memory.at(Agent::GPU, Stream::StaticTexture).reads = 11;
        RunResult {
            policy: "drp".into(),
            stats: RunStats {
                levels: vec![LevelStats {
                    name: "llc".into(),
                    geometry: "16M,16,64".into(),
                    instances: 1,
                    counts: llc,
                }],
                memory,
                instructions: vec![100, 200],
                trace_accesses: 1234,
                // A ratio over nothing: NaN must come back as NaN, not as null.
                policy_stats: vec![("hit_rate".into(), f64::NAN), ("epochs".into(), 3.0)],
            },
            seconds: 2.5,
        }
    }

    #[test]
    fn a_functional_result_round_trips_and_a_foreign_one_is_refused() {
        let r = result();
        let bytes = encode(&r).unwrap();
        let back = decode(FORMAT, &bytes).unwrap();
        assert_eq!(back.policy, r.policy);
        assert_eq!(back.seconds, 0.0, "host time is not stored");
        let (a, b) = (&back.stats, &r.stats);
        assert_eq!(a.levels, b.levels);
        assert_eq!(a.memory, b.memory);
        assert_eq!(a.instructions, b.instructions);
        assert_eq!(a.trace_accesses, b.trace_accesses);
        assert!(a.policy_stats[0].1.is_nan());
        assert_eq!(a.policy_stats[1], b.policy_stats[1]);
        assert_eq!(back.stats.llc().counts.class_total(true).read_misses, 11);
        // Another format, damaged bytes and a timed result are errors, never a panic.
        assert!(decode(crate::timed::stored::FORMAT, &bytes).is_err());
        assert!(decode(FORMAT, &bytes[..bytes.len() / 2]).is_err());
        assert!(decode(FORMAT, b"not zstd").is_err());
        let other = zstd::encode_all(&b"\xa1\x61\x78\x01"[..], 3).unwrap();
        assert!(decode(FORMAT, &other).is_err());
    }
}
