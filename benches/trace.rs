//! Trace I/O throughput: `.apt` decode and encode of a realistic mixed CPU+GPU stream, and the
//! lackey, ChampSim and libCacheSim (`oracleGeneral`, `oracleGeneralOpNS`) importers. Throughput is reported in accesses per second.
//!
//! Run with `cargo bench --bench trace`. The acceptance target for `.apt` decoding is
//! ≥ 50 M records/s; `decode_mixed_parallel/2` measures it with the read-ahead reader that the
//! CLI uses, `decode_mixed` and `decode_lackey_true` give the one-core rate.
//!
//! Every benchmark runs twice: in the `apt`/`import` groups with criterion's wall-clock timer,
//! and in the `cpu/...` groups timed by the CPU time of the benchmark thread (Linux
//! `/proc/thread-self/schedstat`), whose throughput stays meaningful on a shared, loaded machine.

use apusim_trace::apt::{AptReader, AptWriter, ParallelAptReader};
use apusim_trace::import::champsim::{encode_record, ChampSimSource};
use apusim_trace::import::{
    record_with_lackey, ImportOptions, LackeySource, OracleGeneralOpNSRecord, OracleGeneralRecord,
    OracleGeneralSource, OracleLayout,
};
use apusim_trace::{Access, AccessSource, Op, Stream, TraceHeader, BATCH};
use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use std::io::Write as _;
use std::sync::Arc;

/// The trace crate's tests' mixed stream: a CPU core running code (2-7 byte instruction
/// fetches with branches, stack and heap loads/stores, lackey-style times and PCs) interleaved
/// 3:1 with GPU texture, colour and depth traffic (64-byte lines, 16 units, 50% critical
/// texture reads).
#[path = "../crates/apusim-trace/tests/integration/common/mod.rs"]
mod common;

fn mixed_stream(n: usize) -> Vec<Access> {
    common::mixed_stream(n, 0x9e37_79b9_7f4a_7c15)
}

fn encode(v: &[Access], header: &TraceHeader) -> Vec<u8> {
    let mut w = AptWriter::new(Vec::with_capacity(v.len() * 3), header).unwrap();
    w.write_all(v).unwrap();
    w.finish().unwrap()
}

fn drain(src: &mut dyn AccessSource) -> u64 {
    let mut batch = Vec::with_capacity(BATCH);
    let mut n = 0u64;
    let mut sum = 0u64;
    while src.next_batch(&mut batch).unwrap() {
        n += batch.len() as u64;
        sum = sum.wrapping_add(batch[batch.len() - 1].addr);
        batch.clear();
    }
    black_box(sum);
    n
}

/// CPU time consumed by the calling thread, in nanoseconds (scheduler accounting; resolution
/// one scheduler tick, which averages out over criterion's samples).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .expect("/proc/thread-self/schedstat is needed for CPU-time measurements (Linux)")
}

/// A criterion measurement: thread CPU time in nanoseconds.
struct ThreadCpuTime;

static WALL: WallTime = WallTime;

impl Measurement for ThreadCpuTime {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        thread_cpu_ns().saturating_sub(start)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        WALL.formatter()
    }
}

fn apt<M: Measurement>(c: &mut Criterion<M>, group: &str) {
    const N: usize = 1 << 21;
    let v = mixed_stream(N);
    let header = TraceHeader::describing(&v, "bench");
    let bytes = encode(&v, &header);
    eprintln!(
        "apt: {} records, {} bytes, {:.3} bytes/record",
        N,
        bytes.len(),
        bytes.len() as f64 / N as f64
    );
    let mut g = c.benchmark_group(group);
    g.throughput(Throughput::Elements(N as u64));
    g.sample_size(20);
    g.bench_function("decode_mixed", |b| {
        b.iter(|| {
            let mut r = AptReader::with_name(&bytes[..], "bench").unwrap();
            assert_eq!(drain(&mut r), N as u64);
        })
    });
    g.bench_function("encode_mixed", |b| {
        b.iter(|| black_box(encode(&v, &header).len()))
    });
    g.finish();

    // A real CPU trace, if valgrind is installed: lackey on /bin/true (the dynamic loader and
    // libc start-up, ~170 K accesses).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("true.apt");
    match record_with_lackey("/bin/true", &[], &path, &ImportOptions::default()) {
        Ok(n) => {
            let bytes = std::fs::read(&path).unwrap();
            eprintln!(
                "lackey /bin/true: {n} records, {:.3} bytes/record",
                bytes.len() as f64 / n as f64
            );
            let mut g = c.benchmark_group(group);
            g.throughput(Throughput::Elements(n));
            g.bench_function("decode_lackey_true", |b| {
                b.iter(|| {
                    let mut r = AptReader::with_name(&bytes[..], "bench").unwrap();
                    assert_eq!(drain(&mut r), n);
                })
            });
            g.finish();
        }
        Err(e) => eprintln!("skipping the lackey decode benchmark: {e}"),
    }
}

fn importers<M: Measurement>(c: &mut Criterion<M>, group: &str) {
    const N: usize = 1 << 19;
    let v = mixed_stream(N * 2);
    let mut text = Vec::new();
    let mut lines = 0u64;
    for a in v.iter().filter(|a| a.agent.is_cpu()).take(N) {
        lines += 1;
        match (a.stream, a.op) {
            (Stream::CpuInstr, _) => writeln!(text, "I  {:08x},{}", a.addr, a.size),
            (_, Op::Write) => writeln!(text, " S {:08x},{}", a.addr, a.size),
            _ => writeln!(text, " L {:08x},{}", a.addr, a.size),
        }
        .unwrap();
    }
    let mut champ = Vec::new();
    for k in 0..N as u64 / 2 {
        let src = if k % 3 == 0 {
            vec![0x7ffe_f000 + k % 64 * 8]
        } else {
            vec![]
        };
        let dst = if k % 7 == 0 {
            vec![0x60_0000 + k * 8]
        } else {
            vec![]
        };
        champ.extend_from_slice(&encode_record(0x40_0000 + 4 * k, &src, &dst));
    }
    let champ_accesses = {
        let mut s = ChampSimSource::new(
            std::io::Cursor::new(champ.clone()),
            "b",
            &ImportOptions::default(),
        )
        .unwrap();
        drain(&mut s)
    };

    // libCacheSim's binary forms: the same requests (ids spread over 40 bits, sizes 1-4096,
    // gets and sets) as 24-byte oracleGeneral and 27-byte oracleGeneralOpNS records.
    let reqs: Vec<(u64, u32, u8)> = (0..N as u64)
        .map(|k| {
            let x = k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            (
                (x >> 24) % 300_000 * 3_600_000,
                (x % 4096) as u32 + 1,
                [1, 3][k as usize % 2],
            )
        })
        .collect();
    let og: Vec<u8> = reqs
        .iter()
        .flat_map(|&(obj_id, obj_size, _)| {
            OracleGeneralRecord {
                clock_time: 0,
                obj_id,
                obj_size,
                next_access_vtime: -1,
            }
            .encode()
        })
        .collect();
    let opns: Vec<u8> = reqs
        .iter()
        .flat_map(|&(obj_id, obj_size, op)| {
            OracleGeneralOpNSRecord {
                clock_time: 0,
                obj_id,
                obj_size,
                op,
                ns: 0,
                next_access_vtime: -1,
            }
            .encode()
        })
        .collect();

    let mut g = c.benchmark_group(group);
    g.sample_size(10);
    g.throughput(Throughput::Elements(N as u64));
    for (name, layout, bytes) in [
        ("oracle_general", OracleLayout::General, &og),
        ("oracle_general_opns", OracleLayout::OpNS, &opns),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut s = OracleGeneralSource::with_layout(
                    std::io::Cursor::new(bytes.clone()),
                    "b",
                    layout,
                    &ImportOptions::default(),
                )
                .unwrap();
                assert_eq!(drain(&mut s), N as u64);
            })
        });
    }
    g.throughput(Throughput::Elements(lines));
    g.bench_function("lackey", |b| {
        b.iter(|| {
            let mut s = LackeySource::new(&text[..], "bench", &ImportOptions::default());
            assert_eq!(drain(&mut s), lines);
        })
    });
    g.throughput(Throughput::Elements(champ_accesses));
    g.bench_function("champsim_raw", |b| {
        b.iter(|| {
            let mut s = ChampSimSource::new(
                std::io::Cursor::new(champ.clone()),
                "b",
                &ImportOptions::default(),
            )
            .unwrap();
            assert_eq!(drain(&mut s), champ_accesses);
        })
    });
    g.finish();
}

/// The read-ahead reader (`ParallelAptReader`) on the synthetic mix with 1, 2 and 4 decoder
/// threads: wall clock only (its work is spread over threads, so the calling thread's CPU time
/// says nothing).
fn apt_parallel(c: &mut Criterion) {
    const N: usize = 1 << 21;
    let v = mixed_stream(N);
    let bytes: Arc<[u8]> = encode(&v, &TraceHeader::describing(&v, "bench")).into();
    let mut g = c.benchmark_group("apt");
    g.throughput(Throughput::Elements(N as u64));
    g.sample_size(20);
    for workers in [1, 2, 4] {
        g.bench_function(format!("decode_mixed_parallel/{workers}"), |b| {
            b.iter(|| {
                let input = std::io::Cursor::new(Arc::clone(&bytes));
                let mut r = ParallelAptReader::with_name(input, "bench", workers).unwrap();
                assert_eq!(drain(&mut r), N as u64);
            })
        });
    }
    g.finish();
}

fn apt_wall(c: &mut Criterion) {
    apt(c, "apt");
    apt_parallel(c);
}
fn importers_wall(c: &mut Criterion) {
    importers(c, "import");
}
fn apt_cpu(c: &mut Criterion<ThreadCpuTime>) {
    apt(c, "cpu/apt");
}
fn importers_cpu(c: &mut Criterion<ThreadCpuTime>) {
    importers(c, "cpu/import");
}

criterion_group!(benches, apt_wall, importers_wall);
criterion_group! {
    name = cpu;
    config = Criterion::default().with_measurement(ThreadCpuTime);
    targets = apt_cpu, importers_cpu
}
criterion_main!(benches, cpu);
