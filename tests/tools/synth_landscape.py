#!/usr/bin/env python3
"""synth_landscape.py - a synthetic landscape for testing search strategies
without a GPU, until a real one from the device replaces it.

Reads one study of a compile-all database (lab/compile-all/compile-all.sh: every
configuration of the default space gated and compiled for an arch, no GPU)
and writes a landscape file (the format `fattn-tune query landscape` writes
and the replay evaluator reads): the study's static and post-compile
rejections as they are, and for each compiled configuration a median time
from a performance model of an H100 running the kernel:

  t = launch + max(compute, memory) + 0.3 * min(compute, memory)

compute: the busiest SM's blocks (wave quantization over 132 SMs) times the
FLOPs of a block over an SM's mma.sync rate scaled by per-parameter
efficiencies (warps, tile sizes, cp.async with its stage count, half2,
swizzle, unroll against register pressure, occupancy); memory: the K/V
re-reads of every block through L2. A deterministic per-configuration
log-normal factor (sigma 4%, seeded by the key) stands for the interactions
no simple model has. The numbers are plausible, not measured: the file
says so in its device line.

    python3 tests/tools/synth_landscape.py results/compile-all.db 2 > tests/data/landscape-synthetic-sm_90-2-8-512-64.csv
"""
import hashlib
import math
import random
import sqlite3
import sys

SMS = 132
SM_TFLOPS = 2.6  # mma.sync fp16 rate per SM, TFLOP/s (about 340 for the GPU)
L2_TBPS = 9.0
LAUNCH_US = 2.0

F_WARPS = {2: 0.85, 4: 1.0, 8: 0.9}
F_BN = {32: 0.84, 64: 1.0, 128: 0.94}
F_BK = {16: 0.82, 32: 0.95, 64: 1.0}
F_STAGES_CP = {1: 0.84, 2: 1.0, 3: 0.97}
F_STAGES_REG = {1: 1.0, 2: 0.98, 3: 0.95}


def model_us(t, B, H, S, D, causal):
    bm, bn, bk, w, s, u, cp, sw, h2 = (t[k] for k in ("block_m", "block_n", "block_k", "num_warps", "stages",
                                                       "unroll", "cp_async", "swizzle", "half2"))
    e = F_WARPS[w] * F_BN[bn] * F_BK[bk]
    e *= F_STAGES_CP[s] if cp else 0.8 * F_STAGES_REG[s]
    e *= 1.0 if h2 else 0.9
    e *= 1.0 if sw else 0.97
    e *= 1.02 if u == 2 and t["registers"] < 160 else (0.97 if u == 2 else 1.0)
    occ = t["occupancy"] or 0.125
    e *= 0.6 + 0.4 * min(1.0, occ / 0.5)
    nblocks = math.ceil(S / bm) * H * B
    load = math.ceil(nblocks / SMS)  # blocks on the busiest SM
    flops_block = 4.0 * bm * S * D * (0.5 if causal else 1.0)
    compute = load * flops_block / (SM_TFLOPS * 1e12 * e) * 1e6
    bytes_total = nblocks * (2 * S * D * 2 * (0.5 if causal else 1.0) + 2 * bm * D * 2)
    memory = bytes_total / (L2_TBPS * 1e12) * 1e6
    return LAUNCH_US + max(compute, memory) + 0.3 * min(compute, memory)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: synth_landscape.py COMPILE_ALL_DB STUDY")
    db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True)
    db.row_factory = sqlite3.Row
    st = db.execute("SELECT * FROM studies WHERE id = ?", (int(sys.argv[2]),)).fetchone()
    if st is None:
        sys.exit("no study %s" % sys.argv[2])
    B, H, S, D, causal = st["batch"], st["heads"], st["seqlen"], st["head_dim"], st["causal"]
    print("# fattn-tune landscape 1")
    # The former path (scripts/), as the committed landscapes have it.
    print("# device: synthetic (no GPU: a performance model over the %s compile of the default space, "
          "scripts/synth_landscape.py)" % st["arch"])
    print("# arch: %s" % st["arch"])
    print("# shape: %d,%d,%d,%d" % (B, H, S, D))
    print("# causal: %d" % causal)
    print("# method: none (modelled times, not measured)")
    print("key,status,reason,median_us,p10_us,p90_us")
    rows = db.execute("SELECT * FROM trials WHERE study_id = ? ORDER BY config_key", (st["id"],)).fetchall()
    for t in rows:
        if t["status"] != "compiled":
            print("%s,%s,%s,,," % (t["config_key"], t["status"], t["reason"] or ""))
            continue
        rnd = random.Random(int.from_bytes(hashlib.sha256(t["config_key"].encode()).digest()[:8], "little"))
        med = model_us(t, B, H, S, D, causal) * math.exp(rnd.gauss(0, 0.04))
        print("%s,ok,,%.4f,%.4f,%.4f" % (t["config_key"], med, med * 0.985, med * 1.02))


if __name__ == "__main__":
    main()
