/*
 * fattn_prim_sm90.h - Hopper's instructions as small inline functions, for
 * kernels compiled for sm_90a: warpgroup MMA (wgmma), TMA tensor copies
 * (cp.async.bulk.tensor), mbarriers, the async-proxy fence, named barriers
 * and register reallocation (setmaxnreg). The companion of fattn_prim.h,
 * under the same rule: a kernel's PTX lives here and nowhere else, and
 * compiled for the host with FATTN_SIM each name is one call into the
 * simulator (kernels/sim/fattn_sim_prim_sm90.h), which checks it and runs
 * it with the semantics quoted beside each function (PTX ISA 8.x sections).
 *
 * Shared-memory operands are shared::cta addresses (smem_addr() of
 * fattn_prim.h); wgmma's are 64-bit matrix descriptors (fattn_gmma.h);
 * a TMA's tensor map is a fattn_tensormap the host filled (a CUtensorMap
 * encoded with cuTensorMapEncodeTiled, in __constant__ memory).
 */
#ifndef FATTN_KERNELS_FATTN_PRIM_SM90_H
#define FATTN_KERNELS_FATTN_PRIM_SM90_H

#include "fattn_prim.h"

/* The 128 opaque bytes of a CUtensorMap (cuda.h: 64-byte aligned). */
struct __align__(64) fattn_tensormap {
    unsigned long long opaque[16];
};

/* The L2 eviction priorities of a load's .L2::cache_hint operand: the
 * 64-bit cache policies createpolicy.fractional.L2::evict_{normal,first,last}
 * .b64 makes for a fraction of 1.0, as CUTLASS spells them (CacheHintSm90).
 * The simulator takes these three and no other policy. */
#define FATTN_L2_EVICT_NORMAL 0x1000000000000000ull
#define FATTN_L2_EVICT_FIRST  0x12F0000000000000ull
#define FATTN_L2_EVICT_LAST   0x14F0000000000000ull

#ifdef FATTN_SIM
#include <fattn_sim_prim_sm90.h>
#else

/* ---- wgmma ("Asynchronous Warpgroup Level Matrix Multiply-Accumulate
 * Instructions": wgmma.mma_async, wgmma.fence, wgmma.commit_group,
 * wgmma.wait_group) ---- */

/* A register the compiler must keep in place across the statements around
 * it (CUTLASS's warpgroup_fence_operand): accumulators between issue and
 * wait, RS A fragments before issue. */
template <int K>
__device__ __forceinline__ void fattn_fence_regs(float (&r)[K])
{
#pragma unroll
    for (int i = 0; i < K; ++i)
        asm volatile("" : "+f"(r[i])::"memory");
}

template <int K>
__device__ __forceinline__ void fattn_fence_regs(unsigned (&r)[K])
{
#pragma unroll
    for (int i = 0; i < K; ++i)
        asm volatile("" : "+r"(r[i])::"memory");
}

/* The N / 2 accumulator registers of m64nNk16 as asm operands: their
 * "%i" list and their "+f" constraints, 8 at a time. */
#define FATTN_WG_R0 "%0, %1, %2, %3, %4, %5, %6, %7"
#define FATTN_WG_R1 "%8, %9, %10, %11, %12, %13, %14, %15"
#define FATTN_WG_R2 "%16, %17, %18, %19, %20, %21, %22, %23"
#define FATTN_WG_R3 "%24, %25, %26, %27, %28, %29, %30, %31"
#define FATTN_WG_R4 "%32, %33, %34, %35, %36, %37, %38, %39"
#define FATTN_WG_R5 "%40, %41, %42, %43, %44, %45, %46, %47"
#define FATTN_WG_R6 "%48, %49, %50, %51, %52, %53, %54, %55"
#define FATTN_WG_R7 "%56, %57, %58, %59, %60, %61, %62, %63"
#define FATTN_WG_R8 "%64, %65, %66, %67, %68, %69, %70, %71"
#define FATTN_WG_R9 "%72, %73, %74, %75, %76, %77, %78, %79"
#define FATTN_WG_R10 "%80, %81, %82, %83, %84, %85, %86, %87"
#define FATTN_WG_R11 "%88, %89, %90, %91, %92, %93, %94, %95"
#define FATTN_WG_R12 "%96, %97, %98, %99, %100, %101, %102, %103"
#define FATTN_WG_R13 "%104, %105, %106, %107, %108, %109, %110, %111"
#define FATTN_WG_R14 "%112, %113, %114, %115, %116, %117, %118, %119"
#define FATTN_WG_R15 "%120, %121, %122, %123, %124, %125, %126, %127"

#define FATTN_WG_D0 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define FATTN_WG_D1 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define FATTN_WG_D2 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23])
#define FATTN_WG_D3 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define FATTN_WG_D4 "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
#define FATTN_WG_D5 "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
#define FATTN_WG_D6 "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])
#define FATTN_WG_D7 "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define FATTN_WG_D8 "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71])
#define FATTN_WG_D9 "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79])
#define FATTN_WG_D10 "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
#define FATTN_WG_D11 "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
#define FATTN_WG_D12 "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103])
#define FATTN_WG_D13 "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111])
#define FATTN_WG_D14 "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119])
#define FATTN_WG_D15 "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

#define FATTN_WG_REGS64  FATTN_WG_R0 ", " FATTN_WG_R1 ", " FATTN_WG_R2 ", " FATTN_WG_R3
#define FATTN_WG_REGS80  FATTN_WG_REGS64 ", " FATTN_WG_R4
#define FATTN_WG_REGS96  FATTN_WG_REGS80 ", " FATTN_WG_R5
#define FATTN_WG_REGS112 FATTN_WG_REGS96 ", " FATTN_WG_R6
#define FATTN_WG_REGS128 FATTN_WG_REGS112 ", " FATTN_WG_R7
#define FATTN_WG_REGS144 FATTN_WG_REGS128 ", " FATTN_WG_R8
#define FATTN_WG_REGS160 FATTN_WG_REGS144 ", " FATTN_WG_R9
#define FATTN_WG_REGS176 FATTN_WG_REGS160 ", " FATTN_WG_R10
#define FATTN_WG_REGS192 FATTN_WG_REGS176 ", " FATTN_WG_R11
#define FATTN_WG_REGS256 FATTN_WG_REGS192 ", " FATTN_WG_R12 ", " FATTN_WG_R13 ", " FATTN_WG_R14 ", " FATTN_WG_R15
#define FATTN_WG_OPS64   FATTN_WG_D0, FATTN_WG_D1, FATTN_WG_D2, FATTN_WG_D3
#define FATTN_WG_OPS80   FATTN_WG_OPS64, FATTN_WG_D4
#define FATTN_WG_OPS96   FATTN_WG_OPS80, FATTN_WG_D5
#define FATTN_WG_OPS112  FATTN_WG_OPS96, FATTN_WG_D6
#define FATTN_WG_OPS128  FATTN_WG_OPS112, FATTN_WG_D7
#define FATTN_WG_OPS144  FATTN_WG_OPS128, FATTN_WG_D8
#define FATTN_WG_OPS160  FATTN_WG_OPS144, FATTN_WG_D9
#define FATTN_WG_OPS176  FATTN_WG_OPS160, FATTN_WG_D10
#define FATTN_WG_OPS192  FATTN_WG_OPS176, FATTN_WG_D11
#define FATTN_WG_OPS256  FATTN_WG_OPS192, FATTN_WG_D12, FATTN_WG_D13, FATTN_WG_D14, FATTN_WG_D15

template <int N>
struct fattn_wgmma_asm;

/* wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16 d, a-desc, b-desc,
 *     scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b;   (SS)
 * wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16 d, a, b-desc,
 *     scale-d, imm-scale-a, imm-scale-b, imm-trans-b;                (RS)
 * scale-d 0: d = a * b; 1: d = a * b + d. I0..I6: the operand numbers after
 * the N / 2 accumulators. Instantiated for N = 64 to 192 in steps of 16 (the
 * wgmma family's BLOCK_N) and 256; the bit-exact device test
 * (fattn_prim_sm90_test.cu) runs 64, 128, 176, 192 and 256, the family's
 * numerics the others. */
#define FATTN_WGMMA_N(N, I0, I1, I2, I3, I4, I5, I6)                                                               \
    template <>                                                                                                    \
    struct fattn_wgmma_asm<N> {                                                                                    \
        template <int TA, int TB>                                                                                  \
        static __device__ __forceinline__ void ss(float *d, unsigned long long da, unsigned long long db, int sc) \
        {                                                                                                          \
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" I2 ", 0;\n"                                          \
                         "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.f16.f16 {" FATTN_WG_REGS##N "}, %" I0   \
                         ", %" I1 ", p, 1, 1, %" I3 ", %" I4 ";\n}\n"                                              \
                         : FATTN_WG_OPS##N                                                                         \
                         : "l"(da), "l"(db), "r"(sc), "n"(TA), "n"(TB));                                           \
        }                                                                                                          \
        template <int TB>                                                                                          \
        static __device__ __forceinline__ void rs(float *d, const unsigned *a, unsigned long long db, int sc)     \
        {                                                                                                          \
            asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" I5 ", 0;\n"                                          \
                         "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.f16.f16 {" FATTN_WG_REGS##N "}, {%" I0  \
                         ", %" I1 ", %" I2 ", %" I3 "}, %" I4 ", p, 1, 1, %" I6 ";\n}\n"                           \
                         : FATTN_WG_OPS##N                                                                         \
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(sc), "n"(TB));                 \
        }                                                                                                          \
    };

FATTN_WGMMA_N(64, "32", "33", "34", "35", "36", "37", "38")
FATTN_WGMMA_N(80, "40", "41", "42", "43", "44", "45", "46")
FATTN_WGMMA_N(96, "48", "49", "50", "51", "52", "53", "54")
FATTN_WGMMA_N(112, "56", "57", "58", "59", "60", "61", "62")
FATTN_WGMMA_N(128, "64", "65", "66", "67", "68", "69", "70")
FATTN_WGMMA_N(144, "72", "73", "74", "75", "76", "77", "78")
FATTN_WGMMA_N(160, "80", "81", "82", "83", "84", "85", "86")
FATTN_WGMMA_N(176, "88", "89", "90", "91", "92", "93", "94")
FATTN_WGMMA_N(192, "96", "97", "98", "99", "100", "101", "102")
FATTN_WGMMA_N(256, "128", "129", "130", "131", "132", "133", "134")

/* d[N/2] (+)= A B over one k16 slice, A and B from shared memory. TRANS_A /
 * TRANS_B: the operand is MN-major (1) rather than K-major (0). The
 * accumulators are fenced on both sides. */
template <int N, int TRANS_A = 0, int TRANS_B = 0>
__device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], unsigned long long desc_a, unsigned long long desc_b,
                                         int scale_d)
{
    fattn_fence_regs(d);
    fattn_wgmma_asm<N>::template ss<TRANS_A, TRANS_B>(d, desc_a, desc_b, scale_d);
    fattn_fence_regs(d);
}

/* d[N/2] (+)= A B, A from this thread's four .f16x2 registers (the layout of
 * "Register Fragments and Shared Memory Matrix Layouts", wgmma .m64nNk16
 * A), fenced before the issue. */
template <int N, int TRANS_B = 0>
__device__ __forceinline__ void wgmma_rs(float (&d)[N / 2], unsigned (&a)[4], unsigned long long desc_b, int scale_d)
{
    fattn_fence_regs(a);
    fattn_fence_regs(d);
    fattn_wgmma_asm<N>::template rs<TRANS_B>(d, a, desc_b, scale_d);
    fattn_fence_regs(d);
}

/* wgmma.fence.sync.aligned: before the first wgmma touching registers (or
 * shared memory) the warpgroup wrote since its last wgmma. */
__device__ __forceinline__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* wgmma.wait_group.sync.aligned N: at most N groups still pending after it.
 * Takes the accumulator arrays it retires and fences each register. */
template <int N, int K1>
__device__ __forceinline__ void wgmma_wait(float (&a1)[K1])
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
    fattn_fence_regs(a1);
}

template <int N, int K1, int K2>
__device__ __forceinline__ void wgmma_wait(float (&a1)[K1], float (&a2)[K2])
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
    fattn_fence_regs(a1);
    fattn_fence_regs(a2);
}

/* ---- mbarrier ("Parallel Synchronization and Communication Instructions:
 * mbarrier"); addresses are shared::cta, 8-byte aligned ---- */

/* mbarrier.init.shared::cta.b64: phase 0, `count` arrivals expected. */
__device__ __forceinline__ void mbar_init(unsigned addr, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(addr), "r"(count) : "memory");
}

/* mbarrier.arrive.shared::cta.b64: one arrival (release, .cta). */
__device__ __forceinline__ void mbar_arrive(unsigned addr)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(addr) : "memory");
}

/* mbarrier.arrive.expect_tx.shared::cta.b64: expect `tx` more bytes of
 * complete_tx in the current phase, then one arrival. */
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned addr, unsigned tx)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(addr), "r"(tx) : "memory");
}

/* mbarrier.try_wait.parity.shared::cta.b64: 1 once the phase of parity
 * `parity` has completed (acquire, .cta), 0 when the instruction's time
 * limit ran out first. Loop on it, bounded where a hang must be reported. */
__device__ __forceinline__ int mbar_try_wait(unsigned addr, unsigned parity)
{
    unsigned ok;
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(ok)
                 : "r"(addr), "r"(parity)
                 : "memory");
    return (int)ok;
}

/* fence.mbarrier_init.release.cluster: initialized mbarriers visible to the
 * async proxy (after the inits, before the barrier that publishes them). */
__device__ __forceinline__ void fence_mbarrier_init()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/* fence.proxy.async.shared::cta: this thread's generic-proxy shared writes
 * ordered before later async-proxy accesses (wgmma operands, TMA stores). */
__device__ __forceinline__ void fence_proxy_async()
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* ---- TMA ("Data Movement and Conversion Instructions:
 * cp.async.bulk.tensor") ---- */

/* cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes:
 * the box at coordinates c0 (innermost) .. into shared dst; its bytes (the
 * whole box, zero-filled elements included) complete_tx on mbarrier mbar. */
__device__ __forceinline__ void tma_load_2d(unsigned dst, const fattn_tensormap *map, unsigned mbar, int c0, int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
                 "l"(map), "r"(c0), "r"(c1), "r"(mbar)
                 : "memory");
}

__device__ __forceinline__ void tma_load_3d(unsigned dst, const fattn_tensormap *map, unsigned mbar, int c0, int c1,
                                            int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
                 "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(mbar)
                 : "memory");
}

__device__ __forceinline__ void tma_load_4d(unsigned dst, const fattn_tensormap *map, unsigned mbar, int c0, int c1,
                                            int c2, int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
                 "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(mbar)
                 : "memory");
}

/* ---- TMA in a thread-block cluster (sm_90a): L2 cache hints and multicast ---- */

/* cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint:
 * tma_load_3d with an L2 eviction priority (FATTN_L2_EVICT_*). */
__device__ __forceinline__ void tma_load_3d_hint(unsigned dst, const fattn_tensormap *map, unsigned mbar, int c0,
                                                 int c1, int c2, unsigned long long policy)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
                 " [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(dst),
                 "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(mbar), "l"(policy)
                 : "memory");
}

/* cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint:
 * one load of the box, landing in every block of the cluster whose rank
 * (%cluster_ctarank) has its bit set in the 16-bit `mask`, each time at the
 * same CTA-relative offset dst, its bytes counted by complete_tx on the
 * mbarrier at the same CTA-relative offset mbar of each destination block.
 * dst and mbar are this block's shared::cta addresses. */
__device__ __forceinline__ void tma_load_3d_multicast(unsigned dst, const fattn_tensormap *map, unsigned mbar, int c0,
                                                      int c1, int c2, unsigned short mask, unsigned long long policy)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 ".multicast::cluster.L2::cache_hint [%0], [%1, {%2, %3, %4}], [%5], %6, %7;\n" ::"r"(dst),
                 "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(mbar), "h"(mask), "l"(policy)
                 : "memory");
}

/* mbarrier.arrive.release.cluster.shared::cluster.b64: one arrival on the
 * mbarrier at a shared::cluster address (cluster_map() of a shared::cta one,
 * any block of the cluster), releasing at cluster scope: what this thread
 * did before it is visible to the block that waits on that barrier. */
__device__ __forceinline__ void mbar_arrive_cluster(unsigned addr)
{
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(addr) : "memory");
}

/* cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group: the box at
 * shared src to the tensor at c0 ..; elements outside the tensor are not
 * written. Completes through bulk_commit / bulk_wait_read. */
__device__ __forceinline__ void tma_store_2d(const fattn_tensormap *map, unsigned src, int c0, int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(map),
                 "r"(c0), "r"(c1), "r"(src)
                 : "memory");
}

__device__ __forceinline__ void tma_store_3d(const fattn_tensormap *map, unsigned src, int c0, int c1, int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(map),
                 "r"(c0), "r"(c1), "r"(c2), "r"(src)
                 : "memory");
}

__device__ __forceinline__ void tma_store_4d(const fattn_tensormap *map, unsigned src, int c0, int c1, int c2, int c3)
{
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3, %4}], [%5];\n" ::"l"(map),
                 "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(src)
                 : "memory");
}

/* cp.async.bulk.commit_group; cp.async.bulk.wait_group.read N: the shared
 * sources of all but the newest N bulk groups have been read. */
__device__ __forceinline__ void bulk_commit()
{
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

template <int N>
__device__ __forceinline__ void bulk_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

/* ---- named barriers ("bar, barrier"): id 1-15 (0 is __syncthreads),
 * count the threads taking part, a multiple of 32 ---- */

__device__ __forceinline__ void bar_sync(unsigned id, unsigned count)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

__device__ __forceinline__ void bar_arrive(unsigned id, unsigned count)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

/* ---- setmaxnreg.{inc,dec}.sync.aligned.u32 COUNT ("Miscellaneous
 * Instructions: setmaxnreg"): 24-256, a multiple of 8, the same in every
 * thread of the warpgroup; the kernel is compiled with
 * __launch_bounds__(threads, 1) ---- */

template <unsigned COUNT>
__device__ __forceinline__ void setmaxnreg_inc()
{
    static_assert(COUNT >= 24 && COUNT <= 256 && COUNT % 8 == 0, "setmaxnreg takes 24-256, a multiple of 8");
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(COUNT));
}

template <unsigned COUNT>
__device__ __forceinline__ void setmaxnreg_dec()
{
    static_assert(COUNT >= 24 && COUNT <= 256 && COUNT % 8 == 0, "setmaxnreg takes 24-256, a multiple of 8");
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(COUNT));
}

#endif /* FATTN_SIM */
#endif
