/*
 * cache.h - a compile-cache entry (an NVRTC result under its cache key) and
 * the interface through which the compile stage reads and fills a cache
 * kept by a later stage (the store's: fattn_store_compile_cache()).
 */
#ifndef FATTN_COMPILE_CACHE_H
#define FATTN_COMPILE_CACHE_H

#include <stddef.h>

#include "compile/postgates.h"

typedef struct fattn_cache_entry {
    char key[65];
    char *family; /* the kernel family's name */
    char *kernel_hash;
    char *arch;
    char *options;
    char *nvrtc_version;
    int ok;
    char *log;
    void *cubin;
    size_t cubin_size;
    double compile_ms;
    fattn_compiled res; /* res.log aliases log */
} fattn_cache_entry;

void fattn_cache_entry_release(fattn_cache_entry *e);

/* A cache: get returns 1 and fills *e (release it) when the key is found, 0
 * when not, FATTN_EFAIL on error; put stores an entry (insert or replace)
 * in its own transaction. `arg` NULL: no cache. */
typedef struct fattn_compile_cache {
    void *arg;
    int (*get)(void *arg, const char *key, fattn_cache_entry *e);
    int (*put)(void *arg, const fattn_cache_entry *e);
} fattn_compile_cache;

#endif
