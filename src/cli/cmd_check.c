/*
 * cmd_check.c - fattn-tune check: configurations of the kernel through the
 * simulator (src/sim/) on this machine's CPU, before any GPU time: one or
 * more given configurations, a seeded sample of the gate survivors, every
 * survivor, or the pairwise covering sample CI runs. Each verdict is stored
 * (sim_runs, sim_checks) under the kernel source hash; search skips what
 * failed for the same kernel source.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "compile/pool.h"
#include "export/table.h"
#include "sim/kernel.h"
#include "sim/pool.h"
#include "sim/sample.h"
#include "store/store.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/paths.h"

#define MAX_CONFIGS 64

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
    const char *configs[MAX_CONFIGS];
    int nconfigs;
    long sample, seed, jobs, timeout_s;
    int has_sample, covering, list;
} check_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    check_opts *o = ctx;
    switch (opt) {
    case OPT_CONFIG:
        if (o->nconfigs == MAX_CONFIGS)
            return fattn_error(FATTN_EUSAGE,
                               "--config: at most %d configurations; check more with --sample or "
                               "--filter",
                               MAX_CONFIGS);
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

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* What the summary keeps of each result. */
typedef struct outcome {
    int done;
    char verdict[32];
    char file[160]; /* basename */
    int line, other_line;
    char detail[512];
    char fix[200];
} outcome;

typedef struct check_state {
    fattn_store *store;
    long long run;
    const char *kernel_hash;
    const fattn_sim_job *jobs;
    size_t njobs, done, failed, defects, builds, cache_hits;
    outcome *out;
    int progress, single;
    double t0, last_print;
} check_state;

static void progress(check_state *s, int force)
{
    double now = fattn_now_ms();
    if (!s->progress || (!force && now - s->last_print < 250))
        return;
    s->last_print = now;
    double rate = s->done / ((now - s->t0) / 1000.0 + 1e-9);
    double eta = rate > 0 ? (double)(s->njobs - s->done) / rate : 0;
    fprintf(stderr, "\r  checked %zu/%zu  failed %zu  %.2f/s  ETA %dm%02ds   ", s->done, s->njobs, s->failed, rate,
            (int)eta / 60, (int)eta % 60);
    fflush(stderr);
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
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

static int on_result(void *arg, size_t i, const fattn_sim_check *c)
{
    check_state *s = arg;
    const fattn_sim_job *job = &s->jobs[i];
    char key[FATTN_KEY_MAX];
    fattn_config_key(&job->cfg, key);
    fattn_sim_check_rec r = {
        .run_id = s->run,
        .seq = (long long)i,
        .kernel_hash = s->kernel_hash,
        .config_key = key,
        .shape = job->shape,
        .check = c,
    };
    if (fattn_store_sim_check_add(s->store, &r))
        return FATTN_EFAIL;
    outcome *o = &s->out[i];
    o->done = 1;
    snprintf(o->verdict, sizeof o->verdict, "%s", c->verdict);
    snprintf(o->detail, sizeof o->detail, "%s", c->detail);
    snprintf(o->fix, sizeof o->fix, "%s", c->fix);
    const fattn_sim_finding *f = c->ran ? fattn_sim_report_worst(&c->rep) : NULL;
    if (f) {
        snprintf(o->file, sizeof o->file, "%s", base_name(f->file));
        o->line = f->line;
        o->other_line = f->other_line;
    }
    ++s->done;
    if (c->compile_ms > 0)
        ++s->builds;
    s->cache_hits += c->cache_hit != 0;
    if (!fattn_sim_check_passed(c))
        ++s->failed;
    s->defects += fattn_sim_verdict_defect(c->verdict);
    if (s->single) {
        char shape[96];
        fattn_shape_format(&job->shape, shape, sizeof shape);
        printf("%s at %s: %s\n  %s\n", key, shape, c->verdict, c->detail);
        if (c->fix[0])
            printf("  fix: %s\n", c->fix);
        print_findings(c);
        if (c->ran)
            printf("  host build %s, simulated in %.2f s\n", c->cache_hit ? "from the cache" : "compiled",
                   c->run_ms / 1000.0);
    }
    progress(s, 0);
    return 0;
}

/* Failures grouped by verdict and kernel lines, each with an example. */
static void summary(const check_state *s, const char *what, double seconds)
{
    printf("sim run %lld: %s, kernel %.12s\n", s->run, what, s->kernel_hash);
    printf("%zu configuration%s checked in %.1f s (%zu host builds, %zu from the cache)\n", s->done,
           s->done == 1 ? "" : "s", seconds, s->builds, s->cache_hits);
    const char *names[] = {"verdict", "count"};
    const unsigned char numeric[] = {0, 1};
    fattn_rows rows;
    fattn_rows_init(&rows, 2, names);
    size_t n = s->njobs;
    unsigned char *seen = calloc(n ? n : 1, 1);
    for (size_t i = 0; seen && i < n; ++i) {
        if (!s->out[i].done || seen[i])
            continue;
        size_t count = 0;
        for (size_t j = i; j < n; ++j)
            if (s->out[j].done && !strcmp(s->out[j].verdict, s->out[i].verdict))
                ++count, seen[j] = 1;
        char cnt[32];
        snprintf(cnt, sizeof cnt, "%zu", count);
        const char *cells[] = {s->out[i].verdict, cnt};
        fattn_rows_add(&rows, cells, numeric);
    }
    printf("\n");
    fattn_rows_print(stdout, &rows, FATTN_FMT_TABLE, 0);
    fattn_rows_release(&rows);
    if (seen)
        memset(seen, 0, n);
    for (size_t i = 0; seen && !s->single && i < n; ++i) {
        const outcome *o = &s->out[i];
        if (!o->done || seen[i] || !strcmp(o->verdict, FATTN_SIMV_OK))
            continue;
        size_t count = 0;
        for (size_t j = i; j < n; ++j) {
            const outcome *p = &s->out[j];
            if (p->done && !strcmp(p->verdict, o->verdict) && p->line == o->line && p->other_line == o->other_line)
                ++count, seen[j] = 1;
        }
        char key[FATTN_KEY_MAX], shape[96];
        fattn_config_key(&s->jobs[i].cfg, key);
        fattn_shape_format(&s->jobs[i].shape, shape, sizeof shape);
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

/* The jobs of --config: each key at the shape; the static gates' verdict
 * is told, not applied. */
static int config_jobs(const check_opts *o, const fattn_target *t, fattn_sim_job *jobs, int quiet)
{
    for (int i = 0; i < o->nconfigs; ++i) {
        int rc = fattn_config_parse(o->configs[i], "--config", &jobs[i].cfg);
        if (rc)
            return rc;
        jobs[i].shape = t->shape;
        if (!t->arch || quiet)
            continue;
        fattn_verdict v;
        fattn_gate_input in = {&jobs[i].cfg, &t->shape, t->arch, &t->lim};
        int r = fattn_gates_static(&in, &v, NULL);
        if (r != FATTN_R_NONE) {
            char key[FATTN_KEY_MAX];
            fattn_config_key(&jobs[i].cfg, key);
            fprintf(stderr, "fattn-tune: note: %s is rejected by the %s gate on %s (%s); checking it anyway\n", key,
                    fattn_reason(r)->code, t->arch->name, v.detail);
        }
    }
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
    fattn_kernel_src src = {0};
    fattn_store *store = NULL;
    fattn_space_verdicts sv = {0};
    fattn_sim_job *jobs = NULL;
    fattn_sim_case *cases = NULL;
    outcome *outs = NULL;
    char *cmdline = NULL, *cache = NULL, help[8192], what[512], compiler[256];
    size_t njobs = 0;
    int rc, have_src = 0;
    struct sigaction sa, old_int, old_term, old_hup;

    snprintf(help, sizeof help, "%s%s%s", help_head, cli_target_help, cli_common_help);
    fattn_target_init(&t);
    if ((rc = cli_parse(argc, argv, opts, "", c, &t, handle, &o, help, NULL)))
        goto out;
    const char *mode = o.covering ? "covering" : o.nconfigs ? "config" : o.has_sample ? "sample" : "all";
    if (o.covering && (t.shape_text || o.nconfigs || o.has_sample)) {
        rc = fattn_error(FATTN_EUSAGE, "check --covering picks its own shapes and configurations; it takes no %s",
                         t.shape_text ? "--shape"
                         : o.nconfigs ? "--config"
                                      : "--sample");
        goto out;
    }
    if (o.nconfigs && (o.has_sample || t.filter_text)) {
        rc = fattn_error(FATTN_EUSAGE, "check --config checks the configurations given; it takes no %s",
                         o.has_sample ? "--sample" : "--filter");
        goto out;
    }
    int needs = o.covering   ? FATTN_NEED_ARCH | FATTN_NEED_SPACE
                : o.nconfigs ? FATTN_NEED_SHAPE | (t.arch_name ? FATTN_NEED_ARCH : 0)
                             : FATTN_NEED_SHAPE | FATTN_NEED_ARCH | FATTN_NEED_SPACE;
    if ((rc = fattn_target_finish(&t, needs, "check")))
        goto out;
    /* The jobs, decided before anything is written. */
    char shape[96] = "";
    if (t.shape_text)
        fattn_shape_format(&t.shape, shape, sizeof shape);
    if (o.nconfigs) {
        jobs = fattn_xcalloc((size_t)o.nconfigs, sizeof *jobs);
        if ((rc = config_jobs(&o, &t, jobs, c->quiet)))
            goto out;
        njobs = (size_t)o.nconfigs;
        snprintf(what, sizeof what, "check of %d given configuration%s at %s", o.nconfigs, o.nconfigs == 1 ? "" : "s",
                 shape);
    } else if (o.covering) {
        size_t npairs = 0;
        if ((rc = fattn_sim_covering(&t.space, t.arch, &cases, &njobs, &npairs)))
            goto out;
        jobs = fattn_xcalloc(njobs ? njobs : 1, sizeof *jobs);
        for (size_t i = 0; i < njobs; ++i)
            jobs[i].cfg = cases[i].cfg, jobs[i].shape = cases[i].shape;
        snprintf(what, sizeof what, "covering check of %s for %s (%zu cases cover %zu value pairs)", t.space.label,
                 t.arch->name, njobs, npairs);
    } else {
        fattn_gates_space(&t.space, t.filter_text ? &t.filter : NULL, &t.shape, t.arch, &t.lim, &sv);
        njobs =
            o.has_sample ? (size_t)fattn_sample_survivors(sv.survivors, sv.nsurvivors, o.sample, o.seed) : sv.nsurvivors;
        jobs = fattn_xcalloc(njobs ? njobs : 1, sizeof *jobs);
        for (size_t i = 0; i < njobs; ++i) {
            fattn_space_config(&t.space, sv.survivors[i], &jobs[i].cfg);
            jobs[i].shape = t.shape;
        }
        snprintf(what, sizeof what, "check of %s of %s at %s for %s (%zu of %zu configurations survive the gates)",
                 o.has_sample ? "a sample of the survivors" : "every survivor", t.space.label, shape, t.arch->name,
                 sv.nsurvivors, sv.considered);
        if (!njobs) {
            rc = fattn_error(FATTN_EUSAGE,
                             "check: no configuration of %s survives the static gates at %s on %s; "
                             "see fattn-tune gates",
                             t.space.label, shape, t.arch->name);
            goto out;
        }
    }

    if (o.list) { /* the cases, and nothing run or written */
        for (size_t i = 0; i < njobs; ++i) {
            char key[FATTN_KEY_MAX], sh[96];
            fattn_config_key(&jobs[i].cfg, key);
            const fattn_shape *js = &jobs[i].shape;
            snprintf(sh, sizeof sh, "%d,%d,%d,%d", js->batch, js->heads, js->seqlen, js->head_dim);
            printf("%s %s%s\n", key, sh, js->causal ? " causal" : "");
        }
        rc = fflush(stdout) ? fattn_error(FATTN_EFAIL, "check --list: writing the list failed") : FATTN_OK;
        goto out;
    }

    /* One kernel per run: the family's of every job. */
    for (size_t i = 1; i < njobs; ++i)
        if (jobs[i].cfg.fam != jobs[0].cfg.fam) {
            rc = fattn_error(FATTN_EUSAGE,
                             "check --config: %s and %s configurations in one run; check one family at "
                             "a time",
                             jobs[0].cfg.fam->name, jobs[i].cfg.fam->name);
            goto out;
        }
    const char *dir = c->kernel_dir ? c->kernel_dir : fattn_default_kernel_dir();
    if ((rc = fattn_kernel_src_load(dir, jobs[0].cfg.fam->kernel_file, &src)))
        goto out;
    have_src = 1;
    if ((rc = fattn_sim_compiler_identity(compiler, sizeof compiler)))
        goto out;
    cache = fattn_sim_cache_dir();

    if ((rc = fattn_store_open(c->db_path ? c->db_path : FATTN_DEFAULT_DB, FATTN_DB_WRITE, &store)))
        goto out;
    cmdline = cli_command_line(c);
    fattn_sim_run_rec rr = {
        .mode = mode,
        .command = cmdline,
        .kernel_hash = src.hash,
        .space_path = o.nconfigs ? NULL : t.space.label,
        .space_hash = o.nconfigs ? NULL : t.space.hash,
        .arch = t.arch ? t.arch->name : NULL,
        .seed = o.seed,
        .compiler = compiler,
    };
    outs = fattn_xcalloc(njobs, sizeof *outs);
    check_state s = {
        .store = store,
        .kernel_hash = src.hash,
        .jobs = jobs,
        .njobs = njobs,
        .out = outs,
        .progress = !c->quiet && isatty(2) && njobs > 1,
        .single = o.nconfigs > 0,
        .t0 = fattn_now_ms(),
    };
    if ((rc = fattn_store_sim_run_begin(store, &rr, &s.run)))
        goto out;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);
    fattn_sim_pool pool = {
        .src = &src,
        .cache_dir = cache,
        .seed = (uint64_t)o.seed,
        .jobs = (int)(o.jobs < (long)njobs ? o.jobs : (long)njobs),
        .timeout_ms = o.timeout_s * 1000.0,
        .interrupted = &interrupted,
        .on_result = on_result,
        .arg = &s,
    };
    rc = fattn_sim_pool_run(&pool, jobs, njobs);
    progress(&s, 1);
    if (s.progress)
        fputc('\n', stderr);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);

    const char *status = rc < 0 ? "failed" : rc > 0 ? "interrupted" : "done";
    if (fattn_store_sim_run_end(store, s.run, status) && !rc)
        rc = FATTN_EFAIL;
    if (rc < 0)
        goto out;
    if (s.single && s.done)
        printf("\n");
    summary(&s, what, (fattn_now_ms() - s.t0) / 1000.0);
    const char *db = c->db_path ? c->db_path : FATTN_DEFAULT_DB;
    int other_db = strcmp(db, FATTN_DEFAULT_DB) != 0;
    if (rc > 0) {
        rc = fattn_error(FATTN_EFAIL,
                         "interrupted after %zu of %zu checks; sim run %lld keeps every verdict recorded, the "
                         "simulator cache every host build: run the same command again to finish",
                         s.done, njobs, s.run);
    } else if (s.failed) {
        rc = fattn_error(FATTN_EFAIL,
                         "%zu of %zu configuration%s failed the simulator (%zu defective: search skips them for this "
                         "kernel source); every verdict: fattn-tune query sim --run %lld%s%s",
                         s.failed, njobs, njobs == 1 ? "" : "s", s.defects, s.run, other_db ? " --db " : "",
                         other_db ? db : "");
    }
out:
    free(outs);
    free(jobs);
    free(cases);
    free(cache);
    free(cmdline);
    fattn_space_verdicts_release(&sv);
    if (have_src)
        fattn_kernel_src_release(&src);
    fattn_store_close(&store);
    fattn_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
