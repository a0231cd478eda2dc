/*
 * test_tmap.c - the attention tensors' TMA maps (src/gpu/tmap.c) through
 * the mock driver ($FATTN_MOCK_CUDA), which refuses what cuda.h says
 * cuTensorMapEncodeTiled refuses:
 *  - the maps a Hopper kernel asks for (Q/K/V/O as (D, S, B*H), boxes of
 *    64-256 rows by 64 columns, 128-byte swizzle) encode, and describe
 *    what they should (dims, byte strides, the box's full bytes even where
 *    it runs past the tensor);
 *  - head_dim 128 in one 128-byte-swizzled box (256 bytes inside) is
 *    refused, in two boxes of 64 accepted, unswizzled accepted;
 *  - a box of 257 rows, a row stride that is no multiple of 16 (head_dim
 *    36), and a base 8 bytes off are refused;
 *  - every map the Hopper kernels plan to ask for (the seed shapes and a
 *    tail, boxes of 64-256 rows in each swizzle mode) encodes;
 *  - every map the wgmma family's space (search/space-wgmma.json) asks
 *    for through its launches, at the seed shapes and tails, encodes.
 * test_tmap --gpu: the same cases through the GPU's driver, which must
 * answer each as the mock does (exit 77 without a GPU).
 */
#include "t.h"

#include <stdlib.h>
#include <string.h>

#include "gates/gates.h"
#include "gpu/device.h"
#include "gpu/driver.h"
#include "gpu/tmap.h"
#include "space/space.h"
#include "util/fs.h"
#include "util/paths.h"

static fattn_cu cu;
static int gpu; /* the GPU's driver, not the mock */
static _Alignas(16) unsigned char tensor[1 << 20];

static CUresult encode(int b, int h, int s, int d, unsigned rows, unsigned cols, CUtensorMapSwizzle sw, size_t off,
                       fattn_tmap *m)
{
    CUtensorMap map;
    fattn_tmap_attention(m, tensor + off, b, h, s, d, rows, cols, sw);
    CUresult r = fattn_tmap_encode(&cu, m, &map);
    if (r == CUDA_SUCCESS && !gpu) {
        CHECK(!memcmp(&map, "MOCKTMAP", 8));
        CHECK_INT(((unsigned char *)&map)[8], 3);
    }
    return r;
}

static void maps(void)
{
    fattn_tmap m;
    CHECK_INT(encode(2, 8, 512, 64, 128, 64, CU_TENSOR_MAP_SWIZZLE_128B, 0, &m), CUDA_SUCCESS);
    CHECK_INT(m.dim[0], 64);
    CHECK_INT(m.dim[1], 512);
    CHECK_INT(m.dim[2], 16);
    CHECK_INT(m.stride[0], 128);
    CHECK_INT(m.stride[1], 512 * 128);
    CHECK_INT(fattn_tmap_box_bytes(&m), 128 * 64 * 2);
    /* 100 rows, boxes of 128: the box still moves its full 16 KiB. */
    CHECK_INT(encode(1, 1, 100, 64, 128, 64, CU_TENSOR_MAP_SWIZZLE_128B, 0, &m), CUDA_SUCCESS);
    CHECK_INT(fattn_tmap_box_bytes(&m), 16384);
    CHECK_INT(encode(4, 16, 2048, 128, 176, 64, CU_TENSOR_MAP_SWIZZLE_128B, 0, &m), CUDA_SUCCESS);
    CHECK_INT(encode(4, 16, 2048, 128, 256, 64, CU_TENSOR_MAP_SWIZZLE_128B, 0, &m), CUDA_SUCCESS);
    CHECK_INT(encode(4, 16, 2048, 128, 128, 32, CU_TENSOR_MAP_SWIZZLE_64B, 0, &m), CUDA_SUCCESS);
    CHECK_INT(encode(4, 16, 2048, 128, 128, 16, CU_TENSOR_MAP_SWIZZLE_32B, 0, &m), CUDA_SUCCESS);
    CHECK_INT(encode(4, 16, 2048, 128, 128, 128, CU_TENSOR_MAP_SWIZZLE_NONE, 0, &m), CUDA_SUCCESS);
}

/* The planned Hopper space's maps: Q, K, V and O of the seed shapes and a
 * tail, boxes of BLOCK_M / BLOCK_N rows, swizzle spans of 128, 64, 32
 * bytes and none. */
static void planned(void)
{
    static const int shapes[][4] = {{2, 8, 512, 64}, {4, 16, 2048, 128}, {1, 2, 200, 128}, {2, 4, 130, 64}};
    static const unsigned rows[] = {64, 80, 96, 128, 176, 192, 256};
    static const struct {
        unsigned cols;
        CUtensorMapSwizzle sw;
    } boxes[] = {{64, CU_TENSOR_MAP_SWIZZLE_128B},
                 {32, CU_TENSOR_MAP_SWIZZLE_64B},
                 {16, CU_TENSOR_MAP_SWIZZLE_32B},
                 {8, CU_TENSOR_MAP_SWIZZLE_NONE},
                 {64, CU_TENSOR_MAP_SWIZZLE_NONE}};
    int n = 0, ok = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; ++i)
        for (size_t r = 0; r < sizeof rows / sizeof *rows; ++r)
            for (size_t b = 0; b < sizeof boxes / sizeof *boxes; ++b) {
                fattn_tmap m;
                ++n;
                ok += encode(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], rows[r], boxes[b].cols,
                             boxes[b].sw, 0, &m)
                      == CUDA_SUCCESS;
            }
    CHECK_INT(ok, n);
    printf("%d of %d planned tensor maps encode (%s)\n", ok, n, gpu ? "the GPU's driver" : "the mock driver");
}

/* The wgmma family's maps: each tensor-map parameter of each launch of a
 * configuration of its space that is a kernel at the shape (the tiling
 * gate). */
static void family_space(void)
{
    static const int shapes[][4] = {{1, 8, 512, 64},    {2, 8, 512, 64}, {8, 16, 512, 64},
                                    {4, 16, 2048, 128}, {1, 2, 130, 64}, {1, 2, 257, 128}};
    char *path = fattn_search_file("space-wgmma.json");
    fattn_space sp;
    if (fattn_space_load(path, &sp))
        exit(T_HARNESS);
    free(path);
    fattn_gate_limits lim;
    fattn_gate_limits_default(&lim);
    const fattn_arch *arch = fattn_arch_find("sm_90");
    int n = 0, ok = 0;
    for (size_t i = 0; i < sp.count; ++i)
        for (size_t k = 0; k < sizeof shapes / sizeof *shapes; ++k) {
            fattn_config c;
            fattn_space_config(&sp, i, &c);
            const fattn_shape s = {shapes[k][0], shapes[k][1], shapes[k][2], shapes[k][3], 0};
            fattn_gate_input in = {&c, &s, arch, &lim};
            fattn_verdict v;
            if (fattn_gate_tiling(&in, &v) != 1)
                continue;
            fattn_launch l;
            sp.fam->launch(&c, &s, 132, &l);
            for (int a = 0; a < l.nargs; ++a) {
                const fattn_arg *g = &l.args[a];
                if (g->kind != FATTN_ARG_TMAP)
                    continue;
                fattn_tmap m;
                ++n;
                ok += encode(s.batch, s.heads, s.seqlen, s.head_dim, g->box_rows, g->box_cols,
                             fattn_tmap_swizzle(g->swizzle), 0, &m)
                      == CUDA_SUCCESS;
            }
        }
    CHECK(n > 0);
    CHECK_INT(ok, n);
    printf("%d of %d tensor maps of the wgmma family's space encode (%s)\n", ok, n,
           gpu ? "the GPU's driver" : "the mock driver");
    fattn_space_release(&sp);
}

static void refused(void)
{
    fattn_tmap m;
    CHECK_INT(encode(4, 16, 2048, 128, 128, 128, CU_TENSOR_MAP_SWIZZLE_128B, 0, &m), CUDA_ERROR_INVALID_VALUE);
    CHECK_INT(encode(4, 16, 2048, 128, 128, 64, CU_TENSOR_MAP_SWIZZLE_64B, 0, &m), CUDA_ERROR_INVALID_VALUE);
    CHECK_INT(encode(2, 8, 512, 64, 257, 64, CU_TENSOR_MAP_SWIZZLE_128B, 0, &m), CUDA_ERROR_INVALID_VALUE);
    CHECK_INT(encode(2, 8, 512, 36, 64, 32, CU_TENSOR_MAP_SWIZZLE_64B, 0, &m), CUDA_ERROR_INVALID_VALUE);
    CHECK_INT(encode(2, 8, 512, 64, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B, 8, &m), CUDA_ERROR_INVALID_VALUE);
    CHECK_INT(encode(2, 8, 512, 64, 64, 4, CU_TENSOR_MAP_SWIZZLE_NONE, 0, &m), CUDA_ERROR_INVALID_VALUE);
    /* The same maps minus the one fault encode. */
    CHECK_INT(encode(2, 8, 512, 64, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B, 16, &m), CUDA_SUCCESS);
    CHECK_INT(encode(2, 8, 512, 64, 256, 64, CU_TENSOR_MAP_SWIZZLE_128B, 0, &m), CUDA_SUCCESS);
}

int main(int argc, char **argv)
{
    gpu = argc > 1 && !strcmp(argv[1], "--gpu");
    char why[256];
    if (gpu) {
        fattn_gpu_info info;
        if (fattn_gpu_probe(0, &info, why, sizeof why)) {
            printf("SKIP: %s\n", why);
            return T_SKIP;
        }
    } else {
        const char *mock = getenv("FATTN_MOCK_CUDA");
        if (!mock || !*mock) {
            fprintf(stderr, "test_tmap: $FATTN_MOCK_CUDA names no mock driver\n");
            return T_HARNESS;
        }
        setenv("FATTN_LIBCUDA", mock, 1);
    }
    if (fattn_cu_load(&cu, why, sizeof why)) {
        fprintf(stderr, "test_tmap: %s\n", why);
        return T_HARNESS;
    }
    /* A current context, as the engine has when it encodes (the H200's
     * driver answers CUDA_ERROR_INVALID_CONTEXT to every map without one). */
    CUdevice dev;
    CUcontext ctx;
    CUresult r = cu.cuDeviceGet(&dev, 0);
    if (r == CUDA_SUCCESS)
        r = cu.cuDevicePrimaryCtxRetain(&ctx, dev);
    if (r == CUDA_SUCCESS)
        r = cu.cuCtxSetCurrent(ctx);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "test_tmap: no context on device 0: %s\n", fattn_cu_error_name(&cu, r));
        return T_HARNESS;
    }
    T_RUN(maps);
    T_RUN(refused);
    T_RUN(planned);
    T_RUN(family_space);
    return t_exit();
}
