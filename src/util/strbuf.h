/*
 * strbuf.h - a growing, always NUL-terminated string.
 */
#ifndef FATTN_UTIL_STRBUF_H
#define FATTN_UTIL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct fattn_strbuf {
    char *s; /* owned; "" after init */
    size_t len;
    size_t cap;
} fattn_strbuf;

void fattn_sb_init(fattn_strbuf *sb);
void fattn_sb_release(fattn_strbuf *sb);
void fattn_sb_reset(fattn_strbuf *sb);
void fattn_sb_add(fattn_strbuf *sb, const char *s, size_t n);
void fattn_sb_adds(fattn_strbuf *sb, const char *s);
void fattn_sb_addf(fattn_strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void fattn_sb_vaddf(fattn_strbuf *sb, const char *fmt, va_list ap);
/* Hands the string to the caller (who frees it) and re-initializes sb. */
char *fattn_sb_detach(fattn_strbuf *sb);

/* words[0..n) joined by sep, in a new string (the caller frees it). */
char *fattn_join(int n, char *const *words, const char *sep);

#endif
