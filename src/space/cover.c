/*
 * cover.c - greedy pairwise covering over listed candidates.
 */
#include "space/cover.h"

#include <stdlib.h>
#include <string.h>

#define V FATTN_COVER_MAX_VALUES

/* Index of the pair (f, a), (g, b) with f < g. */
static size_t pair_index(int nfactors, int f, int a, int g, int b)
{
    return (((size_t)f * (size_t)nfactors + (size_t)g) * V + (size_t)a) * V + (size_t)b;
}

int fattn_cover_pairs(const int *rows, size_t nrows, int nfactors, const int *nvalues, size_t *chosen, size_t *npairs)
{
    if (nfactors < 1 || nfactors > FATTN_COVER_MAX_FACTORS)
        return -1;
    for (int f = 0; f < nfactors; ++f)
        if (nvalues[f] < 1 || nvalues[f] > V)
            return -1;
    for (size_t i = 0; i < nrows * (size_t)nfactors; ++i)
        if (rows[i] < 0 || rows[i] >= nvalues[i % (size_t)nfactors])
            return -1;
    const size_t npair = (size_t)nfactors * (size_t)nfactors * V * V;
    /* 0: no allowed row holds it; 1: to cover; 2: covered. */
    unsigned char *state = calloc(npair, 1);
    unsigned char *used = calloc(nrows ? nrows : 1, 1);
    if (!state || !used) {
        free(state), free(used);
        return -1;
    }
    size_t left = 0, covered = 0;
    for (size_t i = 0; i < nrows; ++i) {
        const int *r = rows + i * (size_t)nfactors;
        for (int f = 0; f < nfactors; ++f)
            for (int g = f + 1; g < nfactors; ++g) {
                unsigned char *s = &state[pair_index(nfactors, f, r[f], g, r[g])];
                if (!*s) {
                    *s = 1;
                    ++left;
                }
            }
    }
    int n = 0;
    while (left) {
        size_t best = nrows, best_gain = 0;
        for (size_t i = 0; i < nrows; ++i) {
            if (used[i])
                continue;
            const int *r = rows + i * (size_t)nfactors;
            size_t gain = 0;
            for (int f = 0; f < nfactors; ++f)
                for (int g = f + 1; g < nfactors; ++g)
                    gain += state[pair_index(nfactors, f, r[f], g, r[g])] == 1;
            if (gain > best_gain)
                best = i, best_gain = gain;
        }
        if (best == nrows) /* cannot happen: every pair to cover is in some row */
            break;
        used[best] = 1;
        chosen[n++] = best;
        const int *r = rows + best * (size_t)nfactors;
        for (int f = 0; f < nfactors; ++f)
            for (int g = f + 1; g < nfactors; ++g) {
                unsigned char *s = &state[pair_index(nfactors, f, r[f], g, r[g])];
                if (*s == 1) {
                    *s = 2;
                    --left;
                    ++covered;
                }
            }
    }
    if (npairs)
        *npairs = covered;
    free(state);
    free(used);
    return n;
}
