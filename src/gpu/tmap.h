/*
 * tmap.h - the TMA tensor maps of the attention tensors.
 *
 * A Hopper kernel loads tiles of Q, K and V and stores tiles of O with
 * cp.async.bulk.tensor through a CUtensorMap the host encodes with
 * cuTensorMapEncodeTiled. The map itself is opaque, so each is kept here
 * as the description it was encoded from: the simulator runs TMA from the
 * description, the GPU engine encodes it through the driver (the mock
 * driver applies cuda.h's requirements and refuses what the driver would).
 *
 * An attention tensor (batch, heads, seqlen, head_dim) of contiguous fp16
 * is mapped 3-D as (head_dim, seqlen, batch * heads), innermost first, so a
 * box never crosses from one head into the next: rows past seqlen are out
 * of bounds and arrive zero-filled.
 */
#ifndef FATTN_GPU_TMAP_H
#define FATTN_GPU_TMAP_H

#include <cuda.h>
#include <stdint.h>

#include "gpu/driver.h"

#define FATTN_TMAP_MAX_RANK 4

typedef struct fattn_tmap {
    const void *base;                         /* the tensor's global address */
    unsigned rank;                            /* 2 .. FATTN_TMAP_MAX_RANK */
    uint64_t dim[FATTN_TMAP_MAX_RANK];        /* elements, innermost first */
    uint64_t stride[FATTN_TMAP_MAX_RANK - 1]; /* bytes, of dim 1 .. rank - 1 */
    uint32_t box[FATTN_TMAP_MAX_RANK];        /* elements a load or store moves */
    CUtensorMapSwizzle swizzle;               /* NONE, 32B, 64B or 128B */
} fattn_tmap;

/* The map of an attention tensor at `base` with boxes of box_rows rows
 * (along seqlen) by box_cols elements (along head_dim). Describes only:
 * what the driver would refuse is the driver's (or the mock's) to say. */
void fattn_tmap_attention(fattn_tmap *m, const void *base, int batch, int heads, int seqlen, int head_dim,
                          unsigned box_rows, unsigned box_cols, CUtensorMapSwizzle swizzle);

/* The swizzle of `bytes` (0, 32, 64, 128); CU_TENSOR_MAP_SWIZZLE_NONE for
 * any other. */
CUtensorMapSwizzle fattn_tmap_swizzle(unsigned bytes);

/* Encodes m through the driver: fp16, no interleave, element strides 1,
 * L2 promotion 128 bytes, out-of-bounds elements zero. Returns the driver's
 * answer (CUDA_ERROR_INVALID_VALUE for a map it refuses). */
CUresult fattn_tmap_encode(const fattn_cu *cu, const fattn_tmap *m, CUtensorMap *out);

/* Bytes one box moves into shared memory: its full size, the zero-filled
 * out-of-bounds part included (what an mbarrier's expect_tx must count). */
uint32_t fattn_tmap_box_bytes(const fattn_tmap *m);

#endif
