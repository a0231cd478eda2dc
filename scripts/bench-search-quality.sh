#!/usr/bin/env bash
# bench-search-quality.sh - every strategy of fattn-tune on every landscape of
# the suite (scripts/landscape_suite.py: additive, interact, narrow,
# deceptive, roofline, over the verdicts of a base landscape, with noise and
# GPU failures), SEEDS strategy seeds on each of LSEEDS landscapes per family;
# prints, per family and strategy, the median and p90 of the trials (GPU runs)
# until a configuration within 2% of the optimum is measured, pooled over
# the landscapes and seeds (tests/test_strategies.c drives the strategies as
# `fattn-tune search` does). Markdown on stdout, for docs/search-quality.md.
#
#   scripts/bench-search-quality.sh [LSEEDS] [SEEDS]     (default 3 and 10)
#
# BASE=FILE picks the base landscape (default: the synthetic one).
set -euo pipefail
cd "$(dirname "$0")/.."
lseeds=${1:-3}
seeds=${2:-10}
base=${BASE:-tests/data/landscape-synthetic-sm_90-2-8-512-64.csv}
[ -f "$base" ] || { echo "bench-search-quality.sh: $base: no such landscape" >&2; exit 2; }
[ -f build/build.ninja ] || scripts/bootstrap.sh build >/dev/null
ninja -C build tests/test_strategies >/dev/null
work=$(mktemp -d /tmp/fattn-quality.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 scripts/landscape_suite.py "$base" "$work" --seeds "$lseeds" >/dev/null
for f in "$work"/*.csv; do
    # The test's own assertions are for the synthetic landscape; here only
    # its table counts.
    build/tests/test_strategies search/space.json "$f" "$seeds" >"$f.out" 2>/dev/null || true
    grep -q "^| tpe |" "$f.out" || { echo "bench-search-quality.sh: no table for $f" >&2; exit 1; }
done
python3 - "$work" "$base" "$lseeds" "$seeds" <<'EOF'
import glob, os, sys
work, base, lseeds, seeds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
pooled = {}  # family -> strategy -> counts
order = []
for out in sorted(glob.glob(os.path.join(work, "*.csv.out"))):
    family = os.path.basename(out).split("-s")[0]
    for line in open(out):
        if not line.startswith("| ") or line.startswith("| strategy") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        strat, per_seed = cells[0], [int(x) for x in cells[-1].split()]
        if strat not in order:
            order.append(strat)
        pooled.setdefault(family, {}).setdefault(strat, []).extend(per_seed)

def q(xs, f):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(f * len(xs)))] if f < 0.5 else (
        xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2)

print("Trials until within 2%% of the optimum: median / p90 over %d landscapes x %d seeds per family "
      "(base %s; `scripts/bench-search-quality.sh %d %d`).\n" % (lseeds, seeds, base, lseeds, seeds))
print("| family | " + " | ".join(order) + " |")
print("|---|" + "---|" * len(order))
for fam in ("additive", "interact", "narrow", "deceptive", "roofline"):
    if fam not in pooled:
        continue
    row = []
    for s in order:
        xs = pooled[fam][s]
        row.append("%g / %g" % (q(xs, 0.5), sorted(xs)[min(len(xs) - 1, int(0.9 * len(xs)))]))
    print("| %s | %s |" % (fam, " | ".join(row)))
EOF
