#!/usr/bin/env bash
# layering.sh - every `#include "dir/..."` of the library (src/, search/)
# names a module of the same or an earlier stage of the pipeline, never a
# later one:
#   util < target < space < gates < compile < gpu < baseline < run < sim
#     < store < job < search < tune = confirm = bench = study < export
#     = report = campaign < family < cli
# (sim is an evaluator beside the GPU's run; job/ holds what a procedure
# runs on, the target, the measurement and the GPU, as plain structs;
# search/ holds the strategies tune drives; family/ holds the kernel
# families' entries, which point into every stage, and space/family.h the
# interface the earlier stages read). A header of a later stage included
# from an earlier one is a back-include: the earlier stage would need the
# later one to build and to be understood. A directory not in the list
# fails too, so a new module is placed on purpose.
#
#   layering.sh SOURCE_ROOT
set -euo pipefail
cd "$1"
rank() {
    case $1 in
    util) echo 0 ;; target) echo 1 ;; space) echo 2 ;; gates) echo 3 ;; compile) echo 4 ;;
    gpu) echo 5 ;; baseline) echo 6 ;; run) echo 7 ;; sim) echo 8 ;; store) echo 9 ;; job) echo 10 ;;
    search) echo 11 ;; tune | confirm | bench | study) echo 12 ;; export | report | campaign) echo 13 ;; family) echo 14 ;; cli) echo 15 ;;
    *) echo -1 ;;
    esac
}
bad=0 n=0
for f in src/*/*.[ch] search/*.[ch]; do
    from=$(basename "$(dirname "$f")")
    rf=$(rank "$from")
    if [ "$rf" -lt 0 ]; then
        echo "FAIL: $f: module $from has no place in the pipeline order (tests/scripts/layering.sh)" >&2
        bad=1
        continue
    fi
    while IFS=: read -r line inc; do
        to=${inc%%/*}
        [ "$to" = "$from" ] && continue
        rt=$(rank "$to")
        [ "$rt" -lt 0 ] && continue # not a module of the library (config.h, kernels/)
        n=$((n + 1))
        if [ "$rt" -gt "$rf" ]; then
            echo "FAIL: $f:$line includes $inc: $to comes after $from in the pipeline" >&2
            bad=1
        fi
    done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*/' "$f" |
        sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1:\2/')
done
[ "$n" -gt 100 ] || { echo "FAIL: only $n cross-module includes read: the parser is broken" >&2; exit 1; }
[ "$bad" = 0 ] || exit 1
echo "ok: $n cross-module includes, none back up the pipeline"
