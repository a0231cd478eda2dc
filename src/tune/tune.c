/*
 * tune.c - the search loop.
 */
#include "tune/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/famsched.h"
#include "tune/devices.h"
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

/* Stores a trial in its own transaction, which ends its configuration's
 * mark of running (a trial a resumed study had running may end rejected,
 * as a compile that failed). */
static int store_trial(const fattn_tune_ctx *ctx, const fattn_trial_rec *r, long long *id, fattn_tune_progress *p)
{
    const double t0 = fattn_now_ms();
    int rc = fattn_store_begin(ctx->store);
    if (!rc
        && (fattn_store_trial_add(ctx->store, r, id) || fattn_store_running_del(ctx->store, ctx->study, r->cfg)
            || fattn_store_study_time(ctx->store, ctx->study, ctx->spent_ms + fattn_now_ms() - ctx->t0_ms))) {
        fattn_store_rollback(ctx->store);
        rc = FATTN_EFAIL;
    }
    rc = rc ? rc : fattn_store_commit(ctx->store);
    spent(t0, &p->store_ms);
    return rc;
}

/* A trial record for a compiled item, before any evaluation. */
static void compiled_rec(const fattn_tune_ctx *ctx, const fattn_compile_ctx *cc, fattn_compile_item *it, long long seq,
                         fattn_trial_rec *r)
{
    fattn_launch l; /* the family's model: its shared memory */
    it->cfg.fam->launch(&it->cfg, cc->shape, 0, &l);
    memset(r, 0, sizeof *r);
    r->study_id = ctx->study;
    r->seq = seq;
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

/* Records a compiled item that does not run: the compiler failed, or a
 * post-compile gate said no. The strategy and the scheduler are told. */
static int record_unrun(const fattn_tune_ctx *ctx, const fattn_compile_ctx *cc, fattn_compile_item *it,
                        fattn_strategy *strat, size_t li, fattn_famsched *fs, int f, double *strategy_ms,
                        fattn_tune_progress *p)
{
    fattn_trial_rec r;
    compiled_rec(ctx, cc, it, (*ctx->seq)++, &r);
    r.has_strategy_ms = 1;
    r.strategy_ms = *strategy_ms;
    *strategy_ms = 0;
    r.status = it->env_error ? "error" : "rejected";
    r.reason = it->env_error ? NULL : fattn_reason(it->reason)->code;
    r.detail = it->env_error ? it->env_msg : it->verdict.detail;
    if (it->env_error)
        ++p->errors;
    else
        ++p->by_reason[it->reason];
    int rc = store_trial(ctx, &r, NULL, p);
    double t = fattn_now_ms();
    strat->ops->observe(strat, li, 0, 0);
    fattn_famsched_record(fs, f, charge(ctx, r.compile_ms, 0, 0), 0, 0, 0);
    *strategy_ms += spent(t, &p->strategy_ms);
    return rc;
}

/* The loop's clocks: the first proposal-to-record time, the recent gap
 * between two records, the recent compile plus evaluation of one trial. */
typedef struct clocks {
    double lat_ms, gap_ms, last_ms, svc_ms;
} clocks;

/* After a trial (item `it`, proposed at proposed_at) was recorded: the
 * clocks and the progress. */
static void recorded(const fattn_tune_ctx *ctx, const fattn_compile_item *it, double proposed_at, double eval_ms,
                     clocks *c, fattn_tune_progress *p)
{
    const double compile_ms = it->env_error || it->cache_hit ? 0 : it->entry.compile_ms;
    double now = fattn_now_ms();
    ++p->tried;
    if (!c->lat_ms)
        c->lat_ms = now - proposed_at;
    if (c->last_ms > 0)
        c->gap_ms = c->gap_ms > 0 ? 0.5 * (c->gap_ms + (now - c->last_ms)) : now - c->last_ms;
    c->last_ms = now;
    double svc = (compile_ms > 0 ? compile_ms : 0) + eval_ms;
    c->svc_ms = c->svc_ms > 0 ? 0.5 * (c->svc_ms + svc) : svc;
    p->elapsed_ms = ctx->spent_ms + fattn_now_ms() - ctx->t0_ms;
    if (ctx->progress)
        ctx->progress(ctx->progress_arg, p);
}

/* The longest single wait for a compile or a GPU: a signal is seen within
 * it; and the wait for a GPU while a compile is awaited too. */
#define COMPILE_WAIT_SLICE_MS 250.0
#define GPU_POLL_MS           5.0

/* Why the search stops now, or -1; `running`: trials on the GPUs, which
 * count toward the trial limit. */
static int stop_reason(const fattn_tune_ctx *ctx, const fattn_tune_progress *p, int running)
{
    if (ctx->interrupted && *ctx->interrupted)
        return FATTN_TUNE_INTERRUPTED;
    if (ctx->max_trials > 0 && p->evaluated + (size_t)running >= (size_t)ctx->max_trials)
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
static int budget_full(const fattn_tune_ctx *ctx, const clocks *c, int pending)
{
    double need = c->gap_ms * (pending + 1) > c->svc_ms ? c->gap_ms * (pending + 1) : c->svc_ms;
    if (need < c->lat_ms && c->gap_ms == 0)
        need = c->lat_ms;
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

/* Records an evaluation that came back from a GPU (j): its verdict and
 * times, the GPU it ran on; the strategy, the scheduler and the best so far
 * are told. j->rc (the evaluator failed: no verdict) is returned as is. */
static int record_run(const fattn_tune_ctx *ctx, cand_set *cs, const fattn_compile_ctx *cc, fattn_compile_item *items,
                      const fattn_devjob *j, double *strategy_ms, fattn_tune_progress *p)
{
    if (j->rc)
        return j->rc;
    const int fi = family_of(cs, j->idx);
    fattn_strategy *strat = cs->strat[fi];
    const fattn_eval_result *e = &j->e;
    fattn_trial_rec r;
    compiled_rec(ctx, cc, &items[j->idx], j->seq, &r);
    r.has_strategy_ms = 1;
    r.strategy_ms = *strategy_ms;
    *strategy_ms = 0;
    r.eval = e;
    r.numerics_seed = j->req.seed;
    r.detail = e->detail;
    r.gpu_uuid = j->ev->uuid[0] ? j->ev->uuid : NULL;
    p->eval_ms += e->wall_ms;
    ++p->evaluated;
    /* A run-time verdict's name is its reason's code (gates.h). */
    int reason = fattn_reason_find(fattn_eval_status_name(e->status));
    if (e->status == FATTN_EVAL_OK) {
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
    int rc = store_trial(ctx, &r, &trial, p);
    int ok = e->status == FATTN_EVAL_OK;
    double t = fattn_now_ms();
    strat->ops->observe(strat, j->idx - cs->off[fi], ok, ok ? e->timing.median_us : 0);
    fattn_famsched_record(&cs->fs, fi, charge(ctx, r.compile_ms, e->wall_ms, 1), 1, ok, ok ? e->timing.median_us : 0);
    *strategy_ms += spent(t, &p->strategy_ms);
    if (ok && (p->best_us == 0 || e->timing.median_us < p->best_us)) {
        p->best_us = e->timing.median_us;
        p->best = e->timing;
        p->best_trial = trial;
        memcpy(p->best_key, j->key, sizeof p->best_key);
    }
    return rc;
}

/* Candidates by key, for a resumed study's trials: keys[i] is candidate
 * i's, order[] sorts them. */
typedef struct key_index {
    size_t n, *order;
    char (*keys)[FATTN_KEY_MAX];
} key_index;

static void key_index_build(const cand_set *cs, key_index *x)
{
    x->n = cs->n;
    x->order = fattn_xcalloc(x->n ? x->n : 1, sizeof *x->order);
    x->keys = fattn_xcalloc(x->n ? x->n : 1, sizeof *x->keys);
    for (size_t i = 0; i < x->n; ++i) {
        x->order[i] = i;
        fattn_config_key(&cs->cands[i], x->keys[i]);
    }
    sort_keys = x->keys;
    qsort(x->order, x->n, sizeof *x->order, by_key);
}

/* The candidate of `key`, or -1 (not a candidate: a static-gate rejection). */
static long key_index_find(const key_index *x, const char *key)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(x->keys[x->order[mid]], key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == x->n || strcmp(x->keys[x->order[lo]], key) ? -1 : (long)x->order[lo];
}

static void key_index_release(key_index *x)
{
    free(x->order);
    free(x->keys);
}

/* Tells the strategies, the family scheduler and the progress what a
 * resumed study holds. */
static void resume(const fattn_tune_ctx *ctx, cand_set *cs, const key_index *x, unsigned char *told,
                   fattn_tune_progress *p)
{
    for (size_t k = 0; k < ctx->nprior; ++k) {
        const fattn_tune_prior *t = &ctx->prior[k];
        const long li = key_index_find(x, t->key);
        if (li < 0)
            continue;
        const size_t i = (size_t)li;
        const int f = family_of(cs, i);
        told[i] = 1;
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

/* The GPUs' side of the loop: the evaluations running, and with several
 * GPUs the reference configuration (the first measured, its cubin kept)
 * timed on each in rounds. */
typedef struct gpus {
    fattn_devices *d;
    int n;
    int have_ref, ref_family;
    fattn_config ref_cfg;
    unsigned char *ref_cubin;
    size_t ref_size;
    unsigned ref_smem, ref_threads;
    unsigned char due[FATTN_TUNE_MAX_DEVICES]; /* this round's timing not started on GPU d */
    double ref_us[FATTN_TUNE_MAX_DEVICES];     /* this round's medians (0: not measured) */
    int round, got;                            /* rounds begun; timings back of the last */
    size_t next_at;                            /* trials evaluated when the next round is due */
    int trials;                                /* trials running (the reference's timings are not) */
    int spread_stored;                         /* a round's spread is in the study */
} gpus;

/* The evaluator of family f on GPU d. */
static fattn_evaluator *evaluator_of(const fattn_tune_ctx *ctx, int f, int d)
{
    return ctx->ndev > 1 ? ctx->dev_ev[d] : ctx->fams[f].ev;
}

/* Begins a reference round: every GPU owes a timing of the reference. */
static void ref_round(const fattn_tune_ctx *ctx, gpus *g, const fattn_tune_progress *p)
{
    ++g->round;
    g->got = 0;
    for (int d = 0; d < g->n; ++d)
        g->due[d] = 1, g->ref_us[d] = 0;
    g->next_at = p->evaluated + (size_t)(ctx->ref_every > 0 ? ctx->ref_every : FATTN_TUNE_REF_EVERY);
}

/* What a trial's end may begin (take_back()): no reference round, the
 * first only (the search ending), or every round due. */
enum { REF_NONE, REF_FIRST, REF_ALL };

/* After trial `it` of family f (ok: measured): the first measured becomes
 * the reference, and a round is due every ref_every trials (one at a
 * time), as `refs` allows. */
static void ref_after(const fattn_tune_ctx *ctx, gpus *g, const fattn_compile_item *it, int f, int ok, int refs,
                      const fattn_tune_progress *p)
{
    if (g->n < 2 || refs == REF_NONE)
        return;
    if (!g->have_ref && ok) {
        g->have_ref = 1;
        g->ref_family = f;
        g->ref_cfg = it->cfg;
        g->ref_size = it->entry.cubin_size;
        g->ref_cubin = fattn_xmalloc(g->ref_size ? g->ref_size : 1);
        memcpy(g->ref_cubin, it->entry.cubin, g->ref_size);
        g->ref_smem = it->entry.res.smem_dynamic;
        g->ref_threads = it->entry.res.threads;
        ref_round(ctx, g, p);
    } else if (refs == REF_ALL && g->have_ref && g->got == g->n && p->evaluated >= g->next_at)
        ref_round(ctx, g, p);
}

/* Starts the reference's timing on GPU d. */
static void ref_start(const fattn_tune_ctx *ctx, gpus *g, int d)
{
    fattn_devjob *j = fattn_devices_job(g->d, d);
    j->ev = evaluator_of(ctx, g->ref_family, d);
    j->reference = 1;
    fattn_config_key(&g->ref_cfg, j->key);
    j->req = (fattn_eval_request){&g->ref_cfg,
                                  NULL,
                                  g->ref_cubin,
                                  g->ref_size,
                                  g->ref_smem,
                                  g->ref_threads,
                                  fattn_numerics_seed(ctx->seed, -1000 - g->round)};
    g->due[d] = 0;
    fattn_devices_start(g->d, d);
}

/* Each idle GPU that owes the reference its timing starts it. */
static void ref_owed(const fattn_tune_ctx *ctx, gpus *g)
{
    for (int d = 0; g->have_ref && d < g->n; ++d)
        if (g->due[d] && fattn_devices_is_idle(g->d, d))
            ref_start(ctx, g, d);
}

/* A reference timing back: stored; a round complete gives the GPUs'
 * spread, stored with the study and said when over FATTN_TUNE_SPREAD_PCT. */
static int ref_back(const fattn_tune_ctx *ctx, gpus *g, const fattn_devjob *j, fattn_tune_progress *p)
{
    const int ok = !j->rc && j->e.status == FATTN_EVAL_OK;
    fattn_gpu_check_rec c = {.study_id = ctx->study,
                             .round = g->round,
                             .after_trials = (long long)p->evaluated,
                             .device = j->ev->ordinal,
                             .gpu_uuid = j->ev->uuid[0] ? j->ev->uuid : NULL,
                             .config_key = j->key,
                             .status = j->rc ? "error" : fattn_eval_status_name(j->e.status),
                             .median_us = ok ? j->e.timing.median_us : 0};
    g->ref_us[j->dev] = c.median_us;
    int rc = fattn_store_gpu_check_add(ctx->store, &c);
    if (++g->got < g->n || rc)
        return rc;
    double lo = 0, hi = 0;
    int nok = 0;
    for (int d = 0; d < g->n; ++d)
        if (g->ref_us[d] > 0) {
            lo = nok && lo < g->ref_us[d] ? lo : g->ref_us[d];
            hi = nok && hi > g->ref_us[d] ? hi : g->ref_us[d];
            ++nok;
        }
    ++p->ref_rounds;
    if (nok < 2)
        return FATTN_OK;
    const double spread = 100 * (hi - lo) / lo;
    if (spread > p->spread_pct || !g->spread_stored) {
        p->spread_pct = spread > p->spread_pct ? spread : p->spread_pct;
        g->spread_stored = 1;
        rc = fattn_store_study_gpu_spread(ctx->store, ctx->study, p->spread_pct);
    }
    if (spread > FATTN_TUNE_SPREAD_PCT)
        fattn_warn("the GPUs differ by %.1f%% on the reference configuration %s (round %d: %.3f to %.3f us); the "
                   "study's times come from GPUs that far apart",
                   spread, j->key, g->round, lo, hi);
    return rc;
}

/* What GPU j brought back, taken: the reference's timing, or its trial
 * recorded (no longer pending, its item released; a reference round begun
 * as `refs` allows); the GPU is idle again. Returns the record's rc, or
 * j->rc when the evaluator failed. */
static int take_back(const fattn_tune_ctx *ctx, cand_set *cs, const fattn_compile_ctx *ccs, fattn_compile_item *items,
                     const double *proposed_at, gpus *g, fattn_devjob *j, int refs, clocks *ck, double *strategy_ms,
                     int *pending, fattn_tune_progress *p)
{
    int rc;
    if (j->reference)
        rc = ref_back(ctx, g, j, p);
    else {
        const int f = family_of(cs, j->idx);
        fattn_compile_item *it = &items[j->idx];
        rc = record_run(ctx, cs, &ccs[f], items, j, strategy_ms, p);
        --g->trials;
        if (!j->rc) {
            --*pending;
            ref_after(ctx, g, it, f, !rc && j->e.status == FATTN_EVAL_OK, refs, p);
            recorded(ctx, it, proposed_at[j->idx], j->e.wall_ms, ck, p);
            fattn_compile_item_release(it);
        }
    }
    fattn_devices_done(g->d, j);
    return rc;
}

int fattn_tune_run(const fattn_tune_ctx *ctx, fattn_tune_progress *p, int *stop)
{
    if (ctx->nfam < 1 || ctx->nfam > FATTN_TUNE_MAX_FAMILIES)
        return fattn_error(FATTN_EFAIL, "the search loop takes 1 to %d families, not %d", FATTN_TUNE_MAX_FAMILIES,
                           ctx->nfam);
    if (ctx->ndev > FATTN_TUNE_MAX_DEVICES)
        return fattn_error(FATTN_EFAIL, "the search loop takes at most %d GPUs, not %d", FATTN_TUNE_MAX_DEVICES,
                           ctx->ndev);
    const int nfam = ctx->nfam, ndev = ctx->ndev > 1 ? ctx->ndev : 1;
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
    /* The proposals in flight, oldest first (compiling, compiled, or on a
     * GPU), and which of them have compiled: each goes to a GPU in
     * proposal order, whatever order the compiles finish in (a cold cache,
     * the pool's threads); with one GPU, outcomes reach the store and the
     * strategy in that order too. */
    size_t *proposed = fattn_xcalloc(n ? n : 1, sizeof *proposed), head = 0, tail = 0;
    unsigned char *compiled = fattn_xcalloc(n ? n : 1, 1);
    /* When each candidate was proposed, and the recent proposal-to-record
     * time: under a budget, no proposal is made that would end past it. */
    double *proposed_at = fattn_xcalloc(n ? n : 1, sizeof *proposed_at);
    clocks ck = {0};
    const fattn_compile_ctx *cc0 = ctx->fams[0].cc;
    const int window = (ctx->ahead > 0 ? ctx->ahead : 1) + ndev - 1, threads = cc0->jobs > 0 ? cc0->jobs : 1;
    /* The compile threads shared out among the families' compilers (each
     * has its pool), the first ones taking what does not divide. */
    fattn_compile_ctx ccs[FATTN_TUNE_MAX_FAMILIES];
    gpus gp = {.d = fattn_devices_open(ndev), .n = ndev};
    /* A resumed study's running trials, proposed again first. */
    size_t *rerun = fattn_xcalloc(ctx->nrerun ? ctx->nrerun : 1, sizeof *rerun), nrerun = 0, rerun_at = 0;

    memset(p, 0, sizeof *p);
    p->candidates = n;
    *stop = FATTN_TUNE_EXHAUSTED;
    fattn_famsched_init(&cs.fs, nfam, NULL, NULL);
    for (int k = 0; k < nfam; ++k) {
        const fattn_tune_family *f = &ctx->fams[k];
        for (size_t i = 0; i < f->sv->nsurvivors; ++i)
            fattn_space_config(f->space, f->sv->survivors[i], &cs.cands[cs.off[k] + i]);
        cs.strat[k] = ctx->strategy->create(&cs.cands[cs.off[k]], f->sv->nsurvivors, fattn_family_seed(ctx->seed, k));
        if (ndev > 1 && cs.strat[k]->ops->batch)
            cs.strat[k]->ops->batch(cs.strat[k], ndev);
        ccs[k] = *f->cc;
        ccs[k].jobs = threads / nfam + (k < threads % nfam);
        if (ccs[k].jobs < 1)
            ccs[k].jobs = 1;
        comp[k] = fattn_compiler_open(&ccs[k]);
    }
    if (ctx->nprior || ctx->nrerun) {
        key_index x;
        unsigned char *told = fattn_xcalloc(n ? n : 1, 1);
        key_index_build(&cs, &x);
        resume(ctx, &cs, &x, told, p);
        for (size_t k = 0; k < ctx->nrerun && ctx->strategy->claim; ++k) {
            long i = key_index_find(&x, ctx->rerun[k]);
            if (i >= 0 && !told[i]) {
                told[i] = 1; /* named once */
                rerun[nrerun++] = (size_t)i;
            }
        }
        key_index_release(&x);
        free(told);
    }

    double strategy_ms = 0, t; /* the strategy's time since the last trial stored */
    int moved = 1;             /* a compile came back or a trial was stored since the strategy's last hints */
    for (;;) {
        int why = stop_reason(ctx, p, gp.trials);
        const int full = budget_full(ctx, &ck, pending);
        if (why < 0 && full && !pending && p->tried < n)
            why = FATTN_TUNE_BUDGET; /* another trial would not end within it */
        /* Keep the compile window full while there is reason to go on. */
        int waiting = 0;
        /* Under a budget, until a proposal's time is known, one per thread. */
        const int win = ctx->deadline_ms > 0 && ck.lat_ms == 0 && threads < window ? threads : window;
        while (why < 0 && !budget_full(ctx, &ck, pending) && !exhausted && pending < win) {
            long li;
            int f;
            if (rerun_at < nrerun) { /* what a resumed study had running: its strategy told, not asked */
                f = family_of(&cs, rerun[rerun_at]);
                li = (long)(rerun[rerun_at++] - cs.off[f]);
                cs.strat[f]->ops->claim(cs.strat[f], (size_t)li);
            } else {
                unsigned open = 0;
                for (int k = 0; k < nfam; ++k)
                    open |= (unsigned)!done[k] << k;
                f = fattn_famsched_pick(&cs.fs, open);
                if (f < 0) {
                    exhausted = 1;
                    break;
                }
                t = fattn_now_ms();
                li = cs.strat[f]->ops->next(cs.strat[f]);
                strategy_ms += spent(t, &p->strategy_ms);
            }
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
        ref_owed(ctx, &gp); /* a GPU that owes the reference its timing times it first */
        /* The oldest proposal, compiled: recorded when it will not run, or
         * handed to an idle GPU. */
        int started = 0;
        if (head < tail && compiled[proposed[head]]) {
            const size_t idx = proposed[head];
            const int fi = family_of(&cs, idx);
            fattn_compile_item *it = &items[idx];
            if (it->env_error || it->reason) {
                ++head;
                compiled[idx] = 0;
                --pending;
                rc = record_unrun(ctx, &ccs[fi], it, cs.strat[fi], idx - cs.off[fi], &cs.fs, fi, &strategy_ms, p);
                recorded(ctx, it, proposed_at[idx], 0, &ck, p);
                fattn_compile_item_release(it);
                moved = 1;
                if (rc)
                    goto out;
                continue;
            }
            if ((why = stop_reason(ctx, p, gp.trials)) >= 0) {
                /* Compiled, but the search ends before it runs: it is left
                 * for another search (its cubin is cached), not recorded. */
                *stop = why;
                fattn_compile_item_release(it);
                break;
            }
            int d = fattn_devices_idle(gp.d);
            if (d >= 0) {
                ++head;
                compiled[idx] = 0;
                fattn_devjob *j = fattn_devices_job(gp.d, d);
                j->ev = evaluator_of(ctx, fi, d);
                j->idx = idx;
                j->seq = (*ctx->seq)++;
                fattn_config_key(&it->cfg, j->key);
                j->req = (fattn_eval_request){&it->cfg,
                                              NULL,
                                              it->entry.cubin,
                                              it->entry.cubin_size,
                                              it->entry.res.smem_dynamic,
                                              it->entry.res.threads,
                                              fattn_numerics_seed(ctx->seed, j->seq)};
                /* Running, as the study says: a search that stops before
                 * its outcome (kill -9) proposes it again on --resume. */
                if ((rc = fattn_store_running_add(ctx->store, ctx->study, j->key, j->seq,
                                                  j->ev->uuid[0] ? j->ev->uuid : NULL)))
                    goto out;
                fattn_devices_start(gp.d, d);
                ++gp.trials;
                started = 1;
            }
        }
        /* Outcomes: a finished evaluation is recorded; the loop waits only
         * when it has nothing else to do: for a GPU when none is idle or
         * nothing is left to hand one, else for a GPU and the oldest
         * proposal's compile in turn. */
        const int head_compiling = head < tail && !compiled[proposed[head]];
        if (fattn_devices_busy(gp.d)) {
            double until = fattn_now_ms();
            if (!started)
                until += head_compiling ? GPU_POLL_MS : COMPILE_WAIT_SLICE_MS;
            fattn_devjob *j = fattn_devices_next_until(gp.d, until);
            if (j) {
                moved |= !j->reference && !j->rc;
                if ((rc =
                         take_back(ctx, &cs, ccs, items, proposed_at, &gp, j, REF_ALL, &ck, &strategy_ms, &pending, p)))
                    goto out;
                continue;
            }
            if (!head_compiling)
                continue;
        }
        if (head_compiling) {
            /* Waited on in slices: a signal or the deadline ends the wait
             * (the loop's top says which), the compile given up. With a GPU
             * running, only a look. */
            int late = 0;
            double until = fattn_now_ms() + (fattn_devices_busy(gp.d) ? 0 : COMPILE_WAIT_SLICE_MS);
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
        }
    }
    /* The trials still running end and are recorded (the reference's
     * timings too): the search's end loses none. A round of the reference
     * begun is completed, unless the search was stopped by a signal or
     * the budget. */
    const int complete = *stop == FATTN_TUNE_EXHAUSTED || *stop == FATTN_TUNE_TRIALS;
    while (!rc) {
        if (complete)
            ref_owed(ctx, &gp);
        if (!fattn_devices_busy(gp.d))
            break;
        fattn_devjob *j = fattn_devices_next_until(gp.d, fattn_now_ms() + COMPILE_WAIT_SLICE_MS);
        /* The first measured among them begins the reference (the GPUs
         * compared once at least), no later round. */
        if (j)
            rc = take_back(ctx, &cs, ccs, items, proposed_at, &gp, j, complete ? REF_FIRST : REF_NONE, &ck,
                           &strategy_ms, &pending, p);
    }
out:;
    fattn_devices_close(&gp.d); /* after the evaluations running */
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
    free(rerun);
    free(gp.ref_cubin);
    for (size_t i = 0; i < n; ++i)
        fattn_compile_item_release(&items[i]);
    for (int k = 0; k < nfam; ++k)
        cs.strat[k]->ops->destroy(cs.strat[k]);
    free(items);
    free(cs.cands);
    return rc;
}
