#!/usr/bin/env python3
"""optuna_peer.py - Optuna's TPESampler (and random search through Optuna) on
a landscape, with fattn-tune's trial accounting, as the peer of issue 14's
benchmark (lab/search-quality/bench-search-quality.sh). Development only: the product
does not depend on Python or Optuna.

    optuna_peer.py CANDIDATES SAMPLER SEEDS [--max-trials N] [--max-asks N]

CANDIDATES is what `tests/test_strategies SPACE LANDSCAPE --candidates`
prints: every gate survivor as `candidate KEY KIND TIME`, KIND 0 measured
(TIME its median), 1 rejected after compiling (no GPU time), 2 a GPU failure
(numerics, fault: a trial, no time). SAMPLER is tpe (TPESampler's defaults:
in Optuna 5 these are multivariate, with the constant liar), tpe-uni (the
classic univariate TPE: multivariate=False) or random.

The search space Optuna sees is the one fattn-tune's strategies see: one
categorical parameter per configuration parameter, over the values the
candidates take. What each proposal costs, as it would for a user driving
fattn-tune's evaluator from Optuna:

  - not a candidate (a static gate rejects it): no compile, no GPU; told to
    Optuna as pruned (TPE ranks pruned trials below every completed one)
  - rejected after compiling: no GPU time; pruned
  - a GPU failure: one trial; pruned
  - measured: one trial; completed with its median
  - a configuration already evaluated: served from the database, no cost;
    told the same outcome again

Each run stops when a configuration within 2% of the optimum is measured and
60 trials are spent (for the best-after-30/60 figures; or 500 proposals after
the target, which is then the best-after-60 bound), after --max-trials trials
(default 800), or after --max-asks proposals (default 3000: Optuna's TPE
re-proposes configurations it has seen). A run that never measured the
target prints "-" for it.

Prints, per seed: `seed S trials T best30 R30 best60 R60 asks A`, T the trials
until the target (or -), R the best time measured within the first 30 / 60
trials over the optimum. With --trace, each run's trials also go to stderr
as `tests/test_strategies` writes them with FATTN_TRACE set (`run optuna-SAMPLER
SEED`, then `trace TRIAL - KEY KIND TIME/OPTIMUM`, KIND 0 measured, 2 a GPU
failure with TIME 0), for lab/search-quality/narrow_regions.py.
"""
import argparse
import math
import sys
import warnings


def read_candidates(path):
    cands = {}
    with open(path) as f:
        for line in f:
            if line.startswith("candidate "):
                _, key, kind, t = line.split()
                cands[key] = (int(kind), float(t))
    if not any(k == 0 for k, _ in cands.values()):
        sys.exit("optuna_peer.py: %s: no measured candidate" % path)
    return cands


def split_key(key):
    """bm64-bn64-...-h1 -> [("bm", "64"), ...] in key order."""
    out = []
    for part in key.split("-"):
        i = len(part)
        while i > 0 and part[i - 1].isdigit():
            i -= 1
        out.append((part[:i], part[i:]))
    return out


def run(cands, sampler_name, seed, max_trials, max_asks, trace=False):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    warnings.filterwarnings("ignore")
    names = [n for n, _ in split_key(next(iter(cands)))]
    values = {n: sorted({dict(split_key(k))[n] for k in cands}, key=int) for n in names}
    names = [n for n in names if len(values[n]) > 1]  # constants are not parameters
    const = {n: v[0] for n, v in values.items() if len(v) == 1}
    if sampler_name == "tpe":
        sampler = optuna.samplers.TPESampler(seed=seed)
    elif sampler_name == "tpe-uni":
        sampler = optuna.samplers.TPESampler(seed=seed, multivariate=False)
    elif sampler_name == "random":
        sampler = optuna.samplers.RandomSampler(seed=seed)
    else:
        sys.exit("optuna_peer.py: SAMPLER: unknown %r; expected tpe, tpe-uni or random" % sampler_name)
    study = optuna.create_study(sampler=sampler, direction="minimize")
    if trace:
        print("run optuna-%s %d" % (sampler_name, seed), file=sys.stderr)
    order = [n for n, _ in split_key(next(iter(cands)))]
    optimum = min(t for k, t in cands.values() if k == 0)
    seen = {}
    trials = asks = 0
    hit = None
    best = math.inf
    at = {30: math.inf, 60: math.inf}
    hit_asks = 0
    while asks < max_asks and trials < max_trials and (hit is None or (trials < 60 and asks < hit_asks + 500)):
        tr = study.ask()
        asks += 1
        cfg = {n: tr.suggest_categorical(n, values[n]) for n in names}
        key = "-".join(n + (cfg[n] if n in cfg else const[n]) for n in order)
        if key in seen:
            outcome = seen[key]
        else:
            kind, t = cands.get(key, (1, 0.0))
            if kind != 1:
                trials += 1
                if trace:
                    print("trace %d - %s %d %.4f" % (trials, key, kind, t / optimum if kind == 0 else 0),
                          file=sys.stderr)
            outcome = t if kind == 0 else None
            seen[key] = outcome
            if outcome is not None:
                best = min(best, outcome)
                if hit is None and outcome <= optimum * 1.02:
                    hit, hit_asks = trials, asks
            for n in at:
                if trials <= n:
                    at[n] = best / optimum
        if outcome is None:
            study.tell(tr, state=optuna.trial.TrialState.PRUNED)
        else:
            study.tell(tr, outcome)
    return hit, at[30], at[60], asks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("candidates")
    ap.add_argument("sampler")
    ap.add_argument("seeds", type=int)
    ap.add_argument("--max-trials", type=int, default=800)
    ap.add_argument("--max-asks", type=int, default=3000)
    ap.add_argument("--trace", action="store_true", help="each run's trials to stderr")
    a = ap.parse_args()
    cands = read_candidates(a.candidates)
    for s in range(1, a.seeds + 1):
        hit, r30, r60, asks = run(cands, a.sampler, s, a.max_trials, a.max_asks, a.trace)
        print("seed %d trials %s best30 %.4f best60 %.4f asks %d" % (s, hit if hit else "-", r30, r60, asks),
              flush=True)


if __name__ == "__main__":
    main()
