/*
 * fuzz.h - what every libFuzzer target of tests/fuzz/ shares: the entry
 * point's prototype, errors kept quiet (a fuzzer feeds thousands of bad
 * inputs a second; the messages themselves are tested elsewhere), and the
 * input as a NUL-terminated string.
 */
#ifndef FATTN_TESTS_FUZZ_H
#define FATTN_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Quiet errors (a flag of this thread; setting it again costs nothing). */
static inline void fuzz_quiet(void)
{
    fattn_error_set_quiet_thread(1);
}

/* data[0..size) as a string (owned by the caller); NULs inside end it early,
 * as they would a command-line argument. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* A failed property: abort, so that libFuzzer saves the input. */
#define FUZZ_ASSERT(cond)                                                                                              \
    do {                                                                                                               \
        if (!(cond))                                                                                                   \
            abort();                                                                                                   \
    } while (0)

#endif
