//! Helpers shared by the integration tests.
#![allow(dead_code)]

use apusim_trace::apt::{AptReader, AptWriter};
use apusim_trace::{collect, Access, Agent, Op, Result, Stream, TraceError, TraceHeader};

/// A realistic mixed stream: a CPU core running code (sequential fetches with branches, stack
/// and heap loads/stores) interleaved with GPU texture, colour and depth traffic.
pub fn mixed_stream(n: usize, seed: u64) -> Vec<Access> {
    let mut x = seed | 1;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut v = Vec::with_capacity(n);
    let mut pc = 0x40_1000u64;
    let mut instrs = 0u64;
    let mut gpu_time = 0u64;
    let mut tex = 0x8000_0000u64;
    let mut color = 0x9000_0000u64;
    let mut depth = 0xa000_0000u64;
    let cpu = Agent::cpu(0);
    while v.len() < n {
        let r = rnd();
        if r % 4 != 0 {
            // CPU instruction and maybe a data access.
            let size = [2u16, 3, 4, 5, 7][(r >> 8) as usize % 5];
            instrs += 1;
            v.push(
                Access::new(cpu, Stream::CpuInstr, Op::Read, pc, size)
                    .with_pc(pc)
                    .with_time(instrs),
            );
            let ipc = pc;
            pc += size as u64;
            if (r >> 12) % 8 == 0 {
                pc = 0x40_1000 + (rnd() % 0x4000);
            }
            match (r >> 16) % 8 {
                0..=2 => v.push(
                    Access::new(
                        cpu,
                        Stream::CpuData,
                        Op::Read,
                        0x7ffe_f000 + (r >> 20) % 256 * 8,
                        8,
                    )
                    .with_pc(ipc)
                    .with_time(instrs),
                ),
                3 => v.push(
                    Access::new(
                        cpu,
                        Stream::CpuData,
                        Op::Write,
                        0x7ffe_f000 + (r >> 20) % 256 * 8,
                        8,
                    )
                    .with_pc(ipc)
                    .with_time(instrs),
                ),
                4 => v.push(
                    Access::new(
                        cpu,
                        Stream::CpuData,
                        Op::Read,
                        0x60_0000 + (r >> 24) % 0x10_0000,
                        4,
                    )
                    .with_pc(ipc)
                    .with_time(instrs),
                ),
                _ => {}
            }
        } else {
            gpu_time += 1 + (r >> 8) % 3;
            let unit = ((r >> 12) % 16) as u16;
            let (stream, addr, op) = match (r >> 20) % 4 {
                0 | 1 => {
                    tex += 64;
                    (Stream::StaticTexture, tex, Op::Read)
                }
                2 => {
                    color += 64;
                    (Stream::Color, color, Op::Write)
                }
                _ => {
                    depth += 64;
                    (
                        Stream::Depth,
                        depth,
                        if r >> 40 & 1 == 0 {
                            Op::Read
                        } else {
                            Op::Write
                        },
                    )
                }
            };
            v.push(
                Access::new(Agent::GPU, stream, op, addr, 64)
                    .with_time(gpu_time)
                    .with_unit(unit)
                    .critical(stream == Stream::StaticTexture && (r >> 30) % 2 == 0),
            );
        }
    }
    v.truncate(n);
    v
}

pub fn header_for(v: &[Access]) -> TraceHeader {
    TraceHeader::describing(v, "test")
}

pub fn encode(v: &[Access]) -> Vec<u8> {
    let mut w = AptWriter::new(Vec::new(), &header_for(v)).unwrap();
    w.write_all(v).unwrap();
    w.finish().unwrap()
}

/// [`encode`] in `.apt` format `version`.
pub fn encode_version(v: &[Access], version: u32) -> Vec<u8> {
    let mut w =
        AptWriter::with_format_version(Vec::new(), "mem.apt", &header_for(v), version).unwrap();
    w.write_all(v).unwrap();
    w.finish().unwrap()
}

pub fn decode(bytes: &[u8]) -> Result<Vec<Access>> {
    let mut r = AptReader::with_name(bytes, "mem.apt")?;
    collect(&mut r)
}

/// Assert `r` is a Format error whose message contains `what`; returns its offset.
pub fn expect_format<T: std::fmt::Debug>(r: Result<T>, what: &str) -> u64 {
    match r {
        Err(TraceError::Format { offset, msg, .. }) => {
            assert!(
                msg.contains(what),
                "message `{msg}` does not mention `{what}`"
            );
            offset
        }
        other => panic!("expected a format error about `{what}`, got {other:?}"),
    }
}
