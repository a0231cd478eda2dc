/*
 * views.c - query's views of the database (read.h).
 */
#include <stdio.h>
#include <string.h>

#include "store/read.h"
#include "util/err.h"

static const fattn_view views[] = {
    {"studies", FATTN_READ_STUDIES, FATTN_VIEW_OF_NOTHING, 0, "no studies yet"},
    {"trials", FATTN_READ_TRIALS, FATTN_VIEW_OF_STUDY, 50, "no matching trials in study %lld"},
    {"top", FATTN_READ_TOP, FATTN_VIEW_OF_STUDY, 10,
     "study %lld has no timed trials yet: trials are timed by fattn-tune search on a GPU"},
    {"rejections", FATTN_READ_REJECTIONS, FATTN_VIEW_OF_STUDY, 0, "study %lld has no rejected trials"},
    {"trial", FATTN_READ_TRIAL, FATTN_VIEW_OF_TRIAL, 0, NULL},
    {"cache", FATTN_READ_CACHE, FATTN_VIEW_OF_NOTHING, 50, "the compile cache is empty"},
    {"landscape", FATTN_READ_LANDSCAPE, FATTN_VIEW_OF_LANDSCAPE, 0, NULL},
    {"confirmations", FATTN_READ_CONFIRMATIONS, FATTN_VIEW_OF_STUDY_OR_ALL, 50,
     "no confirmations yet: fattn-tune confirm makes them (on a GPU)"},
    {"sim", FATTN_READ_SIM, FATTN_VIEW_OF_RUN, 50, "sim run %lld has no verdicts yet"},
    {"gpus", FATTN_READ_GPUS, FATTN_VIEW_OF_STUDY, 0,
     "study %lld has no GPU checks: a search over several GPUs (--devices) makes them"},
    {"simruns", FATTN_READ_SIMRUNS, FATTN_VIEW_OF_NOTHING, 0, "no simulator runs yet: fattn-tune check makes them"},
};

const fattn_view *fattn_view_find(const char *name)
{
    for (size_t i = 0; i < sizeof views / sizeof views[0]; ++i)
        if (!strcmp(name, views[i].name))
            return &views[i];
    return NULL;
}

int fattn_view_subject(fattn_store *s, const fattn_view *v, long long study, long long run, long long trial,
                       long long *id)
{
    *id = 0;
    if (v->of == FATTN_VIEW_OF_TRIAL)
        *id = trial;
    if ((v->of == FATTN_VIEW_OF_STUDY || v->of == FATTN_VIEW_OF_LANDSCAPE || v->of == FATTN_VIEW_OF_STUDY_OR_ALL)
        && study) {
        int rc = fattn_study_exists(s, study);
        if (rc)
            return rc;
        *id = study;
    } else if (v->of == FATTN_VIEW_OF_STUDY || v->of == FATTN_VIEW_OF_LANDSCAPE) {
        if (!(*id = fattn_latest_study(s)))
            return FATTN_EFAIL;
    }
    if (v->of != FATTN_VIEW_OF_RUN)
        return FATTN_OK;
    sqlite3_stmt *st;
    int rc = fattn_store_read(s, FATTN_READ_SIM_RUN, &(fattn_read_args){.id = run}, &st);
    if (rc)
        return rc;
    int r = sqlite3_step(st);
    *id = r == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (r != SQLITE_ROW)
        return fattn_store_fail(s, "cannot read the simulator runs");
    if (!*id && run)
        return fattn_error(FATTN_EUSAGE, "--run %lld: no such simulator run in %s (see fattn-tune query simruns)", run,
                           fattn_store_path(s));
    if (!*id)
        return fattn_error(FATTN_EFAIL, "%s has no simulator runs yet: fattn-tune check makes them",
                           fattn_store_path(s));
    return FATTN_OK;
}

int fattn_view_rows(fattn_store *s, const fattn_view *v, const fattn_read_args *a, fattn_rows *out)
{
    sqlite3_stmt *st;
    memset(out, 0, sizeof *out);
    int rc = fattn_store_read(s, v->read, a, &st);
    if (rc)
        return rc;
    if (fattn_rows_from_stmt(out, st))
        rc = fattn_store_fail(s, "query failed");
    else if (v->of == FATTN_VIEW_OF_TRIAL && !out->nrows)
        rc = fattn_error(FATTN_EUSAGE, "query trial %lld: no such trial in %s", a->id, fattn_store_path(s));
    sqlite3_finalize(st);
    return rc;
}
