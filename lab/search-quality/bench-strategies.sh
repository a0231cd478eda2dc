#!/usr/bin/env bash
# bench-strategies.sh - how many trials each search strategy needs to come
# within 2% of a landscape's optimum, over seeds 1..SEEDS, without a GPU:
# the strategies run as `fattn-tune search` runs them, their outcomes
# replayed from a landscape file (a real exhaustive run from the device, or
# the synthetic one until a real one is committed).
#
#   lab/search-quality/bench-strategies.sh [LANDSCAPE] [SEEDS]
#
# Default: the last tests/data/landscape-*.csv (by name) measured on a GPU
# (not synthetic, not one of the suite's, not the empty one), else the
# synthetic one; 10 seeds. Prints a markdown table. Builds build/ if needed.
set -euo pipefail
cd "$(dirname "$0")/../.."
land=${1:-}
seeds=${2:-10}
if [ -z "$land" ]; then
    for f in tests/data/landscape-*.csv; do
        case $f in *synthetic* | *-suite-* | *-empty*) ;; *) [ -f "$f" ] && land=$f ;; esac
    done
    land=${land:-tests/data/landscape-synthetic-sm_90-2-8-512-64.csv}
fi
[ -f "$land" ] || { echo "bench-strategies.sh: $land: no such landscape" >&2; exit 2; }
[ -f build/build.ninja ] || scripts/bootstrap.sh build >/dev/null
ninja -C build tests/test_strategies >/dev/null
# The test program prints the table on stdout and its checks on stderr.
build/tests/test_strategies search/space.json "$land" "$seeds"
