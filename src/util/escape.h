/*
 * escape.h - writing text that came from outside (a database row, a device
 * name, a command line) into the languages fattn-tune writes: JSON, HTML, C
 * comments and C string literals, and a terminal.
 *
 * The text may be anything: quotes, backslashes, newlines, control bytes,
 * "*" "/" and "??/" (a trigraph), "<script>", invalid UTF-8. Each writer
 * keeps it inside the construct it is written into; none lets it end that
 * construct or start another. NULL writes as the empty text (JSON: null).
 */
#ifndef FATTN_UTIL_ESCAPE_H
#define FATTN_UTIL_ESCAPE_H

#include <stdio.h>

/* The length (1-4) of the well-formed UTF-8 sequence at `p`, with its code
 * point in *cp; 0 when `p` does not start one (a stray continuation byte,
 * an overlong form, a surrogate, a code point past U+10FFFF, a truncated
 * sequence). *p must not be NUL. */
int fattn_utf8_len(const unsigned char *p, unsigned *cp);

/* A JSON string literal, quotes included. Malformed UTF-8 becomes U+FFFD;
 * U+2028 and U+2029 are escaped (JavaScript reads them as line ends). */
void fattn_json_string(FILE *f, const char *s);

/* A JSON number as printf's %.6g writes it; null for an infinity or a NaN,
 * which JSON cannot hold. */
void fattn_json_number(FILE *f, double v);

/* 1 when s is a JSON number (RFC 8259: -?int frac? exp?), 0 otherwise
 * ("inf", "nan", "Inf", "0x10", "1.", ".5", "+1" among them). */
int fattn_json_number_text(const char *s);

/* HTML text or a double- or single-quoted attribute value: & < > " ' as
 * entities; control characters and malformed UTF-8 as U+FFFD. */
void fattn_html_escape(FILE *f, const char *s);

/* The inside of a C block comment: no "*" "/" pair, no "/" "*" pair, no
 * "??" (trigraphs), no newline and no trailing backslash can come out of
 * it; control characters and malformed UTF-8 are written as the text
 * \xNN. */
void fattn_c_comment(FILE *f, const char *s);

/* A C string literal, quotes included, whose value is exactly the bytes of
 * `s`: " \ and ? are escaped, everything outside printable ASCII is an
 * octal escape. */
void fattn_c_string(FILE *f, const char *s);

/* A copy of `s` (caller frees) fit for a terminal: every control character
 * (C0, DEL, C1) and every byte of malformed UTF-8 becomes '?', one '?' a
 * byte, so that the copy is as long as `s`. */
char *fattn_terminal_safe(const char *s);

#endif
