/*
 * occupancy.h - resident blocks and warps per SM, from the per-arch limits.
 *
 * The same four limits as the CUDA occupancy calculator (cuda_occupancy.h):
 *  - warps:  max_warps_per_sm / warps per block;
 *  - regs:   registers are allocated per warp in units of reg_alloc_unit,
 *            from each of the sub_partitions register files separately:
 *            floor(regs_per_sm / sub_partitions / regs_per_warp) warps per
 *            partition, times sub_partitions, over warps per block;
 *  - smem:   static + dynamic + the driver's reserved bytes, rounded up to
 *            smem_alloc_unit, into smem_per_sm (0 blocks when one block
 *            exceeds its limit: 48 KiB, or the opt-in maximum when the
 *            kernel's dynamic size was raised past 48 KiB);
 *  - blocks: max_blocks_per_sm.
 * Occupancy is active warps over max_warps_per_sm.
 */
#ifndef FATTN_GATES_OCCUPANCY_H
#define FATTN_GATES_OCCUPANCY_H

#include "target/arch.h"

typedef struct fattn_occ_input {
    unsigned threads;      /* per block */
    unsigned regs;         /* per thread */
    unsigned smem_static;  /* bytes */
    unsigned smem_dynamic; /* bytes */
} fattn_occ_input;

enum fattn_occ_limiter { FATTN_OCC_WARPS, FATTN_OCC_REGS, FATTN_OCC_SMEM, FATTN_OCC_BLOCKS };

typedef struct fattn_occ_result {
    int blocks; /* resident blocks per SM */
    int by_warps, by_regs, by_smem, by_blocks;
    int limiter;             /* enum fattn_occ_limiter: the smallest limit */
    int warps;               /* active warps per SM */
    double occupancy;        /* warps / max_warps_per_sm */
    unsigned regs_per_warp;  /* allocated */
    unsigned smem_per_block; /* allocated, reserved bytes included */
} fattn_occ_result;

/* Computes the occupancy of a kernel; returns 0. */
int fattn_occupancy(const fattn_arch *a, const fattn_occ_input *in, fattn_occ_result *out);

/* Thread-block clusters: the hardware co-schedules a cluster's blocks all
 * at once on one GPC (cuOccupancyMaxActiveClusters semantics), so a cluster
 * launches only when it is within the portable size and its blocks fit in
 * the block slots of one GPC (blocks per SM x SMs of the GPC), and a GPC
 * holds whole clusters only: floor(slots / cluster) of them, the slots left
 * over stay idle. A cluster of 1 is a plain launch (it needs one block slot
 * per SM). */
typedef struct fattn_cluster_result {
    int launchable;       /* 0: the driver would refuse the launch */
    int slots_per_gpc;    /* blocks per SM x SMs of the smallest GPC */
    int clusters_per_gpc; /* whole clusters resident on that GPC */
    double blocks_per_sm; /* resident blocks per SM, clusters counted whole */
    double occupancy;     /* blocks_per_sm x warps per block / max_warps_per_sm */
} fattn_cluster_result;

/* The co-scheduling of clusters of `cluster` blocks of `warps` warps, when
 * `blocks_per_sm` blocks fit on an SM (fattn_occupancy). Returns 0. */
int fattn_cluster_occupancy(const fattn_arch *a, int blocks_per_sm, int warps, int cluster, fattn_cluster_result *out);

/* "registers", "shared memory", "warps", "blocks" */
const char *fattn_occ_limiter_name(int limiter);

#endif
