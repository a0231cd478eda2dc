/*
 * measure.c - how candidates are measured: the defaults, and the timing
 * sets and device-memory budget planned for the shape and the GPU (job.h).
 */
#include <string.h>

#include "job/job.h"

void fattn_measure_init(fattn_measure *tm)
{
    memset(tm, 0, sizeof *tm);
    tm->reps = 20, tm->warmup = 5, tm->samples = 30, tm->seed = 1;
    tm->timeout_ms = 10000, tm->setup_ms = 300000, tm->tol = fattn_tolerance_default();
}

void fattn_measure_plan(fattn_measure *tm, fattn_target *t, const fattn_gpu *g)
{
    /* Input sets: one for numerics, enough for timing to exceed twice the L2. */
    if (!tm->timing_sets) {
        double set_bytes = (double)fattn_shape_elems(&t->shape) * 2 * 3;
        double l2 = g->present && g->info.l2_bytes > 0 ? g->info.l2_bytes : 50.0 * (1 << 20);
        tm->timing_sets = (long)(2 * l2 / set_bytes) + 1;
        tm->timing_sets = tm->timing_sets < 2 ? 2 : tm->timing_sets > 16 ? 16 : tm->timing_sets;
    }
    t->lim.input_sets = 1 + (int)tm->timing_sets;
    if (g->present && t->lim.mem_budget > g->info.total_mem)
        t->lim.mem_budget = g->info.total_mem / 10 * 9;
}
