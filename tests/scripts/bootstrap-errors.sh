#!/usr/bin/env bash
# bootstrap-errors.sh - scripts/bootstrap.sh shows why it failed: with the
# CUDA toolkit missing (-Dcuda-root=/nonexistent) and with a compile error,
# it exits non-zero and prints the end of the log, the error line included,
# and where the log is. Runs on a copy of the source tree.
#
#   bootstrap-errors.sh SOURCE_ROOT
set -euo pipefail
src=$(realpath "$1")
work=$(mktemp -d /tmp/fattn-bootstrap.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$work/err.txt" >&2 2>/dev/null; exit 1; }

(cd "$src" && git ls-files -coz --exclude-standard 2>/dev/null || find . -path ./build -prune -o -type f -print0) |
    (cd "$src" && xargs -0 cp --parents -t "$work") 2>/dev/null || true
[ -f "$work/scripts/bootstrap.sh" ] && [ -f "$work/meson.build" ] || fail "could not copy the source tree"

# The toolkit elsewhere than said.
if "$work/scripts/bootstrap.sh" b1 -Dcuda-root=/nonexistent >"$work/out.txt" 2>"$work/err.txt"; then
    fail "bootstrap.sh with -Dcuda-root=/nonexistent exited 0"
fi
grep -q "^bootstrap.sh: meson setup b1 -Dcuda-root=/nonexistent failed; the last 30 lines of b1/bootstrap.log:" \
    "$work/err.txt" || fail "no line saying what failed and where the log is"
grep -q "ERROR: .*/nonexistent" "$work/err.txt" || fail "meson's error line is not shown"

# A compile error.
printf '#error planted by bootstrap-errors.sh\n' | cat - "$work/src/util/err.c" >"$work/err.c.new"
mv "$work/err.c.new" "$work/src/util/err.c"
if "$work/scripts/bootstrap.sh" b2 >"$work/out.txt" 2>"$work/err.txt"; then
    fail "bootstrap.sh with a compile error exited 0"
fi
grep -q "^bootstrap.sh: ninja -C b2 failed; the last 30 lines of b2/bootstrap.log:" "$work/err.txt" ||
    fail "no line saying the build failed"
grep -q "planted by bootstrap-errors.sh" "$work/err.txt" || fail "the compiler's error is not shown"
echo "ok bootstrap-errors"
