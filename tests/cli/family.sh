#!/usr/bin/env bash
# family.sh - the second kernel family (tmacopy, issue 36) through the whole
# CLI as a user runs it, without a GPU: gates and compile for sm_90a, the
# simulator's check, search on the fake engine and by replay of the landscape
# it leaves (the family carried in the study, the trials' params_json and
# the landscape, another family's landscape refused), confirm, and export:
# the header with its host launcher (compiled as C, and run against the mock
# driver: alignment refused, maps encoded once per buffer set), the JSON with
# the parameter list, the T4
# results, the kernel file (built by nvcc for sm_90a where nvcc is), and a
# dispatch table mixing it with an mma study.
#
#   family.sh TOOL SOURCE_ROOT [CUDA_ROOT]
set -euo pipefail
tool=$(realpath "$1")
src=$(realpath "$2")
cuda=${3:-/usr/local/cuda}
work=$(mktemp -d /tmp/fattn-family.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
space="$src/tests/data/space-tmacopy.json"
sql() { "$tool" -q query --db "${db:-fattn.db}" --format csv --sql "$1" | tail -n +2; }
fail() { echo "FAIL: $*" >&2; cat out.txt err.txt >&2 2>/dev/null || true; exit 1; }
export FATTN_SIM_CACHE="$work/sim"

# Gates: sm_89 has no TMA (the family is refused there); at 48 KiB the 256-row box of D=128 does not fit.
if "$tool" gates --space "$space" --arch sm_89 --shape 2,8,500,128 >out.txt 2>err.txt; then fail "gates sm_89"; fi
grep -q "the tmacopy family runs on sm_90 only (built for sm_90a); sm_89 cannot run it" err.txt ||
    fail "sm_89 refused"
"$tool" gates --space "$space" --arch sm_90 --shape 2,8,500,128 >out.txt 2>err.txt || fail "gates sm_90"
grep -q "6 configurations: 1 rejected, 5 survive" out.txt || fail "sm_90 at 48 KiB"

# Compile: sm_90a, the model's shared memory.
"$tool" -q compile --space "$space" --arch sm_90 --shape 2,8,500,128 --smem-limit max --db c.db >out.txt 2>err.txt ||
    fail "compile"
db=c.db
[ "$(sql "SELECT count(*) FROM trials WHERE status = 'compiled' AND smem_dynamic = smem_model")" = 6 ] ||
    fail "six compiled, shared memory as modelled"
[ "$(sql "SELECT count(*) FROM compile_cache WHERE family = 'tmacopy' AND options LIKE '--gpu-architecture=sm_90a %'")" = 6 ] ||
    fail "compiled for sm_90a"
[ "$(sql "SELECT family FROM studies")" = tmacopy ] || fail "the study's family"

# The simulator: every survivor at a tail shape.
"$tool" -q check --space "$space" --arch sm_90 --shape 1,2,200,64 --smem-limit max --db c.db >out.txt 2>err.txt ||
    fail "check"
[ "$(sql "SELECT count(*) FROM sim_checks WHERE verdict = 'ok' AND config_key LIKE 'tmacopy-br%'")" = 6 ] ||
    fail "six ok in the simulator"
unset db

# Search on the fake engine.
export FATTN_WORKER_HOOK=fake
"$tool" -q search --strategy exhaustive --arch sm_90 --shape 2,8,512,64 --space "$space" --smem-limit max \
    --db fattn.db --samples 12 >out.txt 2>err.txt || fail "search"
[ "$(sql "SELECT count(*) FROM trials WHERE status = 'ok' AND block_m IS NULL AND params_json LIKE '{\"BOX_ROWS\":%}'")" = 6 ] ||
    fail "six measured, parameters in params_json"
"$tool" query landscape --db fattn.db >land.csv 2>err.txt || fail "landscape"
grep -q "^# family: tmacopy$" land.csv || fail "the landscape's family"
best=$(sql "SELECT config_key FROM trials WHERE status = 'ok' ORDER BY median_us LIMIT 1")

# Replay: the same times, without the fake engine; an mma space refused.
unset FATTN_WORKER_HOOK
"$tool" -q search --strategy random --trials 6 --arch sm_90 --shape 2,8,512,64 --space "$space" --smem-limit max \
    --db replay.db --evaluator replay:land.csv >out.txt 2>err.txt || fail "replay search"
db=replay.db
[ "$(sql "SELECT config_key FROM trials WHERE status = 'ok' ORDER BY median_us LIMIT 1")" = "$best" ] ||
    fail "replay finds the same best"
unset db
if "$tool" -q search --arch sm_90 --shape 2,8,512,64 --db replay2.db --evaluator replay:land.csv \
    >out.txt 2>err.txt; then fail "an mma search replayed a tmacopy landscape"; fi
grep -q "^fattn-tune: --evaluator replay:land.csv: the tmacopy family has no default space (it is not attention); pass --space FILE of it$" err.txt ||
    fail "the refusal names the landscape's family"
if "$tool" -q search --arch sm_90 --shape 2,8,512,64 --db replay2.db --evaluator replay:land.csv \
    --space "$src/search/space.json" >out.txt 2>err.txt; then fail "an mma search replayed a tmacopy landscape"; fi
grep -q "^fattn-tune: --evaluator replay:land.csv: a landscape of the tmacopy family, which the study does not search (mma); expected a landscape of each family searched$" err.txt ||
    fail "the refusal names both families"
[ ! -e replay2.db ] || fail "a refused search wrote its database"

# Confirm against the (fake) cuDNN baseline.
export FATTN_WORKER_HOOK=fake
"$tool" confirm --db fattn.db --n 20 >out.txt 2>err.txt || fail "confirm"
grep -q "^$best: " out.txt || fail "confirmed the best"
[ "$(sql "SELECT count(*) FROM confirmation_samples WHERE side = 'candidate'")" = 20 ] || fail "samples stored"

# Export: the header (its launcher compiles as C), JSON, T4, the kernel.
"$tool" export --db fattn.db -o tuned.h 2>err.txt || fail "export"
grep -q "^#define FATTN_BOX_ROWS ${best#tmacopy-br}$" tuned.h || fail "the header's parameter"
grep -q "^#define FATTN_TUNED_CONFIG \"$best\"$" tuned.h || fail "the header's config"
grep -q "static inline CUresult fattn_tuned_launch" tuned.h || fail "the host launcher"
grep -q '^ \* arch:    sm_90a (an sm_90 GPU only: the kernel is built for the architecture-specific target)$' tuned.h ||
    fail "the header names sm_90a"
grep -q '^ \* hardware: unproven on hardware: the family has never passed a device check on a GPU$' tuned.h ||
    fail "the header's hardware record"
if command -v cc >/dev/null && [ -f "$cuda/include/cuda.h" ]; then
    cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -DFATTN_TUNED_HOST -I"$cuda/include" -x c tuned.h 2>err.txt ||
        fail "the host launcher does not compile"
fi
# The launcher run against the mock driver (linked in place of libcuda): a
# misaligned tensor refused before any driver call, then two launches on one
# buffer set: the maps encoded once, the limit raised once, O = V.
if command -v cc >/dev/null && [ -f "$cuda/include/cuda.h" ] && [ -n "${FATTN_MOCK_CUDA:-}" ]; then
    cat >launch.c <<'C'
#define FATTN_TUNED_HOST
#include "tuned.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuModuleLoadData(&mod, "MOCK:") || cuModuleGetFunction(&fn, mod, "fattn_tmacopy"))
        return 2;
    const size_t n = (size_t)FATTN_TUNED_SHAPE_B * FATTN_TUNED_SHAPE_H * FATTN_TUNED_SHAPE_S * FATTN_HEAD_DIM;
    unsigned short *host = malloc(n * 2), *back = malloc(n * 2);
    CUdeviceptr t[4];
    for (int i = 0; i < 4; ++i)
        if (cuMemAlloc(&t[i], n * 2 + 16))
            return 2;
    for (size_t i = 0; i < n; ++i)
        host[i] = (unsigned short)(i * 2654435761u >> 16);
    if (cuMemcpyHtoD(t[2], host, n * 2))
        return 2;
    if (fattn_tuned_launch(fn, t[0] + 8, t[1], t[2], t[3], 0) != CUDA_ERROR_INVALID_VALUE)
        return 3;
    for (int i = 0; i < 2; ++i)
        if (fattn_tuned_launch(fn, t[0], t[1], t[2], t[3], 0))
            return 4;
    if (cuCtxSynchronize() || cuMemcpyDtoH(back, t[3], n * 2) || memcmp(back, host, n * 2))
        return 5;
    for (int i = 0; i < 4; ++i)
        cuMemFree(t[i]);
    free(host), free(back);
    if (cuModuleUnload(mod) || cuDevicePrimaryCtxRelease(dev))
        return 6;
    puts("launched");
    return 0;
}
C
    # A sanitizer build's mock needs its runtime in the program too.
    san=()
    nm -D "$FATTN_MOCK_CUDA" 2>/dev/null | grep -q " __asan_" && san=(-fsanitize=address,undefined)
    cc -std=c11 -Wall -Wextra -Werror "${san[@]}" -I. -I"$cuda/include" launch.c -o launch "$FATTN_MOCK_CUDA" \
        -Wl,-rpath,"$(dirname "$FATTN_MOCK_CUDA")" 2>err.txt || fail "the launcher program does not build"
    FATTN_MOCK_LOG=$work/mock.log ./launch >out.txt 2>err.txt || fail "the launcher against the mock exited $?"
    [ "$(grep -c 'cuTensorMapEncodeTiled$' mock.log)" = 2 ] || fail "the two maps encoded once for two launches"
    [ "$(grep -c 'cuFuncSetAttribute$' mock.log)" = 1 ] || fail "the shared-memory limit raised once"
    [ "$(grep -c 'tmacopy V' mock.log)" = 2 ] || fail "two launches ran"
fi
"$tool" export --db fattn.db --format json >out.json 2>err.txt || fail "export json"
grep -q '"entry": "fattn_tmacopy"' out.json || fail "json entry"
grep -q '"signature": "(const __grid_constant__ CUtensorMap tmap_v, const __grid_constant__ CUtensorMap tmap_o, int batch, int heads, int seqlen)"' out.json ||
    fail "json signature"
grep -q '"args": \[{"kind": "tmap", "tensor": "v", "box": \[64, '"${best#tmacopy-br}"'\], "swizzle": 0}, ' out.json ||
    fail "json parameter list"
"$tool" export --db fattn.db --format t4 >t4.json 2>err.txt || fail "export t4"
[ "$(grep -c '"configuration": {"BOX_ROWS": ' t4.json)" = 6 ] || fail "t4 configurations"
"$tool" export --db fattn.db --kernel k.cu -o h.h 2>err.txt || fail "export --kernel"
grep -q "fattn_tmacopy.cu, sha256" k.cu || fail "the family's kernel"
if [ -x "$cuda/bin/nvcc" ]; then
    "$cuda/bin/nvcc" -gencode=arch=compute_90a,code=sm_90a -std=c++17 -c k.cu -o k.o 2>err.txt ||
        fail "nvcc does not build the exported kernel"
fi
# A dispatch table mixing families: the tmacopy study at 2,8,512,64 and an
# mma study at 1,4,256,64; each entry names the kernel it builds.
"$tool" -q search --strategy random --trials 3 --arch sm_90 --shape 1,4,256,64 --space "$src/tests/data/space-search.json" \
    --db fattn.db --samples 12 >out.txt 2>err.txt || fail "mma search"
"$tool" export --db fattn.db --study 1 --study 2 -o dispatch.h 2>err.txt || fail "a dispatch table of two families"
cat >lookup.c <<'C'
#include <stdio.h>
#include <string.h>
#include "dispatch.h"
int main(void)
{
    const fattn_tuned_entry *t = fattn_tuned_lookup("sm_90", 2, 8, 512, 64, 0);
    const fattn_tuned_entry *m = fattn_tuned_lookup("sm_90", 1, 4, 256, 64, 0);
    if (FATTN_TUNED_COUNT != 2 || !t || !m || t == m)
        return 1;
    if (strcmp(t->family, "tmacopy") || strcmp(t->kernel, "fattn_tmacopy.cu") || strcmp(t->entry, "fattn_tmacopy")
        || !t->host_setup || t->block_m || t->num_warps || strcmp(t->grid[0], "ceil(seqlen / BOX_ROWS)"))
        return 2;
    if (strcmp(m->family, "mma") || strcmp(m->kernel, "fattn_fwd.cu") || m->host_setup || !m->block_m
        || m->threads != 32 * m->num_warps || m->cluster < 1)
        return 3;
    printf("%d %s\n%s\n", t->threads, t->config, t->nvcc_flags);
    return 0;
}
C
cc -std=c11 -Wall -Wextra -Werror -o lookup lookup.c 2>err.txt || fail "the dispatch header does not compile"
./lookup >flags.txt || fail "the dispatch lookup: $?"
[ "$(head -1 flags.txt)" = "$("$tool" export --db fattn.db --study 1 --format json | sed -n 's/.*"threads": \([0-9]*\),/\1/p') $best" ] ||
    fail "the tmacopy entry is the study's best"
if [ -x "$cuda/bin/nvcc" ]; then
    read -ra flags < <(tail -1 flags.txt)
    "$cuda/bin/nvcc" "${flags[@]}" -c -I"$src/kernels" "$src/kernels/fattn_tmacopy.cu" -o entry.o 2>err.txt ||
        fail "nvcc does not build the tmacopy entry from its flags"
fi
if "$tool" export --db fattn.db --study 1 --study 1 >out.txt 2>err.txt; then fail "a study given twice"; fi
grep -q "^fattn-tune: --study 1 is given twice; expected each study once$" err.txt || fail "the duplicate refusal"
echo "ok"
