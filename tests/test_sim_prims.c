/*
 * test_sim_prims.c - kernels/fattn_prim_test.cu (every primitive of
 * fattn_prim.h once: ldmatrix.x4 plain and .trans, mma.sync m16n8k16,
 * shfl.sync.bfly, cp.async 16 and 4 bytes with zero fill, a 2-block cluster
 * reading its peer through mapa + ld.shared::cluster) on random
 * integer-valued fp16 data:
 *   test_sim_prims        the simulator's output against this file's own
 *                         reading of the PTX ISA (fragment layouts, the exact
 *                         product, zero fill, the butterfly, the peer's
 *                         values), no finding of any kind;
 *   test_sim_prims --gpu  the GPU's output, through NVRTC, bit for bit
 *                         against the simulator's (exit 77 without a GPU of
 *                         sm_90 or newer).
 */
#include "t.h"
#include "t_cu.h"

#include <string.h>

#include "compile/kernel_src.h"
#include "compile/nvrtc.h"
#include "gpu/device.h"
#include "gpu/driver.h"
#include "run/numerics.h"
#include "sim/kernel.h"
#include "sim/launch.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/paths.h"

#define PRIM_FILE "fattn_prim_test.cu"
#define ELEMS     (64 * 64) /* Q, K, V and O: B=1, H=1, S=64, D=64 */
#define OUT_HALF  2048      /* halves each block writes */

static uint16_t q[ELEMS], k[ELEMS], v[ELEMS], o_sim[ELEMS];

static void fill(uint64_t seed)
{
    fattn_rng rng;
    fattn_rng_seed(&rng, seed);
    uint16_t *t[3] = {q, k, v};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < ELEMS; ++j)
            t[i][j] = fattn_float_to_half((float)((int)fattn_rng_below(&rng, 17) - 8));
}

static float hf(uint16_t h)
{
    return fattn_half_to_float(h);
}

static void config(fattn_config *cfg)
{
    fattn_config_default(cfg, &fattn_family_mma);
    cfg->v[FATTN_P_SPLIT_KV] = 2;
}

/* Runs the primitive kernel in the simulator; 0 when it ran clean. */
static int run_sim(const fattn_kernel_src *src)
{
    fattn_config cfg;
    config(&cfg);
    char *cache = fattn_sim_cache_dir(), why[512] = "";
    fattn_sim_kernel kk;
    int rc = fattn_sim_kernel_build(src, &cfg, 64, 0, cache, &kk, why, sizeof why);
    free(cache);
    if (rc) {
        fprintf(stderr, "host build: %s\n", why);
        return -1;
    }
    CHECK_INT(kk.smem_bytes, 3072);
    CHECK_INT(kk.threads, 128);
    CHECK_INT(kk.cluster, 2);
    for (int i = 0; i < ELEMS; ++i)
        o_sim[i] = FATTN_HALF_POISON;
    fattn_sim_launch l = {
        .entry = kk.entry,
        .api_slot = kk.api_slot,
        .self_slot = kk.self_slot,
        .grid = {2, 1, 1},
        .threads = kk.threads,
        .smem_bytes = kk.smem_bytes,
        .cluster = kk.cluster,
        .batch = 1,
        .heads = 1,
        .seqlen = 64,
        .head_dim = 64,
        .scale = 0.125f,
        .q = q,
        .k = k,
        .v = v,
        .o = o_sim,
    };
    static fattn_sim_report rep;
    rc = fattn_sim_run(&l, &rep);
    fattn_sim_kernel_close(&kk);
    CHECK_INT(rc, 0);
    for (int i = 0; i < rep.nfindings; ++i)
        fprintf(stderr, "finding: %s\n", rep.findings[i].detail);
    CHECK_INT(rep.nfindings, 0);
    return rc || rep.nfindings ? -1 : 0;
}

/* The PTX ISA, read independently of src/sim/warp.c. */
static void check_against_isa(void)
{
    for (int r = 0; r < 2; ++r) {
        const uint16_t *out = o_sim + r * OUT_HALF;
        /* The tiles: A[i][j] = Q[16r + i][j], B[i][j] = K[16r + i][j]. */
        float A[16][16], B[16][16];
        for (int i = 0; i < 16; ++i)
            for (int j = 0; j < 16; ++j)
                A[i][j] = hf(q[(16 * r + i) * 64 + j]), B[i][j] = hf(k[(16 * r + i) * 64 + j]);
        int frag_a = 0, frag_b = 0, prod = 0, shfl = 0, cp16 = 0, cp4 = 0, ds = 0;
        for (int lane = 0; lane < 32; ++lane) {
            const int g = lane / 4, c = (lane % 4) * 2;
            for (int m = 0; m < 4; ++m) {
                /* Matrix m: rows 8 (m % 2) .., columns 8 (m / 2) ..; a lane
                 * holds row g, columns c, c+1 (plain) or, transposed, column
                 * g of rows c, c+1. */
                const int r0 = 8 * (m % 2), c0 = 8 * (m / 2);
                for (int e = 0; e < 2; ++e) {
                    frag_a += hf(out[lane * 8 + m * 2 + e]) == A[r0 + g][c0 + c + e];
                    frag_b += hf(out[256 + lane * 8 + m * 2 + e]) == B[r0 + c + e][c0 + g];
                }
            }
            /* D = A B, n-tiles 0 and 1: c0, c1 at row g, columns c, c+1;
             * c2, c3 at row g + 8. */
            for (int t = 0; t < 2; ++t)
                for (int i = 0; i < 4; ++i) {
                    const int row = g + 8 * (i / 2), col = 8 * t + c + i % 2;
                    float want = 0;
                    for (int kk = 0; kk < 16; ++kk)
                        want += A[row][kk] * B[kk][col];
                    prod += hf(out[512 + lane * 8 + 4 * t + i]) == want;
                }
            for (int m = 0; m < 5; ++m)
                shfl += hf(out[768 + lane * 8 + m]) == (float)(3 * (lane ^ (1 << m)) + r);
            for (int i = 5; i < 8; ++i)
                shfl += hf(out[768 + lane * 8 + i]) == (float)(3 * lane + r);
        }
        for (int t = 0; t < 64; ++t)
            for (int e = 0; e < 8; ++e)
                cp16 += out[1024 + t * 8 + e] == (t % 3 ? q[(64 * r + t) * 8 + e] : 0);
        for (int t = 0; t < 128; ++t) {
            for (int e = 0; e < 2; ++e)
                cp4 += out[1536 + t * 2 + e] == (t % 5 ? v[(128 * r + t) * 2 + e] : 0);
            ds += hf(out[1792 + t]) == (float)(200 * (r ^ 1) + t);
            ds += hf(out[1920 + t]) == (float)(200 * (r ^ 1) + t);
        }
        CHECK_INT(frag_a, 256);
        CHECK_INT(frag_b, 256);
        CHECK_INT(prod, 256);
        CHECK_INT(shfl, 256);
        CHECK_INT(cp16, 512);
        CHECK_INT(cp4, 256);
        CHECK_INT(ds, 256);
    }
}

/* 0 when GPU 0 can run the test (sm_90 or newer), else T_SKIP, said. */
static int gpu_probe(fattn_gpu_info *info)
{
    char why[320];
    if (fattn_gpu_probe(0, info, why, sizeof why)) {
        printf("SKIP: %s\n", why);
        return T_SKIP;
    }
    if (info->cc_major < 9) {
        printf("SKIP: GPU 0 is compute capability %d.%d; the cluster needs sm_90 or newer\n", info->cc_major,
               info->cc_minor);
        return T_SKIP;
    }
    return 0;
}

static int run_gpu(const fattn_kernel_src *src, const fattn_gpu_info *gi)
{
    const fattn_gpu_info info = *gi;
    fattn_cu cu;
    char why[320], *include;
    const fattn_arch *arch = fattn_arch_from_cc(info.cc_major, info.cc_minor);
    if (!arch || fattn_cu_load(&cu, why, sizeof why) || fattn_cuda_include(&include))
        return T_HARNESS;
    CUdevice dev;
    CUcontext ctx;
    CK(cu.cuDeviceGet(&dev, 0));
    CK(cu.cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cu.cuCtxSetCurrent(ctx));
    fattn_config cfg;
    config(&cfg);
    fattn_options opt;
    fattn_nvrtc_result res;
    fattn_options_build(&opt, &cfg, 64, 0, arch, include);
    if (fattn_nvrtc_compile(src, &opt, 0, &res) || !res.ok) {
        fprintf(stderr, "NVRTC: %s\n", res.log ? res.log : "failed");
        return T_HARNESS;
    }
    CUmodule mod;
    CUfunction fn;
    CK(cu.cuModuleLoadData(&mod, res.cubin));
    CK(cu.cuModuleGetFunction(&fn, mod, "fattn_fwd"));
    CUdeviceptr d[4];
    uint16_t *host[3] = {q, k, v};
    for (int i = 0; i < 4; ++i) {
        CK(cu.cuMemAlloc(&d[i], ELEMS * 2));
        if (i < 3)
            CK(cu.cuMemcpyHtoD(d[i], host[i], ELEMS * 2));
        else
            CK(cu.cuMemsetD16(d[i], FATTN_HALF_POISON, ELEMS));
    }
    int b = 1, h = 1, s = 64;
    float scale = 0.125f;
    void *args[] = {&d[0], &d[1], &d[2], &d[3], &b, &h, &s, &scale};
    CK(cu.cuLaunchKernel(fn, 2, 1, 1, 128, 1, 1, 3072, NULL, args, NULL));
    CK(cu.cuCtxSynchronize());
    static uint16_t o_gpu[ELEMS];
    CK(cu.cuMemcpyDtoH(o_gpu, d[3], ELEMS * 2));
    size_t differ = 0;
    for (int i = 0; i < ELEMS; ++i)
        if (o_gpu[i] != o_sim[i] && differ++ < 8)
            fprintf(stderr, "o[%d] (block %d, offset %d): GPU 0x%04x, simulator 0x%04x\n", i, i / OUT_HALF,
                    i % OUT_HALF, o_gpu[i], o_sim[i]);
    t_case = "gpu vs simulator";
    CHECK_INT(differ, 0);
    fprintf(stderr, "%s (%s): %d halves, %zu differ from the simulator\n", info.name, arch->name, 2 * OUT_HALF, differ);
    for (int i = 0; i < 4; ++i)
        cu.cuMemFree(d[i]);
    cu.cuModuleUnload(mod);
    fattn_nvrtc_result_release(&res);
    fattn_options_release(&opt);
    cu.cuDevicePrimaryCtxRelease(dev);
    free(include);
    return t_exit();
}

int main(int argc, char **argv)
{
    const int gpu = argc > 1 && !strcmp(argv[1], "--gpu");
    fattn_gpu_info info;
    if (gpu && gpu_probe(&info))
        return T_SKIP;
    fattn_kernel_src src;
    if (fattn_kernel_src_load(fattn_default_kernel_dir(), PRIM_FILE, &src))
        return T_HARNESS;
    int rc = 0;
    for (uint64_t seed = 1; seed <= (gpu ? 1 : 3) && !rc; ++seed) {
        fill(seed);
        t_case = "simulator";
        if ((rc = run_sim(&src)))
            break;
        if (!gpu)
            check_against_isa();
    }
    if (!rc && gpu)
        rc = run_gpu(&src, &info);
    fattn_kernel_src_release(&src);
    return rc == T_SKIP || rc == T_HARNESS ? rc : t_exit();
}
