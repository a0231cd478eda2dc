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
#include "report/report.h"
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
    "serializes the wgmma pipeline; wgmma_unordered: warpgroups meant to take turns do not),\n"
    "each with its block, thread, address, instruction and kernel source line, and else holds\n"
    "the output to the fp64 reference\n"
    "(numerics: every element within 0.01 + 0.01|r|, and the relative L2 error within 0.004) on\n"
    "uniform inputs, then on peaky ones (Q and K times 3) unless the first already failed, as a\n"
    "search's check does on a GPU. Every verdict is stored in the database under the kernel source\n"
    "hash; search skips the configurations found defective for the same kernel source, head\n"
    "dimension and mask.\n"
    "No GPU needed.\n"
    "\n"
    "Without --config or --covering, every survivor of the static gates at --shape is checked\n"
    "(--sample N: a seeded sample of them), of every attention family the arch runs (a run each;\n"
    "--family or --space for fewer). The simulator's cost grows with B*H*S and S: use a small\n"
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
    "The host build of each configuration is cached ($FATTN_SIM_CACHE, else ~/.cache/fattn-tune/sim),\n"
    "a folder private to you (0700), each entry loaded only as it was built (size, SHA-256).\n";

typedef struct check_opts {
    fattn_check_opts run; /* the procedure's options, as parsed */
    int list;
} check_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    check_opts *o = ctx;
    fattn_check_opts *r = &o->run;
    switch (opt) {
    case OPT_CONFIG:
        if (r->nconfigs == FATTN_CHECK_MAX_CONFIGS)
            return fattn_error(FATTN_EUSAGE,
                               "--config: at most %d configurations; check more with --sample or "
                               "--filter",
                               FATTN_CHECK_MAX_CONFIGS);
        r->configs[r->nconfigs++] = arg;
        return FATTN_OK;
    case OPT_SAMPLE: return cli_long("--sample", arg, 1, 1000000, &r->sample);
    case OPT_COVERING: r->covering = 1; return FATTN_OK;
    case OPT_LIST: o->list = 1; return FATTN_OK;
    case OPT_SEED: return cli_long("--seed", arg, 0, 2147483647L, &r->seed);
    case OPT_JOBS: return cli_int("--jobs", arg, 1, 256, &r->jobs);
    case OPT_TIMEOUT: return cli_long("--timeout", arg, 1, 86400, &r->timeout_s);
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
    fattn_report_check_progress(v->done, v->njobs, v->failed, now - v->t0, stderr);
}

static void each(void *arg, size_t i, const fattn_sim_job *job, const fattn_sim_check *c)
{
    view *v = arg;
    (void)i;
    ++v->done;
    v->failed += !fattn_sim_check_passed(c);
    if (v->single)
        fattn_report_check_one(job, c, stdout);
    progress(v, 0);
}

/* The options that go together, and the targets each mode needs: the
 * configurations given (--config, their keys naming their families), else
 * every family's space (--covering, or the survivors at --shape). */
static int check_usage(const fattn_check_opts *o, fattn_target *t, fattn_targets *ts, fattn_notes *notes)
{
    if (o->covering && (t->shape_text || o->nconfigs || o->sample))
        return fattn_error(FATTN_EUSAGE, "check --covering picks its own shapes and configurations; it takes no %s",
                           t->shape_text ? "--shape"
                           : o->nconfigs ? "--config"
                                         : "--sample");
    if (o->nconfigs && (o->sample || t->filter_text || t->family_text))
        return fattn_error(FATTN_EUSAGE, "check --config checks the configurations given; it takes no %s",
                           o->sample        ? "--sample"
                           : t->filter_text ? "--filter"
                                            : "--family");
    if (o->nconfigs) {
        int rc = fattn_target_finish(t, FATTN_NEED_SHAPE | (t->arch_name ? FATTN_NEED_ARCH : 0), "check");
        /* Configurations of one family: gated under its limits, as its search gates them. */
        const fattn_family *fam = NULL;
        for (int i = 0; !rc && i < o->nconfigs; ++i) {
            fattn_config cfg;
            int was = fattn_error_set_quiet_thread(1), bad = fattn_config_parse(o->configs[i], "--config", &cfg);
            fattn_error_set_quiet_thread(was);
            if (bad || (fam && cfg.fam != fam)) /* a bad key is refused by the plan; mixed families keep the defaults */
                return rc;
            fam = cfg.fam;
        }
        if (!rc)
            fattn_target_family_limits(t, fam);
        return rc;
    }
    return fattn_targets_finish(t, o->covering ? FATTN_NEED_ARCH : FATTN_NEED_SHAPE | FATTN_NEED_ARCH, NULL, NULL,
                                "check", ts, notes);
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

/* Runs one plan (a family's, or the configurations given); with --list,
 * lists it instead. */
static int check_one(check_opts *o, const fattn_target *t, const fattn_check_plan *plan, cli_common *c,
                     fattn_store **store)
{
    fattn_check_opts *co = &o->run;
    fattn_check_report r = {0};
    int rc;
    if (o->list) {
        fattn_report_check_list(plan, stdout);
        return fflush(stdout) ? fattn_error(FATTN_EFAIL, "check --list: writing the list failed") : FATTN_OK;
    }
    view v = {.progress = !c->quiet && isatty(2) && plan->njobs > 1,
              .single = co->nconfigs > 0,
              .njobs = plan->njobs,
              .t0 = fattn_now_ms()};
    co->each = each, co->each_arg = &v;
    rc = fattn_check_run(co, t, plan, store, &r);
    if (r.run) { /* the run began: its progress line ended */
        progress(&v, 1);
        if (v.progress)
            fputc('\n', stderr);
    }
    if (!rc) {
        if (v.single && r.done)
            printf("\n");
        fattn_report_check(&r, plan, v.single, stdout);
        rc = outcome(&r, plan->njobs, c);
    }
    fattn_check_report_release(&r);
    return rc;
}

int cmd_check(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, OPT_CONFIG},   {"sample", required_argument, NULL, OPT_SAMPLE},
        {"covering", no_argument, NULL, OPT_COVERING},     {"list", no_argument, NULL, OPT_LIST},
        {"seed", required_argument, NULL, OPT_SEED},       {"jobs", required_argument, NULL, OPT_JOBS},
        {"timeout", required_argument, NULL, OPT_TIMEOUT}, {NULL, 0, NULL, 0},
    };
    check_opts o = {.run = {.seed = 1, .jobs = (int)fattn_cpu_count(), .timeout_s = 600}};
    fattn_target t;
    fattn_targets ts = {0};
    fattn_notes notes = {0};
    fattn_check_plan plans[FATTN_MAX_FAMILIES] = {0};
    fattn_store *store = NULL;
    char *cmdline = NULL;
    int rc;

    fattn_target_init(&t);
    if ((rc = cli_parse(argc, argv, &(cli_spec){opts, "", CLI_TARGET, handle, help_head}, &o, c, &t, NULL, NULL))
        || (rc = check_usage(&o.run, &t, &ts, &notes)))
        goto out;
    fattn_check_opts *co = &o.run;
    co->argv_text = cmdline = cli_command_line(c);
    co->kernel_dir = c->kernel_dir, co->db_path = c->db_path, co->log = c->quiet ? NULL : stderr;
    co->interrupted = cli_interrupted(), co->guard = cli_signals_guard;
    /* Every family's plan first (a plan may refuse the command), then a run each. */
    const int nplan = ts.n ? ts.n : 1;
    for (int k = 0; k < nplan; ++k)
        if ((rc = fattn_check_plan_make(co, ts.n ? &ts.t[k] : &t, &plans[k])))
            goto out;
    if (notes.n && !o.list && (rc = cli_open_db(c, &store))) /* the notes once the database cannot refuse */
        goto out;
    fattn_notes_print(&notes, stderr);
    /* A family that fails the simulator does not stop the others. */
    for (int k = 0; k < nplan; ++k) {
        if (k && !o.list)
            printf("\n");
        int one = check_one(&o, ts.n ? &ts.t[k] : &t, &plans[k], c, &store);
        rc = rc ? rc : one;
        if (one && (*co->interrupted || !store))
            break;
    }
out:
    for (int k = 0; k < FATTN_MAX_FAMILIES; ++k)
        fattn_check_plan_release(&plans[k]);
    free(cmdline);
    fattn_store_close(&store);
    fattn_targets_release(&ts);
    fattn_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
