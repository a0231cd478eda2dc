#!/usr/bin/env bash
# families.sh - the family scheduler (search/famsched.h) over two-family
# landscape pairs: tests/tools/family_pairs.py makes the development pairs of
# seeds 1-4 (one of each case: wgmma, mma, wgmma-hidden, mma-hidden; the wgmma
# landscapes synthetic) and tests/test_families.c searches each both ways,
# holding the scheduler to its measured medians with margin
# (docs/search-quality.md: the acceptance's 64 held-out pairs are measured
# by the command there, not here).
#
#   families.sh BUILD_ROOT SOURCE_ROOT
set -euo pipefail
build=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d /tmp/fattn-families.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$src"
python3 tests/tools/family_pairs.py "$work" --seeds 1-4 --fattn "$build/fattn-tune" >/dev/null
exec "$build/tests/test_families" "$work/pairs.tsv" search/space.json search/space-wgmma.json --seeds 6 \
    --max-median-ratio 2.0 --max-pair-ratio 3.5
