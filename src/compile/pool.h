/*
 * pool.h - a fixed pool of worker threads with a completion queue.
 *
 * The submitting thread queues jobs, then takes finished jobs back one at a
 * time, in the order they finish; it alone touches the database, so workers
 * only compute. cancel() drops the jobs not yet started (Ctrl-C): the ones
 * running finish and come back. abandon() gives the pool up at once (a
 * deadline): the running jobs end on their own and are dropped.
 */
#ifndef FATTN_COMPILE_POOL_H
#define FATTN_COMPILE_POOL_H

typedef struct fattn_pool fattn_pool;

/* A job runs fn(arg) on a worker; arg comes back from fattn_pool_next(). */
typedef void (*fattn_job_fn)(void *arg);

/* Starts `threads` workers (at least 1). */
fattn_pool *fattn_pool_create(int threads);

/* Queues a job. */
void fattn_pool_submit(fattn_pool *p, fattn_job_fn fn, void *arg);

/* Waits for the next finished job and returns its arg, or NULL when no job
 * is queued, running or finished-but-not-taken. */
void *fattn_pool_next(fattn_pool *p);

/* The same, waiting no later than deadline_ms (fattn_now_ms()'s clock; 0:
 * no deadline): NULL with *timed_out set (timed_out may be NULL) when it
 * passes first. */
void *fattn_pool_next_until(fattn_pool *p, double deadline_ms, int *timed_out);

/* Drops queued jobs that have not started; returns how many. Their args are
 * not returned by fattn_pool_next(): the caller still owns them. */
int fattn_pool_cancel(fattn_pool *p, void (*drop)(void *arg));

/* Stops the workers (after the running jobs) and frees the pool; sets *p to NULL. */
void fattn_pool_free(fattn_pool **p);

/* Gives the pool up without waiting: queued and finished jobs are dropped
 * now (drop(arg)), the running ones by their worker when they end (drop
 * runs on that thread, so an arg must own all it needs); the workers are
 * detached and the last one frees the pool. Sets *p to NULL and returns how
 * many jobs were running. */
int fattn_pool_abandon(fattn_pool **p, void (*drop)(void *arg));

/* Jobs of abandoned pools still running in this process; and a wait until
 * there are none (a program exits cleanly only then: a job may be inside a
 * library whose destructors exit would run). */
int fattn_pool_abandoned(void);
void fattn_pool_wait_abandoned(void);

/* Number of online processors (the default --jobs). */
int fattn_cpu_count(void);

#endif
