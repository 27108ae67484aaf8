#!/usr/bin/env python3
"""The tables of docs/results.md's "Table 5 at work" (gspc §3, Table 5), from the outputs of

    apusim study gspc-counters --llc 8M,16M --every 100000 --counters counters.csv --csv study.csv

and, for the "SRRIP consumes" column, `apusim reuse --policy srrip --preset gspc` on each
scene's cached LLC stream (the study's input; found in the trace cache by scene name,
resolution, frame count and seed).

    scripts/gspc_table5.py study.csv counters.csv [--apusim PATH] [--cache DIR]

Columns, per scene and LLC size: the share of GSPC's non-sample render-target fills inserted
at RRPV 3 / 2 / 0 (the study's `rt_fill_rrpv*_share`); from the counters (every bank's row at
every multiple of `--every` accesses) the share of instants at which PROD and CONS select
RRPV 3 / 2 / 0, the share with CONS = 0, and mean CONS over mean PROD; the share of
render-target blocks an all-SRRIP LLC lets the texture sampler consume; the shares of
produced render-target blocks evicted unconsumed and consumed, GSPZTC+TSE -> GSPC; GSPC's
misses over GSPZTC+TSE's. The last row of each table is the mean over the scenes.
"""

import argparse
import csv
import glob
import os
import re
import subprocess
import sys
from collections import defaultdict


def study_metrics(path):
    """(size, scene, policy, metric) -> value."""
    out = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            out[(r["config"], r["workload"], r["policy"], r["metric"])] = float(r["value"])
    return out


def counter_rows(path):
    """(size, scene) -> list of (prod, cons, class) rows."""
    out = defaultdict(list)
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            out[(r["size"], r["scene"])].append((int(r["prod"]), int(r["cons"]), int(r["class"])))
    return out


def srrip_consumed(apusim, cache, scene, size):
    """The share of render-target blocks an all-SRRIP LLC lets the sampler consume."""
    pattern = os.path.join(cache, f"llc-v*-render-{scene}-*-1280x1024-frames3-seed1-*.apt")
    streams = sorted(glob.glob(pattern))
    if not streams:
        sys.exit(f"no cached LLC stream of {scene} matches {pattern}: run the study first")
    geometry = f"{size.removesuffix('B')},16,64"
    text = subprocess.run(
        [apusim, "reuse", "--policy", "srrip", "--preset", "gspc", "--set",
         f"llc.geometry={geometry}", streams[-1]],
        check=True, capture_output=True, text=True).stdout
    m = re.search(r"consumed by texture \d+ \(([\d.]+)%\)", text)
    if not m:
        sys.exit(f"`apusim reuse` on {streams[-1]} printed no render-target consumption")
    return float(m.group(1)) / 100


def pct(x):
    return f"{round(100 * x)}%"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("study")
    p.add_argument("counters")
    p.add_argument("--apusim", default="apusim")
    p.add_argument("--cache", default=os.path.expanduser("~/.cache/apusim"))
    a = p.parse_args()
    m = study_metrics(a.study)
    rows = counter_rows(a.counters)
    sizes = list(dict.fromkeys(k[0] for k in m))
    for size in sizes:
        scenes = [s for s in dict.fromkeys(k[1] for k in m if k[0] == size) if s != "mean"]
        print(f"\n{size.replace('MB', ' MB')}:\n")
        print("| scene | GSPC RT fills at RRPV 3 / 2 / 0 | time at 3 / 2 / 0 | records with CONS = 0 "
              "| mean CONS / mean PROD | SRRIP consumes | evicted unconsumed TSE → GSPC "
              "| consumed TSE → GSPC | GSPC misses / TSE |")
        print("|---|---|---|---|---|---|---|---|---|")
        cols = defaultdict(list)
        for scene in scenes:
            g = lambda pol, met: m[(size, scene, pol, met)]
            fills = [g("GSPC", f"rt_fill_rrpv{c}_share") for c in (3, 2, 0)]
            rs = rows[(size, scene)]
            if not rs:
                sys.exit(f"{a.counters} has no rows for {scene} at {size}")
            time = [sum(1 for r in rs if r[2] == c) / len(rs) for c in (3, 2, 0)]
            cons_zero = sum(1 for r in rs if r[1] == 0) / len(rs)
            mean_prod = sum(r[0] for r in rs) / len(rs)
            ratio = (sum(r[1] for r in rs) / len(rs)) / mean_prod if mean_prod else 0.0
            srrip = srrip_consumed(a.apusim, a.cache, scene, size)
            ev = [g(pol, "rt_evicted_unconsumed_share") for pol in ("GSPZTC+TSE", "GSPC")]
            co = [g(pol, "rt_consumed_share") for pol in ("GSPZTC+TSE", "GSPC")]
            miss = g("GSPC", "misses_vs_tse")
            values = fills + time + [cons_zero, ratio, srrip] + ev + co + [miss]
            for i, v in enumerate(values):
                cols[i].append(v)
            print(row(f"`{scene}`", values))
        means = [sum(v) / len(v) for _, v in sorted(cols.items())]
        # The misses' mean is the study's own (its "mean" workload: a geometric mean).
        means[-1] = m.get((size, "mean", "GSPC", "misses_vs_tse"), means[-1])
        print(row("**mean**", means))


def row(name, v):
    return (f"| {name} | {pct(v[0])} / {pct(v[1])} / {pct(v[2])} | {pct(v[3])} / {pct(v[4])} / "
            f"{pct(v[5])} | {pct(v[6])} | {v[7]:.2f} | {pct(v[8])} | {pct(v[9])} → {pct(v[10])} "
            f"| {pct(v[11])} → {pct(v[12])} | {v[13]:.3f} |")


if __name__ == "__main__":
    main()
