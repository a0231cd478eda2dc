/*
 * pass.c - one configuration through the static gates and through NVRTC
 * with the post-compile gates, a rejection being an error; the kernel
 * source probed on the survivors (job.h).
 */
#include "compile/probe.h"
#include "job/job.h"
#include "util/err.h"

static int rejected(const char *who, int reason, const fattn_verdict *v, const fattn_family *fam)
{
    return fattn_error(FATTN_EFAIL, "%s is rejected by the %s gate: %s; fix: %s", who, fattn_reason(reason)->code,
                       v->detail, fattn_reason_fix(reason, fam));
}

int fattn_gates_pass(const fattn_config *cfg, const fattn_target *t, const char *who)
{
    fattn_verdict v;
    fattn_gate_input in = {cfg, &t->shape, t->arch, &t->lim};
    int r = fattn_gates_static(&in, &v, NULL);
    return r ? rejected(who, r, &v, cfg->fam) : FATTN_OK;
}

int fattn_compile_pass(const fattn_compile_ctx *cc, const char *who, fattn_compile_item *item)
{
    fattn_compile_one(cc, item);
    if (item->env_error)
        return fattn_error(FATTN_EFAIL, "%s: %s", who, item->env_msg);
    return item->reason ? rejected(who, item->reason, &item->verdict, item->cfg.fam) : FATTN_OK;
}

int fattn_probe_survivors(const fattn_target *t, const fattn_kernel_src *src, const char *include, const size_t *surv,
                          size_t n)
{
    fattn_config c[3];
    const size_t at[3] = {0, n - 1, n / 2};
    if (n < 2)
        return FATTN_OK;
    for (int i = 0; i < 3; ++i)
        fattn_space_config(&t->space, surv[at[i]], &c[i]);
    return fattn_kernel_probe(src, include, t->arch, &t->shape, c, n > 2 ? 3 : 2);
}
