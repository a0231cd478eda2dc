/*
 * warp.c - ldmatrix, mma and shfl for a warp, as the PTX ISA defines them.
 */
#include "sim/warp.h"

#include <stdio.h>
#include <string.h>

#include "run/numerics.h"

void fattn_sim_fault_describe(const fattn_sim_fault *f, const char *insn, char *out, size_t n)
{
    char who[24] = ""; /* a warpgroup instruction's operand faults belong to no lane */
    if (f->lane >= 0)
        snprintf(who, sizeof who, " (lane %d)", f->lane);
    switch (f->kind) {
    case FATTN_SIM_MISALIGNED:
        snprintf(out, n, "%s: misaligned %u-byte shared access at 0x%x%s", insn, f->size, (unsigned)f->addr, who);
        break;
    case FATTN_SIM_OUT_OF_BOUNDS:
        snprintf(out, n, "%s: %u-byte shared access at 0x%x outside the block's shared memory%s", insn, f->size,
                 (unsigned)f->addr, who);
        break;
    case FATTN_SIM_NOT_CONVERGED:
        snprintf(out, n, "%s: a warp-synchronous instruction without every lane (lane %d missing)", insn, f->lane);
        break;
    case FATTN_SIM_BAD_OPERAND:
        snprintf(out, n, "%s: an operand it does not take (%u, at 0x%x)", insn, f->size, (unsigned)f->addr);
        break;
    default: snprintf(out, n, "%s: ok", insn);
    }
}

unsigned fattn_sim_wavefronts(const uint32_t *addr, const unsigned *size, int n)
{
    /* Per bank, the distinct words asked of it (at most one per access word). */
    uint32_t words[32][64];
    unsigned count[32] = {0}, most = 0;
    for (int i = 0; i < n; ++i)
        for (uint32_t w = addr[i] / 4; w < (addr[i] + size[i] + 3) / 4; ++w) {
            unsigned bank = w % 32, k;
            for (k = 0; k < count[bank] && words[bank][k] != w; ++k)
                ;
            if (k == count[bank] && count[bank] < 64)
                words[bank][count[bank]++] = w;
            if (count[bank] > most)
                most = count[bank];
        }
    return most;
}

int fattn_sim_fault_set(fattn_sim_fault *f, int kind, int lane, uint32_t addr, unsigned size)
{
    f->kind = kind, f->lane = lane, f->addr = addr, f->size = size;
    return -1;
}

static int check(const fattn_sim_smem *s, int lane, uint32_t addr, unsigned size, fattn_sim_fault *f)
{
    if (addr % size)
        return fattn_sim_fault_set(f, FATTN_SIM_MISALIGNED, lane, addr, size);
    if ((uint64_t)addr + size > s->size)
        return fattn_sim_fault_set(f, FATTN_SIM_OUT_OF_BOUNDS, lane, addr, size);
    fattn_sim_fault_set(f, FATTN_SIM_OK, lane, addr, size);
    return 0;
}

static uint16_t b16_at(const fattn_sim_smem *s, uint32_t addr)
{
    uint16_t v;
    memcpy(&v, s->base + addr, 2);
    return v;
}

/*
 * PTX ISA, ldmatrix: "each address corresponds to the start of a matrix
 * row. Addresses addr0-addr7 correspond to the rows of the first matrix,
 * addresses addr8-addr15 correspond to the rows of the second matrix, and
 * so on." Each row is 8 b16 elements, 16 bytes, 16-byte aligned. The
 * fragment each thread receives (m8n8, .b16): "row = laneid / 4 (groupID),
 * col = (laneid % 4) * 2 + i for the two elements a0, a1" of each matrix, in
 * destination register j for matrix j; with .trans "the matrix is loaded in
 * column-major format", so the lane gets the transposed element: row and
 * column swap.
 */
int fattn_sim_ldmatrix_x4(const fattn_sim_smem *s, const uint32_t addr[FATTN_SIM_LANES], int trans,
                          uint32_t out[FATTN_SIM_LANES][4], fattn_sim_fault *f, unsigned *wavefronts)
{
    for (int l = 0; l < FATTN_SIM_LANES; ++l)
        if (check(s, l, addr[l], 16, f))
            return -1;
    if (wavefronts) {
        /* One phase per matrix: its 8 rows of 16 bytes. */
        static const unsigned sixteen[8] = {16, 16, 16, 16, 16, 16, 16, 16};
        *wavefronts = 0;
        for (int m = 0; m < 4; ++m)
            *wavefronts += fattn_sim_wavefronts(addr + 8 * m, sixteen, 8);
    }
    for (int l = 0; l < FATTN_SIM_LANES; ++l) {
        int g = l / 4, c = (l % 4) * 2;
        for (int m = 0; m < 4; ++m) {
            const uint32_t *rows = addr + 8 * m;
            uint16_t lo, hi;
            if (!trans) {
                lo = b16_at(s, rows[g] + 2 * (uint32_t)c);
                hi = b16_at(s, rows[g] + 2 * (uint32_t)(c + 1));
            } else {
                lo = b16_at(s, rows[c] + 2 * (uint32_t)g);
                hi = b16_at(s, rows[c + 1] + 2 * (uint32_t)g);
            }
            out[l][m] = (uint32_t)lo | (uint32_t)hi << 16;
        }
    }
    return 0;
}

static float lo_half(uint32_t r)
{
    return fattn_half_to_float((uint16_t)(r & 0xffff));
}

static float hi_half(uint32_t r)
{
    return fattn_half_to_float((uint16_t)(r >> 16));
}

/*
 * PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type"
 * (groupID = %laneid >> 2, threadID_in_group = %laneid % 4):
 *  A (.f16, four .f16x2 registers holding a0..a7):
 *    row = groupID for ai where 0 <= i < 2 || 4 <= i < 6, else groupID + 8;
 *    col = threadID_in_group * 2 + (i & 0x1) for ai where i < 4,
 *          else threadID_in_group * 2 + (i & 0x1) + 8.
 *  B (.f16, two .f16x2 registers holding b0..b3):
 *    row = threadID_in_group * 2 + (i & 0x1) for bi where i < 2, else + 8;
 *    col = groupID.
 *  C, D (.f32, c0..c3):
 *    row = groupID for ci where i < 2, else groupID + 8;
 *    col = threadID_in_group * 2 + (i & 0x1).
 */
void fattn_sim_mma_m16n8k16(const uint32_t a[FATTN_SIM_LANES][4], const uint32_t b[FATTN_SIM_LANES][2],
                            const float c[FATTN_SIM_LANES][4], float d[FATTN_SIM_LANES][4])
{
    double A[16][16], B[16][8], C[16][8];
    for (int l = 0; l < FATTN_SIM_LANES; ++l) {
        int g = l >> 2, t = l % 4;
        for (int i = 0; i < 8; ++i) {
            int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
            int col = t * 2 + (i & 1) + (i < 4 ? 0 : 8);
            uint32_t r = a[l][i / 2];
            A[row][col] = i & 1 ? hi_half(r) : lo_half(r);
        }
        for (int i = 0; i < 4; ++i) {
            int row = t * 2 + (i & 1) + (i < 2 ? 0 : 8);
            uint32_t r = b[l][i / 2];
            B[row][g] = i & 1 ? hi_half(r) : lo_half(r);
        }
        for (int i = 0; i < 4; ++i)
            C[i < 2 ? g : g + 8][t * 2 + (i & 1)] = c[l][i];
    }
    for (int l = 0; l < FATTN_SIM_LANES; ++l) {
        int g = l >> 2, t = l % 4;
        for (int i = 0; i < 4; ++i) {
            int row = i < 2 ? g : g + 8, col = t * 2 + (i & 1);
            double acc = C[row][col];
            for (int k = 0; k < 16; ++k)
                acc += A[row][k] * B[k][col];
            d[l][i] = (float)acc;
        }
    }
}

/*
 * PTX ISA, shfl.sync: "lane[4:0] = [Thread].laneid; bval = b[4:0]; cval =
 * c[4:0]; segmask[4:0] = c[12:8]; maxLane = (lane[4:0] & segmask[4:0]) |
 * (cval[4:0] & ~segmask[4:0]); minLane = (lane[4:0] & segmask[4:0]); .bfly:
 * j = lane[4:0] ^ bval[4:0]; pval = (j <= maxLane); if (!pval) j = lane;
 * d = Thread[j].a". Every lane of membermask must execute it together.
 */
int fattn_sim_shfl_bfly(const uint32_t a[FATTN_SIM_LANES], unsigned b, unsigned c, unsigned membermask,
                        uint32_t d[FATTN_SIM_LANES], fattn_sim_fault *f)
{
    memset(f, 0, sizeof *f);
    for (int l = 0; l < FATTN_SIM_LANES; ++l)
        if (!(membermask >> l & 1u)) {
            f->kind = FATTN_SIM_NOT_CONVERGED;
            f->lane = l;
            return -1;
        }
    unsigned bval = b & 31u, cval = c & 31u, seg = (c >> 8) & 31u;
    for (unsigned l = 0; l < FATTN_SIM_LANES; ++l) {
        unsigned max_lane = (l & seg) | (cval & ~seg), j = l ^ bval;
        d[l] = a[j <= max_lane ? j : l];
    }
    return 0;
}
