/*
 * warp.h - the warp-wide PTX instructions of the kernel, on the host: the
 * first piece of the kernel simulator (issue 13).
 *
 * Each function executes one instruction for a whole warp at once, with the
 * fragment layouts of the PTX ISA (quoted beside each in warp.c), on the
 * registers of the 32 lanes: ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16,
 * mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 and shfl.sync.bfly.b32.
 * Shared memory is a byte array the size of the launch's dynamic shared
 * memory; an access that the hardware would fault on (misaligned, outside
 * it) is reported with the lane and the address instead of performed. The
 * shared-memory wavefronts an instruction needs are counted the way the
 * hardware serializes bank conflicts, so the bank-conflict gate's model can
 * be held against a measurement.
 */
#ifndef FATTN_SIM_WARP_H
#define FATTN_SIM_WARP_H

#include <stddef.h>
#include <stdint.h>

#define FATTN_SIM_LANES 32

/* One block's shared memory. */
typedef struct fattn_sim_smem {
    uint8_t *base;
    uint32_t size; /* bytes: the launch's dynamic shared memory */
} fattn_sim_smem;

enum fattn_sim_fault_kind {
    FATTN_SIM_OK = 0,
    FATTN_SIM_MISALIGNED,    /* an address not aligned to its access's width */
    FATTN_SIM_OUT_OF_BOUNDS, /* outside the launch's shared memory */
    FATTN_SIM_NOT_CONVERGED, /* a .sync/.aligned collective without all 32 lanes */
    FATTN_SIM_BAD_OPERAND,   /* an operand the instruction does not take (size: the value) */
};

/* Why an instruction did not execute: the first offending lane. */
typedef struct fattn_sim_fault {
    int kind; /* enum fattn_sim_fault_kind */
    int lane;
    uint32_t addr;
    unsigned size; /* the access's width in bytes */
} fattn_sim_fault;

/* Fills *f (lane -1: an operand of a whole warpgroup, or of an async copy)
 * and returns -1, for the instructions' failure returns. */
int fattn_sim_fault_set(fattn_sim_fault *f, int kind, int lane, uint32_t addr, unsigned size);

/* "misaligned 16-byte shared access at 0x12 (lane 3)" and the like. */
void fattn_sim_fault_describe(const fattn_sim_fault *f, const char *insn, char *out, size_t n);

/* Shared-memory wavefronts of one phase: n accesses (address, width) that
 * the hardware serves together. Accesses to the same 4-byte word share a
 * bank slot; distinct words in one bank serialize, so the count is the most
 * distinct words any of the 32 banks holds (0 for no access). */
unsigned fattn_sim_wavefronts(const uint32_t *addr, const unsigned *size, int n);

/* ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16 for a warp: lane l gives
 * addr[l], the start of row l % 8 of matrix l / 8; out[l][j] is lane l's
 * register j (matrix j). Returns 0, or -1 with *f when a row address is not
 * 16-byte aligned or a row lies outside shared memory. *wavefronts (may be
 * NULL) gets the shared-memory wavefronts it needed (4 at best). */
int fattn_sim_ldmatrix_x4(const fattn_sim_smem *s, const uint32_t addr[FATTN_SIM_LANES], int trans,
                          uint32_t out[FATTN_SIM_LANES][4], fattn_sim_fault *f, unsigned *wavefronts);

/* mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 for a warp: d = a * b
 * + c with a (16 x 16, fp16 pairs in 4 registers a lane), b (16 x 8, 2
 * registers), c and d (16 x 8, fp32, 4 a lane). d may be c. Products are
 * exact; the sum is rounded to fp32 once. */
void fattn_sim_mma_m16n8k16(const uint32_t a[FATTN_SIM_LANES][4], const uint32_t b[FATTN_SIM_LANES][2],
                            const float c[FATTN_SIM_LANES][4], float d[FATTN_SIM_LANES][4]);

/* shfl.sync.bfly.b32 d, a, b, c, membermask for a warp, every lane active:
 * lane l reads lane l ^ b within its segment (c = (segmask << 8) | clamp;
 * __shfl_xor_sync(mask, v, b) passes c = 0x1f). Returns 0, or -1 with *f
 * when membermask leaves a lane out. */
int fattn_sim_shfl_bfly(const uint32_t a[FATTN_SIM_LANES], unsigned b, unsigned c, unsigned membermask,
                        uint32_t d[FATTN_SIM_LANES], fattn_sim_fault *f);

#endif
