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

/* A landscape's arch, shape, mask and family are its own: --arch and
 * --shape default to them (the texts kept in the caller's buffers; the
 * first landscape's, of several), and a disagreeing --arch is refused here
 * (the shape by the evaluator, which compares all of it); *fam is its
 * family. */
static int replay_target(const char *path, fattn_target *t, char *shape, size_t nshape, char *arch, size_t narch,
                         const fattn_family **fam)
{
    fattn_landscape land;
    int rc = fattn_landscape_load(path, &land);
    if (rc)
        return rc;
    *fam = land.fam;
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
    else if (*land.arch && t->arch_name == arch && strcmp(arch, land.arch)) /* the first landscape's */
        rc = fattn_error(FATTN_EUSAGE,
                         "--evaluator replay:%s: measured on %s, and the first landscape on %s; expected the "
                         "landscapes of one arch",
                         path, land.arch, arch);
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

/* The landscapes given (o->replay), each of a family of its own: their
 * shape and arch into the target, their families' names into defaults. */
static int replay_targets(const fattn_search_opts *o, fattn_target *t, fattn_search_report *r,
                          const fattn_family **land_fam, char *defaults, size_t n)
{
    size_t used = 0;
    for (int i = 0; i < o->nreplay; ++i) {
        int rc = replay_target(o->replay[i], t, r->land_shape, sizeof r->land_shape, r->land_arch, sizeof r->land_arch,
                               &land_fam[i]);
        if (rc)
            return rc;
        for (int j = 0; j < i; ++j)
            if (land_fam[j] == land_fam[i])
                return fattn_error(FATTN_EUSAGE,
                                   "--evaluator replay:%s: a second landscape of the %s family (replay:%s); expected "
                                   "one landscape per family",
                                   o->replay[i], land_fam[i]->name, o->replay[j]);
        used += (size_t)snprintf(defaults + used, n - used, "%s%s", i ? "," : "", land_fam[i]->name);
    }
    return FATTN_OK;
}

/* Each family's evaluator: its landscape's (every landscape serving a
 * family of the study, unless the filter left its family out and the user
 * `named` none), or the one GPU evaluator for all. */
static int open_evaluators(const fattn_search_opts *o, fattn_search_report *r, const fattn_family **land_fam, int named,
                           const fattn_measure *m, const char *include, fattn_evaluator **ev, fattn_evaluator **dev_ev)
{
    const fattn_targets *ts = &r->ts;
    int rc;
    if (!o->nreplay) {
        if ((rc = o->ndevices > 1
                      ? fattn_open_gpu_evaluators(&ts->t[0], m, o->kernel_dir, include, o->devices, o->ndevices, dev_ev)
                      : fattn_open_gpu_evaluator(&ts->t[0], m, o->kernel_dir, include, &ev[0])))
            return rc;
        if (o->ndevices > 1)
            ev[0] = dev_ev[0];
        for (int k = 1; k < ts->n; ++k)
            ev[k] = ev[0];
        return FATTN_OK;
    }
    for (int i = 0; i < o->nreplay; ++i) {
        int k = 0;
        while (k < ts->n && ts->t[k].space.fam != land_fam[i])
            ++k;
        if (k == ts->n && !named)
            continue; /* its family left out by the filter (a note says so) */
        if (k == ts->n) {
            char names[128];
            fattn_targets_names(ts, names, sizeof names);
            return fattn_error(FATTN_EUSAGE,
                               "--evaluator replay:%s: a landscape of the %s family, which the study does not "
                               "search (%s); expected a landscape of each family searched",
                               o->replay[i], land_fam[i]->name, names);
        }
    }
    for (int k = 0; k < ts->n; ++k) {
        int i = 0;
        while (i < o->nreplay && land_fam[i] != ts->t[k].space.fam)
            ++i;
        if (i == o->nreplay)
            return fattn_error(FATTN_EUSAGE,
                               "%s: the %s family has no landscape to replay; expected --evaluator replay:FILE of it "
                               "too, or a study without it (--family)",
                               ts->t[k].space.label, ts->t[k].space.fam->name);
        if ((rc = fattn_evaluator_open_replay(o->replay[i], &ts->t[k].shape, ts->t[k].space.fam, &ev[k])))
            return rc;
    }
    return FATTN_OK;
}

/* The shared-memory limit a resumed study's family was searched under
 * (a family's default may have changed since: a study of the wgmma family's
 * space from before it took the opt-in maximum by default goes on at the
 * limit it began with), unless --smem-limit was given. */
static void resumed_limits(fattn_target *t, const char *json)
{
    fattn_gate_limits stored;
    char missing[256];
    if (!(t->given & FATTN_GIVEN_SMEM_LIMIT) && fattn_gate_limits_parse(json, &stored, missing, sizeof missing) > 0
        && !strstr(missing, "smem_limit"))
        t->lim.smem_limit = stored.smem_limit;
}

/* The study's families against the resumed study's: the same families in
 * the same order, each with the same space and kernel source. */
static int resume_check(const fattn_resume *res, const fattn_targets *ts, const fattn_kernel_src *src)
{
    if (res->nfam != ts->n) {
        char names[128];
        fattn_targets_names(ts, names, sizeof names);
        return fattn_error(FATTN_EUSAGE,
                           "--resume %lld: the study searched %d famil%s; this fattn-tune would search %d (%s); start "
                           "a new search",
                           res->study, res->nfam, res->nfam == 1 ? "y" : "ies", ts->n, names);
    }
    for (int k = 0; k < ts->n; ++k) {
        const fattn_space *sp = &ts->t[k].space;
        if (strcmp(res->fam[k].family, sp->fam->name))
            return fattn_error(FATTN_EUSAGE, "--resume %lld: the study's family %d is %s, not %s; start a new search",
                               res->study, k + 1, res->fam[k].family, sp->fam->name);
        if (strcmp(res->fam[k].space_hash, sp->hash) || strcmp(res->fam[k].kernel_hash, src[k].hash))
            return fattn_error(
                FATTN_EUSAGE, "--resume %lld: the %s%s changed since the study began; start a new search", res->study,
                ts->n > 1 ? sp->fam->name : "",
                strcmp(res->fam[k].space_hash, sp->hash) ? (ts->n > 1 ? " family's space file" : "space file")
                : ts->n > 1                              ? " family's kernel source"
                                                         : "kernel source");
    }
    return FATTN_OK;
}

int fattn_search_run(const fattn_search_opts *o, fattn_target *t, fattn_store **store, fattn_search_report *r)
{
    const fattn_resume *res = o->resume;
    fattn_kernel_src src[FATTN_MAX_FAMILIES] = {0};
    fattn_evaluator *ev[FATTN_MAX_FAMILIES] = {0}, *dev_ev[FATTN_TUNE_MAX_DEVICES] = {0};
    const fattn_family *land_fam[FATTN_MAX_FAMILIES] = {0};
    fattn_gpu gpu = {0};
    fattn_measure m = o->measure;
    char *include = NULL, limits[FATTN_MAX_FAMILIES][512], defaults[256] = "";
    int rc, nfam = 0;

    memset(r, 0, sizeof *r);
    r->stop = FATTN_TUNE_INTERRUPTED;
    r->ndev = o->ndevices > 1 ? o->ndevices : 1;
    for (int d = 0; d < o->ndevices; ++d) {
        size_t used = strlen(r->devices);
        snprintf(r->devices + used, sizeof r->devices - used, "%s%d", d ? "," : "", o->devices[d]);
    }
    if (o->ndevices > FATTN_TUNE_MAX_DEVICES)
        return fattn_error(FATTN_EUSAGE, "--devices %s: at most %d GPUs in one search", r->devices,
                           FATTN_TUNE_MAX_DEVICES);
    if (o->ndevices > 1 && o->nreplay)
        return fattn_error(FATTN_EUSAGE,
                           "--devices %s: a replayed landscape (--evaluator replay:FILE) runs on no GPU; expected "
                           "--devices with the GPU evaluator",
                           r->devices);
    if (o->ndevices >= 1)
        t->device = o->devices[0]; /* the arch from the first */
    /* The GPU first: without one (and no landscape to replay) nothing else matters. */
    if (!o->nreplay
        && (rc = fattn_gpu_arch(t, &gpu, "search",
                                "; without one, --evaluator replay:FILE replays a measured landscape")))
        goto out;
    if ((rc = replay_targets(o, t, r, land_fam, defaults, sizeof defaults)))
        goto out;
    char from[600];
    snprintf(from, sizeof from, "--evaluator replay:%.200s%s", o->nreplay ? o->replay[0] : "",
             o->nreplay > 1 ? " and the other landscapes" : "");
    /* A resumed study searches its own families (one written before a
     * search took every family of the arch, the one it had). */
    if (res && !t->nspace_paths && !t->family_text) {
        size_t used = 0;
        for (int k = 0; k < res->nfam; ++k)
            used += (size_t)snprintf(defaults + used, sizeof defaults - used, "%s%s", k ? "," : "", res->fam[k].family);
        snprintf(from, sizeof from, "--resume %lld", res->study);
    }
    if ((rc = fattn_targets_finish(t, FATTN_NEED_SHAPE | FATTN_NEED_ARCH, o->nreplay || res ? defaults : NULL, from,
                                   "search", &r->ts, &r->notes)))
        goto out;
    nfam = r->ts.n;
    if (res) /* each family's limits as the study stored them, for those not given now */
        for (int k = 0; k < nfam && k < res->nfam; ++k)
            resumed_limits(&r->ts.t[k], res->fam[k].limits_json);
    fattn_target *t0 = &r->ts.t[0];
    const uint64_t asked = t0->lim.mem_budget;
    for (int k = 0; k < nfam; ++k) /* the first plans the timing sets, every family takes them */
        fattn_measure_plan(&m, &r->ts.t[k], &gpu);

    for (int k = 0; k < nfam; ++k) {
        if ((rc = fattn_kernel_src_load(o->kernel_dir, r->ts.t[k].space.fam->kernel_file, &src[k])))
            goto out;
        fattn_hw_lookup(o->kernel_dir, r->ts.t[k].space.fam->name, src[k].hash, &r->hw[k]);
    }
    if ((rc = fattn_cuda_include(&include)))
        goto out;
    /* Again: the timing sets are planned now, and the budget held to the GPU's memory. */
    if ((rc = fattn_target_check_memory(t0, t0->lim.mem_budget < asked)))
        goto out;
    for (int k = 0; k < nfam; ++k) {
        fattn_target *tk = &r->ts.t[k];
        fattn_gates_space(&tk->space, tk->filter_text ? &tk->filter : NULL, &tk->shape, tk->arch, &tk->lim, &r->sv[k]);
        if ((rc = fattn_probe_survivors(tk, &src[k], include, r->sv[k].survivors, r->sv[k].nsurvivors)))
            goto out;
    }

    /* The evaluators: a worker initialized on the GPU, or the landscapes. */
    if ((rc = open_evaluators(o, r, land_fam, t->family_text || t->nspace_paths, &m, include, ev, dev_ev)))
        goto out;
    snprintf(r->device, sizeof r->device, "%s", ev[0]->device);
    snprintf(r->method, sizeof r->method, "%s", ev[0]->method);

    if (res && (rc = resume_check(res, &r->ts, src)))
        goto out;
    /* A study is measured on one GPU model: resumed on another GPU, the same model. */
    if (res && !o->nreplay && *res->device && strcmp(res->device, ev[0]->device) != 0) {
        rc = fattn_error(FATTN_EUSAGE,
                         "search --resume %lld: the study was measured on %s, this GPU is %s; resume it on a GPU of "
                         "its model (--device N), or start a new study",
                         res->study, res->device, ev[0]->device);
        goto out;
    }
    if (!*store && (rc = fattn_store_open(o->db_path, FATTN_DB_WRITE, store)))
        goto out;
    fattn_notes_print(&r->notes, o->log ? o->log : stderr);
    fattn_study_family sf[FATTN_MAX_FAMILIES];
    for (int k = 0; k < nfam; ++k) {
        const fattn_target *tk = &r->ts.t[k];
        if ((rc = skip_sim_defects(*store, tk, &src[k], &r->sv[k], &r->sim_skipped[k])))
            goto out;
        if (r->sim_skipped[k] && o->log)
            fprintf(o->log,
                    "fattn-tune: skipping %zu%s%s configuration%s the simulator found defective with this kernel "
                    "source (fattn-tune query sim)\n",
                    r->sim_skipped[k], nfam > 1 ? " " : "", nfam > 1 ? tk->space.fam->name : "",
                    r->sim_skipped[k] == 1 ? "" : "s");
        fattn_gate_limits_json(&tk->lim, limits[k], sizeof limits[k]);
        sf[k] = (fattn_study_family){.family = tk->space.fam->name,
                                     .space_path = tk->space.label,
                                     .space_hash = tk->space.hash,
                                     .space_json = tk->space.json,
                                     .kernel_hash = src[k].hash,
                                     .limits_json = limits[k]};
    }
    char driver[32] = "";
    if (gpu.present)
        snprintf(driver, sizeof driver, "%d", gpu.info.driver_version);
    fattn_study_rec sr = {
        .command = "search",
        .strategy = o->strategy->name,
        .seed = m.seed,
        .has_seed = 1,
        .shape = t0->shape,
        .arch = t0->arch->name,
        .device = ev[0]->device,
        .device_json = ev[0]->device_json,
        .driver_version = gpu.present ? driver : NULL,
        .nvrtc_version = fattn_nvrtc_version(),
        .space_path = sf[0].space_path,
        .space_hash = sf[0].space_hash,
        .space_json = sf[0].space_json,
        .kernel_hash = sf[0].kernel_hash,
        .family = sf[0].family,
        .limits_json = sf[0].limits_json,
        .argv = o->argv_text,
        .evaluator = o->nreplay ? "replay" : "gpu",
        .timing_method = ev[0]->method,
        .args_json = o->args_json,
        .campaign_uuid = o->campaign_uuid,
        .campaign_row = o->campaign_row,
        .families = sf,
        .nfamilies = nfam,
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
    for (int k = 0; k < nfam && !rc && !*interrupted; ++k)
        rc = fattn_record_rejections(*store, &r->ts.t[k], &r->sv[k], r->study, &seq, res ? resumed_key : NULL,
                                     (void *)res, interrupted);
    if (!rc && !*interrupted) {
        fattn_compile_ctx cc[FATTN_MAX_FAMILIES];
        fattn_tune_family fams[FATTN_MAX_FAMILIES];
        for (int k = 0; k < nfam; ++k) {
            const fattn_target *tk = &r->ts.t[k];
            cc[k] = (fattn_compile_ctx){.src = &src[k],
                                        .cuda_include = include,
                                        .arch = tk->arch,
                                        .shape = &tk->shape,
                                        .lim = &tk->lim,
                                        .cache = fattn_store_compile_cache(*store),
                                        .jobs = o->jobs};
            fams[k] = (fattn_tune_family){.space = &tk->space, .sv = &r->sv[k], .cc = &cc[k], .ev = ev[k]};
        }
        fattn_tune_ctx tc = {
            .fams = fams,
            .nfam = nfam,
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
            .ndev = r->ndev,
            .dev_ev = dev_ev,
            .rerun = res ? (const char *const *)res->running : NULL,
            .nrerun = res ? res->nrunning : 0,
            .modelled_costs = o->nreplay > 0,
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
    for (int k = FATTN_MAX_FAMILIES - 1; k >= 0; --k) { /* the GPU's, ev[0], serves every family: closed last */
        if ((k == 0 && ev[0] != dev_ev[0]) || (k && ev[k] != ev[0]))
            fattn_evaluator_close(&ev[k]);
        fattn_kernel_src_release(&src[k]);
    }
    for (int d = 0; d < FATTN_TUNE_MAX_DEVICES; ++d)
        fattn_evaluator_close(&dev_ev[d]);
    free(include);
    return rc;
}

void fattn_search_report_release(fattn_search_report *r)
{
    for (int k = 0; k < FATTN_MAX_FAMILIES; ++k)
        fattn_space_verdicts_release(&r->sv[k]);
    fattn_targets_release(&r->ts);
}
