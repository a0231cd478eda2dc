#!/usr/bin/env python3
"""search_pairs.py - reproduces the search-based ablation of the wgmma
family's OVERLAP and PINGPONG tunables in docs/device/h200-2026-11-28/README.md
from a search's trials (CSV with config_key, status, median_us).

Each configuration with OVERLAP and/or PINGPONG is paired with the same
configuration with both off (and, for both on, with OVERLAP alone); the
ratio of medians says what switching the tunable on did there. The trials
of one search were measured minutes apart, not interleaved: this reads a
landscape, it does not replace the interleaved ablation issue 51 asks for.

    search_pairs.py TRIALS.csv [TRIALS.csv...]
"""
import csv
import statistics
import sys


def variants(path):
    groups = {}
    for r in csv.DictReader(open(path)):
        if r["status"] != "ok" or not r.get("median_us"):
            continue
        key = r["config_key"]
        base = key.replace("-ov1", "").replace("-pp1", "")
        groups.setdefault(base, {})[("-ov1" in key, "-pp1" in key)] = float(r["median_us"])
    return groups


def main():
    names = {(True, False): "OVERLAP", (False, True): "PINGPONG", (True, True): "both"}
    for path in sys.argv[1:]:
        g = variants(path)
        n = sum(len(d) for d in g.values())
        print(f"{path}: {n} measured configurations")
        best = min((t, b, v) for b, d in g.items() for v, t in d.items())
        print(f"  best: {best[1]} {names.get(best[2], 'neither')} {best[0]:.3f} us")
        print("  | switched on | against | pairs | median ratio | min | max |")
        print("  |---|---|---|---|---|---|")
        for v, against in (((True, False), (False, False)), ((False, True), (False, False)),
                           ((True, True), (False, False)), ((True, True), (True, False))):
            r = sorted(d[v] / d[against] for d in g.values() if v in d and against in d)
            if r:
                print(f"  | {names[v]} | {names.get(against, 'neither')} | {len(r)} | "
                      f"{statistics.median(r):.3f} | {r[0]:.3f} | {r[-1]:.3f} |")
        for v in ((False, False), (True, False), (False, True), (True, True)):
            c = [(d[v], b) for b, d in g.items() if v in d]
            if c:
                t, b = min(c)
                print(f"  fastest with {names.get(v, 'neither')}: {b} {t:.3f} us")


if __name__ == "__main__":
    main()
