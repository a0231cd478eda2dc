/*
 * check.c - a configuration through the simulator, with its verdict.
 */
#include "sim/check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/kernel.h"
#include "util/err.h"
#include "util/misc.h"

/* What to change for a finding of each kind. */
static const char *fix_of(int kind)
{
    switch (kind) {
    case FATTN_SIMK_MISALIGNED:
        return "keep every shared-memory row a multiple of 16 bytes (SWIZZLE=1, or PAD_BYTES a multiple of 16) "
               "and vector accesses on their own width";
    case FATTN_SIMK_SHARED_OOB: return "make the shared-memory size (FATTN_SMEM_BYTES) cover the layout's every row";
    case FATTN_SIMK_GLOBAL_OOB: return "guard every global row index against the sequence length (tails)";
    case FATTN_SIMK_INPUT_WRITE: return "write only O; Q, K and V are inputs";
    case FATTN_SIMK_INVALID_OPERAND:
        return "give the instruction what the PTX ISA says it takes (an initialized mbarrier, one of the launch's "
               "tensor maps, a barrier id 1-15 with a count a multiple of 32, a descriptor with base offset 0)";
    case FATTN_SIMK_RACE_RAW:
    case FATTN_SIMK_RACE_WAR:
    case FATTN_SIMK_RACE_WAW: return "put a __syncthreads (a cluster barrier across blocks) between the two accesses";
    case FATTN_SIMK_ASYNC_UNWAITED:
        return "wait for the cp.async group (cp.async.wait_group) and then __syncthreads before reading";
    case FATTN_SIMK_UNINIT_READ: return "write (or zero-fill) every shared byte before it is read";
    case FATTN_SIMK_TMA_UNWAITED:
        return "wait on the mbarrier phase that completes the TMA load (its parity, its expect_tx counting the whole "
               "box) before reading its destination";
    case FATTN_SIMK_PROXY_UNFENCED:
        return "fence.proxy.async after the generic writes, before the barrier that orders them before the wgmma or "
               "TMA store";
    case FATTN_SIMK_WGMMA_UNFENCED: return "wgmma.fence before the first wgmma after the registers were touched";
    case FATTN_SIMK_WGMMA_EARLY:
        return "touch the accumulators only after the wgmma.wait_group that retires their wgmma, and name them in it";
    case FATTN_SIMK_WGMMA_UNORDERED:
        return "take the turn (its named barrier) before a warpgroup's wgmmas and pass it on after the last of them";
    case FATTN_SIMK_OUTPUT_REWRITTEN:
        return "store each output element once: a schedule's tile order must visit every tile exactly once";
    case FATTN_SIMK_CLUSTER_EXITED:
        return "a cluster barrier before any block of the cluster exits, after the last arrival or multicast into "
               "another block";
    case FATTN_SIMK_DIVERGENT:
    case FATTN_SIMK_DEADLOCK:
        return "reach every barrier and warp collective with the whole block (warp) at the same line";
    default: return "";
    }
}

int fattn_sim_check_passed(const fattn_sim_check *c)
{
    return !strcmp(c->verdict, FATTN_SIMV_OK);
}

static void fill(uint16_t *x, size_t n, uint64_t seed, int set, unsigned tensor)
{
    for (size_t i = 0; i < n; ++i)
        x[i] = fattn_float_to_half(fattn_input_value(seed, set, tensor, i));
}

/* The tensors of one check and the rows it compares. */
typedef struct bufs {
    size_t n, nrows;         /* elements of a tensor; rows compared */
    uint16_t *q, *k, *v, *o; /* n each */
    uint16_t *o_rows;        /* nrows * D: the compared rows' output */
    float *ref;              /* nrows * D */
    size_t *rows;            /* the compared rows' index (b, h, s) in the tensor */
    unsigned *clusters;      /* the row blocks' clusters along x (NULL: all) */
    double *row;             /* D */
} bufs;

/* The rows of `in`'s row blocks (all rows without them), in tensor order. */
static size_t pick_rows(const fattn_shape *shape, int bm, const fattn_sim_inputs *in, size_t *rows)
{
    size_t k = 0;
    for (size_t bh = 0; bh < (size_t)shape->batch * (size_t)shape->heads; ++bh)
        for (int r = 0; r < shape->seqlen; ++r) {
            int take = !in->row_blocks;
            for (size_t i = 0; !take && i < in->nrow_blocks; ++i)
                take = (unsigned)(r / bm) == in->row_blocks[i];
            if (take)
                rows[k++] = (size_t)bh * (size_t)shape->seqlen + (size_t)r;
        }
    return k;
}

/* One launch on input set `set`: out->rep from the launch, *num from the
 * compared rows (when it ran without findings). Returns 0, or FATTN_EFAIL. */
static int run_set(const fattn_sim_kernel *k, const fattn_config *cfg, const fattn_launch *fl, const fattn_shape *shape,
                   const fattn_sim_inputs *in, int set, bufs *b, fattn_sim_check *out, fattn_numerics *num)
{
    const int d = shape->head_dim;
    fill(b->q, b->n, in->seed, set, 0), fill(b->k, b->n, in->seed, set, 1), fill(b->v, b->n, in->seed, set, 2);
    for (size_t i = 0; i < b->n; ++i)
        b->o[i] = FATTN_HALF_POISON;
    /* The family's tensor maps, on this set's buffers. */
    fattn_tmap maps[FATTN_MAX_ARGS];
    unsigned nmaps = 0;
    const uint16_t *tensor[4] = {b->q, b->k, b->v, b->o};
    for (int i = 0; i < fl->nargs; ++i) {
        const fattn_arg *a = &fl->args[i];
        if (a->kind == FATTN_ARG_TMAP)
            fattn_tmap_attention(&maps[nmaps++], tensor[a->tensor & 3], shape->batch, shape->heads, shape->seqlen, d,
                                 a->box_rows, a->box_cols, fattn_tmap_swizzle(a->swizzle));
    }
    fattn_sim_launch l = {
        .args_entry = k->args_entry,
        .args = fl->args,
        .nargs = fl->nargs,
        .workspace = (size_t)fl->workspace,
        .tmaps = maps,
        .ntmaps = nmaps,
        .api_slot = k->api_slot,
        .sm90 = k->sm90,
        .wgmma_turns = k->wgmma_turns,
        .self_slot = k->self_slot,
        .grid = {fl->grid[0], fl->grid[1], fl->grid[2]},
        .threads = k->threads,
        .smem_bytes = k->smem_bytes,
        .cluster = k->cluster,
        .batch = shape->batch,
        .heads = shape->heads,
        .seqlen = shape->seqlen,
        .head_dim = d,
        .scale = (float)(1.0 / sqrt((double)d)),
        .q = b->q,
        .k = b->k,
        .v = b->v,
        .o = b->o,
        .clusters_x = b->clusters,
        .nclusters_x = in->row_blocks ? in->nrow_blocks : 0,
    };
    const double t0 = fattn_now_ms();
    int rc = fattn_sim_run(&l, &out->rep);
    out->run_ms += fattn_now_ms() - t0;
    if (rc)
        return rc;
    out->ran = 1;
    if (fattn_sim_report_worst(&out->rep))
        return FATTN_OK;
    for (size_t i = 0; i < b->nrows; ++i) {
        size_t bh = b->rows[i] / (size_t)shape->seqlen;
        int r = (int)(b->rows[i] % (size_t)shape->seqlen);
        if (cfg->fam->reference_row)
            cfg->fam->reference_row(shape, b->q, b->k, b->v, b->rows[i], b->row);
        else
            fattn_cpu_attention_row(shape, in->seed, set, (int)(bh / (size_t)shape->heads),
                                    (int)(bh % (size_t)shape->heads), r, b->row);
        for (int c = 0; c < d; ++c) {
            b->ref[i * (size_t)d + (size_t)c] = (float)b->row[c];
            b->o_rows[i * (size_t)d + (size_t)c] = b->o[b->rows[i] * (size_t)d + (size_t)c];
        }
    }
    const fattn_tolerance def = fattn_tolerance_default();
    fattn_numerics_compare(b->o_rows, b->ref, b->nrows * (size_t)d, in->tol ? in->tol : &def, num);
    num->set = set;
    /* The worst element's index in the whole tensor, for the description. */
    num->worst = b->rows[num->worst / (size_t)d] * (size_t)d + num->worst % (size_t)d;
    return FATTN_OK;
}

int fattn_sim_check_config(const fattn_kernel_src *src, const fattn_config *cfg, const fattn_shape *shape,
                           const fattn_sim_inputs *in, const char *cache_dir, fattn_sim_check *out)
{
    memset(out, 0, sizeof *out);
    for (int set = 0; set < FATTN_INPUT_SETS; ++set)
        out->rel_l2[set] = -1;
    if (in->row_blocks && !in->nrow_blocks)
        return fattn_error(FATTN_EFAIL, "simulator: an empty list of row blocks to simulate");
    fattn_sim_kernel k;
    int rc = fattn_sim_kernel_build(src, cfg, shape->head_dim, shape->causal, cache_dir, &k, out->detail,
                                    sizeof out->detail);
    out->cache_hit = k.cache_hit;
    out->cache_rebuilt = k.cache_rebuilt;
    out->compile_ms = k.compile_ms;
    if (rc < 0)
        return rc;
    if (rc == 1) {
        snprintf(out->verdict, sizeof out->verdict, "%s", FATTN_SIMV_HOST_COMPILE);
        return FATTN_OK;
    }
    out->smem_bytes = k.smem_bytes, out->threads = k.threads, out->cluster = k.cluster;
    fattn_launch fl; /* the family's launch: grid, parameters, row blocks */
    cfg->fam->launch(cfg, shape, FATTN_SIM_SMS, &fl);
    const int bm = (int)fl.rows_per_block;
    if (in->row_blocks && !bm) {
        fattn_sim_kernel_close(&k);
        return fattn_error(FATTN_EFAIL, "simulator: the %s family's launch has no row blocks to sample",
                           cfg->fam->name);
    }

    bufs b = {0};
    const size_t rows_all = (size_t)shape->batch * shape->heads * shape->seqlen;
    b.n = rows_all * (size_t)shape->head_dim;
    b.q = malloc(b.n * 2), b.k = malloc(b.n * 2), b.v = malloc(b.n * 2), b.o = malloc(b.n * 2);
    b.rows = malloc(rows_all * sizeof *b.rows);
    b.row = malloc((size_t)shape->head_dim * sizeof *b.row);
    if (!b.q || !b.k || !b.v || !b.o || !b.rows || !b.row) {
        rc = fattn_error(FATTN_EFAIL, "simulator: out of memory for the shape's tensors");
        goto out;
    }
    b.nrows = pick_rows(shape, bm, in, b.rows);
    if (!b.nrows) {
        rc = fattn_error(FATTN_EFAIL, "simulator: no row of the shape in the row blocks asked for");
        goto out;
    }
    if (in->row_blocks) {
        /* A kernel that runs a causal launch's last row block first (the
         * longest; the mma family's): cluster x holds row block blocks - 1 - x
         * there, x otherwise. */
        const unsigned blocks = (unsigned)((shape->seqlen + bm - 1) / bm);
        b.clusters = fattn_xmalloc((in->nrow_blocks ? in->nrow_blocks : 1) * sizeof *b.clusters);
        for (size_t i = 0; i < in->nrow_blocks; ++i)
            b.clusters[i] = fl.causal_last_first && shape->causal && in->row_blocks[i] < blocks
                                ? blocks - 1 - in->row_blocks[i]
                                : in->row_blocks[i];
    }
    b.o_rows = malloc((b.nrows ? b.nrows : 1) * (size_t)shape->head_dim * 2);
    b.ref = malloc((b.nrows ? b.nrows : 1) * (size_t)shape->head_dim * sizeof *b.ref);
    if (!b.o_rows || !b.ref) {
        rc = fattn_error(FATTN_EFAIL, "simulator: out of memory for the shape's tensors");
        goto out;
    }

    const fattn_numerics *worse = NULL;
    fattn_numerics each[FATTN_INPUT_SETS];
    for (int set = 0; set < FATTN_INPUT_SETS; ++set) {
        if (in->sets && !(in->sets & 1u << set))
            continue;
        if ((rc = run_set(&k, cfg, &fl, shape, in, set, &b, out, &each[set])) != 0)
            goto out;
        const fattn_sim_finding *f = fattn_sim_report_worst(&out->rep);
        if (f) {
            snprintf(out->verdict, sizeof out->verdict, "%s", fattn_sim_kind_name(f->kind));
            snprintf(out->detail, sizeof out->detail, "%s%s", set ? "peaky inputs: " : "", f->detail);
            snprintf(out->fix, sizeof out->fix, "%s", fix_of(f->kind));
            goto out;
        }
        out->rel_l2[set] = each[set].rel_l2;
        worse = worse ? fattn_numerics_worse(worse, &each[set]) : &each[set];
        if (!fattn_numerics_ok(&each[set]))
            break;
    }
    if (!worse) {
        rc = fattn_error(FATTN_EFAIL, "simulator: no input set to check (sets 0x%x)", in->sets);
        goto out;
    }
    out->num = *worse;
    if (fattn_numerics_ok(&out->num)) {
        snprintf(out->verdict, sizeof out->verdict, "%s", FATTN_SIMV_OK);
        fattn_numerics_describe(&out->num, shape, out->detail, sizeof out->detail);
    } else {
        char what[400];
        fattn_numerics_describe(&out->num, shape, what, sizeof what);
        snprintf(out->verdict, sizeof out->verdict, "%s", FATTN_SIMV_NUMERICS);
        snprintf(out->detail, sizeof out->detail, "numerics: %s", what);
        snprintf(out->fix, sizeof out->fix,
                 "compare the fragment layouts (ldmatrix .trans for V) and the softmax "
                 "with the PTX ISA");
    }
out:
    free(b.q), free(b.k), free(b.v), free(b.o), free(b.o_rows), free(b.ref), free(b.rows), free(b.row);
    free(b.clusters);
    fattn_sim_kernel_close(&k);
    return rc;
}
