/*
 * wgmma.c - the wgmma family: the warp-specialised FlashAttention forward
 * for Hopper (kernels/fattn_wgmma.cu, sm_90a): a TMA producer warpgroup and
 * BLOCK_M / 64 consumer warpgroups running wgmma, K and V through a ring of
 * mbarrier-guarded slots.
 */
#include <stdio.h>
#include <string.h>

#include "gates/gates.h"
#include "space/family.h"
#include "space/params.h"

enum {
    WG_BLOCK_M,
    WG_BLOCK_N,
    WG_STAGES,
    WG_PV_RS,
    WG_OVERLAP,
    WG_PINGPONG,
    WG_SCHED,
    WG_CLUSTER,
    WG_WAIT_BOUND,
    WG_NPARAMS
};

static const fattn_param_info wgmma_params[WG_NPARAMS] = {
    {"BLOCK_M", "bm", 128, 64, 192, 0, 0, "query rows per block: 64 per consumer warpgroup (64, 128 or 192)"},
    {"BLOCK_N", "bn", 128, 64, 192, 0, 0, "keys per tile: the N of Q.K^T and the K of P.V (64 to 192, steps of 16)"},
    {"STAGES", "s", 2, 1, 4, 0, 0, "K and V slots in the shared-memory ring"},
    {"PV_RS", "rs", 1, 0, 1, 0, 0, "P.V takes P from registers (1) or through shared memory (0)"},
    {"OVERLAP", "ov", 0, 0, 1, 0, 1,
     "a consumer runs a tile's softmax while the previous tile's P.V runs (1: FA3's intra-warpgroup pipelining) or "
     "after it (0)"},
    {"PINGPONG", "pp", 0, 0, 1, 0, 1,
     "the consumer warpgroups issue their GEMMs in turn, one's softmax under another's GEMMs (1, BLOCK_M 128 or "
     "192), or freely (0)"},
    {"SCHED", "sc", 0, 0, 2, 0, 1,
     "one block a tile (0); as many blocks as SMs, each looping over the tiles (1: persistent); the same, causal "
     "tiles longest first across heads and batches (2: lpt)"},
    {"CLUSTER", "cl", 1, 1, 2, 0, 1,
     "blocks per thread-block cluster along the row blocks (2: two row blocks of a head share each K and V tile, "
     "each block loading half and multicasting it to both; non-causal, D = 128, SCHED 0) or none (1)"},
    {"WAIT_BOUND", "wb", 0, 0, 1 << 30, 1, 1,
     "test only: an mbarrier wait traps after this many tries instead of hanging (0: waits unbounded)"},
};

#define WG_BOX_BYTES 8192u /* a 64 x 64 fp16 box */
#define WG_SLACK     1024u /* the base rounded up to the 128-byte swizzle's repeat */

/* Shared memory as the kernel lays it out (kernels/fattn_wgmma.cu). */
static unsigned wgmma_smem(const fattn_config *c, int head_dim)
{
    const unsigned bm = (unsigned)c->v[WG_BLOCK_M], bn = (unsigned)c->v[WG_BLOCK_N];
    const unsigned stages = (unsigned)c->v[WG_STAGES], d = (unsigned)head_dim;
    const unsigned p = c->v[WG_PV_RS] ? 0u : bm / 64u * ((bn + 63u) / 64u) * WG_BOX_BYTES;
    const unsigned bars = 1u + 4u * stages + (c->v[WG_SCHED] ? 1u : 0u); /* Q full, the slots', Q empty */
    return bm * d * 2u + 2u * stages * bn * d * 2u + p + 8u * bars + WG_SLACK;
}

/* SCHED > 0: a block an SM (sm_count; 0: unknown, a block a tile), never
 * more blocks than tiles; every block loops over its tiles. CLUSTER = 2:
 * the row blocks rounded up to pairs (a block past S loads its half of the
 * key tiles for the other and computes nothing), the simulator sampling a
 * cluster's rows together. */
static void wgmma_launch(const fattn_config *c, const fattn_shape *s, int sm_count, fattn_launch *out)
{
    const unsigned bm = (unsigned)c->v[WG_BLOCK_M], bn = (unsigned)c->v[WG_BLOCK_N];
    const unsigned cluster = (unsigned)c->v[WG_CLUSTER];
    const unsigned row_blocks = ((unsigned)s->seqlen + bm - 1) / bm;
    const unsigned grid_x = (row_blocks + cluster - 1) / cluster * cluster;
    const unsigned tiles = row_blocks * (unsigned)s->heads * (unsigned)s->batch;
    const int sched = c->v[WG_SCHED];
    *out = (fattn_launch){
        .grid = {grid_x, (unsigned)s->heads, (unsigned)s->batch},
        .threads = 128u * (bm / 64u + 1u),
        .cluster = cluster,
        .smem = wgmma_smem(c, s->head_dim),
        .one_block_per_sm = 1,
        .async_copies = 1,
        .async_why = "TMA producer warpgroup",
        .nargs = 8,
        .args = {{.kind = FATTN_ARG_TMAP, .tensor = FATTN_ARG_Q, .box_rows = 64, .box_cols = 64, .swizzle = 128},
                 {.kind = FATTN_ARG_TMAP, .tensor = FATTN_ARG_K, .box_rows = bn, .box_cols = 64, .swizzle = 128},
                 {.kind = FATTN_ARG_TMAP, .tensor = FATTN_ARG_V, .box_rows = bn, .box_cols = 64, .swizzle = 128},
                 {.kind = FATTN_ARG_TMAP, .tensor = FATTN_ARG_O, .box_rows = 64, .box_cols = 64, .swizzle = 128},
                 {.kind = FATTN_ARG_BATCH},
                 {.kind = FATTN_ARG_HEADS},
                 {.kind = FATTN_ARG_SEQLEN},
                 {.kind = FATTN_ARG_SCALE}},
        .rows_per_block = bm * cluster,
        .causal_last_first = 1, /* the longest row block first */
    };
    if (sched) {
        out->grid[0] = sm_count > 0 && (unsigned)sm_count < tiles ? (unsigned)sm_count : tiles;
        out->grid[1] = out->grid[2] = 1;
        out->sm_bound = 1;
        /* A block runs many row blocks: the simulator's sampling by row
         * block does not apply. */
        out->rows_per_block = 0;
        out->causal_last_first = 0;
    }
}

/* setmaxnreg's split (kernels/fattn_wgmma.cu): a consumer thread's
 * registers by consumer warpgroups. */
static unsigned consumer_regs(int consumers)
{
    return consumers == 1 ? 256u : consumers == 2 ? 240u : 160u;
}

/* PINGPONG without OVERLAP, P in registers: the turn taken between the
 * softmax and P.V keeps more live across it, BLOCK_N / 8 + 8 as measured
 * (three consumers spill from BLOCK_N 96 at D = 128 and 144 at D = 64,
 * lab/compile-all/wgmma-all.md); with OVERLAP the overlap's term covers it. */
static unsigned turns_regs(const fattn_config *c)
{
    return c->v[WG_PINGPONG] && !c->v[WG_OVERLAP] && c->v[WG_PV_RS] ? (unsigned)(c->v[WG_BLOCK_N] / 8 + 8) : 0u;
}

/* D = 64 with P through shared memory, OVERLAP, no PINGPONG and SCHED 0:
 * ptxas keeps neither of the P terms below live. Measured with the gate
 * skipped (lab/compile-all/wgmma-refused.sh) and in the compile of
 * 8,16,512,64 (scripts/device-cache.sh --wgmma): three consumers compile
 * without spilling at every BLOCK_N to 192, FA3's D = 64 tile (32 + 96 +
 * 32 = 160); with PINGPONG BLOCK_N 144 spilled 4 bytes (non-causal, 2
 * stages), and with SCHED > 0 from 144 or 160 on everything spills, so the rule
 * stops there; at D = 128 the terms hold (BLOCK_N 96 spills). */
static int smem_overlap_d64(const fattn_config *c, int head_dim)
{
    return head_dim == 64 && !c->v[WG_PV_RS] && c->v[WG_OVERLAP] && !c->v[WG_PINGPONG] && !c->v[WG_SCHED];
}

/* OVERLAP: BLOCK_N / 4 more (below). */
static unsigned overlap_regs(const fattn_config *c, int head_dim)
{
    return c->v[WG_OVERLAP] && !smem_overlap_d64(c, head_dim) ? (unsigned)(c->v[WG_BLOCK_N] / 4) : 0u;
}

/* P through shared memory with three consumers (160 registers a thread):
 * 4 more, as measured (BLOCK_N 192 at D = 64 spills at 160). */
static unsigned smem_p_regs(const fattn_config *c, int head_dim)
{
    return c->v[WG_BLOCK_M] == 192 && !c->v[WG_PV_RS] && !smem_overlap_d64(c, head_dim) ? 4u : 0u;
}

/* SCHED > 0 with three consumers (160 registers a thread): the tile loop
 * keeps more live, 8 with P in registers and 20 more through shared memory
 * (24 with the term above), as measured (lab/compile-all/wgmma-all.md: at D = 64 BLOCK_N 192 spills with
 * P in registers and 160 through shared memory, at D = 128 BLOCK_N 128
 * through shared memory; ptxas is not monotone there: 176 through shared
 * memory at D = 64 compiles, and is refused with the rest). */
static unsigned sched_regs(const fattn_config *c)
{
    if (!c->v[WG_SCHED] || c->v[WG_BLOCK_M] != 192)
        return 0u;
    return c->v[WG_PV_RS] ? 8u : 20u;
}

/* The register model of a consumer thread: O's D / 2 and S's BLOCK_N / 2
 * fp32 accumulators (P, in registers, takes S's place as it is formed)
 * and 32 for addresses, the softmax and the loop; with OVERLAP, BLOCK_N / 4
 * more: the previous tile's P (BLOCK_N / 4 fp16 pairs) stays live under
 * the softmax until its P.V retires (PV_RS=1); with P through shared memory
 * (PV_RS=0) as many more are measured, not explained (ptxas keeps more of
 * the softmax live while O is in flight), but at D = 64 without PINGPONG
 * and SCHED (smem_overlap_d64). Measured
 * against ptxas (docs/wgmma-family.md, lab/compile-all/wgmma-all.md):
 * BLOCK_M 192 at D = 128 spills from BLOCK_N 144 (168 > 160), not at 128
 * (160); with OVERLAP from 96 (168), not at 80 (156). */
static unsigned consumer_regs_needed(const fattn_config *c, int head_dim)
{
    return (unsigned)(head_dim / 2 + c->v[WG_BLOCK_N] / 2 + 32) + overlap_regs(c, head_dim) + turns_regs(c)
           + smem_p_regs(c, head_dim) + sched_regs(c);
}

/* Device memory; then a kernel at all (sm_90a; the shapes wgmma and the
 * tensor maps take; a layout the arch's opt-in maximum holds, which the
 * descriptors' 18-bit addresses also need); then shared memory within the
 * limit; then the register model. */
static int wgmma_gates_static(const fattn_gate_input *in, fattn_verdict *first, fattn_verdict *all)
{
    fattn_verdict v[4];
    const int d = in->shape->head_dim, bm = in->cfg->v[WG_BLOCK_M], bn = in->cfg->v[WG_BLOCK_N];
    const unsigned smem = wgmma_smem(in->cfg, d);
    fattn_gate_device_memory(in, &v[0]);
    v[1].reason = FATTN_R_TILING;
    if (in->arch->sm != 90)
        fattn_verdict_set(&v[1], 0, "the wgmma family needs sm_90a (wgmma, setmaxnreg); %s has neither",
                          in->arch->name);
    else if (d != 64 && d != 128)
        fattn_verdict_set(&v[1], 0, "head_dim %d: the wgmma family takes 64 or 128", d);
    else if (bm % 64)
        fattn_verdict_set(&v[1], 0, "BLOCK_M %d: 64 rows per consumer warpgroup (64, 128 or 192)", bm);
    else if (bn % 16)
        fattn_verdict_set(&v[1], 0, "BLOCK_N %d: P.V's K slices are 16 keys (a multiple of 16)", bn);
    else if (in->cfg->v[WG_PINGPONG] && bm < 128)
        fattn_verdict_set(&v[1], 0, "PINGPONG with BLOCK_M %d: one consumer warpgroup has no one to take turns with",
                          bm);
    else if (in->cfg->v[WG_SCHED] == 2 && !in->shape->causal)
        fattn_verdict_set(&v[1], 0,
                          "SCHED 2 (lpt) orders causal tiles longest first: without the mask every tile is "
                          "as long (SCHED 1)");
    else if (in->cfg->v[WG_CLUSTER] > 1 && (in->shape->causal || d != 128 || in->cfg->v[WG_SCHED]))
        fattn_verdict_set(&v[1], 0,
                          "CLUSTER %d: the blocks of a cluster share every K and V tile, one 64-column box each: "
                          "%s",
                          in->cfg->v[WG_CLUSTER],
                          in->shape->causal ? "causal row blocks read different numbers of key tiles"
                          : d != 128        ? "D = 64 is one box"
                                            : "a persistent schedule (SCHED > 0) does not pair its tiles");
    else if (smem > (unsigned)in->arch->smem_per_block_optin)
        fattn_verdict_set(&v[1], 0, "%u B of shared memory: over %s's opt-in maximum of %d B, no launch holds it", smem,
                          in->arch->name, in->arch->smem_per_block_optin);
    else
        fattn_verdict_set(&v[1], 1, "%d consumer warpgroups of 64 rows, key tiles of %d in %d slots", bm / 64, bn,
                          in->cfg->v[WG_STAGES]);
    v[2].reason = FATTN_R_SMEM_OVERFLOW;
    if (v[1].pass != 1)
        fattn_verdict_set(&v[2], -1, "not evaluated: the tiling gate failed");
    else
        fattn_verdict_set(&v[2], smem <= in->lim->smem_limit,
                          "Q %d x %d + %d slots of K and V %d x %d%s + mbarriers and 1024 B alignment = %u B %s "
                          "limit %u B%s",
                          bm, d, in->cfg->v[WG_STAGES], bn, d, in->cfg->v[WG_PV_RS] ? "" : " + P", smem,
                          smem <= in->lim->smem_limit ? "within" : "over", in->lim->smem_limit,
                          smem > in->lim->smem_limit ? " (the family is built for --smem-limit max)" : "");
    v[3].reason = FATTN_R_REGISTER_BUDGET;
    const unsigned need = consumer_regs_needed(in->cfg, d), have = consumer_regs(bm / 64);
    char p_live[96] = "";
    if (overlap_regs(in->cfg, d))
        snprintf(p_live, sizeof p_live, " + P held over the overlap %u", overlap_regs(in->cfg, d));
    else if (turns_regs(in->cfg))
        snprintf(p_live, sizeof p_live, " + held over the turn %u", turns_regs(in->cfg));
    if (smem_p_regs(in->cfg, d))
        snprintf(p_live + strlen(p_live), sizeof p_live - strlen(p_live), " + P through shared memory %u",
                 smem_p_regs(in->cfg, d));
    if (sched_regs(in->cfg))
        snprintf(p_live + strlen(p_live), sizeof p_live - strlen(p_live), " + the tile loop %u", sched_regs(in->cfg));
    if (v[1].pass != 1)
        fattn_verdict_set(&v[3], -1, "not evaluated: the tiling gate failed");
    else
        fattn_verdict_set(&v[3], need <= have,
                          "a consumer thread: O %d + S %d accumulators%s + 32 = %u registers, %s the %u of %d "
                          "consumer warpgroups",
                          d / 2, bn / 2, p_live, need, need <= have ? "within" : "over", have, bm / 64);
    return fattn_gates_collect(in, v, 4, first, all);
}

static const fattn_family_fix wgmma_fixes[] = {
    {FATTN_R_TILING, "BLOCK_M 64, 128 or 192 (64 rows per consumer warpgroup), BLOCK_N a multiple of 16, a layout "
                     "within the arch's opt-in maximum (a smaller BLOCK_N or STAGES), PINGPONG with BLOCK_M 128 or "
                     "192, SCHED 2 on causal shapes only, CLUSTER 2 on non-causal shapes at D 128 with SCHED 0; the "
                     "family runs on sm_90 only (built for sm_90a), at D 64 or 128"},
    {FATTN_R_SMEM_OVERFLOW, "--smem-limit max (the family is built for the opt-in maximum, 227 KiB on sm_90), or a "
                            "smaller BLOCK_N or STAGES"},
    {FATTN_R_REGISTER_BUDGET, "a smaller BLOCK_N, or more consumer warpgroups (BLOCK_M 128 or 192) at D = 128"},
    {0, NULL},
};

/* FlashAttention-3's forward tilings on sm_90 (hopper/tile_size.h: at head
 * dimension 128, 128 x 128 causal and 128 x 176 not; at 64, 192 x 128 causal
 * and 192 x 192 with P through shared memory not; two stages, intra-warpgroup
 * overlap, the consumers in turns), then this family's first configuration,
 * which any shape the space runs at tiles. */
static const char *const *wgmma_reference_keys(int head_dim, int causal)
{
    static const char *const d64[2][4] = {
        {"wgmma-bm192-bn192-s2-rs0-ov1-pp1", "wgmma-bm192-bn128-s2-rs1-ov1-pp1", "wgmma-bm128-bn128-s2-rs1", NULL},
        {"wgmma-bm192-bn128-s2-rs1-ov1-pp1", "wgmma-bm128-bn128-s2-rs1", NULL, NULL}};
    static const char *const d128[2][4] = {
        {"wgmma-bm128-bn176-s2-rs1-ov1-pp1", "wgmma-bm128-bn128-s2-rs1-ov1-pp1", "wgmma-bm128-bn128-s2-rs1", NULL},
        {"wgmma-bm128-bn128-s2-rs1-ov1-pp1", "wgmma-bm128-bn128-s2-rs1", NULL, NULL}};
    return head_dim <= 64 ? d64[causal != 0] : d128[causal != 0];
}

const fattn_family fattn_family_wgmma = {
    .name = "wgmma",
    .summary = "FlashAttention forward for Hopper: a TMA producer warpgroup and wgmma consumer warpgroups (sm_90a)",
    .params = wgmma_params,
    .nparams = WG_NPARAMS,
    .kernel_file = "fattn_wgmma.cu",
    .default_space = "space-wgmma.json",
    .smem_optin = 1,
    .kernel_name = "fattn_wgmma",
    .gates_static = wgmma_gates_static,
    .static_gates = 1u << FATTN_R_DEVICE_MEMORY | 1u << FATTN_R_TILING | 1u << FATTN_R_SMEM_OVERFLOW
                    | 1u << FATTN_R_REGISTER_BUDGET,
    .launch = wgmma_launch,
    .arch_specific = 1,
    .grid_rule = {"ceil(seqlen / BLOCK_M) rounded up to a multiple of CLUSTER", "heads", "batch"},
    .grid_rule_sm_bound = {"min(SMs, ceil(seqlen / BLOCK_M) * heads * batch)", "1", "1"},
    .launch_doc =
        " * Launch: grid (ceil(S / FATTN_BLOCK_M) rounded up to a multiple of FATTN_CLUSTER, H, B) (clusters of\n"
        " * FATTN_CLUSTER blocks along x compiled in: a plain launch), or with FATTN_SCHED > 0 (persistent)\n"
        " * (min(SMs, ceil(S / FATTN_BLOCK_M) H B), 1, 1) on the device's SM count; FATTN_THREADS threads,\n"
        " * FATTN_SMEM_BYTES bytes of dynamic shared memory (raise the function's limit), and the tensor maps\n"
        " * of Q, K, V and O as parameters: with FATTN_TUNED_HOST defined, fattn_tuned_launch() below builds\n"
        " * them and launches.\n"
        " */\n",
    .fixes = wgmma_fixes,
    .reference_keys = wgmma_reference_keys,
    .reference_name = "FlashAttention-3-like",
};
