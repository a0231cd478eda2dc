#!/usr/bin/env bash
# wgmma-refused.sh - the register_budget model of the wgmma family against
# ptxas on what it refuses: every BLOCK_M 192 configuration of
# search/space-wgmma.json at 2 stages (the stages change no register),
# D 64 and 128, causal, compiled by an exhaustive search on the fake engine
# with the gate skipped, and compared with what the gate says of each
# (fattn-tune gates --list: the survivors it admits). Prints, per D, the configurations the model
# admits and refuses and how many of each spilled; exits non-zero when an
# admitted one spills (the model would be wrong). No GPU; about 3 minutes on
# 2 cores. Reproduces the counts of docs/wgmma-family.md (register_budget).
#
#   lab/compile-all/wgmma-refused.sh [-b BUILD] [-d DIR]
set -euo pipefail
build=build dir=results/wgmma-refused
while getopts "b:d:h" opt; do
    case $opt in
    b) build=$OPTARG ;;
    d) dir=$OPTARG ;;
    *) sed -n '2,13p' "$0"; exit 2 ;;
    esac
done
tool=$build/fattn-tune
[ -x "$tool" ] || { echo "wgmma-refused.sh: $tool not found; build first" >&2; exit 1; }
mkdir -p "$dir"
filter=BLOCK_M=192,STAGES=2 status=0
for d in 64 128; do
    db=$dir/d$d.db
    rm -f "$db" "$db"-*
    FATTN_WORKER_HOOK=fake "$tool" -q search --strategy exhaustive --arch sm_90 --shape "1,2,130,$d" --causal \
        --space search/space-wgmma.json --smem-limit max --filter "$filter" --unsafe-skip-gate register_budget \
        --samples 3 --db "$db" >"$dir/d$d.log" 2>&1
    "$tool" -q query --db "$db" --format csv --sql \
        "SELECT config_key, coalesce(reason, '') = 'spills' FROM trials WHERE coalesce(reason, '') <> 'tiling' ORDER BY config_key" |
        tail -n +2 | tr -d '"' | sort >"$dir/d$d.spills"
    # The gates' survivors (the model admits them); the other compiled
    # configurations, past the tiling gate, are what it refuses.
    "$tool" -q gates --arch sm_90 --shape "1,2,130,$d" --causal --space search/space-wgmma.json --smem-limit max \
        --filter "$filter" --list --format csv | awk -F, 'NR > 1 { print $2 }' | sort >"$dir/d$d.admitted"
    awk -F, 'NR == FNR { ok[$1] = 1; next } { print $1 "," (ok[$1] ? 0 : 1) "," $2 }' "$dir/d$d.admitted" \
        "$dir/d$d.spills" | awk -F, -v d="$d" '
        { n[$2 "," $3]++ }
        END { printf "D %d: admitted %d (%d spill), refused %d (%d spill)\n", d, n["0,0"] + n["0,1"], n["0,1"],
              n["1,0"] + n["1,1"], n["1,1"]; exit n["0,1"] > 0 }' || status=1
done
exit $status
