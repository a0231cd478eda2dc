/*
 * t.h - the unit-test harness: checks that count failures and say where.
 *
 * A test program runs its cases from main() with T_RUN(fn) and returns
 * t_exit(): 0 when every check held, 1 otherwise. 77 skips (with a reason on
 * one line), 99 is a failure of the harness itself (a fixture could not be
 * built), as Meson expects.
 */
#ifndef FATTN_TESTS_T_H
#define FATTN_TESTS_T_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_failures;
static int t_checks;
static const char *t_case = "";

#define T_SKIP    77
#define T_HARNESS 99

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        ++t_checks;                                                                                                    \
        if (!(cond)) {                                                                                                 \
            ++t_failures;                                                                                              \
            fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__, __LINE__, t_case, #cond);                       \
        }                                                                                                              \
    } while (0)

#define CHECK_INT(a, b)                                                                                                \
    do {                                                                                                               \
        long long t_a_ = (long long)(a), t_b_ = (long long)(b);                                                        \
        ++t_checks;                                                                                                    \
        if (t_a_ != t_b_) {                                                                                            \
            ++t_failures;                                                                                              \
            fprintf(stderr, "%s:%d: %s: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, t_case, #a, t_a_, #b,  \
                    t_b_);                                                                                             \
        }                                                                                                              \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                                          \
    do {                                                                                                               \
        double t_a_ = (double)(a), t_b_ = (double)(b);                                                                 \
        ++t_checks;                                                                                                    \
        if (!(fabs(t_a_ - t_b_) <= (tol))) {                                                                           \
            ++t_failures;                                                                                              \
            fprintf(stderr, "%s:%d: %s: %s == %.9g, expected %.9g\n", __FILE__, __LINE__, t_case, #a, t_a_, t_b_);     \
        }                                                                                                              \
    } while (0)

#define CHECK_STR(a, b)                                                                                                \
    do {                                                                                                               \
        const char *t_a_ = (a), *t_b_ = (b);                                                                           \
        ++t_checks;                                                                                                    \
        if (!t_a_ || strcmp(t_a_, t_b_) != 0) {                                                                        \
            ++t_failures;                                                                                              \
            fprintf(stderr, "%s:%d: %s: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, t_case, #a,              \
                    t_a_ ? t_a_ : "(null)", t_b_);                                                                     \
        }                                                                                                              \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                                                                    \
    do {                                                                                                               \
        const char *t_h_ = (hay), *t_n_ = (needle);                                                                    \
        ++t_checks;                                                                                                    \
        if (!t_h_ || !strstr(t_h_, t_n_)) {                                                                            \
            ++t_failures;                                                                                              \
            fprintf(stderr, "%s:%d: %s: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__, t_case,                 \
                    t_h_ ? t_h_ : "(null)", t_n_);                                                                     \
        }                                                                                                              \
    } while (0)

#define T_RUN(fn)                                                                                                      \
    do {                                                                                                               \
        int t_before_ = t_failures;                                                                                    \
        t_case = #fn;                                                                                                  \
        fn();                                                                                                          \
        fprintf(stderr, "%s %s\n", t_failures == t_before_ ? "ok  " : "FAIL", #fn);                                    \
    } while (0)

#define T_RUN_ARG(fn, arg)                                                                                             \
    do {                                                                                                               \
        int t_before_ = t_failures;                                                                                    \
        t_case = #fn;                                                                                                  \
        fn(arg);                                                                                                       \
        fprintf(stderr, "%s %s(%s)\n", t_failures == t_before_ ? "ok  " : "FAIL", #fn, #arg);                          \
    } while (0)

/* FATTN_TEST_SLOWDOWN: how many times slower than an idle machine this one
 * may be (default 1; scripts/test.sh sets it with meson's
 * --timeout-multiplier). Every wall-clock bound a test's verdict depends on
 * (watchdogs, waits for progress) is multiplied by it; a value that is not a
 * number from 1 to 1000 is a harness failure. */
static inline double t_slowdown(void)
{
    const char *s = getenv("FATTN_TEST_SLOWDOWN");
    if (!s || !*s)
        return 1;
    char *end;
    double f = strtod(s, &end);
    if (*end || !(f >= 1 && f <= 1000)) {
        fprintf(stderr, "FATTN_TEST_SLOWDOWN=%s: expected a number from 1 to 1000\n", s);
        exit(T_HARNESS);
    }
    return f;
}

/* ms milliseconds on this machine: ms times t_slowdown(), rounded. */
static inline int t_ms(double ms)
{
    return (int)(ms * t_slowdown() + 0.5);
}

static inline int t_exit(void)
{
    fprintf(stderr, "%d checks, %d failed\n", t_checks, t_failures);
    return t_failures ? 1 : 0;
}

#endif
