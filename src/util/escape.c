/*
 * escape.c - untrusted text into JSON, HTML, C comments, C strings and a
 * terminal.
 */
#include "util/escape.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

int fattn_utf8_len(const unsigned char *p, unsigned *cp)
{
    unsigned c = p[0], min;
    int n;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, c &= 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, c &= 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, c &= 0x07, min = 0x10000;
    else
        return 0;
    for (int i = 1; i < n; ++i) {
        if ((p[i] & 0xc0) != 0x80) /* a NUL ends the sequence here too */
            return 0;
        c = c << 6 | (p[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

/* A control character: C0, DEL or C1. */
static int control(unsigned cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp < 0xa0);
}

void fattn_json_string(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned cp;
        int n = fattn_utf8_len(p, &cp);
        if (!n) {
            fputs("\\ufffd", f);
            ++p;
            continue;
        }
        switch (cp) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (cp < 0x20 || cp == 0x2028 || cp == 0x2029)
                fprintf(f, "\\u%04x", cp);
            else
                fwrite(p, 1, (size_t)n, f);
        }
        p += n;
    }
    fputc('"', f);
}

void fattn_html_escape(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        unsigned cp;
        int n = fattn_utf8_len(p, &cp);
        if (!n) {
            fputs("&#xfffd;", f);
            ++p;
            continue;
        }
        switch (cp) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default:
            if (control(cp) && cp != '\t' && cp != '\n')
                fputs("&#xfffd;", f);
            else
                fwrite(p, 1, (size_t)n, f);
        }
        p += n;
    }
}

void fattn_c_comment(FILE *f, const char *s)
{
    int prev = 0; /* the last character written */
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        unsigned cp;
        int n = fattn_utf8_len(p, &cp);
        if (!n || control(cp)) {
            fprintf(f, "\\x%02x", *p);
            prev = 'x';
            ++p;
            continue;
        }
        /* "*" "/" would end the comment, "/" "*" open one (-Wcomment), "??"
         * start a trigraph ("??/" is a backslash), and a backslash at the
         * end would join the next line to this one. */
        if ((cp == '/' && prev == '*') || (cp == '*' && prev == '/') || (cp == '?' && prev == '?')
            || (cp == '\\' && !p[1])) {
            fprintf(f, "\\x%02x", cp);
            prev = 'x';
        } else {
            fwrite(p, 1, (size_t)n, f);
            prev = (int)cp;
        }
        p += n;
    }
}

void fattn_c_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; ++p) {
        if (*p == '"' || *p == '\\' || *p == '?')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            fprintf(f, "\\%03o", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

char *fattn_terminal_safe(const char *s)
{
    size_t len = strlen(s);
    char *out = fattn_xmalloc(len + 1);
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        unsigned cp;
        int n = fattn_utf8_len(p + i, &cp);
        if (!n || control(cp)) {
            out[i++] = '?';
            for (int k = 1; k < n; ++k)
                out[i++] = '?';
        } else {
            memcpy(out + i, p + i, (size_t)n);
            i += (size_t)n;
        }
    }
    out[len] = 0;
    return out;
}

void fattn_json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.6g", v);
    else
        fputs("null", f);
}

int fattn_json_number_text(const char *s)
{
    const char *p = s;
    if (*p == '-')
        ++p;
    if (*p == '0')
        ++p;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            ++p;
    else
        return 0;
    if (*p == '.') {
        if (!(*++p >= '0' && *p <= '9'))
            return 0;
        while (*p >= '0' && *p <= '9')
            ++p;
    }
    if (*p == 'e' || *p == 'E') {
        ++p;
        if (*p == '+' || *p == '-')
            ++p;
        if (!(*p >= '0' && *p <= '9'))
            return 0;
        while (*p >= '0' && *p <= '9')
            ++p;
    }
    return *p == '\0';
}
