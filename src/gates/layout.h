/*
 * layout.h - the C model of the kernel's shared-memory layout and thread
 * mapping, computed from a configuration and a head dimension.
 *
 * This is fattn-tune's own account of kernels/fattn_fwd.cu, written
 * independently of it: the gates reason about this model, the compile step
 * checks its size against the size the compiled kernel exports, and the unit
 * tests check its addressing against kernels/fattn_tile.h.
 *
 * Layout: the Q/O tile (BLOCK_M rows of D halves) at offset 0, then STAGES
 * K/V slots (BLOCK_N rows of BLOCK_K halves). A row of c 16-byte chunks is
 * 16c bytes when swizzled, 16c + PAD_BYTES otherwise. With SPLIT_KV > 1 the
 * key loop's region is reused, once the loop is done, for the partial
 * results the cluster combines: BLOCK_M rows of D fp32 accumulators, each
 * row padded by 32 bytes (eight banks: a half-warp's 8-byte stores to four
 * rows fall on distinct banks), then BLOCK_M row maxima and BLOCK_M row sums
 * (fp32); the block needs the larger of the two regions.
 */
#ifndef FATTN_GATES_LAYOUT_H
#define FATTN_GATES_LAYOUT_H

#define FATTN_PART_ROW_PAD 32u /* bytes after each row of fp32 partial O */

#include "space/params.h"

typedef struct fattn_tile_desc {
    unsigned rows;
    unsigned chunks;    /* 16-byte chunks of data per row */
    unsigned row_bytes; /* including the pad */
    unsigned bytes;     /* rows * row_bytes */
} fattn_tile_desc;

typedef struct fattn_layout {
    unsigned head_dim;
    unsigned threads;
    unsigned warps;
    unsigned rows_per_warp;   /* BLOCK_M / NUM_WARPS */
    unsigned m_tiles;         /* 16-row strips per warp */
    unsigned chunks_per_tile; /* D / BLOCK_K: K (and V) chunks per key/value tile */
    unsigned swizzle, pad_bytes, colmajor, cp_async;
    unsigned load_bytes;  /* width of one global->shared copy */
    unsigned store_bytes; /* width of one shared->global copy of O */
    fattn_tile_desc q;    /* Q/O tile */
    fattn_tile_desc kv;   /* one K/V slot */
    unsigned kv_base;     /* offset of slot 0 */
    unsigned stages;
    unsigned split_kv;       /* blocks per cluster sharing a row block's keys */
    unsigned loop_bytes;     /* Q/O tile and K/V ring */
    unsigned part_row_bytes; /* one row of fp32 partial O, padded (SPLIT_KV > 1) */
    unsigned part_bytes;     /* the partials the cluster combines; 0 without a split */
    unsigned total_bytes;    /* dynamic shared memory of one block */
} fattn_layout;

/* Fills the model. Assumes the tiling gate holds (dimensions divide). */
void fattn_layout_init(fattn_layout *l, const fattn_config *c, int head_dim);

/* Byte offset, from a tile's base, of byte `byte_in_row` of logical row `row`. */
unsigned fattn_layout_offset(const fattn_layout *l, const fattn_tile_desc *t, unsigned row, unsigned byte_in_row);

/* Copy unit `u` of a tile cut into `vec`-byte units: its row and byte in the
 * row (the kernel's Tile<>::unit()). */
void fattn_layout_unit(const fattn_layout *l, const fattn_tile_desc *t, unsigned vec, unsigned u, unsigned *row,
                       unsigned *byte_in_row);

#endif
