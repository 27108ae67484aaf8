#!/usr/bin/env bash
# Sampled against detailed timed runs, side by side (issue "Sampled timing …", validation).
#
# For each input, runs `apusim sim` in full detail and with `--sample` (default windows
# unless SAMPLE_ARGS is set), then writes a table of every core's detailed IPC, the sampled
# estimate with its 99.7% interval, whether the interval holds the detailed IPC, the
# relative error, the fraction simulated in detail and both wall-clock times.
#
# Inputs: eight SPEC CPU 2006 stand-ins alone on one core (generated with `apusim gen cpu`),
# and three drp mixes with their rendering GPU on the timed render pipeline (`--mix`).
#
# Usage: validate.sh [OUT_DIR]   (default ${TMPDIR:-/tmp}/apusim-sampling)
# Environment:
#   APUSIM        apusim binary (default: target/release/apusim of this checkout)
#   KERNELS       CPU kernels (default "mcf libquantum gcc sphinx3 lbm milc bzip2 omnetpp")
#   MIXES         mixes (default "D1 D4 Q2")
#   INSTR         instructions per kernel after a 1 M warm-up (default 20000000)
#   MIX_INSTR     instructions per core of a mix after a 500 K warm-up (default 3000000)
#   SAMPLE_ARGS   extra sampling options (default none: the built-in window sizes)
#   REUSE=1       keep detailed results already in OUT_DIR (same binary, inputs and counts)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-${TMPDIR:-/tmp}/apusim-sampling}
apusim=${APUSIM:-$root/target/release/apusim}
kernels=${KERNELS:-mcf libquantum gcc sphinx3 lbm milc bzip2 omnetpp}
mixes=${MIXES:-D1 D4 Q2}
instr=${INSTR:-20000000}
mix_instr=${MIX_INSTR:-3000000}
read -r -a sample_args <<< "${SAMPLE_ARGS:-}"
mkdir -p "$out"
[ -x "$apusim" ] || { echo "no apusim binary at $apusim (cargo build --release)" >&2; exit 1; }

now() { date +%s.%N; }
# run NAME MODE ARGS...: one run, its JSON in $out/NAME-MODE.json and its time beside it.
run() {
  local name=$1 mode=$2
  shift 2
  local extra=()
  [ "$mode" = sampled ] && extra=(--sample "${sample_args[@]}")
  if [ "$mode" = detailed ] && [ "${REUSE:-0}" = 1 ] && [ -s "$out/$name-detailed.json" ]; then
    echo "$name: detailed (reused)"
    return
  fi
  echo "$name: $mode"
  local t0 t1
  t0=$(now)
  "$apusim" sim "$@" "${extra[@]}" --no-alone --policy lru --json "$out/$name-$mode.json" > "$out/$name-$mode.txt"
  t1=$(now)
  echo "$t0 $t1" | awk '{printf "%.2f\n", $2 - $1}' > "$out/$name-$mode.time"
}

for k in $kernels; do
  trace="$out/$k.apt"
  [ -f "$trace" ] || "$apusim" gen cpu "$k" --instructions $((instr + 1100000)) -o "$trace"
  for mode in detailed sampled; do
    run "$k" "$mode" "$trace" --set cpus=1 --warmup 1000000 --instructions "$instr"
  done
done
for m in $mixes; do
  for mode in detailed sampled; do
    run "$m" "$mode" --mix "$m" --warmup 500000 --instructions "$mix_instr" --cache-dir "$out/cache"
  done
done

python3 - "$out" $kernels $mixes <<'PY'
import json, sys
out, names = sys.argv[1], sys.argv[2:]
rows, inside, total, errs = [], 0, 0, []
for n in names:
    d = json.load(open(f"{out}/{n}-detailed.json"))[0]
    s = json.load(open(f"{out}/{n}-sampled.json"))[0]
    td = float(open(f"{out}/{n}-detailed.time").read())
    ts = float(open(f"{out}/{n}-sampled.time").read())
    sm = s["sampling"]
    for c, e in zip(d["cores"], sm["cores"]):
        ipc = c["ipc"]
        est = e["ipc"]
        if est is None:
            rows.append(f"| {n} | {c['agent']} | {ipc:.4f} | too few windows ({e['windows']}) | – | – | {e['windows']} | {sm['detailed_fraction']:.3f} | {td:.1f} | {ts:.1f} |")
            total += 1
            continue
        ok = abs(ipc - est["value"]) <= est["half_width"]
        inside += ok
        total += 1
        err = abs(est["value"] - ipc) / ipc if ipc else 0.0
        errs.append(err)
        rows.append(f"| {n} | {c['agent']} | {ipc:.4f} | {est['value']:.4f} ± {est['half_width']:.4f} | {'yes' if ok else 'no'} | {100*err:.2f}% | {e['windows']} | {sm['detailed_fraction']:.3f} | {td:.1f} | {ts:.1f} |")
text = ["| input | core | detailed IPC | sampled IPC (99.7%) | inside | error | windows | detailed fraction | detailed s | sampled s |",
        "|---|---|---|---|---|---|---|---|---|---|"] + rows
text.append("")
text.append(f"{inside} of {total} intervals hold the detailed IPC; mean error {100*sum(errs)/max(len(errs),1):.2f}%.")
open(f"{out}/validation.md", "w").write("\n".join(text) + "\n")
print("\n".join(text))
PY
