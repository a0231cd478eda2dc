/*
 * fiber.c - fibers on ucontext, with AddressSanitizer's fiber annotations.
 */
#include "sim/fiber.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "util/err.h"

#if defined(__SANITIZE_ADDRESS__)
#define FATTN_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FATTN_FIBER_ASAN 1
#endif
#endif
#ifdef FATTN_FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

struct fattn_fiber {
    ucontext_t uc;
    ucontext_t *back; /* the resumer's context while running */
    char *stack;      /* usable stack, above the guard page */
    size_t size;
    void (*fn)(void *);
    void *arg;
    int done;
    void *fake_stack; /* ASan's bookkeeping across a switch */
    const void *back_bottom;
    size_t back_size;
};

struct fattn_fiber_pool {
    int n;
    size_t stride; /* guard page + stack */
    char *map;
    fattn_fiber *fibers;
};

/* Runs on a single OS thread at a time: the simulator is single-threaded. */
static fattn_fiber *current;

fattn_fiber_pool *fattn_fiber_pool_new(int n, size_t stack_bytes)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    fattn_fiber_pool *p = calloc(1, sizeof *p);
    if (!p || n <= 0)
        goto fail;
    p->n = n;
    stack_bytes = (stack_bytes + page - 1) / page * page;
    p->stride = stack_bytes + page;
    p->map =
        mmap(NULL, p->stride * (size_t)n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p->map == MAP_FAILED) {
        p->map = NULL;
        goto fail;
    }
    p->fibers = calloc((size_t)n, sizeof *p->fibers);
    if (!p->fibers)
        goto fail;
    for (int i = 0; i < n; ++i) {
        char *base = p->map + p->stride * (size_t)i;
        if (mprotect(base, page, PROT_NONE) != 0)
            goto fail;
        p->fibers[i].stack = base + page;
        p->fibers[i].size = stack_bytes;
        p->fibers[i].done = 1;
    }
    return p;
fail:
    fattn_error(FATTN_EFAIL, "simulator: cannot map %d fiber stacks of %zu bytes: %s", n, stack_bytes,
                strerror(errno ? errno : ENOMEM));
    fattn_fiber_pool_free(&p);
    return NULL;
}

void fattn_fiber_pool_free(fattn_fiber_pool **pp)
{
    fattn_fiber_pool *p = *pp;
    if (!p)
        return;
    if (p->map)
        munmap(p->map, p->stride * (size_t)p->n);
    free(p->fibers);
    free(p);
    *pp = NULL;
}

int fattn_fiber_pool_size(const fattn_fiber_pool *p)
{
    return p->n;
}

fattn_fiber *fattn_fiber_at(fattn_fiber_pool *p, int i)
{
    return &p->fibers[i];
}

static void trampoline(void)
{
    fattn_fiber *f = current;
#ifdef FATTN_FIBER_ASAN
    __sanitizer_finish_switch_fiber(f->fake_stack, &f->back_bottom, &f->back_size);
#endif
    f->fn(f->arg);
    f->done = 1;
    for (;;) /* never resumed again: a finished fiber only yields */
        fattn_fiber_yield();
}

void fattn_fiber_start(fattn_fiber *f, void (*fn)(void *), void *arg)
{
#ifdef FATTN_FIBER_ASAN
    /* A fiber abandoned mid-call left its frames' red zones poisoned. */
    ASAN_UNPOISON_MEMORY_REGION(f->stack, f->size);
#endif
    getcontext(&f->uc);
    f->uc.uc_stack.ss_sp = f->stack;
    f->uc.uc_stack.ss_size = f->size;
    f->uc.uc_link = NULL;
    makecontext(&f->uc, trampoline, 0);
    f->fn = fn;
    f->arg = arg;
    f->done = 0;
    f->fake_stack = NULL;
}

int fattn_fiber_resume(fattn_fiber *f)
{
    ucontext_t back;
    fattn_fiber *prev = current;
    if (f->done)
        return 1;
    f->back = &back;
    current = f;
#ifdef FATTN_FIBER_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, f->stack, f->size);
#endif
    swapcontext(&back, &f->uc);
#ifdef FATTN_FIBER_ASAN
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
    current = prev;
    return f->done;
}

void fattn_fiber_yield(void)
{
    fattn_fiber *f = current;
#ifdef FATTN_FIBER_ASAN
    __sanitizer_start_switch_fiber(&f->fake_stack, f->back_bottom, f->back_size);
#endif
    swapcontext(&f->uc, f->back);
#ifdef FATTN_FIBER_ASAN
    __sanitizer_finish_switch_fiber(f->fake_stack, &f->back_bottom, &f->back_size);
#endif
}
