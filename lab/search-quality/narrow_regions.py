#!/usr/bin/env python3
"""narrow_regions.py - where a strategy meets the narrow region of a landscape
of the suite (tests/tools/landscape_suite.py), for lab/search-quality/log.md
("Narrow: the first trial in the region"). Development only.

    narrow_regions.py first-hit FAMILY SEED RUNS < TRACE
        The region of FAMILY-sSEED (narrow or deceptive) as the generator
        draws it, and, from the stderr of a FATTN_TRACE=1 run of
        tests/test_strategies on that landscape, the median over its first
        RUNS runs (the quality runs, seeds 1..RUNS) of the first trial in the
        region, of the trial at the target, and of the trials between.

    narrow_regions.py random SEED...
        Random search's first trial in the region of narrow-sSEED, exactly
        (the median position of the first of R region members among the M
        configurations that cost a trial), its median trials to the T
        configurations within 2% of the optimum, and point 3's bar (half
        of that) over the first trial in the region: where that ratio is
        near or below 1, a strategy must find the region faster than random
        search does.

    narrow_regions.py oracle K SEED...
        A greedy picker that knows narrow-sSEED's basin and the generator's
        rule (the region grown around a configuration at least half the
        parameters from the basin's best): the share of the regions the rule
        draws (20 per possible centre) that its first K picks hit.

    narrow_regions.py near SEED...
        How near narrow-sSEED's region lies to its basin's best
        configuration: the fewest parameters in which a member of the region,
        and a configuration within 2% of the optimum, differ from it. The
        generator draws the region's centre at least half the parameters
        away, but the members around it can lie two or three away, where a
        search of the best's neighbourhood finds them.

    narrow_regions.py near-share SEED RUNS < TRACE
        Where a strategy spends its trials on narrow-sSEED: over the first
        RUNS runs of a trace (FATTN_TRACE=1 tests/test_strategies, or
        lab/search-quality/optuna_peer.py --trace), the trials after the first one at
        the basin's best and before the target, and the share of them within
        two parameters of the basin's best.

    narrow_regions.py cover RUNS SEED...
        A coverage explorer that knows nothing of the rule: each pick is the
        untried configuration in the most untried small cells (the
        configurations sharing the values of some subset of the parameters,
        with as many members as the generator's regions may have); the median
        over RUNS runs (random tie-breaks) of its first trial in the region.

BASE is the synthetic landscape the benchmark uses
(tests/data/landscape-synthetic-sm_90-2-8-512-64.csv).
"""
import itertools
import os
import random
import statistics
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "tools"))
import landscape_suite as suite  # noqa: E402

BASE = os.path.join(ROOT, "tests", "data",
                    "landscape-synthetic-sm_90-2-8-512-64.csv")


class Suite:
    def __init__(self):
        self.head, self.rows = suite.read_base(BASE)
        self.ok = [r for r in self.rows if r["status"] == "ok"]
        self.cfgs = [r["cfg"] for r in self.ok]
        self.lv = suite.Levels(self.cfgs)
        self.want = suite.region_size(len(self.cfgs), 0.01)

    def region(self, family, seed):
        """The indices (into self.ok) of the region the generator draws, and
        the landscape's text."""
        got = {}
        orig = suite.region_around

        def spy(rng, lv, cfgs, target, frac):
            got["m"] = orig(rng, lv, cfgs, target, frac)
            return got["m"]

        suite.region_around = spy
        try:
            text = suite.generate(family, seed, self.head, self.rows)
        finally:
            suite.region_around = orig
        return got["m"], text

    def outcomes(self, text):
        """How many configurations cost a trial (measured or GPU failures),
        and the median times of the measured ones by key."""
        n, times = 0, {}
        for line in text.splitlines():
            p = line.split(",")
            if len(p) >= 3 and (p[1] == "ok" or p[2] in ("numerics", "runtime_fault")):
                n += 1
            if len(p) >= 4 and p[1] == "ok":
                times[p[0]] = float(p[3])
        return n, times

    def basin(self, seed):
        """narrow-sSEED's basin, as the generator draws it with that
        landscape's rng: its best configuration (an index into self.ok) and
        its far set, the possible centres of its region."""
        _, best, far = suite.narrow_basin(random.Random("narrow-%d" % seed), self.lv, self.cfgs)
        return best, far


def read_trace():
    """The runs of a trace on stdin, each a list of (trial, key, kind, time over the optimum)."""
    out = []
    for line in sys.stdin:
        p = line.split()
        if p and p[0] == "run":
            out.append([])
        elif p and p[0] == "trace" and out:
            out[-1].append((int(p[1]), p[3], p[4], float(p[5])))
    return out


def at_target(t):
    """Whether trace entry t measured a configuration within 2% of the optimum."""
    return t[2] == "0" and t[3] <= 1.02


def to_target(cmd, runs, region=None):
    """The first RUNS runs of the trace on stdin, each with the index of its
    first entry at the target; exits when fewer reach it (or, given the
    region's keys, fewer also try a member of it)."""
    q = read_trace()[:runs]
    hit = [next((k for k, t in enumerate(run) if at_target(t)), None) for run in q]
    if len(q) < runs or None in hit or (region and any(all(t[1] not in region for t in run) for run in q)):
        sys.exit("narrow_regions.py: %s: the trace holds fewer than %d runs that reach the target" % (cmd, runs))
    return list(zip(q, hit))


def first_hit(s, family, seed, runs):
    members, _ = s.region(family, seed)
    keys = set(s.ok[i]["key"] for i in members)
    q = [{"first": next(t[0] for t in run if t[1] in keys), "hit": run[h][0]}
         for run, h in to_target("first-hit", runs, keys)]
    print("%s-s%d: region %d; first trial in the region %g, target %g, between %g (medians of %d runs)" % (
        family, seed, len(keys), statistics.median(r["first"] for r in q), statistics.median(r["hit"] for r in q),
        statistics.median(r["hit"] - r["first"] for r in q), runs))


def random_first(s, seed):
    members, text = s.region("narrow", seed)
    (M, ys), R = s.outcomes(text), len(members)
    k = suite.random_first(M, R, 0.5)
    T = suite.targets(list(ys.values()))
    bar = suite.random_first(M, T, 0.5) / 2
    print("narrow-s%d: region %d of %d; random search's first trial in it: median %d; to the %d within 2%%: "
          "median %d; point 3's bar %g = %.2f x the first trial in the region"
          % (seed, R, M, k, T, 2 * bar, bar, bar / k))


def near(s, seed):
    members, text = s.region("narrow", seed)
    best = s.cfgs[s.basin(seed)[0]]
    _, ys = s.outcomes(text)
    bar = suite.target_time(list(ys.values()))
    targets = [s.cfgs[i] for i, r in enumerate(s.ok) if ys.get(r["key"], bar + 1) <= bar]
    print("narrow-s%d: the region's nearest member differs from the basin's best in %d parameters, the nearest "
          "target in %d" % (seed, min(suite.distance(s.lv, s.cfgs[i], best) for i in members),
                            min(suite.distance(s.lv, c, best) for c in targets)))


def near_share(s, seed, runs):
    best = s.cfgs[s.basin(seed)[0]]
    cfg = {r["key"]: c for r, c in zip(s.ok, s.cfgs)}
    d = [[suite.distance(s.lv, cfg[t[1]], best) if t[1] in cfg else len(s.lv.params) for t in run[:h + 1]]
         for run, h in to_target("near-share", runs)]
    after = [x[x.index(0) + 1:] for x in d if 0 in x]
    n, near = sum(len(a) for a in after), sum(x <= 2 for a in after for x in a)
    print("narrow-s%d: %d of %d runs measure the basin's best before the target; of their %d trials after it, %d "
          "(%.0f%%) lie within two parameters of it" % (seed, len(after), runs, n, near, 100.0 * near / max(n, 1)))


def oracle(s, k, seed):
    rng = random.Random(1000 + seed)
    regions = []
    for centre in s.basin(seed)[1]:
        for _ in range(20):  # the generator's own region_around, with its random order of parameters
            regions.append(frozenset(suite.region_around(rng, s.lv, s.cfgs, s.cfgs[centre], 0.01)))
    alive, hit = list(range(len(regions))), 0
    for _ in range(k):
        count = {}
        for r in alive:
            for i in regions[r]:
                count[i] = count.get(i, 0) + 1
        if not count:
            break
        pick = max(sorted(count), key=lambda i: count[i])
        hit += count[pick]
        alive = [r for r in alive if pick not in regions[r]]
    print("narrow-s%d: the greedy oracle's first %d picks hit %.2f of %d regions" % (seed, k, hit / len(regions),
                                                                                     len(regions)))


def cover(s, runs, seed):
    members, _ = s.region("narrow", seed)
    region = set(members)
    n, P = len(s.cfgs), len(s.lv.params)
    values = [[s.lv.level(c, p) for p in s.lv.params] for c in s.cfgs]
    cells = []  # the small cells: lists of members
    for r in range(1, P + 1):
        for sub in itertools.combinations(range(P), r):
            groups = {}
            for i in range(n):
                groups.setdefault(tuple(values[i][p] for p in sub), []).append(i)
            cells.extend(g for g in groups.values() if s.want <= len(g) <= 2 * s.want)
    of = [[] for _ in range(n)]
    for c, g in enumerate(cells):
        for i in g:
            of[i].append(c)
    firsts = []
    for run in range(runs):
        rng = random.Random(run)
        score = [len(of[i]) for i in range(n)]
        covered, tried = [False] * len(cells), [False] * n
        tie = [rng.random() for _ in range(n)]
        for t in range(1, n + 1):
            x = max((i for i in range(n) if not tried[i]), key=lambda i: (score[i], tie[i]))
            tried[x] = True
            if x in region:
                firsts.append(t)
                break
            for c in of[x]:
                if not covered[c]:
                    covered[c] = True
                    for i in cells[c]:
                        score[i] -= 1
    print("narrow-s%d: region %d; the coverage explorer's first trial in it: median %g of %d runs" % (
        seed, len(region), statistics.median(firsts), runs))


def main():
    a = sys.argv[1:]
    usage = "usage: narrow_regions.py first-hit FAMILY SEED RUNS | random SEED... | near SEED... | " \
        "near-share SEED RUNS | oracle K SEED... | cover RUNS SEED..."
    if not a or a[0] not in ("first-hit", "random", "near", "near-share", "oracle", "cover"):
        sys.exit(usage)
    try:
        nums = [int(x) for x in (a[2:] if a[0] == "first-hit" else a[1:])]
    except ValueError:
        sys.exit(usage)
    s = Suite()
    if a[0] == "first-hit" and len(a) == 4 and a[1] in ("narrow", "deceptive"):
        first_hit(s, a[1], nums[0], nums[1])
    elif a[0] == "near-share" and len(nums) == 2:
        near_share(s, nums[0], nums[1])
    elif a[0] in ("random", "near") and nums:
        for seed in nums:
            (random_first if a[0] == "random" else near)(s, seed)
    elif a[0] in ("oracle", "cover") and len(nums) >= 2:
        for seed in nums[1:]:
            (oracle if a[0] == "oracle" else cover)(s, nums[0], seed)
    else:
        sys.exit(usage)


if __name__ == "__main__":
    main()
