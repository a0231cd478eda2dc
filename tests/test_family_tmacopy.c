/*
 * test_family_tmacopy.c - the second kernel family (issue 36), tmacopy: O = V
 * through TMA, with its tensor maps passed as __grid_constant__ parameters.
 *  - gates: sm_89 has no TMA (tiling), a box over the shared-memory limit
 *    (smem_overflow), the rest survive;
 *  - NVRTC builds it for sm_90a, and the compiled shared memory and block
 *    equal the family's launch model (no smem_mismatch);
 *  - the simulator runs it from its parameter list (maps by value, found by
 *    their bytes): every box height passes at a tail shape against the
 *    family's own reference, whole or by sampled row blocks; bugs planted in
 *    a copy of the kernel are each caught with their own verdict while the
 *    unplanted kernel passes the same case (the control).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/batch.h"
#include "compile/kernel_src.h"
#include "gates/gates.h"
#include "sim/check.h"
#include "sim/kernel.h"
#include "t.h"
#include "t_family.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/paths.h"

static const fattn_family *tc;
static char *cache;
static char tmp_root[] = "/tmp/fattn-tmacopy-XXXXXX";

static void config(const char *key, fattn_config *c)
{
    t_family_config(tc, key, c);
}

static void gates(void)
{
    fattn_gate_limits lim;
    fattn_gate_limits_default(&lim);
    fattn_shape s = {1, 2, 200, 128, 0};
    fattn_config c;
    fattn_verdict v;
    config("tmacopy-br64", &c);
    fattn_gate_input in = {&c, &s, fattn_arch_find("sm_90"), &lim};
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    in.arch = fattn_arch_find("sm_89");
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_TILING);
    CHECK_CONTAINS(v.detail, "sm_90a");
    /* 256 rows of 256 bytes: 64 KiB, over the default 48 KiB. */
    config("tmacopy-br256", &c);
    in.arch = fattn_arch_find("sm_90");
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_SMEM_OVERFLOW);
    lim.smem_limit = (unsigned)in.arch->smem_per_block_optin;
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    /* every verdict of the family's gates, in order */
    fattn_verdict all[FATTN_R_COUNT];
    memset(all, 0, sizeof all);
    CHECK_INT(fattn_gates_static(&in, NULL, all), FATTN_R_NONE);
    CHECK_INT(all[FATTN_R_DEVICE_MEMORY].pass, 1);
    CHECK_INT(all[FATTN_R_TILING].pass, 1);
    CHECK_INT(all[FATTN_R_SMEM_OVERFLOW].pass, 1);
}

static void compiled(void)
{
    char *include = NULL;
    fattn_kernel_src src;
    if (fattn_cuda_include(&include) || fattn_kernel_src_load(fattn_default_kernel_dir(), tc->kernel_file, &src))
        exit(T_HARNESS);
    fattn_gate_limits lim;
    fattn_gate_limits_default(&lim);
    lim.smem_limit = 232448;
    const fattn_shape s = {1, 2, 200, 64, 0};
    const fattn_arch *arch = fattn_arch_find("sm_90");
    fattn_compile_ctx cc = {.src = &src, .cuda_include = include, .arch = arch, .shape = &s, .lim = &lim, .jobs = 1};
    const char *keys[] = {"tmacopy-br8", "tmacopy-br200", "tmacopy-br256"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; ++i) {
        fattn_compile_item it;
        memset(&it, 0, sizeof it);
        config(keys[i], &it.cfg);
        fattn_compile_one(&cc, &it);
        CHECK(!it.env_error && it.entry.ok);
        if (it.entry.ok) {
            fattn_launch l;
            tc->launch(&it.cfg, &s, 132, &l);
            CHECK_INT(it.reason, FATTN_R_NONE);
            CHECK_INT(it.entry.res.smem_dynamic, l.smem);
            CHECK_INT(it.entry.res.threads, l.threads);
            CHECK_CONTAINS(it.entry.options, "--gpu-architecture=sm_90a");
        }
        fattn_compile_item_release(&it);
    }
    fattn_kernel_src_release(&src);
    free(include);
}

static int run(const char *dir, const char *key, const fattn_shape *s, const fattn_sim_inputs *in, fattn_sim_check *r)
{
    return t_family_sim(tc, dir, key, s, in, cache, r);
}

static void simulated(void)
{
    const fattn_shape s = {2, 3, 200, 64, 0};
    const fattn_sim_inputs in = {.seed = 5};
    const char *keys[] = {"tmacopy-br8", "tmacopy-br64", "tmacopy-br80", "tmacopy-br256"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; ++i) {
        fattn_sim_check r;
        CHECK_INT(run(fattn_default_kernel_dir(), keys[i], &s, &in, &r), 0);
        CHECK_STR(r.verdict, "ok");
        CHECK_INT(r.rep.nfindings, 0);
        CHECK(r.ran && r.rel_l2[0] == 0 && r.rel_l2[1] == 0); /* a copy is exact */
    }
    /* Sampled row blocks: the last (a tail of 200 - 192 rows) alone. */
    const unsigned last[] = {3};
    const fattn_sim_inputs some = {.seed = 5, .row_blocks = last, .nrow_blocks = 1};
    fattn_sim_check r;
    CHECK_INT(run(fattn_default_kernel_dir(), "tmacopy-br64", &s, &some, &r), 0);
    CHECK_STR(r.verdict, "ok");
    CHECK_INT(r.num.n, 2 * 3 * 8 * 64);
}

typedef struct plant {
    const char *name, *from, *to;
    char verdict[24]; /* an array: GCC's sanitizer build otherwise takes it for a possible NULL in CHECK_STR */
} plant;

static const plant plants[] = {
    /* the phase completes before the whole box has landed */
    {"expect-half", "mbar_arrive_expect_tx(bar, FATTN_BOX_BYTES);", "mbar_arrive_expect_tx(bar, FATTN_BOX_BYTES / 2);",
     "tma_unwaited"},
    /* the store reads the box before the load's phase is observed */
    {"no-wait", "    while (!mbar_try_wait(bar, 0)) {\n    }\n", "", "tma_unwaited"},
    /* the store goes to V through V's own map */
    {"store-to-v", "tma_store_3d(&tm_o, box,", "tma_store_3d(&tm_v, box,", "input_written"},
    /* each block copies the next block's rows: the last one's box lies wholly outside */
    {"rows-off", "const int row = (int)blockIdx.x * BOX_ROWS,", "const int row = ((int)blockIdx.x + 1) * BOX_ROWS,",
     "global_out_of_bounds"},
    /* stored a row down: each head's row 0 keeps the poison */
    {"store-shifted", "tma_store_3d(&tm_o, box, 0, row, bh);", "tma_store_3d(&tm_o, box, 0, row + 1, bh);", "numerics"},
    /* a map the host never built: a copy changed on the device */
    {"forged-map", "    tma_load_3d(box, &tm_v, bar, 0, row, bh);",
     "    fattn_tensormap m = tm_v;\n    m.opaque[15] ^= 1;\n    tma_load_3d(box, &m, bar, 0, row, bh);",
     "invalid_operand"},
    /* no mbarrier initialized */
    {"no-init", "    mbar_init(bar, 1);\n", "", "invalid_operand"},
};

static void planted_bugs(void)
{
    const fattn_shape s = {1, 2, 200, 64, 0};
    const fattn_sim_inputs in = {.seed = 9};
    for (size_t i = 0; i < sizeof plants / sizeof *plants; ++i) {
        const plant *p = &plants[i];
        t_case = p->name;
        CHECK_STR(
            t_family_plant_caught(tc, tmp_root, cache, p->name, p->from, p->to, "tmacopy-br64", &s, &in, p->verdict),
            "caught");
    }
    t_case = "planted_bugs";
}

int main(void)
{
    tc = fattn_family_find("tmacopy");
    if (!tc || !mkdtemp(tmp_root))
        return T_HARNESS;
    cache = fattn_path_join(tmp_root, "cache");
    T_RUN(gates);
    T_RUN(compiled);
    T_RUN(simulated);
    T_RUN(planted_bugs);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp_root);
    free(cache);
    return t_exit();
}
