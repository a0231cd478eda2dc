/*
 * test_layout.c - the C layout model (src/gates/layout.c) against the
 * kernel's own addressing (kernels/fattn_tile.h, included here as C), for
 * every row and byte of every tile of every configuration; and sizes and
 * swizzled offsets worked out by hand.
 */
#include "t.h"

#include "../kernels/fattn_tile.h"
#include "gates/layout.h"
#include "space/space.h"
#include "util/paths.h"

static fattn_config cfg(const char *key)
{
    fattn_config c;
    if (fattn_config_parse(key, "test", &c))
        exit(T_HARNESS);
    return c;
}

static void sizes_by_hand(void)
{
    fattn_layout l;
    fattn_config c = cfg("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1");
    fattn_layout_init(&l, &c, 64);
    /* Q: 64 rows x 64 halves = 128 B; K/V slot: 64 rows x 32 halves = 64 B. */
    CHECK_INT(l.q.row_bytes, 128);
    CHECK_INT(l.q.bytes, 64 * 128);
    CHECK_INT(l.kv.row_bytes, 64);
    CHECK_INT(l.kv.bytes, 64 * 64);
    CHECK_INT(l.total_bytes, 8192 + 2 * 4096);
    CHECK_INT(l.threads, 128);
    CHECK_INT(l.rows_per_warp, 16);
    CHECK_INT(l.m_tiles, 1);
    CHECK_INT(l.chunks_per_tile, 2);

    c = cfg("bm64-bn64-bk32-w4-s2-u1-cp1-sw0-h1");
    fattn_layout_init(&l, &c, 64);
    /* Padded by 16 B: 144 B and 80 B rows. */
    CHECK_INT(l.total_bytes, 64 * 144 + 2 * 64 * 80);

    c = cfg("bm128-bn128-bk64-w8-s3-u1-cp1-sw0-h1");
    fattn_layout_init(&l, &c, 128);
    /* Q: 128 x (256 + 16); K/V: 128 x (128 + 16), three stages. */
    CHECK_INT(l.total_bytes, 128 * 272 + 3 * 128 * 144);
    CHECK_INT(l.total_bytes, 90112);

    c = cfg("bm64-bn64-bk32-w4-s1-u1-cp1-sw0-h1-pad2");
    fattn_layout_init(&l, &c, 64);
    /* The seeds' layout: 64 halves + one half of pad = 130 B rows. */
    CHECK_INT(l.q.row_bytes, 130);
    CHECK_INT(l.kv.row_bytes, 66);
    CHECK_INT(l.total_bytes, 64 * 130 + 64 * 66);
}

static void swizzle_by_hand(void)
{
    fattn_layout l;
    fattn_config c = cfg("bm64-bn64-bk16-w4-s2-u1-cp1-sw1-h1");
    fattn_layout_init(&l, &c, 64);
    /* Q rows of 8 chunks: chunk 1 of row 3 lands in chunk 1^3 = 2. */
    CHECK_INT(fattn_layout_offset(&l, &l.q, 3, 16), 3 * 128 + 2 * 16);
    /* K/V rows of 2 chunks (32 B): 4 rows share a 128 B line, key (5/4)%2 = 1. */
    CHECK_INT(fattn_layout_offset(&l, &l.kv, 5, 0), 5 * 32 + 16);
    CHECK_INT(fattn_layout_offset(&l, &l.kv, 3, 0), 3 * 32);
    /* Bytes inside a chunk keep their place. */
    CHECK_INT(fattn_layout_offset(&l, &l.kv, 5, 6), 5 * 32 + 16 + 6);

    c = cfg("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1");
    fattn_layout_init(&l, &c, 128);
    /* K/V rows of 4 chunks: key (7/2)%4 = 3, chunk 2^3 = 1. */
    CHECK_INT(fattn_layout_offset(&l, &l.kv, 7, 32), 7 * 64 + 16);
    /* Q rows of 16 chunks (D=128): key 9%8 = 1, chunk 12^1 = 13. */
    CHECK_INT(fattn_layout_offset(&l, &l.q, 9, 12 * 16), 9 * 256 + 13 * 16);
}

static void copy_units(void)
{
    fattn_layout l;
    unsigned row, byte;
    fattn_config c = cfg("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1");
    fattn_layout_init(&l, &c, 64);
    /* 16-byte units, 8 per 128-byte Q row: unit 9 is row 1, byte 16. */
    fattn_layout_unit(&l, &l.q, 16, 9, &row, &byte);
    CHECK(row == 1 && byte == 16);
    c = cfg("bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1-cm1");
    fattn_layout_init(&l, &c, 64);
    /* Column-major: unit 9 is row 9, byte 0; unit 70 is row 6, byte 16. */
    fattn_layout_unit(&l, &l.q, 16, 9, &row, &byte);
    CHECK(row == 9 && byte == 0);
    fattn_layout_unit(&l, &l.q, 16, 70, &row, &byte);
    CHECK(row == 6 && byte == 16);
}

/* Every tile byte of every configuration of the default space (and of pads
 * 0, 2 and 32): the model and the kernel's functions agree. */
static void model_equals_kernel(void)
{
    fattn_space sp;
    if (fattn_space_load(fattn_default_space_path(), &sp))
        exit(T_HARNESS);
    static const int pads[] = {16, 0, 2, 32};
    long compared = 0, differ = 0;
    for (size_t i = 0; i < sp.count; ++i) {
        fattn_config c;
        fattn_space_config(&sp, i, &c);
        if (c.v[FATTN_P_BLOCK_M] % (16 * c.v[FATTN_P_NUM_WARPS]))
            continue;
        for (int d = 64; d <= 128; d += 64)
            for (size_t p = 0; p < sizeof pads / sizeof pads[0]; ++p) {
                fattn_layout l;
                c.v[FATTN_P_PAD_BYTES] = pads[p];
                fattn_layout_init(&l, &c, d);
                const fattn_tile_desc *tiles[2] = {&l.q, &l.kv};
                for (int t = 0; t < 2; ++t) {
                    CHECK_INT(tiles[t]->row_bytes, fattn_tile_row_bytes(tiles[t]->chunks, l.swizzle, l.pad_bytes));
                    for (unsigned r = 0; r < tiles[t]->rows; ++r)
                        for (unsigned b = 0; b < tiles[t]->chunks * 16; b += 2) {
                            ++compared;
                            differ += fattn_layout_offset(&l, tiles[t], r, b)
                                      != fattn_tile_offset(r, b, tiles[t]->chunks, l.swizzle, l.pad_bytes);
                        }
                }
            }
    }
    CHECK(compared > 1000000);
    CHECK_INT(differ, 0);
    fattn_space_release(&sp);
}

/* No two logical bytes of a tile share a physical byte, and every physical
 * byte lies inside the tile. */
static void mma_launch(void)
{
    /* The mma family's launch: a block per BLOCK_M rows of a head, SPLIT_KV
     * of them a cluster, NUM_WARPS warps, the layout's shared memory. */
    fattn_launch l;
    fattn_shape s = {3, 5, 200, 64, 0};
    fattn_config c = cfg("bm64-bn64-bk32-w4-s2-u1-cp0-sw1-h1-kv2");
    fattn_family_mma.launch(&c, &s, 132, &l);
    CHECK_INT(l.grid[0], 4 * 2); /* ceil(200 / 64) row blocks x 2 */
    CHECK_INT(l.grid[1], 5);
    CHECK_INT(l.grid[2], 3);
    CHECK_INT(l.threads, 128);
    CHECK_INT(l.cluster, 2);
    fattn_layout lay;
    fattn_layout_init(&lay, &c, 64);
    CHECK_INT(l.smem, lay.total_bytes); /* the partials' region included */
    CHECK(l.smem > 8192 + 2 * 4096);
    CHECK(!l.async_copies && !l.one_block_per_sm);
    c = cfg("bm64-bn64-bk32-w4-s2-u1-cp0-sw1-h1");
    fattn_family_mma.launch(&c, &s, 132, &l);
    CHECK_INT(l.smem, 8192 + 2 * 4096);
    CHECK_INT(l.grid[0], 4);
    c = cfg("bm128-bn32-bk16-w8-s3-u1-cp1-sw1-h1");
    fattn_family_mma.launch(&c, &s, 0, &l);
    CHECK_INT(l.grid[0], 2);
    CHECK_INT(l.threads, 256);
    CHECK_INT(l.cluster, 1);
    CHECK(l.async_copies);
    CHECK_CONTAINS(l.async_why, "CP_ASYNC=1");
}

static void swizzle_is_a_permutation(void)
{
    static const unsigned chunk_counts[] = {2, 4, 8, 16};
    for (size_t k = 0; k < 4; ++k) {
        unsigned chunks = chunk_counts[k], rows = 64, row_bytes = chunks * 16;
        unsigned char *seen = calloc(rows * row_bytes, 1);
        int ok = 1;
        for (unsigned r = 0; r < rows; ++r)
            for (unsigned b = 0; b < row_bytes; ++b) {
                unsigned off = fattn_tile_offset(r, b, chunks, 1, 0);
                ok &= off < rows * row_bytes && off / row_bytes == r && !seen[off];
                if (off < rows * row_bytes)
                    seen[off] = 1;
            }
        CHECK(ok);
        free(seen);
    }
}

int main(void)
{
    T_RUN(sizes_by_hand);
    T_RUN(swizzle_by_hand);
    T_RUN(copy_units);
    T_RUN(model_equals_kernel);
    T_RUN(swizzle_is_a_permutation);
    T_RUN(mma_launch);
    return t_exit();
}
