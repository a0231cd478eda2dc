#!/usr/bin/env bash
# device-session.sh - a whole short lease (15 device-minutes: one machine
# start and one command of at most 10 minutes) as one device command: the
# stages of scripts/device-check.sh that fit, the most telling first, each
# under what is left of the command's time.
#
# Here, before the lease:
#   scripts/device-build.sh     # build-device/
#   scripts/device-cache.sh     # device-cache/: the compile cache of the
#                               # searches to run (default the small
#                               # stage's), so that the device spends its
#                               # minutes on the GPU
# Then through the device tool:
#   run(command="scripts/device-session.sh", carry=["build-device", "device-cache"], timeout_s=600)
# The speed table of every seed shape over both families (issues 33 and 52),
# in two commands (non-causal, then causal), each with its own cache:
#   scripts/device-cache.sh --speed 1,8,512,64 4,16,2048,128
#   run(command="FATTN_SESSION_STAGES=speed FATTN_SPEED_CAUSAL=0 scripts/device-session.sh", carry=["build-device", "device-cache"], timeout_s=600)
#   scripts/device-cache.sh --speed 1,8,512,64:causal 4,16,2048,128:causal
#   run(command="FATTN_SESSION_STAGES=speed FATTN_SPEED_CAUSAL=1 scripts/device-session.sh", carry=["build-device", "device-cache"], timeout_s=600)
# (the two halves' speed-GPU.md tables, each of its pairs, joined by hand
# into docs/speed-GPU.md). The non-causal half's cache: 1,255 cubins of both
# families (238 + 147 mma and 351 + 184 wgmma survivors ready, D = 64 and
# 128), 10 MB compressed, 8 minutes on the 2 cores here (2026-11-29).
# The wgmma family (issues 37 and 51), its ordered steps after first, the
# cache of its two searches made with `scripts/device-cache.sh --wgmma`:
#   run(command="FATTN_SESSION_STAGES=wgmma scripts/device-session.sh", carry=["build-device", "device-cache"], timeout_s=600)
#
# Order: first (the first questions; when one fails, the rest of the time
# goes to env, tests and diagnostics for an offline fix, and nothing else
# runs); then hopper (issue 35: the tensor maps and each Hopper primitive
# bit for bit against the simulator), family (issue 36: the tmacopy family
# searched, confirmed and exported on the device), env, small (the exhaustive search:
# the real landscape), tests, tune (its search budget fitted to what is
# left, at most 6 minutes).
# A stage starts only when half its estimate (the estimates keep twice the
# measured times) fits in what is left, and is stopped (its report so far
# kept) at the deadline or after twice its estimate and a minute, whichever
# comes first. Everything goes to $OUT: report.md (the stages' sections, in
# order), check.log, session.log (this script's own lines and the stages'
# stderr), the landscapes, trials-search.csv (the trials of the last
# exhaustive search, in full), and the tune stage's files; past the 8 files
# the device tool returns, all but report.md and session.log are packed in
# files.tar.gz.
#
# FATTN_SESSION_S: the seconds this script may take (default 570, inside a
# 600-second command); FATTN_SESSION_STAGES: the stages after first
# (default "hopper family env small tests tune"); FATTN_DEVICE_CACHE: the compressed
# cache (default device-cache/device.db.xz); FATTN_BUILD and
# FATTN_CHECK_WORK as for device-check.sh. Exit status: 0 when every stage
# ran and held.
set -u
cd "$(dirname "$0")/.." || exit 1
root=$PWD
build=${FATTN_BUILD:-build-device}
case $build in /*) ;; *) build=$root/$build ;; esac
OUT=${OUT:-$root/device-out}
export OUT
mkdir -p "$OUT"
slog=$OUT/session.log
deadline=$(($(date +%s) + ${FATTN_SESSION_S:-570}))
left() { echo $((deadline - $(date +%s))); }
log() { printf '%s device-session.sh: %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$slog" >&2; }

# The precompiled cache becomes the searches' database (results/device.db).
work=${FATTN_CHECK_WORK:-$root/results}
cache=${FATTN_DEVICE_CACHE:-$root/device-cache/device.db.xz}
if [ -f "$cache" ] && [ ! -f "$work/device.db" ]; then
    mkdir -p "$work"
    if xz -dc "$cache" >"$work/device.db.tmp" 2>/dev/null ||
        python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' \
            "$cache" >"$work/device.db.tmp"; then
        mv "$work/device.db.tmp" "$work/device.db"
        log "compile cache from $cache: $(du -h "$work/device.db" | cut -f1)"
    else
        rm -f "$work/device.db.tmp"
        log "$cache did not decompress; the searches compile everything on the device"
    fi
fi

# stage NAME [ENV=VALUE...]: runs it under what is left, and under twice
# its estimate and a minute (a hung stage does not take the whole lease;
# stretched on a dry run, below);
# returns its status (124 when stopped at its limit). The estimates keep
# about twice the times measured on the H100, so a stage starts when half
# its estimate fits in what is left.
# The estimates are the H100 machine's (16 cores), also on the fake engine;
# a dry run on fewer cores stretches each stage's cap by 16 / cores.
stretch=1
if [ -n "${FATTN_WORKER_HOOK:-}" ]; then
    cores=$(nproc 2>/dev/null || echo 16)
    [ "$cores" -lt 16 ] && stretch=$(((16 + cores - 1) / cores))
fi
stage() {
    local s=$1 est rc t cap
    shift
    est=$(env "$@" FATTN_CHECK_ESTIMATE=1 scripts/device-check.sh "$s" 2>/dev/null | awk '{ print $2 }')
    est=${est:-60}
    t=$(left)
    if [ $((est / 2)) -gt "$t" ] || [ "$t" -lt 10 ]; then
        log "stage $s not started: estimated $est s, $t s left"
        return 124
    fi
    cap=$(((2 * est + 60) * stretch))
    [ "$t" -gt "$cap" ] && t=$cap
    log "stage $s: estimated $est s, $(left) s left, stopped after $t s"
    env "$@" timeout -k 10 "$t" scripts/device-check.sh "$s" 2>>"$slog"
    rc=$?
    # timeout stops the script, not the searches and workers it started.
    pkill -9 -f "$build/fattn-tune" 2>/dev/null
    log "stage $s exited $rc"
    return $rc
}

diagnose() {
    log "first failed: diagnostics follow"
    {
        echo "== nvidia-smi"
        nvidia-smi 2>&1 | head -20
        echo "== ldd fattn-tune"
        ldd "$build/fattn-tune" 2>&1
        echo "== libraries"
        ls -l /usr/lib/x86_64-linux-gnu/libcuda.so* /usr/local/cuda/lib64/libnvrtc.so* 2>&1
        echo "== test_gpu"
        timeout 60 "$build/tests/test_gpu" 2>&1 | tail -30
        echo "== bench, verbose"
        FATTN_KERNEL_DIR=$root/kernels timeout 90 "$build/fattn-tune" bench bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1 \
            --shape 2,8,512,64 --samples 5 --db "$work/diag.db" 2>&1 | tail -40
    } >>"$slog" 2>&1
}

gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
log "start: ${gpu:-no nvidia-smi}; $(left) s"
# What the device tool carried (64 MiB in all): each path's size.
total=0
for p in "$build" "$(dirname "$cache")"; do
    [ -e "$p" ] || { log "carried: ${p#"$root"/} absent"; continue; }
    b=$(du -sb "$p" | cut -f1)
    total=$((total + b))
    log "carried: ${p#"$root"/} $((b / 1048576)) MiB ($b bytes)"
done
log "carried: $((total / 1048576)) MiB in all, of the 64 MiB the device tool carries"
# The command's estimate: first and every stage named, as each will be run.
sum=0 parts=""
for s in first ${FATTN_SESSION_STAGES:-hopper family env small tests tune}; do
    e=$(FATTN_CHECK_ESTIMATE=1 scripts/device-check.sh "$s" 2>/dev/null | awk '{ print $2 }')
    sum=$((sum + ${e:-60})) parts="$parts${parts:+ + }$s ${e:-60}"
done
log "estimated: $parts = $sum s of the $(left) s left"
if ! stage first; then
    diagnose
    for s in env tests; do stage "$s"; done
    exit 1
fi
failed=0
for s in ${FATTN_SESSION_STAGES:-hopper family env small tests tune}; do
    if [ "$s" = tune ]; then
        # The budget is what is left less the confirm, report and export
        # (about 60 s), at most the stage's 6 minutes.
        b=$(($(left) - 70))
        [ $b -gt 360 ] && b=360
        [ $b -ge 60 ] || { log "stage tune not started: $(left) s left"; failed=1; break; }
        stage tune FATTN_TUNE_BUDGET=${b}s || failed=1
    elif [ "$s" = speed ]; then
        # Its search budgets scale down to what is left.
        stage speed FATTN_SPEED_LEFT_S=$(($(left) - 15)) || failed=1
    else
        stage "$s" || failed=1
    fi
    [ "$(left)" -gt 20 ] || break
done
# The last exhaustive search's trials in full (registers, occupancy,
# errors): more than its landscape keeps, for the notes.
sid=$("$build/fattn-tune" -q query --db "$work/device.db" --format csv \
    --sql "SELECT max(id) FROM studies WHERE command = 'search'" 2>/dev/null | tail -1)
if [ -n "$sid" ] && [ "$sid" != '""' ]; then
    "$build/fattn-tune" -q query --db "$work/device.db" --format csv -o "$OUT/trials-search.csv" --sql \
        "SELECT seq, config_key, status, reason, detail, cache_hit, compile_ms, registers, spill_stores, stack_frame,
                smem_dynamic, occupancy, blocks_per_sm, occupancy_limiter, median_us, p10_us, p90_us, tflops, gbps,
                max_abs_err, norm_err, n_bad FROM trials WHERE study_id = $sid ORDER BY seq" 2>>"$slog" ||
        log "the trials of study $sid were not written"
fi
# The device tool returns 8 files at most: past that, all but the report
# and this log go back in one archive.
n=$(find "$OUT" -maxdepth 1 -type f | wc -l)
if [ "$n" -gt 8 ]; then
    (cd "$OUT" && find . -maxdepth 1 -type f ! -name report.md ! -name session.log ! -name files.tar.gz -printf '%f\n' |
        tar czf files.tar.gz -T - --remove-files) && log "$n files: all but report.md and session.log in files.tar.gz"
fi
log "done: $(left) s left"
exit $failed
