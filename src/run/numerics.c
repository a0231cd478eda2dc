/*
 * numerics.c - fp16 conversions, the numerics gate, the CPU fp64 reference.
 */
#include "run/numerics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/fattn_fill.h"
#include "util/err.h"

float fattn_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {
            /* Subnormal: normalize. */
            int e = -1;
            do {
                man <<= 1;
                ++e;
            } while (!(man & 0x400u));
            bits = sign | (uint32_t)(127 - 15 - e) << 23 | (man & 0x3ffu) << 13;
        }
    } else {
        bits = sign | (exp + 127 - 15) << 23 | man << 13;
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t fattn_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u, abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) /* Inf or NaN */
        return (uint16_t)(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0));
    if (abs >= 0x477ff000u) /* rounds to >= 65520: Inf */
        return (uint16_t)(sign | 0x7c00u);
    if (abs < 0x38800000u) {
        /* Subnormal or zero: scale into the subnormal grid of 2^-24. */
        if (abs < 0x33000000u) /* below half of the smallest subnormal */
            return (uint16_t)sign;
        uint32_t e = abs >> 23, man = (abs & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e; /* 113 - e + 13 */
        uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1)))
            ++half;
        return (uint16_t)(sign | half);
    }
    uint32_t half = ((abs >> 13) - (112u << 10)), rem = abs & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1)))
        ++half;
    return (uint16_t)(sign | half);
}

fattn_tolerance fattn_tolerance_default(void)
{
    return (fattn_tolerance){FATTN_DEFAULT_ATOL, FATTN_DEFAULT_RTOL, FATTN_DEFAULT_MAX_REL_L2};
}

const char *fattn_input_set_name(int set)
{
    return set == FATTN_INPUTS_PEAKY ? "peaky" : "uniform";
}

float fattn_input_set_qk_mul(int set)
{
    return set == FATTN_INPUTS_PEAKY ? FATTN_FILL_PEAKY : 1.0f;
}

void fattn_numerics_compare(const uint16_t *out, const float *ref, size_t n, const fattn_tolerance *tol,
                            fattn_numerics *r)
{
    double worst_excess = -1, err2 = 0, ref2 = 0;
    memset(r, 0, sizeof *r);
    r->n = n;
    for (size_t i = 0; i < n; ++i) {
        double o = fattn_half_to_float(out[i]), x = ref[i];
        double ax = fabs(x);
        if (ax > r->max_abs_ref)
            r->max_abs_ref = ax;
        if (isfinite(x))
            ref2 += x * x;
        if (!isfinite(o)) {
            if (!r->n_nonfinite++ && worst_excess < INFINITY) {
                worst_excess = INFINITY;
                r->worst = i, r->worst_out = o, r->worst_ref = x;
            }
            ++r->n_bad;
            continue;
        }
        double err = fabs(o - x), excess = err - (tol->atol + tol->rtol * ax);
        err2 += err * err;
        if (err > r->max_abs_err)
            r->max_abs_err = err;
        if (excess > 0)
            ++r->n_bad;
        if (excess > worst_excess) {
            worst_excess = excess;
            r->worst = i, r->worst_out = o, r->worst_ref = x;
        }
    }
    r->norm_err = r->max_abs_ref > 0 ? r->max_abs_err / r->max_abs_ref : r->max_abs_err;
    r->l2_err = sqrt(err2), r->l2_ref = sqrt(ref2);
    r->rel_l2 = r->l2_ref > 0 ? r->l2_err / r->l2_ref : r->l2_err;
    r->l2_bound = r->l2_ref > 0 ? tol->max_rel_l2 : tol->atol;
    r->l2_bad = !(r->rel_l2 <= r->l2_bound);
}

int fattn_numerics_ok(const fattn_numerics *r)
{
    return r->n_bad == 0 && r->n_nonfinite == 0 && !r->l2_bad;
}

const fattn_numerics *fattn_numerics_worse(const fattn_numerics *a, const fattn_numerics *b)
{
    int ok_a = fattn_numerics_ok(a), ok_b = fattn_numerics_ok(b);
    if (ok_a != ok_b)
        return ok_a ? b : a;
    /* Two failures: NaN/Inf first, then elements out of tolerance (the norm
     * leaves non-finite elements out, so it alone could hide them). */
    if (!ok_a && a->n_nonfinite != b->n_nonfinite)
        return a->n_nonfinite > b->n_nonfinite ? a : b;
    if (!ok_a && a->n_bad != b->n_bad)
        return a->n_bad > b->n_bad ? a : b;
    double ra = a->l2_bound > 0 ? a->rel_l2 / a->l2_bound : a->rel_l2;
    double rb = b->l2_bound > 0 ? b->rel_l2 / b->l2_bound : b->rel_l2;
    return rb > ra ? b : a;
}

void fattn_numerics_describe(const fattn_numerics *r, const fattn_shape *s, char *out, size_t n)
{
    size_t i = r->worst, d = (size_t)s->head_dim, row = i / d, seq = (size_t)s->seqlen;
    const int elem = r->n_bad > 0, norm = r->l2_bad;
    const char *gate = elem && norm ? "both gates failed"
                       : elem       ? "elementwise gate failed"
                       : norm       ? "norm-wise gate failed"
                                    : "";
    char head[80] = "";
    if (*gate || r->set != FATTN_INPUTS_UNIFORM)
        snprintf(head, sizeof head, "%s%s%s inputs: ", gate, *gate ? " on " : "", fattn_input_set_name(r->set));
    snprintf(out, n,
             "%srel L2 %.3g (%s %.3g%s), max |o-r| %.3g (normalized %.3g), %zu of %zu out of tolerance, %zu not "
             "finite; worst at b=%zu h=%zu s=%zu d=%zu: %.6g vs %.6g",
             head, r->rel_l2, norm ? ">" : "<=", r->l2_bound, r->l2_ref > 0 ? "" : " = atol, ||r|| = 0", r->max_abs_err,
             r->norm_err, r->n_bad, r->n, r->n_nonfinite, row / seq / (size_t)s->heads, row / seq % (size_t)s->heads,
             row % seq, i % d, r->worst_out, r->worst_ref);
}

float fattn_input_value(uint64_t seed, int set, unsigned tensor, uint64_t index)
{
    float mul = tensor < 2 ? fattn_input_set_qk_mul(set) : 1.0f;
    return fattn_half_to_float(fattn_float_to_half(mul * fattn_fill_value(seed, tensor, index)));
}

void fattn_cpu_attend(const float *q, const float *k, const float *v, int n, int d, double *scores, double *out)
{
    const double scale = 1.0 / sqrt((double)d);
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < n; ++j) {
        double dot = 0;
        for (int c = 0; c < d; ++c)
            dot += (double)q[c] * k[(size_t)j * (size_t)d + (size_t)c];
        scores[j] = dot * scale;
        mx = scores[j] > mx ? scores[j] : mx;
    }
    for (int c = 0; c < d; ++c)
        out[c] = 0;
    for (int j = 0; j < n; ++j) {
        double p = exp(scores[j] - mx);
        sum += p;
        for (int c = 0; c < d; ++c)
            out[c] += p * v[(size_t)j * (size_t)d + (size_t)c];
    }
    for (int c = 0; c < d; ++c)
        out[c] /= sum;
}

void fattn_cpu_attention_row(const fattn_shape *s, uint64_t seed, int set, int b, int h, int row, double *out)
{
    const int d = s->head_dim, n_keys = s->causal ? row + 1 : s->seqlen;
    const uint64_t head = ((uint64_t)b * (uint64_t)s->heads + (uint64_t)h) * (uint64_t)s->seqlen * (uint64_t)d;
    const size_t n = (size_t)n_keys * (size_t)d;
    float q[128], *k = fattn_xmalloc(n * sizeof *k), *v = fattn_xmalloc(n * sizeof *v);
    double *scores = fattn_xmalloc((size_t)n_keys * sizeof *scores);
    for (int c = 0; c < d; ++c)
        q[c] = fattn_input_value(seed, set, 0, head + (uint64_t)row * (uint64_t)d + (uint64_t)c);
    for (size_t i = 0; i < n; ++i) {
        k[i] = fattn_input_value(seed, set, 1, head + i);
        v[i] = fattn_input_value(seed, set, 2, head + i);
    }
    fattn_cpu_attend(q, k, v, n_keys, d, scores, out);
    free(k), free(v), free(scores);
}
