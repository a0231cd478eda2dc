/*
 * stats.h - summaries of timing samples: percentiles (linear interpolation
 * between closest ranks, numpy's default), and throughput from a time.
 */
#ifndef FATTN_RUN_STATS_H
#define FATTN_RUN_STATS_H

#include <stddef.h>

#include "target/shape.h"

/* qsort's comparison of two doubles, ascending. */
int fattn_cmp_double(const void *a, const void *b);

/* The p-th percentile (0..100) of x[0..n), n >= 1; x need not be sorted. */
double fattn_percentile(const double *x, size_t n, double p);

typedef struct fattn_timing {
    double median_us, p10_us, p90_us;
    double tflops; /* at the median */
    double gbps;   /* Q, K, V read and O written once, at the median */
} fattn_timing;

/* Summarizes per-launch samples (microseconds) of a kernel on shape s. */
void fattn_timing_summarize(const double *us, size_t n, const fattn_shape *s, fattn_timing *t);

#endif
