/*
 * fattn_tile.h - shared-memory tile addressing of the fattn kernel.
 *
 * Every shared-memory tile of the kernel (the Q/O tile and each K/V ring slot)
 * is a stack of rows made of 16-byte chunks. A row is either padded by
 * PAD_BYTES (SWIZZLE=0) or unpadded with its chunks XOR-swizzled (SWIZZLE=1),
 * so that the 8 rows one ldmatrix phase reads fall into 8 different 16-byte
 * bank groups. The kernel computes every shared-memory address through these
 * functions; the C gate model (src/gates/layout.c) is an independent
 * implementation that the unit tests compare against this file.
 *
 * This header is plain C as well as CUDA C++: tests include it in C.
 */
#ifndef FATTN_KERNELS_FATTN_TILE_H
#define FATTN_KERNELS_FATTN_TILE_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FATTN_TILE_FN static __host__ __device__ __forceinline__
#else
#define FATTN_TILE_FN static inline
#endif

/* Bytes of one row of `chunks` 16-byte chunks. */
FATTN_TILE_FN unsigned fattn_tile_row_bytes(unsigned chunks, unsigned swizzle, unsigned pad_bytes)
{
    return chunks * 16u + (swizzle ? 0u : pad_bytes);
}

/* Physical chunk of logical chunk `chunk` in row `row`. Rows narrower than 128
 * bytes share a 128-byte bank line with their neighbours, so the XOR key is
 * the row's index among the lines, wrapped to the number of chunks it can
 * permute (at most 8: one line). */
FATTN_TILE_FN unsigned fattn_tile_phys_chunk(unsigned row, unsigned chunk, unsigned chunks, unsigned swizzle)
{
    unsigned span, rows_per_line;
    if (!swizzle)
        return chunk;
    span = chunks < 8u ? chunks : 8u;
    rows_per_line = 8u / span;
    return chunk ^ ((row / rows_per_line) % span);
}

/* Byte offset, from the tile's base, of byte `byte_in_row` of logical row `row`. */
FATTN_TILE_FN unsigned fattn_tile_offset(unsigned row, unsigned byte_in_row, unsigned chunks,
                                         unsigned swizzle, unsigned pad_bytes)
{
    return row * fattn_tile_row_bytes(chunks, swizzle, pad_bytes)
         + fattn_tile_phys_chunk(row, byte_in_row / 16u, chunks, swizzle) * 16u
         + byte_in_row % 16u;
}

#endif
