#!/usr/bin/env bash
# golden.sh - the gate counts for shape 2,8,512,64 on sm_89 and sm_90 (default
# 48 KiB shared-memory limit and each arch's opt-in maximum) equal the golden
# table committed in tests/data/gates-golden.csv (see docs/gates-golden.md).
#
#   golden.sh TOOL SOURCE_ROOT [--update]
set -euo pipefail
tool=$1
src=$2
golden=$src/tests/data/gates-golden.csv
now=$(mktemp)
trap 'rm -f "$now"' EXIT
echo "arch,smem_limit,reason,count" >"$now"
for arch in sm_89 sm_90; do
    for limit in default max; do
        opts=()
        [ "$limit" = max ] && opts=(--smem-limit max)
        "$tool" gates --arch "$arch" --shape 2,8,512,64 --family mma "${opts[@]}" --format csv |
            tail -n +2 | cut -d, -f1,2 | sed "s/^/$arch,$limit,/" >>"$now"
    done
done
if [ "${3:-}" = --update ]; then
    cp "$now" "$golden"
    echo "updated $golden"
    exit 0
fi
if ! diff -u "$golden" "$now"; then
    echo "FAIL: gate counts differ from $golden (a gate or the kernel layout changed: if intended, rerun with --update and explain the change in docs/gates-golden.md)" >&2
    exit 1
fi
echo "ok: $(($(wc -l <"$golden") - 1)) golden rows"
