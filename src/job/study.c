/*
 * study.c - what the procedures that re-gate or re-compile a stored study's
 * configuration (confirm, bench --trial, export --kernel) take from the
 * study (job.h): its shape, its arch, the gate limits it was searched under and the
 * kernel source it measured. A configuration a search found with
 * --smem-limit max is confirmed under that limit, not refused at the default
 * 48 KiB; an option given on the command line overrides the study's value,
 * and each decision is said in one line once the command goes on (a refusal
 * is one line alone).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "job/job.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/strbuf.h"

/* The limit options, in the order the notes list them. */
static const struct {
    unsigned opt; /* FATTN_GIVEN_* */
    const char *option;
} limit_opts[] = {
    {FATTN_GIVEN_SMEM_LIMIT, "--smem-limit"},       {FATTN_GIVEN_MAX_SPILL_BYTES, "--max-spill-bytes"},
    {FATTN_GIVEN_MIN_OCCUPANCY, "--min-occupancy"}, {FATTN_GIVEN_STRICT_OCCUPANCY, "--strict-occupancy"},
    {FATTN_GIVEN_MAX_BANK_WAYS, "--max-bank-ways"}, {FATTN_GIVEN_MIN_COALESCING, "--min-coalescing"},
    {FATTN_GIVEN_MEM_BUDGET, "--mem-budget"},
};

/* Copies the limit that option `opt` sets from *from into *to. */
static void limit_copy(fattn_gate_limits *to, const fattn_gate_limits *from, unsigned opt)
{
    switch (opt) {
    case FATTN_GIVEN_SMEM_LIMIT: to->smem_limit = from->smem_limit; break;
    case FATTN_GIVEN_MAX_SPILL_BYTES: to->max_spill_bytes = from->max_spill_bytes; break;
    case FATTN_GIVEN_MIN_OCCUPANCY: to->min_occupancy = from->min_occupancy; break;
    case FATTN_GIVEN_STRICT_OCCUPANCY: to->occupancy_cp_async_exempt = from->occupancy_cp_async_exempt; break;
    case FATTN_GIVEN_MAX_BANK_WAYS: to->max_bank_ways = from->max_bank_ways; break;
    case FATTN_GIVEN_MIN_COALESCING: to->min_coalescing = from->min_coalescing; break;
    case FATTN_GIVEN_MEM_BUDGET: to->mem_budget = from->mem_budget; break;
    }
}

/* The limit that option `opt` sets, as the notes write it. */
static void limit_text(const fattn_gate_limits *l, unsigned opt, char *out, size_t n)
{
    char b[32];
    switch (opt) {
    case FATTN_GIVEN_SMEM_LIMIT: snprintf(out, n, "shared memory <= %u B", l->smem_limit); break;
    case FATTN_GIVEN_MAX_SPILL_BYTES: snprintf(out, n, "spills <= %u B", l->max_spill_bytes); break;
    case FATTN_GIVEN_MIN_OCCUPANCY: snprintf(out, n, "occupancy >= %g", l->min_occupancy); break;
    case FATTN_GIVEN_STRICT_OCCUPANCY:
        snprintf(out, n, "%s", l->occupancy_cp_async_exempt ? "cp.async waived" : "cp.async not waived");
        break;
    case FATTN_GIVEN_MAX_BANK_WAYS: snprintf(out, n, "bank conflicts <= %u-way", l->max_bank_ways); break;
    case FATTN_GIVEN_MIN_COALESCING: snprintf(out, n, "coalescing >= %g", l->min_coalescing); break;
    case FATTN_GIVEN_MEM_BUDGET:
        fattn_format_bytes(l->mem_budget, b, sizeof b);
        snprintf(out, n, "device memory <= %s", b);
        break;
    default: out[0] = '\0';
    }
}

static void note(fattn_notes *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(fattn_notes *notes, const char *fmt, ...)
{
    va_list ap;
    if (notes->n == FATTN_NOTES_MAX)
        return;
    va_start(ap, fmt);
    vsnprintf(notes->line[notes->n++], sizeof notes->line[0], fmt, ap);
    va_end(ap);
}

void fattn_notes_print(const fattn_notes *notes, FILE *f)
{
    for (int i = 0; i < notes->n; ++i)
        fprintf(f, "fattn-tune: note: %s\n", notes->line[i]);
}

int fattn_study_target(fattn_target *t, const fattn_study_info *st, const char *device_arch, int allow_arch,
                       const char *cmd, fattn_notes *notes)
{
    fattn_gate_limits study;
    char missing[256], text[96];
    int rc, read = fattn_gate_limits_parse(st->limits_json, &study, missing, sizeof missing);

    int other_arch = device_arch && strcmp(device_arch, st->arch) != 0;
    if (other_arch && !allow_arch)
        return fattn_error(FATTN_EFAIL,
                           "study %lld was searched on %s, this GPU is %s: %s takes the study's arch; use a GPU of "
                           "it, or pass --allow-arch-change to re-gate and re-compile for %s",
                           st->id, st->arch, device_arch, cmd, device_arch);
    t->arch_name = device_arch ? device_arch : st->arch;
    t->shape = st->shape;
    t->causal = st->shape.causal;
    for (size_t i = 0; i < sizeof limit_opts / sizeof limit_opts[0]; ++i)
        if (!(t->given & limit_opts[i].opt))
            limit_copy(&t->lim, &study, limit_opts[i].opt);
    if (!(t->given & FATTN_GIVEN_SKIP))
        t->lim.skip = study.skip;
    if ((rc = fattn_target_finish(t, FATTN_NEED_ARCH, cmd)))
        return rc;
    t->arch_name = t->arch->name; /* not the study's buffer, which the caller may free */

    /* What was decided, said once the command goes on: the arch, the
     * study's limits in one line, then what differs from them. */
    if (other_arch)
        note(notes, "--allow-arch-change: study %lld was searched on %s; %s re-gates and re-compiles for %s", st->id,
             st->arch, cmd, device_arch);
    fattn_strbuf all;
    fattn_sb_init(&all);
    for (size_t i = 0; i < sizeof limit_opts / sizeof limit_opts[0]; ++i) {
        limit_text(&study, limit_opts[i].opt, text, sizeof text);
        fattn_sb_addf(&all, "%s%s", i ? ", " : "", text);
    }
    if (read <= 0)
        note(notes, "study %lld stores no gate limits (an older fattn-tune): %s re-gates on %s under the defaults (%s)",
             st->id, cmd, t->arch->name, all.s);
    else
        note(notes, "%s re-gates on %s under the gate limits study %lld was searched with (%s%s%s%s)", cmd,
             t->arch->name, st->id, all.s, study.skip ? "; gates skipped by --unsafe-skip-gate" : "",
             missing[0] ? "; not recorded, so the defaults: " : "", missing);
    fattn_sb_release(&all);
    if (!(t->given & FATTN_GIVEN_SMEM_LIMIT) && t->lim.smem_limit > (unsigned)t->arch->smem_per_block_optin) {
        note(notes, "study %lld's shared-memory limit of %u B is over %s's opt-in maximum; %s takes %d B", st->id,
             t->lim.smem_limit, t->arch->name, cmd, t->arch->smem_per_block_optin);
        t->lim.smem_limit = (unsigned)t->arch->smem_per_block_optin;
    }
    for (size_t i = 0; i < sizeof limit_opts / sizeof limit_opts[0]; ++i) {
        if (!(t->given & limit_opts[i].opt))
            continue;
        char was[96];
        limit_text(&study, limit_opts[i].opt, was, sizeof was);
        limit_text(&t->lim, limit_opts[i].opt, text, sizeof text);
        note(notes, "%s overrides study %lld's limit: %s, not %s%s", limit_opts[i].option, st->id, text, was,
             read <= 0 ? " (the default)" : "");
    }
    return FATTN_OK;
}

int fattn_study_kernel(const fattn_kernel_src *src, const fattn_study_info *st, int allow, const char *cmd,
                       fattn_notes *notes)
{
    if (!strcmp(src->hash, st->kernel_hash))
        return FATTN_OK;
    if (!allow)
        return fattn_error(FATTN_EFAIL,
                           "%s/%s changed since study %lld measured it (sha256 %.12s..., the study's %.12s...): %s "
                           "takes the kernel the study searched; restore it, or pass --allow-kernel-change to "
                           "re-gate and re-compile under this source",
                           src->dir, src->name, st->id, src->hash, st->kernel_hash, cmd);
    note(notes,
         "--allow-kernel-change: %s/%s (sha256 %.12s...) is not the kernel study %lld measured (%.12s...); %s "
         "re-gates and re-compiles under it",
         src->dir, src->name, src->hash, st->id, st->kernel_hash, cmd);
    return FATTN_OK;
}
