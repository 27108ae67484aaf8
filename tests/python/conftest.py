"""Fixtures of the Python package's tests: the command-line binary to cross-check against, and
one trace cache for the whole session (each mix or scene is generated once)."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _binary() -> Path:
    """The `apusim` binary: $APUSIM_BIN, else the release build in $CARGO_TARGET_DIR or
    target/."""
    if os.environ.get("APUSIM_BIN"):
        return Path(os.environ["APUSIM_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if not target.is_absolute():
        target = ROOT / target
    return target / "release" / "apusim"


@pytest.fixture(scope="session")
def cli():
    """Run the command line; returns the finished process (check=False: tests look at the
    exit code and stderr themselves)."""
    exe = _binary()
    if not exe.is_file():
        pytest.fail(
            f"no apusim binary at {exe}: build it (cargo build --release) or set APUSIM_BIN"
        )

    def call(*args, check=True):
        p = subprocess.run(
            [str(exe), *map(str, args)], capture_output=True, text=True, stdin=subprocess.DEVNULL
        )
        if check and p.returncode != 0:
            raise AssertionError(f"apusim {' '.join(map(str, args))} failed:\n{p.stderr}")
        return p

    return call


@pytest.fixture(scope="session")
def cache(tmp_path_factory):
    """A trace cache shared by the command line and the package in this session."""
    return tmp_path_factory.mktemp("cache")
