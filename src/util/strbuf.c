/*
 * strbuf.c - growing strings.
 */
#include "util/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

static char empty[1];

void fattn_sb_init(fattn_strbuf *sb)
{
    sb->s = empty;
    sb->len = 0;
    sb->cap = 0;
}

void fattn_sb_release(fattn_strbuf *sb)
{
    if (sb->cap)
        free(sb->s);
    fattn_sb_init(sb);
}

void fattn_sb_reset(fattn_strbuf *sb)
{
    sb->len = 0;
    if (sb->cap)
        sb->s[0] = '\0';
}

static void grow(fattn_strbuf *sb, size_t extra)
{
    size_t need = sb->len + extra + 1;
    if (need <= sb->cap)
        return;
    size_t cap = sb->cap ? sb->cap : 64;
    while (cap < need)
        cap *= 2;
    if (sb->cap) {
        sb->s = fattn_xrealloc(sb->s, cap);
    } else {
        sb->s = fattn_xmalloc(cap);
        sb->s[0] = '\0';
    }
    sb->cap = cap;
}

void fattn_sb_add(fattn_strbuf *sb, const char *s, size_t n)
{
    grow(sb, n);
    memcpy(sb->s + sb->len, s, n);
    sb->len += n;
    sb->s[sb->len] = '\0';
}

void fattn_sb_adds(fattn_strbuf *sb, const char *s)
{
    fattn_sb_add(sb, s, strlen(s));
}

void fattn_sb_vaddf(fattn_strbuf *sb, const char *fmt, va_list ap)
{
    va_list cp;
    if (!fmt)
        return;
    va_copy(cp, ap);
    int n = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (n <= 0)
        return;
    grow(sb, (size_t)n);
    vsnprintf(sb->s + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void fattn_sb_addf(fattn_strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fattn_sb_vaddf(sb, fmt, ap);
    va_end(ap);
}

char *fattn_sb_detach(fattn_strbuf *sb)
{
    char *s = sb->cap ? sb->s : fattn_xstrdup("");
    fattn_sb_init(sb);
    return s;
}

char *fattn_join(int n, char *const *words, const char *sep)
{
    fattn_strbuf sb;
    fattn_sb_init(&sb);
    for (int i = 0; i < n; ++i) {
        if (i)
            fattn_sb_adds(&sb, sep);
        fattn_sb_adds(&sb, words[i]);
    }
    return fattn_sb_detach(&sb);
}
