/*
 * lhs.h - Latin hypercube designs over the discrete space.
 *
 * A design of m points gives each parameter's values in m equal strata, one
 * point per stratum, the strata of the parameters paired by independent
 * random permutations: over m points, each value of a parameter with K values
 * appears m/K times (to within one). A design point need not be a gate
 * survivor; the untried survivor nearest to it stands in.
 */
#ifndef FATTN_SEARCH_LHS_H
#define FATTN_SEARCH_LHS_H

#include "search/book.h"

typedef struct fattn_lhs {
    size_t m, next;
    unsigned char *pts; /* m x np value indices (the book's np) */
} fattn_lhs;

/* A fresh design of m points over the value counts of `b`. */
void fattn_lhs_design(fattn_lhs *d, const fattn_book *b, size_t m, fattn_rng *rng);

/* The untried candidate standing in for the design's next point (a new
 * design of the same size when this one is used up), or -1 when no
 * candidate is untried. */
long fattn_lhs_next(fattn_lhs *d, const fattn_book *b, fattn_rng *rng);

void fattn_lhs_release(fattn_lhs *d);

#endif
