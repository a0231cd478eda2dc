#!/usr/bin/env bash
# hw-record.sh - the hardware record of a device check that passed: one line
# for kernels/hardware-records.tsv (src/space/hardware.h), appended to
# $OUT/hardware-records.tsv, which comes back with the device session's
# report; the session that commits the report copies the lines into
# kernels/hardware-records.tsv. Nothing is recorded on the fake engine
# (FATTN_WORKER_HOOK) or without a GPU: a record says a GPU ran the kernel.
#
#   hw-record.sh TOOL SPACE CHECK
#     TOOL   the fattn-tune that ran the check
#     SPACE  a space file of the family checked (its family and kernel)
#     CHECK  what passed, as the record says it ("the GPU tests")
set -euo pipefail
tool=$1 space=$2 check=$3
out=${OUT:?OUT names the folder the report goes to}
if [ -n "${FATTN_WORKER_HOOK:-}" ]; then
    echo "hw-record.sh: no record on the fake engine" >&2
    exit 0
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
if [ -z "$gpu" ]; then
    echo "hw-record.sh: no record: nvidia-smi names no GPU" >&2
    exit 0
fi
json=$("$tool" space --space "$space" --format json)
family=$(printf '%s\n' "$json" | sed -n 's/^  "family": "\([a-z0-9]*\)",$/\1/p')
hash=$(printf '%s\n' "$json" | sed -n 's/^  "kernel_sha256": "\([0-9a-f]\{64\}\)",$/\1/p')
if [ -z "$family" ] || [ -z "$hash" ]; then
    echo "hw-record.sh: $tool space --space $space names no family or kernel hash" >&2
    exit 1
fi
printf '%s\t%s\t%s\t%s\t%s\n' "$family" "$(date -u +%Y-%m-%d)" "$gpu" "$hash" "$check" >>"$out/hardware-records.tsv"
echo "hw-record.sh: recorded $family, kernel ${hash:0:12}, on $gpu: $check" >&2
