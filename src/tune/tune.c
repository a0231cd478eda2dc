/*
 * tune.c - the search loop.
 */
#include "tune/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/famsched.h"
#include "util/err.h"
#include "util/misc.h"

uint64_t fattn_numerics_seed(uint64_t study_seed, long long seq)
{
    fattn_rng r;
    fattn_rng_seed(&r, study_seed ^ (0x5851f42d4c957f2dull * (uint64_t)(seq + 1)));
    return fattn_rng_next(&r);
}

uint64_t fattn_family_seed(uint64_t seed, int k)
{
    return k ? fattn_numerics_seed(seed ^ 0x66616d696c79ull, -1 - k) : seed;
}

double fattn_tune_cost_ms(double compile_ms, double eval_ms)
{
    double c = (compile_ms > 0 ? compile_ms : 0) + (eval_ms > 0 ? eval_ms : 0);
    return c > FATTN_TUNE_MIN_COST_MS ? c : FATTN_TUNE_MIN_COST_MS;
}

/* What the scheduler charges an outcome: its times, or in a study of
 * modelled costs (replay) the model's, whatever the cache and the clock. */
static double charge(const fattn_tune_ctx *ctx, double compile_ms, double eval_ms, int evaluated)
{
    if (ctx->modelled_costs)
        return FATTN_TUNE_MODEL_COMPILE_MS + (evaluated ? FATTN_TUNE_MODEL_EVAL_MS : 0);
    return fattn_tune_cost_ms(compile_ms, eval_ms);
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
static void compiled_rec(const fattn_tune_ctx *ctx, const fattn_compile_ctx *cc, fattn_compile_item *it,
                         fattn_trial_rec *r)
{
    fattn_launch l; /* the family's model: its shared memory */
    it->cfg.fam->launch(&it->cfg, cc->shape, 0, &l);
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

/* The candidates of every family, one array (family k's from off[k]), with
 * each family's strategy over its own. */
typedef struct cand_set {
    int nfam;
    fattn_config *cands;
    size_t n, off[FATTN_TUNE_MAX_FAMILIES + 1];
    fattn_strategy *strat[FATTN_TUNE_MAX_FAMILIES];
    fattn_famsched fs;
} cand_set;

_Static_assert(FATTN_TUNE_MAX_FAMILIES <= FATTN_FAMSCHED_MAX, "the scheduler takes every family of a study");

/* The family of candidate i. */
static int family_of(const cand_set *cs, size_t i)
{
    int k = 0;
    while (k + 1 < cs->nfam && i >= cs->off[k + 1])
        ++k;
    return k;
}

/* Tells the strategies, the family scheduler and the progress what a
 * resumed study holds. */
static void resume(const fattn_tune_ctx *ctx, cand_set *cs, fattn_tune_progress *p)
{
    const size_t n = cs->n;
    /* Candidates by key: keys[i] is candidate i's, order[] sorts them. */
    size_t *order = fattn_xcalloc(n ? n : 1, sizeof *order);
    char(*keys)[FATTN_KEY_MAX] = fattn_xcalloc(n ? n : 1, sizeof *keys);
    for (size_t i = 0; i < n; ++i) {
        order[i] = i;
        fattn_config_key(&cs->cands[i], keys[i]);
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
        const size_t i = order[lo];
        const int f = family_of(cs, i);
        cs->strat[f]->ops->observe(cs->strat[f], i - cs->off[f], t->ok, t->ok ? t->timing.median_us : 0);
        fattn_famsched_record(&cs->fs, f, charge(ctx, t->cost_ms, 0, t->evaluated), t->evaluated, t->ok,
                              t->ok ? t->timing.median_us : 0);
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

/* Compiles in flight on all the families' compilers. */
static int all_pending(fattn_compiler *const *comp, int nfam)
{
    int n = 0;
    for (int k = 0; k < nfam; ++k)
        n += fattn_compiler_pending(comp[k]);
    return n;
}

/* Compiling ahead on the strategies' hints: SPEC_AHEAD a hinted candidate
 * compiling for the cache only, SPEC_CLAIMED one proposed meanwhile (its
 * compile then serves the proposal), SPEC_CACHED one compiled ahead (a
 * proposal finds it in the cache; never hinted again). */
enum { SPEC_NONE, SPEC_AHEAD, SPEC_CLAIMED, SPEC_CACHED };

/* A compile that came back: one compiled ahead is in the cache now, for
 * when it is proposed; a proposal's waits for its turn (the proposals
 * before it are through). */
static void came_back(fattn_compile_item *items, fattn_compile_item *it, unsigned char *spec, unsigned char *compiled)
{
    size_t d = (size_t)(it - items);
    if (spec[d] == SPEC_AHEAD) {
        spec[d] = SPEC_CACHED;
        fattn_compile_item_release(it);
    } else {
        spec[d] = SPEC_NONE;
        compiled[d] = 1;
    }
}

int fattn_tune_run(const fattn_tune_ctx *ctx, fattn_tune_progress *p, int *stop)
{
    if (ctx->nfam < 1 || ctx->nfam > FATTN_TUNE_MAX_FAMILIES)
        return fattn_error(FATTN_EFAIL, "the search loop takes 1 to %d families, not %d", FATTN_TUNE_MAX_FAMILIES,
                           ctx->nfam);
    const int nfam = ctx->nfam;
    cand_set cs = {.nfam = nfam};
    for (int k = 0; k < nfam; ++k)
        cs.off[k + 1] = cs.off[k] + ctx->fams[k].sv->nsurvivors;
    const size_t n = cs.n = cs.off[nfam];
    cs.cands = fattn_xcalloc(n ? n : 1, sizeof *cs.cands);
    const fattn_config *cands = cs.cands;
    fattn_compile_item *items = fattn_xcalloc(n ? n : 1, sizeof *items);
    fattn_compiler *comp[FATTN_TUNE_MAX_FAMILIES];
    int rc = FATTN_OK, pending = 0, exhausted = 0, done[FATTN_TUNE_MAX_FAMILIES] = {0}, waiter = 0;
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
    const fattn_compile_ctx *cc0 = ctx->fams[0].cc;
    const int window = ctx->ahead > 0 ? ctx->ahead : 1, threads = cc0->jobs > 0 ? cc0->jobs : 1;
    /* The compile threads shared out among the families' compilers (each
     * has its pool), the first ones taking what does not divide. */
    fattn_compile_ctx ccs[FATTN_TUNE_MAX_FAMILIES];

    memset(p, 0, sizeof *p);
    p->candidates = n;
    *stop = FATTN_TUNE_EXHAUSTED;
    fattn_famsched_init(&cs.fs, nfam, NULL, NULL);
    for (int k = 0; k < nfam; ++k) {
        const fattn_tune_family *f = &ctx->fams[k];
        for (size_t i = 0; i < f->sv->nsurvivors; ++i)
            fattn_space_config(f->space, f->sv->survivors[i], &cs.cands[cs.off[k] + i]);
        cs.strat[k] = ctx->strategy->create(&cs.cands[cs.off[k]], f->sv->nsurvivors, fattn_family_seed(ctx->seed, k));
        ccs[k] = *f->cc;
        ccs[k].jobs = threads / nfam + (k < threads % nfam);
        if (ccs[k].jobs < 1)
            ccs[k].jobs = 1;
        comp[k] = fattn_compiler_open(&ccs[k]);
    }
    if (ctx->nprior)
        resume(ctx, &cs, p);

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
            unsigned open = 0;
            for (int k = 0; k < nfam; ++k)
                open |= (unsigned)!done[k] << k;
            const int f = fattn_famsched_pick(&cs.fs, open);
            if (f < 0) {
                exhausted = 1;
                break;
            }
            t = fattn_now_ms();
            long li = cs.strat[f]->ops->next(cs.strat[f]);
            strategy_ms += spent(t, &p->strategy_ms);
            if (li == FATTN_STRATEGY_WAIT && pending) {
                waiting = 1; /* the family whose turn it is needs the outcomes in flight */
                waiter = f;
                break;
            }
            if (li < 0) {
                done[f] = 1;
                continue;
            }
            const size_t i = cs.off[f] + (size_t)li;
            ++pending;
            fattn_famsched_proposed(&cs.fs, f);
            proposed[tail++] = i;
            proposed_at[i] = fattn_now_ms();
            if (spec[i] != SPEC_NONE)
                --nahead;
            if (spec[i] == SPEC_AHEAD) { /* compiling already */
                spec[i] = SPEC_CLAIMED;
                continue;
            }
            spec[i] = SPEC_NONE; /* CACHED: compiled ahead, a cache hit */
            if ((rc = submit(comp[f], items, cands, i)))
                goto out;
        }
        /* What the families' compilers brought back meanwhile (with one
         * family, the wait below takes it). */
        for (int k = 0; nfam > 1 && k < nfam && !rc; ++k) {
            fattn_compile_item *back;
            int late;
            while (!rc && (back = fattn_compiler_next_until(comp[k], fattn_now_ms(), &rc, &late))) {
                came_back(items, back, spec, compiled);
                moved = 1;
            }
        }
        if (rc)
            goto out;
        /* While the strategy waits, the compile threads it leaves idle
         * compile what it expects to propose next into the cache (none
         * without a cache); at most one compile per thread is in flight, so
         * that its next proposal does not queue behind them. */
        const int hint_now = moved; /* not again on a wait's slice that brought nothing */
        fattn_strategy *ws = cs.strat[waiter];
        moved = 0;
        if (why < 0 && waiting && hint_now && !full && ws->ops->hint && ctx->fams[waiter].cc->cache.arg
            && all_pending(comp, nfam) < threads) {
            size_t want = nahead + (size_t)(threads - all_pending(comp, nfam));
            if (want > hint_cap)
                hints = fattn_xrealloc(hints, (hint_cap = want) * sizeof *hints);
            t = fattn_now_ms();
            size_t nh = ws->ops->hint(ws, hints, want);
            strategy_ms += spent(t, &p->strategy_ms);
            for (size_t k = 0; k < nh && all_pending(comp, nfam) < threads; ++k) {
                size_t i = cs.off[waiter] + hints[k];
                if (spec[i] != SPEC_NONE)
                    continue;
                if ((rc = submit(comp[waiter], items, cands, i)))
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
            fattn_compiler *hc = comp[family_of(&cs, proposed[head])];
            fattn_compile_item *it_done = fattn_compiler_next_until(hc, until, &rc, &late);
            p->wait_ms += fattn_now_ms() - t;
            if (!it_done && late && !rc)
                continue;
            if (!it_done && !rc) /* a proposal nothing compiles: a fattn-tune bug */
                rc = fattn_error(FATTN_EFAIL, "the search loop waits for a compile that was never submitted");
            if (!it_done || rc)
                goto out;
            came_back(items, it_done, spec, compiled);
            moved = 1;
            continue;
        }
        size_t idx = proposed[head++];
        const int fi = family_of(&cs, idx);
        fattn_strategy *strat = cs.strat[fi];
        const size_t li = idx - cs.off[fi];
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
        compiled_rec(ctx, &ccs[fi], it, &r);
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
            strat->ops->observe(strat, li, 0, 0);
            fattn_famsched_record(&cs.fs, fi, charge(ctx, r.compile_ms, 0, 0), 0, 0, 0);
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
            rc = fattn_evaluate(ctx->fams[fi].ev, &req, &e);
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
            strat->ops->observe(strat, li, ok, ok ? e.timing.median_us : 0);
            fattn_famsched_record(&cs.fs, fi, charge(ctx, r.compile_ms, e.wall_ms, 1), 1, ok,
                                  ok ? e.timing.median_us : 0);
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
    for (int k = 0; k < nfam; ++k) {
        int krc = FATTN_OK;
        p->abandoned += fattn_compiler_abandon(&comp[k], &krc);
        cache_rc = cache_rc ? cache_rc : krc;
    }
    rc = rc ? rc : cache_rc;
    free(spec);
    free(proposed);
    free(compiled);
    free(proposed_at);
    free(hints);
    for (size_t i = 0; i < n; ++i)
        fattn_compile_item_release(&items[i]);
    for (int k = 0; k < nfam; ++k)
        cs.strat[k]->ops->destroy(cs.strat[k]);
    free(items);
    free(cs.cands);
    return rc;
}
