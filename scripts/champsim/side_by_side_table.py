#!/usr/bin/env python3
"""Table of apusim sim vs ChampSim from the outputs of side_by_side.sh.

usage: side_by_side_table.py OUT_DIR "KINDS" "POLICIES" [REFERENCE_JSON]

ChampSim's LLC MPKI counts the LLC's LOAD, RFO, PREFETCH and WRITE misses of the region of
interest per thousand instructions; its TRANSLATION misses (page-walk reads, which apusim
does not model) are shown apart. apusim's is its `llc` level's demand MPKI.

Each ChampSim policy is compared with the apusim policy that behaves as ChampSim's module
does (lru; champsim-rrip for srrip, drrip and ship, whose fills ChampSim never updates);
apusim's policies as published (srrip, drrip, ship-pc) are shown beside them.
"""

PUBLISHED = {"lru": "lru", "srrip": "srrip", "drrip": "drrip", "ship": "ship-pc"}
AS_CHAMPSIM = {"lru": "lru", "srrip": "champsim-rrip", "drrip": "champsim-rrip", "ship": "champsim-rrip"}
import json
import sys


def champsim(out, kind, policy):
    with open(f"{out}/champsim-{kind}-{policy}.json") as f:
        roi = json.load(f)[0]["roi"]
    core = roi["cores"][0]
    llc = roi["LLC"]
    kilo = core["instructions"] / 1000.0
    miss = lambda t: sum(llc[t]["miss"])
    with open(f"{out}/champsim-{kind}-{policy}.time") as f:
        secs = float(f.read())
    return {
        "ipc": core["instructions"] / core["cycles"],
        "llc_mpki": sum(miss(t) for t in ("LOAD", "RFO", "PREFETCH", "WRITE")) / kilo,
        "translation_mpki": miss("TRANSLATION") / kilo,
        "mispredict_mpki": sum(core["mispredict"].values()) / kilo,
        "seconds": secs,
    }


def apusim(out, kind, policy):
    with open(f"{out}/apusim-{kind}-{policy}.json") as f:
        r = json.load(f)[0]
    c = r["cores"][0]
    llc = next(l for l in c["levels"] if l["level"] == "llc")
    with open(f"{out}/apusim-{kind}-{policy}.time") as f:
        secs = float(f.read())
    return {
        "ipc": c["ipc"],
        "llc_mpki": llc["mpki"],
        "mispredict_mpki": c["core"]["mispredicts"] / (c["instructions"] / 1000.0),
        "seconds": secs,
    }


def counts(out, kind):
    with open(f"{out}/champsim-{kind}-lru.txt") as f:
        text = f.read()
    warm = sim = None
    for line in text.splitlines():
        if line.startswith("Warmup Instructions:"):
            warm = int(line.split()[-1])
        if line.startswith("Simulation Instructions:"):
            sim = int(line.split()[-1])
    return warm, sim


def rel(a, b):
    return 100.0 * (a - b) / b if b else float("nan")


def rel_mpki(a, b):
    """Relative difference, or the absolute one below 0.1 MPKI, where a percentage of a
    handful of misses means nothing (the test's bound there is absolute too)."""
    if b < 0.1:
        return f"{a - b:+.3f} abs"
    return f"{rel(a, b):+.1f}%"


def main():
    out, kinds, policies = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
    reference = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
    rows = []
    ref = {}
    cs_total = ap_total = 0.0
    instr_total = 0
    for k in kinds:
        warm, sim = counts(out, k)
        ref[k] = {"warmup": warm, "instructions": sim, "seed": 1, "policies": {}}
        for p in policies:
            c, a = champsim(out, k, p), apusim(out, k, AS_CHAMPSIM[p])
            pub = apusim(out, k, PUBLISHED[p])
            n = (warm or 0) + (sim or 0)
            cs_total += c["seconds"]
            ap_total += a["seconds"]
            instr_total += n
            ref[k]["policies"][p] = {key: round(v, 6) for key, v in c.items()}
            rows.append(
                f"| {k} | {p} | {AS_CHAMPSIM[p]} | {c['ipc']:.4f} | {a['ipc']:.4f} | {rel(a['ipc'], c['ipc']):+.1f}% "
                f"| {c['llc_mpki']:.3f} | {a['llc_mpki']:.3f} | {rel_mpki(a['llc_mpki'], c['llc_mpki'])} "
                f"| {c['translation_mpki']:.3f} | {c['mispredict_mpki']:.2f} / {a['mispredict_mpki']:.2f} "
                f"| {c['seconds']:.1f} | {a['seconds']:.2f} | {n / c['seconds'] / 1e3:.0f} K "
                f"| {n / a['seconds'] / 1e6:.2f} M | {c['seconds'] / a['seconds']:.0f}x "
                f"| {PUBLISHED[p]}: {pub['ipc']:.4f} / {pub['llc_mpki']:.3f} |"
            )
    head = (
        "| trace | ChampSim policy | apusim policy | ChampSim IPC | apusim IPC | ΔIPC | ChampSim LLC MPKI "
        "| apusim LLC MPKI | ΔMPKI | ChampSim page-walk MPKI | branch MPKI (ChampSim / apusim) "
        "| ChampSim s | apusim s | ChampSim instr/s | apusim instr/s | speed ratio "
        "| apusim policy as published: IPC / LLC MPKI |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    )
    table = head + "\n" + "\n".join(rows) + "\n"
    table += (
        f"\nWhole run: ChampSim {cs_total:.0f} s, apusim {ap_total:.1f} s for "
        f"{instr_total / 1e6:.1f}M instructions each (warm-up included): apusim is "
        f"{cs_total / ap_total:.0f}x faster.\n"
    )
    with open(f"{out}/side_by_side.md", "w") as f:
        f.write(table)
    print(table)
    if reference:
        with open(reference, "w") as f:
            json.dump(ref, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"wrote {reference}")


if __name__ == "__main__":
    main()
