//! libCacheSim traces through the `apusim` binary: `oracleGeneral` (raw and `.zst`), `lcs-csv`
//! and `lcs-txt` converted with `apusim trace convert`, replayed with `apusim oracle`, and run
//! directly with `apusim run`. Miss counts are checked against a reference LRU and Belady
//! written here, independent of apusim's engine and oracle.

use crate::common;

use apusim_trace::import::OracleGeneralRecord;
use common::{fails, ok};
use std::collections::HashMap;
use std::path::Path;

/// Lines of the fully-associative test cache: `llc=1024,16,64` is one set of 16 ways.
const WAYS: usize = 16;
const LLC: &str = "llc=1024,16,64";

/// A request stream over 40 objects with some locality (a fixed LCG, no external crate): ids
/// far above 2^32 whose low 32 bits repeat (so an importer that cut ids to 32 bits would merge
/// objects and miss less), a few requests of size 0 (which libCacheSim skips).
fn requests() -> Vec<(u64, u32)> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut step = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x >> 33
    };
    let mut hot = 0u64;
    (0..3000)
        .map(|_| {
            let r = step();
            let obj = if r % 4 == 0 {
                hot = (hot + 1) % 12;
                hot
            } else {
                r % 40
            };
            let size = if r % 97 == 0 {
                0
            } else {
                1 + (r % 5000) as u32
            };
            ((obj << 40) | (obj % 7), size)
        })
        .collect()
}

/// Requests libCacheSim counts: those of non-zero size.
fn counted(reqs: &[(u64, u32)]) -> Vec<u64> {
    reqs.iter().filter(|r| r.1 > 0).map(|r| r.0).collect()
}

/// Misses of a `ways`-entry fully-associative LRU cache.
fn reference_lru(ids: &[u64], ways: usize) -> u64 {
    let mut stack: Vec<u64> = Vec::new();
    let mut misses = 0;
    for &id in ids {
        match stack.iter().position(|&x| x == id) {
            Some(i) => {
                stack.remove(i);
            }
            None => {
                misses += 1;
                if stack.len() == ways {
                    stack.remove(0);
                }
            }
        }
        stack.push(id);
    }
    misses
}

/// Misses of Belady's MIN on a `ways`-entry fully-associative cache (evict the line used
/// furthest in the future, never-again lines first).
fn reference_belady(ids: &[u64], ways: usize) -> u64 {
    let mut next = vec![usize::MAX; ids.len()];
    let mut last: HashMap<u64, usize> = HashMap::new();
    for (i, &id) in ids.iter().enumerate().rev() {
        next[i] = last.get(&id).copied().unwrap_or(usize::MAX);
        last.insert(id, i);
    }
    let mut cache: HashMap<u64, usize> = HashMap::new();
    let mut misses = 0;
    for (i, &id) in ids.iter().enumerate() {
        if let Some(n) = cache.get_mut(&id) {
            *n = next[i];
            continue;
        }
        misses += 1;
        if cache.len() == ways {
            let victim = *cache.iter().max_by_key(|(_, &n)| n).unwrap().0;
            cache.remove(&victim);
        }
        cache.insert(id, next[i]);
    }
    misses
}

/// The `next_access_vtime` field as libCacheSim's tools write it (-1: never again).
fn oracle_general(reqs: &[(u64, u32)]) -> Vec<u8> {
    let mut next = vec![-1i64; reqs.len()];
    let mut last: HashMap<u64, usize> = HashMap::new();
    for (i, r) in reqs.iter().enumerate().rev() {
        if let Some(&j) = last.get(&r.0) {
            next[i] = j as i64;
        }
        last.insert(r.0, i);
    }
    reqs.iter()
        .enumerate()
        .flat_map(|(i, r)| {
            OracleGeneralRecord {
                clock_time: i as u32 / 10,
                obj_id: r.0,
                obj_size: r.1,
                next_access_vtime: next[i],
            }
            .encode()
        })
        .collect()
}

/// The CPU read misses of `policy` in `apusim oracle`'s table.
fn misses(table: &str, policy: &str) -> u64 {
    let row = table
        .lines()
        .find(|l| l.split_whitespace().next() == Some(policy))
        .unwrap_or_else(|| panic!("no row for {policy}:\n{table}"));
    row.split_whitespace().nth(3).unwrap().parse().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn oracle_misses(apt: &Path) -> (u64, u64) {
    let out = ok(&["oracle", s(apt), "--set", LLC, "--policy", "lru,opt"]);
    (misses(&out, "lru"), misses(&out, "opt"))
}

#[test]
fn oracle_general_lru_and_belady_misses_match_a_reference() {
    let reqs = requests();
    let ids = counted(&reqs);
    let (lru, opt) = (reference_lru(&ids, WAYS), reference_belady(&ids, WAYS));
    assert!(opt < lru && lru < ids.len() as u64, "{opt} {lru}");
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("t.oracleGeneral");
    std::fs::write(&raw, oracle_general(&reqs)).unwrap();
    let zst = dir.path().join("t.oracleGeneral.zst");
    std::fs::write(
        &zst,
        zstd::encode_all(&oracle_general(&reqs)[..], 3).unwrap(),
    )
    .unwrap();
    for (input, from) in [(&raw, None), (&zst, None), (&raw, Some("oracleGeneral"))] {
        let apt = dir.path().join("t.apt");
        let mut args = vec!["trace", "convert", s(input), "-o", s(&apt)];
        if let Some(f) = from {
            args.extend(["--from", f]);
        }
        ok(&args);
        assert_eq!(oracle_misses(&apt), (lru, opt), "{}", input.display());
    }
    // `apusim oracle` replays the libCacheSim files as they are, too.
    for input in [&raw, &zst] {
        assert_eq!(oracle_misses(input), (lru, opt), "{}", input.display());
    }
    // `apusim run` reads the file directly (detected by its name): one access per counted
    // request.
    let o = common::apusim(&["run", s(&zst), "--policy", "lru"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!("simulated {} accesses", ids.len())),
        "{err}"
    );
}

#[test]
fn csv_and_txt_forms_give_the_same_misses() {
    let reqs = requests();
    let ids = counted(&reqs);
    let (lru, opt) = (reference_lru(&ids, WAYS), reference_belady(&ids, WAYS));
    let dir = tempfile::tempdir().unwrap();
    // Columns in another order than libCacheSim's usual, a header, a tab delimiter (guessed).
    let mut csv = String::from("size\ttimestamp\tkey\top\n");
    for (i, r) in reqs.iter().enumerate() {
        csv.push_str(&format!("{}\t{}\t{}\tget\n", r.1, i, r.0));
    }
    let csv_path = dir.path().join("t.csv");
    std::fs::write(&csv_path, csv).unwrap();
    let apt = dir.path().join("csv.apt");
    ok(&[
        "trace",
        "convert",
        "--from",
        "lcs-csv",
        "--lcs-params",
        "time-col=2,obj-id-col=3,obj-size-col=1,op-col=4",
        s(&csv_path),
        "-o",
        s(&apt),
    ]);
    assert_eq!(oracle_misses(&apt), (lru, opt));
    // txt has no sizes: every line counts, size-0 requests included.
    let all: Vec<u64> = reqs.iter().map(|r| r.0).collect();
    let txt: String = all.iter().map(|id| format!("{id:#x}\n")).collect();
    let txt_path = dir.path().join("t.txt");
    std::fs::write(&txt_path, txt).unwrap();
    let apt = dir.path().join("txt.apt");
    ok(&[
        "trace",
        "convert",
        "--from",
        "lcs-txt",
        s(&txt_path),
        "-o",
        s(&apt),
    ]);
    assert_eq!(
        oracle_misses(&apt),
        (reference_lru(&all, WAYS), reference_belady(&all, WAYS))
    );
}

#[test]
fn bad_libcachesim_input_is_refused_with_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.apt");
    // A record cut short: the error names the file and the record's byte offset.
    let mut data = oracle_general(&[(1, 1), (2, 1), (3, 1)]);
    data.truncate(24 * 2 + 10);
    let cut = dir.path().join("cut.oracleGeneral");
    std::fs::write(&cut, data).unwrap();
    let err = fails(&["trace", "convert", s(&cut), "-o", s(&out)]);
    assert!(
        err.contains("cut.oracleGeneral") && err.contains("byte offset 48"),
        "{err}"
    );
    // An id whose block address would overflow is refused, not wrapped.
    let big = dir.path().join("big.oracleGeneral");
    std::fs::write(&big, oracle_general(&[(1, 1), (u64::MAX, 1)])).unwrap();
    let err = fails(&["trace", "convert", s(&big), "-o", s(&out)]);
    assert!(
        err.contains("byte offset 24") && err.contains("dense-ids=true"),
        "{err}"
    );
    ok(&[
        "trace",
        "convert",
        s(&big),
        "-o",
        s(&out),
        "--lcs-params",
        "dense-ids=true",
    ]);
    // An object larger than max-obj-size (the cache's capacity, say) is refused by name.
    let sized = dir.path().join("sized.oracleGeneral");
    std::fs::write(&sized, oracle_general(&[(1, 4096), (7, 5000)])).unwrap();
    let err = fails(&[
        "trace",
        "convert",
        s(&sized),
        "-o",
        s(&out),
        "--lcs-params",
        "ignore-obj-size=false,max-obj-size=4096",
    ]);
    assert!(
        err.contains("byte offset 24") && err.contains("object 7 has 5000 bytes"),
        "{err}"
    );
    // Unknown parameters and a bad csv line.
    let err = fails(&[
        "trace",
        "convert",
        s(&big),
        "-o",
        s(&out),
        "--lcs-params",
        "colour=2",
    ]);
    assert!(
        err.contains("colour") && err.contains("obj-id-col"),
        "{err}"
    );
    let csv = dir.path().join("bad.csv");
    std::fs::write(&csv, "1,10\n2,eleven\n").unwrap();
    let err = fails(&[
        "trace",
        "convert",
        "--from",
        "lcs-csv",
        "--lcs-params",
        "obj-id-col=2",
        s(&csv),
        "-o",
        s(&out),
    ]);
    assert!(err.contains("bad.csv:2") && err.contains("eleven"), "{err}");
}

/// The libCacheSim csv form of `reqs` with columns in another order than libCacheSim's usual
/// (size, time, id, op), a header and tab delimiters, and the `--lcs-params` that read it.
fn custom_csv(reqs: &[(u64, u32)]) -> (String, &'static str) {
    let mut csv = String::from("size\ttimestamp\tkey\top\n");
    for (i, r) in reqs.iter().enumerate() {
        csv.push_str(&format!("{}\t{}\t{}\tget\n", r.1, i, r.0));
    }
    (csv, "time-col=2,obj-id-col=3,obj-size-col=1,op-col=4")
}

/// stdout of `apusim ARGS` with `--set LLC` and `extra` appended.
fn with_llc(args: &[&str], extra: &[&str]) -> String {
    let mut a = args.to_vec();
    a.extend(["--set", LLC]);
    a.extend(extra);
    ok(&a)
}

#[test]
fn every_command_reads_a_custom_csv_with_lcs_params_as_oracle_general() {
    let reqs = requests();
    let ids = counted(&reqs);
    let dir = tempfile::tempdir().unwrap();
    let og = dir.path().join("t.oracleGeneral");
    std::fs::write(&og, oracle_general(&reqs)).unwrap();
    let (text, params) = custom_csv(&reqs);
    let csv = dir.path().join("t.csv");
    std::fs::write(&csv, text).unwrap();
    let lcs = ["--from", "lcs-csv", "--lcs-params", params];

    // `apusim oracle`: the same table, with the reference counts.
    let policies = ["--policy", "lru,opt"];
    let want = with_llc(&["oracle", s(&og)], &policies);
    assert_eq!(misses(&want, "lru"), reference_lru(&ids, WAYS));
    assert_eq!(misses(&want, "opt"), reference_belady(&ids, WAYS));
    let mut args = vec!["oracle", s(&csv)];
    args.extend(lcs);
    assert_eq!(with_llc(&args, &policies), want);

    // `apusim reuse`, under OPT and LRU.
    for policy in ["opt", "lru"] {
        let want = with_llc(&["reuse", s(&og)], &["--policy", policy]);
        assert!(want.contains(&format!("{} accesses", ids.len())), "{want}");
        let mut args = vec!["reuse", s(&csv)];
        args.extend(lcs);
        assert_eq!(with_llc(&args, &["--policy", policy]), want, "{policy}");
    }

    // `apusim run`: the same counters (the JSON's input names differ, its stats do not).
    let run_json = |input: &Path, extra: &[&str], name: &str| {
        let json = dir.path().join(name);
        let mut args = vec!["run", s(input), "--policy", "lru", "--json", s(&json)];
        args.extend(extra);
        ok(&args);
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        v["results"][0]["stats"].clone()
    };
    let a = run_json(&og, &[], "og.json");
    let b = run_json(&csv, &lcs, "csv.json");
    assert_eq!(a["trace_accesses"], serde_json::json!(ids.len()), "{a}");
    assert_eq!(a, b);

    // Without the parameters the csv is not read as libCacheSim's: the options are used.
    let err = fails(&["oracle", s(&csv), "--from", "lcs-csv", "--set", LLC]);
    assert!(err.contains("obj-id-col"), "{err}");
    // And `--lcs-params` changes what is read: with object sizes kept, each request covers
    // its size in 64-byte blocks, in `oracle` and `reuse` alike.
    let blocks: u64 = reqs.iter().map(|r| (r.1 as u64).div_ceil(64)).sum::<u64>();
    let sized = [
        "--lcs-params",
        "ignore-obj-size=false,max-obj-size=8192,dense-ids=true",
    ];
    for c in ["oracle", "reuse"] {
        let out = with_llc(&[c, s(&og)], &sized);
        assert!(out.contains(&format!("{blocks} accesses")), "{c}: {out}");
    }
}

#[test]
fn a_bad_lcs_params_string_is_refused_the_same_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let og = dir.path().join("t.oracleGeneral");
    std::fs::write(&og, oracle_general(&[(1, 1), (2, 1)])).unwrap();
    let out = dir.path().join("o.apt");
    let bad = ["--lcs-params", "obj-id-colx=2"];
    let commands: [Vec<&str>; 6] = [
        vec!["run", s(&og)],
        vec!["sim", s(&og)],
        vec!["oracle", s(&og)],
        vec!["reuse", s(&og)],
        vec!["trace", "convert", s(&og), "-o", s(&out)],
        vec!["run", s(&og), "--from", "oracleGeneral"],
    ];
    let mut messages = Vec::new();
    for c in commands {
        let mut args = c.clone();
        args.extend(bad);
        let err = fails(&args);
        assert!(
            err.contains("--lcs-params")
                && err.contains("`obj-id-colx`")
                && err.contains("did you mean `obj-id-col`?"),
            "{c:?}: {err}"
        );
        messages.push(err.lines().next().unwrap_or_default().to_string());
    }
    assert!(messages.windows(2).all(|w| w[0] == w[1]), "{messages:#?}");
    assert!(!out.exists());
    // A bad value names its key, and an unknown format the known ones, in every command.
    for c in ["run", "oracle", "reuse"] {
        let err = fails(&[c, s(&og), "--lcs-params", "block-size=48"]);
        assert!(
            err.contains("block-size must be a power of two"),
            "{c}: {err}"
        );
        let err = fails(&[c, s(&og), "--from", "oracleGeneralOpN"]);
        assert!(err.contains("oracleGeneralOpNS"), "{c}: {err}");
    }
    // The parameters say how trace files are read; a built-in workload reads none.
    let err = fails(&["run", "--mix", "S1", "--lcs-params", "block-size=128"]);
    assert!(
        err.contains("--lcs-params") && err.contains("--mix"),
        "{err}"
    );
}

/// The `oracleGeneralOpNS` form of `reqs` written field by field from libCacheSim's C layout
/// (`oracleGeneralBin.h`: u32 time, u64 id, u32 size, u8 op, u16 ns, i64 next access, packed
/// little-endian, 27 bytes), with the op codes `ops` in turn and namespaces 0..3. The next
/// access of a request is the next one of its object that libCacheSim reads (size above 0),
/// so that libCacheSim's Belady, which trusts the field, is exact.
fn oracle_general_opns(reqs: &[(u64, u32)], ops: &[u8]) -> Vec<u8> {
    let mut next = vec![-1i64; reqs.len()];
    let mut last: HashMap<u64, usize> = HashMap::new();
    for (i, r) in reqs.iter().enumerate().rev() {
        if let Some(&j) = last.get(&r.0) {
            next[i] = j as i64;
        }
        if r.1 > 0 {
            last.insert(r.0, i);
        }
    }
    let mut out = Vec::with_capacity(reqs.len() * 27);
    for (i, r) in reqs.iter().enumerate() {
        out.extend_from_slice(&(i as u32 / 10).to_le_bytes());
        out.extend_from_slice(&r.0.to_le_bytes());
        out.extend_from_slice(&r.1.to_le_bytes());
        out.push(ops[i % ops.len()]);
        out.extend_from_slice(&(i as u16 % 3).to_le_bytes());
        out.extend_from_slice(&next[i].to_le_bytes());
    }
    out
}

/// libCacheSim's `cachesim`, when built beside its source (`/work/libCacheSim-src/_build`, or
/// `$APUSIM_LIBCACHESIM_CACHESIM`).
fn cachesim() -> Option<std::path::PathBuf> {
    let p = std::env::var_os("APUSIM_LIBCACHESIM_CACHESIM")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "/work/libCacheSim-src/_build/bin/cachesim".into());
    p.is_file().then_some(p)
}

/// Misses of `algo` in `cachesim`'s output for `n` requests (its miss ratio has 4 decimals,
/// exact for fewer than 5,000 requests).
fn cachesim_misses(out: &str, algo: &str, n: usize) -> u64 {
    let line = out
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some(algo))
        .unwrap_or_else(|| panic!("no {algo} line in {out}"));
    let ratio: f64 = line
        .split("miss ratio ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .and_then(|r| r.trim().parse().ok())
        .unwrap_or_else(|| panic!("no miss ratio in {line}"));
    (ratio * n as f64).round() as u64
}

#[test]
fn oracle_general_opns_gives_the_counts_of_oracle_general() {
    let reqs = requests();
    let ids = counted(&reqs);
    let (lru, opt) = (reference_lru(&ids, WAYS), reference_belady(&ids, WAYS));
    let dir = tempfile::tempdir().unwrap();
    // Reads only (nop, get, gets, read): LRU and Belady as the references.
    let reads = oracle_general_opns(&reqs, &[0, 1, 2, 12]);
    assert_eq!(reads.len(), reqs.len() * 27);
    let raw = dir.path().join("t.oracleGeneralOpNS");
    std::fs::write(&raw, &reads).unwrap();
    let zst = dir.path().join("t.oracleGeneralOpNS.zst");
    std::fs::write(&zst, zstd::encode_all(&reads[..], 3).unwrap()).unwrap();
    for input in [&raw, &zst] {
        assert_eq!(oracle_misses(input), (lru, opt), "{}", input.display());
    }
    let apt = dir.path().join("t.apt");
    ok(&["trace", "convert", s(&zst), "-o", s(&apt)]);
    assert_eq!(oracle_misses(&apt), (lru, opt));
    // Reads and writes (get, set, read, write, update): Belady's misses, reads and writes
    // together, are those of the read-only stream; a quarter of the requests are reads.
    let mixed = dir.path().join("m.oracleGeneralOpNS");
    std::fs::write(&mixed, oracle_general_opns(&reqs, &[1, 3, 12, 13, 14])).unwrap();
    let json = dir.path().join("m.json");
    with_llc(
        &["oracle", s(&mixed), "--policy", "opt", "--json", s(&json)],
        &[],
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let t = &v[0]["total"];
    let n = |k: &str| t[k].as_u64().unwrap();
    assert_eq!(n("read_misses") + n("write_misses"), opt, "{t}");
    assert_eq!(n("reads") + n("writes"), ids.len() as u64, "{t}");
    assert!(n("writes") > n("reads") && n("reads") > 0, "{t}");
    // LRU too once write hits update recency as libCacheSim's do: the preset's heterogeneous
    // write rules (on by default) leave a line's place unchanged on a write hit.
    with_llc(
        &["oracle", s(&mixed), "--policy", "lru", "--json", s(&json)],
        &["--set", "llc.gpu_write_rules=false"],
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let t = &v[0]["total"];
    let n = |k: &str| t[k].as_u64().unwrap();
    assert_eq!(n("read_misses") + n("write_misses"), lru, "{t}");
    // A delete, and a file cut inside a record, are refused with the record's offset.
    let mut del = oracle_general_opns(&reqs[..5], &[1]);
    del[27 * 3 + 16] = 9;
    let p = dir.path().join("del.oracleGeneralOpNS");
    std::fs::write(&p, &del).unwrap();
    let err = fails(&["oracle", s(&p)]);
    assert!(
        err.contains("del.oracleGeneralOpNS") && err.contains("byte offset 81"),
        "{err}"
    );
    assert!(err.contains("delete"), "{err}");
    let p = dir.path().join("cut.oracleGeneralOpNS");
    std::fs::write(&p, &reads[..27 * 7 + 26]).unwrap();
    let err = fails(&["trace", "convert", s(&p), "-o", s(&apt)]);
    assert!(
        err.contains("cut.oracleGeneralOpNS")
            && err.contains("byte offset 189")
            && err.contains("26 bytes into a 27-byte"),
        "{err}"
    );
    // libCacheSim itself, when built here: the same LRU and Belady counts on the same files.
    let Some(cachesim) = cachesim() else {
        eprintln!("libCacheSim's cachesim not built; its count check skipped");
        return;
    };
    for input in [&raw, &zst] {
        let o = std::process::Command::new(&cachesim)
            .current_dir(dir.path())
            .args([
                s(input),
                "oracleGeneralOpNS",
                "lru,belady",
                &WAYS.to_string(),
                "--ignore-obj-size",
                "1",
            ])
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success(),
            "{out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(cachesim_misses(&out, "LRU", ids.len()), lru, "{out}");
        assert_eq!(cachesim_misses(&out, "Belady", ids.len()), opt, "{out}");
    }
}
