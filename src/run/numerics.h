/*
 * numerics.h - checking a candidate's output against the reference.
 *
 * The candidate writes fp16, the reference kernel fp32, both from the same
 * seeded inputs. Every element must satisfy |o - r| <= atol + rtol * |r| and
 * be finite; the output buffer is poisoned with NaN before each run, so an
 * element the kernel never wrote fails as non-finite. The CPU computes
 * single rows in fp64 from the same seeds (kernels/fattn_fill.h), to check
 * the reference kernel itself.
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

#define FATTN_DEFAULT_ATOL 1e-2
#define FATTN_DEFAULT_RTOL 1e-2

typedef struct fattn_numerics {
    size_t n;           /* elements compared */
    size_t n_bad;       /* out of tolerance, non-finite included */
    size_t n_nonfinite; /* NaN or Inf in the output */
    double max_abs_err; /* over finite elements */
    double max_abs_ref;
    double norm_err; /* max_abs_err / max_abs_ref */
    size_t worst;    /* index of the element furthest out of tolerance (or the first non-finite) */
    double worst_out, worst_ref;
} fattn_numerics;

/* Compares out[0..n) (fp16 bits) with ref[0..n). */
void fattn_numerics_compare(const uint16_t *out, const float *ref, size_t n, double atol, double rtol,
                            fattn_numerics *r);

/* 1 when every element is finite and within tolerance. */
int fattn_numerics_ok(const fattn_numerics *r);

/* One line: "max |o-r| 0.0031 (normalized 0.0012), 0 of 1048576 out of tolerance". */
void fattn_numerics_describe(const fattn_numerics *r, const fattn_shape *s, char *out, size_t n);

/* The input values of the device's fill, as fp16 then back to float. */
float fattn_input_value(uint64_t seed, unsigned tensor, uint64_t index);

/* Attention of one query row in fp64 on the CPU from the seeded inputs:
 * out[0..D) for batch b, head h, row `row`. */
void fattn_cpu_attention_row(const fattn_shape *s, uint64_t seed, int b, int h, int row, double *out);

#endif
