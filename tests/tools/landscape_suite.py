#!/usr/bin/env python3
"""landscape_suite.py - landscapes of structurally different shapes for
search-strategy work (issue 14), over the real verdicts of a base landscape.

Every landscape keeps the base's rejections (static gates, post-compile gates)
as they are, so the candidates and what costs a trial are those of a real
search; only the times of the measured configurations change, drawn from one
of these families:

  additive     log t = sum of per-parameter-value effects (independent)
  interact     small per-value effects plus strong pairwise terms:
               BLOCK_M x NUM_WARPS, STAGES x CP_ASYNC and two random pairs
  narrow       a broad smooth basin, and a narrow region (about 1% of the
               measured configurations, sharing several values) 10-15% faster
               than the basin's best, far from it in parameter space
  deceptive    a smooth basin whose best region (about 1%) is one parameter
               away from the worst configuration
  roofline     the base's own times (the synthetic roofline model when the
               base is tests/data/landscape-synthetic-*.csv)

On top of each: measurement noise (a lognormal factor per configuration,
sigma drawn from 2-5% per seed) and about 3% of the measured configurations
turned into GPU failures (numerics, runtime_fault), which cost a trial and
give no time. Everything is seeded: the same arguments write the same files.

    tests/tools/landscape_suite.py BASE OUTDIR [--seeds N] [--families a,b,...]

writes OUTDIR/FAMILY-sSEED.csv (seeds 1..N, default 3), each in the format
`fattn-tune query landscape` writes and the replay evaluator reads.
"""
import argparse
import math
import os
import random
import sys

FAMILIES = ("additive", "interact", "narrow", "deceptive", "roofline")
PREFIX = {"bm": "block_m", "bn": "block_n", "bk": "block_k", "w": "num_warps", "s": "stages", "u": "unroll",
          "cp": "cp_async", "sw": "swizzle", "h": "half2", "kv": "split_kv", "qr": "q_regs", "pad": "pad_bytes",
          "cm": "copy_colmajor"}


def parse_key(key):
    """bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1[-kv2][-qr1] -> {param: value}."""
    out = {}
    for part in key.split("-"):
        i = len(part)
        while i > 0 and part[i - 1].isdigit():
            i -= 1
        name, val = part[:i], part[i:]
        if name not in PREFIX or not val:
            raise ValueError("config key %r: part %r" % (key, part))
        out[PREFIX[name]] = int(val)
    out.setdefault("split_kv", 1)
    out.setdefault("q_regs", 0)
    return out


def read_base(path):
    head, rows = [], []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                head.append(line)
            elif line.startswith("key,"):
                continue
            elif line:
                key, status, reason, med, _, _ = line.split(",")
                rows.append({"key": key, "status": status, "reason": reason,
                             "median": float(med) if med else None, "cfg": parse_key(key)})
    if not any(r["status"] == "ok" for r in rows):
        sys.exit("landscape_suite.py: %s has no measured configuration" % path)
    return head, rows


class Levels:
    """Each parameter's values among the measured configurations, as levels
    0..n-1 in increasing order."""

    def __init__(self, cfgs):
        self.values = {}
        for c in cfgs:
            for p, v in c.items():
                self.values.setdefault(p, set()).add(v)
        self.values = {p: sorted(v) for p, v in self.values.items() if len(v) > 1}
        self.params = sorted(self.values)

    def level(self, cfg, p):
        return self.values[p].index(cfg[p])

    def unit(self, cfg, p):
        """The level scaled to [0, 1]."""
        return self.level(cfg, p) / (len(self.values[p]) - 1)


def additive(rng, lv, cfgs, scale=1.0):
    eff = {p: {v: rng.gauss(0, scale * rng.uniform(0.02, 0.15)) for v in lv.values[p]} for p in lv.params}
    return [sum(eff[p][c[p]] for p in lv.params) for c in cfgs]


def interact(rng, lv, cfgs):
    logt = additive(rng, lv, cfgs, scale=0.4)
    pairs = [(a, b) for a, b in (("block_m", "num_warps"), ("stages", "cp_async")) if a in lv.values and b in lv.values]
    others = [(a, b) for i, a in enumerate(lv.params) for b in lv.params[i + 1:] if (a, b) not in pairs]
    pairs += rng.sample(others, min(2, len(others)))
    for a, b in pairs:
        term = {(x, y): rng.gauss(0, 0.12) for x in lv.values[a] for y in lv.values[b]}
        for i, c in enumerate(cfgs):
            logt[i] += term[(c[a], c[b])]
    return logt


def basin(rng, lv, cfgs):
    """A smooth bowl: quadratic in each parameter's level around a centre."""
    centre = {p: rng.random() for p in lv.params}
    weight = {p: rng.uniform(0.03, 0.2) for p in lv.params}
    return [sum(weight[p] * (lv.unit(c, p) - centre[p]) ** 2 for p in lv.params) for c in cfgs]


def region_size(n, frac):
    """The least size region_around aims at (it stops between this and twice
    it) among n configurations."""
    return max(3, round(frac * n))


def region_around(rng, lv, cfgs, target, frac):
    """Configurations sharing more and more of target's values, until about
    `frac` of all (at least 3) remain."""
    want = region_size(len(cfgs), frac)
    members = list(range(len(cfgs)))
    for p in rng.sample(lv.params, len(lv.params)):
        narrower = [i for i in members if cfgs[i][p] == target[p]]
        if len(narrower) < want:
            continue
        members = narrower
        if len(members) <= 2 * want:
            break
    return members


def distance(lv, a, b):
    return sum(a[p] != b[p] for p in lv.params)


def narrow_basin(rng, lv, cfgs):
    """The narrow family's basin (log times), its best configuration and the
    configurations far from it (at least half the parameters differ): where
    the region's centre is drawn."""
    logt = basin(rng, lv, cfgs)
    best = min(range(len(cfgs)), key=lambda i: logt[i])
    far = [i for i in range(len(cfgs)) if distance(lv, cfgs[i], cfgs[best]) >= len(lv.params) // 2]
    return logt, best, far


def target_time(times):
    """The slowest time that is the target: within 2% of the best of the
    measured times (the bar of issue 14's trials-to-target)."""
    return min(times) * 1.02


def targets(times):
    """How many of the measured times are the target."""
    bar = target_time(times)
    return sum(1 for y in times if y <= bar)


def random_first(m, t, q):
    """Random search over m configurations that cost a trial, t of them
    wanted: the smallest k with P(the first wanted one within k trials) >= q,
    P = 1 - C(m-t, k) / C(m, k) (a uniform random order)."""
    return next(k for k in range(m + 1) if 1 - math.comb(m - t, k) / math.comb(m, k) >= q)


def narrow(rng, lv, cfgs):
    logt, best, far = narrow_basin(rng, lv, cfgs)
    target = cfgs[rng.choice(far or range(len(cfgs)))]
    floor = logt[best]
    for i in region_around(rng, lv, cfgs, target, 0.01):
        logt[i] = floor + math.log(rng.uniform(0.85, 0.90)) + rng.gauss(0, 0.005)
    return logt


def deceptive(rng, lv, cfgs):
    logt = basin(rng, lv, cfgs)
    worst = max(range(len(cfgs)), key=lambda i: logt[i])
    floor = min(logt)
    near = [i for i in range(len(cfgs)) if distance(lv, cfgs[i], cfgs[worst]) == 1]
    if not near:
        near = sorted(range(len(cfgs)), key=lambda i: distance(lv, cfgs[i], cfgs[worst]))[1:4]
    target = cfgs[rng.choice(near)]
    members = [i for i in region_around(rng, lv, cfgs, target, 0.01) if i != worst]
    for i in members:
        logt[i] = floor + math.log(rng.uniform(0.85, 0.92)) + rng.gauss(0, 0.005)
    return logt


def generate(family, seed, head, rows):
    rng = random.Random("%s-%d" % (family, seed))
    ok = [r for r in rows if r["status"] == "ok"]
    cfgs = [r["cfg"] for r in ok]
    lv = Levels(cfgs)
    if family == "roofline":
        times = [r["median"] for r in ok]
    else:
        logt = {"additive": additive, "interact": interact, "narrow": narrow, "deceptive": deceptive}[family](
            rng, lv, cfgs)
        base = sorted(r["median"] for r in ok)[len(ok) // 2]
        times = [base * math.exp(x - sorted(logt)[len(logt) // 2]) for x in logt]
    sigma = rng.uniform(0.02, 0.05)
    out = {}
    for r, t in zip(ok, times):
        u = rng.random()
        if u < 0.015:
            out[r["key"]] = ("rejected", "numerics", None)
        elif u < 0.03:
            out[r["key"]] = ("rejected", "runtime_fault", None)
        else:
            out[r["key"]] = ("ok", "", t * math.exp(rng.gauss(0, sigma)))
    lines = []
    for h in head:
        if h.startswith("# device:"):
            # Names the script by its former path (scripts/), as the committed landscapes do, so that
            # the same arguments still write the committed files byte for byte.
            h = ("# device: landscape suite (no GPU: %s, seed %d, noise %.1f%%, over the verdicts of the base; "
                 "scripts/landscape_suite.py)" % (family, seed, 100 * sigma))
        lines.append(h)
    lines.append("key,status,reason,median_us,p10_us,p90_us")
    for r in rows:
        if r["key"] in out:
            status, reason, t = out[r["key"]]
            lines.append("%s,%s,%s,%s" % (r["key"], status, reason,
                                          "%.4f,%.4f,%.4f" % (t, t * 0.985, t * 1.02) if t else ",,"))
        else:
            lines.append("%s,%s,%s,,," % (r["key"], r["status"], r["reason"]))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", help="a landscape file: its rejections are kept, its measured configurations re-timed")
    ap.add_argument("outdir")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--families", default=",".join(FAMILIES))
    a = ap.parse_args()
    fams = a.families.split(",")
    for f in fams:
        if f not in FAMILIES:
            sys.exit("landscape_suite.py: --families: unknown %r; expected some of %s" % (f, ",".join(FAMILIES)))
    if a.seeds < 1:
        sys.exit("landscape_suite.py: --seeds: expected at least 1")
    head, rows = read_base(a.base)
    os.makedirs(a.outdir, exist_ok=True)
    for f in fams:
        for s in range(1, a.seeds + 1):
            path = os.path.join(a.outdir, "%s-s%d.csv" % (f, s))
            with open(path, "w") as out:
                out.write(generate(f, s, head, rows))
            print(path)


if __name__ == "__main__":
    main()
