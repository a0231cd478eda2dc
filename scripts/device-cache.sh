#!/usr/bin/env bash
# device-cache.sh - compile here, where compile time is free, what the
# device's small stage would compile: every gate survivor of the default
# space for 2,8,512,64 (non-causal) on sm_90, into device-cache/device.db.xz
# (about 20 MB; ignored by git). scripts/device-session.sh unpacks it as the
# small stage's database, whose compile cache the search, the kill -9 check
# and the tune stage then read instead of running NVRTC on the device. A
# cache entry is keyed by the kernel's sources, the arch, the options and
# NVRTC's version: an entry that does not match is compiled again there, as
# without the cache. About 16 minutes on 2 cores (949 s on 2026-11-25).
#
#   scripts/device-cache.sh [BUILD_DIR]     (default build-device)
#
# FATTN_CHECK_FILTER=EXPR compiles only the configurations matching (as it
# narrows device-check.sh's searches).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-device}
[ -x "$build/fattn-tune" ] || { echo "device-cache.sh: $build/fattn-tune not built (scripts/device-build.sh)" >&2; exit 1; }
mkdir -p device-cache
db=device-cache/device.db
rm -f "$db" "$db"-wal "$db"-shm
filter=${FATTN_CHECK_FILTER:-}
FATTN_KERNEL_DIR=$PWD/kernels "$build/fattn-tune" compile --arch sm_90 --shape 2,8,512,64 ${filter:+--filter "$filter"} \
    --db "$db" -q
n=$("$build/fattn-tune" -q query --db "$db" --format csv --sql "SELECT count(*) FROM compile_cache WHERE arch = 'sm_90'" | tail -1)
xz -T0 -6 -f "$db"
echo "device-cache.sh: $db.xz ($n cubins, $(du -h "$db.xz" | cut -f1)); carry device-cache"
