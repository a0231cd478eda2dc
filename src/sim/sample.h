/*
 * sample.h - the covering sample the simulator checks a kernel change on:
 * configurations of a space with the shapes to run them at, such that every
 * value of every parameter the space lists meets every value of every other
 * parameter, of the head dimension (64, 128), of the mask (causal or not),
 * of the sequence length (1, 33, 130, 257: one row, a partial tile, several
 * tiles with a tail, enough tiles for clusters of 8 with BLOCK_N = 32) and
 * of the batch-head split ((1, 2), (2, 1)) in at least one case (pairwise), wherever a kernel can hold the pair at all (the tiling
 * gate: whole 16-row strips per warp, a cluster no larger than the key
 * tiles, ...).
 */
#ifndef FATTN_SIM_SAMPLE_H
#define FATTN_SIM_SAMPLE_H

#include <stddef.h>

#include "space/space.h"
#include "target/arch.h"
#include "target/shape.h"

typedef struct fattn_sim_case {
    fattn_config cfg;
    fattn_shape shape;
} fattn_sim_case;

/* The pairwise covering cases of `space` for `arch`; *out (free it) gets
 * *n of them, *npairs (may be NULL) the pairs they cover. Returns 0, or
 * FATTN_EFAIL (reported) when memory runs out. */
int fattn_sim_covering(const fattn_space *space, const fattn_arch *arch, fattn_sim_case **out, size_t *n,
                       size_t *npairs);

#endif
