#!/usr/bin/env python3
"""Write a synthetic ChampSim trace: a pointer-chasing loop over a large array.

Each record is ChampSim's 64-byte `input_instr` (little-endian):
    u64 ip; u8 is_branch; u8 branch_taken; u8 dest_regs[2]; u8 src_regs[4];
    u64 dest_mem[2]; u64 src_mem[4]
ChampSim picks the decompressor from the file name: *.xz (lzma), *.gz, *.bz2,
anything else is read raw.  Register 0 / address 0 mean "unused"; registers
6, 25, 26 are ChampSim's stack pointer, flags and instruction pointer, which it
uses to classify branches (inc/instruction.h).

Loop body (3 + F instructions, F = --filler, default 13 -> 16 per iteration),
repeated until --instructions are written:
    L: load r1 <- [r1]        src_mem = next node (random 64-B line in the region)
       add  rX <- rX          F independent ALU ops (rX cycles over r2..r5, r7..r10)
       cmp  flags <- r1       depends on the load
       jne  L                 conditional branch (reads ip+flags, writes ip), always taken
The nodes form one random cyclic permutation of all cache lines of the region,
so every load depends on the previous one (serialised misses, no MLP).

Why the filler: ChampSim aborts a run ("panic: IPC < 0.01", then a DEADLOCK
dump) when a core retires fewer than 0.01 instructions/cycle over 10M cycles
(src/champsim.cc).  A bare 4-instruction chase loop reaches only ~0.008 IPC with
the default configuration, so the loop is padded to keep IPC above that bound.

Usage: make_trace.py OUT [--instructions N] [--region-mib M] [--filler F] [--seed S]
"""
import argparse
import lzma
import random
import struct

REC = struct.Struct("<QBB2B4B2Q4Q")
assert REC.size == 64
REG_FLAGS, REG_IP = 25, 26


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--instructions", type=int, default=2_000_000)
    ap.add_argument("--region-mib", type=int, default=64)
    ap.add_argument("--base", type=lambda s: int(s, 0), default=0x10000000)
    ap.add_argument("--filler", type=int, default=13, help="ALU ops per loop iteration")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    lines = a.region_mib * 1024 * 1024 // 64
    rng = random.Random(a.seed)
    order = list(range(lines))
    rng.shuffle(order)
    nxt = [0] * lines  # nxt[line] = following line on the single cycle
    for i in range(lines):
        nxt[order[i]] = order[(i + 1) % lines]

    ip0 = 0x401000
    load = lambda addr: REC.pack(ip0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, addr, 0, 0, 0)
    regs = [2, 3, 4, 5, 7, 8, 9, 10]  # avoid 6/25/26 (sp/flags/ip)
    alus = [REC.pack(ip0 + 4 * (1 + k), 0, 0, regs[k % 8], 0, regs[k % 8], 0, 0, 0, 0, 0, 0, 0, 0, 0)
            for k in range(a.filler)]
    ipc = ip0 + 4 * (1 + a.filler)
    cmp = REC.pack(ipc, 0, 0, REG_FLAGS, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    br = REC.pack(ipc + 4, 1, 1, REG_IP, 0, REG_IP, REG_FLAGS, 0, 0, 0, 0, 0, 0, 0, 0)
    per_iter = 3 + a.filler

    out = lzma.open(a.out, "wb", preset=1) if a.out.endswith(".xz") else open(a.out, "wb")
    with out:
        cur, n, buf = order[0], 0, []
        while n < a.instructions:
            body = [load(a.base + 64 * cur), *alus, cmp, br]
            cur = nxt[cur]
            take = min(per_iter, a.instructions - n)
            buf.extend(body[:take])
            n += take
            if len(buf) >= 65536:
                out.write(b"".join(buf))
                buf.clear()
        out.write(b"".join(buf))
    loads = -(-a.instructions // per_iter)
    print(f"wrote {a.instructions} instructions ({loads} chained loads over {a.region_mib} MiB, "
          f"{per_iter} instructions/iteration) to {a.out}")


if __name__ == "__main__":
    main()
