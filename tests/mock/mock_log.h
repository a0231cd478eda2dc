/*
 * mock_log.h - the mock driver's and mock cuDNN's call log: one line per
 * call, "PID NAME", appended to $FATTN_MOCK_LOG when it is set, so that tests
 * can check the order of set-up and tear-down across worker processes.
 */
#ifndef FATTN_TESTS_MOCK_LOG_H
#define FATTN_TESTS_MOCK_LOG_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((format(printf, 1, 2))) static void mock_log(const char *fmt, ...)
{
    const char *path = getenv("FATTN_MOCK_LOG");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(f, "%d ", (int)getpid());
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    va_end(ap);
    fclose(f);
}

#endif
