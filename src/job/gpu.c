/*
 * gpu.c - the GPU a procedure measures on: the probe that gives the arch,
 * and the GPU evaluator (a worker initialized on the device with the
 * reference kernel) (job.h).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "compile/kernel_src.h"
#include "compile/nvrtc.h"
#include "job/job.h"
#include "run/engine.h"
#include "run/worker.h"
#include "util/err.h"
#include "util/paths.h"

int fattn_gpu_arch(fattn_target *t, fattn_gpu *g, const char *cmd, const char *without)
{
    char why[320];
    memset(g, 0, sizeof *g);
    /* The fake engine of the tests answers without a GPU, as one of the
     * arch its hook names, if any. */
    if (getenv("FATTN_WORKER_HOOK")) {
        char arch[16];
        const fattn_arch *a = fattn_fake_hook("arch", arch, sizeof arch) ? fattn_arch_find(arch) : NULL;
        if (a && t->arch_name && strcmp(t->arch_name, a->name) != 0)
            return fattn_error(FATTN_EUSAGE, "--arch %s: the fake GPU is %s; leave --arch out to take the GPU's",
                               t->arch_name, a->name);
        if (a)
            t->arch_name = a->name;
        return FATTN_OK;
    }
    if (fattn_gpu_probe(t->device, &g->info, why, sizeof why))
        return fattn_error(FATTN_EFAIL, "%s needs a GPU: %s%s", cmd, why, without ? without : "");
    g->present = 1;
    const fattn_arch *a = fattn_arch_from_cc(g->info.cc_major, g->info.cc_minor);
    if (!a)
        return fattn_error(FATTN_EFAIL, "GPU %d (%s) is compute capability %d.%d, which fattn-tune does not target",
                           t->device, g->info.name, g->info.cc_major, g->info.cc_minor);
    if (t->arch_name && strcmp(t->arch_name, a->name) != 0)
        return fattn_error(FATTN_EUSAGE, "--arch %s: GPU %d (%s) is %s; leave --arch out to take the GPU's",
                           t->arch_name, t->device, g->info.name, a->name);
    t->arch_name = a->name;
    return FATTN_OK;
}

int fattn_open_gpu_evaluator(const fattn_target *t, const fattn_measure *tm, const char *kernel_dir,
                             const char *include, fattn_evaluator **ev)
{
    return fattn_open_gpu_evaluators(t, tm, kernel_dir, include, &t->device, 1, ev);
}

int fattn_open_gpu_evaluators(const fattn_target *t, const fattn_measure *tm, const char *kernel_dir,
                              const char *include, const int *devices, int n, fattn_evaluator **ev)
{
    fattn_kernel_src ref;
    fattn_options o;
    fattn_nvrtc_result r;
    if (!kernel_dir)
        kernel_dir = fattn_default_kernel_dir();
    int rc = fattn_kernel_src_load(kernel_dir, FATTN_REF_FILE, &ref);
    if (rc)
        return rc;
    fattn_options_build(&o, NULL, t->shape.head_dim, t->shape.causal, t->arch, include);
    rc = fattn_nvrtc_compile(&ref, &o, 0, &r);
    fattn_options_release(&o);
    fattn_kernel_src_release(&ref);
    if (rc)
        return rc;
    if (!r.ok) {
        rc = fattn_error(FATTN_EFAIL, "the reference kernel %s/%s does not compile: %.300s", kernel_dir, FATTN_REF_FILE,
                         r.log ? r.log : "");
        fattn_nvrtc_result_release(&r);
        return rc;
    }
    fattn_gpu_eval_config gc = {
        .worker_exe = fattn_self_exe(),
        .device = t->device,
        .shape = t->shape,
        .ref_cubin = r.cubin,
        .ref_size = r.cubin_size,
        .timing_sets = (int)tm->timing_sets,
        .timing_seed = ((uint64_t)tm->seed * 7919 + 1) ^ tm->timing_salt,
        .warmup = (int)tm->warmup,
        .reps = (int)tm->reps,
        .samples = (int)tm->samples,
        .flush_l2 = tm->flush_l2,
        .tol = tm->tol,
        .kernel_timeout_ms = (int)tm->timeout_ms,
        .setup_timeout_ms = (int)tm->setup_ms,
    };
    signal(SIGPIPE, SIG_IGN);
    for (int k = 0; k < n && !rc; ++k) {
        gc.device = devices[k];
        rc = fattn_evaluator_open_gpu(&gc, &ev[k]);
    }
    /* Several GPUs: one model (the same model is not the same speed:
     * the search times a reference on each, tune.h). */
    for (int k = 1; k < n && !rc; ++k)
        if (strcmp(ev[k]->device, ev[0]->device))
            rc = fattn_error(FATTN_EUSAGE,
                             "--devices: GPU %d is %s and GPU %d is %s; a study is measured on one GPU model: expected "
                             "GPUs of one model (a search per model)",
                             devices[0], ev[0]->device, devices[k], ev[k]->device);
    if (rc)
        for (int k = 0; k < n; ++k)
            fattn_evaluator_close(&ev[k]);
    fattn_nvrtc_result_release(&r);
    return rc;
}
