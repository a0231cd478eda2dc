/*
 * bench.c - the bench procedure (bench.h).
 */
#include "bench/bench.h"

#include <stdlib.h>
#include <string.h>

#include "compile/nvrtc.h"
#include "tune/tune.h"
#include "util/err.h"
#include "util/paths.h"

/* The configuration, and where the trial's is: its study, the notes. */
static int configuration(const fattn_bench_opts *o, fattn_target *t, fattn_store *s, fattn_study_info *st,
                         fattn_config *cfg, char *key)
{
    int rc;
    if (o->trial) {
        fattn_trial_cand cand = {0};
        if (!s)
            return fattn_error(FATTN_EUSAGE, "bench --trial %lld: no database to read it from", o->trial);
        if ((rc = fattn_store_trial_cand(s, o->trial, "--trial ", &cand, st)))
            return rc;
        snprintf(key, FATTN_KEY_MAX, "%s", cand.key);
    }
    if ((rc = fattn_config_parse(o->trial ? key : o->config, o->trial ? "--trial" : "bench", cfg)))
        return rc;
    fattn_config_key(cfg, key);
    if (!o->trial && (rc = fattn_target_finish(t, FATTN_NEED_SHAPE, "bench")))
        return rc;
    if (o->baseline_cudnn && (o->trial ? st->shape.causal : t->shape.causal))
        return fattn_error(FATTN_EUSAGE, "--baseline cudnn: cuDNN's fused attention takes no causal mask; expected a "
                                         "non-causal shape");
    return FATTN_OK;
}

int fattn_bench_run(const fattn_bench_opts *o, fattn_target *t, fattn_store *s, FILE *log, fattn_bench_report *r)
{
    fattn_gpu gpu = {0};
    fattn_kernel_src src = {0};
    fattn_compile_item item;
    fattn_evaluator *ev = NULL;
    fattn_measure m = o->measure;
    fattn_study_info st = {0};
    fattn_notes notes = {0};
    fattn_config cfg;
    char *include = NULL;
    int rc;

    memset(r, 0, sizeof *r);
    memset(&item, 0, sizeof item);
    if ((rc = configuration(o, t, s, &st, &cfg, r->key)) || (rc = fattn_gpu_arch(t, &gpu, "bench", NULL)))
        goto out;
    if ((rc = fattn_kernel_src_load(o->kernel_dir, cfg.fam->kernel_file, &src)))
        goto out;
    /* A stored trial is re-gated and re-compiled as its study searched its
     * family; a configuration given, under its family's limits. */
    if (o->trial)
        fattn_study_info_as(&st, cfg.fam, &st);
    if (o->trial ? (rc = fattn_study_kernel(&src, &st, o->allow_kernel, "bench --trial", &notes))
                       || (rc = fattn_study_target(t, &st, t->arch_name, o->allow_arch, "bench --trial", &notes))
                 : (rc = fattn_target_finish(t, FATTN_NEED_ARCH, "bench")))
        goto out;
    if (!o->trial)
        fattn_target_family_limits(t, cfg.fam);
    fattn_measure_plan(&m, t, &gpu);

    /* The gates, then NVRTC: bench runs only what search would run. */
    if ((rc = fattn_gates_pass(&cfg, t, r->key)) || (rc = fattn_cuda_include(&include)))
        goto out;
    fattn_compile_ctx cc = {
        .src = &src, .cuda_include = include, .arch = t->arch, .shape = &t->shape, .lim = &t->lim, .jobs = 1};
    item.cfg = cfg;
    if ((rc = fattn_compile_pass(&cc, r->key, &item)))
        goto out;
    if (log)
        fattn_notes_print(&notes, log);

    if ((rc = fattn_open_gpu_evaluator(t, &m, o->kernel_dir, include, &ev)))
        goto out;
    r->shape = t->shape;
    snprintf(r->arch, sizeof r->arch, "%s", t->arch->name);
    snprintf(r->device, sizeof r->device, "%s", ev->device);
    snprintf(r->method, sizeof r->method, "%s", ev->method);
    uint64_t seed = fattn_numerics_seed((uint64_t)m.seed, 0);
    fattn_eval_request req = {
        &cfg, r->key, item.entry.cubin, item.entry.cubin_size, item.entry.res.smem_dynamic, item.entry.res.threads,
        seed, NULL};
    if ((rc = fattn_evaluate(ev, &req, &r->res)))
        goto out;
    if (o->baseline_cudnn) {
        fattn_eval_request breq = {&cfg, "baseline-cudnn", NULL, 0, 0, 0, seed, "cudnn"};
        rc = fattn_evaluate(ev, &breq, &r->base);
    }
out:
    fattn_evaluator_close(&ev);
    fattn_compile_item_release(&item);
    free(include);
    fattn_kernel_src_release(&src);
    return rc;
}

void fattn_bench_report_release(fattn_bench_report *r)
{
    fattn_eval_result_release(&r->res);
    fattn_eval_result_release(&r->base);
}
