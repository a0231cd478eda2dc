#!/usr/bin/env bash
# bench-families.sh - the family scheduler (search/famsched.h) over two-family
# landscape pairs (issue 52): makes the pairs of tests/tools/family_pairs.py
# for a range of generator seeds and runs build/tests/test_families on them,
# the scheduler against the right family alone and an even split.
#
#   lab/search-quality/bench-families.sh [SEEDS [RUNS [test_families options...]]]
#
# SEEDS: the generator's seeds, N or A-B (default 101-164: the acceptance's
# held-out pairs; 1-32 were the rule's development pairs); RUNS: strategy
# seeds per pair (default 16). Further options go to test_families, e.g.
# --set bonus=2 --set halving=8 (families-log.md lists what was tried) or
# --joint-only. JOBS=N (default 2) splits the pairs over N processes (the
# pooled medians are then per part; JOBS=1 for the pooled numbers).
# From the repository root; builds build/ if needed.
set -euo pipefail
seeds=${1:-101-164}
runs=${2:-16}
shift $(($# < 2 ? $# : 2))
jobs=${JOBS:-2}
cd "$(dirname "$0")/../.."
[ -x build/tests/test_families ] || { meson setup build >/dev/null && ninja -C build; }
work=$(mktemp -d /tmp/fattn-bench-families.XXXXXX)
trap 'rm -rf "$work"' EXIT
python3 tests/tools/family_pairs.py "$work/pairs" --seeds "$seeds" >/dev/null
tail -n +2 "$work/pairs/pairs.tsv" >"$work/rows"
split -n "l/$jobs" "$work/rows" "$work/part-"
for part in "$work"/part-*; do
    { head -1 "$work/pairs/pairs.tsv"; cat "$part"; } >"$part.tsv"
    build/tests/test_families "$part.tsv" search/space.json search/space-wgmma.json --seeds "$runs" \
        --max-median-ratio 100 --max-pair-ratio 100 "$@" >"$part.out" 2>&1 &
done
wait
for part in "$work"/part-*.out; do grep -v '^|---\|^| seed' "$part" | grep '^|' ; done
echo
for part in "$work"/part-*.out; do grep 'pairs, ' "$part"; done
