/*
 * book.h - the bookkeeping model-based strategies share: each candidate's
 * state (untried, pending, done), the outcomes so far, and each candidate's
 * parameter values as indices into the values the candidates take.
 *
 * A candidate observed without having been proposed (a resumed study tells
 * the strategy what the database already holds) counts as proposed and done.
 */
#ifndef FATTN_SEARCH_BOOK_H
#define FATTN_SEARCH_BOOK_H

#include <stddef.h>

#include "space/params.h"
#include "space/space.h"
#include "util/misc.h"

enum { FATTN_CAND_UNTRIED = 0, FATTN_CAND_PENDING = 1, FATTN_CAND_DONE = 2 };

typedef struct fattn_book {
    size_t n;
    unsigned char *state;
    double *y;    /* done: the median (us), or HUGE_VAL for a failure */
    size_t *done; /* done candidates, in the order observed */
    size_t ndone, npending, nproposed, nuntried;
    int np;                      /* the candidates' family's parameters */
    int nvals[FATTN_MAX_PARAMS]; /* distinct values of each parameter */
    unsigned char *vidx;         /* n x np value indices */
} fattn_book;

void fattn_book_init(fattn_book *b, const fattn_config *cands, size_t n);
void fattn_book_release(fattn_book *b);

/* Candidate i's value index of parameter p. */
static inline int fattn_book_v(const fattn_book *b, size_t i, int p)
{
    return b->vidx[i * b->np + p];
}

/* The number of parameters in which candidates i and j differ. */
static inline int fattn_book_distance(const fattn_book *b, size_t i, size_t j)
{
    int d = 0;
    for (int p = 0; p < b->np; ++p)
        d += fattn_book_v(b, i, p) != fattn_book_v(b, j, p);
    return d;
}

/* Marks i proposed (pending). */
void fattn_book_propose(fattn_book *b, size_t i);

/* Records i's outcome; returns 1 when i was not proposed before (resumed). */
int fattn_book_observe(fattn_book *b, size_t i, int ok, double median_us);

/* The untried candidate nearest (fewest differing parameters) to the value
 * indices `target`, ties broken at random; -1 when none is untried.
 * *dist gets the distance when dist is not NULL. */
long fattn_book_nearest(const fattn_book *b, const unsigned char *target, fattn_rng *rng, int *dist);

/* A uniformly random untried candidate, or -1. */
long fattn_book_random(const fattn_book *b, fattn_rng *rng);

/* How long a search has stalled: the best median measured, and the measured
 * trials since it last improved by a relative step. */
typedef struct fattn_stall {
    double best;
    size_t trials;
} fattn_stall;

void fattn_stall_init(fattn_stall *s);

/* Counts a measured median (> 0). */
void fattn_stall_observe(fattn_stall *s, double median_us, double step);

/* The share of exploring proposals: 0 until `patience` stalled trials, then
 * rising linearly to `max` over `ramp` more. */
double fattn_stall_explore(const fattn_stall *s, double patience, double ramp, double max);

/* Sorts the n candidates idx[] by their outcome (b->y), fastest first, ties
 * by index. */
void fattn_book_sort_by_y(const fattn_book *b, size_t *idx, size_t n);

/* Keeps out[0..*m) the (at most k) candidates of largest score, best first:
 * inserts candidate i, for hint(). */
void fattn_best_insert(size_t *out, size_t *m, size_t k, const double *score, size_t i);

#endif
