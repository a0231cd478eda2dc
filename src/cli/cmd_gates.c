/*
 * cmd_gates.c - fattn-tune gates: the static gates over a space for one shape
 * and arch (counts per reason, examples, survivors), and --explain: every
 * gate's verdict on one configuration, the post-compile gates included.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "export/table.h"
#include "report/report.h"
#include "study/explain.h"
#include "util/err.h"

static const char help_head[] =
    "usage: fattn-tune gates --shape B,H,S,D [--arch ARCH] [options]\n"
    "       fattn-tune gates --shape B,H,S,D [--arch ARCH] --explain CONFIG [--no-compile]\n"
    "\n"
    "Runs the static gates (device_memory, tiling, misaligned_cp_async, misaligned_ldmatrix,\n"
    "smem_overflow, bank_conflicts, coalescing; another family than mma runs its own, such as\n"
    "wgmma's device_memory, tiling, smem_overflow, register_budget) over every configuration of\n"
    "the space, in that order, and prints how many each rejects with an example, its numbers and\n"
    "the fix, and the survivors. --explain shows every gate's verdict on one configuration,\n"
    "including the post-compile gates (compile_error, smem_mismatch, spills, low_occupancy,\n"
    "unlaunchable, setmaxnreg_ignored, wgmma_serialized, setmaxnreg_pool), for which it\n"
    "compiles that configuration with NVRTC. Writes nothing; no GPU needed. Without --space or\n"
    "--family, every attention family the arch runs, each its default space and limits, in turn\n"
    "(a JSON array of them; CSV takes one family).\n"
    "\n"
    "  --explain CONFIG     a config key (bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1) or NAME=VALUE,...\n"
    "  --no-compile         with --explain: static gates only\n"
    "  --examples N         examples per reason (default 1)\n"
    "  --list               list the survivors instead of the counts\n"
    "  --format FMT         table (default), csv or json\n";

typedef struct gates_opts {
    const char *explain;
    int no_compile, list, format;
    long examples;
} gates_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    gates_opts *o = ctx;
    switch (opt) {
    case OPT_EXPLAIN: o->explain = arg; return FATTN_OK;
    case OPT_NO_COMPILE: o->no_compile = 1; return FATTN_OK;
    case OPT_LIST: o->list = 1; return FATTN_OK;
    case OPT_EXAMPLES: return cli_long("--examples", arg, 0, 100, &o->examples);
    case OPT_FORMAT: return fattn_format_parse(arg, "--format", &o->format);
    }
    return FATTN_EUSAGE;
}

static int run_counts(cli_common *c, fattn_target *t, const gates_opts *o)
{
    fattn_space_verdicts sv;
    fattn_target_hardware(t, c->kernel_dir);
    fattn_gates_space(&t->space, t->filter_text ? &t->filter : NULL, &t->shape, t->arch, &t->lim, &sv);
    if (o->list)
        fattn_report_configs(&t->space, sv.survivors, sv.nsurvivors, o->format, stdout);
    else
        fattn_report_gates(t, &sv, (size_t)o->examples, o->format, stdout);
    fattn_space_verdicts_release(&sv);
    return FATTN_OK;
}

static int run_explain(cli_common *c, fattn_target *t, const gates_opts *o)
{
    fattn_config cfg;
    fattn_explanation x;
    int rc;
    if ((rc = fattn_config_parse(o->explain, "--explain", &cfg)))
        return rc;
    fattn_target_family_limits(t, cfg.fam); /* as a search of its family gates it */
    if ((rc = fattn_explain(t, &cfg, !o->no_compile, c->kernel_dir, &x)))
        return rc;
    fattn_report_explain(t, &cfg, &x, o->format, stdout);
    return FATTN_OK;
}

int cmd_gates(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        {"explain", required_argument, NULL, OPT_EXPLAIN},   {"no-compile", no_argument, NULL, OPT_NO_COMPILE},
        {"examples", required_argument, NULL, OPT_EXAMPLES}, {"list", no_argument, NULL, OPT_LIST},
        {"format", required_argument, NULL, OPT_FORMAT},     {NULL, 0, NULL, 0},
    };
    gates_opts o = {.examples = 1, .format = FATTN_FMT_TABLE};
    fattn_target t;
    fattn_targets ts = {0};
    fattn_notes notes = {0};
    int rc;
    fattn_target_init(&t);
    rc = cli_parse(argc, argv, &(cli_spec){opts, "", CLI_TARGET, handle, help_head}, &o, c, &t, NULL, NULL);
    if (rc)
        goto out;
    if (o.explain) {
        if (!(rc = fattn_target_finish(&t, FATTN_NEED_SHAPE | FATTN_NEED_ARCH | (t.space_path ? FATTN_NEED_SPACE : 0),
                                       "gates")))
            rc = run_explain(c, &t, &o);
        goto out;
    }
    if ((rc = fattn_targets_finish(&t, FATTN_NEED_SHAPE | FATTN_NEED_ARCH, NULL, NULL, "gates", &ts, &notes))
        || (rc = cli_families_format(&ts, o.format, "gates")))
        goto out;
    fattn_notes_print(&notes, stderr);
    cli_families_begin(&ts, o.format, stdout);
    for (int k = 0; k < ts.n && !rc; ++k) {
        cli_families_next(&ts, k, o.format, stdout);
        rc = run_counts(c, &ts.t[k], &o);
    }
    cli_families_end(&ts, o.format, stdout);
out:
    fattn_targets_release(&ts);
    fattn_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
