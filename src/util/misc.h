/*
 * misc.h - clocks, timestamps, a seeded random stream and number parsing.
 */
#ifndef FATTN_UTIL_MISC_H
#define FATTN_UTIL_MISC_H

#include <stddef.h>
#include <stdint.h>

/* Monotonic time in milliseconds. */
double fattn_now_ms(void);

/* Current UTC time as "YYYY-MM-DDTHH:MM:SSZ". */
void fattn_utc_now(char out[32]);

/* The same to the millisecond, "YYYY-MM-DDTHH:MM:SS.mmmZ" (ISO 8601, as
 * SQLite's date functions read it): a trial's time, so that the report can
 * place trials in wall time. */
void fattn_utc_now_ms(char out[32]);

/* splitmix64: a small, seeded, reproducible random stream. */
typedef struct fattn_rng {
    uint64_t state;
} fattn_rng;
void fattn_rng_seed(fattn_rng *r, uint64_t seed);
uint64_t fattn_rng_next(fattn_rng *r);
/* Uniform integer in [0, n). */
uint64_t fattn_rng_below(fattn_rng *r, uint64_t n);
/* Uniform double in [0, 1), 53 random bits. */
double fattn_rng_uniform(fattn_rng *r);

/* Parses a whole string as a decimal integer in [min, max]; 0 on success. */
int fattn_parse_long(const char *s, long min, long max, long *out);
/* Parses a whole string as a finite double; 0 on success. */
int fattn_parse_double(const char *s, double *out);
/* Parses a byte count: "49152", "48K", "48KiB", "100k", "2M", "20000MiB", "1G". */
int fattn_parse_bytes(const char *s, uint64_t *out);
/* Parses a duration: "90s", "6m", "120m", "2h", "1h30m", "500ms", or plain
 * seconds "90"; 0 on success with milliseconds in *ms. */
int fattn_parse_duration(const char *s, double *ms);

/* Formats bytes as "48 KiB" style when exact, else as a plain number; from
 * 1 TiB up as fattn_format_size does. */
void fattn_format_bytes(uint64_t bytes, char *out, size_t n);

/* Text as a message shows it: its first 64 bytes, "..." after them, so that
 * a huge input cannot push the reason out of the one line. */
typedef struct fattn_clipped {
    char s[68];
} fattn_clipped;
fattn_clipped fattn_clip(const char *text);

/* A time left as the progress lines show it, "12m05s"; "over 6000m" past
 * that (never converted out of an int's range). */
void fattn_format_eta(double seconds, char *out, size_t n);

/* Formats a size of any magnitude with three significant digits and a binary
 * unit ("1.50 TiB", "16.0 EiB", "139 ZiB"). */
void fattn_format_size(double bytes, char *out, size_t n);

#endif
