/*
 * cmd_gates.c - fattn-tune gates: the static gates over a space for one shape
 * and arch (counts per reason, examples, survivors), and --explain: every
 * gate's verdict on one configuration, the post-compile gates included.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "compile/batch.h"
#include "export/table.h"
#include "util/err.h"
#include "util/paths.h"

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
    "unlaunchable, setmaxnreg_ignored, wgmma_serialized), for which it compiles that\n"
    "configuration with NVRTC. Writes nothing; no GPU needed.\n"
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

static void print_context(const fattn_target *t, const char *space_label)
{
    char shape[96];
    fattn_shape_format(&t->shape, shape, sizeof shape);
    if (space_label)
        printf("space:  %s (%zu configurations%s%s)\n", space_label, t->space.count, t->filter_text ? ", filter " : "",
               t->filter_text ? t->filter_text : "");
    printf("shape:  %s\n", shape);
    printf("arch:   %s, shared-memory limit %u B per block%s\n", t->arch->name, t->lim.smem_limit,
           t->have_gpu ? " (from the GPU)" : "");
}

static int run_counts(const fattn_target *t, const gates_opts *o)
{
    fattn_space_verdicts sv;
    const char *names[] = {"reason", "count", "example", "detail", "fix"};
    const unsigned char numeric[] = {0, 1, 0, 0, 0};
    const int *counts = sv.counts;
    fattn_rows rows;
    size_t nex = (size_t)o->examples;

    fattn_gates_space(&t->space, t->filter_text ? &t->filter : NULL, &t->shape, t->arch, &t->lim, &sv);
    if (o->list) {
        cli_print_configs(&t->space, sv.survivors, sv.nsurvivors, o->format);
        goto out;
    }
    fattn_rows_init(&rows, 5, names);
    for (int r = FATTN_R_FIRST_STATIC; r <= FATTN_R_LAST_STATIC; ++r) {
        if (!(t->space.fam->static_gates >> r & 1u)) /* a gate the family has not */
            continue;
        char count[32], key[FATTN_KEY_MAX];
        size_t shown = 0;
        snprintf(count, sizeof count, "%d", counts[r]);
        for (size_t i = 0; i < sv.n && shown < nex; ++i) {
            if (sv.v[i].reason != r)
                continue;
            fattn_config c;
            fattn_space_config(&t->space, i, &c);
            fattn_config_key(&c, key);
            const char *cells[] = {fattn_reason(r)->code, shown++ ? "" : count, key, sv.v[i].detail,
                                   fattn_reason(r)->fix};
            fattn_rows_add(&rows, cells, numeric);
        }
        if (!shown) {
            const char *cells[] = {fattn_reason(r)->code, count, NULL, NULL, NULL};
            fattn_rows_add(&rows, cells, numeric);
        }
    }
    char surv[32];
    snprintf(surv, sizeof surv, "%d", counts[FATTN_R_NONE]);
    const char *last[] = {"survivors", surv, NULL, NULL, NULL};
    fattn_rows_add(&rows, last, numeric);
    if (o->format == FATTN_FMT_TABLE) {
        print_context(t, t->space.label);
        printf("\n");
        /* The fix column is printed below the table, once per reason. */
        rows.ncols = 4;
        fattn_rows_print(stdout, &rows, o->format, 110);
        rows.ncols = 5;
        printf("\n%zu configurations: %zu rejected, %zu survive.\n", sv.considered, sv.considered - sv.nsurvivors,
               sv.nsurvivors);
        int any = 0;
        for (int r = FATTN_R_FIRST_STATIC; r <= FATTN_R_LAST_STATIC; ++r)
            if (counts[r]) {
                printf("%s  %-20s %s; fix: %s\n", any++ ? "" : "\nWhat to change:\n", fattn_reason(r)->code,
                       fattn_reason(r)->what, fattn_reason(r)->fix);
            }
    } else {
        fattn_rows_print(stdout, &rows, o->format, 0);
    }
    fattn_rows_release(&rows);
out:
    fattn_space_verdicts_release(&sv);
    return FATTN_OK;
}

static const char *verdict_word(int pass)
{
    return pass > 0 ? "pass" : pass == 0 ? "REJECT" : "-";
}

static int run_explain(cli_common *c, const fattn_target *t, const gates_opts *o)
{
    fattn_config cfg;
    fattn_verdict all[FATTN_R_COUNT];
    char key[FATTN_KEY_MAX], desc[512];
    int rc;
    if ((rc = fattn_config_parse(o->explain, "--explain", &cfg)))
        return rc;
    for (int r = 0; r < FATTN_R_COUNT; ++r) {
        all[r].reason = r;
        all[r].pass = -1;
        snprintf(all[r].detail, sizeof all[r].detail, "not evaluated");
    }
    fattn_gate_input in = {&cfg, &t->shape, t->arch, &t->lim};
    int first = fattn_gates_static(&in, NULL, all);

    fattn_kernel_src src;
    char *include = NULL;
    int compiled = 0;
    fattn_compile_item item;
    memset(&item, 0, sizeof item);
    if (!o->no_compile && all[FATTN_R_TILING].pass == 1) {
        if ((rc = fattn_kernel_src_load(c->kernel_dir, cfg.fam->kernel_file, &src)))
            return rc;
        if ((rc = fattn_cuda_include(&include))) {
            fattn_kernel_src_release(&src);
            return rc;
        }
        fattn_compile_ctx ctx = {
            .src = &src, .cuda_include = include, .arch = t->arch, .shape = &t->shape, .lim = &t->lim, .jobs = 1};
        item.cfg = cfg;
        fattn_compile_one(&ctx, &item);
        if (item.env_error) {
            rc = fattn_error(FATTN_EFAIL, "--explain: compiling failed: %s", item.env_msg);
            goto out;
        }
        fattn_gates_compiled(&in, &item.entry.res, NULL, NULL, all);
        compiled = 1;
        if (!first)
            first = item.reason;
    } else if (!o->no_compile) {
        for (int r = FATTN_R_COMPILE_ERROR; r <= FATTN_R_LAST_COMPILE; ++r)
            snprintf(all[r].detail, sizeof all[r].detail, "not evaluated: the tiling gate failed");
    } else {
        for (int r = FATTN_R_COMPILE_ERROR; r <= FATTN_R_LAST_COMPILE; ++r)
            snprintf(all[r].detail, sizeof all[r].detail, "not evaluated: --no-compile");
    }

    fattn_config_key(&cfg, key);
    fattn_config_describe(&cfg, desc, sizeof desc);
    const char *names[] = {"gate", "verdict", "detail", "fix"};
    fattn_rows rows;
    fattn_rows_init(&rows, 4, names);
    for (int r = FATTN_R_FIRST_STATIC; r <= FATTN_R_LAST_COMPILE; ++r) {
        if (r <= FATTN_R_LAST_STATIC && !(cfg.fam->static_gates >> r & 1u))
            continue;
        const char *cells[] = {fattn_reason(r)->code, verdict_word(all[r].pass), all[r].detail,
                               all[r].pass == 0 ? fattn_reason(r)->fix : ""};
        fattn_rows_add(&rows, cells, NULL);
    }
    if (o->format == FATTN_FMT_TABLE) {
        print_context(t, NULL);
        printf("config: %s\n        %s\n\n", key, desc);
        rows.ncols = 3;
        fattn_rows_print(stdout, &rows, o->format, 0);
        rows.ncols = 4;
        if (first)
            printf("\nRejected: %s (%s). Fix: %s\n", fattn_reason(first)->code, fattn_reason(first)->what,
                   fattn_reason(first)->fix);
        else
            printf("\nPasses every gate%s.\n", compiled ? "" : " evaluated");
    } else {
        fattn_rows_print(stdout, &rows, o->format, 0);
    }
    fattn_rows_release(&rows);
out:
    if (!o->no_compile && all[FATTN_R_TILING].pass == 1) {
        fattn_compile_item_release(&item);
        fattn_kernel_src_release(&src);
        free(include);
    }
    return rc;
}

int cmd_gates(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS,
        CLI_TARGET_OPTIONS,
        {"explain", required_argument, NULL, OPT_EXPLAIN},
        {"no-compile", no_argument, NULL, OPT_NO_COMPILE},
        {"examples", required_argument, NULL, OPT_EXAMPLES},
        {"list", no_argument, NULL, OPT_LIST},
        {"format", required_argument, NULL, OPT_FORMAT},
        {NULL, 0, NULL, 0},
    };
    gates_opts o = {.examples = 1, .format = FATTN_FMT_TABLE};
    fattn_target t;
    int rc;
    char help[4096];
    snprintf(help, sizeof help, "%s%s%s", help_head, cli_target_help, cli_common_help);
    fattn_target_init(&t);
    rc = cli_parse(argc, argv, opts, "", c, &t, handle, &o, help, NULL);
    if (rc)
        goto out;
    if ((rc = fattn_target_finish(
             &t, FATTN_NEED_SHAPE | FATTN_NEED_ARCH | (o.explain && !t.space_path ? 0 : FATTN_NEED_SPACE), "gates")))
        goto out;
    rc = o.explain ? run_explain(c, &t, &o) : run_counts(&t, &o);
out:
    fattn_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
