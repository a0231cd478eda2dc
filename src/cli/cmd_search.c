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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "compile/pool.h"
#include "report/report.h"
#include "search/strategy.h"
#include "tune/search.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/sha256.h"

static const char help_head[] =
    "usage: fattn-tune search --shape B,H,S,D [--strategy NAME] [--trials N] [--budget DURATION]\n"
    "                         [--evaluator gpu|replay:FILE] [options]\n"
    "       fattn-tune search --resume STUDY [--budget DURATION] [--trials N] [--jobs N] [--device N]\n"
    "                         [--devices LIST]\n"
    "\n"
    "Searches every attention family the GPU runs (sm_90: mma and wgmma; --family or --space to\n"
    "narrow it) in one study: each family's strategy models its own parameters, and a scheduler\n"
    "shares the time among them (each family's seed design first, then by each one's best so far:\n"
    "docs/search-quality.md). Per family: the static gates, then for each survivor the strategy picks,\n"
    "NVRTC (compile cache, a thread pool compiling ahead), the post-compile gates, a numerics check\n"
    "against the reference kernel on fresh seeded inputs, and timing. Every outcome is a trial of a\n"
    "new study, committed on its own with its raw samples. Candidates run in a worker process: a\n"
    "fault, crash or hang is recorded (runtime_fault, timeout) and the search goes on.\n"
    "\n"
    "  --strategy NAME      gp (default): 16 Latin hypercube seeds, then Bayesian optimisation: a\n"
    "                       Gaussian process over log time, exploring more while the best stalls\n"
    "                       (docs/measurement.md says how); tpe (the Tree-structured Parzen\n"
    "                       Estimator); exhaustive (the space's order); random (without\n"
    "                       replacement); lhs (Latin hypercube designs); anneal (simulated\n"
    "                       annealing with restarts)\n"
    "  --trials N           stop after N configurations run on the GPU (rejections do not count)\n"
    "  --budget DURATION    wall time for the whole run, compiles included: 90s, 6m, 2h, 1h30m (at\n"
    "                       least 10s); no trial starts that would likely end past it\n"
    "  --resume STUDY       go on with an interrupted (or limited) search study: its arguments, its\n"
    "                       strategy told every stored outcome, nothing run twice; --budget and\n"
    "                       --trials count the study's earlier time and trials, and may be raised\n"
    "  --evaluator E        gpu (default), or replay:FILE to serve results from a landscape file\n"
    "                       (fattn-tune query landscape) without a GPU; repeatable, one landscape per\n"
    "                       family: the study searches the landscapes' families unless --family or\n"
    "                       --space says which\n"
    "  --jobs N             compile threads (default: the number of processors)\n"
    "  --devices LIST       the GPUs to measure on, e.g. 0,1,3, or all (at most 16, of one model):\n"
    "                       each trial runs on one of them alone, side by side with the others;\n"
    "                       the strategy proposes a batch (gp and tpe as if the trials running had\n"
    "                       an outcome); a reference configuration is timed on every GPU after the\n"
    "                       first measured trial and every 50 trials, a spread over 2% flagged;\n"
    "                       each trial records its GPU's UUID (docs/scale-out.md). Replaces --device\n"
    "  --campaign-row UUID:ROW  the campaign row the study runs (fattn-tune campaign gives it, so that\n"
    "                       a run again finds the row's study)\n"
    "  --unsafe-skip-gate G test only: ignore gate G's rejections (e.g. to show a faulting layout is\n"
    "                       contained); repeatable\n";

/* The shortest --budget: below it no trial would end in time. */
#define FATTN_MIN_BUDGET_S 10

typedef struct search_opts {
    fattn_search_opts run;  /* the procedure's options, as parsed */
    const char *budget_arg; /* --budget as given */
    unsigned skip;
    long long resume;
    int devices[FATTN_TUNE_MAX_DEVICES];
    char *campaign_uuid_text; /* --campaign-row's UUID, owned */
} search_opts;

#define SEARCH_DEFAULTS                                                                                                \
    {                                                                                                                  \
        .run = {.strategy = fattn_strategies[0], .jobs = (int)fattn_cpu_count() }                                      \
    }

static int handle(void *ctx, int opt, const char *arg)
{
    search_opts *o = ctx;
    switch (opt) {
    case OPT_STRATEGY:
        if (!(o->run.strategy = fattn_strategy_find(arg)))
            return fattn_error(FATTN_EUSAGE, "--strategy '%s': expected one of %s", arg, fattn_strategy_names());
        return FATTN_OK;
    case OPT_TRIALS: return cli_long("--trials", arg, 1, 100000000, &o->run.trials);
    case OPT_JOBS: return cli_int("--jobs", arg, 1, 256, &o->run.jobs);
    case OPT_BUDGET:
        if (fattn_parse_duration(arg, &o->run.budget_ms) || o->run.budget_ms <= 0)
            return fattn_error(FATTN_EUSAGE, "--budget '%s': expected a duration such as 90s, 6m, 2h or 1h30m", arg);
        o->budget_arg = arg;
        return FATTN_OK;
    case OPT_EVALUATOR:
        if (strcmp(arg, "gpu") == 0)
            o->run.nreplay = 0;
        else if (strncmp(arg, "replay:", 7) == 0 && arg[7] && o->run.nreplay == FATTN_MAX_FAMILIES)
            return fattn_error(FATTN_EUSAGE, "--evaluator '%s': more than %d landscapes; expected one per family", arg,
                               FATTN_MAX_FAMILIES);
        else if (strncmp(arg, "replay:", 7) == 0 && arg[7])
            o->run.replay[o->run.nreplay++] = arg + 7;
        else
            return fattn_error(FATTN_EUSAGE, "--evaluator '%s': expected gpu or replay:FILE", arg);
        return FATTN_OK;
    case OPT_SKIP_GATE: return cli_skip_gate_option(&o->skip, arg);
    case OPT_RESUME: return cli_id("--resume", arg, &o->resume);
    case OPT_DEVICES: return cli_devices(arg, o->devices, FATTN_TUNE_MAX_DEVICES, &o->run.ndevices);
    case OPT_CAMPAIGN_ROW: {
        /* UUID:ROW, as fattn-tune campaign gives it. */
        const char *colon = strchr(arg, ':');
        char uuid[40];
        long row;
        snprintf(uuid, sizeof uuid, "%.*s", colon ? (int)(colon - arg) : 0, arg);
        if (!colon || colon - arg != 36 || !fattn_uuid_valid(uuid) || fattn_parse_long(colon + 1, 1, 10000, &row))
            return fattn_error(FATTN_EUSAGE,
                               "--campaign-row '%s': expected UUID:ROW (set by fattn-tune campaign), such as "
                               "0b7c5e1a-3f2d-4c8e-9a41-6d2f0e7b9c13:2",
                               arg);
        free(o->campaign_uuid_text);
        o->campaign_uuid_text = fattn_xstrndup(arg, 36);
        o->run.campaign_uuid = o->campaign_uuid_text;
        o->run.campaign_row = (int)row;
        return FATTN_OK;
    }
    }
    return FATTN_EUSAGE;
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
    fattn_report_search_progress(p, ps->tty, now, ps->deadline_ms, stderr);
}

/* With --resume: the study's arguments, then the ones given now (later
 * wins), parsed again into *o and *t; *merged holds the merged argv. */
static int resume_args(search_opts *o, fattn_target *t, cli_common *c, const struct option *opts, fattn_resume *res,
                       int *argc, char ***argv, char ***merged)
{
    long long id = o->resume;
    int n, rc;
    *merged = fattn_resume_argv(res, *argc, *argv, &n);
    fattn_target_release(t);
    fattn_target_init(t);
    free(o->campaign_uuid_text);
    *o = (search_opts)SEARCH_DEFAULTS;
    fattn_measure_init(&o->run.measure);
    if ((rc = cli_parse(n, *merged, &(cli_spec){opts, "", CLI_TARGET | CLI_MEASURE, handle, help_head}, o, c, t,
                        &o->run.measure, NULL)))
        return rc;
    o->resume = id;
    *argc = n;
    *argv = *merged;
    return FATTN_OK;
}

/* Whether argv[1..argc) names option `name` ("--device") before any "--",
 * as --name or --name=V (an abbreviation of either is ambiguous). */
static int names_option(int argc, char **argv, const char *name)
{
    for (int i = 1; i < argc; ++i) {
        size_t len = strcspn(argv[i], "=");
        if (!strcmp(argv[i], "--"))
            break;
        if (len == strlen(name) && !strncmp(argv[i], name, len))
            return 1;
    }
    return 0;
}

/* --device N and --devices LIST: one of them. Resumed, the one given now
 * replaces the study's. */
static int one_device_option(search_opts *o, int argc, char **argv, long long resume)
{
    const int device = names_option(argc, argv, "--device"), devices = names_option(argc, argv, "--devices");
    if (device && devices)
        return fattn_error(FATTN_EUSAGE, "--device and --devices: expected one of them (--devices LIST for several "
                                         "GPUs, --device N for one)");
    if (resume && device)
        o->run.ndevices = 0; /* the study's --devices gives way to --device N */
    return FATTN_OK;
}

/* The minimum holds for a budget given now (a resumed study's own may be
 * older than it). */
static int check_budget(const search_opts *o)
{
    if (o->budget_arg && o->run.budget_ms < FATTN_MIN_BUDGET_S * 1000.0)
        return fattn_error(FATTN_EUSAGE,
                           "--budget '%s': expected at least %ds (a trial compiles and runs in seconds; "
                           "--trials N bounds a search by count)",
                           o->budget_arg, FATTN_MIN_BUDGET_S);
    return FATTN_OK;
}

int cmd_search(int argc, char **argv, cli_common *c)
{
    const double started = fattn_now_ms(); /* the budget counts from here */
    static const struct option opts[] = {
        {"strategy", required_argument, NULL, OPT_STRATEGY},
        {"trials", required_argument, NULL, OPT_TRIALS},
        {"budget", required_argument, NULL, OPT_BUDGET},
        {"evaluator", required_argument, NULL, OPT_EVALUATOR},
        {"jobs", required_argument, NULL, OPT_JOBS},
        {"unsafe-skip-gate", required_argument, NULL, OPT_SKIP_GATE},
        {"resume", required_argument, NULL, OPT_RESUME},
        {"campaign-row", required_argument, NULL, OPT_CAMPAIGN_ROW},
        {"devices", required_argument, NULL, OPT_DEVICES},
        {NULL, 0, NULL, 0},
    };
    search_opts o = SEARCH_DEFAULTS;
    fattn_target t;
    fattn_store *store = NULL;
    fattn_resume res = {0};
    fattn_search_report r = {0};
    char *cmdline = NULL, *args = NULL, **merged = NULL, dbopt[4200];
    int rc;

    fattn_target_init(&t);
    fattn_measure_init(&o.run.measure);
    if ((rc = cli_parse(argc, argv, &(cli_spec){opts, "", CLI_TARGET | CLI_MEASURE, handle, help_head}, &o, c, &t,
                        &o.run.measure, NULL)))
        goto out;
    if ((rc = check_budget(&o)) || (rc = one_device_option(&o, argc, argv, 0)))
        goto out;
    /* --resume: the study must be free (before any GPU work; reopening checks again). */
    if (o.resume
        && ((rc = fattn_resume_args_check(argc, argv)) || (rc = cli_open_db(c, &store))
            || (rc = fattn_resume_load(store, o.resume, &res)) || (rc = fattn_store_study_free(store, o.resume))
            || (rc = resume_args(&o, &t, c, opts, &res, &argc, &argv, &merged))))
        goto out;
    if (o.resume && (rc = one_device_option(&o, c->argc, c->argv, o.resume)))
        goto out;
    if (o.run.ndevices < 0 && (rc = cli_devices_all(o.devices, FATTN_TUNE_MAX_DEVICES, &o.run.ndevices)))
        goto out;
    o.run.devices = o.devices;
    args = fattn_search_args_json(argc, argv);
    cmdline = cli_command_line(c);
    t.lim.skip = o.skip;
    const double budget = o.run.budget_ms;
    progress_state ps = {
        .on = !c->quiet, .tty = isatty(2), .deadline_ms = budget > 0 ? started + budget - res.search_ms : 0};
    o.run.started_ms = started, o.run.kernel_dir = c->kernel_dir, o.run.db_path = c->db_path;
    o.run.argv_text = cmdline, o.run.args_json = args, o.run.resume = o.resume ? &res : NULL;
    o.run.interrupted = cli_interrupted(), o.run.guard = cli_signals_guard;
    o.run.progress = show_progress, o.run.progress_arg = &ps, o.run.log = c->quiet ? NULL : stderr;
    if ((rc = fattn_search_run(&o.run, &t, &store, &r)))
        goto out;
    fattn_report_search(&r, o.run.strategy->name, &t, o.run.trials, o.budget_arg ? o.budget_arg : "",
                        res.search_ms + r.ended_ms - started, budget, stdout);
    if (r.stop == FATTN_TUNE_INTERRUPTED)
        rc = fattn_error(FATTN_EFAIL,
                         "interrupted after %zu of %zu survivors; study %lld keeps every trial recorded; go on "
                         "with: fattn-tune search --resume %lld%s",
                         r.p.tried, r.p.candidates, r.study, r.study, cli_db_option(c, dbopt, sizeof dbopt));
out:
    free(o.campaign_uuid_text);
    fattn_search_report_release(&r);
    fattn_resume_release(&res);
    free(merged);
    free(args);
    free(cmdline);
    fattn_store_close(&store);
    fattn_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
