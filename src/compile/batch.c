/*
 * batch.c - the compile batch: cache, pool, post-compile gates.
 */
#include "compile/batch.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compile/pool.h"
#include "util/err.h"
#include "util/misc.h"

/* What a compile reads, the compiler's own copy: a job abandoned at a
 * deadline may run on after the caller's context is gone; the last holder
 * frees it. */
typedef struct inputs {
    fattn_kernel_src src;
    char *include;
    fattn_shape shape;
    const fattn_arch *arch;
    atomic_int refs;
} inputs;

static inputs *inputs_new(const fattn_compile_ctx *ctx)
{
    inputs *in = fattn_xcalloc(1, sizeof *in);
    fattn_kernel_src_copy(ctx->src, &in->src);
    in->include = ctx->cuda_include ? fattn_xstrdup(ctx->cuda_include) : NULL;
    in->shape = *ctx->shape;
    in->arch = ctx->arch;
    atomic_init(&in->refs, 1);
    return in;
}

static void inputs_release(inputs *in)
{
    if (atomic_fetch_sub(&in->refs, 1) == 1) {
        fattn_kernel_src_release(&in->src);
        free(in->include);
        free(in);
    }
}

/* A queued compile: the result is built in `work` and moved to the caller's
 * item when taken back. */
typedef struct job {
    inputs *in;
    fattn_compile_item *dest;
    fattn_compile_item work;
} job;

/* Test only: $FATTN_TEST_COMPILE_JITTER=SEED,MS delays each compile by a
 * pseudo-random 0..MS milliseconds drawn from SEED and the cache key, so
 * that the order compiles finish in changes with SEED (tests/cli/seed.sh). */
static void jitter(const fattn_compile_item *it)
{
    const char *env = getenv("FATTN_TEST_COMPILE_JITTER");
    unsigned long long seed, ms;
    if (!env || sscanf(env, "%llu,%llu", &seed, &ms) != 2 || !ms || ms > 10000)
        return;
    uint64_t h = 1469598103934665603ull ^ seed;
    for (const char *p = it->cache_key; *p; ++p)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    usleep((useconds_t)(h % (ms + 1)) * 1000u);
}

/* NVRTC and the resource reader on one item; on a worker, nothing shared. */
static void run_compile(const fattn_kernel_src *src, const char *include, const fattn_arch *arch,
                        const fattn_shape *shape, fattn_compile_item *it)
{
    fattn_options o;
    fattn_nvrtc_result r;
    fattn_error_set_quiet_thread(1);
    jitter(it);
    fattn_options_build(&o, &it->cfg, shape->head_dim, shape->causal, arch, include);
    if (fattn_nvrtc_compile(src, &o, 0, &r)) {
        it->env_error = 1;
        snprintf(it->env_msg, sizeof it->env_msg, "%s", fattn_last_error());
        fattn_options_release(&o);
        return;
    }
    fattn_cache_entry *e = &it->entry;
    snprintf(e->key, sizeof e->key, "%s", it->cache_key);
    e->family = fattn_xstrdup(it->cfg.fam->name);
    e->kernel_hash = fattn_xstrdup(src->hash);
    e->arch = fattn_xstrdup(arch->name);
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
        && fattn_resources_read(e->log, e->cubin, e->cubin_size, it->cfg.fam->kernel_name, &e->res, it->env_msg,
                                sizeof it->env_msg)) {
        it->env_error = 1;
        return;
    }
    e->res.ok = e->ok;
    e->res.log = e->log;
}

static void compile_job(void *arg)
{
    job *j = arg;
    run_compile(&j->in->src, j->in->include, j->in->arch, &j->in->shape, &j->work);
}

/* A job nobody takes back (cancelled, or abandoned: then on a worker). */
static void drop_job(void *arg)
{
    job *j = arg;
    fattn_compile_item_release(&j->work);
    inputs_release(j->in);
    free(j);
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
    set_key(ctx, item);
    int was = fattn_error_set_quiet_thread(1); /* run_compile quiets its thread */
    run_compile(ctx->src, ctx->cuda_include, ctx->arch, ctx->shape, item);
    fattn_error_set_quiet_thread(was);
    if (!item->env_error)
        apply_gates(ctx, item);
}

struct fattn_compiler {
    const fattn_compile_ctx *ctx;
    inputs *in;
    fattn_pool *pool;
    fattn_compile_item **ready; /* cache hits, not yet taken */
    int nready, cap;
    int queued; /* on the pool */
};

fattn_compiler *fattn_compiler_open(const fattn_compile_ctx *ctx)
{
    fattn_compiler *c = fattn_xcalloc(1, sizeof *c);
    c->ctx = ctx;
    c->in = inputs_new(ctx);
    return c;
}

int fattn_compiler_submit(fattn_compiler *c, fattn_compile_item *it)
{
    set_key(c->ctx, it);
    int hit = c->ctx->cache.arg ? c->ctx->cache.get(c->ctx->cache.arg, it->cache_key, &it->entry) : 0;
    if (hit < 0)
        return FATTN_EFAIL;
    if (hit) {
        it->cache_hit = 1;
        /* The cache keeps the resources it has columns for; the setmaxnreg
         * pool is read again from the cached cubin (nothing else is). */
        if (it->entry.ok && it->entry.cubin
            && fattn_resources_nreg_pool(it->entry.cubin, it->entry.cubin_size, &it->entry.res.nreg_pool, it->env_msg,
                                         sizeof it->env_msg))
            it->env_error = 1;
        if (c->nready == c->cap) {
            c->cap = c->cap ? 2 * c->cap : 16;
            c->ready = fattn_xrealloc(c->ready, (size_t)c->cap * sizeof *c->ready);
        }
        c->ready[c->nready++] = it;
        return FATTN_OK;
    }
    if (!c->pool)
        c->pool = fattn_pool_create(c->ctx->jobs);
    job *j = fattn_xcalloc(1, sizeof *j);
    j->in = c->in;
    atomic_fetch_add(&c->in->refs, 1);
    j->dest = it;
    j->work = *it; /* its configuration and key; the entry is filled there */
    memset(&j->work.entry, 0, sizeof j->work.entry);
    fattn_pool_submit(c->pool, compile_job, j);
    ++c->queued;
    return FATTN_OK;
}

/* A finished job's result moved into the caller's item, stored in the
 * cache (*rc set to FATTN_EFAIL when that fails). */
static fattn_compile_item *take(fattn_compiler *c, job *j, int *rc)
{
    fattn_compile_item *it = j->dest;
    --c->queued;
    *it = j->work;
    inputs_release(j->in);
    free(j);
    if (!it->env_error && c->ctx->cache.arg && c->ctx->cache.put(c->ctx->cache.arg, &it->entry))
        *rc = FATTN_EFAIL;
    return it;
}

fattn_compile_item *fattn_compiler_next(fattn_compiler *c, int *rc)
{
    return fattn_compiler_next_until(c, 0, rc, NULL);
}

fattn_compile_item *fattn_compiler_next_until(fattn_compiler *c, double deadline_ms, int *rc, int *timed_out)
{
    fattn_compile_item *it = NULL;
    if (timed_out)
        *timed_out = 0;
    if (c->nready) {
        it = c->ready[0];
        memmove(c->ready, c->ready + 1, (size_t)--c->nready * sizeof *c->ready);
    } else if (c->queued) {
        job *j = fattn_pool_next_until(c->pool, deadline_ms, timed_out);
        if (!j)
            return NULL;
        it = take(c, j, rc);
    } else {
        return NULL;
    }
    if (!it->env_error)
        apply_gates(c->ctx, it);
    return it;
}

int fattn_compiler_pending(const fattn_compiler *c)
{
    return c->nready + c->queued;
}

int fattn_compiler_cancel(fattn_compiler *c)
{
    int n = c->nready;
    c->nready = 0;
    if (c->pool) {
        int dropped = fattn_pool_cancel(c->pool, drop_job);
        c->queued -= dropped;
        n += dropped;
    }
    return n;
}

static void compiler_free(fattn_compiler **cp)
{
    fattn_compiler *c = *cp;
    inputs_release(c->in);
    free(c->ready);
    free(c);
    *cp = NULL;
}

void fattn_compiler_close(fattn_compiler **cp)
{
    fattn_compiler *c = *cp;
    if (!c)
        return;
    fattn_compiler_cancel(c);
    while (c->queued) {
        job *j = fattn_pool_next(c->pool);
        if (!j)
            break;
        --c->queued;
        drop_job(j);
    }
    fattn_pool_free(&c->pool);
    compiler_free(cp);
}

int fattn_compiler_abandon(fattn_compiler **cp, int *rc)
{
    fattn_compiler *c = *cp;
    if (!c)
        return 0;
    c->nready = 0;
    int n = 0;
    if (c->pool) {
        /* What has finished is kept (in the cache); the rest is given up. */
        job *j;
        int late;
        while (c->queued && (j = fattn_pool_next_until(c->pool, fattn_now_ms(), &late))) {
            fattn_compile_item *it = take(c, j, rc);
            fattn_compile_item_release(it);
        }
        n = c->queued;
        fattn_pool_abandon(&c->pool, drop_job);
    }
    compiler_free(cp);
    return n;
}

int fattn_compiles_abandoned(void)
{
    return fattn_pool_abandoned();
}

void fattn_compiles_wait_abandoned(void)
{
    fattn_pool_wait_abandoned();
}

int fattn_compile_batch(const fattn_compile_ctx *ctx, fattn_compile_item *items, int n, fattn_batch_stats *st)
{
    int rc = FATTN_OK;
    fattn_compiler *c = fattn_compiler_open(ctx);
    memset(st, 0, sizeof *st);
    st->total = n;
    for (int i = 0; i < n && !rc && !(ctx->interrupted && *ctx->interrupted); ++i)
        rc = fattn_compiler_submit(c, &items[i]);
    fattn_compile_item *it;
    while ((it = fattn_compiler_next(c, &rc))) {
        ++st->finished;
        if (it->env_error)
            ++st->env_errors;
        else if (it->cache_hit)
            ++st->cache_hits;
        else
            ++st->compiled;
        if (!rc && ctx->done)
            rc = ctx->done(ctx->done_arg, it);
        if (rc || (ctx->interrupted && *ctx->interrupted))
            fattn_compiler_cancel(c);
    }
    st->interrupted = ctx->interrupted && *ctx->interrupted;
    fattn_compiler_close(&c);
    return rc;
}

void fattn_compile_item_release(fattn_compile_item *item)
{
    fattn_cache_entry_release(&item->entry);
}
