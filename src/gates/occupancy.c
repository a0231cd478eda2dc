/*
 * occupancy.c - the occupancy model.
 */
#include "gates/occupancy.h"

#include <limits.h>

static unsigned round_up(unsigned x, unsigned unit)
{
    return (x + unit - 1) / unit * unit;
}

int fattn_occupancy(const fattn_arch *a, const fattn_occ_input *in, fattn_occ_result *out)
{
    const unsigned warps = (in->threads + 31) / 32;
    out->by_blocks = a->max_blocks_per_sm;
    out->by_warps = in->threads > (unsigned)a->max_threads_per_block ? 0 : a->max_warps_per_sm / (int)warps;

    out->regs_per_warp = round_up(in->regs * 32u, (unsigned)a->reg_alloc_unit);
    if (in->regs > (unsigned)a->max_regs_per_thread
        || out->regs_per_warp * round_up(warps, (unsigned)a->sub_partitions) > (unsigned)a->regs_per_block) {
        out->by_regs = 0;
    } else if (out->regs_per_warp == 0) {
        out->by_regs = INT_MAX;
    } else {
        unsigned per_partition = (unsigned)a->regs_per_sm / (unsigned)a->sub_partitions / out->regs_per_warp;
        out->by_regs = (int)(per_partition * (unsigned)a->sub_partitions / warps);
    }

    unsigned smem = in->smem_static + in->smem_dynamic + (unsigned)a->smem_reserved_per_block;
    out->smem_per_block = round_up(smem, (unsigned)a->smem_alloc_unit);
    unsigned block_limit =
        (unsigned)(in->smem_dynamic > (unsigned)a->smem_per_block ? a->smem_per_block_optin : a->smem_per_block);
    block_limit += (unsigned)a->smem_reserved_per_block;
    out->by_smem = out->smem_per_block > block_limit ? 0 : (int)((unsigned)a->smem_per_sm / out->smem_per_block);

    out->blocks = out->by_warps, out->limiter = FATTN_OCC_WARPS;
    if (out->by_regs < out->blocks)
        out->blocks = out->by_regs, out->limiter = FATTN_OCC_REGS;
    if (out->by_smem < out->blocks)
        out->blocks = out->by_smem, out->limiter = FATTN_OCC_SMEM;
    if (out->by_blocks < out->blocks)
        out->blocks = out->by_blocks, out->limiter = FATTN_OCC_BLOCKS;
    out->warps = out->blocks * (int)warps;
    out->occupancy = (double)out->warps / a->max_warps_per_sm;
    return 0;
}

int fattn_cluster_occupancy(const fattn_arch *a, int blocks_per_sm, int warps, int cluster, fattn_cluster_result *out)
{
    if (cluster <= 1) {
        out->launchable = blocks_per_sm > 0;
        out->slots_per_gpc = blocks_per_sm * a->gpc_sms;
        out->clusters_per_gpc = out->slots_per_gpc;
        out->blocks_per_sm = blocks_per_sm;
    } else {
        out->slots_per_gpc = blocks_per_sm * a->gpc_sms;
        out->launchable = cluster <= a->max_cluster_size && blocks_per_sm > 0 && out->slots_per_gpc >= cluster;
        out->clusters_per_gpc = out->launchable ? out->slots_per_gpc / cluster : 0;
        out->blocks_per_sm = out->launchable ? (double)(out->clusters_per_gpc * cluster) / a->gpc_sms : 0.0;
    }
    out->occupancy = out->blocks_per_sm * warps / a->max_warps_per_sm;
    return 0;
}

const char *fattn_occ_limiter_name(int limiter)
{
    switch (limiter) {
    case FATTN_OCC_REGS: return "registers";
    case FATTN_OCC_SMEM: return "shared memory";
    case FATTN_OCC_BLOCKS: return "blocks per SM";
    default: return "warps per SM";
    }
}
