//! Feed every file of the fuzzing corpus (`fuzz/corpus/<target>/`) through every parser: errors
//! are fine, panics are not. This keeps the fuzzers' findings as regression tests on stable.
//!
//! Files whose name starts with `valid` must parse without error in their own target's format.
//!
//! The seed files are produced by `generate_corpus` below:
//! `APUSIM_WRITE_CORPUS=1 cargo test -p apusim-trace --test integration generate_corpus`
//! (it only writes when the variable is set; crash inputs found by the fuzzers are added by
//! hand under their own names).

use crate::common;

use apusim_trace::apt::AptWriter;
use apusim_trace::import::champsim::encode_record;
use apusim_trace::import::{check_bytes, Format};
use apusim_trace::{Agent, Stream, TraceHeader};
use std::io::Write;
use std::path::{Path, PathBuf};

const TARGETS: [(&str, Format); 4] = [
    ("apt_reader", Format::Apt),
    ("lackey", Format::Lackey),
    ("champsim", Format::ChampSim),
    ("csv", Format::Csv),
];

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus")
}

#[test]
fn corpus_never_panics() {
    let mut files = 0;
    for (target, own) in TARGETS {
        let dir = corpus_dir().join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            panic!("missing corpus directory {}", dir.display());
        };
        let mut names: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        names.sort();
        for path in names {
            let bytes = std::fs::read(&path).unwrap();
            for (_, format) in TARGETS {
                let r = check_bytes(&bytes, format, 1 << 22);
                let name = path.file_name().unwrap().to_string_lossy();
                if format == own && name.starts_with("valid") {
                    assert!(r.is_ok(), "{}: {:?}", path.display(), r.err());
                }
            }
            files += 1;
        }
    }
    assert!(files >= 20, "only {files} corpus files");
}

/// The `libcachesim` target's inputs read as that target reads them (the first byte picks
/// oracleGeneral, oracleGeneralOpNS, csv or txt, the first line is the `--lcs-params` string,
/// the rest is the trace): no panic, and the `valid` ones read to their end. The seeds are
/// hand-made (written by a few lines of Python with `zstd`), not generated below.
#[test]
fn libcachesim_corpus_never_panics_and_its_valid_seeds_read() {
    use apusim_trace::import::{open_reader, ImportOptions, LcsOptions};
    use apusim_trace::AccessSource;
    const FORMATS: [Format; 4] = [
        Format::OracleGeneral,
        Format::OracleGeneralOpNS,
        Format::LcsCsv,
        Format::LcsTxt,
    ];
    let dir = corpus_dir().join("libcachesim");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    let mut valid = 0;
    for path in &names {
        let bytes = std::fs::read(path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy();
        let (&pick, rest) = bytes.split_first().unwrap();
        let nl = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let (params, trace) = (&rest[..nl], rest.get(nl + 1..).unwrap_or(&[]));
        let read = || -> Result<u64, String> {
            let lcs: LcsOptions = std::str::from_utf8(params)
                .map_err(|e| e.to_string())?
                .parse()?;
            let opts = ImportOptions {
                libcachesim: lcs,
                ..ImportOptions::default()
            };
            let format = FORMATS[pick as usize % FORMATS.len()];
            let mut src = open_reader(
                Box::new(std::io::Cursor::new(trace.to_vec())),
                "<fuzz>",
                format,
                &opts,
            )
            .map_err(|e| e.to_string())?;
            let (mut batch, mut n) = (Vec::new(), 0u64);
            while src.next_batch(&mut batch).map_err(|e| e.to_string())? {
                n += batch.len() as u64;
                batch.clear();
            }
            Ok(n + batch.len() as u64)
        };
        match read() {
            Ok(n) if name.starts_with("valid") => {
                assert!(n > 0, "{name}: no request read");
                valid += 1;
            }
            Err(e) if name.starts_with("valid") => panic!("{name}: {e}"),
            _ => {}
        }
    }
    assert!(
        valid >= 8 && names.len() > valid,
        "{valid} valid of {}",
        names.len()
    );
}

fn put(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), bytes).unwrap();
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

#[test]
fn generate_corpus() {
    if std::env::var_os("APUSIM_WRITE_CORPUS").is_none() {
        return;
    }
    let root = corpus_dir();

    // apt_reader
    let d = root.join("apt_reader");
    let v = common::mixed_stream(60, 9);
    let small = common::encode(&v);
    put(&d, "valid-small.apt", &small);
    put(&d, "valid-empty.apt", &common::encode(&[]));
    let h = TraceHeader::single(Agent::GPU, "g", 1200, &[Stream::Color], "corpus");
    let mut w = AptWriter::new(Vec::new(), &h).unwrap();
    w.write_all(&common::mixed_stream(3000, 4)).unwrap();
    put(&d, "valid-3000.apt", &w.finish().unwrap());
    // The previous format version (LEB128 deltas), which readers still accept.
    let mut w = AptWriter::with_format_version(Vec::new(), "corpus", &h, 1).unwrap();
    w.write_all(&common::mixed_stream(3000, 4)).unwrap();
    put(&d, "valid-v1-3000.apt", &w.finish().unwrap());
    let hlen = u32::from_le_bytes(small[12..16].try_into().unwrap()) as usize;
    let first_block = 16 + hlen + 4;
    for (name, cut) in [
        ("truncated-magic.apt", 5),
        ("truncated-header.apt", 30),
        ("truncated-block-header.apt", first_block + 10),
        ("truncated-payload.apt", first_block + 30),
        ("truncated-no-trailer.apt", small.len() - 24),
        ("truncated-trailer.apt", small.len() - 7),
    ] {
        put(&d, name, &small[..cut]);
    }
    let mut c = small.clone();
    c[first_block + 25] ^= 0x10;
    put(&d, "corrupt-payload.apt", &c);
    let mut c = small.clone();
    c[first_block + 4] = 0xff;
    put(&d, "corrupt-count.apt", &c);
    let mut c = small.clone();
    c[8] = 99;
    put(&d, "bad-version.apt", &c);
    let mut c = small.clone();
    c[20] ^= 1;
    put(&d, "bad-header-crc.apt", &c);
    put(
        &d,
        "garbage.apt",
        b"\x89APT\r\n\x1a\n\x01\x00\x00\x00\xff\xff\xff\xff",
    );

    // lackey
    let d = root.join("lackey");
    put(
        &d,
        "valid-sample.lackey",
        b"==1== Lackey\n==1== \nI  0401ab70,3\n S 1fff000778,8\nI  0401ab73,5\n L 1fff000770,8\n M 0402a0c8,4\n--1-- x\n\n==1== end\n",
    );
    put(
        &d,
        "valid-header-only.lackey",
        b"==12== Lackey, an example Valgrind tool\n",
    );
    put(&d, "bad-line.lackey", b"I  0401ab70,3\nhello world\n");
    put(&d, "bad-hex.lackey", b"I  04g1ab70,3\n");
    put(
        &d,
        "huge-size.lackey",
        b"I  10,99999999999999999999999999\n L 20,70000\n",
    );
    put(&d, "long-addr.lackey", b" L 11112222333344445555,8\n");
    put(&d, "no-newline.lackey", b"I  0401ab70,3");
    put(
        &d,
        "binary.lackey",
        &[0x49, 0x20, 0x20, 0xff, 0xfe, 0x00, 0x2c, 0x31],
    );

    // champsim
    let d = root.join("champsim");
    let mut raw = Vec::new();
    raw.extend_from_slice(&encode_record(0x400000, &[0x1000, 0, 0x2000, 0], &[0x3000]));
    raw.extend_from_slice(&encode_record(0x400004, &[], &[]));
    raw.extend_from_slice(&encode_record(0x400008, &[0, 0, 0, 0x5000], &[0, 0x6000]));
    put(&d, "valid.champsimtrace", &raw);
    put(&d, "valid.gz", &gz(&raw));
    put(&d, "valid.xz", &xz(&raw));
    let mut two = gz(&raw[..64]);
    two.extend(gz(&raw[64..]));
    put(&d, "valid-multimember.gz", &two);
    put(&d, "partial.champsimtrace", &raw[..100]);
    put(&d, "partial.gz", &gz(&raw[..100]));
    let g = gz(&raw);
    put(&d, "truncated.gz", &g[..g.len() - 5]);
    let x = xz(&raw);
    put(&d, "truncated.xz", &x[..x.len() / 2]);
    let mut c = g.clone();
    let n = c.len();
    c[n / 2] ^= 0xff;
    put(&d, "corrupt.gz", &c);
    put(&d, "magic-only.xz", &[0xfd, b'7', b'z', b'X', b'Z', 0]);

    // csv
    let d = root.join("csv");
    put(
        &d,
        "valid-headerless.csv",
        b"# comment\nr,0x1000\nw 4096 4\n\nload , 0x20,64\n",
    );
    put(
        &d,
        "valid-header.csv",
        b"op,address,stream,agent,pc,size,time,unit,warp,critical\nr,0x10,texture,gpu,0,64,100,5,3,1\nw,0x20,cpu-instr,cpu1,0x400,4,7,9,0,no\n",
    );
    put(&d, "valid-empty.csv", b"");
    put(&d, "bad-op.csv", b"r,1\nx,2\n");
    put(&d, "bad-header.csv", b"op,address,bogus\nr,1,2\n");
    put(&d, "too-many-fields.csv", b"r,1,8,9,10\n");
    put(
        &d,
        "huge-number.csv",
        b"r,0x11112222333344445555\nr,99999999999999999999999\n",
    );
    put(&d, "bad-utf8.csv", &[b'r', b',', 0xff, 0xfe, b'\n']);
}
