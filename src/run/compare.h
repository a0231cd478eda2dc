/*
 * compare.h - the statistics of comparing two sets of timing samples (a
 * confirmation): is the candidate faster than the baseline, by how much,
 * and how sure are we?
 *
 * Everything is nonparametric (GPU times are skewed and often bimodal):
 *   - medians and percentiles (numpy's default linear interpolation);
 *   - percentile-bootstrap confidence intervals of a median, and of the
 *     ratio of two medians (the speedup), from a seeded random stream or
 *     from given resample indices (tests replay numpy's);
 *   - the Mann-Whitney U test, two-sided, normal approximation with tie
 *     correction and continuity correction (scipy.stats.mannwhitneyu,
 *     method="asymptotic");
 *   - Cliff's delta, P(a > b) - P(a < b).
 * tests/data/stats-vectors.json holds reference values from scipy/numpy
 * (tests/tools/stats_vectors.py).
 */
#ifndef FATTN_RUN_COMPARE_H
#define FATTN_RUN_COMPARE_H

#include <stddef.h>
#include <stdint.h>

/* Median of x[0..n), n >= 1 (x need not be sorted; it is not changed). */
double fattn_median(const double *x, size_t n);

/* The medians of B bootstrap resamples of x[0..n) into meds[0..B). The
 * resample b takes x[idx[b*n + i]] for i < n when idx is given, else n
 * indices drawn uniformly from the splitmix64 stream seeded with `seed`. */
void fattn_bootstrap_medians(const double *x, size_t n, size_t B, uint64_t seed, const uint32_t *idx, double *meds);

/* Percentile interval [lo, hi] at `level` (0.95) of B bootstrap values. */
void fattn_percentile_interval(const double *v, size_t B, double level, double *lo, double *hi);

typedef struct fattn_mwu {
    double u; /* U of the first sample: pairs (a, b) with a > b, ties count 1/2 */
    double z; /* standardized max(U1, U2) with continuity correction */
    double p; /* two-sided p-value, 1 where every value ties */
} fattn_mwu;

void fattn_mann_whitney(const double *a, size_t na, const double *b, size_t nb, fattn_mwu *out);

/* Cliff's delta: (#{a > b} - #{a < b}) / (na nb), in [-1, 1]. */
double fattn_cliffs_delta(const double *a, size_t na, const double *b, size_t nb);

/* The magnitude words of |delta| (Romano et al.): negligible < 0.147 <=
 * small < 0.33 <= medium < 0.474 <= large. */
const char *fattn_cliffs_magnitude(double delta);

/* A candidate against a baseline, times in microseconds (lower is better). */
typedef struct fattn_comparison {
    size_t n_cand, n_base;
    double cand_median, cand_lo, cand_hi, cand_p10, cand_p90;
    double base_median, base_lo, base_hi, base_p10, base_p90;
    double speedup, speedup_lo, speedup_hi; /* base median / candidate median, with its CI */
    fattn_mwu mwu;                          /* candidate vs baseline */
    double delta;                           /* Cliff's delta, baseline vs candidate: > 0 when the candidate is faster */
    int significant;                        /* the two CIs do not overlap */
    int p90_ok;                             /* candidate p90 <= baseline p90 */
    int success;                            /* speedup >= target, significant, p90_ok */
    const char *verdict;                    /* success, faster, p90-worse, slower, inconclusive */
} fattn_comparison;

typedef struct fattn_compare_opts {
    size_t resamples; /* bootstrap resamples (>= 10000 for a report) */
    uint64_t seed;
    double level;  /* 0.95 */
    double target; /* the speedup that counts as success: 1.10 */
} fattn_compare_opts;

void fattn_compare(const double *cand, size_t nc, const double *base, size_t nb, const fattn_compare_opts *o,
                   fattn_comparison *out);

#endif
