//! `.apt` writer/reader: round trips, atomic creation, every error path, summaries.

use crate::common;

use apusim_trace::apt::{self, AptReader, AptWriter, BLOCK_RECORDS, MAGIC, VERSION};
use apusim_trace::{
    collect, Access, AccessSource, Agent, Op, Stream, TraceError, TraceHeader, BATCH,
};
use common::*;

/// Build a file of the current format version from a header JSON and hand-made blocks (each:
/// record count, raw bytes).
fn build(json: &[u8], blocks: &[(u32, Vec<u8>)], trailer: bool) -> Vec<u8> {
    build_version(VERSION, json, blocks, trailer)
}

/// [`build`] for format `version`.
fn build_version(version: u32, json: &[u8], blocks: &[(u32, Vec<u8>)], trailer: bool) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&MAGIC);
    f.extend_from_slice(&version.to_le_bytes());
    f.extend_from_slice(&(json.len() as u32).to_le_bytes());
    f.extend_from_slice(json);
    f.extend_from_slice(&crc32fast::hash(json).to_le_bytes());
    let mut total = 0u64;
    for (count, raw) in blocks {
        let comp = zstd::bulk::compress(raw, 3).unwrap();
        f.extend_from_slice(b"APTB");
        f.extend_from_slice(&count.to_le_bytes());
        f.extend_from_slice(&(raw.len() as u32).to_le_bytes());
        f.extend_from_slice(&(comp.len() as u32).to_le_bytes());
        f.extend_from_slice(&crc32fast::hash(&comp).to_le_bytes());
        f.extend_from_slice(&comp);
        total += *count as u64;
    }
    if trailer {
        let mut t = Vec::new();
        t.extend_from_slice(b"APTE");
        t.extend_from_slice(&total.to_le_bytes());
        t.extend_from_slice(&(blocks.len() as u64).to_le_bytes());
        let crc = crc32fast::hash(&t);
        t.extend_from_slice(&crc.to_le_bytes());
        f.extend_from_slice(&t);
    }
    f
}

/// Decompressed block data from its 11 columns (A, B, agent, stream, size, unit, warp,
/// extra flags, pc, time, address).
fn columns(cols: [&[u8]; 11]) -> Vec<u8> {
    let mut raw = Vec::new();
    for c in &cols {
        raw.extend_from_slice(&(c.len() as u32).to_le_bytes());
    }
    for c in &cols {
        raw.extend_from_slice(c);
    }
    raw
}

/// One-record block: A byte, B byte (if any), agent, stream, size, address column bytes.
fn rec(a: &[u8], b: &[u8], agent: &[u8], stream: &[u8], size: &[u8], addr: &[u8]) -> Vec<u8> {
    columns([a, b, agent, stream, size, &[], &[], &[], &[], &[], addr])
}

fn json() -> Vec<u8> {
    serde_json::to_vec(&TraceHeader::single(
        Agent::cpu(0),
        "x",
        0,
        &[Stream::CpuData],
        "t",
    ))
    .unwrap()
}

/// Offset of the first block header in a file written by `encode`.
fn first_block(bytes: &[u8]) -> usize {
    let hlen = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    16 + hlen + 4
}

#[test]
fn round_trip_bit_identical_and_batched() {
    let v = mixed_stream(BLOCK_RECORDS * 3 + 1234, 7);
    let bytes = encode(&v);
    let mut r = AptReader::with_name(&bytes[..], "mem").unwrap();
    assert_eq!(r.header().version, VERSION);
    let mut all = Vec::new();
    let mut batch = Vec::new();
    loop {
        batch.clear();
        if !r.next_batch(&mut batch).unwrap() {
            break;
        }
        assert!(!batch.is_empty() && batch.len() <= BATCH);
        all.extend_from_slice(&batch);
    }
    assert_eq!(all, v);
    assert_eq!(r.blocks_read(), 4);
    // Exhausted stays exhausted.
    assert!(!r.next_batch(&mut batch).unwrap());
    let per_record = bytes.len() as f64 / v.len() as f64;
    assert!(per_record < 4.0, "{per_record} bytes/record");
}

#[test]
fn deterministic_output() {
    let v = mixed_stream(100_000, 3);
    assert_eq!(encode(&v), encode(&v));
    let mut w = AptWriter::new(Vec::new(), &header_for(&v)).unwrap();
    for a in &v {
        w.write(a).unwrap();
    }
    assert_eq!(w.records(), v.len() as u64);
    assert_eq!(
        w.finish().unwrap(),
        encode(&v),
        "write() and write_all() agree"
    );
}

#[test]
fn extreme_values_round_trip() {
    let mut v = Vec::new();
    for (i, &addr) in [0u64, u64::MAX, 1 << 63, 1, u64::MAX - 1]
        .iter()
        .enumerate()
    {
        for s in Stream::ALL {
            for op in Op::ALL {
                v.push(Access {
                    addr: addr ^ (i as u64),
                    pc: addr.rotate_left(i as u32),
                    time: u64::MAX - addr,
                    warp: u32::MAX >> i,
                    unit: u16::MAX >> i,
                    size: [0u16, 1, 65535, 64, 8][i],
                    agent: if i % 2 == 0 {
                        Agent::GPU
                    } else {
                        Agent::cpu(127)
                    },
                    stream: *s,
                    op: *op,
                    flags: (i as u8).wrapping_mul(61),
                });
            }
        }
    }
    assert_eq!(decode(&encode(&v)).unwrap(), v);
}

#[test]
fn create_is_atomic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.apt");
    let v = mixed_stream(1000, 1);
    let mut w = AptWriter::create(&path, &header_for(&v)).unwrap();
    w.write_all(&v).unwrap();
    assert!(!path.exists(), "nothing at the final path before finish()");
    drop(w);
    assert!(!path.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "temp file removed on drop"
    );

    apt::write_file(&path, &header_for(&v), &v).unwrap();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    let mut r = AptReader::open(&path).unwrap();
    assert_eq!(collect(&mut r).unwrap(), v);
    assert_eq!(r.header().agents, header_for(&v).agents);

    // Relative path in the current directory works too (parent is "").
    let err = AptWriter::create(dir.path().join("no/such/dir/x.apt"), &header_for(&v));
    assert!(matches!(err, Err(TraceError::Io { .. })));
}

#[test]
fn bad_magic_and_version() {
    let off = expect_format(decode(b"hello world, not a trace"), "not an .apt trace");
    assert_eq!(off, 0);
    expect_format(decode(b""), "not an .apt trace");
    let mut bytes = encode(&mixed_stream(10, 1));
    bytes[8] = 99;
    let off = expect_format(decode(&bytes), "unsupported .apt version 99");
    assert_eq!(off, 8);
}

#[test]
fn bad_header() {
    let bytes = build(b"{\"agents\": 5}", &[], true);
    expect_format(decode(&bytes), "invalid header JSON");
    let bytes = build(b"not json", &[], true);
    expect_format(decode(&bytes), "invalid header JSON");
    let mut bytes = encode(&mixed_stream(10, 1));
    bytes[20] ^= 1;
    expect_format(decode(&bytes), "header CRC mismatch");
    let mut bytes = encode(&[]);
    bytes[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    let off = expect_format(decode(&bytes), "header length");
    assert_eq!(off, 12);
}

#[test]
fn block_errors() {
    let v = mixed_stream(5000, 2);
    let good = encode(&v);
    let b = first_block(&good);

    // CRC mismatch in the payload.
    let mut bytes = good.clone();
    bytes[b + 25] ^= 0x40;
    let off = expect_format(decode(&bytes), "CRC mismatch in block 0");
    assert_eq!(off, (b + 20) as u64);

    // Truncated block.
    let off = expect_format(decode(&good[..b + 30]), "truncated block 0");
    assert_eq!(off, (b + 30) as u64);

    // Bad block magic.
    let mut bytes = good.clone();
    bytes[b] = b'X';
    let off = expect_format(decode(&bytes), "expected block magic");
    assert_eq!(off, b as u64);

    // Absurd record count / raw length / compressed length.
    let mut bytes = good.clone();
    bytes[b + 4..b + 8].copy_from_slice(&0u32.to_le_bytes());
    expect_format(decode(&bytes), "record count 0 out of range");
    let mut bytes = good.clone();
    bytes[b + 8..b + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    expect_format(decode(&bytes), "raw length");
    let mut bytes = good.clone();
    bytes[b + 12..b + 16].copy_from_slice(&u32::MAX.to_le_bytes());
    expect_format(decode(&bytes), "compressed length");

    // zstd failure: garbage payload with a correct CRC.
    let mut bytes = good.clone();
    let comp_len = u32::from_le_bytes(bytes[b + 12..b + 16].try_into().unwrap()) as usize;
    for x in &mut bytes[b + 20..b + 20 + comp_len] {
        *x = 0x55;
    }
    let crc = crc32fast::hash(&bytes[b + 20..b + 20 + comp_len]);
    bytes[b + 16..b + 20].copy_from_slice(&crc.to_le_bytes());
    expect_format(decode(&bytes), "zstd failed on block 0");
}

#[test]
fn record_errors() {
    // Hand-made version 1 blocks: the pc, time and address deltas are LEB128 varints.
    let build = |j: &[u8], blocks: &[(u32, Vec<u8>)], trailer| build_version(1, j, blocks, trailer);
    let j = json();
    let e: &[u8] = &[];
    // Raw length disagrees with the payload.
    let mut bytes = build(&j, &[(1, rec(&[0], e, e, e, e, &[0]))], true);
    let b = 16 + j.len() + 4;
    let raw_len = 44 + 2;
    bytes[b + 8..b + 12].copy_from_slice(&(raw_len as u32 + 1).to_le_bytes());
    expect_format(decode(&bytes), "decompressed to 46 bytes, header says 47");
    // Column table inconsistent with the record count or the block length.
    let bytes = build(&j, &[(2, rec(&[0], e, e, e, e, &[0, 0, 0]))], true);
    expect_format(decode(&bytes), "column A holds 1 bytes");
    let mut raw = rec(&[0], e, e, e, e, &[0]);
    raw[40..44].copy_from_slice(&5u32.to_le_bytes());
    let bytes = build(&j, &[(1, raw)], true);
    expect_format(decode(&bytes), "bad column table");
    // Two records claimed but the address column holds only one varint... of two bytes:
    // decoding consumes the second byte as a second address, then the B column overruns.
    let bytes = build(&j, &[(2, rec(&[0, 0x80], e, e, e, e, &[0, 0]))], true);
    expect_format(decode(&bytes), "B flags column runs past its end");
    // A varint running out of its column.
    let bytes = build(
        &j,
        &[(1, rec(&[0x80], &[0x10], e, e, &[0x80], &[0, 0]))],
        true,
    );
    expect_format(decode(&bytes), "column runs past its end");
    // Leftover bytes after the last record.
    let bytes = build(&j, &[(1, rec(&[0], e, e, e, e, &[0, 0]))], true);
    expect_format(decode(&bytes), "undecoded bytes in the address column");
    // Invalid agent byte (B_AGENT with 0x81).
    let bytes = build(&j, &[(1, rec(&[0x80], &[0x08], &[0x81], e, e, &[0]))], true);
    expect_format(decode(&bytes), "invalid agent byte");
    // Invalid stream byte (B_STREAM with 15).
    let bytes = build(&j, &[(1, rec(&[0x80], &[0x04], e, &[15], e, &[0]))], true);
    expect_format(decode(&bytes), "invalid stream byte");
    // Invalid pc and time modes.
    let bytes = build(&j, &[(1, rec(&[3 << 3], e, e, e, e, &[0]))], true);
    expect_format(decode(&bytes), "invalid pc mode");
    let bytes = build(&j, &[(1, rec(&[3 << 5], e, e, e, e, &[0]))], true);
    expect_format(decode(&bytes), "invalid time mode");
    // Overlong varint and oversized size.
    let long = [0xffu8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
    let bytes = build(&j, &[(1, rec(&[0], e, e, e, e, &long))], true);
    expect_format(decode(&bytes), "varint");
    let bytes = build(
        &j,
        &[(1, rec(&[0x80], &[0x10], e, e, &[0xff, 0xff, 0x7f], &[0]))],
        true,
    );
    expect_format(decode(&bytes), "size does not fit");
    // A correct hand-made record decodes: op write, GPU, stream color, addr 0x40.
    let bytes = build(
        &j,
        &[(1, rec(&[0x81], &[0x0c], &[0x80], &[7], e, &[0x80, 0x01]))],
        true,
    );
    let v = decode(&bytes).unwrap();
    assert_eq!(
        v,
        vec![Access::new(Agent::GPU, Stream::Color, Op::Write, 0x40, 0)]
    );
}

/// The version 2 deltas: a length byte 0..=8, then that many little-endian bytes.
#[test]
fn record_errors_length_prefixed() {
    let j = json();
    let e: &[u8] = &[];
    // A correct hand-made record: op write, GPU, stream color, address delta 128 (zigzag 0x40).
    let bytes = build(
        &j,
        &[(1, rec(&[0x81], &[0x0c], &[0x80], &[7], e, &[1, 0x80]))],
        true,
    );
    assert_eq!(
        decode(&bytes).unwrap(),
        vec![Access::new(Agent::GPU, Stream::Color, Op::Write, 0x40, 0)]
    );
    // The same record in version 1 is LEB128: `[1, 0x80]` is two varints for one record.
    let v1 = build_version(
        1,
        &j,
        &[(1, rec(&[0x81], &[0x0c], &[0x80], &[7], e, &[1, 0x80]))],
        true,
    );
    expect_format(decode(&v1), "undecoded bytes in the address column");
    // A length byte above 8.
    let bytes = build(&j, &[(1, rec(&[0], e, e, e, e, &[9, 0, 0]))], true);
    expect_format(decode(&bytes), "invalid length byte (expected 0..=8)");
    // A value longer than what is left of its column.
    let bytes = build(&j, &[(1, rec(&[0], e, e, e, e, &[3, 1]))], true);
    expect_format(decode(&bytes), "address column runs past its end");
    // Leftover bytes after the last record.
    let bytes = build(&j, &[(1, rec(&[0], e, e, e, e, &[0, 0]))], true);
    expect_format(decode(&bytes), "undecoded bytes in the address column");
    // A version this build does not know.
    let bytes = build_version(3, &j, &[], true);
    expect_format(
        decode(&bytes),
        "unsupported .apt version 3; this build reads versions 1 to 2",
    );
}
#[test]
fn trailer_errors() {
    let v = mixed_stream(100, 2);
    let good = encode(&v);
    let n = good.len();
    let off = expect_format(decode(&good[..n - 24]), "missing trailer");
    assert_eq!(off, (n - 24) as u64);
    expect_format(decode(&good[..n - 3]), "truncated trailer");
    let mut bytes = good.clone();
    bytes[n - 20] ^= 1;
    expect_format(decode(&bytes), "trailer CRC mismatch");
    let mut bytes = good.clone();
    bytes.push(0);
    expect_format(decode(&bytes), "unexpected data after the trailer");
    // Consistent CRC but wrong count.
    let j = json();
    let mut bytes = build(&j, &[(1, rec(&[0], &[], &[], &[], &[], &[0]))], true);
    let t = bytes.len() - 24;
    bytes[t + 4..t + 12].copy_from_slice(&7u64.to_le_bytes());
    let crc = crc32fast::hash(&bytes[t..t + 20]);
    bytes[t + 20..].copy_from_slice(&crc.to_le_bytes());
    expect_format(decode(&bytes), "trailer says 7 records in 1 blocks");
}

#[test]
fn truncation_at_every_offset_is_an_error() {
    let v = mixed_stream(700, 5);
    let bytes = encode(&v);
    for cut in 0..bytes.len() {
        let r = decode(&bytes[..cut]);
        assert!(
            r.is_err(),
            "truncation at {cut} of {} went unnoticed",
            bytes.len()
        );
    }
    assert_eq!(decode(&bytes).unwrap(), v);
}

#[test]
fn error_names_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.apt");
    std::fs::write(&path, b"garbage").unwrap();
    let e = match AptReader::open(&path) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("garbage accepted"),
    };
    assert!(e.contains("bad.apt") && e.contains("byte offset 0"), "{e}");
}

#[test]
fn reader_is_poisoned_after_error() {
    let v = mixed_stream(100, 2);
    let good = encode(&v);
    let n = good.len();
    let mut r = AptReader::with_name(&good[..n - 24], "x").unwrap();
    let mut out = Vec::new();
    assert!(r.next_batch(&mut out).unwrap());
    assert!(r.next_batch(&mut out).is_err());
    assert!(r.next_batch(&mut out).is_err());
}

#[test]
fn summary_counts_and_display() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.apt");
    let v = mixed_stream(200_000, 11);
    apt::write_file(&path, &header_for(&v), &v).unwrap();
    let s = apt::summarize(&path).unwrap();
    assert_eq!(s.records, v.len() as u64);
    assert_eq!(s.blocks, 4);
    assert_eq!(s.file_bytes, std::fs::metadata(&path).unwrap().len());
    let total: u64 = s.agents.iter().map(|(_, c)| c.records).sum();
    assert_eq!(total, s.records);
    let cpu = s
        .agents
        .iter()
        .find(|(a, _)| *a == Agent::cpu(0))
        .unwrap()
        .1;
    let want_w = v
        .iter()
        .filter(|a| a.agent == Agent::cpu(0) && a.op == Op::Write)
        .count() as u64;
    assert_eq!(cpu.writes, want_w);
    let tex = s
        .streams
        .iter()
        .find(|(st, _)| *st == Stream::StaticTexture)
        .unwrap()
        .1;
    assert_eq!(
        tex.critical,
        v.iter()
            .filter(|a| a.stream == Stream::StaticTexture && a.is_critical())
            .count() as u64
    );
    let text = s.to_string();
    assert!(
        text.contains("static-texture") && text.contains("cpu0") && text.contains("bytes/record")
    );
    // Every table row has the same width up to the time column.
    let rows: Vec<&str> = text.lines().filter(|l| l.contains('%')).collect();
    assert!(rows.len() >= 5);
    let w = rows[0].find("..=").unwrap();
    assert!(rows.iter().all(|r| r.find("..=").unwrap() >= w - 20));
    println!("{text}");
}
