/*
 * test_pool.c - the worker pool returns every job once, and cancel drops
 * the ones not started.
 */
#include "t.h"

#include <pthread.h>
#include <unistd.h>

#include "compile/pool.h"

typedef struct item {
    int index;
    int runs;
    pthread_t thread;
} item;

static void work(void *arg)
{
    item *it = arg;
    it->runs++;
    it->thread = pthread_self();
    usleep(200);
}

static void every_job_once(void)
{
    enum { N = 200 };
    item items[N];
    int returned[N] = {0};
    fattn_pool *p = fattn_pool_create(4);
    for (int i = 0; i < N; ++i) {
        items[i].index = i;
        items[i].runs = 0;
        fattn_pool_submit(p, work, &items[i]);
    }
    item *it;
    int n = 0;
    while ((it = fattn_pool_next(p))) {
        returned[it->index]++;
        ++n;
    }
    CHECK_INT(n, N);
    int once = 1;
    for (int i = 0; i < N; ++i)
        once &= returned[i] == 1 && items[i].runs == 1 && !pthread_equal(items[i].thread, pthread_self());
    CHECK(once);
    CHECK(fattn_pool_next(p) == NULL);
    fattn_pool_free(&p);
    CHECK(p == NULL);
}

static int dropped;

static void drop(void *arg)
{
    (void)arg;
    ++dropped;
}

static void cancel(void)
{
    enum { N = 100 };
    item items[N];
    fattn_pool *p = fattn_pool_create(1);
    for (int i = 0; i < N; ++i) {
        items[i].index = i;
        items[i].runs = 0;
        fattn_pool_submit(p, work, &items[i]);
    }
    int cancelled = fattn_pool_cancel(p, drop);
    CHECK_INT(cancelled, dropped);
    int n = 0;
    while (fattn_pool_next(p))
        ++n;
    CHECK_INT(n + cancelled, N);
    int ran = 0;
    for (int i = 0; i < N; ++i)
        ran += items[i].runs;
    CHECK_INT(ran, n);
    fattn_pool_free(&p);
    CHECK(fattn_cpu_count() >= 1);
}

int main(void)
{
    T_RUN(every_job_once);
    T_RUN(cancel);
    return t_exit();
}
