//! Property tests: `.apt` round trips bit-identically, no parser panics on arbitrary bytes,
//! and any single-byte corruption of a valid `.apt` file is reported as an error.

use crate::common;

use apusim_trace::apt::{AptReader, AptWriter, MAGIC, VERSION};
use apusim_trace::import::{check_bytes, Format};
use apusim_trace::{collect, Access, Agent, Op, Stream, TraceHeader};
use proptest::prelude::*;

fn access() -> impl Strategy<Value = Access> {
    (
        (any::<u64>(), 0u8..4, any::<u64>()),
        (
            any::<u64>(),
            0u8..3,
            any::<u32>(),
            any::<u16>(),
            any::<u16>(),
        ),
        (
            0u8..=Agent::GPU_ID,
            0u8..Stream::COUNT as u8,
            0u8..4,
            any::<u8>(),
        ),
    )
        .prop_map(
            |(
                (addr, pc_kind, pc),
                (time, time_kind, warp, unit, size),
                (agent, stream, op, flags),
            )| {
                // Mix arbitrary values with the patterns the encoder special-cases, so that every
                // mode gets exercised: pc = addr, small values, and the same value repeatedly.
                let addr = if pc_kind == 3 { addr % 4096 } else { addr };
                Access {
                    addr,
                    pc: match pc_kind {
                        0 => pc,
                        1 => addr,
                        2 => pc % 16,
                        _ => 0,
                    },
                    time: match time_kind {
                        0 => time,
                        1 => time % 8,
                        _ => 0,
                    },
                    warp: warp % 3 * (warp >> 30),
                    unit: unit % 4,
                    size,
                    agent: Agent::from_byte(agent).unwrap(),
                    stream: Stream::from_byte(stream).unwrap(),
                    op: Op::from_byte(op).unwrap(),
                    flags,
                }
            },
        )
}

fn encode(v: &[Access]) -> Vec<u8> {
    let mut w = AptWriter::new(Vec::new(), &TraceHeader::describing(v, "proptest")).unwrap();
    w.write_all(v).unwrap();
    w.finish().unwrap()
}

fn decode(bytes: &[u8]) -> apusim_trace::Result<Vec<Access>> {
    let mut r = AptReader::with_name(bytes, "p.apt")?;
    collect(&mut r)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn apt_round_trip(v in prop::collection::vec(access(), 0..400)) {
        let bytes = encode(&v);
        prop_assert_eq!(decode(&bytes).unwrap(), v);
    }

    #[test]
    fn apt_round_trip_runs(v in prop::collection::vec(access(), 1..20), reps in 1usize..50) {
        // Repeated and strided sequences: the cheap encodings.
        let mut all = Vec::new();
        for k in 0..reps as u64 {
            for a in &v {
                all.push(Access { addr: a.addr.wrapping_add(k * 64), time: a.time.wrapping_add(k), ..*a });
            }
        }
        prop_assert_eq!(decode(&encode(&all)).unwrap(), all);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
        for f in Format::ALL {
            let _ = check_bytes(&bytes, *f, 1 << 20);
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in "[ILSM ,0-9a-fx=rw#\n-]{0,400}") {
        for f in [Format::Lackey, Format::Csv, Format::LcsCsv, Format::LcsTxt] {
            let _ = check_bytes(text.as_bytes(), f, 1 << 20);
        }
    }

    #[test]
    fn arbitrary_bytes_after_apt_preamble_never_panic(
        tail in prop::collection::vec(any::<u8>(), 0..600),
        with_block_magic in any::<bool>(),
    ) {
        let json = serde_json::to_vec(&TraceHeader::describing(&[], "p")).unwrap();
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        bytes.extend_from_slice(&(json.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&json);
        bytes.extend_from_slice(&crc32fast::hash(&json).to_le_bytes());
        if with_block_magic {
            bytes.extend_from_slice(b"APTB");
        }
        bytes.extend_from_slice(&tail);
        // Errors are expected; the property is that nothing panics.
        let _ = check_bytes(&bytes, Format::Apt, 1 << 20);
    }

    #[test]
    fn single_byte_corruption_is_detected(
        v in prop::collection::vec(access(), 1..300),
        pos in any::<prop::sample::Index>(),
        xor in 1u8..=255,
    ) {
        let mut bytes = encode(&v);
        let i = pos.index(bytes.len());
        bytes[i] ^= xor;
        let r = decode(&bytes);
        prop_assert!(r.is_err(), "corruption at byte {} of {} went unnoticed", i, bytes.len());
    }
}

#[test]
fn corruption_of_every_byte_of_a_small_file() {
    let v = common::mixed_stream(500, 3);
    let good = encode(&v);
    for i in 0..good.len() {
        for xor in [0x01u8, 0x80, 0xff] {
            let mut bytes = good.clone();
            bytes[i] ^= xor;
            assert!(
                decode(&bytes).is_err(),
                "corruption at byte {i} (xor {xor:#x}) went unnoticed"
            );
        }
    }
}
