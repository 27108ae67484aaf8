//! valgrind lackey importer and live recording.

use apusim_trace::apt::{self, AptReader};
use apusim_trace::import::{
    self, record_with_lackey, record_with_lackey_watched, Format, ImportOptions, LackeySource,
};
use apusim_trace::{collect, Access, AccessSource, Agent, Op, Stream, TraceError};
use std::process::Command;

fn parse(text: &str) -> apusim_trace::Result<Vec<Access>> {
    let mut s = LackeySource::new(text.as_bytes(), "t.lackey", &ImportOptions::default());
    collect(&mut s)
}

const SAMPLE: &str = "\
==3827== Lackey, an example Valgrind tool
==3827== Command: /bin/true
==3827== 
 L 00001000,8
I  0401ab70,3
I  0401ab73,5
 S 1fff000778,8
I  0401b770,1
 L 1fff000770,8
 M 0402a0c8,4
--3827-- some debug line
I  0401B771,7

==3827== Exit code:       0
";

#[test]
fn maps_i_l_s_m() {
    let v = parse(SAMPLE).unwrap();
    let cpu = Agent::cpu(0);
    let d = |op, addr, size, pc, time| {
        Access::new(cpu, Stream::CpuData, op, addr, size)
            .with_pc(pc)
            .with_time(time)
    };
    let i = |addr, size, time| {
        Access::new(cpu, Stream::CpuInstr, Op::Read, addr, size)
            .with_pc(addr)
            .with_time(time)
    };
    let mut m = d(Op::Read, 0x402a0c8, 4, 0x401b770, 3);
    m.flags = Access::MODIFY;
    assert_eq!(
        v,
        vec![
            d(Op::Read, 0x1000, 8, 0, 0),
            i(0x401ab70, 3, 1),
            i(0x401ab73, 5, 2),
            d(Op::Write, 0x1fff000778, 8, 0x401ab73, 2),
            i(0x401b770, 1, 3),
            d(Op::Read, 0x1fff000770, 8, 0x401b770, 3),
            m,
            i(0x401b771, 7, 4),
        ]
    );
    assert!(m.dirties());
}

#[test]
fn agent_unit_and_clamping() {
    let opts = ImportOptions {
        agent: Agent::cpu(3),
        clock_mhz: 2000,
        ..ImportOptions::default()
    };
    let mut s = LackeySource::new("I  10,70000\n L 20,0\r\n".as_bytes(), "x", &opts);
    assert_eq!(s.header().agents[0].clock_mhz, 2000);
    let v = collect(&mut s).unwrap();
    assert_eq!(v[0].size, 65535);
    assert_eq!(v[1].size, 1);
    assert!(v.iter().all(|a| a.agent == Agent::cpu(3) && a.unit == 3));
}

#[test]
fn bad_lines_name_the_line() {
    for (text, line) in [
        ("I  0401ab70,3\nhello\n", 2),
        ("I  0401ab70,3\n X 10,8\n", 2),
        ("==1== x\n\nI  zz,3\n", 3),
        ("I  10\n", 1),
        ("I  10,3x\n", 1),
        ("I 10,3\n", 1),
        (" L 11112222333344445,8\n", 1),
        ("I  10,99999999999999999999999\n", 1),
    ] {
        match parse(text) {
            Err(TraceError::Parse { line: l, msg, path }) => {
                assert_eq!(l, line, "{text:?}: {msg}");
                assert!(path.ends_with("t.lackey"));
                assert!(msg.contains("expected"), "{msg}");
            }
            other => panic!("{text:?}: expected a parse error, got {other:?}"),
        }
    }
}

#[test]
fn batches_are_bounded() {
    let mut text = String::new();
    for k in 0..10_000u64 {
        text.push_str(&format!(
            "I  {:x},4\n L {:x},8\n",
            0x1000 + 4 * k,
            0x9000 + 8 * k
        ));
    }
    let mut s = LackeySource::new(text.as_bytes(), "x", &ImportOptions::default());
    let mut n = 0;
    let mut b = Vec::new();
    while s.next_batch(&mut b).unwrap() {
        assert!(b.len() <= apusim_trace::BATCH);
        n += b.len();
        b.clear();
    }
    assert_eq!(n, 20_000);
    assert_eq!(s.instructions(), 10_000);
}

#[test]
fn detect_and_convert_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.txt");
    std::fs::write(&path, SAMPLE).unwrap();
    assert_eq!(Format::detect(&path).unwrap(), Format::Lackey);
    let bare = dir.path().join("bare");
    std::fs::write(&bare, "I  0401ab70,3\n").unwrap();
    assert_eq!(Format::detect(&bare).unwrap(), Format::Lackey);

    let mut src = import::open(&path, None, &ImportOptions::default()).unwrap();
    let out = dir.path().join("trace.apt");
    assert_eq!(import::convert(&mut src, &out).unwrap(), 8);
    assert_eq!(Format::detect(&out).unwrap(), Format::Apt);
    let mut r = AptReader::open(&out).unwrap();
    assert_eq!(collect(&mut r).unwrap(), parse(SAMPLE).unwrap());
    assert_eq!(r.header().streams, vec![Stream::CpuInstr, Stream::CpuData]);
}

fn have_valgrind() -> bool {
    match Command::new("valgrind").arg("--version").output() {
        Ok(o) if o.status.success() => true,
        _ => {
            // CI installs valgrind (.ci/run): there a missing one is a failure, not a skip.
            assert!(
                std::env::var_os("CI").is_none(),
                "valgrind not found, and CI is set: the live lackey tests need it"
            );
            eprintln!("valgrind not found: skipping the live lackey test");
            false
        }
    }
}

#[test]
fn record_true_and_echo() {
    if !have_valgrind() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("echo.apt");
    // echo writes to stdout: it must not end up in the trace. The progress callback sees
    // every access converted, batch by batch.
    let mut seen = Vec::new();
    let n = record_with_lackey_watched(
        "/bin/echo",
        &["hello from the traced program".into()],
        &out,
        &ImportOptions::default(),
        &mut |k| seen.push(k),
    )
    .unwrap();
    assert!(n > 10_000, "{n} accesses");
    assert_eq!(seen.last(), Some(&n), "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    let s = apt::summarize(&out).unwrap();
    assert_eq!(s.records, n);
    assert_eq!(s.header.agents[0].name, "echo");
    assert!(s.header.source.contains("lackey"));
    let instr = s
        .streams
        .iter()
        .find(|(st, _)| *st == Stream::CpuInstr)
        .unwrap()
        .1;
    let data = s
        .streams
        .iter()
        .find(|(st, _)| *st == Stream::CpuData)
        .unwrap()
        .1;
    assert!(instr.records > 1000 && data.writes > 100 && data.reads > 100);
    // time counts instructions: the last instruction's time equals the instruction count.
    assert_eq!(instr.max_time, instr.records);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no stray files"
    );
}

#[test]
fn record_failures_are_reported() {
    if !have_valgrind() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.apt");
    let e = record_with_lackey("/nonexistent/program", &[], &out, &ImportOptions::default())
        .unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("127") && msg.contains("not found"), "{msg}");
    assert!(!out.exists());

    let e = record_with_lackey("/bin/false", &[], &out, &ImportOptions::default()).unwrap_err();
    assert!(e.to_string().contains("exited with status 1"), "{e}");
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no stray files"
    );
}

#[test]
fn record_c_program() {
    if !have_valgrind() {
        return;
    }
    if Command::new("cc").arg("--version").output().is_err() {
        eprintln!("cc not found: skipping the compiled-program lackey test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("p.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\nstatic volatile long a[4096];\nint main(void){long s=0;\
         for(int r=0;r<4;r++)for(int i=0;i<4096;i++){a[i]+=i;s+=a[i];}\
         printf(\"%ld\\n\",s);return 0;}\n",
    )
    .unwrap();
    let exe = dir.path().join("p");
    let st = Command::new("cc")
        .arg("-O1")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    if !st.success() {
        eprintln!("cc failed: skipping");
        return;
    }
    let out = dir.path().join("p.apt");
    record_with_lackey(exe.to_str().unwrap(), &[], &out, &ImportOptions::default()).unwrap();
    let mut r = AptReader::open(&out).unwrap();
    let v = collect(&mut r).unwrap();
    // 4 x 4096 read-modify-writes or load/store pairs on the array.
    let base = v
        .iter()
        .filter(|a| a.stream == Stream::CpuData && a.dirties())
        .count();
    assert!(base >= 4 * 4096, "{base} dirtying data accesses");
}
