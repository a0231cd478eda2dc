/*
 * batch.h - compiling many configurations: compile cache first, then NVRTC
 * in a thread pool, then the post-compile gates.
 *
 * A compiler is a stream: the calling thread submits items (a cache hit is
 * ready at once; a miss is queued on the pool) and takes finished items
 * back, in finishing order, on its own thread: workers never touch the
 * database. A new compile result is stored in the cache (its own
 * transaction) before the caller sees it. While the caller works on one
 * item (runs it on the GPU, say), the pool compiles the next ones. A
 * compile reads the compiler's own copy of the kernel source, so that one
 * given up at a deadline may end after the caller has moved on.
 */
#ifndef FATTN_COMPILE_BATCH_H
#define FATTN_COMPILE_BATCH_H

#include <signal.h>

#include "compile/kernel_src.h"
#include "compile/nvrtc.h"
#include "compile/postgates.h"
#include "compile/cache.h"

typedef struct fattn_compile_item {
    fattn_config cfg;
    char cache_key[65];
    int cache_hit;
    int env_error; /* NVRTC or the cubin reader failed: no result */
    char env_msg[320];
    fattn_cache_entry entry; /* ok, log, cubin, resources */
    int reason;              /* first failing post-compile gate, or FATTN_R_NONE */
    fattn_verdict verdict;   /* its verdict (or the spills verdict when all pass) */
    fattn_compiled_occ occ;
    int has_occ;
} fattn_compile_item;

typedef struct fattn_compile_ctx {
    const fattn_kernel_src *src;
    const char *cuda_include;
    const fattn_arch *arch;
    const fattn_shape *shape;
    const fattn_gate_limits *lim;
    fattn_compile_cache cache; /* .arg NULL: no cache */
    int jobs;
    volatile sig_atomic_t *interrupted; /* stop when it becomes non-zero; may be NULL */
    /* Called on the calling thread for each finished item; a non-zero
     * return stops the batch with that code. */
    int (*done)(void *arg, fattn_compile_item *item);
    void *done_arg;
} fattn_compile_ctx;

typedef struct fattn_compiler fattn_compiler;

/* Opens a compiler (ctx's done, done_arg and interrupted are not used). */
fattn_compiler *fattn_compiler_open(const fattn_compile_ctx *ctx);

/* Submits an item. Returns 0, or FATTN_EFAIL when the cache cannot be read. */
int fattn_compiler_submit(fattn_compiler *c, fattn_compile_item *item);

/* The next finished item, its post-compile gates applied, or NULL when none
 * is outstanding. *rc is set to FATTN_EFAIL (and the item still returned)
 * when its new result cannot be stored in the cache. */
fattn_compile_item *fattn_compiler_next(fattn_compiler *c, int *rc);

/* The same, waiting for a compile no later than deadline_ms (fattn_now_ms()'s
 * clock; 0: no deadline): NULL with *timed_out set when it passes first. */
fattn_compile_item *fattn_compiler_next_until(fattn_compiler *c, double deadline_ms, int *rc, int *timed_out);

/* Items submitted and not yet taken back. */
int fattn_compiler_pending(const fattn_compiler *c);

/* Drops the items not started; they are not returned by next(), and stay
 * the caller's. Returns how many. */
int fattn_compiler_cancel(fattn_compiler *c);

/* Waits for the running compiles and frees the compiler; sets *c to NULL. */
void fattn_compiler_close(fattn_compiler **c);

/* Frees the compiler without waiting (a deadline): compiles that have
 * finished are stored in the cache (*rc set to FATTN_EFAIL when that
 * fails), the queued ones dropped, and the running ones left to end on
 * their own threads, their results dropped; none touches an item again.
 * Returns how many compiles were given up (queued or running); sets *c to
 * NULL. */
int fattn_compiler_abandon(fattn_compiler **c, int *rc);

/* Compiles given up by fattn_compiler_abandon and still running in this
 * process; and a wait until none is (exit runs the libraries' destructors,
 * NVRTC's among them: a process exits cleanly after the wait, or with
 * _exit). */
int fattn_compiles_abandoned(void);
void fattn_compiles_wait_abandoned(void);

typedef struct fattn_batch_stats {
    int total, finished, compiled, cache_hits, env_errors;
    int interrupted;
} fattn_batch_stats;

/* Compiles items[0..n) and reports each through ctx->done. Returns 0, or the
 * first error (a database failure, or a done() code). */
int fattn_compile_batch(const fattn_compile_ctx *ctx, fattn_compile_item *items, int n, fattn_batch_stats *stats);

/* Compiles one item on the calling thread, without the cache, and applies
 * the post-compile gates. */
void fattn_compile_one(const fattn_compile_ctx *ctx, fattn_compile_item *item);

void fattn_compile_item_release(fattn_compile_item *item);

#endif
