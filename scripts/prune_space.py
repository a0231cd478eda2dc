#!/usr/bin/env python3
"""prune_space.py - a search space pruned by measured landscapes.

The rule (issue 33): a value of a tunable stays when some configuration
holding it measured within THRESHOLD (default 15%) of the best of its
landscape, at any of the landscapes given; the space is the product of the
values that stay, and the gates (at search time, `--smem-limit max`) take
what cannot run. Tunables a landscape does not vary (the extension tunables
SPLIT_KV and Q_REGS, which the measured landscapes predate) keep the values
--keep names, with the reason in the description.

    python3 scripts/prune_space.py --base search/space-h100.json \\
        --keep 'SPLIT_KV=1:...' --keep 'Q_REGS=0,1:...' \\
        tests/data/landscape-h100-2-8-512-64.csv \\
        tests/data/landscape-h100-2-8-512-64-causal.csv \\
        tests/data/landscape-h100-4-16-2048-128.csv > search/space-speed.json

Prints the space as JSON (the format of search/space.json) with a
description naming the rule, the landscapes, each landscape's best and how
many configurations were within the threshold. Exit status 2 on unreadable
input. Needs only the Python standard library.
"""
import argparse
import csv
import json
import math
import re
import sys

ABBREV = {"bm": "BLOCK_M", "bn": "BLOCK_N", "bk": "BLOCK_K", "w": "NUM_WARPS", "s": "STAGES", "u": "UNROLL",
          "cp": "CP_ASYNC", "sw": "SWIZZLE", "h": "HALF2", "kv": "SPLIT_KV", "qr": "Q_REGS", "pad": "PAD_BYTES",
          "cm": "COPY_COLMAJOR", "rs": "PV_RS", "ov": "OVERLAP", "pp": "PINGPONG", "sc": "SCHED", "cl": "CLUSTER"}
# The optional tunables a configuration key leaves out at their default
# (src/family/*.c: a parameter marked optional is named only when it
# differs): a key without "ov" is OVERLAP=0.
DEFAULTS = {"SPLIT_KV": 1, "Q_REGS": 0, "PAD_BYTES": 0, "COPY_COLMAJOR": 0, "OVERLAP": 0, "PINGPONG": 0, "SCHED": 0,
            "CLUSTER": 1}


def read_landscape(path):
    """(header dict, [(key, median_us)] of the measured configurations): a
    landscape (fattn-tune query landscape: "# name: value" lines, then key,
    status, ..., median_us) or a trials table (config_key, status, ...,
    median_us; its file name stands for the shape)."""
    header, lines = {}, []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                k, _, v = line[1:].strip().partition(": ")
                header[k] = v
            else:
                lines.append(line)
    if not header:
        header["shape"] = path
    ok = [(r.get("key") or r.get("config_key"), float(r["median_us"])) for r in csv.DictReader(lines)
          if r.get("status") == "ok" and r.get("median_us")]
    if not ok:
        raise ValueError(f"{path}: no measured configuration")
    return header, ok


def params_of(key, names):
    """The tunables of a configuration key, those of `names` it leaves out
    at their default."""
    out = {n: DEFAULTS[n] for n in names if n in DEFAULTS}
    for m in re.finditer(r"([a-z]+)(\d+)", key):
        if m.group(1) not in ABBREV:
            raise ValueError(f"configuration key '{key}': unknown tunable '{m.group(1)}'")
        out[ABBREV[m.group(1)]] = int(m.group(2))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("landscapes", nargs="+", help="landscape CSVs (fattn-tune query landscape)")
    ap.add_argument("--base", required=True, help="the space whose tunables (and their order) the result keeps")
    ap.add_argument("--threshold", type=float, default=0.15, help="within this fraction of a best (default 0.15)")
    ap.add_argument("--keep", action="append", default=[], metavar="NAME=V,V[:WHY]",
                    help="values of a tunable the landscapes do not vary, and why (into the description)")
    a = ap.parse_args()
    try:
        base = json.load(open(a.base))
        lands = [(p,) + read_landscape(p) for p in a.landscapes]
        keep = {}
        why = {}
        for k in a.keep:
            name, _, vals = k.partition("=")
            vals, _, why[name] = vals.partition(":")
            keep[name] = [int(v) for v in vals.split(",")]
    except (OSError, ValueError, KeyError) as e:
        print(f"prune_space.py: {e}", file=sys.stderr)
        sys.exit(2)
    names = list(base["parameters"])
    values = {n: set() for n in names}
    notes = []
    for path, header, ok in lands:
        best = min(m for _, m in ok)
        near = [(k, m) for k, m in ok if m <= (1 + a.threshold) * best]
        for k, _ in near:
            for n, v in params_of(k, names).items():
                if n in values:
                    values[n].add(v)
        best_key = min(ok, key=lambda x: x[1])[0]
        on = f" on {header['device']}" if header.get("device") else ""
        notes.append(f"{header.get('shape', '?')}{' causal' if header.get('causal') == '1' else ''}{on}: "
                     f"best {best_key} {best:.1f} us, {len(near)} of {len(ok)} measured within {a.threshold:.0%}")
    out = {}
    for n in names:
        if n in keep:
            out[n] = keep[n]
        elif values[n]:
            out[n] = sorted(values[n])
        else:
            out[n] = base["parameters"][n]
    size = math.prod(len(v) for v in out.values())
    unknown = [n for n in keep if n not in names]
    if unknown:
        print(f"prune_space.py: --keep {unknown[0]}: {a.base} has no such tunable", file=sys.stderr)
        sys.exit(2)
    desc = (f"{a.base} pruned by the measured landscapes (scripts/prune_space.py): a value stays "
            f"when some configuration holding it measured within {a.threshold:.0%} of the best at any of "
            f"{'; '.join(notes)}. "
            + "".join(f"{n}, which those landscapes do not vary: {keep[n]}{' (' + why[n] + ')' if why[n] else ''}. "
                      for n in keep)
            + f"The gates take what cannot run. {' x '.join(str(len(v)) for v in out.values())} = {size:,} "
            f"configurations.")
    space = {"description": desc}
    if "family" in base:
        space["family"] = base["family"]
    space["parameters"] = out
    json.dump(space, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
