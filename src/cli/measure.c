/*
 * measure.c - the measurement options (search, bench, confirm) into the
 * library's fattn_measure (job/job.h), and --unsafe-skip-gate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util/err.h"
#include "util/misc.h"

const char cli_timing_help[] =
    "Measurement:\n"
    "  --kernel-timeout D   watchdog per step of a candidate (default 10s): longer is a timeout\n"
    "  --setup-timeout D    limit of a worker's start and of the cuDNN baseline's first plan (load,\n"
    "                       heuristics, plan; default 5m), apart from the kernel watchdog\n"
    "  --reps N             launches per CUDA graph; per-launch time = elapsed / N (default 20)\n"
    "  --warmup N           graph replays before sampling (default 5)\n"
    "  --samples N          timed graph replays per candidate (default 30)\n"
    "  --timing-sets N      input sets rotated through while timing (default: enough to exceed twice\n"
    "                       the L2 cache, 2 to 16)\n"
    "  --flush-l2           overwrite a buffer twice the L2 size before each sample\n"
    "  --atol X, --rtol X   elementwise numerics gate |o - r| <= atol + rtol*|r| on every element\n"
    "                       (default 0.01, 0.01)\n"
    "  --max-rel-l2 X       norm-wise numerics gate ||o - r|| / ||r|| <= X over all elements, summed in\n"
    "                       fp64 (||o|| <= atol where ||r|| = 0); 0 < X <= 1 (default 0.004, 5x above\n"
    "                       the worst a correct kernel showed: docs/numerics.md). Every check runs\n"
    "                       uniform inputs and peaky ones (Q, K x3: scores of standard deviation 3)\n"
    "  --seed S             seed of the strategy and the numerics inputs (default 1)\n";

static int tolerance(const char *opt, const char *arg, double *out)
{
    if (fattn_parse_double(arg, out) || *out < 0 || *out > 10)
        return fattn_error(FATTN_EUSAGE, "%s '%s': expected a number from 0 to 10", opt, arg);
    return 1;
}

int cli_timing_option(fattn_measure *tm, int opt, const char *arg)
{
    switch (opt) {
    case OPT_REPS: return cli_long("--reps", arg, 1, 10000, &tm->reps) ? FATTN_EUSAGE : 1;
    case OPT_WARMUP: return cli_long("--warmup", arg, 0, 10000, &tm->warmup) ? FATTN_EUSAGE : 1;
    case OPT_SAMPLES: return cli_long("--samples", arg, 1, 100000, &tm->samples) ? FATTN_EUSAGE : 1;
    case OPT_TIMING_SETS: return cli_long("--timing-sets", arg, 1, 64, &tm->timing_sets) ? FATTN_EUSAGE : 1;
    case OPT_SEED: return cli_long("--seed", arg, 0, 2147483647L, &tm->seed) ? FATTN_EUSAGE : 1;
    case OPT_FLUSH_L2: tm->flush_l2 = 1; return 1;
    case OPT_ATOL: return tolerance("--atol", arg, &tm->tol.atol);
    case OPT_RTOL: return tolerance("--rtol", arg, &tm->tol.rtol);
    case OPT_MAX_REL_L2:
        if (fattn_parse_double(arg, &tm->tol.max_rel_l2) || !(tm->tol.max_rel_l2 > 0 && tm->tol.max_rel_l2 <= 1))
            return fattn_error(FATTN_EUSAGE,
                               "--max-rel-l2 '%s': expected a number above 0 and at most 1, such as 0.004", arg);
        return 1;
    case OPT_KERNEL_TIMEOUT:
        if (fattn_parse_duration(arg, &tm->timeout_ms) || tm->timeout_ms <= 0)
            return fattn_error(FATTN_EUSAGE, "--kernel-timeout '%s': expected a duration such as 10s or 2m", arg);
        return 1;
    case OPT_SETUP_TIMEOUT:
        if (fattn_parse_duration(arg, &tm->setup_ms) || tm->setup_ms < 1000 || tm->setup_ms > 3600000)
            return fattn_error(FATTN_EUSAGE, "--setup-timeout '%s': expected a duration from 1s to 60m, such as 5m",
                               arg);
        return 1;
    default: return 0;
    }
}

int cli_skip_gate_option(unsigned *mask, const char *arg)
{
    int r = fattn_reason_find(arg);
    if (!r || fattn_reason(r)->stage == FATTN_STAGE_RUN || r == FATTN_R_TILING || r == FATTN_R_COMPILE_ERROR)
        return fattn_error(FATTN_EUSAGE,
                           "--unsafe-skip-gate '%s': expected a static or post-compile gate other than "
                           "tiling and compile_error",
                           arg);
    *mask |= 1u << r;
    return FATTN_OK;
}
