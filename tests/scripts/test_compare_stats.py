#!/usr/bin/env python3
"""test_compare_stats.py - the statistics of scripts/compare_sdpa.py, without a
GPU: the bootstrap CI of the median covers the true median of synthetic
samples about 95% of the time, the ratio CI covers the true ratio, and the
input-set rule is fattn-tune's (src/cli/gpu_setup.c). Skips (77) without numpy.

    test_compare_stats.py SOURCE_ROOT
"""
import os
import sys

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not installed (python3-numpy)")
    sys.exit(77)

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(sys.argv[1], "scripts"))
import compare_sdpa as c  # noqa: E402

rng = np.random.default_rng(7)
failures = []

# Coverage of the median CI: lognormal samples (skewed like timings) with a
# known median exp(mu); 400 experiments of 100 samples, 2,000 resamples each.
mu, sigma, n, trials = np.log(10.0), 0.05, 100, 400
covered = 0
for _ in range(trials):
    x = np.exp(rng.normal(mu, sigma, n))
    m, lo, hi = c.median_ci(x, rng, boot=2000)
    if not lo <= m <= hi:
        failures.append(f"median {m} outside its own CI [{lo}, {hi}]")
    covered += lo <= 10.0 <= hi
rate = covered / trials
# Binomial sd at 0.95 over 400 draws is 0.011; the percentile bootstrap of a
# median runs a little under or over nominal at n = 100.
if not 0.88 <= rate <= 0.99:
    failures.append(f"median CI coverage {rate:.3f}, expected near 0.95")

# Ratio CI: two lognormal samples whose true median ratio is 1.25.
covered = 0
for _ in range(200):
    a = np.exp(rng.normal(np.log(12.5), sigma, n))
    b = np.exp(rng.normal(np.log(10.0), sigma, n))
    r, lo, hi = c.ratio_ci(a, b, rng, boot=2000)
    covered += lo <= 1.25 <= hi
if not 0.88 <= covered / 200 <= 1.0:
    failures.append(f"ratio CI coverage {covered / 200:.3f}, expected near 0.95")

# A clear difference gives CIs that do not overlap; identical data gives ratio 1.
x = np.exp(rng.normal(np.log(10.0), sigma, n))
_, lo1, hi1 = c.median_ci(x, rng)
_, lo2, hi2 = c.median_ci(x * 1.2, rng)
if not hi1 < lo2:
    failures.append(f"20% apart but CIs overlap: [{lo1}, {hi1}] vs [{lo2}, {hi2}]")
r, lo, hi = c.ratio_ci(x, x, rng)
if r != 1.0 or not lo <= 1.0 <= hi:
    failures.append(f"ratio of a sample to itself: {r} [{lo}, {hi}]")

# The input-set rule, by hand: 2 x 50 MiB L2 over Q, K, V fp16 of one set.
L2 = 50 << 20
for elems, want in [(2 * 8 * 512 * 64, 16),  # 1.5 MiB a set: 67 sets, capped at 16
                    (4 * 16 * 2048 * 128, 2),  # 96 MiB a set: 2, the floor
                    (4 * 16 * 512 * 64, 9)]:  # 12 MiB a set: 100/12 + 1 = 9
    got = c.timing_sets(elems, L2)
    if got != want:
        failures.append(f"timing_sets({elems}) = {got}, expected {want}")

for f in failures:
    print("FAIL:", f)
print(f"median CI coverage {rate:.3f}; {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
