/*
 * pool.c - worker threads over a mutex-protected job queue.
 */
#include "compile/pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/err.h"

typedef struct job {
    fattn_job_fn fn;
    void *arg;
    struct job *next;
} job;

struct fattn_pool {
    pthread_mutex_t lock;
    pthread_cond_t work, done;
    job *queue, *queue_tail; /* not started */
    job *finished, *finished_tail;
    int running;
    int stop;
    int nthreads;
    pthread_t *threads;
};

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
        push(&p->finished, &p->finished_tail, j);
        pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

fattn_pool *fattn_pool_create(int threads)
{
    fattn_pool *p = fattn_xcalloc(1, sizeof *p);
    if (threads < 1)
        threads = 1;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    p->threads = fattn_xcalloc((size_t)threads, sizeof *p->threads);
    for (int i = 0; i < threads; ++i) {
        if (pthread_create(&p->threads[i], NULL, worker, p) != 0)
            break;
        ++p->nthreads;
    }
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
    void *arg = NULL;
    pthread_mutex_lock(&p->lock);
    while (!p->finished && (p->queue || p->running))
        pthread_cond_wait(&p->done, &p->lock);
    job *j = pop(&p->finished, &p->finished_tail);
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
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    free(p->threads);
    free(p);
    *pp = NULL;
}

int fattn_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
