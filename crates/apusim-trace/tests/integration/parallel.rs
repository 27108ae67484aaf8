//! The read-ahead reader (`ParallelAptReader`) against the sequential `AptReader`: the same
//! batches, the same counters and the same errors, whatever the number of decoder threads and
//! wherever a file is damaged.

use crate::common;

use apusim_trace::apt::{AptReader, ParallelAptReader, BLOCK_RECORDS, OLDEST_VERSION, VERSION};
use apusim_trace::{Access, AccessSource};
use std::io::Cursor;

/// Every batch a source hands out, and the error that ended it (as text), if any.
type Outcome = (Vec<Vec<Access>>, Option<String>);

fn drain(src: &mut dyn AccessSource) -> Outcome {
    let mut batches = Vec::new();
    loop {
        let mut b = Vec::new();
        match src.next_batch(&mut b) {
            Ok(true) => batches.push(b),
            Ok(false) => return (batches, None),
            Err(e) => return (batches, Some(e.to_string())),
        }
    }
}

fn sequential(bytes: &[u8]) -> Outcome {
    match AptReader::with_name(bytes, "t.apt") {
        Ok(mut r) => drain(&mut r),
        Err(e) => (Vec::new(), Some(e.to_string())),
    }
}

fn parallel(bytes: &[u8], workers: usize) -> Outcome {
    match ParallelAptReader::with_name(Cursor::new(bytes.to_vec()), "t.apt", workers) {
        Ok(mut r) => drain(&mut r),
        Err(e) => (Vec::new(), Some(e.to_string())),
    }
}

/// Assert both readers agree on `bytes`; returns the sequential outcome.
fn assert_same(bytes: &[u8], workers: usize, what: &str) -> Outcome {
    let want = sequential(bytes);
    let got = parallel(bytes, workers);
    assert_eq!(got.1, want.1, "{what}: errors differ ({workers} workers)");
    assert_eq!(got.0.len(), want.0.len(), "{what}: batch counts differ");
    assert!(
        got.0 == want.0,
        "{what}: batch contents differ ({workers} workers)"
    );
    want
}

/// xorshift64, for reproducible damage positions.
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

#[test]
fn same_batches_and_counters_as_sequential() {
    let v = common::mixed_stream(4 * BLOCK_RECORDS + 1234, 7);
    let bytes = common::encode(&v);
    for workers in [1, 2, 3, 8] {
        let (batches, err) = assert_same(&bytes, workers, "intact trace");
        assert_eq!(err, None);
        assert_eq!(batches.concat(), v);
    }
    let mut seq = AptReader::with_name(&bytes[..], "t.apt").unwrap();
    let mut par = ParallelAptReader::with_name(Cursor::new(bytes.clone()), "t.apt", 2).unwrap();
    assert_eq!(par.header(), seq.header());
    drain(&mut seq);
    drain(&mut par);
    assert_eq!(par.blocks_read(), 5);
    assert_eq!(par.blocks_read(), seq.blocks_read());
    assert_eq!(par.records_read(), seq.records_read());
    assert_eq!(par.raw_bytes(), seq.raw_bytes());
    // After the end (and after an error) both keep answering the same way.
    let mut b = Vec::new();
    assert!(!par.next_batch(&mut b).unwrap());
}

#[test]
fn empty_trace() {
    let bytes = common::encode(&[]);
    let (batches, err) = assert_same(&bytes, 2, "empty trace");
    assert!(batches.is_empty() && err.is_none());
}

#[test]
fn same_errors_on_damaged_containers() {
    // Three blocks; damage anywhere in the file (header, block headers, payloads, trailer),
    // and cuts at any length.
    let v = common::mixed_stream(2 * BLOCK_RECORDS + 5000, 11);
    let bytes = common::encode(&v);
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    for case in 0..60 {
        let mut bad = bytes.clone();
        let at = (next(&mut x) % bad.len() as u64) as usize;
        bad[at] ^= (next(&mut x) % 255 + 1) as u8;
        let (_, err) = assert_same(&bad, 1 + case % 3, &format!("byte {at} flipped"));
        assert!(err.is_some(), "byte {at} flipped went unnoticed");
    }
    for case in 0..30 {
        let cut = (next(&mut x) % bytes.len() as u64) as usize;
        let (_, err) = assert_same(&bytes[..cut], 1 + case % 3, &format!("cut at {cut}"));
        assert!(err.is_some(), "cut at {cut} went unnoticed");
    }
}

/// Rewrite block `k` of an `.apt` file with its decompressed data passed through `damage`,
/// recompressed and given a valid CRC, so that the damage reaches the record decoder.
fn damage_block(bytes: &[u8], k: usize, damage: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let word = |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap()) as usize;
    let mut at = 16 + word(bytes, 12) + 4;
    for _ in 0..k {
        at += 20 + word(bytes, at + 12);
    }
    assert_eq!(&bytes[at..at + 4], b"APTB");
    let (raw_len, comp_len) = (word(bytes, at + 8), word(bytes, at + 12));
    let payload = &bytes[at + 20..at + 20 + comp_len];
    let mut raw = zstd::bulk::decompress(payload, raw_len).unwrap();
    damage(&mut raw);
    let comp = zstd::bulk::compress(&raw, 3).unwrap();
    let mut out = bytes[..at].to_vec();
    out.extend_from_slice(b"APTB");
    out.extend_from_slice(&bytes[at + 4..at + 8]);
    out.extend_from_slice(&(raw.len() as u32).to_le_bytes());
    out.extend_from_slice(&(comp.len() as u32).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&comp).to_le_bytes());
    out.extend_from_slice(&comp);
    out.extend_from_slice(&bytes[at + 20 + comp_len..]);
    out
}

#[test]
fn same_batches_then_same_error_on_damaged_records() {
    for version in OLDEST_VERSION..=VERSION {
        same_batches_then_same_error_on_damaged_records_of(version);
    }
}

/// Damage inside a block's records (valid CRC) of a format-`version` trace: both readers hand
/// out the batches decoded before the failing one, then the same error.
fn same_batches_then_same_error_on_damaged_records_of(version: u32) {
    let v = common::mixed_stream(3 * BLOCK_RECORDS, 13);
    let bytes = common::encode_version(&v, version);
    let mut x = 0x9e37_79b9_7f4a_7c15_u64;
    let mut partial = 0;
    for case in 0..40 {
        let k = case % 3;
        let r = next(&mut x);
        let bad = damage_block(&bytes, k, |raw| {
            let at = 44 + (r % (raw.len() as u64 - 44)) as usize;
            raw[at] = (r >> 40) as u8;
        });
        let (batches, err) = assert_same(&bad, 1 + case % 2, &format!("block {k} damaged"));
        if err.is_some() && batches.len() > k * BLOCK_RECORDS / apusim_trace::BATCH {
            partial += 1;
        }
    }
    // Also a column table that does not add up, and a block cut short of its columns.
    let bad = damage_block(&bytes, 1, |raw| raw[0] ^= 1);
    assert!(assert_same(&bad, 2, "column table").1.is_some());
    let bad = damage_block(&bytes, 2, |raw| raw.truncate(raw.len() - 3));
    assert!(assert_same(&bad, 2, "short block").1.is_some());
    assert!(
        partial > 0,
        "no damage case failed after handing out part of a block"
    );
}

#[test]
fn dropping_early_stops_the_threads() {
    let v = common::mixed_stream(6 * BLOCK_RECORDS, 17);
    let bytes = common::encode(&v);
    for workers in [1, 4] {
        let mut r =
            ParallelAptReader::with_name(Cursor::new(bytes.clone()), "t.apt", workers).unwrap();
        let mut taken = 0;
        while taken <= BLOCK_RECORDS {
            let mut b = Vec::new();
            assert!(r.next_batch(&mut b).unwrap());
            assert_eq!(b[..], v[taken..taken + b.len()]);
            taken += b.len();
        }
        assert!(r.read_ahead_started());
        drop(r); // joins the scanner and the workers; a hang here fails the test by timeout
    }
}

/// A reader that stops within the first block never starts its threads, so it decodes only
/// the batches it hands out; the threads start when it asks for the second block.
#[test]
fn read_ahead_starts_after_the_first_block() {
    let v = common::mixed_stream(3 * BLOCK_RECORDS, 19);
    let bytes = common::encode(&v);
    let mut r = ParallelAptReader::with_name(Cursor::new(bytes), "t.apt", 2).unwrap();
    let mut taken = 0;
    while taken < BLOCK_RECORDS {
        let mut b = Vec::new();
        assert!(r.next_batch(&mut b).unwrap());
        taken += b.len();
        assert!(!r.read_ahead_started(), "threads started at record {taken}");
    }
    assert_eq!(r.records_read(), BLOCK_RECORDS as u64);
    assert_eq!(r.blocks_read(), 1);
    let mut b = Vec::new();
    assert!(r.next_batch(&mut b).unwrap());
    assert!(r.read_ahead_started());
    assert_eq!(b[..], v[taken..taken + b.len()]);
    assert_eq!(r.blocks_read(), 2);
}
