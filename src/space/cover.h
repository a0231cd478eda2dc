/*
 * cover.h - a pairwise covering sample: few rows such that every pair of
 * values of every two factors that any allowed row holds is held by one of
 * the chosen rows.
 *
 * The candidates are given whole (a space is small enough to list: the
 * default space times head dimensions, masks and lengths is under 50,000
 * rows), so a pair no allowed row can hold (BLOCK_M=32 with NUM_WARPS=4) is
 * never asked for. The greedy choice takes, each time, the first candidate
 * covering the most pairs not yet covered: deterministic, and within a
 * logarithmic factor of the fewest rows.
 */
#ifndef FATTN_SPACE_COVER_H
#define FATTN_SPACE_COVER_H

#include <stddef.h>

#define FATTN_COVER_MAX_FACTORS 24
#define FATTN_COVER_MAX_VALUES  16

/* rows[i * nfactors + f] is candidate i's value index for factor f (below
 * nvalues[f] <= FATTN_COVER_MAX_VALUES). Writes the chosen candidates'
 * indices to chosen (room for nrows) and returns how many, or -1 when the
 * arguments are out of range or memory runs out. *npairs (may be NULL) gets
 * the number of pairs covered. */
int fattn_cover_pairs(const int *rows, size_t nrows, int nfactors, const int *nvalues, size_t *chosen, size_t *npairs);

#endif
