/*
 * fattn_wgmma.cu - the wgmma family's kernel: the FlashAttention forward for
 * Hopper (sm_90a), warp-specialised (src/family/wgmma.c).
 *
 * O = softmax(Q K^T scale) V for fp16 [B, H, S, D] (D 64 or 128), fp32
 * accumulation, causal or not, any S >= 1. A tile is BLOCK_M query rows of
 * one head. SCHED=0: one block a tile, grid (ceil(S / BLOCK_M), H, B), a
 * causal launch taking its row blocks last first (the longest first).
 * SCHED=1 (persistent): grid (min(SMs, tiles), 1, 1), block x running
 * tiles x, x + grid, ... (tile t: head t / row blocks, its row blocks last
 * first when causal); SCHED=2 (lpt, causal only): the same loop over the
 * tiles longest first across heads and batches (tile t: row block
 * blocks - 1 - t / (B H), head t % (B H)). CLUSTER=2 (non-causal, D = 128,
 * SCHED=0): clusters of two blocks along x (compiled in), the grid's x
 * rounded up to pairs: the two row blocks of a pair read the same key
 * tiles, and each block's producer loads one of a tile's two 64-column
 * boxes of K and of V, multicast to both blocks (each block's full barrier
 * counts the whole tile); a slot's empty barrier counts the releases of
 * both blocks' consumers, each consumer releasing the slot in both blocks;
 * K and V loads hint L2 to keep them (EVICT_LAST), Q's to drop it
 * (EVICT_FIRST); a block past S (the pair's second when the row blocks
 * are odd) loads its boxes and computes nothing, its consumer 0 following
 * the phases and releasing the slots as if it read them; a cluster barrier
 * after the inits and before any block exits. A block's barriers, ring and
 * phases run on from tile to tile: the producer loads the next tile's K
 * and V while the consumers finish the last one, and its Q once every
 * consumer's O store has read the Q tile it was staged in (mbarrier Q
 * empty).
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
 *   mbarriers: Q full, then K full, K empty, V full, V empty per slot,
 *   then Q empty (SCHED > 0). An empty barrier counts one arrival per
 *   active consumer warpgroup (SCHED=0: those with a row below S, in each
 *   block of the cluster; the others exit) or per consumer warpgroup
 *   (SCHED > 0: one whose rows of a tile all lie past S follows the tile's
 *   phases without reading and releases what it would have read, so that
 *   its waits stay in step with the barriers over the block's next tiles:
 *   a parity wait cannot tell a phase from the one two uses earlier).
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
#if !defined(OVERLAP) && defined(FATTN_OVERLAP)
#define OVERLAP FATTN_OVERLAP
#endif
#if !defined(PINGPONG) && defined(FATTN_PINGPONG)
#define PINGPONG FATTN_PINGPONG
#endif
#if !defined(HEAD_DIM) && defined(FATTN_HEAD_DIM)
#define HEAD_DIM FATTN_HEAD_DIM
#endif
#if !defined(SCHED) && defined(FATTN_SCHED)
#define SCHED FATTN_SCHED
#endif
#if !defined(CLUSTER) && defined(FATTN_CLUSTER)
#define CLUSTER FATTN_CLUSTER
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
#ifndef OVERLAP
#define OVERLAP 0
#endif
#ifndef PINGPONG
#define PINGPONG 0
#endif
#ifndef SCHED
#define SCHED 0
#endif
#ifndef HEAD_DIM
#define HEAD_DIM 64
#endif
#ifndef CLUSTER
#define CLUSTER 1
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
static_assert(OVERLAP == 0 || OVERLAP == 1, "OVERLAP: 0 or 1");
static_assert(PINGPONG == 0 || (PINGPONG == 1 && BLOCK_M >= 128), "PINGPONG: 0, or 1 with two or more consumers");
static_assert(SCHED == 0 || SCHED == 1 || (SCHED == 2 && CAUSAL), "SCHED: 0 (tile), 1 (persistent), 2 (lpt, causal)");
static_assert(CLUSTER == 1 || (CLUSTER == 2 && !CAUSAL && HEAD_DIM == 128 && SCHED == 0),
              "CLUSTER: 1, or 2 (non-causal, D = 128, SCHED 0)");

/* The blocks of a cluster, compiled in (a plain launch); the simulator
 * reads FATTN_CLUSTER_X. */
#define FATTN_CLUSTER_X CLUSTER
#if CLUSTER > 1
#define WG_CLUSTER_DIMS __cluster_dims__(CLUSTER, 1, 1)
#else
#define WG_CLUSTER_DIMS
#endif

#define CONSUMERS (BLOCK_M / 64)
#define D_BOXES   (HEAD_DIM / 64)
#define SW        FATTN_GMMA_SW128
/* Named barriers (0 is __syncthreads): 1 + c consumer c's own (P's stores,
 * the epilogue), TURN_BAR + c its turn to issue wgmma (PINGPONG). */
#define TURN_BAR  4
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
#define NBARS            (1 + 4 * STAGES + (SCHED > 0))
#define FATTN_SMEM_BYTES (SM_BAR + 8 * NBARS + 1024) /* and the slack for rounding the base up to 1024 */

/* setmaxnreg (FA3's split): one consumer 56 / 256, two 24 / 240, three
 * 32 / 160; the block's 64K registers at most. */
#define PRODUCER_REGS (CONSUMERS == 1 ? 56 : CONSUMERS == 2 ? 24 : 32)
#define CONSUMER_REGS (CONSUMERS == 1 ? 256 : CONSUMERS == 2 ? 240 : 160)
static_assert(128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS) <= 65536, "setmaxnreg over the register file");

extern "C" __device__ const unsigned int fattn_smem_bytes = FATTN_SMEM_BYTES;
extern "C" __device__ const unsigned int fattn_threads = FATTN_THREADS;
/* The registers the block's warpgroups hold once each has run its
 * setmaxnreg: the launch's (the cubin's count a thread x FATTN_THREADS) must
 * hold them, or an increase waits forever (gate setmaxnreg_pool). */
extern "C" __device__ const unsigned int fattn_setmaxnreg_pool = 128 * (PRODUCER_REGS + CONSUMERS * CONSUMER_REGS);
/* PINGPONG: the consumers issue their wgmma in turn (the simulator checks
 * that each warpgroup's issue is ordered after the previous one's). */
extern "C" __device__ const unsigned int fattn_wgmma_turns = PINGPONG;

/* The mbarriers: Q's, then four per slot. */
struct wg_bars {
    unsigned base;
    __device__ __forceinline__ unsigned q_full() const
    {
        return base;
    }
    __device__ __forceinline__ unsigned k_full(int s) const
    {
        return base + 8 * (1 + s);
    }
    __device__ __forceinline__ unsigned k_empty(int s) const
    {
        return base + 8 * (1 + STAGES + s);
    }
    __device__ __forceinline__ unsigned v_full(int s) const
    {
        return base + 8 * (1 + 2 * STAGES + s);
    }
    __device__ __forceinline__ unsigned v_empty(int s) const
    {
        return base + 8 * (1 + 3 * STAGES + s);
    }
    __device__ __forceinline__ unsigned q_empty() const
    {
        return base + 8 * (1 + 4 * STAGES);
    }
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

/* A block's tiles: tile t's first query row and (batch x head). With
 * SCHED=0 the block's one tile is its grid position (t unused). */
struct wg_tile {
    int m0, bh;
};

__device__ __forceinline__ wg_tile tile_of(int t, int row_blocks, int bhs, int heads)
{
#if SCHED == 0
    (void)t, (void)row_blocks, (void)bhs;
    const int m_block = CAUSAL ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;
    return {m_block * BLOCK_M, (int)(blockIdx.z * heads + blockIdx.y)};
#elif SCHED == 1
    (void)bhs, (void)heads;
    const int r = t % row_blocks;
    return {(CAUSAL ? row_blocks - 1 - r : r) * BLOCK_M, t / row_blocks};
#else
    (void)heads;
    return {(row_blocks - 1 - t / bhs) * BLOCK_M, t % bhs};
#endif
}

/* Consumers with a row below S at the tile from m0 (the others idle; with
 * CLUSTER > 1, none in a block past S, whose consumer 0 follows the
 * phases: idle_tile). */
__device__ __forceinline__ int active_of(int m0, int seqlen)
{
    const int a = min(CONSUMERS, (seqlen - m0 + 63) / 64);
    return CLUSTER > 1 ? max(a, 0) : a;
}

/* One 64-column box x of a K or V tile into dst: CLUSTER=1 every box;
 * CLUSTER > 1 the boxes x of this block's rank (x % CLUSTER), each
 * multicast to every block of the cluster and kept in L2 for them. */
__device__ __forceinline__ void load_kv(unsigned dst, const fattn_tensormap *tm, unsigned bar, int x, int row, int bh,
                                        int rank)
{
#if CLUSTER > 1
    if (x % CLUSTER == rank)
        tma_load_3d_multicast(dst, tm, bar, 64 * x, row, bh, (unsigned short)((1u << CLUSTER) - 1u),
                              FATTN_L2_EVICT_LAST);
#else
    (void)rank;
    tma_load_3d(dst, tm, bar, 64 * x, row, bh);
#endif
}

/* A slot's release, by consumer thread t < CLUSTER: CLUSTER=1 thread 0 on
 * the block's own empty barrier; CLUSTER > 1 thread t on block t's, whose
 * producer multicasts into this block's slot too. */
__device__ __forceinline__ void release(unsigned bar, int t)
{
#if CLUSTER > 1
    mbar_arrive_cluster(cluster_map(bar, (unsigned)t));
#else
    (void)t;
    mbar_arrive(bar);
#endif
}

/* Key tile i's slot in the ring, and the parity of the phase it fills
 * there (the slot's (i / STAGES)-th use); i counts the block's key tiles
 * over all its tiles (the ring runs on). */
__device__ __forceinline__ int slot_of(int i)
{
    return i % STAGES;
}

__device__ __forceinline__ unsigned parity_of(int i)
{
    return (unsigned)(i / STAGES) & 1u;
}

/* The producer's thread: per tile Q (once the previous tile's O stores have
 * read their Q tiles), then K and V of every key tile through the ring. */
__device__ __forceinline__ void produce(const fattn_tensormap *tm_q, const fattn_tensormap *tm_k,
                                        const fattn_tensormap *tm_v, unsigned base, wg_bars b, int first, int stride,
                                        int total, int row_blocks, int bhs, int heads, int seqlen, int rank)
{
    int ring = 0; /* key tiles loaded for the block's earlier tiles */
    for (int t = first, j = 0; t < total; t += stride, ++j) {
        const wg_tile tile = tile_of(t, row_blocks, bhs, heads);
        const int tiles = key_tiles(tile.m0, seqlen), active = active_of(tile.m0, seqlen);
        if (SCHED && j > 0)
            wait_phase(b.q_empty(), (unsigned)(j - 1) & 1u);
        mbar_arrive_expect_tx(b.q_full(), active * D_BOXES * BOX_BYTES);
        for (int c = 0; c < active; ++c)
            for (int x = 0; x < D_BOXES; ++x)
#if CLUSTER > 1
                tma_load_3d_hint(base + (c * D_BOXES + x) * BOX_BYTES, tm_q, b.q_full(), 64 * x, tile.m0 + 64 * c,
                                 tile.bh, FATTN_L2_EVICT_FIRST);
#else
                tma_load_3d(base + (c * D_BOXES + x) * BOX_BYTES, tm_q, b.q_full(), 64 * x, tile.m0 + 64 * c, tile.bh);
#endif
        for (int i = 0; i < tiles; ++i) {
            const int g = ring + i, s = slot_of(g);
            const unsigned ph = parity_of(g);
            const unsigned k = base + SM_K + s * KV_BYTES, v = base + SM_V + s * KV_BYTES;
            /* Slot s's previous use (key tile g - STAGES) released by every consumer. */
            if (g >= STAGES)
                wait_phase(b.k_empty(s), ph ^ 1u);
            mbar_arrive_expect_tx(b.k_full(s), KV_BYTES);
            for (int x = 0; x < D_BOXES; ++x)
                load_kv(k + x * BLOCK_N * 128, tm_k, b.k_full(s), x, i * BLOCK_N, tile.bh, rank);
            if (g >= STAGES)
                wait_phase(b.v_empty(s), ph ^ 1u);
            mbar_arrive_expect_tx(b.v_full(s), KV_BYTES);
            for (int x = 0; x < D_BOXES; ++x)
                load_kv(v + x * BLOCK_N * 128, tm_v, b.v_full(s), x, i * BLOCK_N, tile.bh, rank);
        }
        ring += tiles;
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

/* A consumer warpgroup's place: consumer c of 64 query rows from m0 + 64 c;
 * lane `lane` of warp `warp` holds rows row0 and row0 + 8 of the block's
 * queries. Accumulator i of a thread sits at row 16 warp + lane / 4 +
 * 8 ((i / 2) % 2), column 8 (i / 4) + 2 (lane % 4) + i % 2 (wgmma's D
 * layout): a thread holds two rows, h = 0 and 1. The descriptors of Q, and
 * of slot 0's K and V, are built once: a slot's and a K slice's are those
 * advanced by constants (uniform registers, no address arithmetic per
 * wgmma). */
struct wg_consumer {
    int c, active, m0, warp, lane, row0, seqlen;
    int ring; /* the block's key tiles before this tile's (SCHED > 0) */
    float scale_log2;
    fattn_gmma_u64 dq, dk, dv; /* Q's first K slice, slot 0's K and V */
#if !PV_RS
    fattn_gmma_u64 dp; /* this consumer's P tile */
    unsigned char *p_sm;
#endif
};

/* PINGPONG (two or more active consumers): the active consumers take turns
 * to issue their wgmma, so that one's softmax runs under another's GEMMs. A
 * turn is consumer c's named barrier TURN_BAR + c, complete when c's 128
 * threads sync on it and the previous consumer's 128 have arrived (passed
 * it on after their own issue). Every consumer takes as many turns (the
 * same tiles): the last consumer gives the first turn and keeps its last,
 * so that no barrier is left half arrived. */
__device__ __forceinline__ void turn_take(const wg_consumer &w)
{
    if (PINGPONG && w.active > 1)
        bar_sync(TURN_BAR + w.c, 256);
}

__device__ __forceinline__ void turn_pass(const wg_consumer &w, bool last)
{
    if (PINGPONG && w.active > 1 && !(last && w.c == w.active - 1))
        bar_arrive(TURN_BAR + (w.c + 1) % w.active, 256);
}

/* Key tile i of the consumer's tile as the block's ring counts it. */
__device__ __forceinline__ int ring_of(const wg_consumer &w, int i)
{
    return SCHED ? w.ring + i : i;
}

/* S = Q K^T for the key tile in slot s, issued and committed (one group). */
__device__ __forceinline__ void issue_qk(const wg_consumer &w, float (&acc)[BLOCK_N / 2], int s)
{
    const fattn_gmma_u64 dk = fattn_gmma_desc_advance(w.dk, s * KV_BYTES);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < HEAD_DIM / 16; ++kk)
        wgmma_ss<BLOCK_N>(acc, fattn_gmma_desc_advance(w.dq, fattn_gmma_k_offset(0, 64, 16 * kk, SW)),
                          fattn_gmma_desc_advance(dk, fattn_gmma_k_offset(0, BLOCK_N, 16 * kk, SW)), kk > 0);
    wgmma_commit();
}

/* The online softmax of the key tile from n0 on S's accumulators: with
 * MASK, keys past S and (causal) past the row are masked first (the first
 * tile holds key 0, so every row's max is finite from the first tile on);
 * then P = exp2(S scale log2(e) - max scale log2(e)) in place of S. The
 * row sums are rescaled and grown here; O's rescale factors go to corr (O
 * may be in flight). */
template <bool MASK>
__device__ __forceinline__ void softmax(const wg_consumer &w, float (&acc)[BLOCK_N / 2], int n0, float (&row_max)[2],
                                        float (&row_sum)[2], float (&corr)[2])
{
    if (MASK) {
        /* Accumulator j's key is n0 + 2 (lane % 4) + k with k = 8 (j / 4) +
         * j % 2 a constant: it is masked when k passes the last key row h
         * may see, one comparison per accumulator. */
        const int first = n0 + 2 * (w.lane % 4);
        int last[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = w.row0 + 8 * h;
            last[h] = (CAUSAL && row < w.seqlen - 1 ? row : w.seqlen - 1) - first;
        }
#pragma unroll
        for (int j = 0; j < BLOCK_N / 2; ++j)
            if (8 * (j / 4) + j % 2 > last[(j / 2) % 2])
                acc[j] = NEG_INF;
    }
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
        const float m_scaled = mx * w.scale_log2;
        corr[h] = exp2f(row_max[h] * w.scale_log2 - m_scaled);
        row_max[h] = mx;
        row_sum[h] *= corr[h];
#pragma unroll
        for (int j = 2 * h; j < BLOCK_N / 2; j += 4) {
            acc[j] = exp2f(fmaf(acc[j], w.scale_log2, -m_scaled));
            acc[j + 1] = exp2f(fmaf(acc[j + 1], w.scale_log2, -m_scaled));
            row_sum[h] += acc[j] + acc[j + 1];
        }
    }
}

/* Key tiles of consumer c's rows that need no mask: those wholly below S
 * and (causal) at or below its first row. They come first; the loops run
 * them without the mask's instructions. */
__device__ __forceinline__ int unmasked_tiles(const wg_consumer &w, int tiles)
{
    int n = w.seqlen / BLOCK_N;
    if (CAUSAL)
        n = min(n, (w.m0 + 64 * w.c + 1) / BLOCK_N);
    return min(n, tiles);
}

/* O *= corr, row by row (O not in flight). */
__device__ __forceinline__ void rescale(float (&o)[HEAD_DIM / 2], const float (&corr)[2])
{
#pragma unroll
    for (int j = 0; j < HEAD_DIM / 2; ++j)
        o[j] *= corr[(j / 2) % 2];
}

/* P as P.V's A operand, once the P.V that read the previous one has
 * retired: slice j of P (keys 16 j ..) is accumulators 8 j .. 8 j + 7 as
 * the A fragment's fp16 halves (PV_RS=1), or the consumer's swizzled P
 * tile in shared memory, fenced for the async proxy and complete across
 * the warpgroup (PV_RS=0). */
__device__ __forceinline__ void stage_p(const wg_consumer &w, const float (&acc)[BLOCK_N / 2],
                                        unsigned (&p)[BLOCK_N / 16][4])
{
#if PV_RS
#pragma unroll
    for (int j = 0; j < BLOCK_N / 16; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r)
            p[j][r] = pack_half2(acc[8 * j + 2 * r], acc[8 * j + 2 * r + 1]);
#else
    (void)p;
    /* An offset opaque per tile: the compiler would hoist the BLOCK_N / 4
     * swizzled addresses out of the key-tile loops and keep them live (a
     * spill at BLOCK_M 192); computed where stored, they cost an integer
     * instruction or two each (the base stays a shared one: STS). */
    int at = 0;
    fattn_opaque(at);
    unsigned char *p_sm = w.p_sm + at;
#pragma unroll
    for (int j = 0; j < BLOCK_N / 2; j += 2) {
        const int r = 16 * w.warp + w.lane / 4 + 8 * ((j / 2) % 2), col = 8 * (j / 4) + 2 * (w.lane % 4);
        st_shared(p_sm + sw128_offset(r, col), pack_half2(acc[j], acc[j + 1]));
    }
    fence_proxy_async();
    bar_sync(1 + w.c, 128);
#endif
}

/* O += P V for the key tile in slot s, issued and committed (one group). */
__device__ __forceinline__ void issue_pv(const wg_consumer &w, float (&o)[HEAD_DIM / 2], unsigned (&p)[BLOCK_N / 16][4],
                                         int s)
{
    const fattn_gmma_u64 dv = fattn_gmma_desc_advance(w.dv, s * KV_BYTES);
    wgmma_fence();
#pragma unroll
    for (int j = 0; j < BLOCK_N / 16; ++j)
#if PV_RS
        wgmma_rs<HEAD_DIM, 1>(o, p[j], fattn_gmma_desc_advance(dv, 16 * j * 128), 1);
#else
        wgmma_ss<HEAD_DIM, 0, 1>(o, fattn_gmma_desc_advance(w.dp, fattn_gmma_k_offset(0, 64, 16 * j, SW)),
                                 fattn_gmma_desc_advance(dv, 16 * j * 128), 1);
    (void)p;
#endif
    wgmma_commit();
}

/* O += P V of key tile j in the consumer's turn, waited for, and V's slot
 * released (`last`: the consumer's last GEMM). */
__device__ __forceinline__ void pv_retired(const wg_consumer &w, wg_bars b, int t, int j, bool last,
                                           float (&o)[HEAD_DIM / 2], unsigned (&p)[BLOCK_N / 16][4])
{
    const int s = slot_of(ring_of(w, j));
    wait_phase(b.v_full(s), parity_of(ring_of(w, j)));
    turn_take(w);
    issue_pv(w, o, p, s);
    turn_pass(w, last);
    wgmma_wait<0>(o);
    if (t < CLUSTER)
        release(b.v_empty(s), t);
}

/* One key tile i without overlap: S = Q K^T, wait, the softmax, P V, wait
 * (each GEMM a turn; `last`: the tile's P V is the consumer's last). */
template <bool MASK>
__device__ __forceinline__ void step(const wg_consumer &w, wg_bars b, int t, int i, bool last, float (&o)[HEAD_DIM / 2],
                                     float (&acc)[BLOCK_N / 2], unsigned (&p)[BLOCK_N / 16][4], float (&row_max)[2],
                                     float (&row_sum)[2], float (&corr)[2])
{
    const int s = slot_of(ring_of(w, i));
    wait_phase(b.k_full(s), parity_of(ring_of(w, i)));
    turn_take(w);
    issue_qk(w, acc, s);
    turn_pass(w, false);
    wgmma_wait<0>(acc);
    if (t < CLUSTER)
        release(b.k_empty(s), t);
    softmax<MASK>(w, acc, i * BLOCK_N, row_max, row_sum, corr);
    rescale(o, corr);
    stage_p(w, acc, p);
    pv_retired(w, b, t, i, last, o, p);
}

/* True once every exp of the softmax has been summed: a row sum is never
 * -1 (a sum of exps, or NaN, which passes too). The K slot's release
 * guarded by it waits for the softmax, and so does the wait_group 0 that
 * follows the release; unguarded, ptxas issued the release and the wait
 * right after wait_group 1 (or 46 of 66 EX2 later, depending on the code
 * around), and P V ran without the softmax under it. */
__device__ __forceinline__ bool after_all(const float (&row_sum)[2])
{
    return row_sum[0] + row_sum[1] != -1.f;
}

/* One key tile i >= 1 with overlap: S(i) = Q K(i)^T issued, then O's
 * rescale and P(i-1) V(i-1); S(i) waited for alone (wait_group 1) and
 * softmax(i) run while P V runs (K(i) released once it is done); then
 * P V waited for (wait_group 0) and P(i) staged in place of P(i-1). */
template <bool MASK>
__device__ __forceinline__ void overlap_step(const wg_consumer &w, wg_bars b, int t, int i, float (&o)[HEAD_DIM / 2],
                                             float (&acc)[BLOCK_N / 2], unsigned (&p)[BLOCK_N / 16][4],
                                             float (&row_max)[2], float (&row_sum)[2], float (&corr)[2])
{
    const int s = slot_of(ring_of(w, i)), sp = slot_of(ring_of(w, i - 1));
    wait_phase(b.k_full(s), parity_of(ring_of(w, i)));
    turn_take(w);
    issue_qk(w, acc, s);
    rescale(o, corr);
    wait_phase(b.v_full(sp), parity_of(ring_of(w, i - 1)));
    issue_pv(w, o, p, sp);
    turn_pass(w, false);
    wgmma_wait<1>(acc); /* S(i); P(i-1) V(i-1) still runs */
    softmax<MASK>(w, acc, i * BLOCK_N, row_max, row_sum, corr);
    if (t < CLUSTER && after_all(row_sum))
        release(b.k_empty(s), t);
    wgmma_wait<0>(o);
    if (t < CLUSTER)
        release(b.v_empty(sp), t);
    stage_p(w, acc, p);
}

/* Consumer warpgroup c on one tile (the block's j-th): every key tile of
 * its 64 rows, then the epilogue. OVERLAP=0: per tile S = Q K^T, wait, the
 * softmax, P V, wait. OVERLAP=1 (FA3's intra-warpgroup pipelining): tile i
 * issues S(i) = Q K(i)^T, then O's rescale and P(i-1) V(i-1), waits for
 * S(i) alone (wait_group 1) and runs softmax(i) while P V runs, then waits
 * for it (wait_group 0): V is consumed one tile behind K, the first and
 * last tiles peeled. A slot's K or V is released when the wgmma reading it
 * has retired; the Q tile (SCHED > 0) once the O store staged in it has
 * read it. */
__device__ __forceinline__ void consume_tile(const fattn_tensormap *tm_o, unsigned base, unsigned char *sm, wg_bars b,
                                             const wg_consumer &w, int t, int bh, int tiles, int j)
{
    const int c = w.c;
    float o[HEAD_DIM / 2], acc[BLOCK_N / 2];
    float row_max[2] = {NEG_INF, NEG_INF}, row_sum[2] = {0.f, 0.f}, corr[2];
    unsigned p[BLOCK_N / 16][4];
#pragma unroll
    for (int i = 0; i < HEAD_DIM / 2; ++i)
        o[i] = 0.f;
    wait_phase(b.q_full(), (unsigned)j & 1u);
    if (PINGPONG && w.active > 1 && c == w.active - 1)
        bar_arrive(TURN_BAR, 256); /* the first turn, consumer 0's */
#if OVERLAP
    /* Tile 0: S, its softmax (masked if need be), P staged; its P V waits
     * for tile 1's S. Turns: S(0), then S(i) with P(i-1) V(i-1), then the
     * last P V. */
    const int s0 = slot_of(ring_of(w, 0));
    wait_phase(b.k_full(s0), parity_of(ring_of(w, 0)));
    turn_take(w);
    issue_qk(w, acc, s0);
    turn_pass(w, false);
    wgmma_wait<0>(acc);
    if (t < CLUSTER)
        release(b.k_empty(s0), t);
    softmax<true>(w, acc, 0, row_max, row_sum, corr);
    stage_p(w, acc, p);
    const int plain = max(1, unmasked_tiles(w, tiles));
    for (int i = 1; i < plain; ++i)
        overlap_step<false>(w, b, t, i, o, acc, p, row_max, row_sum, corr);
    for (int i = plain; i < tiles; ++i)
        overlap_step<true>(w, b, t, i, o, acc, p, row_max, row_sum, corr);
    rescale(o, corr);
    pv_retired(w, b, t, tiles - 1, true, o, p);
#else
    const int plain = unmasked_tiles(w, tiles);
    for (int i = 0; i < plain; ++i)
        step<false>(w, b, t, i, i == tiles - 1, o, acc, p, row_max, row_sum, corr);
    for (int i = plain; i < tiles; ++i)
        step<true>(w, b, t, i, i == tiles - 1, o, acc, p, row_max, row_sum, corr);
#endif

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
    for (int jj = 0; jj < HEAD_DIM / 2; jj += 2) {
        const int h = (jj / 2) % 2, r = 16 * w.warp + w.lane / 4 + 8 * h, col = 8 * (jj / 4) + 2 * (w.lane % 4);
        st_shared(q_sm + sw128_offset(r, col), pack_half2(o[jj] * inv[h], o[jj + 1] * inv[h]));
    }
    fence_proxy_async();
    bar_sync(1 + c, 128);
    if (t == 0) {
        const unsigned q = base + c * D_BOXES * BOX_BYTES;
        for (int x = 0; x < D_BOXES; ++x)
            tma_store_3d(tm_o, q + x * BOX_BYTES, 64 * x, w.m0 + 64 * c, bh);
        bulk_commit();
        /* The shared source stays until the store has read it; then (SCHED
         * > 0) the producer may load the next tile's Q over it. */
        bulk_wait_read<0>();
        if (SCHED)
            mbar_arrive(b.q_empty());
    }
}

/* SCHED > 0, a consumer whose rows of the block's j-th tile all lie past
 * S: it waits for each of the tile's phases in order (Q's, then each key
 * tile's K and V) and releases each slot as if it had read it, so that its
 * parity waits on the block's next tiles see the phases they mean.
 * CLUSTER > 1, consumer 0 of a block past S (the grid rounded up to whole
 * clusters) does the same for the block's one tile: the other blocks'
 * multicasts into this block have landed before its producer arms a slot
 * again (an arrival on a phase still waiting for its bytes would be one
 * too many) and before the block exits. */
__device__ __forceinline__ void idle_tile(wg_bars b, int t, int ring, int tiles, int j)
{
    wait_phase(b.q_full(), (unsigned)j & 1u);
    for (int i = 0; i < tiles; ++i) {
        const int g = ring + i, s = slot_of(g);
        wait_phase(b.k_full(s), parity_of(g));
        if (t < CLUSTER)
            release(b.k_empty(s), t);
        wait_phase(b.v_full(s), parity_of(g));
        if (t < CLUSTER)
            release(b.v_empty(s), t);
    }
    if (SCHED && t == 0)
        mbar_arrive(b.q_empty());
}

/* Consumer warpgroup c: its rows of each of the block's tiles (a tile whose
 * rows past 64 c lie all past S idle). */
__device__ __forceinline__ void consume(const fattn_tensormap *tm_o, unsigned base, unsigned char *sm, wg_bars b, int c,
                                        int first, int stride, int total, int row_blocks, int bhs, int heads,
                                        int seqlen, float scale)
{
    const int t = threadIdx.x % 128;
    wg_consumer w;
    w.c = c, w.warp = t / 32, w.lane = t % 32, w.seqlen = seqlen;
    w.scale_log2 = scale * 1.4426950408889634f;
    const unsigned q = base + c * D_BOXES * BOX_BYTES;
    w.dq = fattn_gmma_desc_k(q, 64, SW);
    w.dk = fattn_gmma_desc_k(base + SM_K, BLOCK_N, SW);
    w.dv = fattn_gmma_desc_mn_boxes(base + SM_V, BLOCK_N, SW);
#if !PV_RS
    /* from Q's: its tile lies SM_P + c (P_BOXES - D_BOXES) boxes on (positive: Q precedes K, V and P) */
    w.dp = fattn_gmma_desc_advance(w.dq, (unsigned)(SM_P + c * ((int)P_BOXES - D_BOXES) * BOX_BYTES));
    w.p_sm = sm + SM_P + c * P_BOXES * BOX_BYTES;
#endif
    int ring = 0;
    for (int tt = first, j = 0; tt < total; tt += stride, ++j) {
        const wg_tile tile = tile_of(tt, row_blocks, bhs, heads);
        const int tiles = key_tiles(tile.m0, seqlen);
        w.active = active_of(tile.m0, seqlen);
        if (c < w.active) {
            w.m0 = tile.m0, w.row0 = tile.m0 + 64 * c + 16 * w.warp + w.lane / 4, w.ring = ring;
            consume_tile(tm_o, base, sm, b, w, t, tile.bh, tiles, j);
        } else if (SCHED || (CLUSTER > 1 && w.active == 0 && c == 0)) {
            idle_tile(b, t, ring, tiles, j);
        }
        ring += tiles;
    }
}

extern "C" __global__ void WG_CLUSTER_DIMS __launch_bounds__(FATTN_THREADS, 1)
    fattn_wgmma(const __grid_constant__ fattn_tensormap tm_q, const __grid_constant__ fattn_tensormap tm_k,
                const __grid_constant__ fattn_tensormap tm_v, const __grid_constant__ fattn_tensormap tm_o, int batch,
                int heads, int seqlen, float scale)
{
    FATTN_DYNAMIC_SMEM(smem);
    const unsigned raw = smem_addr(smem), pad = (1024 - raw % 1024) % 1024, base = raw + pad;
    unsigned char *sm = smem + pad;
    const wg_bars b = {base + SM_BAR};
    /* The block's tiles: first, first + stride, ... below total. */
    const int row_blocks = (seqlen + BLOCK_M - 1) / BLOCK_M, bhs = batch * heads;
#if SCHED
    const int first = (int)blockIdx.x, stride = (int)gridDim.x, total = row_blocks * bhs;
#else
    const int first = 0, stride = 1, total = 1;
#endif
    /* The warpgroup read from lane 0: ptxas then knows it warp-uniform, and
     * keeps a consumer's descriptors in uniform registers. */
    const int wg = __shfl_sync(0xffffffffu, (int)(threadIdx.x / 128), 0);
    /* An empty barrier's arrivals: SCHED=0, the block's one tile's active
     * consumers (the idle ones exit), and with CLUSTER > 1 those of every
     * block of the cluster (row blocks blockIdx.x - rank + r; a block past
     * S has one, its consumer 0 following the phases); else every consumer
     * (the idle ones of a tile follow its phases). */
#if CLUSTER > 1
    const int rank = (int)cluster_rank();
    int releases = 0;
    for (int r = 0; r < CLUSTER; ++r)
        releases += max(active_of(((int)blockIdx.x - rank + r) * BLOCK_M, seqlen), 1);
#else
    const int rank = 0;
    const int releases = SCHED ? CONSUMERS : active_of(tile_of(0, row_blocks, bhs, heads).m0, seqlen);
#endif
    if (threadIdx.x == 0) {
        mbar_init(b.q_full(), 1);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(b.k_full(s), 1);
            mbar_init(b.v_full(s), 1);
            mbar_init(b.k_empty(s), releases);
            mbar_init(b.v_empty(s), releases);
        }
        if (SCHED)
            mbar_init(b.q_empty(), CONSUMERS);
        fence_mbarrier_init();
    }
#if CLUSTER > 1
    cluster_sync(); /* every block's barriers initialized before another block's loads and releases reach them */
#else
    __syncthreads();
#endif
    if (wg == 0) {
        setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0)
            produce(&tm_q, &tm_k, &tm_v, base, b, first, stride, total, row_blocks, bhs, heads, seqlen, rank);
    } else {
        setmaxnreg_inc<CONSUMER_REGS>();
        consume(&tm_o, base, sm, b, wg - 1, first, stride, total, row_blocks, bhs, heads, seqlen, scale);
    }
#if CLUSTER > 1
    cluster_sync(); /* no block exits while another may still release its slots or load into them */
#endif
}
