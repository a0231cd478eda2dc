/*
 * tma.c - cp.async.bulk.tensor tile loads, as the PTX ISA ("Tensor Copy
 * Swizzling Modes", "Bounding Box" under "Tensor Data") defines them.
 */
#include "sim/tma.h"

#include <string.h>

#include "sim/gmma.h"

long fattn_sim_tma_load(const fattn_sim_smem *s, uint32_t dst, const fattn_tmap *m, const int32_t *coord,
                        fattn_sim_fault *f)
{
    memset(f, 0, sizeof *f);
    /* CU_TENSOR_MAP_SWIZZLE_NONE, _32B, _64B, _128B are 0-3: the swizzle's
     * bits; the 128B_ATOM_* modes past them are not modelled. */
    const unsigned b = (unsigned)m->swizzle, row = 2u * m->box[0];
    if (m->swizzle > CU_TENSOR_MAP_SWIZZLE_128B || (b && row != 16u << b))
        return fattn_sim_fault_set(f, FATTN_SIM_BAD_OPERAND, -1, dst, row);
    const uint32_t align = b ? 8u * row : 128u;
    if (dst % align)
        return fattn_sim_fault_set(f, FATTN_SIM_MISALIGNED, -1, dst, align);
    const uint64_t bytes = fattn_tmap_box_bytes(m);
    if ((uint64_t)dst + bytes > s->size)
        return fattn_sim_fault_set(f, FATTN_SIM_OUT_OF_BOUNDS, -1, dst, (unsigned)bytes);
    uint32_t idx[FATTN_TMAP_MAX_RANK] = {0};
    const uint8_t *base = m->base;
    for (uint64_t e = 0; e < bytes / 2; ++e) {
        /* idx: the element's position in the box, innermost fastest. */
        int inside = 1;
        uint64_t src = 0;
        for (unsigned d = 0; d < m->rank; ++d) {
            int64_t c = (int64_t)coord[d] + idx[d];
            inside &= c >= 0 && (uint64_t)c < m->dim[d];
            src += (uint64_t)c * (d ? m->stride[d - 1] : 2u);
        }
        uint16_t v = 0;
        if (inside)
            memcpy(&v, base + src, 2);
        memcpy(s->base + fattn_sim_swizzle(dst + (uint32_t)(2 * e), b), &v, 2);
        for (unsigned d = 0; d < m->rank && ++idx[d] == m->box[d]; ++d)
            idx[d] = 0;
    }
    return (long)bytes;
}
