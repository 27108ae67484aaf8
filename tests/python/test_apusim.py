"""The Python package against the command line: the same runs give the same numbers, traces
survive a round trip, bad input raises the command line's message."""

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import apusim

KEY = ["policy", "agent", "level", "stream", "metric"]
# A small functional run: the first 20000 accesses of mix S1 (one CPU job and a rendering GPU).
RUN = dict(mix="S1", limit=20000, policy="srrip,lru")
RUN_ARGS = ["--mix", "S1", "--limit", "20000", "--policy", "srrip,lru"]
# A small timed run: one frame of scene lake at 64x48 on the discrete GPU of preset gspc.
SIM = dict(scene="lake", resolution="64x48", preset="gspc")
SIM_ARGS = ["--scene", "lake", "--resolution", "64x48", "--preset", "gspc"]


def read_csv(text):
    return list(csv.DictReader(io.StringIO(text)))


def by_key(df, cols=KEY):
    """{row key: value} of a long-format frame; fails on duplicate keys."""
    keys = list(map(tuple, df[cols].astype(str).to_numpy()))
    assert len(set(keys)) == len(keys), "duplicate rows"
    return dict(zip(keys, df["value"].to_numpy()))


@pytest.fixture(scope="module")
def functional(cli, cache, tmp_path_factory):
    """The run by the package and by the command line (its CSV and its --db rows)."""
    d = tmp_path_factory.mktemp("run")
    cli("run", *RUN_ARGS, "--cache-dir", cache, "--csv", d / "cli.csv", "--db", d / "cli.sqlite")
    df = apusim.run(**RUN, cache_dir=cache, db=d / "py.sqlite")
    return df, d


def test_run_is_long_format(functional):
    df, _ = functional
    assert list(df.columns) == KEY + ["value"]
    assert set(df["policy"]) == {"srrip", "lru"}
    assert df["value"].dtype == np.float64
    accesses = df[(df.metric == "trace_accesses")].set_index("policy")["value"]
    assert accesses.to_dict() == {"srrip": 20000.0, "lru": 20000.0}


def test_run_matches_cli_csv(functional):
    """Every counter of `apusim run --csv` (per policy, level, agent, stream) equals the
    package's row."""
    df, d = functional
    rows = read_csv((d / "cli.csv").read_text())
    assert rows, "the command line wrote no rows"
    py = by_key(df)
    counters = [c for c in rows[0] if c not in ("policy", "level", "agent", "stream")]
    compared = 0
    for r in rows:
        for c in counters:
            key = (r["policy"], r["agent"], r["level"], r["stream"], c)
            assert py[key] == float(r[c]), key
            compared += 1
    assert compared > 100
    llc = df[(df.level == "llc") & (df.metric == "read_misses")]
    assert llc["value"].sum() > 0


def test_run_matches_cli_db(functional):
    """The rows `apusim run --db` records are the package's rows, under the same keys."""
    df, d = functional
    cli_rows = apusim.results(d / "cli.sqlite")
    py_rows = apusim.results(d / "py.sqlite")
    assert by_key(cli_rows) == by_key(df) == by_key(py_rows)
    assert sorted(set(cli_rows["key"])) == sorted(set(py_rows["key"]))


@pytest.mark.parametrize("kw,args", [
    (dict(cpu="bzip2", instructions=100000), ["--cpu", "bzip2", "--instructions", "100000"]),
    (dict(kernel="nw", preset="bypass"), ["--kernel", "nw", "--preset", "bypass"]),
])
def test_a_workload_alone_matches_cli_db(cli, cache, tmp_path, kw, args):
    """A CPU kernel or a GPGPU kernel alone: the package records the command line's rows
    under the command line's keys."""
    cli("run", *args, "--policy", "lru", "--cache-dir", cache, "--db", tmp_path / "cli.sqlite")
    df = apusim.run(**kw, policy="lru", cache_dir=cache, db=tmp_path / "py.sqlite")
    cli_rows = apusim.results(tmp_path / "cli.sqlite")
    py_rows = apusim.results(tmp_path / "py.sqlite")
    assert by_key(cli_rows) == by_key(df) == by_key(py_rows)
    assert sorted(set(cli_rows["key"])) == sorted(set(py_rows["key"]))
    assert ("gpu" in set(df["agent"])) == ("kernel" in kw)


def test_sim_matches_cli(cli, cache, tmp_path):
    """A timed run: the rows `apusim sim --db` records, and figures of its CSV, are the
    package's."""
    cli("sim", *SIM_ARGS, "--cache-dir", cache, "--csv", tmp_path / "sim.csv",
        "--db", tmp_path / "cli.sqlite")
    df = apusim.sim(**SIM, cache_dir=cache)
    assert list(df.columns) == KEY + ["value"]
    assert by_key(apusim.results(tmp_path / "cli.sqlite")) == by_key(df)
    csv_rows = {(r["agent"], r["metric"]): float(r["value"])
                for r in read_csv((tmp_path / "sim.csv").read_text())}
    py = by_key(df)
    policy = df["policy"].iloc[0]
    # The GPU's own rows name it with its program ("gpu lake").
    gpu = gpu_agent(df)
    assert py[(policy, "system", "", "", "window_cycles")] == csv_rows[("system", "window_cycles")] > 0
    assert py[(policy, gpu, "", "", "fps")] == csv_rows[("gpu", "gpu.fps")] > 0
    assert py[(policy, gpu, "", "", "cycles")] == csv_rows[("gpu", "gpu.cycles")] > 0
    assert py[(policy, "gpu", "dram", "", "reads")] == csv_rows[("gpu", "dram.reads")] > 0


def gpu_agent(df):
    names = {a for a in df.loc[df.metric == "fps", "agent"]}
    assert len(names) == 1 and next(iter(names)).startswith("gpu"), names
    return names.pop()


def test_sim_set_overrides_change_the_run(cache):
    fast = apusim.sim(**SIM, cache_dir=cache)
    slow = apusim.sim(**SIM, cache_dir=cache, set={"gpu_clock_mhz": 400})
    f, s = by_key(fast), by_key(slow)
    key = (fast["policy"].iloc[0], gpu_agent(fast), "", "", "fps")
    assert s[key] < f[key]


def random_records(n, seed=7):
    rng = np.random.default_rng(seed)
    a = np.zeros(n, dtype=apusim.TRACE_DTYPE)
    a["addr"] = rng.integers(0, 1 << 40, n, dtype=np.uint64) & ~np.uint64(63)
    a["pc"] = rng.integers(0, 1 << 32, n, dtype=np.uint64)
    a["time"] = np.cumsum(rng.integers(0, 5, n)).astype(np.uint64)
    a["warp"] = rng.integers(0, 1 << 20, n)
    a["unit"] = rng.integers(0, 16, n)
    a["size"] = rng.choice([4, 8, 64], n)
    a["agent"] = rng.choice([0, 1, apusim.GPU], n)
    cpu = a["agent"] < apusim.GPU
    a["stream"] = np.where(cpu, rng.choice([0, 1], n),
                           rng.choice([apusim.STREAMS.index("static-texture"),
                                       apusim.STREAMS.index("color")], n))
    a["op"] = rng.choice([0, 1], n)
    a["flags"] = rng.choice([0, 1], n)
    # Each agent's accesses in its time order.
    return a


def test_trace_round_trip(tmp_path):
    a = random_records(25_000)
    path = tmp_path / "t.apt"
    assert apusim.write_trace(path, a, names={"cpu0": "rand"}) == len(a)
    b = apusim.read_trace(path)
    assert b.dtype == apusim.TRACE_DTYPE
    np.testing.assert_array_equal(a, b)
    chunks = list(apusim.iter_trace(path, chunk=10_000))
    assert [len(c) for c in chunks] == [10_000, 10_000, 5_000]
    np.testing.assert_array_equal(np.concatenate(chunks), a)
    h = apusim.read_trace_header(path)
    assert [x["agent"] for x in h["agents"]] == ["cpu0", "cpu1", "gpu"]
    assert h["agents"][0]["name"] == "rand"
    assert set(h["streams"]) == {"cpu-instr", "cpu-data", "static-texture", "color"}


def test_trace_from_columns_and_streaming_writer(tmp_path):
    df = pd.DataFrame({
        "addr": [0x1000, 0x1040, 0x2000],
        "agent": ["cpu0", "cpu0", "gpu"],
        "stream": ["cpu-data", "cpu-data", "color"],
        "op": ["read", "write", "write"],
    })
    apusim.write_trace(tmp_path / "small.apt", df)
    a = apusim.read_trace(tmp_path / "small.apt")
    assert a["addr"].tolist() == [0x1000, 0x1040, 0x2000]
    assert a["op"].tolist() == [0, 1, 1]
    assert a["size"].tolist() == [64, 64, 64]
    assert [apusim.agent_name(x) for x in a["agent"]] == ["cpu0", "cpu0", "gpu"]

    big = random_records(12_345, seed=3)
    apusim.write_trace(tmp_path / "big.apt", big)
    with apusim.TraceWriter(tmp_path / "copy.apt", header=apusim.read_trace_header(
            tmp_path / "big.apt")) as w:
        for chunk in apusim.iter_trace(tmp_path / "big.apt", chunk=1000):
            w.write(chunk)
    np.testing.assert_array_equal(apusim.read_trace(tmp_path / "copy.apt"), big)


def test_libcachesim_csv_reads_as_the_command_line_converts_it(cli, tmp_path):
    """``lcs_params`` reads libCacheSim's csv form (columns in an unusual order, a header,
    tabs) as ``apusim trace convert --from lcs-csv --lcs-params`` does; a misspelt key is
    refused with the nearest valid one."""
    rows = ["size\ttimestamp\tkey\top"]
    for i in range(3000):
        rows.append(f"{4096 if i % 7 else 200}\t{i}\t{(i * 7919) % 613}\tget")
    path = tmp_path / "t.csv"
    path.write_text("\n".join(rows) + "\n")
    params = "time-col=2,obj-id-col=3,obj-size-col=1,op-col=4,block-size=64,ignore-obj-size=false"
    a = apusim.read_trace(path, format="lcs-csv", lcs_params=params)
    cli("trace", "convert", path, "--from", "lcs-csv", "--lcs-params", params,
        "-o", tmp_path / "t.apt")
    b = apusim.read_trace(tmp_path / "t.apt")
    np.testing.assert_array_equal(a, b)
    # Objects of 4096 bytes are 64 blocks of 64 bytes; the 200-byte ones 4.
    assert len(a) > 3000
    chunks = list(apusim.iter_trace(path, chunk=5000, format="lcs-csv", lcs_params=params))
    np.testing.assert_array_equal(np.concatenate(chunks), a)
    h = apusim.read_trace_header(path, format="lcs-csv", lcs_params=params)
    assert [x["agent"] for x in h["agents"]] == ["cpu0"]
    with pytest.raises(apusim.ApusimError, match="obj-id-col"):
        apusim.read_trace(path, format="lcs-csv", lcs_params="obj-idd-col=3")


def test_written_trace_runs_as_on_the_command_line(cli, tmp_path):
    """A trace written by the package is read by `apusim run` with the counts the package's
    run gives."""
    a = random_records(20_000, seed=11)
    a = a[a["agent"] < apusim.GPU]
    path = tmp_path / "cpu.apt"
    apusim.write_trace(path, a)
    cli("run", path, "--preset", "4c1g", "--set", "cpus=2", "--csv", tmp_path / "cli.csv")
    df = apusim.run([path], preset="4c1g", set=["cpus=2"])
    py = by_key(df)
    rows = read_csv((tmp_path / "cli.csv").read_text())
    assert rows
    for r in rows:
        for c in ("reads", "read_misses", "writes", "write_misses", "evictions"):
            assert py[(r["policy"], r["agent"], r["level"], r["stream"], c)] == float(r[c])
    assert py[(df["policy"].iloc[0], "", "", "", "trace_accesses")] == len(a)


@pytest.mark.parametrize(
    "kwargs, args",
    [
        (dict(mix="ZZ9"), ["run", "--mix", "ZZ9"]),
        (dict(scene="lake", preset="no-such-preset"),
         ["run", "--scene", "lake", "--preset", "no-such-preset"]),
        (dict(scene="lake", preset="gspc", set={"llc.no_such_key": 1}),
         ["run", "--scene", "lake", "--preset", "gspc", "--set", "llc.no_such_key=1"]),
        (dict(scene="lake", preset="gspc", policy="no-such-policy"),
         ["run", "--scene", "lake", "--preset", "gspc", "--policy", "no-such-policy"]),
        (dict(traces=["/no/such/trace.apt"]), ["run", "/no/such/trace.apt"]),
    ],
)
def test_errors_carry_the_cli_message(cli, kwargs, args):
    with pytest.raises(apusim.ApusimError) as e:
        apusim.run(resolution="16x16", no_cache=True, **kwargs)
    assert isinstance(e.value, ValueError)
    p = cli(*args, "--resolution", "16x16", "--no-cache", check=False)
    assert p.returncode == 1
    assert f"error: {e.value}" in p.stderr


def test_frames_reach_the_timed_run(cli, cache, tmp_path):
    """`frames` renders that many frames of a scene, as `scale` alone does and as the command
    line's `--frames`; `paper` is a mix's, and trace files, kernels and CPU kernels take none."""
    two = apusim.sim(**SIM, frames=2, cache_dir=cache)
    assert two[two.metric == "frames"]["value"].tolist() == [2.0]
    assert by_key(two) == by_key(apusim.sim(**SIM, scale=2, cache_dir=cache))
    cli("sim", *SIM_ARGS, "--frames", "2", "--cache-dir", cache, "--db", tmp_path / "cli.sqlite")
    stored = apusim.results(tmp_path / "cli.sqlite")
    assert stored[stored.metric == "frames"]["value"].tolist() == [2.0]
    for bad, message in [
        (0, "at least 1"),
        (-2, "at least 1"),
        (1001, "out of range"),
        ("paper", "no frame region"),
        ("two", "number of frames"),
        (True, "number of frames"),
    ]:
        with pytest.raises(apusim.ApusimError, match=message):
            apusim.sim(**SIM, frames=bad, no_cache=True)
    with pytest.raises(apusim.ApusimError, match="frames are the length"):
        apusim.run(kernel="bfs", frames=3, no_cache=True)
    with pytest.raises(apusim.ApusimError, match="kernel lbm"):
        apusim.run(mix="HL15", frames=3, no_cache=True)


def test_a_scene_file_runs_as_the_built_in_scene_of_the_same_text(cache, tmp_path):
    """`scene` takes a scene file's path: a copy of `lake` times as `lake` does."""
    src = Path(__file__).resolve().parents[2] / "crates/apusim-render/scenes/lake.toml"
    mine = tmp_path / "mine.toml"
    mine.write_text(src.read_text())
    ours = apusim.sim(**dict(SIM, scene=str(mine)), cache_dir=cache)
    theirs = apusim.sim(**SIM, cache_dir=cache)
    rename = {"gpu mine": "gpu lake"}
    ours["agent"] = ours["agent"].replace(rename)
    theirs["agent"] = theirs["agent"].replace(rename)
    assert by_key(ours) == by_key(theirs)
    mine.write_text("name = \"x\"\n[[mesh]\n")
    with pytest.raises(apusim.ApusimError, match="mine.toml:2"):
        apusim.sim(**dict(SIM, scene=str(mine)), no_cache=True)


def test_bad_records_and_options_raise(tmp_path):
    a = random_records(10)
    a["agent"][3] = 200
    every = {"agents": [{"agent": x} for x in ("cpu0", "cpu1", "gpu")],
             "streams": apusim.STREAMS, "source": "test"}
    with pytest.raises(apusim.ApusimError, match="record 3: invalid agent 200"):
        apusim.write_trace(tmp_path / "bad.apt", a, header=every)
    assert not (tmp_path / "bad.apt").exists()
    with pytest.raises(apusim.ApusimError, match="not in the header"):
        apusim.write_trace(tmp_path / "bad.apt", random_records(10), header={
            "agents": [{"agent": "cpu0"}], "streams": ["cpu-data"], "source": "test"})
    with pytest.raises(apusim.ApusimError, match="give trace files, a mix, a scene"):
        apusim.run()
    with pytest.raises(apusim.ApusimError, match="mix, cpu cannot run together"):
        apusim.run(mix="S1", cpu="bzip2")
    # The registries' messages: the key, the value and the declared range.
    with pytest.raises(apusim.ApusimError, match=r"parameter `scale` = 0: out of range 1\.\.=1000"):
        apusim.run(scene="lake", scale=0)
    with pytest.raises(apusim.ApusimError, match=r"parameter `scale` = 1001: out of range"):
        apusim.run(mix="S1", scale=1001)
    with pytest.raises(apusim.ApusimError, match=r"parameter `width` = 0: out of range 1\.\.=2560"):
        apusim.run(scene="lake", resolution="0x16")
    with pytest.raises(apusim.ApusimError, match=r"parameter `height` = 1601: out of range"):
        apusim.run(scene="lake", resolution="16x1601")
    with pytest.raises(apusim.ApusimError, match="unknown study"):
        apusim.study("no-such-figure")
    with pytest.raises(apusim.ApusimError, match="does not take limit"):
        apusim.study("gspc-fig12", limit=5)
    with pytest.raises(apusim.ApusimError, match="no_such_option"):
        apusim.study("drp-fig13", no_such_option=1)
    with pytest.raises(apusim.ApusimError, match=r"does not take quick \(it takes scenes"):
        apusim.study("gspc-fig12", quick=True)
    with pytest.raises(apusim.ApusimError, match="did you mean `tap-table1`"):
        apusim.study("tap-tabel1")
    with pytest.raises(apusim.ApusimError):
        apusim.results(tmp_path / "missing.sqlite")


def test_study_matches_cli(cli, cache, tmp_path):
    """drp Fig. 13 on mix S1: the package's records are `apusim study --csv`'s."""
    cli("study", "drp-fig13", "--mixes", "S1", "--limit", "20000", "--cache-dir", cache,
        "--csv", tmp_path / "study.csv")
    df = apusim.study("drp-fig13", mixes="S1", limit=20000, cache_dir=cache)
    assert list(df.columns) == ["study", "config", "workload", "policy", "metric", "value"]
    assert df.attrs["title"] and df.attrs["paper"]
    want = pd.read_csv(tmp_path / "study.csv", keep_default_na=False)
    assert len(want) == len(df) > 0
    cols = ["study", "config", "workload", "policy", "metric"]
    assert by_key(df, cols) == pytest.approx(by_key(want, cols), rel=1e-12)


def test_a_study_keeps_its_runs_in_a_database(cache, tmp_path):
    """A timed study, a functional one and one of replays with `db`: their runs are
    recorded under `study NAME`, and each study run again reads them back with the same
    records."""
    db = tmp_path / "study.sqlite"
    kw = dict(quick=True, instructions=2000, cache_dir=cache, db=db, threads=2)
    first = apusim.study("tap-fig6", **kw)
    rows = apusim.results(db, sweep="study tap-fig6")
    assert rows["key"].nunique() == 3
    again = apusim.study("tap-fig6", **kw)
    cols = ["study", "config", "workload", "policy", "metric"]
    assert by_key(again, cols) == by_key(first, cols)
    # drp Fig. 13's functional runs (`apusim run --mix`'s): the baseline and DRP on S1.
    kw = dict(mixes="S1", limit=20000, cache_dir=cache, db=db)
    first = apusim.study("drp-fig13", **kw)
    rows = apusim.results(db, sweep="study drp-fig13")
    assert rows["key"].nunique() == 2
    assert set(rows["mode"]) == {"functional"}
    again = apusim.study("drp-fig13", **kw)
    assert by_key(again, cols) == by_key(first, cols)
    # gspc Fig. 12's replays of one scene's LLC stream: nine policies at one LLC size.
    kw = dict(scenes="lake", width=96, height=64, frames=1, llc="256K", cache_dir=cache, db=db)
    first = apusim.study("gspc-fig12", **kw)
    rows = apusim.results(db, sweep="study gspc-fig12")
    assert rows["key"].nunique() == 9
    assert set(rows["mode"]) == {"replay"}
    again = apusim.study("gspc-fig12", **kw)
    assert by_key(again, cols) == by_key(first, cols)
    # The gspc counters study replays GSPZTC+TSE and GSPC: two of Fig. 12's nine, read back.
    keys = apusim.results(db)["key"].nunique()
    counters = apusim.study("gspc-counters", **kw)
    assert apusim.results(db)["key"].nunique() == keys
    assert set(counters["policy"]) >= {"GSPZTC+TSE", "GSPC"}


def test_sweep_and_results(cli, cache, tmp_path):
    """A two-point sweep: its rows are the database's, as `apusim results --csv` lists them,
    and filters narrow them."""
    spec = tmp_path / "tiny.toml"
    spec.write_text(
        'mode = "functional"\npreset = "4c1g"\nmix = "S1"\nlimit = 20000\n'
        '[grid]\npolicy = ["lru", "srrip"]\n'
    )
    db = tmp_path / "tiny.sqlite"
    df = apusim.sweep(spec, db=db, jobs=1, cache_dir=cache)
    assert set(df["policy"]) == {"lru", "srrip"}
    assert set(df["sweep"]) == {"tiny"}
    assert len(set(df["key"])) == 2
    p = cli("results", db, "--csv", tmp_path / "rows.csv")
    assert "2 runs" in p.stdout
    want = pd.read_csv(tmp_path / "rows.csv", keep_default_na=False)
    assert list(want.columns) == list(df.columns)
    cols = ["key", "agent", "level", "stream", "metric"]
    assert by_key(df, cols) == by_key(want, cols)
    lru = apusim.results(db, where={"policy": "lru"}, level="llc", metric="read_misses")
    assert set(lru["policy"]) == {"lru"} and set(lru["level"]) == {"llc"}
    assert len(lru) > 0
    # A second sweep finds both runs done and returns the same rows.
    again = apusim.sweep(spec, db=db, jobs=1, cache_dir=cache)
    assert by_key(again, cols) == by_key(df, cols)
    with pytest.raises(apusim.ApusimError, match="no run has a parameter `polcy`"):
        apusim.results(db, where={"polcy": "lru"})


def test_listings():
    assert "srrip" in set(apusim.policies()["policy"])
    assert "4c1g" in set(apusim.presets()["preset"])
    assert "S1" in apusim.mixes()
    assert "gspc-fig12" in apusim.studies() and "drp-fig1" in apusim.studies()
    assert json.loads(json.dumps(apusim.STREAMS))[0] == "cpu-instr"


def test_example_reproduces_drp_fig13(cache, tmp_path):
    """examples/python/drp_fig13.py runs end to end on one short mix and prints its table."""
    import subprocess
    import sys
    from conftest import ROOT

    out = tmp_path / "fig13.png"
    p = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "python" / "drp_fig13.py"), "--mixes", "S1",
         "--limit", "20000", "--cache-dir", str(cache), "--out", str(out)],
        capture_output=True, text=True, stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 0, p.stderr
    assert "S1" in p.stdout and "read_misses_norm" in p.stdout
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "no figure drawn" in p.stderr
    else:
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_run_takes_cpu_job_lengths_as_the_cli(cli, cache, tmp_path):
    """`instructions=` is `apusim run --mix --instructions`: CPU jobs of that length, drp §3's
    method (early finishers run on), the same counters and the same database key."""
    args = ["--mix", "S16", "--instructions", "50000", "--policy", "lru"]
    cli("run", *args, "--cache-dir", cache, "--db", tmp_path / "cli.sqlite")
    df = apusim.run(
        mix="S16", instructions=50000, policy="lru", cache_dir=cache, db=tmp_path / "py.sqlite"
    )
    cli_rows = apusim.results(tmp_path / "cli.sqlite")
    assert by_key(cli_rows) == by_key(df)
    assert set(cli_rows["key"]) == set(apusim.results(tmp_path / "py.sqlite")["key"])
    # The core ran on past its 50000 instructions while the GPU's kernel ran once.
    once = apusim.run(mix="S16", policy="lru", cache_dir=cache)
    ran_on = df[(df.level == "llc") & (df.agent == "gpu") & (df.metric == "accesses")]
    gpu_once = once[(once.level == "llc") & (once.agent == "gpu") & (once.metric == "accesses")]
    assert ran_on["value"].sum() == gpu_once["value"].sum() == 327680
    with pytest.raises(ValueError, match="length of a mix's or a cpu kernel's CPU jobs"):
        apusim.run(["x.apt"], instructions=5)
    with pytest.raises(ValueError, match="instructions"):
        apusim.run(mix="S16", instructions=0)
