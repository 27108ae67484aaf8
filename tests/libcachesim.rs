//! libCacheSim traces through the `apusim` binary: `oracleGeneral` (raw and `.zst`), `lcs-csv`
//! and `lcs-txt` converted with `apusim trace convert`, replayed with `apusim oracle`, and run
//! directly with `apusim run`. Miss counts are checked against a reference LRU and Belady
//! written here, independent of apusim's engine and oracle.

mod common;

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
