/*
 * cmd_check.c - fattn-tune check: the check procedure (study/check.h), each
 * result as it comes (a progress line; every finding of a given
 * configuration), and the summary grouped by verdict and kernel line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "compile/pool.h"
#include "export/table.h"
#include "study/check.h"
#include "util/err.h"
#include "util/misc.h"

static const char help_head[] =
    "usage: fattn-tune check --shape B,H,S,D [--causal] [--arch ARCH] [--sample N] [options]\n"
    "       fattn-tune check --config KEY [--config KEY ...] --shape B,H,S,D [--causal]\n"
    "       fattn-tune check --covering [--space FILE] --arch ARCH\n"
    "\n"
    "Runs configurations of the kernel through the simulator, on this machine's CPU: the kernel\n"
    "source (--kernel-dir) is compiled for the host with the system C++ compiler ($CXX, else c++)\n"
    "and every CUDA thread runs as a fiber with the semantics of the PTX the kernel uses. It\n"
    "reports what the GPU would fault on (misaligned, shared_out_of_bounds, global_out_of_bounds,\n"
    "input_written, invalid_operand, divergent, deadlock), what would make the result depend on\n"
    "timing (race_raw, race_war, race_waw, cp_async_unwaited, uninitialized_read, tma_unwaited,\n"
    "async_proxy_unfenced, wgmma_unfenced) or cost speed on the GPU (wgmma_early_access: ptxas\n"
    "serializes the wgmma pipeline), each with its block, thread, address, instruction and kernel\n"
    "source line, and else holds the output to the fp64 reference\n"
    "(numerics: every element within 0.01 + 0.01|r|, and the relative L2 error within 0.004) on\n"
    "uniform inputs, then on peaky ones (Q and K times 3) unless the first already failed, as a\n"
    "search's check does on a GPU. Every verdict is stored in the database under the kernel source\n"
    "hash; search skips the configurations found defective for the same kernel source, head\n"
    "dimension and mask.\n"
    "No GPU needed.\n"
    "\n"
    "Without --config or --covering, every survivor of the static gates at --shape is checked\n"
    "(--sample N: a seeded sample of them). The simulator's cost grows with B*H*S and S: use a small\n"
    "shape with tails (S not a multiple of the tiles), such as 1,2,130,64.\n"
    "\n"
    "  --config KEY         check this configuration (repeatable, up to 64): a key such as\n"
    "                       bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1, or NAME=V,...; the static gates are\n"
    "                       reported but not applied, so a layout they reject can be seen failing\n"
    "  --sample N           check a seeded sample of N gate survivors instead of all\n"
    "  --covering           the covering sample CI checks: configurations of the space, with shapes,\n"
    "                       such that every value of every parameter meets every value of every\n"
    "                       other, of HEAD_DIM (64, 128), the mask, S (1, 33, 130, 257) and B,H\n"
    "                       (1,2 and 2,1); takes no --shape\n"
    "  --list               print the cases instead of checking them, one a line: KEY B,H,S,D and\n"
    "                       'causal' where masked (a GPU run of the same cases reads this); writes\n"
    "                       nothing\n"
    "  --seed S             the inputs' seed, and --sample's (default 1)\n"
    "  --jobs N             simulator processes at a time (default: the number of processors)\n"
    "  --timeout SECONDS    per configuration; past it the check is killed (sim_timeout) (default 600)\n"
    "\n"
    "Exit status 0 when every configuration passes, 1 when any does not (or on an error).\n"
    "The host build of each configuration is cached ($FATTN_SIM_CACHE, else ~/.cache/fattn-tune/sim).\n";

typedef struct check_opts {
    const char *configs[FATTN_CHECK_MAX_CONFIGS];
    int nconfigs;
    long sample, seed, jobs, timeout_s;
    int has_sample, covering, list;
} check_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    check_opts *o = ctx;
    switch (opt) {
    case OPT_CONFIG:
        if (o->nconfigs == FATTN_CHECK_MAX_CONFIGS)
            return fattn_error(FATTN_EUSAGE,
                               "--config: at most %d configurations; check more with --sample or "
                               "--filter",
                               FATTN_CHECK_MAX_CONFIGS);
        o->configs[o->nconfigs++] = arg;
        return FATTN_OK;
    case OPT_SAMPLE: o->has_sample = 1; return cli_long("--sample", arg, 1, 1000000, &o->sample);
    case OPT_COVERING: o->covering = 1; return FATTN_OK;
    case OPT_LIST: o->list = 1; return FATTN_OK;
    case OPT_SEED: return cli_long("--seed", arg, 0, 2147483647L, &o->seed);
    case OPT_JOBS: return cli_long("--jobs", arg, 1, 256, &o->jobs);
    case OPT_TIMEOUT: return cli_long("--timeout", arg, 1, 86400, &o->timeout_s);
    }
    return FATTN_EUSAGE;
}

/* The progress line and, for --config, each configuration's lines, as
 * results come. */
typedef struct view {
    int progress, single;
    size_t njobs, done, failed;
    double t0, last_print;
} view;

static void progress(view *v, int force)
{
    double now = fattn_now_ms();
    if (!v->progress || (!force && now - v->last_print < 250))
        return;
    v->last_print = now;
    double rate = v->done / ((now - v->t0) / 1000.0 + 1e-9);
    double eta = rate > 0 ? (double)(v->njobs - v->done) / rate : 0;
    fprintf(stderr, "\r  checked %zu/%zu  failed %zu  %.2f/s  ETA %dm%02ds   ", v->done, v->njobs, v->failed, rate,
            (int)eta / 60, (int)eta % 60);
    fflush(stderr);
}

/* Every finding of one configuration (--config): the report, not only the
 * verdict's. */
static void print_findings(const fattn_sim_check *c)
{
    if (!c->ran || c->rep.nfindings < 2)
        return;
    printf("  findings (%d%s):\n", c->rep.nfindings, c->rep.findings_dropped ? " and more" : "");
    for (int i = 0; i < c->rep.nfindings; ++i) {
        const fattn_sim_finding *f = &c->rep.findings[i];
        printf("    %s", f->detail);
        if (f->count > 1)
            printf(" (%llu times)", (unsigned long long)f->count);
        printf("\n");
    }
}

static void each(void *arg, size_t i, const fattn_sim_job *job, const fattn_sim_check *c)
{
    view *v = arg;
    (void)i;
    ++v->done;
    v->failed += !fattn_sim_check_passed(c);
    if (v->single) {
        char key[FATTN_KEY_MAX], shape[96];
        fattn_config_key(&job->cfg, key);
        fattn_shape_format(&job->shape, shape, sizeof shape);
        printf("%s at %s: %s\n  %s\n", key, shape, c->verdict, c->detail);
        if (c->fix[0])
            printf("  fix: %s\n", c->fix);
        print_findings(c);
        if (c->ran)
            printf("  host build %s, simulated in %.2f s\n", c->cache_hit ? "from the cache" : "compiled",
                   c->run_ms / 1000.0);
    }
    progress(v, 0);
}

/* Failures grouped by verdict and kernel lines, each with an example. */
static void summary(const fattn_check_report *r, const fattn_check_plan *p, int single)
{
    printf("sim run %lld: %s, kernel %.12s\n", r->run, p->what, r->kernel_hash);
    printf("%zu configuration%s checked in %.1f s (%zu host builds, %zu from the cache)\n", r->done,
           r->done == 1 ? "" : "s", r->seconds, r->builds, r->cache_hits);
    const char *names[] = {"verdict", "count"};
    const unsigned char numeric[] = {0, 1};
    fattn_rows rows;
    fattn_rows_init(&rows, 2, names);
    size_t n = p->njobs;
    unsigned char *seen = calloc(n ? n : 1, 1);
    for (size_t i = 0; seen && i < n; ++i) {
        if (!r->out[i].done || seen[i])
            continue;
        size_t count = 0;
        for (size_t j = i; j < n; ++j)
            if (r->out[j].done && !strcmp(r->out[j].verdict, r->out[i].verdict))
                ++count, seen[j] = 1;
        char cnt[32];
        snprintf(cnt, sizeof cnt, "%zu", count);
        const char *cells[] = {r->out[i].verdict, cnt};
        fattn_rows_add(&rows, cells, numeric);
    }
    printf("\n");
    fattn_rows_print(stdout, &rows, FATTN_FMT_TABLE, 0);
    fattn_rows_release(&rows);
    if (seen)
        memset(seen, 0, n);
    for (size_t i = 0; seen && !single && i < n; ++i) {
        const fattn_check_outcome *o = &r->out[i];
        if (!o->done || seen[i] || !strcmp(o->verdict, FATTN_SIMV_OK))
            continue;
        size_t count = 0;
        for (size_t j = i; j < n; ++j) {
            const fattn_check_outcome *q = &r->out[j];
            if (q->done && !strcmp(q->verdict, o->verdict) && q->line == o->line && q->other_line == o->other_line)
                ++count, seen[j] = 1;
        }
        char key[FATTN_KEY_MAX], shape[96];
        fattn_config_key(&p->jobs[i].cfg, key);
        fattn_shape_format(&p->jobs[i].shape, shape, sizeof shape);
        printf("\n%s", o->verdict);
        if (o->line > 0)
            printf(" at %s:%d", o->file, o->line);
        if (o->other_line > 0)
            printf(" against line %d", o->other_line);
        printf(": %zu configuration%s, e.g. %s at %s\n  %s\n", count, count == 1 ? "" : "s", key, shape, o->detail);
        if (o->fix[0])
            printf("  fix: %s\n", o->fix);
    }
    free(seen);
}

/* The options that go together, and the target each mode needs. */
static int check_usage(const check_opts *o, fattn_target *t)
{
    if (o->covering && (t->shape_text || o->nconfigs || o->has_sample))
        return fattn_error(FATTN_EUSAGE, "check --covering picks its own shapes and configurations; it takes no %s",
                           t->shape_text ? "--shape"
                           : o->nconfigs ? "--config"
                                         : "--sample");
    if (o->nconfigs && (o->has_sample || t->filter_text))
        return fattn_error(FATTN_EUSAGE, "check --config checks the configurations given; it takes no %s",
                           o->has_sample ? "--sample" : "--filter");
    int needs = o->covering   ? FATTN_NEED_ARCH | FATTN_NEED_SPACE
                : o->nconfigs ? FATTN_NEED_SHAPE | (t->arch_name ? FATTN_NEED_ARCH : 0)
                              : FATTN_NEED_SHAPE | FATTN_NEED_ARCH | FATTN_NEED_SPACE;
    return fattn_target_finish(t, needs, "check");
}

/* --list: the cases, one a line, nothing run or written. */
static int print_list(const fattn_check_plan *p)
{
    for (size_t i = 0; i < p->njobs; ++i) {
        char key[FATTN_KEY_MAX];
        const fattn_shape *js = &p->jobs[i].shape;
        fattn_config_key(&p->jobs[i].cfg, key);
        printf("%s %d,%d,%d,%d%s\n", key, js->batch, js->heads, js->seqlen, js->head_dim, js->causal ? " causal" : "");
    }
    return fflush(stdout) ? fattn_error(FATTN_EFAIL, "check --list: writing the list failed") : FATTN_OK;
}

/* Exit status beyond the summary: interrupted, or a configuration failed. */
static int outcome(const fattn_check_report *r, size_t njobs, const cli_common *c)
{
    char buf[4200];
    if (r->interrupted)
        return fattn_error(FATTN_EFAIL,
                           "interrupted after %zu of %zu checks; sim run %lld keeps every verdict recorded, the "
                           "simulator cache every host build: run the same command again to finish",
                           r->done, njobs, r->run);
    if (r->failed)
        return fattn_error(FATTN_EFAIL,
                           "%zu of %zu configuration%s failed the simulator (%zu defective: search skips them for "
                           "this kernel source); every verdict: fattn-tune query sim --run %lld%s",
                           r->failed, njobs, njobs == 1 ? "" : "s", r->defects, r->run,
                           cli_db_option(c, buf, sizeof buf));
    return FATTN_OK;
}

int cmd_check(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS,
        CLI_TARGET_OPTIONS,
        {"config", required_argument, NULL, OPT_CONFIG},
        {"sample", required_argument, NULL, OPT_SAMPLE},
        {"covering", no_argument, NULL, OPT_COVERING},
        {"list", no_argument, NULL, OPT_LIST},
        {"seed", required_argument, NULL, OPT_SEED},
        {"jobs", required_argument, NULL, OPT_JOBS},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {NULL, 0, NULL, 0},
    };
    check_opts o = {.seed = 1, .jobs = fattn_cpu_count(), .timeout_s = 600};
    fattn_target t;
    fattn_store *store = NULL;
    fattn_check_plan plan = {0};
    fattn_check_report r = {0};
    char *cmdline = NULL, help[8192];
    int rc;

    snprintf(help, sizeof help, "%s%s%s", help_head, cli_target_help, cli_common_help);
    fattn_target_init(&t);
    if ((rc = cli_parse(argc, argv, opts, "", c, &t, handle, &o, help, NULL)) || (rc = check_usage(&o, &t)))
        goto out;
    cmdline = cli_command_line(c);
    fattn_check_opts co = {.nconfigs = o.nconfigs,
                           .covering = o.covering,
                           .sample = o.has_sample ? o.sample : 0,
                           .seed = o.seed,
                           .jobs = (int)o.jobs,
                           .timeout_s = o.timeout_s,
                           .kernel_dir = c->kernel_dir,
                           .db_path = c->db_path,
                           .argv_text = cmdline,
                           .interrupted = cli_interrupted(),
                           .guard = cli_signals_guard,
                           .log = c->quiet ? NULL : stderr};
    memcpy(co.configs, o.configs, sizeof co.configs);
    if ((rc = fattn_check_plan_make(&co, &t, &plan)))
        goto out;
    if (o.list) {
        rc = print_list(&plan);
        goto out;
    }
    view v = {.progress = !c->quiet && isatty(2) && plan.njobs > 1,
              .single = o.nconfigs > 0,
              .njobs = plan.njobs,
              .t0 = fattn_now_ms()};
    co.each = each, co.each_arg = &v;
    rc = fattn_check_run(&co, &t, &plan, &store, &r);
    if (r.run) { /* the run began: its progress line ended */
        progress(&v, 1);
        if (v.progress)
            fputc('\n', stderr);
    }
    if (rc)
        goto out;
    if (v.single && r.done)
        printf("\n");
    summary(&r, &plan, v.single);
    rc = outcome(&r, plan.njobs, c);
out:
    fattn_check_report_release(&r);
    fattn_check_plan_release(&plan);
    free(cmdline);
    fattn_store_close(&store);
    fattn_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
