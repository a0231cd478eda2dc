#!/usr/bin/env python3
"""test_speed_table.py - the verdicts of scripts/speed_table.py, issue 5's
acceptance table, on summary lines whose answers are known: a target met with
CIs apart, a target missed, CIs overlapping, a causal win, parity and loss,
a numerics failure; and the exit status over a file.

    test_speed_table.py SOURCE_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(sys.argv[1], "scripts"))
import speed_table as t  # noqa: E402

failures = []


def line(shape, causal, ours, flash, cudnn, **kw):
    def b(m, lo, hi):
        return {"median_us": m, "ci_us": [lo, hi], "p90_us": hi}
    d = {"shape": shape, "causal": causal, "config": "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-kv2",
         "backends": {"fattn-tune": b(*ours), "torch flash": b(*flash), "torch cudnn": b(*cudnn)},
         "agree": True, "n_bad": 0}
    d.update(kw)
    return d


def expect(name, ln, passed, words):
    ok, text = t.verdict(ln)
    if ok != passed or any(w not in text for w in words):
        failures.append(f"{name}: got ({ok}, {text!r}), expected ({passed}, containing {words})")


s = [2, 8, 512, 64]
expect("met", line(s, False, (6.0, 5.9, 6.1), (13.0, 12.9, 13.1), (9.3, 9.2, 9.4)), True,
       ["met", "at or under 6.5 us", "CIs apart"])
expect("over target", line(s, False, (7.0, 6.9, 7.1), (13.0, 12.9, 13.1), (9.3, 9.2, 9.4)), False,
       ["not met", "OVER 6.5 us"])
# Under the target but the CI touches cuDNN's: no win.
expect("overlap", line(s, False, (6.0, 5.9, 9.25), (13.0, 12.9, 13.1), (9.3, 9.2, 9.4)), False,
       ["not met", "CIs overlap", "torch cudnn"])
expect("numerics", line(s, False, (6.0, 5.9, 6.1), (13.0, 12.9, 13.1), (9.3, 9.2, 9.4), n_bad=3), False,
       ["numerics: 3 elements off"])
expect("disagree", line(s, False, (6.0, 5.9, 6.1), (13.0, 12.9, 13.1), (9.3, 9.2, 9.4), agree=False), False,
       ["disagree"])
expect("order", line(s, False, (6.0, 5.9, 6.1), (13.0, 12.9, 13.1), (9.3, 9.2, 9.4), order_agree=False), False,
       ["reverse order disagrees"])
expect("order agrees", line(s, False, (6.0, 5.9, 6.1), (13.0, 12.9, 13.1), (9.3, 9.2, 9.4), order_agree=True), True,
       ["met"])
expect("causal win", line(s, True, (8.0, 7.9, 8.1), (12.0, 11.9, 12.1), (9.0, 8.9, 9.1)), True,
       ["win over torch cudnn"])
expect("causal parity", line(s, True, (8.95, 8.8, 9.05), (12.0, 11.9, 12.1), (9.0, 8.9, 9.1)), True,
       ["parity with torch cudnn"])
expect("causal behind", line(s, True, (9.2, 9.05, 9.3), (12.0, 11.9, 12.1), (9.0, 8.9, 9.1)), False,
       ["behind torch cudnn"])
expect("no target", line([3, 8, 512, 64], False, (6.0, 5.9, 6.1), (13.0, 12.9, 13.1), (9.3, 9.2, 9.4)), True,
       ["met", "CIs apart"])
rows, ok = t.table([line(s, False, (6.0, 5.9, 6.1), (13.0, 12.9, 13.1), (9.3, 9.2, 9.4),
                         skipped={"torch efficient": "no kernel"})])
if not ok or "| 2,8,512,64 | no |" not in rows[2] or "6.00 [5.90, 6.10]" not in rows[2] or "not run" not in rows[2]:
    failures.append(f"table row: {rows}")

# The command: exit 0 when all pass, 1 when one does not, 2 on bad input.
script = os.path.join(sys.argv[1], "scripts", "speed_table.py")
with tempfile.TemporaryDirectory() as d:
    good, bad, broken = (os.path.join(d, n) for n in ("good.jsonl", "bad.jsonl", "broken.jsonl"))
    ln1 = line(s, False, (6.0, 5.9, 6.1), (13.0, 12.9, 13.1), (9.3, 9.2, 9.4), device="NVIDIA H100 80GB HBM3")
    ln2 = line(s, True, (9.2, 9.05, 9.3), (12.0, 11.9, 12.1), (9.0, 8.9, 9.1))
    open(good, "w").write(json.dumps(ln1) + "\n")
    open(bad, "w").write(json.dumps(ln1) + "\n" + json.dumps(ln2) + "\n")
    open(broken, "w").write("{not json\n")
    for path, want in ((good, 0), (bad, 1), (broken, 2)):
        r = subprocess.run([sys.executable, script, path], capture_output=True, text=True)
        if r.returncode != want:
            failures.append(f"{os.path.basename(path)}: exit {r.returncode}, expected {want}: {r.stderr}")
    r = subprocess.run([sys.executable, script, good], capture_output=True, text=True)
    if "NVIDIA H100 80GB HBM3" not in r.stdout or "**Every shape passes.**" not in r.stdout:
        failures.append(f"good output: {r.stdout}")

# Issue 33's table (--pairs): a row per pair, compared or not; the chain is
# complete only with a confirm of 100 samples and a compare that agrees.
def pair(shape, causal, n=100, config="bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-kv2"):
    return {"shape": shape, "causal": causal, "config": config, "n": n, "median_us": 6.0, "ci_us": [5.9, 6.1],
            "base_desc": "cuDNN (worker)", "base_median_us": 9.0, "base_ci_us": [8.9, 9.1], "measured": 120,
            "survivors": 360, "budget_s": 15}


full = line(s, False, (6.0, 5.9, 6.1), (13.0, 12.9, 13.1), (9.3, 9.2, 9.4))
rows, ok = t.pair_table([pair(s, False)], [full])
if not ok or "| complete |" not in rows[2] or "120 / 360 / 15 s" not in rows[2] or "| 1.50 |" not in rows[2] \
        or "| 2.17 |" not in rows[2] or "| 1.55 |" not in rows[2] or "| 179.0 |" not in rows[2]:
    failures.append(f"pair row: {rows}")
# The winning family and each family's best: from the line, or the key's family.
mixed = dict(pair(s, False, config="wgmma-bm128-bn128-s2-rs1"), family="wgmma",
             families={"mma": {"best_us": 6.4, "measured": 30}, "wgmma": {"best_us": 6.05, "measured": 12}})
rows, _ = t.pair_table([mixed, pair(s, True)], [])
if "| wgmma | `wgmma-bm128-bn128-s2-rs1` |" not in rows[2] or "| wgmma 6.05 (12); mma 6.40 (30) |" not in rows[2] \
        or "| mma | `bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-kv2` |" not in rows[3] or "| - |" not in rows[3]:
    failures.append(f"the families' columns: {rows}")
if t.family_of({"config": "wgmma-bm64-bn64-s2-rs0"}) != "wgmma" or t.family_of({"config": "bm64-bn64"}) != "mma":
    failures.append("family_of by key")
for name, pairs, lines, word in (("not compared", [pair(s, False)], [], "not compared"),
                                 ("short confirm", [pair(s, False, n=40)], [full], "confirm with 40 samples"),
                                 ("disagree", [pair(s, False)], [dict(full, agree=False)], "disagrees"),
                                 ("order", [pair(s, False)], [dict(full, order_agree=False)], "reverse order"),
                                 ("other config", [pair(s, False, config="bm32")], [full], "not compared")):
    rows, ok = t.pair_table(pairs, lines)
    if ok or word not in rows[2]:
        failures.append(f"{name}: {rows}")

for f in failures:
    print("FAIL:", f)
print(f"speed_table: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
