/*
 * err.h - error reporting and exit codes.
 *
 * Functions of the library return 0 on success or a negative code: FATTN_EFAIL
 * for a failure of the environment (missing file, database, driver),
 * FATTN_EUSAGE for a mistake in what the user typed or wrote. The place that
 * detects an error reports it once with fattn_error(), which records the
 * message (fattn_last_error(), per thread) and prints it to stderr as
 * "fattn-tune: <message>" unless printing was turned off (tests).
 */
#ifndef FATTN_UTIL_ERR_H
#define FATTN_UTIL_ERR_H

#include <stddef.h>

enum {
    FATTN_OK = 0,
    FATTN_EFAIL = -1,
    FATTN_EUSAGE = -2,
    FATTN_EREGRESS = -3, /* confirm --against previous found a regression (exit status 3) */
};

/* Records and prints a message; returns `code` so that callers can write
 * `return fattn_error(FATTN_EUSAGE, "...")`. */
int fattn_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The last message recorded by this thread ("" if none). */
const char *fattn_last_error(void);

/* Turns printing to stderr off (quiet != 0) or on; messages are still recorded. */
void fattn_error_set_quiet(int quiet);

/* The same for the calling thread only (worker threads that hand their
 * messages back instead of printing them); returns the previous setting. */
int fattn_error_set_quiet_thread(int quiet);

/* Exit status for a return code: 0, 1 (failure), 2 (usage error) or 3
 * (a confirmed regression). */
int fattn_exit_status(int rc);

/* Prints a warning "fattn-tune: warning: ..." (not recorded). */
void fattn_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Allocation that aborts with a message when memory is exhausted. */
void *fattn_xmalloc(size_t n);
void *fattn_xcalloc(size_t n, size_t size);
void *fattn_xrealloc(void *p, size_t n);
char *fattn_xstrdup(const char *s);
char *fattn_xstrndup(const char *s, size_t n);

#endif
