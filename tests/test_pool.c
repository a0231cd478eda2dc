/*
 * test_pool.c - the worker pool returns every job once, cancel drops the
 * ones not started, a wait gives up at its deadline, and an abandoned pool
 * leaves its running jobs to end and be dropped on their own threads.
 */
#include "t.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "compile/pool.h"
#include "util/misc.h"

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

/* A job that waits until the test releases it, owning its memory (an
 * abandoned pool's worker frees it through the drop). */
typedef struct held {
    int done;
} held;

static atomic_int started, released, held_dropped;

static void held_work(void *arg)
{
    atomic_fetch_add(&started, 1);
    while (!atomic_load(&released))
        usleep(1000);
    ((held *)arg)->done = 1;
}

static void held_drop(void *arg)
{
    atomic_fetch_add(&held_dropped, ((held *)arg)->done ? 100 : 1); /* ran: 100, never started: 1 */
    free(arg);
}

/* A wait with a deadline gives up when it passes; an abandoned pool returns
 * at once, its running jobs end and are dropped on their threads, the
 * queued ones dropped at once, and the process-wide count says when none
 * is left. */
static void deadline_and_abandon(void)
{
    fattn_pool *p = fattn_pool_create(2);
    for (int i = 0; i < 5; ++i)
        fattn_pool_submit(p, held_work, calloc(1, sizeof(held)));
    int late = 0;
    double t0 = fattn_now_ms();
    CHECK(fattn_pool_next_until(p, t0 + 50, &late) == NULL);
    CHECK(late);
    CHECK(fattn_now_ms() - t0 >= 45);
    /* Both workers hold a job; three are queued. */
    while (atomic_load(&started) < 2 && fattn_now_ms() - t0 < t_ms(10000))
        usleep(1000);
    CHECK_INT(atomic_load(&started), 2);
    t0 = fattn_now_ms();
    CHECK_INT(fattn_pool_abandon(&p, held_drop), 2);
    CHECK(p == NULL);
    CHECK_INT(fattn_pool_abandoned(), 2);
    CHECK_INT(atomic_load(&held_dropped), 3); /* the queued ones, at once */
    atomic_store(&released, 1);
    fattn_pool_wait_abandoned();
    CHECK_INT(fattn_pool_abandoned(), 0);
    CHECK_INT(atomic_load(&held_dropped), 203); /* and the two running, once they ended */
}

int main(void)
{
    T_RUN(every_job_once);
    T_RUN(cancel);
    T_RUN(deadline_and_abandon);
    return t_exit();
}
