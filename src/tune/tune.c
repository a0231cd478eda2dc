/*
 * tune.c - the search loop.
 */
#include "tune/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/misc.h"

uint64_t fattn_numerics_seed(uint64_t study_seed, long long seq)
{
    fattn_rng r;
    fattn_rng_seed(&r, study_seed ^ (0x5851f42d4c957f2dull * (uint64_t)(seq + 1)));
    return fattn_rng_next(&r);
}

/* The time since t0 (ms), added to *total. */
static double spent(double t0, double *total)
{
    double d = fattn_now_ms() - t0;
    *total += d;
    return d;
}

static int store_trial(const fattn_tune_ctx *ctx, const fattn_trial_rec *r, long long *id, fattn_tune_progress *p)
{
    const double t0 = fattn_now_ms();
    int rc = fattn_store_begin(ctx->store);
    if (!rc
        && (fattn_store_trial_add(ctx->store, r, id)
            || fattn_store_study_time(ctx->store, ctx->study, ctx->spent_ms + fattn_now_ms() - ctx->t0_ms))) {
        fattn_store_rollback(ctx->store);
        rc = FATTN_EFAIL;
    }
    rc = rc ? rc : fattn_store_commit(ctx->store);
    spent(t0, &p->store_ms);
    return rc;
}

/* A trial record for a compiled item, before any evaluation. */
static void compiled_rec(const fattn_tune_ctx *ctx, fattn_compile_item *it, fattn_trial_rec *r)
{
    fattn_launch l; /* the family's model: its shared memory */
    it->cfg.fam->launch(&it->cfg, ctx->cc->shape, 0, &l);
    memset(r, 0, sizeof *r);
    r->study_id = ctx->study;
    r->seq = (*ctx->seq)++;
    r->cfg = &it->cfg;
    r->cache_key = it->env_error ? NULL : it->cache_key;
    r->cache_hit = it->cache_hit;
    r->compile_ms = it->env_error ? -1 : it->cache_hit ? 0 : it->entry.compile_ms;
    r->smem_model = l.smem;
    if (!it->env_error && it->entry.ok)
        r->res = &it->entry.res;
    r->has_occupancy = it->has_occ;
    r->occupancy = it->occ.occupancy;
    r->blocks_per_sm = it->occ.blocks_per_sm;
    r->occupancy_limiter = it->occ.limiter;
}

/* The longest single wait for a compile: a signal is seen within it. */
#define COMPILE_WAIT_SLICE_MS 250.0

static int stop_reason(const fattn_tune_ctx *ctx, const fattn_tune_progress *p)
{
    if (ctx->interrupted && *ctx->interrupted)
        return FATTN_TUNE_INTERRUPTED;
    if (ctx->max_trials > 0 && p->evaluated >= (size_t)ctx->max_trials)
        return FATTN_TUNE_TRIALS;
    if (ctx->deadline_ms > 0 && fattn_now_ms() + ctx->spent_ms >= ctx->deadline_ms)
        return FATTN_TUNE_BUDGET;
    return -1;
}

/* 1 when a trial proposed now would likely be recorded past the budget.
 * A proposal waits for the `pending` ones ahead of it, a `gap_ms` each (the
 * recent time between two records; 0 before the second), and takes at least
 * `svc_ms` itself (the recent compile plus evaluation of one trial: several
 * compiles running side by side end close together, so the gap alone says
 * too little); before any record, `lat_ms` is 0 and nothing holds it back. */
static int budget_full(const fattn_tune_ctx *ctx, double gap_ms, double svc_ms, double lat_ms, int pending)
{
    double need = gap_ms * (pending + 1) > svc_ms ? gap_ms * (pending + 1) : svc_ms;
    if (need < lat_ms && gap_ms == 0)
        need = lat_ms;
    return ctx->deadline_ms > 0 && need > 0 && fattn_now_ms() + ctx->spent_ms + need > ctx->deadline_ms;
}

static char (*sort_keys)[FATTN_KEY_MAX];

static int by_key(const void *a, const void *b)
{
    return strcmp(sort_keys[*(const size_t *)a], sort_keys[*(const size_t *)b]);
}

/* Tells the strategy and the progress what a resumed study holds. */
static void resume(const fattn_tune_ctx *ctx, const fattn_config *cands, size_t n, fattn_strategy *strat,
                   fattn_tune_progress *p)
{
    /* Candidates by key: keys[i] is candidate i's, order[] sorts them. */
    size_t *order = fattn_xcalloc(n ? n : 1, sizeof *order);
    char(*keys)[FATTN_KEY_MAX] = fattn_xcalloc(n ? n : 1, sizeof *keys);
    for (size_t i = 0; i < n; ++i) {
        order[i] = i;
        fattn_config_key(&cands[i], keys[i]);
    }
    sort_keys = keys;
    qsort(order, n, sizeof *order, by_key);
    for (size_t k = 0; k < ctx->nprior; ++k) {
        const fattn_tune_prior *t = &ctx->prior[k];
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (strcmp(keys[order[mid]], t->key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == n || strcmp(keys[order[lo]], t->key))
            continue; /* not a candidate: a static-gate rejection */
        strat->ops->observe(strat, order[lo], t->ok, t->ok ? t->timing.median_us : 0);
        ++p->tried;
        ++p->resumed;
        p->evaluated += t->evaluated != 0;
        p->ok += t->ok != 0;
        p->errors += t->error != 0;
        if (t->reason > 0 && t->reason < FATTN_R_COUNT)
            ++p->by_reason[t->reason];
        if (t->ok && (p->best_us == 0 || t->timing.median_us < p->best_us)) {
            p->best_us = t->timing.median_us;
            p->best = t->timing;
            p->best_trial = t->trial;
            snprintf(p->best_key, sizeof p->best_key, "%s", t->key);
        }
    }
    p->elapsed_ms = ctx->spent_ms;
    free(keys);
    free(order);
}

/* Submits candidate i's compile (its item afresh: it may have been compiled
 * ahead and released). */
static int submit(fattn_compiler *comp, fattn_compile_item *items, const fattn_config *cands, size_t i)
{
    memset(&items[i], 0, sizeof items[i]);
    items[i].cfg = cands[i];
    return fattn_compiler_submit(comp, &items[i]);
}

int fattn_tune_run(const fattn_tune_ctx *ctx, fattn_tune_progress *p, int *stop)
{
    const size_t n = ctx->sv->nsurvivors;
    fattn_config *cands = fattn_xcalloc(n ? n : 1, sizeof *cands);
    fattn_compile_item *items = fattn_xcalloc(n ? n : 1, sizeof *items);
    fattn_strategy *strat;
    fattn_compiler *comp = fattn_compiler_open(ctx->cc);
    int rc = FATTN_OK, pending = 0, exhausted = 0;
    /* Compiling ahead on the strategy's hints: SPEC_AHEAD a hinted candidate
     * compiling for the cache only, SPEC_CLAIMED one proposed meanwhile (its
     * compile then serves the proposal), SPEC_CACHED one compiled ahead (a
     * proposal finds it in the cache; never hinted again). */
    enum { SPEC_NONE, SPEC_AHEAD, SPEC_CLAIMED, SPEC_CACHED };
    unsigned char *spec = fattn_xcalloc(n ? n : 1, 1);
    size_t *hints = NULL, hint_cap = 0, nahead = 0; /* nahead: candidates AHEAD or CACHED, not proposed */
    /* Outcomes reach the store and the strategy in proposal order, whatever
     * order the compiles finish in (a cold cache, the pool's threads): the
     * proposals in flight, oldest first, and which of them have compiled. */
    size_t *proposed = fattn_xcalloc(n ? n : 1, sizeof *proposed), head = 0, tail = 0;
    unsigned char *compiled = fattn_xcalloc(n ? n : 1, 1);
    /* When each candidate was proposed, and the recent proposal-to-record
     * time: under a budget, no proposal is made that would end past it. */
    double *proposed_at = fattn_xcalloc(n ? n : 1, sizeof *proposed_at), lat_ms = 0, gap_ms = 0, last_ms = 0,
           svc_ms = 0;
    const int window = ctx->ahead > 0 ? ctx->ahead : 1, threads = ctx->cc->jobs > 0 ? ctx->cc->jobs : 1;

    memset(p, 0, sizeof *p);
    p->candidates = n;
    *stop = FATTN_TUNE_EXHAUSTED;
    for (size_t i = 0; i < n; ++i)
        fattn_space_config(ctx->space, ctx->sv->survivors[i], &cands[i]);
    strat = ctx->strategy->create(cands, n, ctx->seed);
    if (ctx->nprior)
        resume(ctx, cands, n, strat, p);

    double strategy_ms = 0, t; /* the strategy's time since the last trial stored */
    int moved = 1;             /* a compile came back or a trial was stored since the strategy's last hints */
    for (;;) {
        int why = stop_reason(ctx, p);
        const int full = budget_full(ctx, gap_ms, svc_ms, lat_ms, pending);
        if (why < 0 && full && !pending && p->tried < n)
            why = FATTN_TUNE_BUDGET; /* another trial would not end within it */
        /* Keep the compile window full while there is reason to go on. */
        int waiting = 0;
        /* Under a budget, until a proposal's time is known, one per thread. */
        const int win = ctx->deadline_ms > 0 && lat_ms == 0 && threads < window ? threads : window;
        while (why < 0 && !budget_full(ctx, gap_ms, svc_ms, lat_ms, pending) && !exhausted && pending < win) {
            t = fattn_now_ms();
            long i = strat->ops->next(strat);
            strategy_ms += spent(t, &p->strategy_ms);
            if (i == FATTN_STRATEGY_WAIT && pending) {
                waiting = 1; /* it needs the outcomes in flight */
                break;
            }
            if (i < 0) {
                exhausted = 1;
                break;
            }
            ++pending;
            proposed[tail++] = (size_t)i;
            proposed_at[i] = fattn_now_ms();
            if (spec[i] != SPEC_NONE)
                --nahead;
            if (spec[i] == SPEC_AHEAD) { /* compiling already */
                spec[i] = SPEC_CLAIMED;
                continue;
            }
            spec[i] = SPEC_NONE; /* CACHED: compiled ahead, a cache hit */
            if ((rc = submit(comp, items, cands, (size_t)i)))
                goto out;
        }
        /* While the strategy waits, the compile threads it leaves idle
         * compile what it expects to propose next into the cache (none
         * without a cache); at most one compile per thread is in flight, so
         * that its next proposal does not queue behind them. */
        const int hint_now = moved; /* not again on a wait's slice that brought nothing */
        moved = 0;
        if (why < 0 && waiting && hint_now && !full && strat->ops->hint && ctx->cc->cache.arg
            && fattn_compiler_pending(comp) < threads) {
            size_t want = nahead + (size_t)(threads - fattn_compiler_pending(comp));
            if (want > hint_cap)
                hints = fattn_xrealloc(hints, (hint_cap = want) * sizeof *hints);
            t = fattn_now_ms();
            size_t nh = strat->ops->hint(strat, hints, want);
            strategy_ms += spent(t, &p->strategy_ms);
            for (size_t k = 0; k < nh && fattn_compiler_pending(comp) < threads; ++k) {
                size_t i = hints[k];
                if (spec[i] != SPEC_NONE)
                    continue;
                if ((rc = submit(comp, items, cands, i)))
                    goto out;
                spec[i] = SPEC_AHEAD;
                ++nahead;
            }
        }
        if (why >= 0) {
            *stop = why;
            break;
        }
        if (!pending)
            break;
        if (!compiled[proposed[head]]) {
            /* Waited on in slices: a signal or the deadline ends the wait
             * (the loop's top says which), the compile given up. */
            int late = 0;
            double until = fattn_now_ms() + COMPILE_WAIT_SLICE_MS;
            if (ctx->deadline_ms > 0 && ctx->deadline_ms - ctx->spent_ms < until)
                until = ctx->deadline_ms - ctx->spent_ms;
            t = fattn_now_ms();
            fattn_compile_item *done = fattn_compiler_next_until(comp, until, &rc, &late);
            p->wait_ms += fattn_now_ms() - t;
            if (!done && late && !rc)
                continue;
            if (!done && !rc) /* a proposal nothing compiles: a fattn-tune bug */
                rc = fattn_error(FATTN_EFAIL, "the search loop waits for a compile that was never submitted");
            if (!done || rc)
                goto out;
            size_t d = (size_t)(done - items);
            moved = 1;
            if (spec[d] == SPEC_AHEAD) { /* in the cache now, for when it is proposed */
                spec[d] = SPEC_CACHED;
                fattn_compile_item_release(done);
            } else {
                spec[d] = SPEC_NONE;
                compiled[d] = 1; /* its turn comes when the proposals before it are through */
            }
            continue;
        }
        size_t idx = proposed[head++];
        fattn_compile_item *it = &items[idx];
        compiled[idx] = 0;
        --pending;
        if (!it->env_error && !it->reason && (why = stop_reason(ctx, p)) >= 0) {
            /* Compiled, but the search ends before it runs: it is left for
             * another search (its cubin is cached), not recorded. */
            *stop = why;
            fattn_compile_item_release(it);
            break;
        }
        fattn_trial_rec r;
        double eval_ms = 0;
        compiled_rec(ctx, it, &r);
        r.has_strategy_ms = 1;
        r.strategy_ms = strategy_ms;
        strategy_ms = 0;
        if (it->env_error || it->reason) {
            /* Not run: the compiler failed, or a post-compile gate said no. */
            r.status = it->env_error ? "error" : "rejected";
            r.reason = it->env_error ? NULL : fattn_reason(it->reason)->code;
            r.detail = it->env_error ? it->env_msg : it->verdict.detail;
            if (it->env_error)
                ++p->errors;
            else
                ++p->by_reason[it->reason];
            rc = store_trial(ctx, &r, NULL, p);
            t = fattn_now_ms();
            strat->ops->observe(strat, idx, 0, 0);
            strategy_ms += spent(t, &p->strategy_ms);
        } else {
            fattn_eval_result e;
            uint64_t seed = fattn_numerics_seed(ctx->seed, r.seq);
            fattn_eval_request req = {&it->cfg,
                                      NULL,
                                      it->entry.cubin,
                                      it->entry.cubin_size,
                                      it->entry.res.smem_dynamic,
                                      it->entry.res.threads,
                                      seed};
            char key[FATTN_KEY_MAX];
            fattn_config_key(&it->cfg, key);
            req.key = key;
            eval_ms = fattn_now_ms();
            rc = fattn_evaluate(ctx->ev, &req, &e);
            eval_ms = fattn_now_ms() - eval_ms;
            p->eval_ms += eval_ms;
            if (rc) {
                fattn_eval_result_release(&e);
                fattn_compile_item_release(it);
                goto out;
            }
            r.eval = &e;
            r.numerics_seed = seed;
            r.detail = e.detail;
            ++p->evaluated;
            /* A run-time verdict's name is its reason's code (gates.h). */
            int reason = fattn_reason_find(fattn_eval_status_name(e.status));
            if (e.status == FATTN_EVAL_OK) {
                r.status = "ok";
                ++p->ok;
            } else if (reason) {
                r.status = "rejected", r.reason = fattn_reason(reason)->code;
                ++p->by_reason[reason];
            } else {
                r.status = "error";
                ++p->errors;
            }
            long long trial;
            rc = store_trial(ctx, &r, &trial, p);
            int ok = e.status == FATTN_EVAL_OK;
            t = fattn_now_ms();
            strat->ops->observe(strat, idx, ok, ok ? e.timing.median_us : 0);
            strategy_ms += spent(t, &p->strategy_ms);
            if (ok && (p->best_us == 0 || e.timing.median_us < p->best_us)) {
                p->best_us = e.timing.median_us;
                p->best = e.timing;
                p->best_trial = trial;
                memcpy(p->best_key, key, sizeof key);
            }
            fattn_eval_result_release(&e);
        }
        ++p->tried;
        moved = 1;
        fattn_compile_item_release(it);
        double now = fattn_now_ms();
        if (!lat_ms)
            lat_ms = now - proposed_at[idx];
        if (last_ms > 0)
            gap_ms = gap_ms > 0 ? 0.5 * (gap_ms + (now - last_ms)) : now - last_ms;
        last_ms = now;
        double svc = (r.compile_ms > 0 ? r.compile_ms : 0) + eval_ms;
        svc_ms = svc_ms > 0 ? 0.5 * (svc_ms + svc) : svc;
        p->elapsed_ms = ctx->spent_ms + fattn_now_ms() - ctx->t0_ms;
        if (ctx->progress)
            ctx->progress(ctx->progress_arg, p);
        if (rc)
            goto out;
    }
out:;
    /* Nothing waited for past the end: what still compiles is given up. */
    int cache_rc = FATTN_OK;
    p->abandoned = fattn_compiler_abandon(&comp, &cache_rc);
    rc = rc ? rc : cache_rc;
    free(spec);
    free(proposed);
    free(compiled);
    free(proposed_at);
    free(hints);
    for (size_t i = 0; i < n; ++i)
        fattn_compile_item_release(&items[i]);
    strat->ops->destroy(strat);
    free(items);
    free(cands);
    return rc;
}
