/*
 * pool.c - worker threads over a mutex-protected job queue.
 *
 * An abandoned pool lives on until its last running job ends: its workers
 * are detached, drop what they finish, and the last one out frees the pool.
 * A process-wide count of such jobs (one lock) lets the program know when it
 * may exit cleanly.
 */
#include "compile/pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "util/err.h"

typedef struct job {
    fattn_job_fn fn;
    void *arg;
    struct job *next;
} job;

struct fattn_pool {
    pthread_mutex_t lock;
    pthread_cond_t work, done; /* done waits on CLOCK_MONOTONIC (fattn_now_ms) */
    job *queue, *queue_tail;   /* not started */
    job *finished, *finished_tail;
    int running;
    int stop;
    int nthreads, alive;
    pthread_t *threads;
    void (*drop)(void *arg); /* set when abandoned: what a worker does with a finished job */
};

/* Jobs of abandoned pools still running, process-wide. */
static pthread_mutex_t abandoned_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t abandoned_done = PTHREAD_COND_INITIALIZER;
static int abandoned_running;

static void abandoned_add(int n)
{
    pthread_mutex_lock(&abandoned_lock);
    abandoned_running += n;
    if (!abandoned_running)
        pthread_cond_broadcast(&abandoned_done);
    pthread_mutex_unlock(&abandoned_lock);
}

static void pool_destroy(fattn_pool *p)
{
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p->threads);
    free(p);
}

static void push(job **head, job **tail, job *j)
{
    j->next = NULL;
    if (*tail)
        (*tail)->next = j;
    else
        *head = j;
    *tail = j;
}

static job *pop(job **head, job **tail)
{
    job *j = *head;
    if (j) {
        *head = j->next;
        if (!*head)
            *tail = NULL;
    }
    return j;
}

static void *worker(void *arg)
{
    fattn_pool *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->queue && !p->stop)
            pthread_cond_wait(&p->work, &p->lock);
        if (!p->queue && p->stop)
            break;
        job *j = pop(&p->queue, &p->queue_tail);
        ++p->running;
        pthread_mutex_unlock(&p->lock);
        j->fn(j->arg);
        pthread_mutex_lock(&p->lock);
        --p->running;
        if (p->drop) { /* abandoned: nobody takes it back */
            p->drop(j->arg);
            free(j);
            abandoned_add(-1);
            continue;
        }
        push(&p->finished, &p->finished_tail, j);
        pthread_cond_signal(&p->done);
    }
    int last = --p->alive == 0 && p->drop;
    pthread_mutex_unlock(&p->lock);
    if (last)
        pool_destroy(p);
    return NULL;
}

fattn_pool *fattn_pool_create(int threads)
{
    fattn_pool *p = fattn_xcalloc(1, sizeof *p);
    if (threads < 1)
        threads = 1;
    pthread_condattr_t ca;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->done, &ca);
    pthread_condattr_destroy(&ca);
    p->threads = fattn_xcalloc((size_t)threads, sizeof *p->threads);
    for (int i = 0; i < threads; ++i) {
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0)
            break;
        ++p->nthreads;
    }
    p->alive = p->nthreads;
    if (p->nthreads == 0) {
        fattn_error(FATTN_EFAIL, "cannot start a worker thread");
        abort();
    }
    return p;
}

void fattn_pool_submit(fattn_pool *p, fattn_job_fn fn, void *arg)
{
    job *j = fattn_xmalloc(sizeof *j);
    j->fn = fn;
    j->arg = arg;
    pthread_mutex_lock(&p->lock);
    push(&p->queue, &p->queue_tail, j);
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->lock);
}

void *fattn_pool_next(fattn_pool *p)
{
    return fattn_pool_next_until(p, 0, NULL);
}

void *fattn_pool_next_until(fattn_pool *p, double deadline_ms, int *timed_out)
{
    void *arg = NULL;
    struct timespec until = {(time_t)(deadline_ms / 1000),
                             (long)((deadline_ms / 1000 - (time_t)(deadline_ms / 1000)) * 1e9)};
    int late = 0;
    pthread_mutex_lock(&p->lock);
    while (!p->finished && (p->queue || p->running) && !late)
        late = deadline_ms > 0 ? pthread_cond_timedwait(&p->done, &p->lock, &until) == ETIMEDOUT
                               : (pthread_cond_wait(&p->done, &p->lock), 0);
    job *j = pop(&p->finished, &p->finished_tail);
    if (timed_out)
        *timed_out = !j && late;
    pthread_mutex_unlock(&p->lock);
    if (j) {
        arg = j->arg;
        free(j);
    }
    return arg;
}

int fattn_pool_cancel(fattn_pool *p, void (*drop)(void *arg))
{
    int n = 0;
    pthread_mutex_lock(&p->lock);
    job *j;
    while ((j = pop(&p->queue, &p->queue_tail))) {
        if (drop)
            drop(j->arg);
        free(j);
        ++n;
    }
    pthread_mutex_unlock(&p->lock);
    return n;
}

void fattn_pool_free(fattn_pool **pp)
{
    fattn_pool *p = *pp;
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nthreads; ++i)
        pthread_join(p->threads[i], NULL);
    job *j;
    while ((j = pop(&p->finished, &p->finished_tail)))
        free(j);
    while ((j = pop(&p->queue, &p->queue_tail)))
        free(j);
    pool_destroy(p);
    *pp = NULL;
}

int fattn_pool_abandon(fattn_pool **pp, void (*drop)(void *arg))
{
    fattn_pool *p = *pp;
    if (!p)
        return 0;
    *pp = NULL;
    pthread_mutex_lock(&p->lock);
    job *j;
    int n = p->running;
    while ((j = pop(&p->queue, &p->queue_tail)) || (j = pop(&p->finished, &p->finished_tail))) {
        drop(j->arg);
        free(j);
    }
    p->drop = drop;
    p->stop = 1;
    abandoned_add(p->running);
    pthread_cond_broadcast(&p->work);
    for (int i = 0; i < p->nthreads; ++i)
        pthread_detach(p->threads[i]);
    pthread_mutex_unlock(&p->lock);
    return n;
}

int fattn_pool_abandoned(void)
{
    pthread_mutex_lock(&abandoned_lock);
    int n = abandoned_running;
    pthread_mutex_unlock(&abandoned_lock);
    return n;
}

void fattn_pool_wait_abandoned(void)
{
    pthread_mutex_lock(&abandoned_lock);
    while (abandoned_running)
        pthread_cond_wait(&abandoned_done, &abandoned_lock);
    pthread_mutex_unlock(&abandoned_lock);
}

int fattn_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
