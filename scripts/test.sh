#!/usr/bin/env bash
# test.sh - build fattn-tune twice (plain, and with AddressSanitizer +
# UndefinedBehaviorSanitizer) and run the whole test suite on both.
#
#   scripts/test.sh
#
# GPU tests skip (exit 77) where no GPU is present. Runs in about ten
# minutes on 2 cores; most of it is NVRTC compiling kernels.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh build
scripts/bootstrap.sh build-asan -Db_sanitize=address,undefined -Db_lundef=false

status=0
meson test -C build --print-errorlogs --num-processes 2 || status=1
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    meson test -C build-asan --print-errorlogs --num-processes 2 --timeout-multiplier 3 || status=1
if [ $status = 0 ]; then
    echo "test.sh: all tests passed (plain and ASan/UBSan builds)"
else
    echo "test.sh: FAILED; logs in build/meson-logs and build-asan/meson-logs" >&2
fi
exit $status
