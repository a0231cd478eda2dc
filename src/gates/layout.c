/*
 * layout.c - the shared-memory layout model.
 */
#include "gates/layout.h"

void fattn_layout_init(fattn_layout *l, const fattn_config *c, int head_dim)
{
    const int *v = c->v;
    l->head_dim = (unsigned)head_dim;
    l->warps = (unsigned)v[FATTN_P_NUM_WARPS];
    l->threads = 32u * l->warps;
    l->rows_per_warp = (unsigned)(v[FATTN_P_BLOCK_M] / v[FATTN_P_NUM_WARPS]);
    l->m_tiles = l->rows_per_warp / 16u;
    l->chunks_per_tile = (unsigned)(head_dim / v[FATTN_P_BLOCK_K]);
    l->swizzle = (unsigned)v[FATTN_P_SWIZZLE];
    l->pad_bytes = (unsigned)v[FATTN_P_PAD_BYTES];
    l->colmajor = (unsigned)v[FATTN_P_COPY_COLMAJOR];
    l->cp_async = (unsigned)v[FATTN_P_CP_ASYNC];
    l->load_bytes = v[FATTN_P_HALF2] ? 16u : v[FATTN_P_CP_ASYNC] ? 4u : 2u;
    l->store_bytes = v[FATTN_P_HALF2] ? 16u : 2u;
    l->stages = (unsigned)v[FATTN_P_STAGES];

    const unsigned pad = l->swizzle ? 0u : l->pad_bytes;
    l->q.rows = (unsigned)v[FATTN_P_BLOCK_M];
    l->q.chunks = (unsigned)head_dim * 2u / 16u;
    l->q.row_bytes = l->q.chunks * 16u + pad;
    l->q.bytes = l->q.rows * l->q.row_bytes;
    l->kv.rows = (unsigned)v[FATTN_P_BLOCK_N];
    l->kv.chunks = (unsigned)v[FATTN_P_BLOCK_K] * 2u / 16u;
    l->kv.row_bytes = l->kv.chunks * 16u + pad;
    l->kv.bytes = l->kv.rows * l->kv.row_bytes;
    l->kv_base = l->q.bytes;
    l->loop_bytes = l->q.bytes + l->stages * l->kv.bytes;
    l->split_kv = (unsigned)v[FATTN_P_SPLIT_KV];
    l->part_row_bytes = l->split_kv > 1 ? (unsigned)head_dim * 4u + FATTN_PART_ROW_PAD : 0u;
    l->part_bytes = l->split_kv > 1 ? l->q.rows * (l->part_row_bytes + 8u) : 0u;
    l->total_bytes = l->loop_bytes > l->part_bytes ? l->loop_bytes : l->part_bytes;
}

unsigned fattn_layout_offset(const fattn_layout *l, const fattn_tile_desc *t, unsigned row, unsigned byte_in_row)
{
    unsigned chunk = byte_in_row >> 4;
    if (l->swizzle) {
        /* A 128-byte bank line holds 8 chunks: lines of narrow rows hold
         * 8 / chunks rows, and the row's line index (mod the chunks it can
         * permute) is the XOR key. */
        unsigned per_line = t->chunks >= 8 ? 1u : 8u / t->chunks;
        unsigned key = (row / per_line) & ((t->chunks >= 8 ? 8u : t->chunks) - 1u);
        chunk ^= key;
    }
    return row * t->row_bytes + (chunk << 4) + (byte_in_row & 15u);
}

void fattn_layout_unit(const fattn_layout *l, const fattn_tile_desc *t, unsigned vec, unsigned u, unsigned *row,
                       unsigned *byte_in_row)
{
    unsigned per_row = t->chunks * 16u / vec;
    if (l->colmajor) {
        *row = u % t->rows;
        *byte_in_row = (u / t->rows) * vec;
    } else {
        *row = u / per_row;
        *byte_in_row = (u % per_row) * vec;
    }
}
