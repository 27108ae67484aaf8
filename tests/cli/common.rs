//! What the command-line tests share: the `apusim` binary run as a user runs it, and small
//! trace files of the demo's agents.

use apusim_trace::apt::AptWriter;
use apusim_trace::{AccessSource, TraceHeader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Run `apusim` with `args` and the environment variables `env` added.
pub fn apusim_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_apusim"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// Run `apusim` with `args`.
pub fn apusim(args: &[&str]) -> Output {
    apusim_env(args, &[])
}

/// The stdout of a command that must succeed.
pub fn ok(args: &[&str]) -> String {
    let o = apusim(args);
    assert!(
        o.status.success(),
        "apusim {args:?}: {}{}",
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The stdout and stderr of a command that must fail without panicking.
pub fn fails_output(args: &[&str]) -> (String, String) {
    let o = apusim(args);
    let (out, err) = (
        String::from_utf8(o.stdout).unwrap(),
        String::from_utf8(o.stderr).unwrap(),
    );
    assert!(!o.status.success(), "apusim {args:?} should fail: {out}");
    assert!(!err.contains("panicked"), "apusim {args:?} panicked: {err}");
    (out, err)
}

/// The stderr of a command that must fail without panicking.
pub fn fails(args: &[&str]) -> String {
    fails_output(args).1
}

/// The demo's agents (2 CPU cores and the GPU), `n` accesses each, as one .apt per agent
/// (`agent0.apt` …) in `dir`; returns the paths.
pub fn small_traces(dir: &Path, n: usize) -> Vec<PathBuf> {
    apusim_workloads::demo_mix(2, 1, 3)
        .into_iter()
        .enumerate()
        .map(|(i, (_, mut src))| {
            let path = dir.join(format!("agent{i}.apt"));
            let header: TraceHeader = src.header().clone();
            let mut w = AptWriter::create(&path, &header).unwrap();
            let mut buf = Vec::new();
            while buf.len() < n && src.next_batch(&mut buf).unwrap() {}
            buf.truncate(n);
            w.write_all(&buf).unwrap();
            w.finish().unwrap();
            path
        })
        .collect()
}
