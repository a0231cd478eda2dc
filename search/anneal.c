/*
 * anneal.c - simulated annealing over the discrete space, with restarts.
 *
 * From the current configuration, a move changes one parameter to another of
 * its values (an untried survivor; failing that, the nearest untried one).
 * A faster neighbour is always accepted; a slower one with probability
 * exp(-(y - y_cur) / (T * y_cur)), the temperature T falling by ANNEAL_COOL
 * per outcome. After ANNEAL_PATIENCE outcomes without a new best, or when no
 * untried neighbour is near, the walk restarts at a random untried survivor.
 * Failures (rejections, faults) are never accepted. At most ANNEAL_PENDING
 * neighbours are outstanding, so the compile stream can work ahead; with
 * k GPUs (batch()), at most k when k is more.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/book.h"
#include "search/strategy.h"
#include "util/err.h"

enum { ANNEAL_PENDING = 2, ANNEAL_PATIENCE = 25, ANNEAL_FAR = 3 };
static const double ANNEAL_T0 = 0.10, ANNEAL_COOL = 0.97;

typedef struct anneal {
    fattn_strategy base;
    size_t pending; /* neighbours outstanding at most */
    fattn_book book;
    fattn_rng rng;
    long cur; /* current configuration; -1 before the first measured one */
    double y_cur;
    double temp;
    double best; /* best median seen (us) */
    int stale;   /* outcomes since the last new best */
    int restart; /* start afresh at the next proposal */
} anneal;

static fattn_strategy *create(const fattn_config *candidates, size_t n, uint64_t seed)
{
    anneal *a = fattn_xcalloc(1, sizeof *a);
    a->base.ops = &fattn_strategy_anneal;
    a->pending = ANNEAL_PENDING;
    fattn_book_init(&a->book, candidates, n);
    fattn_rng_seed(&a->rng, seed);
    a->cur = -1;
    a->temp = ANNEAL_T0;
    a->best = HUGE_VAL;
    return &a->base;
}

/* An untried neighbour of the current configuration, or -1. */
static long neighbour(anneal *a)
{
    fattn_book *b = &a->book;
    unsigned char target[FATTN_MAX_PARAMS];
    int moves[FATTN_MAX_PARAMS * FATTN_SPACE_MAX_VALUES][2], nmoves = 0;
    for (int p = 0; p < b->np; ++p)
        target[p] = (unsigned char)fattn_book_v(b, (size_t)a->cur, p);
    for (int p = 0; p < b->np; ++p)
        for (int v = 0; v < b->nvals[p]; ++v)
            if (v != target[p])
                moves[nmoves][0] = p, moves[nmoves++][1] = v;
    /* Moves in random order; the first that lands on an untried survivor. */
    for (int k = nmoves; k > 0; --k) {
        int j = (int)fattn_rng_below(&a->rng, (uint64_t)k);
        int p = moves[j][0], v = moves[j][1];
        moves[j][0] = moves[k - 1][0], moves[j][1] = moves[k - 1][1];
        unsigned char old = target[p];
        target[p] = (unsigned char)v;
        int d;
        long i = fattn_book_nearest(b, target, &a->rng, &d);
        target[p] = old;
        if (i >= 0 && d == 0)
            return i;
    }
    int d;
    long i = fattn_book_nearest(b, target, &a->rng, &d);
    return d <= ANNEAL_FAR ? i : -1;
}

static long next(fattn_strategy *base)
{
    anneal *a = (anneal *)base;
    fattn_book *b = &a->book;
    if (!b->nuntried)
        return -1;
    if (b->npending >= a->pending)
        return FATTN_STRATEGY_WAIT;
    long i = -1;
    if (a->cur >= 0)
        i = neighbour(a);
    if (i < 0) {
        /* Start (afresh) at a random survivor; a walk whose start is still
         * out waits for it. */
        if (a->cur < 0 && b->npending && !a->restart)
            return FATTN_STRATEGY_WAIT;
        i = fattn_book_random(b, &a->rng);
        a->cur = -1;
        a->restart = 0;
    }
    fattn_book_propose(b, (size_t)i);
    return i;
}

static void observe(fattn_strategy *base, size_t i, int ok, double median_us)
{
    anneal *a = (anneal *)base;
    fattn_book *b = &a->book;
    fattn_book_observe(b, i, ok, median_us);
    double y = b->y[i];
    if (isfinite(y) && y < a->best) {
        a->best = y;
        a->stale = 0;
    } else if (++a->stale >= ANNEAL_PATIENCE) {
        a->cur = -1;
        a->restart = 1;
        a->stale = 0;
        a->temp = ANNEAL_T0;
        return;
    }
    a->temp *= ANNEAL_COOL;
    if (!isfinite(y))
        return;
    if (a->cur < 0 || y < a->y_cur || fattn_rng_uniform(&a->rng) < exp(-(y - a->y_cur) / (a->temp * a->y_cur))) {
        a->cur = (long)i;
        a->y_cur = y;
    }
}

static void batch(fattn_strategy *base, int k)
{
    ((anneal *)base)->pending = k > ANNEAL_PENDING ? (size_t)k : ANNEAL_PENDING;
}

static void claim(fattn_strategy *base, size_t i)
{
    fattn_book_propose(&((anneal *)base)->book, i);
}

static void destroy(fattn_strategy *base)
{
    anneal *a = (anneal *)base;
    fattn_book_release(&a->book);
    free(a);
}

const fattn_strategy_ops fattn_strategy_anneal = {
    "anneal", "simulated annealing: one-parameter moves from the current config, restarts when stuck",
    create,   next,
    observe,  destroy,
    NULL,     batch,
    claim,
};
