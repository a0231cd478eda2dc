/*
 * test_sim_warp.c - the simulator's warp instructions (src/sim/warp.c):
 *  - a 16x16x16 product through ldmatrix (A plain, B .trans) and two mma
 *    m16n8k16, addressed as the PTX ISA prescribes, is exact on
 *    integer-valued fp16 data, the accumulator added;
 *  - ldmatrix refuses a misaligned row (the seeds' 2-byte pad) and a row
 *    outside shared memory, naming the lane and the address, and counts its
 *    wavefronts: 8 a matrix for unswizzled 128-byte rows, 1 swizzled or
 *    padded by 16 bytes;
 *  - shfl.sync.bfly: the quad reductions the kernel does, segments of 16,
 *    and a membermask that leaves a lane out.
 */
#include "t.h"

#include <stdint.h>

#include "run/numerics.h"
#include "sim/warp.h"

static uint8_t smem_bytes[8192];

static void put_half(uint32_t addr, float v)
{
    uint16_t h = fattn_float_to_half(v);
    memcpy(smem_bytes + addr, &h, 2);
}

static void product(void)
{
    fattn_sim_smem s = {smem_bytes, 1024};
    float A[16][16], B[16][16];
    uint32_t a_addr[32], b_addr[32], a[32][4], bt[32][4], b0[32][2], b1[32][2];
    float c[32][4], d0[32][4], d1[32][4];
    fattn_sim_fault f;
    unsigned wf;
    /* Integer values in [-8, 8]: every product and sum is exact in fp32. */
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j) {
            A[i][j] = (float)((i * 7 + j * 3) % 17 - 8);
            B[i][j] = (float)((i * 5 + j * 11 + 3) % 17 - 8);
            put_half((uint32_t)(i * 32 + j * 2), A[i][j]);       /* A at 0, row-major, 32-byte rows */
            put_half((uint32_t)(512 + i * 32 + j * 2), B[i][j]); /* B (k x n) at 512, row-major */
        }
    /* Lane l addresses row l % 8 of matrix l / 8. A's four 8x8 matrices in
     * the order of the A fragment's registers: rows 0-7 and 8-15 of columns
     * 0-7, then of columns 8-15. B's, transposed, the same over (k, n):
     * registers 0, 1 are the first n8 tile's b0, b1; 2, 3 the second's. */
    for (int l = 0; l < 32; ++l) {
        int m = l / 8, r = l % 8, row = r + (m & 1) * 8, col = (m >> 1) * 8;
        a_addr[l] = (uint32_t)(row * 32 + col * 2);
        b_addr[l] = (uint32_t)(512 + row * 32 + col * 2);
    }
    CHECK_INT(fattn_sim_ldmatrix_x4(&s, a_addr, 0, a, &f, &wf), 0);
    CHECK_INT(fattn_sim_ldmatrix_x4(&s, b_addr, 1, bt, &f, NULL), 0);
    for (int l = 0; l < 32; ++l) {
        b0[l][0] = bt[l][0], b0[l][1] = bt[l][1];
        b1[l][0] = bt[l][2], b1[l][1] = bt[l][3];
        for (int i = 0; i < 4; ++i)
            c[l][i] = (float)(l * 4 + i); /* a known accumulator */
    }
    fattn_sim_mma_m16n8k16(a, b0, c, d0);
    fattn_sim_mma_m16n8k16(a, b1, c, d1);
    /* D fragment: row groupID (+8 for c2, c3), column 2 * (lane % 4) + (i & 1). */
    int exact = 1;
    for (int l = 0; l < 32; ++l)
        for (int i = 0; i < 4; ++i) {
            int row = (l >> 2) + (i < 2 ? 0 : 8), col = (l % 4) * 2 + (i & 1);
            for (int tile = 0; tile < 2; ++tile) {
                double want = c[l][i];
                for (int k = 0; k < 16; ++k)
                    want += (double)A[row][k] * B[k][col + 8 * tile];
                float got = tile ? d1[l][i] : d0[l][i];
                if (got != (float)want) {
                    if (exact)
                        fprintf(stderr, "D[%d][%d] = %g, expected %g\n", row, col + 8 * tile, got, want);
                    exact = 0;
                }
            }
        }
    CHECK(exact);
    /* 32-byte rows: a matrix's 8 rows span 256 bytes, rows r and r + 4 in
     * the same four banks: 2 wavefronts a matrix. */
    CHECK_INT(wf, 8);
    /* d may be c: accumulating in place adds A*B once more. */
    float before[32][4];
    memcpy(before, d0, sizeof before);
    fattn_sim_mma_m16n8k16(a, b0, d0, d0);
    int twice = 1;
    for (int l = 0; l < 32; ++l)
        for (int i = 0; i < 4; ++i)
            twice &= d0[l][i] == 2 * before[l][i] - c[l][i];
    CHECK(twice);
}

static void faults(void)
{
    fattn_sim_smem s = {smem_bytes, 2048};
    uint32_t addr[32], out[32][4];
    fattn_sim_fault f;
    char text[200];
    /* The seeds' layout: 64 halves a row plus a 2-byte pad. */
    for (int l = 0; l < 32; ++l)
        addr[l] = (uint32_t)((l % 8) * 130 + (l / 8) * 16);
    CHECK_INT(fattn_sim_ldmatrix_x4(&s, addr, 0, out, &f, NULL), -1);
    CHECK_INT(f.kind, FATTN_SIM_MISALIGNED);
    CHECK_INT(f.lane, 1);
    CHECK_INT(f.addr, 130);
    fattn_sim_fault_describe(&f, "ldmatrix.x4", text, sizeof text);
    CHECK_STR(text, "ldmatrix.x4: misaligned 16-byte shared access at 0x82 (lane 1)");
    /* The same rows padded by 16 bytes: aligned, and no conflicts. */
    unsigned wf;
    for (int l = 0; l < 32; ++l)
        addr[l] = (uint32_t)((l % 8) * 144 + (l / 8) * 16);
    CHECK_INT(fattn_sim_ldmatrix_x4(&s, addr, 0, out, &f, &wf), 0);
    CHECK_INT(wf, 4);
    /* A row that ends past the block's shared memory. */
    addr[31] = 2048 - 8;
    CHECK_INT(fattn_sim_ldmatrix_x4(&s, addr, 1, out, &f, NULL), -1);
    CHECK_INT(f.kind, FATTN_SIM_MISALIGNED); /* 2040 is not 16-byte aligned either */
    addr[31] = 2048;
    CHECK_INT(fattn_sim_ldmatrix_x4(&s, addr, 1, out, &f, NULL), -1);
    CHECK_INT(f.kind, FATTN_SIM_OUT_OF_BOUNDS);
    CHECK_INT(f.lane, 31);
    fattn_sim_fault_describe(&f, "ldmatrix.x4.trans", text, sizeof text);
    CHECK_CONTAINS(text, "outside the block's shared memory (lane 31)");
}

static void wavefronts(void)
{
    fattn_sim_smem s = {smem_bytes, 8192};
    uint32_t addr[32], out[32][4];
    fattn_sim_fault f;
    unsigned wf;
    /* 128-byte rows (64 halves), no swizzle: the 8 rows of a matrix hit the
     * same four banks: 8 wavefronts each, 32 in all. */
    for (int l = 0; l < 32; ++l)
        addr[l] = (uint32_t)((l % 8) * 128 + (l / 8) * 16);
    CHECK_INT(fattn_sim_ldmatrix_x4(&s, addr, 0, out, &f, &wf), 0);
    CHECK_INT(wf, 32);
    /* XOR swizzle of the 16-byte chunk by the row: one wavefront each. */
    for (int l = 0; l < 32; ++l) {
        unsigned row = (unsigned)(l % 8), chunk = (unsigned)(l / 8);
        addr[l] = row * 128 + ((chunk ^ (row & 7)) * 16);
    }
    CHECK_INT(fattn_sim_ldmatrix_x4(&s, addr, 0, out, &f, &wf), 0);
    CHECK_INT(wf, 4);
    /* Word-level rule: the same word twice is one slot; 4-byte accesses of a
     * warp 128 bytes apart are a 32-way conflict. */
    uint32_t a2[32];
    unsigned sz[32];
    for (int l = 0; l < 32; ++l)
        a2[l] = 64, sz[l] = 4;
    CHECK_INT(fattn_sim_wavefronts(a2, sz, 32), 1);
    for (int l = 0; l < 32; ++l)
        a2[l] = (uint32_t)l * 128;
    CHECK_INT(fattn_sim_wavefronts(a2, sz, 32), 32);
    CHECK_INT(fattn_sim_wavefronts(a2, sz, 0), 0);
}

static void shuffles(void)
{
    uint32_t v[32], d[32], e[32];
    fattn_sim_fault f;
    for (int l = 0; l < 32; ++l)
        v[l] = (uint32_t)(l * l + 1);
    /* The kernel's row reductions: xor 1 then xor 2 sums each quad. */
    CHECK_INT(fattn_sim_shfl_bfly(v, 1, 0x1f, 0xffffffffu, d, &f), 0);
    for (int l = 0; l < 32; ++l)
        d[l] += v[l];
    CHECK_INT(fattn_sim_shfl_bfly(d, 2, 0x1f, 0xffffffffu, e, &f), 0);
    int ok = 1;
    for (int l = 0; l < 32; ++l) {
        int q = l & ~3;
        uint32_t want = v[q] + v[q + 1] + v[q + 2] + v[q + 3];
        ok &= e[l] + d[l] == want;
    }
    CHECK(ok);
    /* Segments of 16 (width 16: c = (16 << 8) | 0x1f): xor 16 stays home. */
    CHECK_INT(fattn_sim_shfl_bfly(v, 16, (16u << 8) | 0x1f, 0xffffffffu, d, &f), 0);
    CHECK_INT(d[3], v[3]);
    CHECK_INT(fattn_sim_shfl_bfly(v, 8, (16u << 8) | 0x1f, 0xffffffffu, d, &f), 0);
    CHECK_INT(d[3], v[11]);
    CHECK_INT(d[19], v[27]);
    /* A lane left out of the mask: not a collective of the whole warp. */
    CHECK_INT(fattn_sim_shfl_bfly(v, 1, 0x1f, 0xfffffff7u, d, &f), -1);
    CHECK_INT(f.kind, FATTN_SIM_NOT_CONVERGED);
    CHECK_INT(f.lane, 3);
}

int main(void)
{
    T_RUN(product);
    T_RUN(faults);
    T_RUN(wavefronts);
    T_RUN(shuffles);
    return t_exit();
}
