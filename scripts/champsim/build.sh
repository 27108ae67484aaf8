#!/usr/bin/env bash
# Build the peer simulator ChampSim from a local git mirror, using Debian
# packages instead of ChampSim's vcpkg step (which needs GitHub access).
#
# Usage: scripts/champsim/build.sh [MIRROR_GIT_DIR] [BUILD_DIR]
#   MIRROR_GIT_DIR  bare git dir of ChampSim (default /work/.mirror/ChampSim+ChampSim/repo)
#   BUILD_DIR       where to extract and build (default ${TMPDIR:-/tmp}/champsim-build)
# Env:  JOBS (make parallelism, default 2; keep it low on a shared 2-core box)
#
# Produces, under BUILD_DIR/ChampSim/bin/:
#   champsim         ChampSim's stock champsim_config.json (1 core, no prefetchers, LRU LLC)
#   champsim-lru     stock config, LLC replacement = lru   (identical to champsim)
#   champsim-srrip   stock config, LLC replacement = srrip
#   champsim-drrip   stock config, LLC replacement = drrip
#   champsim-ship    stock config, LLC replacement = ship
#
# Idempotent: the checkout is kept while the mirror's HEAD commit is unchanged,
# configuration is skipped when its outputs exist, and make is skipped when all
# binaries exist.  No ChampSim source file is edited; see "dependency shim" below.
set -euo pipefail

MIRROR=${1:-/work/.mirror/ChampSim+ChampSim/repo}
BUILD=${2:-${TMPDIR:-/tmp}/champsim-build}
JOBS=${JOBS:-2}
SRC="$BUILD/ChampSim"
POLICIES=(lru srrip drrip ship)   # names of ChampSim's replacement/<name> modules

log() { printf '[champsim-build] %s\n' "$*" >&2; }

# ---------------------------------------------------------------------------
# 1. Debian packages (apt-get update only once, only if something is missing).
#    libcli11-dev is header-only on Debian; fmt/json/compression libs are real.
# ---------------------------------------------------------------------------
PKGS=(g++ make binutils python3 libfmt-dev libcli11-dev nlohmann-json3-dev
      libbz2-dev liblzma-dev zlib1g-dev xz-utils)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ---------------------------------------------------------------------------
# 2. Extract the mirror's HEAD into BUILD/ChampSim (re-extract only if HEAD moved).
# ---------------------------------------------------------------------------
COMMIT=$(git --git-dir="$MIRROR" rev-parse HEAD)
if [[ ! -f "$SRC/.champsim-commit" || "$(cat "$SRC/.champsim-commit")" != "$COMMIT" ]]; then
  log "extracting ChampSim $COMMIT into $SRC"
  rm -rf "$SRC"
  mkdir -p "$SRC"
  git --git-dir="$MIRROR" archive --format=tar HEAD | tar -x -C "$SRC"
  echo "$COMMIT" > "$SRC/.champsim-commit"
fi

# ---------------------------------------------------------------------------
# 3. Dependency shim replacing vcpkg_installed/<triplet>.
#    ChampSim's Makefile uses TRIPLET_DIR for `-isystem $(TRIPLET_DIR)/include`
#    and `-L$(TRIPLET_DIR)/lib`, and always links `-lCLI11`.  Debian's CLI11 is
#    header-only, so we point TRIPLET_DIR at a small directory whose lib/ holds
#    an empty libCLI11.a (so `-lCLI11` resolves to nothing); Debian's headers
#    are found in /usr/include anyway.
#    The Makefile also generates dependency files for the Catch2 unit tests on
#    every run, even when only the simulator is built.  We do not build the
#    tests (Catch2 v3 is not in Debian 12), so include/ gets an empty
#    catch.hpp: the test .d files can then be generated quietly.  No simulator
#    source includes catch.hpp.
# ---------------------------------------------------------------------------
DEPS="$BUILD/deps"
mkdir -p "$DEPS/include" "$DEPS/lib"
[[ -f "$DEPS/lib/libCLI11.a" ]] || ar rc "$DEPS/lib/libCLI11.a"
[[ -f "$DEPS/include/catch.hpp" ]] || echo '/* empty stub: ChampSim unit tests are not built here */' > "$DEPS/include/catch.hpp"

# ---------------------------------------------------------------------------
# 4. Configure.  One full JSON file per executable, derived from ChampSim's
#    stock champsim_config.json (only executable_name and LLC.replacement are
#    changed), joined with `config.sh --join chain` so each file is its own
#    build.  (With the default "product" join the stock file's
#    executable_name would win over a variant's, so we write full copies.)
#    All builds share the non-main object files, so extra variants are cheap.
# ---------------------------------------------------------------------------
CFGDIR="$BUILD/configs"
mkdir -p "$CFGDIR"
CFGS=()
for name in champsim "${POLICIES[@]/#/champsim-}"; do
  pol=${name#champsim-}; [[ $name == champsim ]] && pol=""
  out="$CFGDIR/$name.json"
  python3 - "$SRC/champsim_config.json" "$out.tmp" "$name" "$pol" <<'PY'
import json, sys
src, out, name, pol = sys.argv[1:5]
cfg = json.load(open(src))
cfg["executable_name"] = name
if pol:
    cfg["LLC"]["replacement"] = pol
json.dump(cfg, open(out, "w"), indent=2)
PY
  # Replace only on change, so mtimes (and thus the skip logic) stay stable.
  if cmp -s "$out.tmp" "$out"; then rm "$out.tmp"; else mv "$out.tmp" "$out"; fi
  CFGS+=("$out")
done

cd "$SRC"
reconfigure=0
[[ -f _configuration.mk ]] || reconfigure=1
for c in "${CFGS[@]}"; do [[ "$c" -nt _configuration.mk ]] && reconfigure=1; done
if ((reconfigure)); then
  log "configuring: ${CFGS[*]}"
  python3 ./config.sh --join chain "${CFGS[@]}" >&2
fi

# ---------------------------------------------------------------------------
# 5. Build (at most $JOBS jobs).  Skipped entirely when every binary exists.
# ---------------------------------------------------------------------------
BINS=("$SRC/bin/champsim")
for pol in "${POLICIES[@]}"; do BINS+=("$SRC/bin/champsim-$pol"); done
need_build=0
for b in "${BINS[@]}"; do
  [[ -x "$b" && "$b" -nt _configuration.mk ]] || need_build=1
done
if ((need_build)); then
  log "building with make -j$JOBS (this takes a few minutes)"
  make -j"$JOBS" TRIPLET_DIR="$DEPS" >&2
else
  log "all binaries present; nothing to build"
fi

for b in "${BINS[@]}"; do
  [[ -x "$b" ]] || { log "missing binary $b"; exit 1; }
done

# ---------------------------------------------------------------------------
# 6. Report.
# ---------------------------------------------------------------------------
log "ChampSim commit $COMMIT"
printf '%s\n' "${BINS[@]}"
