/*
 * settings.c - a target's and a measurement's settings by name (job.h),
 * as a command line or a file gives them: each value checked as it comes,
 * a mistake named by its option.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "job/job.h"
#include "util/err.h"
#include "util/misc.h"

static int integer(const char *name, const char *value, long min, long max, long *out)
{
    if (fattn_parse_long(value, min, max, out))
        return fattn_error(FATTN_EUSAGE, "--%s '%s': expected an integer from %ld to %ld", name, value, min, max);
    return 1;
}

static int fraction(const char *name, const char *value, double *out)
{
    if (fattn_parse_double(value, out) || *out < 0 || *out > 1)
        return fattn_error(FATTN_EUSAGE, "--%s '%s': expected a fraction from 0 to 1", name, value);
    return 1;
}

/* The gate limits, each with the bit that marks it given. */
static const struct {
    const char *name;
    unsigned bit;
} limits[] = {{"smem-limit", FATTN_GIVEN_SMEM_LIMIT},
              {"max-bank-ways", FATTN_GIVEN_MAX_BANK_WAYS},
              {"min-coalescing", FATTN_GIVEN_MIN_COALESCING},
              {"mem-budget", FATTN_GIVEN_MEM_BUDGET},
              {"max-spill-bytes", FATTN_GIVEN_MAX_SPILL_BYTES},
              {"min-occupancy", FATTN_GIVEN_MIN_OCCUPANCY},
              {"strict-occupancy", FATTN_GIVEN_STRICT_OCCUPANCY}};

static int set_limit(fattn_target *t, unsigned bit, const char *name, const char *value)
{
    long v;
    uint64_t bytes;
    int rc = 1;
    t->given |= bit;
    switch (bit) {
    case FATTN_GIVEN_SMEM_LIMIT: t->smem_limit_text = value; break;
    case FATTN_GIVEN_MAX_BANK_WAYS:
        if ((rc = integer(name, value, 1, 32, &v)) > 0)
            t->lim.max_bank_ways = (unsigned)v;
        break;
    case FATTN_GIVEN_MIN_COALESCING: rc = fraction(name, value, &t->lim.min_coalescing); break;
    case FATTN_GIVEN_MEM_BUDGET:
        /* At most 2^50 (1 PiB): a study's limits record (JSON, read as a double) keeps it exactly. */
        if (fattn_parse_bytes(value, &bytes) || bytes == 0 || bytes > (1ull << 50))
            return fattn_error(FATTN_EUSAGE,
                               "--mem-budget '%s': expected a byte count from 1 to 2^50 such as 20000M or 64G", value);
        t->lim.mem_budget = bytes;
        break;
    case FATTN_GIVEN_MAX_SPILL_BYTES:
        if ((rc = integer(name, value, 0, 1000000000, &v)) > 0)
            t->lim.max_spill_bytes = (unsigned)v;
        break;
    case FATTN_GIVEN_MIN_OCCUPANCY: rc = fraction(name, value, &t->lim.min_occupancy); break;
    default: t->lim.occupancy_cp_async_exempt = 0; /* strict-occupancy */
    }
    return rc;
}

int fattn_target_set(fattn_target *t, const char *name, const char *value)
{
    long v;
    int rc;
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; ++i)
        if (!strcmp(name, limits[i].name))
            return set_limit(t, limits[i].bit, name, value);
    if (!strcmp(name, "space")) {
        if (t->nspace_paths == FATTN_MAX_FAMILIES)
            return fattn_error(FATTN_EUSAGE, "--space %s: more than %d spaces; expected one per family", value,
                               FATTN_MAX_FAMILIES);
        t->space_paths[t->nspace_paths++] = value;
        if (!t->space_path)
            t->space_path = value;
    } else if (!strcmp(name, "family"))
        t->family_text = value;
    else if (!strcmp(name, "shape"))
        t->shape_text = value;
    else if (!strcmp(name, "causal"))
        t->causal = 1;
    else if (!strcmp(name, "arch"))
        t->arch_name = value;
    else if (!strcmp(name, "filter"))
        t->filter_text = value; /* read once the space (its family) is known */
    else if (!strcmp(name, "device")) {
        if ((rc = integer(name, value, 0, 63, &v)) < 0)
            return rc;
        t->device = (int)v;
    } else {
        return 0;
    }
    return 1;
}

static int tolerance(const char *name, const char *value, double *out)
{
    if (fattn_parse_double(value, out) || *out < 0 || *out > 10)
        return fattn_error(FATTN_EUSAGE, "--%s '%s': expected a number from 0 to 10", name, value);
    return 1;
}

int fattn_measure_set(fattn_measure *m, const char *name, const char *value)
{
    static const struct {
        const char *name;
        size_t field;
        long min, max;
    } counts[] = {{"reps", offsetof(fattn_measure, reps), 1, 10000},
                  {"warmup", offsetof(fattn_measure, warmup), 0, 10000},
                  {"samples", offsetof(fattn_measure, samples), 1, 100000},
                  {"timing-sets", offsetof(fattn_measure, timing_sets), 1, 64},
                  {"seed", offsetof(fattn_measure, seed), 0, 2147483647L}};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i)
        if (!strcmp(name, counts[i].name))
            return integer(name, value, counts[i].min, counts[i].max, (long *)((char *)m + counts[i].field));
    if (!strcmp(name, "flush-l2")) {
        m->flush_l2 = 1;
        return 1;
    }
    if (!strcmp(name, "atol"))
        return tolerance(name, value, &m->tol.atol);
    if (!strcmp(name, "rtol"))
        return tolerance(name, value, &m->tol.rtol);
    if (!strcmp(name, "max-rel-l2")) {
        if (fattn_parse_double(value, &m->tol.max_rel_l2) || !(m->tol.max_rel_l2 > 0 && m->tol.max_rel_l2 <= 1))
            return fattn_error(FATTN_EUSAGE,
                               "--max-rel-l2 '%s': expected a number above 0 and at most 1, such as 0.004", value);
        return 1;
    }
    if (!strcmp(name, "kernel-timeout")) {
        /* Whole milliseconds, as the worker's watchdog counts them (an int). */
        if (fattn_parse_duration(value, &m->timeout_ms) || m->timeout_ms < 1 || m->timeout_ms > 3600000)
            return fattn_error(FATTN_EUSAGE,
                               "--kernel-timeout '%s': expected a duration from 1ms to 60m, such as 10s or 2m", value);
        m->timeout_ms = ceil(m->timeout_ms);
        return 1;
    }
    if (!strcmp(name, "setup-timeout")) {
        if (fattn_parse_duration(value, &m->setup_ms) || m->setup_ms < 1000 || m->setup_ms > 3600000)
            return fattn_error(FATTN_EUSAGE, "--setup-timeout '%s': expected a duration from 1s to 60m, such as 5m",
                               value);
        return 1;
    }
    return 0;
}
