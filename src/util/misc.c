/*
 * misc.c - clocks, timestamps, random numbers and strict number parsing.
 */
#include "util/misc.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

double fattn_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void fattn_utc_now(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void fattn_utc_now_ms(char out[32])
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char sec[24];
    strftime(sec, sizeof sec, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 32, "%s.%03dZ", sec, (int)(ts.tv_nsec / 1000000));
}

void fattn_rng_seed(fattn_rng *r, uint64_t seed)
{
    r->state = seed;
}

uint64_t fattn_rng_next(fattn_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t fattn_rng_below(fattn_rng *r, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;
    do
        x = fattn_rng_next(r);
    while (x >= limit);
    return x % n;
}

double fattn_rng_uniform(fattn_rng *r)
{
    return (double)(fattn_rng_next(r) >> 11) * 0x1.0p-53;
}

int fattn_parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    if (!s || !*s || isspace((unsigned char)*s) || *s == '+')
        return -1;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int fattn_parse_double(const char *s, double *out)
{
    char *end;
    if (!s || !*s || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int fattn_parse_bytes(const char *s, uint64_t *out)
{
    static const struct {
        const char *suffix;
        uint64_t mult;
    } units[] = {
        {"", 1},           {"b", 1},         {"k", 1024},     {"kib", 1024},     {"kb", 1024},     {"m", 1u << 20},
        {"mib", 1u << 20}, {"mb", 1u << 20}, {"g", 1u << 30}, {"gib", 1u << 30}, {"gb", 1u << 30},
    };
    char *end;
    if (!s || !isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; ++i) {
        if (strcasecmp(end, units[i].suffix) == 0) {
            if (v > UINT64_MAX / units[i].mult)
                return -1;
            *out = (uint64_t)v * units[i].mult;
            return 0;
        }
    }
    return -1;
}

void fattn_format_bytes(uint64_t bytes, char *out, size_t n)
{
    if (bytes >= (1ull << 40))
        fattn_format_size(bytes, out, n);
    else if (bytes >= (1u << 30) && bytes % (1u << 30) == 0)
        snprintf(out, n, "%llu GiB", (unsigned long long)(bytes >> 30));
    else if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
        snprintf(out, n, "%llu MiB", (unsigned long long)(bytes >> 20));
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(out, n, "%llu KiB", (unsigned long long)(bytes >> 10));
    else
        snprintf(out, n, "%llu B", (unsigned long long)bytes);
}

fattn_clipped fattn_clip(const char *text)
{
    fattn_clipped c;
    snprintf(c.s, sizeof c.s, "%.64s%s", text, strlen(text) > 64 ? "..." : "");
    return c;
}

void fattn_format_eta(double seconds, char *out, size_t n)
{
    if (!(seconds > 0))
        seconds = 0;
    if (seconds >= 6000 * 60.0)
        snprintf(out, n, "over 6000m");
    else
        snprintf(out, n, "%dm%02ds", (int)seconds / 60, (int)seconds % 60);
}

void fattn_format_size(double bytes, char *out, size_t n)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
    size_t u = 0;
    while (bytes >= 1024 && u + 1 < sizeof units / sizeof units[0])
        bytes /= 1024, ++u;
    if (u == 0)
        snprintf(out, n, "%.0f B", bytes);
    else
        snprintf(out, n, "%.*f %s", bytes < 10 ? 2 : bytes < 100 ? 1 : 0, bytes, units[u]);
}

int fattn_parse_duration(const char *s, double *ms)
{
    double total = 0;
    int parts = 0;
    const char *p = s;
    if (!s || !*s)
        return -1;
    while (*p) {
        char *end;
        if (!isdigit((unsigned char)*p) && *p != '.')
            return -1;
        errno = 0;
        double v = strtod(p, &end);
        if (errno || end == p || v < 0)
            return -1;
        p = end;
        double unit;
        if (!strncmp(p, "ms", 2))
            unit = 1, p += 2;
        else if (*p == 's')
            unit = 1e3, ++p;
        else if (*p == 'm')
            unit = 60e3, ++p;
        else if (*p == 'h')
            unit = 3600e3, ++p;
        else if (!*p && !parts)
            unit = 1e3;
        else
            return -1;
        total += v * unit;
        ++parts;
    }
    if (!isfinite(total))
        return -1;
    *ms = total;
    return 0;
}
