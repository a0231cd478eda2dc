/*
 * tmacopy.c - the tmacopy family: O = V through TMA (kernels/fattn_tmacopy.cu),
 * a small sm_90a kernel that carries the Hopper paths of the family interface
 * (tensor maps built by the host per input-buffer set, an mbarrier, the
 * architecture-specific target, a reference other than attention) through
 * the simulator, the mock driver, search, confirm and export.
 */
#include <stdio.h>

#include "gates/gates.h"
#include "space/family.h"
#include "space/params.h"
#include "run/numerics.h"

enum { TC_BOX_ROWS, TC_NPARAMS };

static const fattn_param_info tmacopy_params[TC_NPARAMS] = {
    {"BOX_ROWS", "br", 64, 8, 256, 0, 0, "rows of V one TMA box moves (and one block copies)"},
};

#define TC_THREADS 32u
#define TC_SLACK   256u /* the box rounded up to 128 bytes, and its mbarrier */

static void tmacopy_launch(const fattn_config *c, const fattn_shape *s, int sm_count, fattn_launch *out)
{
    (void)sm_count;
    const unsigned br = (unsigned)c->v[TC_BOX_ROWS], d = (unsigned)s->head_dim;
    *out = (fattn_launch){
        .grid = {((unsigned)s->seqlen + br - 1) / br, (unsigned)s->heads, (unsigned)s->batch},
        .threads = TC_THREADS,
        .cluster = 1,
        .smem = br * d * 2u + TC_SLACK,
        .async_copies = 1,
        .async_why = "TMA copies",
        .nargs = 5,
        .args = {{.kind = FATTN_ARG_TMAP, .tensor = FATTN_ARG_V, .box_rows = br, .box_cols = d},
                 {.kind = FATTN_ARG_TMAP, .tensor = FATTN_ARG_O, .box_rows = br, .box_cols = d},
                 {.kind = FATTN_ARG_BATCH},
                 {.kind = FATTN_ARG_HEADS},
                 {.kind = FATTN_ARG_SEQLEN}},
        .rows_per_block = br,
    };
}

/* Device memory; then a kernel at all (TMA: sm_90; a box the driver takes);
 * then the box within the shared-memory limit. */
static int tmacopy_gates_static(const fattn_gate_input *in, fattn_verdict *first, fattn_verdict *all)
{
    fattn_verdict v[3];
    const int d = in->shape->head_dim, br = in->cfg->v[TC_BOX_ROWS];
    fattn_launch l; /* its shared memory */
    tmacopy_launch(in->cfg, in->shape, 0, &l);
    const unsigned smem = l.smem;
    fattn_gate_device_memory(in, &v[0]);
    v[1].reason = FATTN_R_TILING;
    if (in->arch->sm < 90)
        fattn_verdict_set(&v[1], 0, "the tmacopy family needs TMA (sm_90a); %s has none", in->arch->name);
    else if (d > 256 || d * 2 % 16 || br > 256)
        fattn_verdict_set(&v[1], 0,
                          "a box of %d x %d elements: the driver takes at most 256 of each, rows of 16-byte "
                          "multiples",
                          br, d);
    else
        fattn_verdict_set(&v[1], 1, "one %d x %d box per block, %u blocks per head", br, d,
                          (unsigned)((in->shape->seqlen + br - 1) / br));
    v[2].reason = FATTN_R_SMEM_OVERFLOW;
    if (v[1].pass != 1)
        fattn_verdict_set(&v[2], -1, "not evaluated: the tiling gate failed");
    else
        fattn_verdict_set(&v[2], smem <= in->lim->smem_limit,
                          "box %d x %d B + %u B alignment and mbarrier = %u B %s "
                          "limit %u B",
                          br, 2 * d, TC_SLACK, smem, smem <= in->lim->smem_limit ? "within" : "over",
                          in->lim->smem_limit);
    return fattn_gates_collect(in, v, 3, first, all);
}

/* O = V. */
static void tmacopy_reference_row(const fattn_shape *s, const uint16_t *q, const uint16_t *k, const uint16_t *v,
                                  size_t row, double *out)
{
    (void)q, (void)k;
    for (int c = 0; c < s->head_dim; ++c)
        out[c] = (double)fattn_half_to_float(v[row * (size_t)s->head_dim + (size_t)c]);
}

static const fattn_family_fix tmacopy_fixes[] = {
    {FATTN_R_TILING, "BOX_ROWS at most 256 (the family runs on sm_90, built for sm_90a)"},
    {FATTN_R_SMEM_OVERFLOW, "a smaller BOX_ROWS, or raise --smem-limit"},
    {0, NULL},
};

const fattn_family fattn_family_tmacopy = {
    .name = "tmacopy",
    .summary = "O = V through TMA tensor copies and an mbarrier (sm_90a): the Hopper paths of the family interface",
    .params = tmacopy_params,
    .nparams = TC_NPARAMS,
    .kernel_file = "fattn_tmacopy.cu",
    .kernel_name = "fattn_tmacopy",
    .gates_static = tmacopy_gates_static,
    .static_gates = 1u << FATTN_R_DEVICE_MEMORY | 1u << FATTN_R_TILING | 1u << FATTN_R_SMEM_OVERFLOW,
    .launch = tmacopy_launch,
    .arch_specific = 1,
    .reference_row = tmacopy_reference_row,
    .grid_rule = {"ceil(seqlen / BOX_ROWS)", "heads", "batch"},
    .launch_doc = " * Launch: grid (ceil(S / FATTN_BOX_ROWS), H, B), FATTN_THREADS threads, FATTN_SMEM_BYTES bytes\n"
                  " * of dynamic shared memory, and the tensor maps of V and O as parameters: with\n"
                  " * FATTN_TUNED_HOST defined, fattn_tuned_launch() below builds them and launches.\n"
                  " */\n",
    .fixes = tmacopy_fixes,
};
