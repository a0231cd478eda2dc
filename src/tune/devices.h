/*
 * devices.h - the GPUs of a search (search --devices): each evaluates one
 * configuration at a time, on its own evaluator (a worker process on that
 * GPU), side by side with the others; the search loop hands a compiled
 * candidate to an idle GPU and takes the outcomes back in the order they
 * end. With one GPU the evaluation runs in the caller, a plain call, and
 * its outcome is ready when fattn_devices_start() returns.
 */
#ifndef FATTN_TUNE_DEVICES_H
#define FATTN_TUNE_DEVICES_H

#include <stddef.h>

#include "run/evaluator.h"

/* An evaluation on one GPU: the caller fills ev, req (and what it points
 * to, which must live until the job is taken back) and its own fields;
 * the GPU fills e and rc (fattn_evaluate's). */
typedef struct fattn_devjob {
    int dev; /* which GPU (set by fattn_devices_job) */
    fattn_evaluator *ev;
    fattn_eval_request req;
    char key[FATTN_KEY_MAX];
    fattn_eval_result e;
    int rc;
    /* The caller's: what the evaluation is for. */
    size_t idx;
    long long seq;
    int reference; /* a reference timing (the GPUs compared), not a trial */
} fattn_devjob;

typedef struct fattn_devices fattn_devices;

/* n GPUs (at least 1). */
fattn_devices *fattn_devices_open(int n);

int fattn_devices_count(const fattn_devices *d);

/* An idle GPU (none running, its last outcome taken back), the one idle
 * longest (trials spread over the GPUs when the compiles are the
 * bottleneck), or -1. */
int fattn_devices_idle(const fattn_devices *d);

/* 1 when GPU `dev` is idle. */
int fattn_devices_is_idle(const fattn_devices *d, int dev);

/* Evaluations started and not taken back. */
int fattn_devices_busy(const fattn_devices *d);

/* GPU dev's job, cleared, for the caller to fill (the GPU must be idle). */
fattn_devjob *fattn_devices_job(fattn_devices *d, int dev);

/* Starts GPU dev's job. */
void fattn_devices_start(fattn_devices *d, int dev);

/* A finished job, waiting no later than until_ms (fattn_now_ms()'s clock;
 * a time past: no wait), or NULL. The GPU stays busy until
 * fattn_devices_done(): the caller reads the job meanwhile. */
fattn_devjob *fattn_devices_next_until(fattn_devices *d, double until_ms);

/* Releases the job's result; its GPU is idle again. */
void fattn_devices_done(fattn_devices *d, fattn_devjob *j);

/* Waits for the running evaluations, releases what was not taken back,
 * frees; sets *d to NULL. */
void fattn_devices_close(fattn_devices **d);

#endif
