/*
 * fixture_db.c - builds databases for the CLI tests.
 *
 *   fixture_db timed PATH        a study whose trials carry timings: a TEST
 *                                FIXTURE, timings typed in here, not measured
 *                                (the GPU engine fills these columns for real)
 *   fixture_db compiled PATH     a compile study beside: two configurations
 *                                compiled (one with a parameter named in
 *                                markup), one rejected by the gates
 *   fixture_db version PATH N    set the schema version to N
 *   fixture_db foreign PATH      a SQLite database of another program
 *   fixture_db migrate PATH      opens the database for writing: migrated
 *                                to the latest schema, nothing else
 *   fixture_db sql PATH SQL      runs SQL on the database (a state no
 *                                command writes: a study as an older
 *                                fattn-tune left it)
 *   fixture_db hostile PATH      two studies whose every text column holds
 *                                hostile text (tests/hostile.h): quotes,
 *                                comment ends, trigraphs, markup, control
 *                                bytes, malformed UTF-8
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostile.h"
#include "store/store.h"
#include "util/err.h"

static int raw(const char *path, const char *sql)
{
    sqlite3 *db;
    int rc = sqlite3_open(path, &db) == SQLITE_OK && sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : 99;
    if (rc)
        fprintf(stderr, "fixture_db: %s: %s\n", path, sqlite3_errmsg(db));
    sqlite3_close(db);
    return rc;
}

static int timed(const char *path)
{
    static const struct {
        const char *key, *status, *reason;
        double median, p10, p90;
    } rows[] = {
        {"bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "ok", NULL, 7.4, 7.3, 7.6},
        {"bm128-bn64-bk32-w8-s2-u1-cp1-sw1-h1", "ok", NULL, 6.1, 6.0, 6.3},
        {"bm64-bn128-bk64-w4-s2-u1-cp1-sw1-h1", "ok", NULL, 8.9, 8.8, 9.2},
        {"bm32-bn32-bk16-w4-s1-u1-cp0-sw0-h0", "rejected", "tiling", 0, 0, 0},
    };
    fattn_store *s;
    long long study;
    if (fattn_store_open(path, FATTN_DB_WRITE, &s))
        return 99;
    fattn_study_rec sr = {.command = "search",
                          .strategy = "exhaustive",
                          .seed = 7,
                          .has_seed = 1,
                          .shape = {2, 8, 512, 64, 0},
                          .arch = "sm_90",
                          .device = "NVIDIA H100 80GB HBM3 (test fixture)",
                          .nvrtc_version = "13.0",
                          .space_path = "search/space.json",
                          .space_hash = "fixture",
                          .kernel_hash = "fixture",
                          .limits_json = "{}",
                          .argv = "fixture_db timed"};
    if (fattn_store_study_begin(s, &sr, &study))
        return 99;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        fattn_config c;
        long long id;
        char sql[512];
        if (fattn_config_parse(rows[i].key, "fixture", &c))
            return 99;
        fattn_trial_rec tr = {.study_id = study,
                              .seq = (long long)i,
                              .cfg = &c,
                              .status = rows[i].status,
                              .reason = rows[i].reason,
                              .detail = "test fixture",
                              .compile_ms = -1};
        if (fattn_store_trial_add(s, &tr, &id))
            return 99;
        if (rows[i].median > 0) {
            snprintf(sql, sizeof sql,
                     "UPDATE trials SET median_us = %g, p10_us = %g, p90_us = %g, tflops = %g, gbps = %g "
                     "WHERE id = %lld",
                     rows[i].median, rows[i].p10, rows[i].p90, 1.073741824e9 / rows[i].median / 1e6,
                     4194304.0 / rows[i].median / 1e3, id);
            if (fattn_store_exec(s, sql))
                return 99;
        }
    }
    if (fattn_store_exec(s, "UPDATE studies SET timing_method = 'test fixture: timings typed in, not measured'")
        || fattn_store_study_end(s, study, "done"))
        return 99;
    fattn_store_close(&s);
    printf("%lld\n", study);
    return 0;
}

static int compiled(const char *path)
{
    static const char *const keys[] = {"bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1", "bm64-bn64-bk64-w4-s2-u1-cp1-sw1-h1",
                                       "bm32-bn32-bk16-w4-s1-u1-cp0-sw0-h0"};
    fattn_store *s;
    long long study, id;
    if (fattn_store_open(path, FATTN_DB_WRITE, &s))
        return 99;
    fattn_study_rec sr = {.command = "compile",
                          .strategy = "every survivor",
                          .shape = {2, 8, 512, 64, 0},
                          .arch = "sm_90",
                          .nvrtc_version = "13.0",
                          .space_path = "search/space.json",
                          .space_hash = "fixture",
                          .kernel_hash = "fixture",
                          .limits_json = "{}",
                          .argv = "fixture_db compiled"};
    if (fattn_store_study_begin(s, &sr, &study))
        return 99;
    for (int i = 0; i < 3; ++i) {
        fattn_config c;
        const int rejected = i == 2;
        if (fattn_config_parse(keys[i], "fixture", &c))
            return 99;
        fattn_trial_rec tr = {.study_id = study,
                              .seq = i,
                              .cfg = &c,
                              .status = rejected ? "rejected" : "compiled",
                              .reason = rejected ? "tiling" : NULL,
                              .detail = "test fixture",
                              .cache_key = rejected ? NULL : "fixture",
                              .compile_ms = rejected ? -1 : 400 + 100 * i};
        if (fattn_store_trial_add(s, &tr, &id))
            return 99;
    }
    /* A parameter name of markup, in one trial: the report escapes it. */
    char sql[256];
    snprintf(sql, sizeof sql,
             "UPDATE trials SET params_json = json_set(params_json, '$.\"<b>x</b>\"', 1) WHERE study_id = %lld "
             "AND seq = 0",
             study);
    if (fattn_store_exec(s, sql) || fattn_store_study_end(s, study, "done"))
        return 99;
    fattn_store_close(&s);
    printf("%lld\n", study);
    return 0;
}

static int hostile_fixture(const char *path)
{
    static const char *const strings[] = {
        "*/ #define FATTN_BLOCK_M 1 /*",  "\"\n#define FATTN_TUNED_ARCH \"pwned",
        "</td><script>alert(1)</script>", "ends in a trigraph ?\?/",
        "ends in a backslash \\",         "\x1b[31mred\x1b[0m\r\t\x7f \xff\xfe \xc0\xaf",
        "h\xc3\xa9llo ' onclick='x %s%n",
    };
    fattn_store *s;
    if (fattn_store_open(path, FATTN_DB_WRITE, &s) || hostile_build(s))
        return 99;
    char *columns = hostile_columns(fattn_store_db(s));
    int rc = hostile_poison(fattn_store_db(s), columns, strings, (int)(sizeof strings / sizeof strings[0]));
    free(columns);
    fattn_store_close(&s);
    return rc ? 99 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "timed") == 0)
        return timed(argv[2]);
    if (argc == 3 && strcmp(argv[1], "compiled") == 0)
        return compiled(argv[2]);
    if (argc == 4 && strcmp(argv[1], "version") == 0) {
        char sql[64];
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", atoi(argv[3]));
        return raw(argv[2], sql);
    }
    if (argc == 3 && strcmp(argv[1], "foreign") == 0)
        return raw(argv[2], "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); "
                            "INSERT INTO customers (name) VALUES ('ada')");
    if (argc == 3 && strcmp(argv[1], "hostile") == 0)
        return hostile_fixture(argv[2]);
    if (argc == 4 && strcmp(argv[1], "sql") == 0)
        return raw(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "migrate") == 0) {
        fattn_store *s;
        if (fattn_store_open(argv[2], FATTN_DB_UPDATE, &s))
            return 99;
        fattn_store_close(&s);
        return 0;
    }
    fprintf(stderr, "usage: fixture_db timed PATH | compiled PATH | version PATH N | foreign PATH | hostile PATH | "
                    "sql PATH SQL | migrate PATH\n");
    return 99;
}
