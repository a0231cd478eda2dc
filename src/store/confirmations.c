/*
 * confirmations.c - confirm runs in the database: the statistics of each
 * candidate against its baseline, and every raw sample of both sides.
 */
#include <stdio.h>
#include <string.h>

#include "store/sql.h"
#include "store/store.h"
#include "util/err.h"
#include "util/misc.h"

static void bind_double(sqlite3_stmt *st, int i, int has, double v)
{
    if (has)
        sqlite3_bind_double(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

/* The raw samples of one side; none when it was not timed. */
static int add_samples(fattn_store *s, long long id, const char *side, const fattn_eval_result *r)
{
    char sql[160];
    if (!r || !r->has_timing)
        return FATTN_OK;
    snprintf(sql, sizeof sql,
             "INSERT INTO confirmation_samples (confirmation_id, side, idx, us) VALUES (?1, '%s', ?2, ?3)", side);
    return fattn_store_insert_samples(s, sql, id, r->samples, r->nsamples, "cannot store confirmation samples");
}

/* The worse of the numerics checks before and after the timing: the
 * largest error, and the largest relative L2 error (*has_l2 0 where an
 * output held NaN/Inf, which the norm leaves out). */
static int worst_numerics(const fattn_eval_result *r, double *err, double *rel_l2, int *has_l2)
{
    if (!r || !r->has_numerics)
        return 0;
    *err = r->num.max_abs_err, *rel_l2 = r->num.rel_l2, *has_l2 = !r->num.n_nonfinite;
    if (r->has_numerics_after && r->num_after.max_abs_err > *err)
        *err = r->num_after.max_abs_err;
    if (r->has_numerics_after && r->num_after.rel_l2 > *rel_l2)
        *rel_l2 = r->num_after.rel_l2;
    if (r->has_numerics_after && r->num_after.n_nonfinite)
        *has_l2 = 0;
    return 1;
}

int fattn_store_confirmation_add(fattn_store *s, const fattn_confirm_rec *r, long long *id)
{
    static const char sql[] =
        "INSERT INTO confirmations (study_id, created_at, config_key, baseline, n, seed, device, median_us, "
        "ci_lo_us, ci_hi_us, p90_us, base_median_us, base_ci_lo_us, base_ci_hi_us, base_p90_us, speedup, "
        "speedup_ci_lo, speedup_ci_hi, mwu_p, cliffs_delta, verdict, trial_id, arch, base_kind, base_desc, "
        "resamples, level, target, timing_method, p10_us, base_p10_us, mwu_u, significant, p90_ok, success, "
        "max_abs_err, base_max_abs_err, detail, previous_id, change_pct, regression, kernel_hash, as_searched, rel_l2, "
        "base_rel_l2) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, "
        "?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40, ?41, "
        "?42, ?43, ?44, ?45)";
    sqlite3_stmt *st;
    char now[32];
    const fattn_comparison *c = r->cmp;
    int has = c != NULL;
    double err = 0, rel_l2 = 0;
    fattn_utc_now(now);
    if (fattn_store_prepare(s, sql, &st))
        return FATTN_EFAIL;
    sqlite3_bind_int64(st, 1, r->study_id);
    sqlite3_bind_text(st, 2, now, -1, SQLITE_TRANSIENT);
    fattn_store_bind_text(st, 3, r->config_key);
    fattn_store_bind_text(st, 4, r->baseline);
    sqlite3_bind_int(st, 5, r->n);
    sqlite3_bind_int64(st, 6, r->seed);
    fattn_store_bind_text(st, 7, r->device);
    fattn_store_bind_text(st, 42, r->kernel_hash);
    sqlite3_bind_int(st, 43, r->as_searched);
    bind_double(st, 8, has, has ? c->cand_median : 0);
    bind_double(st, 9, has, has ? c->cand_lo : 0);
    bind_double(st, 10, has, has ? c->cand_hi : 0);
    bind_double(st, 11, has, has ? c->cand_p90 : 0);
    bind_double(st, 12, has, has ? c->base_median : 0);
    bind_double(st, 13, has, has ? c->base_lo : 0);
    bind_double(st, 14, has, has ? c->base_hi : 0);
    bind_double(st, 15, has, has ? c->base_p90 : 0);
    bind_double(st, 16, has, has ? c->speedup : 0);
    bind_double(st, 17, has, has ? c->speedup_lo : 0);
    bind_double(st, 18, has, has ? c->speedup_hi : 0);
    bind_double(st, 19, has, has ? c->mwu.p : 0);
    bind_double(st, 20, has, has ? c->delta : 0);
    fattn_store_bind_text(st, 21, r->verdict);
    if (r->trial_id)
        sqlite3_bind_int64(st, 22, r->trial_id);
    else
        sqlite3_bind_null(st, 22);
    fattn_store_bind_text(st, 23, r->arch);
    fattn_store_bind_text(st, 24, r->base_kind);
    fattn_store_bind_text(st, 25, r->base_desc);
    sqlite3_bind_int64(st, 26, (long long)r->resamples);
    sqlite3_bind_double(st, 27, r->level);
    sqlite3_bind_double(st, 28, r->target);
    fattn_store_bind_text(st, 29, r->timing_method);
    bind_double(st, 30, has, has ? c->cand_p10 : 0);
    bind_double(st, 31, has, has ? c->base_p10 : 0);
    bind_double(st, 32, has, has ? c->mwu.u : 0);
    if (has)
        sqlite3_bind_int(st, 33, c->significant), sqlite3_bind_int(st, 34, c->p90_ok);
    else
        sqlite3_bind_null(st, 33), sqlite3_bind_null(st, 34);
    sqlite3_bind_int(st, 35, has && c->success);
    int has_l2 = 0, has_err = worst_numerics(r->cand, &err, &rel_l2, &has_l2);
    bind_double(st, 36, has_err, err);
    bind_double(st, 44, has_err && has_l2, rel_l2);
    has_err = worst_numerics(r->base, &err, &rel_l2, &has_l2);
    bind_double(st, 37, has_err, err);
    bind_double(st, 45, has_err && has_l2, rel_l2);
    fattn_store_bind_text(st, 38, r->detail);
    if (r->previous_id) {
        sqlite3_bind_int64(st, 39, r->previous_id);
        sqlite3_bind_double(st, 40, r->change_pct);
        sqlite3_bind_int(st, 41, r->regression);
    } else {
        sqlite3_bind_null(st, 39), sqlite3_bind_null(st, 40), sqlite3_bind_null(st, 41);
    }
    if (fattn_store_step_done(s, st, "cannot store the confirmation"))
        return FATTN_EFAIL;
    *id = sqlite3_last_insert_rowid(fattn_store_db(s));
    if (add_samples(s, *id, "candidate", r->cand) || add_samples(s, *id, "baseline", r->base))
        return FATTN_EFAIL;
    return FATTN_OK;
}

int fattn_store_confirmation_previous(fattn_store *s, const char *config_key, const char *device,
                                      const fattn_shape *shape, fattn_confirm_prev *p)
{
    static const char sql[] =
        "SELECT c.id, c.median_us, c.ci_lo_us, c.ci_hi_us, c.created_at FROM confirmations c "
        "JOIN studies s ON s.id = c.study_id WHERE c.config_key = ?1 AND c.device IS ?2 AND s.batch = ?3 AND "
        "s.heads = ?4 AND s.seqlen = ?5 AND s.head_dim = ?6 AND s.causal = ?7 AND c.median_us IS NOT NULL "
        "ORDER BY c.id DESC LIMIT 1";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(fattn_store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
        return fattn_store_fail(s, "cannot read confirmations");
    sqlite3_bind_text(st, 1, config_key, -1, SQLITE_STATIC);
    fattn_store_bind_text(st, 2, device);
    sqlite3_bind_int(st, 3, shape->batch);
    sqlite3_bind_int(st, 4, shape->heads);
    sqlite3_bind_int(st, 5, shape->seqlen);
    sqlite3_bind_int(st, 6, shape->head_dim);
    sqlite3_bind_int(st, 7, shape->causal);
    int r = sqlite3_step(st), found = r == SQLITE_ROW;
    if (found) {
        p->id = sqlite3_column_int64(st, 0);
        p->median_us = sqlite3_column_double(st, 1);
        p->ci_lo_us = sqlite3_column_double(st, 2);
        p->ci_hi_us = sqlite3_column_double(st, 3);
        snprintf(p->created_at, sizeof p->created_at, "%s", (const char *)sqlite3_column_text(st, 4));
    }
    sqlite3_finalize(st);
    if (!found && r != SQLITE_DONE)
        return fattn_store_fail(s, "cannot read confirmations");
    return found;
}
