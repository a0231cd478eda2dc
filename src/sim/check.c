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
    case FATTN_SIMK_RACE_RAW:
    case FATTN_SIMK_RACE_WAR:
    case FATTN_SIMK_RACE_WAW: return "put a __syncthreads (a cluster barrier across blocks) between the two accesses";
    case FATTN_SIMK_ASYNC_UNWAITED:
        return "wait for the cp.async group (cp.async.wait_group) and then __syncthreads before reading";
    case FATTN_SIMK_UNINIT_READ: return "write (or zero-fill) every shared byte before it is read";
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

static void fill(uint16_t *x, size_t n, uint64_t seed, unsigned tensor)
{
    for (size_t i = 0; i < n; ++i)
        x[i] = fattn_float_to_half(fattn_input_value(seed, tensor, i));
}

int fattn_sim_check_config(const fattn_kernel_src *src, const fattn_config *cfg, const fattn_shape *shape,
                           uint64_t seed, const char *cache_dir, fattn_sim_check *out)
{
    memset(out, 0, sizeof *out);
    fattn_sim_kernel k;
    int rc = fattn_sim_kernel_build(src, cfg, shape->head_dim, shape->causal, cache_dir, &k, out->detail,
                                    sizeof out->detail);
    out->cache_hit = k.cache_hit;
    out->compile_ms = k.compile_ms;
    if (rc < 0)
        return rc;
    if (rc == 1) {
        snprintf(out->verdict, sizeof out->verdict, "%s", FATTN_SIMV_HOST_COMPILE);
        return FATTN_OK;
    }
    out->smem_bytes = k.smem_bytes, out->threads = k.threads, out->cluster = k.cluster;

    const int bm = cfg->v[FATTN_P_BLOCK_M];
    const size_t n = (size_t)shape->batch * shape->heads * shape->seqlen * shape->head_dim;
    uint16_t *q = malloc(n * 2), *kk = malloc(n * 2), *v = malloc(n * 2), *o = malloc(n * 2);
    float *ref = malloc(n * sizeof *ref);
    double *row = malloc((size_t)shape->head_dim * sizeof *row);
    if (!q || !kk || !v || !o || !ref || !row) {
        rc = fattn_error(FATTN_EFAIL, "simulator: out of memory for the shape's tensors");
        goto out;
    }
    fill(q, n, seed, 0), fill(kk, n, seed, 1), fill(v, n, seed, 2);
    for (size_t i = 0; i < n; ++i)
        o[i] = FATTN_HALF_POISON;
    fattn_sim_launch l = {
        .entry = k.entry,
        .api_slot = k.api_slot,
        .self_slot = k.self_slot,
        .grid = {(unsigned)((shape->seqlen + bm - 1) / bm) * k.cluster, (unsigned)shape->heads, (unsigned)shape->batch},
        .threads = k.threads,
        .smem_bytes = k.smem_bytes,
        .cluster = k.cluster,
        .batch = shape->batch,
        .heads = shape->heads,
        .seqlen = shape->seqlen,
        .head_dim = shape->head_dim,
        .scale = (float)(1.0 / sqrt((double)shape->head_dim)),
        .q = q,
        .k = kk,
        .v = v,
        .o = o,
    };
    const double t0 = fattn_now_ms();
    rc = fattn_sim_run(&l, &out->rep);
    out->run_ms = fattn_now_ms() - t0;
    if (rc)
        goto out;
    out->ran = 1;

    const fattn_sim_finding *f = fattn_sim_report_worst(&out->rep);
    if (f) {
        snprintf(out->verdict, sizeof out->verdict, "%s", fattn_sim_kind_name(f->kind));
        snprintf(out->detail, sizeof out->detail, "%s", f->detail);
        snprintf(out->fix, sizeof out->fix, "%s", fix_of(f->kind));
        goto out;
    }
    for (int b = 0; b < shape->batch; ++b)
        for (int h = 0; h < shape->heads; ++h)
            for (int r = 0; r < shape->seqlen; ++r) {
                fattn_cpu_attention_row(shape, seed, b, h, r, row);
                float *dst = ref + (((size_t)b * shape->heads + h) * shape->seqlen + r) * shape->head_dim;
                for (int d = 0; d < shape->head_dim; ++d)
                    dst[d] = (float)row[d];
            }
    fattn_numerics_compare(o, ref, n, FATTN_DEFAULT_ATOL, FATTN_DEFAULT_RTOL, &out->num);
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
    free(q), free(kk), free(v), free(o), free(ref), free(row);
    fattn_sim_kernel_close(&k);
    return rc;
}
