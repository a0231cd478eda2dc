#!/usr/bin/env bash
# device-session-dry.sh - scripts/device-session.sh without a GPU, on the
# fake engine over a narrowed space: the precompiled cache unpacked as the
# stages' database; first, then the stages that fit in the session's time,
# a stage whose estimate does not fit not started (and said so); more
# files than the device tool returns packed in one archive; a failing first
# stage followed by the diagnostics, env and tests only, nothing else.
#
#   device-session-dry.sh BUILD_DIR SOURCE_ROOT
set -euo pipefail
build=$(realpath "$1")
src=$(realpath "$2")
work=$(mktemp -d /tmp/fattn-session-dry.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$work"/out*/session.log >&2 2>/dev/null; exit 1; }

export FATTN_WORKER_HOOK=fake FATTN_BUILD=$build
export FATTN_CHECK_FILTER=BLOCK_M=64,BLOCK_N=64,NUM_WARPS=4,STAGES=2,CP_ASYNC=1,SWIZZLE=1,UNROLL=1

# A compile cache, compressed as scripts/device-cache.sh leaves it.
FATTN_KERNEL_DIR=$src/kernels "$build/fattn-tune" compile --arch sm_90 --shape 2,8,512,64 \
    --filter "$FATTN_CHECK_FILTER,HALF2=1" --db "$work/cache.db" -q >/dev/null || fail "compile"
n=$("$build/fattn-tune" -q query --db "$work/cache.db" --format csv --sql "SELECT count(*) FROM compile_cache" | tail -1)
[ "${n:-0}" -gt 0 ] || fail "the compile cached nothing"
xz -c "$work/cache.db" >"$work/cache.db.xz"

# 60 s: half the estimates of first (50 s) and env (15 s) fit; half of
# compare's (176 s) does not, nor a tune search of at least 60 s besides
# its 70 s of confirm and export.
rc=0
OUT=$work/out FATTN_CHECK_WORK=$work/db FATTN_DEVICE_CACHE=$work/cache.db.xz FATTN_SESSION_S=60 \
    FATTN_SESSION_STAGES="env compare tune" "$src/scripts/device-session.sh" 2>/dev/null || rc=$?
[ $rc = 1 ] || fail "exit $rc with stages left out (1 wanted)"
log=$work/out/session.log
r=$work/out/report.md
grep -q "compile cache from $work/cache.db.xz" "$log" || fail "cache not unpacked"
# Every carried path's size, and the sum against the device tool's 64 MiB.
[ "$(grep -c "carried: [^ ]* [0-9]* MiB ([0-9]* bytes)" "$log")" = 2 ] || fail "the build's and the cache's sizes not printed"
grep -q "carried: [0-9]* MiB in all, of the 64 MiB the device tool carries" "$log" || fail "the carried total not printed"
grep -q "estimated: first [0-9]* + env [0-9]* + compare [0-9]* + tune [0-9]* = [0-9]* s of the [0-9]* s left" "$log" ||
    fail "the command's estimate not printed"
m=$("$build/fattn-tune" -q query --db "$work/db/device.db" --format csv --sql "SELECT count(*) FROM compile_cache" | tail -1)
[ "$m" = "$n" ] || fail "the stages' database holds $m cache entries, not $n"
grep -q "^- ok: first: every step held" "$r" || fail "first did not run and hold"
grep -q "^\*\*Stages env: every check held.\*\*" "$r" || fail "env did not run"
grep -q "stage compare not started: estimated [0-9]* s, [0-9]* s left" "$log" || fail "compare started past the time"
grep -q "stage tune not started" "$log" || fail "tune started past the time"
if grep -q "^## fattn-tune beside PyTorch" "$r"; then fail "the compare stage ran"; fi

# Two searches and the user's loop: more files than the device tool returns
# (8), so all but the report and the log go back in one archive.
rc=0
OUT=$work/out-many FATTN_CHECK_WORK=$work/db-many FATTN_SESSION_S=400 FATTN_SESSION_STAGES="small small-causal tune" \
    "$src/scripts/device-session.sh" 2>/dev/null || rc=$?
[ $rc = 0 ] || fail "exit $rc from small, small-causal and tune"
[ "$(find "$work/out-many" -maxdepth 1 -type f | wc -l)" = 3 ] || fail "not packed: $(ls "$work/out-many")"
tar tzf "$work/out-many/files.tar.gz" >"$work/packed" || fail "files.tar.gz unreadable"
for f in check.log trials-search.csv landscape-fake-2-8-512-64.csv landscape-fake-2-8-512-64-causal.csv \
    confirm-2-8-512-64.txt report-2-8-512-64.html fattn_tuned-2-8-512-64.h; do
    grep -qx "$f" "$work/packed" || fail "$f not in files.tar.gz"
done
grep -q "^- ok: landscape written: landscape-fake-2-8-512-64-causal.csv" "$work/out-many/report.md" ||
    fail "the report lost the causal search"

# A failing first stage: diagnostics, then env and tests; no search.
rc=0
OUT=$work/out-fault FATTN_CHECK_WORK=$work/db-fault FATTN_WORKER_HOOK=fake,fault=kv2 FATTN_SESSION_S=400 \
    "$src/scripts/device-session.sh" 2>/dev/null || rc=$?
[ $rc = 1 ] || fail "exit $rc after a failing first stage"
log=$work/out-fault/session.log
r=$work/out-fault/report.md
grep -q "first failed: diagnostics follow" "$log" || fail "no diagnostics"
grep -q "^== ldd fattn-tune" "$log" || fail "diagnostics incomplete"
grep -q "^## GPU tests" "$r" || fail "tests did not run after the failure"
if grep -q "^## Exhaustive search" "$r"; then fail "a search ran after first failed"; fi
echo "ok: device-session.sh dry run: cache unpacked, stages fitted to the time, files packed, diagnostics after a failing first"
