/*
 * test_stats.c - the statistics of confirm against numpy/scipy reference
 * values (tests/data/stats-vectors.json, written by tests/tools/stats_vectors.py),
 * the bootstrap replayed on numpy's resample indices, its coverage on
 * synthetic data whose median is known, and the verdicts of a comparison.
 *
 *   test_stats VECTORS.json
 */
#include "t.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "run/compare.h"
#include "run/stats.h"
#include "util/misc.h"

static cJSON *vectors;

static double *array(const cJSON *j, size_t *n)
{
    *n = (size_t)cJSON_GetArraySize(j);
    double *x = malloc((*n ? *n : 1) * sizeof *x);
    size_t i = 0;
    for (const cJSON *v = j ? j->child : NULL; v; v = v->next)
        x[i++] = v->valuedouble;
    return x;
}

static uint32_t *indices(const cJSON *j)
{
    size_t n = (size_t)cJSON_GetArraySize(j), i = 0;
    uint32_t *x = malloc(n * sizeof *x);
    for (const cJSON *v = j->child; v; v = v->next)
        x[i++] = (uint32_t)v->valuedouble;
    return x;
}

static double num(const cJSON *j, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(j, name)->valuedouble;
}

static const cJSON *get(const cJSON *j, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(j, name);
}

/* Relative closeness for values of any size. */
#define CHECK_REL(a, b) CHECK_NEAR(a, b, 1e-12 * (1 + fabs((double)(b))))

static void medians_and_percentiles(void)
{
    int cases = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, get(vectors, "percentiles"))
    {
        size_t n;
        double *x = array(get(c, "x"), &n);
        CHECK_REL(fattn_median(x, n), num(c, "median"));
        const cJSON *p;
        cJSON_ArrayForEach(p, get(c, "percentiles")) CHECK_REL(fattn_percentile(x, n, atof(p->string)), p->valuedouble);
        free(x);
        ++cases;
    }
    CHECK(cases >= 6);
}

static void mann_whitney_and_cliffs_delta(void)
{
    int cases = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, get(vectors, "mann_whitney"))
    {
        size_t na, nb;
        double *a = array(get(c, "a"), &na), *b = array(get(c, "b"), &nb);
        fattn_mwu m;
        fattn_mann_whitney(a, na, b, nb, &m);
        t_case = get(c, "name")->valuestring;
        CHECK_REL(m.u, num(c, "u"));
        /* p-values down to 1e-26: relative agreement. */
        CHECK_NEAR(m.p, num(c, "p"), 1e-9 * num(c, "p") + 1e-15);
        CHECK_REL(fattn_cliffs_delta(a, na, b, nb), num(c, "cliffs_delta"));
        /* Swapping the samples: U2 = na nb - U1, the same p, -delta. */
        fattn_mwu r;
        fattn_mann_whitney(b, nb, a, na, &r);
        CHECK_REL(r.u, (double)na * (double)nb - m.u);
        CHECK_REL(r.p, m.p);
        CHECK_REL(fattn_cliffs_delta(b, nb, a, na), -num(c, "cliffs_delta"));
        free(a), free(b);
        ++cases;
    }
    t_case = "mann_whitney_and_cliffs_delta";
    CHECK(cases >= 6);
    /* Every value tied: no evidence at all. */
    double same[4] = {2, 2, 2, 2};
    fattn_mwu m;
    fattn_mann_whitney(same, 2, same + 2, 2, &m);
    CHECK(m.p == 1.0);
    CHECK(fattn_cliffs_delta(same, 2, same + 2, 2) == 0.0);
    CHECK_STR(fattn_cliffs_magnitude(-0.5), "large");
    CHECK_STR(fattn_cliffs_magnitude(0.2), "small");
    CHECK_STR(fattn_cliffs_magnitude(0.1), "negligible");
}

static void bootstrap_replays_numpy_indices(void)
{
    const cJSON *b = get(vectors, "bootstrap");
    size_t B = (size_t)num(b, "B"), n, nb;
    double *cand = array(get(b, "cand"), &n), *base = array(get(b, "base"), &nb);
    uint32_t *ic = indices(get(b, "cand_idx")), *ib = indices(get(b, "base_idx"));
    double *mc = malloc(B * sizeof *mc), *mb = malloc(B * sizeof *mb), lo, hi;
    CHECK_INT(cJSON_GetArraySize(get(b, "cand_idx")), (int)(B * n));
    fattn_bootstrap_medians(cand, n, B, 0, ic, mc);
    fattn_bootstrap_medians(base, nb, B, 0, ib, mb);
    size_t i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, get(b, "cand_medians")) CHECK_REL(mc[i++], v->valuedouble);
    CHECK_INT((int)i, (int)B);
    fattn_percentile_interval(mc, B, num(b, "level"), &lo, &hi);
    CHECK_REL(lo, cJSON_GetArrayItem(get(b, "cand_ci"), 0)->valuedouble);
    CHECK_REL(hi, cJSON_GetArrayItem(get(b, "cand_ci"), 1)->valuedouble);
    fattn_percentile_interval(mb, B, num(b, "level"), &lo, &hi);
    CHECK_REL(lo, cJSON_GetArrayItem(get(b, "base_ci"), 0)->valuedouble);
    CHECK_REL(hi, cJSON_GetArrayItem(get(b, "base_ci"), 1)->valuedouble);
    for (i = 0; i < B; ++i)
        mb[i] /= mc[i];
    fattn_percentile_interval(mb, B, num(b, "level"), &lo, &hi);
    CHECK_REL(lo, cJSON_GetArrayItem(get(b, "speedup_ci"), 0)->valuedouble);
    CHECK_REL(hi, cJSON_GetArrayItem(get(b, "speedup_ci"), 1)->valuedouble);
    free(cand), free(base), free(ic), free(ib), free(mc), free(mb);
}

/* Standard normal deviate (Box-Muller). */
static double normal(fattn_rng *r)
{
    double u = 1.0 - fattn_rng_uniform(r), v = fattn_rng_uniform(r);
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* Coverage: the 95% interval of the median holds the true median in about
 * 95% of datasets. Lognormal times (median exactly 10 us), n = 100, 2000
 * resamples, 400 datasets: the binomial sd at 0.95 is 1.1%. */
static void bootstrap_coverage(void)
{
    enum { DATASETS = 400, N = 100, B = 2000 };
    fattn_rng r;
    fattn_rng_seed(&r, 4242);
    double x[N], *meds = malloc(B * sizeof *meds), lo, hi;
    int hits = 0, same_seed_same_ci = 1;
    for (int d = 0; d < DATASETS; ++d) {
        for (int i = 0; i < N; ++i)
            x[i] = 10.0 * exp(0.1 * normal(&r));
        fattn_bootstrap_medians(x, N, B, (uint64_t)d + 1, NULL, meds);
        fattn_percentile_interval(meds, B, 0.95, &lo, &hi);
        hits += lo <= 10.0 && 10.0 <= hi;
        if (d == 0) {
            double lo2, hi2;
            fattn_bootstrap_medians(x, N, B, 1, NULL, meds);
            fattn_percentile_interval(meds, B, 0.95, &lo2, &hi2);
            same_seed_same_ci = lo2 == lo && hi2 == hi;
        }
    }
    double coverage = (double)hits / DATASETS;
    fprintf(stderr, "bootstrap coverage of the true median: %.3f (%d/%d)\n", coverage, hits, DATASETS);
    CHECK(coverage >= 0.91 && coverage <= 0.985);
    CHECK(same_seed_same_ci);
    free(meds);
}

/* Samples around `median` with +-2% uniform noise and a slow tail. */
static void synth(double *x, size_t n, double median, double tail_frac, double tail, uint64_t seed)
{
    fattn_rng r;
    fattn_rng_seed(&r, seed);
    for (size_t i = 0; i < n; ++i)
        x[i] = (fattn_rng_uniform(&r) < tail_frac ? tail : median) * (1 + (fattn_rng_uniform(&r) - 0.5) / 25);
}

static void verdicts(void)
{
    enum { N = 100 };
    double c[N], b[N];
    fattn_compare_opts o = {10000, 7, 0.95, 1.10};
    fattn_comparison r;
    synth(b, N, 10.0, 0, 0, 1);

    synth(c, N, 8.0, 0, 0, 2);
    fattn_compare(c, N, b, N, &o, &r);
    CHECK_STR(r.verdict, "success");
    CHECK(r.success && r.significant && r.p90_ok);
    CHECK(r.speedup > 1.2 && r.speedup_lo < r.speedup && r.speedup < r.speedup_hi);
    CHECK(r.cand_lo <= r.cand_median && r.cand_median <= r.cand_hi);
    CHECK(r.delta > 0.99 && r.mwu.p < 1e-20);

    synth(c, N, 9.5, 0, 0, 3);
    fattn_compare(c, N, b, N, &o, &r);
    CHECK_STR(r.verdict, "faster");
    CHECK(!r.success && r.significant);

    synth(c, N, 11.0, 0, 0, 4);
    fattn_compare(c, N, b, N, &o, &r);
    CHECK_STR(r.verdict, "slower");
    CHECK(r.delta < -0.99 && r.speedup < 1);

    synth(c, N, 8.0, 0.2, 30.0, 5);
    fattn_compare(c, N, b, N, &o, &r);
    CHECK_STR(r.verdict, "p90-worse");
    CHECK(r.significant && !r.p90_ok && !r.success);

    synth(c, N, 10.0, 0, 0, 6);
    fattn_compare(c, N, b, N, &o, &r);
    CHECK_STR(r.verdict, "inconclusive");
    CHECK(!r.significant && r.mwu.p > 0.01);

    /* The same seed gives the same intervals. */
    fattn_comparison again;
    fattn_compare(c, N, b, N, &o, &again);
    CHECK(again.cand_lo == r.cand_lo && again.speedup_hi == r.speedup_hi);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_stats VECTORS.json\n");
        return T_HARNESS;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return T_HARNESS;
    }
    static char buf[1 << 20];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    if (!(vectors = cJSON_Parse(buf))) {
        fprintf(stderr, "%s: not JSON\n", argv[1]);
        return T_HARNESS;
    }
    T_RUN(medians_and_percentiles);
    T_RUN(mann_whitney_and_cliffs_delta);
    T_RUN(bootstrap_replays_numpy_indices);
    T_RUN(bootstrap_coverage);
    T_RUN(verdicts);
    cJSON_Delete(vectors);
    return t_exit();
}
