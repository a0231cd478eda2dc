/*
 * compile.c - the compile procedure (compile.h).
 */
#include "study/compile.h"

#include <stdlib.h>
#include <string.h>

#include "compile/nvrtc.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/paths.h"

/* Progress on the log: a line redrawn in place on a terminal, otherwise a
 * whole line at least this often (ms). */
#define PROGRESS_LOG_MS 10000

typedef struct run_state {
    fattn_store *store;
    long long seq;
    const fattn_target *t;
    fattn_compile_study_report *r;
    FILE *log;
    int tty;
    double t0, last_print;
    /* A study taken up: the keys its earlier runs recorded, sorted. */
    char (*prior)[FATTN_KEY_MAX];
    size_t prior_cap;
} run_state;

/* fattn_store_each_trial's callback: a trial an earlier run recorded. */
static void note_prior(void *arg, const char *key, const char *status, const char *reason, int has_registers)
{
    run_state *s = arg;
    if (status && !strcmp(status, "error"))
        return; /* compiled again: the environment may be fixed now */
    if (s->r->nprior == s->prior_cap)
        s->prior = fattn_xrealloc(s->prior, (s->prior_cap = s->prior_cap ? 2 * s->prior_cap : 1024) * sizeof *s->prior);
    snprintf(s->prior[s->r->nprior++], FATTN_KEY_MAX, "%s", key ? key : "");
    int r = reason ? fattn_reason_find(reason) : 0;
    if (status && !strcmp(status, "compiled"))
        ++s->r->by_reason[FATTN_R_NONE];
    else if (r > FATTN_R_LAST_STATIC) {
        ++s->r->by_reason[r];
        ++s->r->rejected_after;
    }
    s->r->compiled_ok += has_registers;
    s->r->mismatches += r == FATTN_R_SMEM_MISMATCH;
}

static int by_key(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* 1 when the study's earlier run recorded `key`. */
static int recorded_key(void *arg, const char *key)
{
    const run_state *s = arg;
    return s->r->nprior && bsearch(key, s->prior, s->r->nprior, sizeof *s->prior, by_key) != NULL;
}

static int recorded(const run_state *s, const fattn_config *cfg)
{
    char key[FATTN_KEY_MAX];
    fattn_config_key(cfg, key);
    return recorded_key((void *)s, key);
}

static void progress(run_state *s, int force)
{
    double now = fattn_now_ms();
    if (!s->log || (!force && now - s->last_print < (s->tty ? 200 : PROGRESS_LOG_MS)))
        return;
    s->last_print = now;
    /* The rate of this run's compiles (a study taken up counts its earlier ones in done). */
    double rate = (s->r->done - s->r->done0) / ((now - s->t0) / 1000.0 + 1e-9);
    double eta = rate > 0 ? (s->r->total - s->r->done) / rate : 0;
    char left[24];
    fattn_format_eta(eta, left, sizeof left);
    fprintf(s->log, "%scompiled %d/%d  rejected after compile %d  errors %d  %.1f/s  ETA %s%s",
            s->tty ? "\r  " : "fattn-tune: ", s->r->done, s->r->total, s->r->rejected_after, s->r->env_errors, rate,
            left, s->tty ? "   " : "\n");
    fflush(s->log);
}

static int on_compiled(void *arg, fattn_compile_item *it)
{
    run_state *s = arg;
    fattn_launch l; /* the family's model: its shared memory */
    it->cfg.fam->launch(&it->cfg, &s->t->shape, 0, &l);
    fattn_trial_rec r = {
        .study_id = s->r->study,
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
        if (!s->r->env_errors++)
            snprintf(s->r->first_env_error, sizeof s->r->first_env_error, "%s", it->env_msg);
    } else {
        r.status = it->reason ? "rejected" : "compiled";
        r.reason = it->reason ? fattn_reason(it->reason)->code : NULL;
        r.detail = it->verdict.detail;
        r.res = it->entry.ok ? &it->entry.res : NULL;
        r.has_occupancy = it->has_occ;
        r.occupancy = it->occ.occupancy;
        r.blocks_per_sm = it->occ.blocks_per_sm;
        r.occupancy_limiter = it->occ.limiter;
        s->r->by_reason[it->reason]++;
        if (it->reason)
            ++s->r->rejected_after;
        if (it->entry.ok) {
            ++s->r->compiled_ok;
            if (it->reason == FATTN_R_SMEM_MISMATCH)
                ++s->r->mismatches;
        }
    }
    ++s->r->done;
    int rc = fattn_record_trial(s->store, &r);
    fattn_compile_item_release(it);
    progress(s, 0);
    return rc;
}

/* The study: the same command's unfinished one taken up (what it recorded
 * kept), or a new one. */
static int begin_study(run_state *s, const fattn_compile_study_opts *o, const fattn_target *t, const char *kernel_hash)
{
    fattn_compile_study_report *r = s->r;
    char limits[512], strategy[64];
    fattn_gate_limits_json(&t->lim, limits, sizeof limits);
    if (o->sample)
        snprintf(strategy, sizeof strategy, "sample of %ld survivors", o->sample);
    else
        snprintf(strategy, sizeof strategy, "all survivors");
    fattn_study_rec sr = {
        .command = "compile",
        .strategy = strategy,
        .seed = o->seed,
        .has_seed = o->sample > 0,
        .shape = t->shape,
        .arch = t->arch->name,
        .nvrtc_version = fattn_nvrtc_version(),
        .space_path = t->space.label,
        .space_hash = t->space.hash,
        .space_json = t->space.json,
        .kernel_hash = kernel_hash,
        .family = t->space.fam->name,
        .limits_json = limits,
        .argv = o->argv_text,
    };
    long long prior = 0;
    int rc = fattn_store_study_unfinished(s->store, &sr, &prior);
    if (rc || !prior)
        return rc ? rc : fattn_store_study_begin(s->store, &sr, &r->study);
    if ((rc = fattn_store_study_reopen(s->store, prior, NULL))
        || (rc = fattn_store_each_trial(s->store, prior, note_prior, s, &s->seq)))
        return rc;
    r->study = prior;
    if (r->nprior) /* (a study stopped before its first trial holds none) */
        qsort(s->prior, r->nprior, sizeof *s->prior, by_key);
    if (s->log)
        fprintf(s->log, "fattn-tune: taking up study %lld, stopped before with %zu trials recorded\n", prior,
                r->nprior);
    return FATTN_OK;
}

/* The survivors not yet recorded, through NVRTC and the post-compile gates. */
static int compile_survivors(run_state *s, const fattn_compile_study_opts *o, const fattn_kernel_src *src,
                             const char *include, int nsurv, volatile sig_atomic_t *interrupted,
                             fattn_compile_item **items, int *nitems)
{
    const fattn_target *t = s->t;
    fattn_compile_study_report *r = s->r;
    *items = fattn_xcalloc((size_t)(nsurv ? nsurv : 1), sizeof **items);
    int left = 0;
    for (int i = 0; i < nsurv; ++i) {
        fattn_space_config(&t->space, r->sv.survivors[i], &(*items)[left].cfg);
        left += !recorded(s, &(*items)[left].cfg);
    }
    *nitems = left;
    r->done = r->done0 = nsurv - left;
    r->total = r->done + left;
    fattn_compile_ctx ctx = {.src = src,
                             .cuda_include = include,
                             .arch = t->arch,
                             .shape = &t->shape,
                             .lim = &t->lim,
                             .cache = fattn_store_compile_cache(s->store),
                             .jobs = o->jobs,
                             .interrupted = interrupted,
                             .done = on_compiled,
                             .done_arg = s};
    int rc = fattn_compile_batch(&ctx, *items, left, &r->bs);
    if (r->total)
        progress(s, 1);
    if (s->log && s->tty && r->total)
        fputc('\n', s->log);
    return rc;
}

int fattn_compile_study(const fattn_compile_study_opts *o, const fattn_target *t, fattn_store **store,
                        fattn_compile_study_report *r)
{
    static volatile sig_atomic_t never;
    volatile sig_atomic_t *interrupted = o->interrupted ? o->interrupted : &never;
    fattn_kernel_src src = {0};
    fattn_compile_item *items = NULL;
    char *include = NULL;
    int rc, nitems = 0;
    run_state s = {.t = t, .r = r, .log = o->log, .tty = o->tty};

    memset(r, 0, sizeof *r);
    if ((rc = fattn_kernel_src_load(o->kernel_dir, t->space.fam->kernel_file, &src)))
        goto out;
    if ((rc = fattn_cuda_include(&include)))
        goto out;

    /* Static gates: decided before anything is written. */
    fattn_gates_space(&t->space, t->filter_text ? &t->filter : NULL, &t->shape, t->arch, &t->lim, &r->sv);
    int nsurv = o->sample ? fattn_sample_survivors(r->sv.survivors, r->sv.nsurvivors, o->sample, o->seed)
                          : (int)r->sv.nsurvivors;
    /* The first compiled and the farthest survivor (past the sample when it is one). */
    if ((rc = fattn_probe_survivors(t, &src, include, r->sv.survivors, nsurv > 1 ? (size_t)nsurv : r->sv.nsurvivors)))
        goto out;
    if (!*store && (rc = fattn_store_open(o->db_path, FATTN_DB_WRITE, store)))
        goto out;
    s.store = *store;
    r->total = nsurv;
    s.t0 = fattn_now_ms();
    if ((rc = begin_study(&s, o, t, src.hash)))
        goto out;
    if (o->guard)
        o->guard(1);
    rc = fattn_record_rejections(s.store, t, &r->sv, r->study, &s.seq, recorded_key, &s, interrupted);
    if (!rc && !*interrupted)
        rc = compile_survivors(&s, o, &src, include, nsurv, interrupted, &items, &nitems);
    r->interrupted = *interrupted != 0;
    if (o->guard)
        o->guard(0);
    const char *status = rc ? "failed" : r->interrupted ? "interrupted" : "done";
    if (fattn_store_study_end(*store, r->study, status) && !rc)
        rc = FATTN_EFAIL;
    r->seconds = (fattn_now_ms() - s.t0) / 1000.0;
out:
    for (int i = 0; items && i < nitems; ++i)
        fattn_compile_item_release(&items[i]);
    free(items);
    free(s.prior);
    free(include);
    fattn_kernel_src_release(&src);
    return rc;
}

void fattn_compile_study_report_release(fattn_compile_study_report *r)
{
    fattn_space_verdicts_release(&r->sv);
}
