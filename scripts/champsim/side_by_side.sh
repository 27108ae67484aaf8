#!/usr/bin/env bash
# apusim sim and ChampSim side by side on identical ChampSim traces.
#
# Generates the traces with `apusim gen champsim` (stream, chase, loop), runs every ChampSim
# binary (LLC policies lru, srrip, drrip, ship) and `apusim sim --preset champsim` with the
# same warm-up and instruction counts, one process at a time, and writes a table of IPC and
# LLC MPKI for both tools plus wall-clock time and instructions per second of each (the
# speed ratio). apusim runs each policy twice where they differ: as published (srrip, drrip,
# ship-pc) and as ChampSim's modules run it (champsim-rrip: ChampSim's srrip, drrip and ship
# never update on fills; see crates/apusim-cache/src/policies/champsim_rrip.rs).
#
# Usage: side_by_side.sh [OUT_DIR]   (default ${TMPDIR:-/tmp}/apusim-champsim)
# Environment:
#   APUSIM        apusim binary (default: target/release/apusim of this checkout)
#   CHAMPSIM_BIN  directory of the champsim-{lru,srrip,drrip,ship} binaries
#                 (default ${TMPDIR:-/tmp}/champsim-build/ChampSim/bin; build.sh makes them)
#   KINDS         trace kinds to run (default "stream chase loop")
#   POLICIES      ChampSim LLC policies to run (default "lru srrip drrip ship")
#   REUSE=1       reuse ChampSim results already in OUT_DIR (same trace, counts, binary)
#   REFERENCE     also write ChampSim's numbers to this JSON file (the test reference,
#                 crates/apusim-sim/tests/data/champsim/reference.json)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-${TMPDIR:-/tmp}/apusim-champsim}
apusim=${APUSIM:-$root/target/release/apusim}
bin=${CHAMPSIM_BIN:-${TMPDIR:-/tmp}/champsim-build/ChampSim/bin}
kinds=${KINDS:-stream chase loop}
policies=${POLICIES:-lru srrip drrip ship}
mkdir -p "$out"

[ -x "$apusim" ] || { echo "no apusim binary at $apusim (cargo build --release)" >&2; exit 1; }
for p in $policies; do
  [ -x "$bin/champsim-$p" ] || { echo "no $bin/champsim-$p (run scripts/champsim/build.sh)" >&2; exit 1; }
done

# Per kind: warm-up and measured instructions. Warm-ups cover at least one full pass over
# the working set (stream: 65536 lines x 19 instructions = 1.25M; chase: 65536 lines x 10 =
# 0.66M), measured windows at least one more. The trace has 100K spare instructions, so
# neither tool reaches its end (ChampSim would restart the trace).
counts() {
  case $1 in
    stream) echo "1500000 2500000" ;;
    chase) echo "1400000 1400000" ;;
    loop) echo "1000000 2000000" ;;
    *) echo "unknown kind $1" >&2; exit 1 ;;
  esac
}
# apusim's policy as published for each ChampSim LLC policy (ChampSim's ship is SHiP-PC),
# and the policy that behaves as ChampSim's module does.
apusim_policy() {
  case $1 in
    ship) echo ship-pc ;;
    *) echo "$1" ;;
  esac
}
apusim_as_champsim() {
  case $1 in
    lru) echo lru ;;
    *) echo champsim-rrip ;;
  esac
}

now() { date +%s.%N; }

for k in $kinds; do
  read -r warm sim < <(counts "$k")
  trace="$out/$k.champsimtrace.xz"
  if [ ! -f "$trace" ] || [ "${REUSE:-0}" != 1 ]; then
    "$apusim" gen champsim --kind "$k" --instructions $((warm + sim + 100000)) --seed 1 -o "$trace"
  fi
  for p in $policies; do
    cs_json="$out/champsim-$k-$p.json"
    cs_time="$out/champsim-$k-$p.time"
    if [ "${REUSE:-0}" = 1 ] && [ -s "$cs_json" ] && [ -s "$cs_time" ]; then
      echo "reusing $cs_json"
    else
      echo "ChampSim $p on $k ($warm + $sim instructions)"
      t0=$(now)
      "$bin/champsim-$p" --warmup-instructions "$warm" --simulation-instructions "$sim" \
        --json "$cs_json" "$trace" > "$out/champsim-$k-$p.txt"
      t1=$(now)
      echo "$t0 $t1" | awk '{printf "%.3f\n", $2 - $1}' > "$cs_time"
    fi
    for ap in $(apusim_policy "$p") $(apusim_as_champsim "$p"); do
      [ -s "$out/apusim-$k-$ap.json" ] && [ "$out/apusim-$k-$ap.json" -nt "$apusim" ] \
        && [ "$out/apusim-$k-$ap.json" -nt "$trace" ] && continue
      echo "apusim sim $ap on $k"
      t0=$(now)
      "$apusim" sim --preset champsim --policy "$ap" --warmup "$warm" --instructions "$sim" \
        --json "$out/apusim-$k-$ap.json" "$trace" > "$out/apusim-$k-$ap.txt"
      t1=$(now)
      echo "$t0 $t1" | awk '{printf "%.3f\n", $2 - $1}' > "$out/apusim-$k-$ap.time"
    done
  done
done

python3 "$here/side_by_side_table.py" "$out" "$kinds" "$policies" "${REFERENCE:-}"
