#!/usr/bin/env python3
"""compare_sdpa.py - fattn-tune's tuned kernel beside PyTorch SDPA, one harness.

Loads the exact cubin fattn-tune measured (`fattn-tune export --format cubin`)
and its launch description (`export --format json`), and times it with
PyTorch's scaled_dot_product_attention backends (flash, efficient, cuDNN) in
the same process, on the same inputs, the same way: a CUDA graph of R
back-to-back calls rotating through the same input sets, replayed after
warm-up and timed with CUDA events; per-call time = elapsed / R, launch cost
included (nothing subtracted). Samples of the backends are interleaved
(A B C D, A B C D, ...) so drift hits all alike. The inputs are
fattn-tune's own kind (kernels/fattn_fill.h: uniform in [-1, 1), rounded to
fp16, one seed per input set). Prints medians with bootstrap 95% CIs, the
ratios to fattn-tune with their CIs, and fattn-tune's own `confirm`
measurement of the same configuration (interleaved samples, fresh inputs of
the same kind, the same graph timing), which must agree with this harness's
median within 10%: a fair test, where the search's median (the best of many
candidates, few samples each) would not be. The sampling then runs again
with the backends in reverse order (D C B A, ...), and each backend's ratio
to fattn-tune must agree with the forward pass's within 3%
(--order-tolerance): a ratio that depends on which backend ran before
another is not a measurement. Exit status 1 when either check fails or the
kernel's output disagrees with PyTorch's math backend beyond atol = rtol =
1e-2; 2 when the export holds no confirmation.

    fattn-tune confirm --study N --n 100
    fattn-tune export --study N --format json -o best.json
    fattn-tune export --study N --format cubin -o best.cubin
    python3 scripts/compare_sdpa.py --json best.json --cubin best.cubin --n 100

Variants (`--variant JSON:CUBIN`, repeatable; `fattn-tune export --study N
--config KEY`, no confirmation needed): other configurations of the same
shape, timed in the same rounds as more backends, "fattn-tune KEY", each with
its ratio to the best: an ablation measured interleaved in one process (the
wgmma stage of scripts/device-check.sh switches each of the best's OVERLAP,
PINGPONG and SCHED back). Their numerics are checked like the best's.

One process for many pairs (PyTorch and CUDA start once; the speed stage of
scripts/device-check.sh): `--serve` reads lines "JSON CUBIN" from standard
input and answers each with "done STATUS" on standard output once its table
is written, so that the caller's next GPU work never overlaps a comparison.

Needs a GPU and PyTorch (the device machine has both). The kernel is
launched through the CUDA driver API (ctypes on libcuda.so.1).
"""
import argparse
import ctypes
import json
import math
import sys

import numpy as np

ALPHA = 0.05
BOOT = 10000


def median_ci(x, rng, boot=BOOT):
    """Median and its percentile-bootstrap 95% CI."""
    x = np.asarray(x, dtype=np.float64)
    idx = rng.integers(0, len(x), size=(boot, len(x)))
    meds = np.median(x[idx], axis=1)
    return float(np.median(x)), float(np.quantile(meds, ALPHA / 2)), float(np.quantile(meds, 1 - ALPHA / 2))


def ratio_ci(num, den, rng, boot=BOOT):
    """median(num) / median(den) and its bootstrap 95% CI (independent resamples)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    a = np.median(num[rng.integers(0, len(num), size=(boot, len(num)))], axis=1)
    b = np.median(den[rng.integers(0, len(den), size=(boot, len(den)))], axis=1)
    r = a / b
    return (float(np.median(num) / np.median(den)), float(np.quantile(r, ALPHA / 2)),
            float(np.quantile(r, 1 - ALPHA / 2)))


def rounds(names, n, reverse=False):
    """The order of each of n sampling rounds: the backends in turn, each
    round starting one further on (every backend in every position alike);
    reverse=True walks the list backwards, so that each backend follows the
    one it preceded in the forward pass."""
    names = list(reversed(names)) if reverse else list(names)
    return [names[i % len(names):] + names[:i % len(names)] for i in range(n)]


def order_check(forward, backward, base, tolerance):
    """The rerun in reverse order: for each backend but `base`, its median
    ratio to base's in the forward and in the reverse pass, and whether the
    two agree within `tolerance` (relative). Returns ({name: (forward ratio,
    reverse ratio, relative gap)}, all agree)."""
    out, ok = {}, True
    for name in forward:
        if name == base or name not in backward:
            continue
        f = float(np.median(forward[name]) / np.median(forward[base]))
        r = float(np.median(backward[name]) / np.median(backward[base]))
        gap = abs(r / f - 1.0)
        out[name] = (f, r, gap)
        ok = ok and gap <= tolerance
    return out, ok


M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def _mix(x):
    """splitmix64's finalizer on uint64 arrays (kernels/fattn_fill.h)."""
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint64(30))
        x = x * np.uint64(0xbf58476d1ce4e5b9)
        x = x ^ (x >> np.uint64(27))
        x = x * np.uint64(0x94d049bb133111eb)
        return x ^ (x >> np.uint64(31))


def fill_values(seed, tensor, start, count):
    """Elements start .. start+count of tensor (0 Q, 1 K, 2 V) for `seed`, as
    fattn-tune's fill kernel writes them (before rounding to fp16): a
    counter-based hash mapped to [-1, 1) (kernels/fattn_fill.h)."""
    golden = np.uint64(0x9e3779b97f4a7c15)
    with np.errstate(over="ignore"):
        key = _mix(np.array([seed], dtype=np.uint64) + golden * np.uint64(1 + tensor))[0]
        i = np.arange(start, start + count, dtype=np.uint64)
        x = _mix((key ^ i) + golden)
    return (x >> np.uint64(40)).astype(np.float32) * np.float32(1.0 / 8388608.0) - np.float32(1.0)


def timing_sets(elems, l2_bytes):
    """fattn-tune's rule (src/cli/gpu_setup.c): enough Q, K, V sets to exceed
    twice the L2 cache, 2 to 16."""
    n = int(2 * l2_bytes / (elems * 2 * 3)) + 1
    return max(2, min(16, n))


class Driver:
    """The few driver API calls needed to launch a cubin, resolved like
    fattn-tune resolves them (cuGetProcAddress_v2)."""

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        gp = self.lib.cuGetProcAddress_v2
        gp.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_uint64,
                       ctypes.POINTER(ctypes.c_int)]
        self._gp = gp
        self.cuModuleLoadData = self._fn("cuModuleLoadData", [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p])
        self.cuModuleGetFunction = self._fn("cuModuleGetFunction",
                                            [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_char_p])
        self.cuFuncSetAttribute = self._fn("cuFuncSetAttribute", [ctypes.c_void_p, ctypes.c_int, ctypes.c_int])
        self.cuLaunchKernel = self._fn("cuLaunchKernel", [ctypes.c_void_p] + [ctypes.c_uint] * 6 + [
            ctypes.c_uint, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p])
        self.cuGetErrorName = self._fn("cuGetErrorName", [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)])
        u32p, u64p = ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint64)
        self.cuTensorMapEncodeTiled = self._fn("cuTensorMapEncodeTiled", [
            ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, u64p, u64p, u32p, u32p, ctypes.c_int,
            ctypes.c_int, ctypes.c_int, ctypes.c_int])
        self.cuDriverGetVersion = self._fn("cuDriverGetVersion", [ctypes.POINTER(ctypes.c_int)])

    def version(self):
        """The driver's CUDA version, "13.0"."""
        v = ctypes.c_int()
        self.check(self.cuDriverGetVersion(ctypes.byref(v)), "cuDriverGetVersion")
        return f"{v.value // 1000}.{v.value % 1000 // 10}"

    def _fn(self, name, argtypes):
        p = ctypes.c_void_p()
        st = ctypes.c_int()
        r = self._gp(name.encode(), ctypes.byref(p), 13000, 0, ctypes.byref(st))
        if r != 0 or not p.value:
            raise RuntimeError(f"the CUDA driver lacks {name} (error {r})")
        return ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)(p.value)

    def check(self, r, what):
        if r != 0:
            s = ctypes.c_char_p()
            self.cuGetErrorName(r, ctypes.byref(s))
            raise RuntimeError(f"{what}: {s.value.decode() if s.value else r}")


class TensorMap:
    """A CUtensorMap: 128 opaque bytes at a 64-byte boundary (cuda.h), in a
    buffer this object keeps; ptr is their address."""

    def __init__(self):
        self.buf = (ctypes.c_uint8 * (128 + 64))()
        base = ctypes.addressof(self.buf)
        self.ptr = ctypes.c_void_p(base + (-base) % 64)


# cuda.h: CU_TENSOR_MAP_DATA_TYPE_FLOAT16, CU_TENSOR_MAP_L2_PROMOTION_L2_128B; swizzle by its bytes
_TMAP_FP16, _TMAP_L2_128B = 6, 2
_TMAP_SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}


def encode_tmap(drv, t, box, swizzle):
    """The map fattn-tune builds for an attention tensor t (B, H, S, D):
    3-D (D, S, B*H), boxes of box = (columns, rows), out-of-bounds zeros
    (src/gpu/tmap.c)."""
    b, h, s, d = t.shape
    dim = (ctypes.c_uint64 * 3)(d, s, b * h)
    stride = (ctypes.c_uint64 * 2)(d * 2, s * d * 2)
    boxd = (ctypes.c_uint32 * 3)(box[0], box[1], 1)
    ones = (ctypes.c_uint32 * 3)(1, 1, 1)
    m = TensorMap()
    drv.check(drv.cuTensorMapEncodeTiled(m.ptr, _TMAP_FP16, 3, ctypes.c_void_p(t.data_ptr()), dim, stride,
                                         boxd, ones, 0, _TMAP_SWIZZLE[swizzle], _TMAP_L2_128B, 0),
              "cuTensorMapEncodeTiled")
    return m


class FattnKernel:
    def __init__(self, drv, cubin, desc, sms):
        self.drv = drv
        self.mod = ctypes.c_void_p()
        self.fn = ctypes.c_void_p()
        drv.check(drv.cuModuleLoadData(ctypes.byref(self.mod), cubin), "cuModuleLoadData")
        entry = desc.get("kernel", {}).get("entry", "fattn_fwd")
        drv.check(drv.cuModuleGetFunction(ctypes.byref(self.fn), self.mod, entry.encode()), "cuModuleGetFunction")
        self.smem = int(desc["smem_bytes"])
        self.threads = int(desc["threads"])
        self.block_m = int(desc["config"]["BLOCK_M"])
        # SPLIT_KV blocks (one cluster, compiled in) per BLOCK_M rows; absent before it existed.
        self.split_kv = int(desc["config"].get("SPLIT_KV", 1))
        # SCHED > 0 (the wgmma family's persistent schedules): min(SMs, tiles) blocks along x, each
        # looping over its tiles, as the export's grid rule and launcher say.
        self.sched = int(desc["config"].get("SCHED", 0))
        # CLUSTER > 1 (the wgmma family's multicast, compiled in): the row blocks rounded up to whole
        # clusters, as the export's grid rule says.
        self.cluster = int(desc["config"].get("CLUSTER", 1))
        self.sms = sms
        # A family's parameter list where it differs from attention's pointers (tensor maps); its maps
        # are built once per set of tensors, as fattn-tune's engine and exported launcher build them.
        self.args = desc.get("kernel", {}).get("args")
        if self.args and desc["kernel"].get("workspace"):
            raise RuntimeError("compare_sdpa.py launches no kernel with a workspace")
        self.maps = {}
        if self.smem > 48 * 1024:
            # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            drv.check(drv.cuFuncSetAttribute(self.fn, 8, self.smem), "cuFuncSetAttribute")

    def _params(self, q, k, v, o):
        b, h, s, d = q.shape
        if not self.args:
            return [ctypes.c_void_p(q.data_ptr()), ctypes.c_void_p(k.data_ptr()), ctypes.c_void_p(v.data_ptr()),
                    ctypes.c_void_p(o.data_ptr()), ctypes.c_int(b), ctypes.c_int(h), ctypes.c_int(s),
                    ctypes.c_float(1.0 / math.sqrt(d))]
        key = (q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr())
        if key not in self.maps:
            tensors, out = {"q": q, "k": k, "v": v, "o": o}, []
            for a in self.args:
                kind = a["kind"]
                if kind in tensors:
                    out.append(ctypes.c_void_p(tensors[kind].data_ptr()))
                elif kind == "tmap":
                    out.append(encode_tmap(self.drv, tensors[a["tensor"]], a["box"], a["swizzle"]))
                elif kind in ("batch", "heads", "seqlen"):
                    out.append(ctypes.c_int({"batch": b, "heads": h, "seqlen": s}[kind]))
                elif kind == "scale":
                    out.append(ctypes.c_float(1.0 / math.sqrt(d)))
                else:
                    raise RuntimeError(f"compare_sdpa.py: unknown kernel parameter kind {kind!r}")
            self.maps[key] = out
        return self.maps[key]

    def __call__(self, q, k, v, o, stream):
        b, h, s, d = q.shape
        args = self._params(q, k, v, o)
        params = (ctypes.c_void_p * len(args))(*[a.ptr if isinstance(a, TensorMap) else
                                                   ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) for a in args])
        grid = (s + self.block_m - 1) // self.block_m * self.split_kv
        grid = (grid + self.cluster - 1) // self.cluster * self.cluster
        if self.sched:
            grid, h, b = min(self.sms, grid * h * b), 1, 1
        self.drv.check(self.drv.cuLaunchKernel(self.fn, grid, h, b, self.threads, 1, 1, self.smem,
                                               ctypes.c_void_p(stream), params, None), "cuLaunchKernel")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="fattn-tune export --format json of the config")
    ap.add_argument("--cubin", help="fattn-tune export --format cubin of the same study")
    ap.add_argument("--serve", action="store_true",
                    help="one process for many pairs (PyTorch and CUDA set up once): read lines 'JSON CUBIN' "
                    "from standard input, compare each as --json and --cubin would, and answer each with one "
                    "line 'done STATUS' on standard output (the tables go to --markdown and the log to standard "
                    "error); ends at end of input")
    ap.add_argument("--variant", action="append", default=[], metavar="JSON:CUBIN",
                    help="another configuration of the same shape (fattn-tune export --config KEY, as json and "
                    "cubin), timed beside the others as backend 'fattn-tune KEY'; repeatable")
    ap.add_argument("--n", type=int, default=100, help="timed graph replays per backend (default 100)")
    ap.add_argument("--reps", type=int, default=20, help="calls per CUDA graph (default 20)")
    ap.add_argument("--warmup", type=int, default=5, help="graph replays before sampling (default 5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tolerance", type=float, default=0.10,
                    help="largest relative gap between this harness's and fattn-tune's median (default 0.10)")
    ap.add_argument("--order-tolerance", type=float, default=0.03,
                    help="largest relative gap between a ratio of the forward pass and of its rerun in reverse "
                    "order (default 0.03)")
    ap.add_argument("--markdown", help="append the table to this markdown file")
    ap.add_argument("--samples-csv", help="append every sample (shape,backend,idx,us) to this CSV (the reverse "
                    "pass's as backend 'NAME reverse')")
    ap.add_argument("--summary-json", help="append one JSON line (medians, CIs, versions) to this file; "
                    "scripts/speed_table.py turns such lines into the issue-5 table")
    a = ap.parse_args()
    if a.serve:
        if a.json or a.cubin or a.variant:
            ap.error("--serve reads its pairs from standard input: no --json, --cubin or --variant")
        out = sys.stdout
        sys.stdout = sys.stderr  # the tables and notes; standard output carries the answers only
        for line in sys.stdin:
            words = line.split()
            if len(words) != 2:
                print(f"compare_sdpa.py: expected 'JSON CUBIN', got {line.strip()!r}", file=sys.stderr)
                rc = 2
            else:
                try:
                    rc = compare(a, words[0], words[1])
                except Exception as e:  # a pair that fails must not end the process the others need
                    print(f"compare_sdpa.py: {words[0]}: {type(e).__name__}: {e}", file=sys.stderr)
                    rc = 1
            out.write(f"done {rc}\n")
            out.flush()
        return 0
    if not a.json or not a.cubin:
        ap.error("expected --json and --cubin, or --serve")
    for v in a.variant:
        if ":" not in v:
            ap.error(f"--variant {v!r}: expected JSON:CUBIN")
    return compare(a, a.json, a.cubin)


_torch = {}


def compare(a, json_path, cubin_path):
    """One pair: the exported configuration beside PyTorch SDPA. Returns the
    exit status: 0, 1 (disagreement, numerics, no timing) or 2 (no
    confirmation)."""

    with open(json_path) as f:
        desc = json.load(f)
    conf = desc.get("confirmation")
    if not conf or not conf.get("median_us"):
        print(f"compare_sdpa.py: {json_path} holds no confirmation of {desc.get('config_key')}: run fattn-tune "
              "confirm on its study first (the search's median, the best of many candidates, is no fair "
              "reference)", file=sys.stderr)
        return 2
    reported = float(conf["median_us"])

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    cubin = open(cubin_path, "rb").read()
    sh = desc["shape"]
    B, H, S, D, causal = sh["batch"], sh["heads"], sh["seqlen"], sh["head_dim"], bool(sh["causal"])
    if not torch.cuda.is_available():
        print("compare_sdpa.py: no GPU visible to PyTorch", file=sys.stderr)
        return 1
    dev = torch.device("cuda")
    torch.cuda.init()
    props = torch.cuda.get_device_properties(dev)
    l2 = getattr(props, "L2_cache_size", 50 << 20)
    nsets = timing_sets(B * H * S * D, l2)
    elems = B * H * S * D

    def tensor(seed, t):
        """One input tensor of fattn-tune's kind, filled in chunks on the host."""
        out_ = torch.empty(elems, dtype=torch.float16)
        for lo in range(0, elems, 1 << 22):
            n = min(1 << 22, elems - lo)
            out_[lo:lo + n] = torch.from_numpy(fill_values(seed, t, lo, n)).half()
        return out_.view(B, H, S, D).to(dev)

    sets = [tuple(tensor(a.seed * 7919 + 1 + s, t) for t in range(3)) for s in range(nsets)]
    out = torch.empty(B, H, S, D, device=dev, dtype=torch.float16)

    if "driver" not in _torch:
        _torch["driver"] = Driver()
    drv = _torch["driver"]
    torch.zeros(1, device=dev)  # the runtime's primary context is current on this thread from here
    kern = FattnKernel(drv, cubin, desc, props.multi_processor_count)

    def launcher(kernel):
        def call(i):
            q, k, v = sets[i % nsets]
            kernel(q, k, v, out, torch.cuda.current_stream().cuda_stream)
        return call

    fattn = launcher(kern)
    variants = []  # (backend name, launcher): the --variant configurations
    for v in a.variant:
        vjson, _, vcubin = v.partition(":")
        with open(vjson) as f:
            vdesc = json.load(f)
        if vdesc["shape"] != desc["shape"]:
            print(f"compare_sdpa.py: --variant {vjson}: shape {vdesc['shape']} is not {json_path}'s "
                  f"{desc['shape']}", file=sys.stderr)
            return 1
        variants.append((f"fattn-tune {vdesc['config_key']}",
                         launcher(FattnKernel(drv, open(vcubin, "rb").read(), vdesc, props.multi_processor_count))))

    def sdpa(backend):
        def call(i):
            q, k, v = sets[i % nsets]
            with sdpa_kernel([backend]):
                F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return call

    backends = [("fattn-tune", fattn)] + variants + [("torch flash", sdpa(SDPBackend.FLASH_ATTENTION)),
                ("torch efficient", sdpa(SDPBackend.EFFICIENT_ATTENTION)),
                ("torch cudnn", sdpa(SDPBackend.CUDNN_ATTENTION))]

    # Numerics of the loaded kernels against PyTorch's math backend in fp32.
    q, k, v = sets[0]
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
    bad, max_err = 0, 0.0
    for name, fn in [("fattn-tune", fattn)] + variants:
        out.fill_(float("nan"))
        fn(0)
        torch.cuda.synchronize()
        err = (out.float() - ref).abs()
        n_bad = int((err > 1e-2 + 1e-2 * ref.abs()).sum().item()) + int((~torch.isfinite(out)).sum().item())
        if n_bad:
            print(f"compare_sdpa.py: {name}: {n_bad} elements outside 1e-2 + 1e-2 |r|", file=sys.stderr)
        bad += n_bad
        max_err = max(max_err, float(err.nan_to_num(float("inf")).max().item()))

    graphs, skipped = [], []
    for name, fn in backends:
        try:
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for i in range(3):
                    fn(i)
            torch.cuda.current_stream().wait_stream(s)
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for i in range(a.reps):
                    fn(i)
            for _ in range(a.warmup):
                g.replay()
            torch.cuda.synchronize()
            graphs.append((name, g))
        except Exception as e:  # a backend that does not support the shape
            skipped.append((name, str(e).splitlines()[0][:120]))
            torch.cuda.synchronize()

    # Interleaved samples, then the rerun in reverse order: a ratio that
    # depends on which backend ran before another is not a measurement.
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    by_name = dict(graphs)

    def sample(reverse):
        got = {name: [] for name, _ in graphs}
        for order in rounds([name for name, _ in graphs], a.n, reverse):
            for name in order:
                start.record()
                by_name[name].replay()
                end.record()
                end.synchronize()
                got[name].append(start.elapsed_time(end) * 1000.0 / a.reps)
        return got

    samples = sample(False)
    samples_rev = sample(True)

    rng = np.random.default_rng(a.seed)
    flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
    shape = f"{B},{H},{S},{D}{' causal' if causal else ''}"
    base = samples.get("fattn-tune")
    rows = []
    for name, _ in graphs:
        m, lo, hi = median_ci(samples[name], rng)
        if base and name != "fattn-tune":
            r, rlo, rhi = ratio_ci(samples[name], base, rng)
            ratio = f"{r:.3f} [{rlo:.3f}, {rhi:.3f}]"
        else:
            ratio = "1"
        rows.append((name, m, lo, hi, float(np.percentile(samples[name], 90)), flops / m / 1e6, ratio))

    lines = [f"### {shape}: {desc['config_key']} ({props.name}, torch {torch.__version__}, "
             f"{a.n} samples x {a.reps} calls per graph, {nsets} input sets)", "",
             "| backend | median us | 95% CI | p90 us | TFLOP/s | time / fattn-tune time [95% CI] |",
             "|---|---|---|---|---|---|"]
    for name, m, lo, hi, p90, tf, ratio in rows:
        lines.append(f"| {name} | {m:.3f} | [{lo:.3f}, {hi:.3f}] | {p90:.3f} | {tf:.1f} | {ratio} |")
    for name, why in skipped:
        lines.append(f"| {name} | n/a | | | | not run: {why} |")
    agree = base is not None and abs(np.median(base) / reported - 1.0) <= a.tolerance
    lines.append("")
    if base is not None:
        ci = conf.get("ci_us") or [reported, reported]
        lines.append(f"fattn-tune's confirmation {conf.get('id')} of this config: median {reported:.3f} us "
                     f"[{ci[0]:.3f}, {ci[1]:.3f}], {conf.get('n')} interleaved samples; this harness: "
                     f"{np.median(base):.3f} us ({(np.median(base) / reported - 1) * 100:+.1f}%): "
                     f"{'agree within' if agree else 'DISAGREE beyond'} {a.tolerance * 100:.0f}%.")
    order, order_ok = order_check(samples, samples_rev, "fattn-tune", a.order_tolerance) if base else ({}, False)
    if order:
        lines.append("Rerun in reverse order, time / fattn-tune time: "
                     + "; ".join(f"{name} {r:.3f} (forward {f:.3f}, {(r / f - 1) * 100:+.1f}%)"
                                 for name, (f, r, _) in order.items())
                     + f": {'agree within' if order_ok else 'DISAGREE beyond'} {a.order_tolerance * 100:.0f}%.")
    lines.append(f"Numerics of the loaded kernel{'s' if variants else ''} vs torch math (fp32): max |o - r| = "
                 f"{max_err:.3g}, {bad} elements outside 1e-2 + 1e-2 |r|.")
    lines.append("")
    text = "\n".join(lines)
    print(text)
    if a.markdown:
        with open(a.markdown, "a") as f:
            f.write(text + "\n")
    if a.summary_json:
        import datetime
        line = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "shape": [B, H, S, D], "causal": causal, "config": desc["config_key"], "device": props.name,
                "driver": drv.version(), "torch": torch.__version__, "cuda": torch.version.cuda,
                "cudnn": torch.backends.cudnn.version(), "n": a.n, "reps": a.reps, "input_sets": nsets,
                "reported_median_us": reported, "reported_from": f"confirmation {conf.get('id')}",
                "agree": bool(agree), "max_abs_err": max_err, "n_bad": bad,
                "order_agree": bool(order_ok),
                "reverse": {name: {"ratio": r, "forward_ratio": f} for name, (f, r, _) in order.items()},
                "backends": {name: {"median_us": m, "ci_us": [lo, hi], "p90_us": p90}
                             for name, m, lo, hi, p90, _, _ in rows},
                "skipped": {name: why for name, why in skipped}}
        with open(a.summary_json, "a") as f:
            f.write(json.dumps(line) + "\n")
    if a.samples_csv:
        with open(a.samples_csv, "a") as f:
            for suffix, got in (("", samples), (" reverse", samples_rev)):
                for name, xs in got.items():
                    for i, x in enumerate(xs):
                        f.write(f"{shape},{name}{suffix},{i},{x:.4f}\n")
    return 1 if base is None or not agree or not order_ok or bad else 0


if __name__ == "__main__":
    sys.exit(main())
