/*
 * test_store.c - the results database: creation and migration, refusing
 * corrupt, foreign, newer-schema and missing files without changing a byte,
 * trials and compile-cache entries round-tripping, a transaction per trial;
 * the named reads and a user's own SELECT.
 */
#include "t.h"

#include <ctype.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/merge.h"
#include "store/read.h"
#include "store/schema.h"
#include "store/store.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/sha256.h"

static char dir[64];

static char *path(const char *name)
{
    static char p[4][256];
    static int i;
    char *s = p[i++ % 4];
    snprintf(s, 256, "%s/%s", dir, name);
    return s;
}

static void file_hash(const char *p, char out[65])
{
    char *text;
    size_t len;
    if (fattn_read_file(p, "file", FATTN_EFAIL, &text, &len)) {
        strcpy(out, "unreadable");
        return;
    }
    fattn_sha256_hex(text, len, out);
    free(text);
}

static void raw_sql(const char *p, const char *sql)
{
    sqlite3 *db;
    if (sqlite3_open(p, &db) != SQLITE_OK || sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", p, sqlite3_errmsg(db));
        exit(T_HARNESS);
    }
    sqlite3_close(db);
}

static long long pragma(fattn_store *s, const char *sql)
{
    sqlite3_stmt *st;
    long long v = -1;
    if (sqlite3_prepare_v2(fattn_store_db(s), sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* The first column of the first row as text (caller frees), or NULL. */
static char *sql_text(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    char *v = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW
        && sqlite3_column_text(st, 0))
        v = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
}

static void create_and_reopen(void)
{
    fattn_store *s;
    /* A new path in a folder that does not exist yet. */
    CHECK_INT(fattn_store_open(path("new/fattn.db"), FATTN_DB_WRITE, &s), FATTN_OK);
    CHECK_INT(pragma(s, "PRAGMA user_version"), fattn_schema_latest());
    CHECK_INT(pragma(s, "PRAGMA application_id"), FATTN_APPLICATION_ID);
    CHECK_INT(pragma(s, "SELECT count(*) FROM sqlite_master WHERE name IN ('studies', 'trials', 'samples', "
                        "'confirmations', 'confirmation_samples', 'compile_cache')"),
              6);
    fattn_store_close(&s);
    CHECK(s == NULL);
    CHECK_INT(fattn_store_open(path("new/fattn.db"), FATTN_DB_READ, &s), FATTN_OK);
    CHECK_INT(pragma(s, "PRAGMA user_version"), fattn_schema_latest());
    fattn_store_close(&s);
    /* An empty file is a new database. */
    FILE *f = fopen(path("empty.db"), "w");
    fclose(f);
    CHECK_INT(fattn_store_open(path("empty.db"), FATTN_DB_WRITE, &s), FATTN_OK);
    CHECK_INT(pragma(s, "PRAGMA user_version"), fattn_schema_latest());
    fattn_store_close(&s);
}

static void refusals(void)
{
    fattn_store *s = NULL;
    char before[65], after[65];

    /* Missing, for reading. */
    CHECK_INT(fattn_store_open(path("missing.db"), FATTN_DB_READ, &s), FATTN_EFAIL);
    CHECK_CONTAINS(fattn_last_error(), "does not exist");
    CHECK(access(path("missing.db"), F_OK) != 0);

    /* Not a database at all. */
    FILE *f = fopen(path("garbage.db"), "w");
    for (int i = 0; i < 4096; ++i)
        fputc((i * 7919) & 0xff, f);
    fclose(f);
    file_hash(path("garbage.db"), before);
    CHECK_INT(fattn_store_open(path("garbage.db"), FATTN_DB_WRITE, &s), FATTN_EFAIL);
    CHECK_CONTAINS(fattn_last_error(), "not a SQLite database or corrupt");
    file_hash(path("garbage.db"), after);
    CHECK_STR(after, before);
    CHECK(access(path("garbage.db-wal"), F_OK) != 0);

    /* Another program's database. */
    raw_sql(path("other.db"), "CREATE TABLE customers (id INTEGER)");
    file_hash(path("other.db"), before);
    CHECK_INT(fattn_store_open(path("other.db"), FATTN_DB_WRITE, &s), FATTN_EFAIL);
    CHECK_CONTAINS(fattn_last_error(), "not a fattn-tune database");
    file_hash(path("other.db"), after);
    CHECK_STR(after, before);

    /* A newer schema. */
    CHECK_INT(fattn_store_open(path("newer.db"), FATTN_DB_WRITE, &s), FATTN_OK);
    fattn_store_close(&s);
    raw_sql(path("newer.db"), "PRAGMA user_version = 99");
    file_hash(path("newer.db"), before);
    CHECK_INT(fattn_store_open(path("newer.db"), FATTN_DB_WRITE, &s), FATTN_EFAIL);
    CHECK_CONTAINS(fattn_last_error(), "schema version 99, newer than this fattn-tune");
    CHECK_INT(fattn_store_open(path("newer.db"), FATTN_DB_READ, &s), FATTN_EFAIL);
    file_hash(path("newer.db"), after);
    CHECK_STR(after, before);

    /* A directory. */
    CHECK_INT(fattn_store_open(dir, FATTN_DB_WRITE, &s), FATTN_EFAIL);
    CHECK_CONTAINS(fattn_last_error(), "is a directory");

    /* A fattn-tune header with no data: nothing to read. */
    f = fopen(path("blank.db"), "w");
    fclose(f);
    CHECK_INT(fattn_store_open(path("blank.db"), FATTN_DB_READ, &s), FATTN_EFAIL);
    CHECK_CONTAINS(fattn_last_error(), "holds no fattn-tune data yet");

    /* A truncated database: the header survives, the pages do not. */
    CHECK_INT(fattn_store_open(path("cut.db"), FATTN_DB_WRITE, &s), FATTN_OK);
    fattn_store_close(&s);
    CHECK(truncate(path("cut.db"), 100) == 0);
    file_hash(path("cut.db"), before);
    CHECK(fattn_store_open(path("cut.db"), FATTN_DB_WRITE, &s) == FATTN_EFAIL);
    file_hash(path("cut.db"), after);
    CHECK_STR(after, before);
}

static void trials_and_cache(void)
{
    fattn_store *s;
    long long study, trial;
    CHECK_INT(fattn_store_open(path("rt.db"), FATTN_DB_WRITE, &s), FATTN_OK);
    fattn_study_rec sr = {.command = "compile",
                          .strategy = "all survivors",
                          .shape = {2, 8, 512, 64, 1},
                          .arch = "sm_90",
                          .nvrtc_version = "13.0",
                          .space_hash = "abc",
                          .kernel_hash = "def",
                          .limits_json = "{}"};
    CHECK_INT(fattn_store_study_begin(s, &sr, &study), FATTN_OK);
    CHECK_INT(study, 1);

    fattn_config c;
    fattn_config_default(&c, &fattn_family_mma);
    fattn_compiled res = {.ok = 1,
                          .regs = 121,
                          .spill_stores = 4,
                          .spill_loads = 8,
                          .stack_frame = 16,
                          .smem_static = 0,
                          .smem_dynamic = 16384,
                          .threads = 128};
    fattn_trial_rec tr = {.study_id = study,
                          .seq = 0,
                          .cfg = &c,
                          .status = "compiled",
                          .detail = "fine",
                          .cache_key = "k1",
                          .cache_hit = 0,
                          .compile_ms = 321.5,
                          .res = &res,
                          .smem_model = 16384,
                          .has_occupancy = 1,
                          .occupancy = 0.25,
                          .blocks_per_sm = 4,
                          .occupancy_limiter = "registers"};
    CHECK_INT(fattn_store_begin(s), FATTN_OK);
    CHECK_INT(fattn_store_trial_add(s, &tr, &trial), FATTN_OK);
    CHECK_INT(fattn_store_commit(s), FATTN_OK);
    /* A second trial with the same (study, seq) violates the schema and is
     * rolled back without touching the first. */
    CHECK_INT(fattn_store_begin(s), FATTN_OK);
    CHECK_INT(fattn_store_trial_add(s, &tr, NULL), FATTN_EFAIL);
    fattn_store_rollback(s);
    CHECK_INT(pragma(s, "SELECT count(*) FROM trials"), 1);
    CHECK_INT(pragma(s, "SELECT registers + spill_stores + spill_loads + stack_frame FROM trials"), 121 + 4 + 8 + 16);
    CHECK_INT(pragma(s, "SELECT block_m * 1000 + num_warps FROM trials WHERE config_key = "
                        "'bm64-bn64-bk32-w4-s2-u1-cp1-sw1-h1'"),
              64004);
    /* Every parameter in its own column (FATTN_TRIAL_PARAM_COLUMNS in
     * registry order): distinct values, each read back by name. */
    fattn_config odd;
    CHECK_INT(fattn_config_parse("bm128-bn32-bk16-w8-s3-u2-cp0-sw0-h0-kv4-qr1-pad48-cm1", "test", &odd), FATTN_OK);
    fattn_trial_rec tr2 = {.study_id = study, .seq = 1, .cfg = &odd, .status = "compiled", .compile_ms = -1};
    CHECK_INT(fattn_store_trial_add(s, &tr2, NULL), FATTN_OK);
    for (int p = 0; p < FATTN_MMA_NPARAMS; ++p) {
        char q[160], col[32];
        size_t k = 0;
        for (; fattn_mma_params[p].name[k] && k < sizeof col - 1; ++k)
            col[k] = (char)tolower((unsigned char)fattn_mma_params[p].name[k]); /* BLOCK_M -> block_m */
        col[k] = '\0';
        snprintf(q, sizeof q, "SELECT %s FROM trials WHERE seq = 1", col);
        t_case = fattn_mma_params[p].name;
        CHECK_INT(pragma(s, q), odd.v[p]);
    }
    t_case = "trials_and_cache";
    /* params_json: every parameter of the family, by name, in table order. */
    CHECK_INT(pragma(s, "SELECT json_extract(params_json, '$.BLOCK_M') * 1000 + json_extract(params_json, "
                        "'$.COPY_COLMAJOR') * 100 + json_extract(params_json, '$.SPLIT_KV') FROM trials WHERE seq = 1"),
              128104);
    CHECK_INT(pragma(s, "SELECT count(*) FROM trials, json_each(trials.params_json) WHERE seq = 1"), FATTN_MMA_NPARAMS);
    CHECK_INT(pragma(s, "SELECT count(*) FROM studies WHERE family = 'mma'"), 1);
    CHECK_INT(fattn_store_study_end(s, study, "done"), FATTN_OK);
    CHECK_INT(pragma(s, "SELECT count(*) FROM studies WHERE status = 'done' AND finished_at IS NOT NULL"), 1);

    unsigned char cubin[1000];
    for (int i = 0; i < 1000; ++i)
        cubin[i] = (unsigned char)(i * 31);
    fattn_cache_entry e = {.kernel_hash = "kh",
                           .arch = "sm_90",
                           .options = "-DBLOCK_M=64",
                           .nvrtc_version = "13.0",
                           .ok = 1,
                           .log = "ptxas info",
                           .cubin = cubin,
                           .cubin_size = sizeof cubin,
                           .compile_ms = 250,
                           .res = res};
    strcpy(e.key, "k1");
    CHECK_INT(fattn_store_cache_put(s, &e), FATTN_OK);
    fattn_cache_entry got;
    CHECK_INT(fattn_store_cache_get(s, "k1", &got), 1);
    CHECK_INT(got.cubin_size, sizeof cubin);
    CHECK(memcmp(got.cubin, cubin, sizeof cubin) == 0);
    CHECK_STR(got.log, "ptxas info");
    CHECK_STR(got.options, "-DBLOCK_M=64");
    CHECK_INT(got.res.regs, 121);
    CHECK_INT(got.res.smem_dynamic, 16384);
    CHECK_INT(got.res.threads, 128);
    CHECK(got.res.log == got.log);
    fattn_cache_entry_release(&got);
    CHECK_INT(fattn_store_cache_get(s, "nope", &got), 0);
    /* A study's shape is read back as --shape would have taken it: one out of
     * range (a damaged or edited record) is refused, not used. */
    fattn_study_info info;
    CHECK_INT(fattn_store_study_info(s, study, &info), FATTN_OK);
    CHECK(info.shape.seqlen == 512 && info.shape.causal == 1);
    static const char *const damage[] = {"seqlen = 2147483647", "seqlen = 4294967808", "batch = -1", "head_dim = 96",
                                         "causal = 2"};
    for (size_t i = 0; i < sizeof damage / sizeof damage[0]; ++i) {
        char sql[128];
        snprintf(sql, sizeof sql, "UPDATE studies SET batch = 2, seqlen = 512, head_dim = 64, causal = 1, %s",
                 damage[i]);
        CHECK_INT(sqlite3_exec(fattn_store_db(s), sql, NULL, NULL, NULL), SQLITE_OK);
        CHECK_INT(fattn_store_study_info(s, study, &info), FATTN_EFAIL);
        CHECK_CONTAINS(fattn_last_error(), "is out of range; the database is damaged");
    }
    fattn_store_close(&s);

    /* WAL mode, and what was committed is there after reopening. */
    CHECK_INT(fattn_store_open(path("rt.db"), FATTN_DB_READ, &s), FATTN_OK);
    CHECK_INT(pragma(s, "SELECT count(*) FROM compile_cache"), 1);
    fattn_store_close(&s);
    /* (A reader opens a database with no -wal immutable; a writer sees its mode.) */
    CHECK_INT(fattn_store_open(path("rt.db"), FATTN_DB_WRITE, &s), FATTN_OK);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(fattn_store_db(s), "PRAGMA journal_mode", -1, &st, NULL);
    CHECK(sqlite3_step(st) == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0);
    sqlite3_finalize(st);
    fattn_store_close(&s);
}

static void migration_from_empty(void)
{
    /* A version-0 database (a fresh sqlite file with no tables) is migrated
     * through every step to the latest version. */
    fattn_store *s;
    raw_sql(path("v0.db"), "PRAGMA user_version = 0");
    CHECK_INT(fattn_store_open(path("v0.db"), FATTN_DB_WRITE, &s), FATTN_OK);
    CHECK_INT(pragma(s, "PRAGMA user_version"), fattn_schema_latest());
    fattn_store_close(&s);
    for (int v = 1; v <= fattn_schema_latest(); ++v)
        CHECK(fattn_schema_migration(v) != NULL);
    CHECK(fattn_schema_migration(0) == NULL);
    CHECK(fattn_schema_migration(fattn_schema_latest() + 1) == NULL);
}

/* A database of schema version `version` (every migration up to it) with
 * one study, as a fattn-tune of that version left it; open. */
static sqlite3 *old_db(const char *p, int version)
{
    sqlite3 *db;
    char sql[128];
    if (sqlite3_open(p, &db) != SQLITE_OK)
        exit(T_HARNESS);
    for (int v = 1; v <= version; ++v)
        if (sqlite3_exec(db, fattn_schema_migration(v), 0, 0, 0))
            exit(T_HARNESS);
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d; PRAGMA application_id = %d", version, FATTN_APPLICATION_ID);
    if (sqlite3_exec(db, sql, 0, 0, 0)
        || sqlite3_exec(db,
                        "INSERT INTO studies (created_at, status, command, strategy, batch, heads, seqlen, "
                        "head_dim, causal, arch, tool_version, nvrtc_version, sqlite_version, cjson_version, "
                        "space_hash, kernel_hash, limits_json) VALUES ('2026-01-01T00:00:00Z', 'done', "
                        "'compile', 'all survivors', 2, 8, 512, 64, 0, 'sm_90', '0.1.0', '13.0', '3', '1', 'a', "
                        "'b', '{}')",
                        0, 0, 0))
        exit(T_HARNESS);
    return db;
}

static void migration_keeps_data(void)
{
    /* A database of version 1 with a study in it, as fattn-tune 0.1 left it. */
    sqlite3_close(old_db(path("v1.db"), 1));

    fattn_store *s;
    /* Reading does not upgrade. */
    CHECK_INT(fattn_store_open(path("v1.db"), FATTN_DB_READ, &s), FATTN_EFAIL);
    CHECK_CONTAINS(fattn_last_error(), "has schema version 1; a writing command (fattn-tune compile) upgrades it");
    /* Writing does, keeping the study. */
    CHECK_INT(fattn_store_open(path("v1.db"), FATTN_DB_WRITE, &s), FATTN_OK);
    CHECK_INT(pragma(s, "PRAGMA user_version"), fattn_schema_latest());
    CHECK_INT(pragma(s, "SELECT count(*) FROM studies WHERE command = 'compile' AND evaluator IS NULL"), 1);
    /* v4: confirmations carry the statistics confirm writes. */
    CHECK_INT(pragma(s, "SELECT count(*) FROM pragma_table_info('confirmations') WHERE name IN ('trial_id', "
                        "'base_kind', 'significant', 'regression', 'previous_id')"),
              5);
    CHECK_INT(pragma(s, "SELECT count(*) FROM pragma_table_info('trials') WHERE name = 'run_ms'"), 1);
    /* v5: the extension tunables, with the defaults earlier trials ran with. */
    CHECK_INT(pragma(s, "SELECT count(*) FROM pragma_table_info('trials') WHERE (name = 'split_kv' AND dflt_value "
                        "= '1') OR (name = 'q_regs' AND dflt_value = '0')"),
              2);
    /* v3: the old study was one run, without search arguments. */
    CHECK_INT(pragma(s, "SELECT count(*) FROM studies WHERE runs = 1 AND args_json IS NULL AND search_ms IS NULL"), 1);
    CHECK_INT(fattn_store_study_reopen(s, 1, "[\"--shape\",\"1,1,1,64\"]"), FATTN_OK);
    CHECK_INT(fattn_store_study_time(s, 1, 1500.0), FATTN_OK);
    CHECK_INT(pragma(s, "SELECT count(*) FROM studies WHERE runs = 2 AND status = 'running' AND search_ms = 1500 "
                        "AND json_array_length(args_json) = 2"),
              1);
    fattn_store_close(&s);
}

static void migration_families(void)
{
    /* A version-9 database with a trial whose every column holds a value of
     * its own: v10 rebuilds the trials table (the parameter columns lose
     * NOT NULL) and must carry each value to the column of the same name,
     * give params_json from the columns, and record the families as mma. */
    char sql[4096];
    sqlite3 *db = old_db(path("v9.db"), 9);
    if (sqlite3_exec(db,
                     "INSERT INTO compile_cache (key, kernel_hash, arch, options, nvrtc_version, created_at, ok) "
                     "VALUES ('k', 'kh', 'sm_90', '-D', '13.0', 'now', 1)",
                     0, 0, 0))
        exit(T_HARNESS);
    /* Every column of trials, numbered: integer columns get 1000 + their
     * position, text and real ones the same number (SQLite keeps what it is
     * given where the affinity allows). */
    sqlite3_stmt *st;
    char cols[2048] = "", vals[2048] = "";
    size_t nc = 0, nv = 0;
    int ncols = 0;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_table_info('trials') ORDER BY cid", -1, &st, NULL))
        exit(T_HARNESS);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        int value = strcmp(name, "study_id") == 0 ? 1 : 1000 + ncols;
        nc += (size_t)snprintf(cols + nc, sizeof cols - nc, "%s%s", ncols ? ", " : "", name);
        nv += (size_t)snprintf(vals + nv, sizeof vals - nv, "%s%d", ncols ? ", " : "", value);
        ++ncols;
    }
    sqlite3_finalize(st);
    snprintf(sql, sizeof sql, "INSERT INTO trials (%s) VALUES (%s)", cols, vals);
    if (sqlite3_exec(db, sql, 0, 0, 0))
        exit(T_HARNESS);
    sqlite3_close(db);

    fattn_store *s;
    CHECK_INT(fattn_store_open(path("v9.db"), FATTN_DB_WRITE, &s), FATTN_OK);
    CHECK_INT(pragma(s, "PRAGMA user_version"), fattn_schema_latest());
    /* The old columns in their old order, then params_json. */
    char *save = NULL, *copy = strdup(cols);
    int i = 0;
    for (char *c = strtok_r(copy, ", ", &save); c; c = strtok_r(NULL, ", ", &save), ++i) {
        char q[160];
        t_case = c;
        snprintf(q, sizeof q, "SELECT cid FROM pragma_table_info('trials') WHERE name = '%s'", c);
        CHECK_INT(pragma(s, q), i);
        snprintf(q, sizeof q, "SELECT %s FROM trials", c);
        CHECK_INT(pragma(s, q), strcmp(c, "study_id") == 0 ? 1 : 1000 + i);
    }
    free(copy);
    t_case = "migration_families";
    CHECK_INT(pragma(s, "SELECT cid FROM pragma_table_info('trials') WHERE name = 'params_json'"), ncols);
    CHECK_INT(pragma(s, "SELECT json_extract(params_json, '$.BLOCK_M') = block_m AND json_extract(params_json, "
                        "'$.COPY_COLMAJOR') = copy_colmajor AND json_extract(params_json, '$.Q_REGS') = q_regs "
                        "FROM trials"),
              1);
    CHECK_INT(pragma(s, "SELECT count(*) FROM trials, json_each(trials.params_json)"), FATTN_MMA_NPARAMS);
    CHECK_INT(pragma(s, "SELECT count(*) FROM pragma_table_info('trials') WHERE name = 'block_m' AND \"notnull\" = 0"),
              1);
    CHECK_INT(pragma(s, "SELECT count(*) FROM studies WHERE family = 'mma'"), 1);
    CHECK_INT(pragma(s, "SELECT count(*) FROM compile_cache WHERE family = 'mma'"), 1);
    /* The indexes and the samples' reference survive the rebuild. */
    CHECK_INT(pragma(s, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'trials' AND name IN "
                        "('trials_by_status', 'trials_by_time')"),
              2);
    CHECK_INT(pragma(s, "SELECT count(*) FROM pragma_foreign_key_list('samples') WHERE \"table\" = 'trials'"), 1);
    CHECK_INT(pragma(s, "PRAGMA foreign_key_check"), -1); /* no row: nothing dangles */
    fattn_store_close(&s);
}

static void migration_identities(void)
{
    /* A version-12 database with two studies and a simulator run: v13 gives
     * each a UUID of its own, derived from the row (version 8), the same
     * in a copy of the file; every row inserted later without one gets a
     * random one (version 4) from the trigger. */
    sqlite3 *db = old_db(path("v12.db"), 12);
    if (sqlite3_exec(db,
                     "INSERT INTO studies (created_at, status, command, strategy, batch, heads, seqlen, head_dim, "
                     "causal, arch, tool_version, nvrtc_version, sqlite_version, cjson_version, space_hash, "
                     "kernel_hash, limits_json) SELECT created_at, status, command, strategy, batch, heads, seqlen, "
                     "head_dim, causal, arch, tool_version, nvrtc_version, sqlite_version, cjson_version, space_hash, "
                     "kernel_hash, limits_json FROM studies; "
                     "INSERT INTO sim_runs (created_at, status, mode, command, kernel_hash, seed, tool_version) "
                     "VALUES ('now', 'done', 'space', 'check', 'kh', 1, '0.1')",
                     0, 0, 0))
        exit(T_HARNESS);
    sqlite3_close(db);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path("v12.db"), path("v12-copy.db"));
    if (system(cmd) != 0)
        exit(T_HARNESS);
    fattn_store *s, *copy;
    CHECK_INT(fattn_store_open(path("v12.db"), FATTN_DB_WRITE, &s), FATTN_OK);
    CHECK_INT(fattn_store_open(path("v12-copy.db"), FATTN_DB_WRITE, &copy), FATTN_OK);
    static const char same[] = "SELECT group_concat(uuid, ' ') FROM (SELECT uuid FROM studies UNION ALL SELECT "
                               "uuid FROM sim_runs)";
    char *mine = sql_text(fattn_store_db(s), same), *theirs = sql_text(fattn_store_db(copy), same);
    CHECK(mine && theirs && strlen(mine) == 3 * 36 + 2 && !strcmp(mine, theirs));
    free(mine);
    free(theirs);
    fattn_store_close(&copy);
    static const char uuid_ok[] = " GLOB '[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]-"
                                  "[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[48][0-9a-f][0-9a-f][0-9a-f]-"
                                  "[89ab][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]"
                                  "[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]'";
    char q[1024];
    snprintf(q, sizeof q, "SELECT count(DISTINCT uuid) FROM studies WHERE uuid %s AND origin_db IS NULL", uuid_ok);
    CHECK_INT(pragma(s, q), 2);
    snprintf(q, sizeof q, "SELECT count(*) FROM sim_runs WHERE uuid %s", uuid_ok);
    CHECK_INT(pragma(s, q), 1);
    /* New rows: the trigger. */
    CHECK_INT(fattn_store_exec(s, "INSERT INTO studies (created_at, status, command, strategy, batch, heads, seqlen, "
                                  "head_dim, causal, arch, tool_version, nvrtc_version, sqlite_version, "
                                  "cjson_version, space_hash, kernel_hash, limits_json) SELECT created_at, status, "
                                  "command, strategy, batch, heads, seqlen, head_dim, causal, arch, tool_version, "
                                  "nvrtc_version, sqlite_version, cjson_version, space_hash, kernel_hash, limits_json "
                                  "FROM studies WHERE id = 1"),
              FATTN_OK);
    snprintf(q, sizeof q, "SELECT count(DISTINCT uuid) FROM studies WHERE uuid %s", uuid_ok);
    CHECK_INT(pragma(s, q), 3);
    CHECK_INT(pragma(s, "SELECT count(*) FROM studies WHERE substr(uuid, 15, 1) = '4' AND id = 3"), 1);
    /* A UUID given is kept, and stays unique. */
    CHECK_INT(fattn_store_exec(s, "UPDATE studies SET uuid = 'x' WHERE id = 3"), FATTN_OK);
    fattn_error_set_quiet(1);
    CHECK_INT(fattn_store_exec(s, "UPDATE studies SET uuid = 'x' WHERE id = 2"), FATTN_EFAIL);
    fattn_store_close(&s);
}

static long long count_in(const char *p, const char *sql)
{
    fattn_store *s;
    if (fattn_store_open(p, FATTN_DB_READ, &s))
        return -2;
    long long v = pragma(s, sql);
    fattn_store_close(&s);
    return v;
}

/* A trial as every schema version takes it (the mma parameters NOT NULL before version 10). */
static const char trial_sql[] =
    "INSERT INTO trials (study_id, seq, config_key, block_m, block_n, block_k, num_warps, stages, unroll, cp_async, "
    "swizzle, half2, pad_bytes, copy_colmajor, status, created_at) VALUES (%d, %d, 'k%d', 64, 64, 32, 4, 2, 1, 1, 1, "
    "1, 16, 0, 'ok', 'now')";

/* merge over older schemas (1, before the simulator's tables; 6; 11, before
 * study_families), merged twice; copies that differ (more trials win over
 * more confirmations); references across studies resolved whichever input
 * holds the copy taken. */
static void merge_inputs(void)
{
    int versions[] = {1, 6, 11};
    fattn_merge_input in[3] = {{0}};
    for (int k = 0; k < 3; ++k) {
        char name[32];
        snprintf(name, sizeof name, "old-v%d.db", versions[k]);
        sqlite3 *db = old_db(path(name), versions[k]);
        char sql[640];
        int n = snprintf(sql, sizeof sql, trial_sql, 1, 0, 0);
        /* Each its own study (identical rows would be copies of one). */
        snprintf(sql + n, sizeof sql - (size_t)n, "; UPDATE studies SET created_at = '2026-0%d-01T00:00:00Z'", k + 1);
        if (sqlite3_exec(db, sql, 0, 0, 0)) {
            fprintf(stderr, "%s: %s\n", name, sqlite3_errmsg(db));
            exit(T_HARNESS);
        }
        sqlite3_close(db);
        in[k].path = strdup(path(name));
    }
    CHECK_INT(fattn_merge(in, 3, path("merged-old.db"), NULL, NULL), FATTN_OK);
    CHECK_INT(in[0].version, 1);
    CHECK_INT(in[0].studies + in[1].studies + in[2].studies, 3);
    CHECK_INT(count_in(path("merged-old.db"), "SELECT count(DISTINCT uuid) FROM studies"), 3);
    CHECK_INT(count_in(path("merged-old.db"), "SELECT count(*) FROM trials t JOIN study_families f ON f.study_id = "
                                              "t.study_id"),
              3);
    /* Merged again with one of them: nothing added. */
    fattn_merge_input again[2] = {{.path = path("merged-old.db")}, {.path = in[1].path}};
    CHECK_INT(fattn_merge(again, 2, path("merged-again.db"), NULL, NULL), FATTN_OK);
    CHECK_INT(again[1].studies + again[1].trials, 0);
    CHECK_INT(again[1].studies_elsewhere, 1);
    CHECK_INT(count_in(path("merged-again.db"), "SELECT count(*) FROM studies"), 3);
    for (int k = 0; k < 3; ++k)
        free((char *)in[k].path);

    /* P: study 1 (trials seq 0, 1) with a confirmation; study 2 whose
     * confirmation's baseline is study 1's trial seq 1 and previous is
     * study 1's confirmation. Q: a copy with one more trial in study 1 and
     * no study 2. X, Y: copies of Q, X one trial further, Y two
     * confirmations further. */
    sqlite3_close(old_db(path("p.db"), 12)); /* then migrated: version 13's SQL needs fattn_uuid_of */
    fattn_store *s;
    CHECK_INT(fattn_store_open(path("p.db"), FATTN_DB_WRITE, &s), FATTN_OK);
    fattn_store_close(&s);
    raw_sql(path("p.db"), "INSERT INTO studies (created_at, status, command, strategy, batch, heads, seqlen, "
                          "head_dim, causal, arch, tool_version, nvrtc_version, sqlite_version, cjson_version, "
                          "space_hash, kernel_hash, limits_json) SELECT created_at, status, command, strategy, "
                          "batch, heads, seqlen, head_dim, causal, arch, tool_version, nvrtc_version, sqlite_version, "
                          "cjson_version, space_hash, kernel_hash, limits_json FROM studies WHERE id = 1;"
                          "INSERT INTO trials (study_id, seq, config_key, status, created_at) VALUES "
                          "(1, 0, 'a0', 'ok', 'now'), (1, 1, 'a1', 'ok', 'now'), (2, 0, 'b0', 'ok', 'now');"
                          "INSERT INTO confirmations (study_id, created_at, config_key, baseline, n, trial_id) "
                          "VALUES (1, 't1', 'a1', 'cudnn', 5, 2);"
                          "INSERT INTO confirmations (study_id, created_at, config_key, baseline, n, trial_id, "
                          "previous_id) VALUES (2, 't2', 'b0', 'trial:2', 5, 3, 1)");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path("p.db"), path("q.db"));
    if (system(cmd) != 0)
        exit(T_HARNESS);
    raw_sql(path("q.db"), "DELETE FROM confirmations WHERE study_id = 2; DELETE FROM trials WHERE study_id = 2; "
                          "DELETE FROM studies WHERE id = 2; INSERT INTO trials (study_id, seq, config_key, status, "
                          "created_at) VALUES (1, 2, 'a2', 'ok', 'now')");
    fattn_merge_input qp[2] = {{.path = path("q.db")}, {.path = path("p.db")}};
    CHECK_INT(fattn_merge(qp, 2, path("qp.db"), NULL, NULL), FATTN_OK);
    CHECK_INT(qp[0].studies * 10 + qp[1].studies, 11); /* study 1 from q, study 2 from p */
    CHECK_INT(count_in(path("qp.db"), "SELECT count(*) FROM trials WHERE study_id = 1"), 3);
    /* The baseline names the trial seq 1 of q's copy, previous its confirmation. */
    CHECK_INT(count_in(path("qp.db"), "SELECT count(*) FROM confirmations c JOIN studies s ON s.id = c.study_id "
                                      "JOIN trials t ON 'trial:' || t.id = c.baseline JOIN confirmations p ON p.id = "
                                      "c.previous_id WHERE c.config_key = 'b0' AND t.config_key = 'a1' AND "
                                      "p.config_key = 'a1' AND t.study_id = p.study_id AND t.study_id <> s.id"),
              1);
    CHECK_INT(count_in(path("qp.db"), "SELECT count(*) FROM pragma_foreign_key_check"), 0);

    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && cp '%s' '%s'", path("q.db"), path("x.db"), path("q.db"), path("y.db"));
    if (system(cmd) != 0)
        exit(T_HARNESS);
    raw_sql(path("x.db"), "INSERT INTO trials (study_id, seq, config_key, status, created_at) VALUES "
                          "(1, 3, 'a3', 'ok', 'now')");
    raw_sql(path("y.db"), "INSERT INTO confirmations (study_id, created_at, config_key, baseline, n) VALUES "
                          "(1, 't3', 'a0', 'cudnn', 5), (1, 't4', 'a0', 'cudnn', 5)");
    fattn_merge_input yx[2] = {{.path = path("y.db")}, {.path = path("x.db")}};
    CHECK_INT(fattn_merge(yx, 2, path("yx.db"), NULL, NULL), FATTN_OK);
    CHECK_INT(yx[1].studies, 1);
    CHECK_INT(yx[0].studies_elsewhere, 1);
    CHECK_INT(count_in(path("yx.db"), "SELECT count(*) FROM trials"), 4);
    CHECK_INT(count_in(path("yx.db"), "SELECT count(*) FROM confirmations"), 1);
}

/* A sink that counts what reaches it (fattn_store_user_sql). */
typedef struct sql_count {
    int begun, ncols;
    useconds_t sleep_us; /* in each row: a slow reader */
    long rows;
    char first[32], second[32];
} sql_count;

static void count_begin(void *arg, int ncols, const char *const *names)
{
    (void)names;
    sql_count *n = arg;
    ++n->begun, n->ncols = ncols;
}

static void count_row(void *arg, const char *const *cells, const unsigned char *numeric)
{
    (void)numeric;
    sql_count *n = arg;
    if (n->sleep_us)
        usleep(n->sleep_us);
    if (!n->rows++) {
        snprintf(n->first, sizeof n->first, "%s", cells[0] ? cells[0] : "NULL");
        if (n->ncols > 1)
            snprintf(n->second, sizeof n->second, "%s", cells[1] ? cells[1] : "NULL");
    }
}

/* Every named read prepares and runs on the latest schema (a column
 * misspelt in a read no test's data reaches is caught); a user's statement
 * is one read-only statement, the reason functions there on every
 * connection. */
static void named_reads(void)
{
    fattn_store *s;
    CHECK_INT(fattn_store_open(path("reads.db"), FATTN_DB_WRITE, &s), FATTN_OK);
    for (int r = 0; r < FATTN_READ_COUNT; ++r) {
        sqlite3_stmt *st = NULL;
        fattn_read_args a = {.id = 1, .text = "ok", .limit = 3};
        CHECK_INT(fattn_store_read(s, r, &a, &st), FATTN_OK);
        int step = st ? sqlite3_step(st) : SQLITE_ERROR;
        if (step != SQLITE_ROW && step != SQLITE_DONE)
            fprintf(stderr, "read %d: %s\n", r, sqlite3_errmsg(fattn_store_db(s)));
        CHECK(step == SQLITE_ROW || step == SQLITE_DONE);
        sqlite3_finalize(st);
    }
    sql_count n = {0};
    const fattn_row_sink sink = {count_begin, count_row, &n};
    CHECK_INT(fattn_store_user_sql(s, "SELECT fattn_fix('spills') IS NOT NULL, 2 ; ", 0, &sink), FATTN_OK);
    CHECK(n.begun == 1 && n.rows == 1 && n.ncols == 2 && !strcmp(n.first, "1"));
    const char *refused[] = {"SELECT 1; SELECT 2", "DELETE FROM studies", "ATTACH 'x.db' AS x",
                             "PRAGMA journal_mode = DELETE"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
        n = (sql_count){0};
        CHECK_INT(fattn_store_user_sql(s, refused[i], 0, &sink), FATTN_EUSAGE);
        CHECK_INT(n.begun, 0); /* refused before a row is handed on */
    }
    n = (sql_count){0};
    CHECK_INT(fattn_store_user_sql(s, "PRAGMA table_info(trials)", 0, &sink), FATTN_OK);
    CHECK(n.rows > 10);
    /* Rows stream: a million of them reach the sink one at a time. */
    n = (sql_count){0};
    CHECK_INT(fattn_store_user_sql(s,
                                   "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1000000) "
                                   "SELECT x, 1e308 * 10 FROM c",
                                   0, &sink),
              FATTN_OK);
    CHECK(n.rows == 1000000 && n.ncols == 2 && !strcmp(n.first, "1") && !strcmp(n.second, "inf"));
    /* The timeout counts SQLite's work, not the sink's: a slow reader of
     * the output (a pager) does not stop a quick statement. */
    n = (sql_count){.sleep_us = 400000};
    CHECK_INT(fattn_store_user_sql(s,
                                   "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 300000) "
                                   "SELECT x FROM c WHERE x % 100000 = 0",
                                   600, &sink),
              FATTN_OK);
    CHECK(n.rows == 3);
    /* Stopped by the timeout: the rows before the stop were handed on. */
    n = (sql_count){0};
    CHECK_INT(fattn_store_user_sql(s, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c",
                                   200, &sink),
              FATTN_EFAIL);
    CHECK(n.rows > 0);
    CHECK_CONTAINS(fattn_last_error(), "--sql: stopped after 0.2 s (--sql-timeout)");
    fattn_store_close(&s);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/fattn-store-XXXXXX");
    if (!mkdtemp(dir))
        return T_HARNESS;
    fattn_error_set_quiet(1);
    T_RUN(create_and_reopen);
    T_RUN(refusals);
    T_RUN(trials_and_cache);
    T_RUN(migration_from_empty);
    T_RUN(migration_keeps_data);
    T_RUN(migration_families);
    T_RUN(migration_identities);
    T_RUN(merge_inputs);
    T_RUN(named_reads);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return t_exit();
}
