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
 *    36), and a base 8 bytes off are refused.
 */
#include "t.h"

#include <stdlib.h>

#include "gpu/driver.h"
#include "gpu/tmap.h"

static fattn_cu cu;
static _Alignas(16) unsigned char tensor[1 << 20];

static CUresult encode(int b, int h, int s, int d, unsigned rows, unsigned cols, CUtensorMapSwizzle sw, size_t off,
                       fattn_tmap *m)
{
    CUtensorMap map;
    fattn_tmap_attention(m, tensor + off, b, h, s, d, rows, cols, sw);
    CUresult r = fattn_tmap_encode(&cu, m, &map);
    if (r == CUDA_SUCCESS) {
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

int main(void)
{
    const char *mock = getenv("FATTN_MOCK_CUDA");
    if (!mock || !*mock) {
        fprintf(stderr, "test_tmap: $FATTN_MOCK_CUDA names no mock driver\n");
        return T_HARNESS;
    }
    setenv("FATTN_LIBCUDA", mock, 1);
    char why[256];
    if (fattn_cu_load(&cu, why, sizeof why)) {
        fprintf(stderr, "test_tmap: %s\n", why);
        return T_HARNESS;
    }
    T_RUN(maps);
    T_RUN(refused);
    return t_exit();
}
