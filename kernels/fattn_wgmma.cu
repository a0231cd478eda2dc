/*
 * fattn_wgmma.cu - the wgmma family's kernel: the FlashAttention forward for
 * Hopper (sm_90a), warp-specialised (src/family/wgmma.c).
 *
 * O = softmax(Q K^T scale) V for fp16 [B, H, S, D] (D 64 or 128), fp32
 * accumulation, causal or not, any S >= 1. One block per BLOCK_M query rows
 * of one head: grid (ceil(S / BLOCK_M), H, B), a causal launch taking its
 * row blocks last first (the longest first).
 *
 * Roles, one branch each: warpgroup 0 is the producer (setmaxnreg down; its
 * thread 0 issues every TMA load: Q once, then K and V of each key tile
 * into a ring of STAGES slots, each slot with a full mbarrier (the load's
 * transaction bytes) and an empty one (one arrival per consumer); it runs
 * ahead by the ring). Warpgroups 1 .. BLOCK_M / 64 are consumers
 * (setmaxnreg up), 64 query rows each (those whose rows all lie past S
 * idle): per key tile S = Q K^T (wgmma SS, Q
 * and K K-major, 128-byte swizzle), the K slot released once it retires;
 * the online softmax on S's accumulators (scale and max folded into one
 * FFMA before ex2, the row max over the quad, the row sum per thread until
 * the end); O += P V (wgmma with V MN-major through the transpose bit, P
 * from S's registers as fp16 (PV_RS=1) or through shared memory (PV_RS=0)),
 * the V slot released once it retires. The epilogue writes O through the
 * consumer's own Q tile and one TMA store, clipped at S.
 *
 * Tensor maps (gpu/tmap.h, 3-D (D, S, B * H), 128-byte swizzle): Q and O in
 * boxes of 64 columns by 64 rows, K and V of 64 columns by BLOCK_N rows;
 * rows past S load as zeros and are not stored. At D = 128 a row is two
 * boxes (the inner box is at most the swizzle span).
 *
 * Shared memory, from a 1024-byte boundary (the swizzle's repeat):
 *   Q     BLOCK_M x D        consumer c's 64 rows at c * 64 * D * 2, each
 *                            as D / 64 boxes of 64 x 64 (8 KB)
 *   K     STAGES x BLOCK_N x D, a slot as D / 64 boxes of BLOCK_N x 64
 *   V     likewise
 *   P     BLOCK_M x BLOCK_N (PV_RS=0 only), consumer c's 64 rows as
 *         ceil(BLOCK_N / 64) boxes of 64 x 64
 *   mbarriers: Q full, then K full, K empty, V full, V empty per slot.
 */
#include <cuda_fp16.h>
#include "fattn_gmma.h"
#include "fattn_prim_sm90.h"

/* fattn-tune passes -DBLOCK_M= etc.; an exported header defines the
 * FATTN_ names. */
#if !defined(BLOCK_M) && defined(FATTN_BLOCK_M)
#define BLOCK_M FATTN_BLOCK_M
#endif
#if !defined(BLOCK_N) && defined(FATTN_BLOCK_N)
#define BLOCK_N FATTN_BLOCK_N
#endif
#if !defined(STAGES) && defined(FATTN_STAGES)
#define STAGES FATTN_STAGES
#endif
#if !defined(PV_RS) && defined(FATTN_PV_RS)
#define PV_RS FATTN_PV_RS
#endif
#if !defined(HEAD_DIM) && defined(FATTN_HEAD_DIM)
#define HEAD_DIM FATTN_HEAD_DIM
#endif
#if !defined(CAUSAL) && defined(FATTN_CAUSAL)
#define CAUSAL FATTN_CAUSAL
#endif
#ifndef BLOCK_M
#define BLOCK_M 128
#endif
#ifndef BLOCK_N
#define BLOCK_N 128
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef PV_RS
#define PV_RS 1
#endif
#ifndef HEAD_DIM
#define HEAD_DIM 64
#endif
#ifndef CAUSAL
#define CAUSAL 0
#endif
#ifndef WAIT_BOUND
#define WAIT_BOUND 0
#endif

static_assert(BLOCK_M % 64 == 0 && BLOCK_M >= 64 && BLOCK_M <= 192, "BLOCK_M: 64, 128 or 192");
static_assert(BLOCK_N % 16 == 0 && BLOCK_N >= 64 && BLOCK_N <= 192, "BLOCK_N: 64 to 192 in steps of 16");
static_assert(HEAD_DIM == 64 || HEAD_DIM == 128, "HEAD_DIM: 64 or 128");
static_assert(STAGES >= 1 && STAGES <= 4, "STAGES: 1 to 4");

#define CONSUMERS (BLOCK_M / 64)
#define D_BOXES   (HEAD_DIM / 64)
#define SW        FATTN_GMMA_SW128
#define BOX_BYTES 8192 /* 64 rows of 128 bytes */
#define NEG_INF   (-__int_as_float(0x7f800000))

/* The kernel's own (an exported header's are the same numbers). */
#undef FATTN_THREADS
#undef FATTN_SMEM_BYTES
#define FATTN_THREADS    (128 * (CONSUMERS + 1))
#define Q_BYTES          (BLOCK_M * HEAD_DIM * 2)
#define KV_BYTES         (BLOCK_N * HEAD_DIM * 2)
#define P_BOXES          ((BLOCK_N + 63) / 64)
#define P_BYTES          (PV_RS ? 0 : CONSUMERS * P_BOXES * BOX_BYTES)
#define SM_K             Q_BYTES
#define SM_V             (SM_K + STAGES * KV_BYTES)
#define SM_P             (SM_V + STAGES * KV_BYTES)
#define SM_BAR           (SM_P + P_BYTES)
#define NBARS            (1 + 4 * STAGES)
#define FATTN_SMEM_BYTES (SM_BAR + 8 * NBARS + 1024) /* and the slack for rounding the base up to 1024 */

/* setmaxnreg (FA3's split): one consumer 56 / 256, two 24 / 240, three
 * 32 / 160; the block's 64K registers at most. */
#define PRODUCER_REGS (CONSUMERS == 1 ? 56 : CONSUMERS == 2 ? 24 : 32)
#define CONSUMER_REGS (CONSUMERS == 1 ? 256 : CONSUMERS == 2 ? 240 : 160)
static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= 65536, "setmaxnreg over the register file");

extern "C" __device__ const unsigned int fattn_smem_bytes = FATTN_SMEM_BYTES;
extern "C" __device__ const unsigned int fattn_threads = FATTN_THREADS;

/* The mbarriers: Q's, then four per slot. */
struct wg_bars {
    unsigned base;
    __device__ __forceinline__ unsigned q_full() const { return base; }
    __device__ __forceinline__ unsigned k_full(int s) const { return base + 8 * (1 + s); }
    __device__ __forceinline__ unsigned k_empty(int s) const { return base + 8 * (1 + STAGES + s); }
    __device__ __forceinline__ unsigned v_full(int s) const { return base + 8 * (1 + 2 * STAGES + s); }
    __device__ __forceinline__ unsigned v_empty(int s) const { return base + 8 * (1 + 3 * STAGES + s); }
};

/* Waits for the phase of parity `parity` of mbarrier `bar`. Built with
 * WAIT_BOUND=n (a test-only parameter: the device's first runs), a wait
 * that tries n times traps instead of hanging. */
__device__ __forceinline__ void wait_phase(unsigned bar, unsigned parity)
{
#if WAIT_BOUND > 0 && !defined(FATTN_SIM)
    for (long long i = 0; !mbar_try_wait(bar, parity); ++i)
        if (i == WAIT_BOUND)
            __trap();
#else
    while (!mbar_try_wait(bar, parity)) {
    }
#endif
}

/* Key tiles a row block reads: to S, or (causal) to its last row. */
__device__ __forceinline__ int key_tiles(int m0, int seqlen)
{
    const int keys = CAUSAL && m0 + BLOCK_M < seqlen ? m0 + BLOCK_M : seqlen;
    return (keys + BLOCK_N - 1) / BLOCK_N;
}

/* The producer's thread: Q, then K and V of every key tile through the ring. */
__device__ __forceinline__ void produce(const fattn_tensormap *tm_q, const fattn_tensormap *tm_k,
                                        const fattn_tensormap *tm_v, unsigned base, wg_bars b, int m0, int bh,
                                        int tiles, int active)
{
    mbar_arrive_expect_tx(b.q_full(), active * D_BOXES * BOX_BYTES);
    for (int c = 0; c < active; ++c)
        for (int x = 0; x < D_BOXES; ++x)
            tma_load_3d(base + (c * D_BOXES + x) * BOX_BYTES, tm_q, b.q_full(), 64 * x, m0 + 64 * c, bh);
    for (int i = 0; i < tiles; ++i) {
        const int s = i % STAGES;
        const unsigned ph = (unsigned)(i / STAGES) & 1u;
        const unsigned k = base + SM_K + s * KV_BYTES, v = base + SM_V + s * KV_BYTES;
        /* Slot s's previous use (tile i - STAGES) released by every consumer. */
        if (i >= STAGES)
            wait_phase(b.k_empty(s), ph ^ 1u);
        mbar_arrive_expect_tx(b.k_full(s), KV_BYTES);
        for (int x = 0; x < D_BOXES; ++x)
            tma_load_3d(k + x * BLOCK_N * 128, tm_k, b.k_full(s), 64 * x, i * BLOCK_N, bh);
        if (i >= STAGES)
            wait_phase(b.v_empty(s), ph ^ 1u);
        mbar_arrive_expect_tx(b.v_full(s), KV_BYTES);
        for (int x = 0; x < D_BOXES; ++x)
            tma_load_3d(v + x * BLOCK_N * 128, tm_v, b.v_full(s), 64 * x, i * BLOCK_N, bh);
    }
}

/* The byte offset of element (r, col) of a 64-row K-major tile stored as
 * boxes of 64 columns with the 128-byte swizzle (16-byte unit XOR row % 8). */
__device__ __forceinline__ unsigned sw128_offset(int r, int col)
{
    const unsigned off = (unsigned)(col / 64) * BOX_BYTES + (unsigned)r * 128u + (unsigned)(col % 64) * 2u;
    return off ^ ((unsigned)(r % 8) << 4);
}

__device__ __forceinline__ unsigned pack_half2(float lo, float hi)
{
    const half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const unsigned *>(&h);
}

/* Consumer warpgroup c: 64 query rows from m0 + 64 c. Accumulator i of a
 * thread (lane l of warp w of the warpgroup) sits at row 16 w + l / 4 +
 * 8 ((i / 2) % 2), column 8 (i / 4) + 2 (l % 4) + i % 2 (wgmma's D layout):
 * a thread holds two rows, h = 0 and 1. */
__device__ __forceinline__ void consume(const fattn_tensormap *tm_o, unsigned base, unsigned char *sm, wg_bars b,
                                        int c, int m0, int bh, int tiles, int seqlen, float scale)
{
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    const unsigned q = base + c * D_BOXES * BOX_BYTES;
    const int row0 = m0 + 64 * c + 16 * warp + lane / 4; /* rows row0 and row0 + 8 */
    const float scale_log2 = scale * 1.4426950408889634f;
    float o[HEAD_DIM / 2];
    float row_max[2] = {NEG_INF, NEG_INF}, row_sum[2] = {0.f, 0.f};
#pragma unroll
    for (int i = 0; i < HEAD_DIM / 2; ++i)
        o[i] = 0.f;
    wait_phase(b.q_full(), 0);
    for (int i = 0; i < tiles; ++i) {
        const int s = i % STAGES, n0 = i * BLOCK_N;
        const unsigned ph = (unsigned)(i / STAGES) & 1u;
        const unsigned k = base + SM_K + s * KV_BYTES, v = base + SM_V + s * KV_BYTES;
        float acc[BLOCK_N / 2];

        /* S = Q K^T */
        wait_phase(b.k_full(s), ph);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < HEAD_DIM / 16; ++kk)
            wgmma_ss<BLOCK_N>(acc, fattn_gmma_desc_k(q + fattn_gmma_k_offset(0, 64, 16 * kk, SW), 64, SW),
                              fattn_gmma_desc_k(k + fattn_gmma_k_offset(0, BLOCK_N, 16 * kk, SW), BLOCK_N, SW),
                              kk > 0);
        wgmma_commit();
        wgmma_wait<0>(acc);
        if (t == 0)
            mbar_arrive(b.k_empty(s));

        /* Masking, in boundary tiles only: keys past S, and (causal) past
         * the row. The first tile holds key 0, so every row's max is
         * finite from the first tile on. */
        if (n0 + BLOCK_N > seqlen || (CAUSAL && n0 + BLOCK_N - 1 > m0 + 64 * c)) {
#pragma unroll
            for (int j = 0; j < BLOCK_N / 2; ++j) {
                const int col = n0 + 8 * (j / 4) + 2 * (lane % 4) + j % 2, row = row0 + 8 * ((j / 2) % 2);
                if (col >= seqlen || (CAUSAL && col > row))
                    acc[j] = NEG_INF;
            }
        }

        /* Online softmax: P = exp2(S scale log2(e) - max scale log2(e)). */
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float mx = row_max[h];
#pragma unroll
            for (int j = 2 * h; j < BLOCK_N / 2; j += 4) {
                mx = fmaxf(mx, acc[j]);
                mx = fmaxf(mx, acc[j + 1]);
            }
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            const float m_scaled = mx * scale_log2;
            const float corr = exp2f(row_max[h] * scale_log2 - m_scaled);
            row_max[h] = mx;
            row_sum[h] *= corr;
#pragma unroll
            for (int j = 2 * h; j < HEAD_DIM / 2; j += 4) {
                o[j] *= corr;
                o[j + 1] *= corr;
            }
#pragma unroll
            for (int j = 2 * h; j < BLOCK_N / 2; j += 4) {
                acc[j] = exp2f(fmaf(acc[j], scale_log2, -m_scaled));
                acc[j + 1] = exp2f(fmaf(acc[j + 1], scale_log2, -m_scaled));
                row_sum[h] += acc[j] + acc[j + 1];
            }
        }

        /* O += P V */
        wait_phase(b.v_full(s), ph);
#if PV_RS
        /* Slice j of P (keys 16 j ..): accumulators 8 j .. 8 j + 7 are the
         * A fragment's halves 0-7. */
        unsigned p[BLOCK_N / 16][4];
#pragma unroll
        for (int j = 0; j < BLOCK_N / 16; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                p[j][r] = pack_half2(acc[8 * j + 2 * r], acc[8 * j + 2 * r + 1]);
        wgmma_fence();
#pragma unroll
        for (int j = 0; j < BLOCK_N / 16; ++j)
            wgmma_rs<HEAD_DIM, 1>(o, p[j], fattn_gmma_desc_mn_boxes(v + 16 * j * 128, BLOCK_N, SW), 1);
#else
        const unsigned p = base + SM_P + c * P_BOXES * BOX_BYTES;
        unsigned char *p_sm = sm + SM_P + c * P_BOXES * BOX_BYTES;
#pragma unroll
        for (int j = 0; j < BLOCK_N / 2; j += 2) {
            const int r = 16 * warp + lane / 4 + 8 * ((j / 2) % 2), col = 8 * (j / 4) + 2 * (lane % 4);
            st_shared(p_sm + sw128_offset(r, col), pack_half2(acc[j], acc[j + 1]));
        }
        /* Every thread's P visible to the warpgroup's wgmma (async proxy). */
        fence_proxy_async();
        bar_sync(1 + c, 128);
        wgmma_fence();
#pragma unroll
        for (int j = 0; j < BLOCK_N / 16; ++j)
            wgmma_ss<HEAD_DIM, 0, 1>(o, fattn_gmma_desc_k(p + fattn_gmma_k_offset(0, 64, 16 * j, SW), 64, SW),
                                     fattn_gmma_desc_mn_boxes(v + 16 * j * 128, BLOCK_N, SW), 1);
#endif
        wgmma_commit();
        wgmma_wait<0>(o);
        if (t == 0)
            mbar_arrive(b.v_empty(s));
    }

    /* O / rowsum, through this consumer's Q tile (its wgmmas have retired)
     * and one TMA store per 64 columns. */
    unsigned char *q_sm = sm + c * D_BOXES * BOX_BYTES;
    float inv[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float l = row_sum[h];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        inv[h] = 1.f / l;
    }
#pragma unroll
    for (int j = 0; j < HEAD_DIM / 2; j += 2) {
        const int h = (j / 2) % 2, r = 16 * warp + lane / 4 + 8 * h, col = 8 * (j / 4) + 2 * (lane % 4);
        st_shared(q_sm + sw128_offset(r, col), pack_half2(o[j] * inv[h], o[j + 1] * inv[h]));
    }
    fence_proxy_async();
    bar_sync(1 + c, 128);
    if (t == 0) {
        for (int x = 0; x < D_BOXES; ++x)
            tma_store_3d(tm_o, q + x * BOX_BYTES, 64 * x, m0 + 64 * c, bh);
        bulk_commit();
        /* The shared source stays until the store has read it. */
        bulk_wait_read<0>();
    }
}

extern "C" __global__ void __launch_bounds__(FATTN_THREADS, 1)
    fattn_wgmma(const __grid_constant__ fattn_tensormap tm_q, const __grid_constant__ fattn_tensormap tm_k,
                const __grid_constant__ fattn_tensormap tm_v, const __grid_constant__ fattn_tensormap tm_o,
                int batch, int heads, int seqlen, float scale)
{
    FATTN_DYNAMIC_SMEM(smem);
    (void)batch;
    const unsigned raw = smem_addr(smem), pad = (1024 - raw % 1024) % 1024, base = raw + pad;
    unsigned char *sm = smem + pad;
    const wg_bars b = {base + SM_BAR};
    const int m_block = CAUSAL ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;
    const int m0 = m_block * BLOCK_M, bh = (int)(blockIdx.z * heads + blockIdx.y);
    const int tiles = key_tiles(m0, seqlen), wg = (int)(threadIdx.x / 128);
    /* Consumers with a row below S (a tail's others have nothing to do). */
    const int active = min(CONSUMERS, (seqlen - m0 + 63) / 64);
    if (threadIdx.x == 0) {
        mbar_init(b.q_full(), 1);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(b.k_full(s), 1);
            mbar_init(b.v_full(s), 1);
            mbar_init(b.k_empty(s), active);
            mbar_init(b.v_empty(s), active);
        }
        fence_mbarrier_init();
    }
    __syncthreads();
    if (wg == 0) {
        setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0)
            produce(&tm_q, &tm_k, &tm_v, base, b, m0, bh, tiles, active);
    } else {
        setmaxnreg_inc<CONSUMER_REGS>();
        if (wg <= active)
            consume(&tm_o, base, sm, b, wg - 1, m0, bh, tiles, seqlen, scale);
    }
}
