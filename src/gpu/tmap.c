/*
 * tmap.c - describing and encoding the attention tensors' TMA maps.
 */
#include "gpu/tmap.h"

#include <string.h>

void fattn_tmap_attention(fattn_tmap *m, const void *base, int batch, int heads, int seqlen, int head_dim,
                          unsigned box_rows, unsigned box_cols, CUtensorMapSwizzle swizzle)
{
    memset(m, 0, sizeof *m);
    m->base = base;
    m->rank = 3;
    m->dim[0] = (uint64_t)head_dim;
    m->dim[1] = (uint64_t)seqlen;
    m->dim[2] = (uint64_t)batch * (uint64_t)heads;
    m->stride[0] = (uint64_t)head_dim * 2;
    m->stride[1] = (uint64_t)seqlen * (uint64_t)head_dim * 2;
    m->box[0] = box_cols;
    m->box[1] = box_rows;
    m->box[2] = 1;
    m->swizzle = swizzle;
}

CUresult fattn_tmap_encode(const fattn_cu *cu, const fattn_tmap *m, CUtensorMap *out)
{
    const cuuint32_t ones[FATTN_TMAP_MAX_RANK] = {1, 1, 1, 1};
    cuuint64_t dim[FATTN_TMAP_MAX_RANK], stride[FATTN_TMAP_MAX_RANK - 1];
    cuuint32_t box[FATTN_TMAP_MAX_RANK];
    if (m->rank < 1 || m->rank > FATTN_TMAP_MAX_RANK)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < m->rank; ++i) {
        dim[i] = m->dim[i];
        box[i] = m->box[i];
        if (i + 1 < m->rank)
            stride[i] = m->stride[i];
    }
    return cu->cuTensorMapEncodeTiled(out, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, m->rank, (void *)(uintptr_t)m->base, dim,
                                      stride, box, ones, CU_TENSOR_MAP_INTERLEAVE_NONE, m->swizzle,
                                      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

uint32_t fattn_tmap_box_bytes(const fattn_tmap *m)
{
    uint32_t bytes = 2;
    for (unsigned i = 0; i < m->rank; ++i)
        bytes *= m->box[i];
    return bytes;
}

CUtensorMapSwizzle fattn_tmap_swizzle(unsigned bytes)
{
    return bytes == 32    ? CU_TENSOR_MAP_SWIZZLE_32B
           : bytes == 64  ? CU_TENSOR_MAP_SWIZZLE_64B
           : bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                          : CU_TENSOR_MAP_SWIZZLE_NONE;
}
