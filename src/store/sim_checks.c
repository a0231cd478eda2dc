/*
 * sim_checks.c - simulator runs in the database (fattn-tune check): the run,
 * and each configuration's verdict at each shape, with the finding's block,
 * thread, address, instruction and kernel line.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "sim/pool.h"
#include "store/sql.h"
#include "store/store.h"
#include "util/err.h"
#include "util/misc.h"

int fattn_store_sim_run_begin(fattn_store *s, const fattn_sim_run_rec *r, long long *id)
{
    static const char sql[] =
        "INSERT INTO sim_runs (created_at, status, mode, command, kernel_hash, space_path, space_hash, arch, seed, "
        "compiler, tool_version) VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
    sqlite3_stmt *st;
    char now[32];
    fattn_utc_now(now);
    if (fattn_store_begin(s))
        return FATTN_EFAIL;
    if (fattn_store_prepare(s, sql, &st)) {
        fattn_store_rollback(s);
        return FATTN_EFAIL;
    }
    fattn_store_bind_text(st, 1, now);
    fattn_store_bind_text(st, 2, r->mode);
    fattn_store_bind_text(st, 3, r->command);
    fattn_store_bind_text(st, 4, r->kernel_hash);
    fattn_store_bind_text(st, 5, r->space_path);
    fattn_store_bind_text(st, 6, r->space_hash);
    fattn_store_bind_text(st, 7, r->arch);
    sqlite3_bind_int64(st, 8, r->seed);
    fattn_store_bind_text(st, 9, r->compiler);
    fattn_store_bind_text(st, 10, FATTN_VERSION);
    if (fattn_store_step_done(s, st, "cannot store the simulator run")) {
        fattn_store_rollback(s);
        return FATTN_EFAIL;
    }
    *id = sqlite3_last_insert_rowid(fattn_store_db(s));
    return fattn_store_commit(s);
}

int fattn_store_sim_run_end(fattn_store *s, long long id, const char *status)
{
    return fattn_store_set_ended(s, "UPDATE sim_runs SET status = ?1, finished_at = ?2 WHERE id = ?3", id, status,
                                 "cannot update the simulator run");
}

static void bind_int_or_null(sqlite3_stmt *st, int i, int has, long long v)
{
    if (has)
        sqlite3_bind_int64(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

static void bind_double_or_null(sqlite3_stmt *st, int i, int has, double v)
{
    if (has)
        sqlite3_bind_double(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

int fattn_store_sim_check_add(fattn_store *s, const fattn_sim_check_rec *r)
{
    static const char sql[] =
        "INSERT INTO sim_checks (run_id, seq, created_at, kernel_hash, config_key, batch, heads, seqlen, head_dim, "
        "causal, verdict, defect, detail, fix, block, thread, other_thread, space, address, access_bytes, insn, "
        "file, line, other_line, findings, max_abs_err, norm_err, n_bad, smem_wavefronts, smem_min_wavefronts, "
        "compile_ms, run_ms, cache_hit, rel_l2, numerics_inputs) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
        "?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, "
        "?32, ?33, ?34, ?35)";
    const fattn_sim_check *c = r->check;
    const fattn_sim_finding *f = c->ran ? fattn_sim_report_worst(&c->rep) : NULL;
    const int numerics = c->ran && !f;
    sqlite3_stmt *st;
    char now[32], block[48];
    fattn_utc_now(now);
    if (fattn_store_begin(s))
        return FATTN_EFAIL;
    if (fattn_store_prepare(s, sql, &st)) {
        fattn_store_rollback(s);
        return FATTN_EFAIL;
    }
    sqlite3_bind_int64(st, 1, r->run_id);
    sqlite3_bind_int64(st, 2, r->seq);
    fattn_store_bind_text(st, 3, now);
    fattn_store_bind_text(st, 4, r->kernel_hash);
    fattn_store_bind_text(st, 5, r->config_key);
    fattn_store_bind_shape(st, 6, &r->shape);
    fattn_store_bind_text(st, 11, c->verdict);
    sqlite3_bind_int(st, 12, fattn_sim_verdict_defect(c->verdict));
    fattn_store_bind_text(st, 13, c->detail[0] ? c->detail : NULL);
    fattn_store_bind_text(st, 14, c->fix[0] ? c->fix : NULL);
    if (f) {
        snprintf(block, sizeof block, "%u,%u,%u", f->block[0], f->block[1], f->block[2]);
        fattn_store_bind_text(st, 15, block);
        sqlite3_bind_int(st, 16, f->thread);
        bind_int_or_null(st, 17, f->other_thread >= 0, f->other_thread);
        fattn_store_bind_text(st, 18, f->space[0] ? f->space : NULL);
        sqlite3_bind_int64(st, 19, (long long)f->addr);
        sqlite3_bind_int(st, 20, (int)f->size);
        fattn_store_bind_text(st, 21, f->insn[0] ? f->insn : NULL);
        fattn_store_bind_text(st, 22, f->file[0] ? f->file : NULL);
        bind_int_or_null(st, 23, f->line > 0, f->line);
        bind_int_or_null(st, 24, f->other_line > 0, f->other_line);
    } else {
        for (int i = 15; i <= 24; ++i)
            sqlite3_bind_null(st, i);
    }
    bind_int_or_null(st, 25, c->ran, c->rep.nfindings + (long long)c->rep.findings_dropped);
    bind_double_or_null(st, 26, numerics, c->num.max_abs_err);
    bind_double_or_null(st, 27, numerics, c->num.norm_err);
    bind_int_or_null(st, 28, numerics, (long long)c->num.n_bad);
    bind_double_or_null(st, 34, numerics && !c->num.n_nonfinite, c->num.rel_l2);
    fattn_store_bind_text(st, 35, numerics ? fattn_input_set_name(c->num.set) : NULL);
    unsigned long long wf = 0, phases = 0;
    for (int i = 0; i < c->rep.nsites; ++i)
        wf += c->rep.sites[i].wavefronts, phases += c->rep.sites[i].phases;
    bind_int_or_null(st, 29, c->ran, (long long)wf);
    bind_int_or_null(st, 30, c->ran, (long long)phases);
    bind_double_or_null(st, 31, c->compile_ms > 0, c->compile_ms);
    bind_double_or_null(st, 32, c->ran, c->run_ms);
    sqlite3_bind_int(st, 33, c->cache_hit);
    if (fattn_store_step_done(s, st, "cannot store the simulator verdict")) {
        fattn_store_rollback(s);
        return FATTN_EFAIL;
    }
    return fattn_store_commit(s);
}

int fattn_store_sim_defects(fattn_store *s, const char *kernel_hash, int head_dim, int causal,
                            int (*fn)(void *arg, const char *config_key, const char *verdict, const char *detail,
                                      long long check_id),
                            void *arg)
{
    static const char sql[] =
        "SELECT config_key, verdict, detail, MAX(id) FROM sim_checks WHERE kernel_hash = ?1 AND head_dim = ?2 AND "
        "causal = ?3 AND defect = 1 GROUP BY config_key ORDER BY config_key";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(fattn_store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
        return fattn_store_fail(s, "cannot read the simulator's verdicts");
    sqlite3_bind_text(st, 1, kernel_hash, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, head_dim);
    sqlite3_bind_int(st, 3, causal);
    int r, rc = FATTN_OK;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *detail = (const char *)sqlite3_column_text(st, 2);
        if ((rc = fn(arg, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
                     detail ? detail : "", sqlite3_column_int64(st, 3))))
            break;
    }
    sqlite3_finalize(st);
    if (!rc && r != SQLITE_DONE)
        return fattn_store_fail(s, "cannot read the simulator's verdicts");
    return rc;
}
