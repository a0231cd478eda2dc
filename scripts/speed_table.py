#!/usr/bin/env python3
"""speed_table.py - the speed table: fattn-tune beside PyTorch SDPA per shape.

With --pairs (the speed stage's speed-pairs.jsonl, one line per shape and
mask: fattn-tune's confirmed median and 95% CI, trials measured, gate
survivors, search budget, our own baseline, the confirmed configuration's
family and each family's best in the search), one row per pair naming the
winning family, joined with
compare_sdpa.py's summary line for it where there is one, with TFLOP/s, the
ratios and whether the pair's chain (confirm of 100 samples, compare
agreeing within 10%) is complete: issue 33's table. Exit 1 unless every
chain is complete.

Without --pairs, issue 5's acceptance table from compare_sdpa.py's summary
lines:

Reads the JSON lines `scripts/compare_sdpa.py --summary-json FILE` appends
(one per shape: medians and bootstrap 95% CIs of fattn-tune and of each
PyTorch SDPA backend, measured in one CUDA-graph harness) and prints a
markdown table with the issue's bar for each shape and the verdict:

- non-causal shapes: `met` when fattn-tune's median is at or under the
  issue's target AND its 95% CI lies below the CI of every PyTorch backend
  that ran (a win with non-overlapping CIs); else what is missing;
- causal shapes: `win` when fattn-tune's CI lies below the better (lower
  median) backend's CI, `parity` when the CIs overlap and fattn-tune's median
  is at or under that backend's, else `behind`; `win` and `parity` pass.

Shapes without a target (not in the issue's table) are listed with the
non-causal rule's CI test only. A shape whose harness reported a numerics
failure or a disagreement with fattn-tune's own median fails.

    python3 scripts/speed_table.py speed.jsonl >> docs/speed-h100.md

Exit status 0 when every shape passes, 1 otherwise, 2 on unreadable input.
Needs only the Python standard library.
"""
import argparse
import json
import sys

# The targets, microseconds, for the non-causal seed shapes (B, H, S, D).
TARGETS = {
    (1, 8, 512, 64): 6.5,
    (2, 8, 512, 64): 6.5,
    (4, 8, 512, 64): 7.5,
    (4, 16, 512, 64): 12.5,
    (8, 16, 512, 64): 21.0,
    (4, 16, 2048, 128): 385.0,
}
OURS = "fattn-tune"


def cell(b):
    return f"{b['median_us']:.2f} [{b['ci_us'][0]:.2f}, {b['ci_us'][1]:.2f}]"


def verdict(line):
    """(passed, text) for one summary line."""
    bk = line["backends"]
    if OURS not in bk:
        return False, "fattn-tune not measured"
    ours = bk[OURS]
    others = {k: v for k, v in bk.items() if k != OURS}
    problems = []
    if line.get("n_bad", 0):
        problems.append(f"numerics: {line['n_bad']} elements off")
    if not line.get("agree", False):
        problems.append("harness and fattn-tune disagree beyond 10%")
    if line.get("order_agree") is False:  # absent in lines written before the reverse-order rerun
        problems.append("the rerun in reverse order disagrees beyond 3%")
    if not others:
        return False, "; ".join(problems + ["no PyTorch backend ran"])
    best_name = min(others, key=lambda k: others[k]["median_us"])
    best = others[best_name]
    apart = all(ours["ci_us"][1] < v["ci_us"][0] for v in others.values())
    if line["causal"]:
        if ours["ci_us"][1] < best["ci_us"][0]:
            text, ok = f"win over {best_name}", True
        elif ours["median_us"] <= best["median_us"]:
            text, ok = f"parity with {best_name} (CIs overlap)", True
        else:
            text, ok = f"behind {best_name}", False
        return ok and not problems, "; ".join([text] + problems)
    target = TARGETS.get(tuple(line["shape"]))
    parts = []
    ok = apart
    if target is not None:
        under = ours["median_us"] <= target
        ok = ok and under
        parts.append(f"{'at or under' if under else 'OVER'} {target:g} us")
    parts.append("CIs apart from every backend" if apart else f"CIs overlap or behind ({best_name})")
    passed = ok and not problems
    return passed, ("met: " if passed else "not met: ") + ", ".join(parts) + "".join("; " + p for p in problems)


def table(lines):
    names = ["torch flash", "torch efficient", "torch cudnn"]
    out = ["| B,H,S,D | causal | config | fattn-tune us [95% CI] | " + " | ".join(n + " us" for n in names)
           + " | target us | verdict |",
           "|---|---|---|---|" + "---|" * len(names) + "---|---|"]
    passed_all = True
    for ln in lines:
        ok, text = verdict(ln)
        passed_all &= ok
        bk = ln["backends"]
        row = [",".join(map(str, ln["shape"])), "yes" if ln["causal"] else "no", f"`{ln['config']}`",
               cell(bk[OURS]) if OURS in bk else "-"]
        for n in names:
            row.append(cell(bk[n]) if n in bk else "not run" if n in ln.get("skipped", {}) else "-")
        target = TARGETS.get(tuple(ln["shape"]))
        row.append("-" if ln["causal"] else f"{target:g}" if target is not None else "-")
        row.append(text)
        out.append("| " + " | ".join(row) + " |")
    return out, passed_all


def ci_cell(m, ci):
    return "-" if m is None else f"{m:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else f"{m:.2f}"


def ratio(num, den):
    return f"{num / den:.2f}" if num and den else "-"


def family_of(p):
    """The family of the pair's confirmed configuration (the winner): the
    line's own, else its key's (every family's key but mma's starts with the
    family's name)."""
    if p.get("family"):
        return p["family"]
    head = p["config"].split("-", 1)[0]
    return head if head and not head[:2] == "bm" and not head[0].isdigit() else "mma"


def family_bests(p):
    """Each family's fastest time in the pair's search, `family time
    (measured)`, the pair's winner first; "-" when the line has none."""
    fams = p.get("families") or {}
    if not fams:
        return "-"
    win = family_of(p)
    order = sorted(fams, key=lambda f: (f != win, f))
    return "; ".join(f"{f} {fams[f]['best_us']:.2f} ({fams[f].get('measured', '?')})" if fams[f].get("best_us")
                     else f"{f} none measured" for f in order)


def pair_table(pairs, summaries):
    """The issue-33 table: one row per (shape, mask) fattn-tune measured,
    joined with compare_sdpa.py's line for it where there is one. Returns
    (rows, every chain complete)."""
    out = ["| B,H,S,D | mask | family | config | fattn-tune confirmed us [95% CI] | TFLOP/s "
           "| each family's best in the search (us) | trials / survivors / budget "
           "| our baseline us [95% CI] | torch flash us | torch cudnn us | baseline / ours | flash / ours "
           "| torch cudnn / ours | chain | bar |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    complete = True
    for p in pairs:
        sh = p["shape"]
        flops = 4.0 * sh[0] * sh[1] * sh[2] * sh[2] * sh[3] * (0.5 if p["causal"] else 1.0)
        cmp = next((ln for ln in summaries if list(ln["shape"]) == list(sh) and bool(ln["causal"]) == bool(p["causal"])
                    and ln["config"] == p["config"]), None)
        bk = cmp["backends"] if cmp else {}
        ours = p.get("median_us")
        problems = []
        if not ours or p.get("n", 0) < 100:
            problems.append(f"confirm with {p.get('n', 0)} samples")
        if not cmp:
            problems.append("not compared")
        elif not cmp.get("agree", False):
            problems.append("compare disagrees beyond 10%")
        elif cmp.get("order_agree") is False:
            problems.append("compare's rerun in reverse order disagrees beyond 3%")
        elif cmp.get("n_bad", 0):
            problems.append(f"compare: {cmp['n_bad']} elements off torch's math backend")
        complete &= not problems
        bar = verdict(cmp)[1] if cmp else "-"
        base = f"{p.get('base_desc', '-')}: {ci_cell(p.get('base_median_us'), p.get('base_ci_us'))}"
        row = [",".join(map(str, sh)), "causal" if p["causal"] else "none", family_of(p), f"`{p['config']}`",
               ci_cell(ours, p.get("ci_us")), f"{flops / ours / 1e6:.1f}" if ours else "-", family_bests(p),
               f"{p.get('measured', '?')} / {p.get('survivors', '?')} / {p.get('budget_s', '?')} s", base,
               cell(bk["torch flash"]) if "torch flash" in bk else "-",
               cell(bk["torch cudnn"]) if "torch cudnn" in bk else "-",
               ratio(p.get("base_median_us"), ours),
               ratio(bk.get("torch flash", {}).get("median_us"), ours),
               ratio(bk.get("torch cudnn", {}).get("median_us"), ours),
               "complete" if not problems else "; ".join(problems), bar]
        out.append("| " + " | ".join(row) + " |")
    return out, complete


def read_lines(path, keys):
    with open(path) as f:
        lines = [json.loads(t) for t in f if t.strip()]
    for ln in lines:
        for k in keys:
            if k not in ln:
                raise ValueError(f"a line lacks '{k}'")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("summary", nargs="?", help="JSON lines from compare_sdpa.py --summary-json")
    ap.add_argument("--pairs", help="JSON lines of fattn-tune's side, one per (shape, mask): the speed stage's "
                    "speed-pairs.jsonl (confirmed median and CI, trials, survivors, budget, our baseline); with "
                    "it, one row per pair, compared or not, and exit 1 unless every chain is complete")
    a = ap.parse_args()
    if not a.summary and not a.pairs:
        ap.error("expected a summary file, --pairs FILE, or both")
    try:
        lines = read_lines(a.summary, ("shape", "causal", "config", "backends")) if a.summary else []
        pairs = read_lines(a.pairs, ("shape", "causal", "config")) if a.pairs else []
    except (OSError, ValueError) as e:
        print(f"speed_table.py: {e}", file=sys.stderr)
        return 2
    if not lines and not pairs:
        print(f"speed_table.py: {a.summary}: no summary lines", file=sys.stderr)
        return 2
    if lines:
        first = lines[0]
        print(f"Measured {first.get('date', '?')} on {first.get('device', '?')}, driver CUDA "
              f"{first.get('driver', '?')}, PyTorch {first.get('torch', '?')} (CUDA {first.get('cuda', '?')}, "
              f"cuDNN {first.get('cudnn', '?')}); {first.get('n', '?')} samples per side, each one CUDA-graph "
              f"replay of {first.get('reps', '?')} calls; medians with bootstrap 95% CIs (scripts/compare_sdpa.py).")
    else:
        print(f"Measured on {pairs[0].get('device', '?')}; no PyTorch comparison (scripts/compare_sdpa.py) "
              "ran.")
    print()
    if pairs:
        print("fattn-tune's side is its own `confirm --n 100` of the best configuration its search found "
              "(medians and bootstrap 95% CIs); our baseline is cuDNN through fattn-tune's worker on non-causal "
              "shapes and the FA2-like configuration of our kernel on causal ones; the torch columns come from "
              "one compare_sdpa.py process timing the exported cubin beside PyTorch SDPA. Ratios above 1: "
              "fattn-tune faster.")
        print()
        rows, ok = pair_table(pairs, lines)
        print("\n".join(rows))
        print()
        print(f"**{'Every pair: search, confirm, export and compare complete.' if ok else 'Some pairs are incomplete.'}**")
        return 0 if ok else 1
    rows, ok = table(lines)
    print("\n".join(rows))
    print()
    print(f"**{'Every shape passes.' if ok else 'Some shapes do not pass.'}**")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
