#!/usr/bin/env python3
"""fake_compare.py - scripts/compare_sdpa.py --serve's protocol without a GPU,
for the speed stage's dry run (tests/scripts/device-dry.sh): reads lines
"JSON CUBIN", checks that the export holds a confirmation and that the cubin
is an ELF file, appends a summary line (fattn-tune at its confirmed median,
made-up PyTorch backends 1.2 and 1.5 times slower) to --summary-json, and
answers "done STATUS" on standard output. Measures nothing.
"""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--serve", action="store_true", required=True)
ap.add_argument("--n", type=int, default=100)
ap.add_argument("--markdown")
ap.add_argument("--samples-csv")
ap.add_argument("--summary-json", required=True)
a = ap.parse_args()
for line in sys.stdin:
    path, cubin = line.split()
    desc = json.load(open(path))
    conf = desc.get("confirmation") or {}
    with open(cubin, "rb") as f:
        elf = f.read(4) == b"\x7fELF"
    if not conf.get("median_us") or not elf:
        print(f"fake_compare.py: {path}: {'no confirmation' if elf else 'the cubin is not ELF'}", file=sys.stderr)
        print("done 2" if elf else "done 1", flush=True)
        continue
    m = float(conf["median_us"])
    sh = desc["shape"]

    def b(x):
        return {"median_us": x, "ci_us": [x * 0.99, x * 1.01], "p90_us": x * 1.02}
    with open(a.summary_json, "a") as f:
        f.write(json.dumps({"shape": [sh["batch"], sh["heads"], sh["seqlen"], sh["head_dim"]],
                            "causal": bool(sh["causal"]), "config": desc["config_key"], "device": "fake",
                            "n": a.n, "reps": 20, "agree": True, "order_agree": True, "n_bad": 0,
                            "reported_median_us": m,
                            "backends": {"fattn-tune": b(m), "torch flash": b(1.5 * m), "torch cudnn": b(1.2 * m)},
                            "skipped": {}}) + "\n")
    if a.markdown:
        with open(a.markdown, "a") as f:
            f.write(f"fake_compare.py: {desc['config_key']} compared (made-up PyTorch times)\n\n")
    print("done 0", flush=True)
