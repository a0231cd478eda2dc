/*
 * compile.c - compile's summary (report.h): the survivors, what compiled,
 * the trials by status and reason, and the layout check.
 */
#include <stdio.h>

#include "report/outcomes.h"
#include "report/report.h"

void fattn_report_compile(const fattn_compile_study_report *r, const fattn_target *t, FILE *f)
{
    const fattn_space_verdicts *sv = &r->sv;
    const fattn_batch_stats *bs = &r->bs;
    char shape[96];
    fattn_shape_format(&t->shape, shape, sizeof shape);
    fprintf(f, "study %lld: compile of %s for %s on %s\n", r->study, t->space.label, shape, t->arch->name);
    fprintf(f, "%zu configurations: %zu rejected by the static gates, %zu survive", sv->considered,
            sv->considered - sv->nsurvivors, sv->nsurvivors);
    if ((size_t)r->total < sv->nsurvivors)
        fprintf(f, ", a sample of %d compiled", r->total);
    fprintf(f, "\ncompiled %d (%d by NVRTC, %d from the cache) in %.1f s\n", bs->finished - bs->env_errors,
            bs->compiled, bs->cache_hits, r->seconds);
    if (r->nprior)
        fprintf(f, "taken up: %d survivors and %zu trials in all recorded by the study's earlier run\n", r->done0,
                r->nprior);
    fprintf(f, "\n");
    fattn_report_outcomes(sv->counts, FATTN_R_LAST_STATIC, r->by_reason, "compiled", (size_t)r->by_reason[FATTN_R_NONE],
                          (size_t)r->env_errors, f);
    if (r->compiled_ok)
        fprintf(f, "\nlayout check: compiled shared memory %s the layout model for %d of %d compiled configurations\n",
                r->mismatches ? "differs from" : "equals", r->mismatches ? r->mismatches : r->compiled_ok,
                r->compiled_ok);
    fprintf(f, "survivors ready for the GPU: %d (fattn-tune query trials --study %lld --status compiled)\n",
            r->by_reason[FATTN_R_NONE], r->study);
}
