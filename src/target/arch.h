/*
 * arch.h - the GPU architectures fattn-tune targets and their per-SM limits.
 *
 * The numbers are those of ../shared/context/FACTS.md (the programming guide,
 * cuda_occupancy.h, and for sm_90 read off an H100). They drive the
 * occupancy model, the shared-memory limit and NVRTC's --gpu-architecture.
 */
#ifndef FATTN_TARGET_ARCH_H
#define FATTN_TARGET_ARCH_H

typedef struct fattn_arch {
    const char *name; /* "sm_90" */
    int sm;           /* 90 */
    int max_threads_per_sm;
    int max_warps_per_sm;
    int max_blocks_per_sm;
    int max_threads_per_block;
    int regs_per_sm;
    int regs_per_block;
    int max_regs_per_thread;
    int reg_alloc_unit;          /* registers, allocated per warp */
    int sub_partitions;          /* register file partitions per SM */
    int smem_per_sm;             /* bytes, the largest carveout */
    int smem_per_block;          /* bytes without opt-in: 48 KiB */
    int smem_per_block_optin;    /* bytes, the opt-in maximum */
    int smem_reserved_per_block; /* bytes the driver reserves per block */
    int smem_alloc_unit;         /* bytes */
    /* Thread-block clusters (sm_90+): the portable maximum of blocks in one
     * cluster (1: no clusters), and the SMs of the smallest GPC, over which
     * the hardware co-schedules a cluster's blocks (all at once, on one GPC). */
    int max_cluster_size;
    int gpc_sms;
} fattn_arch;

/* The known architectures, NULL-terminated, in ascending order. */
extern const fattn_arch *const fattn_archs[];

/* The architecture named `name` ("sm_89"), or NULL. */
const fattn_arch *fattn_arch_find(const char *name);

/* The architecture of compute capability major.minor (the portable one:
 * sm_90, not sm_90a), or NULL. */
const fattn_arch *fattn_arch_from_cc(int major, int minor);

/* "sm_80|sm_86|sm_89|sm_90|sm_90a" */
const char *fattn_arch_choices(void);

#endif
