/*
 * book.c - candidate bookkeeping for the model-based strategies.
 */
#include "search/book.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void fattn_book_init(fattn_book *b, const fattn_config *cands, size_t n)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    b->nuntried = n;
    b->state = fattn_xcalloc(n ? n : 1, 1);
    b->y = fattn_xcalloc(n ? n : 1, sizeof *b->y);
    b->done = fattn_xcalloc(n ? n : 1, sizeof *b->done);
    b->np = n ? cands[0].fam->nparams : 0;
    b->vidx = fattn_xcalloc(n ? n * (size_t)b->np : 1, 1);
    int *vals = fattn_xcalloc(n ? n : 1, sizeof *vals);
    for (int p = 0; p < b->np; ++p) {
        /* The distinct values parameter p takes among the candidates. */
        for (size_t i = 0; i < n; ++i)
            vals[i] = cands[i].v[p];
        qsort(vals, n, sizeof *vals, cmp_int);
        size_t k = 0;
        for (size_t i = 0; i < n; ++i)
            if (!k || vals[i] != vals[k - 1])
                vals[k++] = vals[i];
        /* A space holds at most FATTN_SPACE_MAX_VALUES values per parameter. */
        b->nvals[p] = (int)k;
        for (size_t i = 0; i < n; ++i) {
            const int *hit = bsearch(&cands[i].v[p], vals, k, sizeof *vals, cmp_int);
            b->vidx[i * (size_t)b->np + p] = (unsigned char)(hit - vals);
        }
    }
    free(vals);
}

void fattn_book_release(fattn_book *b)
{
    free(b->state);
    free(b->y);
    free(b->done);
    free(b->vidx);
    memset(b, 0, sizeof *b);
}

void fattn_book_propose(fattn_book *b, size_t i)
{
    if (b->state[i] != FATTN_CAND_UNTRIED)
        return;
    b->state[i] = FATTN_CAND_PENDING;
    --b->nuntried;
    ++b->npending;
    ++b->nproposed;
}

int fattn_book_observe(fattn_book *b, size_t i, int ok, double median_us)
{
    int resumed = 0;
    if (b->state[i] == FATTN_CAND_DONE)
        return 0;
    if (b->state[i] == FATTN_CAND_PENDING) {
        --b->npending;
    } else {
        --b->nuntried;
        ++b->nproposed;
        resumed = 1;
    }
    b->state[i] = FATTN_CAND_DONE;
    b->y[i] = ok && median_us > 0 ? median_us : HUGE_VAL;
    b->done[b->ndone++] = i;
    return resumed;
}

long fattn_book_nearest(const fattn_book *b, const unsigned char *target, fattn_rng *rng, int *dist)
{
    long best = -1;
    int bestd = FATTN_MAX_PARAMS + 1;
    uint64_t ties = 0;
    for (size_t i = 0; i < b->n; ++i) {
        if (b->state[i] != FATTN_CAND_UNTRIED)
            continue;
        int d = 0;
        for (int p = 0; p < b->np; ++p)
            d += b->vidx[i * (size_t)b->np + p] != target[p];
        if (d < bestd) {
            bestd = d, best = (long)i, ties = 1;
        } else if (d == bestd && fattn_rng_below(rng, ++ties) == 0) {
            best = (long)i; /* reservoir sampling among the ties */
        }
    }
    if (dist)
        *dist = bestd;
    return best;
}

long fattn_book_random(const fattn_book *b, fattn_rng *rng)
{
    if (!b->nuntried)
        return -1;
    uint64_t k = fattn_rng_below(rng, b->nuntried);
    for (size_t i = 0; i < b->n; ++i)
        if (b->state[i] == FATTN_CAND_UNTRIED && k-- == 0)
            return (long)i;
    return -1;
}

static const double *sort_y;

static int by_y(const void *a, const void *b)
{
    double x = sort_y[*(const size_t *)a], y = sort_y[*(const size_t *)b];
    if (x != y)
        return x < y ? -1 : 1;
    return (*(const size_t *)a > *(const size_t *)b) - (*(const size_t *)a < *(const size_t *)b);
}

void fattn_book_sort_by_y(const fattn_book *b, size_t *idx, size_t n)
{
    sort_y = b->y;
    qsort(idx, n, sizeof *idx, by_y);
}

void fattn_best_insert(size_t *out, size_t *m, size_t k, const double *score, size_t i)
{
    size_t j = *m < k ? (*m)++ : k;
    for (; j > 0 && score[out[j - 1]] < score[i]; --j)
        if (j < k)
            out[j] = out[j - 1];
    if (j < k)
        out[j] = i;
}

void fattn_stall_init(fattn_stall *s)
{
    s->best = HUGE_VAL;
    s->trials = 0;
}

void fattn_stall_observe(fattn_stall *s, double median_us, double step)
{
    if (median_us < s->best * (1 - step))
        s->trials = 0;
    else
        ++s->trials;
    if (median_us < s->best)
        s->best = median_us;
}

double fattn_stall_explore(const fattn_stall *s, double patience, double ramp, double max)
{
    double f = ((double)s->trials - patience) / ramp;
    return f <= 0 ? 0 : f >= 1 ? max : f * max;
}
