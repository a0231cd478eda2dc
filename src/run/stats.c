/*
 * stats.c - percentiles and throughput.
 */
#include "run/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

int fattn_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double fattn_percentile(const double *x, size_t n, double p)
{
    double *s = fattn_xmalloc(n * sizeof *s);
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, fattn_cmp_double);
    double pos = p / 100.0 * (double)(n - 1);
    size_t lo = (size_t)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
    double v = s[lo] + (s[hi] - s[lo]) * (pos - (double)lo);
    free(s);
    return v;
}

void fattn_timing_summarize(const double *us, size_t n, const fattn_shape *s, fattn_timing *t)
{
    t->median_us = fattn_percentile(us, n, 50);
    t->p10_us = fattn_percentile(us, n, 10);
    t->p90_us = fattn_percentile(us, n, 90);
    t->tflops = fattn_shape_flops(s) / (t->median_us * 1e-6) / 1e12;
    t->gbps = fattn_shape_min_bytes(s) / (t->median_us * 1e-6) / 1e9;
}
