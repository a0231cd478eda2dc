/*
 * probe.c - telling a broken kernel source from configurations that fail
 * (probe.h).
 */
#include "compile/probe.h"

#include <stdio.h>
#include <string.h>

#include "compile/nvrtc.h"
#include "util/err.h"

/* 1 when the configuration passes the front end, 0 when it fails (its first
 * error in err), -1 when NVRTC itself fails. */
static int front_end(const fattn_kernel_src *src, const char *include, const fattn_arch *arch, const fattn_shape *shape,
                     const fattn_config *cfg, char *err, size_t n)
{
    fattn_options o;
    fattn_nvrtc_result r;
    fattn_options_build(&o, cfg, shape->head_dim, shape->causal, arch, include);
    int was = fattn_error_set_quiet_thread(1);
    int rc = fattn_nvrtc_compile(src, &o, FATTN_NVRTC_SYNTAX_ONLY, &r);
    fattn_error_set_quiet_thread(was);
    fattn_options_release(&o);
    if (rc)
        return -1;
    int ok = r.ok;
    if (!ok)
        fattn_nvrtc_first_error(r.log, err, n);
    fattn_nvrtc_result_release(&r);
    return ok;
}

int fattn_kernel_probe(const fattn_kernel_src *src, const char *cuda_include, const fattn_arch *arch,
                       const fattn_shape *shape, const fattn_config *cfgs, int n)
{
    char first[512], err[512], k0[FATTN_KEY_MAX], k[FATTN_KEY_MAX];
    if (n < 2 || front_end(src, cuda_include, arch, shape, &cfgs[0], first, sizeof first) != 0)
        return FATTN_OK;
    /* A static assertion rejects configurations by design, however many. */
    if (strstr(first, "static assertion failed"))
        return FATTN_OK;
    fattn_config_key(&cfgs[0], k0);
    for (int i = 1; i < n; ++i) {
        fattn_config_key(&cfgs[i], k);
        if (!strcmp(k, k0) || front_end(src, cuda_include, arch, shape, &cfgs[i], err, sizeof err) != 0
            || strcmp(err, first))
            return FATTN_OK;
    }
    return fattn_error(FATTN_EFAIL,
                       "kernel %s/%s does not compile: %s (NVRTC: the same first error for %s and %s); fix the "
                       "source",
                       src->dir, src->name, *first ? first : "no error line in NVRTC's log", k0, k);
}
