//! ChampSim importer: raw, gzip and xz traces written by the tests themselves.

use apusim_trace::import::champsim::{encode_record, ChampSimSource, Compression, RECORD_LEN};
use apusim_trace::import::{self, Format, ImportOptions};
use apusim_trace::{collect, Access, Agent, Op, Stream, TraceError};
use std::io::Write;

fn records() -> Vec<u8> {
    let mut raw = Vec::new();
    raw.extend_from_slice(&encode_record(0x400000, &[0x1000, 0, 0x2000, 0], &[0x3000]));
    raw.extend_from_slice(&encode_record(0x400004, &[], &[]));
    raw.extend_from_slice(&encode_record(0x400008, &[0, 0, 0, 0x5000], &[0, 0x6000]));
    raw
}

fn expected(agent: Agent) -> Vec<Access> {
    let unit = agent.cpu_index().unwrap_or(0) as u16;
    let i = |ip: u64, t| {
        Access::new(agent, Stream::CpuInstr, Op::Read, ip, 4)
            .with_pc(ip)
            .with_time(t)
            .with_unit(unit)
    };
    let d = |op, a: u64, ip: u64, t| {
        Access::new(agent, Stream::CpuData, op, a, 8)
            .with_pc(ip)
            .with_time(t)
            .with_unit(unit)
    };
    vec![
        i(0x400000, 0),
        d(Op::Read, 0x1000, 0x400000, 0),
        d(Op::Read, 0x2000, 0x400000, 0),
        d(Op::Write, 0x3000, 0x400000, 0),
        i(0x400004, 1),
        i(0x400008, 2),
        d(Op::Read, 0x5000, 0x400008, 2),
        d(Op::Write, 0x6000, 0x400008, 2),
    ]
}

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn xz(data: &[u8]) -> Vec<u8> {
    let mut e = xz2::write::XzEncoder::new(Vec::new(), 6);
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn read(bytes: Vec<u8>, opts: &ImportOptions) -> apusim_trace::Result<Vec<Access>> {
    let mut s = ChampSimSource::new(std::io::Cursor::new(bytes), "t.champsimtrace", opts)?;
    collect(&mut s)
}

#[test]
fn raw_gz_xz() {
    let opts = ImportOptions {
        agent: Agent::cpu(2),
        clock_mhz: 0,
        ..ImportOptions::default()
    };
    let raw = records();
    assert_eq!(read(raw.clone(), &opts).unwrap(), expected(Agent::cpu(2)));
    assert_eq!(read(gz(&raw), &opts).unwrap(), expected(Agent::cpu(2)));
    assert_eq!(read(xz(&raw), &opts).unwrap(), expected(Agent::cpu(2)));
    // Multi-member gzip and multi-stream xz (concatenated files).
    let (a, b) = raw.split_at(RECORD_LEN);
    let mut two = gz(a);
    two.extend(gz(b));
    assert_eq!(read(two, &opts).unwrap(), expected(Agent::cpu(2)));
    let mut two = xz(a);
    two.extend(xz(b));
    assert_eq!(read(two, &opts).unwrap(), expected(Agent::cpu(2)));
    assert!(read(Vec::new(), &opts).unwrap().is_empty());
}

#[test]
fn partial_record_names_offset() {
    let mut raw = records();
    raw.extend_from_slice(&[1, 2, 3]);
    for bytes in [raw.clone(), gz(&raw), xz(&raw)] {
        match read(bytes, &ImportOptions::default()) {
            Err(TraceError::Format { offset, msg, .. }) => {
                assert_eq!(offset, 3 * RECORD_LEN as u64);
                assert!(
                    msg.contains("partial record") && msg.contains("found 3"),
                    "{msg}"
                );
            }
            other => panic!("expected a format error, got {other:?}"),
        }
    }
}

#[test]
fn corrupt_compressed_is_an_error() {
    let mut bad = gz(&records());
    let n = bad.len();
    bad[n / 2] ^= 0xff;
    bad[n - 6] ^= 0xff; // the CRC/length trailer
    assert!(read(bad, &ImportOptions::default()).is_err());
    let mut bad = xz(&records());
    let n = bad.len();
    bad[n / 2] ^= 0xff;
    assert!(read(bad, &ImportOptions::default()).is_err());
    let good = gz(&records());
    assert!(read(good[..good.len() - 4].to_vec(), &ImportOptions::default()).is_err());
}

#[test]
fn detection_and_open() {
    let dir = tempfile::tempdir().unwrap();
    let raw = records();
    let cases = [
        ("t.champsimtrace", raw.clone(), Compression::None),
        ("t.trace.gz", gz(&raw), Compression::Gzip),
        ("t.trace.xz", xz(&raw), Compression::Xz),
        ("noext", raw.clone(), Compression::None),
    ];
    for (name, bytes, comp) in cases {
        let p = dir.path().join(name);
        std::fs::write(&p, &bytes).unwrap();
        assert_eq!(Format::detect(&p).unwrap(), Format::ChampSim, "{name}");
        let s = ChampSimSource::open(&p, &ImportOptions::default()).unwrap();
        assert_eq!(s.compression(), comp);
        let mut src = import::open(&p, None, &ImportOptions::default()).unwrap();
        assert_eq!(
            collect(&mut src).unwrap(),
            expected(Agent::cpu(0)),
            "{name}"
        );
    }
}

#[test]
fn large_trace_batches() {
    let mut raw = Vec::new();
    for k in 0..5000u64 {
        raw.extend_from_slice(&encode_record(
            0x400000 + 4 * k,
            &[0x1000 + k * 8, 0x9000, 0x1, 0x2],
            &[0x3000, 0x4],
        ));
    }
    let mut s = ChampSimSource::new(
        std::io::Cursor::new(gz(&raw)),
        "big",
        &ImportOptions::default(),
    )
    .unwrap();
    let mut b = Vec::new();
    let mut n = 0;
    while apusim_trace::AccessSource::next_batch(&mut s, &mut b).unwrap() {
        assert!(b.len() <= apusim_trace::BATCH);
        n += b.len();
        b.clear();
    }
    assert_eq!(n, 5000 * 7);
    assert_eq!(s.instructions(), 5000);
}
