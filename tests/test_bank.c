/*
 * test_bank.c - the bank-conflict simulator on requests whose ways are
 * worked out by hand, and on the kernel's own access model.
 */
#include "t.h"

#include "gates/access.h"
#include "gates/bank.h"

static unsigned ways(const unsigned *addr, unsigned width, unsigned phase)
{
    unsigned char active[32];
    memset(active, 1, sizeof active);
    return fattn_bank_ways(addr, active, 32, width, phase);
}

static void ldmatrix_rows(void)
{
    unsigned a[32];
    /* 8 rows of 128 B, unpadded: every row's 16 bytes are words 32r..32r+3,
     * banks 0-3 for all eight rows: 8 distinct words in bank 0, 8-way. */
    for (unsigned l = 0; l < 32; ++l)
        a[l] = (l % 8) * 128;
    CHECK_INT(ways(a, 16, 8), 8);
    /* Padded to 144 B: row r covers words 36r.., banks 4r..4r+3: all 32 banks once. */
    for (unsigned l = 0; l < 32; ++l)
        a[l] = (l % 8) * 144;
    CHECK_INT(ways(a, 16, 8), 1);
    /* Swizzled: chunk 0 of row r sits in chunk r: banks 4r..4r+3 again. */
    for (unsigned l = 0; l < 32; ++l)
        a[l] = (l % 8) * 128 + (l % 8) * 16;
    CHECK_INT(ways(a, 16, 8), 1);
    /* 64-byte rows unpadded: rows 0, 2, 4, 6 share banks 0-3: 4-way. */
    for (unsigned l = 0; l < 32; ++l)
        a[l] = (l % 8) * 64;
    CHECK_INT(ways(a, 16, 8), 4);
}

static void plain_accesses(void)
{
    unsigned a[32];
    unsigned char active[32];
    /* One word for all: a broadcast. */
    for (unsigned l = 0; l < 32; ++l)
        a[l] = 64;
    CHECK_INT(ways(a, 4, 32), 1);
    /* Stride of two words: lanes l and l+16 meet in bank 2l mod 32. */
    for (unsigned l = 0; l < 32; ++l)
        a[l] = 8 * l;
    CHECK_INT(ways(a, 4, 32), 2);
    /* Stride of 32 words: all in bank 0. */
    for (unsigned l = 0; l < 32; ++l)
        a[l] = 128 * l;
    CHECK_INT(ways(a, 4, 32), 32);
    /* Consecutive halves: two lanes per word, 16 words: no conflict. */
    for (unsigned l = 0; l < 32; ++l)
        a[l] = 2 * l;
    CHECK_INT(ways(a, 2, 32), 1);
    /* 16-byte accesses are served 8 lanes at a time: 512 contiguous bytes
     * are four conflict-free quarter-warps... */
    for (unsigned l = 0; l < 32; ++l)
        a[l] = l * 16;
    CHECK_INT(ways(a, 16, 8), 1);
    /* ...where one 32-lane phase would put lanes l, l+8, l+16, l+24 in the
     * same four banks: 4-way. */
    CHECK_INT(ways(a, 16, 32), 4);
    /* Lanes reading the same 16 bytes share them (broadcast). */
    for (unsigned l = 0; l < 32; ++l)
        a[l] = (l % 8) * 16;
    CHECK_INT(ways(a, 16, 32), 1);
    /* Inactive lanes do not count. */
    for (unsigned l = 0; l < 32; ++l) {
        a[l] = 128 * l;
        active[l] = l == 0 || l == 5;
    }
    CHECK_INT(fattn_bank_ways(a, active, 32, 4, 32), 2);
    CHECK_INT(fattn_bank_phase_lanes(16), 8);
    CHECK_INT(fattn_bank_phase_lanes(8), 16);
    CHECK_INT(fattn_bank_phase_lanes(4), 32);
}

typedef struct worst {
    unsigned ways[FATTN_ACC_KINDS];
    int count[FATTN_ACC_KINDS];
} worst;

static int visit(const fattn_warp_req *r, void *ctx)
{
    worst *w = ctx;
    unsigned x = fattn_bank_ways(r->smem, r->active, 32, r->width, r->phase_lanes);
    if (x > w->ways[r->kind])
        w->ways[r->kind] = x;
    w->count[r->kind]++;
    return 0;
}

static void kernel_model(void)
{
    fattn_config c;
    fattn_layout l;
    worst w;
    /* Unpadded, unswizzled, D=64: Q rows of 128 B give 8-way ldmatrix, the
     * K/V rows of 64 B (BLOCK_K=32) 4-way. */
    fattn_config_parse("bm64-bn64-bk32-w4-s2-u1-cp1-sw0-h1-pad0", "test", &c);
    fattn_layout_init(&l, &c, 64);
    memset(&w, 0, sizeof w);
    fattn_access_each(&l, visit, &w);
    CHECK_INT(w.ways[FATTN_ACC_LDM_Q], 8);
    CHECK_INT(w.ways[FATTN_ACC_LDM_K], 4);
    CHECK_INT(w.ways[FATTN_ACC_LDM_V], 4);
    /* Request counts: Q copy 64 rows x 8 units / 128 threads = 4 per thread,
     * 4 warps x 4; K/V copy 64 x 4 units / 128 = 2 per thread, per slot and
     * chunk: 2 stages x 2 chunks x 4 warps x 2; ldmatrix Q: 4 warps x 1
     * strip x 4 k-steps; K and V: 2 stages x 4 x 2. */
    CHECK_INT(w.count[FATTN_ACC_Q_COPY], 16);
    CHECK_INT(w.count[FATTN_ACC_KV_COPY], 32);
    CHECK_INT(w.count[FATTN_ACC_LDM_Q], 16);
    CHECK_INT(w.count[FATTN_ACC_LDM_K], 16);
    CHECK_INT(w.count[FATTN_ACC_LDM_V], 16);
    /* Swizzled: conflict-free everywhere. */
    fattn_config_parse("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "test", &c);
    fattn_layout_init(&l, &c, 64);
    memset(&w, 0, sizeof w);
    fattn_access_each(&l, visit, &w);
    for (int k = 0; k < FATTN_ACC_KINDS; ++k)
        CHECK_INT(w.ways[k], 1);
    /* Padded by 16 B with 64-byte K/V rows: the 16-byte copies of one
     * quarter-warp cover rows 0 and 1 (offsets 0..63 and 80..143): chunk
     * groups 0,1,2,3 and 5,6,7,0: 2-way. ldmatrix stays conflict-free. */
    fattn_config_parse("bm64-bn64-bk32-w4-s2-u1-cp1-sw0-h1", "test", &c);
    fattn_layout_init(&l, &c, 64);
    memset(&w, 0, sizeof w);
    fattn_access_each(&l, visit, &w);
    CHECK_INT(w.ways[FATTN_ACC_KV_COPY], 2);
    CHECK_INT(w.ways[FATTN_ACC_LDM_K], 1);
    CHECK_INT(w.ways[FATTN_ACC_LDM_Q], 1);
}

int main(void)
{
    T_RUN(ldmatrix_rows);
    T_RUN(plain_accesses);
    T_RUN(kernel_model);
    return t_exit();
}
