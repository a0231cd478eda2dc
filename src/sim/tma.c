/*
 * tma.c - cp.async.bulk.tensor tile loads, as the PTX ISA ("Tensor Copy
 * Swizzling Modes", "Bounding Box" under "Tensor Data") defines them.
 */
#include "sim/tma.h"

#include <string.h>

#include "sim/gmma.h"

long fattn_sim_tma_check(const fattn_sim_smem *s, uint32_t addr, const fattn_tmap *m, fattn_sim_fault *f)
{
    memset(f, 0, sizeof *f);
    /* CU_TENSOR_MAP_SWIZZLE_NONE, _32B, _64B, _128B are 0-3: the swizzle's
     * bits; the 128B_ATOM_* modes past them are not modelled. */
    const unsigned b = (unsigned)m->swizzle, row = 2u * m->box[0];
    if (m->swizzle > CU_TENSOR_MAP_SWIZZLE_128B || (b && row != 16u << b))
        return fattn_sim_fault_set(f, FATTN_SIM_BAD_OPERAND, -1, addr, row);
    const uint32_t align = b ? 8u * row : 128u;
    if (addr % align)
        return fattn_sim_fault_set(f, FATTN_SIM_MISALIGNED, -1, addr, align);
    const uint64_t bytes = fattn_tmap_box_bytes(m);
    if ((uint64_t)addr + bytes > s->size)
        return fattn_sim_fault_set(f, FATTN_SIM_OUT_OF_BOUNDS, -1, addr, (unsigned)bytes);
    return (long)bytes;
}

/* Calls back for every element of the box at coord: its byte offset in the
 * box as it lies in shared memory at `at` (swizzled), and in the tensor, or
 * -1 outside it. */
static void walk(uint32_t at, const fattn_tmap *m, const int32_t *coord,
                 void (*fn)(void *ctx, uint32_t smem, int64_t global), void *ctx)
{
    const uint64_t elems = fattn_tmap_box_bytes(m) / 2;
    uint32_t idx[FATTN_TMAP_MAX_RANK] = {0};
    for (uint64_t e = 0; e < elems; ++e) {
        /* idx: the element's position in the box, innermost fastest. */
        int inside = 1;
        uint64_t src = 0;
        for (unsigned d = 0; d < m->rank; ++d) {
            int64_t c = (int64_t)coord[d] + idx[d];
            inside &= c >= 0 && (uint64_t)c < m->dim[d];
            src += (uint64_t)c * (d ? m->stride[d - 1] : 2u);
        }
        fn(ctx, fattn_sim_swizzle(at + (uint32_t)(2 * e), (unsigned)m->swizzle), inside ? (int64_t)src : -1);
        for (unsigned d = 0; d < m->rank && ++idx[d] == m->box[d]; ++d)
            idx[d] = 0;
    }
}

typedef struct copy_ctx {
    uint8_t *smem;
    uint8_t *global;
} copy_ctx;

static void load_one(void *ctx, uint32_t smem, int64_t global)
{
    copy_ctx *c = ctx;
    uint16_t v = 0;
    if (global >= 0)
        memcpy(&v, c->global + global, 2);
    memcpy(c->smem + smem, &v, 2);
}

static void store_one(void *ctx, uint32_t smem, int64_t global)
{
    copy_ctx *c = ctx;
    if (global >= 0)
        memcpy(c->global + global, c->smem + smem, 2);
}

long fattn_sim_tma_load(const fattn_sim_smem *s, uint32_t dst, const fattn_tmap *m, const int32_t *coord,
                        fattn_sim_fault *f)
{
    const long bytes = fattn_sim_tma_check(s, dst, m, f);
    if (bytes >= 0) {
        copy_ctx c = {s->base, (uint8_t *)(uintptr_t)m->base};
        walk(dst, m, coord, load_one, &c);
    }
    return bytes;
}

long fattn_sim_tma_store(const fattn_sim_smem *s, uint32_t src, const fattn_tmap *m, const int32_t *coord,
                         fattn_sim_fault *f)
{
    const long bytes = fattn_sim_tma_check(s, src, m, f);
    if (bytes >= 0) {
        copy_ctx c = {s->base, (uint8_t *)(uintptr_t)m->base};
        walk(src, m, coord, store_one, &c);
    }
    return bytes;
}

typedef struct count_ctx {
    uint8_t *counts;
    int64_t again;
} count_ctx;

static void count_one(void *ctx, uint32_t smem, int64_t global)
{
    count_ctx *c = ctx;
    (void)smem;
    if (global < 0)
        return;
    uint8_t *n = &c->counts[global / 2];
    if (*n && c->again < 0)
        c->again = global;
    if (*n < UINT8_MAX)
        ++*n;
}

int64_t fattn_sim_tma_count_stores(const fattn_tmap *m, const int32_t *coord, uint8_t *counts)
{
    count_ctx c = {counts, -1};
    walk(0, m, coord, count_one, &c);
    return c.again;
}

int fattn_sim_tma_box_inside(const fattn_tmap *m, const int32_t *coord)
{
    for (unsigned d = 0; d < m->rank; ++d)
        if ((int64_t)coord[d] + m->box[d] <= 0 || (int64_t)coord[d] >= (int64_t)m->dim[d])
            return 0;
    return 1;
}
