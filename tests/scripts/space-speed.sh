#!/usr/bin/env bash
# space-speed.sh - the committed search/space-speed.json and
# search/space-wgmma-v2.json are what scripts/space-speed.sh and
# scripts/space-wgmma-v2.sh derive from the committed landscapes, and the
# derivation follows its rule on a landscape and a wgmma trials table made
# up here: values of configurations within 15% of the best stay, the others
# go.
#
#   space-speed.sh SOURCE_ROOT
set -euo pipefail
src=$(realpath "$1")
work=$(mktemp -d /tmp/fattn-space-speed.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$src/scripts/space-speed.sh" >"$work/space.json" || fail "space-speed.sh exited $?"
diff -u "$src/search/space-speed.json" "$work/space.json" || fail "search/space-speed.json is not what scripts/space-speed.sh derives"
"$src/scripts/space-wgmma-v2.sh" >"$work/space-v2.json" || fail "space-wgmma-v2.sh exited $?"
diff -u "$src/search/space-wgmma-v2.json" "$work/space-v2.json" ||
    fail "search/space-wgmma-v2.json is not what scripts/space-wgmma-v2.sh derives"
cat >"$work/land.csv" <<'L'
# fattn-tune landscape 1
# device: made up
# shape: 1,1,64,64
# causal: 0
key,status,reason,median_us,p10_us,p90_us
bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1,ok,,10.0,9.9,10.1
bm128-bn64-bk32-w4-s3-u1-cp1-sw1-h1,ok,,11.4,11.3,11.5
bm32-bn32-bk64-w2-s2-u2-cp1-sw0-h0,ok,,11.6,11.5,11.7
bm32-bn128-bk64-w8-s2-u2-cp1-sw1-h1,rejected,spills,,,
L
python3 "$src/scripts/prune_space.py" --base "$src/search/space.json" "$work/land.csv" >"$work/pruned.json" ||
    fail "prune_space.py exited $?"
python3 - "$work/pruned.json" <<'P' || fail "the rule"
import json, sys
p = json.load(open(sys.argv[1]))["parameters"]
want = {"BLOCK_M": [64, 128], "BLOCK_N": [64], "BLOCK_K": [32], "NUM_WARPS": [4], "STAGES": [2, 3], "UNROLL": [1],
        "CP_ASYNC": [1], "SWIZZLE": [1], "HALF2": [1]}
sys.exit(0 if p == want else f"got {p}")
P
# A trials table of the wgmma family (a device stage's trials-*.csv): keys
# leave optional tunables out at their default (no "ov": OVERLAP=0; no
# "cl": CLUSTER=1, which stays as the only value measured), the family
# stays, and --keep holds a tunable no trial measured.
cat >"$work/trials-w.csv" <<'L'
study_id,config_key,status,reason,registers,smem_dynamic,median_us,p10,p90,tflops,max_abs_err
1,wgmma-bm128-bn128-s2-rs1-ov1,ok,,168,1,10.0,,,,
1,wgmma-bm128-bn128-s2-rs1,ok,,168,1,11.0,,,,
1,wgmma-bm192-bn64-s3-rs0-pp1,ok,,168,1,20.0,,,,
1,wgmma-bm64-bn64-s2-rs0,rejected,tiling,,,,,,,
L
python3 "$src/scripts/prune_space.py" --base "$src/search/space-wgmma.json" --keep 'SCHED=0,1,2:unmeasured' \
    "$work/trials-w.csv" >"$work/pruned-w.json" || fail "prune_space.py on a trials table exited $?"
python3 - "$work/pruned-w.json" <<'P' || fail "the rule on a wgmma trials table"
import json, sys
s = json.load(open(sys.argv[1]))
want = {"BLOCK_M": [128], "BLOCK_N": [128], "STAGES": [2], "PV_RS": [1], "OVERLAP": [0, 1], "PINGPONG": [0],
        "SCHED": [0, 1, 2], "CLUSTER": [1]}
sys.exit(0 if s["parameters"] == want and s.get("family") == "wgmma" else f"got {s}")
P
if python3 "$src/scripts/prune_space.py" --base "$src/search/space.json" /nonexistent.csv 2>/dev/null; then
    fail "a missing landscape accepted"
fi
echo "ok: search/space-speed.json and space-wgmma-v2.json are their scripts'; the 15% rule holds on a made-up landscape and trials table"
