/*
 * measure.c - the measurement options' help (search, bench, confirm; set
 * by fattn_measure_set, job/job.h), and --unsafe-skip-gate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util/err.h"
#include "util/misc.h"

/* The measurement options' help; confirm's leaves out --samples (it takes
 * --n) and --seed (its own). */
#define TIMING_HELP_HEAD                                                                                               \
    "Measurement:\n"                                                                                                   \
    "  --kernel-timeout D   watchdog per step of a candidate (default 10s): longer is a timeout\n"                     \
    "  --setup-timeout D    limit of a worker's start and of the cuDNN baseline's first plan (load,\n"                 \
    "                       heuristics, plan; default 5m), apart from the kernel watchdog\n"                           \
    "  --reps N             launches per CUDA graph; per-launch time = elapsed / N (default 20)\n"                     \
    "  --warmup N           graph replays before sampling (default 5)\n"
#define TIMING_HELP_REST                                                                                               \
    "  --timing-sets N      input sets rotated through while timing (default: enough to exceed twice\n"                \
    "                       the L2 cache, 2 to 16)\n"                                                                  \
    "  --flush-l2           overwrite a buffer twice the L2 size before each sample\n"                                 \
    "  --atol X, --rtol X   elementwise numerics gate |o - r| <= atol + rtol*|r| on every element\n"                   \
    "                       (default 0.01, 0.01)\n"                                                                    \
    "  --max-rel-l2 X       norm-wise numerics gate ||o - r|| / ||r|| <= X over all elements, summed in\n"             \
    "                       fp64 (||o|| <= atol where ||r|| = 0); 0 < X <= 1 (default 0.004, 5x above\n"               \
    "                       the worst a correct kernel showed: docs/numerics.md). Every check runs\n"                  \
    "                       uniform inputs and peaky ones (Q, K x3: scores of standard deviation 3)\n"

const char cli_timing_help[] =
    TIMING_HELP_HEAD "  --samples N          timed graph replays per candidate (default 30)\n" TIMING_HELP_REST
                     "  --seed S             seed of the strategy and the numerics inputs (default 1)\n";

const char cli_confirm_timing_help[] = TIMING_HELP_HEAD TIMING_HELP_REST;

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
