/*
 * fuzz_landscape.c - the landscape CSV reader (--evaluator replay:FILE): any
 * bytes are either read into entries sorted by key, each findable, or
 * refused with an error naming the line.
 */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "run/landscape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    /* The reader takes a path: an anonymous file in memory. */
    int fd = memfd_create("landscape", 0);
    FUZZ_ASSERT(fd >= 0);
    FUZZ_ASSERT(write(fd, data, size) == (ssize_t)size);
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    fattn_landscape l;
    if (fattn_landscape_load(path, &l) == FATTN_OK) {
        for (size_t i = 0; i < l.n; ++i) {
            FUZZ_ASSERT(i == 0 || strcmp(l.e[i - 1].key, l.e[i].key) <= 0);
            FUZZ_ASSERT(fattn_landscape_find(&l, l.e[i].key) != NULL);
        }
        fattn_landscape_release(&l);
    }
    close(fd);
    return 0;
}
