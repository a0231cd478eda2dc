/*
 * fiber.h - cooperative fibers for the kernel simulator: one per simulated
 * CUDA thread, each on its own stack, switched only at the points where a
 * thread must wait for others (a barrier, a warp collective).
 *
 * A fiber runs from fattn_fiber_resume() until it calls fattn_fiber_yield()
 * or its function returns; then control is back in the caller of resume.
 * A fiber that is never resumed again is simply abandoned (a launch that
 * stopped on a fault): its stack is reused by the next fattn_fiber_start.
 * Under AddressSanitizer the switches are announced to it.
 */
#ifndef FATTN_SIM_FIBER_H
#define FATTN_SIM_FIBER_H

#include <stddef.h>

typedef struct fattn_fiber fattn_fiber;

/* A pool of `n` fibers with `stack_bytes` stacks (guard page below each).
 * Returns NULL (error reported) when the memory cannot be mapped. */
typedef struct fattn_fiber_pool fattn_fiber_pool;
fattn_fiber_pool *fattn_fiber_pool_new(int n, size_t stack_bytes);
void fattn_fiber_pool_free(fattn_fiber_pool **p);
int fattn_fiber_pool_size(const fattn_fiber_pool *p);
fattn_fiber *fattn_fiber_at(fattn_fiber_pool *p, int i);

/* (Re)starts fiber f to run fn(arg) when next resumed. */
void fattn_fiber_start(fattn_fiber *f, void (*fn)(void *), void *arg);

/* Runs f until it yields or finishes. Returns 1 when it has finished. */
int fattn_fiber_resume(fattn_fiber *f);

/* From inside a fiber: back to the fattn_fiber_resume that ran it. */
void fattn_fiber_yield(void);

#endif
