/*
 * tma.h - a TMA tile load on the host: cp.async.bulk.tensor from global
 * memory into shared memory as the PTX ISA and the tensor map lay it out.
 *
 * The map is the host-side description it was encoded from (gpu/tmap.h);
 * its base is a host address here. The asynchronous side (completion on an
 * mbarrier with complete_tx::bytes, when the bytes become visible) belongs
 * to the launch; one call writes the whole box.
 */
#ifndef FATTN_SIM_TMA_H
#define FATTN_SIM_TMA_H

#include <stdint.h>

#include "gpu/tmap.h"
#include "sim/warp.h"

/* Loads the box of m whose first element sits at coord (elements,
 * innermost first; signed) into shared memory at dst. Elements outside the
 * tensor arrive as zero. The box lies in shared memory with its innermost
 * dimension contiguous, each row of box[0] elements one after the other;
 * a swizzled map (inner box bytes equal to the swizzle span, the only
 * swizzled boxes the simulator takes) permutes the 16-byte chunks of each
 * row by the row's index within the 8-row repeat. Returns the bytes the box
 * moved (all of it, zero-filled part included: what complete_tx counts), or
 * -1 with *f when dst is not aligned (128 bytes; the 8-row repeat for a
 * swizzled map), the box runs past shared memory, or the map is one the
 * simulator does not take (a swizzled inner box narrower than the span). */
long fattn_sim_tma_load(const fattn_sim_smem *s, uint32_t dst, const fattn_tmap *m, const int32_t *coord,
                        fattn_sim_fault *f);

/* The checks of a load or store with its box at shared addr, without moving
 * anything: the box's bytes, or -1 with *f. */
long fattn_sim_tma_check(const fattn_sim_smem *s, uint32_t addr, const fattn_tmap *m, fattn_sim_fault *f);

/* The TMA store: the box at shared src (laid out as a load would leave it)
 * into the tensor at coord; elements outside the tensor are not written.
 * Returns the box's bytes, or -1 with *f as a load. */
long fattn_sim_tma_store(const fattn_sim_smem *s, uint32_t src, const fattn_tmap *m, const int32_t *coord,
                         fattn_sim_fault *f);

/* 1 when the box at coord has at least one element inside the tensor. */
int fattn_sim_tma_box_inside(const fattn_tmap *m, const int32_t *coord);

/* Counts a store of the box at coord in counts (one byte per element of
 * the tensor at m->base, saturating): returns the byte offset of the first
 * element inside the tensor that a store had written before, or -1. */
int64_t fattn_sim_tma_count_stores(const fattn_tmap *m, const int32_t *coord, uint8_t *counts);

#endif
