/*
 * batch.c - the compile batch: cache, pool, post-compile gates.
 */
#include "compile/batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/pool.h"
#include "util/err.h"

typedef struct job {
    const fattn_compile_ctx *ctx;
    fattn_compile_item *item;
} job;

/* Runs on a worker: NVRTC and the resource reader, nothing shared. */
static void compile_job(void *arg)
{
    job *j = arg;
    const fattn_compile_ctx *ctx = j->ctx;
    fattn_compile_item *it = j->item;
    fattn_options o;
    fattn_nvrtc_result r;
    fattn_error_set_quiet_thread(1);
    fattn_options_build(&o, &it->cfg, ctx->shape->head_dim, ctx->shape->causal, ctx->arch, ctx->cuda_include);
    if (fattn_nvrtc_compile(ctx->src, &o, 0, &r)) {
        it->env_error = 1;
        snprintf(it->env_msg, sizeof it->env_msg, "%s", fattn_last_error());
        fattn_options_release(&o);
        return;
    }
    fattn_cache_entry *e = &it->entry;
    snprintf(e->key, sizeof e->key, "%s", it->cache_key);
    e->kernel_hash = fattn_xstrdup(ctx->src->hash);
    e->arch = fattn_xstrdup(ctx->arch->name);
    e->options = fattn_xstrdup(o.key);
    e->nvrtc_version = fattn_xstrdup(fattn_nvrtc_version());
    e->ok = r.ok;
    e->log = r.log;
    e->cubin = r.cubin;
    e->cubin_size = r.cubin_size;
    e->compile_ms = r.ms;
    r.log = NULL, r.cubin = NULL;
    fattn_nvrtc_result_release(&r);
    fattn_options_release(&o);
    if (e->ok
        && fattn_resources_read(e->log, e->cubin, e->cubin_size, FATTN_KERNEL_NAME, &e->res, it->env_msg,
                                sizeof it->env_msg)) {
        it->env_error = 1;
        return;
    }
    e->res.ok = e->ok;
    e->res.log = e->log;
}

static void apply_gates(const fattn_compile_ctx *ctx, fattn_compile_item *it)
{
    fattn_gate_input in = {&it->cfg, ctx->shape, ctx->arch, ctx->lim};
    fattn_verdict all[FATTN_R_COUNT];
    it->entry.res.log = it->entry.log;
    it->reason = fattn_gates_compiled(&in, &it->entry.res, &it->occ, NULL, all);
    it->has_occ = it->entry.ok;
    it->verdict = all[it->reason ? it->reason : FATTN_R_LOW_OCCUPANCY];
}

static void set_key(const fattn_compile_ctx *ctx, fattn_compile_item *it)
{
    fattn_options o;
    fattn_options_build(&o, &it->cfg, ctx->shape->head_dim, ctx->shape->causal, ctx->arch, ctx->cuda_include);
    fattn_cache_key(ctx->src->hash, ctx->arch->name, o.key, fattn_nvrtc_version(), it->cache_key);
    fattn_options_release(&o);
}

void fattn_compile_one(const fattn_compile_ctx *ctx, fattn_compile_item *item)
{
    job j = {ctx, item};
    set_key(ctx, item);
    compile_job(&j);
    fattn_error_set_quiet_thread(0);
    if (!item->env_error)
        apply_gates(ctx, item);
}

static int finish(const fattn_compile_ctx *ctx, fattn_compile_item *it, fattn_batch_stats *st)
{
    if (!it->env_error) {
        if (!it->cache_hit && ctx->store && fattn_store_cache_put(ctx->store, &it->entry))
            return FATTN_EFAIL;
        apply_gates(ctx, it);
    }
    ++st->finished;
    if (it->env_error)
        ++st->env_errors;
    else if (it->cache_hit)
        ++st->cache_hits;
    else
        ++st->compiled;
    return ctx->done ? ctx->done(ctx->done_arg, it) : 0;
}

int fattn_compile_batch(const fattn_compile_ctx *ctx, fattn_compile_item *items, int n, fattn_batch_stats *st)
{
    int rc = FATTN_OK, queued = 0;
    memset(st, 0, sizeof *st);
    st->total = n;
    fattn_pool *pool = NULL;
    job *jobs = fattn_xcalloc((size_t)(n ? n : 1), sizeof *jobs);

    for (int i = 0; i < n && !rc; ++i) {
        if (ctx->interrupted && *ctx->interrupted)
            break;
        fattn_compile_item *it = &items[i];
        set_key(ctx, it);
        int hit = ctx->store ? fattn_store_cache_get(ctx->store, it->cache_key, &it->entry) : 0;
        if (hit < 0) {
            rc = FATTN_EFAIL;
            break;
        }
        if (hit) {
            it->cache_hit = 1;
            rc = finish(ctx, it, st);
            continue;
        }
        if (!pool)
            pool = fattn_pool_create(ctx->jobs);
        jobs[i].ctx = ctx;
        jobs[i].item = it;
        fattn_pool_submit(pool, compile_job, &jobs[i]);
        ++queued;
    }
    while (pool && queued) {
        if (rc || (ctx->interrupted && *ctx->interrupted))
            queued -= fattn_pool_cancel(pool, NULL);
        job *j = fattn_pool_next(pool);
        if (!j)
            break;
        --queued;
        if (!rc)
            rc = finish(ctx, j->item, st);
    }
    st->interrupted = ctx->interrupted && *ctx->interrupted;
    fattn_pool_free(&pool);
    free(jobs);
    return rc;
}

void fattn_compile_item_release(fattn_compile_item *item)
{
    fattn_cache_entry_release(&item->entry);
}
