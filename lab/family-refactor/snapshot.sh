#!/usr/bin/env bash
# snapshot.sh - reproduces issue 36's acceptance 1 (the mma family's
# behaviour unchanged by the family interface): writes the outputs a user
# sees for the mma kernel to OUT, masked by mask.sed (timestamps, tool
# version, durations, paths), so that a snapshot of the commit before the
# change and one after compare with `diff -r`:
#   - the gate counts and survivor lists, sm_89 and sm_90, 48K and max
#     shared memory, and --explain of three configurations;
#   - compile of a seeded sample of 24 survivors on sm_89 and sm_90: every
#     trial's key, status, reason and resources;
#   - every strategy's trial sequence, seeds 1-3, 40 trials, on each
#     committed H100 landscape (replay evaluator);
#   - search, confirm, report, export (header, json, t4, kernel) through the
#     fake engine (FATTN_WORKER_HOOK=fake);
#   - the query views and the studies' stored arguments.
#
# About an hour on 2 cores (the replays: 54 searches compiling their
# candidates); run it alone, the before and after snapshots one after the
# other: a search that fails (errors.txt) leaves no replay file.
#
# FATTN_SNAP_LANDSCAPES=GLOB replays only the landscapes
# tests/data/landscape-GLOB.csv (default h100-*; "none": no replays), for a
# quicker partial comparison; FATTN_SNAP_STRATEGIES="gp random" only those
# strategies (default all six); FATTN_SNAP_SEEDS="2 3" only those seeds
# (default 1 2 3). The replays of the 4,16,2048,128 landscape are the slow
# part (3-5 minutes each on 2 busy cores).
#
#   lab/family-refactor/snapshot.sh TOOL OUT
set -euo pipefail
tool=$(realpath "$1")
out=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
out=$(realpath "$out")
work=$(mktemp -d /tmp/fattn-snap.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
mask() { sed -f "$src/lab/family-refactor/mask.sed"; }
run() { # run NAME ARGS...: stdout and stderr of the tool, masked, and its exit status
    local name=$1
    shift
    local rc=0
    "$tool" "$@" >o.txt 2>e.txt || rc=$?
    { cat o.txt; echo "--- stderr"; cat e.txt; echo "--- exit $rc"; } | mask >"$out/$name.txt"
}
export FATTN_KERNEL_DIR=$src/kernels

for arch in sm_89 sm_90; do
    for lim in 48K max; do
        run "gates-$arch-$lim" gates --arch $arch --shape 2,8,512,64 --smem-limit $lim --format csv
        run "gates-list-$arch-$lim" gates --arch $arch --shape 4,16,2048,128 --smem-limit $lim --list --format csv
    done
    for cfg in bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1 bm128-bn64-bk64-w8-s2-u1-cp1-sw0-h1 \
        BLOCK_M=32,BLOCK_N=128,NUM_WARPS=2,SPLIT_KV=2; do
        run "explain-$arch-${cfg//[=,]/_}" gates --arch $arch --shape 2,8,512,64 --explain "$cfg" --format json
    done
    run "compile-$arch" compile --db c.db --arch $arch --shape 2,8,512,64 --sample 24 --jobs 2
done
run compile-trials query --db c.db --format csv --sql \
    "SELECT study_id, config_key, status, reason, regs, spill_bytes, smem_bytes, detail FROM trials ORDER BY id"

for land in "$src"/tests/data/landscape-${FATTN_SNAP_LANDSCAPES:-h100-*}.csv; do
    [ -f "$land" ] || continue
    l=$(basename "$land" .csv)
    for strat in ${FATTN_SNAP_STRATEGIES:-gp tpe exhaustive random lhs anneal}; do
        for seed in ${FATTN_SNAP_SEEDS:-1 2 3}; do
            "$tool" -q search --db r.db --evaluator "replay:$land" --strategy $strat --seed $seed --trials 40 \
                --space "$src/search/space.json" >/dev/null 2>e.txt ||
                { echo "search failed: $l $strat $seed: $(tail -1 e.txt)" >>"$out/errors.txt"; continue; }
            "$tool" query --db r.db --format csv --sql \
                "SELECT config_key, status, reason, median_us FROM trials WHERE study_id = (SELECT max(id) FROM studies) ORDER BY id" |
                mask >"$out/replay-$l-$strat-$seed.txt"
        done
    done
done

export FATTN_WORKER_HOOK=fake
run fake-search search --db f.db --strategy exhaustive --arch sm_90 --shape 2,8,512,64 \
    --space "$src/tests/data/space-search.json" --samples 12
run fake-confirm confirm --db f.db --n 30 --top 2
run fake-confirm-json confirm --db f.db --n 20 --format json
run query-studies query --db f.db studies
run query-trials query --db f.db trials --limit 0
run query-top query --db f.db top
run query-rejections query --db f.db rejections
run query-confirmations query --db f.db confirmations
run query-landscape query --db f.db landscape
run export-header export --db f.db
run export-json export --db f.db --format json
run export-t4 export --db f.db --format t4
run export-kernel export --db f.db -o h.h --kernel k.cu
mask <k.cu >"$out/export-kernel.cu"
mask <h.h >"$out/export-kernel.h"
run report report --db f.db -o rep.html
mask <rep.html >"$out/report.html"
run studies-args query --db f.db --format csv --sql "SELECT * FROM studies"
