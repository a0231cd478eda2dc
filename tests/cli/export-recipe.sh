#!/usr/bin/env bash
# export-recipe.sh - the exported header's build recipe builds the kernel
# fattn-tune measured: its nvcc line carries the NVRTC options of the
# measured build (the arch as -gencode=arch=compute_XX,code=sm_XX, -std,
# --use_fast_math), and nvcc, run as it says, gives the registers, spills,
# stack frame and shared memory of the compile cache's cubin. Three studies
# on the fake engine (one configuration each): D=64 with 57,344 bytes of
# shared memory, D=128 causal, and a 2-block cluster with Q in registers.
# A field that differs is named. Shared memory, spills and the stack frame
# must be the measured build's; the registers may differ by a few, and the
# test says so: nvcc's front end (host preprocessing, then cicc) is not
# NVRTC's (NVRTC addresses shared memory through 64-bit generic pointers
# where nvcc's PTX uses 32-bit ones), and over 32 survivors of the default
# and tuned spaces compiled both ways (stop 32) 10 differed by 1 to 8
# registers, none in shared memory, and spills only where both spilled.
#
#   export-recipe.sh TOOL SOURCE_ROOT CUDA_ROOT
set -euo pipefail
tool=$(realpath "$1")
src=$(realpath "$2")
cuda=$3
work=$(mktemp -d /tmp/fattn-export-recipe.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
export FATTN_WORKER_HOOK=fake
fail() { echo "FAIL: $*" >&2; exit 1; }
sql() { "$tool" -q query --db fattn.db --format csv --sql "$1" | tail -n +2; }

study=0
for spec in "2,8,512,64 - BLOCK_M=64,BLOCK_N=128,BLOCK_K=64,NUM_WARPS=4,STAGES=3,UNROLL=1,SPLIT_KV=1,Q_REGS=0" \
    "1,4,1024,128 --causal BLOCK_M=128,BLOCK_N=64,BLOCK_K=32,NUM_WARPS=8,STAGES=2,UNROLL=1,SPLIT_KV=1,Q_REGS=0" \
    "1,4,1024,128 - BLOCK_M=128,BLOCK_N=64,BLOCK_K=64,NUM_WARPS=8,STAGES=2,UNROLL=2,SPLIT_KV=2,Q_REGS=1"; do
    read -r shape causal filter <<<"$spec"
    [ "$causal" = - ] && causal=
    "$tool" -q search --strategy exhaustive --arch sm_90 --shape "$shape" $causal --space "$src/search/space-h100.json" \
        --smem-limit max --filter "$filter" --samples 5 --db fattn.db >/dev/null || fail "search $spec"
    study=$((study + 1))
    "$tool" export --db fattn.db --study $study -o tuned$study.h || fail "export of study $study"
    key=$(sql "SELECT config_key FROM trials WHERE study_id = $study AND status = 'ok'")
    options=$(sql "SELECT c.options FROM trials t JOIN compile_cache c ON c.key = t.cache_key WHERE t.study_id = $study AND t.status = 'ok'")
    [ -n "$options" ] || fail "study $study: no compile-cache entry of $key"

    # The recipe names every option of the measured build that changes code.
    recipe=$(sed -n 's/^ \*   nvcc \(.*\) -c -include THIS_HEADER kernels\/fattn_fwd\.cu$/\1/p' tuned$study.h)
    [ -n "$recipe" ] || fail "study $study: no nvcc line in the header"
    for opt in $options; do
        case $opt in
        --gpu-architecture=sm_*) want="-gencode=arch=compute_${opt#--gpu-architecture=sm_},code=${opt#--gpu-architecture=}" ;;
        -D* | --ptxas-options=*) continue ;; # the header's definitions; the ptxas report
        *) want=$opt ;;
        esac
        [[ " $recipe " == *" $want "* ]] || fail "study $study: the recipe '$recipe' lacks $want (NVRTC: $options)"
    done
    grep -qF "#define FATTN_TUNED_NVRTC_OPTIONS \"$options\"" tuned$study.h || fail "study $study: the NVRTC options macro"

    # Built as the recipe says: the compile cache's resources.
    # shellcheck disable=SC2086
    "$cuda/bin/nvcc" $recipe -cubin -Xptxas -v -include tuned$study.h "$src/kernels/fattn_fwd.cu" -o k$study.cubin \
        2>nvcc$study.log || { cat nvcc$study.log >&2; fail "study $study: nvcc from the recipe"; }
    got=$(awk '/Used [0-9]+ registers/ { for (i = 1; i <= NF; ++i) { if ($(i + 1) == "registers,") r = $i;
               if ($(i + 1) == "bytes" && $(i + 2) == "smem") m = $i } }
               /bytes stack frame/ { f = $1; s = $5; l = $9 }
               END { print "registers=" r, "spill_stores=" s, "spill_loads=" l, "stack_frame=" f, "smem_static=" (m == "" ? 0 : m) }' \
        nvcc$study.log)
    want=$(sql "SELECT 'registers=' || c.registers || ' spill_stores=' || c.spill_stores || ' spill_loads=' ||
        c.spill_loads || ' stack_frame=' || c.stack_frame || ' smem_static=' || c.smem_static
        AS v FROM trials t JOIN compile_cache c ON c.key = t.cache_key WHERE t.study_id = $study AND t.status = 'ok'")
    for field in $want; do
        name=${field%%=*} measured=${field#*=}
        built=$(tr ' ' '\n' <<<"$got" | sed -n "s/^$name=//p")
        [ "$built" = "$measured" ] && continue
        if [ "$name" = registers ] && [ -n "$built" ] && [ $((built - measured)) -le 8 ] && [ $((measured - built)) -le 8 ]; then
            echo "note: study $study ($key): registers differ: the recipe's build $built, the measured build $measured (nvcc's front end is not NVRTC's)"
            continue
        fi
        fail "study $study ($key): $name: the recipe's build has ${built:-nothing}, the measured build $measured"
    done
    dyn=$(sql "SELECT c.smem_dynamic FROM trials t JOIN compile_cache c ON c.key = t.cache_key WHERE t.study_id = $study AND t.status = 'ok'")
    grep -q "^#define FATTN_SMEM_BYTES $dyn$" tuned$study.h || fail "study $study: FATTN_SMEM_BYTES is not the cubin's $dyn"
    echo "ok: study $study ($key, $shape${causal:+ causal}): $got, $dyn B dynamic"
done

# The dispatch header's entries carry the same flags, with the -D options of each build.
"$tool" export --db fattn.db --study 1 --study 2 -o dispatch.h
flags=$(sed -n '/^static const fattn_tuned_entry/,/^};/p' dispatch.h | grep -o '"-gencode=[^"]*"' | head -1 | tr -d '"')
options=$(sql "SELECT c.options FROM trials t JOIN compile_cache c ON c.key = t.cache_key WHERE t.study_id = 1 AND t.status = 'ok'")
for opt in $options; do
    case $opt in --gpu-architecture=* | --ptxas-options=*) continue ;; esac
    [[ " $flags " == *" $opt "* ]] || fail "dispatch entry 0: '$flags' lacks $opt"
done
# (export.sh builds a dispatch entry with nvcc from its flags.)
echo "ok: the dispatch entries' flags carry the measured build's options"
