/*
 * test_numerics.c - fp16 conversions on known bit patterns, the numerics
 * gate on hand-made outputs, the seeded fill, the CPU fp64 attention row on
 * cases whose answer is known, and the timing summaries.
 */
#include "t.h"

#include "../kernels/fattn_fill.h"
#include "run/numerics.h"
#include "run/stats.h"
#include "util/err.h"

static void half_conversions(void)
{
    static const struct {
        uint16_t h;
        float f;
    } exact[] = {
        {0x0000, 0.0f},
        {0x3c00, 1.0f},
        {0xbc00, -1.0f},
        {0x4000, 2.0f},
        {0x3555, 0.333251953125f},
        {0x7bff, 65504.0f},
        {0x0400, 6.103515625e-05f},        /* smallest normal */
        {0x0001, 5.9604644775390625e-08f}, /* smallest subnormal, 2^-24 */
        {0x03ff, 6.097555160522461e-05f},  /* largest subnormal */
        {0x7c00, INFINITY},
        {0xfc00, -INFINITY},
    };
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; ++i) {
        CHECK(fattn_half_to_float(exact[i].h) == exact[i].f);
        CHECK_INT(fattn_float_to_half(exact[i].f), exact[i].h);
    }
    CHECK(isnan(fattn_half_to_float(FATTN_HALF_POISON)));
    CHECK(isnan(fattn_half_to_float(fattn_float_to_half(NAN))));
    /* Rounding to nearest, ties to even: 1 + 2^-11 is halfway between 1 and
     * 1 + 2^-10 and goes to 1 (even); 1 + 3*2^-11 goes up to 1 + 2^-9. */
    CHECK_INT(fattn_float_to_half(1.0f + 0x1p-11f), 0x3c00);
    CHECK_INT(fattn_float_to_half(1.0f + 3 * 0x1p-11f), 0x3c02);
    CHECK_INT(fattn_float_to_half(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);
    /* Overflow: 65520 and above round to infinity; 65519 to 65504. */
    CHECK_INT(fattn_float_to_half(65520.0f), 0x7c00);
    CHECK_INT(fattn_float_to_half(65519.0f), 0x7bff);
    /* Underflow: half of 2^-24 ties to 0 (even), a little more to 2^-24. */
    CHECK_INT(fattn_float_to_half(0x1p-25f), 0x0000);
    CHECK_INT(fattn_float_to_half(0x1.01p-25f), 0x0001);
    CHECK_INT(fattn_float_to_half(-0x1p-30f), 0x8000);
    /* Every fp16 value round-trips. */
    int ok = 1;
    for (uint32_t h = 0; h < 0x10000; ++h) {
        float f = fattn_half_to_float((uint16_t)h);
        if (!isnan(f))
            ok &= fattn_float_to_half(f) == h;
    }
    CHECK(ok);
}

static void numerics_gate(void)
{
    uint16_t out[4];
    float ref[4] = {1.0f, -2.0f, 0.5f, 0.0f};
    fattn_numerics r;
    /* The elementwise gate alone (the norm-wise bound 1 lets all through). */
    const fattn_tolerance tol = {1e-2, 1e-2, 1}, loose = {1e-2, 3e-2, 1};
    for (int i = 0; i < 4; ++i)
        out[i] = fattn_float_to_half(ref[i]);
    fattn_numerics_compare(out, ref, 4, &tol, &r);
    CHECK(fattn_numerics_ok(&r));
    CHECK_NEAR(r.max_abs_err, 0, 0);
    CHECK_NEAR(r.max_abs_ref, 2.0, 0);
    /* Element 1 off by 0.05: the bound is 0.01 + 0.01 * 2 = 0.03. */
    out[1] = fattn_float_to_half(-2.05f); /* -2.05 in fp16 is -2.05078125 */
    fattn_numerics_compare(out, ref, 4, &tol, &r);
    CHECK(!fattn_numerics_ok(&r));
    CHECK_INT(r.n_bad, 1);
    CHECK_INT(r.worst, 1);
    CHECK_NEAR(r.max_abs_err, 0.05078125, 1e-12);
    CHECK_NEAR(r.norm_err, 0.05078125 / 2, 1e-12);
    /* Within a looser bound (0.01 + 0.03 * 2 = 0.07) it passes. */
    fattn_numerics_compare(out, ref, 4, &loose, &r);
    CHECK(fattn_numerics_ok(&r));
    /* A poisoned element (never written) is caught as non-finite. */
    out[3] = FATTN_HALF_POISON;
    fattn_numerics_compare(out, ref, 4, &loose, &r);
    CHECK(!fattn_numerics_ok(&r));
    CHECK_INT(r.n_nonfinite, 1);
    CHECK_INT(r.worst, 3);
    char text[256];
    fattn_shape s = {1, 1, 2, 64, 0};
    fattn_numerics_describe(&r, &s, text, sizeof text);
    CHECK_CONTAINS(text, "1 of 4 out of tolerance, 1 not finite");
    CHECK_CONTAINS(text, "elementwise gate failed on uniform inputs: ");
}

/* The norm-wise gate: ||o - r|| / ||r|| in fp64 over every element. */
static void norm_gate(void)
{
    enum { N = 4096 };
    static uint16_t out[N];
    static float ref[N];
    const fattn_tolerance tol = fattn_tolerance_default();
    fattn_numerics r;
    char text[400];
    fattn_shape s = {1, 1, N / 64, 64, 0};
    CHECK_NEAR(tol.max_rel_l2, 4e-3, 0);
    /* Exact figures: r = 0.5 everywhere, o = 0.5 + 2^-8 on a quarter of
     * the elements: ||o - r|| = 2^-8 * sqrt(N / 4), ||r|| = 0.5 sqrt(N). */
    for (int i = 0; i < N; ++i)
        ref[i] = 0.5f, out[i] = fattn_float_to_half(i % 4 ? 0.5f : 0.5f + 0x1p-8f);
    fattn_numerics_compare(out, ref, N, &tol, &r);
    CHECK_NEAR(r.l2_err, 0x1p-8 * sqrt(N / 4.0), 1e-15);
    CHECK_NEAR(r.l2_ref, 0.5 * sqrt((double)N), 1e-12);
    CHECK_NEAR(r.rel_l2, 0x1p-8 / 2 / 0.5, 1e-15); /* 3.9e-3: inside 4e-3 */
    CHECK(fattn_numerics_ok(&r) && !r.l2_bad && r.l2_bound == tol.max_rel_l2);
    /* A shift of every element by 1% of its value: within the elementwise
     * bound (0.01 + 0.01|r|) everywhere, 2.5x over the norm-wise one. */
    for (int i = 0; i < N; ++i) {
        ref[i] = (float)(0.02 * sin(i * 0.37));
        out[i] = fattn_float_to_half(ref[i] * 1.01f);
    }
    fattn_numerics_compare(out, ref, N, &tol, &r);
    CHECK_INT(r.n_bad, 0);
    CHECK(r.l2_bad && !fattn_numerics_ok(&r));
    CHECK(r.rel_l2 > 0.009 && r.rel_l2 < 0.011);
    fattn_numerics_describe(&r, &s, text, sizeof text);
    CHECK_CONTAINS(text, "norm-wise gate failed on uniform inputs: rel L2 0.01");
    CHECK_CONTAINS(text, "> 0.004");
    CHECK_CONTAINS(text, "0 of 4096 out of tolerance");
    /* Looser, it passes, and the line says so without a gate. */
    const fattn_tolerance wide = {1e-2, 1e-2, 0.02};
    fattn_numerics_compare(out, ref, N, &wide, &r);
    CHECK(fattn_numerics_ok(&r));
    fattn_numerics_describe(&r, &s, text, sizeof text);
    CHECK(strstr(text, "gate failed") == NULL);
    CHECK_CONTAINS(text, "<= 0.02");
    /* ||r|| = 0: the bound is ||o|| <= atol. 4096 elements of 1e-3 each are
     * within atol one by one, but ||o|| = 0.064. */
    for (int i = 0; i < N; ++i)
        ref[i] = 0, out[i] = fattn_float_to_half(i % 64 ? 0.0f : 1e-3f);
    fattn_numerics_compare(out, ref, N, &tol, &r);
    CHECK(fattn_numerics_ok(&r)); /* 64 of them: ||o|| = 8e-3 <= 1e-2 */
    CHECK_NEAR(r.l2_bound, tol.atol, 0);
    for (int i = 0; i < N; ++i)
        out[i] = fattn_float_to_half(1e-3f);
    fattn_numerics_compare(out, ref, N, &tol, &r);
    CHECK(!fattn_numerics_ok(&r) && r.n_bad == 0 && r.l2_bad);
    fattn_numerics_describe(&r, &s, text, sizeof text);
    CHECK_CONTAINS(text, "= atol, ||r|| = 0");
    /* A non-finite element leaves the norm finite (over the finite ones). */
    out[5] = FATTN_HALF_POISON;
    fattn_numerics_compare(out, ref, N, &tol, &r);
    CHECK(isfinite(r.rel_l2) && r.n_nonfinite == 1);
    /* The worse of two: failing over passing, else nearer its bound. */
    fattn_numerics a = {.rel_l2 = 1e-3, .l2_bound = 4e-3}, b = {.rel_l2 = 2e-3, .l2_bound = 4e-3};
    CHECK(fattn_numerics_worse(&a, &b) == &b && fattn_numerics_worse(&b, &a) == &b);
    a.n_bad = 1;
    CHECK(fattn_numerics_worse(&a, &b) == &a && fattn_numerics_worse(&b, &a) == &a);
}

static void fill(void)
{
    /* Deterministic, in [-1, 1), different per seed and tensor, mean near 0. */
    double sum = 0, lo = 1, hi = -1;
    for (uint64_t i = 0; i < 100000; ++i) {
        float v = fattn_fill_value(42, 1, i);
        sum += v;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    CHECK(lo >= -1 && hi < 1 && lo < -0.999 && hi > 0.999);
    CHECK_NEAR(sum / 100000, 0, 0.01);
    CHECK(fattn_fill_value(42, 1, 7) == fattn_fill_value(42, 1, 7));
    CHECK(fattn_fill_value(42, 1, 7) != fattn_fill_value(43, 1, 7));
    CHECK(fattn_fill_value(42, 1, 7) != fattn_fill_value(42, 2, 7));
    /* The host's copy of an input is its fp16 value. */
    float v = fattn_input_value(42, FATTN_INPUTS_UNIFORM, 0, 3);
    CHECK(v == fattn_half_to_float(fattn_float_to_half(fattn_fill_value(42, 0, 3))));
    /* Peaky: Q and K times 3 before the rounding, V as it is. */
    CHECK(fattn_input_value(42, FATTN_INPUTS_PEAKY, 0, 3)
          == fattn_half_to_float(fattn_float_to_half(3.0f * fattn_fill_value(42, 0, 3))));
    CHECK(fattn_input_value(42, FATTN_INPUTS_PEAKY, 1, 9)
          == fattn_half_to_float(fattn_float_to_half(3.0f * fattn_fill_value(42, 1, 9))));
    CHECK(fattn_input_value(42, FATTN_INPUTS_PEAKY, 2, 9) == fattn_input_value(42, FATTN_INPUTS_UNIFORM, 2, 9));
    CHECK_STR(fattn_input_set_name(FATTN_INPUTS_PEAKY), "peaky");
    /* The scores q.k / sqrt(D): standard deviation 1/3 uniform, 3 peaky. */
    for (int set = 0; set < FATTN_INPUT_SETS; ++set) {
        double s1 = 0, s2 = 0;
        const int d = 64, n = 4000;
        for (int j = 0; j < n; ++j) {
            double dot = 0;
            for (int k = 0; k < d; ++k)
                dot += (double)fattn_input_value(3, set, 0, (uint64_t)k)
                       * fattn_input_value(3, set, 1, (uint64_t)j * d + (uint64_t)k);
            dot /= sqrt(d);
            s1 += dot, s2 += dot * dot;
        }
        double sd = sqrt(s2 / n - (s1 / n) * (s1 / n));
        if (set == FATTN_INPUTS_PEAKY)
            CHECK(sd > 2.4 && sd < 3.6);
        else
            CHECK(sd > 0.27 && sd < 0.4);
    }
}

/* Naive attention of row `row` over explicit inputs, for comparison. */
static void naive(const fattn_shape *s, uint64_t seed, int set, int b, int h, int row, double *out)
{
    int d = s->head_dim, n = s->causal ? row + 1 : s->seqlen;
    uint64_t base = ((uint64_t)b * s->heads + h) * s->seqlen * d;
    double w[64], total = 0;
    for (int j = 0; j < n; ++j) {
        double dot = 0;
        for (int k = 0; k < d; ++k)
            dot +=
                fattn_input_value(seed, set, 0, base + row * d + k) * fattn_input_value(seed, set, 1, base + j * d + k);
        w[j] = exp(dot / sqrt(d));
        total += w[j];
    }
    for (int k = 0; k < d; ++k) {
        out[k] = 0;
        for (int j = 0; j < n; ++j)
            out[k] += w[j] / total * fattn_input_value(seed, set, 2, base + j * d + k);
    }
}

static void cpu_reference(void)
{
    double got[128], want[128];
    fattn_shape s = {2, 3, 37, 64, 0};
    /* Causal row 0 sees only key 0: the output is V's row 0. */
    s.causal = 1;
    fattn_cpu_attention_row(&s, 9, FATTN_INPUTS_UNIFORM, 1, 2, 0, got);
    uint64_t base = (1ull * 3 + 2) * 37 * 64;
    int same = 1;
    for (int k = 0; k < 64; ++k)
        same &= got[k] == fattn_input_value(9, FATTN_INPUTS_UNIFORM, 2, base + k);
    CHECK(same);
    /* Against the naive formula, causal and not, D 64 and 128, both sets
     * (peaky scores reach about 10: exp without the maximum still fits). */
    for (int set = 0; set < FATTN_INPUT_SETS; ++set)
        for (int causal = 0; causal <= 1; ++causal)
            for (int d = 64; d <= 128; d += 64) {
                fattn_shape t = {2, 3, 37, d, causal};
                fattn_cpu_attention_row(&t, 5, set, 1, 1, 30, got);
                naive(&t, 5, set, 1, 1, 30, want);
                double err = 0;
                for (int k = 0; k < d; ++k)
                    err = fmax(err, fabs(got[k] - want[k]));
                CHECK(err < 1e-12);
            }
    /* The outputs are convex combinations of V's rows: inside [-1, 1]. */
    fattn_cpu_attention_row(&s, 11, FATTN_INPUTS_PEAKY, 0, 0, 36, got);
    int inside = 1;
    for (int k = 0; k < 64; ++k)
        inside &= got[k] >= -1 && got[k] <= 1;
    CHECK(inside);
}

static void timing(void)
{
    double x[] = {5, 1, 4, 2, 3};
    CHECK_NEAR(fattn_percentile(x, 5, 50), 3, 0);
    CHECK_NEAR(fattn_percentile(x, 5, 0), 1, 0);
    CHECK_NEAR(fattn_percentile(x, 5, 100), 5, 0);
    /* numpy.percentile([1,2,3,4,5], 10) = 1.4; 90 -> 4.6 */
    CHECK_NEAR(fattn_percentile(x, 5, 10), 1.4, 1e-12);
    CHECK_NEAR(fattn_percentile(x, 5, 90), 4.6, 1e-12);
    double one = 7;
    CHECK_NEAR(fattn_percentile(&one, 1, 90), 7, 0);
    /* 2,8,512,64 at 10 us: 4*2*8*512*512*64 = 1.07e9 FLOP -> 107.4 TFLOP/s;
     * 4 tensors of 2*8*512*64 halves = 4194304 B -> 419.4 GB/s. */
    fattn_shape s = {2, 8, 512, 64, 0};
    double us[] = {10, 10, 10};
    fattn_timing t;
    fattn_timing_summarize(us, 3, &s, &t);
    CHECK_NEAR(t.tflops, 1073741824.0 / 10e-6 / 1e12, 1e-9);
    CHECK_NEAR(t.gbps, 4194304.0 / 10e-6 / 1e9, 1e-9);
}

int main(void)
{
    T_RUN(half_conversions);
    T_RUN(numerics_gate);
    T_RUN(norm_gate);
    T_RUN(fill);
    T_RUN(cpu_reference);
    T_RUN(timing);
    return t_exit();
}
