/*
 * gpu_setup.c - what search and bench share to reach the GPU: the timing
 * options, the GPU probe that gives the arch, the reference kernel, and the
 * GPU evaluator (a worker initialized on the device).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "compile/kernel_src.h"
#include "compile/nvrtc.h"
#include "run/engine.h"
#include "run/worker.h"
#include "util/err.h"
#include "util/misc.h"

const char cli_timing_help[] =
    "Measurement:\n"
    "  --kernel-timeout D   watchdog per step of a candidate (default 10s): longer is a timeout\n"
    "  --setup-timeout D    limit of a worker's start and of the cuDNN baseline's first plan (load,\n"
    "                       heuristics, plan; default 5m), apart from the kernel watchdog\n"
    "  --reps N             launches per CUDA graph; per-launch time = elapsed / N (default 20)\n"
    "  --warmup N           graph replays before sampling (default 5)\n"
    "  --samples N          timed graph replays per candidate (default 30)\n"
    "  --timing-sets N      input sets rotated through while timing (default: enough to exceed twice\n"
    "                       the L2 cache, 2 to 16)\n"
    "  --flush-l2           overwrite a buffer twice the L2 size before each sample\n"
    "  --atol X, --rtol X   elementwise numerics gate |o - r| <= atol + rtol*|r| on every element\n"
    "                       (default 0.01, 0.01)\n"
    "  --max-rel-l2 X       norm-wise numerics gate ||o - r|| / ||r|| <= X over all elements, summed in\n"
    "                       fp64 (||o|| <= atol where ||r|| = 0); 0 < X <= 1 (default 0.004, 5x above\n"
    "                       the worst a correct kernel showed: docs/numerics.md). Every check runs\n"
    "                       uniform inputs and peaky ones (Q, K x3: scores of standard deviation 3)\n"
    "  --seed S             seed of the strategy and the numerics inputs (default 1)\n";

void cli_timing_init(cli_timing *tm)
{
    memset(tm, 0, sizeof *tm);
    tm->reps = 20, tm->warmup = 5, tm->samples = 30, tm->seed = 1;
    tm->timeout_ms = 10000, tm->setup_ms = 300000, tm->tol = fattn_tolerance_default();
}

static int tolerance(const char *opt, const char *arg, double *out)
{
    if (fattn_parse_double(arg, out) || *out < 0 || *out > 10)
        return fattn_error(FATTN_EUSAGE, "%s '%s': expected a number from 0 to 10", opt, arg);
    return 1;
}

int cli_timing_option(cli_timing *tm, int opt, const char *arg)
{
    switch (opt) {
    case OPT_REPS: return cli_long("--reps", arg, 1, 10000, &tm->reps) ? FATTN_EUSAGE : 1;
    case OPT_WARMUP: return cli_long("--warmup", arg, 0, 10000, &tm->warmup) ? FATTN_EUSAGE : 1;
    case OPT_SAMPLES: return cli_long("--samples", arg, 1, 100000, &tm->samples) ? FATTN_EUSAGE : 1;
    case OPT_TIMING_SETS: return cli_long("--timing-sets", arg, 1, 64, &tm->timing_sets) ? FATTN_EUSAGE : 1;
    case OPT_SEED: return cli_long("--seed", arg, 0, 2147483647L, &tm->seed) ? FATTN_EUSAGE : 1;
    case OPT_FLUSH_L2: tm->flush_l2 = 1; return 1;
    case OPT_ATOL: return tolerance("--atol", arg, &tm->tol.atol);
    case OPT_RTOL: return tolerance("--rtol", arg, &tm->tol.rtol);
    case OPT_MAX_REL_L2:
        if (fattn_parse_double(arg, &tm->tol.max_rel_l2) || !(tm->tol.max_rel_l2 > 0 && tm->tol.max_rel_l2 <= 1))
            return fattn_error(FATTN_EUSAGE,
                               "--max-rel-l2 '%s': expected a number above 0 and at most 1, such as 0.004", arg);
        return 1;
    case OPT_KERNEL_TIMEOUT:
        if (fattn_parse_duration(arg, &tm->timeout_ms) || tm->timeout_ms <= 0)
            return fattn_error(FATTN_EUSAGE, "--kernel-timeout '%s': expected a duration such as 10s or 2m", arg);
        return 1;
    case OPT_SETUP_TIMEOUT:
        if (fattn_parse_duration(arg, &tm->setup_ms) || tm->setup_ms < 1000 || tm->setup_ms > 3600000)
            return fattn_error(FATTN_EUSAGE, "--setup-timeout '%s': expected a duration from 1s to 60m, such as 5m",
                               arg);
        return 1;
    default: return 0;
    }
}

int cli_gpu_arch(cli_target *t, cli_gpu *g, const char *cmd, const char *without)
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

int cli_timing_plan(cli_timing *tm, cli_target *t, const cli_gpu *g)
{
    /* Input sets: one for numerics, enough for timing to exceed twice the L2. */
    if (!tm->timing_sets) {
        double set_bytes = (double)fattn_shape_elems(&t->shape) * 2 * 3;
        double l2 = g->present && g->info.l2_bytes > 0 ? g->info.l2_bytes : 50.0 * (1 << 20);
        tm->timing_sets = (long)(2 * l2 / set_bytes) + 1;
        tm->timing_sets = tm->timing_sets < 2 ? 2 : tm->timing_sets > 16 ? 16 : tm->timing_sets;
    }
    t->lim.input_sets = 1 + (int)tm->timing_sets;
    if (g->present && t->lim.mem_budget > g->info.total_mem)
        t->lim.mem_budget = g->info.total_mem / 10 * 9;
    return FATTN_OK;
}

int cli_open_gpu_evaluator(const cli_target *t, const cli_timing *tm, const char *kernel_dir, const char *include,
                           fattn_evaluator **ev)
{
    fattn_kernel_src ref;
    fattn_options o;
    fattn_nvrtc_result r;
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
    rc = fattn_evaluator_open_gpu(&gc, ev);
    fattn_nvrtc_result_release(&r);
    return rc;
}

static int rejected(const char *who, int reason, const fattn_verdict *v)
{
    return fattn_error(FATTN_EFAIL, "%s is rejected by the %s gate: %s; fix: %s", who, fattn_reason(reason)->code,
                       v->detail, fattn_reason(reason)->fix);
}

int cli_gates_pass(const fattn_config *cfg, const cli_target *t, const char *who)
{
    fattn_verdict v;
    fattn_gate_input in = {cfg, &t->shape, t->arch, &t->lim};
    int r = fattn_gates_static(&in, &v, NULL);
    return r ? rejected(who, r, &v) : FATTN_OK;
}

int cli_compile_pass(const fattn_compile_ctx *cc, const char *who, fattn_compile_item *item)
{
    fattn_compile_one(cc, item);
    if (item->env_error)
        return fattn_error(FATTN_EFAIL, "%s: %s", who, item->env_msg);
    return item->reason ? rejected(who, item->reason, &item->verdict) : FATTN_OK;
}

int cli_skip_gate_option(unsigned *mask, const char *arg)
{
    int r = fattn_reason_find(arg);
    if (!r || fattn_reason(r)->stage == FATTN_STAGE_RUN || r == FATTN_R_TILING || r == FATTN_R_COMPILE_ERROR)
        return fattn_error(FATTN_EUSAGE,
                           "--unsafe-skip-gate '%s': expected a static or post-compile gate other than "
                           "tiling and compile_error",
                           arg);
    *mask |= 1u << r;
    return FATTN_OK;
}
