"""drp Fig. 13 from Python: LLC read misses of DRP per mix, split into the CPU's and the GPU's
part, normalized to the baseline policy (drp-reuse-probability-shared-llc.txt §6).

    pip install .                      # at the repository root
    python examples/python/drp_fig13.py --mixes S1,S2,S3 --limit 2000000 --out fig13.png

Prints the figure's table (one row per mix, the baseline's and DRP's CPU, GPU and total
normalized read misses) and, when matplotlib is installed, draws the figure's stacked bars
into a PNG. `--mixes S,D,Q --limit 0` runs the paper's whole figure (54 mixes, full length).
"""

import argparse
import sys

import apusim


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mixes", default="S1,S2,S3",
                    help="mixes, comma-separated (S, D, Q: all eighteen of a kind)")
    ap.add_argument("--limit", type=int, default=2_000_000,
                    help="accesses per run (0: the whole workload)")
    ap.add_argument("--scale", type=int, default=1, help="workload size multiplier")
    ap.add_argument("--cache-dir", default=None, help="trace cache (default: apusim's)")
    ap.add_argument("--out", default="drp-fig13.png", help="the PNG to draw")
    a = ap.parse_args(argv)

    df = apusim.study("drp-fig13", mixes=a.mixes, limit=a.limit or None, scale=a.scale,
                      cache_dir=a.cache_dir)
    print(f"{df.attrs['title']}\n")
    table = df.pivot_table(index=["config", "workload"], columns=["policy", "metric"],
                           values="value", sort=False)
    with_pd_options(lambda: print(table.round(4).to_string()))
    print(f"\npaper: {df.attrs['paper']}")

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no figure drawn", file=sys.stderr)
        return 0
    drp = df[df.policy == "DRP"]
    parts = drp.pivot_table(index="workload", columns="metric", values="value", sort=False)
    labels = list(parts.index)
    cpu = parts["cpu_read_misses_norm"].to_numpy()
    gpu = parts["gpu_read_misses_norm"].to_numpy()
    fig, ax = plt.subplots(figsize=(max(4, 0.5 * len(labels) + 2), 3.5))
    ax.bar(labels, cpu, label="CPU", color="#4c72b0")
    ax.bar(labels, gpu, bottom=cpu, label="GPU", color="#dd8452")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_ylabel("LLC read misses\n(normalized to baseline)")
    ax.set_title("drp Fig. 13: DRP's LLC read misses")
    ax.legend(loc="lower right")
    plt.setp(ax.get_xticklabels(), rotation=90 if len(labels) > 12 else 0)
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(f"wrote {a.out}", file=sys.stderr)
    return 0


def with_pd_options(f):
    import pandas as pd
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        f()


if __name__ == "__main__":
    sys.exit(main())
