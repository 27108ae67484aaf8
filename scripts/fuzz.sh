#!/usr/bin/env bash
# Run apusim's fuzz targets (fuzz/fuzz_targets/) under AddressSanitizer, SECONDS each.
#
#   scripts/fuzz.sh SECONDS [TARGET...]      # no TARGET: every target, one after the other
#   scripts/fuzz.sh --runs N [TARGET...]     # each target until it has run N inputs
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). Builds with
# cargo-fuzz's defaults (AddressSanitizer, optimized, debug assertions on), then runs each
# target with the committed seeds of fuzz/corpus/<target>/ plus a working corpus kept in
# fuzz/target/corpus/<target>/ (new inputs go there, so the committed seeds stay small).
# Everything runs under `nice -n 19`. Prints one line per target: executions, executions per
# second, and `ok` or the crash/timeout/leak input written to fuzz/artifacts/<target>/.
# Exits non-zero if any target found something.
#
# Environment: FUZZ_TIMEOUT (seconds one input may take before it counts as a hang, default
# 10), FUZZ_RSS_MB (memory limit, default 2048), FUZZ_LOG_DIR (full libFuzzer logs, default
# fuzz/target/logs).
set -euo pipefail

usage() {
    echo "usage: $0 SECONDS [TARGET...]  or  $0 --runs N [TARGET...]  (SECONDS, N: positive whole numbers)" >&2
    exit 2
}
# The stopping rule passed to libFuzzer: a time budget, or a number of inputs run.
if [[ ${1:-} == --runs ]]; then
    [[ $# -ge 2 && $2 =~ ^[0-9]+$ && $2 -gt 0 ]] || usage
    limit="-runs=$2"
    shift 2
else
    [[ $# -ge 1 && $1 =~ ^[0-9]+$ && $1 -gt 0 ]] || usage
    limit="-max_total_time=$1"
    shift
fi
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/fuzz"

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "$0: needs cargo-fuzz on the nightly toolchain: cargo install cargo-fuzz" >&2
    exit 2
fi

mapfile -t all < <(cargo +nightly fuzz list)
if [[ $# -gt 0 ]]; then
    targets=("$@")
    for t in "${targets[@]}"; do
        if ! printf '%s\n' "${all[@]}" | grep -qx -- "$t"; then
            echo "$0: unknown target \`$t\` (known: ${all[*]})" >&2
            exit 2
        fi
    done
else
    targets=("${all[@]}")
fi

logs=${FUZZ_LOG_DIR:-$root/fuzz/target/logs}
mkdir -p "$logs"
# cargo-fuzz's own target directory (fuzz/target), whatever the caller's CARGO_TARGET_DIR.
unset CARGO_TARGET_DIR
nice -n 19 cargo +nightly fuzz build 2>&1 | tail -n 3 >&2 || {
    echo "$0: build failed" >&2
    exit 1
}

status=0
printf '%-16s %14s %10s  %s\n' target executions exec/s result
for t in "${targets[@]}"; do
    work="$root/fuzz/target/corpus/$t"
    mkdir -p "$work" "$root/fuzz/corpus/$t"
    log="$logs/$t.log"
    rc=0
    nice -n 19 cargo +nightly fuzz run "$t" "$work" "$root/fuzz/corpus/$t" -- \
        "$limit" -timeout="${FUZZ_TIMEOUT:-10}" \
        -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -print_final_stats=1 >"$log" 2>&1 || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    if [[ $rc -eq 0 ]]; then
        result=ok
    else
        status=1
        found=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
        result="FAILED (exit $rc) ${found:-see $log}"
    fi
    printf '%-16s %14s %10s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$result"
done
exit $status
