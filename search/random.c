/*
 * random.c - candidates in a seeded random order, without replacement.
 */
#include <stdlib.h>

#include "search/strategy.h"
#include "util/err.h"
#include "util/misc.h"

typedef struct random_order {
    fattn_strategy base;
    size_t n, next;
    size_t *order;
    unsigned char *done; /* observed (a resumed study's trials) */
} random_order;

static fattn_strategy *create(const fattn_config *candidates, size_t n, uint64_t seed)
{
    (void)candidates;
    random_order *r = fattn_xcalloc(1, sizeof *r);
    fattn_rng rng;
    r->base.ops = &fattn_strategy_random;
    r->n = n;
    r->order = fattn_xcalloc(n ? n : 1, sizeof *r->order);
    r->done = fattn_xcalloc(n ? n : 1, 1);
    for (size_t i = 0; i < n; ++i)
        r->order[i] = i;
    fattn_rng_seed(&rng, seed);
    for (size_t i = n; i > 1; --i) {
        size_t j = (size_t)fattn_rng_below(&rng, i), tmp = r->order[i - 1];
        r->order[i - 1] = r->order[j];
        r->order[j] = tmp;
    }
    return &r->base;
}

static long next(fattn_strategy *s)
{
    random_order *r = (random_order *)s;
    while (r->next < r->n && r->done[r->order[r->next]])
        ++r->next;
    return r->next < r->n ? (long)r->order[r->next++] : -1;
}

static void observe(fattn_strategy *s, size_t i, int ok, double median_us)
{
    (void)ok, (void)median_us;
    ((random_order *)s)->done[i] = 1;
}

/* Done as far as the order goes: never handed out. */
static void claim(fattn_strategy *s, size_t i)
{
    ((random_order *)s)->done[i] = 1;
}

static void destroy(fattn_strategy *s)
{
    random_order *r = (random_order *)s;
    free(r->order);
    free(r->done);
    free(r);
}

const fattn_strategy_ops fattn_strategy_random = {
    "random", "gate survivors in a seeded random order, without replacement",
    create,   next,
    observe,  destroy,
    NULL,     NULL,
    claim,
};
