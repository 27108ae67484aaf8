//! The `apusim` binary on a table of bad inputs: options out of range or unparsable, unknown
//! names, malformed files of every input format, and the cases of the hardening issue. Every
//! row must end within [`DEADLINE`] with a non-zero exit code that is neither a panic (101)
//! nor a signal (an abort is SIGABRT), with no "panicked" in stderr, and with a message that
//! names the option, file (and line or byte offset) or key at fault.
//!
//! Rows that tests/cli/ already checks in more detail are not repeated here. The rows are one
//! table, so they stay in one file past 800 lines.

use apusim_trace::import::{self, Format, ImportOptions};
use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Longest a row may run: every bad input must be refused before any real work.
const DEADLINE: Duration = Duration::from_secs(20);

/// One bad input: the arguments (`{d}` stands for the directory of the fixture files), extra
/// environment variables, and what stderr must contain.
struct Row {
    args: &'static str,
    env: &'static [(&'static str, &'static str)],
    needles: &'static [&'static str],
}

const fn row(args: &'static str, needles: &'static [&'static str]) -> Row {
    Row {
        args,
        env: &[],
        needles,
    }
}

const fn env_row(
    env: &'static [(&'static str, &'static str)],
    args: &'static str,
    needles: &'static [&'static str],
) -> Row {
    Row { args, env, needles }
}

/// Options of `run`, `sim`, `demo`, `study`, `gen`, `sweep`: zero, negative, absurd and
/// unparsable values.
const OPTIONS: &[Row] = &[
    row("run {d}/ok.apt --threads 100000", &["--threads", "1024"]),
    row("sim {d}/ok.apt --threads 100000", &["--threads", "1024"]),
    row(
        "study drp-fig13 --mixes S1 --limit 10 --threads 5000",
        &["--threads", "1024"],
    ),
    row("sweep {d}/none.toml -j 5000", &["--jobs", "1024"]),
    row(
        "run {d}/ok.apt --threads 99999999999999999999999",
        &["--threads"],
    ),
    row("run {d}/ok.apt --threads=-1", &["--threads"]),
    // Without `=`, a negative value reaches the option's own check, which gives the range.
    row("run {d}/ok.apt --threads -1", &["--threads", "1 to 1024"]),
    row(
        "run --mix S1 --scale -1",
        &["--scale", "`scale`", "1..=1000"],
    ),
    row("demo --scale -3", &["--scale", "1 to 1000"]),
    row(
        "sim {d}/ok.apt --instructions -5",
        &["--instructions", "1 to 4611686018427387904"],
    ),
    row("sim {d}/ok.apt --warmup -1", &["--warmup", "0 to"]),
    row("run {d}/ok.apt --limit -1", &["--limit", "1 to"]),
    row("study drp-fig13 --limit -2", &["--limit", "1 to"]),
    row(
        "sim {d}/ok.apt --sample --sample-period -1",
        &["--sample-period", "1 to"],
    ),
    row("sim {d}/ok.apt --interval -3", &["--interval"]),
    // Cycle and instruction counts of the timed engine: at most MAX_CYCLE (2^62).
    row(
        "sim {d}/ok.apt --warmup 18446744073709551615 --instructions 5",
        &["--warmup", "4611686018427387904"],
    ),
    row(
        "sim {d}/ok.apt --instructions 4611686018427387905",
        &["--instructions", "4611686018427387904"],
    ),
    row(
        "sim {d}/ok.apt --interval 5000000000000000000cycles",
        &["--interval", "4611686018427387904"],
    ),
    row(
        "sim {d}/ok.apt --sample --sample-period 18446744073709551615",
        &["--sample-period", "4611686018427387904"],
    ),
    row(
        "sim {d}/ok.apt --set timing.watchdog_cycles=4611686018427387905",
        &["timing.watchdog_cycles", "4611686018427387904"],
    ),
    // A trace of 4 instructions behind a huge target is refused at the end of its first
    // pass (it used to be reopened without end), naming the core, the file and the numbers.
    row(
        "sim {d}/ok.apt --instructions 100000000000",
        &[
            "cpu0 (",
            "ok.apt",
            "holds 4 instructions",
            "100000000000",
            "10000",
        ],
    ),
    // The no-progress watchdog reports the stuck state: the core, its input and the cycle.
    row(
        "sim {d}/ok.apt --set timing.watchdog_cycles=1",
        &[
            "no progress",
            "timing.watchdog_cycles",
            "cpu0 (",
            "ok.apt",
            "at cycle",
        ],
    ),
    // The registry's message: the key and its declared range (`apusim describe bfs`).
    row(
        "run --mix S1 --scale 1001",
        &["--scale", "parameter `scale` = 1001: out of range 1..=1000"],
    ),
    row(
        "sim --mix S1 --scale 1000000000",
        &["--scale", "parameter `scale`", "1..=1000"],
    ),
    row(
        "run --kernel bfs --scale 0",
        &["--scale", "parameter `scale` = 0: out of range 1..=1000"],
    ),
    row(
        "sim --scene lake --scale 1001",
        &["--scale", "parameter `scale` = 1001: out of range 1..=1000"],
    ),
    row(
        "gen gpgpu bfs -o {d}/x.apt --size 4294967296",
        &[
            "--size",
            "parameter `size` = 4294967296: out of range 0..=4294967295",
        ],
    ),
    row(
        "gen render lake --width 2561",
        &["--width", "parameter `width` = 2561: out of range 1..=2560"],
    ),
    row("demo --scale 100000000", &["--scale", "1000"]),
    row(
        "study drp-fig13 --mixes S1 --scale 99999",
        &["--scale", "1000"],
    ),
    row("run --mix S1 --scale=-2", &["--scale"]),
    row("run --mix S1 --scale two", &["--scale"]),
    row("run {d}/ok.apt --limit=-1", &["--limit"]),
    row("run {d}/ok.apt --limit 1e99", &["--limit"]),
    row("run {d}/ok.apt --limit 18446744073709551616", &["--limit"]),
    row("study drp-fig13 --limit 0", &["--limit"]),
    row("sim {d}/ok.apt --instructions=-5", &["--instructions"]),
    row("sim {d}/ok.apt --instructions lots", &["--instructions"]),
    row("sim {d}/ok.apt --warmup abc", &["--warmup"]),
    row(
        "sim {d}/ok.apt --warmup 99999999999999999999999",
        &["--warmup"],
    ),
    row("sim {d}/ok.apt --interval=-3", &["--interval"]),
    row(
        "sim {d}/ok.apt --interval 99999999999999999999999",
        &["--interval"],
    ),
    row(
        "sim {d}/ok.apt --sample --sample-period 0",
        &["--sample-period"],
    ),
    row(
        "sim {d}/ok.apt --sample --sample-warmup abc",
        &["--sample-warmup"],
    ),
    row(
        "sim {d}/ok.apt --sample --sample-unit=-1",
        &["--sample-unit"],
    ),
    row(
        "run --scene lake --resolution 0x0",
        &[
            "--resolution",
            "parameter `width` = 0: out of range 1..=2560",
        ],
    ),
    row(
        "run --scene lake --resolution 99999999x99999999",
        &["--resolution", "parameter `width`", "1..=2560"],
    ),
    row(
        "run --scene lake --resolution 1280x1601",
        &[
            "--resolution",
            "parameter `height` = 1601: out of range 1..=1600",
        ],
    ),
    row("sim --scene lake --resolution 1280", &["--resolution"]),
    row("run {d}/ok.apt --gpu-read-bypass 2", &["--gpu-read-bypass"]),
    row(
        "sim {d}/ok.apt --gpu-read-bypass nan",
        &["--gpu-read-bypass"],
    ),
    row("run {d}/ok.apt --seed abc", &["--seed"]),
    row("run {d}/ok.apt --ideal nope", &["--ideal", "nope"]),
    row(
        "gen cpu mcf -o {d}/x.apt --instructions 1000000000000000000",
        &["--instructions"],
    ),
];

/// `--set KEY=VALUE` with unknown keys and bad values.
const SETTINGS: &[Row] = &[
    row("run {d}/ok.apt --set nokey=1", &["nokey"]),
    row("run {d}/ok.apt --set llc.nokey=1", &["nokey"]),
    row("run {d}/ok.apt --set cpus=abc", &["cpus"]),
    row("run {d}/ok.apt --set cpus=-1", &["cpus"]),
    row("run {d}/ok.apt --set cpus=100000", &["cpus"]),
    row("run {d}/ok.apt --set llc.banks=0", &["llc.banks"]),
    row("run {d}/ok.apt --set =5", &["--set", "empty key"]),
    row("run {d}/ok.apt --set cpu_clock_mhz=0", &["cpu_clock_mhz"]),
    // An LLC whose tag array alone exceeds the memory is refused before it is allocated
    // (it used to abort in the allocator).
    row(
        "run {d}/ok.apt --set llc=1024G,16,64",
        &["llc.geometry", "GiB"],
    ),
    row(
        "sim {d}/ok.apt --set llc=16777216G,4194304,64",
        &["llc.geometry", "GiB"],
    ),
    row("run {d}/ok.apt --set llc=64G,1,64,1", &["llc.geometry"]),
    row("run {d}/ok.apt --set l2=1x,8,64", &["cpu.l2.geometry"]),
    row("run {d}/ok.apt --set llc.policy=nope", &["nope"]),
    env_row(
        &[("APUSIM_DECODE_THREADS", "")],
        "run {d}/ok.apt",
        &["APUSIM_DECODE_THREADS"],
    ),
    env_row(
        &[("APUSIM_DECODE_THREADS", "0x4")],
        "run {d}/ok.apt",
        &["APUSIM_DECODE_THREADS"],
    ),
    env_row(
        &[("APUSIM_DECODE_THREADS", "65")],
        "sim {d}/ok.apt",
        &["APUSIM_DECODE_THREADS"],
    ),
    env_row(
        &[("APUSIM_STATUS_SECONDS", "abc")],
        "run {d}/ok.apt",
        &["APUSIM_STATUS_SECONDS", "86400"],
    ),
    env_row(
        &[("APUSIM_STATUS_SECONDS", "-1")],
        "sim {d}/ok.apt",
        &["APUSIM_STATUS_SECONDS"],
    ),
    env_row(
        &[("APUSIM_STATUS_SECONDS", "86401")],
        "run {d}/ok.apt",
        &["APUSIM_STATUS_SECONDS"],
    ),
    env_row(
        &[("APUSIM_STATUS_SECONDS", "NaN")],
        "run {d}/ok.apt",
        &["APUSIM_STATUS_SECONDS"],
    ),
];

/// Names that name nothing.
const NAMES: &[Row] = &[
    row("run --mix nope", &["nope"]),
    row("sim --scene nope", &["nope"]),
    row("sim --cpu nope", &["nope"]),
    row("study drp-fig13 --mixes nope", &["nope"]),
    row("study gspc-fig11 --scenes nope", &["nope"]),
    row("study bypass-fig8 --kernels spmv,nope", &["nope"]),
    row("study bypass-fig1 --set l1.pc.treshold=4", &["treshold"]),
    row("study nope", &["nope"]),
    row("presets nope", &["nope"]),
    row("sim {d}/ok.apt --policy nope", &["nope"]),
    // Refused even when the run would not need alone runs (one input).
    row(
        "sim {d}/ok.apt --alone-policy nope",
        &["--alone-policy", "nope"],
    ),
    row("gen cpu nope -o {d}/x.apt", &["nope"]),
    row("gen gpgpu nope -o {d}/x.apt", &["nope"]),
    row(
        "gen champsim --kind loop -o {d}/x.xz --instructions 0",
        &["--instructions", "0"],
    ),
    row("dram --preset nope {d}/ok.trace", &["nope"]),
    row("dram --set scheduler=nope {d}/ok.trace", &["nope"]),
    row(
        "dram --set tCCD_L=444780864 {d}/ok.trace",
        &["tCCD_L", "1000000"],
    ),
    row("dram --format nope {d}/ok.trace", &["--format", "nope"]),
];

/// Malformed input of every format.
const FILES: &[Row] = &[
    row("run {d}/trunc-header.apt", &["trunc-header.apt", "offset"]),
    row("run {d}/magic.apt", &["magic.apt", "offset"]),
    row("trace info {d}/flipped.apt", &["flipped.apt", "offset"]),
    row("run {d}/flipped.apt", &["flipped.apt", "offset"]),
    row(
        "oracle {d}/trunc-header.apt",
        &["trunc-header.apt", "offset"],
    ),
    row(
        "run {d}/garbage.champsimtrace",
        &["garbage.champsimtrace", "offset"],
    ),
    row("run {d}/garbage.gz", &["garbage.gz", "offset"]),
    row("run {d}/garbage.xz", &["garbage.xz", "offset"]),
    row(
        "run {d}/empty.champsimtrace",
        &["empty.champsimtrace", "no accesses"],
    ),
    row("run {d}/bad.lackey", &["bad.lackey:2"]),
    row("run {d}/op.lackey", &["op.lackey:2"]),
    row("run {d}/empty.csv", &["empty.csv", "no accesses"]),
    row(
        "sim {d}/empty.champsimtrace",
        &["empty.champsimtrace", "no instructions"],
    ),
    row("trace convert {d}/short.csv -o {d}/y.apt", &["short.csv:2"]),
    row("run /no/such/trace.apt", &["/no/such/trace.apt"]),
    // libCacheSim's binary forms cut inside a record, and its parameters, in every command
    // that reads a trace.
    row(
        "oracle {d}/cut.oracleGeneralOpNS",
        &["cut.oracleGeneralOpNS", "byte offset 27"],
    ),
    row(
        "reuse {d}/cut.oracleGeneralOpNS",
        &["cut.oracleGeneralOpNS", "byte offset 27"],
    ),
    row(
        "run {d}/cut.oracleGeneralOpNS",
        &["cut.oracleGeneralOpNS", "byte offset 27"],
    ),
    row(
        "run {d}/op.oracleGeneralOpNS",
        &["op.oracleGeneralOpNS", "byte offset 0", "op 99"],
    ),
    row(
        "oracle {d}/ok.csv --from lcs-csv --lcs-params obj-id=2",
        &["--lcs-params", "obj-id", "obj-id-col"],
    ),
    row(
        "reuse {d}/ok.csv --from lcs-csv --lcs-params obj-id-col=2,time-col=2",
        &["--lcs-params", "time-col", "obj-id-col"],
    ),
    row(
        "sim {d}/ok.csv --lcs-params block-size=3",
        &["--lcs-params", "block-size"],
    ),
    row(
        "oracle {d}/ok.csv --from libcachesim",
        &["--from", "oracleGeneralOpNS"],
    ),
    // DRAM request traces in the three formats.
    row("dram {d}/empty.trace", &["empty.trace", "no requests"]),
    row(
        "dram {d}/comments.trace",
        &["comments.trace", "no requests"],
    ),
    row("dram {d}/addr.trace", &["addr.trace:2", "zz"]),
    row("dram {d}/order.trace", &["order.trace:2", "earlier"]),
    row("dram {d}/fields.trace", &["fields.trace:1", "fields"]),
    row("dram --format ramulator {d}/op.ram", &["op.ram:2", "XX"]),
    row("dram --format dramsim3 {d}/fields.ds3", &["fields.ds3:1"]),
    row("dram --format dramsim3 {d}/op.ds3", &["op.ds3:2", "JUMP"]),
    row("dram /no/such.trace", &["/no/such.trace"]),
    // DRAM options and settings.
    row(
        "dram --format ramulator --interval=-1 {d}/ok.ram",
        &["--interval"],
    ),
    row(
        "dram --format ramulator --interval abc {d}/ok.ram",
        &["--interval"],
    ),
    row("dram --set nope=1 {d}/ok.trace", &["nope"]),
    row("dram --set tCL=abc {d}/ok.trace", &["tCL"]),
    row("dram --set queue=0 {d}/ok.trace", &["queue"]),
    row(
        "dram --set write_drain_cap=1 {d}/ok.trace",
        &["write_drain_cap"],
    ),
    // A refresh interval too short to serve a row miss between refreshes never finished.
    row(
        "dram --set tREFI=60 --set tRFC=20 {d}/ok.trace",
        &["tREFI", "tRFC"],
    ),
    // 65536 x 65536 banks per rank overflowed a 32-bit product and panicked.
    row(
        "dram --set bank_groups=65536 --set banks_per_group=65536 {d}/ok.trace",
        &["bank_groups × banks_per_group", "4294967296 banks"],
    ),
    row(
        "dram --preset {d}/dram.toml {d}/ok.trace",
        &["dram.toml", "preset"],
    ),
    // TOML system configurations.
    row(
        "run {d}/ok.apt --config {d}/syntax.toml",
        &["syntax.toml", "line 2"],
    ),
    row(
        "run {d}/ok.apt --config {d}/missing.toml",
        &["missing.toml", "name"],
    ),
    row(
        "run {d}/ok.apt --config {d}/unknown.toml",
        &["unknown.toml", "colour"],
    ),
    row(
        "sim {d}/ok.apt --config {d}/cores.toml",
        &["cores.toml", "cpus"],
    ),
    row("run {d}/ok.apt --config /no/such.toml", &["/no/such.toml"]),
];

/// Write the fixture files into `d`.
fn fixtures(d: &Path) {
    let w = |name: &str, bytes: &[u8]| std::fs::write(d.join(name), bytes).unwrap();
    w("ok.csv", b"r,0x100\nw,0x200\nr,0x1100\nr,0x2100\n");
    let mut src = import::open(
        d.join("ok.csv"),
        Some(Format::Csv),
        &ImportOptions::default(),
    )
    .unwrap();
    import::convert(&mut *src, &d.join("ok.apt")).unwrap();
    let apt = std::fs::read(d.join("ok.apt")).unwrap();
    w("trunc-header.apt", &apt[..40]);
    w("magic.apt", &apt[..5]);
    // A flipped byte in the last block's payload: caught by its checksum.
    let mut flipped = apt.clone();
    let at = flipped.len() - 30;
    flipped[at] ^= 0x5a;
    w("flipped.apt", &flipped);
    let garbage: Vec<u8> = (0..100u32).map(|i| (i * 37 % 251) as u8).collect();
    w("garbage.champsimtrace", &garbage);
    w("garbage.gz", b"\x1f\x8b\x08\x00garbage");
    w("garbage.xz", b"\xfd7zXZ\x00junk");
    w("empty.champsimtrace", b"");
    w("bad.lackey", b"I  0402d3f0,3\n L 1ffefff8,zz\n");
    w("op.lackey", b"I  0402d3f0,3\n Q 1ffefff8,8\n");
    w("empty.csv", b"");
    // One whole 27-byte oracleGeneralOpNS record (a get of object 5), then 10 bytes of the next.
    let mut opns = Vec::new();
    opns.extend_from_slice(&0u32.to_le_bytes());
    opns.extend_from_slice(&5u64.to_le_bytes());
    opns.extend_from_slice(&64u32.to_le_bytes());
    opns.push(1);
    opns.extend_from_slice(&0u16.to_le_bytes());
    opns.extend_from_slice(&(-1i64).to_le_bytes());
    let mut bad_op = opns.clone();
    bad_op[16] = 99;
    w("op.oracleGeneralOpNS", &bad_op);
    opns.extend_from_within(..10);
    w("cut.oracleGeneralOpNS", &opns);
    w("short.csv", b"r,0x100\nr\n");
    w("ok.trace", b"0x40 R 0\n0x80 R 10\n");
    w("empty.trace", b"");
    w(
        "comments.trace",
        b"# nothing but comments\n\n   # and blanks\n",
    );
    w("addr.trace", b"0x40 R 0\nzz R 1\n");
    w("order.trace", b"0x40 R 10\n0x80 R 5\n");
    w("fields.trace", b"0x40 R 0 cpu0 1 1 extra\n");
    w("ok.ram", b"LD 0x40\n");
    w("op.ram", b"LD 0x40\nXX 0x80\n");
    w("fields.ds3", b"0x40 READ 1 2\n");
    w("op.ds3", b"0x40 READ 0\n0x80 JUMP 1\n");
    w("dram.toml", b"preset = 3\n");
    w("syntax.toml", b"name = \"x\"\ncpus = [\n");
    w("missing.toml", b"cpus = 2\n");
    let preset = |extra: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_apusim"))
            .args(["presets", "4c1g"])
            .output()
            .unwrap();
        assert!(o.status.success());
        let text = String::from_utf8(o.stdout).unwrap();
        text.replacen("cpus = ", &format!("{extra}\ncpus = "), 1)
    };
    w("unknown.toml", preset("colour = \"blue\"").as_bytes());
    w(
        "cores.toml",
        preset("").replacen("cpus = 4", "cpus = 4000", 1).as_bytes(),
    );
}

/// What one run did.
struct Outcome {
    status: Option<ExitStatus>,
    stderr: String,
    elapsed: Duration,
}

/// Run `apusim` with `args` and `env`; kill it after [`DEADLINE`] (`status` is then `None`).
fn run(args: &[String], env: &[(&str, &str)]) -> Outcome {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_apusim"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read stderr on its own thread so a chatty child never blocks on a full pipe.
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = pipe.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Outcome {
        status,
        stderr: reader.join().unwrap(),
        elapsed: start.elapsed(),
    }
}

/// Why `row`'s outcome breaks the contract, or `None` if it keeps it.
fn check(row: &Row, o: &Outcome) -> Option<String> {
    let why = match o.status {
        None => format!("still running after {DEADLINE:?}"),
        Some(s) if s.code().is_none() => format!("killed by a signal ({s})"),
        Some(s) if s.success() => "exit code 0".to_string(),
        Some(s) if s.code() == Some(101) => "exit code 101 (panic)".to_string(),
        Some(s) if s.code() == Some(134) => "exit code 134 (abort)".to_string(),
        Some(_) if o.stderr.contains("panicked") => "panicked".to_string(),
        Some(_) => match row.needles.iter().find(|n| !o.stderr.contains(*n)) {
            Some(n) => format!("stderr does not name `{n}`"),
            None => return None,
        },
    };
    Some(format!(
        "apusim {} (env {:?}): {why} after {:.1?}\n{}",
        row.args, row.env, o.elapsed, o.stderr
    ))
}

#[test]
fn every_bad_input_is_refused_naming_the_culprit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fixtures(d);
    let rows: Vec<&Row> = [OPTIONS, SETTINGS, NAMES, FILES]
        .iter()
        .flat_map(|t| t.iter())
        .collect();
    let dir_str = d.to_str().unwrap();
    // Rows run a few at a time: each is a short process, mostly waiting on start-up.
    let failures: Vec<String> = std::thread::scope(|scope| {
        let chunks: Vec<_> = rows
            .chunks(rows.len().div_ceil(4))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|row| {
                            let args: Vec<String> = row
                                .args
                                .split_whitespace()
                                .map(|a| a.replace("{d}", dir_str))
                                .collect();
                            check(row, &run(&args, row.env))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(
        failures.is_empty(),
        "{} of {} bad inputs broke the contract:\n\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}

/// A `--set` key of thousands of parts built tables nested so deep that rendering the
/// configuration overflowed the stack (found by the `sim_config` fuzz target).
#[test]
fn a_set_key_nested_too_deep_is_refused() {
    let deep = format!("llc.params{}=1", ".x".repeat(20_000));
    let row = Row {
        args: "presets 4c1g --set llc.params.x.x.x…=1 (20,002 parts)",
        env: &[],
        needles: &["20002 dot-separated parts", "at most 16"],
    };
    let o = run(
        &["presets".into(), "4c1g".into(), "--set".into(), deep],
        &[],
    );
    assert_eq!(check(&row, &o), None);
    // Keys as deep as the limit still reach the configuration's own checks.
    let limit = format!("llc.params{}=1", ".x".repeat(14));
    let o = run(
        &["presets".into(), "4c1g".into(), "--set".into(), limit],
        &[],
    );
    assert!(!o.stderr.contains("dot-separated"), "{}", o.stderr);
}

/// Values of an integer registry parameter that its command-line option must refuse: one
/// that is not a number, one below and one above its declared range.
fn refused_texts(spec: &apusim_registry::ParamSpec) -> Vec<String> {
    let apusim_registry::ParamKind::Int { min, max } = spec.kind else {
        panic!("{}: workload and scene parameters are integers", spec.name)
    };
    let below = if min > 0 {
        (min - 1).to_string()
    } else {
        "-1".to_string()
    };
    vec!["x".into(), below, (max as u128 + 1).to_string()]
}

/// Every declared parameter of every workload and scene registry entry, driven out of its
/// range through the command line that takes it (`gen gpgpu|cpu|render`, `run --kernel
/// --scale`, `run --scene --resolution`): each is refused with the registry's own message,
/// naming the key, the value and the declared range. A range checked by clap alone, or a
/// parameter declared that no command line takes, fails here.
#[test]
fn every_registered_workload_parameter_is_refused_with_the_registry_message() {
    use apusim_registry::ParamSpec;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.apt").to_str().unwrap().to_string();
    let mut cases: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    let mut add = |args: Vec<String>, spec: &ParamSpec, text: &str, exact: bool| {
        let mut needles = vec![format!("parameter `{}`", spec.name), spec.range()];
        if exact {
            needles.push(format!("parameter `{}` = {text}: ", spec.name));
        }
        cases.push((args, needles));
    };
    let words = |s: String| -> Vec<String> { s.split_whitespace().map(String::from).collect() };
    for e in apusim_workloads::gpgpu::REGISTRY.iter() {
        for spec in e.params {
            for t in refused_texts(spec) {
                let args = match spec.name {
                    "scale" => words(format!("run --kernel {} --scale {t}", e.name)),
                    "size" | "sms" | "seed" => {
                        words(format!("gen gpgpu {} -o {out} --{} {t}", e.name, spec.name))
                    }
                    other => panic!("gpgpu {}: no command line takes `{other}`", e.name),
                };
                add(args, spec, &t, true);
            }
        }
    }
    for e in apusim_workloads::cpu::REGISTRY.iter() {
        for spec in e.params {
            for t in refused_texts(spec) {
                let args = match spec.name {
                    "instructions" | "size" | "core" | "seed" => {
                        words(format!("gen cpu {} -o {out} --{} {t}", e.name, spec.name))
                    }
                    other => panic!("cpu {}: no command line takes `{other}`", e.name),
                };
                add(args, spec, &t, true);
            }
        }
    }
    for e in apusim_render::builtin::REGISTRY.iter() {
        for spec in e.params {
            for t in refused_texts(spec) {
                let args = match spec.name {
                    "width" | "height" | "frames" | "seed" => words(format!(
                        "gen render {} -o {out} --{} {t}",
                        e.name, spec.name
                    )),
                    other => panic!("scene {}: no command line takes `{other}`", e.name),
                };
                add(args, spec, &t, true);
                let resolution = match spec.name {
                    "width" => format!("{t}x400"),
                    "height" => format!("640x{t}"),
                    _ => continue,
                };
                if t != "x" {
                    let args = words(format!("run --scene {} --resolution {resolution}", e.name));
                    add(args, spec, &t, false);
                }
            }
        }
    }
    let failures: Vec<String> = std::thread::scope(|scope| {
        let chunks: Vec<_> = cases
            .chunks(cases.len().div_ceil(4))
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|(args, needles)| {
                            let o = run(args, &[]);
                            let bad = match o.status {
                                Some(s) if s.success() => Some("exit code 0".to_string()),
                                None => Some("still running".to_string()),
                                _ => needles
                                    .iter()
                                    .find(|n| !o.stderr.contains(n.as_str()))
                                    .map(|n| format!("stderr does not say `{n}`")),
                            };
                            bad.map(|why| format!("apusim {}: {why}\n{}", args.join(" "), o.stderr))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(
        failures.is_empty(),
        "{} of {} out-of-range registry parameters were not refused with the registry's \
         message:\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The checker itself: a run that succeeds, one that panics and one that names the wrong
/// thing are each caught.
#[test]
fn the_checker_catches_success_panics_and_unnamed_culprits() {
    let ok = row("--version", &[]);
    assert!(check(&ok, &run(&["--version".into()], &[])).is_some());
    let unnamed = row("run /no/such/file.apt", &["--threads"]);
    let o = run(&["run".into(), "/no/such/file.apt".into()], &[]);
    assert!(check(&unnamed, &o).unwrap().contains("does not name"));
    let panicked = Outcome {
        status: o.status,
        stderr: "thread 'main' panicked at src/main.rs:1:1".into(),
        elapsed: o.elapsed,
    };
    assert!(check(&row("x", &[]), &panicked)
        .unwrap()
        .contains("panicked"));
}

/// A hierarchy whose levels shrink the wrong way is legal but runs only with a warning that
/// names the levels.
#[test]
fn levels_that_shrink_run_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    fixtures(dir.path());
    let t = dir.path().join("ok.apt").to_str().unwrap().to_string();
    for (set, needle) in [
        (
            "llc=16K,16,64",
            "the LLC (16384 bytes) is smaller than one core's cpu.l2",
        ),
        (
            "l2=16K,8,64",
            "cpu.l2 (16384 bytes) is smaller than cpu.l1d",
        ),
    ] {
        let args: Vec<String> = ["run", &t, "--set", set].map(String::from).to_vec();
        let o = run(&args, &[]);
        assert!(o.status.is_some_and(|s| s.success()), "{set}: {}", o.stderr);
        assert!(
            o.stderr.contains(&format!("warning: {needle}")),
            "{set}: {}",
            o.stderr
        );
    }
    let o = run(&["run".into(), t], &[]);
    assert!(!o.stderr.contains("warning"), "{}", o.stderr);
}

/// A run whose `--json` cannot be written after its LLC dump was complete leaves neither:
/// the dump is streamed to a reserved temporary file and committed with the other outputs.
/// The trace is a named pipe, so the test knows the run has started (and reserved its dump)
/// when the pipe opens, and removes the JSON's directory before sending the accesses.
#[cfg(unix)]
#[test]
fn a_run_whose_outputs_fail_leaves_no_llc_dump() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (dumps, jsons) = (d.join("dumps"), d.join("jsons"));
    std::fs::create_dir(&dumps).unwrap();
    std::fs::create_dir(&jsons).unwrap();
    let fifo = d.join("t.oracleGeneral");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let records: Vec<u8> = (0..20_000u64)
        .flat_map(|i| {
            import::OracleGeneralRecord {
                clock_time: 0,
                obj_id: i % 3_000,
                obj_size: 1,
                next_access_vtime: -1,
            }
            .encode()
        })
        .collect();
    let dump = dumps.join("llc.apt");
    let json = jsons.join("r.json");
    let child = Command::new(env!("CARGO_BIN_EXE_apusim"))
        // `--from`: no sniffing, which would read the pipe's first bytes.
        .args(["run", fifo.to_str().unwrap(), "--from", "oracleGeneral"])
        .args(["--policy", "lru"])
        .args(["--dump-llc-trace", dump.to_str().unwrap()])
        .args(["--json", json.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Opening the pipe waits for the run to open it, after it set up its LLC dump.
    let mut pipe = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    std::fs::remove_dir(&jsons).unwrap();
    pipe.write_all(&records).unwrap();
    drop(pipe);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("r.json") && !err.contains("panicked"), "{err}");
    let left: Vec<_> = std::fs::read_dir(&dumps)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "the failed run left {left:?}: {err}");

    // The same run with every output writable commits the dump and the JSON together.
    std::fs::create_dir(&jsons).unwrap();
    let mut apt = Vec::new();
    let plain = d.join("t2.oracleGeneral");
    std::fs::write(&plain, &records).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_apusim"))
        .args(["run", plain.to_str().unwrap(), "--policy", "lru"])
        .args(["--dump-llc-trace", dump.to_str().unwrap()])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!("wrote {}", dump.display()))
            && err.contains(&format!("wrote {}", json.display())),
        "{err}"
    );
    std::fs::File::open(&dump)
        .unwrap()
        .read_to_end(&mut apt)
        .unwrap();
    let mut src = import::open(&dump, None, &ImportOptions::default()).unwrap();
    let n = apusim_trace::collect(&mut *src).unwrap().len();
    assert!(n > 0 && !apt.is_empty());
    assert_eq!(std::fs::read_dir(&dumps).unwrap().count(), 1);
}

/// An LLC dump that cannot be written (here: the file-size limit of `ulimit -f`, with
/// `SIGXFSZ` ignored so that the write fails with `EFBIG` as on a full disk) stops the run
/// with an error naming the user's `--dump-llc-trace` path, not the temporary file the dump
/// is streamed to, and leaves nothing in the directory.
#[cfg(unix)]
#[test]
fn a_dump_that_cannot_be_written_is_named_by_the_users_path() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let dumps = d.join("dumps");
    std::fs::create_dir(&dumps).unwrap();
    // 200,000 accesses to scattered lines: an LLC stream far above the 8 KiB limit below.
    let mut x = 1u64;
    let records: Vec<u8> = (0..200_000u64)
        .flat_map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            import::OracleGeneralRecord {
                clock_time: 0,
                obj_id: (x >> 20) & 0xff_ffff,
                obj_size: 1,
                next_access_vtime: -1,
            }
            .encode()
        })
        .collect();
    let trace = d.join("t.oracleGeneral");
    std::fs::write(&trace, &records).unwrap();
    let dump = dumps.join("llc.apt");
    let o = Command::new("sh")
        .args(["-c", "trap '' XFSZ; ulimit -f 16 && exec \"$@\"", "sh"])
        .arg(env!("CARGO_BIN_EXE_apusim"))
        .args(["run", trace.to_str().unwrap(), "--policy", "lru"])
        .args(["--dump-llc-trace", dump.to_str().unwrap()])
        .stdout(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        o.status.code().is_some() && !err.contains("panicked"),
        "{err}"
    );
    assert!(
        err.contains(&format!("--dump-llc-trace {}", dump.display())),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(&dumps)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        !err.contains(".llc.apt.p"),
        "the error names a temporary file: {err}"
    );
    assert!(left.is_empty(), "the failed run left {left:?}: {err}");
}
