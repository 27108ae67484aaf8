//! Validation against an independent simulator: valgrind's cachegrind.
//!
//! A small real C program is compiled, recorded with `apusim trace record` (valgrind lackey,
//! converted on the fly), and simulated by `apusim run --preset cachegrind --cachegrind` for
//! several cache geometries; the same program runs under
//! `valgrind --tool=cachegrind --cache-sim=yes` with the same geometries, and the nine counters
//! (Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw) must be identical. Skipped when valgrind or a C
//! compiler is missing, except under CI (`CI` set), where that is a failure.
//!
//! Both valgrind runs must see the same environment: the program's stack (and so the
//! instructions the dynamic loader runs and the D1 conflicts) shifts with its size, and a
//! shell sets `_` to each command's own path. The test therefore removes `_` for both.

use std::path::{Path, PathBuf};
use std::process::Command;

const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>

#define N 6000
#define M 40
static unsigned data[N];
static double a[M][M], b[M][M], c[M][M];
struct node { struct node *next; long pad[5]; };

static int cmp(const void *x, const void *y) {
    unsigned p = *(const unsigned *)x, q = *(const unsigned *)y;
    return p < q ? -1 : p > q;
}

int main(void) {
    unsigned s = 12345;
    for (int i = 0; i < N; i++) { s = s * 1103515245u + 12345u; data[i] = s >> 8; }
    qsort(data, N, sizeof data[0], cmp);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) { a[i][j] = i + j; b[i][j] = i - j; }
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) {
            double t = 0;
            for (int k = 0; k < M; k++) t += a[i][k] * b[k][j];
            c[i][j] = t;
        }
    struct node *nodes = malloc(4096 * sizeof *nodes), *head = 0;
    for (int i = 0; i < 4096; i++) {
        int k = (i * 2654435761u) % 4096;
        nodes[k].next = head; head = &nodes[k];
    }
    long sum = 0;
    for (int rep = 0; rep < 3; rep++)
        for (struct node *p = head; p; p = p->next) { p->pad[0]++; sum += p->pad[1]; }
    for (int i = 0; i < N; i += 3) sum += data[i];
    printf("%ld %f\n", sum, c[M / 2][M / 3]);
    free(nodes);
    return 0;
}
"#;

/// (I1, D1, LL) geometries in cachegrind's `size,assoc,line` notation.
const GEOMETRIES: &[(&str, &str, &str)] = &[
    ("4096,2,64", "8192,4,64", "32768,4,64"),
    ("8192,4,64", "16384,8,64", "131072,8,64"),
    ("16384,8,64", "4096,1,64", "262144,16,64"),
    ("32768,8,64", "32768,8,64", "65536,4,128"),
];

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn tools_or_skip() -> bool {
    let ok = have("valgrind") && have("cc");
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have valgrind and cc for the cachegrind validation"
        );
        eprintln!("skipping: valgrind or cc not installed");
    }
    ok
}

fn build_program(dir: &Path) -> PathBuf {
    let src = dir.join("prog.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let exe = dir.join("prog");
    let st = Command::new("cc")
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success(), "cc failed");
    exe
}

fn summary_line(text: &str) -> String {
    text.lines()
        .find(|l| l.starts_with("summary:"))
        .unwrap_or_else(|| panic!("no summary line in:\n{text}"))
        .to_string()
}

fn cachegrind(exe: &Path, dir: &Path, (i1, d1, ll): (&str, &str, &str)) -> String {
    let out = dir.join("cachegrind.out");
    let st = Command::new("valgrind")
        .args(["--tool=cachegrind", "--cache-sim=yes"])
        .arg(format!("--I1={i1}"))
        .arg(format!("--D1={d1}"))
        .arg(format!("--LL={ll}"))
        .arg(format!("--cachegrind-out-file={}", out.display()))
        .arg(exe)
        .env_remove("LD_PRELOAD")
        .env_remove("_")
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "cachegrind failed: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    summary_line(&std::fs::read_to_string(out).unwrap())
}

fn apusim(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_apusim"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "apusim {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn matches_cachegrind_exactly() {
    if !tools_or_skip() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = build_program(dir.path());
    let trace = dir.path().join("prog.apt");
    let rec = Command::new(env!("CARGO_BIN_EXE_apusim"))
        .args(["trace", "record", "-o"])
        .arg(&trace)
        .arg("--")
        .arg(&exe)
        .env_remove("LD_PRELOAD")
        .env_remove("_")
        .output()
        .unwrap();
    assert!(
        rec.status.success(),
        "record failed: {}",
        String::from_utf8_lossy(&rec.stderr)
    );
    let trace = trace.to_str().unwrap();
    for &(i1, d1, ll) in GEOMETRIES {
        let expected = cachegrind(&exe, dir.path(), (i1, d1, ll));
        let sets = [
            format!("l1i={i1}"),
            format!("l1d={d1}"),
            format!("llc={ll}"),
        ];
        let mut args = vec!["run", trace, "--preset", "cachegrind", "--cachegrind"];
        for s in &sets {
            args.extend(["--set", s.as_str()]);
        }
        let got = summary_line(&apusim(&args));
        assert_eq!(
            got, expected,
            "I1={i1} D1={d1} LL={ll}: apusim vs cachegrind"
        );
    }
}
