/*
 * fattn_gmma.h - the shared-memory matrix descriptor of wgmma.mma_async, one
 * encoder for the kernels, the host and the tests.
 *
 * PTX ISA, "Asynchronous Warpgroup Level Matrix Shared Memory Layout",
 * "Matrix Descriptor Format": a 64-bit value holding
 *   bits  0-13  matrix start address,               (addr & 0x3FFFF) >> 4
 *   bits 16-29  leading dimension byte offset (LBO), (off & 0x3FFFF) >> 4
 *   bits 32-45  stride dimension byte offset (SBO),  (off & 0x3FFFF) >> 4
 *   bits 49-51  matrix base offset (0 when the start sits at the swizzle
 *               pattern's repeat, which every tile here does)
 *   bits 62-63  swizzle mode: 0 none, 1 128-byte, 2 64-byte, 3 32-byte.
 * The simulator reads a descriptor with its own decoder (src/sim/gmma.c), so
 * a mistake here shows there as a mismatch instead of being shared.
 *
 * The tiles are CuTe's canonical GMMA layouts (cute/atom/
 * mma_traits_sm90_gmma.hpp, Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom), an
 * atom repeated over the tile first along MN, then along K (tile_to_shape's
 * order). In 16-byte units, with W = 1, 2, 4, 8 units a swizzle row for
 * none, 32, 64 and 128 bytes, the ISA's canonical layouts of one 16-deep K
 * slice are
 *   K-major   none  ((8,m),2):((1,SBO),LBO)     swizzled ((8,m),2):((W,SBO),1)
 *   MN-major  none  ((1,m),(8,2)):((-,SBO),(1,LBO))
 *             swizzled ((W,m),(8,2)):((1,LBO),(W,SBO))
 * (an element's bytes then XOR bits [4, 4 + log2 W) with bits [7, 7 + log2 W)),
 * so for a tile of MN rows (a multiple of the atom's):
 *   K-major   none: SBO = 128 (the next 8 rows), LBO = MN * 16 (the next 8
 *             columns of K); swizzled: SBO = 8 * 16W (the next 8 rows), LBO
 *             unused (1 unit, as CUTLASS writes it);
 *   MN-major  none: SBO = 128 (the next 8 of MN), LBO = MN * 16 (the next 8
 *             of K); swizzled: LBO = 8 * 16W (the next 8W of MN), SBO =
 *             MN / (8W) * 8 * 16W (the next 8 of K).
 * Plain C and C++ (NVRTC, the host build of a kernel, the tests).
 */
#ifndef FATTN_KERNELS_FATTN_GMMA_H
#define FATTN_KERNELS_FATTN_GMMA_H

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FATTN_GMMA_FN __host__ __device__ __forceinline__
#else
#define FATTN_GMMA_FN static inline
#endif
typedef unsigned long long fattn_gmma_u64;

/* Swizzle modes, as the descriptor's bits 62-63 hold them. */
#define FATTN_GMMA_NONE  0
#define FATTN_GMMA_SW128 1
#define FATTN_GMMA_SW64  2
#define FATTN_GMMA_SW32  3

/* Bytes of one swizzle row (16 for none: a core matrix row). */
FATTN_GMMA_FN unsigned fattn_gmma_row_bytes(unsigned mode)
{
    return mode == FATTN_GMMA_SW128 ? 128u : mode == FATTN_GMMA_SW64 ? 64u : mode == FATTN_GMMA_SW32 ? 32u : 16u;
}

/* The alignment a tile needs so that its base offset is 0: the pattern's
 * repeat, 8 rows (128 bytes for none: one core matrix). */
FATTN_GMMA_FN unsigned fattn_gmma_repeat_bytes(unsigned mode)
{
    return 8u * fattn_gmma_row_bytes(mode);
}

/* The descriptor of a matrix at shared::cta address `addr`, offsets in bytes. */
FATTN_GMMA_FN fattn_gmma_u64 fattn_gmma_desc(unsigned addr, unsigned lbo, unsigned sbo, unsigned mode)
{
    return (fattn_gmma_u64)((addr & 0x3FFFFu) >> 4) | (fattn_gmma_u64)((lbo & 0x3FFFFu) >> 4) << 16
           | (fattn_gmma_u64)((sbo & 0x3FFFFu) >> 4) << 32 | (fattn_gmma_u64)(mode & 3u) << 62;
}

/* `desc` moved `bytes` on (a multiple of 16): its start address advanced.
 * The same as encoding the moved address while it stays inside the 18-bit
 * window of shared memory, which every layout a launch holds does (227 KiB
 * at most): a kernel builds a tile's descriptor once and advances it by
 * constants (no address arithmetic per wgmma). */
FATTN_GMMA_FN fattn_gmma_u64 fattn_gmma_desc_advance(fattn_gmma_u64 desc, unsigned bytes)
{
    return desc + (bytes >> 4);
}

/* The descriptor of the 16-deep K slice starting at `addr` of a canonical
 * K-major tile of `mn` rows. */
FATTN_GMMA_FN fattn_gmma_u64 fattn_gmma_desc_k(unsigned addr, unsigned mn, unsigned mode)
{
    if (mode == FATTN_GMMA_NONE)
        return fattn_gmma_desc(addr, mn * 16u, 128u, mode);
    return fattn_gmma_desc(addr, 16u, 8u * fattn_gmma_row_bytes(mode), mode);
}

/* Likewise for a canonical MN-major tile of `mn` columns (MN contiguous). */
FATTN_GMMA_FN fattn_gmma_u64 fattn_gmma_desc_mn(unsigned addr, unsigned mn, unsigned mode)
{
    if (mode == FATTN_GMMA_NONE)
        return fattn_gmma_desc(addr, mn * 16u, 128u, mode);
    const unsigned row = fattn_gmma_row_bytes(mode), atom = 8u * row;
    return fattn_gmma_desc(addr, atom, mn / (row / 2u) * atom, mode);
}

/* The descriptor of the 16-deep K slice starting at `addr` of an MN-major
 * tile stored as TMA boxes: for each span of one swizzle row of MN (8
 * elements without swizzle), all k_rows rows of K one after the other, the
 * spans one after another (V loaded in boxes of 64 columns by k_rows rows).
 * Without swizzle the next 8 of K are 128 bytes on (LBO) and the next 8 of
 * MN a box on (SBO); swizzled the next span of MN is a box on (LBO) and the
 * next 8 of K 8 rows on (SBO). Slice k starts k rows into the tile. */
FATTN_GMMA_FN fattn_gmma_u64 fattn_gmma_desc_mn_boxes(unsigned addr, unsigned k_rows, unsigned mode)
{
    const unsigned row = fattn_gmma_row_bytes(mode);
    if (mode == FATTN_GMMA_NONE)
        return fattn_gmma_desc(addr, 128u, k_rows * 16u, mode);
    return fattn_gmma_desc(addr, k_rows * row, 8u * row, mode);
}

/* The byte offset, in a canonical tile of `mn` rows (K-major) or columns
 * (MN-major), of the K slice that starts at column k (a multiple of 16):
 * where its descriptor starts. */
FATTN_GMMA_FN unsigned fattn_gmma_k_offset(int mn_major, unsigned mn, unsigned k, unsigned mode)
{
    const unsigned row = fattn_gmma_row_bytes(mode);
    if (mode == FATTN_GMMA_NONE) /* core matrices of 8 along K, MN / 8 of them a column */
        return k / 8u * mn * 16u;
    if (mn_major) /* 8 rows of K are one atom deep; atoms stack along MN first */
        return k / 8u * (mn / (row / 2u)) * 8u * row;
    /* K-major: a row holds row / 2 halves; the next ones are the next column of atoms */
    return k / (row / 2u) * (mn / 8u) * 8u * row + k % (row / 2u) * 2u;
}

#endif
