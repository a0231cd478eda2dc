/*
 * check.c - the check procedure (check.h).
 */
#include "study/check.h"

#include <stdlib.h>
#include <string.h>

#include "sim/kernel.h"
#include "sim/sample.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/paths.h"

/* The jobs of --config: each key at the shape; the static gates' verdict
 * is told, not applied. */
static int config_jobs(const fattn_check_opts *o, const fattn_target *t, fattn_sim_job *jobs)
{
    for (int i = 0; i < o->nconfigs; ++i) {
        int rc = fattn_config_parse(o->configs[i], "--config", &jobs[i].cfg);
        if (rc)
            return rc;
        jobs[i].shape = t->shape;
        if (!t->arch || !o->log)
            continue;
        fattn_verdict v;
        fattn_gate_input in = {&jobs[i].cfg, &t->shape, t->arch, &t->lim};
        int r = fattn_gates_static(&in, &v, NULL);
        if (r != FATTN_R_NONE) {
            char key[FATTN_KEY_MAX];
            fattn_config_key(&jobs[i].cfg, key);
            fprintf(o->log, "fattn-tune: note: %s is rejected by the %s gate on %s (%s); checking it anyway\n", key,
                    fattn_reason(r)->code, t->arch->name, v.detail);
        }
    }
    return FATTN_OK;
}

/* The covering sample of the space for the arch. */
static int covering_jobs(const fattn_target *t, fattn_check_plan *p)
{
    fattn_sim_case *cases = NULL;
    size_t npairs = 0;
    int rc = fattn_sim_covering(&t->space, t->arch, &cases, &p->njobs, &npairs);
    if (rc)
        return rc;
    p->jobs = fattn_xcalloc(p->njobs ? p->njobs : 1, sizeof *p->jobs);
    for (size_t i = 0; i < p->njobs; ++i)
        p->jobs[i].cfg = cases[i].cfg, p->jobs[i].shape = cases[i].shape;
    free(cases);
    snprintf(p->what, sizeof p->what, "covering check of %s for %s (%zu cases cover %zu value pairs)", t->space.label,
             t->arch->name, p->njobs, npairs);
    return FATTN_OK;
}

/* Every survivor of the static gates at the shape, or a seeded sample. */
static int survivor_jobs(const fattn_check_opts *o, const fattn_target *t, const char *shape, fattn_check_plan *p)
{
    fattn_space_verdicts sv = {0};
    int rc = FATTN_OK;
    fattn_gates_space(&t->space, t->filter_text ? &t->filter : NULL, &t->shape, t->arch, &t->lim, &sv);
    p->njobs =
        o->sample ? (size_t)fattn_sample_survivors(sv.survivors, sv.nsurvivors, o->sample, o->seed) : sv.nsurvivors;
    p->jobs = fattn_xcalloc(p->njobs ? p->njobs : 1, sizeof *p->jobs);
    for (size_t i = 0; i < p->njobs; ++i) {
        fattn_space_config(&t->space, sv.survivors[i], &p->jobs[i].cfg);
        p->jobs[i].shape = t->shape;
    }
    snprintf(p->what, sizeof p->what, "check of %s of %s at %s for %s (%zu of %zu configurations survive the gates)",
             o->sample ? "a sample of the survivors" : "every survivor", t->space.label, shape, t->arch->name,
             sv.nsurvivors, sv.considered);
    if (!p->njobs)
        rc = fattn_error(FATTN_EUSAGE,
                         "check: no configuration of %s survives the static gates at %s on %s; see fattn-tune gates",
                         t->space.label, shape, t->arch->name);
    fattn_space_verdicts_release(&sv);
    return rc;
}

int fattn_check_plan_make(const fattn_check_opts *o, const fattn_target *t, fattn_check_plan *p)
{
    char shape[96] = "";
    int rc;
    memset(p, 0, sizeof *p);
    p->mode = o->covering ? "covering" : o->nconfigs ? "config" : o->sample ? "sample" : "all";
    if (t->shape_text)
        fattn_shape_format(&t->shape, shape, sizeof shape);
    if (o->covering)
        return covering_jobs(t, p);
    if (!o->nconfigs)
        return survivor_jobs(o, t, shape, p);
    p->jobs = fattn_xcalloc((size_t)o->nconfigs, sizeof *p->jobs);
    if ((rc = config_jobs(o, t, p->jobs)))
        return rc;
    p->njobs = (size_t)o->nconfigs;
    snprintf(p->what, sizeof p->what, "check of %d given configuration%s at %s", o->nconfigs,
             o->nconfigs == 1 ? "" : "s", shape);
    return FATTN_OK;
}

void fattn_check_plan_release(fattn_check_plan *p)
{
    free(p->jobs);
    memset(p, 0, sizeof *p);
}

typedef struct check_state {
    fattn_store *store;
    const fattn_check_opts *o;
    const fattn_sim_job *jobs;
    fattn_check_report *r;
} check_state;

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

static int on_result(void *arg, size_t i, const fattn_sim_check *c)
{
    check_state *s = arg;
    fattn_check_report *r = s->r;
    const fattn_sim_job *job = &s->jobs[i];
    char key[FATTN_KEY_MAX];
    fattn_config_key(&job->cfg, key);
    fattn_sim_check_rec rec = {
        .run_id = r->run,
        .seq = (long long)i,
        .kernel_hash = r->kernel_hash,
        .config_key = key,
        .shape = job->shape,
        .check = c,
    };
    if (fattn_store_sim_check_add(s->store, &rec))
        return FATTN_EFAIL;
    if (c->cache_rebuilt && s->o->log)
        fprintf(s->o->log,
                "fattn-tune: simulator cache: the host build of %s was not what was built (size or SHA-256 differ "
                "from its record, or none); built again\n",
                key);
    fattn_check_outcome *o = &r->out[i];
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
    ++r->done;
    if (c->compile_ms > 0)
        ++r->builds;
    r->cache_hits += c->cache_hit != 0;
    if (!fattn_sim_check_passed(c))
        ++r->failed;
    r->defects += fattn_sim_verdict_defect(c->verdict);
    if (s->o->each)
        s->o->each(s->o->each_arg, i, job, c);
    return 0;
}

int fattn_check_run(const fattn_check_opts *o, const fattn_target *t, const fattn_check_plan *p, fattn_store **store,
                    fattn_check_report *r)
{
    static volatile sig_atomic_t never;
    fattn_kernel_src src = {0};
    char *cache = NULL, compiler[256];
    int rc;

    memset(r, 0, sizeof *r);
    /* One kernel per run: the family's of every job. */
    for (size_t i = 1; i < p->njobs; ++i)
        if (p->jobs[i].cfg.fam != p->jobs[0].cfg.fam)
            return fattn_error(FATTN_EUSAGE,
                               "check --config: %s and %s configurations in one run; check one family at a time",
                               p->jobs[0].cfg.fam->name, p->jobs[i].cfg.fam->name);
    if ((rc = fattn_kernel_src_load(o->kernel_dir, p->jobs[0].cfg.fam->kernel_file, &src)))
        goto out;
    snprintf(r->kernel_hash, sizeof r->kernel_hash, "%s", src.hash);
    if ((rc = fattn_sim_compiler_identity(compiler, sizeof compiler)))
        goto out;
    cache = fattn_sim_cache_dir();
    if ((rc = fattn_sim_cache_private(cache))
        || (!*store && (rc = fattn_store_open(o->db_path, FATTN_DB_WRITE, store))))
        goto out;
    fattn_sim_run_rec rr = {
        .mode = p->mode,
        .command = o->argv_text,
        .kernel_hash = src.hash,
        .space_path = o->nconfigs ? NULL : t->space.label,
        .space_hash = o->nconfigs ? NULL : t->space.hash,
        .arch = t->arch ? t->arch->name : NULL,
        .seed = o->seed,
        .compiler = compiler,
    };
    r->out = fattn_xcalloc(p->njobs ? p->njobs : 1, sizeof *r->out);
    check_state s = {.store = *store, .o = o, .jobs = p->jobs, .r = r};
    double t0 = fattn_now_ms();
    if ((rc = fattn_store_sim_run_begin(*store, &rr, &r->run)))
        goto out;
    if (o->guard)
        o->guard(1);
    fattn_sim_pool pool = {
        .src = &src,
        .cache_dir = cache,
        .seed = (uint64_t)o->seed,
        .jobs = (int)((size_t)o->jobs < p->njobs ? (size_t)o->jobs : p->njobs),
        .timeout_ms = o->timeout_s * 1000.0,
        .interrupted = o->interrupted ? o->interrupted : &never,
        .on_result = on_result,
        .arg = &s,
    };
    rc = fattn_sim_pool_run(&pool, p->jobs, p->njobs);
    if (o->guard)
        o->guard(0);
    r->interrupted = rc > 0;
    const char *status = rc < 0 ? "failed" : rc > 0 ? "interrupted" : "done";
    if (fattn_store_sim_run_end(*store, r->run, status) && !rc)
        rc = FATTN_EFAIL;
    if (rc > 0)
        rc = FATTN_OK;
    r->seconds = (fattn_now_ms() - t0) / 1000.0;
out:
    free(cache);
    fattn_kernel_src_release(&src);
    return rc;
}

void fattn_check_report_release(fattn_check_report *r)
{
    free(r->out);
    r->out = NULL;
}
