#!/usr/bin/python3
"""Writes tests/data/stats-vectors.json: reference values from numpy/scipy for
the statistics of `fattn-tune confirm` (src/run/compare.c).

    /usr/bin/python3 tests/tools/stats_vectors.py > tests/data/stats-vectors.json

Cases: medians and percentiles (numpy's linear interpolation), Mann-Whitney U
(scipy.stats.mannwhitneyu, two-sided, method="asymptotic", continuity and tie
corrections), Cliff's delta (every pair compared), and the bootstrap replayed
from numpy's resample indices (the C code cannot replay numpy's random stream,
so the indices travel with the expected medians and interval).
"""
import json
import sys

import numpy as np
import scipy
from scipy import stats

rng = np.random.default_rng(20261122)


def times(n, median=10.0, spread=0.05, decimals=None):
    """GPU-like times: lognormal around `median`, optionally rounded (ties)."""
    x = median * np.exp(rng.normal(0.0, spread, n))
    return np.round(x, decimals) if decimals is not None else x


def cliffs(a, b):
    return float(np.sign(a[:, None] - b[None, :]).mean())


samples = {
    "n1": np.array([7.25]),
    "n2": np.array([3.0, 1.0]),
    "n5": times(5),
    "n100": times(100),
    "n101_ties": times(101, decimals=1),
    "skewed": np.concatenate([times(90), times(10, median=14.0)]),
}
percentile_cases = [
    {"name": k, "x": v.tolist(),
     "median": float(np.median(v)),
     "percentiles": {str(p): float(np.percentile(v, p)) for p in (0, 10, 25, 50, 90, 100)}}
    for k, v in samples.items()
]

pairs = {
    "shifted": (times(100, 9.0), times(100, 10.0)),
    "same": (times(80), times(80)),
    "ties": (times(60, decimals=1), times(70, 10.05, decimals=1)),
    "heavy_ties": (np.array([1, 1, 2, 2, 2, 3, 3, 4.0]), np.array([2, 2, 3, 3, 3, 3, 4, 5, 5.0])),
    "unequal": (times(12, 10.0, 0.2), times(200, 10.3, 0.2)),
    "separated": (times(30, 5.0), times(30, 8.0)),
}
mwu_cases = []
for k, (a, b) in pairs.items():
    r = stats.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic", use_continuity=True)
    mwu_cases.append({"name": k, "a": a.tolist(), "b": b.tolist(), "u": float(r.statistic),
                      "p": float(r.pvalue), "cliffs_delta": cliffs(a, b)})

# The bootstrap with explicit indices: B resamples of n values each.
B, n = 200, 40
cand, base = times(n, 9.0, 0.08), times(n, 10.0, 0.08)
ic = rng.integers(0, n, (B, n))
ib = rng.integers(0, n, (B, n))
mc = np.median(cand[ic], axis=1)
mb = np.median(base[ib], axis=1)
boot = {
    "B": B, "n": n, "level": 0.95,
    "cand": cand.tolist(), "base": base.tolist(),
    "cand_idx": ic.ravel().tolist(), "base_idx": ib.ravel().tolist(),
    "cand_medians": mc.tolist(),
    "cand_ci": np.percentile(mc, [2.5, 97.5]).tolist(),
    "base_ci": np.percentile(mb, [2.5, 97.5]).tolist(),
    "speedup_ci": np.percentile(mb / mc, [2.5, 97.5]).tolist(),
}

# "generator" keeps the former path (scripts/), as the committed tests/data/stats-vectors.json has it.
json.dump({"generator": "scripts/stats_vectors.py", "numpy": np.__version__, "scipy": scipy.__version__,
           "percentiles": percentile_cases, "mann_whitney": mwu_cases, "bootstrap": boot},
          sys.stdout, indent=None, separators=(",", ":"))
sys.stdout.write("\n")
