/*
 * bench.h - the bench procedure: one configuration measured exactly as
 * search measures it (worker, numerics against the reference, CUDA-graph
 * timing), optionally beside cuDNN's fused attention on the same inputs
 * under the same timing. A stored trial is re-gated and re-compiled as its
 * study searched it. Writes nothing to the store.
 */
#ifndef FATTN_BENCH_BENCH_H
#define FATTN_BENCH_BENCH_H

#include <stdio.h>

#include "job/job.h"

typedef struct fattn_bench_opts {
    const char *config; /* a key or NAME=VALUE,...; NULL with trial */
    long long trial;    /* a stored trial (its study's shape, arch, limits, kernel), 0: none */
    int baseline_cudnn; /* also measure cuDNN's fused attention */
    int allow_kernel, allow_arch;
    const char *kernel_dir;
    fattn_measure measure;
} fattn_bench_opts;

typedef struct fattn_bench_report {
    char key[FATTN_KEY_MAX];
    fattn_shape shape;
    char arch[16], device[256], method[512];
    fattn_eval_result res, base; /* base: with baseline_cudnn */
} fattn_bench_report;

/* Runs bench: the configuration (or the trial of store `s`, which may be
 * NULL without one) on target t (its shape and limits given; the arch from
 * the GPU). The notes go to `log` (NULL: none). FATTN_OK once measured,
 * whatever the measurement's status (r->res.status). */
int fattn_bench_run(const fattn_bench_opts *o, fattn_target *t, fattn_store *s, FILE *log, fattn_bench_report *r);

void fattn_bench_report_release(fattn_bench_report *r);

#endif
