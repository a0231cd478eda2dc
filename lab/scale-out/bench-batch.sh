#!/usr/bin/env bash
# bench-batch.sh - what a batch costs in search quality (search --devices,
# issue 53): for each landscape, the median trials (seeds 1..SEEDS) until
# one within 2% of the optimum is measured, each strategy driven as one GPU
# drives it and as K GPUs do (test_strategies --batch K: K proposals
# outstanding, outcomes in proposal order), and their ratio. Reproduces
# docs/search-quality.md's "Several GPUs" table: the committed landscapes
# (tests/data), then landscapes of the suite the batch settings never saw
# (tests/tools/landscape_suite.py over the H100's, seeds 4 and 5).
#
#   lab/scale-out/bench-batch.sh [K [SEEDS]]
#
# Defaults: K 4, 10 seeds. About 8 minutes on 2 cores. Builds build/ if needed.
set -euo pipefail
cd "$(dirname "$0")/../.."
k=${1:-4}
seeds=${2:-10}
[ -f build/build.ninja ] || scripts/bootstrap.sh build >/dev/null
ninja -C build tests/test_strategies >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 tests/tools/landscape_suite.py tests/data/landscape-h100-2-8-512-64.csv "$work" --seeds 5 >/dev/null
strategies=${FATTN_STRATEGIES:-gp,tpe,anneal}
medians() { # LANDSCAPE K: "name median" per strategy
    FATTN_STRATEGIES=$strategies build/tests/test_strategies search/space.json "$1" "$seeds" --batch "$2" 2>/dev/null |
        awk -F'|' '/^\| [a-z]+ \| [0-9]/ { gsub(/ /, "", $2); gsub(/ /, "", $3); print $2, $3 }'
}
echo "| landscape | ${strategies//,/ | } |"
printf '|---'
for _ in ${strategies//,/ }; do printf '|---'; done
echo '|'
for land in tests/data/landscape-synthetic-sm_90-2-8-512-64.csv tests/data/landscape-suite-interact-s1.csv \
    tests/data/landscape-suite-narrow-s1.csv tests/data/landscape-h100-2-8-512-64.csv "$work"/*-s4.csv "$work"/*-s5.csv; do
    one=$(medians "$land" 1)
    many=$(medians "$land" "$k")
    row=$(join <(sort <<<"$one") <(sort <<<"$many") |
        awk -v order="$strategies" 'BEGIN { n = split(order, o, ",") } { m[$1] = $2 " -> " $3 sprintf(" (%.2fx)", $3 / $2) }
             END { for (i = 1; i <= n; ++i) printf " %s |", m[o[i]] }')
    echo "| $(basename "$land" .csv) |$row"
done
