/*
 * read.c - the store's read side for the procedures (read.h).
 */
#include "store/read.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/escape.h"

/* The family a study names, or an error naming it: one this build does not have. */
static int find_family(long long id, const char *name, const fattn_family **out)
{
    if ((*out = fattn_family_find(name ? name : "")))
        return FATTN_OK;
    char *safe = fattn_terminal_safe(name ? name : "");
    int rc = fattn_error(FATTN_EFAIL,
                         "study %lld searched the kernel family '%s', which this fattn-tune does not have (it has "
                         "%s); use the fattn-tune that wrote it",
                         id, safe, fattn_family_names());
    free(safe);
    return rc;
}

int fattn_store_study_info(fattn_store *s, long long id, fattn_study_info *out)
{
    sqlite3_stmt *st;
    memset(out, 0, sizeof *out);
    if (!id && !(id = fattn_latest_study(s)))
        return FATTN_EFAIL;
    if (fattn_study_exists(s, id))
        return FATTN_EUSAGE;
    if (sqlite3_prepare_v2(
            fattn_store_db(s),
            "SELECT batch, heads, seqlen, head_dim, causal, arch, kernel_hash, device, limits_json, family FROM "
            "studies WHERE id = ?1",
            -1, &st, NULL)
        != SQLITE_OK)
        return fattn_store_fail(s, "cannot read studies");
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return fattn_store_fail(s, "cannot read studies");
    }
    out->id = id;
    /* The shape as --shape would have taken it, or the record is damaged. */
    long long v[5];
    int in_range = 1;
    for (int i = 0; i < 5; ++i)
        in_range &= (v[i] = sqlite3_column_int64(st, i)) >= 0 && v[i] <= INT_MAX;
    out->shape = (fattn_shape){(int)v[0], (int)v[1], (int)v[2], (int)v[3], (int)v[4]};
    if (!in_range || !fattn_shape_valid(&out->shape)) {
        sqlite3_finalize(st);
        return fattn_error(FATTN_EFAIL,
                           "study %lld: the stored shape %lld,%lld,%lld,%lld (causal %lld) is out of range; the "
                           "database is damaged",
                           id, v[0], v[1], v[2], v[3], v[4]);
    }
    snprintf(out->arch, sizeof out->arch, "%s", (const char *)sqlite3_column_text(st, 5));
    snprintf(out->kernel_hash, sizeof out->kernel_hash, "%s", (const char *)sqlite3_column_text(st, 6));
    const unsigned char *dev = sqlite3_column_text(st, 7);
    snprintf(out->device, sizeof out->device, "%s", dev ? (const char *)dev : "");
    const unsigned char *lim = sqlite3_column_text(st, 8);
    snprintf(out->limits_json, sizeof out->limits_json, "%s", lim ? (const char *)lim : "");
    int rc = find_family(id, (const char *)sqlite3_column_text(st, 9), &out->fam);
    sqlite3_finalize(st);
    if (rc)
        return rc;
    /* Its families. */
    if (sqlite3_prepare_v2(fattn_store_db(s),
                           "SELECT family, kernel_hash, limits_json FROM study_families WHERE study_id = ?1 "
                           "ORDER BY position",
                           -1, &st, NULL)
        != SQLITE_OK)
        return fattn_store_fail(s, "cannot read the study's families");
    sqlite3_bind_int64(st, 1, id);
    int step = SQLITE_DONE;
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW && out->nfam < FATTN_MAX_FAMILIES) {
        struct fattn_study_fam *f = &out->fams[out->nfam];
        const char *name = (const char *)sqlite3_column_text(st, 0);
        const unsigned char *kh = sqlite3_column_text(st, 1), *fl = sqlite3_column_text(st, 2);
        if ((rc = find_family(id, name, &f->fam)))
            break;
        snprintf(f->kernel_hash, sizeof f->kernel_hash, "%s", kh ? (const char *)kh : "");
        snprintf(f->limits_json, sizeof f->limits_json, "%s", fl ? (const char *)fl : "");
        ++out->nfam;
    }
    if (!rc && step != SQLITE_ROW && step != SQLITE_DONE)
        rc = fattn_store_fail(s, "cannot read the study's families");
    sqlite3_finalize(st);
    if (!rc && !out->nfam) { /* a study written without its families: the one its row names */
        out->fams[0].fam = out->fam;
        memcpy(out->fams[0].kernel_hash, out->kernel_hash, sizeof out->kernel_hash);
        memcpy(out->fams[0].limits_json, out->limits_json, sizeof out->limits_json);
        out->nfam = 1;
    }
    return rc;
}

int fattn_study_info_as(const fattn_study_info *st, const fattn_family *f, fattn_study_info *out)
{
    for (int k = 0; k < st->nfam; ++k)
        if (st->fams[k].fam == f) {
            if (out != st)
                *out = *st;
            out->fam = f;
            memcpy(out->kernel_hash, st->fams[k].kernel_hash, sizeof out->kernel_hash);
            memcpy(out->limits_json, st->fams[k].limits_json, sizeof out->limits_json);
            return 1;
        }
    return 0;
}

static int read_cand(sqlite3_stmt *st, fattn_trial_cand *c)
{
    memset(c, 0, sizeof *c);
    c->trial = sqlite3_column_int64(st, 0);
    snprintf(c->key, sizeof c->key, "%s", (const char *)sqlite3_column_text(st, 1));
    c->median_us = sqlite3_column_double(st, 2);
    return fattn_config_parse(c->key, "stored trial", &c->cfg);
}

int fattn_store_top_trials(fattn_store *s, long long study, int k, fattn_trial_cand *out, int *n)
{
    sqlite3_stmt *st;
    *n = 0;
    if (sqlite3_prepare_v2(fattn_store_db(s),
                           "SELECT min(id), config_key, min(median_us) AS m FROM trials WHERE study_id = ?1 AND "
                           "status = 'ok' AND median_us IS NOT NULL GROUP BY config_key ORDER BY m, min(id) LIMIT ?2",
                           -1, &st, NULL)
        != SQLITE_OK)
        return fattn_store_fail(s, "cannot read trials");
    sqlite3_bind_int64(st, 1, study);
    sqlite3_bind_int(st, 2, k);
    int r, rc = FATTN_OK;
    while (!rc && (r = sqlite3_step(st)) == SQLITE_ROW)
        if (!(rc = read_cand(st, &out[*n])))
            ++*n;
    sqlite3_finalize(st);
    if (rc)
        return rc;
    if (!*n)
        return fattn_error(FATTN_EFAIL,
                           "study %lld has no timed trial: nothing to confirm (run fattn-tune search on a GPU "
                           "first; fattn-tune query trials --study %lld lists what it has)",
                           study, study);
    return FATTN_OK;
}

int fattn_store_trial_cand(fattn_store *s, long long trial, const char *option, fattn_trial_cand *cand,
                           fattn_study_info *study)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(fattn_store_db(s), "SELECT id, config_key, median_us, study_id FROM trials WHERE id = ?1",
                           -1, &st, NULL)
        != SQLITE_OK)
        return fattn_store_fail(s, "cannot read trials");
    sqlite3_bind_int64(st, 1, trial);
    int r = sqlite3_step(st), rc;
    long long id = r == SQLITE_ROW ? sqlite3_column_int64(st, 3) : 0;
    if (r == SQLITE_ROW)
        rc = read_cand(st, cand);
    else if (r == SQLITE_DONE)
        rc = fattn_error(FATTN_EUSAGE, "%s%lld: no such trial in %s", option, trial, fattn_store_path(s));
    else
        rc = fattn_store_fail(s, "cannot read trials");
    sqlite3_finalize(st);
    return rc ? rc : fattn_store_study_info(s, id, study);
}
