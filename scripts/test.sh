#!/usr/bin/env bash
# test.sh - build fattn-tune twice (plain, and with AddressSanitizer +
# UndefinedBehaviorSanitizer) and run the whole test suite on both; then
# run the libFuzzer targets for a bounded time (scripts/fuzz.sh).
#
#   scripts/test.sh
#
# GPU tests skip (exit 77) where no GPU is present. Runs in about twenty
# minutes from a fresh clone on 2 idle cores (20 min 26 s measured at stop
# 31: plain build 7.5 min, ASan/UBSan 12.5, five fuzz targets of 60 s each);
# most of the rest is NVRTC compiling kernels.
#
# On a busy or slow machine, FATTN_TEST_SLOWDOWN=F (default 1; F from 1 to
# 1000) multiplies every time bound: meson's --timeout-multiplier, and every
# watchdog and wait for progress that a test's verdict depends on
# (tests/t.h, tests/cli/slowdown.sh). The ASan/UBSan build runs 3 times
# slower again.
set -euo pipefail
cd "$(dirname "$0")/.."
. tests/cli/slowdown.sh
asan_slowdown=$(awk -v f="$slowdown" 'BEGIN { print 3 * f }')

scripts/bootstrap.sh build
scripts/bootstrap.sh build-asan -Db_sanitize=address,undefined -Db_lundef=false
# slurm-wlm and munge: the campaign's Slurm scripts run on a single-node
# cluster the `slurm` test starts as root (tests/cli/slurm.sh).
. scripts/install-packages.sh
install_packages test.sh slurm-wlm munge

status=0
FATTN_TEST_SLOWDOWN=$slowdown \
    meson test -C build --print-errorlogs --num-processes 2 --timeout-multiplier "$slowdown" || status=1
# The ASan/UBSan build leaves out the `scripts` suite: it tests the device
# scripts' plumbing (bash and Python) and the campaign's Slurm scripts, which
# the plain build has tested, and under ASan it takes about 4 minutes of the
# 30 CI allows (device-check-dry 158 s, device-session-dry 92 s at stop 30).
# The binary's paths those scripts drive (fake engine, kill -9 and --resume,
# confirm, report, export, campaign, merge) run under ASan in the `cli`
# suite.
FATTN_TEST_SLOWDOWN=$asan_slowdown ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    meson test -C build-asan --print-errorlogs --num-processes 2 --timeout-multiplier "$asan_slowdown" \
    --no-suite scripts || status=1
# The libFuzzer targets (clang, build-fuzz/), FATTN_FUZZ_SECONDS each
# (default 60), from their seed corpora: no crash, no sanitizer report.
scripts/fuzz.sh "${FATTN_FUZZ_SECONDS:-60}" || status=1
if [ $status = 0 ]; then
    echo "test.sh: all tests passed (plain and ASan/UBSan builds, fuzz targets)"
else
    echo "test.sh: FAILED; logs in build/meson-logs and build-asan/meson-logs" >&2
fi
exit $status
