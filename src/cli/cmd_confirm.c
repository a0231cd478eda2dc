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

#include "baseline/cudnn.h"
#include "cli/cli.h"
#include "compile/batch.h"
#include "confirm/confirm.h"
#include "export/table.h"
#include "tune/tune.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/paths.h"

#define MAX_TOP 16

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
    long study, n, top, resamples;
    const char *baseline;
    int against, format, allow_kernel, allow_arch;
    double threshold, target;
    cli_timing tm;
} confirm_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    confirm_opts *o = ctx;
    if (opt == OPT_SAMPLES)
        return fattn_error(FATTN_EUSAGE, "confirm takes --n N (samples of each kernel), not --samples");
    int rc = cli_timing_option(&o->tm, opt, arg);
    if (rc)
        return rc < 0 ? rc : FATTN_OK;
    switch (opt) {
    case OPT_STUDY: return cli_long("--study", arg, 1, 2147483647L, &o->study);
    case OPT_N: return cli_long("--n", arg, 5, 10000, &o->n); /* the answer must fit one message */
    case OPT_TOP: return cli_long("--top", arg, 1, MAX_TOP, &o->top);
    case OPT_RESAMPLES: return cli_long("--resamples", arg, 10000, 10000000, &o->resamples);
    case OPT_BASELINE: o->baseline = arg; return FATTN_OK;
    case OPT_AGAINST:
        if (strcmp(arg, "previous") != 0)
            return fattn_error(FATTN_EUSAGE, "--against '%s': expected previous", arg);
        o->against = 1;
        return FATTN_OK;
    case OPT_THRESHOLD: {
        size_t len = strlen(arg);
        char buf[64];
        snprintf(buf, sizeof buf, "%.*s", (int)(len && arg[len - 1] == '%' ? len - 1 : len), arg);
        if (fattn_parse_double(buf, &o->threshold) || o->threshold < 0 || o->threshold > 1000)
            return fattn_error(FATTN_EUSAGE, "--threshold '%s': expected a percentage such as 3%% or 0.5", arg);
        return FATTN_OK;
    }
    case OPT_TARGET:
        if (fattn_parse_double(arg, &o->target) || o->target < 1 || o->target > 100)
            return fattn_error(FATTN_EUSAGE, "--target '%s': expected a speedup of at least 1, such as 1.10", arg);
        return FATTN_OK;
    case OPT_FORMAT: return fattn_format_parse(arg, "--format", &o->format);
    case OPT_ALLOW_KERNEL_CHANGE: o->allow_kernel = 1; return FATTN_OK;
    case OPT_ALLOW_ARCH_CHANGE: o->allow_arch = 1; return FATTN_OK;
    }
    return FATTN_EUSAGE;
}

/* What the baseline is. */
typedef struct baseline {
    int is_cudnn;
    fattn_confirm_cand cand; /* for a configuration */
    char given[128];         /* as stored: cudnn, config:KEY, trial:ID */
    char why[160];           /* how it was chosen */
} baseline;

/* Checks --baseline's form before anything is opened. */
static int baseline_parse(const char *arg, baseline *b, long *trial)
{
    memset(b, 0, sizeof *b);
    *trial = 0;
    if (!arg)
        return FATTN_OK;
    if (!strcmp(arg, "cudnn")) {
        b->is_cudnn = 1;
    } else if (!strncmp(arg, "config:", 7)) {
        int rc = fattn_config_parse(arg + 7, "--baseline config:KEY", &b->cand.cfg);
        if (rc)
            return rc;
        fattn_config_key(&b->cand.cfg, b->cand.key);
    } else if (!strncmp(arg, "trial:", 6)) {
        if (fattn_parse_long(arg + 6, 1, 2147483647L, trial))
            return fattn_error(FATTN_EUSAGE, "--baseline '%s': expected trial:ID with a trial id", arg);
    } else {
        return fattn_error(FATTN_EUSAGE, "--baseline '%s': expected cudnn, config:KEY or trial:ID", arg);
    }
    snprintf(b->why, sizeof b->why, "as given");
    return FATTN_OK;
}

/* Gates and compiles a configuration for the study's shape and arch. */
static int compile_cfg(const fattn_compile_ctx *cc, const cli_target *t, const char *key, const char *role,
                       fattn_compile_item *item)
{
    char who[FATTN_KEY_MAX + 16];
    snprintf(who, sizeof who, "%s %s", role, key);
    int rc = cli_gates_pass(&item->cfg, t, who);
    return rc ? rc : cli_compile_pass(cc, who, item);
}

/* The default baseline: cuDNN for non-causal shapes where it loads (the
 * fake engine of the tests has one), else the first FA2-like configuration
 * that passes the static gates. */
static void baseline_default(baseline *b, const fattn_confirm_study *st, const fattn_compile_ctx *cc)
{
    char why[320] = "";
    fattn_cudnn *c = NULL;
    if (!st->shape.causal && (getenv("FATTN_WORKER_HOOK") || !fattn_cudnn_load(&c, why, sizeof why))) {
        fattn_cudnn_free(&c, NULL);
        b->is_cudnn = 1;
        snprintf(b->given, sizeof b->given, "cudnn");
        snprintf(b->why, sizeof b->why, "the default for non-causal shapes");
        return;
    }
    const char *const *keys = fattn_confirm_fa2_keys(st->shape.head_dim);
    for (int i = 0; keys[i]; ++i) {
        fattn_verdict v;
        fattn_config cfg;
        if (fattn_config_parse(keys[i], "FA2-like", &cfg))
            continue;
        fattn_gate_input in = {&cfg, cc->shape, cc->arch, cc->lim};
        if (!fattn_gates_static(&in, &v, NULL) || !keys[i + 1]) {
            b->cand.cfg = cfg;
            fattn_config_key(&cfg, b->cand.key);
            break;
        }
    }
    snprintf(b->given, sizeof b->given, "config:%s", b->cand.key);
    snprintf(b->why, sizeof b->why, "the FlashAttention-2-like configuration of our kernel (%s)",
             st->shape.causal ? "causal shape: cuDNN's fused operation takes no mask" : "libcudnn did not load");
}

/* One candidate's outcome. */
typedef struct outcome {
    fattn_comparison cmp;
    int compared;
    const char *verdict;
    char detail[600];
    int has_prev;
    fattn_confirm_prev prev;
    double change_pct;
    int regression;
    long long id;
} outcome;

static void print_table(const confirm_opts *o, const fattn_confirm_cand *cands, int k, const outcome *oc, FILE *f)
{
    const char *names[] = {"config",     "median_us", "ci95_us",  "p90_us", "speedup",
                           "speedup_ci", "mwu_p",     "cliffs_d", "verdict"};
    const unsigned char numeric[] = {0, 1, 0, 1, 1, 0, 1, 1, 0};
    fattn_rows rows;
    fattn_rows_init(&rows, 9, names);
    for (int i = 0; i < k; ++i) {
        char c[9][64] = {{0}};
        const char *p[9];
        const fattn_comparison *m = &oc[i].cmp;
        snprintf(c[0], sizeof c[0], "%s", cands[i].key);
        if (oc[i].compared) {
            snprintf(c[1], 64, "%.3f", m->cand_median);
            snprintf(c[2], 64, "%.3f-%.3f", m->cand_lo, m->cand_hi);
            snprintf(c[3], 64, "%.3f", m->cand_p90);
            snprintf(c[4], 64, "%.3f", m->speedup);
            snprintf(c[5], 64, "%.3f-%.3f", m->speedup_lo, m->speedup_hi);
            snprintf(c[6], 64, "%.3g", m->mwu.p);
            snprintf(c[7], 64, "%.3f", m->delta);
        }
        snprintf(c[8], 64, "%s", oc[i].verdict);
        for (int j = 0; j < 9; ++j)
            p[j] = c[j][0] ? c[j] : NULL;
        fattn_rows_add(&rows, p, numeric);
    }
    fattn_rows_print(f, &rows, o->format, 0);
    fattn_rows_release(&rows);
}

static void print_json(const confirm_opts *o, const fattn_confirm_study *st, const baseline *b, const char *base_desc,
                       const fattn_confirm_cand *cands, int k, const outcome *oc, const char *device,
                       const char *method, FILE *f)
{
    fprintf(f, "{\n  \"study\": %lld,\n  \"device\": ", st->id);
    fattn_json_string(f, device);
    fputs(",\n  \"timing\": ", f);
    fattn_json_string(f, method);
    fprintf(
        f,
        ",\n  \"n\": %ld,\n  \"resamples\": %ld,\n  \"level\": 0.95,\n  \"target\": %g,\n  \"baseline\": {\"given\": ",
        o->n, o->resamples, o->target);
    fattn_json_string(f, b->given);
    fputs(", \"what\": ", f);
    fattn_json_string(f, base_desc);
    fputs(", \"chosen\": ", f);
    fattn_json_string(f, b->why);
    fputs("},\n  \"candidates\": [", f);
    for (int i = 0; i < k; ++i) {
        const fattn_comparison *m = &oc[i].cmp;
        fprintf(f, "%s\n    {\"confirmation\": %lld, \"trial\": %lld, \"config\": ", i ? "," : "", oc[i].id,
                cands[i].trial);
        fattn_json_string(f, cands[i].key);
        fputs(", \"verdict\": ", f);
        fattn_json_string(f, oc[i].verdict);
        if (oc[i].compared) {
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
            fattn_json_string(f, oc[i].detail);
        }
        if (oc[i].has_prev)
            fprintf(f,
                    ", \"previous\": {\"confirmation\": %lld, \"median_us\": %.6g, \"change_pct\": %.4g, "
                    "\"regression\": %s}",
                    oc[i].prev.id, oc[i].prev.median_us, oc[i].change_pct, oc[i].regression ? "true" : "false");
        fputc('}', f);
    }
    fputs("\n  ]\n}\n", f);
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
    confirm_opts o = {
        .n = 100, .top = 1, .resamples = 10000, .threshold = 3.0, .target = 1.10, .format = FATTN_FMT_TABLE};
    cli_target t;
    cli_gpu gpu = {0};
    fattn_store *s = NULL;
    fattn_confirm_study st;
    fattn_confirm_cand cands[MAX_TOP];
    fattn_compile_item items[MAX_TOP + 1];
    fattn_eval_request reqs[MAX_TOP + 1];
    fattn_eval_result res[MAX_TOP + 1];
    outcome oc[MAX_TOP];
    fattn_kernel_src src = {0};
    fattn_evaluator *ev = NULL;
    baseline b;
    cli_study_notes notes = {0};
    char *include = NULL, help[8192];
    int rc, k = 0, have_src = 0;
    long base_trial;

    memset(items, 0, sizeof items);
    memset(res, 0, sizeof res);
    memset(oc, 0, sizeof oc);
    char measure[2048];
    timing_help(measure, sizeof measure);
    snprintf(help, sizeof help, "%s%s%s%s", help_head, measure, cli_limits_help, cli_common_help);
    cli_target_init(&t);
    cli_timing_init(&o.tm);
    if ((rc = cli_parse(argc, argv, opts, "", c, &t, handle, &o, help, NULL)))
        goto out;
    if ((rc = baseline_parse(o.baseline, &b, &base_trial)))
        goto out;

    /* The GPU first: without one, nothing is opened. */
    if ((rc = cli_gpu_arch(&t, &gpu, "confirm", NULL)))
        goto out;
    /* The study, its candidates, the baseline. */
    if ((rc = fattn_store_open(c->db_path ? c->db_path : FATTN_DEFAULT_DB, FATTN_DB_UPDATE, &s)))
        goto out;
    if ((rc = fattn_confirm_study_load(s, o.study, &st)) || (rc = fattn_confirm_top(s, st.id, (int)o.top, cands, &k)))
        goto out;
    if (b.is_cudnn && st.shape.causal) {
        rc = fattn_error(FATTN_EUSAGE,
                         "--baseline cudnn: study %lld is causal, and cuDNN's fused attention takes no "
                         "mask; use --baseline config:KEY or leave --baseline out",
                         st.id);
        goto out;
    }
    if (base_trial && (rc = fattn_confirm_trial(s, base_trial, &st, &b.cand)))
        goto out;
    if (o.baseline)
        snprintf(b.given, sizeof b.given, "%s", o.baseline);

    /* The kernel the study measured, on the study's shape and arch under the
     * gate limits it was searched with (those given here override). */
    const char *dir = c->kernel_dir ? c->kernel_dir : fattn_default_kernel_dir();
    if ((rc = fattn_kernel_src_load(dir, st.fam->kernel_file, &src)))
        goto out;
    have_src = 1;
    if ((rc = cli_study_kernel(&src, &st, o.allow_kernel, "confirm", &notes))
        || (rc = cli_study_target(&t, &st, t.arch_name, o.allow_arch, "confirm", &notes)))
        goto out;
    o.tm.samples = o.n;
    o.tm.timing_salt = 0x636f6e6669726dull; /* fresh inputs: not the ones the search timed on */
    cli_timing_plan(&o.tm, &t, &gpu);
    if ((rc = fattn_cuda_include(&include)))
        goto out;
    fattn_compile_ctx cc = {
        .src = &src, .cuda_include = include, .arch = t.arch, .shape = &t.shape, .lim = &t.lim, .jobs = 1};
    if (!o.baseline)
        baseline_default(&b, &st, &cc);
    for (int i = 0; i < k; ++i) {
        items[i].cfg = cands[i].cfg;
        if ((rc = compile_cfg(&cc, &t, cands[i].key, "candidate", &items[i])))
            goto out;
    }
    if (!b.is_cudnn) {
        items[k].cfg = b.cand.cfg;
        if ((rc = compile_cfg(&cc, &t, b.cand.key, "baseline", &items[k])))
            goto out;
    }

    cli_study_say(&notes, c->quiet);

    /* Measure: the candidates, then the baseline, in turn. */
    if ((rc = cli_open_gpu_evaluator(&t, &o.tm, dir, include, &ev)))
        goto out;
    uint64_t seed = fattn_numerics_seed((uint64_t)o.tm.seed ^ 0x636f6e6669726dull, 0);
    for (int i = 0; i <= k; ++i) {
        int is_base = i == k;
        const fattn_compile_item *it = &items[i];
        if (is_base && b.is_cudnn)
            reqs[i] = (fattn_eval_request){&b.cand.cfg, "baseline-cudnn", NULL, 0, 0, 0, seed, "cudnn"};
        else
            reqs[i] = (fattn_eval_request){&it->cfg,
                                           is_base ? b.cand.key : cands[i].key,
                                           it->entry.cubin,
                                           it->entry.cubin_size,
                                           it->entry.res.smem_dynamic,
                                           it->entry.res.threads,
                                           seed,
                                           NULL};
    }
    if (!c->quiet)
        fprintf(stderr, "confirm: %d candidate%s and the baseline, %ld rounds interleaved on %s...\n", k,
                k == 1 ? "" : "s", o.n, ev->device);
    if ((rc = fattn_evaluate_interleaved(ev, reqs, (size_t)k + 1, (int)o.n, res)))
        goto out;

    /* The statistics, the regression check, and the record. */
    const fattn_eval_result *base = &res[k];
    char base_desc[sizeof base->baseline];
    snprintf(base_desc, sizeof base_desc, "%s",
             b.is_cudnn ? (base->baseline[0] ? base->baseline : "cuDNN") : b.cand.key);
    fattn_compare_opts copts = {(size_t)o.resamples, (uint64_t)o.tm.seed, 0.95, o.target};
    int failed = base->status != FATTN_EVAL_OK, regressions = 0;
    for (int i = 0; i < k; ++i) {
        outcome *x = &oc[i];
        if (res[i].status != FATTN_EVAL_OK || base->status != FATTN_EVAL_OK) {
            const fattn_eval_result *bad = res[i].status != FATTN_EVAL_OK ? &res[i] : base;
            x->verdict = fattn_eval_status_name(bad->status);
            snprintf(x->detail, sizeof x->detail, "%s: %s", bad == base ? "baseline" : "candidate", bad->detail);
            failed = 1;
            continue;
        }
        fattn_compare(res[i].samples, res[i].nsamples, base->samples, base->nsamples, &copts, &x->cmp);
        x->compared = 1;
        x->verdict = x->cmp.verdict;
        snprintf(x->detail, sizeof x->detail, "%s", res[i].detail);
        if (o.against) {
            int r = fattn_store_confirmation_previous(s, cands[i].key, ev->device, &st.shape, &x->prev);
            if (r < 0) {
                rc = r;
                goto out;
            }
            x->has_prev = r;
            if (r) {
                x->change_pct = (x->cmp.cand_median / x->prev.median_us - 1) * 100;
                x->regression = x->change_pct > o.threshold && x->cmp.cand_lo > x->prev.ci_hi_us;
                regressions += x->regression;
            }
        }
    }
    if ((rc = fattn_store_begin(s)))
        goto out;
    for (int i = 0; i < k; ++i) {
        fattn_confirm_rec r = {
            .study_id = st.id,
            .trial_id = cands[i].trial,
            .config_key = cands[i].key,
            .arch = t.arch->name,
            .device = ev->device,
            .kernel_hash = src.hash,
            .as_searched = !strcmp(src.hash, st.kernel_hash) && !strcmp(t.arch->name, st.arch),
            .baseline = b.given,
            .base_kind = b.is_cudnn ? "cudnn" : "config",
            .base_desc = base_desc,
            .n = (int)o.n,
            .seed = o.tm.seed,
            .resamples = (size_t)o.resamples,
            .level = 0.95,
            .target = o.target,
            .timing_method = ev->method,
            .cand = &res[i],
            .base = base,
            .cmp = oc[i].compared ? &oc[i].cmp : NULL,
            .verdict = oc[i].verdict,
            .detail = oc[i].detail,
            .previous_id = oc[i].has_prev ? oc[i].prev.id : 0,
            .change_pct = oc[i].change_pct,
            .regression = oc[i].regression,
        };
        if ((rc = fattn_store_confirmation_add(s, &r, &oc[i].id))) {
            fattn_store_rollback(s);
            goto out;
        }
    }
    if ((rc = fattn_store_commit(s)))
        goto out;

    /* The report. */
    if (o.format == FATTN_FMT_JSON) {
        print_json(&o, &st, &b, base_desc, cands, k, oc, ev->device, ev->method, stdout);
    } else {
        char shape[96];
        fattn_shape_format(&st.shape, shape, sizeof shape);
        printf("confirm: study %lld, %s on %s, %s\n", st.id, shape, t.arch->name, ev->device);
        printf("timing: %s; interleaved: one sample of each kernel per round\n", ev->method);
        if (b.is_cudnn)
            printf("baseline: cudnn, %s (%s)", base_desc, b.why);
        else if (!strncmp(b.given, "trial:", 6))
            printf("baseline: %s, %s (%s)", b.given, b.cand.key, b.why);
        else
            printf("baseline: %s (%s)", b.given, b.why);
        if (base->status == FATTN_EVAL_OK) {
            fattn_comparison bc = oc[0].cmp;
            if (oc[0].compared)
                printf(": median %.3f us, 95%% CI %.3f-%.3f, p90 %.3f\n", bc.base_median, bc.base_lo, bc.base_hi,
                       bc.base_p90);
            else
                printf("\n");
        } else {
            printf(": not measured: %s\n", base->detail);
        }
        printf("statistics: %ld bootstrap resamples (seed %ld), 95%% percentile intervals; speedup = baseline "
               "median / candidate median; success: speedup >= %.2f, CIs apart, p90 no worse\n\n",
               o.resamples, o.tm.seed, o.target);
        print_table(&o, cands, k, oc, stdout);
        printf("\n");
        for (int i = 0; i < k; ++i) {
            const outcome *x = &oc[i];
            if (!x->compared) {
                printf("%s: not compared: %s\n", cands[i].key, x->detail);
                continue;
            }
            printf("%s: %s; confirmation %lld (search measured %.3f us, trial %lld); Cliff's delta %.3f (%s)\n",
                   cands[i].key, x->verdict, x->id, cands[i].median_us, cands[i].trial, x->cmp.delta,
                   fattn_cliffs_magnitude(x->cmp.delta));
            if (o.against && !x->has_prev)
                printf("  against previous: no earlier confirmation of this configuration on this shape and GPU\n");
            else if (o.against)
                printf("  against previous: confirmation %lld (%s): median %.3f -> %.3f us (%+.2f%%), CI %.3f-%.3f "
                       "-> %.3f-%.3f: %s (threshold %.3g%%)\n",
                       x->prev.id, x->prev.created_at, x->prev.median_us, x->cmp.cand_median, x->change_pct,
                       x->prev.ci_lo_us, x->prev.ci_hi_us, x->cmp.cand_lo, x->cmp.cand_hi,
                       x->regression ? "REGRESSION" : "no regression", o.threshold);
        }
    }
    if (regressions)
        rc = fattn_error(FATTN_EREGRESS, "%d configuration%s regressed against the previous confirmation", regressions,
                         regressions == 1 ? "" : "s");
    else if (failed)
        rc = fattn_error(FATTN_EFAIL, "confirm could not measure every kernel; the table says which and why");
out:
    for (int i = 0; i <= MAX_TOP; ++i) {
        fattn_eval_result_release(&res[i]);
        fattn_compile_item_release(&items[i]);
    }
    fattn_evaluator_close(&ev);
    fattn_store_close(&s);
    free(include);
    if (have_src)
        fattn_kernel_src_release(&src);
    cli_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
