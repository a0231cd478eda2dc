#!/usr/bin/env bash
# bootstrap.sh - install what is missing (Debian packages), configure and
# build fattn-tune in build/. Safe to run again: it only does what is needed.
#
#   scripts/bootstrap.sh [BUILD_DIR [MESON_OPTION...]]
#
# Needs the CUDA toolkit (NVRTC and its headers) under /usr/local/cuda, or
# -Dcuda-root=/path passed as a MESON_OPTION. No GPU needed to build.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true

# chromium: the report test loads the HTML report in a headless browser.
# g++: the simulator compiles the kernel for the host.
. scripts/install-packages.sh
# python3-pip: the test-only nvdisasm (scripts/fetch-nvdisasm.sh).
install_packages bootstrap.sh meson ninja-build pkg-config gcc g++ libsqlite3-dev libcjson-dev python3-numpy chromium xz-utils \
    python3-pip

# Quiet when it works; when it fails, the end of the log and where it is.
mkdir -p "$build"
log=$build/bootstrap.log
failed() {
    echo "bootstrap.sh: $1 failed; the last 30 lines of $log:" >&2
    tail -n 30 "$log" >&2
    [ -f "$build/meson-logs/meson-log.txt" ] && echo "bootstrap.sh: meson's own log: $build/meson-logs/meson-log.txt" >&2
    exit 1
}
if [ ! -f "$build/build.ninja" ]; then
    meson setup "$build" "$@" >"$log" 2>&1 || failed "meson setup $build $*"
fi
ninja -C "$build" >"$log" 2>&1 || failed "ninja -C $build"
scripts/fetch-nvdisasm.sh "$build/tools" >>"$log" 2>&1 || failed "scripts/fetch-nvdisasm.sh $build/tools"
echo "bootstrap.sh: built $build/fattn-tune" >&2
