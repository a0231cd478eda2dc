/*
 * gmma.c - wgmma.mma_async m64nNk16 .f32.f16.f16 for a warpgroup, with the
 * operand layouts of the PTX ISA ("Asynchronous Warpgroup Level Matrix
 * Multiply-Accumulate Instructions").
 */
#include "sim/gmma.h"

#include <string.h>

#include "run/numerics.h"

/*
 * PTX ISA, "Matrix Descriptor Format": start address bits 0-13, leading
 * dimension byte offset bits 16-29, stride dimension byte offset bits 32-45,
 * each "(x & 0x3FFFF) >> 4"; matrix base offset bits 49-51; swizzle mode
 * bits 62-63 (0 no swizzle, 1 128-byte, 2 64-byte, 3 32-byte).
 */
void fattn_sim_gmma_decode(uint64_t desc, fattn_sim_gmma_desc *out)
{
    out->start = (uint32_t)(desc & 0x3fffu) << 4;
    out->lbo = (uint32_t)(desc >> 16 & 0x3fffu) << 4;
    out->sbo = (uint32_t)(desc >> 32 & 0x3fffu) << 4;
    out->base_offset = (unsigned)(desc >> 49 & 7u);
    out->mode = (unsigned)(desc >> 62 & 3u);
}

/*
 * PTX ISA, "Shared Memory Matrix Layout": the swizzle modes permute the
 * 16-byte chunks of each row of the pattern, chunk index XOR row index
 * within the repeat of 8 rows.
 */
uint32_t fattn_sim_swizzle(uint32_t addr, unsigned b)
{
    return addr ^ ((addr >> 7 & ((1u << b) - 1u)) << 4);
}

/* Descriptor mode (1 128B, 2 64B, 3 32B) to swizzle bits. */
static unsigned mode_bits(unsigned mode)
{
    return mode == 1 ? 3 : mode == 2 ? 2 : mode == 3 ? 1 : 0;
}

/* Bytes of a swizzle row: 128, 64, 32; 16 (a core matrix row) without. */
static unsigned row_bytes(unsigned mode)
{
    return 16u << mode_bits(mode);
}

/*
 * PTX ISA, "Shared Memory Matrix Layout", canonical layouts in units of
 * 16 bytes (T = 8 fp16 elements a unit), of one 16-deep K slice:
 *   K-major,  no swizzle:  ((8,m),(T,2)):((1T,SBO),(1,LBO))
 *   K-major,  swizzled:    ((8,m),(T,2)):((WT,SBO),(1,T))    W = 2, 4, 8
 *   MN-major, no swizzle:  ((T,1,m),(8,2)):((1,T,SBO),(1T,LBO))
 *   MN-major, swizzled:    ((T,W,m),(8,2)):((1,T,LBO),(WT,SBO))
 * A core matrix is 8 rows of 16 contiguous bytes. K-major: 8 rows of MN,
 * each holding its K elements; without swizzle the next 8 rows are SBO
 * further and the next 8 of K LBO further; swizzled, a row is W units of K
 * (16 of K fit) and the next 8 rows SBO further. MN-major: a row is along
 * MN, the 8 rows are 8 of K; without swizzle the next 8 of MN are SBO
 * further and the next 8 of K LBO further; swizzled, a row holds 8W of MN,
 * the next 8W of MN are LBO further and the next 8 of K SBO further.
 */
uint32_t fattn_sim_gmma_addr(const fattn_sim_gmma_desc *d, int mn_major, unsigned mn, unsigned k)
{
    const unsigned row = row_bytes(d->mode), per_row = row / 2;
    uint32_t a;
    if (!mn_major) {
        if (d->mode == 0)
            a = d->start + mn / 8 * d->sbo + mn % 8 * 16 + k / 8 * d->lbo + k % 8 * 2;
        else
            a = d->start + mn / 8 * d->sbo + mn % 8 * row + k * 2;
    } else {
        if (d->mode == 0)
            a = d->start + mn / 8 * d->sbo + mn % 8 * 2 + k / 8 * d->lbo + k % 8 * 16;
        else
            a = d->start + mn / per_row * d->lbo + mn % per_row * 2 + k / 8 * d->sbo + k % 8 * row;
    }
    return fattn_sim_swizzle(a, mode_bits(d->mode));
}

/*
 * PTX ISA, "Register Fragments" of wgmma .m64nNk16: the warpgroup's four
 * warps hold rows 16w .. 16w + 15 (w = %warpid within the warpgroup); in a
 * warp, with groupID = %laneid >> 2 and threadID_in_group = %laneid % 4,
 *   D (.f32, d0 .. d(N/2 - 1)):
 *     row = groupID + 8 * ((i >> 1) & 1)
 *     col = (i >> 2) * 8 + threadID_in_group * 2 + (i & 1)
 *   A (.f16 in registers, a0 .. a7 in four .f16x2):
 *     row = groupID + 8 * ((i >> 1) & 1)
 *     col = (i >> 2) * 8 + threadID_in_group * 2 + (i & 1)
 * (the same pattern: a converted 64 x 16 slice of D is an A operand).
 */
void fattn_sim_wgmma_d_coord(unsigned t, unsigned i, unsigned *row, unsigned *col)
{
    const unsigned warp = t / 32 % 4, lane = t % 32;
    *row = 16 * warp + lane / 4 + 8 * (i >> 1 & 1u);
    *col = (i >> 2) * 8 + lane % 4 * 2 + (i & 1u);
}

void fattn_sim_wgmma_a_coord(unsigned t, unsigned i, unsigned *row, unsigned *k)
{
    fattn_sim_wgmma_d_coord(t, i % 8, row, k);
}

/* A descriptor the launch can read: base offset 0, a swizzled start in the
 * first row of its pattern's repeat (the tile at the repeat, the start
 * moved along K within the row at most). */
static int desc_check(const fattn_sim_gmma_desc *d, fattn_sim_fault *f)
{
    if (d->base_offset)
        return fattn_sim_fault_set(f, FATTN_SIM_BAD_OPERAND, -1, d->start, d->base_offset);
    if (d->mode && d->start % (8 * row_bytes(d->mode)) >= row_bytes(d->mode))
        return fattn_sim_fault_set(f, FATTN_SIM_MISALIGNED, -1, d->start, 8 * row_bytes(d->mode));
    return 0;
}

/* Reads the rows x 16 operand a descriptor describes into m[row][k]. */
static int gather(const fattn_sim_smem *s, uint64_t desc, int mn_major, unsigned rows, double m[][16],
                  fattn_sim_fault *f)
{
    fattn_sim_gmma_desc d;
    fattn_sim_gmma_decode(desc, &d);
    if (desc_check(&d, f))
        return -1;
    for (unsigned r = 0; r < rows; ++r)
        for (unsigned k = 0; k < 16; ++k) {
            uint32_t a = fattn_sim_gmma_addr(&d, mn_major, r, k);
            if ((uint64_t)a + 2 > s->size)
                return fattn_sim_fault_set(f, FATTN_SIM_OUT_OF_BOUNDS, -1, a, 2);
            uint16_t h;
            memcpy(&h, s->base + a, 2);
            m[r][k] = fattn_half_to_float(h);
        }
    return 0;
}

int fattn_sim_wgmma_exec(const fattn_sim_smem *s, const fattn_sim_wgmma *op, float *const d[FATTN_SIM_WG_THREADS],
                         fattn_sim_fault *f)
{
    double A[64][16], B[256][16]; /* B[n][k] */
    memset(f, 0, sizeof *f);
    if (op->n < 8 || op->n > 256 || op->n % 8)
        return fattn_sim_fault_set(f, FATTN_SIM_BAD_OPERAND, -1, 0, op->n);
    if (op->a_regs) {
        for (unsigned t = 0; t < FATTN_SIM_WG_THREADS; ++t)
            for (unsigned i = 0; i < 8; ++i) {
                unsigned row, k;
                fattn_sim_wgmma_a_coord(t, i, &row, &k);
                A[row][k] = fattn_half_to_float((uint16_t)(op->a[t][i / 2] >> (i % 2 * 16)));
            }
    } else if (gather(s, op->a_desc, op->trans_a, 64, A, f)) {
        return -1;
    }
    if (gather(s, op->b_desc, op->trans_b, op->n, B, f))
        return -1;
    for (unsigned t = 0; t < FATTN_SIM_WG_THREADS; ++t)
        for (unsigned i = 0; i < op->n / 2; ++i) {
            unsigned row, col;
            fattn_sim_wgmma_d_coord(t, i, &row, &col);
            double acc = op->scale_d ? d[t][i] : 0.0;
            for (unsigned k = 0; k < 16; ++k)
                acc += A[row][k] * B[col][k];
            d[t][i] = (float)acc;
        }
    return 0;
}
