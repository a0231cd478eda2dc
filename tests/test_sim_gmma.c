/*
 * test_sim_gmma.c - the simulator's wgmma (src/sim/gmma.c) and the
 * descriptor encoder of kernels/fattn_gmma.h, held to what neither derives:
 *  - fragment layouts: the simulator's D (64 x N, .f32) and register A
 *    (64 x 16, .f16) coordinates against CuTe's CLayout_64xN and
 *    ALayout_64x16 (cute/atom/mma_traits_sm90_gmma.hpp), evaluated here as
 *    shape:stride layouts;
 *  - the encoder on hand-worked descriptors (the fields of the PTX ISA's
 *    "Matrix Descriptor Format" worked out by hand, not by the encoder);
 *  - whole products: matrices placed in shared memory by CuTe's canonical
 *    GMMA atoms (Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom repeated by
 *    tile_to_shape, the Swizzle<b,4,3> on the byte address), descriptors from
 *    the kernel's encoder, four K slices accumulated (scale-d 0, then 1),
 *    against a plain triple loop: SS and RS, A and B each K- and MN-major,
 *    every swizzle mode, N in {64, 128, 176, 192, 256} where the atom
 *    divides N; B MN-major stored as TMA boxes (a span of columns, all its
 *    rows) in every mode; then D converted to fp16 and fed back as the A
 *    operand of an RS wgmma (P kept in registers);
 *  - TMA (src/sim/tma.c): Q, K and V tiles of a head whose rows run past
 *    seqlen, loaded in 128-byte-swizzled boxes of 64 columns, land where
 *    CuTe's K-major SW128 tile puts them, the rows past seqlen zero and the
 *    box's full bytes counted; S = Q K^T (SS, K-major) and O = P V (P in
 *    registers, V MN-major straight from its boxes) from them equal the
 *    plain products; a misaligned destination, a box past shared memory and
 *    a swizzled box narrower than its span are refused;
 *  - the encoder's planted mistakes (LBO and SBO swapped, the wrong swizzle
 *    mode) give a wrong product, and the faults: a swizzled tile off its
 *    repeat, a descriptor past shared memory, a base offset, a bad N.
 * Integer data in [-3, 3]: every product and sum is exact, so the checks
 * are equalities.
 */
#include "t.h"

#include <stdint.h>

#include "gpu/tmap.h"
#include "kernels/fattn_gmma.h"
#include "run/numerics.h"
#include "sim/gmma.h"
#include "sim/tma.h"
#include "util/misc.h"

#define SMEM_BYTES (64u << 10)
#define A_BASE     0u     /* 64 x 64 halves: 8 KiB */
#define B_BASE     16384u /* up to 256 x 64 halves: 32 KiB */
#define KT         64     /* K of the tiles: four wgmma K slices */

static uint8_t smem[SMEM_BYTES];
static float Am[64][KT], Bm[KT][256]; /* A (M x K) and B (K x N), logical */

/* ---- CuTe layouts, evaluated ---- */

/* A flat shape:stride layout at index idx, the first mode fastest. */
static int cute_eval(const int *shape, const int *stride, int n, int idx)
{
    int off = 0;
    for (int i = 0; i < n; ++i) {
        off += idx % shape[i] * stride[i];
        idx /= shape[i];
    }
    return off;
}

/* CLayout_64xN = ((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)), and
 * ALayout_64x16 the same with (2,2,2): (thread, value) -> m + 64 * n. */
static void cute_tv(int n, int t, int v, unsigned *row, unsigned *col)
{
    static const int ts[3] = {4, 8, 4}, tst[3] = {128, 1, 16}, vst[3] = {64, 8, 512};
    const int vs[3] = {2, 2, n / 8};
    int off = cute_eval(ts, tst, 3, t) + cute_eval(vs, vst, 3, v);
    *row = (unsigned)(off % 64), *col = (unsigned)(off / 64);
}

static void fragments(void)
{
    for (int n = 8; n <= 256; n += 8)
        for (unsigned t = 0; t < 128; ++t)
            for (unsigned i = 0; i < (unsigned)n / 2; ++i) {
                unsigned r0, c0, r1, c1;
                fattn_sim_wgmma_d_coord(t, i, &r0, &c0);
                cute_tv(n, (int)t, (int)i, &r1, &c1);
                if (r0 != r1 || c0 != c1) {
                    fprintf(stderr, "N=%d thread %u d%u: simulator (%u,%u), CuTe (%u,%u)\n", n, t, i, r0, c0, r1, c1);
                    CHECK(0);
                    return;
                }
            }
    for (unsigned t = 0; t < 128; ++t)
        for (unsigned i = 0; i < 8; ++i) {
            unsigned r0, c0, r1, c1;
            fattn_sim_wgmma_a_coord(t, i, &r0, &c0);
            cute_tv(16, (int)t, (int)i, &r1, &c1);
            CHECK(r0 == r1 && c0 == c1);
        }
    /* Every accumulator element is held exactly once. */
    static unsigned char seen[64][256];
    memset(seen, 0, sizeof seen);
    for (unsigned t = 0; t < 128; ++t)
        for (unsigned i = 0; i < 128; ++i) {
            unsigned r, c;
            fattn_sim_wgmma_d_coord(t, i, &r, &c);
            seen[r][c]++;
        }
    int once = 1;
    for (int r = 0; r < 64; ++r)
        for (int c = 0; c < 256; ++c)
            once &= seen[r][c] == 1;
    CHECK(once);
}

/* ---- the encoder, by hand ---- */

static void encoder(void)
{
    /* 0x400 >> 4 = 0x40 at bit 0; 16 >> 4 = 1 at bit 16; 1024 >> 4 = 64 at
     * bit 32; 128-byte swizzle (1) at bit 62. */
    CHECK(fattn_gmma_desc(0x400, 16, 1024, FATTN_GMMA_SW128) == 0x4000004000010040ull);
    /* 0x23450 >> 4 = 0x2345; 2048 >> 4 = 0x80; 128 >> 4 = 8; no swizzle. */
    CHECK(fattn_gmma_desc(0x23450, 2048, 128, FATTN_GMMA_NONE) == 0x0000000800802345ull);
    /* Addresses are taken modulo 2^18 ("& 0x3FFFF"). */
    CHECK(fattn_gmma_desc(0x40010, 0, 0, FATTN_GMMA_SW32) == 0xC000000000000001ull);
    /* K-major, 64-byte swizzle: SBO = 8 rows of 64 bytes, LBO one unit. */
    CHECK(fattn_gmma_desc_k(0x1000, 64, FATTN_GMMA_SW64) == 0x8000002000010100ull);
    /* K-major, none, 64 rows: SBO = 128, LBO = 64 rows x 16 bytes. */
    CHECK(fattn_gmma_desc_k(0, 64, FATTN_GMMA_NONE) == 0x0000000800400000ull);
    /* MN-major, 128-byte swizzle, 128 columns: LBO = the next 64 columns
     * (1024 bytes: 64), SBO = the next 8 of K (2 atoms: 2048 bytes, 128). */
    CHECK(fattn_gmma_desc_mn(0, 128, FATTN_GMMA_SW128) == 0x4000008000400000ull);
    /* MN-major in TMA boxes of 64 columns x 64 rows, 128-byte swizzle: LBO
     * = a box (8192: 512), SBO = 8 rows (1024: 64). Without swizzle, boxes of
     * 8 columns: LBO = 128 (8), SBO = a box of 64 rows of 16 bytes (64). */
    CHECK(fattn_gmma_desc_mn_boxes(0x8000, 64, FATTN_GMMA_SW128) == 0x4000004002000800ull);
    CHECK(fattn_gmma_desc_mn_boxes(0, 64, FATTN_GMMA_NONE) == 0x0000004000080000ull);
    /* MN-major, none, 64 columns: SBO = 128 (8), LBO = 1024 (64). */
    CHECK(fattn_gmma_desc_mn(0x800, 64, FATTN_GMMA_NONE) == 0x0000000800400080ull);
    /* K slices: K-major SW128, 64 rows, k = 80: the second column of atoms
     * (8 atoms of 1024 bytes in) plus 16 halves (32 bytes). */
    CHECK_INT(fattn_gmma_k_offset(0, 64, 80, FATTN_GMMA_SW128), 8192 + 32);
    /* MN-major SW64 (32 columns an atom), 128 columns, k = 32: 4 atom rows
     * of K down, each 128 / 32 = 4 atoms of 512 bytes. */
    CHECK_INT(fattn_gmma_k_offset(1, 128, 32, FATTN_GMMA_SW64), 8192);
    CHECK_INT(fattn_gmma_k_offset(0, 64, 16, FATTN_GMMA_NONE), 2 * 64 * 16);
    CHECK_INT(fattn_gmma_repeat_bytes(FATTN_GMMA_SW64), 512);
    /* Advancing a descriptor is encoding the moved address, wherever the
     * sum stays in the 18-bit window (every layout a launch holds): K
     * slices, slots and consumers' tiles up to the 227 KiB maximum. */
    int same = 0, tried = 0;
    for (unsigned addr = 0; addr < 232448; addr += 1024 * 7)
        for (unsigned off = 0; addr + off < 262144; off += 16 * 389, ++tried)
            for (unsigned mode = 0; mode < 4; ++mode)
                same += fattn_gmma_desc_advance(fattn_gmma_desc_k(addr, 64, mode), off)
                        == fattn_gmma_desc_k(addr + off, 64, mode);
    CHECK(tried > 500);
    CHECK_INT(same, 4 * tried);
    /* The simulator's decoder reads the fields back. */
    fattn_sim_gmma_desc d;
    fattn_sim_gmma_decode(fattn_gmma_desc(0x3fff0, 0x3fff0, 0x10, FATTN_GMMA_SW64) | 5ull << 49, &d);
    CHECK_INT(d.start, 0x3fff0);
    CHECK_INT(d.lbo, 0x3fff0);
    CHECK_INT(d.sbo, 0x10);
    CHECK_INT(d.base_offset, 5);
    CHECK_INT(d.mode, FATTN_GMMA_SW64);
}

/* ---- CuTe's canonical tiles ---- */

static unsigned swizzle_bits(unsigned mode)
{
    return mode == FATTN_GMMA_SW128 ? 3 : mode == FATTN_GMMA_SW64 ? 2 : mode == FATTN_GMMA_SW32 ? 1 : 0;
}

/* Swizzle<b,4,3> on a byte address: bits [4, 4 + b) ^= bits [7, 7 + b). */
static uint32_t cute_swizzle(uint32_t byte, unsigned b)
{
    return byte ^ ((byte >> 7 & ((1u << b) - 1u)) << 4);
}

/* The byte offset of element (mn, k) of a tile of mn_size x KT placed as
 * tile_to_shape(Layout_{K,MN}_<mode>_Atom<half>, (mn_size, KT)): the atom
 * (in halves) K-major (8, w):(w, 1), MN-major (w, 8):(1, w), w = 8, 16, 32,
 * 64 for none, 32B, 64B, 128B; atoms column-major over the tile; then
 * Swizzle<b,4,3> on the byte address (base 1024-aligned). */
static uint32_t cute_tile(int mn_major, unsigned mode, unsigned mn_size, unsigned mn, unsigned k)
{
    const unsigned w = mode == FATTN_GMMA_NONE ? 8 : 8u << swizzle_bits(mode);
    const unsigned s0 = mn_major ? w : 8, s1 = mn_major ? 8 : w; /* the atom's shape */
    const unsigned in_atom = mn_major ? mn % s0 + k % s1 * w : mn % s0 * w + k % s1;
    const unsigned atom = mn / s0 + k / s1 * (mn_size / s0);
    return cute_swizzle(2 * (atom * s0 * s1 + in_atom), swizzle_bits(mode));
}

static void put(uint32_t addr, float v)
{
    uint16_t h = fattn_float_to_half(v);
    memcpy(smem + addr, &h, 2);
}

static fattn_rng rng;

static void fill(unsigned n)
{
    for (int m = 0; m < 64; ++m)
        for (int k = 0; k < KT; ++k)
            Am[m][k] = (float)((int)fattn_rng_below(&rng, 7) - 3);
    for (int k = 0; k < KT; ++k)
        for (unsigned c = 0; c < n; ++c)
            Bm[k][c] = (float)((int)fattn_rng_below(&rng, 7) - 3);
}

/* Places A (64 x KT) and B (N x KT as MN x K) by CuTe's tiles. */
static void place(int a_mn, unsigned a_mode, int b_mn, unsigned b_mode, unsigned n)
{
    memset(smem, 0xff, sizeof smem);
    for (unsigned m = 0; m < 64; ++m)
        for (unsigned k = 0; k < KT; ++k)
            put(A_BASE + cute_tile(a_mn, a_mode, 64, m, k), Am[m][k]);
    for (unsigned c = 0; c < n; ++c)
        for (unsigned k = 0; k < KT; ++k)
            put(B_BASE + cute_tile(b_mn, b_mode, n, c, k), Bm[k][c]);
}

static uint64_t desc_of(uint32_t base, int mn_major, unsigned mn_size, unsigned k, unsigned mode)
{
    const uint32_t at = base + fattn_gmma_k_offset(mn_major, mn_size, k, mode);
    return mn_major ? fattn_gmma_desc_mn(at, mn_size, mode) : fattn_gmma_desc_k(at, mn_size, mode);
}

static float D[128][128];

static float *const *dptrs(void)
{
    static float *p[128];
    for (int t = 0; t < 128; ++t)
        p[t] = D[t];
    return p;
}

/* The A registers of K slice ks of Am, by CuTe's ALayout. */
static void a_regs(int ks, uint32_t a[128][4])
{
    for (int t = 0; t < 128; ++t)
        for (int i = 0; i < 8; ++i) {
            unsigned row, k;
            cute_tv(16, t, i, &row, &k);
            uint32_t h = fattn_float_to_half(Am[row][16 * ks + k]);
            a[t][i / 2] = i % 2 ? (a[t][i / 2] & 0xffffu) | h << 16 : (a[t][i / 2] & 0xffff0000u) | h;
        }
}

/* Runs the four K slices and compares D with Am Bm; returns the mismatches. */
static int product(int rs, int a_mn, unsigned a_mode, int b_mn, unsigned b_mode, unsigned n, uint64_t (*bdesc)(int))
{
    fattn_sim_smem s = {smem, SMEM_BYTES};
    fattn_sim_fault f;
    static uint32_t a[128][4];
    for (int ks = 0; ks < KT / 16; ++ks) {
        fattn_sim_wgmma op = {.n = n,
                              .a_regs = rs,
                              .a_desc = desc_of(A_BASE, a_mn, 64, 16u * (unsigned)ks, a_mode),
                              .a = a,
                              .b_desc = bdesc ? bdesc(ks) : desc_of(B_BASE, b_mn, n, 16u * (unsigned)ks, b_mode),
                              .trans_a = a_mn,
                              .trans_b = b_mn,
                              .scale_d = ks > 0};
        if (rs)
            a_regs(ks, a);
        if (fattn_sim_wgmma_exec(&s, &op, dptrs(), &f)) {
            char why[160];
            fattn_sim_fault_describe(&f, "wgmma", why, sizeof why);
            fprintf(stderr, "%s\n", why);
            return -1;
        }
    }
    int bad = 0;
    for (unsigned t = 0; t < 128; ++t)
        for (unsigned i = 0; i < n / 2; ++i) {
            unsigned row, col;
            cute_tv((int)n, (int)t, (int)i, &row, &col);
            double want = 0;
            for (int k = 0; k < KT; ++k)
                want += (double)Am[row][k] * Bm[k][col];
            bad += D[t][i] != (float)want;
        }
    return bad;
}

static const char *const mode_names[4] = {"none", "128B", "64B", "32B"};

static void products(void)
{
    static const unsigned ns[] = {64, 128, 176, 192, 256};
    int cases = 0;
    for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ++ni)
        for (unsigned b_mode = 0; b_mode < 4; ++b_mode)
            for (int b_mn = 0; b_mn < 2; ++b_mn) {
                const unsigned n = ns[ni], w = 8u << swizzle_bits(b_mode);
                if (b_mn && b_mode && n % w)
                    continue; /* no MN-major atom of that width tiles N */
                /* A: registers (RS), then shared memory each way in the same mode. */
                for (int a = 0; a < 3; ++a) {
                    const int rs = a == 0, a_mn = a == 2;
                    const unsigned a_mode = (b_mode + (unsigned)a) % 4;
                    fill(n);
                    place(a_mn, a_mode, b_mn, b_mode, n);
                    int bad = product(rs, a_mn, a_mode, b_mn, b_mode, n, NULL);
                    if (bad)
                        fprintf(stderr, "N=%u A %s %s, B %s %s: %d of %u accumulators wrong\n", n,
                                rs     ? "registers"
                                : a_mn ? "MN-major"
                                       : "K-major",
                                mode_names[a_mode], b_mn ? "MN-major" : "K-major", mode_names[b_mode], bad, 64 * n);
                    CHECK_INT(bad, 0);
                    ++cases;
                }
            }
    printf("ok: %d wgmma products (4 K slices each) against CuTe's placement\n", cases);
}

/* B MN-major as TMA boxes: for each span of w columns (one swizzle row),
 * the KT rows one after another; element (n, k) at n / w boxes, k rows, n %
 * w columns in, the row's chunks swizzled by the row. */
static unsigned box_mode;

static uint64_t box_desc(int ks)
{
    return fattn_gmma_desc_mn_boxes(B_BASE + 16u * (unsigned)ks * fattn_gmma_row_bytes(box_mode), KT, box_mode);
}

static void boxes(void)
{
    const unsigned n = 128;
    for (box_mode = 0; box_mode < 4; ++box_mode) {
        const unsigned row = fattn_gmma_row_bytes(box_mode), w = row / 2, b = swizzle_bits(box_mode);
        fill(n);
        place(0, FATTN_GMMA_SW128, 0, FATTN_GMMA_SW128, n);
        for (unsigned c = 0; c < n; ++c)
            for (unsigned k = 0; k < KT; ++k) {
                put(B_BASE + cute_swizzle(c / w * KT * row + k * row + c % w * 2, b), Bm[k][c]);
            }
        int bad = product(0, 0, FATTN_GMMA_SW128, 1, box_mode, n, box_desc);
        if (bad)
            fprintf(stderr, "B MN-major in boxes, %s: %d wrong\n", mode_names[box_mode], bad);
        CHECK_INT(bad, 0);
    }
}

/* ---- P kept in registers ---- */

static float P[128][32]; /* a 64 x 64 accumulator, kept */

/* A registers of K slice ks of P: its registers 8 ks .. 8 ks + 7, as fp16
 * pairs (the D and A fragments share their pattern). */
static void p_as_a(unsigned ks, uint32_t a[128][4])
{
    for (int t = 0; t < 128; ++t)
        for (unsigned r = 0; r < 4; ++r)
            a[t][r] = (uint32_t)fattn_float_to_half(P[t][8 * ks + 2 * r])
                      | (uint32_t)fattn_float_to_half(P[t][8 * ks + 2 * r + 1]) << 16;
}

static void keep_p(void)
{
    for (int t = 0; t < 128; ++t)
        memcpy(P[t], D[t], sizeof P[t]);
}

static void d_to_a(void)
{
    const unsigned n = 64; /* P = A B is 64 x 64; then O = P V with V 64 x 128 */
    fill(n);
    place(0, FATTN_GMMA_SW128, 0, FATTN_GMMA_SW128, n);
    CHECK_INT(product(0, 0, FATTN_GMMA_SW128, 0, FATTN_GMMA_SW128, n, NULL), 0);
    keep_p();
    /* V: 64 (K) x 128 (N), MN-major 128-byte swizzle, values in [-3, 3]. */
    static float V[64][128];
    memset(smem + B_BASE, 0xff, SMEM_BYTES - B_BASE);
    for (unsigned k = 0; k < 64; ++k)
        for (unsigned c = 0; c < 128; ++c) {
            V[k][c] = (float)((int)fattn_rng_below(&rng, 7) - 3);
            put(B_BASE + cute_tile(1, FATTN_GMMA_SW128, 128, c, k), V[k][c]);
        }
    fattn_sim_smem s = {smem, SMEM_BYTES};
    fattn_sim_fault f;
    static uint32_t a[128][4];
    for (unsigned ks = 0; ks < 4; ++ks) {
        p_as_a(ks, a);
        fattn_sim_wgmma op = {.n = 128,
                              .a_regs = 1,
                              .a = a,
                              .b_desc = desc_of(B_BASE, 1, 128, 16u * ks, FATTN_GMMA_SW128),
                              .trans_b = 1,
                              .scale_d = ks > 0};
        CHECK_INT(fattn_sim_wgmma_exec(&s, &op, dptrs(), &f), 0);
    }
    int bad = 0;
    for (unsigned t = 0; t < 128; ++t)
        for (unsigned i = 0; i < 64; ++i) {
            unsigned row, col;
            cute_tv(128, (int)t, (int)i, &row, &col);
            double want = 0;
            for (int k = 0; k < 64; ++k) {
                double p = 0;
                for (int j = 0; j < KT; ++j)
                    p += (double)Am[row][j] * Bm[j][k];
                want += p * V[k][col];
            }
            bad += D[t][i] != (float)want;
        }
    CHECK_INT(bad, 0);
}

/* ---- TMA into wgmma ---- */

#define TS 100 /* seqlen: the second block of 64 rows runs 28 rows past it */
#define TD 128
static uint16_t gq[2][TS][TD], gk[2][TS][TD], gv[2][TS][TD]; /* (heads, S, D), batch 1 */

static float gval(uint16_t (*t)[TS][TD], int h, int row, int col)
{
    return row < TS ? fattn_half_to_float(t[h][row][col]) : 0.0f;
}

/* Loads rows row0 .. row0 + 63 of head h of t, all 128 columns, as two
 * boxes of 64 columns at dst and dst + 8192. */
static void load_tile(uint16_t (*t)[TS][TD], int h, int row0, uint32_t dst)
{
    fattn_sim_smem s = {smem, SMEM_BYTES};
    fattn_sim_fault f;
    fattn_tmap m;
    fattn_tmap_attention(&m, t, 1, 2, TS, TD, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B);
    for (int half = 0; half < 2; ++half) {
        const int32_t coord[3] = {64 * half, row0, h};
        CHECK_INT(fattn_sim_tma_load(&s, dst + 8192u * (unsigned)half, &m, coord, &f), 64 * 64 * 2);
    }
}

static void tma_chain(void)
{
    for (int h = 0; h < 2; ++h)
        for (int r = 0; r < TS; ++r)
            for (int c = 0; c < TD; ++c) {
                gq[h][r][c] = fattn_float_to_half((float)((int)fattn_rng_below(&rng, 7) - 3));
                gk[h][r][c] = fattn_float_to_half((float)((int)fattn_rng_below(&rng, 7) - 3));
                gv[h][r][c] = fattn_float_to_half((float)((int)fattn_rng_below(&rng, 7) - 3));
            }
    const uint32_t QA = 0, KB = 16384, VB = 32768;
    memset(smem, 0xff, sizeof smem);
    load_tile(gq, 1, 64, QA);
    load_tile(gk, 1, 64, KB);
    load_tile(gv, 1, 64, VB);
    /* The boxes are CuTe's K-major SW128 tile of 64 x 128. */
    int misplaced = 0;
    for (unsigned r = 0; r < 64; ++r)
        for (unsigned c = 0; c < TD; ++c) {
            uint16_t got;
            memcpy(&got, smem + QA + cute_tile(0, FATTN_GMMA_SW128, 64, r, c), 2);
            misplaced += fattn_half_to_float(got) != gval(gq, 1, 64 + (int)r, (int)c);
        }
    CHECK_INT(misplaced, 0);

    /* S = Q K^T: 8 K slices of the 128 columns. */
    fattn_sim_smem s = {smem, SMEM_BYTES};
    fattn_sim_fault f;
    for (unsigned ks = 0; ks < TD / 16; ++ks) {
        fattn_sim_wgmma op = {.n = 64,
                              .a_desc = fattn_gmma_desc_k(QA + fattn_gmma_k_offset(0, 64, 16 * ks, FATTN_GMMA_SW128),
                                                          64, FATTN_GMMA_SW128),
                              .b_desc = fattn_gmma_desc_k(KB + fattn_gmma_k_offset(0, 64, 16 * ks, FATTN_GMMA_SW128),
                                                          64, FATTN_GMMA_SW128),
                              .scale_d = ks > 0};
        CHECK_INT(fattn_sim_wgmma_exec(&s, &op, dptrs(), &f), 0);
    }
    static double S[64][64];
    int bad = 0;
    for (int i = 0; i < 64; ++i)
        for (int j = 0; j < 64; ++j) {
            S[i][j] = 0;
            for (int c = 0; c < TD; ++c)
                S[i][j] += (double)gval(gq, 1, 64 + i, c) * gval(gk, 1, 64 + j, c);
        }
    for (unsigned t = 0; t < 128; ++t)
        for (unsigned i = 0; i < 32; ++i) {
            unsigned row, col;
            cute_tv(64, (int)t, (int)i, &row, &col);
            bad += D[t][i] != (float)S[row][col];
        }
    CHECK_INT(bad, 0);

    /* O = P V, P = S in registers as fp16 (|S| <= 1152: exact), V MN-major
     * from its two boxes: the next 64 of D a box (8192 bytes) on. */
    keep_p();
    static uint32_t a[128][4];
    for (unsigned ks = 0; ks < 4; ++ks) {
        p_as_a(ks, a);
        fattn_sim_wgmma op = {.n = TD,
                              .a_regs = 1,
                              .a = a,
                              .b_desc = fattn_gmma_desc_mn_boxes(VB + 16 * ks * 128, 64, FATTN_GMMA_SW128),
                              .trans_b = 1,
                              .scale_d = ks > 0};
        CHECK_INT(fattn_sim_wgmma_exec(&s, &op, dptrs(), &f), 0);
    }
    bad = 0;
    for (unsigned t = 0; t < 128; ++t)
        for (unsigned i = 0; i < TD / 2; ++i) {
            unsigned row, col;
            cute_tv(TD, (int)t, (int)i, &row, &col);
            double want = 0;
            for (int j = 0; j < 64; ++j)
                want += S[row][j] * gval(gv, 1, 64 + j, (int)col);
            bad += D[t][i] != (float)want;
        }
    CHECK_INT(bad, 0);

    /* Rows before the tensor are zero too (a negative coordinate). */
    fattn_tmap m;
    fattn_tmap_attention(&m, gq, 1, 2, TS, TD, 16, 64, CU_TENSOR_MAP_SWIZZLE_128B);
    const int32_t before[3] = {0, -8, 0};
    CHECK_INT(fattn_sim_tma_load(&s, 0, &m, before, &f), 16 * 128);
    int wrong = 0;
    for (unsigned r = 0; r < 16; ++r)
        for (unsigned c = 0; c < 64; ++c) {
            uint16_t got;
            memcpy(&got, smem + cute_tile(0, FATTN_GMMA_SW128, 16, r, c), 2);
            wrong += fattn_half_to_float(got) != (r < 8 ? 0.0f : gval(gq, 0, (int)r - 8, (int)c));
        }
    CHECK_INT(wrong, 0);
    /* Refused: a destination off the 1024-byte repeat, a box past shared
     * memory, a 128-byte swizzle of 64-byte rows. */
    const int32_t at[3] = {0, 0, 0};
    CHECK_INT(fattn_sim_tma_load(&s, 512, &m, at, &f), -1);
    CHECK_INT(f.kind, FATTN_SIM_MISALIGNED);
    CHECK_INT(fattn_sim_tma_load(&s, SMEM_BYTES - 1024, &m, at, &f), -1);
    CHECK_INT(f.kind, FATTN_SIM_OUT_OF_BOUNDS);
    fattn_tmap_attention(&m, gq, 1, 2, TS, TD, 16, 32, CU_TENSOR_MAP_SWIZZLE_128B);
    CHECK_INT(fattn_sim_tma_load(&s, 0, &m, at, &f), -1);
    CHECK_INT(f.kind, FATTN_SIM_BAD_OPERAND);
    /* Unswizzled: rows packed, 128-byte aligned destination. */
    fattn_tmap_attention(&m, gq, 1, 2, TS, TD, 4, 8, CU_TENSOR_MAP_SWIZZLE_NONE);
    CHECK_INT(fattn_sim_tma_load(&s, 128, &m, at, &f), 4 * 16);
    uint16_t x;
    memcpy(&x, smem + 128 + 3 * 16 + 2 * 5, 2);
    CHECK(x == gq[0][3][5]);
    CHECK_INT(fattn_sim_tma_load(&s, 64, &m, at, &f), -1);
}

/* ---- planted mistakes and faults ---- */

static unsigned plant_n;

static uint64_t swapped(int ks) /* MN-major 128B with LBO and SBO exchanged */
{
    const uint32_t at = B_BASE + fattn_gmma_k_offset(1, plant_n, 16u * (unsigned)ks, FATTN_GMMA_SW128);
    fattn_sim_gmma_desc d;
    fattn_sim_gmma_decode(fattn_gmma_desc_mn(at, plant_n, FATTN_GMMA_SW128), &d);
    return fattn_gmma_desc(at, d.sbo, d.lbo, FATTN_GMMA_SW128);
}

static uint64_t wrong_mode(int ks) /* a 64-byte-swizzled tile described as 128-byte */
{
    const uint32_t at = B_BASE + fattn_gmma_k_offset(0, plant_n, 16u * (unsigned)ks, FATTN_GMMA_SW64);
    return fattn_gmma_desc_k(at, plant_n, FATTN_GMMA_SW128);
}

static void planted(void)
{
    plant_n = 128;
    fill(plant_n);
    place(0, FATTN_GMMA_SW128, 1, FATTN_GMMA_SW128, plant_n);
    CHECK_INT(product(0, 0, FATTN_GMMA_SW128, 1, FATTN_GMMA_SW128, plant_n, NULL), 0);
    CHECK(product(0, 0, FATTN_GMMA_SW128, 1, FATTN_GMMA_SW128, plant_n, swapped) > 0);
    place(0, FATTN_GMMA_SW128, 0, FATTN_GMMA_SW64, plant_n);
    CHECK_INT(product(0, 0, FATTN_GMMA_SW128, 0, FATTN_GMMA_SW64, plant_n, NULL), 0);
    CHECK(product(0, 0, FATTN_GMMA_SW128, 0, FATTN_GMMA_SW64, plant_n, wrong_mode) > 0);

    fattn_sim_smem s = {smem, SMEM_BYTES};
    fattn_sim_fault f;
    fattn_sim_wgmma op = {.n = 64,
                          .a_desc = fattn_gmma_desc_k(A_BASE, 64, FATTN_GMMA_SW128),
                          .b_desc = fattn_gmma_desc_k(B_BASE, 64, FATTN_GMMA_SW128)};
    CHECK_INT(fattn_sim_wgmma_exec(&s, &op, dptrs(), &f), 0);
    /* A 128-byte-swizzled tile 512 bytes past its repeat. */
    op.b_desc = fattn_gmma_desc_k(B_BASE + 512, 64, FATTN_GMMA_SW128);
    CHECK_INT(fattn_sim_wgmma_exec(&s, &op, dptrs(), &f), -1);
    CHECK_INT(f.kind, FATTN_SIM_MISALIGNED);
    CHECK_INT(f.addr, B_BASE + 512);
    /* Moved along K within the first row is fine (the next K slice). */
    op.b_desc = fattn_gmma_desc_k(B_BASE + 32, 64, FATTN_GMMA_SW128);
    CHECK_INT(fattn_sim_wgmma_exec(&s, &op, dptrs(), &f), 0);
    /* 64 rows of 128 bytes from 63 KiB run past 64 KiB. */
    op.b_desc = fattn_gmma_desc_k(SMEM_BYTES - 1024, 64, FATTN_GMMA_SW128);
    CHECK_INT(fattn_sim_wgmma_exec(&s, &op, dptrs(), &f), -1);
    CHECK_INT(f.kind, FATTN_SIM_OUT_OF_BOUNDS);
    char why[160];
    fattn_sim_fault_describe(&f, "wgmma", why, sizeof why);
    CHECK(strstr(why, "outside the block's shared memory") && !strstr(why, "lane"));
    op.b_desc = fattn_gmma_desc_k(B_BASE, 64, FATTN_GMMA_SW128) | 1ull << 49;
    CHECK_INT(fattn_sim_wgmma_exec(&s, &op, dptrs(), &f), -1);
    CHECK_INT(f.kind, FATTN_SIM_BAD_OPERAND);
    op.b_desc = fattn_gmma_desc_k(B_BASE, 64, FATTN_GMMA_SW128);
    op.n = 68;
    CHECK_INT(fattn_sim_wgmma_exec(&s, &op, dptrs(), &f), -1);
    CHECK_INT(f.kind, FATTN_SIM_BAD_OPERAND);
}

int main(void)
{
    fattn_rng_seed(&rng, 0x9e3779b97f4a7c15ull);
    T_RUN(fragments);
    T_RUN(encoder);
    T_RUN(products);
    T_RUN(boxes);
    T_RUN(d_to_a);
    T_RUN(tma_chain);
    T_RUN(planted);
    return t_exit();
}
