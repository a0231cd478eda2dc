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
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/batch.h"
#include "compile/kernel_src.h"
#include "gates/gates.h"
#include "sim/check.h"
#include "sim/sample.h"
#include "space/params.h"
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
    /* OVERLAP holds BLOCK_N / 4 more (ptxas spills from BLOCK_N 96 at
     * BLOCK_M 192, D = 128); FA3's 128 x 176 fits two consumers' 240 */
    config("wgmma-bm192-bn96-s2-rs0-ov1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_REGISTER_BUDGET);
    CHECK_CONTAINS(v.detail,
                   "O 64 + S 48 accumulators + P held over the overlap 24 + P through shared memory 4 + 32 = 172 "
                   "registers, over");
    config("wgmma-bm192-bn80-s2-rs0-ov1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    config("wgmma-bm128-bn176-s2-rs1-ov1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    config("wgmma-bm128-bn192-s2-rs1-ov1", &c); /* 240 of 240: ptxas fits it (wgmma-all.md) */
    fattn_verdict all[FATTN_R_COUNT];
    CHECK_INT(fattn_gates_static(&in, &v, all), FATTN_R_NONE);
    CHECK_CONTAINS(all[FATTN_R_REGISTER_BUDGET].detail, "= 240 registers, within the 240 of 2");
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
    /* turns need two consumers */
    config("wgmma-bm64-bn64-s2-rs1-pp1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_TILING);
    CHECK_CONTAINS(v.detail, "PINGPONG with BLOCK_M 64");
    config("wgmma-bm128-bn64-s2-rs1-pp1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    /* turns without overlap, P in registers, hold BLOCK_N / 8 + 8 more:
     * three consumers at D = 64 spill from BLOCK_N 144 (wgmma-all.md) */
    config("wgmma-bm192-bn144-s2-rs1-pp1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_REGISTER_BUDGET);
    CHECK_CONTAINS(v.detail, "O 32 + S 72 accumulators + held over the turn 26 + 32 = 162 registers, over the 160");
    config("wgmma-bm192-bn128-s2-rs1-pp1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    /* P through shared memory with three consumers, 4 more (BLOCK_N 192
     * spills at D = 64); 176 within */
    config("wgmma-bm192-bn192-s2-rs0", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_REGISTER_BUDGET);
    CHECK_CONTAINS(v.detail, "O 32 + S 96 accumulators + P through shared memory 4 + 32 = 164 registers, over the 160");
    config("wgmma-bm192-bn176-s2-rs0-pp1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    /* ... but with OVERLAP at D = 64, no PINGPONG and SCHED 0 neither P
     * term: FA3's D = 64 tile, 192 x 192 through shared memory, fits (ptxas
     * compiles it clean: lab/compile-all/wgmma-refused.sh); with PINGPONG
     * (144 spilled) or SCHED, or at D = 128, the terms hold */
    config("wgmma-bm192-bn192-s2-rs0-ov1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, all), FATTN_R_NONE);
    CHECK_CONTAINS(all[FATTN_R_REGISTER_BUDGET].detail, "O 32 + S 96 accumulators + 32 = 160 registers, within");
    config("wgmma-bm192-bn144-s2-rs0-ov1-pp1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_REGISTER_BUDGET);
    config("wgmma-bm192-bn192-s2-rs0-ov1-sc1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_REGISTER_BUDGET);
    config("wgmma-bm192-bn128-s2-rs0-ov1-sc1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_REGISTER_BUDGET);
    s.head_dim = 128;
    config("wgmma-bm192-bn96-s2-rs0-ov1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_REGISTER_BUDGET);
    s.head_dim = 64;
    /* SCHED: lpt orders causal tiles, refused without the mask; persistent
     * launches min(SMs, tiles) blocks along x (all tiles when the SM count
     * is unknown), with Q's empty barrier 8 bytes more. */
    config("wgmma-bm128-bn128-s2-rs1-sc2", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_TILING);
    CHECK_CONTAINS(v.detail, "SCHED 2 (lpt) orders causal tiles");
    s.causal = 1;
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    s.causal = 0;
    fattn_launch tile, pers;
    config("wgmma-bm128-bn128-s2-rs1", &c);
    wg->launch(&c, &s, 132, &tile);
    config("wgmma-bm128-bn128-s2-rs1-sc1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    wg->launch(&c, &s, 132, &pers);
    CHECK_INT(pers.smem, tile.smem + 8);
    CHECK_INT(tile.sm_bound, 0);
    CHECK_INT(pers.sm_bound, 1);
    CHECK_INT(pers.rows_per_block, 0);
    CHECK_INT(tile.grid[0] * tile.grid[1] * tile.grid[2], 16 * 16 * 4); /* 4,16,2048: 1,024 tiles */
    CHECK_INT(pers.grid[0], 132);
    CHECK_INT(pers.grid[1] * pers.grid[2], 1);
    wg->launch(&c, &s, 0, &pers);
    CHECK_INT(pers.grid[0], 1024);
    const fattn_shape small = {1, 2, 130, 64, 0}; /* 2 row blocks of 2 heads: fewer tiles than SMs */
    wg->launch(&c, &small, 132, &pers);
    CHECK_INT(pers.grid[0], 4);
    wg->launch(&c, &small, 3, &pers);
    CHECK_INT(pers.grid[0], 3);
    /* The tile loop's registers with three consumers (ptxas spills
     * BLOCK_N 192 at D = 64 with it, not 176; through shared memory 128 at
     * D = 128, not 80: wgmma-all.md) */
    config("wgmma-bm192-bn192-s2-rs1-sc1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_REGISTER_BUDGET);
    CHECK_CONTAINS(v.detail, "O 32 + S 96 accumulators + the tile loop 8 + 32 = 168 registers, over the 160");
    config("wgmma-bm192-bn176-s2-rs1-sc1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    s.head_dim = 128;
    config("wgmma-bm192-bn128-s2-rs0-sc1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_REGISTER_BUDGET);
    config("wgmma-bm192-bn80-s2-rs0-sc2", &c);
    s.causal = 1;
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    s.causal = 0;
    config("wgmma-bm192-bn112-s2-rs0", &c); /* the same tile loop's 20 over: 176 */
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    config("wgmma-bm192-bn112-s2-rs0-sc1", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_REGISTER_BUDGET);
    /* CLUSTER 2: non-causal, D = 128, SCHED 0 only (each refusal says
     * why); the row blocks rounded up to whole clusters, the simulator's
     * sampling a cluster's rows at a time, the shared memory unchanged. */
    config("wgmma-bm64-bn64-s2-rs1-cl2", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_NONE);
    const fattn_shape odd = {1, 2, 130, 128, 0}; /* 3 row blocks of 64 */
    fattn_launch pair, single;
    wg->launch(&c, &odd, 132, &pair);
    CHECK_INT(pair.grid[0], 4);
    CHECK_INT(pair.cluster, 2);
    CHECK_INT(pair.rows_per_block, 128);
    config("wgmma-bm64-bn64-s2-rs1", &c);
    wg->launch(&c, &odd, 132, &single);
    CHECK_INT(single.grid[0], 3);
    CHECK_INT(single.cluster, 1);
    CHECK_INT(pair.smem, single.smem);
    config("wgmma-bm64-bn64-s2-rs1-cl2", &c);
    s.causal = 1;
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_TILING);
    CHECK_CONTAINS(v.detail, "causal row blocks read different numbers of key tiles");
    s.causal = 0;
    s.head_dim = 64;
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_TILING);
    CHECK_CONTAINS(v.detail, "D = 64 is one box");
    s.head_dim = 128;
    config("wgmma-bm64-bn64-s2-rs1-sc1-cl2", &c);
    CHECK_INT(fattn_gates_static(&in, &v, NULL), FATTN_R_TILING);
    CHECK_CONTAINS(v.detail, "a persistent schedule (SCHED > 0) does not pair its tiles");
}

/* Writes a cubin's SASS (nvdisasm -c through $FATTN_NVDISASM, fetched by
 * scripts/fetch-nvdisasm.sh) to tmp_root/NAME.sass. Returns the path
 * (static storage, until the next call) or NULL (a failed check). */
static const char *disasm(const void *cubin, size_t size, const char *name)
{
    const char *nvd = getenv("FATTN_NVDISASM");
    static char out[600];
    char path[600], cmd[1800];
    if (!nvd || !*nvd) {
        CHECK(!"$FATTN_NVDISASM names the test-only nvdisasm (scripts/fetch-nvdisasm.sh)");
        return NULL;
    }
    snprintf(path, sizeof path, "%s/%s.cubin", tmp_root, name);
    snprintf(out, sizeof out, "%s/%s.sass", tmp_root, name);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(cubin, 1, size, f) == size);
    if (!f || fclose(f))
        return NULL;
    snprintf(cmd, sizeof cmd, "'%s' -c '%s' > '%s'", nvd, path, out);
    const int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "%s exited %d on %s (scripts/fetch-nvdisasm.sh fetches it)\n", nvd, rc, path);
    CHECK_INT(rc, 0);
    return rc ? NULL : out;
}

/* The SASS of a cubin: HGMMA and USETMAXREG present (ptxas kept wgmma and
 * setmaxnreg), no local loads or stores (LDL, STL: nothing spilled or put
 * on a stack). */
static void sass(const void *cubin, size_t size)
{
    char line[512];
    const char *path = disasm(cubin, size, "sass");
    FILE *p = path ? fopen(path, "r") : NULL;
    if (!p)
        return;
    int hgmma = 0, setmaxnreg = 0, local = 0, lines = 0;
    while (fgets(line, sizeof line, p)) {
        ++lines;
        hgmma += strstr(line, "HGMMA.") != NULL;
        setmaxnreg += strstr(line, "USETMAXREG") != NULL;
        local += strstr(line, " LDL") != NULL || strstr(line, " STL") != NULL;
    }
    fclose(p);
    CHECK(lines > 100);
    CHECK(hgmma > 0);
    CHECK_INT(setmaxnreg, 2); /* the producer's dec, the consumers' inc */
    CHECK_INT(local, 0);
}

/* Every value of BLOCK_M, STAGES, PV_RS, OVERLAP and PINGPONG among four
 * configurations, at D 64 and 128 (both builds; family-wgmma-sass compiles
 * the covering sample through the same gates in the plain one): each
 * compiles without a post-compile rejection, to the launch's shared memory
 * and block, its SASS holding wgmma and setmaxnreg and no local memory. */
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
    const char *keys[] = {"wgmma-bm64-bn64-s4-rs1", "wgmma-bm128-bn96-s3-rs0-pp1", "wgmma-bm128-bn176-s2-rs1-ov1",
                          "wgmma-bm192-bn80-s2-rs0-ov1"};
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

/* The setmaxnreg_pool gate. The kernel's split with two consumers is exact:
 * 24 x 128 + 240 x 256 = 64,512 registers, the launch's 168 a thread x 384
 * threads. A producer planted at 32 asks 65,536: within the register file
 * (the kernel's static_assert passes) but past the launch's, so the
 * consumers' setmaxnreg.inc would spin forever; the gate rejects it after
 * compiling, before any launch. */
static void pool(void)
{
    char *include = NULL;
    const char *dir = t_family_plant(wg, tmp_root, "pool-short", "(CONSUMERS == 1 ? 56 : CONSUMERS == 2 ? 24 : 32)",
                                     "(CONSUMERS == 1 ? 56 : CONSUMERS == 2 ? 32 : 32)");
    fattn_kernel_src src;
    if (!dir || fattn_cuda_include(&include) || fattn_kernel_src_load(dir, wg->kernel_file, &src))
        exit(T_HARNESS);
    fattn_gate_limits lim;
    fattn_gate_limits_default(&lim);
    lim.smem_limit = 232448;
    const fattn_shape s = {2, 4, 1000, 128, 0};
    fattn_compile_ctx cc = {
        .src = &src, .cuda_include = include, .arch = fattn_arch_find("sm_90"), .shape = &s, .lim = &lim, .jobs = 1};
    fattn_compile_item it;
    memset(&it, 0, sizeof it);
    config("wgmma-bm128-bn128-s2-rs1", &it.cfg);
    fattn_compile_one(&cc, &it);
    CHECK(!it.env_error && it.entry.ok);
    CHECK_INT(it.reason, FATTN_R_SETMAXNREG_POOL);
    CHECK_CONTAINS(it.verdict.detail, "168 registers a thread x 384 threads = 64512, short of the 65536");
    fattn_compile_item_release(&it);
    fattn_kernel_src_release(&src);
    free(include);
}

/* Row counts around every block height, both masks, both head dims. */
static void tails(void)
{
    const fattn_sim_inputs in = {.seed = 3};
    const char *keys[] = {"wgmma-bm64-bn80-s2-rs1-ov1", "wgmma-bm128-bn64-s3-rs0-ov1", "wgmma-bm192-bn128-s2-rs1-pp1"};
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

/* FA3's tiles at D = 128, RS (P from registers): the instructions of its
 * consumer loop per key tile, counted by lab/sass/count_loop.py on FA3
 * built from source with this toolkit's ptxas (lab/sass/README.md), and
 * with OVERLAP the least share of the tile's EX2 that must issue between
 * wait_group 1 and wait_group 0. The bar is a half (every OVERLAP
 * kernel of the covering sample is held to it); at FA3's tiles the K
 * slot's release, guarded by the softmax's row sums (after_all), holds
 * wait_group 0 after every EX2, so they are held to all. */
static const struct {
    const char *key;
    int causal, fa3;
    double min_ex2;
} fa3_tiles[] = {
    {"wgmma-bm128-bn128-s2-rs1", 1, 469, 0},
    {"wgmma-bm128-bn128-s2-rs1-ov1", 1, 469, 1},
    {"wgmma-bm128-bn176-s2-rs1", 0, 594, 0},
    {"wgmma-bm128-bn176-s2-rs1-ov1", 0, 594, 1},
    /* and as FA3 runs them, the consumers taking turns */
    {"wgmma-bm128-bn128-s2-rs1-ov1-pp1", 1, 469, 1},
    {"wgmma-bm128-bn176-s2-rs1-ov1-pp1", 0, 594, 1},
    /* and persistent, as FA3 runs them (lpt causal) */
    {"wgmma-bm128-bn128-s2-rs1-ov1-pp1-sc2", 1, 469, 1},
    {"wgmma-bm128-bn176-s2-rs1-ov1-pp1-sc1", 0, 594, 1},
};

/* lab/sass/count_loop.py's JSON of the main loop of a SASS file, or NULL. */
static cJSON *count_loop(const char *sass_path)
{
    char cmd[1400], buf[4096];
    snprintf(cmd, sizeof cmd, "python3 '%s/../lab/sass/count_loop.py' --json '%s'", fattn_default_kernel_dir(),
             sass_path);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(buf, 1, sizeof buf - 1, p) : 0;
    const int rc = p ? pclose(p) : -1;
    buf[n] = 0;
    CHECK_INT(rc, 0);
    cJSON *j = rc == 0 ? cJSON_Parse(buf) : NULL;
    CHECK(j != NULL);
    return j;
}

static int count_of(const cJSON *main_loop, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(main_loop, name);
    CHECK(cJSON_IsNumber(v));
    return cJSON_IsNumber(v) ? v->valueint : -1;
}

/* Configuration cfg of the kernel in dir compiled for sm_90a at head dim d
 * (causal or not), disassembled and its loop counted: count_loop()'s JSON
 * (the caller deletes it), or NULL after a failed check. */
static cJSON *compiled_loop(const char *dir, const fattn_config *cfg, int d, int causal)
{
    char *include = NULL;
    fattn_kernel_src src;
    if (fattn_cuda_include(&include) || fattn_kernel_src_load(dir, wg->kernel_file, &src))
        exit(T_HARNESS);
    fattn_gate_limits lim;
    fattn_gate_limits_default(&lim);
    lim.smem_limit = 232448;
    const fattn_shape s = {2, 4, 1000, d, causal};
    fattn_compile_ctx cc = {
        .src = &src, .cuda_include = include, .arch = fattn_arch_find("sm_90"), .shape = &s, .lim = &lim, .jobs = 1};
    fattn_compile_item it;
    memset(&it, 0, sizeof it);
    it.cfg = *cfg;
    fattn_compile_one(&cc, &it);
    CHECK(!it.env_error && it.entry.ok && it.reason == FATTN_R_NONE);
    const char *sass_path = it.entry.ok ? disasm(it.entry.cubin, it.entry.cubin_size, "loop") : NULL;
    cJSON *j = sass_path ? count_loop(sass_path) : NULL;
    CHECK(cJSON_GetObjectItemCaseSensitive(j, "main") != NULL);
    fattn_compile_item_release(&it);
    fattn_kernel_src_release(&src);
    free(include);
    return j;
}

/* The consumer loop per key tile in SASS, over the covering sample of the
 * space (each configuration, head dim and mask once) and FA3's tiles: no
 * R2UR (the descriptors stay in uniform registers; at PV_RS=0 with OVERLAP,
 * whose descriptors and P addresses crowd the 63 uniform registers, ptxas
 * may move one through a vector register: one is tolerated there), with
 * OVERLAP one wait_group 1 and one wait_group 0 in the loop (without, two
 * wait_group 0) and at least half the tile's EX2 between them, no local
 * memory, and at FA3's tiles at most 1.03 times FA3's instructions and the
 * share of EX2 between the waits above. Run as
 * `test_family_wgmma sass` (meson test family-wgmma-sass, in the scripts
 * suite: not run under the sanitizers, whose run it would only lengthen). */
static void sass_loop(void)
{
    fattn_space sp;
    char *path = fattn_search_file("space-wgmma.json");
    if (fattn_space_load(path, &sp))
        exit(T_HARNESS);
    free(path);
    fattn_sim_case *cases = NULL;
    size_t n = 0, pairs = 0;
    if (fattn_sim_covering(&sp, fattn_arch_find("sm_90"), &cases, &n, &pairs))
        exit(T_HARNESS);
    const size_t nfa3 = sizeof fa3_tiles / sizeof *fa3_tiles;
    fattn_sim_case *all = calloc(n + nfa3, sizeof *all);
    if (!all)
        exit(T_HARNESS);
    memcpy(all, cases, n * sizeof *cases);
    for (size_t i = 0; i < nfa3; ++i) {
        config(fa3_tiles[i].key, &all[n + i].cfg);
        all[n + i].shape = (fattn_shape){4, 16, 2048, 128, fa3_tiles[i].causal};
    }
    fattn_gate_limits lim;
    fattn_gate_limits_default(&lim);
    lim.smem_limit = 232448;
    const int ov_at = fattn_param_find(wg, "OVERLAP"), rs_at = fattn_param_find(wg, "PV_RS");
    int counted = 0, fa3_counted[sizeof fa3_tiles / sizeof *fa3_tiles] = {0};
    for (size_t i = 0; i < n + nfa3; ++i) {
        char key[FATTN_KEY_MAX], name[FATTN_KEY_MAX + 32];
        const fattn_shape *s = &all[i].shape;
        fattn_config_key(&all[i].cfg, key);
        snprintf(name, sizeof name, "%s at D %d%s", key, s->head_dim, s->causal ? " causal" : "");
        int seen = 0; /* the same kernel (key, D, mask) once */
        for (size_t k = 0; k < i && !seen; ++k)
            seen = !memcmp(all[k].cfg.v, all[i].cfg.v, sizeof all[i].cfg.v) && all[k].shape.head_dim == s->head_dim
                   && all[k].shape.causal == s->causal;
        fattn_verdict v;
        fattn_gate_input gi = {&all[i].cfg, s, fattn_arch_find("sm_90"), &lim};
        if (seen || fattn_gates_static(&gi, &v, NULL) != FATTN_R_NONE)
            continue;
        t_case = name;
        cJSON *j = compiled_loop(fattn_default_kernel_dir(), &all[i].cfg, s->head_dim, s->causal);
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "main");
        if (m) {
            const int ov = all[i].cfg.v[ov_at], rs = all[i].cfg.v[rs_at];
            const int total = count_of(m, "total"), r2ur = count_of(m, "R2UR"), ex2 = count_of(m, "MUFU.EX2");
            const int between = count_of(m, "ex2_between_waits");
            CHECK(rs ? r2ur == 0 : r2ur <= 1);
            CHECK_INT(count_of(m, "wait_group_1"), ov ? 1 : 0);
            CHECK_INT(count_of(m, "wait_group_0"), ov ? 1 : 2);
            CHECK_INT(count_of(m, "LDL") + count_of(m, "STL"), 0);
            CHECK(!ov || (ex2 > 0 && 2 * between >= ex2));
            int fa3 = 0;
            double min_ex2 = 0;
            for (size_t k = 0; k < nfa3; ++k)
                if (!strcmp(key, fa3_tiles[k].key) && s->head_dim == 128 && s->causal == fa3_tiles[k].causal) {
                    fa3 = fa3_tiles[k].fa3, min_ex2 = fa3_tiles[k].min_ex2;
                    fa3_counted[k] = 1;
                }
            if (fa3) {
                CHECK(total <= 1.03 * fa3);
                CHECK(ex2 > 0 && (double)between / ex2 >= min_ex2);
            }
            if (fa3 || getenv("FATTN_TEST_VERBOSE")) {
                char ref[32] = "";
                if (fa3)
                    snprintf(ref, sizeof ref, " (FA3 %d)", fa3);
                fprintf(stderr, "  %s: %d instructions a key tile%s, R2UR %d, EX2 %d, %d between wait_group 1 and 0\n",
                        name, total, ref, r2ur, ex2, between);
            }
            ++counted;
        }
        cJSON_Delete(j);
    }
    t_case = "sass_loop";
    for (size_t k = 0; k < nfa3; ++k) /* each of FA3's tiles compiled and held to its counts */
        CHECK(fa3_counted[k]);
    fprintf(stderr, "sass_loop: %d kernels counted (%zu covering cases and FA3's %zu tiles)\n", counted, n, nfa3);
    free(all);
    free(cases);
    fattn_space_release(&sp);
}

/* What the SASS checks catch, planted at FA3's 128 x 128 causal tile with
 * OVERLAP: the warpgroup index not read from lane 0 (ptxas no longer knows
 * it uniform: the descriptors go through vector registers, R2UR in the
 * loop); S(i) waited for with wait_group 0 (no wait_group 1, no EX2
 * between the waits); and the K slot's release not guarded by the row
 * sums (after_all): ptxas then issues the release and wait_group 0 right
 * after wait_group 1, and P V runs alone (fewer than half the EX2 between
 * the waits). Where the source puts wait_group 0 does not decide the SASS:
 * ptxas schedules the wait, and only a data dependence holds it. */
static void sass_plants(void)
{
    fattn_config c;
    config("wgmma-bm128-bn128-s2-rs1-ov1", &c);
    const char *dir = t_family_plant(wg, tmp_root, "sass-r2ur", "__shfl_sync(0xffffffffu, (int)(threadIdx.x / 128), 0)",
                                     "(int)(threadIdx.x / 128)");
    cJSON *j = dir ? compiled_loop(dir, &c, 128, 1) : NULL;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "main");
    CHECK(m && count_of(m, "R2UR") > 0);
    cJSON_Delete(j);
    dir = t_family_plant(wg, tmp_root, "sass-serial", "    wgmma_wait<1>(acc); /* S(i)",
                         "    wgmma_wait<0>(acc); /* S(i)");
    j = dir ? compiled_loop(dir, &c, 128, 1) : NULL;
    m = cJSON_GetObjectItemCaseSensitive(j, "main");
    CHECK(m && count_of(m, "wait_group_1") == 0);
    cJSON_Delete(j);
    dir = t_family_plant(wg, tmp_root, "sass-unguarded", "    if (t < CLUSTER && after_all(row_sum))\n",
                         "    if (t < CLUSTER)\n");
    j = dir ? compiled_loop(dir, &c, 128, 1) : NULL;
    m = cJSON_GetObjectItemCaseSensitive(j, "main");
    CHECK(m && 2 * count_of(m, "ex2_between_waits") < count_of(m, "MUFU.EX2"));
    cJSON_Delete(j);
}

typedef struct plant {
    const char *name, *from, *to, *key;
    int causal;
    char verdict[24]; /* an array: GCC's sanitizer build otherwise takes it for a possible NULL in CHECK_STR */
    int seqlen;       /* 0: 130 */
    int head_dim;     /* 0: 64 */
} plant;

#define RS1        "wgmma-bm128-bn64-s2-rs1"
#define RS0        "wgmma-bm128-bn64-s2-rs0"
#define OV1        "wgmma-bm128-bn64-s2-rs1-ov1"
#define OV1_RS0    "wgmma-bm128-bn64-s2-rs0-ov1"
#define PP_OV1     "wgmma-bm128-bn64-s2-rs1-ov1-pp1"
#define PP3        "wgmma-bm192-bn64-s2-rs1-pp1"
#define PP_OV1_RS0 "wgmma-bm128-bn64-s2-rs0-ov1-pp1"
#define SC1        "wgmma-bm128-bn64-s2-rs1-ov1-sc1"
#define SC2        "wgmma-bm128-bn64-s2-rs1-ov1-sc2"
#define CL2        "wgmma-bm128-bn64-s2-rs1-ov1-cl2" /* at D = 128, non-causal */
#define CL2_64     "wgmma-bm64-bn64-s2-rs1-cl2"

/* idle_tile's wait for a K phase before it releases the slot, and without */
#define IDLE_K_WAIT    "        wait_phase(b.k_full(s), parity_of(g));\n        if (t < CLUSTER)\n"
#define IDLE_K_NO_WAIT "        if (t < CLUSTER)\n"

/* overlap_step's waits and releases, as the kernel has them and planted */
#define OV_SOFTMAX                                                                                                     \
    "    softmax<MASK>(w, acc, i * BLOCK_N, row_max, row_sum, corr);\n    if (t < CLUSTER && after_all(row_sum))\n"    \
    "        release(b.k_empty(s), t);\n    wgmma_wait<0>(o);\n"
#define OV_WAITS        OV_SOFTMAX "    if (t < CLUSTER)\n        release(b.v_empty(sp), t);\n"
#define OV_WAITS_V_AT_1 "    if (t < CLUSTER)\n        release(b.v_empty(sp), t);\n" OV_SOFTMAX
#define OV_P_STAGE                                                                                                     \
    "    wgmma_wait<0>(o);\n    if (t < CLUSTER)\n        release(b.v_empty(sp), t);\n    stage_p(w, acc, p);\n"
#define OV_P_STAGE_EARLY                                                                                               \
    "    stage_p(w, acc, p);\n    wgmma_wait<0>(o);\n    if (t < CLUSTER)\n        release(b.v_empty(sp), t);\n"

static const plant plants[] = {
    /* the K slot released before the wgmma reading it has retired: the
     * next load of the slot overwrites what the wgmma reads */
    {"release-early", "    wgmma_wait<0>(acc);\n    if (t < CLUSTER)\n        release(b.k_empty(s), t);\n    softmax",
     "    if (t < CLUSTER)\n        release(b.k_empty(s), t);\n    wgmma_wait<0>(acc);\n    softmax", RS1, 1,
     "race_war"},
    /* Q's phase completes on half its bytes: the epilogue writes over a
     * box still landing */
    {"q-half", "mbar_arrive_expect_tx(b.q_full(), active * D_BOXES * BOX_BYTES);",
     "mbar_arrive_expect_tx(b.q_full(), active * D_BOXES * BOX_BYTES / 2);", RS1, 1, "race_waw"},
    /* the producer waits on the wrong phase of a slot's release: it arms
     * the slot's full barrier again while its first phase still waits for
     * its bytes (the simulator lands them when a wait observes the phase) */
    {"empty-parity", "            wait_phase(b.k_empty(s), ph ^ 1u);", "            wait_phase(b.k_empty(s), ph);", RS1,
     1, "invalid_operand"},
    /* S never retired: the slot is released and reloaded under the wgmma */
    {"s-unwaited", "    issue_qk(w, acc, s);\n    turn_pass(w, false);\n    wgmma_wait<0>(acc);\n",
     "    issue_qk(w, acc, s);\n    turn_pass(w, false);\n", RS1, 1, "race_war"},
    /* P written through the generic proxy, read by wgmma without the fence */
    {"p-unfenced", "    fence_proxy_async();\n    bar_sync(1 + w.c, 128);\n", "    bar_sync(1 + w.c, 128);\n", RS0, 1,
     "async_proxy_unfenced"},
    /* the epilogue's store issued before the warpgroup has written O */
    {"store-early", "    fence_proxy_async();\n    bar_sync(1 + c, 128);\n    if (t == 0) {",
     "    fence_proxy_async();\n    if (t == 0) {", RS1, 1, "race_raw"},
    /* the unmasked tiles counted to the consumer's last row, not its first:
     * a causal tile crossing its rows runs without the mask */
    {"unmasked-past-row", "(w.m0 + 64 * w.c + 1) / BLOCK_N", "(w.m0 + 64 * w.c + 64) / BLOCK_N", RS1, 1, "numerics"},
    /* the causal mask one key late */
    {"causal-late", "(CAUSAL && row < w.seqlen - 1 ? row : w.seqlen - 1)",
     "(CAUSAL && row < w.seqlen - 1 ? row + 1 : w.seqlen - 1)", RS1, 1, "numerics"},
    /* the keys past S (zero-filled) not masked */
    {"tail-unmasked", "(CAUSAL && row < w.seqlen - 1 ? row : w.seqlen - 1)", "(CAUSAL ? row : 1 << 30)", RS1, 0,
     "numerics"},
    /* O written to shared memory unswizzled, stored as swizzled */
    {"unswizzled", "    return off ^ ((unsigned)(r % 8) << 4);", "    return off;", RS1, 1, "numerics"},
    /* V read as K-major: its rows run past the slot */
    {"v-untransposed", "wgmma_rs<HEAD_DIM, 1>(o, p[j],", "wgmma_rs<HEAD_DIM, 0>(o, p[j],", RS1, 1,
     "shared_out_of_bounds"},
    /* OVERLAP: P(i-1) V(i-1)'s slot released when S(i) retires (wait_group
     * 1), not its own wgmma: the producer reloads V under the running P V */
    {"v-release-wait1", OV_WAITS, OV_WAITS_V_AT_1, OV1, 1, "race_war"},
    /* OVERLAP: the softmax reads S(i) with both groups still pending */
    {"s-wait2", "    wgmma_wait<1>(acc); /* S(i)", "    wgmma_wait<2>(acc); /* S(i)", OV1, 1, "wgmma_early_access"},
    /* OVERLAP: O rescaled after P(i-1) V(i-1) is issued, while it runs */
    {"rescale-in-flight",
     "    rescale(o, corr);\n    wait_phase(b.v_full(sp), parity_of(ring_of(w, i - 1)));\n    issue_pv(w, o, p, "
     "sp);\n",
     "    wait_phase(b.v_full(sp), parity_of(ring_of(w, i - 1)));\n    issue_pv(w, o, p, sp);\n    rescale(o, "
     "corr);\n",
     OV1, 1, "wgmma_early_access"},
    /* OVERLAP, P through shared memory: P(i) stored before P(i-1) V(i-1)
     * has read P(i-1) */
    {"p-over-running-pv", OV_P_STAGE, OV_P_STAGE_EARLY, OV1_RS0, 1, "race_war"},
    /* PINGPONG: the turn passed on before the GEMMs it orders are issued:
     * the next consumer's issue is not ordered after them (the simulator's
     * check of the warpgroups' turns) */
    {"turn-early",
     "    issue_qk(w, acc, s);\n    rescale(o, corr);\n    wait_phase(b.v_full(sp), parity_of(ring_of(w, i - 1)));\n"
     "    issue_pv(w, o, p, sp);\n    turn_pass(w, false);\n",
     "    turn_pass(w, false);\n    issue_qk(w, acc, s);\n    rescale(o, corr);\n"
     "    wait_phase(b.v_full(sp), parity_of(ring_of(w, i - 1)));\n    issue_pv(w, o, p, sp);\n",
     PP_OV1, 1, "wgmma_unordered"},
    /* PINGPONG in a tail block of two active consumers of three: the turn
     * passed to the idle third, so the first never gets it back */
    {"turn-to-idle", "bar_arrive(TURN_BAR + (w.c + 1) % w.active, 256);",
     "bar_arrive(TURN_BAR + (w.c + 1) % CONSUMERS, 256);", PP3, 1, "deadlock", 100},
    /* PINGPONG: the turns on the consumers' own barriers (P's through
     * shared memory, the epilogue's): 256 threads counted where 128 come */
    {"turn-bar-shared", "#define TURN_BAR  4", "#define TURN_BAR  1", PP_OV1_RS0, 1, "divergent"},
    /* SCHED (3 SMs, 4 tiles: block 0 runs tiles 0 and 3): Q's tile given
     * back to the producer before the O store staged in it has read it:
     * the next tile's Q lands under the store */
    {"q-before-store-read", "        bulk_wait_read<0>();\n        if (SCHED)\n            mbar_arrive(b.q_empty());\n",
     "        if (SCHED)\n            mbar_arrive(b.q_empty());\n        bulk_wait_read<0>();\n", SC1, 0, "race_war"},
    /* SCHED: a consumer idle in a tail tile releases its slots without
     * following the tile's phases: its arrivals count towards phases not yet
     * open, and the producer arms a slot whose bytes have not landed */
    {"idle-skips-phases",
     "        } else if (SCHED || (CLUSTER > 1 && w.active == 0 && c == 0)) {\n            idle_tile(b, t, ring, "
     "tiles, j);\n        }",
     "        } else if (t == 0) {\n            for (int i = 0; i < tiles; ++i) {\n"
     "                mbar_arrive(b.k_empty(slot_of(ring + i)));\n"
     "                mbar_arrive(b.v_empty(slot_of(ring + i)));\n            }\n"
     "            mbar_arrive(b.q_empty());\n        }",
     SC1, 1, "invalid_operand"},
    /* ... or releases a slot before the phase that fills it: its arrival
     * counts towards the slot's earlier use, completing it early */
    {"idle-release-early", IDLE_K_WAIT, IDLE_K_NO_WAIT, SC1, 1, "race_waw"},
    /* SCHED=2: an LPT order that repeats one tile and skips another */
    {"lpt-repeat", "return {(row_blocks - 1 - t / bhs) * BLOCK_M, t % bhs};",
     "return {(row_blocks - 1 - t / (bhs + 1)) * BLOCK_M, t % bhs};", SC2, 1, "output_rewritten"},
    /* SCHED: the tiles counted one short: the last never run, its rows
     * never stored (the output's poison reaches the comparison) */
    {"sched-skip", "stride = (int)gridDim.x, total = row_blocks * bhs;",
     "stride = (int)gridDim.x, total = row_blocks * bhs - 1;", SC1, 1, "numerics"},
    /* CLUSTER (D = 128, S = 130: a cluster of the row blocks of two and of
     * one active consumers): a slot's arrivals counted from the block's own
     * tile only (twice), not from each block's */
    {"cluster-count-own-tile", "releases += max(active_of(((int)blockIdx.x - rank + r) * BLOCK_M, seqlen), 1);",
     "releases += max(active_of((int)blockIdx.x * BLOCK_M, seqlen), 1);", CL2, 0, "deadlock", 0, 128},
    /* CLUSTER, 3 row blocks of 64 (the grid rounded up to 4): the block
     * past S releases K without waiting for the phase that lands it in
     * that block, and its producer arms the slot again while the bytes of
     * its last use are still landing */
    {"cluster-past-s-unwaited", IDLE_K_WAIT, IDLE_K_NO_WAIT, CL2_64, 0, "invalid_operand", 0, 128},
    /* CLUSTER (S = 256: both blocks' consumers all active, so that the
     * counts still add up): a consumer releasing the slot in its own block
     * only: the other block's producer multicasts over a slot it reads */
    {"cluster-release-own", "mbar_arrive_cluster(cluster_map(bar, (unsigned)t));",
     "mbar_arrive_cluster(cluster_map(bar, cluster_rank()));", CL2, 0, "race_waw", 256, 128},
    /* CLUSTER: a block exiting while the other may still release its slots */
    {"cluster-exit-unsynced",
     "    cluster_sync(); /* no block exits while another may still release its slots or load into them */\n", "", CL2,
     0, "cluster_exited", 0, 128},
    /* CLUSTER: each block's boxes multicast to itself only: half of every
     * tile never arrives */
    {"cluster-mask-self", "(unsigned short)((1u << CLUSTER) - 1u)", "(unsigned short)(1u << rank)", CL2, 0, "deadlock",
     0, 128},
};

static void planted_bugs(void)
{
    const fattn_sim_inputs in = {.seed = 9};
    for (size_t i = 0; i < sizeof plants / sizeof *plants; ++i) {
        const plant *p = &plants[i];
        const fattn_shape s = {1, 2, p->seqlen ? p->seqlen : 130, p->head_dim ? p->head_dim : 64, p->causal};
        t_case = p->name;
        CHECK_STR(t_family_plant_caught(wg, tmp_root, cache, p->name, p->from, p->to, p->key, &s, &in, p->verdict),
                  "caught");
    }
    t_case = "planted_bugs";
}

int main(int argc, char **argv)
{
    wg = fattn_family_find("wgmma");
    if (!wg || !mkdtemp(tmp_root))
        return T_HARNESS;
    cache = fattn_path_join(tmp_root, "cache");
    if (argc > 1 && !strcmp(argv[1], "sass")) {
        T_RUN(sass_loop);
        T_RUN(sass_plants);
    } else {
        T_RUN(gates);
        T_RUN(compiled);
        T_RUN(pool);
        T_RUN(tails);
        T_RUN(covering);
        T_RUN(planted_bugs);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmp_root);
    free(cache);
    return t_exit();
}
