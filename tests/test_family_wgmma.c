/*
 * test_family_wgmma.c - the Hopper family (issue 37), wgmma: the
 * warp-specialised FlashAttention forward (kernels/fattn_wgmma.cu).
 *  - gates: sm_89 and sm_80 lack wgmma (tiling), head_dim and BLOCK_N rules,
 *    shared memory against the limit as the kernel lays it out;
 *  - NVRTC builds one configuration per tunable value for sm_90a with no
 *    post-compile rejection (no spills, setmaxnreg honoured, wgmma not
 *    serialized) and the compiled shared memory and block equal to the
 *    family's launch model; offline, nvdisasm finds HGMMA and USETMAXREG
 *    in each cubin and no local loads or stores;
 *  - the simulator runs the pairwise covering sample of
 *    search/space-wgmma.json (faults, races, TMA and wgmma hazards,
 *    deadlocks, numerics against fp64) and every BLOCK_M at S = BLOCK_M - 1
 *    and BLOCK_M + 1, causal and not;
 *  - bugs planted in a copy of the kernel are each caught with their own
 *    verdict while the unplanted kernel passes the same case.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/batch.h"
#include "compile/kernel_src.h"
#include "gates/gates.h"
#include "sim/check.h"
#include "sim/sample.h"
#include "space/space.h"
#include "t.h"
#include "t_family.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/paths.h"

static const fattn_family *wg;
static char *cache;
static char tmp_root[] = "/tmp/fattn-wgmma-XXXXXX";

static void config(const char *key, fattn_config *c)
{
    t_family_config(wg, key, c);
}

static int run(const char *dir, const char *key, const fattn_shape *s, const fattn_sim_inputs *in, fattn_sim_check *r)
{
    return t_family_sim(wg, dir, key, s, in, cache, r);
}

static void gates(void)
{
    fattn_gate_limits lim;
    fattn_gate_limits_default(&lim);
    lim.smem_limit = 232448; /* sm_90's opt-in maximum */
    fattn_shape s = {4, 16, 2048, 128, 0};
    fattn_config c;
    fattn_verdict v;
    config("wgmma-bm128-bn128-s2-rs1", &c);
    fattn_gate_input in = {&c, &s, fattn_arch_find("sm_90"), &lim};
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    const char *no_wgmma[] = {"sm_89", "sm_80"};
    for (int i = 0; i < 2; ++i) {
        in.arch = fattn_arch_find(no_wgmma[i]);
        CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_TILING);
        CHECK_CONTAINS(v.detail, "sm_90a");
    }
    in.arch = fattn_arch_find("sm_90");
    /* At D = 128, Q 32 KiB and three slots of K and V of 144 rows (216 KiB)
     * exceed sm_90's 227 KiB, as does P through shared memory at BLOCK_N 192
     * with two slots: no launch holds them (tiling, as 18-bit descriptor
     * addresses could not reach them either). */
    config("wgmma-bm128-bn144-s3-rs1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_TILING);
    CHECK_CONTAINS(v.detail, "opt-in maximum of 232448 B");
    config("wgmma-bm128-bn192-s2-rs0", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_TILING);
    /* 164 KiB is a kernel, over a 48 KiB limit */
    config("wgmma-bm128-bn128-s2-rs1", &c);
    lim.smem_limit = 49152;
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_SMEM_OVERFLOW);
    CHECK_CONTAINS(v.detail, "over limit 49152 B");
    lim.smem_limit = 232448;
    config("wgmma-bm128-bn192-s2-rs0", &c);
    /* The same at D = 64 fits, and the model is the launch's. */
    s.head_dim = 64;
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    fattn_launch l;
    wg->launch(&c, &s, 132, &l);
    /* Q 128x64 + 2 x (K, V) 192x64 + P 2 x 3 boxes + 9 mbarriers + slack */
    CHECK_INT(l.smem, 128 * 64 * 2 + 2 * 2 * 192 * 64 * 2 + 2 * 3 * 8192 + 8 * 9 + 1024);
    CHECK_INT(l.threads, 384);
    CHECK_INT(l.grid[0], 16);
    CHECK_INT(l.nargs, 8);
    /* The register model: three consumers have 160 registers a thread; at
     * D = 128, O's 64 and S's 72 accumulators (BLOCK_N 144) and 32 more are
     * over (ptxas spills there), BLOCK_N 128 within; at D = 64 within. */
    s.head_dim = 128;
    config("wgmma-bm192-bn144-s2-rs1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_REGISTER_BUDGET);
    CHECK_CONTAINS(v.detail, "168 registers, over the 160 of 3 consumer warpgroups");
    config("wgmma-bm192-bn128-s2-rs1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    config("wgmma-bm128-bn192-s2-rs1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    s.head_dim = 64;
    config("wgmma-bm192-bn192-s2-rs1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    /* BLOCK_N not a multiple of 16, BLOCK_M not of 64 */
    config("wgmma-bm128-bn72-s2-rs1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_TILING);
    CHECK_CONTAINS(v.detail, "BLOCK_N 72");
    config("wgmma-bm96-bn64-s2-rs1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_TILING);
    CHECK_CONTAINS(v.detail, "BLOCK_M 96");
}

/* The SASS of a cubin through nvdisasm ($FATTN_NVDISASM): HGMMA and
 * USETMAXREG present (ptxas kept wgmma and setmaxnreg), no local loads or
 * stores (LDL, STL: nothing spilled or put on a stack). */
static void sass(const void *cubin, size_t size)
{
    const char *nvd = getenv("FATTN_NVDISASM");
    char path[600], cmd[1400], line[512];
    if (!nvd || !*nvd) {
        CHECK(!"$FATTN_NVDISASM names the test-only nvdisasm (scripts/fetch-nvdisasm.sh)");
        return;
    }
    snprintf(path, sizeof path, "%s/sass.cubin", tmp_root);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(cubin, 1, size, f) == size);
    if (!f || fclose(f))
        return;
    snprintf(cmd, sizeof cmd, "'%s' -c '%s' 2>&1", nvd, path);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    if (!p)
        return;
    int hgmma = 0, setmaxnreg = 0, local = 0, lines = 0;
    while (fgets(line, sizeof line, p)) {
        ++lines;
        hgmma += strstr(line, "HGMMA.") != NULL;
        setmaxnreg += strstr(line, "USETMAXREG") != NULL;
        local += strstr(line, " LDL") != NULL || strstr(line, " STL") != NULL;
    }
    const int rc = pclose(p);
    if (rc != 0)
        fprintf(stderr, "%s exited %d on %s (scripts/fetch-nvdisasm.sh fetches it)\n", nvd, rc, path);
    CHECK_INT(rc, 0);
    CHECK(lines > 100);
    CHECK(hgmma > 0);
    CHECK_INT(setmaxnreg, 2); /* the producer's dec, the consumers' inc */
    CHECK_INT(local, 0);
}

/* One configuration per tunable value, at D 64 and 128: each compiles
 * without a post-compile rejection, to the launch's shared memory and
 * block, its SASS holding wgmma and setmaxnreg and no local memory. */
static void compiled(void)
{
    char *include = NULL;
    fattn_kernel_src src;
    if (fattn_cuda_include(&include) || fattn_kernel_src_load(fattn_default_kernel_dir(), wg->kernel_file, &src))
        exit(T_HARNESS);
    fattn_gate_limits lim;
    fattn_gate_limits_default(&lim);
    lim.smem_limit = 232448;
    const fattn_arch *arch = fattn_arch_find("sm_90");
    const char *keys[] = {"wgmma-bm64-bn192-s2-rs1", "wgmma-bm128-bn128-s2-rs1", "wgmma-bm192-bn80-s2-rs1",
                          "wgmma-bm128-bn96-s3-rs0", "wgmma-bm64-bn64-s4-rs0",   "wgmma-bm192-bn112-s2-rs0",
                          "wgmma-bm128-bn176-s2-rs1"};
    for (int d = 64; d <= 128; d += 64) {
        const fattn_shape s = {2, 4, 1000, d, d == 128};
        fattn_compile_ctx cc = {
            .src = &src, .cuda_include = include, .arch = arch, .shape = &s, .lim = &lim, .jobs = 1};
        for (size_t i = 0; i < sizeof keys / sizeof *keys; ++i) {
            fattn_compile_item it;
            memset(&it, 0, sizeof it);
            config(keys[i], &it.cfg);
            t_case = keys[i];
            fattn_compile_one(&cc, &it);
            CHECK(!it.env_error && it.entry.ok);
            if (it.entry.ok) {
                fattn_launch l;
                wg->launch(&it.cfg, &s, 132, &l);
                CHECK_INT(it.reason, FATTN_R_NONE);
                CHECK_INT(it.entry.res.smem_dynamic, l.smem);
                CHECK_INT(it.entry.res.smem_static, 0);
                CHECK_INT(it.entry.res.threads, l.threads);
                CHECK_INT(it.entry.res.spill_stores + it.entry.res.spill_loads + it.entry.res.stack_frame, 0);
                CHECK_CONTAINS(it.entry.options, "--gpu-architecture=sm_90a");
                sass(it.entry.cubin, it.entry.cubin_size);
            }
            fattn_compile_item_release(&it);
        }
    }
    t_case = "compiled";
    fattn_kernel_src_release(&src);
    free(include);
}

/* Row counts around every block height, both masks, both head dims. */
static void tails(void)
{
    const fattn_sim_inputs in = {.seed = 3};
    const char *keys[] = {"wgmma-bm64-bn80-s2-rs1", "wgmma-bm128-bn64-s3-rs0", "wgmma-bm192-bn128-s2-rs1"};
    for (int i = 0; i < 3; ++i)
        for (int side = -1; side <= 1; side += 2) {
            const int d = side < 0 ? 64 : 128, bm = 64 * (i + 1);
            const fattn_shape s = {1, 2, bm + side, d, side > 0};
            fattn_sim_check r;
            t_case = keys[i];
            CHECK_INT(run(fattn_default_kernel_dir(), keys[i], &s, &in, &r), 0);
            CHECK_STR(r.verdict, "ok");
            CHECK_INT(r.rep.nfindings, 0);
        }
    t_case = "tails";
}

/* The covering sample of the family's space file, as `check --covering`
 * runs it. */
static void covering(void)
{
    fattn_space sp;
    char *path = fattn_search_file("space-wgmma.json");
    if (fattn_space_load(path, &sp))
        exit(T_HARNESS);
    free(path);
    CHECK(sp.fam == wg);
    fattn_sim_case *cases = NULL;
    size_t n = 0, pairs = 0;
    if (fattn_sim_covering(&sp, fattn_arch_find("sm_90"), &cases, &n, &pairs))
        exit(T_HARNESS);
    CHECK(n > 0 && pairs > 0);
    fattn_kernel_src ks;
    if (fattn_kernel_src_load(fattn_default_kernel_dir(), wg->kernel_file, &ks))
        exit(T_HARNESS);
    const fattn_sim_inputs in = {.seed = 1};
    int failed = 0;
    for (size_t i = 0; i < n; ++i) {
        fattn_sim_check r;
        char key[FATTN_KEY_MAX], name[FATTN_KEY_MAX + 64];
        const fattn_shape *s = &cases[i].shape;
        fattn_config_key(&cases[i].cfg, key);
        snprintf(name, sizeof name, "%s at %d,%d,%d,%d%s", key, s->batch, s->heads, s->seqlen, s->head_dim,
                 s->causal ? " causal" : "");
        t_case = name;
        CHECK_INT(fattn_sim_check_config(&ks, &cases[i].cfg, s, &in, cache, &r), 0);
        CHECK_STR(r.verdict, "ok");
        if (strcmp(r.verdict, "ok")) {
            ++failed;
            fprintf(stderr, "  %s\n", r.detail);
        }
    }
    t_case = "covering";
    if (getenv("FATTN_TEST_VERBOSE"))
        fprintf(stderr, "covering: %zu cases, %zu pairs, %d failed\n", n, pairs, failed);
    fattn_kernel_src_release(&ks);
    free(cases);
    fattn_space_release(&sp);
}

typedef struct plant {
    const char *name, *from, *to, *key;
    int causal;
    char verdict[24]; /* an array: GCC's sanitizer build otherwise takes it for a possible NULL in CHECK_STR */
} plant;

#define RS1 "wgmma-bm128-bn64-s2-rs1"
#define RS0 "wgmma-bm128-bn64-s2-rs0"

static const plant plants[] = {
    /* the K slot released before the wgmma reading it has retired: the
     * next load of the slot overwrites what the wgmma reads */
    {"release-early", "        wgmma_wait<0>(acc);\n        if (t == 0)\n            mbar_arrive(b.k_empty(s));\n",
     "        if (t == 0)\n            mbar_arrive(b.k_empty(s));\n        wgmma_wait<0>(acc);\n", RS1, 1, "race_war"},
    /* Q's phase completes on half its bytes: the epilogue writes over a
     * box still landing */
    {"q-half", "mbar_arrive_expect_tx(b.q_full(), active * D_BOXES * BOX_BYTES);",
     "mbar_arrive_expect_tx(b.q_full(), active * D_BOXES * BOX_BYTES / 2);", RS1, 1, "race_waw"},
    /* the producer waits on the wrong phase of a slot's release */
    {"empty-parity", "            wait_phase(b.k_empty(s), ph ^ 1u);", "            wait_phase(b.k_empty(s), ph);", RS1,
     1, "deadlock"},
    /* S never retired: the slot is released and reloaded under the wgmma */
    {"s-unwaited", "        wgmma_wait<0>(acc);\n", "", RS1, 1, "race_war"},
    /* P written through the generic proxy, read by wgmma without the fence */
    {"p-unfenced", "        fence_proxy_async();\n        bar_sync(1 + c, 128);\n        wgmma_fence();\n",
     "        bar_sync(1 + c, 128);\n        wgmma_fence();\n", RS0, 1, "async_proxy_unfenced"},
    /* the epilogue's store issued before the warpgroup has written O */
    {"store-early", "    fence_proxy_async();\n    bar_sync(1 + c, 128);\n    if (t == 0) {",
     "    fence_proxy_async();\n    if (t == 0) {", RS1, 1, "race_raw"},
    /* the causal mask one key late */
    {"causal-late", "if (col >= seqlen || (CAUSAL && col > row))", "if (col >= seqlen || (CAUSAL && col > row + 1))",
     RS1, 1, "numerics"},
    /* the keys past S (zero-filled) not masked */
    {"tail-unmasked", "if (col >= seqlen || (CAUSAL && col > row))", "if (CAUSAL && col > row)", RS1, 0, "numerics"},
    /* O written to shared memory unswizzled, stored as swizzled */
    {"unswizzled", "    return off ^ ((unsigned)(r % 8) << 4);", "    return off;", RS1, 1, "numerics"},
    /* V read as K-major: its rows run past the slot */
    {"v-untransposed", "wgmma_rs<HEAD_DIM, 1>(o, p[j],", "wgmma_rs<HEAD_DIM, 0>(o, p[j],", RS1, 1,
     "shared_out_of_bounds"},
};

static void planted_bugs(void)
{
    const fattn_sim_inputs in = {.seed = 9};
    for (size_t i = 0; i < sizeof plants / sizeof *plants; ++i) {
        const plant *p = &plants[i];
        const fattn_shape s = {1, 2, 130, 64, p->causal};
        t_case = p->name;
        CHECK_STR(t_family_plant_caught(wg, tmp_root, cache, p->name, p->from, p->to, p->key, &s, &in, p->verdict),
                  "caught");
    }
    t_case = "planted_bugs";
}

int main(void)
{
    wg = fattn_family_find("wgmma");
    if (!wg || !mkdtemp(tmp_root))
        return T_HARNESS;
    cache = fattn_path_join(tmp_root, "cache");
    T_RUN(gates);
    T_RUN(compiled);
    T_RUN(tails);
    T_RUN(covering);
    T_RUN(planted_bugs);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp_root);
    free(cache);
    return t_exit();
}
