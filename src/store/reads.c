/*
 * reads.c - the named reads (read.h) and a user's own SELECT.
 *
 * Each read is one statement; its columns are in the order its reader
 * (named beside it) takes them, so a column is added at the end.
 */
#include "store/read.h"
#include "store/sql.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "gates/gates.h"
#include "run/evaluator.h"
#include "util/err.h"
#include "util/misc.h"
#include "util/sha256.h"

/* The confirmations that speak for a study's kernel: measured on its arch
 * and its kernel source (confirm --allow-arch-change or --allow-kernel-change
 * measure others, which the export does not claim; NULL before v8). */
#define AS_SEARCHED "coalesce(as_searched, 1) = 1"

static const struct {
    const char *sql;
    const char *what; /* "cannot read WHAT" when it fails */
} reads[FATTN_READ_COUNT] = {
    /* cli/cmd_query.c prints the views as they come. */
    [FATTN_READ_STUDIES] =
        {"SELECT s.id, s.created_at, s.status, s.command, s.strategy, "
         "s.batch || ',' || s.heads || ',' || s.seqlen || ',' || s.head_dim AS shape, "
         "CASE s.causal WHEN 1 THEN 'yes' ELSE 'no' END AS causal, s.arch, coalesce(s.device, '-') AS device, "
         "(SELECT count(*) FROM trials t WHERE t.study_id = s.id) AS trials, "
         "(SELECT count(*) FROM trials t WHERE t.study_id = s.id AND t.status = 'compiled') AS compiled, "
         "(SELECT count(*) FROM trials t WHERE t.study_id = s.id AND t.status = 'ok') AS timed, "
         "(SELECT min(t.median_us) FROM trials t WHERE t.study_id = s.id AND t.status = 'ok') AS best_us "
         "FROM studies s ORDER BY s.id",
         "studies"},
    [FATTN_READ_TRIALS] =
        {"SELECT id, seq, config_key, status, reason, registers, spill_stores + spill_loads AS spill_bytes, "
         "smem_dynamic AS smem, round(occupancy, 3) AS occupancy, round(compile_ms, 1) AS compile_ms, "
         "cache_hit, median_us, tflops, detail FROM trials WHERE study_id = ?1 "
         "AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR reason = ?3) ORDER BY seq LIMIT ?4",
         "trials"},
    [FATTN_READ_TOP] = {"SELECT id, config_key, median_us, p10_us, p90_us, tflops, gbps, registers, "
                        "round(occupancy, 3) AS occupancy FROM trials WHERE study_id = ?1 AND status = 'ok' "
                        "AND median_us IS NOT NULL ORDER BY median_us, id LIMIT ?4",
                        "trials"},
    [FATTN_READ_REJECTIONS] =
        {"SELECT reason, count(*) AS count, min(config_key) AS example, fattn_what(reason) AS what, "
         "fattn_fix(reason, coalesce(family, (SELECT family FROM studies WHERE id = ?1))) AS fix FROM trials WHERE "
         "study_id = ?1 "
         "AND status = 'rejected' "
         "GROUP BY reason ORDER BY count(*) DESC, reason",
         "trials"},
    [FATTN_READ_CONFIRMATIONS] =
        {"SELECT id, study_id AS study, created_at, config_key, baseline, n, round(median_us, 3) AS median_us, "
         "printf('%.3f-%.3f', ci_lo_us, ci_hi_us) AS ci95_us, round(base_median_us, 3) AS base_median_us, "
         "round(speedup, 3) AS speedup, printf('%.3f-%.3f', speedup_ci_lo, speedup_ci_hi) AS speedup_ci, "
         "printf('%.3g', mwu_p) AS mwu_p, round(cliffs_delta, 3) AS cliffs_delta, verdict, "
         "CASE regression WHEN 1 THEN 'REGRESSION' WHEN 0 THEN 'no' ELSE '' END AS vs_previous "
         "FROM confirmations WHERE ?1 = 0 OR study_id = ?1 ORDER BY id DESC LIMIT ?4",
         "confirmations"},
    [FATTN_READ_SIM] =
        {"SELECT id, config_key, batch || ',' || heads || ',' || seqlen || ',' || head_dim AS shape, "
         "CASE causal WHEN 1 THEN 'yes' ELSE 'no' END AS causal, verdict, "
         "CASE WHEN line IS NULL THEN '' ELSE replace(file, rtrim(file, replace(file, '/', '')), '') || ':' || "
         "line || coalesce(' vs ' || other_line, '') END "
         "AS line, insn, round(run_ms / 1000.0, 2) AS sim_s, detail, fix FROM sim_checks WHERE run_id = ?1 "
         "ORDER BY verdict = 'ok', defect DESC, verdict, seq LIMIT ?4",
         "the simulator's verdicts"},
    [FATTN_READ_SIMRUNS] = {"SELECT r.id, r.created_at, r.status, r.mode, substr(r.kernel_hash, 1, 12) AS kernel, "
                            "r.arch, (SELECT count(*) FROM sim_checks c WHERE c.run_id = r.id) AS checked, "
                            "(SELECT count(*) FROM sim_checks c WHERE c.run_id = r.id AND c.verdict = 'ok') AS ok, "
                            "(SELECT count(*) FROM sim_checks c WHERE c.run_id = r.id AND c.defect = 1) AS defects, "
                            "r.command FROM sim_runs r ORDER BY r.id",
                            "the simulator runs"},
    [FATTN_READ_GPUS] = {"SELECT round, after_trials, device, gpu_uuid, config_key, status, round(median_us, 4) AS "
                         "median_us, round(100 * (median_us / (SELECT min(g2.median_us) FROM gpu_checks g2 WHERE "
                         "g2.study_id = g.study_id AND g2.round = g.round) - 1), 2) AS over_fastest_pct, created_at "
                         "FROM gpu_checks g WHERE study_id = ?1 ORDER BY round, device",
                         "the GPU checks"},
    [FATTN_READ_CACHE] =
        {"SELECT key, arch, ok, registers, spill_stores + spill_loads AS spill_bytes, smem_dynamic AS smem, "
         "round(compile_ms, 1) AS compile_ms, length(cubin) AS cubin_bytes, created_at, options "
         "FROM compile_cache ORDER BY created_at, key LIMIT ?4",
         "the compile cache"},
    [FATTN_READ_TRIAL] =
        {"SELECT t.id, t.study_id, t.seq, t.config_key, t.status, t.reason, t.detail, t.created_at, "
         "t.block_m, t.block_n, t.block_k, t.num_warps, t.stages, t.unroll, t.cp_async, t.swizzle, t.half2, "
         "t.split_kv, t.q_regs, t.pad_bytes, t.copy_colmajor, "
         "s.batch || ',' || s.heads || ',' || s.seqlen || ',' || s.head_dim AS shape, s.causal, s.arch, "
         "s.device, t.registers, t.spill_stores, t.spill_loads, t.stack_frame, t.smem_static, t.smem_dynamic, "
         "t.smem_model, t.occupancy, t.blocks_per_sm, t.occupancy_limiter, t.compile_ms, t.cache_hit, "
         "t.cache_key, t.median_us, t.p10_us, t.p90_us, t.tflops, t.gbps, t.max_abs_err, t.norm_err, t.n_bad, "
         "t.rel_l2, t.numerics_inputs, t.numerics_seed, t.run_ms, t.validation_ms, t.benchmark_ms, t.strategy_ms, "
         "fattn_fix(t.reason, coalesce(t.family, s.family)) AS fix, c.options AS nvrtc_options, c.log AS compile_log "
         "FROM trials t JOIN studies s ON s.id = t.study_id LEFT JOIN compile_cache c ON c.key = t.cache_key "
         "WHERE t.id = ?1",
         "the trial"},
    [FATTN_READ_SIM_RUN] = {"SELECT max(id) FROM sim_runs WHERE ?1 = 0 OR id = ?1", "the simulator runs"},
    /* export/landscape.c */
    [FATTN_READ_LANDSCAPE_HEAD] = {"SELECT coalesce(device, 'none'), arch, batch, heads, seqlen, head_dim, causal, "
                                   "coalesce(timing_method, 'not timed'), family, command, (SELECT group_concat("
                                   "family, ', ') FROM (SELECT family FROM study_families WHERE study_id = ?1 ORDER "
                                   "BY position)), (SELECT count(*) FROM study_families WHERE study_id = ?1), "
                                   "(SELECT count(*) FROM study_families WHERE study_id = ?1 AND family = ?2) "
                                   "FROM studies WHERE id = ?1",
                                   "the study"},
    /* One line per configuration: its last trial (a bare column beside max() comes from the max row). */
    [FATTN_READ_LANDSCAPE] = {"SELECT config_key, status, coalesce(reason, ''), median_us, p10_us, p90_us, max(seq) "
                              "FROM trials WHERE study_id = ?1 AND status IN ('ok', 'rejected', 'error') "
                              "AND (?2 IS NULL OR family = ?2) GROUP BY config_key ORDER BY config_key",
                              "the trials"},
    /* report/report.c */
    [FATTN_READ_REPORT_TRIALS] =
        {"SELECT t.id, t.status, t.reason, t.median_us, t.p10_us, t.p90_us, (julianday(t.created_at) - f.first) * "
         "86400.0, t.compile_ms, t.registers, t.params_json, t.config_key, (julianday(s.finished_at) - f.first) * "
         "86400.0, t.spill_stores, t.smem_static + coalesce(t.smem_dynamic, 0), t.occupancy, t.cache_hit, "
         "coalesce(t.family, s.family) FROM trials "
         "t JOIN studies s ON s.id = t.study_id, (SELECT min(julianday(created_at)) AS first "
         "FROM trials WHERE study_id = ?1) f WHERE t.study_id = ?1 ORDER BY t.seq",
         "trials"},
    [FATTN_READ_STUDY] = {"SELECT id, created_at, status, command, strategy, seed, batch, heads, seqlen, head_dim, "
                          "causal, arch, device, evaluator, timing_method, search_ms, runs, (SELECT count(*) FROM "
                          "trials WHERE study_id = ?1), (SELECT count(*) FROM trials WHERE study_id = ?1 AND status "
                          "= 'ok'), kernel_hash, family, (SELECT count(DISTINCT device) FROM gpu_checks WHERE "
                          "study_id = ?1), gpu_spread_pct FROM studies WHERE id = ?1",
                          "studies"},
    [FATTN_READ_LAST_CONFIRMATION] =
        {"SELECT id, config_key, baseline, base_desc, n, median_us, ci_lo_us, ci_hi_us, p90_us, base_median_us, "
         "base_ci_lo_us, base_ci_hi_us, base_p90_us, speedup, speedup_ci_lo, speedup_ci_hi, mwu_p, cliffs_delta, "
         "verdict, created_at, resamples FROM confirmations WHERE study_id = ?1 AND median_us IS NOT NULL "
         "ORDER BY id DESC LIMIT 1",
         "confirmations"},
    [FATTN_READ_CONFIRMATION_SAMPLES] = {"SELECT side, us FROM confirmation_samples WHERE confirmation_id = ?1 "
                                         "ORDER BY side, idx",
                                         "confirmation samples"},
    [FATTN_READ_TOP10] =
        {"SELECT t.id, t.config_key, t.median_us, t.p10_us, t.p90_us, t.tflops, t.gbps, t.registers, t.occupancy, "
         "t.rel_l2, (SELECT printf('%.3f (%s vs %s)', c.median_us, c.verdict, c.baseline) FROM confirmations c "
         "WHERE c.study_id = t.study_id AND c.config_key = t.config_key AND c.median_us IS NOT NULL ORDER BY c.id "
         "DESC LIMIT 1) FROM trials t WHERE t.study_id = ?1 AND t.status = 'ok' ORDER BY t.median_us, t.id LIMIT 10",
         "trials"},
    /* export/export.c: among the latest measured confirmation of each
     * configuration, the lowest median; that confirmation; the best trial. */
    [FATTN_READ_CONFIRMED_KEY] = {"SELECT config_key FROM confirmations c WHERE study_id = ?1 AND median_us IS NOT "
                                  "NULL AND " AS_SEARCHED " AND id = (SELECT max(id) FROM confirmations d WHERE "
                                  "d.study_id = c.study_id AND d.config_key = c.config_key AND d.median_us IS NOT "
                                  "NULL AND " AS_SEARCHED ") ORDER BY median_us, id LIMIT 1",
                                  "confirmations"},
    [FATTN_READ_CONFIRMATION_OF] =
        {"SELECT id, created_at, baseline, base_desc, verdict, n, median_us, ci_lo_us, ci_hi_us, p90_us, "
         "base_median_us, speedup, speedup_ci_lo, speedup_ci_hi FROM confirmations WHERE study_id = ?1 AND "
         "config_key = ?2 AND median_us IS NOT NULL AND " AS_SEARCHED " ORDER BY id DESC LIMIT 1",
         "confirmations"},
    [FATTN_READ_BEST] =
        {"SELECT s.created_at, s.command, s.strategy, s.seed, s.batch, s.heads, s.seqlen, s.head_dim, s.causal, "
         "s.arch, s.device, coalesce(f.kernel_hash, s.kernel_hash), coalesce(f.space_hash, s.space_hash), "
         "s.timing_method, t.id, t.config_key, " FATTN_TRIAL_PARAM_COLUMNS
         ", t.median_us, t.p10_us, t.p90_us, t.tflops, t.gbps, t.smem_dynamic, t.cache_key, c.options, "
         "coalesce(t.family, s.family), s.evaluator FROM studies s JOIN trials t ON t.study_id = s.id "
         "LEFT JOIN study_families f ON f.study_id = s.id AND f.family = t.family "
         "LEFT JOIN compile_cache c ON c.key = t.cache_key "
         "WHERE s.id = ?1 AND t.status = 'ok' AND t.median_us IS NOT NULL AND (?2 IS NULL OR t.config_key = ?2) "
         "ORDER BY t.median_us, t.id LIMIT 1",
         "trials"},
    /* export/t4.c */
    [FATTN_READ_T4] = {"SELECT t.id, t.created_at, t.block_m, t.block_n, t.block_k, t.num_warps, t.stages, "
                       "t.unroll, t.cp_async, t.swizzle, t.half2, t.split_kv, t.q_regs, t.status, t.reason, "
                       "t.compile_ms, t.run_ms, t.median_us, t.tflops, t.gbps, t.max_abs_err, t.config_key, "
                       "(SELECT group_concat(us) FROM (SELECT us FROM samples WHERE trial_id = t.id ORDER BY idx)), "
                       "t.validation_ms, t.benchmark_ms, t.strategy_ms FROM trials t WHERE t.study_id = ?1 AND "
                       "t.status <> 'compiled' ORDER BY t.seq",
                       "trials"},
    /* tune/resume.c; study_families also for report/report.c */
    [FATTN_READ_RESUME_STUDY] =
        {"SELECT command, status, args_json, space_hash, kernel_hash, coalesce(search_ms, 0), "
         "(SELECT coalesce(max(seq) + 1, 0) FROM trials WHERE study_id = ?1), device, evaluator "
         "FROM studies WHERE id = ?1",
         "the study"},
    [FATTN_READ_RESUME_TRIALS] = {"SELECT id, config_key, status, reason, run_ms IS NOT NULL, median_us, p10_us, "
                                  "p90_us, tflops, gbps, coalesce(compile_ms, 0) + coalesce(run_ms, 0) "
                                  "FROM trials WHERE study_id = ?1 ORDER BY seq",
                                  "the study's trials"},
    [FATTN_READ_STUDY_FAMILIES] =
        {"SELECT family, space_hash, kernel_hash, limits_json FROM study_families WHERE study_id = ?1 "
         "ORDER BY position",
         "the study's families"},
};

const char *fattn_store_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

int fattn_store_read(fattn_store *s, enum fattn_read r, const fattn_read_args *a, sqlite3_stmt **st)
{
    char what[96];
    *st = NULL;
    if (sqlite3_prepare_v2(fattn_store_db(s), reads[r].sql, -1, st, NULL) != SQLITE_OK) {
        snprintf(what, sizeof what, "cannot read %s", reads[r].what);
        return fattn_store_fail(s, what);
    }
    int n = sqlite3_bind_parameter_count(*st);
    if (n >= 1)
        sqlite3_bind_int64(*st, 1, a->id);
    if (n >= 2)
        fattn_store_bind_text(*st, 2, a->text);
    if (n >= 3)
        fattn_store_bind_text(*st, 3, a->text2);
    if (n >= 4)
        sqlite3_bind_int64(*st, 4, a->limit ? a->limit : -1);
    return FATTN_OK;
}

/* fattn_what(REASON) and fattn_fix(REASON [, FAMILY]): a gate code's text
 * and fix (in the family's parameters when it is named). */
static void reason_text(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const unsigned char *code = argc >= 1 ? sqlite3_value_text(argv[0]) : NULL;
    const unsigned char *family = argc == 2 ? sqlite3_value_text(argv[1]) : NULL;
    int r = code ? fattn_reason_find((const char *)code) : 0;
    const fattn_reason_info *info = fattn_reason(r);
    int fix = *(const int *)sqlite3_user_data(ctx);
    if (info)
        sqlite3_result_text(
            ctx, fix ? fattn_reason_fix(r, family ? fattn_family_find((const char *)family) : NULL) : info->what, -1,
            SQLITE_STATIC);
    else
        sqlite3_result_null(ctx);
}

/* fattn_uuid_of(TEXT): the name-based UUID of a text (RFC 9562's version 8,
 * from the first 16 bytes of its SHA-256): the identity schema version 13
 * gives a study or a simulator run recorded before it (schema.h). */
static void uuid_of(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const unsigned char *text = sqlite3_value_text(argv[0]);
    char out[37];
    if (!text) {
        sqlite3_result_null(ctx);
        return;
    }
    fattn_uuid_of(text, (size_t)sqlite3_value_bytes(argv[0]), out);
    sqlite3_result_text(ctx, out, -1, SQLITE_TRANSIENT);
}

/* fattn_gpu_model(DEVICE): fattn_device_gpu_model() (run/evaluator.h). */
static void gpu_model(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    (void)argc;
    char out[512];
    fattn_device_gpu_model((const char *)sqlite3_value_text(argv[0]), out, sizeof out);
    sqlite3_result_text(ctx, out, -1, SQLITE_TRANSIENT);
}

void fattn_store_add_functions(sqlite3 *db)
{
    static const int what = 0, fix = 1;
    sqlite3_create_function(db, "fattn_uuid_of", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, uuid_of, NULL, NULL);
    sqlite3_create_function(db, "fattn_gpu_model", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, gpu_model, NULL, NULL);
    sqlite3_create_function(db, "fattn_what", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, (void *)&what, reason_text, NULL,
                            NULL);
    for (int n = 1; n <= 2; ++n)
        sqlite3_create_function(db, "fattn_fix", n, SQLITE_UTF8 | SQLITE_DETERMINISTIC, (void *)&fix, reason_text, NULL,
                                NULL);
}

/* The PRAGMAs that take an argument and only read: the argument names what
 * to read (a table, an index, a schema). Any other PRAGMA with an argument
 * sets something. */
static const char *const read_pragmas[] = {
    "table_info",       "table_xinfo",     "table_list",  "index_list",        "index_info", "index_xinfo",
    "foreign_key_list", "integrity_check", "quick_check", "foreign_key_check", NULL};

/* The authorizer of a user's statement: sqlite3_stmt_readonly() passes
 * ATTACH, DETACH and PRAGMAs that set connection flags (writable_schema=1,
 * ...), since none of them writes the file; they are refused too. *why gets
 * the reason. */
static int authorize(void *why, int action, const char *a, const char *b, const char *db, const char *trigger)
{
    (void)db, (void)trigger;
    const char **reason = why;
    if (action == SQLITE_ATTACH || action == SQLITE_DETACH) {
        *reason = "ATTACH and DETACH are refused; query reads the database of --db alone";
        return SQLITE_DENY;
    }
    if (action == SQLITE_FUNCTION && b && !sqlite3_stricmp(b, "load_extension")) {
        *reason = "load_extension is refused; query runs SQL on the database alone";
        return SQLITE_DENY;
    }
    if (action == SQLITE_PRAGMA && b) {
        for (const char *const *p = read_pragmas; *p; ++p)
            if (!strcmp(a, *p))
                return SQLITE_OK;
        *reason = "a PRAGMA given a value would change the connection or the database";
        return SQLITE_DENY;
    }
    return SQLITE_OK;
}

/* SQLite's progress handler: stops the statement past its deadline. */
/* A user's statement under its timeout: the sink's time (the output, which
 * may wait on a slow reader) moves the deadline on, so that only SQLite's
 * own work counts. */
typedef struct timed_sink {
    const fattn_row_sink *to;
    double deadline;
} timed_sink;

static int past_deadline(void *arg)
{
    return fattn_now_ms() > ((const timed_sink *)arg)->deadline;
}

static void timed_begin(void *arg, int ncols, const char *const *names)
{
    timed_sink *t = arg;
    double t0 = fattn_now_ms();
    t->to->begin(t->to->arg, ncols, names);
    t->deadline += fattn_now_ms() - t0;
}

static void timed_row(void *arg, const char *const *cells, const unsigned char *numeric)
{
    timed_sink *t = arg;
    double t0 = fattn_now_ms();
    t->to->row(t->to->arg, cells, numeric);
    t->deadline += fattn_now_ms() - t0;
}

/* The statement of `sql`, one read-only statement, into *st. */
static int prepare_user_sql(sqlite3 *db, const char *sql, sqlite3_stmt **st)
{
    const char *tail, *why = NULL;
    sqlite3_set_authorizer(db, authorize, &why);
    int r = sqlite3_prepare_v2(db, sql, -1, st, &tail);
    sqlite3_set_authorizer(db, NULL, NULL);
    if (r != SQLITE_OK && why)
        return fattn_error(FATTN_EUSAGE, "--sql: %s (SELECT and read-only PRAGMAs only)", why);
    if (r != SQLITE_OK)
        return fattn_error(FATTN_EUSAGE, "--sql: %s; expected one read-only statement (tables in docs/schema.md)",
                           sqlite3_errmsg(db));
    while (tail && isspace((unsigned char)*tail))
        ++tail;
    if (tail && *tail == ';')
        for (++tail; isspace((unsigned char)*tail); ++tail)
            ;
    if (!*st || (tail && *tail)) {
        sqlite3_finalize(*st);
        return fattn_error(FATTN_EUSAGE, "--sql: expected exactly one statement");
    }
    if (!sqlite3_stmt_readonly(*st)) {
        sqlite3_finalize(*st);
        return fattn_error(FATTN_EUSAGE, "--sql: the statement would change the database; query opens it read-only "
                                         "(SELECT and read-only PRAGMAs only)");
    }
    return FATTN_OK;
}

int fattn_store_user_sql(fattn_store *s, const char *sql, double timeout_ms, const fattn_row_sink *sink)
{
    sqlite3_stmt *st;
    sqlite3 *db = fattn_store_db(s);
    int rc = prepare_user_sql(db, sql, &st);
    if (rc)
        return rc;
    timed_sink t = {sink, fattn_now_ms() + timeout_ms};
    if (timeout_ms > 0)
        sqlite3_progress_handler(db, 10000, past_deadline, &t);
    if (fattn_rows_stream(st, timeout_ms > 0 ? &(fattn_row_sink){timed_begin, timed_row, &t} : sink)) {
        if (sqlite3_errcode(db) == SQLITE_INTERRUPT)
            rc = fattn_error(FATTN_EFAIL,
                             "--sql: stopped after %g s (--sql-timeout); give a longer --sql-timeout "
                             "or a query that ends",
                             timeout_ms / 1000.0);
        else
            rc = fattn_store_fail(s, "query failed");
    }
    sqlite3_progress_handler(db, 0, NULL, NULL);
    sqlite3_finalize(st);
    return rc;
}
