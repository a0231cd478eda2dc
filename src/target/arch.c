/*
 * arch.c - per-architecture limits.
 */
#include "target/arch.h"

#include <string.h>

/* clang-format off */
static const fattn_arch sm80 = {
    .name = "sm_80", .sm = 80,
    .max_threads_per_sm = 2048, .max_warps_per_sm = 64, .max_blocks_per_sm = 32, .max_threads_per_block = 1024,
    .regs_per_sm = 65536, .regs_per_block = 65536, .max_regs_per_thread = 255, .reg_alloc_unit = 256,
    .sub_partitions = 4,
    .smem_per_sm = 167936, .smem_per_block = 49152, .smem_per_block_optin = 166912,
    .smem_reserved_per_block = 1024, .smem_alloc_unit = 128,
    .max_cluster_size = 1, .gpc_sms = 0,
};

static const fattn_arch sm86 = {
    .name = "sm_86", .sm = 86,
    .max_threads_per_sm = 1536, .max_warps_per_sm = 48, .max_blocks_per_sm = 16, .max_threads_per_block = 1024,
    .regs_per_sm = 65536, .regs_per_block = 65536, .max_regs_per_thread = 255, .reg_alloc_unit = 256,
    .sub_partitions = 4,
    .smem_per_sm = 102400, .smem_per_block = 49152, .smem_per_block_optin = 101376,
    .smem_reserved_per_block = 1024, .smem_alloc_unit = 128,
    .max_cluster_size = 1, .gpc_sms = 0,
};

static const fattn_arch sm89 = {
    .name = "sm_89", .sm = 89,
    .max_threads_per_sm = 1536, .max_warps_per_sm = 48, .max_blocks_per_sm = 24, .max_threads_per_block = 1024,
    .regs_per_sm = 65536, .regs_per_block = 65536, .max_regs_per_thread = 255, .reg_alloc_unit = 256,
    .sub_partitions = 4,
    .smem_per_sm = 102400, .smem_per_block = 49152, .smem_per_block_optin = 101376,
    .smem_reserved_per_block = 1024, .smem_alloc_unit = 128,
    .max_cluster_size = 1, .gpc_sms = 0,
};

/* Clusters: 8 blocks is the portable maximum (the programming guide); larger
 * ones need an opt-in that fattn-tune's launches do not make. gpc_sms: the
 * H100 SXM5 enables 132 of GH100's 144 SMs (66 TPCs over 8 GPCs of up to 9),
 * taken here as GPCs of 16 and 18 SMs, the smaller for the model; a GPU run
 * checks it against cuOccupancyMaxActiveClusters (docs/reliability.md). */
#define SM90_LIMITS \
    .max_threads_per_sm = 2048, .max_warps_per_sm = 64, .max_blocks_per_sm = 32, .max_threads_per_block = 1024, \
    .regs_per_sm = 65536, .regs_per_block = 65536, .max_regs_per_thread = 255, .reg_alloc_unit = 256, \
    .sub_partitions = 4, \
    .smem_per_sm = 233472, .smem_per_block = 49152, .smem_per_block_optin = 232448, \
    .smem_reserved_per_block = 1024, .smem_alloc_unit = 128, \
    .max_cluster_size = 8, .gpc_sms = 16

static const fattn_arch sm90 = {.name = "sm_90", .sm = 90, SM90_LIMITS};

/* sm_90a: sm_90 with its architecture-specific instructions (wgmma,
 * setmaxnreg), which run on sm_90 GPUs only; the Hopper kernels need it. */
static const fattn_arch sm90a = {.name = "sm_90a", .sm = 90, SM90_LIMITS};

/* clang-format on */

const fattn_arch *const fattn_archs[] = {&sm80, &sm86, &sm89, &sm90, &sm90a, NULL};

const fattn_arch *fattn_arch_find(const char *name)
{
    for (int i = 0; name && fattn_archs[i]; ++i)
        if (strcmp(fattn_archs[i]->name, name) == 0)
            return fattn_archs[i];
    return NULL;
}

const fattn_arch *fattn_arch_from_cc(int major, int minor)
{
    for (int i = 0; fattn_archs[i]; ++i)
        if (fattn_archs[i]->sm == major * 10 + minor)
            return fattn_archs[i];
    return NULL;
}

const char *fattn_arch_choices(void)
{
    return "sm_80|sm_86|sm_89|sm_90|sm_90a";
}
