/*
 * exhaustive.c - every candidate, in the space's stable order.
 */
#include <stdlib.h>

#include "search/strategy.h"
#include "util/err.h"

typedef struct exhaustive {
    fattn_strategy base;
    size_t n, next;
    unsigned char *done; /* observed (a resumed study's trials) */
} exhaustive;

static fattn_strategy *create(const fattn_config *candidates, size_t n, uint64_t seed)
{
    (void)candidates, (void)seed;
    exhaustive *e = fattn_xcalloc(1, sizeof *e);
    e->base.ops = &fattn_strategy_exhaustive;
    e->n = n;
    e->done = fattn_xcalloc(n ? n : 1, 1);
    return &e->base;
}

static long next(fattn_strategy *s)
{
    exhaustive *e = (exhaustive *)s;
    while (e->next < e->n && e->done[e->next])
        ++e->next;
    return e->next < e->n ? (long)e->next++ : -1;
}

static void observe(fattn_strategy *s, size_t i, int ok, double median_us)
{
    (void)ok, (void)median_us;
    ((exhaustive *)s)->done[i] = 1;
}

/* Done as far as the order goes: never handed out. */
static void claim(fattn_strategy *s, size_t i)
{
    ((exhaustive *)s)->done[i] = 1;
}

static void destroy(fattn_strategy *s)
{
    free(((exhaustive *)s)->done);
    free(s);
}

const fattn_strategy_ops fattn_strategy_exhaustive = {
    "exhaustive", "every gate survivor, in the space's order", create, next, observe, destroy, NULL, NULL, claim,
};
