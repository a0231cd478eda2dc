/*
 * cmd_bench.c - fattn-tune bench: the bench procedure (bench/bench.h) and
 * its table, with the ratio to cuDNN. Reads the database only for --trial;
 * writes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "cli/cli.h"
#include "export/table.h"
#include "util/err.h"

static const char help_head[] =
    "usage: fattn-tune bench CONFIG --shape B,H,S,D [--causal] [--baseline cudnn] [options]\n"
    "       fattn-tune bench --trial ID [--baseline cudnn] [options]\n"
    "\n"
    "Measures one configuration the way search does: compiled with NVRTC, run in a worker process,\n"
    "checked against the reference kernel on fresh seeded inputs, timed by CUDA events around a\n"
    "CUDA graph of back-to-back launches (the raw per-launch time, launch cost included). With\n"
    "--baseline cudnn, cuDNN's fused SDPA forward runs on the same inputs under the same timing and\n"
    "the ratio of the medians is printed (non-causal shapes: the fused operation has no mask).\n"
    "Needs a GPU. CONFIG is a key (bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1) or NAME=VALUE,...\n"
    "\n"
    "  --trial ID           a stored trial: its configuration, and its study's shape, arch, gate limits\n"
    "                       and kernel source, as confirm takes them (see fattn-tune confirm --help)\n"
    "  --allow-kernel-change, --allow-arch-change  with --trial: as confirm's\n"
    "  --baseline cudnn     also measure cuDNN's fused attention\n"
    "  --format FMT         table (default) or json\n"
    "  --unsafe-skip-gate G test only: run even if gate G rejects the configuration; repeatable\n";

typedef struct bench_opts {
    long trial;
    const char *baseline;
    int format, allow_kernel, allow_arch;
    fattn_measure tm;
    unsigned skip;
} bench_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    bench_opts *o = ctx;
    int rc = cli_timing_option(&o->tm, opt, arg);
    if (rc)
        return rc < 0 ? rc : FATTN_OK;
    switch (opt) {
    case OPT_TRIAL: return cli_long("--trial", arg, 1, 2147483647L, &o->trial);
    case OPT_BASELINE:
        if (strcmp(arg, "cudnn") != 0)
            return fattn_error(FATTN_EUSAGE, "--baseline '%s': expected cudnn", arg);
        o->baseline = arg;
        return FATTN_OK;
    case OPT_FORMAT: return fattn_format_parse(arg, "--format", &o->format);
    case OPT_SKIP_GATE: return cli_skip_gate_option(&o->skip, arg);
    case OPT_ALLOW_KERNEL_CHANGE: o->allow_kernel = 1; return FATTN_OK;
    case OPT_ALLOW_ARCH_CHANGE: o->allow_arch = 1; return FATTN_OK;
    }
    return FATTN_EUSAGE;
}

static void add_row(fattn_rows *rows, const char *name, const fattn_eval_result *r)
{
    char cells[10][64];
    const char *ptrs[10];
    const unsigned char numeric[10] = {0, 0, 1, 1, 1, 1, 1, 1, 1, 0};
    snprintf(cells[0], sizeof cells[0], "%s", name);
    snprintf(cells[1], sizeof cells[1], "%s", fattn_eval_status_name(r->status));
    for (int i = 2; i < 10; ++i)
        cells[i][0] = '\0';
    if (r->has_timing) {
        snprintf(cells[2], sizeof cells[2], "%.3f", r->timing.median_us);
        snprintf(cells[3], sizeof cells[3], "%.3f", r->timing.p10_us);
        snprintf(cells[4], sizeof cells[4], "%.3f", r->timing.p90_us);
        snprintf(cells[5], sizeof cells[5], "%.1f", r->timing.tflops);
        snprintf(cells[6], sizeof cells[6], "%.1f", r->timing.gbps);
        snprintf(cells[9], sizeof cells[9], "%s", r->timing_kind);
    }
    if (r->has_numerics) {
        snprintf(cells[7], sizeof cells[7], "%.3g", r->num.max_abs_err);
        snprintf(cells[8], sizeof cells[8], "%.2g", r->num.rel_l2);
    }
    for (int i = 0; i < 10; ++i)
        ptrs[i] = cells[i][0] || i < 2 ? cells[i] : NULL;
    fattn_rows_add(rows, ptrs, numeric);
}

/* The table (or JSON) of the kernel and the baseline, and the ratio. */
static void print_report(const bench_opts *o, const fattn_bench_report *r, FILE *f)
{
    char shape[96];
    fattn_shape_format(&r->shape, shape, sizeof shape);
    const char *names[] = {"kernel",  "status", "median_us",   "p10_us", "p90_us",
                           "TFLOP/s", "GB/s",   "max_abs_err", "rel_l2", "timing"};
    fattn_rows rows;
    fattn_rows_init(&rows, 10, names);
    add_row(&rows, r->key, &r->res);
    if (o->baseline)
        add_row(&rows, "cudnn", &r->base);
    double ratio =
        o->baseline && r->res.has_timing && r->base.has_timing ? r->base.timing.median_us / r->res.timing.median_us : 0;
    if (o->format == FATTN_FMT_JSON) {
        fattn_rows_print(f, &rows, FATTN_FMT_JSON, 0);
    } else {
        fprintf(f, "bench: %s on %s, %s\n", shape, r->arch, r->device);
        fprintf(f, "timing: %s\n\n", r->method);
        fattn_rows_print(f, &rows, FATTN_FMT_TABLE, 0);
        fprintf(f, "\n%s: %s\n", r->key, r->res.detail);
        if (o->baseline)
            fprintf(f, "cudnn (%s): %s\n", r->base.baseline[0] ? r->base.baseline : "cuDNN", r->base.detail);
        if (ratio > 0)
            fprintf(f, "median cuDNN / median fattn-tune = %.3f (%s)\n", ratio,
                    ratio >= 1 ? "fattn-tune faster" : "cuDNN faster");
    }
    fattn_rows_release(&rows);
}

/* The operands and options that go together, before anything is opened. */
static int check_usage(const bench_opts *o, const fattn_target *t, int first, int argc, char **argv)
{
    if (o->trial && first < argc)
        return fattn_error(FATTN_EUSAGE, "bench: give a CONFIG or --trial, not both");
    if (!o->trial && first + 1 != argc)
        return first < argc ? cli_extra_operand("bench", argv[first + 1])
                            : fattn_error(FATTN_EUSAGE, "bench: expected a CONFIG (such as "
                                                        "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1) or --trial ID");
    if (!o->trial && (o->allow_kernel || o->allow_arch))
        return fattn_error(FATTN_EUSAGE, "bench: --allow-%s-change goes with --trial ID (a stored study's kernel)",
                           o->allow_kernel ? "kernel" : "arch");
    if (o->trial && t->shape_text)
        return fattn_error(FATTN_EUSAGE, "bench --trial takes the shape of the trial's study; leave --shape out");
    return FATTN_OK;
}

int cmd_bench(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS,
        CLI_TARGET_OPTIONS,
        CLI_TIMING_OPTIONS,
        {"trial", required_argument, NULL, OPT_TRIAL},
        {"baseline", required_argument, NULL, OPT_BASELINE},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"unsafe-skip-gate", required_argument, NULL, OPT_SKIP_GATE},
        {"allow-kernel-change", no_argument, NULL, OPT_ALLOW_KERNEL_CHANGE},
        {"allow-arch-change", no_argument, NULL, OPT_ALLOW_ARCH_CHANGE},
        {NULL, 0, NULL, 0},
    };
    bench_opts o = {.format = FATTN_FMT_TABLE};
    fattn_target t;
    fattn_store *s = NULL;
    fattn_bench_report r = {0};
    char help[8192];
    int rc, first;

    snprintf(help, sizeof help, "%s%s%s%s", help_head, cli_timing_help, cli_target_help, cli_common_help);
    fattn_target_init(&t);
    fattn_measure_init(&o.tm);
    if ((rc = cli_parse(argc, argv, opts, "", c, &t, handle, &o, help, &first))
        || (rc = check_usage(&o, &t, first, argc, argv)))
        goto out;
    t.lim.skip = o.skip;
    if (o.skip)
        t.given |= FATTN_GIVEN_SKIP;
    if (o.trial && (rc = cli_open_db(c, &s)))
        goto out;
    fattn_bench_opts bo = {.config = o.trial ? NULL : argv[first],
                           .trial = o.trial,
                           .baseline_cudnn = o.baseline != NULL,
                           .allow_kernel = o.allow_kernel,
                           .allow_arch = o.allow_arch,
                           .kernel_dir = c->kernel_dir,
                           .measure = o.tm};
    if ((rc = fattn_bench_run(&bo, &t, s, c->quiet ? NULL : stderr, &r)))
        goto out;
    print_report(&o, &r, stdout);
    if (r.res.status != FATTN_EVAL_OK)
        rc = fattn_error(FATTN_EFAIL, "%s was not measured: %s", r.key, r.res.detail);
    else if (o.baseline && r.base.status != FATTN_EVAL_OK)
        rc = fattn_error(FATTN_EFAIL, "the cuDNN baseline was not measured: %s", r.base.detail);
out:
    fattn_bench_report_release(&r);
    fattn_store_close(&s);
    fattn_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
