/*
 * cmd_bench.c - fattn-tune bench: one configuration measured exactly as
 * search measures it (worker, numerics against the reference, CUDA-graph
 * timing), optionally beside cuDNN's fused attention on the same inputs
 * under the same timing, with the ratio. Reads the database only for
 * --trial; writes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "compile/batch.h"
#include "export/table.h"
#include "store/store.h"
#include "tune/tune.h"
#include "util/err.h"
#include "util/paths.h"

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
    fattn_gpu gpu = {0};
    fattn_kernel_src src = {0};
    fattn_compile_item item;
    fattn_evaluator *ev = NULL;
    fattn_eval_result res = {0}, base = {0};
    char *include = NULL, key[FATTN_KEY_MAX] = "", help[8192];
    fattn_study_info st = {0};
    fattn_notes notes = {0};
    int rc, first, have_src = 0;
    fattn_config cfg;

    memset(&item, 0, sizeof item);
    snprintf(help, sizeof help, "%s%s%s%s", help_head, cli_timing_help, cli_target_help, cli_common_help);
    fattn_target_init(&t);
    fattn_measure_init(&o.tm);
    if ((rc = cli_parse(argc, argv, opts, "", c, &t, handle, &o, help, &first)))
        goto out;
    t.lim.skip = o.skip;
    if (o.skip)
        t.given |= FATTN_GIVEN_SKIP;
    if (o.trial && first < argc) {
        rc = fattn_error(FATTN_EUSAGE, "bench: give a CONFIG or --trial, not both");
        goto out;
    }
    if (!o.trial && first + 1 != argc) {
        rc = first < argc ? cli_extra_operand("bench", argv[first + 1])
                          : fattn_error(FATTN_EUSAGE, "bench: expected a CONFIG (such as "
                                                      "bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1) or --trial ID");
        goto out;
    }
    if (!o.trial && (o.allow_kernel || o.allow_arch)) {
        rc = fattn_error(FATTN_EUSAGE, "bench: --allow-%s-change goes with --trial ID (a stored study's kernel)",
                         o.allow_kernel ? "kernel" : "arch");
        goto out;
    }
    if (o.trial) {
        if (t.shape_text) {
            rc = fattn_error(FATTN_EUSAGE, "bench --trial takes the shape of the trial's study; leave --shape out");
            goto out;
        }
        fattn_store *s;
        if ((rc = fattn_store_open(c->db_path ? c->db_path : FATTN_DEFAULT_DB, FATTN_DB_READ, &s)))
            goto out;
        fattn_trial_cand cand = {0};
        rc = fattn_store_trial_cand(s, o.trial, "--trial ", &cand, &st);
        snprintf(key, sizeof key, "%s", cand.key);
        fattn_store_close(&s);
        if (rc)
            goto out;
    }
    if ((rc = fattn_config_parse(o.trial ? key : argv[first], o.trial ? "--trial" : "bench", &cfg)))
        goto out;
    fattn_config_key(&cfg, key);
    if (!o.trial && (rc = fattn_target_finish(&t, FATTN_NEED_SHAPE, "bench")))
        goto out;
    if (o.baseline && (o.trial ? st.shape.causal : t.shape.causal)) {
        rc = fattn_error(FATTN_EUSAGE, "--baseline cudnn: cuDNN's fused attention takes no causal mask; expected a "
                                       "non-causal shape");
        goto out;
    }
    if ((rc = fattn_gpu_arch(&t, &gpu, "bench", NULL)))
        goto out;
    const char *dir = c->kernel_dir ? c->kernel_dir : fattn_default_kernel_dir();
    if ((rc = fattn_kernel_src_load(dir, cfg.fam->kernel_file, &src)))
        goto out;
    have_src = 1;
    /* A stored trial is re-gated and re-compiled as its study searched it. */
    if (o.trial ? (rc = fattn_study_kernel(&src, &st, o.allow_kernel, "bench --trial", &notes))
                      || (rc = fattn_study_target(&t, &st, t.arch_name, o.allow_arch, "bench --trial", &notes))
                : (rc = fattn_target_finish(&t, FATTN_NEED_ARCH, "bench")))
        goto out;
    fattn_measure_plan(&o.tm, &t, &gpu);

    /* The gates, then NVRTC: bench runs only what search would run. */
    if ((rc = fattn_gates_pass(&cfg, &t, key)))
        goto out;
    if ((rc = fattn_cuda_include(&include)))
        goto out;
    fattn_compile_ctx cc = {
        .src = &src, .cuda_include = include, .arch = t.arch, .shape = &t.shape, .lim = &t.lim, .jobs = 1};
    item.cfg = cfg;
    if ((rc = fattn_compile_pass(&cc, key, &item)))
        goto out;
    cli_study_say(&notes, c->quiet);

    if ((rc = fattn_open_gpu_evaluator(&t, &o.tm, dir, include, &ev)))
        goto out;
    uint64_t seed = fattn_numerics_seed((uint64_t)o.tm.seed, 0);
    fattn_eval_request req = {
        &cfg, key, item.entry.cubin, item.entry.cubin_size, item.entry.res.smem_dynamic, item.entry.res.threads,
        seed, NULL};
    if ((rc = fattn_evaluate(ev, &req, &res)))
        goto out;
    if (o.baseline) {
        fattn_eval_request breq = {&cfg, "baseline-cudnn", NULL, 0, 0, 0, seed, o.baseline};
        if ((rc = fattn_evaluate(ev, &breq, &base)))
            goto out;
    }

    char shape[96];
    fattn_shape_format(&t.shape, shape, sizeof shape);
    const char *names[] = {"kernel",  "status", "median_us",   "p10_us", "p90_us",
                           "TFLOP/s", "GB/s",   "max_abs_err", "rel_l2", "timing"};
    fattn_rows rows;
    fattn_rows_init(&rows, 10, names);
    add_row(&rows, key, &res);
    if (o.baseline)
        add_row(&rows, "cudnn", &base);
    double ratio = o.baseline && res.has_timing && base.has_timing ? base.timing.median_us / res.timing.median_us : 0;
    if (o.format == FATTN_FMT_JSON) {
        fattn_rows_print(stdout, &rows, FATTN_FMT_JSON, 0);
    } else {
        printf("bench: %s on %s, %s\n", shape, t.arch->name, ev->device);
        printf("timing: %s\n\n", ev->method);
        fattn_rows_print(stdout, &rows, FATTN_FMT_TABLE, 0);
        printf("\n%s: %s\n", key, res.detail);
        if (o.baseline)
            printf("cudnn (%s): %s\n", base.baseline[0] ? base.baseline : "cuDNN", base.detail);
        if (ratio > 0)
            printf("median cuDNN / median fattn-tune = %.3f (%s)\n", ratio,
                   ratio >= 1 ? "fattn-tune faster" : "cuDNN faster");
    }
    fattn_rows_release(&rows);
    if (res.status != FATTN_EVAL_OK)
        rc = fattn_error(FATTN_EFAIL, "%s was not measured: %s", key, res.detail);
    else if (o.baseline && base.status != FATTN_EVAL_OK)
        rc = fattn_error(FATTN_EFAIL, "the cuDNN baseline was not measured: %s", base.detail);
out:
    fattn_eval_result_release(&res);
    fattn_eval_result_release(&base);
    fattn_evaluator_close(&ev);
    fattn_compile_item_release(&item);
    free(include);
    if (have_src)
        fattn_kernel_src_release(&src);
    fattn_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
