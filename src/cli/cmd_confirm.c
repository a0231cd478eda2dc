/*
 * cmd_confirm.c - fattn-tune confirm: a study's best configurations
 * re-measured against a baseline, interleaved, with bootstrap confidence
 * intervals, a rank test and an effect size; every sample stored; and a
 * regression gate against the last confirmation (--against previous).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "confirm/run.h"
#include "export/table.h"
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

/* The measurement options' help without the lines confirm replaces (--n
 * for --samples, its own --seed). */
static void timing_help(char *out, size_t n)
{
    const char *p = cli_timing_help;
    size_t len = 0;
    while (*p && len + 1 < n) {
        const char *eol = strchr(p, '\n');
        size_t line = eol ? (size_t)(eol - p + 1) : strlen(p);
        if (strncmp(p, "  --samples ", 12) != 0 && strncmp(p, "  --seed ", 9) != 0) {
            size_t take = line < n - 1 - len ? line : n - 1 - len;
            memcpy(out + len, p, take);
            len += take;
        }
        p += line;
    }
    out[len] = '\0';
}

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
    int rc = cli_timing_option(&o->run.measure, opt, arg);
    if (rc)
        return rc < 0 ? rc : FATTN_OK;
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

static void print_table(const confirm_opts *o, const fattn_confirm_report *r, FILE *f)
{
    const char *names[] = {"config",     "median_us", "ci95_us",  "p90_us", "speedup",
                           "speedup_ci", "mwu_p",     "cliffs_d", "verdict"};
    const unsigned char numeric[] = {0, 1, 0, 1, 1, 0, 1, 1, 0};
    fattn_rows rows;
    fattn_rows_init(&rows, 9, names);
    for (int i = 0; i < r->k; ++i) {
        char c[9][64] = {{0}};
        const char *p[9];
        const fattn_comparison *m = &r->oc[i].cmp;
        snprintf(c[0], sizeof c[0], "%s", r->cands[i].key);
        if (r->oc[i].compared) {
            snprintf(c[1], 64, "%.3f", m->cand_median);
            snprintf(c[2], 64, "%.3f-%.3f", m->cand_lo, m->cand_hi);
            snprintf(c[3], 64, "%.3f", m->cand_p90);
            snprintf(c[4], 64, "%.3f", m->speedup);
            snprintf(c[5], 64, "%.3f-%.3f", m->speedup_lo, m->speedup_hi);
            snprintf(c[6], 64, "%.3g", m->mwu.p);
            snprintf(c[7], 64, "%.3f", m->delta);
        }
        snprintf(c[8], 64, "%s", r->oc[i].verdict);
        for (int j = 0; j < 9; ++j)
            p[j] = c[j][0] ? c[j] : NULL;
        fattn_rows_add(&rows, p, numeric);
    }
    fattn_rows_print(f, &rows, o->format, 0);
    fattn_rows_release(&rows);
}

static void print_json(const confirm_opts *o, const fattn_confirm_report *r, FILE *f)
{
    const fattn_confirm_baseline *b = &r->baseline;
    fprintf(f, "{\n  \"study\": %lld,\n  \"device\": ", r->study.id);
    fattn_json_string(f, r->device);
    fputs(",\n  \"timing\": ", f);
    fattn_json_string(f, r->method);
    fprintf(
        f,
        ",\n  \"n\": %ld,\n  \"resamples\": %ld,\n  \"level\": 0.95,\n  \"target\": %g,\n  \"baseline\": {\"given\": ",
        o->n, o->run.resamples, o->run.target);
    fattn_json_string(f, b->given);
    fputs(", \"what\": ", f);
    fattn_json_string(f, r->base_desc);
    fputs(", \"chosen\": ", f);
    fattn_json_string(f, b->why);
    fputs("},\n  \"candidates\": [", f);
    for (int i = 0; i < r->k; ++i) {
        const fattn_confirm_outcome *x = &r->oc[i];
        const fattn_comparison *m = &x->cmp;
        fprintf(f, "%s\n    {\"confirmation\": %lld, \"trial\": %lld, \"config\": ", i ? "," : "", x->id,
                r->cands[i].trial);
        fattn_json_string(f, r->cands[i].key);
        fputs(", \"verdict\": ", f);
        fattn_json_string(f, x->verdict);
        if (x->compared) {
            fprintf(f,
                    ", \"median_us\": %.6g, \"ci_us\": [%.6g, %.6g], \"p10_us\": %.6g, \"p90_us\": %.6g, "
                    "\"base_median_us\": %.6g, \"base_ci_us\": [%.6g, %.6g], \"base_p90_us\": %.6g, "
                    "\"speedup\": %.6g, \"speedup_ci\": [%.6g, %.6g], \"mwu_u\": %.6g, \"mwu_p\": %.6g, "
                    "\"cliffs_delta\": %.6g, \"significant\": %s, \"p90_ok\": %s, \"success\": %s",
                    m->cand_median, m->cand_lo, m->cand_hi, m->cand_p10, m->cand_p90, m->base_median, m->base_lo,
                    m->base_hi, m->base_p90, m->speedup, m->speedup_lo, m->speedup_hi, m->mwu.u, m->mwu.p, m->delta,
                    m->significant ? "true" : "false", m->p90_ok ? "true" : "false", m->success ? "true" : "false");
        } else {
            fputs(", \"detail\": ", f);
            fattn_json_string(f, x->detail);
        }
        if (x->has_prev)
            fprintf(f,
                    ", \"previous\": {\"confirmation\": %lld, \"median_us\": %.6g, \"change_pct\": %.4g, "
                    "\"regression\": %s}",
                    x->prev.id, x->prev.median_us, x->change_pct, x->regression ? "true" : "false");
        fputc('}', f);
    }
    fputs("\n  ]\n}\n", f);
}

/* The head lines: the study, the timing, the baseline, the statistics. */
static void print_head(const confirm_opts *o, const fattn_confirm_report *r, FILE *f)
{
    const fattn_confirm_baseline *b = &r->baseline;
    char shape[96];
    fattn_shape_format(&r->study.shape, shape, sizeof shape);
    fprintf(f, "confirm: study %lld, %s on %s, %s\n", r->study.id, shape, r->arch, r->device);
    fprintf(f, "timing: %s; interleaved: one sample of each kernel per round\n", r->method);
    if (b->is_cudnn)
        fprintf(f, "baseline: cudnn, %s (%s)", r->base_desc, b->why);
    else if (!strncmp(b->given, "trial:", 6))
        fprintf(f, "baseline: %s, %s (%s)", b->given, b->cand.key, b->why);
    else
        fprintf(f, "baseline: %s (%s)", b->given, b->why);
    if (r->base_ok) {
        const fattn_comparison *bc = &r->oc[0].cmp;
        if (r->oc[0].compared)
            fprintf(f, ": median %.3f us, 95%% CI %.3f-%.3f, p90 %.3f\n", bc->base_median, bc->base_lo, bc->base_hi,
                    bc->base_p90);
        else
            fprintf(f, "\n");
    } else {
        fprintf(f, ": not measured: %s\n", r->base_detail);
    }
    fprintf(f,
            "statistics: %ld bootstrap resamples (seed %ld), 95%% percentile intervals; speedup = baseline "
            "median / candidate median; success: speedup >= %.2f, CIs apart, p90 no worse\n\n",
            o->run.resamples, o->run.measure.seed, o->run.target);
}

/* Each candidate's verdict line, and its comparison with the previous. */
static void print_verdicts(const confirm_opts *o, const fattn_confirm_report *r, FILE *f)
{
    for (int i = 0; i < r->k; ++i) {
        const fattn_confirm_outcome *x = &r->oc[i];
        const fattn_trial_cand *c = &r->cands[i];
        if (!x->compared) {
            fprintf(f, "%s: not compared: %s\n", c->key, x->detail);
            continue;
        }
        fprintf(f, "%s: %s; confirmation %lld (search measured %.3f us, trial %lld); Cliff's delta %.3f (%s)\n", c->key,
                x->verdict, x->id, c->median_us, c->trial, x->cmp.delta, fattn_cliffs_magnitude(x->cmp.delta));
        if (o->run.against && !x->has_prev)
            fprintf(f, "  against previous: no earlier confirmation of this configuration on this shape and GPU\n");
        else if (o->run.against)
            fprintf(f,
                    "  against previous: confirmation %lld (%s): median %.3f -> %.3f us (%+.2f%%), CI %.3f-%.3f "
                    "-> %.3f-%.3f: %s (threshold %.3g%%)\n",
                    x->prev.id, x->prev.created_at, x->prev.median_us, x->cmp.cand_median, x->change_pct,
                    x->prev.ci_lo_us, x->prev.ci_hi_us, x->cmp.cand_lo, x->cmp.cand_hi,
                    x->regression ? "REGRESSION" : "no regression", o->run.threshold);
    }
}

int cmd_confirm(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS,
        CLI_TIMING_OPTIONS,
        CLI_LIMIT_OPTIONS,
        {"device", required_argument, NULL, OPT_DEVICE},
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
    char help[8192], measure[2048];
    int rc;

    timing_help(measure, sizeof measure);
    snprintf(help, sizeof help, "%s%s%s%s", help_head, measure, cli_limits_help, cli_common_help);
    fattn_target_init(&t);
    fattn_measure_init(&o.run.measure);
    o.run.resamples = 10000, o.run.threshold = 3.0, o.run.target = 1.10;
    if ((rc = cli_parse(argc, argv, opts, "", c, &t, handle, &o, help, NULL))
        || (rc = fattn_confirm_baseline_parse(o.run.baseline_arg, &o.run.baseline)))
        goto out;
    o.run.study = o.study, o.run.n = (int)o.n, o.run.top = (int)o.top, o.run.kernel_dir = c->kernel_dir;
    /* The GPU first: without one, nothing is opened. */
    if ((rc = fattn_gpu_arch(&t, &gpu, "confirm", NULL)) || (rc = cli_open_db(c, &s))
        || (rc = fattn_confirm_run(&o.run, &t, &gpu, s, c->quiet ? NULL : stderr, r)))
        goto out;
    if (o.format == FATTN_FMT_JSON) {
        print_json(&o, r, stdout);
    } else {
        print_head(&o, r, stdout);
        print_table(&o, r, stdout);
        printf("\n");
        print_verdicts(&o, r, stdout);
    }
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
