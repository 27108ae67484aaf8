//! Tests of the `.apt` container: the integer codings, the column codec against its unchecked
//! decoder, round trips through writer and reader in both format versions, and truncation.

use super::codec::*;
use super::*;
use crate::{Access, AccessSource, Agent, Op, Result, Stream, TraceHeader};
use std::mem::MaybeUninit;

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
                DeltaCoding::Leb128 => decode_records::<false>(&mut dec, &raw, &mut c, &mut slots),
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
