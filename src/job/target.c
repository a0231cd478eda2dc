/*
 * target.c - the target a procedure works on: its space, shape, arch and
 * gate limits, validated and completed (job.h).
 */
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/misc.h"
#include "util/paths.h"

void fattn_target_init(fattn_target *t)
{
    memset(t, 0, sizeof *t);
    fattn_gate_limits_default(&t->lim);
}

void fattn_target_release(fattn_target *t)
{
    if (t->space_loaded)
        fattn_space_release(&t->space);
    t->space_loaded = 0;
}

static int resolve_arch(fattn_target *t, const char *cmd)
{
    char why[320];
    if (t->arch_name) {
        t->arch = fattn_arch_find(t->arch_name);
        if (!t->arch)
            return fattn_error(FATTN_EUSAGE, "--arch '%s': unknown architecture; expected one of %s", t->arch_name,
                               fattn_arch_choices());
        return FATTN_OK;
    }
    if (fattn_gpu_probe(t->device, &t->gpu, why, sizeof why))
        return fattn_error(FATTN_EUSAGE,
                           "%s needs an architecture: no --arch given and none to take from a GPU "
                           "(%s); pass --arch %s",
                           cmd, why, fattn_arch_choices());
    t->have_gpu = 1;
    t->arch = fattn_arch_from_cc(t->gpu.cc_major, t->gpu.cc_minor);
    if (!t->arch)
        return fattn_error(FATTN_EUSAGE,
                           "GPU %d (%s) is compute capability %d.%d, which fattn-tune does not target; "
                           "pass --arch %s",
                           t->device, t->gpu.name, t->gpu.cc_major, t->gpu.cc_minor, fattn_arch_choices());
    return FATTN_OK;
}

static int resolve_smem_limit(fattn_target *t)
{
    uint64_t bytes;
    if (!t->smem_limit_text)
        return FATTN_OK;
    if (strcmp(t->smem_limit_text, "max") == 0 || strcmp(t->smem_limit_text, "optin") == 0) {
        t->lim.smem_limit = (unsigned)t->arch->smem_per_block_optin;
        return FATTN_OK;
    }
    if (fattn_parse_bytes(t->smem_limit_text, &bytes) || bytes < 1024)
        return fattn_error(FATTN_EUSAGE, "--smem-limit '%s': expected a byte count such as 49152, 100K or 'max'",
                           t->smem_limit_text);
    if (bytes > (uint64_t)t->arch->smem_per_block_optin)
        return fattn_error(FATTN_EUSAGE,
                           "--smem-limit %s: %llu bytes is over %s's opt-in maximum of %d bytes per "
                           "block; expected at most %d (or 'max')",
                           t->smem_limit_text, (unsigned long long)bytes, t->arch->name, t->arch->smem_per_block_optin,
                           t->arch->smem_per_block_optin);
    t->lim.smem_limit = (unsigned)bytes;
    return FATTN_OK;
}

int fattn_target_finish(fattn_target *t, int needs, const char *cmd)
{
    int rc;
    if (needs & FATTN_NEED_SHAPE) {
        if (!t->shape_text)
            return fattn_error(FATTN_EUSAGE, "%s needs --shape B,H,S,D (such as --shape 2,8,512,64)", cmd);
        if ((rc = fattn_shape_parse(t->shape_text, &t->shape)))
            return rc;
        t->shape.causal = t->causal;
        if ((rc = fattn_target_check_memory(t, 0)))
            return rc;
    }
    if (needs & FATTN_NEED_ARCH) {
        if ((rc = resolve_arch(t, cmd)) || (rc = resolve_smem_limit(t)))
            return rc;
    }
    if (needs & FATTN_NEED_SPACE) {
        if (!t->space_loaded
            && (rc = fattn_space_load(t->space_path ? t->space_path : fattn_default_space_path(), &t->space)))
            return rc;
        t->space_loaded = 1;
        if (t->filter_text
            && ((rc = fattn_filter_parse(t->filter_text, t->space.fam, &t->filter))
                || (rc = fattn_filter_check(&t->filter, t->filter_text, &t->space))))
            return rc;
    }
    if (t->space_loaded && t->arch && !fattn_family_runs_on(t->space.fam, t->arch))
        return fattn_error(FATTN_EUSAGE,
                           "%s: the %s family runs on sm_90 only (built for sm_90a); %s cannot run it: pass --arch "
                           "sm_90, or a space of the mma family",
                           t->space.label, t->space.fam->name, t->have_gpu ? "this GPU's arch" : t->arch->name);
    return FATTN_OK;
}

int fattn_family_runs_on(const fattn_family *f, const fattn_arch *a)
{
    return !f->arch_specific || a->sm == 90; /* built for sm_90a: an sm_90 GPU only */
}

void fattn_target_family_limits(fattn_target *t, const fattn_family *f)
{
    if (f && f->smem_optin && t->arch && !(t->given & FATTN_GIVEN_SMEM_LIMIT))
        t->lim.smem_limit = (unsigned)t->arch->smem_per_block_optin;
}

int fattn_target_hardware(fattn_target *t, const char *kernel_dir)
{
    fattn_kernel_src src;
    int was = fattn_error_set_quiet_thread(1); /* without its kernel, a report is shown without the record */
    int rc = fattn_kernel_src_load(kernel_dir, t->space.fam->kernel_file, &src);
    fattn_error_set_quiet_thread(was);
    if (rc)
        return rc;
    char *path = fattn_path_join(src.dir, src.name);
    snprintf(t->kernel_file, sizeof t->kernel_file, "%s", path);
    free(path);
    memcpy(t->kernel_hash, src.hash, sizeof t->kernel_hash);
    fattn_hw_lookup(kernel_dir, t->space.fam->name, src.hash, &t->hw);
    t->hw_known = 1;
    fattn_kernel_src_release(&src);
    return FATTN_OK;
}

int fattn_target_check_memory(const fattn_target *t, int gpu_capped)
{
    fattn_verdict v;
    fattn_gate_input in = {.shape = &t->shape, .lim = &t->lim};
    if (fattn_gate_device_memory(&in, &v))
        return FATTN_OK;
    if (gpu_capped)
        return fattn_error(FATTN_EFAIL,
                           "--shape %s: does not fit this GPU: %s (90%% of its memory); expected a smaller shape",
                           t->shape_text ? t->shape_text : "", v.detail);
    return fattn_error(FATTN_EUSAGE,
                       "--shape %s: does not fit the device-memory budget: %s; expected a smaller shape or a larger "
                       "--mem-budget",
                       t->shape_text ? t->shape_text : "", v.detail);
}

int fattn_sample_survivors(size_t *surv, size_t count, long n, long seed)
{
    if ((size_t)n >= count)
        return (int)count;
    fattn_rng rng;
    fattn_rng_seed(&rng, (uint64_t)seed);
    for (size_t i = count - 1; i > 0; --i) {
        size_t j = (size_t)fattn_rng_below(&rng, (uint64_t)i + 1);
        size_t tmp = surv[i];
        surv[i] = surv[j];
        surv[j] = tmp;
    }
    for (long i = 1; i < n; ++i)
        for (long k = i; k > 0 && surv[k - 1] > surv[k]; --k) {
            size_t tmp = surv[k];
            surv[k] = surv[k - 1];
            surv[k - 1] = tmp;
        }
    return (int)n;
}
