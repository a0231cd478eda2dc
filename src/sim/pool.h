/*
 * pool.h - many simulator checks at once, each in a process of its own.
 *
 * The simulator runs one launch per process (sim/launch.h), and a kernel it
 * runs may still take its process down (a fiber's stack overflowing its
 * guard page) or never end (a loop that calls nothing the simulator sees).
 * So every check is a child process: up to `jobs` at a time, each writing
 * its verdict back over a pipe. A child that dies gives the verdict
 * "sim_crash" (with the signal or exit status), one that runs past the time
 * limit is killed and gives "sim_timeout"; the others go on. Results reach
 * the caller in the parent, in the order they finish, so that each can be
 * committed on its own.
 */
#ifndef FATTN_SIM_POOL_H
#define FATTN_SIM_POOL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/check.h"

#define FATTN_SIMV_CRASH   "sim_crash"
#define FATTN_SIMV_TIMEOUT "sim_timeout"

typedef struct fattn_sim_job {
    fattn_config cfg;
    fattn_shape shape;
} fattn_sim_job;

typedef struct fattn_sim_pool {
    const fattn_kernel_src *src;
    const char *cache_dir;
    uint64_t seed;
    int jobs;          /* child processes at a time (>= 1) */
    double timeout_ms; /* per check; 0: none */
    /* Set (by a signal handler) to stop: children are killed, results not
     * yet in are dropped, fattn_sim_pool_run returns 1. */
    volatile sig_atomic_t *interrupted;
    /* Called in the parent for each finished check (job index i); a
     * non-zero return stops the pool and is returned. */
    int (*on_result)(void *arg, size_t i, const fattn_sim_check *c);
    void *arg;
} fattn_sim_pool;

/* Checks jobs[0..n). Returns 0 when every job has a result, 1 when
 * interrupted, on_result's non-zero return, or FATTN_EFAIL (reported) when a
 * child could not run the simulator at all (no compiler, an unwritable
 * cache: its message is the child's) or no child could be started. */
int fattn_sim_pool_run(const fattn_sim_pool *p, const fattn_sim_job *jobs, size_t n);

/* 1 when a verdict says the kernel itself is wrong at that configuration: a
 * fault, a hazard or wrong numerics (not "ok", and not "host_compile",
 * "sim_crash" or "sim_timeout", which say the simulator could not decide). */
int fattn_sim_verdict_defect(const char *verdict);

#endif
