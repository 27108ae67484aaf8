"""apusim from Python: the simulator's runs, sweeps, studies and results as pandas DataFrames
in long format, and traces as numpy structured arrays.

Every function calls the same library code as the ``apusim`` command line, so the numbers are
the command line's:

- :func:`run` (``apusim run``) and :func:`sim` (``apusim sim``) return one row per
  (policy, agent, level, stream, metric), the rows ``--db`` records in a results database;
- :func:`sweep` (``apusim sweep``) runs a spec into a database and returns its rows, and
  :func:`results` (``apusim results``) reads a database: each metric row with its run's key
  and parameters;
- :func:`study` (``apusim study NAME``) returns a study's records
  (study, config, workload, policy, metric, value);
- :func:`read_trace`, :func:`iter_trace` and :func:`write_trace` read any trace apusim reads
  and write ``.apt`` files, as arrays of :data:`TRACE_DTYPE`.

Errors raise :class:`ApusimError` (a ``ValueError``) with the command line's message.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from . import _native
from ._native import ApusimError

__all__ = [
    "ApusimError",
    "OPS",
    "STREAMS",
    "TRACE_DTYPE",
    "TraceWriter",
    "agent_name",
    "iter_trace",
    "mixes",
    "policies",
    "presets",
    "read_trace",
    "read_trace_header",
    "results",
    "run",
    "sim",
    "studies",
    "study",
    "sweep",
    "write_trace",
]

__version__: str = _native.__version__

# Alone runs behind weighted speedup are cached per simulator build; the running executable
# (which names the build for the command line) is the Python interpreter here, so the
# extension module names it instead.
_native._set_build_id(_native.__file__)

#: The fields of a trace record: address, PC, the agent's time, warp, unit, size, and the
#: one-byte codes of agent (CPU core number, 128 for the GPU), stream and op (indices into
#: :data:`STREAMS` and :data:`OPS`), and flags (1: critical, 2: read-modify-write).
TRACE_DTYPE = np.dtype([(name, typ) for name, typ in _native.RECORD_FIELDS])
#: Stream names by code.
STREAMS: List[str] = list(_native.STREAMS)
#: Op names by code.
OPS: List[str] = list(_native.OPS)
#: The GPU's agent code.
GPU = 128

PathLike = Union[str, "os.PathLike[str]"]


def _list(x: Union[None, str, Iterable[str]]) -> Optional[List[str]]:
    """A comma-separated string or an iterable of strings as a list (None stays None)."""
    if x is None:
        return None
    if isinstance(x, str):
        return [p for p in (s.strip() for s in x.split(",")) if p]
    return [str(p) for p in x]


def _set(x: Union[None, Mapping[str, Any], Iterable[str]]) -> List[str]:
    """``set`` overrides: a mapping of key to value, or ``KEY=VALUE`` strings."""
    if x is None:
        return []
    if isinstance(x, str):
        return [x]
    if isinstance(x, Mapping):
        out = []
        for k, v in x.items():
            if isinstance(v, bool):
                v = "true" if v else "false"
            elif isinstance(v, (list, tuple)):
                v = ",".join(str(p) for p in v)
            out.append(f"{k}={v}")
        return out
    return [str(p) for p in x]


def _path(p: Optional[PathLike]) -> Optional[str]:
    return None if p is None else os.fspath(p)


def _resolution(r: Union[str, Sequence[int]]) -> str:
    if isinstance(r, str):
        return r
    w, h = r
    return f"{w}x{h}"


def _frame(columns: Dict[str, list]) -> pd.DataFrame:
    return pd.DataFrame(columns)


def _inputs(traces, mix, scene, kernel, cpu, resolution, scale, frames, preset, config, set,
            seed, policy, cache_dir, no_cache, ideal, ideal_gpu, gpu_read_bypass,
            db) -> Dict[str, Any]:
    if isinstance(traces, (str, os.PathLike)):
        traces = [traces]
    return dict(
        traces=[os.fspath(t) for t in (traces or [])],
        mix=mix,
        scene=scene,
        kernel=kernel,
        cpu=cpu,
        resolution=_resolution(resolution),
        scale=scale,
        frames=frames,
        preset=preset,
        config=_path(config),
        set=_set(set),
        seed=seed,
        policy=_list(policy),
        cache_dir=_path(cache_dir),
        no_cache=no_cache,
        ideal=",".join(_list(ideal)) if ideal is not None else None,
        ideal_gpu=ideal_gpu,
        gpu_read_bypass=float(gpu_read_bypass),
        db=_path(db),
    )


def run(
    traces: Union[None, PathLike, Sequence[PathLike]] = None,
    *,
    mix: Optional[str] = None,
    scene: Optional[str] = None,
    kernel: Optional[str] = None,
    cpu: Optional[str] = None,
    resolution: Union[str, Sequence[int]] = "1280x1024",
    scale: int = 1,
    frames: Union[None, int, str] = None,
    preset: Optional[str] = None,
    config: Optional[PathLike] = None,
    set: Union[None, Mapping[str, Any], Iterable[str]] = None,
    seed: Optional[int] = None,
    policy: Union[None, str, Iterable[str]] = None,
    limit: Optional[int] = None,
    instructions: Optional[int] = None,
    threads: Optional[int] = None,
    cache_dir: Optional[PathLike] = None,
    no_cache: bool = False,
    ideal: Union[None, str, Iterable[str]] = None,
    ideal_gpu: Optional[str] = None,
    gpu_read_bypass: float = 0.0,
    dump_llc_trace: Optional[PathLike] = None,
    db: Optional[PathLike] = None,
) -> pd.DataFrame:
    """A functional run, as ``apusim run``: one row per (policy, agent, level, stream, metric).

    The inputs are trace files (``"a.apt"`` or ``"a.apt@cpu1"``), a named ``mix`` (see
    :func:`mixes`), a built-in ``scene`` or a scene file at ``resolution``, ``scale`` times, a GPGPU
    ``kernel`` or a CPU kernel ``cpu`` alone (``apusim run --kernel|--cpu``). ``frames``
    gives a mix's rendering job or a scene that many frames instead of ``scale``, or with
    ``"paper"`` a mix's title its frame region in its paper's table (``apusim run
    --frames``: drp Table 1 for S/D/Q, gpu-access-criticality Table 2 for H/L/HL). The system is
    ``preset`` (default ``4c1g``) or a TOML ``config``, with ``set`` overrides
    (``{"llc.policy": "srrip"}`` or ``["cpus=2"]``). ``policy`` is one policy or several
    (``"srrip,lru"``, ``["srrip", "lru"]``, ``"all"``, ``"baselines"``); the configured one
    when not given. ``limit`` stops each run after that many accesses. ``instructions`` gives
    a mix's CPU jobs that length and runs them by drp §3's method, as ``apusim run --mix
    --instructions``: a job that ends before the others starts again until every job has
    ended once; with ``cpu``, it is the kernel's length. ``db`` records the runs in a results
    database as ``apusim run --db`` does.
    """
    kw = _inputs(traces, mix, scene, kernel, cpu, resolution, scale, frames, preset, config,
                 set, seed, policy, cache_dir, no_cache, ideal, ideal_gpu, gpu_read_bypass, db)
    cols = _native.run(limit=limit, instructions=instructions, threads=threads,
                       dump_llc_trace=_path(dump_llc_trace), **kw)
    return _frame(cols)


def sim(
    traces: Union[None, PathLike, Sequence[PathLike]] = None,
    *,
    mix: Optional[str] = None,
    scene: Optional[str] = None,
    kernel: Optional[str] = None,
    cpu: Optional[str] = None,
    resolution: Union[str, Sequence[int]] = "1280x1024",
    scale: int = 1,
    frames: Union[None, int, str] = None,
    preset: Optional[str] = None,
    config: Optional[PathLike] = None,
    set: Union[None, Mapping[str, Any], Iterable[str]] = None,
    seed: Optional[int] = None,
    policy: Union[None, str, Iterable[str]] = None,
    warmup: int = 0,
    instructions: Optional[int] = None,
    threads: Optional[int] = None,
    alone_policy: str = "lru",
    no_alone: bool = False,
    sample: bool = False,
    sample_period: Optional[int] = None,
    sample_warmup: Optional[int] = None,
    sample_unit: Optional[int] = None,
    target_error: Union[None, str, float] = None,
    cache_dir: Optional[PathLike] = None,
    no_cache: bool = False,
    ideal: Union[None, str, Iterable[str]] = None,
    ideal_gpu: Optional[str] = None,
    gpu_read_bypass: float = 0.0,
    db: Optional[PathLike] = None,
) -> pd.DataFrame:
    """A timed run, as ``apusim sim``: one row per (policy, agent, level, stream, metric).

    Inputs, system and policies as for :func:`run`. Each core retires ``warmup``
    instructions before statistics start, then ``instructions`` (default: to the end of its
    trace); a ``cpu`` kernel alone is generated that long. With several jobs, each also runs alone under ``alone_policy`` for weighted
    speedup (``no_alone`` skips that). ``sample`` samples (SMARTS) with ``sample_period``,
    ``sample_warmup``, ``sample_unit`` cycles (by default 1,000,000, 50,000 or, when the GPU
    renders on the timed pipeline, 200,000, and 10,000), to ``target_error`` (``"3%"`` or
    ``0.03``).
    """
    kw = _inputs(traces, mix, scene, kernel, cpu, resolution, scale, frames, preset, config,
                 set, seed, policy, cache_dir, no_cache, ideal, ideal_gpu, gpu_read_bypass, db)
    cols = _native.sim(
        warmup=warmup,
        instructions=instructions,
        threads=threads,
        alone_policy=alone_policy,
        no_alone=no_alone,
        sample=sample,
        sample_period=sample_period,
        sample_warmup=sample_warmup,
        sample_unit=sample_unit,
        target_error=None if target_error is None else str(target_error),
        **kw,
    )
    return _frame(cols)


def results(
    db: PathLike,
    *,
    sweep: Optional[str] = None,
    where: Union[None, Mapping[str, Any], Iterable[str]] = None,
    status: Optional[str] = None,
    metric: Optional[str] = None,
    level: Optional[str] = None,
    agent: Optional[str] = None,
    stream: Optional[str] = None,
) -> pd.DataFrame:
    """The metric rows of a results database, as ``apusim results DB --csv``.

    Columns: ``key``, every parameter of the runs (``mode``, ``preset``, ``policy``,
    ``mix``, ... ; missing ones are None), then ``agent, level, stream, metric, value``.
    ``sweep`` keeps one sweep's runs, ``where`` runs whose parameters have these values
    (``{"policy": "lru"}`` or ``["policy=lru"]``), ``status`` ``"ok"`` or ``"failed"`` runs;
    ``metric``, ``level``, ``agent`` and ``stream`` keep the matching rows.
    """
    cols = _native.results(
        _path(db),
        sweep=sweep,
        where=_set(where),
        status=status,
        metric=metric,
        level=level,
        agent=agent,
        stream=stream,
    )
    return _frame(cols)


def sweep(
    spec: PathLike,
    *,
    db: PathLike = "results.sqlite",
    jobs: Optional[int] = None,
    cache_dir: Optional[PathLike] = None,
    no_cache: bool = False,
) -> pd.DataFrame:
    """Run a sweep spec (TOML) into the results database ``db``, as ``apusim sweep``, and
    return the sweep's metric rows as :func:`results` does. Runs the database holds already
    are skipped. Raises :class:`ApusimError` when runs failed (after recording them)."""
    cols = _native.sweep(
        _path(spec), db=_path(db), jobs=jobs, cache_dir=_path(cache_dir), no_cache=no_cache
    )
    return _frame(cols)


def study(name: str, **options: Any) -> pd.DataFrame:
    """Run the study ``name`` (``apusim study NAME``: ``gspc-fig12``, ``drp-fig13``,
    ``drp-fig1``, ...; see :func:`studies`) and return its records: columns
    ``study, config, workload, policy, metric, value``. The figure's title and the paper's
    values are in ``df.attrs["title"]`` and ``df.attrs["paper"]``.

    Options are the command's (``apusim study NAME --help``), by keyword: ``seed``, ``set``,
    ``threads``, ``cache_dir``, ``no_cache``, ``db`` (a results database that keeps every
    study's runs: a study run again reads back those it holds, as ``--db``); gspc's ``scenes``, ``width``, ``height``,
    ``frames``, ``llc`` (and ``gspc-counters``' ``every``, ``counters``: a CSV path); the drp functional figures' ``mixes``, ``scale``, ``frames``,
    ``limit``; the timed figures' ``mixes``, ``scale``, ``frames`` (a count or ``"paper"``),
    ``warmup``, ``instructions``, ``quick``, ``sample``,
    ``detailed`` (runs of 10 M instructions per core or more are sampled unless
    ``detailed=True``). Each study
    takes the options its registry entry declares, with the command's defaults; an option it
    does not take is refused with the list of those it takes.
    """
    kw = dict(options)
    for key in ("scenes", "llc", "mixes"):
        if key in kw:
            kw[key] = _list(kw[key])
    if "set" in kw:
        kw["set"] = _set(kw["set"])
    for key in ("cache_dir", "db"):
        if key in kw:
            kw[key] = _path(kw[key])
    try:
        cols, title, paper = _native.study(name, **kw)
    except TypeError as e:
        raise ApusimError(f"study {name}: {e}") from None
    df = _frame(cols)
    df.attrs["title"] = title
    df.attrs["paper"] = paper
    return df


def studies() -> List[str]:
    """The studies' names."""
    return list(_native.studies())


def policies() -> pd.DataFrame:
    """The LLC policies: name, description, source."""
    return pd.DataFrame(_native.policies(), columns=["policy", "description", "source"])


def presets() -> pd.DataFrame:
    """The built-in system presets: name, description."""
    return pd.DataFrame(_native.presets(), columns=["preset", "description"])


def mixes() -> List[str]:
    """The workload mixes' names."""
    return list(_native.mixes())


def agent_name(code: int) -> str:
    """``cpuN`` or ``gpu`` for an agent code of a trace record."""
    code = int(code)
    if code == GPU:
        return "gpu"
    if 0 <= code < GPU:
        return f"cpu{code}"
    raise ApusimError(f"agent code {code}: expected 0..=127 for a CPU core, 128 for the GPU")


def _reader(path: PathLike, format: Optional[str], agent: str,
            lcs_params: Optional[str]) -> "_native.TraceReader":
    return _native.TraceReader(os.fspath(path), format=format, agent=agent,
                               lcs_params=lcs_params)


def _view(buf: bytearray) -> np.ndarray:
    return np.frombuffer(buf, dtype=TRACE_DTYPE)


def read_trace_header(path: PathLike, *, format: Optional[str] = None,
                      agent: str = "cpu0", lcs_params: Optional[str] = None) -> Dict[str, Any]:
    """A trace's header: ``agents`` (agent, name, clock_mhz), ``streams``, ``source``."""
    return json.loads(_reader(path, format, agent, lcs_params).header_json())


def iter_trace(path: PathLike, chunk: int = 1_000_000, *, format: Optional[str] = None,
               agent: str = "cpu0", lcs_params: Optional[str] = None) -> Iterator[np.ndarray]:
    """The records of a trace in arrays of at most ``chunk`` records, read as they are
    needed: a trace of any length in bounded memory. ``format`` (apt, lackey, champsim, csv,
    oracleGeneral, oracleGeneralOpNS, lcs-csv, lcs-txt; default: detected), ``agent`` (of a
    single-agent import) and ``lcs_params`` (libCacheSim's ``-t`` string, e.g.
    ``"time-col=1,obj-id-col=2,obj-size-col=3,delimiter=,"``) as ``apusim trace convert
    --from FORMAT --lcs-params ...``.
    """
    if chunk < 1:
        raise ApusimError(f"chunk must be at least 1, not {chunk}")
    r = _reader(path, format, agent, lcs_params)
    while True:
        buf = r.read(chunk)
        if not buf:
            return
        yield _view(buf)


def read_trace(path: PathLike, *, format: Optional[str] = None,
               agent: str = "cpu0", lcs_params: Optional[str] = None) -> np.ndarray:
    """A whole trace as one structured array of :data:`TRACE_DTYPE` (``pd.DataFrame(a)``
    makes a table of it; :func:`iter_trace` reads big traces in chunks). ``format``,
    ``agent`` and ``lcs_params`` as for :func:`iter_trace`."""
    r = _reader(path, format, agent, lcs_params)
    parts = []
    while True:
        buf = r.read(4_000_000)
        if not buf:
            break
        parts.append(_view(buf))
    if not parts:
        return np.zeros(0, dtype=TRACE_DTYPE)
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts)


def _records(data: Any) -> np.ndarray:
    """Records of :data:`TRACE_DTYPE` from a structured array, a DataFrame or a mapping of
    columns. ``addr`` is required; missing fields are 0 (``size``: 64; ``op``: read);
    ``agent``, ``stream`` and ``op`` may be names (``"gpu"``, ``"texture"``, ``"write"``)."""
    if isinstance(data, np.ndarray) and data.dtype == TRACE_DTYPE:
        return np.ascontiguousarray(data)
    if isinstance(data, np.ndarray) and data.dtype.names:
        cols = {n: data[n] for n in data.dtype.names}
    elif isinstance(data, pd.DataFrame):
        cols = {n: data[n].to_numpy() for n in data.columns}
    elif isinstance(data, Mapping):
        cols = {n: np.asarray(v) for n, v in data.items()}
    else:
        raise ApusimError(
            "trace records must be a structured array, a DataFrame or a mapping of columns"
        )
    unknown = sorted(set(cols) - set(TRACE_DTYPE.names))
    if unknown:
        raise ApusimError(
            f"unknown trace field(s) {', '.join(unknown)} (fields: {', '.join(TRACE_DTYPE.names)})"
        )
    if "addr" not in cols:
        raise ApusimError("trace records need an `addr` field")
    n = len(cols["addr"])
    out = np.zeros(n, dtype=TRACE_DTYPE)
    out["size"] = 64
    for name, col in cols.items():
        col = np.asarray(col)
        if len(col) != n:
            raise ApusimError(f"field {name} has {len(col)} values, addr has {n}")
        if col.dtype.kind in "OUS":
            col = _codes(name, col)
        out[name] = col
    return out


def _codes(name: str, col: np.ndarray) -> np.ndarray:
    """Agent, stream and op names as their codes."""
    if name == "agent":
        def code(v):
            s = str(v).strip().lower()
            if s == "gpu":
                return GPU
            if s.startswith("cpu") and s[3:].isdigit() and int(s[3:]) < GPU:
                return int(s[3:])
            raise ApusimError(f"expected an agent `cpuN` (N < 128) or `gpu`, found `{v}`")
    elif name in ("stream", "op"):
        names = STREAMS if name == "stream" else OPS

        def code(v):
            s = str(v).strip().lower()
            if s in names:
                return names.index(s)
            raise ApusimError(f"expected a {name} ({', '.join(names)}), found `{v}`")
    else:
        raise ApusimError(f"field {name} must be numeric")
    return np.array([code(v) for v in col], dtype=np.uint8)


def _header(records: np.ndarray, names: Optional[Mapping[str, str]], source: str) -> str:
    agents = sorted(int(a) for a in np.unique(records["agent"]))
    streams = sorted(int(s) for s in np.unique(records["stream"]))
    return _header_json(agents, streams, names, source)


def _header_json(agents: Iterable[Union[int, str]], streams: Iterable[Union[int, str]],
                 names: Optional[Mapping[str, str]], source: str) -> str:
    def agent_text(a):
        return agent_name(a) if not isinstance(a, str) else a

    def stream_text(s):
        if isinstance(s, str):
            return s
        if not 0 <= int(s) < len(STREAMS):
            raise ApusimError(f"stream code {s}: expected 0..={len(STREAMS) - 1}")
        return STREAMS[int(s)]

    names = dict(names or {})
    return json.dumps({
        "version": 0,
        "agents": [{"agent": agent_text(a), "name": names.get(agent_text(a), ""), "clock_mhz": 0}
                   for a in agents],
        "streams": [stream_text(s) for s in streams],
        "source": source,
    })


class TraceWriter:
    """Write an ``.apt`` trace chunk by chunk (for traces too big for one array)::

        with apusim.TraceWriter("out.apt", agents=["cpu0", "gpu"],
                                streams=["cpu-data", "texture"]) as w:
            for chunk in apusim.iter_trace("in.apt"):
                w.write(chunk)

    The header lists ``agents`` and ``streams`` (every record's must be among them),
    ``names`` of agents' workloads and the ``source`` text; ``header`` (a dict as
    :func:`read_trace_header` returns) replaces them all. The file appears, complete, when
    the writer is closed; a writer left by an exception writes nothing.
    """

    def __init__(self, path: PathLike, *, agents: Iterable[Union[int, str]] = (),
                 streams: Iterable[Union[int, str]] = (),
                 names: Optional[Mapping[str, str]] = None, source: str = "apusim python",
                 header: Optional[Mapping[str, Any]] = None):
        text = json.dumps(dict(header)) if header is not None else _header_json(
            agents, streams, names, source)
        self._w = _native.TraceWriter(os.fspath(path), text)

    def write(self, records: Any) -> int:
        """Append records (as :func:`write_trace` takes them); returns the records so far."""
        return self._w.write(_records(records).tobytes())

    def close(self) -> int:
        """Finish the file; returns the records written."""
        return self._w.close()

    def __enter__(self) -> "TraceWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        # On an exception the native writer is dropped unfinished, leaving no file.


def write_trace(path: PathLike, records: Any, *, names: Optional[Mapping[str, str]] = None,
                source: str = "apusim python",
                header: Optional[Mapping[str, Any]] = None) -> int:
    """Write records to an ``.apt`` trace; returns their number.

    ``records`` is an array of :data:`TRACE_DTYPE` (as :func:`read_trace` returns), another
    structured array, a DataFrame or a mapping of columns (``addr`` required; missing fields
    0, ``size`` 64; ``agent``, ``stream``, ``op`` as codes or names). The header lists the
    agents and streams present, with ``names`` (``{"cpu0": "mcf"}``) and ``source``, unless
    ``header`` is given.
    """
    recs = _records(records)
    text = json.dumps(dict(header)) if header is not None else _header(recs, names, source)
    w = _native.TraceWriter(os.fspath(path), text)
    w.write(recs.tobytes())
    return w.close()
