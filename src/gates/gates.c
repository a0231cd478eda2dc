/*
 * gates.c - the static and post-compile gates.
 *
 * Each gate is a function from its input to a verdict with the numbers it
 * was decided on; the static gates read the layout and access models
 * (layout.h, access.h).
 */
#include "gates/gates.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gates/access.h"
#include "gates/bank.h"
#include "gates/layout.h"
#include "util/err.h"
#include "util/misc.h"

static const fattn_reason_info reasons[FATTN_R_COUNT] = {
    [FATTN_R_DEVICE_MEMORY] = {"device_memory", FATTN_STAGE_STATIC,
                               "the shape's device buffers exceed the memory budget",
                               "use a smaller shape or raise --mem-budget"},
    [FATTN_R_TILING] =
        {"tiling", FATTN_STAGE_STATIC, "the tile sizes do not divide the work",
         "BLOCK_M a multiple of 16*NUM_WARPS, BLOCK_N a multiple of 16, BLOCK_K a power of two from 16 dividing D, "
         "SPLIT_KV 1 on archs before sm_90 and at most the key tiles"},
    [FATTN_R_MISALIGNED_CP_ASYNC] =
        {"misaligned_cp_async", FATTN_STAGE_STATIC,
         "a copy into or out of shared memory is not aligned to its width (cp.async needs 16-byte alignment)",
         "pad rows by a multiple of 16 bytes, or SWIZZLE=1"},
    [FATTN_R_MISALIGNED_LDMATRIX] = {"misaligned_ldmatrix", FATTN_STAGE_STATIC,
                                     "an ldmatrix row address is not 16-byte aligned",
                                     "pad rows by a multiple of 16 bytes, or SWIZZLE=1"},
    [FATTN_R_SMEM_OVERFLOW] =
        {"smem_overflow", FATTN_STAGE_STATIC, "the shared-memory layout exceeds the per-block limit",
         "reduce BLOCK_M, BLOCK_N, BLOCK_K or STAGES, or raise --smem-limit up to the arch's opt-in maximum"},
    [FATTN_R_BANK_CONFLICTS] = {"bank_conflicts", FATTN_STAGE_STATIC,
                                "a warp's shared-memory accesses serialize over the same banks", "SWIZZLE=1"},
    [FATTN_R_COALESCING] = {"coalescing", FATTN_STAGE_STATIC,
                            "a warp's global loads use too little of the 32-byte sectors they touch",
                            "HALF2=1 with row-major copies (consecutive lanes along a row)"},
    [FATTN_R_REGISTER_BUDGET] = {"register_budget", FATTN_STAGE_STATIC,
                                 "the register model asks more registers a thread than its warpgroup's share: "
                                 "ptxas would spill (a model: it saves the compile)",
                                 "fewer accumulators a thread: a smaller BLOCK_N, or fewer warpgroups at D = 128"},
    [FATTN_R_COMPILE_ERROR] = {"compile_error", FATTN_STAGE_COMPILE, "NVRTC could not compile the configuration",
                               "read the compile log: fattn-tune query trial ID"},
    [FATTN_R_SMEM_MISMATCH] =
        {"smem_mismatch", FATTN_STAGE_COMPILE,
         "the compiled kernel's shared memory differs from fattn-tune's layout model (a fattn-tune bug)",
         "report it: src/gates/layout.c and kernels/fattn_fwd.cu disagree"},
    [FATTN_R_SPILLS] =
        {"spills", FATTN_STAGE_COMPILE, "registers spill to local memory",
         "fewer rows per warp (more NUM_WARPS or smaller BLOCK_M), smaller BLOCK_N, or raise --max-spill-bytes"},
    [FATTN_R_LOW_OCCUPANCY] =
        {"low_occupancy", FATTN_STAGE_COMPILE, "too few resident warps per SM to hide latency without cp.async",
         "CP_ASYNC=1, fewer registers per thread (smaller tiles per warp), or lower --min-occupancy"},
    [FATTN_R_UNLAUNCHABLE] = {"unlaunchable", FATTN_STAGE_COMPILE,
                              "no block fits on an SM, or a cluster's blocks do not fit on one GPC (the hardware "
                              "co-schedules a cluster's blocks together): the driver would refuse the launch",
                              "fewer registers or less shared memory per block, or a smaller SPLIT_KV (clusters "
                              "of at most the portable 8 blocks)"},
    [FATTN_R_SETMAXNREG_IGNORED] = {"setmaxnreg_ignored", FATTN_STAGE_COMPILE,
                                    "ptxas ignored setmaxnreg (C7507/C7508): the producer and consumer warpgroups "
                                    "keep the registers they started with",
                                    "compile the kernel with __launch_bounds__(threads, 1), and keep setmaxnreg "
                                    "warpgroup-uniform"},
    [FATTN_R_WGMMA_SERIALIZED] = {"wgmma_serialized", FATTN_STAGE_COMPILE,
                                  "ptxas serialized wgmma or injected a warpgroup.wait (C7510-C7517): the MMAs no "
                                  "longer overlap (slow, not wrong)",
                                  "touch no accumulator between wgmma commit and wait, and fence each accumulator "
                                  "register around the pipeline (CUTLASS's warpgroup_fence_operand)"},
    [FATTN_R_SETMAXNREG_POOL] = {"setmaxnreg_pool", FATTN_STAGE_COMPILE,
                                 "the registers the launch gives the block (the cubin's count a thread x its "
                                 "threads) do not hold what its warpgroups ask for with setmaxnreg: an increase "
                                 "would wait forever (a hang on the GPU)",
                                 "the kernel's setmaxnreg split within the launch's registers (its "
                                 "fattn_setmaxnreg_pool), or __launch_bounds__(threads, 1) so ptxas gives the "
                                 "launch the whole register file"},
    [FATTN_R_LAUNCH_REFUSED] = {"launch_refused", FATTN_STAGE_RUN,
                                "the driver refused to launch the kernel as configured (the CUDA error is in the "
                                "detail: shared memory, cluster size, threads or registers)",
                                "a gate missed a limit of this GPU: check --smem-limit, and report it"},
    [FATTN_R_RUNTIME_FAULT] = {"runtime_fault", FATTN_STAGE_RUN,
                               "the kernel faulted on the GPU (the CUDA error is in the detail)",
                               "run compute-sanitizer on the configuration; the gates missed a layout bug"},
    [FATTN_R_TIMEOUT] = {"timeout", FATTN_STAGE_RUN, "the kernel ran past the watchdog limit",
                         "raise --kernel-timeout, or check the configuration for a hang"},
    [FATTN_R_NUMERICS] =
        {"numerics", FATTN_STAGE_RUN,
         "the output differs from the reference beyond atol + rtol*|ref| at an element, or by more "
         "than --max-rel-l2 in relative L2 norm over all, on uniform or peaky inputs, or holds NaN/Inf",
         "check the configuration's numerics; the detail names the gate that failed, both figures and "
         "the worst element"},
    [FATTN_R_SIMULATOR] = {"simulator", FATTN_STAGE_RUN,
                           "the simulator (fattn-tune check) found a fault, a race or wrong numerics in the "
                           "configuration with this kernel source",
                           "fix the kernel at the line the check names (fattn-tune query sim), then check again"},
};

const fattn_reason_info *fattn_reason(int r)
{
    return r > FATTN_R_NONE && r < FATTN_R_COUNT ? &reasons[r] : NULL;
}

const char *fattn_reason_fix(int r, const fattn_family *fam)
{
    for (const fattn_family_fix *f = fam ? fam->fixes : NULL; f && f->fix; ++f)
        if (f->reason == r)
            return f->fix;
    return fattn_reason(r) ? fattn_reason(r)->fix : NULL;
}

int fattn_reason_find(const char *code)
{
    for (int r = 1; r < FATTN_R_COUNT; ++r)
        if (strcmp(reasons[r].code, code) == 0)
            return r;
    return FATTN_R_NONE;
}

void fattn_gate_limits_default(fattn_gate_limits *lim)
{
    memset(lim, 0, sizeof *lim);
    lim->smem_limit = FATTN_DEFAULT_SMEM_LIMIT;
    lim->max_bank_ways = 1;
    lim->min_coalescing = 0.8;
    lim->mem_budget = FATTN_DEFAULT_MEM_BUDGET;
    lim->input_sets = 1;
    lim->max_spill_bytes = 0;
    lim->min_occupancy = 0.5;
    lim->occupancy_cp_async_exempt = 1;
}

int fattn_gates_collect(const fattn_gate_input *in, fattn_verdict *v, int n, fattn_verdict *first, fattn_verdict *all)
{
    int failed = FATTN_R_NONE;
    for (int i = 0; i < n; ++i) {
        int pass = v[i].pass;
        if (v[i].reason != FATTN_R_TILING && pass != -1)
            pass = fattn_gate_apply_skip(in->lim, v[i].reason, &v[i]);
        if (all)
            all[v[i].reason] = v[i];
        if (pass == 0 && !failed) {
            failed = v[i].reason;
            if (first)
                *first = v[i];
        }
    }
    return failed;
}

int fattn_gate_apply_skip(const fattn_gate_limits *lim, int r, fattn_verdict *v)
{
    if (v->pass == 0 && (lim->skip & (1u << r))) {
        size_t len = strlen(v->detail);
        snprintf(v->detail + len, sizeof v->detail - len, " [rejection ignored: --unsafe-skip-gate %s]",
                 fattn_reason(r)->code);
        v->pass = 1;
    }
    return v->pass;
}

void fattn_gate_limits_json(const fattn_gate_limits *lim, char *out, int n)
{
    snprintf(out, (size_t)n,
             "{\"smem_limit\":%u,\"max_bank_ways\":%u,\"min_coalescing\":%g,\"mem_budget\":%llu,"
             "\"input_sets\":%d,\"max_spill_bytes\":%u,\"min_occupancy\":%g,\"occupancy_cp_async_exempt\":%d,"
             "\"skipped_gates\":%u}",
             lim->smem_limit, lim->max_bank_ways, lim->min_coalescing, (unsigned long long)lim->mem_budget,
             lim->input_sets, lim->max_spill_bytes, lim->min_occupancy, lim->occupancy_cp_async_exempt, lim->skip);
}

int fattn_gate_limits_parse(const char *json, fattn_gate_limits *lim, char *missing, size_t missing_size)
{
    /* Each field with the largest value it may hold: a larger one (a damaged
     * record) counts as missing rather than being cast out of range. */
    static const struct {
        const char *name;
        double max;
    } fields[] = {{"smem_limit", 4294967295.0},
                  {"max_bank_ways", 32},
                  {"min_coalescing", 1},
                  {"mem_budget", 9.2e18},
                  {"max_spill_bytes", 4294967295.0},
                  {"min_occupancy", 1},
                  {"occupancy_cp_async_exempt", 1},
                  {"skipped_gates", 4294967295.0}};
    fattn_gate_limits_default(lim);
    if (missing_size)
        missing[0] = '\0';
    cJSON *o = json ? cJSON_Parse(json) : NULL;
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return -1;
    }
    int read = 0;
    size_t len = 0;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, fields[i].name);
        double v = cJSON_IsNumber(f) ? f->valuedouble : -1;
        if (!(v >= 0 && v <= fields[i].max)) {
            if (len + 1 < missing_size)
                len += (size_t)snprintf(missing + len, missing_size - len, "%s%s", len ? ", " : "", fields[i].name);
            len = len < missing_size ? len : missing_size - 1;
            continue;
        }
        switch (i) {
        case 0: lim->smem_limit = (unsigned)v; break;
        case 1: lim->max_bank_ways = (unsigned)v; break;
        case 2: lim->min_coalescing = v; break;
        case 3: lim->mem_budget = (uint64_t)v; break;
        case 4: lim->max_spill_bytes = (unsigned)v; break;
        case 5: lim->min_occupancy = v; break;
        case 6: lim->occupancy_cp_async_exempt = v != 0; break;
        case 7: lim->skip = (unsigned)v; break;
        }
        ++read;
    }
    cJSON_Delete(o);
    return read;
}

int fattn_verdict_set(fattn_verdict *v, int pass, const char *fmt, ...)
{
    va_list ap;
    v->pass = pass;
    va_start(ap, fmt);
    vsnprintf(v->detail, sizeof v->detail, fmt, ap);
    va_end(ap);
    return pass;
}

typedef struct gate_ctx {
    const fattn_gate_input *in;
    fattn_layout layout;
} gate_ctx;

static int is_pow2(int x)
{
    return x > 0 && (x & (x - 1)) == 0;
}

int fattn_gate_device_memory(const fattn_gate_input *in, fattn_verdict *v)
{
    const fattn_shape *s = in->shape;
    uint64_t need;
    int wrapped = fattn_shape_device_bytes(s, in->lim->input_sets, &need);
    int pass = !wrapped && need <= in->lim->mem_budget;
    char count[32], a[32], b[32];
    if (wrapped) {
        double approx = fattn_shape_device_bytes_approx(s, in->lim->input_sets);
        snprintf(count, sizeof count, "about %.3g", approx);
        fattn_format_size(approx, a, sizeof a);
    } else {
        snprintf(count, sizeof count, "%llu", (unsigned long long)need);
        fattn_format_bytes(need, a, sizeof a);
    }
    v->reason = FATTN_R_DEVICE_MEMORY;
    fattn_format_bytes(in->lim->mem_budget, b, sizeof b);
    return fattn_verdict_set(v, pass, "%d input set(s) of Q, K, V + O + fp32 reference O = %s bytes (%s) %s budget %s",
                             in->lim->input_sets, count, a, pass ? "within" : "over", b);
}

static int gate_device_memory(const gate_ctx *g, fattn_verdict *v)
{
    return fattn_gate_device_memory(g->in, v);
}

static int gate_tiling(const gate_ctx *g, fattn_verdict *v)
{
    const int *c = g->in->cfg->v;
    const int bm = c[FATTN_P_BLOCK_M], bn = c[FATTN_P_BLOCK_N], bk = c[FATTN_P_BLOCK_K];
    const int nw = c[FATTN_P_NUM_WARPS], d = g->in->shape->head_dim;
    if (bm % (16 * nw))
        return fattn_verdict_set(
            v, 0,
            "BLOCK_M=%d over NUM_WARPS=%d is %d rows per warp; each warp needs whole 16-row strips "
            "(BLOCK_M a multiple of %d)",
            bm, nw, bm / nw, 16 * nw);
    if (bn % 16)
        return fattn_verdict_set(v, 0, "BLOCK_N=%d is not a multiple of 16 (the k16 steps of P.V)", bn);
    if (!is_pow2(bk) || bk < 16)
        return fattn_verdict_set(v, 0, "BLOCK_K=%d is not a power of two from 16 (k16 steps, swizzled chunks)", bk);
    if (d % bk)
        return fattn_verdict_set(v, 0, "BLOCK_K=%d does not divide D=%d", bk, d);
    const int split = c[FATTN_P_SPLIT_KV], key_tiles = (g->in->shape->seqlen + bn - 1) / bn;
    if (!is_pow2(split) || split > 8)
        return fattn_verdict_set(v, 0, "SPLIT_KV=%d is not 1, 2, 4 or 8 (the portable cluster sizes)", split);
    if (split > 1 && g->in->arch->sm < 90)
        return fattn_verdict_set(v, 0,
                                 "SPLIT_KV=%d needs thread-block clusters and distributed shared memory, which %s "
                                 "lacks (sm_90 or newer; SPLIT_KV=1 here)",
                                 split, g->in->arch->name);
    if (split > key_tiles)
        return fattn_verdict_set(v, 0,
                                 "SPLIT_KV=%d blocks share %d key tile%s of BLOCK_N=%d (S=%d): some would have none",
                                 split, key_tiles, key_tiles == 1 ? "" : "s", bn, g->in->shape->seqlen);
    char splits[96] = "";
    if (split > 1)
        snprintf(splits, sizeof splits, ", the %d key tiles split over clusters of %d blocks", key_tiles, split);
    return fattn_verdict_set(
        v, 1, "%d rows per warp (%d strip%s of 16), %d key steps of 16, D=%d in %d chunk%s of %d%s", bm / nw,
        bm / nw / 16, bm / nw / 16 == 1 ? "" : "s", bn / 16, d, d / bk, d / bk == 1 ? "" : "s", bk, splits);
}

int fattn_gate_tiling(const fattn_gate_input *in, fattn_verdict *v)
{
    if (in->cfg->fam != &fattn_family_mma) { /* another family's gates, read for their tiling verdict */
        fattn_verdict all[FATTN_R_COUNT];
        memset(all, 0, sizeof all);
        all[FATTN_R_TILING].pass = -1;
        in->cfg->fam->gates_static(in, NULL, all);
        *v = all[FATTN_R_TILING];
        v->reason = FATTN_R_TILING;
        return v->pass == 1;
    }
    gate_ctx g = {.in = in};
    v->reason = FATTN_R_TILING;
    return gate_tiling(&g, v);
}

/* Alignment: every request of the kinds in `mask`, every lane. */
typedef struct align_scan {
    unsigned mask;
    unsigned long total, bad;
    unsigned long kind_total[FATTN_ACC_KINDS], kind_bad[FATTN_ACC_KINDS];
    int found;
    fattn_warp_req first;
    unsigned first_lane;
    int global_bad;
} align_scan;

static int align_visit(const fattn_warp_req *r, void *ctx)
{
    align_scan *a = ctx;
    if (!(a->mask & (1u << r->kind)))
        return 0;
    for (unsigned lane = 0; lane < 32; ++lane) {
        if (!r->active[lane])
            continue;
        int smem_bad = r->smem[lane] % r->width != 0;
        int glob_bad = r->has_global && r->global[lane] % r->width != 0;
        ++a->total;
        ++a->kind_total[r->kind];
        if (smem_bad || glob_bad) {
            ++a->bad;
            ++a->kind_bad[r->kind];
            if (!a->found) {
                a->found = 1;
                a->first = *r;
                a->first_lane = lane;
                a->global_bad = !smem_bad;
            }
        }
    }
    return 0;
}

static int report_alignment(const gate_ctx *g, fattn_verdict *v, const align_scan *a, const char *what)
{
    if (!a->bad)
        return fattn_verdict_set(v, 1,
                                 "all %lu %s addresses are aligned to their width (Q tile rows %u B, K/V rows %u B)",
                                 a->total, what, g->layout.q.row_bytes, g->layout.kv.row_bytes);
    const fattn_warp_req *r = &a->first;
    unsigned lane = a->first_lane;
    unsigned long long at = a->global_bad ? r->global[lane] : r->smem[lane];
    char counts[200];
    size_t n = 0;
    for (int k = 0; k < FATTN_ACC_KINDS; ++k)
        if (a->kind_total[k])
            n += (size_t)snprintf(counts + n, sizeof counts - n, "%s%s %lu/%lu", n ? ", " : "", fattn_access_name(k),
                                  a->kind_bad[k], a->kind_total[k]);
    int ldm = r->kind == FATTN_ACC_LDM_Q || r->kind == FATTN_ACC_LDM_K || r->kind == FATTN_ACC_LDM_V;
    char op[64];
    if (ldm)
        snprintf(op, sizeof op, "%s", fattn_access_name(r->kind));
    else
        snprintf(op, sizeof op, "%s (%s)", fattn_access_name(r->kind), fattn_access_op(&g->layout, r->kind));
    return fattn_verdict_set(v, 0,
                             "%s of row %u (warp %u, lane %u) at %s offset %llu: %llu mod %u = %llu; misaligned: %s "
                             "(Q tile rows %u B, K/V rows %u B)",
                             op, r->row[lane], r->warp, lane, a->global_bad ? "global" : "shared", at, at, r->width,
                             at % r->width, counts, g->layout.q.row_bytes, g->layout.kv.row_bytes);
}

static int gate_misaligned_cp_async(const gate_ctx *g, fattn_verdict *v)
{
    align_scan a = {.mask = 1u << FATTN_ACC_Q_COPY | 1u << FATTN_ACC_KV_COPY | 1u << FATTN_ACC_O_STAGE
                            | 1u << FATTN_ACC_O_OUT};
    fattn_access_each(&g->layout, align_visit, &a);
    return report_alignment(g, v, &a, "copy");
}

static int gate_misaligned_ldmatrix(const gate_ctx *g, fattn_verdict *v)
{
    align_scan a = {.mask = 1u << FATTN_ACC_LDM_Q | 1u << FATTN_ACC_LDM_K | 1u << FATTN_ACC_LDM_V};
    fattn_access_each(&g->layout, align_visit, &a);
    return report_alignment(g, v, &a, "ldmatrix row");
}

static int gate_smem_overflow(const gate_ctx *g, fattn_verdict *v)
{
    const fattn_layout *l = &g->layout;
    unsigned limit = g->in->lim->smem_limit;
    char part[128] = "";
    if (l->split_kv > 1)
        snprintf(part, sizeof part, "; partials for the cluster %u x %u B + %u x 8 B = %u B (the same region, reused)",
                 l->q.rows, l->part_row_bytes, l->q.rows, l->part_bytes);
    return fattn_verdict_set(v, l->total_bytes <= limit,
                             "Q tile %u x %u B = %u B + %u stage%s x K/V slot %u x %u B = %u B%s: %u B %s limit %u B",
                             l->q.rows, l->q.row_bytes, l->q.bytes, l->stages, l->stages == 1 ? "" : "s", l->kv.rows,
                             l->kv.row_bytes, l->stages * l->kv.bytes, part, l->total_bytes,
                             l->total_bytes <= limit ? "within" : "over", limit);
}

typedef struct bank_scan {
    unsigned worst[FATTN_ACC_KINDS];
} bank_scan;

static int bank_visit(const fattn_warp_req *r, void *ctx)
{
    bank_scan *b = ctx;
    unsigned ways = fattn_bank_ways(r->smem, r->active, 32, r->width, r->phase_lanes);
    if (ways > b->worst[r->kind])
        b->worst[r->kind] = ways;
    return 0;
}

void fattn_bank_model_ways(const fattn_layout *l, unsigned worst[FATTN_ACC_KINDS])
{
    bank_scan b = {{0}};
    fattn_access_each(l, bank_visit, &b);
    memcpy(worst, b.worst, sizeof b.worst);
}

static int gate_bank_conflicts(const gate_ctx *g, fattn_verdict *v)
{
    bank_scan b = {{0}};
    char list[256];
    size_t n = 0;
    int worst = 0;
    fattn_bank_model_ways(&g->layout, b.worst);
    for (int k = 0; k < FATTN_ACC_KINDS; ++k) {
        if (b.worst[k] > b.worst[worst])
            worst = k;
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s %u", n ? ", " : "", fattn_access_name(k), b.worst[k]);
    }
    unsigned max = g->in->lim->max_bank_ways;
    return fattn_verdict_set(v, b.worst[worst] <= max, "worst %u-way (%s, %s); ways per access: %s; limit %u",
                             b.worst[worst], fattn_access_name(worst), fattn_access_op(&g->layout, worst), list, max);
}

typedef struct coalesce_scan {
    double worst;
    unsigned used, touched;
    int kind;
} coalesce_scan;

static int coalesce_visit(const fattn_warp_req *r, void *ctx)
{
    coalesce_scan *c = ctx;
    if (r->kind != FATTN_ACC_Q_COPY && r->kind != FATTN_ACC_KV_COPY)
        return 0;
    unsigned long long sectors[128];
    unsigned nsec = 0, used = 0;
    for (unsigned lane = 0; lane < 32; ++lane) {
        if (!r->active[lane])
            continue;
        used += r->width;
        for (unsigned long long s = r->global[lane] / 32; s <= (r->global[lane] + r->width - 1) / 32; ++s) {
            unsigned k = 0;
            while (k < nsec && sectors[k] != s)
                ++k;
            if (k == nsec && nsec < 128)
                sectors[nsec++] = s;
        }
    }
    double eff = (double)used / (nsec * 32.0);
    if (eff < c->worst) {
        c->worst = eff;
        c->used = used;
        c->touched = nsec * 32;
        c->kind = r->kind;
    }
    return 0;
}

static int gate_coalescing(const gate_ctx *g, fattn_verdict *v)
{
    coalesce_scan c = {.worst = 2.0};
    fattn_access_each(&g->layout, coalesce_visit, &c);
    double min = g->in->lim->min_coalescing;
    return fattn_verdict_set(v, c.worst >= min,
                             "worst warp load (%s, %s): %u bytes used of %u bytes in 32-byte sectors = "
                             "%.1f%%; limit %.1f%%",
                             fattn_access_name(c.kind), fattn_access_op(&g->layout, c.kind), c.used, c.touched,
                             100.0 * c.worst, 100.0 * min);
}

typedef int (*gate_fn)(const gate_ctx *g, fattn_verdict *v);

static const struct {
    int reason;
    gate_fn fn;
    int needs_tiling;
} static_gates[] = {
    {FATTN_R_DEVICE_MEMORY, gate_device_memory, 0},
    {FATTN_R_TILING, gate_tiling, 0},
    {FATTN_R_MISALIGNED_CP_ASYNC, gate_misaligned_cp_async, 1},
    {FATTN_R_MISALIGNED_LDMATRIX, gate_misaligned_ldmatrix, 1},
    {FATTN_R_SMEM_OVERFLOW, gate_smem_overflow, 1},
    {FATTN_R_BANK_CONFLICTS, gate_bank_conflicts, 1},
    {FATTN_R_COALESCING, gate_coalescing, 1},
};

int fattn_gates_static(const fattn_gate_input *in, fattn_verdict *first, fattn_verdict all[FATTN_R_COUNT])
{
    return in->cfg->fam->gates_static(in, first, all);
}

int fattn_mma_gates_static(const fattn_gate_input *in, fattn_verdict *first, fattn_verdict all[FATTN_R_COUNT])
{
    gate_ctx g = {.in = in};
    int failed = FATTN_R_NONE, tiling_ok = 1;
    for (size_t i = 0; i < sizeof static_gates / sizeof static_gates[0]; ++i) {
        fattn_verdict local, *v = all ? &all[static_gates[i].reason] : &local;
        v->reason = static_gates[i].reason;
        if (static_gates[i].needs_tiling && !tiling_ok) {
            fattn_verdict_set(v, -1, "not evaluated: the tiling gate failed");
            continue;
        }
        int pass = static_gates[i].fn(&g, v);
        if (static_gates[i].reason != FATTN_R_TILING)
            pass = fattn_gate_apply_skip(in->lim, static_gates[i].reason, v);
        if (static_gates[i].reason == FATTN_R_TILING && (tiling_ok = pass))
            fattn_layout_init(&g.layout, in->cfg, in->shape->head_dim);
        if (!pass && !failed) {
            failed = static_gates[i].reason;
            if (first)
                *first = *v;
            if (!all)
                break;
        }
    }
    return failed;
}

void fattn_gates_space(const fattn_space *space, const fattn_filter *filter, const fattn_shape *shape,
                       const fattn_arch *arch, const fattn_gate_limits *lim, fattn_space_verdicts *out)
{
    memset(out, 0, sizeof *out);
    out->n = space->count;
    out->v = fattn_xcalloc(space->count ? space->count : 1, sizeof *out->v);
    out->survivors = fattn_xcalloc(space->count ? space->count : 1, sizeof *out->survivors);
    for (size_t i = 0; i < space->count; ++i) {
        fattn_config c;
        fattn_space_config(space, i, &c);
        if (filter && !fattn_filter_match(filter, &c)) {
            out->v[i].reason = -1;
            continue;
        }
        fattn_gate_input in = {&c, shape, arch, lim};
        int r = fattn_gates_static(&in, &out->v[i], NULL);
        out->v[i].reason = r;
        ++out->considered;
        ++out->counts[r];
        if (r == FATTN_R_NONE)
            out->survivors[out->nsurvivors++] = i;
    }
}

int fattn_space_verdicts_reject(fattn_space_verdicts *sv, size_t i, int reason, const char *detail)
{
    if (i >= sv->n || sv->v[i].reason != FATTN_R_NONE)
        return 0;
    size_t k = 0;
    for (size_t j = 0; j < sv->nsurvivors; ++j)
        if (sv->survivors[j] != i)
            sv->survivors[k++] = sv->survivors[j];
    sv->nsurvivors = k;
    sv->v[i].reason = reason;
    sv->v[i].pass = 0;
    snprintf(sv->v[i].detail, sizeof sv->v[i].detail, "%s", detail);
    --sv->counts[FATTN_R_NONE];
    ++sv->counts[reason];
    return 1;
}

void fattn_space_verdicts_release(fattn_space_verdicts *sv)
{
    free(sv->v);
    free(sv->survivors);
    memset(sv, 0, sizeof *sv);
}
