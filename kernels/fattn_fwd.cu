/*
 * fattn_fwd.cu - the tunable FlashAttention-2-style forward kernel.
 *
 * O = softmax(Q K^T * scale) V for fp16 Q, K, V, O laid out [B, H, S, D]
 * contiguous, fp32 accumulation, online softmax (exp2 with a pre-scaled
 * log2(e)), optional causal mask (CAUSAL=1), any B, H and S >= 1 (tails are
 * zero-filled and masked), D = HEAD_DIM in {64, 128}.
 *
 * Grid (ceil(S / BLOCK_M), H, B): one block per BLOCK_M query rows of one head,
 * so batch and heads run in parallel. Each warp owns BLOCK_M / NUM_WARPS query
 * rows in 16-row strips. The block walks the key/value sequence in tiles of
 * BLOCK_N rows; each tile is staged through shared memory as 2 * D / BLOCK_K
 * chunks of BLOCK_N x BLOCK_K halves (first the K chunks, then the V chunks)
 * in a ring of STAGES slots:
 *   S   = Q K^T     mma.sync.m16n8k16, Q and K fragments through ldmatrix.x4
 *   P   = softmax   in registers, quad shuffles, P kept as the A operand
 *   O  += P V       V fragments through ldmatrix.x4.trans
 * O is staged through the Q tile and written with coalesced stores.
 *
 * Tunables, all preprocessor macros (NVRTC -D options):
 *   BLOCK_M {32,64,128}   query rows per block
 *   BLOCK_N {32,64,128}   key/value rows per tile
 *   BLOCK_K {16,32,64}    head-dimension chunk staged per pipeline step
 *   NUM_WARPS {2,4,8}     warps per block
 *   STAGES {1,2,3}        shared-memory slots in the K/V ring
 *   UNROLL {1,2}          unroll of the key/value tile loop
 *   CP_ASYNC {0,1}        cp.async copies vs loads through registers
 *   SWIZZLE {0,1}         XOR-swizzled rows vs rows padded by PAD_BYTES
 *   HALF2 {0,1}           16-byte global I/O and packed half2 conversions vs scalar
 * Extension tunables, off by default (the default space never sets them; a
 * tuned space such as search/space-h100.json lists them):
 *   SPLIT_KV {1,2,4,8}    blocks sharing one row block's key range: a thread-
 *                         block cluster of SPLIT_KV blocks (sm_90+) along x,
 *                         each walking its share of the key tiles; their
 *                         partial (max, sum, O) meet in shared memory and each
 *                         block combines BLOCK_M / SPLIT_KV rows through
 *                         distributed shared memory. Grid x grows SPLIT_KV
 *                         times; the cluster shape is compiled in.
 *   Q_REGS {0,1}          Q's A-operand fragments loaded once into registers
 *                         (1) instead of re-read with ldmatrix for every key tile
 * Test-only overrides outside the default space: PAD_BYTES (row pad, default
 * 16; the seeds' broken layout is 2) and COPY_COLMAJOR (1: the copy loops walk
 * down the rows first, an uncoalesced mapping the coalescing gate rejects).
 *
 * The exported header of `fattn-tune export` defines FATTN_<NAME>; this file
 * takes those when the plain names are not given, so
 *   nvcc -include fattn_tuned.h kernels/fattn_fwd.cu
 * builds the tuned kernel.
 *
 * Shared-memory layout (dynamic, extern): the Q/O tile of BLOCK_M rows of D
 * halves, then STAGES slots of BLOCK_N rows of BLOCK_K halves. Its size is
 * exported as the symbol fattn_smem_bytes, which fattn-tune reads from the
 * cubin and checks against its own C model of the layout.
 */
#include <cuda_fp16.h>
#include "fattn_tile.h"
#include "fattn_prim.h"

#if !defined(BLOCK_M) && defined(FATTN_BLOCK_M)
#define BLOCK_M FATTN_BLOCK_M
#endif
#if !defined(BLOCK_N) && defined(FATTN_BLOCK_N)
#define BLOCK_N FATTN_BLOCK_N
#endif
#if !defined(BLOCK_K) && defined(FATTN_BLOCK_K)
#define BLOCK_K FATTN_BLOCK_K
#endif
#if !defined(NUM_WARPS) && defined(FATTN_NUM_WARPS)
#define NUM_WARPS FATTN_NUM_WARPS
#endif
#if !defined(STAGES) && defined(FATTN_STAGES)
#define STAGES FATTN_STAGES
#endif
#if !defined(UNROLL) && defined(FATTN_UNROLL)
#define UNROLL FATTN_UNROLL
#endif
#if !defined(CP_ASYNC) && defined(FATTN_CP_ASYNC)
#define CP_ASYNC FATTN_CP_ASYNC
#endif
#if !defined(SWIZZLE) && defined(FATTN_SWIZZLE)
#define SWIZZLE FATTN_SWIZZLE
#endif
#if !defined(HALF2) && defined(FATTN_HALF2)
#define HALF2 FATTN_HALF2
#endif
#if !defined(SPLIT_KV) && defined(FATTN_SPLIT_KV)
#define SPLIT_KV FATTN_SPLIT_KV
#endif
#if !defined(Q_REGS) && defined(FATTN_Q_REGS)
#define Q_REGS FATTN_Q_REGS
#endif
#if !defined(HEAD_DIM) && defined(FATTN_HEAD_DIM)
#define HEAD_DIM FATTN_HEAD_DIM
#endif
#if !defined(CAUSAL) && defined(FATTN_CAUSAL)
#define CAUSAL FATTN_CAUSAL
#endif

#ifndef BLOCK_M
#define BLOCK_M 64
#endif
#ifndef BLOCK_N
#define BLOCK_N 64
#endif
#ifndef BLOCK_K
#define BLOCK_K 32
#endif
#ifndef NUM_WARPS
#define NUM_WARPS 4
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef CP_ASYNC
#define CP_ASYNC 1
#endif
#ifndef SWIZZLE
#define SWIZZLE 1
#endif
#ifndef HALF2
#define HALF2 1
#endif
#ifndef SPLIT_KV
#define SPLIT_KV 1
#endif
#ifndef Q_REGS
#define Q_REGS 0
#endif
#ifndef HEAD_DIM
#define HEAD_DIM 64
#endif
#ifndef CAUSAL
#define CAUSAL 0
#endif
#ifndef PAD_BYTES
#define PAD_BYTES 16
#endif
#ifndef COPY_COLMAJOR
#define COPY_COLMAJOR 0
#endif

#define FATTN_THREADS (NUM_WARPS * 32)
#define FATTN_Q_CHUNKS (HEAD_DIM / 8)
#define FATTN_KV_CHUNKS (BLOCK_K / 8)
#define FATTN_Q_TILE_BYTES (BLOCK_M * (FATTN_Q_CHUNKS * 16 + (SWIZZLE ? 0 : PAD_BYTES)))
#define FATTN_KV_SLOT_BYTES (BLOCK_N * (FATTN_KV_CHUNKS * 16 + (SWIZZLE ? 0 : PAD_BYTES)))
#define FATTN_LOOP_BYTES (FATTN_Q_TILE_BYTES + STAGES * FATTN_KV_SLOT_BYTES)
/* SPLIT_KV > 1: the partials the cluster combines, over the loop's region. */
#define FATTN_PART_ROW_BYTES (HEAD_DIM * 4 + 32)
#define FATTN_PART_BYTES (SPLIT_KV > 1 ? BLOCK_M * (FATTN_PART_ROW_BYTES + 8) : 0)
#define FATTN_SMEM_BYTES (FATTN_LOOP_BYTES > FATTN_PART_BYTES ? FATTN_LOOP_BYTES : FATTN_PART_BYTES)

#define FATTN_PRAGMA_(x) _Pragma(#x)
#define FATTN_UNROLL_BY(n) FATTN_PRAGMA_(unroll n)

static_assert(HEAD_DIM == 64 || HEAD_DIM == 128, "HEAD_DIM must be 64 or 128");
static_assert(BLOCK_M % (16 * NUM_WARPS) == 0, "each warp owns whole 16-row strips");
static_assert(BLOCK_N % 16 == 0 && BLOCK_K % 16 == 0, "BLOCK_N and BLOCK_K are multiples of 16");
static_assert(HEAD_DIM % BLOCK_K == 0, "BLOCK_K divides HEAD_DIM");
static_assert(STAGES >= 1 && UNROLL >= 1, "STAGES and UNROLL are positive");
static_assert(SPLIT_KV == 1 || SPLIT_KV == 2 || SPLIT_KV == 4 || SPLIT_KV == 8, "SPLIT_KV is 1, 2, 4 or 8");
static_assert(BLOCK_M % SPLIT_KV == 0, "each block of a cluster combines whole rows");
static_assert(Q_REGS == 0 || Q_REGS == 1, "Q_REGS is 0 or 1");
#if SPLIT_KV > 1 && defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "SPLIT_KV > 1 needs thread-block clusters (sm_90 or newer)"
#endif

/* Layout size and block size, read back from the cubin by fattn-tune. */
extern "C" __device__ const unsigned int fattn_smem_bytes = FATTN_SMEM_BYTES;
extern "C" __device__ const unsigned int fattn_threads = FATTN_THREADS;

namespace {

constexpr int kThreads = FATTN_THREADS;
constexpr int kRowsPerWarp = BLOCK_M / NUM_WARPS;
constexpr int kMTiles = kRowsPerWarp / 16;       /* 16-row strips per warp */
constexpr int kSTiles = BLOCK_N / 8;             /* n8 tiles of S */
constexpr int kOTiles = HEAD_DIM / 8;            /* n8 tiles of O */
constexpr int kChunksPerTile = HEAD_DIM / BLOCK_K; /* K (and V) chunks per tile */
constexpr int kLoadBytes = HALF2 ? 16 : (CP_ASYNC ? 4 : 2);
constexpr int kStoreBytes = HALF2 ? 16 : 2;
#define kNegInf (-__int_as_float(0x7f800000))

__device__ __forceinline__ unsigned tile_off(int row, int byte_in_row, int chunks)
{
    return fattn_tile_offset((unsigned)row, (unsigned)byte_in_row, (unsigned)chunks, SWIZZLE, PAD_BYTES);
}

__device__ __forceinline__ unsigned pack_half2(float lo, float hi)
{
#if HALF2
    __half2 h = __floats2half2_rn(lo, hi);
#else
    __half2 h = __halves2half2(__float2half_rn(lo), __float2half_rn(hi));
#endif
    return *reinterpret_cast<unsigned *>(&h);
}

/* One global<->shared copy of a ROWS x CHUNKS*16-byte tile, cut into units of
 * VEC bytes; unit u of the tile goes to thread u % kThreads. */
template <int ROWS, int CHUNKS, int VEC>
struct Tile {
    static constexpr int kUnitsPerRow = CHUNKS * 16 / VEC;
    static constexpr int kUnits = ROWS * kUnitsPerRow;
    static constexpr int kPerThread = (kUnits + kThreads - 1) / kThreads;

    static __device__ __forceinline__ void unit(int u, int &row, int &byte)
    {
#if COPY_COLMAJOR
        row = u % ROWS;
        byte = (u / ROWS) * VEC;
#else
        row = u / kUnitsPerRow;
        byte = (u % kUnitsPerRow) * VEC;
#endif
    }
};

template <bool C, class T, class F> struct Pick { using type = T; };
template <class T, class F> struct Pick<false, T, F> { using type = F; };
using VecT = typename Pick<HALF2 != 0, uint4, unsigned short>::type;

/* Registers holding one thread's share of a tile on its way to shared memory. */
template <int ROWS, int CHUNKS>
struct Staged {
    VecT v[Tile<ROWS, CHUNKS, kLoadBytes>::kPerThread];
};

/* Global rows [0, valid) of a tile whose rows are HEAD_DIM halves apart; rows
 * past `valid` are zero. */
template <int ROWS, int CHUNKS>
__device__ __forceinline__ void load_regs(Staged<ROWS, CHUNKS> &st, const half *g, int valid)
{
    using T = Tile<ROWS, CHUNKS, kLoadBytes>;
#pragma unroll
    for (int i = 0; i < T::kPerThread; ++i) {
        const int u = threadIdx.x + i * kThreads;
        int row, byte;
        T::unit(u, row, byte);
        VecT x = VecT();
        if ((T::kUnits % kThreads == 0 || u < T::kUnits) && row < valid)
            x = ld_global<VecT>(g + (size_t)row * HEAD_DIM + byte / 2);
        st.v[i] = x;
    }
}

template <int ROWS, int CHUNKS>
__device__ __forceinline__ void store_regs(const Staged<ROWS, CHUNKS> &st, unsigned char *tile)
{
    using T = Tile<ROWS, CHUNKS, kLoadBytes>;
#pragma unroll
    for (int i = 0; i < T::kPerThread; ++i) {
        const int u = threadIdx.x + i * kThreads;
        int row, byte;
        T::unit(u, row, byte);
        if (T::kUnits % kThreads == 0 || u < T::kUnits)
            st_shared(tile + tile_off(row, byte, CHUNKS), st.v[i]);
    }
}

/* Start (CP_ASYNC) or complete a tile's copy into shared memory. */
template <int ROWS, int CHUNKS>
__device__ __forceinline__ void copy_tile(unsigned char *tile, const half *g, int valid)
{
#if CP_ASYNC
    using T = Tile<ROWS, CHUNKS, kLoadBytes>;
    const unsigned base = smem_addr(tile);
#pragma unroll
    for (int i = 0; i < T::kPerThread; ++i) {
        const int u = threadIdx.x + i * kThreads;
        int row, byte;
        T::unit(u, row, byte);
        if (T::kUnits % kThreads == 0 || u < T::kUnits) {
            const bool ok = row < valid;
            const half *src = g + (ok ? (size_t)row * HEAD_DIM + byte / 2 : 0);
            cp_async<kLoadBytes>(base + tile_off(row, byte, CHUNKS), src, ok);
        }
    }
#else
    Staged<ROWS, CHUNKS> st;
    load_regs(st, g, valid);
    store_regs(st, tile);
#endif
}

/* Global source of pipeline chunk i: tile i / (2C), K chunks first, then V. */
__device__ __forceinline__ const half *chunk_src(int i, const half *kh, const half *vh, int &valid, int seqlen)
{
    const int tile = i / (2 * kChunksPerTile);
    const int part = i % (2 * kChunksPerTile);
    valid = seqlen - tile * BLOCK_N;
    return (part < kChunksPerTile ? kh : vh) + (size_t)tile * BLOCK_N * HEAD_DIM
           + (part % kChunksPerTile) * BLOCK_K;
}

/* This warp's A-operand fragments of Q, k16 step `ks` of the head dimension. */
__device__ __forceinline__ void q_frags(unsigned (&a)[kMTiles][4], int ks, unsigned q_tile, int warp, int lane)
{
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
        const int row = warp * kRowsPerWarp + mt * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
        const int col = ks * 16 + (lane / 16) * 8;
        ldmatrix_x4(a[mt], q_tile + tile_off(row, col * 2, FATTN_Q_CHUNKS));
    }
}

#if Q_REGS
/* Q held in registers for the whole key loop: every k16 step of D. */
struct QRegs {
    unsigned f[HEAD_DIM / 16][kMTiles][4];
};
#define FATTN_QK_Q_ARG const QRegs &q_regs
#else
#define FATTN_QK_Q_ARG unsigned q_tile
#endif

/* S += Q[:, c*BLOCK_K : (c+1)*BLOCK_K] K_c^T for this warp's rows. */
__device__ __forceinline__ void qk_chunk(int c, float (&s)[kMTiles][kSTiles][4], FATTN_QK_Q_ARG, unsigned slot,
                                         int warp, int lane)
{
#pragma unroll
    for (int kk = 0; kk < BLOCK_K / 16; ++kk) {
#if Q_REGS
        (void)warp;
        const unsigned (&a)[kMTiles][4] = q_regs.f[c * (BLOCK_K / 16) + kk];
#else
        unsigned a[kMTiles][4];
        q_frags(a, c * (BLOCK_K / 16) + kk, q_tile, warp, lane);
#endif
#pragma unroll
        for (int np = 0; np < kSTiles / 2; ++np) {
            unsigned b[4];
            const int row = np * 16 + (lane / 16) * 8 + (lane % 8);
            const int col = kk * 16 + ((lane / 8) % 2) * 8;
            ldmatrix_x4(b, slot + tile_off(row, col * 2, FATTN_KV_CHUNKS));
#pragma unroll
            for (int mt = 0; mt < kMTiles; ++mt) {
                mma_16816(s[mt][2 * np], a[mt], b[0], b[1]);
                mma_16816(s[mt][2 * np + 1], a[mt], b[2], b[3]);
            }
        }
    }
}

/* O[:, c*BLOCK_K : (c+1)*BLOCK_K] += P V_c for this warp's rows. */
__device__ __forceinline__ void pv_chunk(int c, float (&o)[kMTiles][kOTiles][4],
                                         const unsigned (&p)[kMTiles][BLOCK_N / 16][4],
                                         unsigned slot, int lane)
{
#pragma unroll
    for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
#pragma unroll
        for (int dp = 0; dp < BLOCK_K / 16; ++dp) {
            unsigned b[4];
            const int row = kk * 16 + ((lane / 8) % 2) * 8 + (lane % 8);
            const int col = dp * 16 + (lane / 16) * 8;
            ldmatrix_x4_trans(b, slot + tile_off(row, col * 2, FATTN_KV_CHUNKS));
#pragma unroll
            for (int mt = 0; mt < kMTiles; ++mt) {
                mma_16816(o[mt][c * (BLOCK_K / 8) + 2 * dp], p[mt][kk], b[0], b[1]);
                mma_16816(o[mt][c * (BLOCK_K / 8) + 2 * dp + 1], p[mt][kk], b[2], b[3]);
            }
        }
    }
}

} /* namespace */

#if SPLIT_KV > 1
#define FATTN_CLUSTER __cluster_dims__(SPLIT_KV, 1, 1)
#else
#define FATTN_CLUSTER
#endif

extern "C" __global__ void FATTN_CLUSTER __launch_bounds__(FATTN_THREADS)
fattn_fwd(const half *__restrict__ q, const half *__restrict__ k, const half *__restrict__ v,
          half *__restrict__ o, int batch, int heads, int seqlen, float scale)
{
    FATTN_DYNAMIC_SMEM(smem);
    (void)batch;
    const int warp = threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    /* Row blocks in x, SPLIT_KV consecutive blocks (one cluster) per row block. */
    const int m_idx = (int)blockIdx.x / SPLIT_KV;
    const int m_block = CAUSAL ? (int)(gridDim.x / SPLIT_KV) - 1 - m_idx : m_idx;
    const int m0 = m_block * BLOCK_M;
    const size_t head = ((size_t)blockIdx.z * heads + blockIdx.y) * (size_t)seqlen * HEAD_DIM;
    const half *qh = q + head;
    const float scale_log2 = scale * 1.4426950408889634f;

    unsigned char *q_tile = smem;
    unsigned char *ring = smem + FATTN_Q_TILE_BYTES;
    const unsigned q_tile_s = smem_addr(q_tile);
    const unsigned ring_s = smem_addr(ring);

    const int n_end = CAUSAL ? min(seqlen, m0 + BLOCK_M) : seqlen;
#if SPLIT_KV > 1
    /* This block's share of the row block's key tiles: [t_begin, t_end). */
    const int rank = (int)cluster_rank();
    const int all_tiles = (n_end + BLOCK_N - 1) / BLOCK_N;
    const int t_begin = rank * all_tiles / SPLIT_KV;
    const int n_tiles = (rank + 1) * all_tiles / SPLIT_KV - t_begin;
#else
    const int t_begin = 0;
    const int n_tiles = (n_end + BLOCK_N - 1) / BLOCK_N;
#endif
#if STAGES > 1
    const int n_chunks = n_tiles * 2 * kChunksPerTile; /* K and V chunks to load ahead */
#endif
    const half *kh = k + head + (size_t)t_begin * BLOCK_N * HEAD_DIM;
    const half *vh = v + head + (size_t)t_begin * BLOCK_N * HEAD_DIM;
    const int kv_len = seqlen - t_begin * BLOCK_N; /* keys from kh on */

    copy_tile<BLOCK_M, FATTN_Q_CHUNKS>(q_tile, qh + (size_t)m0 * HEAD_DIM, seqlen - m0);
#if CP_ASYNC
    cp_async_commit();
#endif

#if STAGES > 1
#pragma unroll
    for (int i = 0; i < STAGES - 1; ++i) {
        if (i < n_chunks) {
            int valid;
            const half *src = chunk_src(i, kh, vh, valid, kv_len);
            copy_tile<BLOCK_N, FATTN_KV_CHUNKS>(ring + i * FATTN_KV_SLOT_BYTES, src, valid);
        }
#if CP_ASYNC
        cp_async_commit();
#endif
    }
#endif

    float o_acc[kMTiles][kOTiles][4];
    float row_m[kMTiles][2], row_l[kMTiles][2];
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
        for (int t = 0; t < kOTiles; ++t)
            o_acc[mt][t][0] = o_acc[mt][t][1] = o_acc[mt][t][2] = o_acc[mt][t][3] = 0.f;
        row_m[mt][0] = row_m[mt][1] = kNegInf;
        row_l[mt][0] = row_l[mt][1] = 0.f;
    }
    float s_acc[kMTiles][kSTiles][4];
    unsigned p_frag[kMTiles][BLOCK_N / 16][4];

#if Q_REGS
    /* Q's fragments, once: wait for Q's copy only (the younger STAGES - 1
     * groups of the ring may stay in flight). */
#if CP_ASYNC
    cp_async_wait<STAGES - 1>();
#endif
    __syncthreads();
    QRegs q_regs;
#pragma unroll
    for (int ks = 0; ks < HEAD_DIM / 16; ++ks)
        q_frags(q_regs.f[ks], ks, q_tile_s, warp, lane);
#define FATTN_QK_Q q_regs
#else
#define FATTN_QK_Q q_tile_s
#endif

    int chunk = 0;
    int read_slot = 0;
    int write_slot = STAGES - 1;

    FATTN_UNROLL_BY(UNROLL)
    for (int t = 0; t < n_tiles; ++t) {
#pragma unroll
        for (int part = 0; part < 2 * kChunksPerTile; ++part, ++chunk) {
            /* Acquire chunk `chunk` in slot read_slot; start chunk + STAGES - 1. */
#if STAGES == 1
            __syncthreads();
            {
                int valid;
                const half *src = chunk_src(chunk, kh, vh, valid, kv_len);
                copy_tile<BLOCK_N, FATTN_KV_CHUNKS>(ring, src, valid);
            }
#if CP_ASYNC
            cp_async_commit();
            cp_async_wait<0>();
#endif
            __syncthreads();
#else
            const int ahead = chunk + STAGES - 1;
#if CP_ASYNC
            cp_async_wait<STAGES - 2>();
            __syncthreads();
            if (ahead < n_chunks) {
                int valid;
                const half *src = chunk_src(ahead, kh, vh, valid, kv_len);
                copy_tile<BLOCK_N, FATTN_KV_CHUNKS>(ring + write_slot * FATTN_KV_SLOT_BYTES, src, valid);
            }
            cp_async_commit();
#else
            __syncthreads();
            Staged<BLOCK_N, FATTN_KV_CHUNKS> staged;
            if (ahead < n_chunks) {
                int valid;
                const half *src = chunk_src(ahead, kh, vh, valid, kv_len);
                load_regs(staged, src, valid);
            }
#endif
#endif
            const unsigned slot = ring_s + read_slot * FATTN_KV_SLOT_BYTES;

            if (part < kChunksPerTile) {
                if (part == 0) {
#pragma unroll
                    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
                        for (int n = 0; n < kSTiles; ++n)
                            s_acc[mt][n][0] = s_acc[mt][n][1] = s_acc[mt][n][2] = s_acc[mt][n][3] = 0.f;
                }
                qk_chunk(part, s_acc, FATTN_QK_Q, slot, warp, lane);
                if (part == kChunksPerTile - 1) {
                    /* Online softmax of this tile's scores, in log2 units. */
                    const int n0 = (t_begin + t) * BLOCK_N;
                    const bool need_mask = n0 + BLOCK_N > seqlen || (CAUSAL && n0 + BLOCK_N - 1 > m0);
#pragma unroll
                    for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            const int row = m0 + warp * kRowsPerWarp + mt * 16 + lane / 4 + h * 8;
                            float mx = kNegInf;
#pragma unroll
                            for (int n = 0; n < kSTiles; ++n) {
#pragma unroll
                                for (int e = 0; e < 2; ++e) {
                                    float x = s_acc[mt][n][2 * h + e] * scale_log2;
                                    if (need_mask) {
                                        const int col = n0 + n * 8 + (lane % 4) * 2 + e;
                                        if (col >= seqlen || (CAUSAL && col > row))
                                            x = kNegInf;
                                    }
                                    s_acc[mt][n][2 * h + e] = x;
                                    mx = fmaxf(mx, x);
                                }
                            }
                            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                            const float m_new = fmaxf(row_m[mt][h], mx);
                            const float m_use = m_new == kNegInf ? 0.f : m_new;
                            const float alpha = exp2f(row_m[mt][h] - m_use);
                            row_m[mt][h] = m_new;
                            float sum = 0.f;
#pragma unroll
                            for (int n = 0; n < kSTiles; ++n) {
#pragma unroll
                                for (int e = 0; e < 2; ++e) {
                                    const float pv = exp2f(s_acc[mt][n][2 * h + e] - m_use);
                                    s_acc[mt][n][2 * h + e] = pv;
                                    sum += pv;
                                }
                            }
                            row_l[mt][h] = row_l[mt][h] * alpha + sum;
#pragma unroll
                            for (int d = 0; d < kOTiles; ++d) {
                                o_acc[mt][d][2 * h] *= alpha;
                                o_acc[mt][d][2 * h + 1] *= alpha;
                            }
                        }
#pragma unroll
                        for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
                            p_frag[mt][kk][0] = pack_half2(s_acc[mt][2 * kk][0], s_acc[mt][2 * kk][1]);
                            p_frag[mt][kk][1] = pack_half2(s_acc[mt][2 * kk][2], s_acc[mt][2 * kk][3]);
                            p_frag[mt][kk][2] = pack_half2(s_acc[mt][2 * kk + 1][0], s_acc[mt][2 * kk + 1][1]);
                            p_frag[mt][kk][3] = pack_half2(s_acc[mt][2 * kk + 1][2], s_acc[mt][2 * kk + 1][3]);
                        }
                    }
                }
            } else {
                pv_chunk(part - kChunksPerTile, o_acc, p_frag, slot, lane);
            }

#if STAGES > 1 && !CP_ASYNC
            if (ahead < n_chunks)
                store_regs(staged, ring + write_slot * FATTN_KV_SLOT_BYTES);
#endif
            read_slot = read_slot + 1 == STAGES ? 0 : read_slot + 1;
            write_slot = write_slot + 1 == STAGES ? 0 : write_slot + 1;
        }
    }

#if CP_ASYNC
    cp_async_wait<0>();
#endif
    /* Each row's sum over the four lanes of its quad. */
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            row_l[mt][h] += __shfl_xor_sync(0xffffffffu, row_l[mt][h], 1);
            row_l[mt][h] += __shfl_xor_sync(0xffffffffu, row_l[mt][h], 2);
        }
#if SPLIT_KV > 1
    /* Each block of the cluster leaves its partial (row max in log2 units,
     * row sum, unnormalized O in fp32) in its own shared memory, over the
     * loop's region; after the cluster barrier block `rank` combines rows
     * [rank, rank + 1) * BLOCK_M / SPLIT_KV from all SPLIT_KV blocks. */
    constexpr int kPartRow = FATTN_PART_ROW_BYTES / 4; /* floats per row */
    float *part_o = reinterpret_cast<float *>(smem);
    float *part_m = part_o + BLOCK_M * kPartRow;
    float *part_l = part_m + BLOCK_M;
    __syncthreads(); /* every warp is done with the Q tile and the ring */
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = warp * kRowsPerWarp + mt * 16 + lane / 4 + h * 8;
            if (lane % 4 == 0) {
                st_shared(part_m + row, row_m[mt][h]);
                st_shared(part_l + row, row_l[mt][h]);
            }
#pragma unroll
            for (int d = 0; d < kOTiles; ++d)
                st_shared(part_o + row * kPartRow + d * 8 + (lane % 4) * 2,
                          make_float2(o_acc[mt][d][2 * h], o_acc[mt][d][2 * h + 1]));
        }
    }
    cluster_sync();
    {
        constexpr int kRowsPerRank = BLOCK_M / SPLIT_KV;
        constexpr int kUnitsPerRow = HEAD_DIM / 4; /* 4 columns per unit */
        constexpr int kUnits = kRowsPerRank * kUnitsPerRow;
        const unsigned part_s = smem_addr(part_o);
        const unsigned m_s = smem_addr(part_m);
        const unsigned l_s = smem_addr(part_l);
        half *oh = o + head + (size_t)m0 * HEAD_DIM;
        for (int u = threadIdx.x; u < kUnits; u += kThreads) {
            const int row = rank * kRowsPerRank + u / kUnitsPerRow;
            const int col = (u % kUnitsPerRow) * 4;
            if (m0 + row >= seqlen)
                continue;
            float mj[SPLIT_KV], mx = kNegInf;
#pragma unroll
            for (int j = 0; j < SPLIT_KV; ++j) {
                mj[j] = ld_cluster(cluster_map(m_s + row * 4, j));
                mx = fmaxf(mx, mj[j]);
            }
            float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
            float l = 0.f;
#pragma unroll
            for (int j = 0; j < SPLIT_KV; ++j) {
                const float w = mx == kNegInf ? 0.f : exp2f(mj[j] - mx);
                const float4 x = ld_cluster_v4(cluster_map(part_s + (row * kPartRow + col) * 4, j));
                l += w * ld_cluster(cluster_map(l_s + row * 4, j));
                acc.x += w * x.x;
                acc.y += w * x.y;
                acc.z += w * x.z;
                acc.w += w * x.w;
            }
            const float inv = l > 0.f ? 1.f / l : 0.f;
            half *dst = oh + (size_t)row * HEAD_DIM + col;
#if HALF2
            uint2 pk;
            pk.x = pack_half2(acc.x * inv, acc.y * inv);
            pk.y = pack_half2(acc.z * inv, acc.w * inv);
            st_global(dst, pk);
#else
            st_global(dst + 0, __float2half_rn(acc.x * inv));
            st_global(dst + 1, __float2half_rn(acc.y * inv));
            st_global(dst + 2, __float2half_rn(acc.z * inv));
            st_global(dst + 3, __float2half_rn(acc.w * inv));
#endif
        }
    }
    cluster_sync(); /* no block leaves while a peer still reads its shared memory */
#else
    /* Normalize and stage O through this warp's own rows of the Q tile. */
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const float l = row_l[mt][h];
            const float inv = l > 0.f ? 1.f / l : 0.f;
            const int row = warp * kRowsPerWarp + mt * 16 + lane / 4 + h * 8;
#pragma unroll
            for (int d = 0; d < kOTiles; ++d) {
                const int byte = (d * 8 + (lane % 4) * 2) * 2;
                const float lo = o_acc[mt][d][2 * h] * inv;
                const float hi = o_acc[mt][d][2 * h + 1] * inv;
#if HALF2
                st_shared(q_tile + tile_off(row, byte, FATTN_Q_CHUNKS), pack_half2(lo, hi));
#else
                st_shared(q_tile + tile_off(row, byte, FATTN_Q_CHUNKS), __float2half_rn(lo));
                st_shared(q_tile + tile_off(row, byte + 2, FATTN_Q_CHUNKS), __float2half_rn(hi));
#endif
            }
        }
    }
    __syncthreads();

    using Out = Tile<BLOCK_M, FATTN_Q_CHUNKS, kStoreBytes>;
    half *oh = o + head + (size_t)m0 * HEAD_DIM;
    const int valid = seqlen - m0;
#pragma unroll
    for (int i = 0; i < Out::kPerThread; ++i) {
        const int u = threadIdx.x + i * kThreads;
        int row, byte;
        Out::unit(u, row, byte);
        if ((Out::kUnits % kThreads == 0 || u < Out::kUnits) && row < valid)
            st_global(oh + (size_t)row * HEAD_DIM + byte / 2, ld_shared<VecT>(q_tile + tile_off(row, byte, FATTN_Q_CHUNKS)));
    }
#endif /* SPLIT_KV */
}
