/*
 * cmd_confirm.c - fattn-tune confirm: a study's best configurations
 * re-measured against a baseline, interleaved, with bootstrap confidence
 * intervals, a rank test and an effect size; every sample stored; and a
 * regression gate against the last confirmation (--against previous).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "confirm/run.h"
#include "export/table.h"
#include "report/report.h"
#include "util/err.h"
#include "util/misc.h"

static const char help_head[] =
    "usage: fattn-tune confirm [--study S] [--n 100] [--top K] [--baseline cudnn|config:KEY|trial:ID]\n"
    "                          [--against previous [--threshold 3%]] [options]\n"
    "\n"
    "Re-measures a study's fastest configuration (or its K fastest) and a baseline interleaved, in one\n"
    "worker on the GPU: each kernel is verified against the reference on fresh inputs, then N rounds\n"
    "take one sample of each in turn (A B A B ...), then each is verified again on other inputs.\n"
    "Reports per candidate: the median with its 95% bootstrap confidence interval, p90, the speedup\n"
    "(baseline median / candidate median) with its CI, the Mann-Whitney U p-value, Cliff's delta, and\n"
    "the verdict:\n"
    "  success       speedup >= --target, the two CIs do not overlap, p90 no worse than the baseline's\n"
    "  faster        significantly faster (CIs apart), below the target\n"
    "  p90-worse     significantly faster at the median, but slower at p90\n"
    "  slower        significantly slower\n"
    "  inconclusive  the CIs overlap\n"
    "Every sample and statistic goes to the confirmations tables (fattn-tune query confirmations).\n"
    "\n"
    "Each kernel passes the gates and is compiled again first, as the study searched it: on the study's\n"
    "arch, under the gate limits the study stored (a search with --smem-limit max is confirmed under\n"
    "that limit), said in one line; a gate threshold given here overrides the study's, with a line\n"
    "saying so; a study that stored no limits gets the defaults, and a line says so. Needs a GPU of the\n"
    "study's arch and the kernel source the study measured (the same sha256): otherwise confirm stops\n"
    "with one line naming both, unless --allow-arch-change or --allow-kernel-change.\n"
    "\n"
    "  --study S            the study (default: the latest)\n"
    "  --n N                samples of each kernel (default 100)\n"
    "  --top K              the K fastest distinct configurations (default 1, at most 16)\n"
    "  --baseline B         cudnn (cuDNN's fused attention), config:KEY (a configuration of our kernel),\n"
    "                       trial:ID (a stored trial's configuration). Default: cudnn for non-causal\n"
    "                       shapes where libcudnn loads, else our kernel's FlashAttention-2-like config\n"
    "  --against previous   also compare each candidate with its last stored confirmation on the same\n"
    "                       shape and GPU; exit status 3 when its median is slower by more than\n"
    "                       --threshold and the two CIs do not overlap (a regression gate for CI)\n"
    "  --threshold PCT      regression threshold (default 3%)\n"
    "  --target X           speedup that counts as success (default 1.10)\n"
    "  --resamples B        bootstrap resamples (default 10000, at least 10000)\n"
    "  --seed S             seed of the inputs and of the bootstrap (default 1)\n"
    "  --format FMT         table (default) or json\n"
    "  --allow-kernel-change  re-gate and re-compile under the kernel source now in --kernel-dir, though\n"
    "                       it is not the one the study measured (said in one line)\n"
    "  --allow-arch-change  re-gate and re-compile for this GPU's arch, though the study searched another\n";

typedef struct confirm_opts {
    long study, n, top;
    int format;
    fattn_confirm_opts run;
} confirm_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    confirm_opts *o = ctx;
    if (opt == OPT_SAMPLES)
        return fattn_error(FATTN_EUSAGE, "confirm takes --n N (samples of each kernel), not --samples");
    switch (opt) {
    case OPT_STUDY: return cli_long("--study", arg, 1, 2147483647L, &o->study);
    case OPT_N: return cli_long("--n", arg, 5, 10000, &o->n); /* the answer must fit one message */
    case OPT_TOP: return cli_long("--top", arg, 1, FATTN_CONFIRM_MAX_TOP, &o->top);
    case OPT_RESAMPLES: return cli_long("--resamples", arg, 10000, 10000000, &o->run.resamples);
    case OPT_BASELINE: o->run.baseline_arg = arg; return FATTN_OK;
    case OPT_AGAINST:
        if (strcmp(arg, "previous") != 0)
            return fattn_error(FATTN_EUSAGE, "--against '%s': expected previous", arg);
        o->run.against = 1;
        return FATTN_OK;
    case OPT_THRESHOLD: {
        size_t len = strlen(arg);
        char buf[64];
        snprintf(buf, sizeof buf, "%.*s", (int)(len && arg[len - 1] == '%' ? len - 1 : len), arg);
        if (fattn_parse_double(buf, &o->run.threshold) || o->run.threshold < 0 || o->run.threshold > 1000)
            return fattn_error(FATTN_EUSAGE, "--threshold '%s': expected a percentage such as 3%% or 0.5", arg);
        return FATTN_OK;
    }
    case OPT_TARGET:
        if (fattn_parse_double(arg, &o->run.target) || o->run.target < 1 || o->run.target > 100)
            return fattn_error(FATTN_EUSAGE, "--target '%s': expected a speedup of at least 1, such as 1.10", arg);
        return FATTN_OK;
    case OPT_FORMAT: return fattn_format_parse(arg, "--format", &o->format);
    case OPT_ALLOW_KERNEL_CHANGE: o->run.allow_kernel = 1; return FATTN_OK;
    case OPT_ALLOW_ARCH_CHANGE: o->run.allow_arch = 1; return FATTN_OK;
    }
    return FATTN_EUSAGE;
}

int cmd_confirm(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        {"device", required_argument, NULL, OPT_SETTING + 4}, /* the GPU, set on the target */
        {"samples", required_argument, NULL, OPT_SAMPLES},    /* refused: --n */
        {"allow-kernel-change", no_argument, NULL, OPT_ALLOW_KERNEL_CHANGE},
        {"allow-arch-change", no_argument, NULL, OPT_ALLOW_ARCH_CHANGE},
        {"study", required_argument, NULL, OPT_STUDY},
        {"n", required_argument, NULL, OPT_N},
        {"top", required_argument, NULL, OPT_TOP},
        {"baseline", required_argument, NULL, OPT_BASELINE},
        {"against", required_argument, NULL, OPT_AGAINST},
        {"threshold", required_argument, NULL, OPT_THRESHOLD},
        {"target", required_argument, NULL, OPT_TARGET},
        {"resamples", required_argument, NULL, OPT_RESAMPLES},
        {"format", required_argument, NULL, OPT_FORMAT},
        {NULL, 0, NULL, 0},
    };
    confirm_opts o = {.n = 100, .top = 1, .format = FATTN_FMT_TABLE};
    fattn_target t;
    fattn_gpu gpu = {0};
    fattn_store *s = NULL;
    fattn_confirm_report *r = fattn_xcalloc(1, sizeof *r);
    int rc;

    fattn_target_init(&t);
    fattn_measure_init(&o.run.measure);
    o.run.resamples = 10000, o.run.threshold = 3.0, o.run.target = 1.10;
    if ((rc = cli_parse(argc, argv,
                        &(cli_spec){opts, "", CLI_LIMITS | CLI_MEASURE, handle, help_head, cli_confirm_timing_help}, &o,
                        c, &t, &o.run.measure, NULL))
        || (rc = fattn_confirm_baseline_parse(o.run.baseline_arg, &o.run.baseline)))
        goto out;
    o.run.study = o.study, o.run.n = (int)o.n, o.run.top = (int)o.top, o.run.kernel_dir = c->kernel_dir;
    /* The GPU first: without one, nothing is opened. */
    if ((rc = fattn_gpu_arch(&t, &gpu, "confirm", NULL)) || (rc = cli_open_db(c, &s))
        || (rc = fattn_confirm_run(&o.run, &t, &gpu, s, c->quiet ? NULL : stderr, r)))
        goto out;
    fattn_report_confirm(&o.run, r, o.format, stdout);
    if (r->regressions)
        rc = fattn_error(FATTN_EREGRESS, "%d configuration%s regressed against the previous confirmation",
                         r->regressions, r->regressions == 1 ? "" : "s");
    else if (r->failed)
        rc = fattn_error(FATTN_EFAIL, "confirm could not measure every kernel; the table says which and why");
out:
    fattn_store_close(&s);
    fattn_target_release(&t);
    free(r);
    return rc > 0 ? FATTN_OK : rc;
}
