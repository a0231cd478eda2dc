/*
 * fattn_prim_sm90_test.cu - the primitives of fattn_prim_sm90.h, each mode
 * once, for holding the simulator to the PTX ISA and to the hardware bit
 * for bit (tests/test_sim_prims_sm90.c): the same file runs on the GPU
 * through NVRTC (sm_90a) and on the host through the simulator.
 *
 * Each launch runs one mode: the mode is gridDim.x - 1, and only the last
 * block works (the others return at once), so that every mode is a launch
 * of its own and a hang names its mode. Blocks of 384 threads (three
 * warpgroups, __launch_bounds__(384, 1): 168 registers a thread).
 *
 * Q, K, V and O are (B=1, H=2, S=200, D=128) fp16 holding integers in
 * [-3, 3], so that every product and sum below is exact. The host encodes
 * the tensor maps of the table in tests/test_sim_prims_sm90.c (PT_MAP_*
 * below are their indices), 3-D (D, S, B*H), into fattn_tmaps. Outputs go
 * to O, read as 32-bit words w[]; w[PT_ERR] gets a mode's error code (1: an
 * mbarrier wait timed out) and is otherwise left as it was.
 *
 * Modes:
 *   0-3    TMA load, swizzle none / 32 / 64 / 128 B: two boxes of 64 rows of
 *          Q's head 1 (rows 0-63, and 192-255 of which 200-255 lie outside
 *          and arrive as zeros) completing on one mbarrier with expect_tx of
 *          their full size; w[] = the shared-memory image of both boxes
 *   4-8    wgmma SS, A = Q[0:64, 0:K], B = K[0:N, 0:K] both K-major, D = A B^T
 *          over K / 16 chained slices (scale-d 0 then 1): N = 64 (128 B
 *          swizzle, K 64), 128 (64 B, K 32), 176 (32 B, K 16), 192 (none,
 *          K 16), 256 (128 B, K 64; rows 200-255 of B zero); w[t * N/2 + i]
 *          = thread t's accumulator i
 *   9-11   wgmma SS, B = V[0:16, 0:N] MN-major (transpose-B): N = 128
 *          (128 B, two boxes of 64 columns), 64 (64 B, two of 32), 64
 *          (none, eight of 8); A = Q[0:64, 0:16] (128 B); D = A B
 *   12     wgmma RS, N = 176: A = Q[0:64, 0:16] from registers, B as mode 6
 *   13     wgmma RS, N = 64, B = V[0:16, 0:64] MN-major (128 B)
 *   14     D to A: S = Q[0:64, 0:64] K[0:64, 0:64]^T (SS, N = 64), P = fp16(S)
 *          kept in registers as the A operand of O = P V[0:64, 0:64] (RS,
 *          transpose-B, four slices); w[t * 32 + i] = O's accumulators
 *   15     TMA store: O's head 1 rows 192-255, columns 0-63 from shared
 *          memory (128 B swizzle) holding 1000 + 64 r + c at (r, c); rows
 *          past 200 are not written
 *   16     setmaxnreg: warpgroup 0 .dec 40, 1 and 2 .inc 232 (the block's
 *          64512 registers exactly); w[tid] = 7 * tid + warpgroup after
 *   17     named barriers: warpgroup 0 writes shared memory and bar.arrive
 *          (1, 384); warpgroups 1-2 bar.sync (1, 384), read it, bar.sync
 *          (2, 256) among themselves, and read what the other wrote;
 *          w[tid] for threads 128-383
 *   18     a two-slot pipeline: thread 0 loads K[64j:64j+64, 0:64] (128 B)
 *          for j = 0..3 into slot j % 2 on mbarrier full[j % 2], waiting for
 *          empty[j % 2] before reusing a slot; warpgroup 1 waits on full,
 *          accumulates S += Q[0:64, 0:64] K_j^T (four k-slices each) and,
 *          once its wgmmas are retired, arrives on empty; w[t * 32 + i]
 * Modes 19 and 20 run in a cluster of two blocks: launched as a grid of
 * (2, mode + 1) with clusters of (2, 1, 1), the mode is gridDim.y - 1 and
 * only the last row of blocks works, both ranks. Each block leaves its
 * results at w + rank * PT_RANK_WORDS.
 *   19     TMA with L2 cache hints and multicast: rank r loads K[32r:32r+32,
 *          0:64] (128 B swizzle) to both blocks (ctaMask 0b11, EVICT_LAST) at
 *          the same offset 4096 r, V's head 1 rows 64 + 64r .. + 63 into the
 *          other block only (ctaMask 1 << (1 - r)), and Q[64r:64r+64, 0:64]
 *          to itself (EVICT_FIRST); each block's one mbarrier expects the 3
 *          boxes it receives; w[] = its shared images of K, V and Q
 *   20     the two-slot pipeline of mode 18 over the cluster, as FA3 runs it
 *          with a cluster of two, K tile j being K[48j:48j+64, 0:64] (rows
 *          past 200 zero): each block's producer loads half of every
 *          K tile, multicast to both blocks, after its own empty barrier
 *          (two arrivals: both blocks' consumers) has released the slot;
 *          each block's consumer waits on its own full barrier, computes
 *          S_r += Q[64r:64r+64, 0:64] K_j^T and arrives on the empty barrier
 *          of both blocks (mbarrier.arrive.release.cluster through mapa);
 *          a cluster barrier before either block exits; w[t * 32 + i]
 * The configuration macros NVRTC and the simulator pass are ignored.
 */
#include <cuda_fp16.h>
#include "fattn_gmma.h"
#include "fattn_prim_sm90.h"

#ifndef SPLIT_KV
#define SPLIT_KV 1
#endif

#define PT_THREADS 384
#define PT_MODES   21
#define PT_CLUSTER_MODE 19 /* the first mode of a cluster of two */
#define PT_RANK_WORDS   8192 /* each rank's part of w[] in the cluster modes */
#define PT_A       0                   /* 16 KB */
#define PT_B       16384               /* 32 KB */
#define PT_C       49152               /* 16 KB */
#define PT_BAR     65536               /* mbarriers: 0, full[2] and empty[2] of mode 18, empty2[2] of mode 20 */
#define PT_SMEM    (65536 + 64 + 1024) /* and the slack for rounding the base up to 1024 */
#define PT_ERR     25599               /* the last 32-bit word of O */

/* The tensor maps (the host's table, in this order). */
#define PT_MAP_Q_NONE8  0  /* Q, box 8 x 64, no swizzle */
#define PT_MAP_Q_SW32   1  /* Q, 16 x 64 */
#define PT_MAP_Q_SW64   2  /* Q, 32 x 64 */
#define PT_MAP_Q_SW128  3  /* Q, 64 x 64 */
#define PT_MAP_Q_NONE64 4  /* Q, 64 x 64, no swizzle */
#define PT_MAP_K_SW64   5  /* K, 32 x 128 */
#define PT_MAP_K_SW32   6  /* K, 16 x 176 */
#define PT_MAP_K_NONE8  7  /* K, 8 x 192 */
#define PT_MAP_K_SW128  8  /* K, 64 x 256 */
#define PT_MAP_K_SW128S 9  /* K, 64 x 64 */
#define PT_MAP_V_SW128  10 /* V, 64 x 16 */
#define PT_MAP_V_SW128L 11 /* V, 64 x 64 */
#define PT_MAP_V_SW64   12 /* V, 32 x 16 */
#define PT_MAP_V_NONE8  13 /* V, 8 x 16 */
#define PT_MAP_O_SW128  14 /* O, 64 x 64 */
#define PT_MAP_K_SW128H 15 /* K, 64 x 32: half a 64-row tile */
#define PT_MAPS         16

extern "C" __device__ const unsigned int fattn_smem_bytes = PT_SMEM;
extern "C" __device__ const unsigned int fattn_threads = PT_THREADS;
extern "C" {
__constant__ fattn_tensormap fattn_tmaps[PT_MAPS];
}
extern "C" __device__ const unsigned int fattn_ntmaps = PT_MAPS;

/* An mbarrier wait that gives up (writing error code 1) instead of hanging. */
__device__ __forceinline__ int wait_bounded(unsigned bar, unsigned parity, unsigned *w)
{
    for (int i = 0; i < (1 << 22); ++i)
        if (mbar_try_wait(bar, parity))
            return 1;
    st_global(w + PT_ERR, 1u);
    return 0;
}

/* Thread 0 loads `boxes` boxes of map m (columns c0 + i * dc, rows row,
 * head h) to dst + i * box_bytes, all completing on bar. */
__device__ __forceinline__ void load_boxes(unsigned dst, int m, unsigned bar, int boxes, int c0, int dc, int row, int h,
                                           unsigned box_bytes)
{
    for (int i = 0; i < boxes; ++i)
        tma_load_3d(dst + i * box_bytes, &fattn_tmaps[m], bar, c0 + i * dc, row, h);
}

template <int N> __device__ __forceinline__ void store_d(unsigned *w, float (&d)[N / 2])
{
    const unsigned t = threadIdx.x % 128;
    for (int i = 0; i < N / 2; ++i)
        st_global(w + t * (N / 2) + i, d[i]);
}

/* Modes 4-8: D = A B^T, both K-major, `mode` the swizzle, K = 16 * SLICES. */
template <int N, int MODE, int SLICES>
__device__ void mode_ss_k(unsigned base, unsigned bar, unsigned *w, int amap, int bmap)
{
    const unsigned cols = MODE == FATTN_GMMA_NONE ? 8 : fattn_gmma_row_bytes(MODE) / 2;
    const int boxes = MODE == FATTN_GMMA_NONE ? 2 : 1;
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(bar, boxes * cols * 2 * (64 + N));
        load_boxes(base + PT_A, amap, bar, boxes, 0, 8, 0, 0, cols * 2 * 64);
        load_boxes(base + PT_B, bmap, bar, boxes, 0, 8, 0, 0, cols * 2 * N);
    }
    if (threadIdx.x >= 128 || !wait_bounded(bar, 0, w))
        return;
    float d[N / 2];
    wgmma_fence();
    for (int s = 0; s < SLICES; ++s)
        wgmma_ss<N>(d, fattn_gmma_desc_k(base + PT_A + fattn_gmma_k_offset(0, 64, 16 * s, MODE), 64, MODE),
                    fattn_gmma_desc_k(base + PT_B + fattn_gmma_k_offset(0, N, 16 * s, MODE), N, MODE), s > 0);
    wgmma_commit();
    wgmma_wait<0>(d);
    store_d<N>(w, d);
}

/* A = Q[0:64, 0:16] through the 128 B map, at PT_A; B = V[0:16, 0:N] as
 * `boxes` MN-major boxes of map bmap at PT_B. */
__device__ __forceinline__ void load_a_and_v(unsigned base, unsigned bar, int bmap, int boxes, int cols, int a)
{
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(bar, (a ? 64 * 64 * 2 : 0) + boxes * cols * 16 * 2);
        if (a)
            load_boxes(base + PT_A, PT_MAP_Q_SW128, bar, 1, 0, 0, 0, 0, 0);
        load_boxes(base + PT_B, bmap, bar, boxes, 0, cols, 0, 0, cols * 16 * 2);
    }
}

/* Modes 9-11: D = A B, B MN-major. */
template <int N, int MODE> __device__ void mode_ss_mn(unsigned base, unsigned bar, unsigned *w, int bmap)
{
    const int cols = MODE == FATTN_GMMA_NONE ? 8 : (int)fattn_gmma_row_bytes(MODE) / 2;
    load_a_and_v(base, bar, bmap, N / cols, cols, 1);
    if (threadIdx.x >= 128 || !wait_bounded(bar, 0, w))
        return;
    float d[N / 2];
    wgmma_fence();
    wgmma_ss<N, 0, 1>(d, fattn_gmma_desc_k(base + PT_A, 64, FATTN_GMMA_SW128),
                      fattn_gmma_desc_mn_boxes(base + PT_B, 16, MODE), 0);
    wgmma_commit();
    wgmma_wait<0>(d);
    store_d<N>(w, d);
}

/* This thread's A fragment of Q[0:64, k0:k0+16] (the wgmma register
 * layout: half e of thread t at row 16 (t / 32) + (t % 32) / 4 + 8 ((e / 2)
 * % 2), column 8 (e / 4) + 2 (t % 4) + e % 2), from global memory. */
__device__ __forceinline__ void a_from_global(unsigned (&a)[4], const half *q)
{
    const int t = threadIdx.x % 128, lane = t % 32;
    for (int r = 0; r < 4; ++r) {
        unsigned u[2];
        for (int h = 0; h < 2; ++h) {
            const int e = 2 * r + h;
            const int row = 16 * (t / 32) + lane / 4 + 8 * ((e / 2) % 2), col = 8 * (e / 4) + 2 * (lane % 4) + e % 2;
            u[h] = ld_global<unsigned short>(q + row * 128 + col);
        }
        a[r] = u[0] | u[1] << 16;
    }
}

/* Mode 18: the pipeline. */
__device__ void mode_pipeline(unsigned base, unsigned bar, unsigned *w)
{
    const unsigned full = bar + 8, empty = bar + 24, tile = 64 * 64 * 2;
    const int tid = threadIdx.x;
    if (tid == 0) {
        mbar_arrive_expect_tx(bar, tile);
        load_boxes(base + PT_A, PT_MAP_Q_SW128, bar, 1, 0, 0, 0, 0, 0);
        for (int j = 0; j < 4; ++j) {
            const int s = j % 2;
            if (j >= 2 && !wait_bounded(empty + 8 * s, (j / 2 - 1) & 1, w))
                return;
            mbar_arrive_expect_tx(full + 8 * s, tile);
            tma_load_3d(base + PT_B + s * tile, &fattn_tmaps[PT_MAP_K_SW128S], full + 8 * s, 0, 64 * j, 0);
        }
        return;
    }
    if (tid < 128 || tid >= 256 || !wait_bounded(bar, 0, w))
        return;
    float acc[32];
    for (int j = 0; j < 4; ++j) {
        const int s = j % 2;
        if (!wait_bounded(full + 8 * s, (j / 2) & 1, w))
            return;
        wgmma_fence();
        for (int k = 0; k < 4; ++k)
            wgmma_ss<64>(
                acc,
                fattn_gmma_desc_k(base + PT_A + fattn_gmma_k_offset(0, 64, 16 * k, FATTN_GMMA_SW128), 64,
                                  FATTN_GMMA_SW128),
                fattn_gmma_desc_k(base + PT_B + s * tile + fattn_gmma_k_offset(0, 64, 16 * k, FATTN_GMMA_SW128), 64,
                                  FATTN_GMMA_SW128),
                j > 0 || k > 0);
        wgmma_commit();
        wgmma_wait<0>(acc);
        if (tid == 128)
            mbar_arrive(empty + 8 * s);
    }
    store_d<64>(w, acc);
}

/* Mode 19: cache hints and multicast; rank r of the cluster. */
__device__ void mode_multicast(unsigned base, unsigned bar, unsigned *w, unsigned r, const unsigned char *sm)
{
    const unsigned tile = 64 * 64 * 2;
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(bar, 3 * tile);
        tma_load_3d_multicast(base + PT_A + r * tile / 2, &fattn_tmaps[PT_MAP_K_SW128H], bar, 0, 32 * r, 0, 3,
                              FATTN_L2_EVICT_LAST);
        tma_load_3d_multicast(base + PT_B, &fattn_tmaps[PT_MAP_V_SW128L], bar, 0, 64 + 64 * r, 1,
                              (unsigned short)(1u << (1 - r)), FATTN_L2_EVICT_LAST);
        tma_load_3d_hint(base + PT_C, &fattn_tmaps[PT_MAP_Q_SW128], bar, 0, 64 * r, 0, FATTN_L2_EVICT_FIRST);
    }
    if (!wait_bounded(bar, 0, w))
        return;
    for (unsigned i = threadIdx.x; i < 3 * tile / 4; i += PT_THREADS) {
        const unsigned region = i / (tile / 4), at = region == 0 ? PT_A : region == 1 ? PT_B : PT_C;
        st_global(w + r * PT_RANK_WORDS + i, ld_shared<unsigned>(sm + at + 4 * (i % (tile / 4))));
    }
}

/* Mode 20: the pipeline over a cluster of two; rank r. Every thread reaches
 * the cluster barrier at the end (a wait that timed out included). */
__device__ void mode_cluster_pipeline(unsigned base, unsigned bar, unsigned *w, unsigned r)
{
    const unsigned full = bar + 8, empty = bar + 40, tile = 64 * 64 * 2;
    const int tid = threadIdx.x;
    if (tid == 0) {
        mbar_init(empty, 2);
        mbar_init(empty + 8, 2);
        fence_mbarrier_init();
    }
    cluster_sync(); /* both blocks' barriers initialized before either block's arrivals and loads */
    int ok = 1;
    if (tid == 0) {
        mbar_arrive_expect_tx(bar, tile);
        tma_load_3d_hint(base + PT_A, &fattn_tmaps[PT_MAP_Q_SW128], bar, 0, 64 * r, 0, FATTN_L2_EVICT_FIRST);
        for (int j = 0; j < 4 && ok; ++j) {
            const int s = j % 2;
            if (j >= 2 && !wait_bounded(empty + 8 * s, (j / 2 - 1) & 1, w))
                ok = 0;
            if (ok) {
                mbar_arrive_expect_tx(full + 8 * s, tile);
                tma_load_3d_multicast(base + PT_B + s * tile + r * tile / 2, &fattn_tmaps[PT_MAP_K_SW128H],
                                      full + 8 * s, 0, 48 * j + 32 * (int)r, 0, 3, FATTN_L2_EVICT_LAST);
            }
        }
    } else if (tid >= 128 && tid < 256 && wait_bounded(bar, 0, w)) {
        float acc[32];
        for (int j = 0; j < 4 && ok; ++j) {
            const int s = j % 2;
            if (!wait_bounded(full + 8 * s, (j / 2) & 1, w)) {
                ok = 0;
                break;
            }
            wgmma_fence();
            for (int k = 0; k < 4; ++k)
                wgmma_ss<64>(acc,
                             fattn_gmma_desc_k(base + PT_A + fattn_gmma_k_offset(0, 64, 16 * k, FATTN_GMMA_SW128),
                                               64, FATTN_GMMA_SW128),
                             fattn_gmma_desc_k(base + PT_B + s * tile
                                                   + fattn_gmma_k_offset(0, 64, 16 * k, FATTN_GMMA_SW128),
                                               64, FATTN_GMMA_SW128),
                             j > 0 || k > 0);
            wgmma_commit();
            wgmma_wait<0>(acc);
            if (tid == 128) {
                mbar_arrive_cluster(cluster_map(empty + 8 * s, 0));
                mbar_arrive_cluster(cluster_map(empty + 8 * s, 1));
            }
        }
        if (ok)
            store_d<64>(w + r * PT_RANK_WORDS, acc);
    }
    cluster_sync(); /* no block exits while the other may still arrive on its barriers */
}

/* Mode 14: S = Q K^T, P = fp16(S) as the A operand of O = P V. */
__device__ void mode_reuse(unsigned base, unsigned bar, unsigned *w)
{
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(bar, 3 * 64 * 64 * 2);
        load_boxes(base + PT_A, PT_MAP_Q_SW128, bar, 1, 0, 0, 0, 0, 0);
        load_boxes(base + PT_B, PT_MAP_K_SW128S, bar, 1, 0, 0, 0, 0, 0);
        load_boxes(base + PT_C, PT_MAP_V_SW128L, bar, 1, 0, 0, 0, 0, 0);
    }
    if (threadIdx.x >= 128 || !wait_bounded(bar, 0, w))
        return;
    float s[32], o[32];
    wgmma_fence();
    for (int k = 0; k < 4; ++k)
        wgmma_ss<64>(
            s,
            fattn_gmma_desc_k(base + PT_A + fattn_gmma_k_offset(0, 64, 16 * k, FATTN_GMMA_SW128), 64, FATTN_GMMA_SW128),
            fattn_gmma_desc_k(base + PT_B + fattn_gmma_k_offset(0, 64, 16 * k, FATTN_GMMA_SW128), 64, FATTN_GMMA_SW128),
            k > 0);
    wgmma_commit();
    wgmma_wait<0>(s);
    /* Slice j of P: accumulators 8j .. 8j + 7 are the A halves 0-7. */
    unsigned p[4][4];
    for (int j = 0; j < 4; ++j)
        for (int r = 0; r < 4; ++r) {
            const half2 h = __floats2half2_rn(s[8 * j + 2 * r], s[8 * j + 2 * r + 1]);
            p[j][r] = *reinterpret_cast<const unsigned *>(&h);
        }
    wgmma_fence();
    for (int j = 0; j < 4; ++j)
        wgmma_rs<64, 1>(o, p[j], fattn_gmma_desc_mn_boxes(base + PT_C + 16 * j * 128, 64, FATTN_GMMA_SW128), j > 0);
    wgmma_commit();
    wgmma_wait<0>(o);
    store_d<64>(w, o);
}

extern "C" __global__ void __launch_bounds__(PT_THREADS, 1)
    fattn_fwd(const half *__restrict__ q, const half *__restrict__ k, const half *__restrict__ v, half *__restrict__ o,
              int batch, int heads, int seqlen, float scale)
{
    FATTN_DYNAMIC_SMEM(smem);
    (void)k, (void)v, (void)batch, (void)heads, (void)seqlen, (void)scale;
    const int in_cluster = gridDim.y > 1;
    const unsigned mode = in_cluster ? gridDim.y - 1 : gridDim.x - 1;
    if ((in_cluster ? blockIdx.y : blockIdx.x) != mode)
        return;
    const int tid = threadIdx.x;
    const unsigned raw = smem_addr(smem), pad = (1024 - raw % 1024) % 1024, base = raw + pad;
    unsigned char *sm = smem + pad;
    const unsigned bar = base + PT_BAR;
    unsigned *w = reinterpret_cast<unsigned *>(o);
    if (tid == 0) {
        for (int i = 0; i < 5; ++i)
            mbar_init(bar + 8 * i, 1);
        fence_mbarrier_init();
    }
    __syncthreads();
    if (mode == PT_CLUSTER_MODE) {
        const unsigned r = cluster_rank();
        cluster_sync(); /* the other block's mbarrier initialized before this block's multicast signals it */
        mode_multicast(base, bar, w, r, sm);
        cluster_sync();
        return;
    }
    if (mode == PT_CLUSTER_MODE + 1) {
        mode_cluster_pipeline(base, bar, w, cluster_rank());
        return;
    }

    if (mode < 4) {
        const int map = mode == 0   ? PT_MAP_Q_NONE64
                        : mode == 1 ? PT_MAP_Q_SW32
                        : mode == 2 ? PT_MAP_Q_SW64
                                    : PT_MAP_Q_SW128;
        const unsigned cols = mode == 0 ? 64 : 8u << mode, box = cols * 2 * 64;
        if (tid == 0) {
            mbar_arrive_expect_tx(bar, 2 * box);
            tma_load_3d(base, &fattn_tmaps[map], bar, 0, 0, 1);
            tma_load_3d(base + box, &fattn_tmaps[map], bar, 0, 192, 1);
        }
        if (!wait_bounded(bar, 0, w))
            return;
        for (unsigned i = tid; i < 2 * box / 4; i += PT_THREADS)
            st_global(w + i, ld_shared<unsigned>(sm + 4 * i));
    } else if (mode == 4) {
        mode_ss_k<64, FATTN_GMMA_SW128, 4>(base, bar, w, PT_MAP_Q_SW128, PT_MAP_K_SW128S);
    } else if (mode == 5) {
        mode_ss_k<128, FATTN_GMMA_SW64, 2>(base, bar, w, PT_MAP_Q_SW64, PT_MAP_K_SW64);
    } else if (mode == 6) {
        mode_ss_k<176, FATTN_GMMA_SW32, 1>(base, bar, w, PT_MAP_Q_SW32, PT_MAP_K_SW32);
    } else if (mode == 7) {
        mode_ss_k<192, FATTN_GMMA_NONE, 1>(base, bar, w, PT_MAP_Q_NONE8, PT_MAP_K_NONE8);
    } else if (mode == 8) {
        mode_ss_k<256, FATTN_GMMA_SW128, 4>(base, bar, w, PT_MAP_Q_SW128, PT_MAP_K_SW128);
    } else if (mode == 9) {
        mode_ss_mn<128, FATTN_GMMA_SW128>(base, bar, w, PT_MAP_V_SW128);
    } else if (mode == 10) {
        mode_ss_mn<64, FATTN_GMMA_SW64>(base, bar, w, PT_MAP_V_SW64);
    } else if (mode == 11) {
        mode_ss_mn<64, FATTN_GMMA_NONE>(base, bar, w, PT_MAP_V_NONE8);
    } else if (mode == 12 || mode == 13) {
        if (tid == 0) {
            if (mode == 12) {
                mbar_arrive_expect_tx(bar, 16 * 176 * 2);
                load_boxes(base + PT_B, PT_MAP_K_SW32, bar, 1, 0, 0, 0, 0, 0);
            }
        }
        if (mode == 13)
            load_a_and_v(base, bar, PT_MAP_V_SW128, 1, 64, 0);
        if (tid >= 128 || !wait_bounded(bar, 0, w))
            return;
        unsigned a[4];
        a_from_global(a, q);
        if (mode == 12) {
            float d[88];
            wgmma_fence();
            wgmma_rs<176>(d, a, fattn_gmma_desc_k(base + PT_B, 176, FATTN_GMMA_SW32), 0);
            wgmma_commit();
            wgmma_wait<0>(d);
            store_d<176>(w, d);
        } else {
            float d[32];
            wgmma_fence();
            wgmma_rs<64, 1>(d, a, fattn_gmma_desc_mn_boxes(base + PT_B, 16, FATTN_GMMA_SW128), 0);
            wgmma_commit();
            wgmma_wait<0>(d);
            store_d<64>(w, d);
        }
    } else if (mode == 14) {
        mode_reuse(base, bar, w);
    } else if (mode == 18) {
        mode_pipeline(base, bar, w);
    } else if (mode == 15) {
        /* The tile, written through the 128 B swizzle (the TMA's layout). */
        for (int i = tid; i < 64 * 64; i += PT_THREADS) {
            const int r = i / 64, c = i % 64;
            const unsigned off = r * 128 + c * 2, sw = off ^ ((off >> 7 & 7) << 4);
            st_shared(sm + PT_C + sw, __float2half_rn((float)(1000 + 64 * r + c)));
        }
        fence_proxy_async();
        __syncthreads();
        if (tid == 0) {
            tma_store_3d(&fattn_tmaps[PT_MAP_O_SW128], base + PT_C, 0, 192, 1);
            bulk_commit();
            bulk_wait_read<0>();
        }
    } else if (mode == 16) {
        if (tid < 128)
            setmaxnreg_dec<40>();
        else
            setmaxnreg_inc<232>();
        st_global(w + tid, (unsigned)(7 * tid + tid / 128));
    } else if (mode == 17) {
        if (tid < 128) {
            st_shared(sm + 4 * tid, (unsigned)(3 * tid + 1));
            bar_arrive(1, 384);
        } else {
            bar_sync(1, 384);
            const unsigned got = ld_shared<unsigned>(sm + 4 * ((tid - 128) % 128));
            st_shared(sm + 1024 + 4 * tid, got + 5);
            bar_sync(2, 256);
            const int other = tid < 256 ? tid + 128 : tid - 128;
            st_global(w + tid, ld_shared<unsigned>(sm + 1024 + 4 * other) + 1000 * got);
        }
    }
}
