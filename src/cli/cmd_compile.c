/*
 * cmd_compile.c - fattn-tune compile: every configuration of a space through
 * the static gates, every survivor through NVRTC (compile cache first, a
 * thread pool for the rest) and the post-compile gates, each result a trial
 * of a new study committed on its own. No GPU needed.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "compile/batch.h"
#include "compile/pool.h"
#include "export/table.h"
#include "store/store.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/paths.h"

static const char help_head[] =
    "usage: fattn-tune compile --shape B,H,S,D [--arch ARCH] [options]\n"
    "\n"
    "Runs the static gates over the space, compiles every survivor for the arch with NVRTC\n"
    "(cubin, registers, spills, stack frame, shared memory), checks the compiled shared memory\n"
    "against the layout model, applies the post-compile gates (spills, low_occupancy,\n"
    "unlaunchable, and ptxas's setmaxnreg_ignored and wgmma_serialized notices), and\n"
    "records every configuration as a trial of a new study in the database. Compiled cubins go\n"
    "to the compile cache: a second run of the same space compiles nothing. No GPU needed.\n"
    "\n"
    "  --jobs N             compile threads (default: the number of processors)\n"
    "  --sample N           compile a fixed sample of N survivors (seeded) instead of all\n"
    "  --seed S             seed of --sample (default 1)\n";

typedef struct compile_opts {
    long jobs, sample, seed;
    int has_sample;
} compile_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    compile_opts *o = ctx;
    switch (opt) {
    case OPT_JOBS: return cli_long("--jobs", arg, 1, 256, &o->jobs);
    case OPT_SAMPLE: o->has_sample = 1; return cli_long("--sample", arg, 1, 1000000, &o->sample);
    case OPT_SEED: return cli_long("--seed", arg, 0, 2147483647L, &o->seed);
    }
    return FATTN_EUSAGE;
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

typedef struct run_state {
    fattn_store *store;
    long long study;
    long long seq;
    const fattn_target *t;
    int progress; /* print progress: one line redrawn on a terminal, else one every CLI_PROGRESS_LOG_MS */
    int tty;
    double t0, last_print;
    int total, done, done0, rejected_after, env_errors, mismatches, compiled_ok;
    int by_reason[FATTN_R_COUNT];
    char first_env_error[320];
    /* A study taken up: the keys its earlier runs recorded, sorted. */
    char (*prior)[FATTN_KEY_MAX];
    size_t nprior, prior_cap;
} run_state;

/* fattn_store_each_trial's callback: a trial an earlier run recorded. */
static void note_prior(void *arg, const char *key, const char *status, const char *reason, int has_registers)
{
    run_state *s = arg;
    if (status && !strcmp(status, "error"))
        return; /* compiled again: the environment may be fixed now */
    if (s->nprior == s->prior_cap)
        s->prior = fattn_xrealloc(s->prior, (s->prior_cap = s->prior_cap ? 2 * s->prior_cap : 1024) * sizeof *s->prior);
    snprintf(s->prior[s->nprior++], FATTN_KEY_MAX, "%s", key ? key : "");
    int r = reason ? fattn_reason_find(reason) : 0;
    if (status && !strcmp(status, "compiled"))
        ++s->by_reason[FATTN_R_NONE];
    else if (r > FATTN_R_LAST_STATIC) {
        ++s->by_reason[r];
        ++s->rejected_after;
    }
    s->compiled_ok += has_registers;
    s->mismatches += r == FATTN_R_SMEM_MISMATCH;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(a, b);
}

static int recorded(const run_state *s, const fattn_config *cfg)
{
    if (!s->nprior)
        return 0;
    char key[FATTN_KEY_MAX];
    fattn_config_key(cfg, key);
    return bsearch(key, s->prior, s->nprior, sizeof *s->prior, by_key) != NULL;
}

static int store_trial(run_state *s, const fattn_trial_rec *r)
{
    if (fattn_store_begin(s->store))
        return FATTN_EFAIL;
    if (fattn_store_trial_add(s->store, r, NULL)) {
        fattn_store_rollback(s->store);
        return FATTN_EFAIL;
    }
    return fattn_store_commit(s->store);
}

static void progress(run_state *s, int force)
{
    double now = fattn_now_ms();
    if (!s->progress || (!force && now - s->last_print < (s->tty ? 200 : CLI_PROGRESS_LOG_MS)))
        return;
    s->last_print = now;
    /* The rate of this run's compiles (a study taken up counts its earlier ones in done). */
    double rate = (s->done - s->done0) / ((now - s->t0) / 1000.0 + 1e-9);
    double eta = rate > 0 ? (s->total - s->done) / rate : 0;
    fprintf(stderr, "%scompiled %d/%d  rejected after compile %d  errors %d  %.1f/s  ETA %dm%02ds%s",
            s->tty ? "\r  " : "fattn-tune: ", s->done, s->total, s->rejected_after, s->env_errors, rate, (int)eta / 60,
            (int)eta % 60, s->tty ? "   " : "\n");
    fflush(stderr);
}

static int on_compiled(void *arg, fattn_compile_item *it)
{
    run_state *s = arg;
    fattn_launch l; /* the family's model: its shared memory */
    it->cfg.fam->launch(&it->cfg, &s->t->shape, 0, &l);
    fattn_trial_rec r = {
        .study_id = s->study,
        .seq = s->seq++,
        .cfg = &it->cfg,
        .cache_key = it->cache_key,
        .cache_hit = it->cache_hit,
        .compile_ms = it->env_error   ? -1
                      : it->cache_hit ? 0
                                      : it->entry.compile_ms,
        .smem_model = l.smem,
    };
    if (it->env_error) {
        r.status = "error";
        r.detail = it->env_msg;
        r.cache_key = NULL;
        if (!s->env_errors++)
            snprintf(s->first_env_error, sizeof s->first_env_error, "%s", it->env_msg);
    } else {
        r.status = it->reason ? "rejected" : "compiled";
        r.reason = it->reason ? fattn_reason(it->reason)->code : NULL;
        r.detail = it->verdict.detail;
        r.res = it->entry.ok ? &it->entry.res : NULL;
        r.has_occupancy = it->has_occ;
        r.occupancy = it->occ.occupancy;
        r.blocks_per_sm = it->occ.blocks_per_sm;
        r.occupancy_limiter = it->occ.limiter;
        s->by_reason[it->reason]++;
        if (it->reason)
            ++s->rejected_after;
        if (it->entry.ok) {
            ++s->compiled_ok;
            if (it->reason == FATTN_R_SMEM_MISMATCH)
                ++s->mismatches;
        }
    }
    ++s->done;
    int rc = store_trial(s, &r);
    fattn_compile_item_release(it);
    progress(s, 0);
    return rc;
}

static void summary(const run_state *s, const fattn_batch_stats *bs, const fattn_space_verdicts *sv, double seconds)
{
    char shape[96];
    fattn_shape_format(&s->t->shape, shape, sizeof shape);
    printf("study %lld: compile of %s for %s on %s\n", s->study, s->t->space.label, shape, s->t->arch->name);
    printf("%zu configurations: %zu rejected by the static gates, %zu survive", sv->considered,
           sv->considered - sv->nsurvivors, sv->nsurvivors);
    if ((size_t)s->total < sv->nsurvivors)
        printf(", a sample of %d compiled", s->total);
    printf("\ncompiled %d (%d by NVRTC, %d from the cache) in %.1f s\n", bs->finished - bs->env_errors, bs->compiled,
           bs->cache_hits, seconds);
    if (s->nprior)
        printf("taken up: %d survivors and %zu trials in all recorded by the study's earlier run\n", s->done0,
               s->nprior);
    const char *names[] = {"status", "reason", "count"};
    const unsigned char numeric[] = {0, 0, 1};
    fattn_rows rows;
    fattn_rows_init(&rows, 3, names);
    for (int r = 1; r < FATTN_R_COUNT; ++r) {
        int n = (r <= FATTN_R_LAST_STATIC ? sv->counts[r] : 0) + s->by_reason[r];
        if (!n)
            continue;
        char count[32];
        snprintf(count, sizeof count, "%d", n);
        const char *cells[] = {"rejected", fattn_reason(r)->code, count};
        fattn_rows_add(&rows, cells, numeric);
    }
    char ok[32], err[32];
    snprintf(ok, sizeof ok, "%d", s->by_reason[FATTN_R_NONE]);
    const char *cells[] = {"compiled", "", ok};
    fattn_rows_add(&rows, cells, numeric);
    if (s->env_errors) {
        snprintf(err, sizeof err, "%d", s->env_errors);
        const char *ecells[] = {"error", "", err};
        fattn_rows_add(&rows, ecells, numeric);
    }
    printf("\n");
    fattn_rows_print(stdout, &rows, FATTN_FMT_TABLE, 0);
    fattn_rows_release(&rows);
    if (s->compiled_ok)
        printf("\nlayout check: compiled shared memory %s the layout model for %d of %d compiled configurations\n",
               s->mismatches ? "differs from" : "equals", s->mismatches ? s->mismatches : s->compiled_ok,
               s->compiled_ok);
    printf("survivors ready for the GPU: %d (fattn-tune query trials --study %lld --status compiled)\n",
           s->by_reason[FATTN_R_NONE], s->study);
}

int cmd_compile(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS,
        CLI_TARGET_OPTIONS,
        {"jobs", required_argument, NULL, OPT_JOBS},
        {"sample", required_argument, NULL, OPT_SAMPLE},
        {"seed", required_argument, NULL, OPT_SEED},
        {NULL, 0, NULL, 0},
    };
    compile_opts o = {.jobs = fattn_cpu_count(), .seed = 1};
    fattn_target t;
    fattn_kernel_src src = {0};
    char *include = NULL, *cmdline = NULL, limits[512];
    fattn_store *store = NULL;
    fattn_compile_item *items = NULL;
    fattn_space_verdicts sv = {0};
    int nsurv = 0, rc, have_src = 0;
    run_state s = {0};
    char help[4096];
    struct sigaction sa, old_int, old_term, old_hup;

    snprintf(help, sizeof help, "%s%s%s", help_head, cli_target_help, cli_common_help);
    fattn_target_init(&t);
    rc = cli_parse(argc, argv, opts, "", c, &t, handle, &o, help, NULL);
    if (rc)
        goto out;
    if ((rc = fattn_target_finish(&t, FATTN_NEED_SHAPE | FATTN_NEED_ARCH | FATTN_NEED_SPACE, "compile")))
        goto out;
    const char *dir = c->kernel_dir ? c->kernel_dir : fattn_default_kernel_dir();
    if ((rc = fattn_kernel_src_load(dir, t.space.fam->kernel_file, &src)))
        goto out;
    have_src = 1;
    if ((rc = fattn_cuda_include(&include)))
        goto out;

    /* Static gates: decided before anything is written. */
    fattn_gates_space(&t.space, t.filter_text ? &t.filter : NULL, &t.shape, t.arch, &t.lim, &sv);
    nsurv = o.has_sample ? cli_sample_survivors(sv.survivors, sv.nsurvivors, o.sample, o.seed) : (int)sv.nsurvivors;

    if ((rc = fattn_store_open(c->db_path ? c->db_path : FATTN_DEFAULT_DB, FATTN_DB_WRITE, &store)))
        goto out;
    cmdline = cli_command_line(c);
    fattn_gate_limits_json(&t.lim, limits, sizeof limits);
    char strategy[64];
    if (o.has_sample)
        snprintf(strategy, sizeof strategy, "sample of %ld survivors", o.sample);
    else
        snprintf(strategy, sizeof strategy, "all survivors");
    fattn_study_rec sr = {
        .command = "compile",
        .strategy = strategy,
        .seed = o.seed,
        .has_seed = o.has_sample,
        .shape = t.shape,
        .arch = t.arch->name,
        .nvrtc_version = fattn_nvrtc_version(),
        .space_path = t.space.label,
        .space_hash = t.space.hash,
        .space_json = t.space.json,
        .kernel_hash = src.hash,
        .family = t.space.fam->name,
        .limits_json = limits,
        .argv = cmdline,
    };
    s = (run_state){
        .store = store, .t = &t, .progress = !c->quiet, .tty = isatty(2), .t0 = fattn_now_ms(), .total = nsurv};
    /* The same command stopped before (Ctrl-C, kill -9): its study is taken
     * up, what it recorded kept. */
    long long prior = 0;
    if ((rc = fattn_store_study_unfinished(store, &sr, &prior)))
        goto out;
    if (prior) {
        if ((rc = fattn_store_study_reopen(store, prior, NULL))
            || (rc = fattn_store_each_trial(store, prior, note_prior, &s, &s.seq)))
            goto out;
        s.study = prior;
        qsort(s.prior, s.nprior, sizeof *s.prior, by_key);
        if (!c->quiet)
            fprintf(stderr, "fattn-tune: taking up study %lld, stopped before with %zu trials recorded\n", prior,
                    s.nprior);
    } else if ((rc = fattn_store_study_begin(store, &sr, &s.study))) {
        goto out;
    }

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);

    for (size_t i = 0; i < sv.n && !rc && !interrupted; ++i) {
        if (sv.v[i].reason <= 0)
            continue;
        fattn_config cfg;
        fattn_space_config(&t.space, i, &cfg);
        if (recorded(&s, &cfg))
            continue;
        fattn_trial_rec r = {.study_id = s.study,
                             .seq = s.seq++,
                             .cfg = &cfg,
                             .status = "rejected",
                             .reason = fattn_reason(sv.v[i].reason)->code,
                             .detail = sv.v[i].detail,
                             .compile_ms = -1};
        rc = store_trial(&s, &r);
    }

    fattn_batch_stats bs = {0};
    if (!rc && !interrupted) {
        items = fattn_xcalloc((size_t)(nsurv ? nsurv : 1), sizeof *items);
        int left = 0;
        for (int i = 0; i < nsurv; ++i) {
            fattn_space_config(&t.space, sv.survivors[i], &items[left].cfg);
            left += !recorded(&s, &items[left].cfg);
        }
        s.done = s.done0 = nsurv - left;
        nsurv = left;
        s.total = s.done + left;
        fattn_compile_ctx ctx = {.src = &src,
                                 .cuda_include = include,
                                 .arch = t.arch,
                                 .shape = &t.shape,
                                 .lim = &t.lim,
                                 .cache = fattn_store_compile_cache(store),
                                 .jobs = (int)o.jobs,
                                 .interrupted = &interrupted,
                                 .done = on_compiled,
                                 .done_arg = &s};
        rc = fattn_compile_batch(&ctx, items, nsurv, &bs);
        if (s.total)
            progress(&s, 1);
        if (s.progress && s.tty && s.total)
            fputc('\n', stderr);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);

    const char *status = rc ? "failed" : interrupted ? "interrupted" : "done";
    if (fattn_store_study_end(store, s.study, status) && !rc)
        rc = FATTN_EFAIL;
    if (rc)
        goto out;
    summary(&s, &bs, &sv, (fattn_now_ms() - s.t0) / 1000.0);
    if (interrupted) {
        rc = fattn_error(FATTN_EFAIL,
                         "interrupted after %d of %d compiles; study %lld keeps every trial recorded, "
                         "the compile cache every cubin: run the same command again to take it up where it stopped",
                         s.done, s.total, s.study);
    } else if (s.env_errors) {
        rc = fattn_error(FATTN_EFAIL, "%d configuration%s could not be compiled or read (first: %s)", s.env_errors,
                         s.env_errors == 1 ? "" : "s", s.first_env_error);
    } else if (s.mismatches) {
        rc = fattn_error(FATTN_EFAIL,
                         "%d compiled configuration%s differ from the layout model (a fattn-tune bug): "
                         "fattn-tune query trials --study %lld --reason smem_mismatch",
                         s.mismatches, s.mismatches == 1 ? "" : "s", s.study);
    }
out:
    for (int i = 0; items && i < nsurv; ++i)
        fattn_compile_item_release(&items[i]);
    free(items);
    free(s.prior);
    fattn_space_verdicts_release(&sv);
    free(cmdline);
    free(include);
    if (have_src)
        fattn_kernel_src_release(&src);
    fattn_store_close(&store);
    fattn_target_release(&t);
    return rc > 0 ? FATTN_OK : rc;
}
