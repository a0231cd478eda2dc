/*
 * err.c - error reporting: one recorded message per thread, printed once.
 */
#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char last_error[1024];
static int quiet;
static _Thread_local int quiet_thread;

int fattn_error(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    if (!quiet && !quiet_thread)
        fprintf(stderr, "fattn-tune: %s\n", last_error);
    return code;
}

const char *fattn_last_error(void)
{
    return last_error;
}

void fattn_error_set_quiet(int q)
{
    quiet = q;
}

int fattn_error_set_quiet_thread(int q)
{
    int was = quiet_thread;
    quiet_thread = q;
    return was;
}

int fattn_exit_status(int rc)
{
    if (rc == FATTN_OK)
        return 0;
    return rc == FATTN_EUSAGE ? 2 : rc == FATTN_EREGRESS ? 3 : 1;
}

void fattn_warn(const char *fmt, ...)
{
    va_list ap;
    if (quiet || quiet_thread)
        return;
    fputs("fattn-tune: warning: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void out_of_memory(size_t n)
{
    fprintf(stderr, "fattn-tune: out of memory allocating %zu bytes\n", n);
    abort();
}

void *fattn_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory(n);
    return p;
}

void *fattn_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory(n * size);
    return p;
}

void *fattn_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory(n);
    return q;
}

char *fattn_xstrdup(const char *s)
{
    return fattn_xstrndup(s, strlen(s));
}

char *fattn_xstrndup(const char *s, size_t n)
{
    char *p = fattn_xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}
