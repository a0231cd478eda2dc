/*
 * cmd_search.c - fattn-tune search: gates, compile, run, verify, time and
 * store, over a space, on a GPU (or replaying a measured landscape).
 *
 * Everything that can fail for the user's input or environment is checked
 * before the database is opened: arguments, the space, the kernels, the GPU
 * (a worker is started and initialized). Then a study is created, the static
 * rejections recorded, and the search loop (tune/tune.h) runs until the
 * strategy is exhausted, --trials or --budget is reached, or a signal comes.
 *
 * --resume STUDY reads the study's own arguments back (studies.args_json),
 * lets --budget, --trials and --jobs replace theirs, and goes on where the
 * study stopped: its trials are not run again, the strategy is told their
 * outcomes, and --trials and --budget count the study's earlier trials and
 * search time.
 */
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "compile/batch.h"
#include "compile/pool.h"
#include "export/table.h"
#include "gpu/device.h"
#include "run/evaluator.h"
#include "run/landscape.h"
#include "run/worker.h"
#include "search/strategy.h"
#include "store/store.h"
#include "tune/resume.h"
#include "tune/tune.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/paths.h"

static const char help_head[] =
    "usage: fattn-tune search --shape B,H,S,D [--strategy NAME] [--trials N] [--budget DURATION]\n"
    "                         [--evaluator gpu|replay:FILE] [options]\n"
    "       fattn-tune search --resume STUDY [--budget DURATION] [--trials N] [--jobs N]\n"
    "\n"
    "Searches the space on the GPU: the static gates, then for each survivor the strategy picks,\n"
    "NVRTC (compile cache, a thread pool compiling ahead), the post-compile gates, a numerics check\n"
    "against the reference kernel on fresh seeded inputs, and timing. Every outcome is a trial of a\n"
    "new study, committed on its own with its raw samples. Candidates run in a worker process: a\n"
    "fault, crash or hang is recorded (runtime_fault, timeout) and the search goes on.\n"
    "\n"
    "  --strategy NAME      gp (default): 16 Latin hypercube seeds, then Bayesian optimisation: a\n"
    "                       Gaussian process over log time (kernel exp(-0.5 x the number of\n"
    "                       differing parameters), noise 1% of its variance), the configuration\n"
    "                       of largest expected improvement times its chance of being measurable;\n"
    "                       after 5 trials without a 1% better time, a share of exploring\n"
    "                       proposals rising to 90% over 10 more (half of them, at most 4 per\n"
    "                       best, a local step: of the untried configurations nearest the best,\n"
    "                       the one of largest expected improvement; the others the untried\n"
    "                       configuration farthest from all tried, of 8 drawn, or a quarter of\n"
    "                       the time by Thompson sampling); each proposal waits for the outcome\n"
    "                       before it, while idle compile threads compile its likeliest next\n"
    "                       proposals ahead;\n"
    "                       tpe (the Tree-structured Parzen Estimator, the default before gp:\n"
    "                       docs/search-quality.md); exhaustive (the space's order); random\n"
    "                       (without replacement); lhs (Latin hypercube designs); anneal\n"
    "                       (simulated annealing with restarts)\n"
    "  --trials N           stop after N configurations run on the GPU (rejections do not count)\n"
    "  --budget DURATION    wall time for the whole run, compiles included: 90s, 6m, 2h, 1h30m (at\n"
    "                       least 10s); no trial starts that would likely end past it\n"
    "  --resume STUDY       go on with an interrupted (or limited) search study: its arguments, its\n"
    "                       strategy told every stored outcome, nothing run twice; --budget and\n"
    "                       --trials count the study's earlier time and trials, and may be raised\n"
    "  --evaluator E        gpu (default), or replay:FILE to serve results from a landscape file\n"
    "                       (fattn-tune query landscape) without a GPU\n"
    "  --jobs N             compile threads (default: the number of processors)\n"
    "  --unsafe-skip-gate G test only: ignore gate G's rejections (e.g. to show a faulting layout is\n"
    "                       contained); repeatable\n";

/* The shortest --budget: below it no trial would end in time. */
#define FATTN_MIN_BUDGET_S 10

typedef struct search_opts {
    const fattn_strategy_ops *strategy;
    long trials, jobs;
    double budget_ms;
    const char *budget_arg; /* --budget as given */
    fattn_measure tm;
    const char *replay;
    unsigned skip;
    long long resume;
} search_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    search_opts *o = ctx;
    int rc = cli_timing_option(&o->tm, opt, arg);
    if (rc)
        return rc < 0 ? rc : FATTN_OK;
    switch (opt) {
    case OPT_STRATEGY:
        if (!(o->strategy = fattn_strategy_find(arg)))
            return fattn_error(FATTN_EUSAGE, "--strategy '%s': expected one of %s", arg, fattn_strategy_names());
        return FATTN_OK;
    case OPT_TRIALS: return cli_long("--trials", arg, 1, 100000000, &o->trials);
    case OPT_JOBS: return cli_long("--jobs", arg, 1, 256, &o->jobs);
    case OPT_BUDGET:
        if (fattn_parse_duration(arg, &o->budget_ms) || o->budget_ms <= 0)
            return fattn_error(FATTN_EUSAGE, "--budget '%s': expected a duration such as 90s, 6m, 2h or 1h30m", arg);
        o->budget_arg = arg;
        return FATTN_OK;
    case OPT_EVALUATOR:
        if (strcmp(arg, "gpu") == 0)
            o->replay = NULL;
        else if (strncmp(arg, "replay:", 7) == 0 && arg[7])
            o->replay = arg + 7;
        else
            return fattn_error(FATTN_EUSAGE, "--evaluator '%s': expected gpu or replay:FILE", arg);
        return FATTN_OK;
    case OPT_SKIP_GATE: return cli_skip_gate_option(&o->skip, arg);
    case OPT_RESUME: {
        long v = 0;
        rc = cli_long("--resume", arg, 1, 2147483647L, &v);
        o->resume = v;
        return rc;
    }
    }
    return FATTN_EUSAGE;
}

/* With --resume, the study's arguments apply; these alone may be given. */
static const char *const resume_options[] = {"--resume", "--budget", "--trials", "--jobs", "--db",
                                             "--quiet",  "-q",       "--help",   "-h",     NULL};

static int takes_value(const char *name, size_t len)
{
    static const char *const valued[] = {"--resume", "--budget", "--trials", "--jobs", "--db", NULL};
    for (int k = 0; valued[k]; ++k)
        if (strlen(valued[k]) == len && !strncmp(name, valued[k], len))
            return 1;
    return 0;
}

static int check_resume_args(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        size_t len = strcspn(a, "=");
        int ok = 0;
        for (int k = 0; resume_options[k] && !ok; ++k)
            ok = strlen(resume_options[k]) == len && !strncmp(a, resume_options[k], len);
        if (!ok)
            return fattn_error(FATTN_EUSAGE,
                               "search --resume: '%s' comes from the study; with --resume only --budget, --trials, "
                               "--jobs, --db and -q may be given",
                               a);
        if (takes_value(a, len) && !a[len])
            ++i;
    }
    return FATTN_OK;
}

/* The search's arguments as a JSON array, without --db and --resume (where
 * the study lives and which it is are not part of it). */
static char *args_json(int argc, char **argv)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 1; i < argc; ++i) {
        size_t len = strcspn(argv[i], "=");
        if ((len == 4 && !strncmp(argv[i], "--db", 4)) || (len == 8 && !strncmp(argv[i], "--resume", 8))) {
            i += !argv[i][len];
            continue;
        }
        cJSON_AddItemToArray(a, cJSON_CreateString(argv[i]));
    }
    char *out = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return out;
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* The simulator's defects of this kernel source (fattn-tune check), sorted
 * by configuration key as the store returns them. */
typedef struct sim_defect {
    char key[FATTN_KEY_MAX];
    char detail[FATTN_DETAIL_MAX];
} sim_defect;

typedef struct sim_defects {
    sim_defect *d;
    size_t n, cap;
} sim_defects;

static int add_defect(void *arg, const char *key, const char *verdict, const char *detail, long long check_id)
{
    sim_defects *ds = arg;
    if (ds->n == ds->cap) {
        ds->cap = ds->cap ? 2 * ds->cap : 16;
        ds->d = fattn_xrealloc(ds->d, ds->cap * sizeof *ds->d);
    }
    sim_defect *d = &ds->d[ds->n++];
    snprintf(d->key, sizeof d->key, "%s", key);
    snprintf(d->detail, sizeof d->detail, "sim check %lld: %s", check_id, detail[0] ? detail : verdict);
    return 0;
}

static int cmp_defect(const void *a, const void *b)
{
    return strcmp(((const sim_defect *)a)->key, ((const sim_defect *)b)->key);
}

/* Turns the survivors the simulator found defective (same kernel source,
 * head dimension and mask) into rejections for reason "simulator". */
static int skip_sim_defects(fattn_store *store, const fattn_target *t, const fattn_kernel_src *src,
                            fattn_space_verdicts *sv, size_t *skipped)
{
    sim_defects ds = {0};
    *skipped = 0;
    int rc = fattn_store_sim_defects(store, src->hash, t->shape.head_dim, t->shape.causal, add_defect, &ds);
    if (!rc && ds.n) {
        qsort(ds.d, ds.n, sizeof *ds.d, cmp_defect);
        size_t *surv = fattn_xmalloc((sv->nsurvivors + 1) * sizeof *surv);
        const size_t ns = sv->nsurvivors;
        memcpy(surv, sv->survivors, ns * sizeof *surv);
        for (size_t j = 0; j < ns; ++j) {
            sim_defect probe;
            fattn_config cfg;
            fattn_space_config(&t->space, surv[j], &cfg);
            fattn_config_key(&cfg, probe.key);
            const sim_defect *d = bsearch(&probe, ds.d, ds.n, sizeof *ds.d, cmp_defect);
            if (d)
                *skipped += (size_t)fattn_space_verdicts_reject(sv, surv[j], FATTN_R_SIMULATOR, d->detail);
        }
        free(surv);
    }
    free(ds.d);
    return rc;
}

typedef struct progress_state {
    int on, tty; /* on: not -q; a line redrawn on a terminal, else one every CLI_PROGRESS_LOG_MS */
    double last, deadline_ms;
} progress_state;

static void show_progress(void *arg, const fattn_tune_progress *p)
{
    progress_state *ps = arg;
    double now = fattn_now_ms();
    if (!ps->on || now - ps->last < (ps->tty ? 250 : CLI_PROGRESS_LOG_MS))
        return;
    ps->last = now;
    int rejected = 0;
    for (int r = 1; r < FATTN_R_COUNT; ++r)
        rejected += p->by_reason[r];
    double per = p->tried ? p->elapsed_ms / (double)p->tried : 0;
    double eta = per * (double)(p->candidates - p->tried) / 1000.0;
    if (ps->deadline_ms > 0 && eta > (ps->deadline_ms - now) / 1000.0) /* the budget ends it first */
        eta = ps->deadline_ms > now ? (ps->deadline_ms - now) / 1000.0 : 0;
    fprintf(stderr, "%s%zu/%zu tried  %zu measured  %d rejected  %zu errors  best %s %.3f us  ETA %dm%02ds%s",
            ps->tty ? "\r  " : "fattn-tune: ", p->tried, p->candidates, p->ok, rejected, p->errors,
            p->best_us > 0 ? p->best_key : "-", p->best_us, (int)eta / 60, (int)eta % 60, ps->tty ? "   " : "\n");
    fflush(stderr);
}

static void summary(long long study, const char *strategy, const fattn_target *t, const fattn_evaluator *ev,
                    const fattn_space_verdicts *sv, const fattn_tune_progress *p, int stop, long trials,
                    const char *budget, double ran_ms, double budget_ms)
{
    char shape[96];
    fattn_shape_format(&t->shape, shape, sizeof shape);
    printf("study %lld: search (%s) of %s for %s on %s, %s\n", study, strategy, t->space.label, shape, t->arch->name,
           ev->device);
    printf("timing: %s\n", ev->method);
    const size_t sim = (size_t)sv->counts[FATTN_R_SIMULATOR];
    printf("%zu configurations: %zu rejected by the static gates, ", sv->considered,
           sv->considered - sv->nsurvivors - sim);
    if (sim)
        printf("%zu skipped as the simulator found them defective, ", sim);
    printf("%zu survive; %zu tried, %zu run, %zu measured in %.1f s\n%s", sv->nsurvivors, p->tried, p->evaluated, p->ok,
           p->elapsed_ms / 1000.0, p->resumed ? "" : "\n");
    if (p->resumed)
        printf("resumed: %zu of those trials come from the study's earlier runs\n\n", p->resumed);
    const char *names[] = {"status", "reason", "count"};
    const unsigned char numeric[] = {0, 0, 1};
    fattn_rows rows;
    char count[32];
    fattn_rows_init(&rows, 3, names);
    for (int r = 1; r < FATTN_R_COUNT; ++r) {
        int n = sv->counts[r] + p->by_reason[r];
        if (!n)
            continue;
        snprintf(count, sizeof count, "%d", n);
        const char *cells[] = {"rejected", fattn_reason(r)->code, count};
        fattn_rows_add(&rows, cells, numeric);
    }
    snprintf(count, sizeof count, "%zu", p->ok);
    const char *ok[] = {"ok", "", count};
    fattn_rows_add(&rows, ok, numeric);
    if (p->errors) {
        snprintf(count, sizeof count, "%zu", p->errors);
        const char *err[] = {"error", "", count};
        fattn_rows_add(&rows, err, numeric);
    }
    fattn_rows_print(stdout, &rows, FATTN_FMT_TABLE, 0);
    fattn_rows_release(&rows);
    if (p->best_us > 0)
        printf("\nbest: %s, %.3f us per launch (p10 %.3f, p90 %.3f), %.1f TFLOP/s, %.1f GB/s (trial %lld)\n",
               p->best_key, p->best.median_us, p->best.p10_us, p->best.p90_us, p->best.tflops, p->best.gbps,
               p->best_trial);
    else
        printf("\nbest: none measured\n");
    switch (stop) {
    case FATTN_TUNE_TRIALS: printf("stopped: --trials %ld reached\n", trials); break;
    case FATTN_TUNE_BUDGET:
        if (ran_ms > budget_ms)
            printf("stopped: --budget %s spent; ran %.1f s, %.1f s over (the trial in flight)\n", budget,
                   ran_ms / 1000.0, (ran_ms - budget_ms) / 1000.0);
        else
            printf("stopped: --budget %s spent; ran %.1f s, within it (another trial would not have ended "
                   "in time)\n",
                   budget, ran_ms / 1000.0);
        break;
    case FATTN_TUNE_INTERRUPTED: printf("stopped: interrupted\n"); break;
    default: printf("stopped: every survivor tried\n");
    }
}

/* A landscape's arch, shape and mask are its own: --arch and --shape default
 * to them (the texts kept in the caller's buffers), and a disagreeing --arch
 * is refused here (the shape by the evaluator, which compares all of it). */
static int replay_target(const char *path, fattn_target *t, char *shape, size_t nshape, char *arch, size_t narch)
{
    fattn_landscape land;
    int rc = fattn_landscape_load(path, &land);
    if (rc)
        return rc;
    if (!t->shape_text) {
        snprintf(shape, nshape, "%d,%d,%d,%d", land.shape.batch, land.shape.heads, land.shape.seqlen,
                 land.shape.head_dim);
        t->shape_text = shape;
        t->causal = t->causal || land.shape.causal;
    }
    if (!*land.arch && !t->arch_name)
        rc = fattn_error(FATTN_EUSAGE,
                         "--evaluator replay:%s: the landscape names no arch (no \"# arch:\" line); "
                         "pass --arch",
                         path);
    else if (*land.arch && t->arch_name && strcmp(t->arch_name, land.arch))
        rc = fattn_error(FATTN_EUSAGE,
                         "--arch %s: the landscape replay:%s was measured on %s; "
                         "leave --arch out or pass --arch %s",
                         t->arch_name, path, land.arch, land.arch);
    else if (!t->arch_name) {
        snprintf(arch, narch, "%s", land.arch);
        t->arch_name = arch;
    }
    fattn_landscape_release(&land);
    return rc;
}

int cmd_search(int argc, char **argv, cli_common *c)
{
    const double started = fattn_now_ms(); /* the budget counts from here */
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS,
        CLI_TARGET_OPTIONS,
        {"strategy", required_argument, NULL, OPT_STRATEGY},
        {"trials", required_argument, NULL, OPT_TRIALS},
        {"budget", required_argument, NULL, OPT_BUDGET},
        CLI_TIMING_OPTIONS,
        {"evaluator", required_argument, NULL, OPT_EVALUATOR},
        {"jobs", required_argument, NULL, OPT_JOBS},
        {"unsafe-skip-gate", required_argument, NULL, OPT_SKIP_GATE},
        {"resume", required_argument, NULL, OPT_RESUME},
        {NULL, 0, NULL, 0},
    };
    search_opts o = {.strategy = fattn_strategies[0], .jobs = fattn_cpu_count()};
    fattn_target t;
    fattn_kernel_src src = {0};
    fattn_space_verdicts sv = {0};
    size_t sim_skipped = 0;
    fattn_evaluator *ev = NULL;
    fattn_store *store = NULL;
    fattn_gpu gpu = {0};
    char *include = NULL, *cmdline = NULL, *args = NULL, limits[512], budget_text[64] = "";
    char land_shape[64], land_arch[16];
    int rc, have_src = 0;
    char help[8192];
    fattn_resume res = {0};
    char **merged = NULL;

    snprintf(help, sizeof help, "%s%s%s%s", help_head, cli_timing_help, cli_target_help, cli_common_help);
    fattn_target_init(&t);
    fattn_measure_init(&o.tm);
    if ((rc = cli_parse(argc, argv, opts, "", c, &t, handle, &o, help, NULL)))
        goto out;
    /* The minimum holds for a budget given now (a resumed study's own may be
     * older than it). */
    if (o.budget_arg && o.budget_ms < FATTN_MIN_BUDGET_S * 1000.0) {
        rc = fattn_error(FATTN_EUSAGE,
                         "--budget '%s': expected at least %ds (a trial compiles and runs in seconds; "
                         "--trials N bounds a search by count)",
                         o.budget_arg, FATTN_MIN_BUDGET_S);
        goto out;
    }
    if (o.resume) {
        /* The study's arguments, then the ones given now (later wins). */
        long long id = o.resume;
        if ((rc = check_resume_args(argc, argv)))
            goto out;
        if ((rc = fattn_store_open(c->db_path ? c->db_path : FATTN_DEFAULT_DB, FATTN_DB_WRITE, &store))
            || (rc = fattn_resume_load(store, id, &res)))
            goto out;
        /* Before any GPU work; the claim itself (reopen) checks again. */
        if ((rc = fattn_store_study_free(store, id)))
            goto out;
        int n = 0;
        merged = fattn_xcalloc((size_t)(res.nargs + argc + 1), sizeof *merged);
        merged[n++] = argv[0];
        for (int i = 0; i < res.nargs; ++i)
            merged[n++] = res.args[i];
        for (int i = 1; i < argc; ++i)
            merged[n++] = argv[i];
        fattn_target_release(&t);
        fattn_target_init(&t);
        o = (search_opts){.strategy = fattn_strategies[0], .jobs = fattn_cpu_count()};
        fattn_measure_init(&o.tm);
        if ((rc = cli_parse(n, merged, opts, "", c, &t, handle, &o, help, NULL)))
            goto out;
        o.resume = id;
        argc = n;
        argv = merged;
    }
    for (int i = 1; i < argc; ++i)
        if (!strncmp(argv[i], "--budget", 8))
            snprintf(budget_text, sizeof budget_text, "%s", argv[i][8] == '=' ? argv[i] + 9 : argv[i + 1]);
    args = args_json(argc, argv);
    t.lim.skip = o.skip;

    /* The GPU first: without one (and no landscape to replay) nothing else matters. */
    if (!o.replay
        && (rc = fattn_gpu_arch(&t, &gpu, "search",
                              "; without one, --evaluator replay:FILE replays a measured landscape")))
        goto out;
    if (o.replay && (rc = replay_target(o.replay, &t, land_shape, sizeof land_shape, land_arch, sizeof land_arch)))
        goto out;
    if ((rc = fattn_target_finish(&t, FATTN_NEED_SHAPE | FATTN_NEED_SPACE, "search")))
        goto out;
    if ((rc = fattn_target_finish(&t, FATTN_NEED_ARCH, "search")))
        goto out;

    fattn_measure_plan(&o.tm, &t, &gpu);

    const char *dir = c->kernel_dir ? c->kernel_dir : fattn_default_kernel_dir();
    if ((rc = fattn_kernel_src_load(dir, t.space.fam->kernel_file, &src)))
        goto out;
    have_src = 1;
    if ((rc = fattn_cuda_include(&include)))
        goto out;
    fattn_gates_space(&t.space, t.filter_text ? &t.filter : NULL, &t.shape, t.arch, &t.lim, &sv);
    for (size_t i = 0; i < sv.n; ++i)
        if (sv.v[i].reason == FATTN_R_DEVICE_MEMORY) {
            rc = fattn_error(FATTN_EFAIL, "the shape does not fit the device-memory budget: %s", sv.v[i].detail);
            goto out;
        }

    /* The evaluator: a worker initialized on the GPU, or the landscape. */
    if (o.replay) {
        if ((rc = fattn_evaluator_open_replay(o.replay, &t.shape, t.space.fam, &ev)))
            goto out;
    } else {
        if ((rc = fattn_open_gpu_evaluator(&t, &o.tm, dir, include, &ev)))
            goto out;
    }

    if (o.resume && (strcmp(res.space_hash, t.space.hash) || strcmp(res.kernel_hash, src.hash))) {
        rc = fattn_error(FATTN_EUSAGE, "--resume %lld: the %s changed since the study began; start a new search",
                         o.resume, strcmp(res.space_hash, t.space.hash) ? "space file" : "kernel source");
        goto out;
    }
    if (!store && (rc = fattn_store_open(c->db_path ? c->db_path : FATTN_DEFAULT_DB, FATTN_DB_WRITE, &store)))
        goto out;
    if ((rc = skip_sim_defects(store, &t, &src, &sv, &sim_skipped)))
        goto out;
    if (sim_skipped && !c->quiet)
        fprintf(stderr,
                "fattn-tune: skipping %zu configuration%s the simulator found defective with this kernel source "
                "(fattn-tune query sim)\n",
                sim_skipped, sim_skipped == 1 ? "" : "s");
    cmdline = cli_command_line(c);
    fattn_gate_limits_json(&t.lim, limits, sizeof limits);
    char driver[32] = "";
    if (gpu.present)
        snprintf(driver, sizeof driver, "%d", gpu.info.driver_version);
    fattn_study_rec sr = {
        .command = "search",
        .strategy = o.strategy->name,
        .seed = o.tm.seed,
        .has_seed = 1,
        .shape = t.shape,
        .arch = t.arch->name,
        .device = ev->device,
        .device_json = ev->device_json,
        .driver_version = gpu.present ? driver : NULL,
        .nvrtc_version = fattn_nvrtc_version(),
        .space_path = t.space.label,
        .space_hash = t.space.hash,
        .space_json = t.space.json,
        .kernel_hash = src.hash,
        .family = t.space.fam->name,
        .limits_json = limits,
        .argv = cmdline,
        .evaluator = o.replay ? "replay" : "gpu",
        .timing_method = ev->method,
        .args_json = args,
    };
    long long study = o.resume, seq = res.next_seq;
    if ((rc = o.resume ? fattn_store_study_reopen(store, study, args) : fattn_store_study_begin(store, &sr, &study)))
        goto out;

    struct sigaction sa, old_int, old_term, old_hup;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);
    double t0 = fattn_now_ms();

    for (size_t i = 0; i < sv.n && !rc && !interrupted; ++i) {
        if (sv.v[i].reason <= 0)
            continue;
        fattn_config cfg;
        char key[FATTN_KEY_MAX];
        fattn_space_config(&t.space, i, &cfg);
        fattn_config_key(&cfg, key);
        if (o.resume && fattn_resume_has(&res, key))
            continue; /* recorded before */
        fattn_trial_rec r = {.study_id = study,
                             .seq = seq++,
                             .cfg = &cfg,
                             .status = "rejected",
                             .reason = fattn_reason(sv.v[i].reason)->code,
                             .detail = sv.v[i].detail,
                             .compile_ms = -1};
        if (!(rc = fattn_store_begin(store)) && !(rc = fattn_store_trial_add(store, &r, NULL)))
            rc = fattn_store_commit(store);
        else
            fattn_store_rollback(store);
    }

    fattn_tune_progress p = {0};
    int stop = FATTN_TUNE_INTERRUPTED;
    progress_state ps = {
        .on = !c->quiet, .tty = isatty(2), .deadline_ms = o.budget_ms > 0 ? started + o.budget_ms - res.search_ms : 0};
    if (!rc && !interrupted) {
        fattn_compile_ctx cc = {.src = &src,
                                .cuda_include = include,
                                .arch = t.arch,
                                .shape = &t.shape,
                                .lim = &t.lim,
                                .cache = fattn_store_compile_cache(store),
                                .jobs = (int)o.jobs};
        fattn_tune_ctx tc = {
            .space = &t.space,
            .sv = &sv,
            .cc = &cc,
            .store = store,
            .study = study,
            .seq = &seq,
            .ev = ev,
            .strategy = o.strategy,
            .seed = (uint64_t)o.tm.seed,
            .max_trials = o.trials,
            .deadline_ms = o.budget_ms > 0 ? started + o.budget_ms : 0,
            .t0_ms = t0,
            .spent_ms = res.search_ms,
            .prior = res.prior,
            .nprior = res.nprior,
            .ahead = 2 * (int)o.jobs,
            .interrupted = &interrupted,
            .progress = show_progress,
            .progress_arg = &ps,
        };
        rc = fattn_tune_run(&tc, &p, &stop);
        if (ps.on && ps.tty)
            fputc('\n', stderr);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);

    const char *status = rc ? "failed" : stop == FATTN_TUNE_INTERRUPTED ? "interrupted" : "done";
    if (fattn_store_study_end(store, study, status) && !rc)
        rc = FATTN_EFAIL;
    if (rc)
        goto out;
    summary(study, o.strategy->name, &t, ev, &sv, &p, stop, o.trials, budget_text,
            res.search_ms + fattn_now_ms() - started, o.budget_ms);
    if (stop == FATTN_TUNE_INTERRUPTED) {
        const char *db = c->db_path ? c->db_path : FATTN_DEFAULT_DB;
        rc = fattn_error(FATTN_EFAIL,
                         "interrupted after %zu of %zu survivors; study %lld keeps every trial recorded; go on "
                         "with: fattn-tune search --resume %lld%s%s",
                         p.tried, p.candidates, study, study, strcmp(db, FATTN_DEFAULT_DB) ? " --db " : "",
                         strcmp(db, FATTN_DEFAULT_DB) ? db : "");
    }
out:
    fattn_resume_release(&res);
    free(merged);
    free(args);
    fattn_evaluator_close(&ev);
    fattn_store_close(&store);
    fattn_space_verdicts_release(&sv);
    free(cmdline);
    free(include);
    if (have_src)
        fattn_kernel_src_release(&src);
    fattn_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
