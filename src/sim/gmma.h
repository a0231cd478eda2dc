/*
 * gmma.h - wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16 for a
 * warpgroup, on the host: the instruction's arithmetic and its operand
 * layouts, as the PTX ISA defines them (quoted beside each in gmma.c).
 *
 * A shared-memory operand arrives as the 64-bit matrix descriptor the kernel
 * built (kernels/fattn_gmma.h encodes it); this file decodes it with its own
 * reading of the ISA's descriptor format and canonical layouts, so that an
 * encoder's mistake shows as a wrong product. The asynchronous side (when
 * the reads happen, when the accumulators land, what may touch them in
 * between) belongs to the launch (sim/launch.c); here one call is one whole
 * instruction.
 */
#ifndef FATTN_SIM_GMMA_H
#define FATTN_SIM_GMMA_H

#include <stdint.h>

#include "sim/warp.h"

#define FATTN_SIM_WG_THREADS 128

/* The swizzle of the PTX ISA's shared-memory layouts, for wgmma operands
 * and TMA alike: the 16-byte chunk index within a row of 2^b chunks XOR the
 * row index within the repeat of 8 rows, on the shared address: bits
 * [4, 4 + b) ^= bits [7, 7 + b); b = 3, 2, 1 for 128-, 64-, 32-byte
 * swizzling, 0 for none (CuTe's Swizzle<b,4,3>). */
uint32_t fattn_sim_swizzle(uint32_t addr, unsigned b);

/* A descriptor's fields: addresses and offsets in bytes. */
typedef struct fattn_sim_gmma_desc {
    uint32_t start, lbo, sbo;
    unsigned base_offset; /* bits 49-51 */
    unsigned mode;        /* bits 62-63: 0 none, 1 128B, 2 64B, 3 32B swizzle */
} fattn_sim_gmma_desc;

void fattn_sim_gmma_decode(uint64_t desc, fattn_sim_gmma_desc *out);

/* The shared address of element (mn, k), k < 16, of the operand a
 * descriptor describes: K-major (mn_major 0: the 8 elements of a row along
 * K are contiguous) or MN-major. */
uint32_t fattn_sim_gmma_addr(const fattn_sim_gmma_desc *d, int mn_major, unsigned mn, unsigned k);

/* The (row, col) of the 64 x N accumulator that thread t (0-127 in the
 * warpgroup) holds in its register i (0 .. N/2 - 1). */
void fattn_sim_wgmma_d_coord(unsigned t, unsigned i, unsigned *row, unsigned *col);

/* The (row, k) of the 64 x 16 A operand that thread t holds in half i (0-7)
 * of its four .f16x2 registers (half i in register i / 2, the low half for
 * even i). */
void fattn_sim_wgmma_a_coord(unsigned t, unsigned i, unsigned *row, unsigned *k);

/* One wgmma.mma_async.sync.aligned.m64nNk16.f32.f16.f16. */
typedef struct fattn_sim_wgmma {
    unsigned n;             /* 8 .. 256, a multiple of 8 */
    int a_regs;             /* RS: A from a[][] instead of a_desc */
    uint64_t a_desc;        /* SS */
    const uint32_t (*a)[4]; /* RS: the four .f16x2 registers of each of the 128 threads */
    uint64_t b_desc;
    int trans_a; /* imm-trans-a (SS only): 1 = A is MN-major (M contiguous) */
    int trans_b; /* imm-trans-b: 1 = B is MN-major (N contiguous) */
    int scale_d; /* 0: D = A B; 1: D = A B + D */
} fattn_sim_wgmma;

/* Executes op on shared memory s: d[t] is thread t's N/2 accumulators.
 * Products are exact and each output's sum (with D) is rounded to fp32 once,
 * which the hardware matches exactly when every partial sum is (integer
 * data of small magnitude, as the tests use). Returns 0, or -1 with *f (and
 * nothing written) when a descriptor's start is not at its swizzle
 * pattern's repeat with base offset 0 (misaligned), an element lies
 * outside shared memory, or n is not a wgmma shape. */
int fattn_sim_wgmma_exec(const fattn_sim_smem *s, const fattn_sim_wgmma *op, float *const d[FATTN_SIM_WG_THREADS],
                         fattn_sim_fault *f);

#endif
