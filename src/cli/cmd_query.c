/*
 * cmd_query.c - fattn-tune query: read the database, never write it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "export/export.h"
#include "export/table.h"
#include "run/landscape.h"
#include "store/store.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/misc.h"

static const char help[] =
    "usage: fattn-tune query [studies]                   every study\n"
    "       fattn-tune query trials [--study N] [--status S] [--reason R] [--limit N]\n"
    "       fattn-tune query top [--study N] [--limit N]   fastest timed trials\n"
    "       fattn-tune query rejections [--study N]        counts by reason, with the fix\n"
    "       fattn-tune query trial ID                      one trial in full, compile log included\n"
    "       fattn-tune query cache [--limit N]             the compile cache\n"
    "       fattn-tune query confirmations [--study N]     confirm runs, newest first (all studies\n"
    "                                                      without --study)\n"
    "       fattn-tune query landscape [--study N]         every trial's verdict and time, as the\n"
    "                                                      replay evaluator reads it\n"
    "       fattn-tune query sim [--run N] [--limit N]     a simulator run's verdicts (fattn-tune check),\n"
    "                                                      failures first\n"
    "       fattn-tune query simruns                       every simulator run\n"
    "       fattn-tune query --sql 'SELECT ...'            one SELECT or reading PRAGMA (docs/schema.md)\n"
    "\n"
    "Opens the database read-only. --study defaults to the latest study.\n"
    "\n"
    "  --study N            study id (see 'query studies')\n"
    "  --run N              simulator run id (see 'query simruns'; default the latest)\n"
    "  --status S           trials with this status: rejected, compiled, error, ok\n"
    "  --reason R           trials rejected for this reason (a gate code such as spills)\n"
    "  --limit N            at most N rows (default 50 for trials, 10 for top, 0 = all)\n"
    "  --sql-timeout D      stop a --sql statement still running after D (default 60s; 0: never)\n"
    "  --format FMT         table (default), csv or json\n"
    "  -o, --output FILE    write FILE (replaced whole, only on success; a regular file or a new\n"
    "                       path; - for standard output) instead of standard output\n"
    "  --db PATH            results database (default results/fattn.db)\n"
    "  -h, --help           this help\n";

typedef struct query_opts {
    long long study, run;
    const char *status, *reason, *sql, *output;
    long limit;
    int has_limit, format;
    double sql_timeout_ms;
    int sql_timeout_given;
} query_opts;

static int handle(void *ctx, int opt, const char *arg)
{
    query_opts *o = ctx;
    long v;
    switch (opt) {
    case OPT_STUDY:
        if (cli_long("--study", arg, 1, 2147483647L, &v))
            return FATTN_EUSAGE;
        o->study = v;
        return FATTN_OK;
    case OPT_STATUS:
        if (strcmp(arg, "rejected") && strcmp(arg, "compiled") && strcmp(arg, "error") && strcmp(arg, "ok")
            && strcmp(arg, "runtime_fault") && strcmp(arg, "timeout"))
            return fattn_error(FATTN_EUSAGE, "--status '%s': expected rejected, compiled, error or ok", arg);
        o->status = arg;
        return FATTN_OK;
    case OPT_REASON:
        if (!fattn_reason_find(arg))
            return fattn_error(FATTN_EUSAGE,
                               "--reason '%s': unknown gate; expected a code such as tiling, "
                               "smem_overflow, bank_conflicts, spills or low_occupancy",
                               arg);
        o->reason = arg;
        return FATTN_OK;
    case OPT_RUN:
        if (cli_long("--run", arg, 1, 2147483647L, &v))
            return FATTN_EUSAGE;
        o->run = v;
        return FATTN_OK;
    case OPT_LIMIT: o->has_limit = 1; return cli_long("--limit", arg, 0, 100000000, &o->limit);
    case OPT_SQL: o->sql = arg; return FATTN_OK;
    case OPT_SQL_TIMEOUT:
        o->sql_timeout_given = 1;
        if (strcmp(arg, "0") && (fattn_parse_duration(arg, &o->sql_timeout_ms) || o->sql_timeout_ms <= 0))
            return fattn_error(FATTN_EUSAGE, "--sql-timeout '%s': expected a duration such as 60s or 5m, or 0", arg);
        if (!strcmp(arg, "0"))
            o->sql_timeout_ms = 0;
        return FATTN_OK;
    case OPT_FORMAT: return fattn_format_parse(arg, "--format", &o->format);
    case 'o':
    case OPT_OUTPUT: o->output = arg; return FATTN_OK;
    }
    return FATTN_EUSAGE;
}

static void reason_text(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const unsigned char *code = argc == 1 ? sqlite3_value_text(argv[0]) : NULL;
    int r = code ? fattn_reason_find((const char *)code) : 0;
    const fattn_reason_info *info = fattn_reason(r);
    int fix = *(const int *)sqlite3_user_data(ctx);
    if (info)
        sqlite3_result_text(ctx, fix ? info->fix : info->what, -1, SQLITE_STATIC);
    else
        sqlite3_result_null(ctx);
}

static int print_stmt(fattn_store *s, sqlite3_stmt *st, FILE *out, int format, int record, const char *empty)
{
    fattn_rows rows;
    int r = fattn_rows_from_stmt(&rows, st);
    int rc = FATTN_OK;
    if (r) {
        rc = fattn_store_fail(s, "query failed");
    } else if (record) {
        if (rows.nrows)
            fattn_rows_print_record(out, &rows, 0, format);
    } else {
        if (!rows.nrows && empty && format == FATTN_FMT_TABLE)
            fprintf(stderr, "%s\n", empty);
        fattn_rows_print(out, &rows, format, format == FATTN_FMT_TABLE ? 100 : 0);
    }
    fattn_rows_release(&rows);
    return rc;
}

/* The PRAGMAs that take an argument and only read: the argument names what
 * to read (a table, an index, a schema). Any other PRAGMA with an argument
 * sets something. */
static const char *const read_pragmas[] = {
    "table_info",       "table_xinfo",     "table_list",  "index_list",        "index_info", "index_xinfo",
    "foreign_key_list", "integrity_check", "quick_check", "foreign_key_check", NULL};

/* The authorizer of --sql statements: sqlite3_stmt_readonly() passes ATTACH,
 * DETACH and PRAGMAs that set connection flags (writable_schema=1, ...), since
 * none of them writes the file; query refuses them too. *why gets the reason. */
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
static int past_deadline(void *deadline)
{
    return fattn_now_ms() > *(const double *)deadline;
}

static int run_sql(fattn_store *s, const char *sql, FILE *out, int format, double timeout_ms)
{
    sqlite3_stmt *st;
    const char *tail, *why = NULL;
    sqlite3 *db = fattn_store_db(s);
    sqlite3_set_authorizer(db, authorize, &why);
    int r = sqlite3_prepare_v2(db, sql, -1, &st, &tail);
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
    if (!st || (tail && *tail)) {
        sqlite3_finalize(st);
        return fattn_error(FATTN_EUSAGE, "--sql: expected exactly one statement");
    }
    if (!sqlite3_stmt_readonly(st)) {
        sqlite3_finalize(st);
        return fattn_error(FATTN_EUSAGE, "--sql: the statement would change the database; query opens it read-only "
                                         "(SELECT and read-only PRAGMAs only)");
    }
    double deadline = fattn_now_ms() + timeout_ms;
    if (timeout_ms > 0)
        sqlite3_progress_handler(db, 10000, past_deadline, &deadline);
    fattn_rows rows;
    int rc = FATTN_OK;
    if (fattn_rows_from_stmt(&rows, st)) {
        if (sqlite3_errcode(db) == SQLITE_INTERRUPT)
            rc = fattn_error(FATTN_EFAIL,
                             "--sql: stopped after %.0f s (--sql-timeout); give a longer --sql-timeout "
                             "or a query that ends",
                             timeout_ms / 1000.0);
        else
            rc = fattn_store_fail(s, "query failed");
    } else {
        fattn_rows_print(out, &rows, format, format == FATTN_FMT_TABLE ? 100 : 0);
    }
    fattn_rows_release(&rows);
    sqlite3_progress_handler(db, 0, NULL, NULL);
    sqlite3_finalize(st);
    return rc;
}

/* The landscape of a study (run/landscape.h): header from the study, one line
 * per trial. */
static int write_landscape(fattn_store *s, long long study, FILE *out)
{
    static const char head_sql[] = "SELECT coalesce(device, 'none'), arch, batch, heads, seqlen, head_dim, causal, "
                                   "coalesce(timing_method, 'not timed'), family FROM studies WHERE id = ?1";
    static const char rows_sql[] = "SELECT config_key, status, coalesce(reason, ''), median_us, p10_us, p90_us "
                                   "FROM trials WHERE study_id = ?1 ORDER BY config_key";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(fattn_store_db(s), head_sql, -1, &st, NULL) != SQLITE_OK)
        return fattn_store_fail(s, "cannot read the study");
    sqlite3_bind_int64(st, 1, study);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return fattn_store_fail(s, "cannot read the study");
    }
    fattn_shape shape = {sqlite3_column_int(st, 2), sqlite3_column_int(st, 3), sqlite3_column_int(st, 4),
                         sqlite3_column_int(st, 5), sqlite3_column_int(st, 6)};
    fattn_landscape_write_header(out, (const char *)sqlite3_column_text(st, 0),
                                 (const char *)sqlite3_column_text(st, 1), (const char *)sqlite3_column_text(st, 8),
                                 &shape, (const char *)sqlite3_column_text(st, 7));
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(fattn_store_db(s), rows_sql, -1, &st, NULL) != SQLITE_OK)
        return fattn_store_fail(s, "cannot read the trials");
    sqlite3_bind_int64(st, 1, study);
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        fprintf(out, "%s,%s,%s", sqlite3_column_text(st, 0), sqlite3_column_text(st, 1), sqlite3_column_text(st, 2));
        for (int c = 3; c < 6; ++c) {
            if (sqlite3_column_type(st, c) == SQLITE_NULL)
                fputs(",", out);
            else
                fprintf(out, ",%.17g", sqlite3_column_double(st, c));
        }
        fputc('\n', out);
    }
    sqlite3_finalize(st);
    return r == SQLITE_DONE ? FATTN_OK : fattn_store_fail(s, "cannot read the trials");
}

/* The simulator run `want` (0: the latest) into *run. */
static int sim_run_pick(fattn_store *s, long long want, long long *run)
{
    sqlite3_stmt *st;
    const char *sql = want ? "SELECT id FROM sim_runs WHERE id = ?1" : "SELECT max(id) FROM sim_runs";
    if (sqlite3_prepare_v2(fattn_store_db(s), sql, -1, &st, NULL) != SQLITE_OK)
        return fattn_store_fail(s, "cannot read the simulator runs");
    if (want)
        sqlite3_bind_int64(st, 1, want);
    int r = sqlite3_step(st);
    *run = r == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    if (r != SQLITE_ROW && r != SQLITE_DONE)
        return fattn_store_fail(s, "cannot read the simulator runs");
    if (!*run && want)
        return fattn_error(FATTN_EUSAGE, "--run %lld: no such simulator run in %s (see fattn-tune query simruns)", want,
                           fattn_store_path(s));
    if (!*run)
        return fattn_error(FATTN_EFAIL, "%s has no simulator runs yet: fattn-tune check makes them",
                           fattn_store_path(s));
    return FATTN_OK;
}

int cmd_query(int argc, char **argv, cli_common *c)
{
    static const struct option opts[] = {
        CLI_COMMON_OPTIONS,
        {"study", required_argument, NULL, OPT_STUDY},
        {"status", required_argument, NULL, OPT_STATUS},
        {"reason", required_argument, NULL, OPT_REASON},
        {"limit", required_argument, NULL, OPT_LIMIT},
        {"run", required_argument, NULL, OPT_RUN},
        {"sql", required_argument, NULL, OPT_SQL},
        {"sql-timeout", required_argument, NULL, OPT_SQL_TIMEOUT},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"output", required_argument, NULL, OPT_OUTPUT},
        {NULL, 0, NULL, 0},
    };
    static const int what = 0, fix = 1;
    query_opts o = {.format = FATTN_FMT_TABLE, .sql_timeout_ms = 60000};
    fattn_outfile out = {0};
    fattn_store *s = NULL;
    sqlite3_stmt *st = NULL;
    int first, rc;
    long trial_id = 0;

    rc = cli_parse(argc, argv, opts, "o:", c, NULL, handle, &o, help, &first);
    if (rc)
        return rc > 0 ? FATTN_OK : rc;
    if (o.sql_timeout_given && !o.sql)
        return fattn_error(FATTN_EUSAGE, "query: --sql-timeout goes with --sql");
    if (o.sql && first < argc)
        return fattn_error(FATTN_EUSAGE, "query: --sql takes no subcommand ('%s' given)", argv[first]);
    const char *sub = first < argc ? argv[first++] : "studies";
    if (strcmp(sub, "trial") == 0) {
        if (first >= argc)
            return fattn_error(FATTN_EUSAGE, "query trial: expected a trial id, e.g. fattn-tune query trial 12");
        if (cli_long("query trial", argv[first++], 1, 2147483647L, &trial_id))
            return FATTN_EUSAGE;
    } else if (strcmp(sub, "studies") && strcmp(sub, "trials") && strcmp(sub, "top") && strcmp(sub, "rejections")
               && strcmp(sub, "cache") && strcmp(sub, "landscape") && strcmp(sub, "confirmations") && strcmp(sub, "sim")
               && strcmp(sub, "simruns")) {
        return fattn_error(FATTN_EUSAGE,
                           "query: unknown subcommand '%s'; expected studies, trials, top, rejections, "
                           "trial ID, cache, landscape, confirmations, sim or simruns",
                           sub);
    }
    if (o.run && strcmp(sub, "sim"))
        return fattn_error(FATTN_EUSAGE, "query: --run picks a simulator run, for 'query sim' only");
    if (first < argc)
        return cli_extra_operand("query", argv[first]);

    if ((rc = cli_open_db(c, &s)))
        return rc;
    sqlite3 *db = fattn_store_db(s);
    sqlite3_create_function(db, "fattn_what", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, (void *)&what, reason_text, NULL,
                            NULL);
    sqlite3_create_function(db, "fattn_fix", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, (void *)&fix, reason_text, NULL,
                            NULL);
    if ((rc = fattn_outfile_open(&out, o.output)))
        goto out;
    if (o.sql) {
        rc = run_sql(s, o.sql, out.f, o.format, o.sql_timeout_ms);
        goto out;
    }
    long long study = 0;
    if (!strcmp(sub, "trials") || !strcmp(sub, "top") || !strcmp(sub, "rejections") || !strcmp(sub, "landscape")) {
        if (o.study) {
            if ((rc = fattn_study_exists(s, o.study)))
                goto out;
            study = o.study;
        } else if (!(study = fattn_latest_study(s))) {
            rc = FATTN_EFAIL;
            goto out;
        }
    }
    if (!strcmp(sub, "confirmations") && o.study) {
        if ((rc = fattn_study_exists(s, o.study)))
            goto out;
        study = o.study;
    }
    if (!strcmp(sub, "landscape")) {
        rc = write_landscape(s, study, out.f);
        goto out;
    }
    if (!strcmp(sub, "sim")) {
        if ((rc = sim_run_pick(s, o.run, &study)))
            goto out;
    }
    char empty[256] = "";
    const char *sql;
    long limit = o.has_limit ? o.limit : 50;
    int record = 0;
    if (!strcmp(sub, "studies")) {
        sql = "SELECT s.id, s.created_at, s.status, s.command, s.strategy, "
              "s.batch || ',' || s.heads || ',' || s.seqlen || ',' || s.head_dim AS shape, "
              "CASE s.causal WHEN 1 THEN 'yes' ELSE 'no' END AS causal, s.arch, coalesce(s.device, '-') AS device, "
              "(SELECT count(*) FROM trials t WHERE t.study_id = s.id) AS trials, "
              "(SELECT count(*) FROM trials t WHERE t.study_id = s.id AND t.status = 'compiled') AS compiled, "
              "(SELECT count(*) FROM trials t WHERE t.study_id = s.id AND t.status = 'ok') AS timed, "
              "(SELECT min(t.median_us) FROM trials t WHERE t.study_id = s.id AND t.status = 'ok') AS best_us "
              "FROM studies s ORDER BY s.id";
        limit = 0;
        snprintf(empty, sizeof empty, "no studies yet");
    } else if (!strcmp(sub, "trials")) {
        sql = "SELECT id, seq, config_key, status, reason, registers, spill_stores + spill_loads AS spill_bytes, "
              "smem_dynamic AS smem, round(occupancy, 3) AS occupancy, round(compile_ms, 1) AS compile_ms, "
              "cache_hit, median_us, tflops, detail FROM trials WHERE study_id = ?1 "
              "AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR reason = ?3) ORDER BY seq LIMIT ?4";
        snprintf(empty, sizeof empty, "no matching trials in study %lld", study);
    } else if (!strcmp(sub, "top")) {
        sql = "SELECT id, config_key, median_us, p10_us, p90_us, tflops, gbps, registers, "
              "round(occupancy, 3) AS occupancy FROM trials WHERE study_id = ?1 AND status = 'ok' "
              "AND median_us IS NOT NULL ORDER BY median_us, id LIMIT ?4";
        limit = o.has_limit ? o.limit : 10;
        snprintf(empty, sizeof empty,
                 "study %lld has no timed trials yet: trials are timed by fattn-tune search on "
                 "a GPU",
                 study);
    } else if (!strcmp(sub, "rejections")) {
        sql = "SELECT reason, count(*) AS count, min(config_key) AS example, fattn_what(reason) AS what, "
              "fattn_fix(reason) AS fix FROM trials WHERE study_id = ?1 AND status = 'rejected' "
              "GROUP BY reason ORDER BY count(*) DESC, reason";
        limit = 0;
        snprintf(empty, sizeof empty, "study %lld has no rejected trials", study);
    } else if (!strcmp(sub, "confirmations")) {
        sql = "SELECT id, study_id AS study, created_at, config_key, baseline, n, round(median_us, 3) AS median_us, "
              "printf('%.3f-%.3f', ci_lo_us, ci_hi_us) AS ci95_us, round(base_median_us, 3) AS base_median_us, "
              "round(speedup, 3) AS speedup, printf('%.3f-%.3f', speedup_ci_lo, speedup_ci_hi) AS speedup_ci, "
              "printf('%.3g', mwu_p) AS mwu_p, round(cliffs_delta, 3) AS cliffs_delta, verdict, "
              "CASE regression WHEN 1 THEN 'REGRESSION' WHEN 0 THEN 'no' ELSE '' END AS vs_previous "
              "FROM confirmations WHERE ?1 = 0 OR study_id = ?1 ORDER BY id DESC LIMIT ?4";
        snprintf(empty, sizeof empty, "no confirmations yet: fattn-tune confirm makes them (on a GPU)");
    } else if (!strcmp(sub, "sim")) {
        sql = "SELECT id, config_key, batch || ',' || heads || ',' || seqlen || ',' || head_dim AS shape, "
              "CASE causal WHEN 1 THEN 'yes' ELSE 'no' END AS causal, verdict, "
              "CASE WHEN line IS NULL THEN '' ELSE replace(file, rtrim(file, replace(file, '/', '')), '') || ':' || "
              "line || coalesce(' vs ' || other_line, '') END "
              "AS line, insn, round(run_ms / 1000.0, 2) AS sim_s, detail, fix FROM sim_checks WHERE run_id = ?1 "
              "ORDER BY verdict = 'ok', defect DESC, verdict, seq LIMIT ?4";
        snprintf(empty, sizeof empty, "sim run %lld has no verdicts yet", study);
    } else if (!strcmp(sub, "simruns")) {
        sql = "SELECT r.id, r.created_at, r.status, r.mode, substr(r.kernel_hash, 1, 12) AS kernel, r.arch, "
              "(SELECT count(*) FROM sim_checks c WHERE c.run_id = r.id) AS checked, "
              "(SELECT count(*) FROM sim_checks c WHERE c.run_id = r.id AND c.verdict = 'ok') AS ok, "
              "(SELECT count(*) FROM sim_checks c WHERE c.run_id = r.id AND c.defect = 1) AS defects, "
              "r.command FROM sim_runs r ORDER BY r.id";
        limit = 0;
        snprintf(empty, sizeof empty, "no simulator runs yet: fattn-tune check makes them");
    } else if (!strcmp(sub, "cache")) {
        sql = "SELECT key, arch, ok, registers, spill_stores + spill_loads AS spill_bytes, smem_dynamic AS smem, "
              "round(compile_ms, 1) AS compile_ms, length(cubin) AS cubin_bytes, created_at, options "
              "FROM compile_cache ORDER BY created_at, key LIMIT ?4";
        snprintf(empty, sizeof empty, "the compile cache is empty");
    } else {
        sql = "SELECT t.id, t.study_id, t.seq, t.config_key, t.status, t.reason, t.detail, t.created_at, "
              "t.block_m, t.block_n, t.block_k, t.num_warps, t.stages, t.unroll, t.cp_async, t.swizzle, t.half2, "
              "t.split_kv, t.q_regs, t.pad_bytes, t.copy_colmajor, "
              "s.batch || ',' || s.heads || ',' || s.seqlen || ',' || s.head_dim AS shape, s.causal, s.arch, "
              "s.device, t.registers, t.spill_stores, t.spill_loads, t.stack_frame, t.smem_static, t.smem_dynamic, "
              "t.smem_model, t.occupancy, t.blocks_per_sm, t.occupancy_limiter, t.compile_ms, t.cache_hit, "
              "t.cache_key, t.median_us, t.p10_us, t.p90_us, t.tflops, t.gbps, t.max_abs_err, t.norm_err, t.n_bad, "
              "t.rel_l2, t.numerics_inputs, t.numerics_seed, t.run_ms, t.validation_ms, t.benchmark_ms, t.strategy_ms, "
              "fattn_fix(t.reason) AS fix, "
              "c.options AS nvrtc_options, c.log AS compile_log "
              "FROM trials t JOIN studies s ON s.id = t.study_id LEFT JOIN compile_cache c ON c.key = t.cache_key "
              "WHERE t.id = ?5";
        record = 1;
    }
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        rc = fattn_store_fail(s, "cannot prepare the query");
        goto out;
    }
    int np = sqlite3_bind_parameter_count(st);
    if (np >= 1)
        sqlite3_bind_int64(st, 1, study);
    if (np >= 2) {
        if (o.status)
            sqlite3_bind_text(st, 2, o.status, -1, SQLITE_STATIC);
        if (o.reason)
            sqlite3_bind_text(st, 3, o.reason, -1, SQLITE_STATIC);
    }
    if (np >= 4)
        sqlite3_bind_int64(st, 4, limit ? limit : -1);
    if (np >= 5)
        sqlite3_bind_int64(st, 5, trial_id);
    if (record) {
        fattn_rows rows;
        if (fattn_rows_from_stmt(&rows, st)) {
            rc = fattn_store_fail(s, "query failed");
        } else if (!rows.nrows) {
            rc = fattn_error(FATTN_EUSAGE, "query trial %ld: no such trial in %s", trial_id, fattn_store_path(s));
        } else {
            fattn_rows_print_record(out.f, &rows, 0, o.format);
        }
        fattn_rows_release(&rows);
    } else {
        rc = print_stmt(s, st, out.f, o.format, 0, c->quiet ? NULL : empty);
    }
out:
    sqlite3_finalize(st);
    rc = fattn_outfile_finish(&out, rc);
    fattn_store_close(&s);
    return rc;
}
