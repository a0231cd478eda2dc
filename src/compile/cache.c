/*
 * cache.c - releasing a compile-cache entry.
 */
#include "compile/cache.h"

#include <stdlib.h>
#include <string.h>

void fattn_cache_entry_release(fattn_cache_entry *e)
{
    free(e->family);
    free(e->kernel_hash);
    free(e->arch);
    free(e->options);
    free(e->nvrtc_version);
    free(e->log);
    free(e->cubin);
    memset(e, 0, sizeof *e);
}
