/*
 * kernel_check.c - the kernel source export --kernel writes, held to the
 * study's (export.h).
 */
#include <stdlib.h>
#include <string.h>

#include "compile/batch.h"
#include "export/export.h"
#include "job/job.h"
#include "store/read.h"
#include "util/err.h"
#include "util/paths.h"

int fattn_export_kernel_check(fattn_store *s, long long study, const fattn_kernel_src *src, int allow_change, FILE *log)
{
    fattn_study_info st;
    fattn_notes notes = {0};
    fattn_compile_item item;
    char key[FATTN_KEY_MAX];
    int rc;
    memset(&item, 0, sizeof item);
    if (!study && !(study = fattn_latest_study(s)))
        return FATTN_EFAIL;
    /* The study as the best configuration's family saw it (its kernel, its limits). */
    if ((rc = fattn_store_study_info(s, study, &st)) || (rc = fattn_export_best_key(s, study, key))
        || (rc = fattn_config_parse(key, "the study's best", &item.cfg)))
        return rc;
    fattn_study_info_as(&st, item.cfg.fam, &st);
    if ((rc = fattn_study_kernel(src, &st, allow_change, "export --kernel", &notes)))
        return rc;
    if (!strcmp(src->hash, st.kernel_hash))
        return FATTN_OK;
    fattn_target t;
    char *include = NULL;
    fattn_target_init(&t);
    if (!(rc = fattn_study_target(&t, &st, NULL, 0, "export --kernel", &notes))
        && !(rc = fattn_gates_pass(&item.cfg, &t, key)) && !(rc = fattn_cuda_include(&include))) {
        fattn_compile_ctx cc = {
            .src = src, .cuda_include = include, .arch = t.arch, .shape = &t.shape, .lim = &t.lim, .jobs = 1};
        if (!(rc = fattn_compile_pass(&cc, key, &item)) && log)
            fattn_notes_print(&notes, log);
    }
    fattn_compile_item_release(&item);
    free(include);
    fattn_target_release(&t);
    return rc;
}
