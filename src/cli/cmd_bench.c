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
#include "report/report.h"
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
    fattn_bench_opts run; /* the procedure's options, as parsed */
    int format;
    unsigned skip;
} bench_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    bench_opts *o = ctx;
    switch (opt) {
    case OPT_TRIAL: return cli_id("--trial", arg, &o->run.trial);
    case OPT_BASELINE:
        if (strcmp(arg, "cudnn") != 0)
            return fattn_error(FATTN_EUSAGE, "--baseline '%s': expected cudnn", arg);
        o->run.baseline_cudnn = 1;
        return FATTN_OK;
    case OPT_FORMAT: return fattn_format_parse(arg, "--format", &o->format);
    case OPT_SKIP_GATE: return cli_skip_gate_option(&o->skip, arg);
    case OPT_ALLOW_KERNEL_CHANGE: o->run.allow_kernel = 1; return FATTN_OK;
    case OPT_ALLOW_ARCH_CHANGE: o->run.allow_arch = 1; return FATTN_OK;
    }
    return FATTN_EUSAGE;
}

/* The operands and options that go together, before anything is opened. */
static int check_usage(const fattn_bench_opts *o, const fattn_target *t, int first, int argc, char **argv)
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
    int rc, first;

    fattn_target_init(&t);
    fattn_measure_init(&o.run.measure);
    if ((rc = cli_parse(argc, argv, &(cli_spec){opts, "", CLI_TARGET | CLI_MEASURE, handle, help_head}, &o, c, &t,
                        &o.run.measure, &first))
        || (rc = check_usage(&o.run, &t, first, argc, argv)))
        goto out;
    t.lim.skip = o.skip;
    if (o.skip)
        t.given |= FATTN_GIVEN_SKIP;
    if (o.run.trial && (rc = cli_open_db(c, &s)))
        goto out;
    o.run.config = o.run.trial ? NULL : argv[first], o.run.kernel_dir = c->kernel_dir;
    if ((rc = fattn_bench_run(&o.run, &t, s, c->quiet ? NULL : stderr, &r)))
        goto out;
    fattn_report_bench(&r, o.run.baseline_cudnn, o.format, stdout);
    if (r.res.status != FATTN_EVAL_OK)
        rc = fattn_error(FATTN_EFAIL, "%s was not measured: %s", r.key, r.res.detail);
    else if (o.run.baseline_cudnn && r.base.status != FATTN_EVAL_OK)
        rc = fattn_error(FATTN_EFAIL, "the cuDNN baseline was not measured: %s", r.base.detail);
out:
    fattn_bench_report_release(&r);
    fattn_store_close(&s);
    fattn_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
