/*
 * landscape.h - the measured landscape of a space: each configuration's
 * GPU verdict and time, from a real exhaustive run.
 *
 * A CSV file with a commented header saying where it was measured:
 *   # fattn-tune landscape 1
 *   # device: NVIDIA H100 80GB HBM3
 *   # arch: sm_90
 *   # family: mma
 *   # shape: 2,8,512,64
 *   # causal: 0
 *   # method: CUDA graph of 20 launches ...
 *   key,status,reason,median_us,p10_us,p90_us
 *   bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1,ok,,6.1,6.0,6.3
 *   bm64-bn64-bk32-w4-s1-u1-cp1-sw0-h1-pad2,rejected,runtime_fault,,,
 * `fattn-tune query landscape` writes it from a study; the replay evaluator
 * reads it. The family line names the kernel family (space/family.h) whose
 * keys the file holds; a file without one (written before families) is the
 * mma family's, and every key must be of the file's family.
 */
#ifndef FATTN_RUN_LANDSCAPE_H
#define FATTN_RUN_LANDSCAPE_H

#include <stddef.h>
#include <stdio.h>

#include "space/params.h"
#include "target/shape.h"

typedef struct fattn_landscape_entry {
    char key[FATTN_KEY_MAX];
    char status[16]; /* ok, rejected, error */
    char reason[32]; /* for rejected: numerics, runtime_fault, timeout, or a gate */
    double median_us, p10_us, p90_us;
    int line; /* in the file */
} fattn_landscape_entry;

/* The times a landscape may hold, in microseconds: from a nanosecond (no
 * kernel launch is shorter; a shorter time makes TFLOP/s infinite) to an
 * hour. */
#define FATTN_LANDSCAPE_MIN_US 1e-3
#define FATTN_LANDSCAPE_MAX_US 3.6e9

typedef struct fattn_landscape {
    char device[256];
    char arch[16];
    const fattn_family *fam; /* "# family:", or mma */
    char method[512];
    fattn_shape shape;
    size_t n;
    fattn_landscape_entry *e; /* sorted by key */
} fattn_landscape;

/* Reads a landscape file. A malformed or implausible one is a usage error
 * naming the line and the field: a key not of the file's family or given
 * twice, a status other than ok, rejected or error, a time that is not a
 * number from FATTN_LANDSCAPE_MIN_US to FATTN_LANDSCAPE_MAX_US, an ok entry without its three
 * times or with them out of order (p10 <= median <= p90). */
int fattn_landscape_load(const char *path, fattn_landscape *l);

/* The entry for `key`, or NULL. */
const fattn_landscape_entry *fattn_landscape_find(const fattn_landscape *l, const char *key);

void fattn_landscape_release(fattn_landscape *l);

/* Writes the header lines of a landscape. */
void fattn_landscape_write_header(FILE *f, const char *device, const char *arch, const char *family,
                                  const fattn_shape *s, const char *method);

#endif
