//! CSV/text importer.

use apusim_trace::import::{self, CsvSource, Format, ImportOptions};
use apusim_trace::{collect, Access, AccessSource, Agent, Op, Stream, TraceError};

fn parse(text: &str) -> apusim_trace::Result<Vec<Access>> {
    let mut s = CsvSource::new(text.as_bytes(), "t.csv", &ImportOptions::default());
    collect(&mut s)
}

#[test]
fn headerless() {
    let v = parse("# a comment\n\nr,0x1000\nw 4096 4\n  load , 0x20,64\nwb,7\n").unwrap();
    let c = Agent::cpu(0);
    assert_eq!(
        v,
        vec![
            Access::new(c, Stream::CpuData, Op::Read, 0x1000, 8),
            Access::new(c, Stream::CpuData, Op::Write, 4096, 4).with_time(1),
            Access::new(c, Stream::CpuData, Op::Read, 0x20, 64).with_time(2),
            Access::new(c, Stream::CpuData, Op::Writeback, 7, 8).with_time(3),
        ]
    );
}

#[test]
fn with_header() {
    let text = "op,address,stream,agent,pc,size,time,unit,warp,critical\n\
                r,0x10,texture,gpu,0,64,100,5,3,1\n\
                w,0x20,cpu-instr,cpu1,0x400,4,7,9,0,no\n\
                prefetch 0x30 7 cpu2 0 8 1 0 0 false\n";
    let v = parse(text).unwrap();
    assert_eq!(
        v[0],
        Access::new(Agent::GPU, Stream::StaticTexture, Op::Read, 0x10, 64)
            .with_time(100)
            .with_unit(5)
            .with_warp(3)
            .critical(true)
    );
    assert_eq!(
        v[1],
        Access::new(Agent::cpu(1), Stream::CpuInstr, Op::Write, 0x20, 4)
            .with_pc(0x400)
            .with_time(7)
            .with_unit(9)
    );
    assert_eq!(v[2].stream, Stream::Color);
    assert_eq!(v[2].agent, Agent::cpu(2));
    assert_eq!(v[2].op, Op::Prefetch);

    // Subset and reordering; unit defaults to the agent's core.
    let v = parse("addr op agent\n0x40 w cpu5\n").unwrap();
    assert_eq!(
        v,
        vec![Access::new(Agent::cpu(5), Stream::CpuData, Op::Write, 0x40, 8).with_unit(5)]
    );
}

#[test]
fn bad_lines_name_line_and_expectation() {
    for (text, line, what) in [
        ("r,0x10\nx,0x20\n", 2, "op"),
        ("r,0xzz\n", 1, "address"),
        ("r,0x10,0\n", 1, "size 1..=65535"),
        ("r,0x10,8,9\n", 1, "at most 3 fields"),
        ("r\n", 1, "at least the op and address"),
        ("op,address,color\nr,1,2\n", 1, "column names"),
        ("op,op,address\n", 1, "named twice"),
        ("op,stream\n", 1, "`op` and `address`"),
        ("op,address,stream\nr,1,bogus\n", 2, "stream name"),
        ("op,address,agent\n# c\nr,1,cpu300\n", 3, "agent"),
        ("op,address,critical\nr,1,maybe\n", 2, "critical"),
        ("op,address,unit\nr,1,70000\n", 2, "unit"),
        ("r,0x10\n\u{ff}\n", 2, "op"),
    ] {
        match parse(text) {
            Err(TraceError::Parse { line: l, msg, .. }) => {
                assert_eq!(l, line, "{text:?}: {msg}");
                assert!(msg.contains(what), "{text:?}: `{msg}` lacks `{what}`");
            }
            other => panic!("{text:?}: expected a parse error, got {other:?}"),
        }
    }
    let e = parse("r,1\nw,zz\n").unwrap_err().to_string();
    assert!(e.starts_with("t.csv:2:"), "{e}");
}

#[test]
fn open_prescans_agents_and_streams() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mixed.csv");
    std::fs::write(
        &p,
        "op,address,agent,stream\nr,1,gpu,depth\nw,2,cpu1,cpu-data\nr,3,gpu,color\n",
    )
    .unwrap();
    assert_eq!(Format::detect(&p).unwrap(), Format::Csv);
    let mut s = import::open(&p, None, &ImportOptions::default()).unwrap();
    let agents: Vec<Agent> = s.header().agents.iter().map(|a| a.agent).collect();
    assert_eq!(agents, vec![Agent::cpu(1), Agent::GPU]);
    assert_eq!(
        s.header().streams,
        vec![Stream::CpuData, Stream::Depth, Stream::Color]
    );
    assert_eq!(collect(&mut s).unwrap().len(), 3);

    let p = dir.path().join("plain.txt");
    std::fs::write(&p, "r 0x10\nw 0x20\n").unwrap();
    let mut s = import::open(&p, Some(Format::Csv), &ImportOptions::default()).unwrap();
    assert_eq!(s.header().streams, vec![Stream::CpuData]);
    assert_eq!(collect(&mut s).unwrap().len(), 2);
    let out = dir.path().join("plain.apt");
    let mut s = import::open(&p, None, &ImportOptions::default()).unwrap();
    assert_eq!(import::convert(&mut s, &out).unwrap(), 2);
}

#[test]
fn empty_inputs() {
    assert!(parse("").unwrap().is_empty());
    assert!(parse("# only a comment\n\n").unwrap().is_empty());
    assert!(parse("op,address\n").unwrap().is_empty());
}
