/*
 * numerics.h - checking a candidate's output against the reference.
 *
 * The candidate writes fp16, the reference kernel fp32, both from the same
 * seeded inputs. Two gates hold the output:
 *   - elementwise: every element finite and |o - r| <= atol + rtol * |r|;
 *     the output buffer is poisoned with NaN before each run, so an element
 *     the kernel never wrote fails as non-finite;
 *   - norm-wise: the relative L2 error ||o - r|| / ||r|| over every element,
 *     accumulated in fp64, at most max_rel_l2 (||o|| <= atol where ||r|| is
 *     0). A bug that moves every row a little (a dropped key, an unmasked
 *     tail: about 1/S each with flat scores) passes the first and fails this
 *     one: a correct fp16 kernel lands near 3e-4 (docs/numerics.md).
 * Every check runs two input sets from the same seed (kernels/fattn_fill.h):
 * uniform (Q, K, V in [-1, 1)) and peaky (Q and K times FATTN_FILL_PEAKY, so
 * that the scores' standard deviation is about 3 and the running maximum and
 * its rescaling matter). The CPU computes single rows in fp64 from the same
 * seeds, to check the reference kernel itself.
 */
#ifndef FATTN_RUN_NUMERICS_H
#define FATTN_RUN_NUMERICS_H

#include <stddef.h>
#include <stdint.h>

#include "target/shape.h"

/* fp16 bit patterns <-> float (IEEE binary16, round to nearest even). */
float fattn_half_to_float(uint16_t h);
uint16_t fattn_float_to_half(float f);

/* The fp16 NaN the output is poisoned with. */
#define FATTN_HALF_POISON 0x7fffu

#define FATTN_DEFAULT_ATOL       1e-2
#define FATTN_DEFAULT_RTOL       1e-2
#define FATTN_DEFAULT_MAX_REL_L2 4e-3

/* The bounds a check holds the output to. */
typedef struct fattn_tolerance {
    double atol, rtol; /* elementwise */
    double max_rel_l2; /* norm-wise, 0 < x <= 1 */
} fattn_tolerance;

/* The defaults above. */
fattn_tolerance fattn_tolerance_default(void);

/* The input sets of every check. */
enum fattn_input_set { FATTN_INPUTS_UNIFORM, FATTN_INPUTS_PEAKY, FATTN_INPUT_SETS };

/* "uniform", "peaky". */
const char *fattn_input_set_name(int set);

/* The factor of Q and K in input set `set` (1, or FATTN_FILL_PEAKY). */
float fattn_input_set_qk_mul(int set);

typedef struct fattn_numerics {
    size_t n;           /* elements compared */
    size_t n_bad;       /* out of tolerance, non-finite included */
    size_t n_nonfinite; /* NaN or Inf in the output */
    double max_abs_err; /* over finite elements */
    double max_abs_ref;
    double norm_err; /* max_abs_err / max_abs_ref */
    size_t worst;    /* index of the element furthest out of tolerance (or the first non-finite) */
    double worst_out, worst_ref;
    double l2_err, l2_ref; /* ||o - r|| over the finite outputs, ||r|| over all, accumulated in fp64 */
    double rel_l2;         /* l2_err / l2_ref; where l2_ref is 0, l2_err (= ||o||) */
    double l2_bound;       /* what rel_l2 was held to: max_rel_l2, or atol where l2_ref is 0 */
    int l2_bad;            /* rel_l2 > l2_bound */
    int set;               /* the input set (enum fattn_input_set) */
} fattn_numerics;

/* Compares out[0..n) (fp16 bits) with ref[0..n); r->set is left 0. */
void fattn_numerics_compare(const uint16_t *out, const float *ref, size_t n, const fattn_tolerance *tol,
                            fattn_numerics *r);

/* 1 when every element is finite and within tolerance and the relative L2
 * error within its bound. */
int fattn_numerics_ok(const fattn_numerics *r);

/* The worse of two checks: a failing one over a passing one; of two
 * failures, the one with more non-finite elements, then more out of
 * tolerance; else the one nearer its norm-wise bound. */
const fattn_numerics *fattn_numerics_worse(const fattn_numerics *a, const fattn_numerics *b);

/* One line naming the gate that failed, both gates' figures and the worst
 * element: "norm-wise gate failed on peaky inputs: rel L2 0.0112 (> 0.004),
 * max |o-r| 0.0031 (normalized 0.0012), 0 of 1048576 out of tolerance, 0 not
 * finite; worst at b=0 h=0 s=12 d=3: 0.1 vs 0.1". */
void fattn_numerics_describe(const fattn_numerics *r, const fattn_shape *s, char *out, size_t n);

/* The input values of the device's fill, as fp16 then back to float
 * (input set `set`: Q and K scaled by fattn_input_set_qk_mul first). */
float fattn_input_value(uint64_t seed, int set, unsigned tensor, uint64_t index);

/* Attention of query q over keys [0, n) in fp64: softmax(q K^T / sqrt(d)) V,
 * with K and V n rows of d floats; scores is scratch for n doubles. */
void fattn_cpu_attend(const float *q, const float *k, const float *v, int n, int d, double *scores, double *out);

/* Attention of one query row in fp64 on the CPU from the seeded inputs of
 * input set `set`: out[0..D) for batch b, head h, row `row`. */
void fattn_cpu_attention_row(const fattn_shape *s, uint64_t seed, int set, int b, int h, int row, double *out);

#endif
