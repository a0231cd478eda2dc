/*
 * test_sim_prims_sm90.c - kernels/fattn_prim_sm90_test.cu (the Hopper
 * primitives of fattn_prim_sm90.h: TMA loads in every swizzle mode with a
 * box partly outside the tensor, wgmma SS for N = 64, 128, 176, 192, 256
 * with K-major operands in every swizzle mode, MN-major B in three, RS,
 * an accumulator turned into the next wgmma's A operand, the TMA store,
 * setmaxnreg, named barriers; in a cluster of two blocks, TMA multicast with
 * L2 cache hints and a pipeline whose consumers release both blocks' slots),
 * one launch per mode, on random integer fp16 data in [-3, 3]:
 *   test_sim_prims_sm90        each mode in the simulator, with no finding,
 *                              against this file's own reading of the PTX
 *                              ISA: the accumulator layout of "wgmma
 *                              .m64nNk16 D fragment" (register i of thread t
 *                              holds row 16 (t / 32) + (t % 32) / 4 +
 *                              8 ((i / 2) % 2), column 8 (i / 4) + 2 (t % 4)
 *                              + i % 2), the exact products, the swizzle of
 *                              "Tensor Copy Swizzling Modes" (the 16-byte
 *                              chunk XOR the row within 8), zero fill, and
 *                              multicast (bit i of the 16-bit ctaMask: the
 *                              block of cluster rank i; the box and the
 *                              mbarrier's complete_tx at the same
 *                              CTA-relative offsets in each of them);
 *   test_sim_prims_sm90 --gpu [--from N] [--to M]
 *                              each mode from N (0) before M (all) on the
 *                              GPU (NVRTC, sm_90a), the cluster modes
 *                              launched with a cluster dimension,
 *                              its own launch under a 2 s watchdog, bit for
 *                              bit against the simulator; one line a mode
 *                              on stdout, "MODE | n | what | result | ms |"
 *                              (exit 77 without an sm_90 GPU; 3 when the
 *                              watchdog fired, after "MODE | n | ... | hung").
 * Planted bugs (a kernel edited once each) are caught with their verdict at
 * their line, and NVRTC compiles the kernel for sm_90a with no ptxas notice
 * that it serialized the wgmma pipeline or ignored setmaxnreg.
 */
#include "t.h"
#include "t_cu.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "compile/kernel_src.h"
#include "compile/nvrtc.h"
#include "compile/postgates.h"
#include "gpu/device.h"
#include "gpu/driver.h"
#include "gpu/tmap.h"
#include "run/numerics.h"
#include "sim/kernel.h"
#include "sim/launch.h"
#include "target/arch.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/paths.h"

#define PRIM_FILE    "fattn_prim_sm90_test.cu"
#define H            2
#define SEQ          200
#define D            128
#define ELEMS        (H * SEQ * D)
#define WORDS        (ELEMS / 2)
#define MODES        21
#define CLUSTER_MODE 19   /* modes from here run in a cluster of two */
#define RANK_WORDS   8192 /* each rank's part of the output words there */
#define ERR_WORD     25599

static uint16_t q[ELEMS], k[ELEMS], v[ELEMS], o_sim[MODES][ELEMS];

static const char *const mode_names[MODES] = {
    "TMA load, no swizzle, a box past the tensor",
    "TMA load, 32 B swizzle",
    "TMA load, 64 B swizzle",
    "TMA load, 128 B swizzle",
    "wgmma SS N=64, K-major, 128 B",
    "wgmma SS N=128, K-major, 64 B",
    "wgmma SS N=176, K-major, 32 B",
    "wgmma SS N=192, K-major, none",
    "wgmma SS N=256, K-major, 128 B, B past the tensor",
    "wgmma SS N=128, B MN-major, 128 B",
    "wgmma SS N=64, B MN-major, 64 B",
    "wgmma SS N=64, B MN-major, none",
    "wgmma RS N=176",
    "wgmma RS N=64, B MN-major",
    "D to A: S = Q K^T, O = fp16(S) V",
    "TMA store, rows past the tensor",
    "setmaxnreg dec 40 / inc 232",
    "named barriers",
    "mbarrier pipeline, two slots",
    "cluster: TMA multicast and L2 cache hints",
    "cluster: pipeline with multicast K, remote releases",
};

/* The kernel's tensor maps, in its PT_MAP_* order: tensor (0 Q, 1 K, 2 V,
 * 3 O), box columns x rows, swizzle. */
static const struct {
    int tensor;
    unsigned cols, rows;
    CUtensorMapSwizzle sw;
} maps[] = {
    {0, 8, 64, CU_TENSOR_MAP_SWIZZLE_NONE},   {0, 16, 64, CU_TENSOR_MAP_SWIZZLE_32B},
    {0, 32, 64, CU_TENSOR_MAP_SWIZZLE_64B},   {0, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B},
    {0, 64, 64, CU_TENSOR_MAP_SWIZZLE_NONE},  {1, 32, 128, CU_TENSOR_MAP_SWIZZLE_64B},
    {1, 16, 176, CU_TENSOR_MAP_SWIZZLE_32B},  {1, 8, 192, CU_TENSOR_MAP_SWIZZLE_NONE},
    {1, 64, 256, CU_TENSOR_MAP_SWIZZLE_128B}, {1, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B},
    {2, 64, 16, CU_TENSOR_MAP_SWIZZLE_128B},  {2, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B},
    {2, 32, 16, CU_TENSOR_MAP_SWIZZLE_64B},   {2, 8, 16, CU_TENSOR_MAP_SWIZZLE_NONE},
    {3, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B},  {1, 64, 32, CU_TENSOR_MAP_SWIZZLE_128B},
};
#define NMAPS (int)(sizeof maps / sizeof maps[0])

static void build_maps(fattn_tmap *out, const void *const base[4])
{
    for (int i = 0; i < NMAPS; ++i)
        fattn_tmap_attention(&out[i], base[maps[i].tensor], 1, H, SEQ, D, maps[i].rows, maps[i].cols, maps[i].sw);
}

static void fill(uint64_t seed)
{
    fattn_rng rng;
    fattn_rng_seed(&rng, seed);
    uint16_t *t[3] = {q, k, v};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < ELEMS; ++j)
            t[i][j] = fattn_float_to_half((float)((int)fattn_rng_below(&rng, 7) - 3));
}

static float hf(uint16_t h)
{
    return fattn_half_to_float(h);
}

/* Element (head h, row r, column c) of a tensor; 0 past the sequence. */
static float at(const uint16_t *t, int h, int r, int c)
{
    return r < SEQ ? hf(t[(h * SEQ + r) * D + c]) : 0.0f;
}

static uint32_t word(const uint16_t *o, int i)
{
    return (uint32_t)o[2 * i] | (uint32_t)o[2 * i + 1] << 16;
}

static float fword(const uint16_t *o, int i)
{
    uint32_t u = word(o, i);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* ---- the simulator ---- */

static fattn_sim_kernel kern;
static fattn_tmap tmaps[NMAPS];
static fattn_sim_report rep;

static int build(const fattn_kernel_src *src, fattn_sim_kernel *kp)
{
    fattn_config cfg;
    fattn_config_default(&cfg, &fattn_family_mma);
    char *cache = fattn_sim_cache_dir(), why[512] = "";
    int rc = fattn_sim_kernel_build(src, &cfg, D, 0, cache, kp, why, sizeof why);
    free(cache);
    if (rc) {
        fprintf(stderr, "host build: %s\n", why);
        return -1;
    }
    CHECK_INT(kp->threads, 384);
    CHECK_INT(kp->tmap_slots, NMAPS);
    CHECK(kp->sm90);
    return 0;
}

/* Runs mode m (the grid's last block) of kernel kp; rep gets its findings. */
/* Mode m's grid (the kernel works in its last block along x, or, in a
 * cluster of two, its last pair along y); returns the cluster's blocks
 * along x. The simulator and the GPU launch the same. */
static unsigned mode_grid(int m, unsigned grid[3])
{
    const int in_cluster = m >= CLUSTER_MODE;
    grid[0] = in_cluster ? 2 : (unsigned)m + 1, grid[1] = in_cluster ? (unsigned)m + 1 : 1, grid[2] = 1;
    return in_cluster ? 2 : 1;
}

static int launch_mode(const fattn_sim_kernel *kp, int m)
{
    uint16_t *o = o_sim[m];
    for (int i = 0; i < ELEMS; ++i)
        o[i] = FATTN_HALF_POISON;
    const void *base[4] = {q, k, v, o};
    build_maps(tmaps, base);
    unsigned grid[3];
    const unsigned cluster = mode_grid(m, grid), cx = cluster > 1 ? 0 : (unsigned)m;
    fattn_sim_launch l = {
        .entry = kp->entry,
        .api_slot = kp->api_slot,
        .sm90 = kp->sm90,
        .self_slot = kp->self_slot,
        .grid = {grid[0], grid[1], grid[2]},
        .threads = kp->threads,
        .smem_bytes = kp->smem_bytes,
        .cluster = cluster,
        .batch = 1,
        .heads = H,
        .seqlen = SEQ,
        .head_dim = D,
        .scale = 1.0f,
        .q = q,
        .k = k,
        .v = v,
        .o = o,
        .clusters_x = &cx,
        .nclusters_x = 1,
        .tmaps = tmaps,
        .ntmaps = NMAPS,
        .tmap_slot = kp->tmap_slot,
        .tmap_slots = kp->tmap_slots,
    };
    return fattn_sim_run(&l, &rep);
}

/* Runs mode m of the kernel; 0 when it ran clean. */
static int run_sim(int m)
{
    CHECK_INT(launch_mode(&kern, m), 0);
    for (int i = 0; i < rep.nfindings; ++i)
        fprintf(stderr, "mode %d: finding: %s\n", m, rep.findings[i].detail);
    CHECK_INT(rep.nfindings, 0);
    return rep.nfindings ? -1 : 0;
}

/* ---- the ISA, read independently of src/sim/ ---- */

/* The 64 x N accumulator of 128 threads, from their registers. */
static void d_matrix(const uint16_t *o, int n, float *out)
{
    for (int t = 0; t < 128; ++t)
        for (int i = 0; i < n / 2; ++i) {
            const int row = 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2);
            const int col = 8 * (i / 4) + 2 * (t % 4) + i % 2;
            out[row * n + col] = fword(o, t * (n / 2) + i);
        }
}

/* Counts the outputs of mode m's 64 x n product (its words from `at`)
 * that differ from want. */
static int product_errors_at(int m, int at, int n, float (*want)(int row, int col))
{
    static float got[64 * 256];
    d_matrix(o_sim[m] + 2 * at, n, got);
    int bad = 0;
    for (int r = 0; r < 64; ++r)
        for (int c = 0; c < n; ++c)
            if (got[r * n + c] != want(r, c) && bad++ < 4)
                fprintf(stderr, "mode %d: D[%d][%d] = %g, want %g\n", m, r, c, got[r * n + c], want(r, c));
    return bad;
}

static int product_errors(int m, int n, float (*want)(int row, int col))
{
    return product_errors_at(m, 0, n, want);
}

static int kk;     /* the K of the product being checked */
static int rank_r; /* mode 20: the block whose rows of Q are checked */

static float qk(int r, int c)
{
    float s = 0;
    for (int j = 0; j < kk; ++j)
        s += at(q, 0, r, j) * at(k, 0, c, j);
    return s;
}

static float qv(int r, int c)
{
    float s = 0;
    for (int j = 0; j < 16; ++j)
        s += at(q, 0, r, j) * at(v, 0, j, c);
    return s;
}

/* Mode 18: S over the four tiles of K. */
static float qk4(int r, int c)
{
    float s = 0;
    for (int j = 0; j < 4; ++j)
        for (int x = 0; x < 64; ++x)
            s += at(q, 0, r, x) * at(k, 0, 64 * j + c, x);
    return s;
}

/* Mode 20: block rank_r's rows of Q against the four tiles of K, tile j
 * rows 48j .. 48j + 63. */
static float qk4_rank(int r, int c)
{
    float s = 0;
    for (int j = 0; j < 4; ++j)
        for (int x = 0; x < 64; ++x)
            s += at(q, 0, 64 * rank_r + r, x) * at(k, 0, 48 * j + c, x);
    return s;
}

static float pv(int r, int c)
{
    float s = 0;
    for (int j = 0; j < 64; ++j) {
        float p = 0;
        for (int x = 0; x < 64; ++x)
            p += at(q, 0, r, x) * at(k, 0, j, x);
        s += hf(fattn_float_to_half(p)) * at(v, 0, j, c);
    }
    return s;
}

/* "Tensor Copy Swizzling Modes": within each 8-row repeat of rows of
 * `span` bytes, 16-byte chunk j of row r moves to chunk j XOR (r % (span /
 * 16)); none for a span of 0. */
static unsigned swizzled(unsigned off, unsigned span)
{
    if (!span)
        return off;
    const unsigned chunks = span / 16;
    return off ^ ((off / 128) % chunks) * 16;
}

static void check_tma(int m)
{
    static const unsigned cols_of[4] = {64, 16, 32, 64}, span_of[4] = {0, 32, 64, 128};
    const unsigned cols = cols_of[m], box = cols * 2 * 64;
    int bad = 0;
    for (int b = 0; b < 2; ++b)
        for (int r = 0; r < 64; ++r)
            for (unsigned c = 0; c < cols; ++c) {
                const unsigned off = b * box + swizzled(r * cols * 2 + 2 * c, span_of[m]);
                const uint16_t got = o_sim[m][off / 2];
                const uint16_t want = fattn_float_to_half(at(q, 1, 192 * b + r, (int)c));
                if (got != want && bad++ < 4)
                    fprintf(stderr, "mode %d: box %d (%d, %u) at 0x%x: 0x%04x, want 0x%04x\n", m, b, r, c, off, got,
                            want);
            }
    CHECK_INT(bad, 0);
}

/* Mode 19: each block's images of K (both halves multicast), of V (the
 * other block's load) and of Q (its own), 128 B swizzled. */
static void check_multicast(int m)
{
    int bad = 0;
    for (int r = 0; r < 2; ++r)
        for (int region = 0; region < 3; ++region)
            for (int row = 0; row < 64; ++row)
                for (int c = 0; c < 64; ++c) {
                    const unsigned off = swizzled((unsigned)(row * 128 + 2 * c), 128);
                    const uint16_t got = o_sim[m][2 * r * RANK_WORDS + region * 4096 + off / 2];
                    const float x = region == 0   ? at(k, 0, row, c)
                                    : region == 1 ? at(v, 1, 64 + 64 * (1 - r) + row, c)
                                                  : at(q, 0, 64 * r + row, c);
                    if (got != fattn_float_to_half(x) && bad++ < 4)
                        fprintf(stderr, "mode %d: rank %d region %d (%d, %d): 0x%04x, want 0x%04x\n", m, r, region, row,
                                c, got, fattn_float_to_half(x));
                }
    CHECK_INT(bad, 0);
}

/* The product mode m computes (modes 4-14 and 18), with its N; NULL for
 * the others. */
static float (*product_of(int m, int *n))(int, int)
{
    static const int n_of[] = {0, 0, 0, 0, 64, 128, 176, 192, 256, 128, 64, 64, 176, 64, 64};
    static const int k_of[] = {0, 0, 0, 0, 64, 32, 16, 16, 64};
    if (m == 18) {
        *n = 64;
        return qk4;
    }
    if (m < 4 || m > 14)
        return NULL;
    *n = n_of[m];
    if (m <= 8 || m == 12) {
        kk = m == 12 ? 16 : k_of[m];
        return qk;
    }
    return m == 14 ? pv : qv;
}

static void check_mode(int m)
{
    char name[32];
    snprintf(name, sizeof name, "mode %d", m);
    t_case = name;
    const uint16_t *o = o_sim[m];
    CHECK_INT(o[2 * ERR_WORD], FATTN_HALF_POISON);
    int n;
    float (*want)(int, int) = product_of(m, &n);
    if (want) {
        CHECK_INT(product_errors(m, n, want), 0);
    } else if (m < 4) {
        check_tma(m);
    } else if (m == CLUSTER_MODE) {
        check_multicast(m);
    } else if (m == CLUSTER_MODE + 1) {
        for (rank_r = 0; rank_r < 2; ++rank_r)
            CHECK_INT(product_errors_at(m, rank_r * RANK_WORDS, 64, qk4_rank), 0);
    } else if (m == 15) {
        int bad = 0;
        for (int i = 0; i < ELEMS; ++i) {
            const int h = i / (SEQ * D), r = i / D % SEQ, c = i % D;
            const uint16_t want16 = h == 1 && r >= 192 && c < 64
                                        ? fattn_float_to_half((float)(1000 + 64 * (r - 192) + c))
                                        : FATTN_HALF_POISON;
            bad += o[i] != want16;
        }
        CHECK_INT(bad, 0);
    } else if (m == 16) {
        int bad = 0;
        for (int t = 0; t < 384; ++t)
            bad += word(o, t) != (uint32_t)(7 * t + t / 128);
        CHECK_INT(bad, 0);
    } else if (m == 17) {
        int bad = 0;
        for (int t = 128; t < 384; ++t) {
            const int other = t < 256 ? t + 128 : t - 128;
            const uint32_t got = 3 * ((t - 128) % 128) + 1, theirs = 3 * ((other - 128) % 128) + 1;
            bad += word(o, t) != theirs + 5 + 1000 * got;
        }
        CHECK_INT(bad, 0);
    }
}

/* ---- planted bugs ---- */

typedef struct plant {
    const char *name, *from, *to; /* one exact edit of the kernel (from occurs once) */
    int mode;
    const char *verdict; /* a finding's kind ("race": any race), or "numerics": none, a wrong product */
    const char *line_of; /* text on that finding's line (or its other party's) in the planted kernel */
} plant;

static const plant plants[] = {
    {"wrong-parity", "empty + 8 * s, (j / 2 - 1) & 1, w))\n                return;",
     "empty + 8 * s, (j / 2) & 1, w))\n                return;", 18, "race", "tma_load_3d(base + PT_B + s * tile"},
    {"release-before-retire",
     "        wgmma_wait<0>(acc);\n        if (tid == 128)\n            mbar_arrive(empty + 8 * s);",
     "        if (tid == 128)\n            mbar_arrive(empty + 8 * s);\n        wgmma_wait<0>(acc);", 18, "race_war",
     "tma_load_3d(base + PT_B + s * tile"},
    {"no-proxy-fence", "        fence_proxy_async();\n", "", 15, "async_proxy_unfenced", "tma_store_3d("},
    {"expect-in-bounds", "boxes * cols * 2 * (64 + N)", "boxes * cols * 2 * (64 + (N < 200 ? N : 200))", 8,
     "tma_unwaited", "wgmma_ss<N>(d,"},
    {"named-barrier-count", "            bar_sync(1, 384);", "            bar_sync(1, 256);", 17, "divergent",
     "bar_sync(1, 256)"},
    {"setmaxnreg-over-pool", "setmaxnreg_inc<232>()", "setmaxnreg_inc<240>()", 16, "deadlock", "setmaxnreg_inc<240>"},
    {"no-wgmma-fence", "            p[j][r] = *reinterpret_cast<const unsigned *>(&h);\n        }\n    wgmma_fence();",
     "            p[j][r] = *reinterpret_cast<const unsigned *>(&h);\n        }", 14, "wgmma_unfenced",
     "wgmma_rs<64, 1>(o, p[j]"},
    {"early-accumulator-read", "176, FATTN_GMMA_SW32), 0);\n            wgmma_commit();",
     "176, FATTN_GMMA_SW32), 0);\n            wgmma_commit();\n            st_global(w + PT_ERR, d[0]);", 12,
     "wgmma_early_access", "st_global(w + PT_ERR, d[0]);"},
    {"early-accumulator-write",
     "16, FATTN_GMMA_SW128), 0);\n            wgmma_commit();\n            wgmma_wait<0>(d);",
     "16, FATTN_GMMA_SW128), 0);\n            wgmma_commit();\n            d[1] = 0.0f;\n"
     "            wgmma_wait<0>(d); /* early */",
     13, "wgmma_early_access", "wgmma_wait<0>(d); /* early */"},
    {"no-barrier-after-init", "        fence_mbarrier_init();\n    }\n    __syncthreads();",
     "        fence_mbarrier_init();\n    }", 0, "race_raw", "if (mbar_try_wait(bar, parity))"},
    {"rs-fragment-changed", "16, FATTN_GMMA_SW128), 0);\n            wgmma_commit();\n            wgmma_wait<0>(d);",
     "16, FATTN_GMMA_SW128), 0);\n            wgmma_commit();\n            a[0] = 0u;\n"
     "            wgmma_wait<0>(d); /* early */",
     13, "wgmma_early_access", "wgmma_wait<0>(d); /* early */"},
    {"wrong-swizzle-mode", "fattn_gmma_desc_mn_boxes(base + PT_B, 16, MODE), 0);",
     "(fattn_gmma_desc_mn_boxes(base + PT_B, 16, MODE) & ~(3ull << 62)) | 2ull << 62, 0);", 9, "uninitialized_read",
     "wgmma_ss<N, 0, 1>(d,"},
    {"lbo-sbo-swapped", "fattn_gmma_desc_mn_boxes(base + PT_B, 16, MODE), 0);",
     "MODE ? fattn_gmma_desc_mn_boxes(base + PT_B, 16, MODE) : fattn_gmma_desc(base + PT_B, 256, 128, MODE), 0);", 11,
     "numerics", NULL},
    /* The cluster's: a consumer releasing its own block's slot only (the
     * other block's producer overwrites a slot this one still reads), a
     * block exiting while the other may still arrive on its barriers, a
     * multicast to the issuing block only (half a tile never arrives), a
     * multicast signalling the other block's mbarrier before its init is
     * known to be done. */
    {"cluster-release-own-only",
     "cluster_map(empty + 8 * s, 0));\n                mbar_arrive_cluster(cluster_map(empty + 8 * s, 1));",
     "cluster_map(empty + 8 * s, r));\n                mbar_arrive_cluster(cluster_map(empty + 8 * s, r));", 20, "race",
     "tma_load_3d_multicast(base + PT_B + s * tile"},
    {"cluster-no-exit-barrier",
     "    cluster_sync(); /* no block exits while the other may still arrive on its barriers */\n", "", 20,
     "cluster_exited", "mbar_arrive_cluster(cluster_map(empty + 8 * s, 1));"},
    {"multicast-self-only", "48 * j + 32 * (int)r, 0, 3, FATTN_L2_EVICT_LAST);",
     "48 * j + 32 * (int)r, 0, (unsigned short)(1u << r), FATTN_L2_EVICT_LAST);", 20, "deadlock",
     "if (mbar_try_wait(bar, parity))"},
    {"cluster-no-barrier-after-init",
     "        cluster_sync(); /* the other block's mbarrier initialized before this block's multicast signals it */\n",
     "", 19, "race_raw", "tma_load_3d_multicast(base + PT_A + r * tile / 2"},
};

static char tmp_root[] = "/tmp/fattn-sm90-XXXXXX";

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *t = malloc((size_t)n + 1);
    if (t && fread(t, 1, (size_t)n, f) != (size_t)n) {
        free(t);
        t = NULL;
    }
    if (t)
        t[n] = 0;
    fclose(f);
    return t;
}

/* The kernel directory copied to tmp_root/name with p's edit; NULL (said)
 * when the edit does not apply exactly once. *line: the line of p->line_of. */
static const char *plant_dir(const plant *p, int *line)
{
    static char dir[512], path[600], cmd[1400];
    snprintf(dir, sizeof dir, "%s/%s", tmp_root, p->name);
    snprintf(path, sizeof path, "%s/" PRIM_FILE, dir);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", dir, fattn_default_kernel_dir(), dir);
    char *text = system(cmd) == 0 ? read_text(path) : NULL;
    char *at = text ? strstr(text, p->from) : NULL;
    if (!at || strstr(at + 1, p->from)) {
        fprintf(stderr, "planted %s: the kernel holds its text %s\n", p->name, at ? "more than once" : "nowhere");
        free(text);
        return NULL;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        free(text);
        return NULL;
    }
    fprintf(f, "%.*s%s%s", (int)(at - text), text, p->to, at + strlen(p->from));
    fclose(f);
    free(text);
    text = read_text(path);
    const char *l = p->line_of && text ? strstr(text, p->line_of) : NULL;
    *line = l ? 1 : 0;
    for (const char *c = text; l && c < l; ++c)
        *line += *c == '\n';
    free(text);
    return dir;
}

static int is_race(const char *verdict)
{
    return !strcmp(verdict, "race_raw") || !strcmp(verdict, "race_war") || !strcmp(verdict, "race_waw");
}

/* The finding of p's kind at `line` (or with its other party there). */
static const fattn_sim_finding *caught(const plant *p, int line)
{
    for (int i = 0; i < rep.nfindings; ++i) {
        const fattn_sim_finding *f = &rep.findings[i];
        const char *kind = fattn_sim_kind_name(f->kind);
        if ((!strcmp(p->verdict, "race") ? is_race(kind) : !strcmp(kind, p->verdict))
            && (f->line == line || f->other_line == line))
            return f;
    }
    return NULL;
}

/* Every planted bug caught with its verdict at its line (the unplanted
 * kernel ran each mode clean before). */
static void planted_bugs(void)
{
    for (size_t i = 0; i < sizeof plants / sizeof *plants; ++i) {
        const plant *p = &plants[i];
        t_case = p->name;
        int line = 0;
        const char *dir = plant_dir(p, &line);
        CHECK(dir != NULL);
        CHECK(!p->line_of || line > 0);
        fattn_kernel_src src;
        fattn_sim_kernel kp;
        if (!dir || fattn_kernel_src_load(dir, PRIM_FILE, &src))
            continue;
        if (build(&src, &kp) == 0) {
            CHECK_INT(launch_mode(&kp, p->mode), 0);
            int n;
            float (*want)(int, int) = product_of(p->mode, &n);
            if (getenv("FATTN_TEST_VERBOSE"))
                for (int f = 0; f < rep.nfindings; ++f)
                    fprintf(stderr, "%s: %s\n", p->name, rep.findings[f].detail);
            if (!strcmp(p->verdict, "numerics")) {
                CHECK_INT(rep.nfindings, 0);
                CHECK(want && product_errors(p->mode, n, want) > 0);
            } else {
                CHECK(caught(p, line) != NULL);
            }
            fattn_sim_kernel_close(&kp);
        }
        fattn_kernel_src_release(&src);
    }
}

/* ---- NVRTC: the kernel is valid sm_90a PTX, and ptxas keeps its pipeline ---- */

static void nvrtc_sm90a(const fattn_kernel_src *src)
{
    t_case = "nvrtc sm_90a";
    char *include;
    fattn_config cfg;
    fattn_options opt;
    fattn_nvrtc_result res;
    CHECK_INT(fattn_cuda_include(&include), 0);
    fattn_config_default(&cfg, &fattn_family_mma);
    fattn_options_build(&opt, &cfg, D, 0, fattn_arch_find("sm_90a"), include);
    CHECK_INT(fattn_nvrtc_compile(src, &opt, 0, &res), 0);
    CHECK(res.ok);
    if (!res.ok)
        fprintf(stderr, "%s\n", res.log ? res.log : "");
    char text[256] = "";
    /* setmaxnreg ignored (C7507-7508), wgmma serialized (C7510-7517): none. */
    CHECK_INT(fattn_ptxas_notice(res.log ? res.log : "", 7507, 7517, text, sizeof text), 0);
    if (text[0])
        fprintf(stderr, "ptxas: %s\n", text);
    fattn_nvrtc_result_release(&res);
    fattn_options_release(&opt);
    free(include);
}

/* ---- the GPU ---- */

static int gpu_probe(fattn_gpu_info *info)
{
    char why[320];
    if (fattn_gpu_probe(0, info, why, sizeof why)) {
        printf("SKIP: %s\n", why);
        return T_SKIP;
    }
    if (info->cc_major != 9 || info->cc_minor != 0) {
        printf("SKIP: GPU 0 is compute capability %d.%d; sm_90a code runs on 9.0 only\n", info->cc_major,
               info->cc_minor);
        return T_SKIP;
    }
    return 0;
}

static volatile sig_atomic_t watched = -1;

static void watchdog(int sig)
{
    (void)sig;
    char line[160];
    const int n = snprintf(line, sizeof line, "MODE | %d | %s | hung: no answer in 2 s |  |\n", (int)watched,
                           watched >= 0 && watched < MODES ? mode_names[watched] : "?");
    if (write(1, line, (size_t)n) < 0)
        _exit(4);
    _exit(3);
}

static int run_gpu(const fattn_kernel_src *src, const fattn_gpu_info *info, int from, int to)
{
    fattn_cu cu;
    char why[320], *include;
    const fattn_arch *arch = fattn_arch_find("sm_90a");
    if (!arch || fattn_cu_load(&cu, why, sizeof why) || fattn_cuda_include(&include))
        return T_HARNESS;
    CUdevice dev;
    CUcontext ctx;
    CK(cu.cuDeviceGet(&dev, 0));
    CK(cu.cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cu.cuCtxSetCurrent(ctx));
    fattn_config cfg;
    fattn_config_default(&cfg, &fattn_family_mma);
    fattn_options opt;
    fattn_nvrtc_result res;
    fattn_options_build(&opt, &cfg, D, 0, arch, include);
    if (fattn_nvrtc_compile(src, &opt, 0, &res) || !res.ok) {
        fprintf(stderr, "NVRTC: %s\n", res.log ? res.log : "failed");
        return T_HARNESS;
    }
    CUmodule mod;
    CUfunction fn;
    CUdeviceptr d[4], slot;
    size_t slot_bytes;
    CK(cu.cuModuleLoadData(&mod, res.cubin));
    CK(cu.cuModuleGetFunction(&fn, mod, "fattn_fwd"));
    CK(cu.cuModuleGetGlobal(&slot, &slot_bytes, mod, "fattn_tmaps"));
    CK(cu.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)kern.smem_bytes));
    uint16_t *host[3] = {q, k, v};
    for (int i = 0; i < 4; ++i) {
        CK(cu.cuMemAlloc(&d[i], ELEMS * 2));
        if (i < 3)
            CK(cu.cuMemcpyHtoD(d[i], host[i], ELEMS * 2));
    }
    const void *base[4];
    for (int i = 0; i < 4; ++i)
        base[i] = (const void *)(uintptr_t)d[i];
    fattn_tmap gm[NMAPS];
    build_maps(gm, base);
    CUtensorMap enc[NMAPS];
    for (int i = 0; i < NMAPS; ++i)
        CK(fattn_tmap_encode(&cu, &gm[i], &enc[i]));
    CHECK(slot_bytes >= sizeof enc);
    CK(cu.cuMemcpyHtoD(slot, enc, sizeof enc));
    static uint16_t o_gpu[ELEMS];
    signal(SIGALRM, watchdog);
    for (int m = from; m < to; ++m) {
        CK(cu.cuMemsetD16(d[3], FATTN_HALF_POISON, ELEMS));
        CK(cu.cuCtxSynchronize());
        int b = 1, h = H, s = SEQ;
        float scale = 1.0f;
        void *args[] = {&d[0], &d[1], &d[2], &d[3], &b, &h, &s, &scale};
        const double t0 = fattn_now_ms();
        watched = m;
        alarm(2);
        unsigned grid[3];
        const unsigned cluster = mode_grid(m, grid);
        if (cluster == 1) {
            CK(cu.cuLaunchKernel(fn, grid[0], grid[1], grid[2], kern.threads, 1, 1, kern.smem_bytes, NULL, args, NULL));
        } else {
            CUlaunchAttribute attr = {.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION};
            attr.value.clusterDim.x = cluster, attr.value.clusterDim.y = 1, attr.value.clusterDim.z = 1;
            const CUlaunchConfig lc = {.gridDimX = grid[0],
                                       .gridDimY = grid[1],
                                       .gridDimZ = grid[2],
                                       .blockDimX = kern.threads,
                                       .blockDimY = 1,
                                       .blockDimZ = 1,
                                       .sharedMemBytes = kern.smem_bytes,
                                       .attrs = &attr,
                                       .numAttrs = 1};
            CK(cu.cuLaunchKernelEx(&lc, fn, args, NULL));
        }
        CK(cu.cuCtxSynchronize());
        alarm(0);
        const double ms = fattn_now_ms() - t0;
        CK(cu.cuMemcpyDtoH(o_gpu, d[3], ELEMS * 2));
        size_t differ = 0;
        for (int i = 0; i < ELEMS; ++i)
            if (o_gpu[i] != o_sim[m][i] && differ++ < 4)
                fprintf(stderr, "mode %d: o[%d]: GPU 0x%04x, simulator 0x%04x\n", m, i, o_gpu[i], o_sim[m][i]);
        char name[32];
        snprintf(name, sizeof name, "gpu mode %d", m);
        t_case = name;
        CHECK_INT(differ, 0);
        const int timed_out = word(o_gpu, ERR_WORD) == 1;
        printf("MODE | %d | %s | %s%zu of %d halves differ | %.1f |\n", m, mode_names[m],
               timed_out ? "an mbarrier wait timed out; "
               : differ  ? ""
                         : "bit-exact: ",
               differ, ELEMS, ms);
        fflush(stdout);
    }
    printf("%s (%s), modes %d-%d\n", info->name, arch->name, from, to - 1);
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
    int from = 0, to = MODES;
    for (int i = 2; gpu && i + 1 < argc; i += 2) {
        const int n = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--from") && n >= 0 && n < MODES) {
            from = n;
        } else if (!strcmp(argv[i], "--to") && n > 0 && n <= MODES) {
            to = n;
        } else {
            fprintf(stderr, "test_sim_prims_sm90: %s %s: expected --from 0-%d or --to 1-%d\n", argv[i], argv[i + 1],
                    MODES - 1, MODES);
            return T_HARNESS;
        }
    }
    if (gpu && (argc % 2 || from >= to)) {
        fprintf(stderr, "test_sim_prims_sm90: --gpu [--from N] [--to N]: modes N from 0-%d, before 1-%d, from < to\n",
                MODES - 1, MODES);
        return T_HARNESS;
    }
    fattn_gpu_info info;
    if (gpu && gpu_probe(&info))
        return T_SKIP;
    fattn_kernel_src src;
    if (fattn_kernel_src_load(fattn_default_kernel_dir(), PRIM_FILE, &src))
        return T_HARNESS;
    int rc = build(&src, &kern);
    for (uint64_t seed = 1; !rc && seed <= (gpu ? 1 : 2); ++seed) {
        fill(seed);
        for (int m = 0; m < MODES && !rc; ++m) {
            char name[32];
            snprintf(name, sizeof name, "simulator mode %d", m);
            t_case = name;
            if ((rc = run_sim(m)))
                break;
            if (!gpu)
                check_mode(m);
        }
    }
    if (!rc && !gpu) {
        nvrtc_sm90a(&src);
        if (!mkdtemp(tmp_root))
            return T_HARNESS;
        planted_bugs();
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_root);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", tmp_root);
    }
    if (!rc && gpu)
        rc = run_gpu(&src, &info, from, to);
    fattn_sim_kernel_close(&kern);
    fattn_kernel_src_release(&src);
    return rc == T_SKIP || rc == T_HARNESS ? rc : t_exit();
}
