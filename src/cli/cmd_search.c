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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "compile/pool.h"
#include "export/table.h"
#include "search/strategy.h"
#include "tune/search.h"
#include "util/err.h"
#include "util/misc.h"

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

typedef struct progress_state {
    int on, tty; /* on: not -q; a line redrawn on a terminal, else one every CLI_PROGRESS_LOG_MS */
    double last, deadline_ms;
} progress_state;

static void show_progress(void *arg, const fattn_tune_progress *p)
{
    progress_state *ps = arg;
    if (!p) { /* the loop ended: end the line redrawn on a terminal */
        if (ps->on && ps->tty)
            fputc('\n', stderr);
        return;
    }
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

static void summary(const fattn_search_report *rep, const char *strategy, const fattn_target *t, long trials,
                    const char *budget, double ran_ms, double budget_ms)
{
    const fattn_space_verdicts *sv = &rep->sv;
    const fattn_tune_progress *p = &rep->p;
    const int stop = rep->stop;
    char shape[96];
    fattn_shape_format(&t->shape, shape, sizeof shape);
    printf("study %lld: search (%s) of %s for %s on %s, %s\n", rep->study, strategy, t->space.label, shape,
           t->arch->name, rep->device);
    printf("timing: %s\n", rep->method);
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

/* With --resume: the study's arguments, then the ones given now (later
 * wins), parsed again into *o and *t; *merged holds the merged argv. */
static int resume_args(search_opts *o, fattn_target *t, cli_common *c, const struct option *opts, const char *help,
                       fattn_resume *res, int *argc, char ***argv, char ***merged)
{
    long long id = o->resume;
    int n = 0, rc;
    merged[0] = fattn_xcalloc((size_t)(res->nargs + *argc + 1), sizeof **merged);
    merged[0][n++] = (*argv)[0];
    for (int i = 0; i < res->nargs; ++i)
        merged[0][n++] = res->args[i];
    for (int i = 1; i < *argc; ++i)
        merged[0][n++] = (*argv)[i];
    fattn_target_release(t);
    fattn_target_init(t);
    *o = (search_opts){.strategy = fattn_strategies[0], .jobs = fattn_cpu_count()};
    fattn_measure_init(&o->tm);
    if ((rc = cli_parse(n, merged[0], opts, "", c, t, handle, o, help, NULL)))
        return rc;
    o->resume = id;
    *argc = n;
    *argv = merged[0];
    return FATTN_OK;
}

/* The minimum holds for a budget given now (a resumed study's own may be
 * older than it). */
static int check_budget(const search_opts *o)
{
    if (o->budget_arg && o->budget_ms < FATTN_MIN_BUDGET_S * 1000.0)
        return fattn_error(FATTN_EUSAGE,
                           "--budget '%s': expected at least %ds (a trial compiles and runs in seconds; "
                           "--trials N bounds a search by count)",
                           o->budget_arg, FATTN_MIN_BUDGET_S);
    return FATTN_OK;
}

/* The procedure's options from the command's. */
static fattn_search_opts procedure_opts(const search_opts *o, const cli_common *c, double started,
                                        const fattn_resume *res, const char *cmdline, const char *args,
                                        progress_state *ps)
{
    return (fattn_search_opts){.strategy = o->strategy,
                               .trials = o->trials,
                               .jobs = (int)o->jobs,
                               .budget_ms = o->budget_ms,
                               .started_ms = started,
                               .replay = o->replay,
                               .measure = o->tm,
                               .kernel_dir = c->kernel_dir,
                               .db_path = c->db_path,
                               .argv_text = cmdline,
                               .args_json = args,
                               .resume = res,
                               .interrupted = cli_interrupted(),
                               .guard = cli_signals_guard,
                               .progress = show_progress,
                               .progress_arg = ps,
                               .log = c->quiet ? NULL : stderr};
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
    fattn_store *store = NULL;
    fattn_resume res = {0};
    fattn_search_report r = {0};
    char *cmdline = NULL, *args = NULL, **merged = NULL, budget_text[64] = "", help[8192], dbopt[4200];
    int rc;

    snprintf(help, sizeof help, "%s%s%s%s", help_head, cli_timing_help, cli_target_help, cli_common_help);
    fattn_target_init(&t);
    fattn_measure_init(&o.tm);
    if ((rc = cli_parse(argc, argv, opts, "", c, &t, handle, &o, help, NULL)))
        goto out;
    if ((rc = check_budget(&o)))
        goto out;
    /* --resume: the study must be free (before any GPU work; reopening checks again). */
    if (o.resume
        && ((rc = check_resume_args(argc, argv)) || (rc = cli_open_db(c, &store))
            || (rc = fattn_resume_load(store, o.resume, &res)) || (rc = fattn_store_study_free(store, o.resume))
            || (rc = resume_args(&o, &t, c, opts, help, &res, &argc, &argv, &merged))))
        goto out;
    for (int i = 1; i < argc; ++i)
        if (!strncmp(argv[i], "--budget", 8))
            snprintf(budget_text, sizeof budget_text, "%s", argv[i][8] == '=' ? argv[i] + 9 : argv[i + 1]);
    args = args_json(argc, argv);
    cmdline = cli_command_line(c);
    t.lim.skip = o.skip;
    progress_state ps = {
        .on = !c->quiet, .tty = isatty(2), .deadline_ms = o.budget_ms > 0 ? started + o.budget_ms - res.search_ms : 0};
    fattn_search_opts so = procedure_opts(&o, c, started, o.resume ? &res : NULL, cmdline, args, &ps);
    rc = fattn_search_run(&so, &t, &store, &r);
    if (rc)
        goto out;
    summary(&r, o.strategy->name, &t, o.trials, budget_text, res.search_ms + r.ended_ms - started, o.budget_ms);
    if (r.stop == FATTN_TUNE_INTERRUPTED)
        rc = fattn_error(FATTN_EFAIL,
                         "interrupted after %zu of %zu survivors; study %lld keeps every trial recorded; go on "
                         "with: fattn-tune search --resume %lld%s",
                         r.p.tried, r.p.candidates, r.study, r.study, cli_db_option(c, dbopt, sizeof dbopt));
out:
    fattn_search_report_release(&r);
    fattn_resume_release(&res);
    free(merged);
    free(args);
    free(cmdline);
    fattn_store_close(&store);
    fattn_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
