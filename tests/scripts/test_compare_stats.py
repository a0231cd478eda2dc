#!/usr/bin/env python3
"""test_compare_stats.py - scripts/compare_sdpa.py without a GPU: the bootstrap
CI of the median covers the true median of synthetic samples about 95% of
the time, the ratio CI covers the true ratio, the sampling rounds put every
backend in every position alike and the reverse pass reverses who follows
whom, the reverse-order check flags a ratio that moved by more than its
tolerance, the input-set rule is
fattn-tune's (src/cli/gpu_setup.c), its inputs are fattn-tune's own (the
values of kernels/fattn_fill.h, compiled here with cc and compared), and an
export without a confirmation is refused (exit 2) before any GPU work.
Skips (77) without numpy.

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

# The sampling rounds: every backend in every position equally often; the
# reverse pass puts each backend right after the one it preceded.
names = ["a", "b", "c", "d"]
for rev in (False, True):
    rs = c.rounds(names, 8, rev)
    if len(rs) != 8 or any(sorted(r) != names for r in rs):
        failures.append(f"rounds({rev}): {rs}")
    for pos in range(4):
        counts = {n_: sum(r[pos] == n_ for r in rs) for n_ in names}
        if set(counts.values()) != {2}:
            failures.append(f"rounds({rev}) position {pos}: {counts}")
    follows = {(r[i], r[i + 1]) for r in rs for i in range(3)}
    if rev == (("a", "b") in follows) or rev != (("b", "a") in follows):
        failures.append(f"rounds({rev}): pairs {sorted(follows)}")

# The reverse-order check: the same ratios agree; one 5% apart does not at
# 3%, but does at 6%; only ratios to the base are compared.
base = np.exp(rng.normal(np.log(10.0), 0.01, 100))
fwd = {"fattn-tune": base, "torch cudnn": base * 0.8, "torch flash": base * 1.3}
same = {k: v * 1.1 for k, v in fwd.items()}  # everything 10% slower: the ratios hold
shifted = dict(same, **{"torch cudnn": same["torch cudnn"] * 1.05})
got, ok = c.order_check(fwd, same, "fattn-tune", 0.03)
if not ok or set(got) != {"torch cudnn", "torch flash"} or abs(got["torch cudnn"][0] - 0.8) > 1e-9:
    failures.append(f"order_check of equal ratios: {got} {ok}")
got, ok = c.order_check(fwd, shifted, "fattn-tune", 0.03)
if ok or abs(got["torch cudnn"][2] - 0.05) > 1e-9 or got["torch flash"][2] > 1e-9:
    failures.append(f"order_check of a 5% shift at 3%: {got} {ok}")
if not c.order_check(fwd, shifted, "fattn-tune", 0.06)[1]:
    failures.append("order_check of a 5% shift at 6%")

# The input-set rule, by hand: 2 x 50 MiB L2 over Q, K, V fp16 of one set.
L2 = 50 << 20
for elems, want in [(2 * 8 * 512 * 64, 16),  # 1.5 MiB a set: 67 sets, capped at 16
                    (4 * 16 * 2048 * 128, 2),  # 96 MiB a set: 2, the floor
                    (4 * 16 * 512 * 64, 9)]:  # 12 MiB a set: 100/12 + 1 = 9
    got = c.timing_sets(elems, L2)
    if got != want:
        failures.append(f"timing_sets({elems}) = {got}, expected {want}")

# The inputs: compare_sdpa.py's port of fattn_fill_value against the header
# itself, at indices across the 32-bit boundary, for seeds small and large.
import json  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

root = sys.argv[1]
cc = shutil.which("cc") or shutil.which("gcc")
checked = 0
with tempfile.TemporaryDirectory() as tmp:
    if cc:
        src = os.path.join(tmp, "fill.c")
        with open(src, "w") as f:
            f.write('#include <stdio.h>\n#include <stdlib.h>\n#include "fattn_fill.h"\n'
                    "int main(int argc, char **argv) { for (int i = 1; i + 2 < argc; i += 3) "
                    'printf("%.9g\\n", fattn_fill_value(strtoull(argv[i], 0, 10), (unsigned)atoi(argv[i + 1]), '
                    "strtoull(argv[i + 2], 0, 10))); return 0; }\n")
        exe = os.path.join(tmp, "fill")
        subprocess.run([cc, "-O1", "-I", os.path.join(root, "kernels"), src, "-o", exe], check=True)
        cases = [(seed, t, i) for seed in (0, 1, 12345678901, 2**63 + 5) for t in (0, 1, 2)
                 for i in (0, 1, 7, 1000003, 2**32 + 5, 2**40 + 123)]
        argv = [str(x) for case in cases for x in case]
        want = [float(x) for x in subprocess.run([exe] + argv, check=True, capture_output=True,
                                                 text=True).stdout.split()]
        for (seed, t, i), w in zip(cases, want):
            got = float(c.fill_values(seed, t, i, 1)[0])
            checked += 1
            if abs(got - w) > 1e-7:
                failures.append(f"fill_values({seed}, {t}, {i}) = {got}, fattn_fill.h says {w}")
        # A run of consecutive elements agrees with one-at-a-time.
        run = c.fill_values(3, 1, 2**32 - 4, 8)
        for k in range(8):
            if run[k] != c.fill_values(3, 1, 2**32 - 4 + k, 1)[0]:
                failures.append(f"fill_values run differs at {k}")
        if not (run.min() >= -1.0 and run.max() < 1.0):
            failures.append("fill values outside [-1, 1)")
    else:
        print("note: no C compiler; the fill values are not cross-checked")

    # No confirmation in the export: refused, exit 2, before torch is imported.
    desc = os.path.join(tmp, "best.json")
    with open(desc, "w") as f:
        json.dump({"config_key": "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "confirmation": None,
                   "metric": {"median_us": 5.0}}, f)
    p = subprocess.run([sys.executable, os.path.join(root, "scripts", "compare_sdpa.py"), "--json", desc,
                        "--cubin", desc], capture_output=True, text=True)
    if p.returncode != 2 or "holds no confirmation" not in p.stderr:
        failures.append(f"an unconfirmed export: exit {p.returncode}, {p.stderr.strip()!r}")

# A family with tensor maps (the wgmma export's "args"): the parameters in
# the kernel's order, each map encoded as src/gpu/tmap.c encodes it (3-D
# (D, S, B*H), the box, fp16, 128-byte L2 promotion, zero fill) at a 64-byte
# boundary, once per set of tensors.
class FakeDriver:
    def __init__(self):
        self.calls = []

    def cuTensorMapEncodeTiled(self, ptr, dtype, rank, addr, dim, stride, box, ones, inter, swizzle, l2, oob):
        self.calls.append((ptr.value % 64, dtype, rank, addr.value, list(dim), list(stride), list(box),
                           list(ones), inter, swizzle, l2, oob))
        return 0

    def check(self, r, what):
        if r:
            failures.append(f"{what} returned {r}")


class FakeTensor:
    def __init__(self, ptr):
        self.shape, self.ptr = (2, 8, 500, 128), ptr

    def data_ptr(self):
        return self.ptr


kern = c.FattnKernel.__new__(c.FattnKernel)
kern.drv, kern.maps = FakeDriver(), {}
kern.args = [{"kind": "tmap", "tensor": "q", "box": [64, 64], "swizzle": 128},
             {"kind": "tmap", "tensor": "v", "box": [64, 176], "swizzle": 128},
             {"kind": "o"}, {"kind": "batch"}, {"kind": "heads"}, {"kind": "seqlen"}, {"kind": "scale"}]
q, k_, v, o = (FakeTensor(0x10000 * (i + 1)) for i in range(4))
params = kern._params(q, k_, v, o)
again = kern._params(q, k_, v, o)
calls = kern.drv.calls
if len(calls) != 2 or again is not params:
    failures.append(f"maps encoded {len(calls)} times for two calls on one tensor set (want 2 maps, once)")
elif calls[1] != (0, 6, 3, 0x30000, [128, 500, 16], [256, 500 * 256], [64, 176, 1], [1, 1, 1], 0, 3, 2, 0):
    failures.append(f"V's map encoded as {calls[1]}")
if [type(p_).__name__ for p_ in params] != ["TensorMap", "TensorMap", "c_void_p", "c_int", "c_int", "c_int",
                                            "c_float"]:
    failures.append(f"parameters {params}")
elif (params[2].value, params[3].value, params[4].value, params[5].value) != (0x40000, 2, 8, 500) or \
        abs(params[6].value - 128 ** -0.5) > 1e-7:
    failures.append("the plain parameters differ from the shape's")
kern._params(FakeTensor(0x50000), k_, v, o)
if len(kern.drv.calls) != 4:
    failures.append("a new tensor set did not get its own maps")

for f in failures:
    print("FAIL:", f)
print(f"median CI coverage {rate:.3f}; fill values checked against fattn_fill.h: {checked}; "
      f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
