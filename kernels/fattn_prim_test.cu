/*
 * fattn_prim_test.cu - the primitives of fattn_prim.h, each exercised once,
 * for holding the simulator to the hardware bit for bit
 * (tests/test_sim_prims.c): the same file runs on the GPU through NVRTC and
 * on the host through the simulator, and both outputs are compared.
 *
 * One launch: a cluster of 2 blocks (SPLIT_KV = 2, sm_90) of 128 threads,
 * over Q, K, V of 64 x 64 fp16 holding small integers (every product and sum
 * below is exact). Block r writes o[r * 2048, (r + 1) * 2048), in halves:
 *   [   0,  256)  warp 0: ldmatrix.x4 of a 16x16 tile of Q (rows 16r..16r+15,
 *                 columns 0..15), the 4 registers of each lane
 *   [ 256,  512)  warp 0: ldmatrix.x4.trans of a 16x16 tile of K, likewise
 *   [ 512,  768)  warp 0: the two mma.sync.m16n8k16 of the first tile times
 *                 the second (B from the .trans fragments), 8 floats a lane
 *   [ 768, 1024)  warp 1: shfl.sync.bfly of 3 * lane + r with lane masks
 *                 1, 2, 4, 8, 16, then the lane's own value (8 slots a lane)
 *   [1024, 1536)  threads 0..63: cp.async.cg 16 bytes of Q, zero-filled
 *                 (src-size 0) where tid % 3 == 0
 *   [1536, 1792)  threads 0..127: cp.async.ca 4 bytes of V, zero-filled
 *                 where tid % 5 == 0
 *   [1792, 1920)  ld.shared::cluster of the peer block's float at tid
 *                 (the peer wrote 200 * rank + tid before barrier.cluster)
 *   [1920, 2048)  threads 0..31: ld.shared::cluster.v4 of the peer's floats
 *                 4 * tid .. 4 * tid + 3
 * The configuration macros NVRTC and the simulator pass are ignored but
 * SPLIT_KV, which must be 2.
 */
#include <cuda_fp16.h>
#include "fattn_prim.h"

#ifndef SPLIT_KV
#define SPLIT_KV 2
#endif
static_assert(SPLIT_KV == 2, "the primitive test runs a cluster of 2 blocks");

#define PT_THREADS 128
#define PT_A       0    /* 16 x 16 halves, rows of 32 bytes */
#define PT_B       512  /* 16 x 16 halves */
#define PT_CP16    1024 /* 64 x 16 bytes */
#define PT_CP4     2048 /* 128 x 4 bytes */
#define PT_DS      2560 /* 128 floats */
#define PT_SMEM    3072

extern "C" __device__ const unsigned int fattn_smem_bytes = PT_SMEM;
extern "C" __device__ const unsigned int fattn_threads = PT_THREADS;

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(PT_THREADS)
fattn_fwd(const half *__restrict__ q, const half *__restrict__ k, const half *__restrict__ v,
          half *__restrict__ o, int batch, int heads, int seqlen, float scale)
{
    FATTN_DYNAMIC_SMEM(smem);
    (void)batch, (void)heads, (void)seqlen, (void)scale;
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const unsigned rank = cluster_rank();
    half *out = o + rank * 2048;

    /* The two tiles, a 32-bit pair of halves per thread. */
    {
        const int row = tid / 8, col = (tid % 8) * 2;
        st_shared(smem + PT_A + row * 32 + col * 2, ld_global<unsigned>(q + (16 * rank + row) * 64 + col));
        st_shared(smem + PT_B + row * 32 + col * 2, ld_global<unsigned>(k + (16 * rank + row) * 64 + col));
    }
    /* The peer's floats for the DSMEM reads. */
    st_shared(smem + PT_DS + tid * 4, (float)(200 * rank + tid));
    /* cp.async, some zero-filled. */
    if (tid < 64)
        cp_async<16>(smem_addr(smem + PT_CP16 + tid * 16), q + (64 * rank + tid) * 8, tid % 3 != 0);
    cp_async<4>(smem_addr(smem + PT_CP4 + tid * 4), v + (128 * rank + tid) * 2, tid % 5 != 0);
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();

    if (warp == 0) {
        /* Lane l addresses row l % 16, columns (l / 16) * 8 .. + 7: the four
         * 8x8 matrices are rows 0-7 / 8-15 of columns 0-7, then of 8-15. */
        const int row = lane % 16, col = (lane / 16) * 8;
        unsigned a[4], b[4];
        ldmatrix_x4(a, smem_addr(smem + PT_A + row * 32 + col * 2));
        ldmatrix_x4_trans(b, smem_addr(smem + PT_B + row * 32 + col * 2));
        for (int i = 0; i < 4; ++i) {
            st_global(out + lane * 8 + i * 2, a[i]);
            st_global(out + 256 + lane * 8 + i * 2, b[i]);
        }
        float d0[4] = {0.f, 0.f, 0.f, 0.f}, d1[4] = {0.f, 0.f, 0.f, 0.f};
        mma_16816(d0, a, b[0], b[1]);
        mma_16816(d1, a, b[2], b[3]);
        for (int i = 0; i < 4; ++i) {
            st_global(out + 512 + lane * 8 + i, __float2half_rn(d0[i]));
            st_global(out + 512 + lane * 8 + 4 + i, __float2half_rn(d1[i]));
        }
    } else if (warp == 1) {
        const float x = (float)(3 * lane + (int)rank);
        float r[8];
        for (int m = 0; m < 5; ++m)
            r[m] = __shfl_xor_sync(0xffffffffu, x, 1 << m);
        r[5] = r[6] = r[7] = x;
        for (int i = 0; i < 8; ++i)
            st_global(out + 768 + lane * 8 + i, __float2half_rn(r[i]));
    }
    if (tid < 64)
        st_global(out + 1024 + tid * 8, ld_shared<uint4>(smem + PT_CP16 + tid * 16));
    st_global(out + 1536 + tid * 2, ld_shared<unsigned>(smem + PT_CP4 + tid * 4));

    cluster_sync();
    const unsigned peer = rank ^ 1u;
    st_global(out + 1792 + tid, __float2half_rn(ld_cluster(cluster_map(smem_addr(smem + PT_DS + tid * 4), peer))));
    if (tid < 32) {
        const float4 x = ld_cluster_v4(cluster_map(smem_addr(smem + PT_DS + tid * 16), peer));
        st_global(out + 1920 + tid * 4, __float2half_rn(x.x));
        st_global(out + 1920 + tid * 4 + 1, __float2half_rn(x.y));
        st_global(out + 1920 + tid * 4 + 2, __float2half_rn(x.z));
        st_global(out + 1920 + tid * 4 + 3, __float2half_rn(x.w));
    }
    /* The peer's shared memory must outlive the reads. */
    cluster_sync();
}
