#!/usr/bin/env bash
# bench-devices.sh - search --devices on the fake engine, as issue 53 asks:
# the wall time of a fixed number of trials over 1 GPU and over N fake GPUs,
# each trial given a fixed wall time (the engine's slow=MS) and its verdict
# and time from a landscape (land=FILE), the compile cache warm (the whole
# space compiled first), so that the two cores here do not cap the speed-up.
# Reproduces docs/search-quality.md's "Several GPUs" wall times.
#
#   lab/scale-out/bench-devices.sh [TRIALS [MS [GPUS [STRATEGY...]]]]
#
# Defaults: 40 trials, 1000 ms a trial, 4 GPUs, strategies random and gp; the
# landscape tests/data/landscape-h100-2-8-512-64.csv over search/space.json.
# Prints a markdown table. Builds build/ if needed.
set -euo pipefail
cd "$(dirname "$0")/../.."
trials=${1:-40}
ms=${2:-1000}
gpus=${3:-4}
shift 3 2>/dev/null || shift $#
strategies=("${@:-random}")
[ $# -gt 0 ] || strategies=(random gp)
land=$PWD/tests/data/landscape-h100-2-8-512-64.csv
[ -f build/build.ninja ] || scripts/bootstrap.sh build >/dev/null
ninja -C build >/dev/null
tool=$PWD/build/fattn-tune
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export FATTN_KERNEL_DIR=$PWD/kernels

search() { # DB DEVICES STRATEGY: one search, its wall time (s) on stdout
    local t0 t1
    t0=$(date +%s.%N)
    FATTN_WORKER_HOOK="fake,land=$land,slow=$ms,gpus=$gpus" "$tool" -q search --db "$1" --shape 2,8,512,64 \
        --arch sm_90 --family mma --strategy "$3" --seed 1 --trials "$trials" --devices "$2" >/dev/null
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}

all=$(seq -s, 0 $((gpus - 1)))
# Warm: every survivor of the space compiled into one database (fattn-tune
# compile, about 15 minutes on 2 cores; WARM_DB=FILE names one made before);
# each search is timed on a copy of it, its study the copy's last.
if [ -n "${WARM_DB:-}" ]; then
    "$tool" -q query --db "$WARM_DB" --sql "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null 2>&1 || true
    cp "$WARM_DB" "$work/warm.db"
else
    "$tool" -q compile --db "$work/warm.db" --shape 2,8,512,64 --arch sm_90 --family mma >/dev/null
fi
echo "| strategy | GPUs | trials | wall time (s) | speed-up |"
echo "|---|---|---|---|---|"
for s in "${strategies[@]}"; do
    one=
    for d in 0 "$all"; do
        n=$(awk -F, '{ print NF }' <<<"$d")
        cp "$work/warm.db" "$work/timed.db"
        t=$(search "$work/timed.db" "$d" "$s")
        ran=$(sqlite3 "$work/timed.db" "SELECT count(*) FROM trials WHERE study_id = (SELECT max(id) FROM studies)
            AND run_ms IS NOT NULL")
        [ -n "$one" ] || one=$t
        echo "| $s | $n | $ran | $t | $(awk -v a="$one" -v b="$t" 'BEGIN { printf "%.2fx", a / b }') |"
    done
done
