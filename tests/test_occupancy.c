/*
 * test_occupancy.c - resident blocks per SM for a table of kernels on each
 * arch. The expected counts are worked out by hand in the comments from the
 * limits (registers, warps, shared memory, blocks); the CUDA toolkit's own
 * calculator (cuda_occupancy.h) is a second witness, not the expectation.
 */
#include "t.h"

#include <cuda_occupancy.h>

#include "gates/occupancy.h"

typedef struct row {
    const char *arch;
    unsigned threads, regs, smem_static, smem_dynamic;
    int blocks; /* worked out by hand */
    int limiter;
} row;

static const row rows[] = {
    /* sm_90: 64 warps, 32 blocks, 233472 B smem per SM, 16384 registers per
     * partition (4 partitions).
     * 4 warps x 128 regs: 4096 regs/warp, 4 warps per partition, 16 warps =
     * 4 blocks. smem (16384 + 1024) = 17408 B -> 13 blocks. warps: 16. */
    {"sm_90", 128, 128, 0, 16384, 4, FATTN_OCC_REGS},
    /* 8 warps x 64 regs: 2048/warp, 8 per partition, 32 warps = 4 blocks;
     * warps: 64/8 = 8. */
    {"sm_90", 256, 64, 0, 0, 4, FATTN_OCC_REGS},
    /* 2 warps x 32 regs: 64 warps = 32 blocks; smem 49152 + 1024 = 50176 B:
     * 233472 / 50176 = 4.65 -> 4. */
    {"sm_90", 64, 32, 0, 49152, 4, FATTN_OCC_SMEM},
    /* 1 warp x 16 regs: 512/warp, 32 per partition = 128 blocks; warps 64;
     * blocks per SM 32. */
    {"sm_90", 32, 16, 0, 0, 32, FATTN_OCC_BLOCKS},
    /* 32 warps x 65 regs: 2080 -> 2304 regs/warp; 2304 x 32 = 73728 > 65536
     * registers per block: cannot launch. */
    {"sm_90", 1024, 65, 0, 0, 0, FATTN_OCC_REGS},
    /* 100000 B dynamic (> 48 KiB, so the opt-in limit applies): 101024 B,
     * rounded to 128: 101120 -> 233472 / 101120 = 2.3 -> 2. */
    {"sm_90", 128, 32, 0, 100000, 2, FATTN_OCC_SMEM},
    /* Static shared memory counts too: 400 + 48000 + 1024 = 49424 -> 49536;
     * 233472 / 49536 = 4.7 -> 4. */
    {"sm_90", 128, 32, 400, 48000, 4, FATTN_OCC_SMEM},
    /* sm_89: 48 warps, 24 blocks, 102400 B.
     * 4 warps x 128 regs: 4 blocks by registers; warps 12; smem 102400 /
     * 17408 = 5.9 -> 5. */
    {"sm_89", 128, 128, 0, 16384, 4, FATTN_OCC_REGS},
    /* 8 warps x 32 regs: 1024/warp, 16 per partition, 64 warps = 8 blocks;
     * warps 48 / 8 = 6. */
    {"sm_89", 256, 32, 0, 0, 6, FATTN_OCC_WARPS},
    /* 1 warp x 8 regs: 256/warp, 64 per partition = 256 blocks; warps 48;
     * blocks 24. */
    {"sm_89", 32, 8, 0, 0, 24, FATTN_OCC_BLOCKS},
    /* 60000 B dynamic (opt-in): 61024 -> 61056; 102400 / 61056 = 1.7 -> 1. */
    {"sm_89", 128, 32, 0, 60000, 1, FATTN_OCC_SMEM},
    /* 101377 B > the 101376 B opt-in maximum: cannot launch. */
    {"sm_89", 128, 32, 0, 101377, 0, FATTN_OCC_SMEM},
    /* sm_86: 48 warps, 16 blocks, 102400 B.
     * 1 warp x 8 regs: blocks per SM 16. */
    {"sm_86", 32, 8, 0, 0, 16, FATTN_OCC_BLOCKS},
    /* 4 warps x 255 regs: 8160 -> 8192/warp, 2 per partition, 8 warps = 2
     * blocks. */
    {"sm_86", 128, 255, 0, 0, 2, FATTN_OCC_REGS},
    /* 2 warps x 64 regs and 24000 B: regs 2048/warp, 8 per partition, 32
     * warps = 16 blocks; warps 24; smem 25024 -> 25088, 102400 / 25088 = 4.08
     * -> 4. */
    {"sm_86", 64, 64, 0, 24000, 4, FATTN_OCC_SMEM},
    /* sm_80: 64 warps, 32 blocks, 167936 B.
     * 4 warps x 96 regs: 3072/warp, 5 per partition (16384/3072 = 5.3), 20
     * warps = 5 blocks; smem 40960 + 1024 = 41984 -> 167936 / 41984 = 4. */
    {"sm_80", 128, 96, 0, 40960, 4, FATTN_OCC_SMEM},
    /* 49153 B dynamic, opt-in: 50177 -> 50304; 167936 / 50304 = 3.3 -> 3. */
    {"sm_80", 128, 32, 0, 49153, 3, FATTN_OCC_SMEM},
    /* 200000 B > the 166912 B opt-in maximum. */
    {"sm_80", 128, 32, 0, 200000, 0, FATTN_OCC_SMEM},
    /* 8 warps x 128 regs: 4 per partition, 16 warps = 2 blocks. */
    {"sm_80", 256, 128, 0, 0, 2, FATTN_OCC_REGS},
};

/* The toolkit's calculator on the same kernel. */
static int toolkit_blocks(const fattn_arch *a, const row *r)
{
    cudaOccDeviceProp prop;
    cudaOccFuncAttributes attr;
    cudaOccDeviceState state;
    cudaOccResult result;
    memset(&prop, 0, sizeof prop);
    memset(&attr, 0, sizeof attr);
    memset(&state, 0, sizeof state);
    memset(&result, 0, sizeof result);
    prop.computeMajor = a->sm / 10;
    prop.computeMinor = a->sm % 10;
    prop.maxThreadsPerBlock = a->max_threads_per_block;
    prop.maxThreadsPerMultiprocessor = a->max_threads_per_sm;
    prop.regsPerBlock = a->regs_per_block;
    prop.regsPerMultiprocessor = a->regs_per_sm;
    prop.warpSize = 32;
    prop.sharedMemPerBlock = (size_t)a->smem_per_block;
    prop.sharedMemPerMultiprocessor = (size_t)a->smem_per_sm;
    prop.numSms = 1;
    prop.sharedMemPerBlockOptin = (size_t)a->smem_per_block_optin;
    prop.reservedSharedMemPerBlock = (size_t)a->smem_reserved_per_block;
    attr.maxThreadsPerBlock = 1024;
    attr.numRegs = (int)r->regs;
    attr.sharedSizeBytes = r->smem_static;
    attr.partitionedGCConfig = PARTITIONED_GC_OFF;
    attr.shmemLimitConfig =
        r->smem_dynamic > (unsigned)a->smem_per_block ? FUNC_SHMEM_LIMIT_OPTIN : FUNC_SHMEM_LIMIT_DEFAULT;
    attr.maxDynamicSharedSizeBytes = r->smem_dynamic;
    attr.numBlockBarriers = 1;
    state.cacheConfig = CACHE_PREFER_NONE;
    state.carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT;
    if (cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &attr, &state, (int)r->threads, r->smem_dynamic)
        != CUDA_OCC_SUCCESS)
        return -1;
    return result.activeBlocksPerMultiprocessor;
}

static void table(void)
{
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        const row *r = &rows[i];
        const fattn_arch *a = fattn_arch_find(r->arch);
        fattn_occ_input in = {r->threads, r->regs, r->smem_static, r->smem_dynamic};
        fattn_occ_result out;
        fattn_occupancy(a, &in, &out);
        t_case = r->arch;
        if (out.blocks != r->blocks || out.limiter != r->limiter)
            fprintf(stderr, "row %zu: %s %u threads %u regs %u+%u B: got %d blocks (%s), expected %d (%s)\n", i,
                    r->arch, r->threads, r->regs, r->smem_static, r->smem_dynamic, out.blocks,
                    fattn_occ_limiter_name(out.limiter), r->blocks, fattn_occ_limiter_name(r->limiter));
        CHECK_INT(out.blocks, r->blocks);
        CHECK_INT(out.limiter, r->limiter);
        CHECK_NEAR(out.occupancy, (double)r->blocks * ((r->threads + 31) / 32) / a->max_warps_per_sm, 1e-12);
        int witness = toolkit_blocks(a, r);
        if (witness != r->blocks)
            fprintf(stderr, "row %zu: cuda_occupancy.h says %d blocks\n", i, witness);
        CHECK_INT(witness, r->blocks);
    }
}

/* Clusters co-scheduled whole on one GPC, worked out by hand. */
static void clusters(void)
{
    const fattn_arch *h = fattn_arch_find("sm_90");
    fattn_cluster_result r;
    /* sm_90 (GPC of 16 SMs): 1 block/SM, clusters of 8: 16 slots, 2 clusters,
     * no slot idle: 1 block/SM, 8 warps of 64. */
    fattn_cluster_occupancy(h, 1, 8, 8, &r);
    CHECK_INT(r.launchable, 1);
    CHECK_INT(r.slots_per_gpc, 16);
    CHECK_INT(r.clusters_per_gpc, 2);
    CHECK_NEAR(r.blocks_per_sm, 1.0, 1e-12);
    CHECK_NEAR(r.occupancy, 8.0 / 64, 1e-12);
    /* 16 blocks is past the portable maximum of 8: refused, as the driver
     * refuses it without the non-portable opt-in. */
    fattn_cluster_occupancy(h, 2, 4, 16, &r);
    CHECK_INT(r.launchable, 0);
    CHECK_NEAR(r.occupancy, 0.0, 0);
    /* No block fits on an SM: neither a cluster nor a plain launch runs. */
    fattn_cluster_occupancy(h, 0, 4, 2, &r);
    CHECK_INT(r.launchable, 0);
    fattn_cluster_occupancy(h, 0, 4, 1, &r);
    CHECK_INT(r.launchable, 0);
    /* A plain launch: the blocks per SM as they are. */
    fattn_cluster_occupancy(h, 3, 4, 1, &r);
    CHECK_INT(r.launchable, 1);
    CHECK_NEAR(r.blocks_per_sm, 3.0, 1e-12);
    /* Clusters before sm_90: not launchable. */
    fattn_cluster_occupancy(fattn_arch_find("sm_80"), 4, 4, 2, &r);
    CHECK_INT(r.launchable, 0);

    /* A GPC of 18 SMs (the larger H100 GPC): 3 blocks/SM = 54 slots hold
     * 6 clusters of 8 (48 blocks), 6 slots idle: 48 / 18 = 2.667 blocks/SM. */
    fattn_arch big = *h;
    big.gpc_sms = 18;
    fattn_cluster_occupancy(&big, 3, 4, 8, &r);
    CHECK_INT(r.launchable, 1);
    CHECK_INT(r.slots_per_gpc, 54);
    CHECK_INT(r.clusters_per_gpc, 6);
    CHECK_NEAR(r.blocks_per_sm, 48.0 / 18, 1e-12);
    CHECK_NEAR(r.occupancy, 48.0 / 18 * 4 / 64, 1e-12);
    /* A GPC of 6 SMs (a small partition): 1 block/SM is 6 slots, fewer than a
     * cluster of 8: refused; 2 blocks/SM is 12 slots: one cluster, 4 idle. */
    fattn_arch small = *h;
    small.gpc_sms = 6;
    fattn_cluster_occupancy(&small, 1, 4, 8, &r);
    CHECK_INT(r.launchable, 0);
    CHECK_INT(r.clusters_per_gpc, 0);
    fattn_cluster_occupancy(&small, 2, 4, 8, &r);
    CHECK_INT(r.launchable, 1);
    CHECK_INT(r.clusters_per_gpc, 1);
    CHECK_NEAR(r.blocks_per_sm, 8.0 / 6, 1e-12);
}

int main(void)
{
    T_RUN(table);
    T_RUN(clusters);
    return t_exit();
}
