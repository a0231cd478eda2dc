/*
 * campaigns.c - campaigns and their rows in the results database, and
 * studies found by identity (store.h).
 */
#include "store/read.h"
#include "store/sql.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/schema.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/sha256.h"

/* A study's GPU model (fattn_device_gpu_model, through SQL). */
#define GPU_MODEL_SQL "fattn_gpu_model(s.device)"

int fattn_store_campaign_row_study(fattn_store *s, const char *campaign_uuid, int row, const char *gpu, long long *id,
                                   char *status, size_t nstatus, char *runner, size_t nrunner)
{
    sqlite3_stmt *st;
    *id = 0, *status = '\0', *runner = '\0';
    if (fattn_store_prepare(s,
                            "SELECT s.id, s.status, s.runner FROM studies s WHERE s.campaign_uuid = ?1 AND "
                            "s.campaign_row = ?2 AND (?3 IS NULL OR " GPU_MODEL_SQL " = ?3) ORDER BY s.id DESC LIMIT 1",
                            &st))
        return FATTN_EFAIL;
    sqlite3_bind_text(st, 1, campaign_uuid, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, row);
    fattn_store_bind_text(st, 3, gpu);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        snprintf(status, nstatus, "%s", fattn_store_text(st, 1));
        snprintf(runner, nrunner, "%s", fattn_store_text(st, 2));
    }
    sqlite3_finalize(st);
    return r == SQLITE_ROW || r == SQLITE_DONE ? FATTN_OK : fattn_store_fail(s, "cannot read a campaign row's study");
}

int fattn_store_campaign_find(fattn_store *s, const char *uuid, const char *file_sha256, const char *search_args,
                              long long *id, char uuid_out[37])
{
    sqlite3_stmt *st;
    *id = 0;
    if (fattn_store_prepare(s,
                            uuid ? "SELECT id, uuid, file_sha256 = ?2 AND search_args = ?3 FROM campaigns WHERE uuid = "
                                   "?1"
                                 : "SELECT id, uuid, 1 FROM campaigns WHERE file_sha256 = ?2 AND search_args = ?3 "
                                   "ORDER BY id DESC LIMIT 1",
                            &st))
        return FATTN_EFAIL;
    fattn_store_bind_text(st, 1, uuid);
    fattn_store_bind_text(st, 2, file_sha256);
    fattn_store_bind_text(st, 3, search_args);
    int r = sqlite3_step(st), same = 1;
    if (r == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        snprintf(uuid_out, 37, "%s", fattn_store_text(st, 1));
        same = sqlite3_column_int(st, 2);
    }
    sqlite3_finalize(st);
    if (r != SQLITE_ROW && r != SQLITE_DONE)
        return fattn_store_fail(s, "cannot read the campaigns");
    if (!same)
        return fattn_error(FATTN_EUSAGE,
                           "--uuid %s: campaign %lld of %s has it, made from another campaign file or other search "
                           "arguments; expected the same file and arguments, or another UUID",
                           uuid, *id, fattn_store_path(s));
    return FATTN_OK;
}

int fattn_store_campaign_begin(fattn_store *s, fattn_campaign_rec *r, long long *id, char uuid_out[37])
{
    sqlite3_stmt *st;
    char now[32];
    fattn_utc_now(now);
    if (fattn_store_begin(s))
        return FATTN_EFAIL;
    static const char sql[] = "INSERT INTO campaigns (uuid, created_at, path, file_sha256, file_text, search_args, "
                              "argv) VALUES (coalesce(?1, " FATTN_SQL_RANDOM_UUID "), ?2, ?3, ?4, ?5, ?6, ?7)";
    int rc = fattn_store_prepare(s, sql, &st);
    if (!rc) {
        fattn_store_bind_text(st, 1, r->uuid);
        fattn_store_bind_text(st, 2, now);
        fattn_store_bind_text(st, 3, r->path);
        fattn_store_bind_text(st, 4, r->file_sha256);
        fattn_store_bind_text(st, 5, r->file_text);
        fattn_store_bind_text(st, 6, r->search_args);
        fattn_store_bind_text(st, 7, r->argv);
        rc = fattn_store_step_done(s, st, "cannot record the campaign");
    }
    if (!rc) {
        *id = sqlite3_last_insert_rowid(fattn_store_db(s));
        rc = fattn_store_prepare(s, "SELECT uuid FROM campaigns WHERE id = ?1", &st);
        if (!rc) {
            sqlite3_bind_int64(st, 1, *id);
            if (sqlite3_step(st) == SQLITE_ROW)
                snprintf(uuid_out, 37, "%s", fattn_store_text(st, 0));
            else
                rc = fattn_store_fail(s, "cannot read the campaign back");
            sqlite3_finalize(st);
        }
    }
    static const char row_sql[] = "INSERT INTO campaign_rows (campaign_id, row, line, name, batch, heads, seqlen, "
                                  "head_dim, causal, budget, trials, evaluator) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                                  "?8, ?9, ?10, ?11, ?12)";
    sqlite3_stmt *rs = NULL;
    if (!rc)
        rc = fattn_store_prepare(s, row_sql, &rs);
    st = rs;
    for (int k = 0; !rc && k < r->nrows; ++k) {
        fattn_campaign_row_rec *w = &r->rows[k];
        sqlite3_bind_int64(st, 1, *id);
        sqlite3_bind_int(st, 2, w->row);
        sqlite3_bind_int(st, 3, w->line);
        fattn_store_bind_text(st, 4, w->name);
        fattn_store_bind_shape(st, 5, &w->shape);
        fattn_store_bind_text(st, 10, w->budget);
        if (w->trials)
            sqlite3_bind_int64(st, 11, w->trials);
        else
            sqlite3_bind_null(st, 11);
        fattn_store_bind_text(st, 12, w->evaluator);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = fattn_store_fail(s, "cannot record the campaign's rows");
        sqlite3_reset(st);
    }
    sqlite3_finalize(rs);
    if (rc || (rc = fattn_store_commit(s))) {
        fattn_store_rollback(s);
        return FATTN_EFAIL;
    }
    return FATTN_OK;
}

int fattn_store_campaign_studies(fattn_store *s, long long *id, long long **studies, int *n, FILE *notes)
{
    sqlite3_stmt *st;
    *studies = NULL, *n = 0;
    if (fattn_store_prepare(s, "SELECT max(id) FROM campaigns WHERE ?1 = 0 OR id = ?1", &st))
        return FATTN_EFAIL;
    sqlite3_bind_int64(st, 1, *id);
    long long found = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (!found)
        return *id ? fattn_error(FATTN_EUSAGE,
                                 "--campaign %lld: no such campaign in %s; see fattn-tune query --sql "
                                 "\"SELECT * FROM campaigns\"",
                                 *id, fattn_store_path(s))
                   : fattn_error(FATTN_EFAIL, "%s holds no campaign; run fattn-tune campaign FILE first",
                                 fattn_store_path(s));
    *id = found;
    if (fattn_store_prepare(s,
                            "WITH runs AS (SELECT s.id, s.status, s.campaign_row, " GPU_MODEL_SQL " AS gpu, "
                            "(SELECT count(*) FROM trials t WHERE t.study_id = s.id AND t.status = 'ok') AS timed, "
                            "row_number() OVER (PARTITION BY s.campaign_row, " GPU_MODEL_SQL
                            " ORDER BY s.status = 'done' DESC, "
                            "(SELECT count(*) FROM trials t WHERE t.study_id = s.id AND t.status = 'ok') > 0 DESC, "
                            "s.created_at DESC, s.id DESC) "
                            "AS newest FROM studies s WHERE s.campaign_uuid = (SELECT uuid FROM campaigns WHERE id = "
                            "?1)) "
                            "SELECT r.row, r.batch || ',' || r.heads || ',' || r.seqlen || ',' || r.head_dim || CASE "
                            "WHEN r.causal THEN ' causal' ELSE ' none' END, x.id, x.status, x.timed, x.gpu FROM "
                            "campaign_rows r LEFT JOIN runs x ON x.campaign_row = r.row AND x.newest = 1 WHERE "
                            "r.campaign_id = ?1 ORDER BY r.row, x.id",
                            &st))
        return FATTN_EFAIL;
    sqlite3_bind_int64(st, 1, found);
    int r, cap = 0;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        int row = sqlite3_column_int(st, 0);
        const char *label = (const char *)sqlite3_column_text(st, 1);
        long long study = sqlite3_column_int64(st, 2);
        const char *status = (const char *)sqlite3_column_text(st, 3);
        long long timed = sqlite3_column_int64(st, 4);
        if (!study || !timed) {
            if (notes)
                fprintf(notes, "fattn-tune: note: campaign %lld: row %d (%s) left out: %s\n", found, row, label,
                        study ? "its study has no timed trial" : "not run yet");
            continue;
        }
        if (notes && status && strcmp(status, "done"))
            fprintf(notes, "fattn-tune: note: campaign %lld: row %d (%s): study %lld is %s; its best so far\n", found,
                    row, label, study, status);
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            *studies = fattn_xrealloc(*studies, (size_t)cap * sizeof **studies);
        }
        (*studies)[(*n)++] = study;
    }
    sqlite3_finalize(st);
    if (r != SQLITE_DONE) {
        free(*studies);
        *studies = NULL, *n = 0;
        return fattn_store_fail(s, "cannot read the campaign's rows");
    }
    if (!*n)
        return fattn_error(FATTN_EFAIL, "campaign %lld has no row with a timed trial yet; nothing to export", found);
    return FATTN_OK;
}
