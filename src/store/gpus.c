/*
 * gpus.c - a search over several GPUs in the database (schema v15): the
 * trials running, and the reference configuration's timings on each GPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sql.h"
#include "store/store.h"
#include "util/err.h"
#include "util/misc.h"

int fattn_store_running_add(fattn_store *s, long long study, const char *key, long long seq, const char *gpu_uuid)
{
    sqlite3_stmt *st;
    char now[32];
    if (fattn_store_prepare(s,
                            "INSERT OR REPLACE INTO trials_running (study_id, config_key, seq, gpu_uuid, started_at) "
                            "VALUES (?1, ?2, ?3, ?4, ?5)",
                            &st))
        return FATTN_EFAIL;
    fattn_utc_now_ms(now);
    sqlite3_bind_int64(st, 1, study);
    fattn_store_bind_text(st, 2, key);
    sqlite3_bind_int64(st, 3, seq);
    fattn_store_bind_text(st, 4, gpu_uuid);
    fattn_store_bind_text(st, 5, now);
    return fattn_store_step_done(s, st, "cannot record the trial running");
}

int fattn_store_running_del(fattn_store *s, long long study, const fattn_config *cfg)
{
    sqlite3_stmt *st;
    char key[FATTN_KEY_MAX];
    if (fattn_store_prepare(s, "DELETE FROM trials_running WHERE study_id = ?1 AND config_key = ?2", &st))
        return FATTN_EFAIL;
    fattn_config_key(cfg, key);
    sqlite3_bind_int64(st, 1, study);
    fattn_store_bind_text(st, 2, key);
    return fattn_store_step_done(s, st, "cannot record the trial's end");
}

int fattn_store_running_keys(fattn_store *s, long long study, char ***keys, size_t *n)
{
    sqlite3_stmt *st;
    size_t cap = 0;
    int rc;
    *keys = NULL;
    *n = 0;
    if (fattn_store_prepare(s, "SELECT config_key FROM trials_running WHERE study_id = ?1 ORDER BY seq", &st))
        return FATTN_EFAIL;
    sqlite3_bind_int64(st, 1, study);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap)
            *keys = fattn_xrealloc(*keys, (cap = cap ? 2 * cap : 8) * sizeof **keys);
        (*keys)[(*n)++] = fattn_xstrdup((const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return fattn_error(FATTN_EFAIL, "cannot read the trials running: %s", sqlite3_errmsg(fattn_store_db(s)));
    return FATTN_OK;
}

int fattn_store_gpu_check_add(fattn_store *s, const fattn_gpu_check_rec *c)
{
    sqlite3_stmt *st;
    char now[32];
    if (fattn_store_prepare(s,
                            "INSERT INTO gpu_checks (study_id, round, after_trials, device, gpu_uuid, config_key, "
                            "status, median_us, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                            &st))
        return FATTN_EFAIL;
    fattn_utc_now_ms(now);
    sqlite3_bind_int64(st, 1, c->study_id);
    sqlite3_bind_int(st, 2, c->round);
    sqlite3_bind_int64(st, 3, c->after_trials);
    sqlite3_bind_int(st, 4, c->device);
    fattn_store_bind_text(st, 5, c->gpu_uuid);
    fattn_store_bind_text(st, 6, c->config_key);
    fattn_store_bind_text(st, 7, c->status);
    if (c->median_us > 0)
        sqlite3_bind_double(st, 8, c->median_us);
    fattn_store_bind_text(st, 9, now);
    return fattn_store_step_done(s, st, "cannot store the GPU check");
}
