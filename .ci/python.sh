#!/usr/bin/env bash
# The Python package (crates/apusim-py, python/apusim): `pip install .` into a fresh venv, then
# its tests (tests/python), which cross-check it against the `apusim` binary.
#
# Runs after `cargo test --workspace --release --locked` in the same checkout and reuses that
# build: maturin builds into the same target directory with the release profile and the same
# dependency features, so only pyo3 and the bindings crate compile here (the test step builds
# neither: the bindings have no Rust tests).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
start=$(date +%s)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
venv="$work/venv"
if ! python3 -m venv "$venv" 2>/dev/null; then
  # Debian's python3 has no venv module without python3-venv.
  if command -v apt-get >/dev/null 2>&1; then
    apt-get install -y -qq python3-venv >/dev/null || (apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null)
  fi
  python3 -m venv "$venv"
fi
py="$venv/bin/python"
# The maturin build backend runs `maturin` from PATH.
export PATH="$venv/bin:$PATH"
"$py" -m pip install -q --disable-pip-version-check "maturin>=1.5,<2" pytest numpy pandas
echo "python tools ready ($(( $(date +%s) - start )) s)"

# The command line the tests compare with: the test step built it. Building it with
# `cargo build` instead would compile the workspace again (without the dev-dependencies'
# features), so that happens only when it is missing.
bin="${CARGO_TARGET_DIR:-target}/release/apusim"
[ -x "$bin" ] || cargo build --release --locked --bin apusim

# Build isolation off: maturin comes from the venv, so the build fetches nothing.
"$py" -m pip install -q --disable-pip-version-check --no-build-isolation .
echo "package installed ($(( $(date +%s) - start )) s)"

# pytest's exit code 5 (no test collected) is a failure here, not a pass.
rc=0
"$py" -m pytest tests/python -q -p no:cacheprovider || rc=$?
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests in tests/python" >&2
  exit 1
fi
echo "python step: $(( $(date +%s) - start )) s"
exit "$rc"
