/*
 * devices.c - one evaluation at a time on each GPU of a search (devices.h),
 * over a thread pool of one thread per GPU: at most one job per GPU is
 * submitted, so each starts at once on a thread of its own.
 */
#include "tune/devices.h"

#include <stdlib.h>
#include <string.h>

#include "compile/pool.h"
#include "util/err.h"
#include "util/misc.h"

enum { IDLE, RUNNING, FINISHED };

struct fattn_devices {
    int n, busy;
    long long starts, *started; /* jobs started; when GPU d's last started (0: never) */
    fattn_devjob *jobs;
    unsigned char *state;
    fattn_pool *pool; /* NULL with one GPU: the caller runs the job */
    int inline_done;  /* one GPU: its job ran and is not taken back */
};

fattn_devices *fattn_devices_open(int n)
{
    fattn_devices *d = fattn_xcalloc(1, sizeof *d);
    d->n = n > 1 ? n : 1;
    d->jobs = fattn_xcalloc((size_t)d->n, sizeof *d->jobs);
    d->state = fattn_xcalloc((size_t)d->n, 1);
    d->started = fattn_xcalloc((size_t)d->n, sizeof *d->started);
    if (d->n > 1)
        d->pool = fattn_pool_create(d->n);
    return d;
}

int fattn_devices_count(const fattn_devices *d)
{
    return d->n;
}

int fattn_devices_is_idle(const fattn_devices *d, int dev)
{
    return d->state[dev] == IDLE;
}

int fattn_devices_idle(const fattn_devices *d)
{
    int best = -1;
    for (int i = 0; i < d->n; ++i)
        if (d->state[i] == IDLE && (best < 0 || d->started[i] < d->started[best]))
            best = i;
    return best;
}

int fattn_devices_busy(const fattn_devices *d)
{
    return d->busy;
}

fattn_devjob *fattn_devices_job(fattn_devices *d, int dev)
{
    fattn_devjob *j = &d->jobs[dev];
    memset(j, 0, sizeof *j);
    j->dev = dev;
    return j;
}

static void run(void *arg)
{
    fattn_devjob *j = arg;
    j->rc = fattn_evaluate(j->ev, &j->req, &j->e);
}

void fattn_devices_start(fattn_devices *d, int dev)
{
    fattn_devjob *j = &d->jobs[dev];
    if (j->key[0])
        j->req.key = j->key;
    d->state[dev] = RUNNING;
    d->started[dev] = ++d->starts;
    ++d->busy;
    if (!d->pool) {
        run(j);
        d->state[dev] = FINISHED;
        d->inline_done = 1;
        return;
    }
    fattn_pool_submit(d->pool, run, j);
}

fattn_devjob *fattn_devices_next_until(fattn_devices *d, double until_ms)
{
    if (!d->pool) {
        if (!d->inline_done)
            return NULL;
        d->inline_done = 0;
        return &d->jobs[0];
    }
    if (!d->busy)
        return NULL;
    /* 0 is no deadline to the pool: a time past is just before now. */
    double now = fattn_now_ms();
    fattn_devjob *j = fattn_pool_next_until(d->pool, until_ms > now ? until_ms : now - 1e-3, NULL);
    if (j)
        d->state[j->dev] = FINISHED;
    return j;
}

void fattn_devices_done(fattn_devices *d, fattn_devjob *j)
{
    fattn_eval_result_release(&j->e);
    d->state[j->dev] = IDLE;
    --d->busy;
}

void fattn_devices_close(fattn_devices **dp)
{
    fattn_devices *d = *dp;
    if (!d)
        return;
    fattn_pool_free(&d->pool); /* after the running jobs */
    for (int i = 0; i < d->n; ++i)
        if (d->state[i] != IDLE)
            fattn_eval_result_release(&d->jobs[i].e);
    free(d->jobs);
    free(d->state);
    free(d->started);
    free(d);
    *dp = NULL;
}
