/*
 * resume.c - reading a study back for `search --resume`.
 */
#include "tune/resume.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gates/gates.h"
#include "util/err.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int fail(fattn_store *s, sqlite3_stmt *st, const char *what)
{
    fattn_error(FATTN_EFAIL, "%s: %s: %s", fattn_store_path(s), what, sqlite3_errmsg(fattn_store_db(s)));
    sqlite3_finalize(st);
    return FATTN_EFAIL;
}

static void text(sqlite3_stmt *st, int col, char *out, size_t n)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    snprintf(out, n, "%s", t ? (const char *)t : "");
}

static int load_study(fattn_store *s, long long id, fattn_resume *r)
{
    sqlite3 *db = fattn_store_db(s);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT command, status, args_json, space_hash, kernel_hash, coalesce(search_ms, 0), "
                           "(SELECT coalesce(max(seq) + 1, 0) FROM trials WHERE study_id = ?1) "
                           "FROM studies WHERE id = ?1",
                           -1, &st, NULL)
        != SQLITE_OK)
        return fail(s, st, "cannot read the study");
    sqlite3_bind_int64(st, 1, id);
    int step = sqlite3_step(st);
    if (step == SQLITE_DONE) {
        sqlite3_finalize(st);
        return fattn_error(FATTN_EUSAGE, "--resume %lld: %s has no study %lld (see fattn-tune query studies)", id,
                           fattn_store_path(s), id);
    }
    if (step != SQLITE_ROW)
        return fail(s, st, "cannot read the study");
    char command[32], *args = NULL;
    text(st, 0, command, sizeof command);
    text(st, 1, r->status, sizeof r->status);
    if (sqlite3_column_text(st, 2))
        args = fattn_xstrdup((const char *)sqlite3_column_text(st, 2));
    text(st, 3, r->space_hash, sizeof r->space_hash);
    text(st, 4, r->kernel_hash, sizeof r->kernel_hash);
    r->search_ms = sqlite3_column_double(st, 5);
    r->next_seq = sqlite3_column_int64(st, 6);
    sqlite3_finalize(st);
    if (strcmp(command, "search") != 0) {
        free(args);
        return fattn_error(FATTN_EUSAGE, "--resume %lld: study %lld is a %s study, not a search", id, id, command);
    }
    cJSON *a = args ? cJSON_Parse(args) : NULL;
    free(args);
    if (!cJSON_IsArray(a)) {
        cJSON_Delete(a);
        return fattn_error(FATTN_EUSAGE,
                           "--resume %lld: study %lld does not record its search arguments (made by an older "
                           "fattn-tune); start a new search",
                           id, id);
    }
    r->nargs = cJSON_GetArraySize(a);
    r->args = fattn_xcalloc((size_t)r->nargs + 1, sizeof *r->args);
    for (int i = 0; i < r->nargs; ++i) {
        const cJSON *e = cJSON_GetArrayItem(a, i);
        r->args[i] = fattn_xstrdup(cJSON_IsString(e) ? e->valuestring : "");
    }
    cJSON_Delete(a);
    return FATTN_OK;
}

static int load_trials(fattn_store *s, long long id, fattn_resume *r)
{
    sqlite3 *db = fattn_store_db(s);
    sqlite3_stmt *st = NULL;
    size_t cap = 256;
    if (sqlite3_prepare_v2(db,
                           "SELECT id, config_key, status, reason, run_ms IS NOT NULL, median_us, p10_us, p90_us, "
                           "tflops, gbps FROM trials WHERE study_id = ?1 ORDER BY seq",
                           -1, &st, NULL)
        != SQLITE_OK)
        return fail(s, st, "cannot read the study's trials");
    sqlite3_bind_int64(st, 1, id);
    r->prior = fattn_xcalloc(cap, sizeof *r->prior);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (r->nprior == cap) {
            cap *= 2;
            r->prior = fattn_xrealloc(r->prior, cap * sizeof *r->prior);
        }
        fattn_tune_prior *p = &r->prior[r->nprior++];
        char status[16], reason[32];
        memset(p, 0, sizeof *p);
        p->trial = sqlite3_column_int64(st, 0);
        text(st, 1, p->key, sizeof p->key);
        text(st, 2, status, sizeof status);
        text(st, 3, reason, sizeof reason);
        p->evaluated = sqlite3_column_int(st, 4);
        p->ok = !strcmp(status, "ok");
        p->error = !strcmp(status, "error");
        p->reason = reason[0] ? fattn_reason_find(reason) : 0;
        if (p->reason < 0)
            p->reason = 0;
        p->timing.median_us = sqlite3_column_double(st, 5);
        p->timing.p10_us = sqlite3_column_double(st, 6);
        p->timing.p90_us = sqlite3_column_double(st, 7);
        p->timing.tflops = sqlite3_column_double(st, 8);
        p->timing.gbps = sqlite3_column_double(st, 9);
    }
    if (step != SQLITE_DONE)
        return fail(s, st, "cannot read the study's trials");
    sqlite3_finalize(st);
    r->keys = fattn_xcalloc(r->nprior ? r->nprior : 1, sizeof *r->keys);
    for (size_t i = 0; i < r->nprior; ++i)
        r->keys[i] = r->prior[i].key;
    qsort(r->keys, r->nprior, sizeof *r->keys, cmp_str);
    return FATTN_OK;
}

int fattn_resume_load(fattn_store *s, long long id, fattn_resume *r)
{
    int rc;
    memset(r, 0, sizeof *r);
    r->study = id;
    if ((rc = load_study(s, id, r)) || (rc = load_trials(s, id, r)))
        fattn_resume_release(r);
    return rc;
}

int fattn_resume_has(const fattn_resume *r, const char *key)
{
    return r->nprior && bsearch(&key, r->keys, r->nprior, sizeof *r->keys, cmp_str) != NULL;
}

void fattn_resume_release(fattn_resume *r)
{
    for (int i = 0; i < r->nargs; ++i)
        free(r->args[i]);
    free(r->args);
    free(r->prior);
    free(r->keys);
    memset(r, 0, sizeof *r);
}
