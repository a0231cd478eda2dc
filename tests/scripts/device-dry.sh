#!/usr/bin/env bash
# device-dry.sh - scripts/device-check.sh without a GPU: its stages first,
# env, hopper, family, wgmma, tests, small, small-causal, tune and speed run on the fake engine
# (FATTN_WORKER_HOOK=fake) over a narrowed space, each with its time
# estimate printed before it runs, and every stage's estimate for the H100
# (the whole space) is at most 8 minutes (the first stage's 5; the speed
# stage's, a whole device command, 10). The report
# must hold what the acceptance run reports:
# the 2-byte pad recorded as runtime_fault with the search going on, every
# configuration of each search measured or rejected, a landscape per search
# that the replay evaluator reads, a kill -9 that loses nothing, and the
# user's loop (search under a budget, confirm, report, export). The
# plumbing of the device run is tested here so that device minutes are not
# spent finding a typo.
#
#   device-dry.sh BUILD_DIR SOURCE_ROOT
set -euo pipefail
build=$(realpath "$1")
src=$(realpath "$2")
. "$src/tests/cli/slowdown.sh"
work=$(mktemp -d /tmp/fattn-device-dry.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$work/out/report.md" >&2 2>/dev/null; exit 1; }

export FATTN_WORKER_HOOK=fake FATTN_BUILD=$build FATTN_CHECK_WORK=$work/db OUT=$work/out
export FATTN_CHECK_FILTER=BLOCK_M=64,BLOCK_N=64,NUM_WARPS=4,STAGES=2,CP_ASYNC=1,SWIZZLE=1,UNROLL=1
# Every stage's estimate for the H100, over the whole default space: a
# device command is 10 minutes at most, a stage 8 (the first one 5).
FATTN_CHECK_FILTER='' FATTN_CHECK_ESTIMATE=1 "$src/scripts/device-check.sh" all speed >"$work/estimates" ||
    fail "estimates"
cat "$work/estimates"
[ "$(wc -l <"$work/estimates")" = 16 ] || fail "not every stage has an estimate"
awk '$2 !~ /^[0-9]+$/ || $2 <= 0 || ($2 > 480 && $1 != "speed") || $2 > 600 || ($1 == "first" && $2 > 300) { bad = 1; print "over the limit: " $0 }
     END { exit bad }' "$work/estimates" || fail "a stage estimated over its limit"
FATTN_TUNE_BUDGET="$(scaled 20)s" FATTN_WGMMA_FILTER=BLOCK_M=128,BLOCK_N=128,STAGES=2 FATTN_WGMMA_CASES=4 \
    "$src/scripts/device-check.sh" first env hopper family wgmma tests small small-causal tune 2>"$work/stderr" ||
    { cat "$work/stderr" >&2; fail "device-check.sh exited $?"; }
r=$work/out/report.md
for s in first env hopper family wgmma tests small small-causal tune; do
    grep -q "^device-check.sh: stage $s: estimated [0-9]* s on this machine (" "$work/stderr" ||
        fail "no estimate printed before stage $s"
    grep -q "^_Stage $s: [0-9]* s wall (estimated [0-9]* s)._" "$r" || fail "no wall time beside the estimate of $s"
done
# The first questions, in order, each answered (GPU-only ones skipped here).
grep -q "^| default configuration through the worker (2,8,512,64) | ok |" "$r" || fail "first: default config"
grep -q "^| a SPLIT_KV cluster configuration (kv2, 2,8,512,64) | ok |" "$r" || fail "first: cluster config"
grep -q "^| timing through a CUDA graph | ok |" "$r" || fail "first: graph timing"
grep -q "^| cuDNN baseline (2,8,512,64) | ok |" "$r" || fail "first: cuDNN"
grep -q "^| driver and device found | skipped: " "$r" || fail "first: a GPU test's skip not reported as a skip"
grep -q "^- ok: first: every step held" "$r" || fail "first: verdict"
# The first failure stops the stage, its log in the report.
if FATTN_WORKER_HOOK=fake,fault=kv2 OUT=$work/out-fault "$src/scripts/device-check.sh" first 2>"$work/stderr-fault"; then
    fail "first: a faulting cluster configuration passed"
fi
rf=$work/out-fault/report.md
grep -q "^| a SPLIT_KV cluster configuration (kv2, 2,8,512,64) | \*\*FAIL\*\* (exit 1) |" "$rf" || fail "first: no FAIL row"
grep -q "CUDA_ERROR_ILLEGAL_ADDRESS" "$rf" || fail "first: the failing step's log is not in the report"
if grep -q "^| timing through a CUDA graph |" "$rf"; then fail "first: went on after a failure"; fi
# The Hopper stage: without a GPU both programs skip, and say so.
grep -q "^## Hopper primitives (issue 35)" "$r" || fail "hopper: no section"
grep -q "^## The tmacopy family (issue 36)" "$r" || fail "family: no section"
for shape in 2,8,512,64 2,8,500,128; do
    grep -q "^- ok: tmacopy at $shape: [1-9][0-9]* of [1-9][0-9]* configurations verified" "$r" || fail "family: $shape"
done
grep -q "^- ok: confirm: tmacopy-br" "$r" || fail "family: confirm"
grep -q "^- ok: export: the header and its host launcher compile" "$r" || fail "family: export"
grep -q "^- tensor maps: skipped: " "$r" || fail "hopper: the tensor maps' skip not reported"
# The wgmma family's ordered steps (the GPU programs skip; the worker's run
# on the fake engine; the three searches narrowed to 128 x 128 x 2 stages
# (every OVERLAP, PINGPONG and SCHED), their confirms, each best's ablation
# variants exported from its study; compare and ncu skipped).
grep -q "^## The wgmma family (issues 37, 51)" "$r" || fail "wgmma: no section"
for step in "wgmma-bm128-bn128-s2-rs1, bounded waits, 1,1,64,64" "the same at 1,2,130,128 causal" \
    "wgmma-bm128-bn128-s2-rs1-ov1-pp1-sc1, bounded waits, 4,16,1024,128 (every block looping)" \
    "the covering sample in the worker (1 s kernel watchdog)" "search of 4,16,2048,128 over the v2 space" \
    "search of 4,16,2048,128 causal over the v2 space" "compare_sdpa.py and the ablation, 4,16,2048,128" \
    "compare_sdpa.py and the ablation, 4,16,2048,128 causal" "search of 8,16,512,64 over the whole space (40s)" \
    "compare_sdpa.py and the ablation, 8,16,512,64"; do
    grep -qF "| $step | ok |" "$r" || fail "wgmma: step '$step'"
done
key='wgmma-bm128-bn128-s2-rs[01]\(-ov1\)\{0,1\}\(-pp1\)\{0,1\}\(-sc[12]\)\{0,1\}'
grep -q "^| confirm --n 100 of $key against cuDNN | ok |" "$r" || fail "wgmma: confirm"
grep -q "^| confirm --n 100 of $key (causal) against the family's reference | ok |" "$r" || fail "wgmma: causal confirm"
[ "$(grep -c "^| confirm --n 100 of $key against cuDNN | ok |" "$r")" = 2 ] || fail "wgmma: 8,16,512,64's confirm"
# Each best with OVERLAP, PINGPONG and SCHED switched, each measured in its
# study (the filter keeps them all) and exported with export --config; at
# 4,16,2048,128 non-causal also CLUSTER=2 (SCHED 0), searched alone (the
# causal shape's and D = 64's are refused, and said so).
vkey="$key\(-cl2\)\{0,1\}"
[ "$(grep -c "^ablation: $vkey$" "$work/out/check.log")" = 10 ] || fail "wgmma: the ablation's variants"
grep -q "^ablation: wgmma-bm128-bn128-s2-rs[01]\(-ov1\)\{0,1\}\(-pp1\)\{0,1\}-cl2$" "$work/out/check.log" ||
    fail "wgmma: the CLUSTER=2 variant"
ready() { grep -c "^compare_sdpa.py skipped: no GPU (fake engine); $1 variants ready$" "$work/out/check.log"; }
[ "$(ready 3)/$(ready 4)" = 2/1 ] || fail "wgmma: the variants handed to compare_sdpa.py"
grep -q "^- ok: wgmma: every step held" "$r" || fail "wgmma: verdict"
# The sample's fourth case, wgmma-bm192-bn112-s2-rs1-ov1 at 1,2,257,128, is
# one the register_budget gate refuses: counted, not failed (the H200's
# second try stopped there).
grep -q "^3 covering cases verified, 1 refused by a gate$" "$work/out/check.log" || fail "wgmma: the refused case"
for t in "4,16,2048,128" "4,16,2048,128 causal" "8,16,512,64"; do
    grep -A4 "^Search of $t (study [0-9]*), the ten fastest:" "$r" | grep -q "^| wgmma-bm" ||
        fail "wgmma: the search's table at $t"
done
grep -q "^| - | every mode | skipped: " "$r" || fail "hopper: the primitives' skip not reported"
# A skip in the tests stage is reported as one, with its reason.
grep -q "^| test_gpu_engine | 77: skipped: " "$r" || fail "tests: a skip not reported as a skip"
grep -q "^- ok: both 2-byte-pad configurations recorded as runtime_fault" "$r" || fail "pad fault"
[ "$(grep -c '^- ok: all [0-9]* configurations measured (ok) or rejected with a reason' "$r")" = 2 ] || fail "searches"
grep -q "^- ok: killed after [0-9]* trials had run" "$r" || fail "kill -9"
grep -q "^- ok: --resume [0-9]* --trials [0-9]* went on with the killed study" "$r" || fail "--resume after kill -9"
grep -q "^- ok: confirm stored 100 samples of the best configuration and 100 of cuDNN" "$r" || fail "confirm"
grep -q "^baseline: cudnn, fake cuDNN" "$r" || fail "confirm output in the report"
grep -q "^- ok: the exported header carries the confirmation" "$r" || fail "confirmed header"
grep -q "<svg id=\"plot-confirm\"" "$work/out/report-2-8-512-64.html" || fail "HTML report"
grep -q "^\*\*Stages first env hopper family wgmma tests small small-causal tune: every check held.\*\*" "$r" || fail "verdict"
for tag in 2-8-512-64 2-8-512-64-causal; do
    land=$work/out/landscape-fake-$tag.csv
    [ -f "$land" ] || fail "no landscape $tag"
    # The replay evaluator reads it back: same best as the report's table.
    best=$(grep -v '^#' "$land" | awk -F, 'NR > 1 && $2 == "ok"' | sort -t, -k4,4g | awk 'NR == 1' | cut -d, -f1)
    causal=$([ "${tag%-causal}" != "$tag" ] && echo --causal || true)
    unset FATTN_WORKER_HOOK
    # shellcheck disable=SC2086
    "$build/fattn-tune" -q search --arch sm_90 --shape 2,8,512,64 $causal --space "$src/search/space.json" \
        --filter "$FATTN_CHECK_FILTER" --evaluator "replay:$land" --db "$work/replay.db" >"$work/replay.txt" ||
        fail "replay of $tag"
    export FATTN_WORKER_HOOK=fake
    grep -q "^best: $best, " "$work/replay.txt" || fail "replayed best of $tag is not $best"
done
# Without the fake engine and without a GPU the script says so and fails.
# The other stages, on the landscapes above and the large shape's (the
# sanitizer and compare stages skip without a GPU and say so).
"$src/scripts/device-check.sh" large large-causal numerics sanitizer sanitizer-large compare 2>"$work/stderr" ||
    { cat "$work/stderr" >&2; fail "device-check.sh large ... compare exited $?"; }
for s in large large-causal numerics sanitizer sanitizer-large compare; do
    grep -q "^device-check.sh: stage $s: estimated [0-9]* s on this machine (" "$work/stderr" ||
        fail "no estimate printed before stage $s"
done
[ "$(grep -c '^| 2,8,512,64 | bm.* | ok |' "$r")" = 8 ] || fail "numerics: the S=512 studies' best at 4 lengths each"
grep -q "^\*\*Stages large large-causal numerics sanitizer sanitizer-large compare: every check held.\*\*" "$r" ||
    fail "large ... compare verdict"
# Issues 33 and 52's stage: both families' spaces searched in one study per
# pair of the budget table, confirmed (against cuDNN non-causal, the FA2-like
# configuration causal), exported and compared (fake_compare.py speaks
# compare_sdpa.py --serve's protocol), the table rewritten after each pair,
# naming the winning family and each family's best. Small spaces of the two
# families, the mma family's only above 48 KiB of shared memory, so that its
# confirmed best is one (the default limit would refuse it).
FATTN_CHECK_FILTER='' FATTN_SPEED_SPACE=$src/tests/data/space-speed-dry.json \
    FATTN_SPEED_WGMMA_SPACE=$src/tests/data/space-wgmma-speed-dry.json FATTN_SPEED_SHAPES=2,8,512,64 \
    FATTN_SPEED_CAUSAL='0 1' FATTN_SPEED_BUDGET="$(scaled 10)s" \
    FATTN_COMPARE_CMD="python3 $src/tests/scripts/fake_compare.py" "$src/scripts/device-check.sh" speed 2>"$work/stderr" ||
    { cat "$work/stderr" >&2; fail "device-check.sh speed exited $?"; }
{ grep -q "^### 2,8,512,64 non-causal (search budget [0-9]* s)" "$r" && grep -q "^### 2,8,512,64 causal" "$r"; } || fail "speed: pairs"
[ "$(grep -c '^baseline: cudnn, fake cuDNN' "$r")" = 2 ] || fail "speed: confirm against cuDNN (non-causal; the tune stage's is the other)"
grep -q "^baseline: config:bm128-bn64-bk64-w4-s2-u1-cp1-sw1-h1" "$r" || fail "speed: causal confirm against the FA2-like config"
grep -q "^\*\*Stages speed: every check held.\*\*" "$r" || fail "speed verdict"
t=$work/out/speed-fake.md
grep -Eq "^\| 2,8,512,64 \| none \| (mma \| \`bm64-bn128-bk64-w4-s3-u1-|wgmma \| \`wgmma-bm128-bn128-s3-rs1)" "$t" ||
    fail "speed table: non-causal row"
grep -Eq "^\| 2,8,512,64 \| causal \| (mma|wgmma) \| .* \| FA2-like bm128-bn64-bk64-w4-s2-u1-cp1-sw1-h1: [0-9.]* \[" "$t" ||
    fail "speed table: causal row"
[ "$(grep -Ec '\| (mma|wgmma) [0-9.]+ \([0-9]+\); (mma|wgmma) [0-9.]+ \([0-9]+\) \|' "$t")" = 2 ] ||
    fail "speed table: each family's best in both rows"
grep -q "^| family | measured | best_us |" "$r" || fail "speed: the families' bests in the report"
[ "$(grep -c '| complete | ' "$t")" = 2 ] || fail "speed table: a chain incomplete"
grep -q "Every pair: search, confirm, export and compare complete" "$t" || fail "speed table verdict"
smem=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["smem_bytes"])' "$work/out/speed-2-8-512-64.json")
[ "$smem" -gt 49152 ] || fail "speed: the confirmed best has $smem B of shared memory, not above 48 KiB"
grep -Eq "sanitizers skipped: .* they would check (bm64-bn128-bk64|wgmma-bm128-bn128)" "$r" || fail "speed: the sanitizers' pick"
# The estimate covers the whole table in one device command.
est=$(FATTN_CHECK_ESTIMATE=1 "$src/scripts/device-check.sh" speed | awk '{ print $2, $3 }')
[ "${est#* }" = 12 ] && [ "${est% *}" -le 600 ] || fail "speed estimate: $est (12 pairs within 600 s wanted)"
unset FATTN_WORKER_HOOK
if "$src/scripts/device-check.sh" nonsense >/dev/null 2>"$work/err"; then fail "unknown stage accepted"; fi
grep -q "unknown stage 'nonsense'" "$work/err" || fail "unknown stage message"
echo "ok: device-check.sh dry run: pad fault, 2 searches with landscapes that replay, kill -9 and --resume, speed"
