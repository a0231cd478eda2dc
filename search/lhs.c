/*
 * lhs.c - Latin hypercube sampling over the discrete space, as a helper and
 * as a strategy (design after design of 20 points).
 */
#include "search/lhs.h"

#include <stdlib.h>
#include <string.h>

#include "search/strategy.h"
#include "util/err.h"

enum { LHS_POINTS = 20 };

void fattn_lhs_design(fattn_lhs *d, const fattn_book *b, size_t m, fattn_rng *rng)
{
    size_t *perm = fattn_xcalloc(m ? m : 1, sizeof *perm);
    free(d->pts);
    d->m = m;
    d->next = 0;
    d->pts = fattn_xcalloc(m ? m * b->np : 1, 1);
    for (int p = 0; p < b->np; ++p) {
        for (size_t j = 0; j < m; ++j)
            perm[j] = j;
        for (size_t j = m; j > 1; --j) {
            size_t k = (size_t)fattn_rng_below(rng, j), t = perm[j - 1];
            perm[j - 1] = perm[k];
            perm[k] = t;
        }
        int K = b->nvals[p] ? b->nvals[p] : 1;
        for (size_t j = 0; j < m; ++j) {
            /* Stratum perm[j] of m, a uniform point inside it, scaled to K. */
            double u = ((double)perm[j] + fattn_rng_uniform(rng)) / (double)m;
            int v = (int)(u * K);
            d->pts[j * b->np + p] = (unsigned char)(v < K ? v : K - 1);
        }
    }
    free(perm);
}

long fattn_lhs_next(fattn_lhs *d, const fattn_book *b, fattn_rng *rng)
{
    if (!b->nuntried)
        return -1;
    if (d->next >= d->m)
        fattn_lhs_design(d, b, d->m ? d->m : LHS_POINTS, rng);
    return fattn_book_nearest(b, d->pts + d->next++ * b->np, rng, NULL);
}

void fattn_lhs_release(fattn_lhs *d)
{
    free(d->pts);
    memset(d, 0, sizeof *d);
}

typedef struct lhs_strategy {
    fattn_strategy base;
    fattn_book book;
    fattn_lhs design;
    fattn_rng rng;
} lhs_strategy;

static fattn_strategy *create(const fattn_config *candidates, size_t n, uint64_t seed)
{
    lhs_strategy *s = fattn_xcalloc(1, sizeof *s);
    s->base.ops = &fattn_strategy_lhs;
    fattn_book_init(&s->book, candidates, n);
    fattn_rng_seed(&s->rng, seed);
    fattn_lhs_design(&s->design, &s->book, LHS_POINTS, &s->rng);
    return &s->base;
}

static long next(fattn_strategy *base)
{
    lhs_strategy *s = (lhs_strategy *)base;
    long i = fattn_lhs_next(&s->design, &s->book, &s->rng);
    if (i >= 0)
        fattn_book_propose(&s->book, (size_t)i);
    return i;
}

static void observe(fattn_strategy *base, size_t i, int ok, double median_us)
{
    lhs_strategy *s = (lhs_strategy *)base;
    fattn_book_observe(&s->book, i, ok, median_us);
}

static void claim(fattn_strategy *base, size_t i)
{
    fattn_book_propose(&((lhs_strategy *)base)->book, i);
}

static void destroy(fattn_strategy *base)
{
    lhs_strategy *s = (lhs_strategy *)base;
    fattn_book_release(&s->book);
    fattn_lhs_release(&s->design);
    free(s);
}

const fattn_strategy_ops fattn_strategy_lhs = {
    "lhs",   "Latin hypercube designs of 20 points, each point's nearest untried survivor",
    create,  next,
    observe, destroy,
    NULL,    NULL,
    claim,
};
