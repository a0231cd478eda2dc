#!/usr/bin/env bash
# device-cache.sh - compile here, where compile time is free, what the
# device's searches would compile: every gate survivor of the default space
# on sm_90 for each study named (default: the small stage's, 2,8,512,64
# non-causal), into device-cache/device.db.xz (ignored by git; about 29 MB
# a D=64 study and 36 MB a D=128 one, and the device tool carries 64 MiB in
# all, build-device's 5 included: two D=64 studies or one D=128 at most).
# scripts/device-session.sh unpacks it as the stages' database
# (results/device.db), whose compile cache the
# exhaustive searches, the kill -9 check and the tune stage then read
# instead of running NVRTC on the device (1.3 s a configuration per core at
# D=64, 2.2 at D=128 there: 2.5 to 4 minutes a study). A cache entry is
# keyed by the kernel's sources, the arch, the options and NVRTC's version:
# an entry that does not match is compiled again there, as without the
# cache. About 16 minutes a D=64 study on the 2 cores here (949 s for
# 2,8,512,64 on 2026-11-25), 29 (1694 s, 36 MB compressed) for
# 4,16,2048,128:causal (2026-11-26).
#
#   scripts/device-cache.sh [--build DIR] [SHAPE[:causal][=SPACE]...]
#   scripts/device-cache.sh                              # small
#   scripts/device-cache.sh 4,16,2048,128:causal          # large-causal
#   scripts/device-cache.sh --speed                      # the speed stage's
#   scripts/device-cache.sh --wgmma                      # the wgmma stage's
#
# --speed: search/space-speed.json and search/space-wgmma-v2.json (the two
# families the speed stage searches in one study a pair) with --smem-limit
# max at D = 64 and 128, causal and not (the kernels the speed stage's
# twelve pairs compile: S, B and H are run-time arguments).
#
# --wgmma: the wgmma stage's three searches with --smem-limit max:
# search/space-wgmma-v2.json at 4,16,2048,128 causal and not, and
# search/space-wgmma.json at 8,16,512,64 (its database takes the cache from
# results/device.db). A study's =SPACE names its own space.
#
# FATTN_CHECK_FILTER=EXPR compiles only the configurations matching (as it
# narrows device-check.sh's searches).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build-device
if [ "${1:-}" = --build ]; then
    build=$2
    shift 2
fi
space=(--family mma) limits=() # the stages' default space: the mma family's (a study's =SPACE says otherwise)
if [ "${1:-}" = --speed ]; then
    space=(--space search/space-speed.json --space search/space-wgmma-v2.json) limits=(--smem-limit max)
    shift
    [ $# -gt 0 ] || set -- 1,8,512,64 1,8,512,64:causal 4,16,2048,128 4,16,2048,128:causal
elif [ "${1:-}" = --wgmma ]; then
    limits=(--smem-limit max)
    shift
    [ $# -gt 0 ] || set -- 4,16,2048,128=search/space-wgmma-v2.json 4,16,2048,128:causal=search/space-wgmma-v2.json \
        8,16,512,64=search/space-wgmma.json
fi
[ $# -gt 0 ] || set -- 2,8,512,64
for study in "$@"; do
    case ${study%%=*} in
    *,*,*,*:causal | *,*,*,[0-9]*) ;;
    *) echo "device-cache.sh: '$study' is not B,H,S,D or B,H,S,D:causal (then =SPACE optionally)" >&2; exit 2 ;;
    esac
    [ "${study#*=}" = "$study" ] || [ -f "${study#*=}" ] || { echo "device-cache.sh: '$study': no space ${study#*=}" >&2; exit 2; }
done
[ -x "$build/fattn-tune" ] || { echo "device-cache.sh: $build/fattn-tune not built (scripts/device-build.sh)" >&2; exit 1; }
mkdir -p device-cache
db=device-cache/device.db
rm -f "$db" "$db"-wal "$db"-shm "$db.xz"
filter=${FATTN_CHECK_FILTER:-}
for study in "$@"; do
    own=("${space[@]}")
    [ "${study#*=}" = "$study" ] || own=(--space "${study#*=}")
    study=${study%%=*}
    shape=${study%:causal}
    causal=()
    [ "$shape" = "$study" ] || causal=(--causal)
    FATTN_KERNEL_DIR=$PWD/kernels "$build/fattn-tune" compile --arch sm_90 --shape "$shape" "${causal[@]}" \
        "${own[@]}" "${limits[@]}" \
        ${filter:+--filter "$filter"} --db "$db" -q
done
n=$("$build/fattn-tune" -q query --db "$db" --format csv --sql "SELECT count(*) FROM compile_cache WHERE arch = 'sm_90'" | tail -1)
xz -T0 -6 -f "$db"
cache_b=$(du -sb device-cache | cut -f1)
build_b=$(du -sb "$build" | cut -f1)
echo "device-cache.sh: $db.xz ($n cubins for $*, $(du -h "$db.xz" | cut -f1)); carry device-cache"
echo "device-cache.sh: carried: device-cache $((cache_b / 1048576)) MiB + $build $((build_b / 1048576)) MiB = $(((cache_b + build_b) / 1048576)) MiB of 64"
[ $((cache_b + build_b)) -le $((64 * 1048576)) ] || { echo "device-cache.sh: over the 64 MiB the device tool carries" >&2; exit 1; }
