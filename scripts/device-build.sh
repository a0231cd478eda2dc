#!/usr/bin/env bash
# device-build.sh - build fattn-tune here for the device machine (the GPU
# lent through the device tool), which has CUDA and libsqlite3 but neither
# libcjson nor a compiler toolchain we rely on. The build goes to
# build-device/ (ignored by git; carry it): an optimized build whose
# binaries find libcjson.so.1 beside them ($ORIGIN, copied in) and the
# CUDA libraries under /usr/local/cuda as here.
#
#   scripts/device-build.sh            # then, through the device tool:
#   run(command="scripts/device-check.sh all", carry=["build-device"])
set -euo pipefail
cd "$(dirname "$0")/.."
build="build-device"

if [ ! -f "$build/build.ninja" ]; then
    scripts/bootstrap.sh build >/dev/null 2>&1 || true # installs the Debian packages if missing
    meson setup "$build" --buildtype=release -Dwerror=true \
        '-Dc_link_args=-Wl,-rpath,$ORIGIN:$ORIGIN/..' >/dev/null
fi
ninja -C "$build" >/dev/null
# The copy from an earlier run would be what ldd finds first ($ORIGIN).
rm -f "$build/libcjson.so.1"
cjson=$(ldd "$build/fattn-tune" | awk '/libcjson\.so/ {print $3}')
[ -n "$cjson" ] && [ -f "$cjson" ] || { echo "device-build.sh: libcjson.so.1 not found by ldd" >&2; exit 1; }
cp -L "$cjson" "$build/libcjson.so.1"
grep -q ORIGIN <<<"$(readelf -d "$build/fattn-tune")" ||
    { echo "device-build.sh: $build/fattn-tune lacks the \$ORIGIN rpath" >&2; exit 1; }
echo "device-build.sh: $build/ ready ($(du -sh "$build" | cut -f1)); carry it: carry=[\"$build\"]"
