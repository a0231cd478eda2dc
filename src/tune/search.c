/*
 * search.c - the search procedure (search.h).
 */
#include "tune/search.h"

#include <stdlib.h>
#include <string.h>

#include "compile/nvrtc.h"
#include "run/landscape.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/paths.h"

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

/* 1 when the resumed study holds a trial of `key`. */
static int resumed_key(void *arg, const char *key)
{
    return fattn_resume_has(arg, key);
}

/* Where this run's time went, stored with the study (docs/schema.md, v11). */
static int last_run(fattn_store *store, const fattn_search_report *r)
{
    static const char *const stops[] = {
        [FATTN_TUNE_EXHAUSTED] = "exhausted",
        [FATTN_TUNE_TRIALS] = "trials",
        [FATTN_TUNE_BUDGET] = "budget",
        [FATTN_TUNE_INTERRUPTED] = "interrupted",
    };
    const fattn_tune_progress *p = &r->p;
    char json[512];
    snprintf(json, sizeof json,
             "{\"stop\":\"%s\",\"run_ms\":%.1f,\"startup_ms\":%.1f,\"wait_ms\":%.1f,\"eval_ms\":%.1f,"
             "\"strategy_ms\":%.1f,\"store_ms\":%.1f,\"abandoned_compiles\":%d}",
             stops[r->stop], r->run_ms, r->startup_ms, p->wait_ms, p->eval_ms, p->strategy_ms, p->store_ms,
             p->abandoned);
    return fattn_store_study_last_run(store, r->study, json);
}

int fattn_search_run(const fattn_search_opts *o, fattn_target *t, fattn_store **store, fattn_search_report *r)
{
    const fattn_resume *res = o->resume;
    fattn_kernel_src src = {0};
    fattn_evaluator *ev = NULL;
    fattn_gpu gpu = {0};
    fattn_measure m = o->measure;
    char *include = NULL, limits[512];
    int rc;

    memset(r, 0, sizeof *r);
    r->stop = FATTN_TUNE_INTERRUPTED;
    /* The GPU first: without one (and no landscape to replay) nothing else matters. */
    if (!o->replay
        && (rc = fattn_gpu_arch(t, &gpu, "search",
                                "; without one, --evaluator replay:FILE replays a measured landscape")))
        goto out;
    if (o->replay
        && (rc = replay_target(o->replay, t, r->land_shape, sizeof r->land_shape, r->land_arch, sizeof r->land_arch)))
        goto out;
    if ((rc = fattn_target_finish(t, FATTN_NEED_SHAPE | FATTN_NEED_SPACE, "search"))
        || (rc = fattn_target_finish(t, FATTN_NEED_ARCH, "search")))
        goto out;
    const uint64_t asked = t->lim.mem_budget;
    fattn_measure_plan(&m, t, &gpu);

    if ((rc = fattn_kernel_src_load(o->kernel_dir, t->space.fam->kernel_file, &src)))
        goto out;
    if ((rc = fattn_cuda_include(&include)))
        goto out;
    /* Again: the timing sets are planned now, and the budget held to the GPU's memory. */
    if ((rc = fattn_target_check_memory(t, t->lim.mem_budget < asked)))
        goto out;
    fattn_gates_space(&t->space, t->filter_text ? &t->filter : NULL, &t->shape, t->arch, &t->lim, &r->sv);
    if ((rc = fattn_probe_survivors(t, &src, include, r->sv.survivors, r->sv.nsurvivors)))
        goto out;

    /* The evaluator: a worker initialized on the GPU, or the landscape. */
    if ((rc = o->replay ? fattn_evaluator_open_replay(o->replay, &t->shape, t->space.fam, &ev)
                        : fattn_open_gpu_evaluator(t, &m, o->kernel_dir, include, &ev)))
        goto out;
    snprintf(r->device, sizeof r->device, "%s", ev->device);
    snprintf(r->method, sizeof r->method, "%s", ev->method);

    if (res && (strcmp(res->space_hash, t->space.hash) || strcmp(res->kernel_hash, src.hash))) {
        rc = fattn_error(FATTN_EUSAGE, "--resume %lld: the %s changed since the study began; start a new search",
                         res->study, strcmp(res->space_hash, t->space.hash) ? "space file" : "kernel source");
        goto out;
    }
    if (!*store && (rc = fattn_store_open(o->db_path, FATTN_DB_WRITE, store)))
        goto out;
    if ((rc = skip_sim_defects(*store, t, &src, &r->sv, &r->sim_skipped)))
        goto out;
    if (r->sim_skipped && o->log)
        fprintf(o->log,
                "fattn-tune: skipping %zu configuration%s the simulator found defective with this kernel source "
                "(fattn-tune query sim)\n",
                r->sim_skipped, r->sim_skipped == 1 ? "" : "s");
    fattn_gate_limits_json(&t->lim, limits, sizeof limits);
    char driver[32] = "";
    if (gpu.present)
        snprintf(driver, sizeof driver, "%d", gpu.info.driver_version);
    fattn_study_rec sr = {
        .command = "search",
        .strategy = o->strategy->name,
        .seed = m.seed,
        .has_seed = 1,
        .shape = t->shape,
        .arch = t->arch->name,
        .device = ev->device,
        .device_json = ev->device_json,
        .driver_version = gpu.present ? driver : NULL,
        .nvrtc_version = fattn_nvrtc_version(),
        .space_path = t->space.label,
        .space_hash = t->space.hash,
        .space_json = t->space.json,
        .kernel_hash = src.hash,
        .family = t->space.fam->name,
        .limits_json = limits,
        .argv = o->argv_text,
        .evaluator = o->replay ? "replay" : "gpu",
        .timing_method = ev->method,
        .args_json = o->args_json,
    };
    static volatile sig_atomic_t never;
    volatile sig_atomic_t *interrupted = o->interrupted ? o->interrupted : &never;
    long long seq = res ? res->next_seq : 0;
    const double tc_spent = res ? res->search_ms : 0;
    r->study = res ? res->study : 0;
    if ((rc = res ? fattn_store_study_reopen(*store, r->study, o->args_json)
                  : fattn_store_study_begin(*store, &sr, &r->study)))
        goto out;
    if (o->guard)
        o->guard(1);
    const double run0 = o->started_ms > 0 ? o->started_ms : fattn_now_ms(); /* the run's time, as the budget's */
    rc = fattn_record_rejections(*store, t, &r->sv, r->study, &seq, res ? resumed_key : NULL, (void *)res, interrupted);
    if (!rc && !*interrupted) {
        fattn_compile_ctx cc = {.src = &src,
                                .cuda_include = include,
                                .arch = t->arch,
                                .shape = &t->shape,
                                .lim = &t->lim,
                                .cache = fattn_store_compile_cache(*store),
                                .jobs = o->jobs};
        const fattn_tune_family fam = {.space = &t->space, .sv = &r->sv, .cc = &cc, .ev = ev};
        fattn_tune_ctx tc = {
            .fams = &fam,
            .nfam = 1,
            .store = *store,
            .study = r->study,
            .seq = &seq,
            .strategy = o->strategy,
            .seed = (uint64_t)m.seed,
            .max_trials = o->trials,
            .deadline_ms = o->budget_ms > 0 ? o->started_ms + o->budget_ms : 0,
            .t0_ms = run0,
            .spent_ms = tc_spent,
            .prior = res ? res->prior : NULL,
            .nprior = res ? res->nprior : 0,
            .ahead = 2 * o->jobs,
            .interrupted = interrupted,
            .progress = o->progress,
            .progress_arg = o->progress_arg,
        };
        r->startup_ms = fattn_now_ms() - tc.t0_ms;
        rc = fattn_tune_run(&tc, &r->p, &r->stop);
        if (o->progress)
            o->progress(o->progress_arg, NULL);
    }
    if (o->guard)
        o->guard(0);
    const char *status = rc ? "failed" : r->stop == FATTN_TUNE_INTERRUPTED ? "interrupted" : "done";
    r->ended_ms = fattn_now_ms();
    r->run_ms = r->ended_ms - run0;
    /* Where the run's time went, the study's time to the end of this run
     * (trials update it as they are stored; the end may come later), and
     * the study's end, each written whatever became of the others. */
    int failed = last_run(*store, r) != 0;
    failed |= r->startup_ms > 0 && fattn_store_study_time(*store, r->study, tc_spent + r->run_ms) != 0;
    failed |= fattn_store_study_end(*store, r->study, status) != 0;
    if (failed && !rc)
        rc = FATTN_EFAIL;
out:
    fattn_evaluator_close(&ev);
    free(include);
    fattn_kernel_src_release(&src);
    return rc;
}

void fattn_search_report_release(fattn_search_report *r)
{
    fattn_space_verdicts_release(&r->sv);
}
