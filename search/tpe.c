/*
 * tpe.c - the Tree-structured Parzen Estimator (Bergstra et al., 2011), over
 * the discrete space, seeded by a Latin hypercube design.
 *
 * After TPE_STARTUP proposals from an LHS design, the measured trials are
 * split at the gamma quantile of their medians: the best ceil(gamma * n_ok)
 * are "good", every other outcome "bad" (slower trials, and every failure:
 * post-compile rejections, numerics, faults, timeouts, errors, so that those
 * inform the search too). For each parameter, l(v) and g(v) are Parzen
 * estimators over its values (the counts of v among good and bad, plus a
 * uniform prior of weight TPE_PRIOR). TPE_EI candidates are drawn among the
 * untried survivors with probability proportional to l(x) = prod_p l_p(x_p),
 * and the one with the largest l(x)/g(x) is proposed. Evaluated, pending and
 * gate-rejected configurations are never proposed (the last are not
 * candidates at all). At most TPE_PENDING proposals are outstanding: the
 * compile stream works ahead on those while the GPU measures, and the model
 * waits for their outcomes before going further.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/book.h"
#include "search/lhs.h"
#include "search/strategy.h"
#include "util/err.h"

enum { TPE_STARTUP = 20, TPE_EI = 24, TPE_PENDING = 4 };
static const double TPE_GAMMA = 0.15, TPE_PRIOR = 1.0;

typedef struct tpe {
    fattn_strategy base;
    fattn_book book;
    fattn_lhs design;
    fattn_rng rng;
    size_t *ok;   /* scratch: measured candidates */
    double *logl; /* scratch: log l(x) per candidate */
    unsigned char *good;
} tpe;

static fattn_strategy *create(const fattn_config *candidates, size_t n, uint64_t seed)
{
    tpe *t = fattn_xcalloc(1, sizeof *t);
    t->base.ops = &fattn_strategy_tpe;
    fattn_book_init(&t->book, candidates, n);
    fattn_rng_seed(&t->rng, seed);
    fattn_lhs_design(&t->design, &t->book, TPE_STARTUP, &t->rng);
    t->ok = fattn_xcalloc(n ? n : 1, sizeof *t->ok);
    t->logl = fattn_xcalloc(n ? n : 1, sizeof *t->logl);
    t->good = fattn_xcalloc(n ? n : 1, 1);
    return &t->base;
}

static const double *sort_y;

static int by_y(const void *a, const void *b)
{
    double x = sort_y[*(const size_t *)a], y = sort_y[*(const size_t *)b];
    if (x != y)
        return x < y ? -1 : 1;
    return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

/* The TPE proposal; -1 when nothing is untried. */
static long propose(tpe *t)
{
    fattn_book *b = &t->book;
    size_t nok = 0;
    for (size_t k = 0; k < b->ndone; ++k)
        if (isfinite(b->y[b->done[k]]))
            t->ok[nok++] = b->done[k];
    if (!nok) /* nothing measured yet: keep exploring */
        return fattn_lhs_next(&t->design, b, &t->rng);
    sort_y = b->y;
    qsort(t->ok, nok, sizeof *t->ok, by_y);
    size_t ngood = (size_t)ceil(TPE_GAMMA * (double)nok);
    if (ngood < 1)
        ngood = 1;
    memset(t->good, 0, b->n);
    for (size_t k = 0; k < ngood; ++k)
        t->good[t->ok[k]] = 1;
    size_t nbad = b->ndone - ngood;

    /* Per parameter and value: log l and log g. */
    double logl[FATTN_NPARAMS][FATTN_SPACE_MAX_VALUES], logg[FATTN_NPARAMS][FATTN_SPACE_MAX_VALUES];
    for (int p = 0; p < FATTN_NPARAMS; ++p) {
        int K = b->nvals[p];
        double cl[FATTN_SPACE_MAX_VALUES] = {0}, cg[FATTN_SPACE_MAX_VALUES] = {0};
        for (size_t k = 0; k < b->ndone; ++k) {
            size_t i = b->done[k];
            if (t->good[i])
                cl[fattn_book_v(b, i, p)] += 1;
            else
                cg[fattn_book_v(b, i, p)] += 1;
        }
        for (int v = 0; v < K; ++v) {
            logl[p][v] = log((TPE_PRIOR / K + cl[v]) / (TPE_PRIOR + (double)ngood));
            logg[p][v] = log((TPE_PRIOR / K + cg[v]) / (TPE_PRIOR + (double)nbad));
        }
    }

    /* Draw TPE_EI untried candidates from l, keep the best l/g. */
    double maxl = -HUGE_VAL, total = 0;
    for (size_t i = 0; i < b->n; ++i) {
        if (b->state[i] != FATTN_CAND_UNTRIED)
            continue;
        double s = 0;
        for (int p = 0; p < FATTN_NPARAMS; ++p)
            s += logl[p][fattn_book_v(b, i, p)];
        t->logl[i] = s;
        if (s > maxl)
            maxl = s;
    }
    if (maxl == -HUGE_VAL)
        return -1;
    for (size_t i = 0; i < b->n; ++i)
        if (b->state[i] == FATTN_CAND_UNTRIED)
            total += t->logl[i] = exp(t->logl[i] - maxl); /* now a weight */
    long best = -1;
    double best_score = -HUGE_VAL;
    for (int d = 0; d < TPE_EI; ++d) {
        double u = fattn_rng_uniform(&t->rng) * total;
        long pick = -1;
        for (size_t i = 0; i < b->n; ++i) {
            if (b->state[i] != FATTN_CAND_UNTRIED)
                continue;
            pick = (long)i;
            if ((u -= t->logl[i]) < 0)
                break;
        }
        double score = 0;
        for (int p = 0; p < FATTN_NPARAMS; ++p) {
            int v = fattn_book_v(b, (size_t)pick, p);
            score += logl[p][v] - logg[p][v];
        }
        if (score > best_score)
            best_score = score, best = pick;
    }
    return best;
}

static long next(fattn_strategy *base)
{
    tpe *t = (tpe *)base;
    fattn_book *b = &t->book;
    long i;
    if (!b->nuntried)
        return -1;
    if (b->nproposed < TPE_STARTUP)
        i = fattn_lhs_next(&t->design, b, &t->rng);
    else if (b->npending >= TPE_PENDING)
        return FATTN_STRATEGY_WAIT;
    else
        i = propose(t);
    if (i >= 0)
        fattn_book_propose(b, (size_t)i);
    return i;
}

static void observe(fattn_strategy *base, size_t i, int ok, double median_us)
{
    tpe *t = (tpe *)base;
    fattn_book_observe(&t->book, i, ok, median_us);
}

static void destroy(fattn_strategy *base)
{
    tpe *t = (tpe *)base;
    fattn_book_release(&t->book);
    fattn_lhs_release(&t->design);
    free(t->ok);
    free(t->logl);
    free(t->good);
    free(t);
}

const fattn_strategy_ops fattn_strategy_tpe = {
    "tpe",   "20 Latin hypercube seeds, then the Tree-structured Parzen Estimator (the default)", create, next, observe,
    destroy,
};
