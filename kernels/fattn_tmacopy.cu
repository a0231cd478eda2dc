/*
 * fattn_tmacopy.cu - the tmacopy family's kernel: O = V, one box of
 * BOX_ROWS rows of one head per block, moved by TMA into shared memory and
 * back out (src/family/tmacopy.c). Not an attention kernel: it carries the
 * Hopper paths of the family interface (tensor maps the host builds for each
 * input-buffer set, passed as __grid_constant__ parameters; an mbarrier
 * completing on the load's transaction count; a TMA store; sm_90a) through
 * the simulator, the GPU engine and export.
 *
 * Launch: grid (ceil(seqlen / BOX_ROWS), heads, batch), FATTN_THREADS
 * threads, FATTN_SMEM_BYTES of dynamic shared memory. The tensor maps are
 * V's and O's, 3-D (head_dim, seqlen, batch * heads) with boxes of
 * (HEAD_DIM, BOX_ROWS), no swizzle (gpu/tmap.h): rows past seqlen load as
 * zeros and are not stored.
 */
#include <cuda_fp16.h>
#include "fattn_prim_sm90.h"

/* fattn-tune passes -DBOX_ROWS= and -DHEAD_DIM=; an exported header
 * defines the FATTN_ names. */
#if !defined(BOX_ROWS) && defined(FATTN_BOX_ROWS)
#define BOX_ROWS FATTN_BOX_ROWS
#endif
#if !defined(HEAD_DIM) && defined(FATTN_HEAD_DIM)
#define HEAD_DIM FATTN_HEAD_DIM
#endif
#ifndef BOX_ROWS
#define BOX_ROWS 64
#endif
#ifndef HEAD_DIM
#define HEAD_DIM 64
#endif

/* The kernel's own (an exported header's are the same numbers). */
#undef FATTN_THREADS
#undef FATTN_SMEM_BYTES
#define FATTN_THREADS   32
#define FATTN_BOX_BYTES (BOX_ROWS * HEAD_DIM * 2)
/* The box at a 128-byte boundary (TMA's), its mbarrier after it. */
#define FATTN_SMEM_BYTES (FATTN_BOX_BYTES + 256)

extern "C" __device__ const unsigned int fattn_smem_bytes = FATTN_SMEM_BYTES;
extern "C" __device__ const unsigned int fattn_threads = FATTN_THREADS;

extern "C" __global__ void __launch_bounds__(FATTN_THREADS, 1)
    fattn_tmacopy(const __grid_constant__ fattn_tensormap tm_v, const __grid_constant__ fattn_tensormap tm_o,
                  int batch, int heads, int seqlen)
{
    FATTN_DYNAMIC_SMEM(smem);
    (void)batch, (void)seqlen;
    const unsigned raw = smem_addr(smem), box = (raw + 127) / 128 * 128, bar = box + FATTN_BOX_BYTES;
    const int row = (int)blockIdx.x * BOX_ROWS, bh = (int)(blockIdx.z * heads + blockIdx.y);
    if (threadIdx.x != 0)
        return;
    mbar_init(bar, 1);
    fence_mbarrier_init();
    /* The whole box counts, its zero-filled rows past seqlen included. */
    mbar_arrive_expect_tx(bar, FATTN_BOX_BYTES);
    tma_load_3d(box, &tm_v, bar, 0, row, bh);
    while (!mbar_try_wait(bar, 0)) {
    }
    tma_store_3d(&tm_o, box, 0, row, bh);
    bulk_commit();
    /* The shared source stays until the store has read it. */
    bulk_wait_read<0>();
}
