/*
 * compare.c - medians, the bootstrap, Mann-Whitney U and Cliff's delta.
 */
#include "run/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run/stats.h"
#include "util/err.h"
#include "util/misc.h"

/* The k-th smallest of v[0..n), which it reorders (Wirth's selection). */
static double select_kth(double *v, size_t n, size_t k)
{
    long l = 0, m = (long)n - 1, kk = (long)k;
    while (l < m) {
        double x = v[kk];
        long i = l, j = m;
        do {
            while (v[i] < x)
                ++i;
            while (x < v[j])
                --j;
            if (i <= j) {
                double t = v[i];
                v[i] = v[j], v[j] = t;
                ++i, --j;
            }
        } while (i <= j);
        if (j < kk)
            l = i;
        if (kk < i)
            m = j;
    }
    return v[kk];
}

/* Median of scratch v[0..n), which it reorders. */
static double median_inplace(double *v, size_t n)
{
    double hi = select_kth(v, n, n / 2);
    if (n % 2)
        return hi;
    /* The lower middle is the largest of v[0..n/2). */
    double lo = v[0];
    for (size_t i = 1; i < n / 2; ++i)
        if (v[i] > lo)
            lo = v[i];
    return (lo + hi) / 2;
}

double fattn_median(const double *x, size_t n)
{
    double *v = fattn_xmalloc(n * sizeof *v);
    memcpy(v, x, n * sizeof *v);
    double m = median_inplace(v, n);
    free(v);
    return m;
}

void fattn_bootstrap_medians(const double *x, size_t n, size_t B, uint64_t seed, const uint32_t *idx, double *meds)
{
    double *v = fattn_xmalloc(n * sizeof *v);
    fattn_rng rng;
    fattn_rng_seed(&rng, seed);
    for (size_t b = 0; b < B; ++b) {
        for (size_t i = 0; i < n; ++i)
            v[i] = x[idx ? idx[b * n + i] : fattn_rng_below(&rng, n)];
        meds[b] = median_inplace(v, n);
    }
    free(v);
}

void fattn_percentile_interval(const double *v, size_t B, double level, double *lo, double *hi)
{
    double *s = fattn_xmalloc(B * sizeof *s);
    memcpy(s, v, B * sizeof *s);
    qsort(s, B, sizeof *s, fattn_cmp_double);
    double q[2] = {(1 - level) / 2, (1 + level) / 2}, out[2];
    for (int k = 0; k < 2; ++k) {
        double pos = q[k] * (double)(B - 1);
        size_t a = (size_t)floor(pos), b = a + 1 < B ? a + 1 : a;
        out[k] = s[a] + (s[b] - s[a]) * (pos - (double)a);
    }
    *lo = out[0], *hi = out[1];
    free(s);
}

/* One value of the pooled sample, remembering which sample it came from. */
typedef struct tagged {
    double v;
    int first;
} tagged;

static int cmp_tagged(const void *a, const void *b)
{
    return fattn_cmp_double(&((const tagged *)a)->v, &((const tagged *)b)->v);
}

void fattn_mann_whitney(const double *a, size_t na, const double *b, size_t nb, fattn_mwu *out)
{
    size_t n = na + nb;
    tagged *t = fattn_xmalloc(n * sizeof *t);
    for (size_t i = 0; i < na; ++i)
        t[i] = (tagged){a[i], 1};
    for (size_t i = 0; i < nb; ++i)
        t[na + i] = (tagged){b[i], 0};
    qsort(t, n, sizeof *t, cmp_tagged);
    /* Midranks; ties add t^3 - t to the correction. */
    double r1 = 0, ties = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && t[j + 1].v == t[i].v)
            ++j;
        double rank = (double)(i + j + 2) / 2, len = (double)(j - i + 1);
        for (size_t k = i; k <= j; ++k)
            if (t[k].first)
                r1 += rank;
        ties += len * len * len - len;
        i = j + 1;
    }
    free(t);
    double n1 = (double)na, n2 = (double)nb, nn = (double)n;
    out->u = r1 - n1 * (n1 + 1) / 2;
    double u = fmax(out->u, n1 * n2 - out->u);
    double mu = n1 * n2 / 2;
    double var = n1 * n2 / 12 * ((nn + 1) - (nn > 1 ? ties / (nn * (nn - 1)) : 0));
    if (var <= 0) {
        out->z = 0, out->p = 1;
        return;
    }
    out->z = (u - mu - 0.5) / sqrt(var);
    out->p = fmin(1.0, erfc(out->z / sqrt(2.0)));
}

double fattn_cliffs_delta(const double *a, size_t na, const double *b, size_t nb)
{
    double *s = fattn_xmalloc(nb * sizeof *s);
    memcpy(s, b, nb * sizeof *s);
    qsort(s, nb, sizeof *s, fattn_cmp_double);
    double more = 0, less = 0;
    for (size_t i = 0; i < na; ++i) {
        /* below: #{b < a[i]}; upto: #{b <= a[i]} */
        size_t lo = 0, hi = nb;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (s[mid] < a[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t below = lo;
        hi = nb;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (s[mid] <= a[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        more += (double)below;
        less += (double)(nb - lo);
    }
    free(s);
    return (more - less) / ((double)na * (double)nb);
}

const char *fattn_cliffs_magnitude(double delta)
{
    double d = fabs(delta);
    return d < 0.147 ? "negligible" : d < 0.33 ? "small" : d < 0.474 ? "medium" : "large";
}

void fattn_compare(const double *cand, size_t nc, const double *base, size_t nb, const fattn_compare_opts *o,
                   fattn_comparison *out)
{
    size_t B = o->resamples;
    double *mc = fattn_xmalloc(B * sizeof *mc), *mb = fattn_xmalloc(B * sizeof *mb);
    memset(out, 0, sizeof *out);
    out->n_cand = nc, out->n_base = nb;
    out->cand_median = fattn_median(cand, nc);
    out->base_median = fattn_median(base, nb);
    out->cand_p10 = fattn_percentile(cand, nc, 10), out->cand_p90 = fattn_percentile(cand, nc, 90);
    out->base_p10 = fattn_percentile(base, nb, 10), out->base_p90 = fattn_percentile(base, nb, 90);
    fattn_bootstrap_medians(cand, nc, B, o->seed, NULL, mc);
    fattn_bootstrap_medians(base, nb, B, o->seed ^ 0x9e3779b97f4a7c15ull, NULL, mb);
    fattn_percentile_interval(mc, B, o->level, &out->cand_lo, &out->cand_hi);
    fattn_percentile_interval(mb, B, o->level, &out->base_lo, &out->base_hi);
    for (size_t i = 0; i < B; ++i)
        mb[i] /= mc[i];
    out->speedup = out->base_median / out->cand_median;
    fattn_percentile_interval(mb, B, o->level, &out->speedup_lo, &out->speedup_hi);
    free(mc), free(mb);
    fattn_mann_whitney(cand, nc, base, nb, &out->mwu);
    out->delta = fattn_cliffs_delta(base, nb, cand, nc);
    out->significant = out->cand_hi < out->base_lo || out->base_hi < out->cand_lo;
    out->p90_ok = out->cand_p90 <= out->base_p90;
    int faster = out->significant && out->cand_hi < out->base_lo;
    out->success = faster && out->speedup >= o->target && out->p90_ok;
    out->verdict = !out->significant          ? "inconclusive"
                   : !faster                  ? "slower"
                   : out->speedup < o->target ? "faster"
                   : !out->p90_ok             ? "p90-worse"
                                              : "success";
}
